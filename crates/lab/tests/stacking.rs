//! Stacked devices in a scenario: the capacity a stacked device gets from
//! its backend, a run with jobs on both levels, and each bad stack refused
//! with the place of the value at fault.

use std::path::Path;

use blklab_lab::scenario::Scenario;

const JOB: &str = r#"
[[job]]
device = "TARGET"
cgroup = "/a"
cmdline = "--name=a --direct=1 --rw=randread --ioengine=libaio --bs=4k --iodepth=4 --runtime=1 --time_based"
"#;

/// nullb0 (16 GiB), then `upper`'s `[[device]]` text, then a job on `target`.
fn scenario(upper: &str, target: &str) -> String {
    format!(
        r#"[[device]]
name = "nullb0"
devno = "252:0"
capacity = "16G"
[device.model]
kind = "nullb"
completion_nsec = 10000

{upper}
{}"#,
        JOB.replace("TARGET", target)
    )
}

fn parse(text: &str) -> Result<Scenario, String> {
    Scenario::parse(text, Path::new("t.toml")).map_err(|e| e.to_string())
}

#[test]
fn stacked_capacities_come_from_the_backend() {
    let sc = parse(&scenario(
        r#"[[device]]
name = "dm0"
devno = "253:0"
[device.model]
kind = "dm-linear"
backend = "loop0"
offset = "1G"

[[device]]
name = "loop0"
devno = "7:0"
[device.model]
kind = "loop"
backend = "nullb0"
"#,
        "dm0",
    ))
    .unwrap();
    let d = &sc.config.devices;
    assert_eq!(d[1].info.name, "dm0");
    assert_eq!(d[1].info.capacity_bytes, 15 << 30);
    assert_eq!(d[2].info.capacity_bytes, 16 << 30);
    // loop: hw_queue_depth 128, no scheduler
    assert_eq!((d[2].info.queue_depth, d[2].info.nr_requests), (128, 128));
    assert_eq!(d[2].scheduler, "none");
    // dm0 over loop0 over nullb0: each level counts the job's I/O
    let r = blklab_core::Sim::new(sc.config.clone(), Default::default())
        .unwrap()
        .run();
    let ios = r.jobs[0].stats.dirs[0].total_ios;
    for dev in &r.devices {
        assert!(
            dev.stat[0] >= ios && dev.stat[0] <= ios + 4,
            "{}: {} reads for {ios} I/Os",
            dev.name,
            dev.stat[0]
        );
    }
}

fn refused(upper: &str, target: &str) -> String {
    match parse(&scenario(upper, target)) {
        Ok(_) => panic!("accepted:\n{upper}"),
        Err(e) => e,
    }
}

#[test]
fn a_missing_backend_is_located() {
    let e = refused(
        "[[device]]\nname = \"loop0\"\ndevno = \"7:0\"\n[device.model]\nkind = \"loop\"\nbackend = \"sdq\"\n",
        "loop0",
    );
    assert!(
        e.starts_with("t.toml:12:1: device loop0: backend 'sdq': no such device"),
        "{e}"
    );
}

#[test]
fn stacking_cycles_are_located() {
    let e = refused(
        "[[device]]\nname = \"loop0\"\ndevno = \"7:0\"\n[device.model]\nkind = \"loop\"\nbackend = \"loop0\"\n",
        "loop0",
    );
    assert!(e.starts_with("t.toml:12:1: device loop0: backend:"), "{e}");
    assert!(e.contains("cycle (loop0 -> loop0)"), "{e}");
    let e = refused(
        "[[device]]\nname = \"loop0\"\ndevno = \"7:0\"\n[device.model]\nkind = \"loop\"\nbackend = \"dm0\"\n\n\
         [[device]]\nname = \"dm0\"\ndevno = \"253:0\"\ncapacity = \"1G\"\n[device.model]\nkind = \"dm-linear\"\nbackend = \"loop0\"\n",
        "loop0",
    );
    assert!(e.contains("cycle (loop0 -> dm0 -> loop0)"), "{e}");
    assert!(e.contains("cycle (dm0 -> loop0 -> dm0)"), "{e}");
}

#[test]
fn a_scheduler_on_dm_linear_is_located() {
    let e = refused(
        "[[device]]\nname = \"dm0\"\ndevno = \"253:0\"\nscheduler = \"mq-deadline\"\n[device.model]\nkind = \"dm-linear\"\nbackend = \"nullb0\"\n",
        "dm0",
    );
    assert!(
        e.starts_with(
            "t.toml:12:13: device dm0: scheduler \"mq-deadline\": a dm-linear device is bio-based"
        ),
        "{e}"
    );
}

#[test]
fn a_target_beyond_its_backend_is_located() {
    // 15 GiB + 2 GiB on a 16 GiB device
    let e = refused(
        "[[device]]\nname = \"dm0\"\ndevno = \"253:0\"\ncapacity = \"2G\"\n[device.model]\nkind = \"dm-linear\"\nbackend = \"nullb0\"\noffset = \"15G\"\n",
        "dm0",
    );
    assert!(
        e.starts_with("t.toml:12:12: device dm0: offset + capacity = 18253611008 bytes reach beyond the end of nullb0 (17179869184 bytes)"),
        "{e}"
    );
    // an offset past the end leaves no default capacity at all
    let e = refused(
        "[[device]]\nname = \"dm0\"\ndevno = \"253:0\"\n[device.model]\nkind = \"dm-linear\"\nbackend = \"nullb0\"\noffset = 40000000\n",
        "dm0",
    );
    assert!(e.contains("beyond the end of nullb0"), "{e}");
    // an offset that is not on a sector
    let e = refused(
        "[[device]]\nname = \"dm0\"\ndevno = \"253:0\"\n[device.model]\nkind = \"dm-linear\"\nbackend = \"nullb0\"\noffset = \"1000\"\n",
        "dm0",
    );
    assert!(e.contains("not a whole number of 512-byte sectors"), "{e}");
}

#[test]
fn rq_qos_on_dm_linear_is_located() {
    let e = refused(
        "[[device]]\nname = \"dm0\"\ndevno = \"253:0\"\n[device.model]\nkind = \"dm-linear\"\nbackend = \"nullb0\"\n\n\
         [cgroup.\"/\"]\n\"io.cost.qos\" = \"253:0 enable=1\"\n",
        "dm0",
    );
    assert!(
        e.contains("t.toml:17:17: io.cost.qos: 253:0 is the dm-linear device dm0"),
        "{e}"
    );
    assert!(e.contains("EOPNOTSUPP"), "{e}");
}

/// A loop device `loop0` with `model` lines after `kind = "loop"`.
fn loop_with(model: &str) -> String {
    format!("[[device]]\nname = \"loop0\"\ndevno = \"7:0\"\ncapacity = \"64M\"\n[device.model]\nkind = \"loop\"\n{model}")
}

#[test]
fn a_loop_worker_is_checked_and_located() {
    // the model table of loop0 is at line 13 (after nullb0's 7 lines + blank)
    for (model, want) in [
        (
            "backend = \"nullb0\"\nbacking = \"tmpfs\"\n",
            "backend and backing: give one of them, not both",
        ),
        ("worker_ns = 5\n", "backend or backing: expected"),
        (
            "backing = \"ext4\"\n",
            "backing \"ext4\": unknown; expected \"tmpfs\"",
        ),
        (
            "backing = \"tmpfs\"\nworker_ns = -1\n",
            "worker_ns = -1: expected 0 to 1000000000",
        ),
        (
            "backing = \"tmpfs\"\nworker_ns_per_kib = 1000000001\n",
            "worker_ns_per_kib = 1000000001: expected 0 to 1000000000",
        ),
        (
            "backend = \"nullb0\"\nworker_ns_per_kib = 100\n",
            "worker_ns_per_kib: only for a backing file",
        ),
        (
            "backend = \"nullb0\"\nworker_write_ns = 100\n",
            "worker_write_ns: only for a backing file",
        ),
        (
            "backing = \"file\"\nworker_write_ns_per_kib = -2\n",
            "worker_write_ns_per_kib = -2: expected 0 to 1000000000",
        ),
    ] {
        let e = refused(&loop_with(model), "loop0");
        assert!(e.starts_with("t.toml:13:1: device loop0 model: "), "{e}");
        assert!(e.contains(want), "{model}: {e}");
    }
    // and a good one parses, with no backend to take its capacity from
    let s = parse(&scenario(
        &loop_with("backing = \"tmpfs\"\nworker_ns = 20000\nworker_ns_per_kib = 100\n"),
        "loop0",
    ))
    .unwrap();
    assert!(format!("{s:?}").contains("tmpfs"));
    let s = parse(&scenario(
        &loop_with("backing = \"file\"\nworker_ns = 3500\nworker_write_ns = 5500\n"),
        "loop0",
    ))
    .unwrap();
    assert!(format!("{s:?}").contains("worker_write_ns: Some(5500)"));
}
