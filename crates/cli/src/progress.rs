//! Progress on stderr for runs and comparisons, only when stderr is a
//! terminal (pipes, files and CI logs stay clean). A run is one call into
//! the simulator, so it shows a spinner with the elapsed time; a comparison
//! counts its variants.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A spinner for one simulation ("simulating NAME").
pub fn spinner(what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.set_message(format!("simulating {what}"));
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

/// A bar over the variants of a comparison.
pub fn variants(n: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(n as u64);
    pb.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} variants {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}
