//! Fuzz target: the scenario parser and checker (`Scenario::parse`), then
//! the simulator's setup of a scenario that passed (`build_sim`, no run).
fn main() {
    afl::fuzz!(|data: &[u8]| {
        let text = blklab_fuzz::text(data);
        // a relative base directory that does not exist: job_file and replay
        // names resolve to nothing readable
        let path = std::path::Path::new("/nonexistent-blklab-fuzz/fuzz.toml");
        if let Ok(sc) = blklab_lab::scenario::Scenario::parse(&text, path) {
            let _ = blklab_lab::runner::build_sim(&sc.config, None);
        }
    });
}
