//! The sysfs tunables of /sys/block/DEV/queue/iosched/ for bfq
//! (`bfq_attrs`: the `STORE_FUNCTION`/`SHOW_FUNCTION` pairs and the
//! hand-written `bfq_max_budget_store`, `bfq_timeout_sync_store`,
//! `bfq_strict_guarantees_store`, `bfq_low_latency_store`), parsed with the
//! kernel's `kstrtoul(page, 10)` (`bfq_var_store`). Out-of-range values are
//! clamped, as the kernel does; only unparsable input is an error.

use super::Bfq;
use crate::sim::kerr::KernelError;
use crate::sim::time::{NSEC_PER_MSEC, NSEC_PER_USEC};

/// INT_MAX, the upper clamp of most stores.
const INT_MAX: u64 = i32::MAX as u64;
/// UINT_MAX, the upper clamp of slice_idle_us.
const UINT_MAX: u64 = u32::MAX as u64;

/// `bfq_fifo_expire[1]`: NSEC_PER_SEC / 8.
pub const DEFAULT_FIFO_EXPIRE_SYNC_NS: u64 = 125 * NSEC_PER_MSEC;
/// `bfq_fifo_expire[0]`: NSEC_PER_SEC / 4.
pub const DEFAULT_FIFO_EXPIRE_ASYNC_NS: u64 = 250 * NSEC_PER_MSEC;
/// `bfq_back_max`, KiB.
pub const DEFAULT_BACK_MAX_KB: u64 = 16 * 1024;
/// `bfq_back_penalty`
pub const DEFAULT_BACK_PENALTY: u64 = 2;
/// `bfq_slice_idle`: NSEC_PER_SEC / 125.
pub const DEFAULT_SLICE_IDLE_NS: u64 = 8 * NSEC_PER_MSEC;
/// The serialized scheduler-lock time charged per request (model
/// parameter, not a kernel file): the documentation's 1.9 µs per request
/// on an Intel Core i7-2760QM (Documentation/block/bfq-iosched.rst).
pub const DEFAULT_LOCK_HOLD_NS: u64 = 1900;

/// The kernel tunables, in the order `bfq_attrs` lists them.
pub(super) const TUNABLES: [&str; 10] = [
    "fifo_expire_sync",
    "fifo_expire_async",
    "back_seek_max",
    "back_seek_penalty",
    "slice_idle",
    "slice_idle_us",
    "max_budget",
    "timeout_sync",
    "strict_guarantees",
    "low_latency",
];

/// The model's own parameter, accepted in a scenario's `[device.iosched]`
/// table beside the kernel files but not listed among them.
pub const LOCK_HOLD_PARAM: &str = "sim_lock_hold_ns";

/// The values behind the files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tunables {
    pub fifo_expire_sync_ns: u64,
    pub fifo_expire_async_ns: u64,
    pub back_max_kb: u64,
    pub back_penalty: u64,
    pub slice_idle_ns: u64,
    /// `bfq_user_max_budget` (0 = autotuned).
    pub user_max_budget: u64,
    /// `bfq_timeout` as written, ms (None = the default HZ/8 jiffies).
    pub timeout_ms: Option<u64>,
    pub strict_guarantees: bool,
    pub low_latency: bool,
    pub lock_hold_ns: u64,
}

impl Default for Tunables {
    fn default() -> Self {
        Tunables {
            fifo_expire_sync_ns: DEFAULT_FIFO_EXPIRE_SYNC_NS,
            fifo_expire_async_ns: DEFAULT_FIFO_EXPIRE_ASYNC_NS,
            back_max_kb: DEFAULT_BACK_MAX_KB,
            back_penalty: DEFAULT_BACK_PENALTY,
            slice_idle_ns: DEFAULT_SLICE_IDLE_NS,
            user_max_budget: 0,
            timeout_ms: None,
            strict_guarantees: false,
            low_latency: true,
            lock_hold_ns: DEFAULT_LOCK_HOLD_NS,
        }
    }
}

/// `kstrtoul(s, 10, &v)`: decimal digits with an optional leading '+' and
/// one trailing newline; -EINVAL otherwise, -ERANGE past an unsigned long.
pub fn kstrtoul10(s: &str) -> Result<u64, KernelError> {
    let bad = || KernelError::einval(format!("'{}' is not a decimal number", s.escape_debug()));
    let body = s.strip_suffix('\n').unwrap_or(s);
    let digits = body.strip_prefix('+').unwrap_or(body);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    digits
        .parse::<u64>()
        .map_err(|_| KernelError::erange(format!("'{}' does not fit an unsigned long", body)))
}

impl Bfq {
    /// The `*_store` functions.
    pub(super) fn store(&mut self, name: &str, value: &str) -> Result<(), KernelError> {
        let v = kstrtoul10(value).map_err(|e| KernelError {
            errno: e.errno,
            msg: format!("bfq {name}: {}", e.msg),
        })?;
        let clamp = |lo: u64, hi: u64| v.clamp(lo, hi);
        let t = &mut self.t;
        match name {
            "fifo_expire_sync" => t.fifo_expire_sync_ns = clamp(1, INT_MAX) * NSEC_PER_MSEC,
            "fifo_expire_async" => t.fifo_expire_async_ns = clamp(1, INT_MAX) * NSEC_PER_MSEC,
            "back_seek_max" => t.back_max_kb = clamp(0, INT_MAX),
            "back_seek_penalty" => t.back_penalty = clamp(1, INT_MAX),
            "slice_idle" => t.slice_idle_ns = clamp(0, INT_MAX) * NSEC_PER_MSEC,
            "slice_idle_us" => t.slice_idle_ns = clamp(0, UINT_MAX) * NSEC_PER_USEC,
            "max_budget" => {
                // bfq_max_budget_store: 0 returns to autotuning.
                t.user_max_budget = v;
                self.max_budget = if v == 0 {
                    self.calc_max_budget()
                } else {
                    v.min(INT_MAX)
                };
            }
            "timeout_sync" => {
                t.timeout_ms = Some(clamp(1, INT_MAX));
                if t.user_max_budget == 0 {
                    self.max_budget = self.calc_max_budget();
                }
            }
            "strict_guarantees" => {
                let on = v >= 1;
                if !t.strict_guarantees && on && t.slice_idle_ns < 8 * NSEC_PER_MSEC {
                    t.slice_idle_ns = 8 * NSEC_PER_MSEC;
                }
                t.strict_guarantees = on;
            }
            "low_latency" => {
                let on = v >= 1;
                if !on && t.low_latency {
                    self.end_wr();
                }
                self.t.low_latency = on;
            }
            LOCK_HOLD_PARAM => t.lock_hold_ns = v,
            _ => unreachable!("checked by set_tunable"),
        }
        Ok(())
    }

    /// The `*_show` functions.
    pub(super) fn show(&self, name: &str) -> String {
        let t = &self.t;
        match name {
            "fifo_expire_sync" => (t.fifo_expire_sync_ns / NSEC_PER_MSEC).to_string(),
            "fifo_expire_async" => (t.fifo_expire_async_ns / NSEC_PER_MSEC).to_string(),
            "back_seek_max" => t.back_max_kb.to_string(),
            "back_seek_penalty" => t.back_penalty.to_string(),
            "slice_idle" => (t.slice_idle_ns / NSEC_PER_MSEC).to_string(),
            "slice_idle_us" => (t.slice_idle_ns / NSEC_PER_USEC).to_string(),
            "max_budget" => t.user_max_budget.to_string(),
            "timeout_sync" => {
                let j = self.timeout_jiffies();
                ((j * 1000).div_ceil(self.hz.0 as u64)).to_string()
            }
            "strict_guarantees" => (t.strict_guarantees as u8).to_string(),
            "low_latency" => (t.low_latency as u8).to_string(),
            _ => String::new(),
        }
    }
}
