//! `blklab top` / `blklab record` / `blklab top --from FILE`: the periodic
//! per-cgroup report of dublio/iotrack (spec §1.5), computed from blk tracer
//! events instead of the never-merged io.iotrack.stat file.
//!
//! Like iotrack, the first tick only primes the baseline; each later tick
//! prints the deltas. Events are drained from trace_pipe at each tick and all
//! drained events count in that interval (simplification: an I/O completing
//! between the tick and the drain, a few ms, lands in the earlier interval).

use crate::account::{AccountConfig, AccountStats, Accountant, CgroupNames};
use crate::cgroup_fs::{detect_layout, HostCgroupNames};
use crate::error::{HostError, Result};
use crate::events::{CgRef, Event, LineParser, Ns, ParseStats, Parsed};
use crate::iotrack::report::{format_interval, Sample};
use crate::iotrack::DEFAULT_THRESH_NS;
use crate::record::{Item, RecordReader, RecordWriter, RecordedNames};
use crate::tracefs::{self, BlkTrace, TraceConfig};
use chrono::TimeZone;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct TopOptions {
    /// devices to trace ("loop0"); empty = every /sys/block entry with a trace dir
    pub devices: Vec<String>,
    /// cgroups to show after "/" (iotrack -g), in order; empty = all seen
    pub cgroups: Vec<String>,
    pub interval_ms: u64,
    /// number of printed intervals (None = until stopped)
    pub count: Option<u64>,
    /// iotrack -x layout
    pub extended: bool,
    pub thresh: [u64; 8],
    pub buffer_size_kb: u32,
    pub act_mask: Option<String>,
    pub max_pending: usize,
    pub stale_ns: Ns,
    /// set to stop early (besides SIGINT/SIGTERM/SIGHUP)
    pub stop: Option<Arc<AtomicBool>>,
    /// set once tracing is on
    pub ready: Option<Arc<AtomicBool>>,
}

impl Default for TopOptions {
    fn default() -> Self {
        TopOptions {
            devices: Vec::new(),
            cgroups: Vec::new(),
            interval_ms: 1000,
            count: None,
            extended: false,
            thresh: DEFAULT_THRESH_NS,
            buffer_size_kb: 16384,
            act_mask: None,
            max_pending: 1 << 20,
            stale_ns: 60_000_000_000,
            stop: None,
            ready: None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct RecordOptions {
    pub devices: Vec<String>,
    pub output: PathBuf,
    /// stop after this long (None = until stopped)
    pub duration_ms: Option<u64>,
    /// period of the /sys/block/DEV/stat samples (= top interval on replay)
    pub stat_interval_ms: u64,
    pub buffer_size_kb: u32,
    pub act_mask: Option<String>,
    pub stop: Option<Arc<AtomicBool>>,
    pub ready: Option<Arc<AtomicBool>>,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            devices: Vec::new(),
            output: PathBuf::from("blklab.rec"),
            duration_ms: None,
            stat_interval_ms: 1000,
            buffer_size_kb: 16384,
            act_mask: None,
            stop: None,
            ready: None,
        }
    }
}

/// What happened during a `top` run; losses are never hidden.
#[derive(Debug, Clone, Default)]
pub struct TopSummary {
    pub intervals: u64,
    pub parse: ParseStats,
    pub account: AccountStats,
    /// ring buffer overruns / dropped events (per_cpu/cpu*/stats) during the run
    pub ring_overrun: u64,
    pub ring_dropped: u64,
    /// cumulative counters at the last tick, one Sample per device
    pub last: Vec<Sample>,
}

#[derive(Debug, Clone, Default)]
pub struct RecordSummary {
    pub events: u64,
    pub parse: ParseStats,
    pub ring_overrun: u64,
    pub ring_dropped: u64,
}

/// CLOCK_MONOTONIC in ns (the clock of trace_clock=mono).
pub fn mono_now() -> Ns {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// "YYYY-mm-dd HH:MM:SS" in local time, as iotrack prints it.
pub fn time_str(unix_s: u64) -> String {
    // chrono reads the zone as localtime(3) does: $TZ, else /etc/localtime.
    match chrono::Local.timestamp_opt(unix_s as i64, 0).earliest() {
        Some(t) => t.format("%Y-%m-%d %H:%M:%S").to_string(),
        // out of chrono's range (hundreds of thousands of years away)
        None => "0000-00-00 00:00:00".to_string(),
    }
}

/// First 11 fields of /sys/class/block/DEV/stat.
pub fn read_dev_stat(dev: &str) -> [u64; 11] {
    let s = std::fs::read_to_string(tracefs::sysfs_dir(dev).join("stat")).unwrap_or_default();
    let mut f = [0u64; 11];
    for (k, v) in s.split_whitespace().take(11).enumerate() {
        f[k] = v.parse().unwrap_or(0);
    }
    f
}

fn default_devices() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/sys/block")
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().join("trace/enable").exists())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Names for events from the live parser: ids via the host hierarchy, paths
/// (blk_cgname traces) via the parser's table.
struct LiveNames<'a> {
    host: &'a mut HostCgroupNames,
    parser: &'a LineParser,
}

impl CgroupNames for LiveNames<'_> {
    fn name_of(&mut self, cg: CgRef) -> Option<String> {
        match cg {
            CgRef::Path(i) => self.parser.path(i).map(|s| s.to_string()),
            other => self.host.name_of(other),
        }
    }
}

trait Sink {
    fn event(&mut self, ev: &Event, names: &mut dyn CgroupNames) -> Result<()>;
    fn lost(&mut self, t: Ns, n: u64) -> Result<()>;
    /// Returns false to stop.
    fn tick(&mut self, t: Ns, unix_s: u64, ring: (u64, u64)) -> Result<bool>;
}

struct LiveStats {
    parse: ParseStats,
    ring: (u64, u64),
}

/// What a live trace session watches and when it ends.
struct Live<'a> {
    devices: &'a [String],
    buffer_size_kb: u32,
    act_mask: &'a Option<String>,
    stop: &'a Option<Arc<AtomicBool>>,
    ready: &'a Option<Arc<AtomicBool>>,
    tick: Duration,
    deadline: Option<Duration>,
}

/// The trace loop shared by `top` and `record`.
fn run_live(live: Live<'_>, sink: &mut dyn Sink) -> Result<LiveStats> {
    let Live {
        devices,
        buffer_size_kb,
        act_mask,
        stop,
        ready,
        tick,
        deadline,
    } = live;
    let devs = if devices.is_empty() {
        default_devices()
    } else {
        devices.to_vec()
    };
    let _sig = tracefs::install_signal_handlers();
    let mut bt = BlkTrace::start(&TraceConfig {
        devices: devs,
        buffer_size_kb,
        act_mask: act_mask.clone(),
    })?;
    let ring0 = bt.buffer_losses();
    let mut host = HostCgroupNames::new(detect_layout().map(|l| l.root().to_path_buf()));
    let mut parser = LineParser::new();
    let mut pipe = bt.open_pipe()?;
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
    let start = Instant::now();
    let ring_now = |bt: &BlkTrace| {
        let r = bt.buffer_losses();
        (r.0.saturating_sub(ring0.0), r.1.saturating_sub(ring0.1))
    };
    if let Some(r) = ready {
        r.store(true, Ordering::SeqCst);
    }
    let mut next_tick = start;
    let result: Result<()> = (|| loop {
        let n = pipe.read_available(&mut buf)?;
        consume_lines(&mut buf, &mut parser, &mut host, sink, false)?;
        let stopping = tracefs::stop_requested()
            || stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst))
            || deadline.is_some_and(|d| start.elapsed() >= d);
        if stopping {
            return Ok(());
        }
        let now = Instant::now();
        if now >= next_tick {
            if !sink.tick(mono_now(), unix_now(), ring_now(&bt))? {
                return Ok(());
            }
            next_tick += tick;
            if next_tick < now {
                next_tick = now + tick;
            }
        }
        if n == 0 {
            let wait = next_tick
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(20));
            std::thread::sleep(wait);
        }
    })();
    // stop and drain what is left, then account it and put tracefs back
    bt.stop();
    if result.is_ok() {
        for _ in 0..50 {
            if pipe.read_available(&mut buf)? == 0 {
                break;
            }
        }
        consume_lines(&mut buf, &mut parser, &mut host, sink, true)?;
    }
    let ring = ring_now(&bt);
    // one last tick so that the drained tail is reported (top) / sampled (record)
    let result = result.and_then(|_| sink.tick(mono_now(), unix_now(), ring).map(|_| ()));
    drop(pipe);
    let restored = bt.restore();
    result?;
    restored?;
    Ok(LiveStats {
        parse: parser.stats,
        ring,
    })
}

fn consume_lines(
    buf: &mut Vec<u8>,
    parser: &mut LineParser,
    host: &mut HostCgroupNames,
    sink: &mut dyn Sink,
    all: bool,
) -> Result<()> {
    let end = if all {
        buf.len()
    } else {
        buf.iter()
            .rposition(|b| *b == b'\n')
            .map(|p| p + 1)
            .unwrap_or(0)
    };
    if end == 0 {
        return Ok(());
    }
    let mut pos = 0;
    while pos < end {
        let nl = buf[pos..end]
            .iter()
            .position(|b| *b == b'\n')
            .map(|k| pos + k)
            .unwrap_or(end);
        let line = &buf[pos..nl];
        pos = nl + 1;
        let Ok(line) = std::str::from_utf8(line) else {
            parser.stats.lines += 1;
            parser.stats.malformed += 1;
            continue;
        };
        match parser.parse_line(line) {
            Ok(Parsed::Event(ev)) => {
                let mut names = LiveNames { host, parser };
                sink.event(&ev, &mut names)?;
            }
            Ok(Parsed::Lost { events, .. }) => sink.lost(mono_now(), events)?,
            _ => {}
        }
    }
    buf.drain(..end.min(buf.len()));
    Ok(())
}

/// Accounting + report state shared by live `top` and `top_from_file`.
struct Reporter<'w> {
    acct: Accountant,
    devices: Vec<(u32, String)>,
    cgroups: Vec<String>,
    extended: bool,
    out: &'w mut dyn Write,
    prev: Option<(Ns, Vec<Sample>)>,
    count: Option<u64>,
    intervals: u64,
    lost_notices: u64,
    ring: (u64, u64),
}

impl Reporter<'_> {
    fn report(&mut self, t: Ns, unix_s: u64, stats: Vec<(u32, [u64; 11])>) -> Result<bool> {
        // `count` intervals were printed: the final tick after the drain
        // (run_live) must not add one more
        if self.count.is_some_and(|c| self.intervals >= c) {
            return Ok(false);
        }
        self.acct.sweep(t);
        let mut cur = Vec::new();
        for (dev, name) in &self.devices {
            let fields = stats
                .iter()
                .find(|s| s.0 == *dev)
                .map(|s| s.1)
                .unwrap_or([0; 11]);
            cur.push(Sample {
                time_ns: t,
                dev_name: name.clone(),
                dev: fields,
                cgroups: self.acct.snapshot(*dev, &self.cgroups),
            });
        }
        if let Some((pt, prev)) = &self.prev {
            let ms = t.saturating_sub(*pt) as f64 / 1e6;
            let text = format_interval(prev, &cur, ms, self.extended, &time_str(unix_s));
            let io = |e| HostError::io("<output>", e);
            self.out.write_all(text.as_bytes()).map_err(io)?;
            let s = &self.acct.stats;
            let losses = self.lost_notices + self.ring.0 + self.ring.1;
            if losses + s.unmatched_complete + s.evicted_stale + s.dropped_full + s.replaced > 0 {
                writeln!(
                    self.out,
                    "# trace losses: lost={} overrun={} dropped={}; unmatched C={} D={}; evicted={} full={} replaced={}\n",
                    self.lost_notices,
                    self.ring.0,
                    self.ring.1,
                    s.unmatched_complete,
                    s.unmatched_issue,
                    s.evicted_stale,
                    s.dropped_full,
                    s.replaced
                )
                .map_err(io)?;
            }
            self.out.flush().map_err(io)?;
            self.intervals += 1;
        }
        self.prev = Some((t, cur));
        Ok(self.count.is_none_or(|c| self.intervals < c))
    }
}

struct TopSink<'w> {
    rep: Reporter<'w>,
}

impl Sink for TopSink<'_> {
    fn event(&mut self, ev: &Event, names: &mut dyn CgroupNames) -> Result<()> {
        self.rep.acct.feed(ev, names);
        Ok(())
    }
    fn lost(&mut self, _t: Ns, n: u64) -> Result<()> {
        self.rep.lost_notices += n;
        Ok(())
    }
    fn tick(&mut self, t: Ns, unix_s: u64, ring: (u64, u64)) -> Result<bool> {
        self.rep.ring = ring;
        let stats = self
            .rep
            .devices
            .iter()
            .map(|(d, n)| (*d, read_dev_stat(n)))
            .collect();
        self.rep.report(t, unix_s, stats)
    }
}

fn resolve_devices(names: &[String]) -> Result<Vec<(u32, String)>> {
    let names = if names.is_empty() {
        default_devices()
    } else {
        names.to_vec()
    };
    names
        .iter()
        .map(|n| Ok((tracefs::dev_number(n)?, n.clone())))
        .collect()
}

/// Live per-cgroup report (iotrack layout) for `opts.devices`, written to `out`.
pub fn top(opts: &TopOptions, out: &mut dyn Write) -> Result<TopSummary> {
    let devices = resolve_devices(&opts.devices)?;
    let dev_names: Vec<String> = devices.iter().map(|d| d.1.clone()).collect();
    let mut sink = TopSink {
        rep: Reporter {
            acct: Accountant::new(AccountConfig {
                thresh: opts.thresh,
                max_pending: opts.max_pending,
                stale_ns: opts.stale_ns,
            }),
            devices,
            cgroups: opts.cgroups.clone(),
            extended: opts.extended,
            out,
            prev: None,
            count: opts.count,
            intervals: 0,
            lost_notices: 0,
            ring: (0, 0),
        },
    };
    let live = run_live(
        Live {
            devices: &dev_names,
            buffer_size_kb: opts.buffer_size_kb,
            act_mask: &opts.act_mask,
            stop: &opts.stop,
            ready: &opts.ready,
            tick: Duration::from_millis(opts.interval_ms.max(1)),
            deadline: None,
        },
        &mut sink,
    )?;
    let r = sink.rep;
    Ok(TopSummary {
        intervals: r.intervals,
        parse: live.parse,
        account: r.acct.stats,
        ring_overrun: live.ring.0,
        ring_dropped: live.ring.1,
        last: r.prev.map(|p| p.1).unwrap_or_default(),
    })
}

struct RecordSink<W: Write> {
    w: RecordWriter<W>,
    devices: Vec<(u32, String)>,
}

impl<W: Write> Sink for RecordSink<W> {
    fn event(&mut self, ev: &Event, names: &mut dyn CgroupNames) -> Result<()> {
        self.w
            .event(ev, names)
            .map_err(|e| HostError::io("<recording>", e))
    }
    fn lost(&mut self, t: Ns, n: u64) -> Result<()> {
        self.w
            .lost(t, n)
            .map_err(|e| HostError::io("<recording>", e))
    }
    fn tick(&mut self, t: Ns, _unix_s: u64, ring: (u64, u64)) -> Result<bool> {
        let io = |e| HostError::io("<recording>", e);
        for (d, n) in &self.devices {
            self.w.stat(t, *d, n, &read_dev_stat(n)).map_err(io)?;
        }
        if ring != (0, 0) {
            self.w.ring(t, ring.0, ring.1).map_err(io)?;
        }
        Ok(true)
    }
}

/// Record trace events (and device stat samples) to `opts.output`.
pub fn record(opts: &RecordOptions) -> Result<RecordSummary> {
    let devices = resolve_devices(&opts.devices)?;
    let dev_names: Vec<String> = devices.iter().map(|d| d.1.clone()).collect();
    let f = std::fs::File::create(&opts.output).map_err(|e| HostError::io(&opts.output, e))?;
    let io = |e| HostError::io(&opts.output, e);
    let mut w =
        RecordWriter::new(std::io::BufWriter::new(f), mono_now(), unix_now()).map_err(io)?;
    for (d, n) in &devices {
        w.device(*d, n).map_err(io)?;
    }
    let mut sink = RecordSink { w, devices };
    let live = run_live(
        Live {
            devices: &dev_names,
            buffer_size_kb: opts.buffer_size_kb,
            act_mask: &opts.act_mask,
            stop: &opts.stop,
            ready: &opts.ready,
            tick: Duration::from_millis(opts.stat_interval_ms.max(1)),
            deadline: opts.duration_ms.map(Duration::from_millis),
        },
        &mut sink,
    )?;
    let events = sink.w.events;
    sink.w.finish().map_err(io)?;
    Ok(RecordSummary {
        events,
        parse: live.parse,
        ring_overrun: live.ring.0,
        ring_dropped: live.ring.1,
    })
}

/// One recorded tick: its time and each device's (index, stat fields).
type StatTick = (Ns, Vec<(u32, [u64; 11])>);

/// The `top` report from a recording: one interval per recorded stat tick
/// (`opts.interval_ms` is not used; the recorded period is: the CLI refuses
/// an explicit `--interval` with `--from`). `devices`, when not empty,
/// selects recorded devices (each must be in the recording); `cgroups`,
/// `count`, `extended`, `thresh`, `max_pending`, `stale_ns` apply as live.
pub fn top_from_file(path: &Path, opts: &TopOptions, out: &mut dyn Write) -> Result<TopSummary> {
    let mut rd = RecordReader::open(path)?;
    // the devices `--device` names, each of which must be in the recording
    // (a recording defines its devices before its first tick)
    let keep = |devices: &[(u32, String)]| -> Result<Vec<(u32, String)>> {
        if opts.devices.is_empty() {
            return Ok(devices.to_vec());
        }
        opts.devices
            .iter()
            .map(|want| {
                devices
                    .iter()
                    .find(|d| &d.1 == want)
                    .cloned()
                    .ok_or_else(|| not_recorded(path, want, devices))
            })
            .collect()
    };
    let mut rep = Reporter {
        acct: Accountant::new(AccountConfig {
            thresh: opts.thresh,
            max_pending: opts.max_pending,
            stale_ns: opts.stale_ns,
        }),
        devices: Vec::new(),
        cgroups: opts.cgroups.clone(),
        extended: opts.extended,
        out,
        prev: None,
        count: opts.count,
        intervals: 0,
        lost_notices: 0,
        ring: (0, 0),
    };
    let mut group: Option<StatTick> = None;
    let mut go = true;
    while go {
        let item = rd.next_item()?;
        // a run of stat lines with one timestamp is one tick
        let same_tick = matches!((&item, &group), (Some(Item::Stat { time_ns, .. }), Some((t, _))) if time_ns == t);
        if !same_tick {
            if let Some((t, stats)) = group.take() {
                rep.devices = keep(&rd.devices)?;
                let unix = rd.start_unix_s + t.saturating_sub(rd.start_mono_ns) / 1_000_000_000;
                go = rep.report(t, unix, stats)?;
                if !go {
                    break;
                }
            }
        }
        match item {
            None => break,
            Some(Item::Event(ev)) => {
                let mut names = RecordedNames(&rd.cgroups);
                rep.acct.feed(&ev, &mut names);
            }
            Some(Item::Stat {
                time_ns,
                dev,
                fields,
            }) => {
                group
                    .get_or_insert((time_ns, Vec::new()))
                    .1
                    .push((dev, fields));
            }
            Some(Item::Lost { events, .. }) => rep.lost_notices += events,
            Some(Item::Ring {
                overrun, dropped, ..
            }) => rep.ring = (overrun, dropped),
            Some(Item::End { .. }) => {}
        }
    }
    keep(&rd.devices)?;
    Ok(TopSummary {
        intervals: rep.intervals,
        parse: ParseStats::default(),
        account: rep.acct.stats,
        ring_overrun: rep.ring.0,
        ring_dropped: rep.ring.1,
        last: rep.prev.map(|p| p.1).unwrap_or_default(),
    })
}

/// The error for a `--device` the recording does not have.
fn not_recorded(path: &Path, want: &str, devices: &[(u32, String)]) -> HostError {
    let have: Vec<&str> = devices.iter().map(|d| d.1.as_str()).collect();
    HostError::Device {
        dev: want.to_string(),
        msg: format!(
            "not in the recording {} (its devices: {})",
            path.display(),
            if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::time_str;

    /// The local time as localtime(3) gives it (zone from $TZ, else
    /// /etc/localtime), checked against date(1).
    #[test]
    fn time_str_is_the_local_time_date_prints() {
        let Ok(o) = std::process::Command::new("date")
            .args(["-d", "@1700000000", "+%Y-%m-%d %H:%M:%S"])
            .output()
        else {
            eprintln!("SKIP: no date(1)");
            return;
        };
        let want = String::from_utf8_lossy(&o.stdout).trim().to_string();
        assert_eq!(time_str(1_700_000_000), want);
    }
}
