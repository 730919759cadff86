//! Parser of the ftrace `blk` tracer's text lines (non-classic format, as
//! printed by `blk_log_action()` and the `blk_log_*()` payload printers of
//! kernel/trace/blktrace.c) into compact events.
//!
//! Accepted line shape (the ftrace context prefix may carry the irq-info flags
//! column or not; only the `<sec>.<frac>:` timestamp token is used from it):
//! ```text
//!   <comm>-<pid> [cpu] [flags] <sec>.<usec>: <maj>,<min> [<cg>] <act> <rwbs> <payload>
//! ```
//! `<cg>` is absent (no `blk_cgroup`, or an event without a bio such as P/U),
//! `<low32 hex>,<high32 hex>` of the 64-bit cgroup id (`blk_cgroup`), or a
//! path (`blk_cgroup` + `blk_cgname`, `<...>` when unresolvable).
//! Also recognised: ftrace's `CPU:<n> [LOST <m> EVENTS]` notices.
//! Simplification: a cgroup path containing white space is not supported.

use std::collections::BTreeMap;

pub type Ns = u64;

/// Kernel dev_t encoding used throughout: `major << 20 | minor`.
pub fn mkdev(major: u32, minor: u32) -> u32 {
    (major << 20) | (minor & 0xFFFFF)
}
pub fn dev_major(dev: u32) -> u32 {
    dev >> 20
}
pub fn dev_minor(dev: u32) -> u32 {
    dev & 0xFFFFF
}

/// blktrace action (the `what2act[]` table of blktrace.c).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    Queue,
    BackMerge,
    FrontMerge,
    GetRq,
    SleepRq,
    Requeue,
    Issue,
    Complete,
    Plug,
    Unplug,
    UnplugTimer,
    Insert,
    Split,
    Bounce,
    Remap,
    Message,
}

impl Action {
    /// Short letter (also accepts the `verbose` long names).
    pub fn parse(s: &str) -> Option<Action> {
        use Action::*;
        Some(match s {
            "Q" | "queue" => Queue,
            "M" | "backmerge" => BackMerge,
            "F" | "frontmerge" => FrontMerge,
            "G" | "getrq" => GetRq,
            "S" | "sleeprq" => SleepRq,
            "R" | "requeue" => Requeue,
            "D" | "issue" => Issue,
            "C" | "complete" => Complete,
            "P" | "plug" => Plug,
            "U" | "unplug_io" => Unplug,
            "UT" | "unplug_timer" => UnplugTimer,
            "I" | "insert" => Insert,
            "X" | "split" => Split,
            "B" | "bounce" => Bounce,
            "A" | "remap" => Remap,
            "m" | "message" => Message,
            _ => return None,
        })
    }
    pub fn letter(self) -> &'static str {
        use Action::*;
        match self {
            Queue => "Q",
            BackMerge => "M",
            FrontMerge => "F",
            GetRq => "G",
            SleepRq => "S",
            Requeue => "R",
            Issue => "D",
            Complete => "C",
            Plug => "P",
            Unplug => "U",
            UnplugTimer => "UT",
            Insert => "I",
            Split => "X",
            Bounce => "B",
            Remap => "A",
            Message => "m",
        }
    }
}

/// blk-iotrack's op class: index into the counters' `[_; 3]` arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OpClass {
    Read = 0,
    Write = 1,
    Other = 2,
}

impl OpClass {
    /// From the rwbs string built by `fill_rwbs()`: optional leading `F`
    /// (preflush), then `D` discard / `W` write / `R` read / `N` no data.
    /// iotrack classifies by `bio_op()`: READ, WRITE, anything else = other.
    pub fn from_rwbs(rwbs: &str) -> Option<OpClass> {
        let b = rwbs.as_bytes();
        let mut i = 0;
        if b.first() == Some(&b'F') && b.len() > 1 {
            i = 1;
        }
        match b.get(i)? {
            b'R' => Some(OpClass::Read),
            b'W' => Some(OpClass::Write),
            b'D' | b'N' => Some(OpClass::Other),
            _ => None,
        }
    }
    pub fn letter(self) -> char {
        match self {
            OpClass::Read => 'R',
            OpClass::Write => 'W',
            OpClass::Other => 'O',
        }
    }
    pub fn from_letter(c: char) -> Option<OpClass> {
        match c {
            'R' => Some(OpClass::Read),
            'W' => Some(OpClass::Write),
            'O' => Some(OpClass::Other),
            _ => None,
        }
    }
}

/// Who the event is charged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CgRef {
    /// no cgroup column
    None,
    /// 64-bit cgroup id (kernfs node id = inode of the cgroup directory)
    Id(u64),
    /// index into a path table (the parser's, or a recording's)
    Path(u32),
}

/// One trace event, 48 bytes, no heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub time_ns: Ns,
    pub dev: u32,
    pub action: Action,
    pub op: OpClass,
    pub sector: u64,
    pub nsectors: u32,
    /// Split: the new sector; Complete/Requeue: the error code; else 0.
    pub aux: u64,
    pub cg: CgRef,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Event(Event),
    /// `CPU:n [LOST m EVENTS]`
    Lost {
        cpu: u32,
        events: u64,
    },
    /// blank, comment, or a line of another tracer/event
    Ignored,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub what: &'static str,
    pub token: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bad {}: {:?}", self.what, self.token)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseStats {
    pub lines: u64,
    pub events: u64,
    pub ignored: u64,
    pub malformed: u64,
    pub lost_notices: u64,
    pub lost_events: u64,
}

/// Stateful parser: interns cgroup paths (blk_cgname output) and counts.
#[derive(Debug, Default)]
pub struct LineParser {
    paths: Vec<String>,
    path_idx: BTreeMap<String, u32>,
    pub stats: ParseStats,
}

fn err(what: &'static str, token: &str) -> ParseError {
    ParseError {
        what,
        token: token.chars().take(64).collect(),
    }
}

/// `<sec>.<frac>:` → ns (the timestamp token of a tracefs line).
fn parse_ts(tok: &str) -> Option<Ns> {
    seconds_ns(tok.strip_suffix(':')?)
}

/// An ftrace timestamp `<sec>.<frac>` (without its ':') in ns: digits only,
/// 1..9 fraction digits (µs from the default printer; ns-resolution clocks
/// also parse), None on overflow. Shared with the conformance harness's
/// readers of guest traces.
pub fn seconds_ns(t: &str) -> Option<Ns> {
    let (s, f) = t.split_once('.')?;
    if s.is_empty() || f.is_empty() || f.len() > 9 {
        return None;
    }
    if !s.bytes().all(|c| c.is_ascii_digit()) || !f.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = s.parse().ok()?;
    let frac: u64 = f.parse().ok()?;
    let scale = 10u64.pow(9 - f.len() as u32);
    secs.checked_mul(1_000_000_000)?.checked_add(frac * scale)
}

fn parse_dev(tok: &str) -> Option<u32> {
    let (a, b) = tok.split_once(',')?;
    let ma: u32 = a.parse().ok()?;
    let mi: u32 = b.parse().ok()?;
    if ma >= 1 << 12 || mi >= 1 << 20 {
        return None;
    }
    Some(mkdev(ma, mi))
}

/// `LOW32,HIGH32` in hex (blk_log_action) → 64-bit id.
fn parse_cgid(tok: &str) -> Option<u64> {
    let (lo, hi) = tok.split_once(',')?;
    let lo = u32::from_str_radix(lo, 16).ok()? as u64;
    let hi = u32::from_str_radix(hi, 16).ok()? as u64;
    Some(hi << 32 | lo)
}

fn bracket_num(tok: &str) -> Option<i64> {
    tok.strip_prefix('[')?.strip_suffix(']')?.parse().ok()
}

impl LineParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// The path interned under `idx` (for `CgRef::Path`).
    pub fn path(&self, idx: u32) -> Option<&str> {
        self.paths.get(idx as usize).map(|s| s.as_str())
    }

    fn intern(&mut self, p: &str) -> u32 {
        if let Some(i) = self.path_idx.get(p) {
            return *i;
        }
        let i = self.paths.len() as u32;
        self.paths.push(p.to_string());
        self.path_idx.insert(p.to_string(), i);
        i
    }

    /// Parse one line (without or with its trailing newline). Never panics;
    /// malformed lines return `Err` and are counted in `stats.malformed`.
    pub fn parse_line(&mut self, line: &str) -> Result<Parsed, ParseError> {
        self.stats.lines += 1;
        let r = self.parse_inner(line);
        match &r {
            Ok(Parsed::Event(_)) => self.stats.events += 1,
            Ok(Parsed::Lost { events, .. }) => {
                self.stats.lost_notices += 1;
                self.stats.lost_events += events;
            }
            Ok(Parsed::Ignored) => self.stats.ignored += 1,
            Err(_) => self.stats.malformed += 1,
        }
        r
    }

    fn parse_inner(&mut self, line: &str) -> Result<Parsed, ParseError> {
        let line = line.trim_end_matches(['\n', '\r']);
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            return Ok(Parsed::Ignored);
        }
        if let Some(rest) = trimmed.strip_prefix("CPU:") {
            // ftrace: "CPU:%d [LOST %lu EVENTS]"
            let mut it = rest.split_whitespace();
            let cpu = it.next().and_then(|c| c.parse().ok());
            let lost = it.next() == Some("[LOST");
            let n = it.next().and_then(|c| c.parse().ok());
            return match (cpu, lost, n) {
                (Some(cpu), true, Some(events)) => Ok(Parsed::Lost { cpu, events }),
                _ => Err(err("lost-events notice", trimmed)),
            };
        }
        let mut toks = [""; 32];
        let mut n = 0;
        for t in trimmed.split_whitespace() {
            if n == toks.len() {
                break;
            }
            toks[n] = t;
            n += 1;
        }
        let toks = &toks[..n];
        // the first token that is a timestamp ends the context prefix
        let Some(ti) = toks.iter().position(|t| parse_ts(t).is_some()) else {
            return Err(err("timestamp (<sec>.<usec>:)", trimmed));
        };
        let time_ns = parse_ts(toks[ti]).unwrap_or(0);
        let rest = &toks[ti + 1..];
        let Some(devtok) = rest.first() else {
            return Err(err("device (truncated line)", trimmed));
        };
        let Some(dev) = parse_dev(devtok) else {
            // another tracer's or event's line in the same buffer
            return Ok(Parsed::Ignored);
        };
        let mut i = 1;
        let cgtok = rest
            .get(i)
            .copied()
            .ok_or_else(|| err("action (truncated line)", trimmed))?;
        let cg = if cgtok.contains(',') {
            i += 1;
            CgRef::Id(parse_cgid(cgtok).ok_or_else(|| err("cgroup id (LOW32,HIGH32 hex)", cgtok))?)
        } else if cgtok.starts_with('/') || cgtok == "<...>" {
            i += 1;
            CgRef::Path(self.intern(cgtok))
        } else {
            CgRef::None
        };
        let acttok = rest
            .get(i)
            .copied()
            .ok_or_else(|| err("action (truncated line)", trimmed))?;
        let action = Action::parse(acttok).ok_or_else(|| err("action", acttok))?;
        i += 1;
        if action == Action::Message {
            return Ok(Parsed::Ignored);
        }
        let rwbs = rest
            .get(i)
            .copied()
            .ok_or_else(|| err("rwbs (truncated line)", trimmed))?;
        let op = OpClass::from_rwbs(rwbs).ok_or_else(|| err("rwbs", rwbs))?;
        i += 1;
        let pl = &rest[i.min(rest.len())..];
        let mut ev = Event {
            time_ns,
            dev,
            action,
            op,
            sector: 0,
            nsectors: 0,
            aux: 0,
            cg,
        };
        let num = |k: usize, what: &'static str| -> Result<u64, ParseError> {
            let t = pl.get(k).copied().ok_or_else(|| err(what, "<missing>"))?;
            t.parse::<u64>().map_err(|_| err(what, t))
        };
        use Action::*;
        match action {
            Plug | Unplug | UnplugTimer => {}
            Split => {
                ev.sector = num(0, "split sector")?;
                if pl.get(1) != Some(&"/") {
                    return Err(err("split '/'", pl.get(1).unwrap_or(&"<missing>")));
                }
                ev.aux = num(2, "split new sector")?;
            }
            Remap => {
                ev.sector = num(0, "sector")?;
                ev.nsectors = num(2, "nr sectors")?.min(u32::MAX as u64) as u32;
            }
            Complete | Requeue => {
                // "<sector> + <n> [err]" | "<sector> [err]" | passthrough "(pdu) [err]"
                match pl.first() {
                    Some(t) if t.starts_with('(') || t.starts_with('[') => {}
                    Some(_) => {
                        ev.sector = num(0, "sector")?;
                        if pl.get(1) == Some(&"+") {
                            ev.nsectors = num(2, "nr sectors")?.min(u32::MAX as u64) as u32;
                            ev.aux = pl.get(3).and_then(|t| bracket_num(t)).unwrap_or(0) as u64;
                        } else {
                            ev.aux = pl.get(1).and_then(|t| bracket_num(t)).unwrap_or(0) as u64;
                        }
                    }
                    None => return Err(err("sector (truncated line)", trimmed)),
                }
            }
            _ => {
                // "<sector> + <n> [comm]" | "[comm]" (no data) | "<bytes> (pdu) [comm]"
                match pl.first() {
                    Some(t) if t.starts_with('[') => {}
                    Some(_) if pl.get(1).is_some_and(|t| t.starts_with('(')) => {}
                    Some(_) => {
                        ev.sector = num(0, "sector")?;
                        if pl.get(1) != Some(&"+") {
                            return Err(err("'+'", pl.get(1).unwrap_or(&"<missing>")));
                        }
                        ev.nsectors = num(2, "nr sectors")?.min(u32::MAX as u64) as u32;
                    }
                    None => return Err(err("sector (truncated line)", trimmed)),
                }
            }
        }
        Ok(Parsed::Event(ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(p: &mut LineParser, l: &str) -> Event {
        match p.parse_line(l) {
            Ok(Parsed::Event(e)) => e,
            other => panic!("{l:?} -> {other:?}"),
        }
    }

    #[test]
    fn queue_with_cgroup_id_and_irq_info() {
        let mut p = LineParser::new();
        let e = ev(&mut p, "             fio-12070   [001] d..1.  5140.198750:   7,0   3d,0  Q   R 31616 + 8 [fio]");
        assert_eq!(e.time_ns, 5_140_198_750_000);
        assert_eq!(e.dev, mkdev(7, 0));
        assert_eq!(e.action, Action::Queue);
        assert_eq!(e.op, OpClass::Read);
        assert_eq!((e.sector, e.nsectors), (31616, 8));
        assert_eq!(e.cg, CgRef::Id(0x3d));
    }

    #[test]
    fn high_word_of_cgroup_id() {
        let mut p = LineParser::new();
        let e = ev(&mut p, "fio-1 [000] 1.000001: 259,0 10,2 D WS 8 + 16 [fio]");
        assert_eq!(e.cg, CgRef::Id(2 << 32 | 0x10));
        assert_eq!(e.op, OpClass::Write);
        assert_eq!(e.time_ns, 1_000_001_000);
    }

    #[test]
    fn without_irq_info_and_without_cgroup() {
        let mut p = LineParser::new();
        let e = ev(
            &mut p,
            "  <...>-14 [000] 5140.200324: 7,0 C R 31616 + 8 [0]",
        );
        assert_eq!(e.cg, CgRef::None);
        assert_eq!(e.action, Action::Complete);
        let e = ev(
            &mut p,
            "  fio-12070 [001] dN.1. 5140.200253:   7,0    P   N [fio]",
        );
        assert_eq!(e.action, Action::Plug);
        assert_eq!(e.op, OpClass::Other);
    }

    #[test]
    fn cgname_paths_are_interned() {
        let mut p = LineParser::new();
        let a = ev(
            &mut p,
            "fio-1 [000] .... 1.000000: 8,0 /test1 Q RS 100 + 8 [fio]",
        );
        let b = ev(
            &mut p,
            "kworker/0:1-9 [000] .... 1.000100: 8,0 /test1 C RS 100 + 8 [0]",
        );
        assert_eq!(a.cg, b.cg);
        let CgRef::Path(i) = a.cg else { panic!() };
        assert_eq!(p.path(i), Some("/test1"));
        let c = ev(
            &mut p,
            "fio-1 [000] .... 1.000000: 8,0 <...> Q R 100 + 8 [fio]",
        );
        assert_ne!(c.cg, a.cg);
    }

    #[test]
    fn split_complete_error_and_flush() {
        let mut p = LineParser::new();
        let e = ev(&mut p, "fio-1 [000] 1.5: 8,0 1,0 X R 2048 / 4608 [fio]");
        assert_eq!((e.action, e.sector, e.aux), (Action::Split, 2048, 4608));
        let e = ev(&mut p, "irq-0 [000] 1.5: 8,0 1,0 C W 2048 + 8 [-5]");
        assert_eq!(e.aux as i64, -5);
        let e = ev(&mut p, "irq-0 [000] 1.5: 8,0 1,0 C FN 0 [0]");
        assert_eq!((e.op, e.sector, e.nsectors), (OpClass::Other, 0, 0));
        let e = ev(&mut p, "a-1 [000] 1.5: 8,0 1,0 Q FWS [kworker]");
        assert_eq!((e.op, e.nsectors), (OpClass::Write, 0));
        let e = ev(&mut p, "a-1 [000] 1.5: 8,0 1,0 queue R 8 + 8 [x]");
        assert_eq!(e.action, Action::Queue);
    }

    #[test]
    fn comm_with_spaces_and_brackets() {
        let mut p = LineParser::new();
        let e = ev(
            &mut p,
            "my prog [1]-77 [001] d..1. 2.000002: 7,0 29,0 Q R 8 + 8 [my prog [1]]",
        );
        assert_eq!(e.time_ns, 2_000_002_000);
        assert_eq!(e.cg, CgRef::Id(0x29));
    }

    #[test]
    fn lost_notice() {
        let mut p = LineParser::new();
        assert_eq!(
            p.parse_line("CPU:1 [LOST 1234 EVENTS]"),
            Ok(Parsed::Lost {
                cpu: 1,
                events: 1234
            })
        );
        assert_eq!(p.stats.lost_events, 1234);
    }

    #[test]
    fn malformed_and_truncated_never_panic() {
        let mut p = LineParser::new();
        let bad = [
            "garbage",
            "fio-1 [000] d..1. 5140.19",
            "fio-1 [000] d..1. 5140.198750:",
            "fio-1 [000] d..1. 5140.198750:   7,0",
            "fio-1 [000] d..1. 5140.198750:   7,0   3d,0",
            "fio-1 [000] d..1. 5140.198750:   7,0   3d,0  Q",
            "fio-1 [000] d..1. 5140.198750:   7,0   3d,0  Q   R",
            "fio-1 [000] d..1. 5140.198750:   7,0   3d,0  Q   R 31616 +",
            "fio-1 [000] d..1. 5140.198750:   7,0   3d,0  Q   R 31616 + x [fio]",
            "fio-1 [000] d..1. 5140.198750:   7,0   zz,0  Q   R 31616 + 8 [fio]",
            "fio-1 [000] d..1. 5140.198750:   7,0   3d,0  Z   R 31616 + 8 [fio]",
            "fio-1 [000] d..1. 5140.198750:   7,0   3d,0  Q   ? 31616 + 8 [fio]",
            "fio-1 [000] d..1. 5140.198750:   7,0   3d,0  X   R 31616 - 8 [fio]",
            "CPU:x [LOST",
            "fio-1 [000] d..1. 99999999999999999999.000001: 7,0 Q R 1 + 8 [fio]",
            "fio-1 [000] 1.000001: 7,0 3d,0 Q R 99999999999999999999999 + 8 [fio]",
        ];
        for b in bad {
            assert!(p.parse_line(b).is_err(), "{b:?} should be an error");
        }
        assert_eq!(p.stats.malformed, bad.len() as u64);
        // other events sharing the buffer are ignored, not errors
        assert_eq!(
            p.parse_line("bash-1 [000] 1.000001: sched_switch: prev_comm=bash"),
            Ok(Parsed::Ignored)
        );
        // every byte-prefix of a good line: no panic
        let good = "             fio-12070   [001] d..1.  5140.198750:   7,0   3d,0  Q   R 31616 + 8 [fio]";
        for k in 0..good.len() {
            let _ = p.parse_line(&good[..k]);
        }
    }
}
