//! A scenario's `[[job]]` entries: one fio invocation each, given as a
//! command line, a job file, inline job text or a recorded stream to
//! replay, placed in its cgroup and on its device. See docs/scenario.md.

use std::path::{Path, PathBuf};

use blklab_core::block::blk_cgroup::CgroupTree;
use blklab_core::{DeviceConfig, JobConfig};
use blklab_fio::JobSpec;
use serde::Deserialize;
use toml::Spanned;

use super::{Builder, Invocation, DEFAULT_REPLAY_IODEPTH};
use crate::limits;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct RawJob {
    /// Label for the summary table (default: the fio job name).
    label: Option<String>,
    cgroup: Option<Spanned<String>>,
    pub(super) device: Option<Spanned<String>>,
    /// A fio command line (`--name=x --rw=randread ...`).
    cmdline: Option<Spanned<String>>,
    /// A fio job file, relative to the scenario file.
    job_file: Option<Spanned<String>>,
    /// fio job-file text inline.
    job_ini: Option<Spanned<String>>,
    /// Where to write this invocation's fio JSON (like fio's --output).
    output: Option<String>,
    /// A `blklab record` file whose I/O stream (of `replay_cgroup`) is the workload.
    replay: Option<Spanned<String>>,
    /// The recorded cgroup to replay (its path in the recording).
    replay_cgroup: Option<Spanned<String>>,
    /// The recorded device, when the cgroup used several.
    replay_device: Option<Spanned<String>>,
    /// "original" (recorded instants) or "asfast" (as fast as the queue depth allows).
    timing: Option<Spanned<String>>,
    /// The run phase this job belongs to (crate::phases).
    pub(super) phase: Option<Spanned<String>>,
}

impl Builder<'_> {
    pub(super) fn job(
        &mut self,
        ji: usize,
        j: &RawJob,
        base: &Path,
        (devices, declared): (&[DeviceConfig], usize),
        cgroups: &mut CgroupTree,
        jobs: &mut Vec<JobConfig>,
    ) -> Option<Invocation> {
        let sources = [
            j.cmdline.is_some(),
            j.job_file.is_some(),
            j.job_ini.is_some(),
        ]
        .iter()
        .filter(|x| **x)
        .count();
        let where_ = format!("{}: [[job]] #{}", self.src.name, ji + 1);
        if j.replay.is_none() {
            for (k, v) in [
                ("replay_cgroup", &j.replay_cgroup),
                ("replay_device", &j.replay_device),
                ("timing", &j.timing),
            ] {
                if let Some(v) = v {
                    return self.err(
                        &v.span(),
                        format!("{k} is only for a job with replay = \"FILE\""),
                    );
                }
            }
        }
        if sources != 1 && !(j.replay.is_some() && sources == 0) {
            self.errs.push(format!(
                "{where_}: give exactly one of cmdline, job_file or job_ini{}",
                if j.replay.is_some() {
                    " (or none: a replay job has fio defaults)"
                } else {
                    ""
                }
            ));
            return None;
        }
        if let Some(l) = &j.label {
            if let Err(e) = limits::name("label", l) {
                self.errs.push(format!("{where_}: {e}"));
                return None;
            }
        }
        // the device first: its error is reported even when the fio input
        // has one too; a device that failed its own check is not named again
        let dev = self.job_device(&where_, j, devices, declared);
        let specs: Vec<JobSpec> = if let (Some(r), 0) = (&j.replay, sources) {
            // a replay job without fio options: libaio, direct, a deep queue so
            // that the recorded arrival times, not fio, pace the stream
            let name = j.label.clone().unwrap_or_else(|| "replay".into());
            let cmd = format!(
                "--name={name} --ioengine=libaio --direct=1 --rw=randrw --bs=4k --iodepth={DEFAULT_REPLAY_IODEPTH}"
            );
            match blklab_fio::parse::split_cmdline(&cmd)
                .and_then(|a| blklab_fio::parse::parse_cmdline(&a))
            {
                Ok(s) => s,
                Err(e) => return self.err(&r.span(), format!("replay job name: {e}")),
            }
        } else if let Some(c) = &j.cmdline {
            let parsed = blklab_fio::parse::split_cmdline(c.get_ref())
                .and_then(|a| blklab_fio::parse::parse_cmdline(&a));
            match parsed {
                Ok(s) => s,
                Err(e) => return self.err(&c.span(), e.to_string()),
            }
        } else if let Some(f) = &j.job_file {
            let p = base.join(f.get_ref());
            let text =
                match blklab_input::read_text(&p, "job file", blklab_input::MAX_JOB_FILE_BYTES) {
                    Ok(t) => t,
                    Err(e) => return self.err(&f.span(), format!("job_file: {e}")),
                };
            match blklab_fio::parse::parse_job_file(&text, &p.display().to_string()) {
                Ok(s) => s,
                Err(e) => return self.err(&f.span(), format!("{e}")),
            }
        } else {
            let t = j.job_ini.as_ref().expect("one source");
            let origin = format!(
                "{} (job_ini at line {})",
                self.src.name,
                self.src.line_col(t.span().start).0
            );
            match blklab_fio::parse::parse_job_file(t.get_ref(), &origin) {
                Ok(s) => s,
                Err(e) => return self.err(&t.span(), format!("{e}")),
            }
        };
        if specs.is_empty() {
            self.errs
                .push(format!("{where_}: the fio input defines no job"));
            return None;
        }
        let dev = dev?;
        for sp in &specs {
            if let Err(e) = limits::name("fio job name", &sp.name) {
                self.errs.push(format!("{where_}: {e}"));
                return None;
            }
        }
        let instances: usize = specs.iter().map(|sp| sp.numjobs.max(1) as usize).sum();
        if jobs.len() + instances > limits::MAX_JOB_INSTANCES {
            self.errs.push(format!(
                "{where_}: {} job instances in the scenario so far; at most {}",
                jobs.len() + instances,
                limits::MAX_JOB_INSTANCES
            ));
            return None;
        }
        // a replay job runs in the recorded cgroup unless told otherwise
        let cg_path = j
            .cgroup
            .as_ref()
            .or(j.replay_cgroup.as_ref().filter(|_| j.replay.is_some()))
            .map(|c| c.get_ref().clone())
            .unwrap_or_else(|| "/".into());
        let cg = match limits::ensure_cgroup(cgroups, &cg_path) {
            Ok(c) => c,
            Err(e) => {
                let span = j
                    .cgroup
                    .as_ref()
                    .or(j.replay_cgroup.as_ref())
                    .map(|c| c.span())
                    .unwrap_or(0..0);
                return self.err(&span, format!("cgroup: {e}"));
            }
        };
        for s in &specs {
            if !s.ignored.is_empty() {
                self.warnings.push(format!(
                    "{where_}: job {}: options with no effect in the simulator: {}",
                    s.name,
                    s.ignored.join(", ")
                ));
            }
        }
        let mut inv = Invocation {
            label: j.label.clone(),
            output: j.output.as_ref().map(PathBuf::from),
            global_options: specs[0].global_options.clone(),
            jobs: Vec::new(),
        };
        let replay = match &j.replay {
            Some(r) => Some(self.replay_stream(r, j, base, &specs)?),
            None => None,
        };
        let gids = blklab_fio::parse::assign_groupids(&specs);
        for (s, groupid) in specs.into_iter().zip(gids) {
            for clone in 0..s.numjobs.max(1) {
                inv.jobs.push(jobs.len());
                jobs.push(JobConfig {
                    spec: s.clone(),
                    clone,
                    cgroup: cg,
                    dev: dev as u16,
                    groupid,
                });
            }
        }
        if let Some((replay, skipped_other)) = replay {
            if skipped_other > 0 {
                self.warnings.push(format!(
                    "{where_}: {skipped_other} recorded I/Os that are neither reads nor writes (flush, discard) are not replayed"
                ));
            }
            self.replays.push(crate::replay_input::ReplayJob {
                job: inv.jobs[0],
                replay,
                skipped_other,
            });
        }
        Some(inv)
    }

    /// The recorded stream of a replay job, checked.
    fn replay_stream(
        &mut self,
        r: &Spanned<String>,
        j: &RawJob,
        base: &Path,
        specs: &[JobSpec],
    ) -> Option<(blklab_core::workload::replay::Replay, usize)> {
        if specs.len() != 1 || specs[0].numjobs > 1 {
            return self.err(
                &r.span(),
                "a replay job is one fio job (no numjobs, no second [section])",
            );
        }
        let Some(cg) = &j.replay_cgroup else {
            return self.err(
                &r.span(),
                "replay needs replay_cgroup = \"/path\": the recorded cgroup whose I/O to replay",
            );
        };
        let timing = match &j.timing {
            None => blklab_core::workload::replay::ReplayTiming::Original,
            Some(t) => match crate::replay_input::timing(t.get_ref()) {
                Ok(v) => v,
                Err(e) => return self.err(&t.span(), e),
            },
        };
        let path = base.join(r.get_ref());
        let dev = j.replay_device.as_ref().map(|d| d.get_ref().as_str());
        let (ios, other) = match crate::replay_input::load_stream(&path, cg.get_ref(), dev) {
            Ok(v) => v,
            Err(e) => return self.err(&r.span(), format!("replay {}: {e}", path.display())),
        };
        match blklab_core::workload::replay::Replay::new(ios, timing) {
            Ok(rp) => Some((rp, other)),
            Err(e) => self.err(&r.span(), format!("replay {}: {e}", path.display())),
        }
    }
}
