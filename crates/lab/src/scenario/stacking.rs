//! Stacked devices in a scenario (`kind = "loop"` or `"dm-linear"` with a
//! `backend`): each stacked device's capacity defaults to what its backend
//! leaves it, and each stack is checked as the kernel would build it
//! (`blklab_core::machine::resolve_one`), every problem located at the
//! value at fault.

use blklab_core::machine::{resolve_one, StackErrorKind};
use blklab_core::DeviceConfig;

use super::{Builder, RawDevice, RawScenario};

/// The rq_qos files a bio-based device cannot have (`ioc_qos_write` and
/// `ioc_cost_model_write` fail with EOPNOTSUPP on a queue that is not
/// blk-mq; blk-iolatency has no requests to watch there).
const RQ_QOS_FILES: [&str; 3] = ["io.cost.qos", "io.cost.model", "io.latency"];

impl Builder<'_> {
    pub(super) fn stacking(&mut self, raw: &RawScenario, devices: &mut [DeviceConfig]) {
        let raw_of = |name: &str| raw.device.iter().find(|r| r.name.get_ref() == name);
        // capacities, from the bottom of each chain up (a chain is at most
        // as long as the device list; a cycle is reported below)
        for _ in 0..devices.len() {
            for i in 0..devices.len() {
                let Some((backend, kind)) = devices[i].model.backend() else {
                    continue;
                };
                if raw_of(&devices[i].info.name).is_some_and(|r| r.capacity.is_some()) {
                    continue;
                }
                let Some(lo) = devices.iter().position(|d| d.info.name == backend) else {
                    continue;
                };
                let start_bytes = match kind {
                    blklab_core::drivers::StackKind::Loop => 0,
                    blklab_core::drivers::StackKind::Linear { start } => start.saturating_mul(512),
                };
                let cap = devices[lo].info.capacity_bytes.saturating_sub(start_bytes);
                devices[i].info.capacity_bytes = cap;
            }
        }
        for i in 0..devices.len() {
            let name = devices[i].info.name.clone();
            let Some(r) = raw_of(&name) else { continue };
            let kind = match resolve_one(devices, i) {
                Ok(_) => continue,
                Err(k) => k,
            };
            // a backend that failed its own checks was reported there
            if let StackErrorKind::NoBackend(b) = &kind {
                if raw_of(b).is_some() {
                    continue;
                }
            }
            self.err::<()>(&stack_span(r, &kind), format!("device {name}: {kind}"));
        }
        for d in devices.iter().filter(|d| {
            d.model
                .backend()
                .is_some_and(|(_, k)| matches!(k, blklab_core::drivers::StackKind::Linear { .. }))
        }) {
            self.bio_based_files(raw, d);
        }
    }

    /// io.cost.* and io.latency lines naming the bio-based device `d`.
    fn bio_based_files(&mut self, raw: &RawScenario, d: &DeviceConfig) {
        let devno = d.info.devno();
        for files in raw.cgroup.values() {
            for (fname, val) in files {
                let f = fname.get_ref().as_str();
                if !RQ_QOS_FILES.contains(&f) {
                    continue;
                }
                let lines: Vec<&str> = match val.get_ref() {
                    super::FileValue::One(s) => s.lines().collect(),
                    super::FileValue::Lines(v) => v.iter().map(String::as_str).collect(),
                };
                if lines
                    .iter()
                    .any(|l| l.split_whitespace().next() == Some(devno.as_str()))
                {
                    self.err::<()>(
                        &val.span(),
                        format!(
                            "{f}: {devno} is the dm-linear device {}: a bio-based device has no rq_qos policies (EOPNOTSUPP)",
                            d.info.name
                        ),
                    );
                }
            }
        }
    }
}

/// Where a stacking problem is: the scheduler or wbt line for those, the
/// capacity when it was given and is too large, else the model table.
fn stack_span(r: &RawDevice, kind: &StackErrorKind) -> std::ops::Range<usize> {
    match kind {
        StackErrorKind::SchedulerOnBioBased(_) => r.scheduler.as_ref().map(|s| s.span()),
        StackErrorKind::WbtOnBioBased => r.wbt_lat_usec.as_ref().map(|s| s.span()),
        StackErrorKind::Beyond { .. } => r.capacity.as_ref().map(|s| s.span()),
        _ => None,
    }
    .unwrap_or_else(|| r.model.span())
}
