//! Writing fio's logs as a job runs: one [`JobLogs`] per job, fed each
//! completed I/O, writing lines as fio 3.33 does (`flush_samples`,
//! `flush_hist_samples` in iolog.c). Nothing per I/O is kept: averaged logs
//! hold one window per direction, the histogram log two histograms.

use std::io::{self, Write};

use super::{LogKind, LogOptions};
use crate::stats::{PlatHist, PLAT_NR};

/// One completed I/O as the logs see it.
#[derive(Clone, Copy, Debug)]
pub struct IoSample {
    /// ms since the job's epoch (fio's `mtime_since_now(&td->epoch)`).
    pub elapsed_ms: u64,
    pub ddir: u8,
    pub bytes: u64,
    pub offset: u64,
    /// The io_u's ioprio value (class << 13 | level).
    pub prio: u16,
    pub slat_ns: Option<u64>,
    pub clat_ns: u64,
    pub lat_ns: u64,
}

/// fio's `ioprio_value_is_class_rt`: what the prio column shows without `log_prio`.
fn prio_column(o: &LogOptions, prio: u16) -> String {
    if o.log_prio {
        format!("0x{prio:04x}")
    } else {
        u32::from(prio >> 13 == 1).to_string()
    }
}

/// One entry line of a value log (`flush_samples`' formats).
fn line(o: &LogOptions, t: u64, val: u64, ddir: u8, bs: u64, offset: u64, prio: u16) -> String {
    let p = prio_column(o, prio);
    if o.log_offset {
        format!("{t}, {val}, {ddir}, {bs}, {offset}, {p}\n")
    } else {
        format!("{t}, {val}, {ddir}, {bs}, {p}\n")
    }
}

/// A window of samples being averaged (`iolog->avg_window[ddir]`).
#[derive(Clone, Copy, Debug, Default)]
struct Window {
    n: u64,
    sum: u128,
    max: u64,
}

/// A clat/slat/lat log: every sample, or averaged over `avg_msec`
/// (`add_log_sample` for an inline log).
struct ValueLog<W> {
    out: W,
    win: [Window; 2],
    avg_last: [u64; 2],
}

impl<W: Write> ValueLog<W> {
    /// Mirrors `add_log_sample` (stat.c) for logs written from the I/O path.
    fn add(&mut self, o: &LogOptions, s: &IoSample, val: u64) -> io::Result<()> {
        let d = s.ddir as usize;
        if o.avg_msec == 0 {
            let off = s.offset;
            return self
                .out
                .write_all(line(o, s.elapsed_ms, val, s.ddir, s.bytes, off, s.prio).as_bytes());
        }
        let w = &mut self.win[d];
        w.n += 1;
        w.sum += val as u128;
        w.max = w.max.max(val);
        let e = s.elapsed_ms;
        if e < self.avg_last[d] || e - self.avg_last[d] < o.avg_msec {
            return Ok(());
        }
        self.flush_dir(o, d, e)?;
        self.avg_last[d] = e - e % o.avg_msec;
        Ok(())
    }

    /// `__add_stat_to_log`: the window's mean (rounded) or maximum, if it has samples.
    fn flush_dir(&mut self, o: &LogOptions, d: usize, t: u64) -> io::Result<()> {
        let w = std::mem::take(&mut self.win[d]);
        if w.n == 0 {
            return Ok(());
        }
        let v = if o.log_max {
            w.max
        } else {
            ((w.sum as f64 / w.n as f64) + 0.5) as u64
        };
        self.out
            .write_all(line(o, t, v, d as u8, 0, 0, 0).as_bytes())
    }
}

/// The bandwidth or IOPS log. Per I/O without `log_avg_msec`
/// (`add_bw_sample`/`add_iops_sample`); else one entry per window and
/// direction with I/O in it (`__add_samples`, run by fio's helper thread at
/// each window's end — here exactly at the end).
struct RateLog<W> {
    out: W,
    bw: bool,
    win_ms: u64,
    /// End of the last window written, ms.
    last_ms: u64,
    amount: [u64; 2],
}

impl<W: Write> RateLog<W> {
    fn tick(&mut self, o: &LogOptions, now_ms: u64) -> io::Result<()> {
        if self.win_ms == 0 {
            return Ok(());
        }
        while now_ms >= self.last_ms + self.win_ms {
            let end = self.last_ms + self.win_ms;
            for d in 0..2 {
                let delta = std::mem::take(&mut self.amount[d]);
                if delta == 0 {
                    continue;
                }
                let rate = if self.bw {
                    delta * 1000 / self.win_ms / 1024
                } else {
                    delta * 1000 / self.win_ms
                };
                let l = line(o, end, rate, d as u8, 0, 0, 0);
                self.out.write_all(l.as_bytes())?;
            }
            self.last_ms = end;
        }
        Ok(())
    }

    fn add(&mut self, o: &LogOptions, s: &IoSample) -> io::Result<()> {
        if self.win_ms > 0 {
            self.tick(o, s.elapsed_ms)?;
            self.amount[s.ddir as usize] += if self.bw { s.bytes } else { 1 };
            return Ok(());
        }
        let val = if self.bw {
            // add_bw_sample: bytes over the I/O's whole latency
            if s.lat_ns > 0 {
                s.bytes * 1_000_000 / s.lat_ns
            } else {
                0
            }
        } else {
            1
        };
        let l = line(o, s.elapsed_ms, val, s.ddir, s.bytes, s.offset, s.prio);
        self.out.write_all(l.as_bytes())
    }
}

/// The clat histogram log (`add_clat_sample`'s hist part): every
/// `log_hist_msec`, the per-bin counts since the previous entry.
struct HistLog<W> {
    out: W,
    cum: [PlatHist; 2],
    before: [Vec<u64>; 2],
    hist_last: [u64; 2],
}

impl<W: Write> HistLog<W> {
    fn add(&mut self, o: &LogOptions, s: &IoSample) -> io::Result<()> {
        let d = s.ddir as usize;
        self.cum[d].add(s.clat_ns);
        if o.hist_msec == 0 {
            return Ok(());
        }
        let e = s.elapsed_ms;
        if self.hist_last[d] == 0 {
            self.hist_last[d] = e;
        }
        let win = e - self.hist_last[d].min(e);
        if win < o.hist_msec {
            return Ok(());
        }
        let now = self.cum[d].counts();
        let stride = 1usize << o.hist_coarseness.min(20);
        let sum = |j: usize| -> u64 {
            (j..(j + stride).min(PLAT_NR))
                .map(|k| now[k] - self.before[d][k])
                .sum()
        };
        let mut l = format!("{e}, {d}, {}, ", s.bytes);
        let last = PLAT_NR.saturating_sub(stride);
        let mut j = 0;
        while j < last {
            l.push_str(&format!("{}, ", sum(j)));
            j += stride;
        }
        l.push_str(&format!("{}\n", sum(last)));
        self.out.write_all(l.as_bytes())?;
        self.before[d] = now;
        self.hist_last[d] = e - (win - o.hist_msec);
        Ok(())
    }
}

/// Every log of one job.
pub struct JobLogs<W> {
    opts: LogOptions,
    values: Vec<(LogKind, ValueLog<W>)>,
    rates: Vec<RateLog<W>>,
    hist: Option<HistLog<W>>,
}

impl<W: Write> JobLogs<W> {
    /// The logs of a job whose options are `opts`, writing to the outputs
    /// `open` gives for each kind (in [`super::job_logs`] order).
    /// `bw_avg_ms`/`iops_avg_ms` are the windows of the rate logs, which
    /// start `start_ms` after the epoch (the end of ramp_time).
    pub fn new(
        opts: &LogOptions,
        kinds: &[LogKind],
        (bw_avg_ms, iops_avg_ms): (u64, u64),
        start_ms: u64,
        mut open: impl FnMut(LogKind) -> io::Result<W>,
    ) -> io::Result<JobLogs<W>> {
        let mut j = JobLogs {
            opts: opts.clone(),
            values: Vec::new(),
            rates: Vec::new(),
            hist: None,
        };
        for &k in kinds {
            let out = open(k)?;
            match k {
                LogKind::Clat | LogKind::Slat | LogKind::Lat => j.values.push((
                    k,
                    ValueLog {
                        out,
                        win: Default::default(),
                        avg_last: [0; 2],
                    },
                )),
                LogKind::Bw | LogKind::Iops => j.rates.push(RateLog {
                    out,
                    bw: k == LogKind::Bw,
                    win_ms: if opts.avg_msec == 0 {
                        0
                    } else if k == LogKind::Bw {
                        bw_avg_ms
                    } else {
                        iops_avg_ms
                    },
                    last_ms: start_ms,
                    amount: [0; 2],
                }),
                LogKind::ClatHist => {
                    j.hist = Some(HistLog {
                        out,
                        cum: Default::default(),
                        before: [vec![0; PLAT_NR], vec![0; PLAT_NR]],
                        hist_last: [0; 2],
                    })
                }
            }
        }
        Ok(j)
    }

    /// One completed I/O (fio's `io_completed`: slat was logged at submit,
    /// clat, lat, bw, iops and the histogram at completion).
    pub fn io(&mut self, s: &IoSample) -> io::Result<()> {
        let o = &self.opts;
        for (k, l) in self.values.iter_mut() {
            let v = match k {
                LogKind::Clat => Some(s.clat_ns),
                LogKind::Lat => Some(s.lat_ns),
                _ => s.slat_ns,
            };
            if let Some(v) = v {
                l.add(o, s, v)?;
            }
        }
        for r in self.rates.iter_mut() {
            r.add(o, s)?;
        }
        if let Some(h) = self.hist.as_mut() {
            h.add(o, s)?;
        }
        Ok(())
    }

    /// The job ended `elapsed_ms` after its epoch: fio's `finalize_logs`
    /// (partial windows of the I/O-path logs are written), then flush.
    pub fn finish(&mut self, elapsed_ms: u64) -> io::Result<()> {
        let o = &self.opts;
        for (_, l) in self.values.iter_mut() {
            if o.avg_msec > 0 {
                for d in 0..2 {
                    l.flush_dir(o, d, elapsed_ms)?;
                }
            }
            l.out.flush()?;
        }
        for r in self.rates.iter_mut() {
            r.tick(o, elapsed_ms)?;
            r.out.flush()?;
        }
        if let Some(h) = self.hist.as_mut() {
            h.out.flush()?;
        }
        Ok(())
    }
}
