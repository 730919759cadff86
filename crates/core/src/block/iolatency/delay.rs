//! The blkg's return-to-user delay as blk-iolatency drives it
//! (block/blk-cgroup.c: `blkcg_use_delay`, `blkcg_unuse_delay`,
//! `blkcg_clear_delay`, `blkcg_add_delay`, `blkcg_scale_delay`,
//! `blkcg_maybe_throttle_blkg`). blk-iolatency only uses the positive,
//! counted form of `use_delay` (blk-iocost's exact negative form is in
//! `iocost/`).

use crate::sim::time::Ns;

const NSEC_PER_SEC: Ns = 1_000_000_000;
/// The longest single sleep while `use_delay` is positive.
pub const MAX_SLEEP_NS: Ns = 250_000_000;

/// A blkg's delay state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Delay {
    /// How many scale-down steps past depth 1 the group is (`use_delay`).
    pub use_delay: u32,
    /// The sleep owed (`delay_nsec`).
    pub delay_ns: u64,
    /// When the last decay step happened (`delay_start`).
    delay_start: Ns,
    last_delay: u64,
    last_use: u32,
}

impl Delay {
    /// Mirrors `blkcg_use_delay`.
    pub fn use_delay(&mut self) {
        self.use_delay += 1;
    }

    /// Mirrors `blkcg_unuse_delay`: false if there was nothing to drop.
    pub fn unuse_delay(&mut self) -> bool {
        if self.use_delay == 0 {
            return false;
        }
        self.use_delay -= 1;
        true
    }

    /// Mirrors `blkcg_clear_delay` (the owed time stays; nothing makes
    /// anyone serve it while `use_delay` is 0).
    pub fn clear(&mut self) {
        self.use_delay = 0;
    }

    /// Mirrors `blkcg_scale_delay`: at most once a second, forgive the time
    /// that passed (up to the last delay), or half the last delay at least
    /// when `use_delay` went down since.
    pub fn scale(&mut self, now: Ns) {
        let old = self.delay_start;
        if old + NSEC_PER_SEC >= now {
            return;
        }
        self.delay_start = now;
        let mut sub = self.last_delay.min(now - old);
        if self.use_delay < self.last_use {
            sub = sub.max(self.last_delay >> 1);
        }
        if self.delay_ns < sub {
            self.delay_ns = 0;
            self.last_delay = 0;
        } else {
            self.delay_ns -= sub;
            self.last_delay = self.delay_ns;
        }
        self.last_use = self.use_delay;
    }

    /// Mirrors `blkcg_add_delay`.
    pub fn add(&mut self, now: Ns, delta_ns: u64) {
        self.scale(now);
        self.delay_ns = self.delay_ns.saturating_add(delta_ns);
    }
}

/// Mirrors `blkcg_maybe_throttle_blkg` over the delays of a cgroup and its
/// ancestors below the root: the largest owed delay among levels with
/// `use_delay` set, capped at 250 ms.
pub fn sleep_for<'a>(now: Ns, path: impl Iterator<Item = &'a mut Delay>) -> Ns {
    let mut delay = 0;
    for d in path {
        if d.use_delay != 0 {
            d.scale(now);
            delay = delay.max(d.delay_ns);
        }
    }
    delay.min(MAX_SLEEP_NS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decay_and_cap() {
        let mut d = Delay::default();
        d.add(2 * NSEC_PER_SEC, 400_000_000);
        // no use_delay: nobody sleeps
        assert_eq!(sleep_for(2 * NSEC_PER_SEC, [&mut d].into_iter()), 0);
        d.use_delay();
        // capped at 250 ms
        assert_eq!(
            sleep_for(2 * NSEC_PER_SEC, [&mut d].into_iter()),
            MAX_SLEEP_NS
        );
        // 1.5 s later: last_delay was 0 when added (first scale), so the add
        // left 400 ms and last_delay 0; the next scale forgives min(0, ..) = 0
        d.scale(3 * NSEC_PER_SEC + 600_000_000);
        assert_eq!(d.delay_ns, 400_000_000);
        // the one after forgives min(last_delay = 400 ms, 1.1 s) = everything
        d.scale(5 * NSEC_PER_SEC);
        assert_eq!(d.delay_ns, 0);
        assert!(d.unuse_delay());
        assert!(!d.unuse_delay());
    }
}
