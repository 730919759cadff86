"""The tuner finds the answer worked out by hand (crates/lab/src/tune/tests.rs
explains the scenario: a device half as fast as iocost's model believes, so
vrate above 50 % floods it and the protected cgroup's p99 jumps to 12.8 ms)."""

import pytest

import blklab
from conftest import TUNE_CASE, TUNE_PHASED, cli

PINNED = dict(rpct=[90], rlat=[5000], min=[25, 40, 60, 80, 100], max=[25, 40, 60, 80, 100])


def test_the_hand_computed_answer():
    r = blklab.tune_iocost(TUNE_CASE, "/cgB", "p99<=5ms", seeds=2, progress=False, **PINNED)
    assert r.recommended is not None and r.recommended.split()[-1] == "max=40", r
    c = r.candidates
    # every candidate with max above the device's 50 % misses the target, the others meet it
    assert list(c["feasible"]) == list(c["max"] < 50)
    best = c[c["recommended"]].iloc[0]
    # cgA: at least 4000 - 100 reads/s of 4 KiB (the budget at 40 %), at most 10 % over
    assert 3900 * 4096 / 2**20 <= best["others_mbps"] < 1.1 * 3900 * 4096 / 2**20
    assert r.binding == []


def test_the_cli_gives_the_same_answer(blklab_bin, tmp_path):
    r = blklab.tune_iocost(TUNE_CASE, "/cgB", "p99<=5ms", seeds=2, progress=False, **PINNED)
    out = cli(blklab_bin, "tune", "iocost", TUNE_CASE, "--protect", "/cgB", "--target",
              "p99<=5ms", "--seeds", "2", "-q", "--rpct", "90", "--rlat", "5000",
              "--min", "25,40,60,80,100", "--max", "25,40,60,80,100",
              "--csv", tmp_path / "c.csv")
    assert f"io.cost.qos: {r.recommended}" in out
    assert (tmp_path / "c.csv").read_text() == r.csv


def test_no_solution_names_the_binding_target():
    r = blklab.tune_iocost(TUNE_CASE, "/cgB", ["p99<=50us", "iops>=90"], seeds=1,
                           progress=False, rpct=[90], rlat=[5000], min=[25], max=[25, 100])
    assert r.recommended is None
    assert r.binding == ["p99<=50us"]
    assert "binding: p99<=50us — best achievable p99" in r.verdict


def test_bad_tuner_input():
    with pytest.raises(blklab.BlklabError, match="unknown metric 'p42'"):
        blklab.tune_iocost(TUNE_CASE, "/cgB", "p42<=5ms", progress=False)
    with pytest.raises(blklab.BlklabError, match="--protect /cgZ: no job runs"):
        blklab.tune_iocost(TUNE_CASE, "/cgZ", "p99<=5ms", progress=False)


def test_report_page_has_the_trade_off_plot(tmp_path):
    r = blklab.tune_iocost(TUNE_CASE, "/cgB", "p99<=5ms", seeds=1, progress=False,
                           report=tmp_path / "t.html", csv=tmp_path / "t.csv", **PINNED)
    page = (tmp_path / "t.html").read_text()
    assert "<svg" in page and "Pareto front" in page and r.recommended in page
    assert (tmp_path / "t.csv").read_text() == r.csv
    assert r.pareto["others_mbps"].is_monotonic_decreasing


def test_phase_judges_only_the_measured_phase(blklab_bin):
    # the hand-computed case with a warm-up phase instead of ramp_time
    pinned = dict(rpct=[90], rlat=[5000], min=[25, 40, 60], max=[25, 40, 60])
    r = blklab.tune_iocost(TUNE_PHASED, "/cgB", "p99<=5ms", progress=False, phase="measure",
                           **pinned)
    assert r.recommended is not None and r.recommended.split()[-1] == "max=40", r
    out = cli(blklab_bin, "tune", "iocost", TUNE_PHASED, "--protect", "/cgB", "--target",
              "p99<=5ms", "-q", "--phase", "measure", "--rpct", "90", "--rlat", "5000",
              "--min", "25,40,60", "--max", "25,40,60")
    assert f"io.cost.qos: {r.recommended}" in out
    with pytest.raises(blklab.BlklabError, match="no such phase"):
        blklab.tune_iocost(TUNE_PHASED, "/cgB", "p99<=5ms", progress=False, phase="steady")
