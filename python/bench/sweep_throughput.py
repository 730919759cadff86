"""Sweep throughput, runs per minute: seed 000's scenario (10 simulated
seconds a run) over N seeds, on the local backend, then on a local Ray
instance with 2 CPUs (ray.init's time left out). Usage, from the repository:
python3 python/bench/sweep_throughput.py [N]. The machine's load changes the
figures: quote them with `uptime`."""

import sys
import time

import blklab

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
SC = "examples/iocost-busy-level.toml"


def timed(label, **kw):
    t = time.perf_counter()
    df = blklab.sweep(SC, None, seeds=N, progress=False, **kw)
    dt = time.perf_counter() - t
    print(f"{label}: {N} runs in {dt:.2f} s = {N / dt * 60:.0f} runs/min")
    return df


local = timed("python, backend=local")
try:
    import ray
except ImportError:
    sys.exit("ray is not installed: no Ray figure")
t = time.perf_counter()
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
print(f"ray.init (local, 2 CPUs): {time.perf_counter() - t:.1f} s")
on_ray = timed("python, backend=ray (local, 2 CPUs)", backend="ray")
assert on_ray.equals(local), "the Ray backend's rows differ from the local backend's"
ray.shutdown()
