//! Which device of a scenario each stacked device sends its I/O to, checked
//! as the kernel checks it when the stack is built (`losetup`, `dmsetup
//! create`): the backend exists, no device is stacked on itself through any
//! chain, the stacked device fits on its backend, and a bio-based device
//! carries nothing that needs requests.

use crate::block::disk::Lower;
use crate::drivers::StackKind;
use crate::machine::DeviceConfig;

/// Why a stack cannot be built; `dev` is the index of the device at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackError {
    pub dev: usize,
    pub kind: StackErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StackErrorKind {
    /// `backend` names no device of the scenario (`dm_get_device` fails
    /// with ENODEV on a device number that has no disk).
    NoBackend(String),
    /// The devices of the chain, from the faulty one back to itself.
    Cycle(Vec<String>),
    /// offset + capacity (bytes) beyond the backend's capacity
    /// (`dm_table_add_target` → `device_area_is_invalid`: "dm-linear: ...
    /// too small for target").
    Beyond {
        backend: String,
        end_bytes: u64,
        backend_bytes: u64,
    },
    /// A scheduler on a bio-based device (`elv_iosched_store` does nothing
    /// on a queue that is not blk-mq).
    SchedulerOnBioBased(String),
    /// blk-wbt on a bio-based device (`queue_wb_lat_store`: EINVAL when
    /// `!queue_is_mq`).
    WbtOnBioBased,
}

impl std::fmt::Display for StackErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StackErrorKind::NoBackend(n) => {
                write!(f, "backend '{n}': no such device in the scenario (ENODEV)")
            }
            StackErrorKind::Cycle(chain) => write!(
                f,
                "backend: the devices are stacked in a cycle ({}): a device cannot be its own backend",
                chain.join(" -> ")
            ),
            StackErrorKind::Beyond {
                backend,
                end_bytes,
                backend_bytes,
            } => write!(
                f,
                "offset + capacity = {end_bytes} bytes reach beyond the end of {backend} ({backend_bytes} bytes): device too small for target (EINVAL)"
            ),
            StackErrorKind::SchedulerOnBioBased(s) => write!(
                f,
                "scheduler \"{s}\": a dm-linear device is bio-based and has no I/O scheduler (its queue/scheduler is \"none\")"
            ),
            StackErrorKind::WbtOnBioBased => write!(
                f,
                "wbt_lat_usec: a dm-linear device is bio-based and has no writeback throttling (EINVAL)"
            ),
        }
    }
}

impl std::fmt::Display for StackError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.kind.fmt(f)
    }
}

/// Each device's `Lower` (None for a device that completes its own I/O),
/// or the first problem found, devices in order.
pub fn resolve_stacking(devices: &[DeviceConfig]) -> Result<Vec<Option<Lower>>, StackError> {
    (0..devices.len())
        .map(|i| resolve_one(devices, i).map_err(|kind| StackError { dev: i, kind }))
        .collect()
}

/// Device `i`'s `Lower`, checked (see the module's comment).
pub fn resolve_one(devices: &[DeviceConfig], i: usize) -> Result<Option<Lower>, StackErrorKind> {
    let index = |name: &str| devices.iter().position(|d| d.info.name == name);
    let d = &devices[i];
    let Some((backend, kind)) = d.model.backend() else {
        return Ok(None);
    };
    let Some(lo) = index(backend) else {
        return Err(StackErrorKind::NoBackend(backend.to_string()));
    };
    // follow the chain down: it must end on a device with a model of its
    // own before it comes back to this one (at most one visit each)
    let mut chain = vec![d.info.name.clone()];
    let mut at = lo;
    for _ in 0..devices.len() {
        chain.push(devices[at].info.name.clone());
        if at == i {
            return Err(StackErrorKind::Cycle(chain));
        }
        match devices[at].model.backend().and_then(|(n, _)| index(n)) {
            Some(next) => at = next,
            None => break,
        }
    }
    let start = match kind {
        StackKind::Loop => 0,
        StackKind::Linear { start } => start,
    };
    let end_bytes = start
        .saturating_mul(512)
        .saturating_add(d.info.capacity_bytes);
    let backend_bytes = devices[lo].info.capacity_bytes;
    if end_bytes > backend_bytes {
        return Err(StackErrorKind::Beyond {
            backend: backend.to_string(),
            end_bytes,
            backend_bytes,
        });
    }
    let lower = match kind {
        StackKind::Loop => Lower::Loop { dev: lo as u16 },
        StackKind::Linear { start } => Lower::Linear {
            dev: lo as u16,
            start,
        },
    };
    if lower.bio_based() {
        if d.scheduler != "none" {
            return Err(StackErrorKind::SchedulerOnBioBased(d.scheduler.clone()));
        }
        if d.wbt.is_some() {
            return Err(StackErrorKind::WbtOnBioBased);
        }
    }
    Ok(Some(lower))
}
