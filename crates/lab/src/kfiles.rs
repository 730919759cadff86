//! Checking the kernel file strings a scenario writes, before the run: the
//! same validation the kernel's write handlers do, in their order (the
//! device prefix and its lookup, `blkg_conf_open_bdev`, before the body), so
//! that a scenario that would be rejected by `echo ... > io.max` is rejected
//! here, with the errno. The parsers are the controllers' own.

use blklab_core::block::blk_ioprio::PrioPolicy;
use blklab_core::block::iocost::params::{
    parse_model_body, parse_qos_body, parse_weight_line, WeightLine,
};
use blklab_core::block::iotrack::lat_thresh::parse_lat_thresh;
use blklab_core::block::throttle::io_max::parse_io_max;
use blklab_core::sim::kerr::{split_devno, Errno, KernelError};
use blklab_core::DeviceConfig;

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
                // io.latency is not simulated: only its device is checked
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The one device of a minimal scenario: sda, 8:0.
    fn sda() -> Vec<DeviceConfig> {
        let text = "[[device]]\nname = \"sda\"\ndevno = \"8:0\"\n[device.model]\nkind = \"nullb\"\n[[job]]\ncmdline = \"--name=a\"\n";
        let sc = crate::scenario::Scenario::parse(text, std::path::Path::new("t.toml")).unwrap();
        sc.config.devices
    }

    fn errno(file: &str, line: &str) -> Option<Errno> {
        check(file, line, &sda(), false).err().map(|e| e.errno)
    }

    #[test]
    fn bodies_are_parsed_as_the_kernel_does() {
        assert_eq!(errno("io.max", "8:0 riops=100 wbps=max"), None);
        assert_eq!(errno("io.max", "8:0 riops=0"), Some(Errno::Erange));
        assert_eq!(errno("io.max", "8:0 riops=abc"), Some(Errno::Einval));
        assert_eq!(errno("io.max", "9:9 riops=abc"), Some(Errno::Enodev));
        assert_eq!(errno("io.weight", "default 0"), Some(Errno::Einval));
        assert_eq!(errno("io.weight", "9:9 100"), Some(Errno::Enodev));
        assert_eq!(errno("io.weight", "8:0 100"), None);
        assert_eq!(errno("io.prio.class", "promote-to-rt"), None);
        assert_eq!(errno("io.prio.class", "rt"), Some(Errno::Einval));
        assert_eq!(
            errno("io.cost.qos", "8:0 enable=1 rpct=101"),
            Some(Errno::Einval)
        );
        assert_eq!(errno("io.cost.qos", "9:1 enable=1"), Some(Errno::Enodev));
        assert_eq!(errno("io.cost.model", "8:0 rbps=x"), Some(Errno::Einval));
        assert_eq!(
            errno("io.iotrack.lat_thresh", "8:0 1 2 3 4 5 6 7 7"),
            Some(Errno::Einval)
        );
    }

    #[test]
    fn empty_writes_and_root_files() {
        for f in ["io.max", "io.prio.class", "io.weight", "io.cost.qos"] {
            assert_eq!(errno(f, ""), Some(Errno::Einval), "{f}");
            assert_eq!(errno(f, "  "), Some(Errno::Einval), "{f}");
        }
        let e = check("io.max", "8:0 riops=1", &sda(), true).unwrap_err();
        assert_eq!(e.errno, Errno::Enoent);
        assert_eq!(
            e.to_string(),
            "io.max does not exist in the root cgroup (ENOENT)"
        );
    }
}
