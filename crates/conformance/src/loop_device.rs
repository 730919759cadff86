//! The loop device both sides of a case stand on: the size of its backing
//! file, and its own speed, which the simulated device is given.

use crate::metrics::from_fio_json;

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
    /// fio's CPU per I/O in the probe (a QEMU guest's; `fio_costs`).
    pub cpu_per_io_ns: Option<u64>,
    /// The guest's quiet-submit probe (`probe_cpu::QuietProbe`), when it ran.
    pub quiet: Option<crate::probe_cpu::QuietProbe>,
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
            cpu_per_io_ns: None,
            quiet: None,
        }
    }
}

/// fio's options for the raw-speed probe (QD1 4k random reads for
/// `seconds`, JSON out), without the device.
pub fn raw_fio_options(seconds: u32) -> String {
    format!(
        "--name=raw --direct=1 --ioengine=libaio --rw=randread --bs=4k --iodepth=1 --runtime={seconds} --time_based --output-format=json"
    )
}

impl RawSpeed {
    /// The probe's figures from fio's JSON output.
    pub fn from_fio_json(json: &str) -> Result<RawSpeed, String> {
        let jobs = from_fio_json(json)?;
        let m = jobs.first().ok_or("no job in fio's output")?.1;
        Ok(RawSpeed {
            slat_ns: (m.0[2] * 1000.0).round() as u64,
            clat_ns: (m.0[3] * 1000.0).round() as u64,
            iops: m.0[0],
            measured: true,
            cpu_per_io_ns: crate::probe_cpu::jobs_cpu(json)
                .and_then(|j| crate::probe_cpu::cpu_per_io_ns(&j))
                .ok(),
            quiet: None,
        })
    }
}
