//! Fuzz target: every parser of kernel file syntax. The first byte picks
//! the parser, the rest is the line written.
use blklab_core::block::blk_ioprio::PrioPolicy;
use blklab_core::block::iocost::params::{parse_model_body, parse_qos_body, parse_weight_line};
use blklab_core::block::iotrack::lat_thresh::parse_lat_thresh;
use blklab_core::block::throttle::io_max::parse_io_max;
use blklab_core::sim::kerr::{kstrtoint, split_devno};

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Some((&which, rest)) = data.split_first() else {
            return;
        };
        let line = blklab_fuzz::text(rest);
        let line: &str = &line;
        match which % 10 {
            0 => drop(parse_io_max(line)),
            1 => drop(parse_weight_line(line)),
            2 => drop(parse_qos_body(line, [0; 6], false, false)),
            3 => drop(parse_model_body(line, [0; 6], false)),
            4 => drop(PrioPolicy::parse(line)),
            5 => drop(parse_lat_thresh(line)),
            6 => drop(kstrtoint(line)),
            7 => drop(split_devno(line)),
            8 => drop(blklab_core::sim::time::parse_duration(line, 1_000_000_000)),
            _ => drop(blklab_lab::scenario::parse_size(line)),
        }
    });
}
