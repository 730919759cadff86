//! `--report` of a scenario with `[[phase]]` (examples/iocost-warm-start.toml):
//! the page has the phases' table, and every chart over the run's time marks
//! where the measured phase began; the latency CDF, whose x axis is not
//! time, has no mark. In a comparison each variant's mark carries its name.

mod common;

use common::{blklab, root, stderr};

/// Run blklab with `args` and `--report FILE`; the page.
fn page(args: &[&str], name: &str) -> String {
    let dir = root().join("target/report-phases-test");
    std::fs::create_dir_all(&dir).unwrap();
    let html = dir.join(name);
    let mut all = args.to_vec();
    all.extend(["--report", html.to_str().unwrap()]);
    let out = blklab(&all);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::read_to_string(&html).unwrap()
}

/// (chart title, how many times `label` is drawn as a text in its SVG).
fn marks(page: &str, label: &str) -> Vec<(String, usize)> {
    let text = format!("\n{label}\n</text>");
    page.split("<figure ")
        .skip(1)
        .map(|f| {
            let f = &f[..f.find("</figure>").unwrap()];
            let title = f
                .split("data-title=\"")
                .nth(1)
                .and_then(|s| s.split('"').next())
                .unwrap()
                .to_string();
            (title, f.matches(&text).count())
        })
        .collect()
}

#[test]
fn a_phased_run_report_marks_each_phase_start() {
    let p = page(
        &[
            "run",
            "examples/iocost-warm-start.toml",
            "--output-format",
            "summary",
        ],
        "run.html",
    );
    assert!(p.contains("<h2>Phases</h2>"), "no phases table");
    // the warm-up's 2 s, the 100 ms gap, the measured second
    assert!(
        p.contains("phase warmup: 0.000s to 2.000s"),
        "warm-up window"
    );
    assert!(
        p.contains("phase measure: 2.100s to 3.100s"),
        "measure window"
    );
    let m = marks(&p, "measure");
    assert!(m.len() >= 10, "only {} charts", m.len());
    for (title, n) in &m {
        let want = usize::from(!title.contains("(CDF)"));
        assert_eq!(*n, want, "chart {title:?}: {n} 'measure' marks");
    }
    // the first phase starts the run: no mark for it
    assert!(marks(&p, "warmup").iter().all(|(_, n)| *n == 0));
}

#[test]
fn a_phased_comparison_marks_each_variant() {
    let p = page(
        &[
            "compare",
            "examples/iocost-warm-start.toml",
            "--variant",
            "iocost.busy_level_fix=off,on",
        ],
        "compare.html",
    );
    assert!(p.contains("<h2>Phases</h2>"), "no phases table");
    assert!(p.contains("== iocost.busy_level_fix=on ==\nphase warmup"));
    for v in ["off", "on"] {
        let label = format!("measure (iocost.busy_level_fix={v})");
        let m = marks(&p, &label);
        assert!(m.iter().any(|(_, n)| *n == 1), "no chart marks {label:?}");
    }
}
