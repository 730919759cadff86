//! `blklab conformance`'s command line (clap): the cases, how many real
//! runs, where the real side runs and how the simulator expresses it. The
//! command itself is conformance_cmd.rs.

#[derive(clap::Args)]
pub(crate) struct ConformanceArgs {
    /// Case names (a trailing `*` selects by prefix); all cases when none is given.
    pub(crate) cases: Vec<String>,
    /// List the cases and whether this host can run them.
    #[arg(long)]
    pub(crate) list: bool,
    /// Real runs per case (medians are compared).
    #[arg(long, default_value_t = 3)]
    pub(crate) repeat: u32,
    /// Shorter fio runtimes.
    #[arg(long)]
    pub(crate) quick: bool,
    /// Print the Markdown results table (docs/fidelity/conformance.md) on stdout; progress goes to stderr.
    #[arg(long)]
    pub(crate) markdown: bool,
    /// Simulator only: do not touch the host.
    #[arg(long)]
    pub(crate) sim_only: bool,
    /// The simulated host's CPUs (`[host] cpus` in each case's scenario;
    /// 0 = the free host). Default: 0 against this host, 1 against a QEMU
    /// guest (its one vCPU; with the loop workers and wake-up preemption
    /// below: the guest's machine, docs/fidelity/guest-machine.md).
    #[arg(long)]
    pub(crate) sim_cpus: Option<u32>,
    /// How the simulator builds the capped disk: `stacked` (an upper loop
    /// over a lower device with the cap as io.max on the lower device, as
    /// the host builds it; the default) or `cloud` (the earlier stand-in, a
    /// provisioned volume at the cap), to compare the two.
    #[arg(long, default_value = "stacked")]
    pub(crate) sim_capped_disk: blklab_conformance::sim::CappedAs,
    /// How the simulator builds the host's loop device: `nullb` (null_blk
    /// completing in the measured QD1 latency; the default), `worker` (a
    /// tmpfs-backed loop whose per-cgroup worker does the copy on a CPU,
    /// costed from the measured latency) or `worker:NS` (worker_ns = NS);
    /// on the stacked capped disk, `worker[:NS]` gives both loop levels
    /// their workers at that cost. Default: `worker:4000` against a QEMU
    /// guest expressed with CPUs (the traced loop work per request),
    /// `nullb` otherwise.
    #[arg(long)]
    pub(crate) sim_loop: Option<blklab_conformance::sim::LoopAs>,
    /// With --sim-cpus > 0: a woken loop worker preempts the fio task on
    /// its CPU at the end of its current burst (`[host] wakeup_preempt`,
    /// CFS wake-up preemption, as traced in the QEMU guests). Default: on
    /// against a QEMU guest expressed with CPUs, off otherwise;
    /// `--sim-wakeup-preempt=false` turns it off.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub(crate) sim_wakeup_preempt: Option<bool>,
    /// With --sim-cpus > 0: the CPU time, in ns, of a kblockd queue run
    /// (`[host] kblockd_ns`; the 6.1 guest's `blk_mq_run_work_fn` took
    /// 3.7-5.5 µs per request, docs/fidelity/cpus.md). An experiment: the
    /// judged figures use the default (0).
    #[arg(long, default_value_t = 0)]
    pub(crate) sim_kblockd: u64,
    /// With --sim-cpus > 0: held bios leave through blk-throttle's kworker
    /// (`[host] kthrotld = true`, throttle.md). An experiment; default off.
    #[arg(long)]
    pub(crate) sim_kthrotld: bool,
    /// With --sim-cpus > 0: every getevents call of an async job costs
    /// `reap_ns`, also one that finds its completions waiting (`[host]
    /// reap_every_call = true`, docs/fidelity/cpus.md). An experiment;
    /// default off.
    #[arg(long)]
    pub(crate) sim_reap_every: bool,
    /// With --sim-cpus > 0: the waker's side, in ns, of a wake-up made from
    /// a task's context (`[host] waker_ns`: `try_to_wake_up` run by the
    /// waker). Default: 2000 against a QEMU guest expressed with CPUs (its
    /// traces, docs/fidelity/cpus.md), 0 otherwise.
    #[arg(long)]
    pub(crate) sim_waker: Option<u64>,
    /// With --sim-cpus > 0: the waker's side, in ns, of waking a task asleep
    /// for a request tag (`[host] tag_waker_ns`: the sbitmap wait queue's
    /// walk in `sbitmap_queue_wake_up`). Default: the same as --sim-waker's.
    /// An experiment (docs/fidelity/bfq-lowmode.md).
    #[arg(long)]
    pub(crate) sim_tag_waker: Option<u64>,
    /// With --sim-cpus > 0: the part, in ns, of fio's way back from its
    /// submit call that only a call waking a sleeping task spends (`[host]
    /// submit_wake_ns`; without a value the guests' measured 2000,
    /// docs/fidelity/cpus.md). An experiment: the judged figures use 0.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "2000")]
    pub(crate) sim_submit_wake: Option<u64>,
    /// With --sim-cpus > 0: the fair class's features, in the syntax of
    /// /sys/kernel/debug/sched/features ("NO_PLACE_LAG NO_RUN_TO_PARITY";
    /// `[host] sched_features`): with BLKLAB_GUEST_SCHED_FEATURES set the
    /// same, both sides run the same features. An experiment.
    #[arg(long, default_value = "", value_parser = parse_sched_features)]
    pub(crate) sim_sched_features: blklab_core::sim::sched_features::SchedFeatures,
    /// Where fio's submit and reap costs come from against a QEMU guest:
    /// `probe` (the QD1 probe's slat and 1 µs; the default) or `measured`
    /// (the guest's quiet-submit probe: 4 jobs at QD8, whose submit calls
    /// wake nobody: its slat, and fio's CPU per I/O less it; every loop
    /// level's worker from its scheduler trace, the kworkers' CPU per
    /// request less the wake-ups and switches charged apart;
    /// docs/fidelity/guest-slat.md). `measured,probe` judges the first and
    /// reports the second's figures under each case. An experiment: without
    /// --sim-reap-every the simulator charges fio's reap only when a
    /// completion wakes it, so `measured` undercharges jobs that never
    /// sleep. Not with --sim-loop worker[:NS].
    #[arg(long, default_value = "probe")]
    pub(crate) sim_costs: blklab_conformance::fio_costs::SimCosts,
    /// Leave every file the QEMU guest sends back for a case (fio's JSON,
    /// the iocost trace, io.stat) in DIR/KERNEL/CASE/, to read the raw
    /// per-period traces.
    #[arg(long, value_name = "DIR")]
    pub(crate) guest_files: Option<std::path::PathBuf>,
    /// Print the scenario the simulator runs for each case, and exit.
    #[arg(long)]
    pub(crate) show: bool,
    /// Where the real side runs: `host`, a stock kernel booted under QEMU
    /// (`debian-6.1`, `debian-6.12`), a kernel built from Debian's source
    /// with every io controller (`built-6.1-hz1000`, `built-6.1-hz250`),
    /// `local:DIR` (a kernel you built: DIR's arch/x86/boot/bzImage and
    /// .config; docs/fidelity/conformance-vm.md), or `all` (host and the
    /// stock kernels).
    #[arg(long, default_value = "host")]
    pub(crate) kernel: String,
    /// List the kernels, their pinned packages and whether they are cached.
    #[arg(long)]
    pub(crate) list_kernels: bool,
    /// Print the kernel configuration fragment the built kernels use
    /// (`make ARCH=x86_64 KCONFIG_ALLCONFIG=FILE allnoconfig` configures a
    /// tree that boots as `local:DIR` with every case runnable), and exit.
    #[arg(long)]
    pub(crate) kconfig_fragment: bool,
}

/// `--sim-sched-features`: the kernel's syntax, checked by name.
pub(crate) fn parse_sched_features(
    s: &str,
) -> Result<blklab_core::sim::sched_features::SchedFeatures, String> {
    blklab_core::sim::sched_features::SchedFeatures::parse(s)
}
