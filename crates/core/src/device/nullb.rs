//! null_blk (drivers/block/null_blk): every request completes a fixed time after
//! it is issued (`irqmode=2`, `completion_nsec`), or at once (`irqmode=0`).

use serde::Deserialize;

use super::DeviceModel;
use crate::bio::Op;
use crate::time::Ns;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NullbSpec {
    /// null_blk `completion_nsec` (default 10 000 ns).
    #[serde(default = "default_completion_nsec")]
    pub completion_nsec: u64,
    /// null_blk `irqmode`: 0 = complete in the submission path, 2 = timer after completion_nsec.
    #[serde(default = "default_irqmode")]
    pub irqmode: u32,
    /// null_blk `hw_queue_depth` (default 64).
    #[serde(default = "default_hw_queue_depth")]
    pub hw_queue_depth: u32,
}

fn default_completion_nsec() -> u64 {
    10_000
}
fn default_irqmode() -> u32 {
    2
}
fn default_hw_queue_depth() -> u32 {
    64
}

pub struct Nullb {
    spec: NullbSpec,
}

impl Nullb {
    pub fn new(spec: &NullbSpec) -> Result<Nullb, String> {
        if spec.irqmode != 0 && spec.irqmode != 2 {
            return Err(format!(
                "nullb irqmode={} is not modelled (0 = none, 2 = timer)",
                spec.irqmode
            ));
        }
        if spec.hw_queue_depth == 0 {
            return Err("nullb hw_queue_depth must be at least 1".into());
        }
        Ok(Nullb { spec: spec.clone() })
    }
}

impl DeviceModel for Nullb {
    fn kind(&self) -> &'static str {
        "nullb"
    }
    fn default_queue_depth(&self) -> u32 {
        self.spec.hw_queue_depth
    }
    fn issue(&mut self, now: Ns, _op: Op, _sector: u64, _bytes: u32) -> Ns {
        if self.spec.irqmode == 0 {
            now
        } else {
            now + self.spec.completion_nsec
        }
    }
    fn describe(&self) -> String {
        format!(
            "nullb completion_nsec={} irqmode={} hw_queue_depth={}",
            self.spec.completion_nsec, self.spec.irqmode, self.spec.hw_queue_depth
        )
    }
}
