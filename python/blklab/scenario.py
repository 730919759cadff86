"""Scenarios, runs and comparisons (the `blklab run` and `blklab compare` of Python)."""

from __future__ import annotations

import json
import os
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _native

Variants = Union[Mapping[str, Sequence[str]], Sequence[str]]


class Scenario:
    """A scenario (TOML) with overrides. Immutable in what it ran: `set`
    returns the same object for chaining but every `run` uses the overrides
    set so far, in order."""

    def __init__(self, text: str, path: str, sets: Optional[List[Tuple[str, str]]] = None):
        self._text = text
        self._path = path
        self._sets: List[Tuple[str, str]] = list(sets or [])
        _native.check(self._text, self._path, self._sets)

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "Scenario":
        """Load a scenario file; problems raise BlklabError with file:line:col."""
        p = os.fspath(path)
        return cls(_native.read_scenario(p), p)

    @classmethod
    def from_toml(cls, text: str, name: str = "<string>") -> "Scenario":
        """A scenario from TOML text; `name` stands for the file in messages
        (relative job files are read from the current directory)."""
        return cls(text, name)

    @property
    def path(self) -> str:
        return self._path

    @property
    def text(self) -> str:
        return self._text

    @property
    def overrides(self) -> List[Tuple[str, str]]:
        return list(self._sets)

    def source(self) -> Tuple[str, str, List[Tuple[str, str]]]:
        """(text, path, overrides): what the native functions take."""
        return (self._text, self._path, list(self._sets))

    def set(self, key: str, value) -> "Scenario":
        """Override any key `blklab run --set` takes: a switch
        (`iocost.busy_level_fix`), `seed`, a cgroup file
        (`cgroup./cgB.io.max`), a device field (`device.sda.model.preset`), a
        job field or fio option (`job.cgB-4k.bs`), `run.*`, `pagecache.*`.
        The scenario is checked with it at once: a bad value raises
        BlklabError with the kernel's error (EINVAL, ENODEV, ...)."""
        value = _value_text(value)
        sets = self._sets + [(key, value)]
        _native.check(self._text, self._path, sets)
        self._sets = sets
        return self

    def copy(self) -> "Scenario":
        return Scenario(self._text, self._path, self._sets)

    def run(self, seed: Optional[int] = None, trace: bool = False,
            timeseries: bool = False, interval_ms: int = 100) -> "Result":
        """Simulate (the GIL is released meanwhile). `trace=True` keeps the
        controller trace events for `Result.trace` (in memory: for short
        runs); `timeseries=True` records the controller time series for
        `Result.timeseries(name)` (`blklab run --timeseries`, per-interval
        tables in intervals of `interval_ms`; bounded in memory). Neither
        changes the run."""
        docs, groups, events, series = _native.run(self._text, self._path, self._sets, seed,
                                                   trace, interval_ms if timeseries else None)
        return Result(docs, groups, events, series)

    def __repr__(self) -> str:
        return f"Scenario({self._path!r}, overrides={self._sets!r})"


def _value_text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


class Result:
    """One run's results."""

    def __init__(self, docs: List[str], groups, events, series=None):
        self._docs = docs
        self._groups = groups
        self._events = events
        self._series = {name: (cols, rows) for name, cols, rows in (series or [])}

    @property
    def fio_json_text(self) -> str:
        """Exactly what `blklab run --output-format json` prints."""
        return "".join(self._docs)

    @property
    def fio_json(self) -> List[dict]:
        """fio's JSON documents, one per fio invocation (`[[job]]` entry)."""
        return [json.loads(d) for d in self._docs]

    @property
    def jobs(self) -> pd.DataFrame:
        """One row per job or reporting group, with fio's JSON field names
        flattened with dots (`read.iops`, `mixed.clat_ns.percentile.99.000000`),
        plus the scenario's `label`, `cgroup`, `device` and `invocation`."""
        rows = []
        k = 0
        for inv, doc in enumerate(self.fio_json):
            for job in doc.get("jobs", []):
                flat = pd.json_normalize(job, sep=".").iloc[0].to_dict()
                label, cgroup, device, invocation, _gid = self._groups[k]
                k += 1
                rows.append({"label": label, "cgroup": cgroup, "device": device,
                             "invocation": invocation, **flat})
        return pd.DataFrame(rows)

    @property
    def trace(self) -> pd.DataFrame:
        """Controller trace events (the run must have had `trace=True`):
        `time_ns`, `system` and `event` (the tracepoint's, e.g. `iocost`,
        `iocost_ioc_vrate_adj`), `payload` (its text, as `blklab run --trace`
        writes it)."""
        if self._events is None:
            raise _native.BlklabError("no trace: run with trace=True")
        rows = [(t, *(name.split(":", 1) if ":" in name else ("", name)), payload)
                for t, name, payload in self._events]
        return pd.DataFrame(rows, columns=["time_ns", "system", "event", "payload"])


    @property
    def timeseries_names(self) -> List[str]:
        """The recorded tables (iocost_period, iocost_cgroup, throttle,
        device, cgroup_io, latency_cdf, iotrack); empty without `timeseries=True`."""
        return list(self._series)

    def timeseries(self, name: str) -> pd.DataFrame:
        """One controller time-series table (the run must have had
        `timeseries=True`): the same columns as the CSV file `blklab run
        --timeseries DIR` writes for it (docs/report.md)."""
        if not self._series:
            raise _native.BlklabError("no time series: run with timeseries=True")
        if name not in self._series:
            raise _native.BlklabError(
                f"no time series '{name}' (tables: {', '.join(self._series)})")
        cols, rows = self._series[name]
        return pd.DataFrame(rows, columns=cols)


def variant_list(variants: Variants) -> List[List[Tuple[str, str]]]:
    """`{"key": [a, b]}` or `["key=a,b", ...]` as the cross product of
    (key, value) lists, the first key varying slowest (as `blklab compare`)."""
    if isinstance(variants, Mapping):
        axes = [(k, [_value_text(v) for v in vs]) for k, vs in variants.items()]
    else:
        axes = []
        for spec in variants:
            if "=" not in spec:
                raise _native.BlklabError(f"variant {spec}: expected KEY=A,B")
            k, vals = spec.split("=", 1)
            axes.append((k, [v for v in vals.split(",") if v]))
    for k, vs in axes:
        if not vs:
            raise _native.BlklabError(f"variant {k}: no values")
    return _native.product(axes)


def compare(scenario: Union[Scenario, str, os.PathLike], variants: Variants) -> pd.DataFrame:
    """`blklab compare` as a DataFrame: rows (CGROUP, METRIC), one column
    per variant (its values, comma-separated), and `change` (percent from
    the first variant to the last) when there are several. Variants may
    set any override key, not only switches."""
    sc = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
    text, path, sets = sc.source()
    results = _native.compare(text, path, sets, variant_list(variants))
    metrics = list(_native.COMPARE_METRICS)
    index = []
    columns: Dict[str, List[float]] = {name: [] for name, _ in results}
    first_rows = results[0][1]
    for gi, (label, _vals) in enumerate(first_rows):
        for mi, m in enumerate(metrics):
            index.append((label, m))
            for name, rows in results:
                columns[name].append(rows[gi][1][mi] if gi < len(rows) else float("nan"))
    df = pd.DataFrame(columns, index=pd.MultiIndex.from_tuples(index, names=["CGROUP", "METRIC"]))
    if len(results) > 1:
        a = df[results[0][0]]
        b = df[results[-1][0]]
        df["change"] = ((b - a) / a * 100.0).where(a.abs() > 1e-12)
    return df
