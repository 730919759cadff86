//! Tracepoint payloads of include/trace/events/iocost.h (TRACE_SYSTEM iocost),
//! as their TP_printk formats print them. vrate fields carry
//! `vtime_base_rate` (kernels since 63c9eac4b6d7 "blk-iocost: Trace
//! vtime_base_rate instead of vtime_rate", v6.2), or `vtime_rate` as 6.1 and
//! earlier print it (`iocost.trace_vrate`). Strings are built only when
//! tracing is on.
//!
//! Two simulator-only events (system `blklab`) sit next to them:
//! `iocost_ioc_vrate_adj_pct` repeats iocost_ioc_vrate_adj with the vrates as
//! percentages, exactly in the layout of the bpftrace script of the 2026
//! busy_level patch thread (`v*10000/VTIME_PER_USEC`, truncated, printed
//! `%d.%02d%%`), and `iocost_period` summarises each period.

use crate::block::ctx::Ctx;
use crate::sim::probe::{IocgPeriod, IocostPeriod, Probe};

use super::period::PeriodSignals;
use super::*;

/// `vrate` as the patch thread's bpftrace prints it: "127.50%".
pub fn vrate_pct_str(v: u64) -> String {
    let p = v * 10000 / VTIME_PER_USEC;
    format!("{}.{:02}%", p / 100, p % 100)
}

impl IoCost {
    /// The vrate `iocost_ioc_vrate_adj` reports as the old one, and as the
    /// new one in a period that holds vrate: `vtime_base_rate` since
    /// 63c9eac4b6d7 (v6.2), `vtime_rate` (the base plus the vtime_err
    /// compensation of `ioc_refresh_vrate`) before (`iocost.trace_vrate`).
    pub(crate) fn traced_vrate(&self, ctx: &Ctx) -> u64 {
        if ctx.switches.is("iocost.trace_vrate", "vtime-rate") {
            self.vtime_rate
        } else {
            self.vtime_base_rate
        }
    }

    /// `iocost_ioc_vrate_adj` (+ the percentage companion event).
    pub(crate) fn trace_vrate_adj(
        &self,
        ctx: &mut Ctx,
        new_vrate: u64,
        missed_ppm: [u32; 2],
        rq_wait_pct: u32,
        nr_lagging: i32,
        nr_shortages: i32,
    ) {
        if !ctx.trace.enabled() {
            return;
        }
        let dev = &self.dev_name;
        let old = self.traced_vrate(ctx);
        let busy = self.busy_level;
        let tail = format!(
            "busy={busy} missed_ppm={}:{} rq_wait_pct={rq_wait_pct} lagging={nr_lagging} shortages={nr_shortages}",
            missed_ppm[0], missed_ppm[1]
        );
        ctx.trace.emit(ctx.now, "iocost:iocost_ioc_vrate_adj", || {
            format!("[{dev}] vrate={old}->{new_vrate} {tail}")
        });
        ctx.trace
            .emit(ctx.now, "blklab:iocost_ioc_vrate_adj_pct", || {
                format!(
                    "[{dev}] vrate={}->{} {tail}",
                    vrate_pct_str(old),
                    vrate_pct_str(new_vrate)
                )
            });
    }

    /// `iocost_iocg_activate` / `iocost_iocg_idle` (class iocost_iocg_state).
    /// Weights print as inuse/weight, hweights as the cached hwi/hwa.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn trace_iocg_state(
        &self,
        ctx: &mut Ctx,
        name: &str,
        idx: usize,
        now: &IocNow,
        last_period: u64,
        cur_period: u64,
        vtime: u64,
    ) {
        if !ctx.trace.enabled() {
            return;
        }
        let g = &self.iocgs[idx];
        let path = ctx.cgroups.get(g.cg).path.as_str();
        let dev = &self.dev_name;
        let vrate = self.vtime_base_rate;
        ctx.trace.emit(ctx.now, name, || {
            format!(
                "[{dev}:{path}] now={}:{} vrate={vrate} period={last_period}->{cur_period} vtime={vtime} weight={}/{} hweight={}/{}",
                now.now, now.vnow, g.inuse, g.weight, g.hweight_inuse, g.hweight_active
            )
        });
    }

    /// `iocost_inuse_shortage` / `_transfer` / `_adjust` (class iocg_inuse_update).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn trace_inuse(
        &self,
        ctx: &mut Ctx,
        name: &str,
        idx: usize,
        now: &IocNow,
        old_inuse: u32,
        new_inuse: u32,
        old_hwi: u64,
        new_hwi: u64,
    ) {
        if !ctx.trace.enabled() {
            return;
        }
        let path = ctx.cgroups.get(self.iocgs[idx].cg).path.as_str();
        let dev = &self.dev_name;
        ctx.trace.emit(ctx.now, name, || {
            format!("[{dev}:{path}] now={} inuse={old_inuse}->{new_inuse} hw_inuse={old_hwi}->{new_hwi}", now.now)
        });
    }

    /// `iocost_iocg_forgive_debt`
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn trace_forgive(
        &self,
        ctx: &mut Ctx,
        idx: usize,
        now: &IocNow,
        usage_pct: u32,
        old_debt: u64,
        new_debt: u64,
        old_delay: u64,
        new_delay: u64,
    ) {
        if !ctx.trace.enabled() {
            return;
        }
        let path = ctx.cgroups.get(self.iocgs[idx].cg).path.as_str();
        let dev = &self.dev_name;
        ctx.trace.emit(ctx.now, "iocost:iocost_iocg_forgive_debt", || {
            format!(
                "[{dev}:{path}] now={}:{} usage={usage_pct} debt={old_debt}->{new_debt} delay={old_delay}->{new_delay}",
                now.now, now.vnow
            )
        });
    }

    /// Simulator-only per-period summary (not a kernel tracepoint).
    /// With a probe listening, the same period also goes out as numbers
    /// (`probe_period`).
    pub(crate) fn trace_period(&self, ctx: &mut Ctx, s: &PeriodSignals, usage_us_sum: u64) {
        if ctx.trace.probing() {
            self.probe_period(ctx, s, usage_us_sum);
        }
        if !ctx.trace.enabled() {
            return;
        }
        let dev = &self.dev_name;
        let (p, per, vrate, busy, nact) = (
            self.cur_period,
            self.period_us,
            self.vtime_base_rate,
            self.busy_level,
            self.active.len(),
        );
        ctx.trace.emit(ctx.now, "blklab:iocost_period", || {
            format!(
                "[{dev}] period={p} period_us={per} vrate={vrate} ({}) busy={busy} nr_active={nact} nr_done={} usage_us={usage_us_sum} missed_ppm={}:{} rq_wait_pct={} lagging={} shortages={}",
                vrate_pct_str(vrate),
                s.lat.nr_done,
                s.lat.missed_ppm[0],
                s.lat.missed_ppm[1],
                s.lat.rq_wait_pct,
                s.nr_lagging,
                s.nr_shortages
            )
        });
    }
}

impl IoCost {
    /// The period's figures and every active iocg's (what iocost_monitor.py
    /// reads from the kernel's structures each period) as probe samples.
    /// Reads cached values only: observing must not change the state.
    fn probe_period(&self, ctx: &mut Ctx, s: &PeriodSignals, usage_us_sum: u64) {
        let dev = self.dev_name.as_str();
        ctx.trace.probe(
            ctx.now,
            &Probe::IocostPeriod(IocostPeriod {
                dev,
                period: self.cur_period,
                period_us: self.period_us,
                vrate: self.vtime_base_rate,
                busy_level: self.busy_level,
                missed_ppm: s.lat.missed_ppm,
                rq_wait_pct: s.lat.rq_wait_pct,
                nr_lagging: s.nr_lagging,
                nr_shortages: s.nr_shortages,
                nr_active: self.active.len() as u32,
                nr_done: s.lat.nr_done,
                usage_us: usage_us_sum,
            }),
        );
        for &idx in &self.active {
            let g = &self.iocgs[idx];
            let debt_ns = (g.abs_vdebt as u128 * 1000 / VTIME_PER_USEC as u128) as u64;
            ctx.trace.probe(
                ctx.now,
                &Probe::IocgPeriod(IocgPeriod {
                    dev,
                    cgroup: ctx.cgroups.get(g.cg).path.as_str(),
                    period: self.cur_period,
                    active: g.active,
                    inuse: g.inuse,
                    hweight_active: g.hweight_active,
                    hweight_inuse: g.hweight_inuse,
                    usage_us: g.usage_delta_us,
                    debt_ns,
                    delay_ns: if g.use_delay { g.delay } else { 0 },
                }),
            );
        }
    }
}
