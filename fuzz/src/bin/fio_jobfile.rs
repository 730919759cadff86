//! Fuzz target: fio job files (INI sections, options, fixups).
fn main() {
    afl::fuzz!(|data: &[u8]| {
        let text = blklab_fuzz::text(data);
        let _ = blklab_fio::parse::parse_job_file(&text, "fuzz.fio");
    });
}
