//! Fuzz target: the `blklab record` file reader, as `top --from` and a
//! replay job read it.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        let path = std::path::Path::new("fuzz.rec");
        let r = std::io::Cursor::new(data);
        if let Ok(rd) = blklab_host::record::RecordReader::new(r, path) {
            let _ = blklab_host::record::read_recording_from(rd);
        }
    });
}
