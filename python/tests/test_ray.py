"""The Ray backend gives the local backend's rows (a local Ray with 2 CPUs)."""

import pandas as pd
import pytest

import blklab

ray = pytest.importorskip("ray")

SEED = "examples/iocost-busy-level.toml"
GRID = {"iocost.busy_level_fix": ["off", "on"], "cgroup./cgB.io.weight": [100, 400]}


@pytest.fixture(scope="module")
def local_ray():
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_equals_local(local_ray, tmp_path):
    local = blklab.sweep(SEED, GRID, seeds=3, progress=False)
    # small batches, so that tasks finish out of order
    on_ray = blklab.sweep(SEED, GRID, seeds=3, backend="ray", batch_size=2, progress=False)
    pd.testing.assert_frame_equal(local, on_ray)
    # the default batching (about 0.1 s of work a task), through a cache
    cached = blklab.sweep(SEED, GRID, seeds=3, backend="ray", cache=tmp_path, progress=False)
    pd.testing.assert_frame_equal(local, cached)
    assert len(list(tmp_path.rglob("*.json"))) == 12


def test_tuner_on_ray_equals_local(local_ray):
    from conftest import TUNE_CASE

    kw = dict(rpct=[90], rlat=[5000], min=[25, 40, 60], max=[40, 60], seeds=1, progress=False)
    a = blklab.tune_iocost(TUNE_CASE, "/cgB", "p99<=5ms", **kw)
    b = blklab.tune_iocost(TUNE_CASE, "/cgB", "p99<=5ms", backend="ray", batch_size=1, **kw)
    assert a.csv == b.csv and a.recommended == b.recommended
