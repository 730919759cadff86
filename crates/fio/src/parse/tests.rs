//! Parser tests: fio job files and command lines, option semantics, errors.

use super::*;
use crate::error::FioError;
use crate::options::{BsSpec, Engine, JobSpec, RwPattern, UnifiedRw};
use crate::test_fixtures::SEED_003_JOB;

fn one(text: &str) -> JobSpec {
    let mut v = parse_job_file(text, "t.fio").unwrap();
    assert_eq!(v.len(), 1);
    v.remove(0)
}

fn cmd(s: &str) -> Result<Vec<JobSpec>, FioError> {
    parse_cmdline(&split_cmdline(s).unwrap())
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn seed_003_job_file() {
    let j = one(SEED_003_JOB);
    assert_eq!(j.name, "file1"); // the section name wins over the global name=
    assert_eq!(j.filename.as_deref(), Some("/dev/nullb1"));
    assert_eq!(j.rw, RwPattern::RandRead);
    assert_eq!(
        j.bs,
        [
            BsSpec::Fixed(4096),
            BsSpec::Fixed(4096),
            BsSpec::Fixed(4096)
        ]
    );
    assert!(j.direct && j.time_based && j.group_reporting && j.norandommap);
    assert_eq!(j.runtime_ns, Some(60_000_000_000));
    assert_eq!(j.size, Some(4 << 30));
    assert_eq!(j.ioengine, Engine::Libaio);
    assert_eq!(j.ioengine_name, "libaio");
    assert_eq!(j.iodepth, 1);
    assert_eq!(j.rate_iops, [50000, 50000, 50000]);
    assert_eq!(j.thinktime_ns, 4_000_000);
    assert_eq!(
        j.raw_options,
        pairs(&[
            ("size", "4G"),
            ("ioengine", "libaio"),
            ("iodepth", "1"),
            ("rate_iops", "50000"),
            ("norandommap", "1"),
            ("thinktime", "4ms")
        ])
    );
    // filename has fio's priority -1: applied (and listed) last in its section
    assert_eq!(
        j.global_options,
        pairs(&[
            ("name", "fio-rand-read"),
            ("rw", "randread"),
            ("bs", "4k"),
            ("direct", "1"),
            ("numjobs", "1"),
            ("time_based", "1"),
            ("runtime", "60"),
            ("group_reporting", "1"),
            ("filename", "/dev/nullb1")
        ])
    );
}

#[test]
fn seed_000_command_line() {
    let v = cmd(r#"fio --name="cgB" --filename="/path/to/sda/B.fio.testfile" --direct=1 --rw=randrw --rwmixread=50 \
          --ioengine=libaio --bs="4k" --iodepth="1" --size=4G --runtime=10 \
          --time_based --group_reporting --unified_rw_reporting=mixed \
          --output-format=json --output="out.json" --rate_iops=100"#)
    .unwrap();
    assert_eq!(v.len(), 1);
    let j = &v[0];
    assert_eq!(j.name, "cgB");
    assert_eq!(j.rw, RwPattern::RandRw);
    assert_eq!(j.rwmixread, 50);
    assert_eq!(j.rate_iops, [100, 100, 100]);
    assert_eq!(j.unified_rw_reporting, UnifiedRw::Mixed);
    assert!(j.time_based && j.group_reporting && j.direct);
    assert_eq!(j.runtime_ns, Some(10_000_000_000));
    assert_eq!(j.output_format.as_deref(), Some("json"));
    assert_eq!(j.output.as_deref(), Some("out.json"));
    assert!(j.ignored.is_empty(), "{:?}", j.ignored);
    assert!(j.global_options.is_empty());
    // the name is a job option on the command line; bare flags keep an empty value
    assert_eq!(j.raw_options[0], ("name".to_string(), "cgB".to_string()));
    assert!(j
        .raw_options
        .contains(&("time_based".to_string(), String::new())));
    assert!(!j
        .raw_options
        .iter()
        .any(|(k, _)| k == "output-format" || k == "output"));
}

#[test]
fn cmdline_globals_and_several_jobs() {
    let v = cmd("--rw=randwrite --bs=8k --name=a --iodepth=4 --name=b --bs 16k").unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(v[0].name, "a");
    assert_eq!(v[0].rw, RwPattern::RandWrite);
    assert_eq!(v[0].bs[1], BsSpec::Fixed(8192));
    assert_eq!(v[0].iodepth, 4);
    assert_eq!(v[1].iodepth, 1, "options after --name=a belong to a only");
    assert_eq!(v[1].bs[0], BsSpec::Fixed(16384), "--opt value form");
    assert_eq!(
        v[1].global_options,
        pairs(&[("rw", "randwrite"), ("bs", "8k")])
    );
    assert_eq!(v[1].raw_options, pairs(&[("name", "b"), ("bs", "16k")]));
}

#[test]
fn cmdline_order_matters_for_kb_base_but_job_file_applies_it_first() {
    let v = cmd("--name=j --bs=4k --kb_base=1000").unwrap();
    assert_eq!(v[0].bs[0], BsSpec::Fixed(4096));
    let j = one("[j]\nbs=4k\nkb_base=1000\n");
    assert_eq!(j.bs[0], BsSpec::Fixed(4000));
    assert_eq!(j.raw_options[0].0, "kb_base");
}

#[test]
fn per_direction_lists() {
    let j = one("[j]\nbs=8k,32k\n");
    assert_eq!(
        j.bs,
        [
            BsSpec::Fixed(8192),
            BsSpec::Fixed(32768),
            BsSpec::Fixed(32768)
        ]
    );
    let j = one("[j]\nbs=8k,32k,\n");
    assert_eq!(
        j.bs,
        [
            BsSpec::Fixed(8192),
            BsSpec::Fixed(32768),
            BsSpec::Fixed(4096)
        ]
    );
    let j = one("[j]\nbs=,8k\n");
    assert_eq!(
        j.bs,
        [
            BsSpec::Fixed(4096),
            BsSpec::Fixed(8192),
            BsSpec::Fixed(8192)
        ]
    );
    let j = one("[j]\nbs=,8k,\n");
    assert_eq!(
        j.bs,
        [
            BsSpec::Fixed(4096),
            BsSpec::Fixed(8192),
            BsSpec::Fixed(4096)
        ]
    );
    let j = one("[j]\nbs=1k,2k,3k\n");
    assert_eq!(
        j.bs,
        [
            BsSpec::Fixed(1024),
            BsSpec::Fixed(2048),
            BsSpec::Fixed(3072)
        ]
    );
    let j = one("[j]\nrate=1m,500k\n");
    assert_eq!(j.rate_bps, [1 << 20, 500 << 10, 500 << 10]);
    let j = one("[j]\nrate=500k,\n");
    assert_eq!(j.rate_bps, [500 << 10, 0, 0]);
    let j = one("[j]\nrate=,500k\n");
    assert_eq!(j.rate_bps, [0, 500 << 10, 500 << 10]);
    let j = one("[j]\nrate_iops=100\n");
    assert_eq!(j.rate_iops, [100, 100, 100]);
}

#[test]
fn bsrange_and_bssplit() {
    let j = one("[j]\nbsrange=1k-4k,8k:2k\n");
    assert_eq!(j.bs[0], BsSpec::Range { lo: 1024, hi: 4096 });
    assert_eq!(
        j.bs[1],
        BsSpec::Range { lo: 2048, hi: 8192 },
        "swapped when lo > hi"
    );
    assert_eq!(j.bs[2], BsSpec::Range { lo: 2048, hi: 8192 });
    // bsrange wins over bs whatever the order (fio only fills min/max from bs when unset)
    let j = one("[j]\nbsrange=1k-4k\nbs=16k\n");
    assert_eq!(j.bs[0], BsSpec::Range { lo: 1024, hi: 4096 });
    // blank percentages share the remainder; sorted by percentage like fio
    let j = one("[j]\nbssplit=4k/50:1k/:32k/\n");
    assert_eq!(
        j.bs[0],
        BsSpec::Split(vec![(1024, 25), (32768, 25), (4096, 50)])
    );
    assert_eq!(j.bs[2], j.bs[0]);
    let j = one("[j]\nbssplit=4k/10:64k/50:32k/40\n");
    assert_eq!(
        j.bs[1],
        BsSpec::Split(vec![(4096, 10), (32768, 40), (65536, 50)])
    );
    let j = one("[j]\nbssplit=2k/50:4k/50,4k/90:8k/10\n");
    assert_eq!(j.bs[0], BsSpec::Split(vec![(2048, 50), (4096, 50)]));
    assert_eq!(j.bs[1], BsSpec::Split(vec![(8192, 10), (4096, 90)]));
    assert_eq!(j.bs[2], j.bs[1]);
    let j = one("[j]\nbssplit=4k/30:8k/:16k/\n");
    assert_eq!(
        j.bs[0],
        BsSpec::Split(
            vec![(8192, 35), (16384, 35), (4096, 30)]
                .into_iter()
                .collect::<Vec<_>>()
                .tap_sort()
        )
    );
    let j = one("[j]\nbssplit=64k\n");
    assert_eq!(j.bs[0], BsSpec::Split(vec![(65536, 100)]));
    assert_eq!(j.bs[0].min(), 65536);
}

trait TapSort {
    fn tap_sort(self) -> Self;
}
impl TapSort for Vec<(u32, u32)> {
    fn tap_sort(mut self) -> Self {
        self.sort_by_key(|e| e.1);
        self
    }
}

#[test]
fn sizes_and_kb_base_inversion() {
    assert_eq!(one("[j]\nsize=4kib\n").size, Some(4000));
    assert_eq!(one("[j]\nsize=1mib\n").size, Some(1_000_000));
    assert_eq!(one("[j]\nsize=1m\n").size, Some(1 << 20));
    assert_eq!(one("[j]\nkb_base=1000\nsize=1m\n").size, Some(1_000_000));
    assert_eq!(one("[j]\nkb_base=1000\nsize=1mib\n").size, Some(1 << 20));
    assert_eq!(one("[j]\noffset=0x1000\n").offset, 4096);
    assert_eq!(one("[j]\nnumber_ios=1k\n").number_ios, 1024);
    assert_eq!(one("[j]\niodepth=0x10\n").iodepth, 16);
}

#[test]
fn times_per_option_units() {
    let j = one(
        "[j]\nruntime=1m\nramp_time=500ms\nthinktime=250\nthinktime_spin=100\nstartdelay=1-5\n",
    );
    assert_eq!(j.runtime_ns, Some(60_000_000_000));
    assert_eq!(j.ramp_time_ns, 500_000_000);
    assert_eq!(
        j.thinktime_ns, 250_000,
        "thinktime defaults to microseconds"
    );
    assert_eq!(j.thinktime_spin_ns, 100_000);
    assert_eq!(j.startdelay_ns, (1_000_000_000, 5_000_000_000));
    let j = one("[j]\nstartdelay=3\nthinktime=1ms\nthinktime_spin=5ms\n");
    assert_eq!(j.startdelay_ns, (3_000_000_000, 3_000_000_000));
    assert_eq!(
        j.thinktime_spin_ns, 1_000_000,
        "spin is capped at thinktime"
    );
    assert_eq!(one("[j]\nruntime=2h\n").runtime_ns, Some(7_200_000_000_000));
}

#[test]
fn rw_mix_depth_and_misc() {
    let j = one("[j]\nrw=randread:8\n");
    assert_eq!((j.rw, j.rw_seq_nr), (RwPattern::RandRead, 8));
    assert_eq!(one("[j]\nreadwrite=rw\n").rw, RwPattern::ReadWrite);
    assert_eq!(one("[j]\nrw=randrw\nrwmixwrite=30\n").rwmixread, 70);
    assert_eq!(one("[j]\nrwmixwrite=30\nrwmixread=60\n").rwmixread, 60);
    let j = one("[j]\niodepth=8\n");
    assert_eq!(
        (
            j.iodepth_batch_submit,
            j.iodepth_batch_complete_min,
            j.iodepth_batch_complete_max,
            j.iodepth_low
        ),
        (1, 1, 1, 8)
    );
    let j = one("[j]\niodepth=8\niodepth_batch=16\niodepth_batch_complete=2\niodepth_low=4\n");
    assert_eq!(
        (
            j.iodepth_batch_submit,
            j.iodepth_batch_complete_min,
            j.iodepth_batch_complete_max,
            j.iodepth_low
        ),
        (8, 2, 2, 4)
    );
    let j = one("[j]\niodepth=8\niodepth_batch_submit=0\niodepth_batch_complete_max=6\n");
    assert_eq!(
        (j.iodepth_batch_submit, j.iodepth_batch_complete_max),
        (8, 6)
    );
    assert!(!one("[j]\nbuffered=1\n").direct);
    assert!(one("[j]\nbuffered=0\n").direct);
    for (v, u) in [
        ("none", UnifiedRw::None),
        ("1", UnifiedRw::Mixed),
        ("both", UnifiedRw::Both),
        ("2", UnifiedRw::Both),
    ] {
        assert_eq!(
            one(&format!("[j]\nunified_rw_reporting={v}\n")).unified_rw_reporting,
            u
        );
    }
    let j = one("[j]\nprio=3\nprioclass=1\ncgroup=cgA\nnumjobs=4\nstonewall\n");
    assert_eq!(
        (
            j.prio,
            j.prioclass,
            j.cgroup.as_deref(),
            j.numjobs,
            j.stonewall
        ),
        (Some(3), Some(1), Some("cgA"), 4, true)
    );
    let j = one("[j]\npercentile_list=50:99.9:99.999\nlat_percentiles=1\nclat_percentiles=0\n");
    assert_eq!(j.percentile_list, vec![50.0, 99.9, 99.999]);
    assert_eq!(j.percentile_precision, 3);
    assert!(j.lat_percentiles && !j.clat_percentiles);
    let j = one("[j]\nioengine=psync\nrandrepeat=0\nblocksize=8k\ntimeout=5\n");
    assert_eq!(j.ioengine, Engine::Sync);
    assert_eq!(
        j.raw_options,
        pairs(&[
            ("ioengine", "psync"),
            ("randrepeat", "0"),
            ("bs", "8k"),
            ("runtime", "5")
        ])
    );
}

#[test]
fn ignored_options_are_recorded() {
    let j = one("[j]\ninvalidate=1\nrandseed=3\nexitall\n");
    assert_eq!(j.ignored, vec!["invalidate=1", "randseed=3", "exitall"]);
    let v = cmd("--eta=never --name=a").unwrap();
    assert_eq!(v[0].ignored, vec!["eta=never"]);
    // time_based without a runtime: fio warns and drops it
    let j = one("[j]\ntime_based\n");
    assert!(!j.time_based);
    assert_eq!(j.ignored.len(), 1);
}

#[test]
fn comments_globals_and_sections() {
    let text = "; leading comment
# another
[global]
bs=8k ; trailing comment
rw=randread   # and another
[a]
[global]
bs=16k
[b]
iodepth=2
[globalish]
iodepth=3
[c]
";
    let v = parse_job_file(text, "t.fio").unwrap();
    assert_eq!(v.len(), 3);
    assert_eq!(v[0].bs[0], BsSpec::Fixed(8192));
    assert_eq!(v[0].rw, RwPattern::RandRead);
    assert_eq!(v[1].bs[0], BsSpec::Fixed(16384));
    assert_eq!(
        v[1].global_options,
        pairs(&[("bs", "8k"), ("rw", "randread"), ("bs", "16k")])
    );
    assert_eq!(v[1].iodepth, 2);
    // fio treats every section whose name starts with "global" as global
    assert_eq!(v[2].iodepth, 3);
    assert!(v[0].raw_options.is_empty());
}

#[test]
fn groupids() {
    let v = parse_job_file(
        "[a]\nnumjobs=2\n[b]\n[c]\nstonewall\n[d]\nnew_group\n[e]\n",
        "t",
    )
    .unwrap();
    assert_eq!(assign_groupids(&v), vec![0, 0, 1, 2, 2]);
    let v = parse_job_file("[a]\nstonewall\n[b]\n", "t").unwrap();
    assert_eq!(
        assign_groupids(&v),
        vec![0, 0],
        "a stonewall on the first job opens no new group"
    );
}

fn file_err(text: &str) -> FioError {
    parse_job_file(text, "jobs.fio").unwrap_err()
}

#[test]
fn job_file_errors() {
    let e = file_err("[j]\nbs=4k\nfoo=1\n");
    assert_eq!((e.origin.as_str(), e.line), ("jobs.fio", Some(3)));
    assert!(
        e.message.contains("unknown option 'foo'") && e.message.contains("job 'j'"),
        "{e}"
    );
    assert_eq!(e.to_string(), format!("jobs.fio:3: {}", e.message));

    let e = file_err("bs=4k\n[j]\n");
    assert_eq!(e.line, Some(1));
    assert!(e.message.contains("outside"), "{e}");

    let e = file_err("[j\nbs=4k\n");
    assert!(e.message.contains("malformed section"), "{e}");

    let e = file_err("[global]\nbs=4q\n[j]\n");
    assert_eq!(e.line, Some(2));
    assert!(
        e.message.contains("bs=4q")
            && e.message.contains("global options")
            && e.message.contains("suffix"),
        "{e}"
    );

    let e = file_err("[j]\nruntime=10x\n");
    assert!(
        e.message.contains("runtime=10x") && e.message.contains("time suffix"),
        "{e}"
    );

    let e = file_err("[j]\nruntime=10sec\n");
    assert!(e.message.contains("sec"), "{e}");

    let e = file_err("[j]\nioengine=spdk\n");
    assert!(
        e.message.contains("spdk")
            && e.message.contains("libaio")
            && e.message.contains("io_uring"),
        "{e}"
    );

    let e = file_err("[j]\ninclude other.fio\n");
    assert!(e.message.contains("not supported"), "{e}");

    let e = file_err("[j]\nfilename=${DEV}\n");
    assert!(e.message.contains("${VAR}"), "{e}");

    let e = file_err("[j]\ndirect\n");
    assert!(e.message.contains("requires an argument"), "{e}");

    let e = file_err("[j]\ndirect=2\n");
    assert!(e.message.contains("0 or 1"), "{e}");

    let e = file_err("[j]\nrate=1m\nrate_iops=10\n");
    assert_eq!(e.line, Some(1));
    assert!(e.message.contains("mutually exclusive"), "{e}");

    let e = file_err("[j]\nbssplit=4k/60:8k/60\n");
    assert!(e.message.contains("more than 100"), "{e}");

    let e = file_err("[j]\nbs=4k-8k\n");
    assert!(e.message.contains("bsrange"), "{e}");

    let e = file_err("[j]\nrw=randomread\n");
    assert!(e.message.contains("expected one of"), "{e}");

    let e = file_err("[j]\nsize=50%\n");
    assert!(e.message.contains("percentage"), "{e}");

    let e = file_err("[j]\niodepth=0\n");
    assert!(e.message.contains("min value"), "{e}");

    let e = file_err("[j]\nrwmixread=101\n");
    assert!(e.message.contains("max value"), "{e}");

    let e = file_err("[j]\noutput-format=json\n");
    assert!(e.message.contains("command-line argument"), "{e}");

    let e = file_err("[global]\nbs=4k\n");
    assert!(e.message.contains("no jobs"), "{e}");

    let e = file_err("[j]\npercentile_list=50:101\n");
    assert!(e.message.contains("out of range"), "{e}");
}

#[test]
fn cmdline_errors() {
    let e = cmd("--name=a --iodepht=4").unwrap_err();
    assert_eq!(
        (e.origin.as_str(), e.arg, e.line),
        ("command line", Some(2), None)
    );
    assert!(
        e.message.contains("unknown option 'iodepht'") && e.message.contains("job 'a'"),
        "{e}"
    );
    assert!(
        e.to_string().starts_with("command line: argument 2: "),
        "{e}"
    );

    let e = cmd("--name=a --bs=4q").unwrap_err();
    assert!(
        e.message.contains("--bs=4q") && e.message.contains("job 'a'"),
        "{e}"
    );

    let e = cmd("--name=a --ioengine=windowsaio").unwrap_err();
    assert!(e.message.contains("windowsaio"), "{e}");

    let e = cmd("--name=a --direct").unwrap_err();
    assert!(e.message.contains("requires an argument"), "{e}");
    // getopt takes the next word as the value, as fio does
    let e = cmd("--name=a --direct --rw=read").unwrap_err();
    assert!(e.message.contains("--direct"), "{e}");

    let e = cmd("--name=a job.fio").unwrap_err();
    assert!(e.message.contains("job.fio"), "{e}");

    let e = cmd("--rw=read").unwrap_err();
    assert!(e.message.contains("no jobs"), "{e}");

    let e = cmd("--name=a --time_based=yes").unwrap_err();
    assert_eq!(e.arg, Some(2));
}

#[test]
fn shell_splitting() {
    assert_eq!(
        split_cmdline(r#"fio --name="a b" --x='c "d"' e\ f"#).unwrap(),
        vec!["fio", "--name=a b", "--x=c \"d\"", "e f"]
    );
    assert_eq!(
        split_cmdline("  a\t\tb \\\n c ").unwrap(),
        vec!["a", "b", "c"]
    );
    assert_eq!(split_cmdline(r#""x\"y\\z""#).unwrap(), vec![r#"x"y\z"#]);
    assert_eq!(split_cmdline("''").unwrap(), vec![""]);
    assert!(split_cmdline("'open").is_err());
    assert!(split_cmdline("\"open").is_err());
}

/// fio's `fadvise_hint` values, its default, and the advice each gives a
/// random or sequential job (`td_io_open_file`).
#[test]
fn fadvise_hint_values_and_advice() {
    use crate::options::{Fadvice, FadviseHint};
    let j = one("[j]\nrw=randread\n");
    assert_eq!(j.fadvise_hint, FadviseHint::Type);
    assert_eq!(j.fadvise_hint.advice(true), Some(Fadvice::Random));
    assert_eq!(j.fadvise_hint.advice(false), Some(Fadvice::Sequential));
    for (v, h) in [
        ("0", FadviseHint::None),
        ("1", FadviseHint::Type),
        ("random", FadviseHint::Random),
        ("sequential", FadviseHint::Sequential),
        ("noreuse", FadviseHint::Noreuse),
    ] {
        let j = one(&format!("[j]\nfadvise_hint={v}\n"));
        assert_eq!(j.fadvise_hint, h, "{v}");
        assert!(j.ignored.is_empty());
    }
    assert_eq!(FadviseHint::None.advice(true), None);
    assert_eq!(
        FadviseHint::Sequential.advice(true),
        Some(Fadvice::Sequential)
    );
    let e = cmd("--name=a --fadvise_hint=sometimes")
        .unwrap_err()
        .to_string();
    assert!(e.contains("fadvise_hint") && e.contains("random"), "{e}");
}

#[test]
fn job_count_is_capped_before_memory_is_spent() {
    let e = parse_job_file("[j]\nnumjobs=4294967295\n", "f.fio").unwrap_err();
    assert!(e.to_string().contains("at most 1024"), "{e}");
    let many: String = (0..20_000).map(|i| format!("[j{i}]\n")).collect();
    let e = parse_job_file(&many, "f.fio").unwrap_err();
    assert_eq!(e.line, Some(1025), "{e}");
    let args: Vec<String> = vec!["--name=a".into(), "--numjobs=67108864".into()];
    let e = parse_cmdline(&args).unwrap_err();
    assert!(e.to_string().contains("at most 1024"), "{e}");
    let ok: String = (0..1024).map(|i| format!("[j{i}]\n")).collect();
    assert_eq!(parse_job_file(&ok, "f.fio").unwrap().len(), 1024);
}

/// A fuzzed scenario's `--iodepth=3G` made the simulator allocate 128 GB of
/// io_u slots; the depth is refused past libaio's default aio-max-nr.
#[test]
fn iodepth_is_capped_before_memory_is_spent() {
    let args: Vec<String> = vec!["--name=a".into(), "--iodepth=3G".into()];
    let e = parse_cmdline(&args).unwrap_err();
    assert!(
        e.to_string()
            .contains("max value out of range: 3221225472 (65536 max)"),
        "{e}"
    );
    let e = parse_job_file("[j]\niodepth=65537\n", "f.fio").unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
    let args: Vec<String> = vec!["--name=a".into(), "--iodepth=65536".into()];
    assert_eq!(parse_cmdline(&args).unwrap()[0].iodepth, 65536);
}
