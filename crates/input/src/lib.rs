//! Reading what a user hands blklab (scenario files, fio job files,
//! recordings) without trusting it: a file must be a regular file no larger
//! than a stated cap, a line no longer than a stated cap, and any piece of
//! the input echoed in an error message is cut short and has its control
//! characters escaped. Every reader of user files goes through here, so the
//! limits (docs/scenario.md, "Limits") hold everywhere alike.

use std::fs::File;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

/// Largest scenario file (bytes).
pub const MAX_SCENARIO_BYTES: u64 = 4 << 20;
/// Largest fio job file (bytes).
pub const MAX_JOB_FILE_BYTES: u64 = 4 << 20;
/// Largest recording a replay job loads whole (bytes); `top --from` streams
/// a recording and has no size cap, only the line cap.
pub const MAX_RECORDING_BYTES: u64 = 1 << 30;
/// Largest simulator trace file `blklab run --sched-split` reads whole
/// (bytes).
pub const MAX_TRACE_BYTES: u64 = 1 << 30;
/// Longest line of a recording (bytes, newline included).
pub const MAX_RECORD_LINE_BYTES: usize = 4096;
/// How much of a bad input an error message shows (characters).
pub const EXCERPT_CHARS: usize = 80;

/// A user file that cannot be read, or is not what a file of its kind may be.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a regular file ({kind}); a {what} must be a regular file", path.display())]
    NotRegular {
        path: PathBuf,
        what: &'static str,
        kind: &'static str,
    },
    #[error("{}: {what} of more than {limit} bytes (the limit; see docs/scenario.md, Limits)", path.display())]
    TooLarge {
        path: PathBuf,
        what: &'static str,
        limit: u64,
    },
    #[error("{}: not UTF-8 text near byte {offset}; a {what} is text", path.display())]
    NotText {
        path: PathBuf,
        what: &'static str,
        offset: usize,
    },
}

fn kind_of(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Open `path` for reading if it is a regular file (after symbolic links);
/// `what` names the kind of file in errors ("scenario file", "job file").
pub fn open_regular(path: &Path, what: &'static str) -> Result<File, InputError> {
    let io = |source| InputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let f = File::open(path).map_err(io)?;
    let ft = f.metadata().map_err(io)?.file_type();
    if !ft.is_file() {
        return Err(InputError::NotRegular {
            path: path.to_path_buf(),
            what,
            kind: kind_of(&ft),
        });
    }
    Ok(f)
}

/// The whole text of a regular file of at most `max_bytes` bytes. The cap is
/// enforced while reading (a file growing under us cannot get past it).
pub fn read_text(path: &Path, what: &'static str, max_bytes: u64) -> Result<String, InputError> {
    let f = open_regular(path, what)?;
    let mut buf = Vec::new();
    f.take(max_bytes + 1)
        .read_to_end(&mut buf)
        .map_err(|source| InputError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if buf.len() as u64 > max_bytes {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            what,
            limit: max_bytes,
        });
    }
    String::from_utf8(buf).map_err(|e| InputError::NotText {
        path: path.to_path_buf(),
        what,
        offset: e.utf8_error().valid_up_to(),
    })
}

/// What [`read_line_capped`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line (with its newline, if any) is in the buffer.
    Read,
    /// End of input; the buffer is empty.
    Eof,
    /// The line is longer than the cap; the buffer holds its first bytes.
    TooLong,
}

/// `BufRead::read_line` that stops after `max_bytes` bytes: a line without
/// a newline in the first `max_bytes` is reported, not read on forever.
/// Bytes that are not UTF-8 are an `InvalidData` error, as for `read_line`.
pub fn read_line_capped<R: BufRead>(
    r: &mut R,
    buf: &mut String,
    max_bytes: usize,
) -> std::io::Result<Line> {
    buf.clear();
    let mut bytes = Vec::new();
    let n = r
        .by_ref()
        .take(max_bytes as u64)
        .read_until(b'\n', &mut bytes)?;
    let s = String::from_utf8(bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text near byte {} of the line",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    buf.push_str(&s);
    Ok(if n == 0 {
        Line::Eof
    } else if n == max_bytes && !buf.ends_with('\n') {
        Line::TooLong
    } else {
        Line::Read
    })
}

/// A piece of user input fit for an error message: at most `EXCERPT_CHARS`
/// characters (then "…" and how many more there were), control characters
/// and other invisible ones escaped as `escape_debug` does.
pub fn excerpt(s: &str) -> String {
    excerpt_n(s, EXCERPT_CHARS)
}

/// [`excerpt`] with a chosen length.
pub fn excerpt_n(s: &str, max_chars: usize) -> String {
    capped(s, max_chars, |c| c != '"' && c != '\'')
}

/// At most `max_chars` characters of `s` (then how many more there were),
/// the characters `escape` picks written as `escape_debug` writes them.
fn capped(s: &str, max_chars: usize, escape: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(s.len().min(max_chars + 40));
    for (n, c) in s.chars().enumerate() {
        if n == max_chars {
            let rest = s.chars().count() - n;
            out.push_str(&format!("… ({rest} more characters)"));
            break;
        }
        if escape(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// Longest error message (characters) a parser's error is cut to.
pub const MESSAGE_CHARS: usize = 1000;

/// A whole error message made safe to print: control characters escaped,
/// at most `MESSAGE_CHARS` characters. For messages that may quote user
/// input without an [`excerpt`] of it (a terminal must not get escape
/// sequences, a log must not get a 50 MB line).
pub fn message(s: &str) -> String {
    capped(s, MESSAGE_CHARS, char::is_control)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_directories_are_refused() {
        let e = read_text(Path::new("/dev/zero"), "job file", 100).unwrap_err();
        assert!(matches!(e, InputError::NotRegular { .. }), "{e}");
        assert!(e.to_string().contains("character device"), "{e}");
        let e = read_text(Path::new("/"), "job file", 100).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
    }

    #[test]
    fn size_cap_is_exact() {
        let d = std::env::temp_dir().join(format!("blklab-input-{}", std::process::id()));
        std::fs::write(&d, "0123456789").unwrap();
        assert_eq!(read_text(&d, "job file", 10).unwrap(), "0123456789");
        let e = read_text(&d, "job file", 9).unwrap_err();
        assert!(e.to_string().contains("more than 9 bytes"), "{e}");
        std::fs::write(&d, [b'a', 0xff, b'b']).unwrap();
        let e = read_text(&d, "job file", 9).unwrap_err();
        assert!(e.to_string().contains("near byte 1"), "{e}");
        let _ = std::fs::remove_file(&d);
    }

    #[test]
    fn capped_lines() {
        let mut r = std::io::Cursor::new(b"ab\ncdefgh\nij".to_vec());
        let mut b = String::new();
        assert_eq!(read_line_capped(&mut r, &mut b, 4).unwrap(), Line::Read);
        assert_eq!(b, "ab\n");
        assert_eq!(read_line_capped(&mut r, &mut b, 4).unwrap(), Line::TooLong);
        assert_eq!(b, "cdef");
        let mut r = std::io::Cursor::new(b"abc\n".to_vec());
        assert_eq!(read_line_capped(&mut r, &mut b, 4).unwrap(), Line::Read);
        assert_eq!(read_line_capped(&mut r, &mut b, 4).unwrap(), Line::Eof);
        let mut r = std::io::Cursor::new(b"ij".to_vec());
        assert_eq!(read_line_capped(&mut r, &mut b, 4).unwrap(), Line::Read);
        assert_eq!(b, "ij");
    }

    #[test]
    fn messages_are_capped_and_escaped() {
        assert_eq!(message("a 'b' \"c\""), "a 'b' \"c\"");
        assert_eq!(message("x\u{7}y"), "x\\u{7}y");
        let m = message(&"é".repeat(5000));
        assert!(m.ends_with("… (4000 more characters)"), "{m}");
    }

    #[test]
    fn excerpts_are_short_and_escaped() {
        assert_eq!(excerpt("riops=1"), "riops=1");
        assert_eq!(excerpt("a\u{1b}[2Jb\n"), "a\\u{1b}[2Jb\\n");
        let long = "x".repeat(1000);
        let e = excerpt(&long);
        assert!(e.starts_with(&"x".repeat(EXCERPT_CHARS)));
        assert!(e.ends_with("… (920 more characters)"), "{e}");
    }
}
