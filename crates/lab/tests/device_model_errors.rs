//! `[device.model]` errors: each one located at the model's table and naming
//! the key at fault, whatever the model and however deep the key.

use std::path::Path;

use blklab_lab::scenario::Scenario;

/// One device whose model table (line 4) is `model`, and a job on it.
fn scenario(model: &str) -> String {
    format!(
        r#"[[device]]
name = "nvme0n1"
devno = "259:0"
[device.model]
{model}

[[job]]
cmdline = "--name=a --direct=1 --rw=randread --ioengine=libaio --bs=4k --iodepth=4 --runtime=1 --time_based"
"#
    )
}

fn refused(model: &str) -> String {
    match Scenario::parse(&scenario(model), Path::new("t.toml")) {
        Ok(_) => panic!("accepted:\n{model}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_bad_value_names_its_key() {
    for (model, want) in [
        (
            "kind = \"ssd\"\nqueue_depth = -3",
            "queue_depth: invalid value: integer `-3`, expected u32",
        ),
        (
            "kind = \"cloud\"\npreset = \"azure-p20\"\nburst_iops = \"x\"",
            "burst_iops: invalid type: string \"x\", expected u64",
        ),
        (
            "kind = \"nullb\"\ncompletion_nsec = 1.5",
            "completion_nsec: invalid type: floating point `1.5`",
        ),
        (
            "kind = \"linear\"\nrbps = \"fast\"",
            "rbps: invalid type: string \"fast\"",
        ),
        (
            // a key inside a model's sub-table is named through its table
            "kind = \"ssd\"\nread = { dist = \"lognormal\", median_us = \"x\" }",
            "read: invalid type: string \"x\", expected f64",
        ),
        ("kind = \"nullb\"\nmbsp = 4", "unknown field `mbsp`"),
        ("kind = 3", "kind: expected a string, found integer"),
        (
            "kind = \"floppy\"",
            "kind \"floppy\": unknown model; expected one of nullb, linear, cloud, ssd, loop, dm-linear",
        ),
        ("mbps = 4", "missing `kind` (one of nullb, linear"),
    ] {
        let e = refused(model);
        assert!(e.starts_with("t.toml:4:1: device nvme0n1 model: "), "{model}: {e}");
        assert!(e.contains(want), "{model}: {e}");
    }
}
