"""Shared fixtures: the repository, the dataset registry and the raw-file mirror.

The mirror (byte-exact raw files) is ``../shared/datasets`` beside the checkout, or the folder
named by ``EMBEDLAB_MIRROR``. Tests that need it fail under CI when it is absent, and are
skipped elsewhere.
"""

from __future__ import annotations

import os

# Parallel numba kernels on a loaded 2-core machine: GNU OpenMP's default busy-waiting makes a
# short parallel region 100x slower when threads compete; passive waiting costs ~nothing here.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
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


def pytest_collection_modifyitems(config, items):
    """The tests marked ``slow`` run first, the rest in file order. pytest-xdist hands the
    tests out in this order, so a long test is never the last one left on a worker while
    the other worker idles."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
