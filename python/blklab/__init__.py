"""blklab from Python: load scenarios, override any key, run them (results
as fio's JSON and pandas DataFrames), compare variants, sweep grids on
every core or on Ray, and tune io.cost.qos. See docs/python.md."""

from ._native import VERSION as __version__, BlklabError
from .scenario import Result, Scenario, compare
from .sweep import sweep
from .tune import TuneResult, tune_iocost

__all__ = ["BlklabError", "Result", "Scenario", "TuneResult", "compare", "sweep",
           "tune_iocost", "__version__"]
