//! Run phases (`[[phase]]`, crate::phases): back-to-back fio runs on one
//! simulated machine. The timing checks are on simulated time, exact.

use std::path::Path;

use blklab_core::block::iocost::VTIME_PER_USEC;
use blklab_lab::runner::{self, Outcome};
use blklab_lab::scenario::Scenario;
use blklab_lab::{output, phase_report};

const MS: u64 = 1_000_000;

fn parse(text: &str) -> Result<Scenario, String> {
    Scenario::parse(text, Path::new("ph.toml")).map_err(|e| e.to_string())
}

fn run(text: &str) -> (Scenario, Outcome) {
    let sc = parse(text).unwrap_or_else(|e| panic!("{e}"));
    let out = runner::run(&sc, &sc.config, None).expect("runs");
    (sc, out)
}

/// A null_blk device (100 µs per I/O, 64 deep) and one cgroup.
const HEAD: &str = r#"
[[device]]
name = "nullb0"
devno = "252:0"
[device.model]
kind = "nullb"
completion_nsec = 100000
hw_queue_depth = 64
[cgroup."/a"]
"#;

fn job(phase: &str, name: &str, extra: &str) -> String {
    format!(
        "[[job]]\nphase = \"{phase}\"\ncgroup = \"/a\"\ncmdline = \"--name={name} --filename=/dev/nullb0 --direct=1 --rw=randread --ioengine=libaio --bs=4k --iodepth=4 --runtime=1 --time_based {extra}\"\n"
    )
}

fn two_phases(gap: &str, extra_b: &str) -> String {
    format!(
        "{HEAD}\n[[phase]]\nname = \"a\"\n[[phase]]\nname = \"b\"\ngap = \"{gap}\"\n{}{}",
        job("a", "ja", ""),
        job("b", "jb", extra_b)
    )
}

#[test]
fn a_phase_starts_when_the_previous_one_ended_plus_its_gap() {
    let (sc, out) = run(&two_phases("250ms", "--startdelay=50ms"));
    assert_eq!(sc.phases.len(), 2);
    let [a, b] = &out.phases[..] else {
        panic!("{:?}", out.phases)
    };
    let a_end = a.end.as_ref().expect("a ended").t_ns;
    let b_end = b.end.as_ref().expect("b ended").t_ns;
    // phase a: its job ran its 1 s, then drained its last I/Os (< 1 ms)
    assert_eq!(a.start.t_ns, 0);
    assert!((1000 * MS..1001 * MS).contains(&a_end), "{a_end}");
    assert_eq!(out.result.jobs[0].end_ns, a_end);
    // phase b starts exactly the gap after, its job 50 ms later (startdelay
    // counts from the phase's start) and runs its 1 s
    assert_eq!(b.start.t_ns, a_end + 250 * MS);
    let jb_end = out.result.jobs[1].end_ns;
    assert!(
        (b.start.t_ns + 1050 * MS..b.start.t_ns + 1051 * MS).contains(&jb_end),
        "{jb_end}"
    );
    assert_eq!(b_end, jb_end);
    assert_eq!(out.result.end_time, b_end);
    // fio's own runtime counts from the job's start, not the machine's:
    // the same for both (1 s and the drain, rounded up to the ms)
    assert_eq!(
        out.result.jobs[1].stats.job_runtime_ms,
        out.result.jobs[0].stats.job_runtime_ms
    );
    assert!((1000..=1001).contains(&out.result.jobs[1].stats.job_runtime_ms));
}

#[test]
fn each_phase_reports_its_own_disk_figures_and_fio_output() {
    let (sc, out) = run(&two_phases("100ms", "--iodepth=1"));
    let ios = |j: usize| out.result.jobs[j].stats.dirs[0].clat.stat.samples;
    let (da, _) = phase_report::disk_delta(&out, 0, 0).unwrap();
    let (db, msec_b) = phase_report::disk_delta(&out, 1, 0).unwrap();
    // direct 4k random reads, no merges: one request per fio I/O
    assert_eq!(da[0], ios(0));
    assert_eq!(db[0], ios(1));
    assert_eq!(da[0] + db[0], out.result.devices[0].stat[0]);
    // QD4 vs QD1 at 100 µs: 4x the reads in phase a
    assert!(da[0] > 3 * db[0], "{da:?} {db:?}");
    assert!((1000..=1001).contains(&msec_b), "{msec_b}");
    // one fio invocation per phase, each with its own disk_util
    let text = output::normal(&sc, &out);
    assert!(text.starts_with("=== phase a ===\n"), "{text}");
    let b_at = text.find("=== phase b ===").expect("phase b block");
    assert!(
        text[..b_at].contains(&format!("nullb0: ios={}/0,", da[0])),
        "{text}"
    );
    assert!(
        text[b_at..].contains(&format!("nullb0: ios={}/0,", db[0])),
        "{text}"
    );
    let labels: Vec<&str> = out.groups.iter().map(|g| g.label.as_str()).collect();
    assert_eq!(labels, ["a/ja", "b/jb"]);
    let json = output::json_all(&sc, &out);
    assert_eq!(json.matches("\"fio version\"").count(), 2);
}

/// iocost with a cost model 10x below the device: vrate climbs while the
/// cgroup is short of budget (docs/fidelity/iocost.md, "State across runs").
const IOCOST: &str = r#"
[cgroup."/"]
"io.cost.model" = "252:0 ctrl=user model=linear rbps=1000000000 rseqiops=2000 rrandiops=2000 wbps=1000000000 wseqiops=2000 wrandiops=2000"
"io.cost.qos" = "252:0 enable=1 ctrl=user rpct=95 rlat=5000 wpct=95 wlat=5000 min=50 max=1000"
"#;

#[test]
fn vrate_carries_from_one_phase_into_the_next() {
    let text = format!("{}{IOCOST}", two_phases("0s", ""));
    let (_, out) = run(&text);
    let d = 0;
    let a_end = out.phases[0].end.as_ref().unwrap().vrate[d].unwrap();
    let b_start = out.phases[1].start.vrate[d].unwrap();
    assert_eq!(out.phases[0].start.vrate[d], Some(VTIME_PER_USEC));
    assert!(a_end > 2 * VTIME_PER_USEC, "vrate {a_end}");
    assert_eq!(b_start, a_end);

    // the same phase b on a cold machine (its own scenario) starts at 100 %
    // and does fewer I/Os while vrate climbs
    let cold_text = format!(
        "{HEAD}{IOCOST}\n[[phase]]\nname = \"b\"\n{}",
        job("b", "jb", "")
    );
    let (_, cold) = run(&cold_text);
    assert_eq!(cold.phases[0].start.vrate[d], Some(VTIME_PER_USEC));
    let warm_ios = out.result.jobs[1].stats.dirs[0].clat.stat.samples;
    let cold_ios = cold.result.jobs[0].stats.dirs[0].clat.stat.samples;
    assert!(
        warm_ios > cold_ios + cold_ios / 10,
        "warm {warm_ios} cold {cold_ios}"
    );
}

#[test]
fn a_write_counts_from_its_phase_start() {
    // io.max on /a written 0.5 s into phase b: b's job is capped from then on
    let text = format!(
        "{}\n[[write]]\nphase = \"b\"\nat = \"500ms\"\ncgroup = \"/a\"\nfile = \"io.max\"\nvalue = \"252:0 riops=1000\"\n",
        two_phases("300ms", "")
    );
    let (sc, out) = run(&text);
    assert!(sc.config.writes.is_empty());
    assert_eq!(sc.phases[1].spec.writes.len(), 1);
    assert!(runner::unapplied_phase_writes(&sc, &out).is_empty());
    let (da, _) = phase_report::disk_delta(&out, 0, 0).unwrap();
    let (db, _) = phase_report::disk_delta(&out, 1, 0).unwrap();
    // a: QD4 at 100 µs, ~40k reads; b: 0.5 s of that, then 0.5 s at 1000/s
    assert!(da[0] > 39_000, "{da:?}");
    let b_free = da[0] / 2;
    assert!(
        db[0] > b_free && db[0] < b_free + 600,
        "phase b reads {} (a {})",
        db[0],
        da[0]
    );
    // io.stat at the end shows the limit came from the write
    assert!(out.result.end_time > out.phases[1].start.t_ns + 1000 * MS);
}

#[test]
fn same_scenario_same_output() {
    let text = format!("{}{IOCOST}", two_phases("20ms", ""));
    let (sc1, o1) = run(&text);
    let (sc2, o2) = run(&text);
    assert_eq!(output::normal(&sc1, &o1), output::normal(&sc2, &o2));
    assert_eq!(output::json_all(&sc1, &o1), output::json_all(&sc2, &o2));
}

fn error_of(text: &str) -> String {
    match parse(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

#[test]
fn bad_phases_are_located_errors() {
    // a job names an undeclared phase
    let e = error_of(&format!(
        "{HEAD}\n[[phase]]\nname = \"a\"\n{}{}",
        job("a", "ja", ""),
        job("warm", "jw", "")
    ));
    assert!(
        e.contains("ph.toml:18:9: [[job]] #2: phase = \"warm\": no such phase (declared: a)"),
        "{e}"
    );
    // the same phase twice; a phase with no job (both at the second name)
    let second = |name: &str| {
        error_of(&format!(
            "{HEAD}\n[[phase]]\nname = \"a\"\n[[phase]]\nname = \"{name}\"\n{}",
            job("a", "ja", "")
        ))
    };
    let e = second("a");
    assert!(
        e.contains("ph.toml:14:8: phase 'a' is declared twice"),
        "{e}"
    );
    let e = second("b");
    assert!(e.contains("ph.toml:14:8: phase 'b' has no [[job]]"), "{e}");
    // a job without a phase beside phases
    let e = error_of(&format!(
        "{HEAD}\n[[phase]]\nname = \"a\"\n{}[[job]]\ncmdline = \"--name=x --filename=/dev/nullb0 --rw=read --size=1m\"\n",
        job("a", "ja", "")
    ));
    assert!(e.contains("ph.toml: [[job]] #2: no phase"), "{e}");
    // a write relative to a missing phase, and one to a phase in a scenario without any
    let w = |p: &str| {
        format!("[[write]]\nphase = \"{p}\"\nat = \"0s\"\ncgroup = \"/a\"\nfile = \"io.max\"\nvalue = \"252:0 riops=100\"\n")
    };
    let e = error_of(&format!("{}{}", two_phases("0s", ""), w("c")));
    assert!(
        e.contains("[[write]]: phase = \"c\": no such phase (declared: a, b)"),
        "{e}"
    );
    let plain = format!(
        "{HEAD}[[job]]\ncgroup = \"/a\"\ncmdline = \"--name=x --filename=/dev/nullb0 --rw=read --size=1m\"\n{}",
        w("a")
    );
    let e = error_of(&plain);
    assert!(e.contains("ph.toml:14:9: [[write]]: phase = \"a\": no such phase (the scenario declares no [[phase]])"), "{e}");
    // a write past its phase's end (phase b's job runs 1 s)
    let e = error_of(&format!(
        "{}{}",
        two_phases("0s", ""),
        w("b").replace("at = \"0s\"", "at = \"2s\"")
    ));
    assert!(
        e.contains("ph.toml:26:6: write.at = 2s: the run ends by 1.000s"),
        "{e}"
    );
    assert!(e.contains("(phase 'b': from the phase's start)"), "{e}");
    // a gap on the first phase, a bad gap
    let e = error_of(&two_phases("0s", "").replacen(
        "name = \"a\"\n",
        "name = \"a\"\ngap = \"1s\"\n",
        1,
    ));
    assert!(
        e.contains("ph.toml:13:7: phase.gap on the first phase"),
        "{e}"
    );
    let e = error_of(&two_phases("soon", ""));
    assert!(e.contains("ph.toml:15:7: phase.gap:"), "{e}");
}
