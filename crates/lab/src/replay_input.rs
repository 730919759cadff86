//! Recorded workloads in scenarios: a `[[job]]` with `replay = "FILE"` takes
//! one cgroup's I/O stream from a `blklab record` file (time, direction,
//! sector, length of each Q event) and replays it into the simulator as an
//! fio-like job (blklab_core::workload::replay).

use std::path::Path;

use anyhow::{anyhow, Result};
use blklab_core::workload::replay::{Replay, ReplayIo, ReplayTiming};
use blklab_core::{JobConfig, Sim};
use blklab_host::events::OpClass;

/// A replaying job of a scenario.
#[derive(Clone, Debug)]
pub struct ReplayJob {
    /// Index into `SimConfig::jobs`.
    pub job: usize,
    pub replay: Replay,
    /// Recorded I/Os that are neither reads nor writes (flush, discard): not replayed.
    pub skipped_other: usize,
}

/// The stream of `cgroup` (on `device`, needed when the recording has
/// several) from a recording, as replay I/Os. Returns the I/Os and how many
/// "other" I/Os were left out.
pub fn load_stream(
    path: &Path,
    cgroup: &str,
    device: Option<&str>,
) -> Result<(Vec<ReplayIo>, usize), String> {
    let rec = blklab_host::read_recording(path).map_err(|e| e.to_string())?;
    let stream = rec
        .cgroups
        .iter()
        .find(|c| c.path == cgroup)
        .ok_or_else(|| {
            let have: Vec<&str> = rec.cgroups.iter().map(|c| c.path.as_str()).collect();
            format!(
                "the recording has no I/O from cgroup {cgroup} (cgroups with I/O: {})",
                if have.is_empty() {
                    "none".to_string()
                } else {
                    have.join(", ")
                }
            )
        })?;
    let dev_idx = match device {
        Some(d) => Some(rec.devices.iter().position(|n| n == d).ok_or_else(|| {
            format!(
                "the recording has no device {d} (devices: {})",
                rec.devices.join(", ")
            )
        })? as u32),
        None => {
            let mut used: Vec<u32> = stream.ios.iter().map(|i| i.dev).collect();
            used.sort_unstable();
            used.dedup();
            if used.len() > 1 {
                let names: Vec<&str> = used
                    .iter()
                    .filter_map(|&i| rec.devices.get(i as usize).map(|s| s.as_str()))
                    .collect();
                return Err(format!(
                    "cgroup {cgroup} did I/O on several devices ({}): say which with replay_device",
                    names.join(", ")
                ));
            }
            None
        }
    };
    let mut ios = Vec::with_capacity(stream.ios.len());
    let mut other = 0;
    for io in &stream.ios {
        if dev_idx.is_some_and(|d| d != io.dev) {
            continue;
        }
        let write = match io.op {
            OpClass::Read => false,
            OpClass::Write => true,
            OpClass::Other => {
                other += 1;
                continue;
            }
        };
        let bytes = u32::try_from(io.bytes)
            .map_err(|_| format!("an I/O of {} bytes is too large to replay", io.bytes))?;
        if bytes == 0 {
            other += 1;
            continue;
        }
        ios.push(ReplayIo {
            time_ns: io.time_ns,
            write,
            offset: io.sector * 512,
            bytes,
        });
    }
    Ok((ios, other))
}

/// Hand every replaying job its stream. `jobs` are the scenario's job
/// instances (`SimConfig::jobs`), which `ReplayJob::job` indexes; taking them
/// rather than the scenario keeps this module below the scenario loader,
/// which builds the `ReplayJob`s.
pub fn attach(replays: &[ReplayJob], jobs: &[JobConfig], sim: &mut Sim) -> Result<()> {
    for r in replays {
        sim.set_replay(r.job as u32, r.replay.clone())
            .map_err(|e| anyhow!("replay job {}: {e}", jobs[r.job].spec.name))?;
    }
    Ok(())
}

/// Parse a `timing` value.
pub fn timing(s: &str) -> Result<ReplayTiming, String> {
    s.parse()
}
