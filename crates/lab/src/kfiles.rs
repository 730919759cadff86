//! Checking the kernel file strings a scenario writes, before the run: the
//! same validation the kernel's write handlers do, so that a scenario that
//! would be rejected by `echo ... > io.max` is rejected here, with the errno.

use blklab_core::sim::kerr::{split_devno, KernelError};
use blklab_core::DeviceConfig;

/// Check one line written to cgroup file `file`.
pub fn check(file: &str, line: &str, devices: &[DeviceConfig]) -> Result<(), KernelError> {
    match file {
        "io.weight" => check_weight(line),
        "io.prio.class" => Ok(()),
        _ => {
            let ((maj, min), _rest) = split_devno(line)?;
            if !devices
                .iter()
                .any(|d| d.info.major == maj && d.info.minor == min)
            {
                return Err(KernelError::enodev(format!(
                    "no device {maj}:{min} in this scenario"
                )));
            }
            Ok(())
        }
    }
}

/// io.weight: `default N`, `N` or `MAJ:MIN N|default` with 1 <= N <= 10000.
fn check_weight(line: &str) -> Result<(), KernelError> {
    let t = line.trim();
    let val = if let Some(rest) = t.strip_prefix("default") {
        rest.trim()
    } else if t.contains(':') {
        let (_, rest) = split_devno(t)?;
        rest
    } else {
        t
    };
    if val == "default" {
        return Ok(());
    }
    let v: u64 = val
        .parse()
        .map_err(|_| KernelError::einval(format!("'{val}' is not a weight (1..10000)")))?;
    if !(1..=10000).contains(&v) {
        return Err(KernelError::erange(format!(
            "weight {v} is outside 1..10000"
        )));
    }
    Ok(())
}
