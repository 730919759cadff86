//! `blklab compare ... --report r.html` opened in headless Chromium (Debian's
//! `chromium`, installed by .ci/run): every chart is drawn (the page's own
//! check counts the figures whose SVG has a size and drawn data), the
//! expected titles are there, the console is silent, and a screenshot is
//! kept as an artifact at target/report-test/report.png.
//!
//! Without a chromium on the PATH the test says so and passes: the machines
//! that run CI install it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// Run the browser headless on `url` with extra arguments; (stdout, stderr).
fn browse(bin: &str, url: &str, extra: &[&str]) -> (String, String) {
    let home = std::env::temp_dir().join(format!("blklab-chromium-{}", std::process::id()));
    let out = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            // let the load handler run before the DOM is dumped
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", home.display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("running chromium");
    let _ = std::fs::remove_dir_all(&home);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Console messages of level error/warning as Chromium logs them.
fn console_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .collect()
}

#[test]
fn compare_report_renders_in_chromium() {
    let Some(bin) = chromium() else {
        eprintln!("report_browser: chromium is not installed; skipping (apt-get install chromium)");
        return;
    };
    let dir = root().join("target/report-test");
    std::fs::create_dir_all(&dir).unwrap();
    let html = dir.join("r.html");
    let out = Command::new(env!("CARGO_BIN_EXE_blklab"))
        .current_dir(root())
        .args([
            "compare",
            "examples/iocost-busy-level.toml",
            "--variant",
            "iocost.busy_level_fix=off,on",
            "--report",
        ])
        .arg(&html)
        .output()
        .expect("running blklab");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("src=\"http") && !page.contains("href=\"http"),
        "the page fetches something"
    );
    let figures = page.matches("<figure").count();
    assert!(figures >= 15, "only {figures} charts");

    // the detector of console errors sees one when there is one
    let probe = dir.join("console-probe.html");
    std::fs::write(
        &probe,
        "<html><body><script>console.error('probe-error')</script></body></html>",
    )
    .unwrap();
    let (_, err) = browse(bin, &format!("file://{}", probe.display()), &["--dump-dom"]);
    assert!(
        console_errors(&err)
            .iter()
            .any(|l| l.contains("probe-error")),
        "chromium's console log is not readable here: {err}"
    );

    let url = format!("file://{}", html.canonicalize().unwrap().display());
    let (dom, err) = browse(bin, &url, &["--dump-dom"]);
    let want = format!("data-charts=\"{figures}/{figures}\"");
    assert!(
        dom.contains(&want),
        "not every chart rendered (want {want}): {}",
        dom.split("data-charts")
            .nth(1)
            .map_or("no data-charts attribute", |s| &s[..20.min(s.len())])
    );
    for title in [
        "sda: vrate (iocost period)",
        "sda: busy_level",
        "periods around the first reset",
        "/cgA: IOPS (read + write)",
        "/cgB: completion latency P50 (dashed) and P99",
        "/cgB: completion latency distribution (CDF)",
        "hweight_inuse, stacked",
        "sda: utilisation",
        "sda /cgB: Q2C and D2C (blk-iotrack)",
        "sda /cgA: share of device time (%dtm)",
    ] {
        assert!(dom.contains(title), "no chart titled {title:?}");
    }
    let errors = console_errors(&err);
    assert!(errors.is_empty(), "console errors: {errors:#?}");

    let png = dir.join("report.png");
    let _ = std::fs::remove_file(&png);
    browse(
        bin,
        &url,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1360,7000",
        ],
    );
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert_eq!(&bytes[1..4], b"PNG");
    // a blank page of this size compresses to a few tens of kB; plots and
    // text make it several hundred (about 1 MB at the time of writing)
    assert!(
        bytes.len() > 300_000,
        "the screenshot looks blank ({} bytes)",
        bytes.len()
    );
}
