"""`blklab tune iocost` from Python."""

from __future__ import annotations

import io
import os
from typing import List, Optional, Sequence, Union

import pandas as pd

from . import _native
from .scenario import Scenario
from .sweep import run_plan


class TuneResult:
    """The tuner's answer: `recommended` (the io.cost.qos line, or None),
    `verdict` and `table` (the text the CLI prints), `binding` (the targets
    no searched setting meets, when there is no recommendation),
    `candidates` (every candidate: parameters, each target's worst value,
    others' MB/s, feasible, pareto, recommended) and `pareto`."""

    def __init__(self, table: str, verdict: str, csv: str, recommended: Optional[str],
                 binding: List[str], html: str = ""):
        self.html = html
        self.table = table
        self.verdict = verdict
        self.csv = csv
        self.recommended = recommended
        self.binding = binding
        self.candidates = pd.read_csv(io.StringIO(csv))

    @property
    def pareto(self) -> pd.DataFrame:
        return self.candidates[self.candidates["pareto"]].sort_values(
            "others_mbps", ascending=False, kind="stable")

    def __str__(self) -> str:
        return self.table + "\n" + self.verdict


def tune_iocost(scenario: Union[Scenario, str, os.PathLike], protect: Union[str, Sequence[str]],
                targets: Union[str, Sequence[str]], seeds: int = 1, *,
                rpct: Optional[Sequence[float]] = None, rlat: Optional[Sequence[int]] = None,
                wpct: Optional[Sequence[float]] = None, wlat: Optional[Sequence[int]] = None,
                min: Optional[Sequence[float]] = None, max: Optional[Sequence[float]] = None,
                scale: Optional[Sequence[float]] = None, phase: Optional[str] = None,
                backend: str = "local",
                cache=None, jobs: int = 0, address: Optional[str] = None,
                progress: bool = True, csv: Optional[Union[str, os.PathLike]] = None,
                report: Optional[Union[str, os.PathLike]] = None,
                **ray_options) -> TuneResult:
    """Search io.cost.qos (rpct, rlat µs, wpct, wlat µs, min, max; writes
    tied to reads unless given; optionally `scale` of the model's rates)
    for settings under which the `protect` cgroups' jobs meet `targets`
    (`"p99<=5ms"`, `"iops>=190"`; worst over seeds) while the other jobs get
    the most MB/s (mean over seeds; `seeds` defaults to 1 as the CLI's
    `--seeds`, more make the answer hold for more seeds). Runs on the sweep machinery
    (`backend`, `cache`, `address` as for `sweep`). `csv=FILE` writes
    every candidate, `report=FILE.html` the page with the trade-off plot.
    In a scenario with run phases, `phase="NAME"` judges only that phase's
    jobs (the measured phase after a warm-up), as the CLI's `--phase`."""
    sc = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
    protect = [protect] if isinstance(protect, str) else list(protect)
    targets = [targets] if isinstance(targets, str) else list(targets)
    as_list = lambda v, t: None if v is None else [t(x) for x in v]  # noqa: E731
    setup = _native.TuneSetup(sc.source(), protect, targets, seeds,
                              as_list(rpct, float), as_list(rlat, int), as_list(wpct, float),
                              as_list(wlat, int), as_list(min, float), as_list(max, float),
                              as_list(scale, float), phase)
    combos, seeds = setup.plan()
    # the candidates' overrides go after the scenario's own
    rows = run_plan(sc, combos, seeds, backend=backend, cache=cache, jobs=jobs,
                    address=address, progress=progress, **ray_options)
    table, verdict, csv_text, recommended, binding, html = setup.evaluate(rows)
    for path, text in ((csv, csv_text), (report, html)):
        if path is not None:
            _write_whole(path, text)
    return TuneResult(table, verdict, csv_text, recommended, binding, html)


def _write_whole(path, text: str) -> None:
    """Through a temporary file beside it and a rename: whole, or not at all."""
    tmp = os.fspath(path) + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
