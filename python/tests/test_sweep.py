"""Sweeps: the command line's rows, independent of workers, and resumable."""

import io
import os
import signal
import subprocess
import time

import pandas as pd
import pytest

import blklab
from blklab.sweep import plan, rows_frame, run_plan
from conftest import ROOT, cli

SEED = "examples/iocost-busy-level.toml"
GRID = {"iocost.busy_level_fix": ["off", "on"], "job.*.runtime": [2, 3]}


def test_sweep_rows_are_the_clis(blklab_bin):
    text = cli(blklab_bin, "sweep", SEED, "--param", "iocost.busy_level_fix=off,on",
               "--param", "job.*.runtime=2,3", "--seeds", "3", "-q")
    want = pd.read_csv(io.StringIO(text), dtype=str)
    got = blklab.sweep(SEED, GRID, seeds=3, progress=False)
    assert len(got) == 12
    assert list(got["run"]) == list(range(12))
    # the CSV's numbers are Rust's shortest round-trip decimals: compare as floats
    assert list(want.columns[1:]) == list(got.columns[1:])
    for c in want.columns[3:]:
        if c == "seed":
            continue
        assert [float(x) for x in want[c]] == list(got[c]), c
    assert list(got["seed"]) == [1, 2, 3] * 4
    # runs 6..8: fix on, runtime=2 (the first key varies slowest, seeds fastest)
    assert list(got.loc[6, ["iocost.busy_level_fix", "job.*.runtime"]]) == ["on", "2"]

def test_worker_count_does_not_matter():
    a = blklab.sweep(SEED, GRID, seeds=2, jobs=1, progress=False)
    b = blklab.sweep(SEED, GRID, seeds=2, jobs=2, progress=False)
    pd.testing.assert_frame_equal(a, b)


def test_cache_resumes_a_partial_sweep(tmp_path):
    sc, combos = plan(SEED, GRID)
    fresh = run_plan(sc, combos, 2, progress=False)
    # a sweep that got through the odd runs only
    run_plan(sc, combos, 2, cache=tmp_path, progress=False, indices=range(1, 8, 2))
    entries = [p for p in tmp_path.rglob("*.json")]
    assert len(entries) == 4
    resumed = run_plan(sc, combos, 2, cache=tmp_path, progress=False)
    assert resumed == fresh
    assert len(list(tmp_path.rglob("*.json"))) == 8


def test_a_killed_cli_sweep_resumes_to_the_same_rows(blklab_bin, tmp_path):
    args = [str(blklab_bin), "sweep", SEED, "--param", "iocost.busy_level_fix=off,on",
            "--seeds", "150", "--jobs", "1", "-q", "--cache", str(tmp_path / "c")]
    p = subprocess.Popen(args + ["-o", str(tmp_path / "first.csv")], cwd=ROOT)
    # kill it once some results are on disk (if it finishes first, the resume
    # below simply takes every run from the cache: the check still holds)
    while p.poll() is None and len(list((tmp_path / "c").rglob("*.json"))) < 5:
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert not (tmp_path / "first.csv").exists() or p.returncode == 0
    done_before = len(list((tmp_path / "c").rglob("*.json")))
    assert done_before >= 5
    resumed = cli(blklab_bin, *args[1:])
    fresh = cli(blklab_bin, *[a for a in args[1:] if a != "--cache" and a != str(tmp_path / "c")])
    assert resumed == fresh
    # Python reads the same cache
    df = blklab.sweep(SEED, {"iocost.busy_level_fix": ["off", "on"]}, seeds=150,
                      cache=tmp_path / "c", progress=False)
    assert len(df) == 300
