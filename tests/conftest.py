"""Shared fixtures: the repository, the dataset registry and the raw-file mirror.

The mirror (byte-exact raw files) is ``../shared/datasets`` beside the checkout, or the folder
named by ``EMBEDLAB_MIRROR``. Tests that need it fail under CI when it is absent, and are
skipped elsewhere.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable

# Parallel numba kernels on a loaded 2-core machine: GNU OpenMP's default busy-waiting makes a
# short parallel region 100x slower when threads compete; passive waiting costs ~nothing here.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# pytest-xdist runs one test process per core, so each process's BLAS keeps to its share of the
# cores (and so do the workflow runs the tests start). OpenBLAS's threads spin while they wait,
# so more BLAS threads than cores spend their CPU spinning on small matrices (GPy's models,
# the K-form projections).
os.environ.setdefault(
    "OPENBLAS_NUM_THREADS",
    str(max(1, (os.cpu_count() or 1) // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))),
)
from pathlib import Path

import pytest

from embedlab import registry as registry_mod
from embedlab.datasets import build_dataset

REPO = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("EMBEDLAB_MIRROR", REPO.parent / "shared" / "datasets"))


@pytest.fixture(scope="session")
def registry():
    return registry_mod.load(REPO / "config" / "datasets.yaml")


@pytest.fixture(scope="session")
def mirror() -> Path:
    if not (MIRROR / "MANIFEST.tsv").is_file():
        msg = f"dataset mirror not found at {MIRROR} (set EMBEDLAB_MIRROR)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return MIRROR


@pytest.fixture(scope="session")
def build_from_mirror(registry, mirror):
    """``build_from_mirror(name, **overrides)``: build a registry dataset from the mirror files."""
    cache: dict = {}

    def _build(name: str, **overrides):
        key = (name, tuple(sorted(overrides.items())))
        if key not in cache:
            spec = registry_mod.dataset_spec(registry, name, overrides)
            cache[key] = build_dataset(name, spec, mirror)
        return cache[key]

    return _build


@pytest.fixture(scope="session")
def once_per_run(tmp_path_factory):
    """``once_per_run(name, make)``: a folder where ``make(folder)`` ran once in this test
    run, shared by all pytest-xdist workers. The first worker to ask runs it, under a file
    lock; a worker that asks meanwhile waits, then reads the same folder. (A session fixture
    alone runs once per worker, and xdist's ``loadgroup`` does not group on pytest 9.2.)"""
    done: dict[str, Path] = {}

    def run(name: str, make: Callable[[Path], None]) -> Path:
        if name in done:
            return done[name]
        if "PYTEST_XDIST_WORKER" not in os.environ:  # one process: nothing to share
            folder = tmp_path_factory.mktemp(name)
            make(folder)
        else:  # the workers' base folders sit in one folder of this run
            shared = tmp_path_factory.getbasetemp().parent
            folder = shared / name
            with open(shared / f"{name}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not (shared / f"{name}.done").exists():
                    shutil.rmtree(folder, ignore_errors=True)
                    folder.mkdir()
                    make(folder)
                    (shared / f"{name}.done").touch()
        done[name] = folder
        return folder

    return run


@pytest.fixture(scope="session")
def tiny_run(once_per_run):
    """``tiny_run(tmp_path)``: ``tmp_path / "work"`` after a finished run of the tiny workflow
    (tests/test_workflow.py), with a copy of its mirror at ``tmp_path / "mirror"`` (its config
    still names the mirror the run read). The run happens once per test run; each test gets
    its own copy (file times kept, as Snakemake compares them), so it may edit it."""
    from .helpers import snakemake
    from .test_workflow import _tiny_workdir

    def make(folder: Path) -> None:
        work = _tiny_workdir(folder)
        snakemake("--cores", "2", "--directory", str(work), cwd=work)

    def copy(tmp_path: Path) -> Path:
        done = once_per_run("tiny_run", make)
        for name in ("work", "mirror"):
            shutil.copytree(done / name, tmp_path / name, symlinks=True)
        return tmp_path / "work"

    return copy


def pytest_collection_modifyitems(config, items):
    """The tests marked ``slow`` run first, the rest in file order. pytest-xdist hands the
    tests out in this order, so a long test is never the last one left on a worker while
    the other worker idles."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
