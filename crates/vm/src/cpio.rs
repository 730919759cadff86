//! A writer (and a bounded reader, for checking) of the "newc" cpio format,
//! the one the kernel unpacks as initramfs (mirrors the format described in
//! the kernel's Documentation/driver-api/early-userspace/buffer-format.rst and
//! `usr/gen_init_cpio.c`).
//!
//! Written by hand because the format is tiny (a 110-byte ASCII header, the
//! name, the data, each padded to 4 bytes) and the kernel needs only four
//! entry kinds: directories, regular files, symlinks and character devices.
//! Every entry gets a fresh inode number and mtime 0, so the archive is a
//! function of its inputs.

use std::collections::BTreeSet;
use std::io::{self, Read, Write};

/// The newc magic (no checksum).
const MAGIC: &[u8; 6] = b"070701";
/// The name that ends an archive.
const TRAILER: &str = "TRAILER!!!";
/// Header length in bytes: magic + 13 fields of 8 hex digits.
const HEADER_BYTES: usize = 6 + 13 * 8;

const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFLNK: u32 = 0o120000;
const S_IFCHR: u32 = 0o020000;

/// What an entry is (for the reader).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Dir,
    File(Vec<u8>),
    Symlink(String),
    CharDev { major: u32, minor: u32 },
}

/// One entry read back from an archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Path without a leading '/'.
    pub path: String,
    /// Permission bits (the file-type bits are in `kind`).
    pub perm: u32,
    pub kind: Kind,
}

/// Writes a newc archive entry by entry. Parent directories are created on
/// demand (each once), so callers may add files in any order.
pub struct Writer<W: Write> {
    out: W,
    written_bytes: u64,
    next_ino: u32,
    dirs: BTreeSet<String>,
    paths: BTreeSet<String>,
}

fn pad4(n: u64) -> usize {
    ((4 - (n % 4)) % 4) as usize
}

/// Normalise an archive path: no leading '/', no empty, '.' or '..'
/// components, no NUL.
pub fn normalise(path: &str) -> io::Result<String> {
    let bad = |why: &str| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cpio path '{path}': {why}"),
        )
    };
    if path.contains('\0') {
        return Err(bad("contains NUL"));
    }
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        return Err(bad("empty"));
    }
    if parts.iter().any(|p| *p == "." || *p == "..") {
        return Err(bad("'.' or '..' component"));
    }
    Ok(parts.join("/"))
}

impl<W: Write> Writer<W> {
    pub fn new(out: W) -> Self {
        Writer {
            out,
            written_bytes: 0,
            next_ino: 1,
            dirs: BTreeSet::new(),
            paths: BTreeSet::new(),
        }
    }

    /// Bytes written so far.
    pub fn written_bytes(&self) -> u64 {
        self.written_bytes
    }

    /// Whether `path` was already added (as anything).
    pub fn contains(&self, path: &str) -> bool {
        normalise(path).is_ok_and(|p| self.paths.contains(&p) || self.dirs.contains(&p))
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.written_bytes += bytes.len() as u64;
        Ok(())
    }

    fn header(&mut self, name: &str, mode: u32, size: u64, rdev: (u32, u32)) -> io::Result<()> {
        let size32 = u32::try_from(size).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cpio entry '{name}' is {size} bytes; newc holds at most 4 GiB - 1"),
            )
        })?;
        let namesize = name.len() as u64 + 1;
        let ino = self.next_ino;
        self.next_ino += 1;
        let nlink = if mode & S_IFDIR == S_IFDIR { 2 } else { 1 };
        let fields = [
            ino,
            mode,
            0, // uid
            0, // gid
            nlink,
            0, // mtime
            size32,
            0, // devmajor
            0, // devminor
            rdev.0,
            rdev.1,
            namesize as u32,
            0, // check
        ];
        let mut h = Vec::with_capacity(HEADER_BYTES + name.len() + 4);
        h.extend_from_slice(MAGIC);
        for f in fields {
            h.extend_from_slice(format!("{f:08X}").as_bytes());
        }
        h.extend_from_slice(name.as_bytes());
        h.push(0);
        h.resize(h.len() + pad4((HEADER_BYTES as u64) + namesize), 0);
        self.put(&h)
    }

    fn claim(&mut self, path: &str) -> io::Result<String> {
        let p = normalise(path)?;
        if self.paths.contains(&p) || self.dirs.contains(&p) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("cpio path '{p}' added twice"),
            ));
        }
        if let Some((parent, _)) = p.rsplit_once('/') {
            self.dir_all(parent)?;
        }
        Ok(p)
    }

    /// Add `path` and all its missing ancestors as directories (mode 0755).
    pub fn dir_all(&mut self, path: &str) -> io::Result<()> {
        let p = normalise(path)?;
        let mut cur = String::new();
        for part in p.split('/') {
            if !cur.is_empty() {
                cur.push('/');
            }
            cur.push_str(part);
            if self.dirs.contains(&cur) {
                continue;
            }
            if self.paths.contains(&cur) {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("cpio path '{cur}' is not a directory"),
                ));
            }
            self.header(&cur, S_IFDIR | 0o755, 0, (0, 0))?;
            self.dirs.insert(cur.clone());
        }
        Ok(())
    }

    /// Add a regular file with `size_bytes` bytes read from `data`.
    pub fn file_from(
        &mut self,
        path: &str,
        perm: u32,
        size_bytes: u64,
        data: &mut dyn Read,
    ) -> io::Result<()> {
        let p = self.claim(path)?;
        self.header(&p, S_IFREG | (perm & 0o7777), size_bytes, (0, 0))?;
        let copied = io::copy(&mut data.take(size_bytes), &mut self.out)?;
        self.written_bytes += copied;
        if copied != size_bytes {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("cpio file '{p}': expected {size_bytes} bytes, got {copied}"),
            ));
        }
        self.put(&[0u8; 3][..pad4(size_bytes)])?;
        self.paths.insert(p);
        Ok(())
    }

    /// Add a regular file with these contents.
    pub fn file(&mut self, path: &str, perm: u32, data: &[u8]) -> io::Result<()> {
        let mut r = data;
        self.file_from(path, perm, data.len() as u64, &mut r)
    }

    /// Add a symbolic link `path` -> `target`.
    pub fn symlink(&mut self, path: &str, target: &str) -> io::Result<()> {
        let p = self.claim(path)?;
        self.header(&p, S_IFLNK | 0o777, target.len() as u64, (0, 0))?;
        self.put(target.as_bytes())?;
        self.put(&[0u8; 3][..pad4(target.len() as u64)])?;
        self.paths.insert(p);
        Ok(())
    }

    /// Add a character device node (the kernel creates it while unpacking,
    /// so the host needs no privileges for it).
    pub fn char_dev(&mut self, path: &str, perm: u32, major: u32, minor: u32) -> io::Result<()> {
        let p = self.claim(path)?;
        self.header(&p, S_IFCHR | (perm & 0o7777), 0, (major, minor))?;
        self.paths.insert(p);
        Ok(())
    }

    /// Write the trailer and return the sink.
    pub fn finish(mut self) -> io::Result<W> {
        self.header(TRAILER, 0, 0, (0, 0))?;
        self.out.flush()?;
        Ok(self.out)
    }
}

fn hex_field(h: &[u8], i: usize) -> io::Result<u32> {
    let s = &h[6 + i * 8..6 + (i + 1) * 8];
    let text = std::str::from_utf8(s).map_err(|_| invalid("header field is not ASCII"))?;
    u32::from_str_radix(text, 16).map_err(|_| invalid("header field is not hex"))
}

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("cpio: {msg}"))
}

/// Read every entry of a newc archive held in memory, up to the trailer.
/// Bounded by the input: no field can make it read past `bytes`.
pub fn read_all(bytes: &[u8]) -> io::Result<Vec<Entry>> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    loop {
        let h = bytes
            .get(pos..pos + HEADER_BYTES)
            .ok_or_else(|| invalid("truncated header"))?;
        if &h[..6] != MAGIC {
            return Err(invalid("bad magic"));
        }
        let mode = hex_field(h, 1)?;
        let size = hex_field(h, 6)? as usize;
        let (rmaj, rmin) = (hex_field(h, 9)?, hex_field(h, 10)?);
        let namesize = hex_field(h, 11)? as usize;
        if namesize == 0 {
            return Err(invalid("empty name"));
        }
        let name_start = pos + HEADER_BYTES;
        let name = bytes
            .get(name_start..name_start + namesize - 1)
            .ok_or_else(|| invalid("truncated name"))?;
        let name = String::from_utf8(name.to_vec()).map_err(|_| invalid("name not UTF-8"))?;
        let data_start = name_start + namesize + pad4((HEADER_BYTES + namesize) as u64);
        let data = bytes
            .get(data_start..data_start + size)
            .ok_or_else(|| invalid("truncated data"))?;
        pos = data_start + size + pad4(size as u64);
        if name == TRAILER {
            return Ok(out);
        }
        let kind = match mode & 0o170000 {
            S_IFDIR => Kind::Dir,
            S_IFREG => Kind::File(data.to_vec()),
            S_IFLNK => Kind::Symlink(
                String::from_utf8(data.to_vec()).map_err(|_| invalid("link not UTF-8"))?,
            ),
            S_IFCHR => Kind::CharDev {
                major: rmaj,
                minor: rmin,
            },
            other => return Err(invalid(&format!("unsupported mode {other:o}"))),
        };
        out.push(Entry {
            path: name,
            perm: mode & 0o7777,
            kind,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut w = Writer::new(Vec::new());
        w.file("/init", 0o755, b"#!/bin/sh\necho hi\n").unwrap();
        w.file("usr/lib/x/libz.so.1", 0o644, &[0u8, 1, 2, 255, 10, 13])
            .unwrap();
        w.symlink("bin/sh", "busybox").unwrap();
        w.char_dev("dev/console", 0o600, 5, 1).unwrap();
        w.file("empty", 0o644, b"").unwrap();
        w.finish().unwrap()
    }

    #[test]
    fn round_trip_keeps_every_entry_and_creates_parents_once() {
        let bytes = sample();
        assert_eq!(bytes.len() % 4, 0, "newc entries are 4-byte aligned");
        let e = read_all(&bytes).unwrap();
        let paths: Vec<&str> = e.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "init",
                "usr",
                "usr/lib",
                "usr/lib/x",
                "usr/lib/x/libz.so.1",
                "bin",
                "bin/sh",
                "dev",
                "dev/console",
                "empty"
            ]
        );
        assert_eq!(e[0].kind, Kind::File(b"#!/bin/sh\necho hi\n".to_vec()));
        assert_eq!(e[0].perm, 0o755);
        assert_eq!(e[4].kind, Kind::File(vec![0, 1, 2, 255, 10, 13]));
        assert_eq!(e[6].kind, Kind::Symlink("busybox".into()));
        assert_eq!(e[8].kind, Kind::CharDev { major: 5, minor: 1 });
        assert_eq!(e[9].kind, Kind::File(Vec::new()));
    }

    #[test]
    fn rejects_bad_paths_and_duplicates() {
        let mut w = Writer::new(Vec::new());
        assert!(w.file("../etc/passwd", 0o644, b"").is_err());
        assert!(w.file("", 0o644, b"").is_err());
        assert!(w.file("a/./b", 0o644, b"").is_err());
        w.file("a/b", 0o644, b"x").unwrap();
        assert!(w.file("/a/b", 0o644, b"y").is_err());
        // a file cannot become a directory
        assert!(w.file("a/b/c", 0o644, b"").is_err());
        assert!(w.contains("a") && w.contains("/a/b") && !w.contains("a/c"));
    }

    #[test]
    fn short_reader_is_an_error_not_a_corrupt_archive() {
        let mut w = Writer::new(Vec::new());
        let mut r: &[u8] = b"abc";
        let e = w.file_from("f", 0o644, 10, &mut r).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn truncated_archive_is_reported() {
        let bytes = sample();
        for cut in [0, 50, 120, bytes.len() - 4] {
            assert!(read_all(&bytes[..cut]).is_err(), "cut at {cut}");
        }
    }

    /// Cross-check with GNU cpio when it is installed (it is in CI).
    #[test]
    fn gnu_cpio_lists_the_archive() {
        let Ok(mut child) = std::process::Command::new("cpio")
            .args(["-i", "-t", "--quiet"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
        else {
            eprintln!("SKIP: cpio is not installed (apt-get install -y cpio)");
            return;
        };
        let bytes = sample();
        let mut stdin = child.stdin.take().unwrap();
        let feeder = std::thread::spawn(move || stdin.write_all(&bytes));
        let out = child.wait_with_output().unwrap();
        feeder.join().unwrap().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let listed = String::from_utf8_lossy(&out.stdout);
        let listed: Vec<&str> = listed.lines().collect();
        assert!(listed.contains(&"usr/lib/x/libz.so.1"), "{listed:?}");
        assert!(listed.contains(&"dev/console"), "{listed:?}");
        assert_eq!(listed.len(), 10, "{listed:?}");
    }
}
