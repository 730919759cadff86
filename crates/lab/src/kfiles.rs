//! Checking the kernel file strings a scenario writes, before the run: the
//! same validation the kernel's write handlers do, so that a scenario that
//! would be rejected by `echo ... > io.max` is rejected here, with the errno.

use blklab_core::block::blk_cgroup::{parse_bfq_weight, parse_bfq_weight_legacy, BfqWeightWrite};
use blklab_core::sim::kerr::{split_devno, Errno, KernelError};
use blklab_core::DeviceConfig;

/// Check one line written to cgroup file `file`.
pub fn check(file: &str, line: &str, devices: &[DeviceConfig]) -> Result<(), KernelError> {
    match file {
        "io.weight" => check_weight(line),
        "io.prio.class" => Ok(()),
        "io.bfq.weight" => check_bfq_weight(line, devices),
        "blkio.bfq.weight" => parse_bfq_weight_legacy(line).map(|_| ()),
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

/// io.bfq.weight (`bfq_io_set_weight`): the syntax and range, then for a
/// `MAJ:MIN` line what `blkg_conf_prep` checks: the device exists (ENODEV)
/// and has bfq as its scheduler (the bfq policy is enabled on its queue,
/// else EOPNOTSUPP).
fn check_bfq_weight(line: &str, devices: &[DeviceConfig]) -> Result<(), KernelError> {
    if let BfqWeightWrite::Device {
        devno: (maj, min), ..
    } = parse_bfq_weight(line)?
    {
        let Some(d) = devices
            .iter()
            .find(|d| d.info.major == maj && d.info.minor == min)
        else {
            return Err(KernelError::enodev(format!(
                "no device {maj}:{min} in this scenario"
            )));
        };
        if d.scheduler != "bfq" {
            return Err(KernelError {
                errno: Errno::Eopnotsupp,
                msg: format!(
                    "device {maj}:{min} uses '{}', not bfq: the bfq policy is not enabled on it",
                    d.scheduler
                ),
            });
        }
    }
    Ok(())
}
