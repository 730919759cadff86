//! Shared helpers of the fuzz targets: each target is a small binary in
//! `src/bin/` that hands AFL++'s input to one parser. A target "crashes"
//! only by panicking (or hanging): every parser must turn bad input into an
//! error value.

/// The input as text: parsers of text files read UTF-8 (files that are not
/// UTF-8 are refused before any parser sees them), so other bytes are lossily
/// replaced rather than skipped: the fuzzer's mutations still reach the parser.
pub fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}
