//! Device models: what happens between D (issue to the driver) and C
//! (completion). A model decides, when a request is issued, the instant it
//! completes; the block layer turns that into a completion event.
//!
//! Models whose completion time cannot be decided at issue time are outside
//! this interface; the ones here (FIFO token buckets, parallel units, fixed
//! latencies) all can, which keeps the event loop to one event per request.

pub mod cloud;
pub mod dm_linear;
pub mod linear;
pub mod loop_dev;
pub mod loop_worker;
pub mod nullb;
pub mod ssd;

use serde::de::{Deserialize, Deserializer, Error as _};

pub use crate::block::disk::{DeviceInfo, DeviceModel};

/// How a stacked device reaches its backend (see `block::disk::Lower`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackKind {
    Loop,
    Linear { start: u64 },
}

/// `[device.model]` in a scenario: `kind` selects the model, the other keys are its
/// parameters (`ModelSpec::from_kind`).
///
/// The engine's side of the contract, for every model:
/// * call `issue()` in dispatch order, with non-decreasing `now`, and never with
///   more requests inside the device than the queue depth it uses (normally
///   `default_queue_depth()`); the models do not count requests in flight and
///   would accept more.
/// * the returned instant is final; it can be earlier than that of a request
///   issued before (reordering inside the device), except where a model says it
///   serves in order.
#[derive(Clone, Debug)]
pub enum ModelSpec {
    Nullb(nullb::NullbSpec),
    Linear(linear::LinearSpec),
    Cloud(cloud::CloudSpec),
    Ssd(ssd::SsdSpec),
    /// A loop device over another scenario device (stacked).
    Loop(loop_dev::LoopSpec),
    /// A dm-linear device over another scenario device (stacked, bio-based).
    DmLinear(dm_linear::DmLinearSpec),
}

impl ModelSpec {
    /// The values of `kind`, one per model.
    pub const KINDS: &'static [&'static str] =
        &["nullb", "linear", "cloud", "ssd", "loop", "dm-linear"];

    /// The model `kind` names, its parameters read from `params` (the table
    /// without its `kind` key). The table is not read through a tagged enum
    /// on purpose: serde buffers such an enum's content, and an error found
    /// in it can no longer say which key it is about; a deserializer that
    /// tracks paths (the scenario reader's) can when the parameters are read
    /// straight into the model's own struct.
    pub fn from_kind<'de, D: Deserializer<'de>>(kind: &str, params: D) -> Result<Self, D::Error> {
        Ok(match kind {
            "nullb" => ModelSpec::Nullb(Deserialize::deserialize(params)?),
            "linear" => ModelSpec::Linear(Deserialize::deserialize(params)?),
            "cloud" => ModelSpec::Cloud(Deserialize::deserialize(params)?),
            "ssd" => ModelSpec::Ssd(Deserialize::deserialize(params)?),
            "loop" => ModelSpec::Loop(Deserialize::deserialize(params)?),
            "dm-linear" => ModelSpec::DmLinear(Deserialize::deserialize(params)?),
            other => return Err(D::Error::unknown_variant(other, Self::KINDS)),
        })
    }

    /// `build_seeded(0)`.
    pub fn build(&self) -> Result<Box<dyn DeviceModel>, String> {
        self.build_seeded(0)
    }

    /// Build the model; models with random draws (`ssd`) take their stream from
    /// `seed` (label "device/ssd"), so two devices with the same spec and seed
    /// draw the same values: give each device its own seed if that matters.
    pub fn build_seeded(&self, seed: u64) -> Result<Box<dyn DeviceModel>, String> {
        match self {
            ModelSpec::Nullb(s) => Ok(Box::new(nullb::Nullb::new(s)?)),
            ModelSpec::Linear(s) => Ok(Box::new(linear::Linear::new(s)?)),
            ModelSpec::Cloud(s) => Ok(Box::new(cloud::Cloud::new(s)?)),
            ModelSpec::Ssd(s) => Ok(Box::new(ssd::Ssd::new(s, seed)?)),
            ModelSpec::Loop(s) => Ok(Box::new(loop_dev::Loop::new(s)?)),
            ModelSpec::DmLinear(s) => Ok(Box::new(dm_linear::DmLinear::new(s)?)),
        }
    }

    /// The loop worker's costs, for a loop device that has a worker.
    pub fn loop_worker(&self) -> Option<loop_dev::LoopWorkerCost> {
        match self {
            ModelSpec::Loop(s) => s.worker(),
            _ => None,
        }
    }

    /// The scenario device this one is stacked on, and what it sends there:
    /// None for a device whose model completes its own requests.
    pub fn backend(&self) -> Option<(&str, StackKind)> {
        match self {
            ModelSpec::Loop(s) => s.backend.as_deref().map(|b| (b, StackKind::Loop)),
            ModelSpec::DmLinear(s) => Some((&s.backend, StackKind::Linear { start: s.offset })),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::bio::Op;
    use crate::sim::time::Ns;

    /// `[model]` of a TOML text, read as the scenario reader does (its
    /// `kind`, then `from_kind` on the rest).
    fn parse(t: &str) -> Result<ModelSpec, String> {
        let mut doc: toml::Table = toml::from_str(t).map_err(|e| e.to_string())?;
        let Some(toml::Value::Table(mut m)) = doc.remove("model") else {
            return Err("no [model] table".into());
        };
        let Some(toml::Value::String(kind)) = m.remove("kind") else {
            return Err("missing kind".into());
        };
        ModelSpec::from_kind(&kind, toml::Value::Table(m)).map_err(|e| e.to_string())
    }

    #[test]
    fn toml_tables_select_and_configure_models() {
        let m = parse("[model]\nkind = \"nullb\"\nmbps = 4\n").unwrap();
        let d = m.build().unwrap();
        assert_eq!(d.kind(), "nullb");
        assert!(d.describe().contains("mbps=4"));
        let m =
            parse("[model]\nkind = \"cloud\"\npreset = \"azure-p20\"\nthrottle_window_ms = 80\n")
                .unwrap();
        let d = m.build().unwrap();
        assert_eq!(d.default_queue_depth(), 256);
        assert!(d.describe().contains("throttle_window_ms=80"));
        let m = parse(
            "[model]\nkind = \"linear\"\nrbps = 173471131\nrseqiops = 3566\nrrandiops = 3566\n\
             wbps = 173333269\nwseqiops = 3566\nwrandiops = 3566\nparallelism = 4\n",
        )
        .unwrap();
        assert_eq!(m.build().unwrap().kind(), "linear");
        let m = parse(
            "[model]\nkind = \"ssd\"\nunits = 16\nplacement = \"stripe\"\n\
             read = { dist = \"fixed_exp\", fixed_us = 60, exp_mean_us = 20 }\n",
        )
        .unwrap();
        let a: Vec<Ns> = {
            let mut d = m.build_seeded(3).unwrap();
            (0..50).map(|i| d.issue(0, Op::Read, i * 8, 4096)).collect()
        };
        let b: Vec<Ns> = {
            let mut d = m.build_seeded(3).unwrap();
            (0..50).map(|i| d.issue(0, Op::Read, i * 8, 4096)).collect()
        };
        assert_eq!(a, b);
    }

    #[test]
    fn typos_and_bad_values_are_reported() {
        let e =
            parse("[model]\nkind = \"cloud\"\npreset = \"azure-p20\"\nthrottle_windw_ms = 80\n")
                .unwrap_err();
        assert!(e.contains("throttle_windw_ms"), "{e}");
        let e = parse("[model]\nkind = \"nullb\"\nmbsp = 4\n").unwrap_err();
        assert!(e.contains("mbsp"), "{e}");
        let e = parse("[model]\nkind = \"floppy\"\n").unwrap_err();
        assert!(e.contains("floppy"), "{e}");
        let e = parse("[model]\nkind = \"ssd\"\nread = { dist = \"lognormal\", median_us = 80 }\n")
            .unwrap_err();
        assert!(e.contains("sigma"), "{e}");
        let e = parse("[model]\nkind = \"linear\"\nrbps = 1\n").unwrap_err();
        assert!(e.contains("rseqiops"), "{e}");
        let m = parse("[model]\nkind = \"cloud\"\niops = 100\n").unwrap();
        assert!(m.build().err().unwrap().contains("bps"));
    }
}
