//! The time series (`blklab run --timeseries`): observing a run does not
//! change it, and the iocost series of the seed-000 example carry the same
//! busy_level history as the trace, resets included.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use blklab_core::sim::trace::TraceSink;
use blklab_lab::scenario::Scenario;
use blklab_lab::{observe, output, runner, timeseries};

fn example(name: &str) -> Scenario {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    Scenario::load(&p).expect("example loads")
}

/// Trace lines into a buffer the test keeps a handle on.
struct Lines(Rc<RefCell<Vec<(String, String)>>>);
impl TraceSink for Lines {
    fn event(&mut self, _t: u64, name: &str, payload: &str) {
        if name == "blklab:iocost_period" {
            self.0.borrow_mut().push((name.into(), payload.into()));
        }
    }
}

#[test]
fn observing_does_not_change_the_run() {
    for ex in ["iocost-busy-level.toml", "throttle-dispatch-delay.toml"] {
        let sc = example(ex);
        let plain = runner::run(&sc, &sc.config, None).expect("runs");
        let opts = timeseries::Options::default();
        let (seen, series) = observe::timeseries(&sc, &sc.config, None, &opts).expect("runs");
        assert_eq!(
            output::normal(&sc, &plain),
            output::normal(&sc, &seen),
            "{ex}: fio's output changed under observation"
        );
        let series = series.expect("kept");
        let io = series.table("cgroup_io").expect("table");
        assert!(!io.rows.is_empty(), "{ex}: no cgroup_io rows");
    }
}

#[test]
fn busy_level_series_matches_the_trace_and_shows_the_resets() {
    let sc = example("iocost-busy-level.toml");
    let mut cfg = sc.config.clone();
    cfg.switches
        .set("iocost.busy_level_fix", "off")
        .expect("switch");
    let lines = Rc::new(RefCell::new(Vec::new()));
    let sink: Box<dyn TraceSink> = Box::new(Lines(lines.clone()));
    let (_, series) =
        observe::timeseries(&sc, &cfg, Some(sink), &timeseries::Options::default()).expect("runs");
    let from_trace: Vec<i64> = lines
        .borrow()
        .iter()
        .map(|(_, p)| {
            let f = p
                .split_whitespace()
                .find(|w| w.starts_with("busy="))
                .expect("busy=");
            f[5..].parse().expect("number")
        })
        .collect();
    let series = series.expect("kept");
    let t = series.table("iocost_period").expect("table");
    let col = t.col("busy_level").expect("column");
    let from_series: Vec<i64> = t.rows.iter().map(|r| r[col].as_f64() as i64).collect();
    assert_eq!(from_series, from_trace);
    // the pathology of the seed: without the fix, busy_level is reset to 0
    // in periods without completions and never climbs; 1345 periods, 524
    // resets from 1 at the time of writing
    let resets = from_series
        .windows(2)
        .filter(|w| w[0] > 0 && w[1] == 0)
        .count();
    assert!(resets >= 100, "expected busy_level resets, found {resets}");
    assert!(
        from_series.iter().all(|&b| b <= 1),
        "busy_level climbed past 1"
    );
}

#[test]
fn csv_tables_have_their_documented_columns() {
    let sc = example("iocost-busy-level.toml");
    let dir = std::env::temp_dir().join(format!("blklab-ts-{}", std::process::id()));
    let opts = timeseries::Options {
        csv_dir: Some(dir.clone()),
        keep: false,
        ..Default::default()
    };
    observe::timeseries(&sc, &sc.config, None, &opts).expect("runs");
    for t in timeseries::TABLES {
        let text = std::fs::read_to_string(dir.join(format!("{}.csv", t.name))).expect("file");
        let header = text.lines().next().expect("header");
        let want: Vec<&str> = t.columns.iter().map(|c| c.name).collect();
        assert_eq!(header, want.join(","), "{}", t.name);
        for (i, l) in text.lines().enumerate().skip(1) {
            assert_eq!(
                l.split(',').count(),
                want.len(),
                "{} line {}",
                t.name,
                i + 1
            );
        }
    }
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/report.md"))
            .expect("docs/report.md");
    for t in timeseries::TABLES {
        for c in t.columns {
            assert!(
                docs.contains(&format!("`{}`", c.name)),
                "docs/report.md does not document {}.{}",
                t.name,
                c.name
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The `iotrack` table and the iotrack tool read the same counters: with
/// the same interval, every row's I/O count is the tool's for that block,
/// and watching with both changes nothing in fio's output.
#[test]
fn iotrack_table_agrees_with_the_tool_and_combines_with_it() {
    use blklab_lab::iotrack_run::IotrackOpts;
    use blklab_lab::observe::Observers;
    let sc = example("iocost-busy-level.toml");
    let plain = runner::run(&sc, &sc.config, None).expect("runs");
    let opts = timeseries::Options {
        interval_ns: 1_000_000_000,
        ..Default::default()
    };
    let o = observe::run(
        &sc,
        &sc.config,
        None,
        &Observers {
            timeseries: Some(&opts),
            iotrack: Some(IotrackOpts {
                interval_ms: 1000,
                extended: false,
            }),
            keep_sim: true,
        },
    )
    .expect("runs");
    assert_eq!(
        output::normal(&sc, &plain),
        output::normal(&sc, &o.out),
        "fio's output changed under observation"
    );
    assert!(o.sim.is_some(), "the simulator is handed back");
    let tool = o.iotrack.expect("the tool watched").json();
    let intervals = tool["iotrack"]["intervals"].as_array().expect("intervals");
    let series = o.series.expect("kept");
    let t = series.table("iotrack").expect("table");
    let (ct, cc, cios) = (
        t.col("time_s").unwrap(),
        t.col("cgroup").unwrap(),
        t.col("ios").unwrap(),
    );
    // the run is 10 s long: ten whole intervals in both
    assert!(intervals.len() >= 10, "{} tool blocks", intervals.len());
    let mut compared = 0;
    for (k, block) in intervals.iter().enumerate().take(10) {
        for row in block["cgroups"].as_array().expect("rows") {
            let cg = row["cgroup"].as_str().expect("cgroup");
            let want = row["ios"]["total"].as_i64().expect("ios");
            let end_s = (k + 1) as f64;
            let got = t
                .rows
                .iter()
                .find(|r| (r[ct].as_f64() - end_s).abs() < 1e-9 && r[cc].as_str() == Some(cg))
                .unwrap_or_else(|| panic!("no iotrack row for {cg} at {end_s} s"));
            assert_eq!(got[cios].as_f64() as i64, want, "{cg} at {end_s} s");
            assert!(want > 0, "{cg} did I/O in interval {k}");
            compared += 1;
        }
    }
    // root, cgA and cgB in each of ten intervals
    assert_eq!(compared, 30);
}
