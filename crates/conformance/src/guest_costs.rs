//! The guest expression's kernel costs (issue 13): what the QEMU guests'
//! scheduler traces measured per event, which the simulated side takes
//! against a guest (sim_request.rs `SimRequest::for_side`) and which the
//! quiet-submit probe's derivations subtract (quiet_kworkers.rs). Kept
//! apart from the command line's choices so that a derivation can use them
//! without depending on those choices.

/// The CPU time of the loop work per request, per loop level, in the
/// guest expression: the guests' traced `loop_workfn` time on the capped
/// cases, 7.4-8.7 µs per request of the upper device over both levels on
/// debian-6.12 and 8.3-8.5 µs on debian-6.1 (3.7-4.4 µs per level; the
/// `guest sched trace` notes, vm/sched_trace.rs), and 4.0-4.2 µs on the 6.1
/// guest's single loop device (docs/fidelity/cpus.md); tracing's own cost
/// included. The probe cannot give it: in the guest the loop work runs
/// while fio is switched out inside its submit call, so fio's QD1 clat
/// holds none of it (`--sim-loop worker` without NS derives the 1 µs floor
/// from it). Simplified: the same figure on both levels of the stacked
/// capped disk (the trace gives their sum, not the split)
/// (docs/fidelity/guest-machine.md). `--sim-costs measured` puts the
/// guest's own in its place on every level, from the quiet-submit probe's
/// trace (quiet_kworkers.rs).
pub const GUEST_LOOP_WORKER_NS: u64 = 4_000;

/// The waker's side of a wake-up (`[host] waker_ns`) in the guest
/// expression: in the 6.1 guest's traces a kblockd run that wakes the loop
/// kworker holds the vCPU 11.0 µs (median, 1,457 runs of the 1j-qd1 case)
/// against 9.0 µs for the same run that wakes nobody (1,178 runs of 4j-qd8,
/// the kworker busy), and a loop kworker's command that wakes two sleeping
/// tasks 13.0 µs against 9.0 µs for one that wakes none; the 6.12 guest's
/// kworker 12.0 against 10.0 µs (docs/fidelity/cpus.md, "The waker's side
/// of a wake-up"). Tracing's own cost included.
pub const GUEST_WAKER_NS: u64 = 2_000;

/// The part of fio's submit call after its last wake-up (`[host]
/// submit_return_ns`) in the guest expression: fio's `sched_switch` out
/// comes 3.0 µs (median) after its last `sched_wakeup` of a kworker in
/// every guest trace at hand (debian-6.1: 1j-qd1, 1j-qd32, 4j-qd8;
/// debian-6.12: two runs of each), whether it woke one kworker (6.1:
/// kblockd) or two (6.12: the loop kworker, then kblockd through the
/// need_resched hand-off, 3 µs apart). The simulator's default (6 µs) is
/// 6.12's first wake-up to the switch, which held the second wake-up that
/// [`GUEST_WAKER_NS`] now charges (docs/fidelity/cpus.md, "The waker's
/// side of a wake-up"). At most the probe's slat.
pub const GUEST_SUBMIT_RETURN_NS: u64 = 3_000;

/// The part of fio's way back from its submit call that only a call whose
/// dispatch woke a sleeping task spends (`[host] submit_wake_ns`), as
/// measured in the guests; `--sim-submit-wake` without a value gives it.
/// Not the guest expression's default (0): with it built-6.1-hz1000's
/// `capped-qos-iocost-on`, bimodal in the CPU costs, falls into its low
/// mode (real 898, simulated 887 -> 749) for probe slats of 8.5-10 µs
/// (docs/fidelity/cpus.md, "A submit call that wakes nobody"). In the
/// guests' traces (`--guest-files`, `sched.r0.trace`,
/// `capped-qd1-beside-qd128` /B at QD128) a call that wakes the loop
/// kworker is switched out 6.7 µs (6.12; mean of 147) after its
/// `block_rq_issue`, 3.0 µs after its `sched_wakeup`, while a call whose
/// bio joins work already queued issues fio's next bio 9.0 µs (median; p10
/// 9.0, p90 10.0; 385 gaps on debian-6.12, 447 on debian-6.1, 327 and 195
/// in 6.1's `iolatency-protect-off`) after its own, and a call resumed
/// after its preemption issues the next 9.1 µs after it is switched back
/// in: so the quiet call's way back is about what a preempted one still
/// does after `schedule()` returns, ~1 µs (not separable in the trace), of
/// the 3 µs (`GUEST_SUBMIT_RETURN_NS`) a waking call spends after its
/// wake-up. Tracing's own cost included.
pub const GUEST_SUBMIT_WAKE_NS: u64 = 2_000;

/// A woken tag waiter's futile retry (`[host] tag_retry_ns`) in the guest
/// expression: in the bfq 4j-qd8 traces a /B fio woken by a freed tag
/// runs 7.0 µs (median; debian-6.1: 1,147 such stints in 1,147 requests,
/// debian-6.12: 357 in 2,302; built-6.1-hz1000: 4.0 µs) and sleeps again
/// in D; less the switch the model charges as `wake_ns` (3 µs)
/// (docs/fidelity/bfq-qemu.md, "The futile tag retry").
pub const GUEST_TAG_RETRY_NS: u64 = 4_000;
