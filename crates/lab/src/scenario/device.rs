//! The `[[device]]` entries of a scenario: each device checked as its
//! driver and the block layer would set it up, and the device a job runs on.

use blklab_core::block::wbt::{parse_lat_usec, WbtSetup};
use blklab_core::drivers::{DeviceInfo, ModelSpec};
use blklab_core::{DeviceConfig, WbtConfig};

use super::job::RawJob;
use super::{parse_size, Builder, RawDevice};
use crate::limits;

impl Builder<'_> {
    pub(super) fn device(&mut self, d: &RawDevice) -> Option<DeviceConfig> {
        let name = d.name.get_ref().clone();
        if name.is_empty() || name.contains(char::is_whitespace) || name.contains('/') {
            return self.err(
                &d.name.span(),
                format!("device name '{name}' must be a single word (like sda or nullb0)"),
            );
        }
        let (major, minor) = match blklab_core::sim::kerr::split_devno(d.devno.get_ref()) {
            Ok((mm, "")) => mm,
            _ => {
                return self.err(
                    &d.devno.span(),
                    format!(
                        "devno '{}': expected MAJ:MIN, e.g. \"8:0\"",
                        d.devno.get_ref()
                    ),
                )
            }
        };
        let model = match model_spec(d.model.get_ref()) {
            Ok(m) => m,
            Err(e) => return self.err(&d.model.span(), format!("device {name} model: {e}")),
        };
        let built = match model.build() {
            Ok(m) => m,
            Err(e) => return self.err(&d.model.span(), format!("device {name} model: {e}")),
        };
        let scheduler = d
            .scheduler
            .as_ref()
            .map(|s| s.get_ref().clone())
            .unwrap_or_else(|| "none".into());
        let queue_depth = d.queue_depth.unwrap_or_else(|| built.default_queue_depth());
        if queue_depth == 0 {
            return self.err(
                &d.name.span(),
                format!("device {name}: queue_depth must be at least 1"),
            );
        }
        // blk-mq: without a scheduler nr_requests is the tag set depth; with one,
        // the kernel sets 2 * min(depth, BLKDEV_DEFAULT_RQ = 128).
        let default_nr = if scheduler == "none" {
            queue_depth
        } else {
            2 * queue_depth.min(128)
        };
        let nr_requests = d.nr_requests.unwrap_or(default_nr);
        if nr_requests == 0 {
            return self.err(
                &d.name.span(),
                format!("device {name}: nr_requests must be at least 1"),
            );
        }
        let capacity = match &d.capacity {
            None => 1u64 << 40,
            Some(c) => match parse_size(c.get_ref()) {
                Ok(v) if v >= 1 << 20 => v,
                Ok(_) => return self.err(&c.span(), "capacity must be at least 1M"),
                Err(e) => return self.err(&c.span(), e),
            },
        };
        let lbs = d.logical_block_size.unwrap_or(512);
        if ![512, 1024, 2048, 4096].contains(&lbs) {
            return self.err(
                &d.name.span(),
                format!(
                    "device {name}: logical_block_size {lbs}: expected 512, 1024, 2048 or 4096"
                ),
            );
        }
        let info = DeviceInfo {
            name: name.clone(),
            major,
            minor,
            rotational: d.rotational.unwrap_or(false),
            nr_requests,
            queue_depth,
            nr_hw_queues: d.nr_hw_queues.unwrap_or(1),
            // 0 restores the default, as `queue_max_sectors_store` does in
            // current kernels (max_user_sectors = 0: the smaller of
            // max_hw_sectors and BLK_DEF_MAX_SECTORS_CAP, 1280 KiB)
            max_sectors_kb: match d.max_sectors_kb {
                None | Some(0) => 1280,
                Some(kb) => kb,
            },
            logical_block_size: lbs,
            capacity_bytes: capacity,
        };
        if let Err(e) = limits::device_queue(&info) {
            return self.err(&d.name.span(), e);
        }
        let mut iosched = Vec::new();
        for (k, v) in &d.iosched {
            let s = match v.get_ref() {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                _ => {
                    return self.err(
                        &v.span(),
                        format!("iosched.{k}: expected a number or string"),
                    )
                }
            };
            iosched.push((k.clone(), s));
        }
        // The scheduler and its tunables are checked by building them.
        if let Err(e) = blklab_core::block::elevator::build(&scheduler, &info).and_then(|mut e| {
            for (k, v) in &iosched {
                e.set_tunable(k, v)?;
            }
            Ok(())
        }) {
            let span = d
                .scheduler
                .as_ref()
                .map(|s| s.span())
                .unwrap_or(d.name.span());
            return self.err(&span, format!("device {name}: {e}"));
        }
        let wbt = self.wbt(d, &name)?;
        let idle_wake_ns = match &d.idle_wake_ns {
            None => 0,
            Some(v) => match limits::host_ns("idle_wake_ns", *v.get_ref()) {
                Ok(x) => x,
                Err(e) => return self.err(&v.span(), format!("device {name}: {e}")),
            },
        };
        Some(DeviceConfig {
            info,
            model,
            scheduler,
            iosched,
            wbt,
            idle_wake_ns,
        })
    }

    /// blk-wbt's set-up: `wbt_lat_usec` as sysfs takes it (queue_wb_lat_store)
    /// or "default", and `write_cache` as queue_wc_store takes it. The outer
    /// None is an error (reported); the inner None is a device without wbt.
    fn wbt(&mut self, d: &RawDevice, name: &str) -> Option<Option<WbtConfig>> {
        let write_cache = match &d.write_cache {
            None => false,
            Some(w) => match w.get_ref().as_str() {
                v if v.starts_with("write back") => true,
                v if v.starts_with("write through") || v.starts_with("none") => false,
                v => {
                    return self.err(
                        &w.span(),
                        format!(
                            "device {name}: write_cache '{v}': expected \"write back\" or \"write through\" (EINVAL)"
                        ),
                    )
                }
            },
        };
        let Some(v) = &d.wbt_lat_usec else {
            if let Some(w) = &d.write_cache {
                self.warnings.push(format!(
                    "{}: device {name}: write_cache has no effect without wbt_lat_usec (only blk-wbt reads it)",
                    self.src.at(&w.span())
                ));
            }
            return Some(None);
        };
        let setup = match v.get_ref() {
            toml::Value::String(s) if s == "default" => WbtSetup::Default,
            toml::Value::String(s) => match parse_lat_usec(s) {
                Ok(n) => WbtSetup::LatUsec(n),
                Err(e) => {
                    return self.err(
                        &v.span(),
                        format!("device {name}: {e} (or \"default\" for the kernel's boot-time setting)"),
                    )
                }
            },
            toml::Value::Integer(i) => match parse_lat_usec(&i.to_string()) {
                Ok(n) => WbtSetup::LatUsec(n),
                Err(e) => return self.err(&v.span(), format!("device {name}: {e}")),
            },
            _ => {
                return self.err(
                    &v.span(),
                    format!("device {name}: wbt_lat_usec: expected \"default\" or a number of µs (-1 = the default target, 0 = off)"),
                )
            }
        };
        Some(Some(WbtConfig { setup, write_cache }))
    }

    /// The device index of a job: its `device`, or the only device. None
    /// (with an error, unless a failed device explains it) otherwise.
    pub(super) fn job_device(
        &mut self,
        where_: &str,
        j: &RawJob,
        devices: &[DeviceConfig],
        declared: usize,
    ) -> Option<usize> {
        let some_failed = devices.len() < declared;
        match (&j.device, devices.len()) {
            (None, 1) if !some_failed => Some(0),
            (None, _) if some_failed => None,
            (None, _) => {
                self.errs.push(format!(
                    "{where_}: several devices: say which with device = \"NAME\""
                ));
                None
            }
            (Some(d), _) => match devices.iter().position(|x| &x.info.name == d.get_ref()) {
                Some(i) => Some(i),
                None if some_failed => None,
                None => {
                    let names: Vec<&str> = devices.iter().map(|x| x.info.name.as_str()).collect();
                    self.err(
                        &d.span(),
                        format!(
                            "no device '{}' (devices: {})",
                            blklab_input::excerpt(d.get_ref()),
                            names.join(", ")
                        ),
                    )
                }
            },
        }
    }
}

/// `[device.model]`: its `kind`, then the other keys as that model's
/// parameters; an error names the key it is about (`read.sigma: ...`).
fn model_spec(v: &toml::Value) -> Result<ModelSpec, String> {
    let toml::Value::Table(t) = v else {
        return Err(format!("expected a table, found {}", v.type_str()));
    };
    let mut params = t.clone();
    let kind = match params.remove("kind") {
        Some(toml::Value::String(k)) => k,
        Some(other) => {
            return Err(format!(
                "kind: expected a string, found {}",
                other.type_str()
            ))
        }
        None => {
            return Err(format!(
                "missing `kind` (one of {})",
                ModelSpec::KINDS.join(", ")
            ))
        }
    };
    if !ModelSpec::KINDS.contains(&kind.as_str()) {
        return Err(format!(
            "kind \"{kind}\": unknown model; expected one of {}",
            ModelSpec::KINDS.join(", ")
        ));
    }
    let mut track = serde_path_to_error::Track::new();
    let de = serde_path_to_error::Deserializer::new(toml::Value::Table(params), &mut track);
    ModelSpec::from_kind(&kind, de).map_err(|e: toml::de::Error| {
        let path = track.path().to_string();
        let msg = e.message().trim().to_string();
        if path == "." || path.is_empty() {
            msg
        } else {
            format!("{path}: {msg}")
        }
    })
}
