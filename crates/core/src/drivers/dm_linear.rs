//! device-mapper's linear target (drivers/md/dm-linear.c, dm.c): a
//! bio-based device (no request queue, scheduler, tags or rq_qos chain)
//! mapping its sectors onto a range of another device of the same machine,
//! as the table line `0 LEN linear /dev/BACKEND OFFSET` does. The block
//! layer's side (`dm_submit_bio`, `linear_map`, `clone_endio`) is in
//! `block/blk_mq/stack.rs`.
//!
//! Parameters (the TOML keys of `[device.model]` with `kind = "dm-linear"`):
//! * `backend`: the name of the scenario device the target maps to.
//! * `offset`: where on the backend the device starts (the table's start
//!   sector `ti->begin`): a whole number of 512-byte sectors, or a size
//!   string ("1G", "4k") that must be a multiple of 512 bytes (default 0).
//!
//! The device's capacity (the table's LEN) defaults to what is left of the
//! backend after the offset; `dm_table_add_target` refuses a target reaching
//! beyond its device, and so does the scenario.
//!
//! What the kernel allows on a bio-based queue, and the scenario with it:
//! blk-throttle (io.max) works (`submit_bio_noacct` → `blk_throtl_bio` runs
//! for every queue); a scheduler does not (`elv_iosched_store` only acts on
//! blk-mq queues, the sysfs file shows "none": the scenario refuses any other
//! value rather than ignore it); io.cost.qos and io.cost.model fail with
//! EOPNOTSUPP (`ioc_qos_write`, `ioc_cost_model_write`: `!queue_is_mq`), and
//! the other rq_qos policies (wbt, iolatency) need requests, so they are
//! refused too.

use serde::Deserialize;

use super::DeviceModel;
use crate::block::bio::Op;
use crate::sim::time::Ns;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DmLinearSpec {
    /// The scenario device the target maps to.
    pub backend: String,
    /// The start sector on the backend (`linear_ctr`'s `start`).
    #[serde(default, deserialize_with = "de_offset_sectors")]
    pub offset: u64,
}

/// `offset`: an integer is sectors, a string a size in bytes (k, m, g, t)
/// that must fall on a sector.
fn de_offset_sectors<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum O {
        Sectors(u64),
        Size(String),
    }
    match O::deserialize(d)? {
        O::Sectors(n) => Ok(n),
        O::Size(s) => {
            let bytes = crate::mm::parse_size(&s).map_err(serde::de::Error::custom)?;
            if bytes % 512 != 0 {
                return Err(serde::de::Error::custom(format!(
                    "offset '{s}' is not a whole number of 512-byte sectors"
                )));
            }
            Ok(bytes / 512)
        }
    }
}

/// The dm-linear device as a model: like [`super::loop_dev::Loop`], it
/// never decides a completion itself.
pub struct DmLinear {
    backend: String,
    offset: u64,
}

impl DmLinear {
    pub fn new(s: &DmLinearSpec) -> Result<DmLinear, String> {
        if s.backend.is_empty() {
            return Err("backend: expected the name of another device".into());
        }
        Ok(DmLinear {
            backend: s.backend.clone(),
            offset: s.offset,
        })
    }
}

impl DeviceModel for DmLinear {
    fn kind(&self) -> &'static str {
        "dm-linear"
    }
    /// A bio-based device has no tags; the queue depth is never used.
    fn default_queue_depth(&self) -> u32 {
        super::loop_dev::LOOP_HW_QUEUE_DEPTH
    }
    /// Not reached: a bio-based device's bios go to its target's device.
    fn issue(&mut self, now: Ns, _op: Op, _sector: u64, _bytes: u32) -> Ns {
        debug_assert!(false, "a dm-linear bio reached its model");
        now
    }
    fn describe(&self) -> String {
        format!("dm-linear backend={} offset={}", self.backend, self.offset)
    }
}
