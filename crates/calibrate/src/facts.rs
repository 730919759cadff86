//! What sysfs says about the measured block device: the queue limits the
//! simulated device gets, so that requests split and queue as on the host.

use blklab_core::drivers::{DeviceInfo, ModelSpec};
use blklab_core::DeviceConfig;

#[derive(Debug, Clone, PartialEq)]
pub struct DeviceFacts {
    /// Kernel name (`loop3`).
    pub name: String,
    /// MAJ:MIN.
    pub devno: String,
    pub size_bytes: u64,
    /// queue/max_sectors_kb: larger bios are split into requests of this size.
    pub max_sectors_kb: u32,
    pub logical_block_size: u32,
    /// queue/nr_requests with the elevator `none`: the tag depth.
    pub nr_requests: u32,
    pub rotational: bool,
}

fn q(name: &str, attr: &str) -> Option<String> {
    std::fs::read_to_string(format!("/sys/class/block/{name}/queue/{attr}"))
        .ok()
        .map(|s| s.trim().to_string())
}

impl DeviceFacts {
    /// Read from /sys/class/block/NAME/queue (read after the elevator was set
    /// to `none`, so nr_requests is the hardware tag depth).
    pub fn read(name: &str, devno: &str) -> Result<DeviceFacts, String> {
        let num = |attr: &str, dflt: u32| -> u32 {
            q(name, attr).and_then(|s| s.parse().ok()).unwrap_or(dflt)
        };
        Ok(DeviceFacts {
            name: name.to_string(),
            devno: devno.to_string(),
            size_bytes: crate::target::block_size_bytes(devno)?,
            max_sectors_kb: num("max_sectors_kb", 1280).max(4),
            logical_block_size: num("logical_block_size", 512),
            nr_requests: num("nr_requests", 128).max(1),
            rotational: q(name, "rotational").as_deref() == Some("1"),
        })
    }

    /// The simulated device with these limits, `model` and the driver's
    /// `idle_wake_ns`.
    pub fn device(&self, model: ModelSpec, idle_wake_ns: u64) -> DeviceConfig {
        let (ma, mi) = self
            .devno
            .split_once(':')
            .map(|(a, b)| (a.parse().unwrap_or(0), b.parse().unwrap_or(0)))
            .unwrap_or((0, 0));
        DeviceConfig {
            info: DeviceInfo {
                name: self.name.clone(),
                major: ma,
                minor: mi,
                rotational: self.rotational,
                nr_requests: self.nr_requests,
                queue_depth: self.nr_requests,
                nr_hw_queues: 1,
                max_sectors_kb: self.max_sectors_kb,
                logical_block_size: self.logical_block_size,
                capacity_bytes: self.size_bytes.max(1 << 20),
            },
            model,
            scheduler: "none".into(),
            iosched: Vec::new(),
            wbt: None,
            idle_wake_ns,
        }
    }
}
