//! The loop driver (drivers/block/loop.c) over a block device of the same
//! machine, with direct I/O (`LO_FLAGS_DIRECT_IO`, `losetup --direct-io=on`):
//! a request-based (blk-mq) device whose requests are carried out by bios on
//! the backing device. The block layer's side (`loop_queue_rq`, `lo_rw_aio`,
//! `lo_rw_aio_complete`) is in `block/blk_mq/stack.rs`.
//!
//! Parameters (the TOML keys of `[device.model]` with `kind = "loop"`):
//! * `backend`: the name of the scenario device the loop device is bound to
//!   (`losetup /dev/loopN /dev/BACKEND`).
//!
//! The queue: `loop_add` makes a tag set of `hw_queue_depth` (module
//! parameter, default 128) requests on one hardware queue, with
//! BLK_MQ_F_NO_SCHED_BY_DEFAULT, so the device starts with scheduler "none"
//! (the scenario's default too); a scheduler may be chosen, as on the host.
//! The capacity is the backing device's (`get_size` with no offset or
//! sizelimit), unless the scenario says otherwise.
//!
//! Not modelled: a loop device over a file (the page cache and file system
//! of the backing file), buffered (non-direct) loop I/O, `lo_offset`.

use serde::Deserialize;

use super::DeviceModel;
use crate::block::bio::Op;
use crate::sim::time::Ns;

/// loop.c's `hw_queue_depth` module parameter default.
pub const LOOP_HW_QUEUE_DEPTH: u32 = 128;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopSpec {
    /// The scenario device the loop device's I/O goes to.
    pub backend: String,
}

/// The loop device as a model: it never decides a completion itself (the
/// block layer sends its requests on to the backing device); it only gives
/// the driver's queue depth and its description.
pub struct Loop {
    backend: String,
}

impl Loop {
    pub fn new(s: &LoopSpec) -> Result<Loop, String> {
        if s.backend.is_empty() {
            return Err("backend: expected the name of another device".into());
        }
        Ok(Loop {
            backend: s.backend.clone(),
        })
    }
}

impl DeviceModel for Loop {
    fn kind(&self) -> &'static str {
        "loop"
    }
    fn default_queue_depth(&self) -> u32 {
        LOOP_HW_QUEUE_DEPTH
    }
    /// Not reached: a stacked device's requests go to its backing device
    /// (`block::blk_mq::run_queue`); completing at once keeps the contract.
    fn issue(&mut self, now: Ns, _op: Op, _sector: u64, _bytes: u32) -> Ns {
        debug_assert!(false, "a loop device's request reached its model");
        now
    }
    fn describe(&self) -> String {
        format!("loop backend={} (direct I/O)", self.backend)
    }
}
