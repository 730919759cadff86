//! Recording file: a versioned line format holding the trace events needed
//! for accounting (Q, X, D, C, R), the device and cgroup tables, the
//! /sys/block/DEV/stat samples taken at each tick, and every loss notice.
//!
//! ```text
//! blklab-host-record 1
//! start <mono_ns> <unix_s>          # clock anchor (trace_clock=mono)
//! dev <idx> <maj>:<min> <name>
//! cg <idx> <cgroup id or -> <path>  # defined before first use
//! <Q|X|D|C|R> <t_ns> <dev_idx> <R|W|O> <sector> <nsectors> <aux> <cg_idx|->
//! s <t_ns> <dev_idx> <11 fields of /sys/block/DEV/stat>
//! lost <t_ns> <events>              # trace_pipe "[LOST n EVENTS]"
//! ring <t_ns> <overrun> <dropped>   # per_cpu/*/stats deltas since start
//! end <events>
//! ```
//! Lines starting with `#` are comments. A file cut short (no `end`) is
//! still readable; the reader reports it in `Recording::truncated`.

use crate::account::CgroupNames;
use crate::error::{HostError, Result};
use crate::events::{dev_major, dev_minor, mkdev, Action, CgRef, Event, Ns, OpClass};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

pub const MAGIC: &str = "blklab-host-record";
pub const VERSION: u32 = 1;

pub struct RecordWriter<W: Write> {
    w: W,
    devs: BTreeMap<u32, u32>,
    cgs: BTreeMap<CgRef, u32>,
    pub events: u64,
}

impl<W: Write> RecordWriter<W> {
    pub fn new(mut w: W, start_mono_ns: Ns, start_unix_s: u64) -> std::io::Result<Self> {
        writeln!(w, "{MAGIC} {VERSION}")?;
        writeln!(w, "start {start_mono_ns} {start_unix_s}")?;
        Ok(RecordWriter {
            w,
            devs: BTreeMap::new(),
            cgs: BTreeMap::new(),
            events: 0,
        })
    }

    pub fn device(&mut self, dev: u32, name: &str) -> std::io::Result<u32> {
        if let Some(i) = self.devs.get(&dev) {
            return Ok(*i);
        }
        let i = self.devs.len() as u32;
        self.devs.insert(dev, i);
        writeln!(
            self.w,
            "dev {i} {}:{} {name}",
            dev_major(dev),
            dev_minor(dev)
        )?;
        Ok(i)
    }

    /// Write one event if it matters for accounting (others are skipped).
    pub fn event(&mut self, ev: &Event, names: &mut dyn CgroupNames) -> std::io::Result<()> {
        if !matches!(
            ev.action,
            Action::Queue | Action::Split | Action::Issue | Action::Complete | Action::Requeue
        ) {
            return Ok(());
        }
        let di = match self.devs.get(&ev.dev) {
            Some(i) => *i,
            None => {
                let name = crate::tracefs::dev_name(ev.dev);
                self.device(ev.dev, &name)?
            }
        };
        let cg = if ev.action == Action::Queue {
            let ci = match self.cgs.get(&ev.cg) {
                Some(i) => *i,
                None => {
                    let i = self.cgs.len() as u32;
                    let path = match ev.cg {
                        CgRef::None => "/".to_string(),
                        CgRef::Id(id) => names
                            .name_of(ev.cg)
                            .unwrap_or_else(|| format!("/cgid-{id}")),
                        CgRef::Path(p) => names
                            .name_of(ev.cg)
                            .unwrap_or_else(|| format!("/cgpath-{p}")),
                    };
                    let id = match ev.cg {
                        CgRef::Id(id) => id.to_string(),
                        _ => "-".into(),
                    };
                    writeln!(self.w, "cg {i} {id} {path}")?;
                    self.cgs.insert(ev.cg, i);
                    i
                }
            };
            ci.to_string()
        } else {
            // only Q's cgroup is used by the accounting
            "-".to_string()
        };
        self.events += 1;
        writeln!(
            self.w,
            "{} {} {di} {} {} {} {} {cg}",
            ev.action.letter(),
            ev.time_ns,
            ev.op.letter(),
            ev.sector,
            ev.nsectors,
            ev.aux
        )
    }

    pub fn stat(&mut self, t: Ns, dev: u32, name: &str, f: &[u64; 11]) -> std::io::Result<()> {
        let di = self.device(dev, name)?;
        write!(self.w, "s {t} {di}")?;
        for v in f {
            write!(self.w, " {v}")?;
        }
        writeln!(self.w)
    }

    pub fn lost(&mut self, t: Ns, n: u64) -> std::io::Result<()> {
        writeln!(self.w, "lost {t} {n}")
    }

    pub fn ring(&mut self, t: Ns, overrun: u64, dropped: u64) -> std::io::Result<()> {
        writeln!(self.w, "ring {t} {overrun} {dropped}")
    }

    pub fn finish(mut self) -> std::io::Result<W> {
        writeln!(self.w, "end {}", self.events)?;
        self.w.flush()?;
        Ok(self.w)
    }
}

/// One item of a recording, in file order.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// `cg` is `CgRef::Path(idx)` into `RecordReader::cgroups` (Q only)
    Event(Event),
    Stat {
        time_ns: Ns,
        dev: u32,
        fields: [u64; 11],
    },
    Lost {
        time_ns: Ns,
        events: u64,
    },
    Ring {
        time_ns: Ns,
        overrun: u64,
        dropped: u64,
    },
    End {
        events: u64,
    },
}

pub struct RecordReader<R: BufRead> {
    r: R,
    path: PathBuf,
    line_no: u64,
    line: String,
    pub start_mono_ns: Ns,
    pub start_unix_s: u64,
    /// index → (dev_t, name)
    pub devices: Vec<(u32, String)>,
    /// index → (cgroup id if known, path)
    pub cgroups: Vec<(Option<u64>, String)>,
}

impl RecordReader<std::io::BufReader<std::fs::File>> {
    /// Open a recording: a regular file (a device or FIFO is refused, so that
    /// `/dev/zero` cannot be read forever).
    pub fn open(path: &Path) -> Result<Self> {
        let f = blklab_input::open_regular(path, "recording")
            .map_err(|e| HostError::Other(e.to_string()))?;
        RecordReader::new(std::io::BufReader::new(f), path)
    }
}

impl<R: BufRead> RecordReader<R> {
    pub fn new(r: R, path: &Path) -> Result<Self> {
        let mut s = RecordReader {
            r,
            path: path.to_path_buf(),
            line_no: 0,
            line: String::new(),
            start_mono_ns: 0,
            start_unix_s: 0,
            devices: Vec::new(),
            cgroups: Vec::new(),
        };
        if !s.next_line()? {
            return Err(s.bad("empty file, expected the header line"));
        }
        let mut it = s.line.split_whitespace();
        if it.next() != Some(MAGIC) {
            return Err(s.bad(&format!("not a blklab-host recording (expected {MAGIC:?})")));
        }
        match it.next().and_then(|v| v.parse::<u32>().ok()) {
            Some(VERSION) => {}
            v => {
                return Err(s.bad(&format!(
                    "unsupported version {v:?}, this reader knows {VERSION}"
                )))
            }
        }
        Ok(s)
    }

    fn bad(&self, msg: &str) -> HostError {
        HostError::BadRecording {
            path: self.path.clone(),
            line: self.line_no,
            msg: msg.to_string(),
        }
    }

    fn next_line(&mut self) -> Result<bool> {
        loop {
            let max = blklab_input::MAX_RECORD_LINE_BYTES;
            let got = blklab_input::read_line_capped(&mut self.r, &mut self.line, max);
            self.line_no += 1;
            match got {
                Ok(blklab_input::Line::Eof) => return Ok(false),
                Ok(blklab_input::Line::Read) => {}
                Ok(blklab_input::Line::TooLong) => {
                    return Err(self.bad(&format!(
                        "a line longer than {max} bytes (starts '{}'): not a recording line",
                        blklab_input::excerpt(&self.line)
                    )))
                }
                Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                    return Err(self.bad(&e.to_string()))
                }
                Err(e) => return Err(HostError::io(&self.path, e)),
            }
            let t = self.line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            return Ok(true);
        }
    }

    /// Next item; Ok(None) at end of file.
    pub fn next_item(&mut self) -> Result<Option<Item>> {
        loop {
            if !self.next_line()? {
                return Ok(None);
            }
            let line = std::mem::take(&mut self.line);
            let r = self.parse(&line);
            self.line = line;
            match r? {
                Some(it) => return Ok(Some(it)),
                None => continue,
            }
        }
    }

    fn parse(&mut self, line: &str) -> Result<Option<Item>> {
        let toks: Vec<&str> = line.split_whitespace().collect();
        let (path, line_no) = (self.path.clone(), self.line_no);
        let num = |k: usize, what: &str| -> Result<u64> {
            toks.get(k)
                .and_then(|t| t.parse::<u64>().ok())
                .ok_or_else(|| HostError::BadRecording {
                    path: path.clone(),
                    line: line_no,
                    msg: format!("field {k} ({what}): expected an unsigned integer"),
                })
        };
        match toks[0] {
            "start" => {
                self.start_mono_ns = num(1, "mono ns")?;
                self.start_unix_s = num(2, "unix seconds")?;
                Ok(None)
            }
            "dev" => {
                let i = num(1, "index")? as usize;
                let mm = toks.get(2).copied().unwrap_or("");
                let (a, b) = mm
                    .split_once(':')
                    .ok_or_else(|| self.bad("dev: expected MAJ:MIN"))?;
                let (a, b) = (a.parse::<u32>(), b.parse::<u32>());
                let (Ok(a), Ok(b)) = (a, b) else {
                    return Err(self.bad("dev: expected MAJ:MIN"));
                };
                if i != self.devices.len() {
                    return Err(self.bad("dev: indexes must be defined in order"));
                }
                self.devices
                    .push((mkdev(a, b), toks.get(3).unwrap_or(&"?").to_string()));
                Ok(None)
            }
            "cg" => {
                let i = num(1, "index")? as usize;
                if i != self.cgroups.len() {
                    return Err(self.bad("cg: indexes must be defined in order"));
                }
                let id = toks.get(2).and_then(|t| t.parse::<u64>().ok());
                let path = toks.get(3).ok_or_else(|| self.bad("cg: missing path"))?;
                self.cgroups.push((id, path.to_string()));
                Ok(None)
            }
            "s" => {
                let t = num(1, "time")?;
                let dev = self.dev_of(num(2, "dev index")?)?;
                let mut f = [0u64; 11];
                for (k, v) in f.iter_mut().enumerate() {
                    *v = num(3 + k, "stat field")?;
                }
                Ok(Some(Item::Stat {
                    time_ns: t,
                    dev,
                    fields: f,
                }))
            }
            "lost" => Ok(Some(Item::Lost {
                time_ns: num(1, "time")?,
                events: num(2, "events")?,
            })),
            "ring" => Ok(Some(Item::Ring {
                time_ns: num(1, "time")?,
                overrun: num(2, "overrun")?,
                dropped: num(3, "dropped")?,
            })),
            "end" => Ok(Some(Item::End {
                events: num(1, "events")?,
            })),
            a => {
                let action = match a {
                    "Q" | "X" | "D" | "C" | "R" => Action::parse(a).unwrap_or(Action::Queue),
                    _ => {
                        return Err(
                            self.bad(&format!("unknown line kind '{}'", blklab_input::excerpt(a)))
                        )
                    }
                };
                let time_ns = num(1, "time")?;
                let dev = self.dev_of(num(2, "dev index")?)?;
                let op = toks
                    .get(3)
                    .and_then(|t| t.chars().next())
                    .and_then(OpClass::from_letter)
                    .ok_or_else(|| self.bad("field 3 (op): expected R, W or O"))?;
                let sector = num(4, "sector")?;
                let nsectors = u32::try_from(num(5, "nsectors")?)
                    .map_err(|_| self.bad("nsectors too large"))?;
                let aux = num(6, "aux")?;
                let cg = match toks.get(7) {
                    Some(&"-") | None => CgRef::None,
                    Some(t) => {
                        let i: u32 = t.parse().map_err(|_| self.bad("field 7 (cgroup index)"))?;
                        if i as usize >= self.cgroups.len() {
                            return Err(self.bad("cgroup index used before its `cg` line"));
                        }
                        CgRef::Path(i)
                    }
                };
                Ok(Some(Item::Event(Event {
                    time_ns,
                    dev,
                    action,
                    op,
                    sector,
                    nsectors,
                    aux,
                    cg,
                })))
            }
        }
    }

    fn dev_of(&self, i: u64) -> Result<u32> {
        self.devices
            .get(i as usize)
            .map(|d| d.0)
            .ok_or_else(|| self.bad("device index used before its `dev` line"))
    }

    pub fn dev_name(&self, dev: u32) -> String {
        self.devices
            .iter()
            .find(|d| d.0 == dev)
            .map(|d| d.1.clone())
            .unwrap_or_else(|| format!("{}:{}", dev_major(dev), dev_minor(dev)))
    }
}

/// Cgroup names of a recording (for `Accountant::feed`).
pub struct RecordedNames<'a>(pub &'a [(Option<u64>, String)]);

impl CgroupNames for RecordedNames<'_> {
    fn name_of(&mut self, cg: CgRef) -> Option<String> {
        match cg {
            CgRef::None => Some("/".into()),
            CgRef::Path(i) => self.0.get(i as usize).map(|c| c.1.clone()),
            CgRef::Id(id) => self.0.iter().find(|c| c.0 == Some(id)).map(|c| c.1.clone()),
        }
    }
}

/// One submitted bio (from its Q event), for replaying a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoRecord {
    /// ns since the first event of the recording
    pub time_ns: Ns,
    /// index into `Recording::devices`
    pub dev: u32,
    pub op: OpClass,
    pub sector: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupStream {
    pub path: String,
    pub ios: Vec<IoRecord>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recording {
    pub devices: Vec<String>,
    /// one stream per cgroup that submitted I/O, in first-seen order
    pub cgroups: Vec<CgroupStream>,
    pub first_ns: Ns,
    pub last_ns: Ns,
    /// events lost while recording (trace_pipe notices + ring overrun/dropped)
    pub lost_events: u64,
    /// no `end` line: the recorder was killed or the file was cut
    pub truncated: bool,
}

/// Read a recording into per-cgroup I/O streams. Memory grows with the
/// file, so the file may be at most `blklab_input::MAX_RECORDING_BYTES`.
pub fn read_recording(path: &Path) -> Result<Recording> {
    let f = blklab_input::open_regular(path, "recording")
        .map_err(|e| HostError::Other(e.to_string()))?;
    let len = f.metadata().map_err(|e| HostError::io(path, e))?.len();
    let limit = blklab_input::MAX_RECORDING_BYTES;
    if len > limit {
        return Err(HostError::Other(format!(
            "{}: a recording of {len} bytes; a replay reads at most {limit} bytes (see docs/scenario.md, Limits)",
            path.display()
        )));
    }
    // the cap holds even if the file grows while it is read
    let r = std::io::BufReader::new(std::io::Read::take(f, limit));
    read_recording_from(RecordReader::new(r, path)?)
}

/// [`read_recording`] from an open reader (the fuzz target reads bytes).
pub fn read_recording_from<R: BufRead>(mut rd: RecordReader<R>) -> Result<Recording> {
    let mut streams: Vec<CgroupStream> = Vec::new();
    let mut by_cg: BTreeMap<u32, usize> = BTreeMap::new();
    let mut first = None;
    let mut last = 0;
    let mut lost = 0;
    let mut ring = 0;
    let mut ended = false;
    while let Some(it) = rd.next_item()? {
        match it {
            Item::Event(ev) => {
                let f = *first.get_or_insert(ev.time_ns);
                last = last.max(ev.time_ns);
                if ev.action != Action::Queue {
                    continue;
                }
                let key = match ev.cg {
                    CgRef::Path(i) => i,
                    _ => u32::MAX,
                };
                let si = *by_cg.entry(key).or_insert_with(|| {
                    let path = rd
                        .cgroups
                        .get(key as usize)
                        .map(|c| c.1.clone())
                        .unwrap_or_else(|| "/".into());
                    streams.push(CgroupStream {
                        path,
                        ios: Vec::new(),
                    });
                    streams.len() - 1
                });
                let dev = rd.devices.iter().position(|d| d.0 == ev.dev).unwrap_or(0) as u32;
                streams[si].ios.push(IoRecord {
                    time_ns: ev.time_ns.saturating_sub(f),
                    dev,
                    op: ev.op,
                    sector: ev.sector,
                    bytes: ev.nsectors as u64 * 512,
                });
            }
            Item::Lost { events, .. } => lost += events,
            Item::Ring {
                overrun, dropped, ..
            } => ring = overrun + dropped,
            Item::End { .. } => ended = true,
            Item::Stat { .. } => {}
        }
    }
    Ok(Recording {
        devices: rd.devices.iter().map(|d| d.1.clone()).collect(),
        cgroups: streams,
        first_ns: first.unwrap_or(0),
        last_ns: last,
        lost_events: lost + ring,
        truncated: !ended,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct N;
    impl CgroupNames for N {
        fn name_of(&mut self, cg: CgRef) -> Option<String> {
            match cg {
                CgRef::Id(41) => Some("/lab/a".into()),
                _ => None,
            }
        }
    }

    fn ev(t: Ns, a: Action, s: u64, cg: CgRef) -> Event {
        Event {
            time_ns: t,
            dev: mkdev(7, 0),
            action: a,
            op: OpClass::Read,
            sector: s,
            nsectors: 8,
            aux: 0,
            cg,
        }
    }

    #[test]
    fn round_trip() {
        let mut w = RecordWriter::new(Vec::new(), 5, 1700000000).unwrap();
        w.device(mkdev(7, 0), "loop0").unwrap();
        w.event(&ev(100, Action::Queue, 8, CgRef::Id(41)), &mut N)
            .unwrap();
        w.event(&ev(150, Action::GetRq, 8, CgRef::Id(41)), &mut N)
            .unwrap(); // skipped
        w.event(&ev(200, Action::Issue, 8, CgRef::Id(41)), &mut N)
            .unwrap();
        w.event(&ev(300, Action::Complete, 8, CgRef::Id(41)), &mut N)
            .unwrap();
        w.event(&ev(400, Action::Queue, 16, CgRef::Id(77)), &mut N)
            .unwrap();
        w.stat(
            500,
            mkdev(7, 0),
            "loop0",
            &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        )
        .unwrap();
        w.lost(600, 3).unwrap();
        let bytes = w.finish().unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.contains("cg 0 41 /lab/a"), "{text}");
        assert!(text.contains("cg 1 77 /cgid-77"), "{text}");
        let dir = std::env::temp_dir().join(format!("blklab-host-rt-{}", std::process::id()));
        std::fs::write(&dir, &bytes).unwrap();
        let rec = read_recording(&dir).unwrap();
        let _ = std::fs::remove_file(&dir);
        assert_eq!(rec.devices, ["loop0"]);
        assert_eq!(rec.cgroups.len(), 2);
        assert_eq!(rec.cgroups[0].path, "/lab/a");
        assert_eq!(
            rec.cgroups[0].ios[0],
            IoRecord {
                time_ns: 0,
                dev: 0,
                op: OpClass::Read,
                sector: 8,
                bytes: 4096
            }
        );
        assert_eq!(rec.cgroups[1].ios[0].time_ns, 300);
        assert_eq!(rec.lost_events, 3);
        assert!(!rec.truncated);
        let mut rd = RecordReader::new(&bytes[..], Path::new("mem")).unwrap();
        let mut n = 0;
        while let Some(it) = rd.next_item().unwrap() {
            if let Item::Stat { fields, .. } = it {
                assert_eq!(fields[10], 11);
            }
            n += 1;
        }
        assert_eq!(n, 4 + 1 + 1 + 1);
    }

    #[test]
    fn bad_files_give_line_numbers() {
        let cases: [(&str, &str); 5] = [
            ("", "empty"),
            ("nope 1\n", "not a blklab-host"),
            ("blklab-host-record 9\n", "unsupported version"),
            ("blklab-host-record 1\nQ 1 0 R 8 8 0 -\n", "device index"),
            (
                "blklab-host-record 1\ndev 0 7:0 loop0\nQ 1 0 R 8 x 0 -\n",
                "field 5",
            ),
        ];
        for (text, want) in cases {
            let r = RecordReader::new(text.as_bytes(), Path::new("mem")).and_then(|mut rd| {
                while rd.next_item()?.is_some() {}
                Ok(())
            });
            let e = r.expect_err(text).to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
