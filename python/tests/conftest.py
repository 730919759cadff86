"""Shared fixtures: the repository's examples and the `blklab` binary the
Python results are checked against."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TUNE_CASE = ROOT / "crates" / "lab" / "tests" / "data" / "tune-vrate.toml"
TUNE_PHASED = ROOT / "crates" / "lab" / "tests" / "data" / "tune-vrate-phased.toml"


@pytest.fixture(scope="session")
def blklab_bin() -> pathlib.Path:
    """target/release/blklab (BLKLAB_BIN overrides), built when missing."""
    env = os.environ.get("BLKLAB_BIN")
    if env:
        return pathlib.Path(env)
    b = ROOT / "target" / "release" / "blklab"
    if not b.exists():
        subprocess.run(["cargo", "build", "--release", "-p", "blklab"], cwd=ROOT, check=True)
    return b


def cli(blklab_bin, *args) -> str:
    r = subprocess.run([str(blklab_bin), *map(str, args)], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    """Relative paths (examples/...) as the command line sees them."""
    monkeypatch.chdir(ROOT)
