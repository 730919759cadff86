"""Bad input raises BlklabError (a ValueError) with the command line's message."""

import socket

import pytest

import blklab
from conftest import EXAMPLES

SEED = EXAMPLES / "iocost-busy-level.toml"


def test_unknown_key():
    sc = blklab.Scenario.load(SEED)
    with pytest.raises(blklab.BlklabError, match="unknown key 'iocost.nope'"):
        sc.set("iocost.nope", "1")
    # a failed set leaves the scenario as it was
    assert sc.overrides == []
    with pytest.raises(blklab.BlklabError, match="no .* labelled 'nojob'"):
        sc.set("job.nojob.bs", "4k")
    with pytest.raises(ValueError, match="expected cgroup.PATH.FILE"):
        sc.set("cgroup./cgB.io.nosuch", "1")


def test_bad_values_carry_the_kernels_error():
    sc = blklab.Scenario.load(SEED)
    with pytest.raises(blklab.BlklabError, match=r"'abc' of 'riops' .*\(EINVAL\)"):
        sc.set("cgroup./cgB.io.max", "8:0 riops=abc")
    with pytest.raises(blklab.BlklabError, match=r"no device 9:0 .*\(ENODEV\)"):
        sc.set("cgroup./cgB.io.max", "9:0 riops=10")
    with pytest.raises(blklab.BlklabError, match="iocost.busy_level_fix"):
        sc.set("iocost.busy_level_fix", "sometimes")


def test_scenario_errors_have_file_line_col(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[run]\nhz = 123\n')
    with pytest.raises(blklab.BlklabError) as e:
        blklab.Scenario.load(p)
    assert f"{p}:2:6: hz = 123: expected 100, 250, 300 or 1000" in str(e.value)
    with pytest.raises(blklab.BlklabError, match=r"^<string>:2:8: "):
        blklab.Scenario.from_toml('[run]\nseed = "x"\n')
    with pytest.raises(blklab.BlklabError, match="cannot read"):
        blklab.Scenario.load(tmp_path / "missing.toml")


def test_bad_sweep_parameter_fails_before_running():
    with pytest.raises(blklab.BlklabError, match="unknown key 'nosuch'"):
        blklab.sweep(SEED, {"nosuch": [1, 2]}, progress=False)
    with pytest.raises(blklab.BlklabError, match="EINVAL"):
        blklab.sweep(SEED, {"cgroup./.io.cost.qos": ["8:0 enable=1 min=50 max=20"]},
                     progress=False)


def test_a_ray_address_that_does_not_answer():
    pytest.importorskip("ray")
    import ray

    if ray.is_initialized():
        ray.shutdown()
    # a port nothing listens on: bind one, close it, use it
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(blklab.BlklabError, match=f"ray address '127.0.0.1:{port}' does not answer"):
        blklab.sweep(SEED, None, seeds=2, backend="ray", address=f"127.0.0.1:{port}",
                     connect_timeout_s=2.0, progress=False)
    with pytest.raises(blklab.BlklabError, match="expected HOST:PORT"):
        blklab.sweep(SEED, None, backend="ray", address="nowhere", progress=False)
    with pytest.raises(blklab.BlklabError, match="backend 'spark'"):
        blklab.sweep(SEED, None, backend="spark", progress=False)
