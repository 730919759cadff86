//! fio's log files from a simulated run: the jobs' `write_*_log` options,
//! fed by the probe's completed io_us (`sim::probe::FioIo`), written by the
//! fio crate's log writers (`blklab_fio::log`).
//!
//! Where they go: fio writes its logs into its working directory; blklab
//! writes them into the run's log directory (`blklab run --fio-log-dir DIR`,
//! by default the current directory), under fio's names (`NAME_bw.N.log`,
//! N = the job's number in its fio invocation). Every file is written under
//! a temporary name and renamed when the run is over.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use anyhow::{anyhow, Context, Result};
use blklab_core::sim::probe::{FioIo, Probe, ProbeSink};
use blklab_core::RunResult;
use blklab_fio::log::writer::{IoSample, JobLogs};
use blklab_fio::log::{job_logs, LogKind};

use crate::scenario::Scenario;

/// A log file several jobs may append to (`per_job_logs=0`).
#[derive(Clone)]
pub struct Shared(Rc<RefCell<BufWriter<File>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().write(b)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.borrow_mut().flush()
    }
}

/// The logs of every job of a scenario that asks for them.
pub struct FioLogs {
    /// Per job (index into SimConfig::jobs): its logs and its epoch once seen.
    jobs: BTreeMap<usize, (JobLogs<Shared>, Option<u64>)>,
    /// (temporary, final) path of every file.
    files: Vec<(PathBuf, PathBuf)>,
    error: Option<String>,
}

impl FioLogs {
    /// The log files of the scenario's jobs in `dir`; None when no job writes logs.
    pub fn create(sc: &Scenario, dir: &Path) -> Result<Option<FioLogs>> {
        let mut open: BTreeMap<String, Shared> = BTreeMap::new();
        let mut files = Vec::new();
        let mut jobs = BTreeMap::new();
        for inv in &sc.invocations {
            for (n, &ji) in inv.jobs.iter().enumerate() {
                let spec = &sc.config.jobs[ji].spec;
                if !spec.logs.any() {
                    continue;
                }
                let names = job_logs(&spec.logs, &spec.name, n as u32 + 1);
                let kinds: Vec<LogKind> = names.iter().map(|x| x.0).collect();
                let mut by_kind = names.into_iter();
                let mut opener = |_k: LogKind| -> io::Result<Shared> {
                    let (_, name) = by_kind.next().expect("one name per kind");
                    if let Some(s) = open.get(&name) {
                        return Ok(s.clone());
                    }
                    let path = dir.join(&name);
                    let tmp = dir.join(format!(".{name}.tmp"));
                    let f = File::create(&tmp)?;
                    files.push((tmp, path));
                    let s = Shared(Rc::new(RefCell::new(BufWriter::new(f))));
                    open.insert(name, s.clone());
                    Ok(s)
                };
                let windows = (
                    spec.logs.avg_msec.min(spec.bwavgtime_ms),
                    spec.logs.avg_msec.min(spec.iopsavgtime_ms),
                );
                let start_ms = spec.ramp_time_ns / 1_000_000;
                let logs = JobLogs::new(&spec.logs, &kinds, windows, start_ms, &mut opener)
                    .with_context(|| format!("creating fio's log files in {}", dir.display()));
                let logs = match logs {
                    Ok(l) => l,
                    Err(e) => {
                        for (tmp, _) in &files {
                            let _ = std::fs::remove_file(tmp);
                        }
                        return Err(e);
                    }
                };
                jobs.insert(ji, (logs, None));
            }
        }
        if jobs.is_empty() {
            return Ok(None);
        }
        Ok(Some(FioLogs {
            jobs,
            files,
            error: None,
        }))
    }

    fn io(&mut self, t: u64, io: &FioIo) {
        let Some((logs, epoch)) = self.jobs.get_mut(&(io.job as usize)) else {
            return;
        };
        *epoch = Some(io.epoch_ns);
        let s = IoSample {
            elapsed_ms: t.saturating_sub(io.epoch_ns) / 1_000_000,
            ddir: io.ddir,
            bytes: io.bytes as u64,
            offset: io.offset,
            prio: io.prio,
            slat_ns: io.slat_ns,
            clat_ns: io.clat_ns,
            lat_ns: io.lat_ns,
        };
        if let Err(e) = logs.io(&s) {
            self.error.get_or_insert(format!("writing fio's logs: {e}"));
        }
    }

    /// The run is over: the jobs' last entries, then every file renamed into place.
    pub fn finish(&mut self, sc: &Scenario, r: &RunResult) -> Result<()> {
        for (&ji, (logs, _)) in self.jobs.iter_mut() {
            let spec = &sc.config.jobs[ji].spec;
            let end_ms = spec.ramp_time_ns / 1_000_000 + r.jobs[ji].stats.job_runtime_ms;
            if let Err(e) = logs.finish(end_ms) {
                self.error.get_or_insert(format!("writing fio's logs: {e}"));
            }
        }
        if let Some(e) = self.error.take() {
            for (tmp, _) in &self.files {
                let _ = std::fs::remove_file(tmp);
            }
            return Err(anyhow!(e));
        }
        for (tmp, path) in &self.files {
            std::fs::rename(tmp, path)
                .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
        }
        Ok(())
    }
}

/// The logs behind a shared handle, as the simulator's probe.
pub struct Handle(pub Rc<RefCell<FioLogs>>);

impl ProbeSink for Handle {
    fn sample(&mut self, t: u64, p: &Probe<'_>) {
        if let Probe::FioIo(io) = p {
            self.0.borrow_mut().io(t, io);
        }
    }
}
