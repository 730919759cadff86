//! The loop device both sides of a case stand on: the size of its backing
//! file, and its own speed, which the simulated device is given.

/// Size of each backing file (tmpfs) behind a loop device.
pub const FILE_BYTES: u64 = 64 << 20;

/// The loop device's own speed at QD1 (4k random reads), measured once with
/// fio on the host, or a default when the host side cannot run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawSpeed {
    pub slat_ns: u64,
    pub clat_ns: u64,
    pub iops: f64,
    pub measured: bool,
}

impl Default for RawSpeed {
    /// What a tmpfs loop device does on the 2-core development VMs (fio
    /// QD1 4k randread: slat ~10 us, clat ~55 us).
    fn default() -> Self {
        RawSpeed {
            slat_ns: 10_000,
            clat_ns: 55_000,
            iops: 15_000.0,
            measured: false,
        }
    }
}
