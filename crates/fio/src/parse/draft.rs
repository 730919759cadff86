//! A job while its options are applied (fio's `thread_options` being filled
//! by `handle_option`, before `fixup_options`).

use crate::options::JobSpec;

/// A job while its options are being applied: the typed spec plus fio's raw
/// per-option fields that `fixup_options` later combines.
#[derive(Clone, Debug)]
pub(super) struct Draft {
    pub(super) spec: JobSpec,
    pub(super) bs: [u64; 3],
    pub(super) range: [Option<(u64, u64)>; 3],
    pub(super) split: [Option<Vec<(u32, u32)>>; 3],
    pub(super) iodepth_batch: u32,
    pub(super) complete_min: u32,
    pub(super) complete_max: u32,
    pub(super) iodepth_low: u32,
}

impl Draft {
    pub(super) fn new() -> Draft {
        Draft {
            spec: JobSpec::new(""),
            bs: [4096; 3],
            range: [None, None, None],
            split: [None, None, None],
            iodepth_batch: 1,
            complete_min: 1,
            complete_max: 0,
            iodepth_low: 0,
        }
    }

    /// A new job below the current global options (fio's `get_new_job` from
    /// `def_thread`): the global values, none of the global option list.
    pub(super) fn job_from(global: &Draft, name: &str) -> Draft {
        let mut d = global.clone();
        d.spec.name = name.to_string();
        d.spec.global_options = global.spec.raw_options.clone();
        d.spec.raw_options = Vec::new();
        d
    }
}
