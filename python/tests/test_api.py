"""The Python API gives the command line's numbers, byte for byte."""

import json

import pandas as pd
import pytest

import blklab
from conftest import EXAMPLES, ROOT, cli

# every example that runs without files it would write or recordings it reads
RUNNABLE = [p for p in sorted(EXAMPLES.glob("*.toml"))
            if "output" not in p.read_text() and "replay" not in p.read_text()]


def test_examples_are_found():
    assert len(RUNNABLE) >= 8


@pytest.mark.parametrize("path", RUNNABLE, ids=lambda p: p.name)
def test_fio_json_is_the_clis(blklab_bin, path):
    rel = path.relative_to(ROOT)
    want = cli(blklab_bin, "run", rel, "--output-format", "json")
    r = blklab.Scenario.load(str(rel)).run()
    assert r.fio_json_text == want
    # .jobs carries the documents' numbers, one row per job entry
    docs = r.fio_json
    jobs = r.jobs
    entries = [j for d in docs for j in d["jobs"]]
    assert len(jobs) == len(entries)
    for (_, row), j in zip(jobs.iterrows(), entries):
        assert row["jobname"] == j["jobname"]
        dirs = [d for d in ("read", "write", "mixed") if d in j]
        assert dirs
        for d in dirs:
            assert row[f"{d}.io_bytes"] == j[d]["io_bytes"]
            assert row[f"{d}.iops"] == j[d]["iops"]


def test_overrides_and_seed_are_the_clis(blklab_bin):
    p = "examples/iocost-busy-level.toml"
    want = cli(blklab_bin, "run", p, "--output-format", "json", "--seed", "7",
               "--set", "iocost.busy_level_fix=off", "--set", "cgroup./cgB.io.weight=500",
               "--set", "job.cgB-4k.rate_iops=150")
    sc = blklab.Scenario.load(p)
    sc.set("iocost.busy_level_fix", "off").set("cgroup./cgB.io.weight", 500)
    sc.set("job.cgB-4k.rate_iops", 150)
    assert sc.run(seed=7).fio_json_text == want
    # and the override changed something
    assert sc.run(seed=7).fio_json_text != blklab.Scenario.load(p).run(seed=7).fio_json_text


def test_from_toml_equals_load(blklab_bin):
    p = EXAMPLES / "nullb-randread.toml"
    a = blklab.Scenario.from_toml(p.read_text(), name=str(p)).run()
    b = blklab.Scenario.load(p).run()
    assert a.fio_json_text == b.fio_json_text


def test_jobs_has_the_summary_figures():
    r = blklab.Scenario.load(EXAMPLES / "iocost-busy-level.toml").run()
    jobs = r.jobs.set_index("label")
    # the seed experiment's figure: cgB at 197.9 IOPS with the fix (`blklab run` prints 197)
    assert round(jobs.loc["cgB-4k", "mixed.iops"]) == 198
    assert jobs.loc["cgB-4k", "cgroup"] == "/cgB"


def test_compare_is_the_clis_table(blklab_bin):
    p = "examples/iocost-busy-level.toml"
    text = cli(blklab_bin, "compare", p, "--variant", "iocost.busy_level_fix=off,on")
    df = blklab.compare(p, {"iocost.busy_level_fix": ["off", "on"]})
    assert list(df.columns) == ["off", "on", "change"]
    # rebuild the CLI's cells from the frame: same figures, same rounding
    lines = [l for l in text.splitlines()[1:] if l.strip()]
    assert len(lines) == len(df)
    for line, ((label, metric), row) in zip(lines, df.iterrows()):
        cells = line.split()
        fmt = "{:.0f}" if metric == "IOPS" else "{:.2f}"
        assert cells[-3:-1] == [fmt.format(row["off"]), fmt.format(row["on"])], line
        assert cells[-1] == "{:.1f}%".format(row["change"]), line


def test_trace_frame():
    r = blklab.Scenario.load(EXAMPLES / "iocost-busy-level.toml").run(trace=True)
    t = r.trace
    assert list(t.columns) == ["time_ns", "system", "event", "payload"]
    assert (t["event"] == "iocost_ioc_vrate_adj").any()
    assert set(t["system"]) <= {"iocost", "blklab"}
    assert t["time_ns"].is_monotonic_increasing
    with pytest.raises(blklab.BlklabError, match="trace=True"):
        blklab.Scenario.load(EXAMPLES / "iocost-busy-level.toml").run().trace


def test_fio_json_documents_parse_as_fio_json():
    r = blklab.Scenario.load(EXAMPLES / "iocost-busy-level.toml").run()
    assert [d["fio version"] for d in r.fio_json] == ["fio-3.33-blklab"] * 2
    assert json.loads(r.fio_json_text.split("\n}\n")[0] + "\n}")["jobs"][0]["jobname"] == "cgA"


def test_timeseries_tables(blklab_bin, tmp_path):
    sc = blklab.Scenario.load(EXAMPLES / "iocost-busy-level.toml")
    r = sc.run(timeseries=True, interval_ms=100)
    # observing does not change the run
    assert r.fio_json_text == sc.run().fio_json_text
    assert "iocost_period" in r.timeseries_names
    # the same table as `blklab run --timeseries DIR` writes
    cli(blklab_bin, "run", "examples/iocost-busy-level.toml", "--output-format", "summary",
        "--timeseries", tmp_path)
    csvs = sorted(p.name for p in tmp_path.iterdir())
    for name in r.timeseries_names:
        want = pd.read_csv(tmp_path / f"{name}.csv") if f"{name}.csv" in csvs else None
        if want is None:
            continue
        got = r.timeseries(name)
        assert list(got.columns) == list(want.columns), name
        assert len(got) == len(want), name
    with pytest.raises(blklab.BlklabError, match="no time series 'nope'"):
        r.timeseries("nope")
    with pytest.raises(blklab.BlklabError, match="timeseries=True"):
        sc.run().timeseries("iocost_period")
