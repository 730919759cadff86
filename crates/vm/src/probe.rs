//! The `guest_info` case: what the booted kernel offers the cgroup I/O
//! cases, so a caller can say "cannot run under this kernel because …".
//!
//! It mirrors the host harness's probe (crates/cli/src/conformance/env.rs)
//! for the guest: the io controller in cgroup v2, blk-iocost's root files,
//! the per-cgroup io.* files (io.weight, io.max, io.bfq.weight, io.latency),
//! whether a loop device over tmpfs does direct I/O, and which tracepoints
//! exist.

use std::collections::BTreeMap;

use crate::error::{Result, VmError};
use crate::protocol::CaseSpec;

/// The probe's case name.
pub const GUEST_INFO: &str = "guest_info";

/// Tracepoint subsystems listed by the probe.
pub const TRACE_SUBSYSTEMS: &[&str] = &["iocost", "block", "wbt"];

const SCRIPT: &str = r#". /blklab/lib.sh
echo "uname_r=$(uname -r)"
while read -r l; do echo "config.$l"; done < /blklab/kernel-config
echo "controllers=$(cat /sys/fs/cgroup/cgroup.controllers)"
echo "subtree_control=$(cat /sys/fs/cgroup/cgroup.subtree_control)"
for f in io.cost.qos io.cost.model; do
    if [ -e "/sys/fs/cgroup/$f" ]; then echo "root.$f=1"; else echo "root.$f=0"; fi
done
if mkdir /sys/fs/cgroup/blklab-probe; then
    echo "child_io_files=$(cd /sys/fs/cgroup/blklab-probe && ls -d io.* | tr '\n' ' ')"
    rmdir /sys/fs/cgroup/blklab-probe
fi
truncate -s 64M "$BLKLAB_TMP/probe.img"
if dev=$(blk_loop "$BLKLAB_TMP/probe.img" on 2>"$BLKLAB_TMP/losetup.err"); then
    echo "loop_dio=$(blk_dio "$dev")"
    echo "loop_scheduler=$(cat "/sys/block/${dev#/dev/}/queue/scheduler")"
    $LOSETUP -d "$dev"
else
    echo "loop_error=$(tr '\n' ' ' < "$BLKLAB_TMP/losetup.err")"
fi
if [ -d /sys/kernel/tracing/events ]; then echo "tracefs=1"; else echo "tracefs=0"; fi
for s in iocost block wbt; do
    if [ -d "/sys/kernel/tracing/events/$s" ]; then
        echo "tracepoints.$s=$(ls /sys/kernel/tracing/events/$s | grep -v -e '^enable$' -e '^filter$' | tr '\n' ' ')"
    fi
done
echo "modules=$(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
echo "mem_total_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)"
"#;

/// The probe as a case (60 guest seconds is ample: it takes well under one).
pub fn guest_info_case() -> CaseSpec {
    CaseSpec {
        name: GUEST_INFO.into(),
        script: SCRIPT.into(),
        time_limit_secs: 60,
    }
}

/// What the guest reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GuestInfo {
    pub uname_r: String,
    /// The kernel configuration lines shipped with the initramfs
    /// (CONFIG_HZ and the controllers' symbols).
    pub config: BTreeMap<String, String>,
    /// The root's cgroup.controllers.
    pub controllers: Vec<String>,
    /// The root's cgroup.subtree_control.
    pub subtree_control: Vec<String>,
    pub io_cost_qos: bool,
    pub io_cost_model: bool,
    /// io.* files of a fresh child cgroup.
    pub child_io_files: Vec<String>,
    /// Whether a loop device over a tmpfs file does direct I/O (None: no
    /// loop device could be set up, see `loop_error`).
    pub loop_dio: Option<bool>,
    pub loop_scheduler: String,
    pub loop_error: Option<String>,
    pub tracefs: bool,
    /// Tracepoints by subsystem.
    pub tracepoints: BTreeMap<String, Vec<String>>,
    pub modules: Vec<String>,
    pub mem_total_kb: Option<u64>,
}

/// What a case may need from the guest kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// io.max (blk-throttle).
    IoMax,
    /// io.cost.qos / io.cost.model (blk-iocost).
    Iocost,
    /// io.weight (blk-iocost's per-cgroup weight).
    IoWeight,
    /// io.bfq.weight (BFQ with cgroup support).
    BfqWeight,
    /// io.latency (blk-iolatency).
    IoLatency,
    /// A loop device over tmpfs with direct I/O.
    LoopDirectIo,
    /// A tracepoint, e.g. `iocost:iocost_ioc_vrate_adj`.
    Tracepoint(String),
}

fn words(v: &str) -> Vec<String> {
    v.split_whitespace().map(String::from).collect()
}

/// Parse the probe's stdout (`key=value` lines).
pub fn parse(stdout: &[u8]) -> Result<GuestInfo> {
    let text = String::from_utf8_lossy(stdout);
    let mut g = GuestInfo::default();
    for l in text.lines() {
        let Some((k, v)) = l.split_once('=') else {
            continue;
        };
        match k {
            "uname_r" => g.uname_r = v.trim().to_string(),
            "controllers" => g.controllers = words(v),
            "subtree_control" => g.subtree_control = words(v),
            "root.io.cost.qos" => g.io_cost_qos = v == "1",
            "root.io.cost.model" => g.io_cost_model = v == "1",
            "child_io_files" => g.child_io_files = words(v),
            "loop_dio" => g.loop_dio = Some(v.trim() == "1"),
            "loop_scheduler" => g.loop_scheduler = v.trim().to_string(),
            "loop_error" => g.loop_error = Some(v.trim().to_string()),
            "tracefs" => g.tracefs = v == "1",
            "modules" => g.modules = words(v),
            "mem_total_kb" => g.mem_total_kb = v.trim().parse().ok(),
            _ => {
                if let Some(sym) = k.strip_prefix("config.") {
                    g.config.insert(sym.to_string(), v.to_string());
                } else if let Some(sub) = k.strip_prefix("tracepoints.") {
                    g.tracepoints.insert(sub.to_string(), words(v));
                }
            }
        }
    }
    if g.uname_r.is_empty() {
        return Err(VmError::Probe(format!(
            "no uname_r in the probe's output ({} bytes)",
            stdout.len()
        )));
    }
    Ok(g)
}

impl GuestInfo {
    /// CONFIG_HZ of the guest kernel.
    pub fn hz(&self) -> Option<u32> {
        self.config.get("CONFIG_HZ").and_then(|v| v.parse().ok())
    }

    fn sym(&self, s: &str) -> String {
        format!(
            "{s}={}",
            self.config.get(s).map(String::as_str).unwrap_or("?")
        )
    }

    fn io_controller(&self) -> Option<String> {
        if !self.controllers.iter().any(|c| c == "io") {
            return Some(format!(
                "the io controller is not in cgroup v2's cgroup.controllers ({}) under kernel {}",
                self.controllers.join(" "),
                self.uname_r
            ));
        }
        if !self.subtree_control.iter().any(|c| c == "io") {
            return Some(format!(
                "io is not enabled in the root's cgroup.subtree_control under kernel {}",
                self.uname_r
            ));
        }
        None
    }

    fn child_file(&self, f: &str, sym: &str) -> Option<String> {
        self.io_controller().or_else(|| {
            (!self.child_io_files.iter().any(|x| x == f)).then(|| {
                format!(
                    "{f} does not exist in a cgroup under kernel {} ({})",
                    self.uname_r,
                    self.sym(sym)
                )
            })
        })
    }

    /// Why a case needing `need` cannot run under this kernel; None if it can.
    pub fn cannot_run(&self, need: &Need) -> Option<String> {
        match need {
            Need::IoMax => self.child_file("io.max", "CONFIG_BLK_DEV_THROTTLING"),
            Need::IoWeight => self.child_file("io.weight", "CONFIG_BLK_CGROUP_IOCOST"),
            Need::BfqWeight => self.child_file("io.bfq.weight", "CONFIG_BFQ_GROUP_IOSCHED"),
            Need::IoLatency => self.child_file("io.latency", "CONFIG_BLK_CGROUP_IOLATENCY"),
            Need::Iocost => self.io_controller().or_else(|| {
                (!(self.io_cost_qos && self.io_cost_model)).then(|| {
                    format!(
                        "io.cost.qos / io.cost.model are absent under kernel {} ({})",
                        self.uname_r,
                        self.sym("CONFIG_BLK_CGROUP_IOCOST")
                    )
                })
            }),
            Need::LoopDirectIo => match (self.loop_dio, &self.loop_error) {
                (Some(true), _) => None,
                (Some(false), _) => Some(format!(
                    "a loop device over a tmpfs file runs buffered (dio=0) under kernel {}: its tmpfs refuses O_DIRECT",
                    self.uname_r
                )),
                (None, e) => Some(format!(
                    "no loop device could be set up under kernel {}: {}",
                    self.uname_r,
                    e.as_deref().unwrap_or("no report")
                )),
            },
            Need::Tracepoint(tp) => {
                let (sub, ev) = tp.split_once(':').unwrap_or(("", tp.as_str()));
                if !self.tracefs {
                    return Some(format!("tracefs is not available under kernel {}", self.uname_r));
                }
                match self.tracepoints.get(sub) {
                    Some(evs) if evs.iter().any(|e| e == ev) => None,
                    Some(_) => Some(format!("tracepoint {tp} does not exist under kernel {}", self.uname_r)),
                    None if TRACE_SUBSYSTEMS.contains(&sub) => Some(format!(
                        "tracepoint subsystem {sub} does not exist under kernel {}",
                        self.uname_r
                    )),
                    None => Some(format!(
                        "tracepoint subsystem {sub} is not probed (probed: {})",
                        TRACE_SUBSYSTEMS.join(", ")
                    )),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE_6_1: &str = "uname_r=6.1.0-50-cloud-amd64\n\
config.BLKLAB_KERNEL=debian-6.1\n\
config.CONFIG_HZ=250\n\
config.CONFIG_BLK_CGROUP_IOLATENCY=n\n\
config.CONFIG_BLK_CGROUP_IOCOST=y\n\
controllers=cpuset cpu io memory hugetlb pids rdma misc\n\
subtree_control=io\n\
root.io.cost.qos=1\n\
root.io.cost.model=1\n\
child_io_files=io.bfq.weight io.max io.pressure io.prio.class io.stat io.weight \n\
loop_dio=0\n\
loop_scheduler=[none] mq-deadline bfq\n\
tracefs=1\n\
tracepoints.iocost=iocost_inuse_adjust iocost_ioc_vrate_adj iocost_iocg_activate \n\
modules=bfq loop \n\
mem_total_kb=3005000\n";

    #[test]
    fn parses_and_explains() {
        let g = parse(SAMPLE_6_1.as_bytes()).unwrap();
        assert_eq!(g.hz(), Some(250));
        assert_eq!(g.loop_dio, Some(false));
        assert!(g.cannot_run(&Need::IoMax).is_none());
        assert!(g.cannot_run(&Need::Iocost).is_none());
        assert!(g.cannot_run(&Need::IoWeight).is_none());
        assert!(g.cannot_run(&Need::BfqWeight).is_none());
        let lat = g.cannot_run(&Need::IoLatency).unwrap();
        assert!(
            lat.contains("io.latency") && lat.contains("CONFIG_BLK_CGROUP_IOLATENCY=n"),
            "{lat}"
        );
        assert!(g.cannot_run(&Need::LoopDirectIo).unwrap().contains("dio=0"));
        assert!(g
            .cannot_run(&Need::Tracepoint("iocost:iocost_ioc_vrate_adj".into()))
            .is_none());
        assert!(g
            .cannot_run(&Need::Tracepoint("iocost:nope".into()))
            .unwrap()
            .contains("does not exist"));
        assert!(g
            .cannot_run(&Need::Tracepoint("sched:sched_switch".into()))
            .unwrap()
            .contains("not probed"));
    }

    #[test]
    fn no_io_controller_blocks_everything() {
        let s = SAMPLE_6_1.replace(
            "controllers=cpuset cpu io memory",
            "controllers=cpuset cpu memory",
        );
        let g = parse(s.as_bytes()).unwrap();
        for n in [Need::IoMax, Need::Iocost, Need::IoWeight] {
            assert!(
                g.cannot_run(&n).unwrap().contains("cgroup.controllers"),
                "{n:?}"
            );
        }
    }

    #[test]
    fn empty_output_is_an_error() {
        assert!(parse(b"").is_err());
        assert!(parse(b"garbage\n").is_err());
    }

    #[test]
    fn case_name_is_valid() {
        crate::init_script::validate(&[guest_info_case()]).unwrap();
    }
}
