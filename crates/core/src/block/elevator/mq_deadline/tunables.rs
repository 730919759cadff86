//! The sysfs tunables of /sys/block/DEV/queue/iosched/ for mq-deadline
//! (`deadline_*_store`), parsed with the kernel's `kstrtoint`.

use super::*;
use crate::sim::kerr::kstrtoint;

impl MqDeadline {
    pub(super) fn store(&mut self, name: &str, value: &str) -> Result<(), KernelError> {
        let v = kstrtoint(value).map_err(|e| KernelError {
            errno: e.errno,
            msg: format!("mq-deadline {name}: {}", e.msg),
        })?;
        // STORE_FUNCTION clamps instead of rejecting.
        let c = |lo: i32, hi: i32| v.clamp(lo, hi);
        match name {
            "read_expire" => self.t.read_expire_ms = c(0, i32::MAX),
            "write_expire" => self.t.write_expire_ms = c(0, i32::MAX),
            "prio_aging_expire" => self.t.prio_aging_expire_ms = c(0, i32::MAX),
            "writes_starved" => self.t.writes_starved = v,
            "front_merges" => self.t.front_merges = c(0, 1),
            "async_depth" => self.t.async_depth = c(1, i32::MAX),
            "fifo_batch" => self.t.fifo_batch = c(0, i32::MAX),
            _ => unreachable!(),
        }
        Ok(())
    }
}

pub(super) const TUNABLES: [&str; 7] = [
    "async_depth",
    "fifo_batch",
    "front_merges",
    "prio_aging_expire",
    "read_expire",
    "write_expire",
    "writes_starved",
];
