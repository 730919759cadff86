//! The `io.latency` file (`iolatency_set_limit`, `iolatency_prfill_limit`
//! in block/blk-iolatency.c): `MAJ:MIN target=USEC` or `target=max`.

use crate::sim::kerr::{split_devno, KernelError};

/// A parsed `io.latency` line: the device and the target in ns (0 = none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatencyLine {
    pub devno: (u32, u32),
    pub target_ns: u64,
}

/// Mirrors the body loop of `iolatency_set_limit`: space-separated
/// `key=value` tokens; the only key is `target`, whose value is `max`
/// (no target) or an unsigned decimal count of µs. Any other key, a token
/// without `=`, an empty token (two spaces) or an empty body is EINVAL.
///
/// Like the kernel's `sscanf("%llu")`, the number is read from the start of
/// the value and what follows the digits is ignored (`target=100us` is a
/// 100 µs target). Where the kernel lets `USEC * 1000` wrap around 64 bits,
/// the model refuses the value (ERANGE): a wrapped target is never what
/// the writer meant.
pub fn parse_io_latency(line: &str) -> Result<LatencyLine, KernelError> {
    let (devno, body) = split_devno(line)?;
    let body = body.strip_suffix('\n').unwrap_or(body);
    let mut target_ns = 0u64;
    for tok in body.split(' ') {
        let Some((key, val)) = tok.split_once('=') else {
            return Err(KernelError::einval(format!(
                "io.latency: '{tok}' is not KEY=VALUE (expected target=USEC or target=max)"
            )));
        };
        // sscanf("%15[^=]=%20s"): a key of 16 or more characters, or an
        // empty key or value, does not match
        if key.is_empty() || key.len() > 15 || val.is_empty() {
            return Err(KernelError::einval(format!(
                "io.latency: '{tok}' is not KEY=VALUE (expected target=USEC or target=max)"
            )));
        }
        if key != "target" {
            return Err(KernelError::einval(format!(
                "io.latency: unknown key '{key}' (the only key is target)"
            )));
        }
        // %20s keeps at most 20 characters of the value
        let val: String = val.chars().take(20).collect();
        if val == "max" {
            target_ns = 0;
            continue;
        }
        let digits: &str = {
            let end = val.find(|c: char| !c.is_ascii_digit()).unwrap_or(val.len());
            &val[..end]
        };
        if digits.is_empty() {
            return Err(KernelError::einval(format!(
                "io.latency: target '{val}' is neither max nor a number of microseconds"
            )));
        }
        let usec: u64 = digits.parse().map_err(|_| {
            KernelError::erange(format!(
                "io.latency: target '{digits}' µs does not fit in 64 bits"
            ))
        })?;
        target_ns = usec.checked_mul(1000).ok_or_else(|| {
            KernelError::erange(format!(
                "io.latency: target {usec} µs is out of range (at most {} µs: the kernel \
                 keeps it in ns in 64 bits)",
                u64::MAX / 1000
            ))
        })?;
    }
    Ok(LatencyLine { devno, target_ns })
}

/// What reading `io.latency` shows for one device: `MAJ:MIN target=USEC`,
/// nothing when the group has no target there.
pub fn show_line(devno: (u32, u32), target_ns: u64) -> Option<String> {
    (target_ns != 0).then(|| format!("{}:{} target={}", devno.0, devno.1, target_ns / 1000))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::kerr::Errno;

    #[test]
    fn accepted_lines() {
        let l = parse_io_latency("8:0 target=75").unwrap();
        assert_eq!(l.devno, (8, 0));
        assert_eq!(l.target_ns, 75_000);
        assert_eq!(parse_io_latency("8:0 target=max").unwrap().target_ns, 0);
        assert_eq!(parse_io_latency("8:0 target=0\n").unwrap().target_ns, 0);
        // the last target wins, as in the kernel's loop
        assert_eq!(
            parse_io_latency("8:0 target=5 target=10")
                .unwrap()
                .target_ns,
            10_000
        );
        // sscanf %llu stops at the first non-digit
        assert_eq!(
            parse_io_latency("8:0 target=100us").unwrap().target_ns,
            100_000
        );
        assert_eq!(show_line((8, 0), 75_000).as_deref(), Some("8:0 target=75"));
        assert_eq!(show_line((8, 0), 0), None);
    }

    #[test]
    fn kernel_errors() {
        let e = |s: &str| parse_io_latency(s).unwrap_err().errno;
        assert_eq!(e("8:0"), Errno::Einval);
        assert_eq!(e("8:0 target"), Errno::Einval);
        assert_eq!(e("8:0 target="), Errno::Einval);
        assert_eq!(e("8:0 lat=5"), Errno::Einval);
        assert_eq!(e("8:0 target=5  target=6"), Errno::Einval);
        assert_eq!(e("8:0 target=-5"), Errno::Einval);
        assert_eq!(e("8:0 target=fast"), Errno::Einval);
        assert_eq!(e("8:0 averyveryverylongkey=5"), Errno::Einval);
        assert_eq!(e("8:0 target=18446744073709552"), Errno::Erange);
        assert_eq!(e("8:0 target=99999999999999999999"), Errno::Erange);
        // no MAJ:MIN
        assert_eq!(e("target=5"), Errno::Einval);
    }
}
