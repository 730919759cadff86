"""Sweeps: a scenario over a grid of overrides and seeds, on every local core
or as batches of runs on a Ray cluster. The same plan gives the same rows
(ordered by run index) whatever the backend, the worker count or the order
in which batches finish: each run is a pure function of (scenario,
overrides, seed), computed by the same native code."""

from __future__ import annotations

import os
import socket
import sys
import time
from typing import Callable, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _native
from .scenario import Scenario, variant_list

Combo = List[Tuple[str, str]]
Row = Tuple[int, Combo, int, List[Tuple[str, float]]]


class _Progress:
    """tqdm when it is installed, else a plain line on stderr."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.done, self.enabled = total, 0, enabled
        self._bar = None
        if enabled:
            try:
                from tqdm.auto import tqdm  # type: ignore

                self._bar = tqdm(total=total, unit="run")
            except ImportError:
                self._bar = None

    def add(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(n)
        else:
            sys.stderr.write(f"\r{self.done}/{self.total} runs")
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self._bar is not None:
            self._bar.close()
        elif self.enabled:
            sys.stderr.write("\n")


def _chunks(xs: Sequence[int], n: int) -> List[List[int]]:
    n = max(1, n)
    return [list(xs[i:i + n]) for i in range(0, len(xs), n)]


def _run_local(src, combos, seeds, indices, jobs, cache, progress) -> List[Row]:
    rows: List[Row] = []
    # batches so that the progress bar moves; each batch uses every worker
    per = max(4 * (jobs or os.cpu_count() or 1), len(indices) // 50, 1)
    for chunk in _chunks(indices, per):
        rows.extend(_native.run_batch(src, combos, seeds, chunk, jobs, cache))
        progress.add(len(chunk))
    return rows


def _check_address(address: Optional[str], timeout_s: float) -> None:
    """Fail fast, with a clear message, when a Ray address does not answer
    (ray.init itself can wait for minutes)."""
    if not address or address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise _native.BlklabError(f"ray address '{address}': expected HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as e:
        raise _native.BlklabError(
            f"ray address '{address}' does not answer ({e}; waited at most {timeout_s:g} s)"
        ) from None


def _ray_task(src, combos, seeds, indices, cache):
    from blklab import _native as native

    return native.run_batch(src, combos, seeds, indices, 1, cache)


def _batch_size(src, combos, seeds, first: int, min_task_s: float) -> int:
    """Runs per Ray task for at least `min_task_s` of work, from the time of
    one run here. Only the batching depends on it, never the results."""
    t0 = time.perf_counter()
    _native.run_batch(src, combos, seeds, [first], 1, None)
    one = max(time.perf_counter() - t0, 1e-4)
    return max(1, int(min_task_s / one + 0.999))


def _run_ray(src, combos, seeds, indices, cache, address, progress, batch_size,
             min_task_s, connect_timeout_s) -> List[Row]:
    try:
        import ray  # type: ignore
    except ImportError:
        raise _native.BlklabError("backend='ray' needs Ray: pip install ray") from None
    if not ray.is_initialized():
        _check_address(address, connect_timeout_s)
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    if batch_size is None:
        batch_size = _batch_size(src, combos, seeds, indices[0], min_task_s) if indices else 1
    task = ray.remote(_ray_task)
    src_ref = ray.put(src)
    combos_ref = ray.put(combos)
    pending = {}
    for chunk in _chunks(indices, batch_size):
        pending[task.remote(src_ref, combos_ref, seeds, chunk, cache)] = len(chunk)
    rows: List[Row] = []
    waiting = list(pending)
    while waiting:
        done, waiting = ray.wait(waiting, num_returns=1)
        for ref in done:
            rows.extend(ray.get(ref))
            progress.add(pending[ref])
    return rows


def plan(scenario: Union[Scenario, str, os.PathLike],
         grid: Union[Mapping[str, Sequence], Sequence[str], None]) -> Tuple[Scenario, List[Combo]]:
    sc = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
    combos = variant_list(grid) if grid else [[]]
    return sc, combos


def run_plan(sc: Scenario, combos: List[Combo], seeds: int, backend: str = "local",
             cache: Optional[Union[str, os.PathLike]] = None, jobs: int = 0,
             address: Optional[str] = None, progress: bool = True,
             batch_size: Optional[int] = None, min_task_s: float = 0.1,
             connect_timeout_s: float = 5.0,
             indices: Optional[Sequence[int]] = None) -> List[Row]:
    """Run a plan's runs (all, or `indices`) and return the rows by run index."""
    src = sc.source()
    n = _native.plan_runs(src, combos, seeds)  # checks every combination first
    idx = list(range(n)) if indices is None else list(indices)
    cache_dir = os.fspath(cache) if cache is not None else None
    bar = _Progress(len(idx), progress)
    try:
        if backend == "local":
            rows = _run_local(src, combos, seeds, idx, jobs, cache_dir, bar)
        elif backend == "ray":
            rows = _run_ray(src, combos, seeds, idx, cache_dir, address, bar, batch_size,
                            min_task_s, connect_timeout_s)
        else:
            raise _native.BlklabError(f"backend '{backend}': expected 'local' or 'ray'")
    finally:
        bar.close()
    rows.sort(key=lambda r: r[0])
    return rows


def rows_frame(rows: List[Row]) -> pd.DataFrame:
    """One row per run: `run` (index), the parameters, `seed`, the metrics
    (`LABEL.FIGURE`: iops, mbps, slat_ms, clat_ms, clat_max_ms, p90_ms,
    p99_ms, p999_ms, p9999_ms)."""
    out = []
    for index, params, seed, metrics in rows:
        d = {"run": index}
        d.update(dict(params))
        d["seed"] = seed
        d.update(dict(metrics))
        out.append(d)
    return pd.DataFrame(out)


def sweep(scenario: Union[Scenario, str, os.PathLike],
          grid: Union[Mapping[str, Sequence], Sequence[str], None] = None,
          seeds: int = 1, backend: str = "local",
          cache: Optional[Union[str, os.PathLike]] = None, *, jobs: int = 0,
          address: Optional[str] = None, progress: bool = True,
          batch_size: Optional[int] = None, min_task_s: float = 0.1,
          connect_timeout_s: float = 5.0) -> pd.DataFrame:
    """Run `scenario` for every combination of `grid` ({key: [values]}, any
    override key; the first key varies slowest) and `seeds` seeds (the
    scenario's seed, +1, ...), one DataFrame row per run, ordered by run
    index. backend="local": every core (`jobs` threads, 0 = all);
    backend="ray": batches of runs as Ray tasks (`address` for
    ray.init; a local instance when None), each about `min_task_s` of work
    (or `batch_size` runs). `cache=DIR` keeps each run's result on disk: an
    interrupted sweep run again resumes from it."""
    sc, combos = plan(scenario, grid)
    rows = run_plan(sc, combos, seeds, backend, cache, jobs, address, progress,
                    batch_size, min_task_s, connect_timeout_s)
    return rows_frame(rows)
