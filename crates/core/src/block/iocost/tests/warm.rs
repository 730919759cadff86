//! State across runs: what a write of `io.cost.qos` keeps and what it
//! resets (`ioc_qos_write` -> `ioc_refresh_params(ioc, true)`), and what
//! the ioc keeps while idle between two loads (`ioc_timer_fn` going
//! IOC_IDLE). docs/fidelity/iocost.md, "State across runs".

use super::harness::*;
use super::*;
use crate::block::rq_qos::RqQos;

const MS: Ns = 1_000_000;

/// [`MODEL_1K`] with QoS that lets vrate climb to 400 %: a 100 µs device
/// meets any latency target, so a cgroup short of budget raises vrate.
const QOS_CLIMB: &str = "8:0 enable=1 ctrl=user rpct=90 rlat=5000 wpct=90 wlat=5000 min=50 max=400";

fn climbing() -> Sim {
    Sim::new(
        &[
            ("/", "io.cost.model", MODEL_1K),
            ("/", "io.cost.qos", QOS_CLIMB),
            ("/a", "io.weight", "100"),
        ],
        100_000,
        4096,
        false,
    )
}

fn write_qos(s: &mut Sim, body: &str) {
    let (ioc, mut ctx) = s.parts();
    let r = ioc.write_file(&mut ctx, ROOT, "io.cost.qos", body);
    assert!(matches!(r, Some(Ok(()))), "{body}: {r:?}");
}

#[test]
fn vrate_survives_disable_idle_and_enable() {
    let mut s = climbing();
    s.closed(1, 16, 1000 * MS);
    s.start();
    s.run_until(1000 * MS);
    let warm = s.ioc.vrate();
    // 1 s of shortage with no missed target: vrate climbed well off 100 %
    assert!(warm > VTIME_PER_USEC * 2, "vrate {warm}");
    let (vmin, vmax, qos) = (s.ioc.vrate_min, s.ioc.vrate_max, s.ioc.qos);

    // `enable=0`: only `enabled` (and the queue flags) change; the refresh
    // keeps vrate because the autop index is the same
    write_qos(&mut s, "8:0 enable=0");
    assert!(!s.ioc.enabled);
    assert_eq!(s.ioc.vrate(), warm);
    assert_eq!(
        (s.ioc.vrate_min, s.ioc.vrate_max, s.ioc.qos),
        (vmin, vmax, qos)
    );
    assert!(s.ioc.user_qos_params, "enable= alone is not ctrl=auto");

    // idle: the period timer runs until every iocg is idle, then the ioc
    // goes IOC_IDLE, which zeroes busy_level and vtime_err, not vrate
    s.run_until(1300 * MS);
    assert_eq!(s.ioc.running, Running::Idle);
    assert_eq!(s.ioc.busy_level, 0);
    assert_eq!(s.ioc.vtime_err, 0);
    assert!(s.ioc.active.is_empty());
    let idle = s.ioc.vrate();
    assert!(idle > VTIME_PER_USEC * 2, "vrate {idle}");

    // disabled: a bio passes uncharged and activates nothing
    s.submit(1);
    assert!(s.ioc.active.is_empty());
    assert_eq!(s.ioc.running, Running::Idle);
    s.run_until(1400 * MS);

    write_qos(&mut s, "8:0 enable=1");
    assert!(s.ioc.enabled);
    assert_eq!(s.ioc.vrate(), idle);

    // the next load is charged at the vrate the first one left: in its
    // first 20 ms it completes more than the 1000 IOPS a cold ioc allows
    s.done.clear();
    s.win = (1400 * MS, 1420 * MS);
    s.closed(1, 16, 1420 * MS);
    s.start();
    s.run_until(1420 * MS);
    let warm_ios = s.count(1);

    let mut cold = climbing();
    cold.win = (0, 20 * MS);
    cold.closed(1, 16, 20 * MS);
    cold.start();
    cold.run_until(20 * MS);
    let cold_ios = cold.count(1);
    assert!(
        warm_ios > cold_ios * 2,
        "warm {warm_ios} vs cold {cold_ios} I/Os in 20 ms"
    );
}

#[test]
fn qos_write_resets_what_ioc_refresh_params_resets() {
    let mut s = climbing();
    s.closed(1, 16, 200 * MS);
    s.start();
    s.run_until(200 * MS);
    let warm = s.ioc.vrate();
    assert!(warm > VTIME_PER_USEC, "vrate {warm}");
    let busy = s.ioc.busy_level;
    s.ioc.autop_too_fast_at = 5;
    s.ioc.autop_too_slow_at = 7;

    // ctrl=auto: the QoS parameters go back to the autop set, the autop
    // timestamps are cleared; vrate and busy_level stay
    write_qos(&mut s, "8:0 ctrl=auto");
    assert!(!s.ioc.user_qos_params);
    assert_eq!(s.ioc.qos, AUTOP[s.ioc.autop_idx].qos);
    assert_eq!((s.ioc.autop_too_fast_at, s.ioc.autop_too_slow_at), (0, 0));
    assert_eq!(s.ioc.vrate(), warm);
    assert_eq!(s.ioc.busy_level, busy);
    // new bounds take effect at once in vrate_min/max, while vrate itself
    // is only walked back by later periods (ioc_adjust_base_vrate)
    write_qos(&mut s, "8:0 enable=1 min=50 max=120");
    assert_eq!(
        s.ioc.vrate_max,
        div_round_up(1_200_000 * VTIME_PER_USEC, MILLION)
    );
    assert_eq!(s.ioc.vrate(), warm);

    // only a change of autop index (the device's class) resets vrate
    s.ioc.autop_idx = AUTOP_INVALID;
    assert!(s.ioc.refresh_params(0, false));
    assert_eq!(s.ioc.vrate(), VTIME_PER_USEC);
    assert_eq!(s.ioc.vtime_rate, VTIME_PER_USEC);
}
