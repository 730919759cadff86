//! The kernel-file checks of a scenario (`blklab_lab::kfiles::check`):
//! each file's own parser, the device lookup first, empty writes and files
//! the root cgroup does not have.

use blklab_core::sim::kerr::Errno;
use blklab_core::DeviceConfig;
use blklab_lab::kfiles::check;
use blklab_lab::scenario::Scenario;

/// The one device of a minimal scenario: sda, 8:0.
fn sda() -> Vec<DeviceConfig> {
    let text = "[[device]]\nname = \"sda\"\ndevno = \"8:0\"\n[device.model]\nkind = \"nullb\"\n[[job]]\ncmdline = \"--name=a\"\n";
    let sc = Scenario::parse(text, std::path::Path::new("t.toml")).unwrap();
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
