//! Fuzz target: fio command lines (shell-word splitting, then fio's
//! command-line parser).
fn main() {
    afl::fuzz!(|data: &[u8]| {
        let text = blklab_fuzz::text(data);
        if let Ok(args) = blklab_fio::parse::split_cmdline(&text) {
            let _ = blklab_fio::parse::parse_cmdline(&args);
        }
    });
}
