//! Checking the kernel file strings a scenario writes, before the run: the
//! same validation the kernel's write handlers do, in their order (the
//! device prefix and its lookup, `blkg_conf_open_bdev`, before the body), so
//! that a scenario that would be rejected by `echo ... > io.max` is rejected
//! here, with the errno. The parsers are the controllers' own.

use blklab_core::block::blk_cgroup::{parse_bfq_weight, parse_bfq_weight_legacy, BfqWeightWrite};
use blklab_core::block::blk_ioprio::PrioPolicy;
use blklab_core::block::iocost::params::{
    parse_model_body, parse_qos_body, parse_weight_line, WeightLine,
};
use blklab_core::block::iolatency::params::parse_io_latency;
use blklab_core::block::iotrack::lat_thresh::parse_lat_thresh;
use blklab_core::block::throttle::io_max::parse_io_max;
use blklab_core::sim::kerr::{split_devno, Errno, KernelError};
use blklab_core::DeviceConfig;

/// Cgroup files a scenario may write, and whether the simulator models them.
pub const CGROUP_FILES: &[(&str, &str)] = &[
    ("io.max", "blk-throttle limits"),
    ("io.weight", "blk-iocost weight"),
    ("io.cost.model", "blk-iocost cost model (root only)"),
    ("io.cost.qos", "blk-iocost QoS (root only)"),
    ("io.prio.class", "blk-ioprio policy"),
    ("io.iotrack.lat_thresh", "blk-iotrack latency thresholds"),
    ("io.latency", "blk-iolatency target"),
    ("io.bfq.weight", "bfq group weight (cgroup v2)"),
    ("blkio.bfq.weight", "bfq group weight (cgroup v1 syntax)"),
];

/// Cgroup files that the root cgroup does not have (`CFTYPE_NOT_ON_ROOT`):
/// opening them there fails.
const NOT_ON_ROOT: &[&str] = &["io.max", "io.weight", "io.latency"];

/// Check one line written to cgroup file `file` of a cgroup (`at_root`:
/// the root cgroup). Files that exist only in the root are the caller's
/// check (it names them better).
pub fn check(
    file: &str,
    line: &str,
    devices: &[DeviceConfig],
    at_root: bool,
) -> Result<(), KernelError> {
    if at_root && NOT_ON_ROOT.contains(&file) {
        return Err(KernelError {
            errno: Errno::Enoent,
            msg: format!("{file} does not exist in the root cgroup"),
        });
    }
    if line.trim().is_empty() {
        // `echo > FILE` writes "\n": no MAJ:MIN for the blkg files
        // (blkg_conf_open_bdev), no policy name for io.prio.class
        // (sysfs_match_string), no number for io.weight
        return Err(KernelError::einval(
            "an empty write (the kernel refuses it; leave the file out to keep its default)",
        ));
    }
    match file {
        "io.prio.class" => PrioPolicy::parse(line).map(|_| ()),
        "io.weight" => match parse_weight_line(line)? {
            WeightLine::Default(_) => Ok(()),
            WeightLine::Dev(d, _) => device(d, devices),
        },
        "io.bfq.weight" => check_bfq_weight(line, devices),
        "blkio.bfq.weight" => parse_bfq_weight_legacy(line).map(|_| ()),
        _ => {
            let (d, body) = split_devno(line)?;
            device(d, devices)?;
            match file {
                "io.max" => parse_io_max(line).map(|_| ()),
                // the values the body starts from are the device's; a
                // min above the max already set is found by the run's
                // own check (`Sim::check_writes`)
                "io.cost.qos" => {
                    parse_qos_body(body, [0, 0, 0, 0, 0, u32::MAX], false, false).map(|_| ())
                }
                "io.cost.model" => parse_model_body(body, [0; 6], false).map(|_| ()),
                "io.iotrack.lat_thresh" => parse_lat_thresh(line).map(|_| ()),
                "io.latency" => parse_io_latency(line).map(|_| ()),
                _ => Ok(()),
            }
        }
    }
}

/// The device lookup of `blkg_conf_open_bdev`: ENODEV for a device the
/// scenario does not have.
fn device((maj, min): (u32, u32), devices: &[DeviceConfig]) -> Result<(), KernelError> {
    if devices
        .iter()
        .any(|d| d.info.major == maj && d.info.minor == min)
    {
        Ok(())
    } else {
        Err(KernelError::enodev(format!(
            "no device {maj}:{min} in this scenario"
        )))
    }
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
        device((maj, min), devices)?;
        let d = devices
            .iter()
            .find(|d| d.info.major == maj && d.info.minor == min)
            .expect("device() found it");
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
