//! `io.iotrack.lat_thresh`: the eight latency thresholds of a blkg
//! (`iotrack_set_lat_thresh` / `iotrack_prfill_lat_thresh` in the RFC).

use crate::sim::kerr::{split_devno, KernelError};

use super::LAT_BUCKET_NR;

/// Parse a write of `"MAJ:MIN t0 t1 … t7"` (ns) with the kernel's rules:
/// the device prefix as `blkg_conf_prep` reads it, then a `sscanf` of eight
/// unsigned decimals (white space free, digits only, so `-1` or `+5` stop the
/// scan; text after the eighth number is ignored, as `sscanf` ignores it), and
/// the values must be strictly increasing. Any failure is `EINVAL`.
///
/// One divergence: a number too large for 64 bits is rejected here, where the
/// kernel's `simple_strtoull` would wrap it silently.
pub fn parse_lat_thresh(line: &str) -> Result<((u32, u32), [u64; 8]), KernelError> {
    let (dev, body) = split_devno(line)?;
    let mut vals = [0u64; LAT_BUCKET_NR];
    let mut rest = body;
    for (i, v) in vals.iter_mut().enumerate() {
        rest = rest.trim_start();
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if end == 0 {
            let found = rest.split_whitespace().next().unwrap_or("end of line");
            return Err(KernelError::einval(format!(
                "io.iotrack.lat_thresh: expected 8 latency thresholds in ns after the device, \
                 threshold {} is '{found}' (an unsigned decimal was expected)",
                i
            )));
        }
        *v = rest[..end].parse::<u64>().map_err(|_| {
            KernelError::einval(format!(
                "io.iotrack.lat_thresh: threshold {i} '{}' does not fit in 64 bits",
                &rest[..end]
            ))
        })?;
        rest = &rest[end..];
    }
    for i in 0..LAT_BUCKET_NR - 1 {
        if vals[i] >= vals[i + 1] {
            return Err(KernelError::einval(format!(
                "io.iotrack.lat_thresh: thresholds must be strictly increasing, but t{i}={} >= t{}={}",
                vals[i],
                i + 1,
                vals[i + 1]
            )));
        }
    }
    Ok((dev, vals))
}

/// One line of the file as a read shows it (`"MAJ:MIN t0 … t7"`).
pub fn lat_thresh_line(devno: &str, thresh: &[u64; 8]) -> String {
    let mut s = String::from(devno);
    for t in thresh {
        s.push(' ');
        s.push_str(&t.to_string());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::iotrack::DEFAULT_THRESH_NS;
    use crate::sim::kerr::Errno;

    #[test]
    fn accepts_kernel_syntax() {
        let (dev, t) = parse_lat_thresh("259:0 10 20 30 40 50 60 70 80").unwrap();
        assert_eq!(dev, (259, 0));
        assert_eq!(t, [10, 20, 30, 40, 50, 60, 70, 80]);
        // sscanf ignores what follows the eighth value.
        assert!(parse_lat_thresh("8:0 1 2 3 4 5 6 7 8 9").is_ok());
        assert!(parse_lat_thresh("8:0 1 2 3 4 5 6 7 8abc").is_ok());
        // The default set is valid and prints back identically.
        let line = lat_thresh_line("8:0", &DEFAULT_THRESH_NS);
        assert_eq!(
            line,
            "8:0 50000 100000 200000 400000 1000000 2000000 4000000 8000000"
        );
        assert_eq!(parse_lat_thresh(&line).unwrap().1, DEFAULT_THRESH_NS);
    }

    #[test]
    fn rejects_with_einval() {
        for bad in [
            "8:0 1 2 3 4 5 6 7",     // seven values
            "8:0 1 2 3 4 5 6 7 7",   // not strictly increasing
            "8:0 2 1 3 4 5 6 7 8",   // decreasing
            "8:0 -1 2 3 4 5 6 7 8",  // sign
            "8:0 1us 2 3 4 5 6 7 8", // unit
            "sda 1 2 3 4 5 6 7 8",   // not MAJ:MIN
            "8:0 1 2 3 4 5 6 7 99999999999999999999999",
        ] {
            let e = parse_lat_thresh(bad).unwrap_err();
            assert_eq!(e.errno, Errno::Einval, "{bad}: {e}");
        }
        let e = parse_lat_thresh("8:0 5 5 6 7 8 9 10 11").unwrap_err();
        assert!(e.msg.contains("t0=5 >= t1=5"), "{}", e.msg);
    }
}
