//! Reading fio's log files back (what fio-plot, fiologparser and
//! fio2gnuplot read): value logs (`time, value, ddir, bs[, offset], prio`)
//! and histogram logs (`time, ddir, bs, bin0, bin1, ...`). Errors name the
//! line and the field.

use crate::error::FioError;

/// One line of a bw/iops/clat/slat/lat log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEntry {
    pub time_ms: u64,
    pub value: u64,
    pub ddir: u8,
    pub bs: u64,
    /// With `log_offset=1`.
    pub offset: Option<u64>,
    /// The last column: 0/1 (high priority) or, with `log_prio=1`, the ioprio value.
    pub prio: u32,
}

/// One line of a clat_hist log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistEntry {
    pub time_ms: u64,
    pub ddir: u8,
    pub bs: u64,
    pub bins: Vec<u64>,
}

fn num(name: &str, line: usize, field: &str, what: &str) -> Result<u64, FioError> {
    field.trim().parse().map_err(|_| {
        FioError::at_line(
            name,
            line,
            format!(
                "{what}: expected an unsigned integer, found '{}'",
                field.trim()
            ),
        )
    })
}

fn prio(name: &str, line: usize, field: &str) -> Result<u32, FioError> {
    let f = field.trim();
    match f.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16).map_err(|_| {
            FioError::at_line(name, line, format!("prio: expected 0xNNNN, found '{f}'"))
        }),
        None => Ok(num(name, line, f, "prio")? as u32),
    }
}

/// Parse a value log; `name` is used in errors. Every line must have the
/// same number of columns (5, or 6 with offsets).
pub fn parse_log(name: &str, text: &str) -> Result<Vec<LogEntry>, FioError> {
    let mut out = Vec::new();
    let mut width = None;
    for (i, l) in text.lines().enumerate() {
        let n = i + 1;
        let f: Vec<&str> = l.split(',').collect();
        if f.len() != 5 && f.len() != 6 {
            return Err(FioError::at_line(name, n, format!(
                "expected 5 or 6 comma-separated fields (time, value, ddir, bs[, offset], prio), found {}",
                f.len()
            )));
        }
        if *width.get_or_insert(f.len()) != f.len() {
            return Err(FioError::at_line(
                name,
                n,
                format!(
                    "{} fields where the first line has {}",
                    f.len(),
                    width.unwrap_or(0)
                ),
            ));
        }
        let ddir = num(name, n, f[2], "ddir")?;
        if ddir > 2 {
            return Err(FioError::at_line(
                name,
                n,
                format!("ddir: expected 0 (read), 1 (write) or 2 (trim), found {ddir}"),
            ));
        }
        out.push(LogEntry {
            time_ms: num(name, n, f[0], "time")?,
            value: num(name, n, f[1], "value")?,
            ddir: ddir as u8,
            bs: num(name, n, f[3], "bs")?,
            offset: if f.len() == 6 {
                Some(num(name, n, f[4], "offset")?)
            } else {
                None
            },
            prio: prio(name, n, f[f.len() - 1])?,
        });
    }
    Ok(out)
}

/// Parse a clat_hist log.
pub fn parse_hist_log(name: &str, text: &str) -> Result<Vec<HistEntry>, FioError> {
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let n = i + 1;
        let f: Vec<&str> = l.split(',').collect();
        if f.len() < 4 {
            return Err(FioError::at_line(
                name,
                n,
                format!(
                    "expected time, ddir, bs and histogram bins, found {} fields",
                    f.len()
                ),
            ));
        }
        let bins = f[3..]
            .iter()
            .enumerate()
            .map(|(k, x)| num(name, n, x, &format!("bin {k}")))
            .collect::<Result<Vec<u64>, _>>()?;
        out.push(HistEntry {
            time_ms: num(name, n, f[0], "time")?,
            ddir: num(name, n, f[1], "ddir")? as u8,
            bs: num(name, n, f[2], "bs")?,
            bins,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines copied from fio 3.33 runs on this machine (null engine).
    #[test]
    fn reads_fio_3_33_lines() {
        let avg = "503, 7952, 0, 0, 0\n1003, 8080, 0, 0, 0\n";
        let e = parse_log("a_bw.1.log", avg).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!((e[1].time_ms, e[1].value, e[1].offset), (1003, 8080, None));
        let off = "0, 10205, 0, 4096, 64757760, 0x0000\n0, 81, 1, 4096, 794877952, 0x0000\n";
        let e = parse_log("b_clat.1.log", off).unwrap();
        assert_eq!(
            (e[1].ddir, e[1].bs, e[1].offset),
            (1, 4096, Some(794877952))
        );
        let h = parse_hist_log("h", "208, 0, 4096, 0, 3, 1\n").unwrap();
        assert_eq!(h[0].bins, vec![0, 3, 1]);
    }

    #[test]
    fn errors_name_the_line_and_field() {
        let e = parse_log("x.log", "1, 2, 0, 0, 0\n1, two, 0, 0, 0\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(
            e.message
                .contains("value: expected an unsigned integer, found 'two'"),
            "{e}"
        );
        let e = parse_log("x.log", "1, 2, 0\n").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("expected 5 or 6"), "{e}");
    }
}
