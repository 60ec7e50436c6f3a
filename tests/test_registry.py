"""The dataset registry agrees with the mirror's MANIFEST and every builder exists."""

import csv
import importlib

import pytest

from embedlab import registry as registry_mod
from embedlab.registry import RegistryError

from .conftest import MIRROR


def test_registry_files_match_manifest(registry, mirror):
    with open(mirror / "MANIFEST.tsv") as fh:
        manifest = {row["path"]: row for row in csv.DictReader(fh, delimiter="\t")}
    assert set(registry["files"]) == set(manifest)
    for path, entry in registry["files"].items():
        row = manifest[path]
        assert entry["sha256"] == row["sha256"], path
        assert entry["bytes"] == int(row["bytes"]), path
        assert row["mirror_url"].startswith(entry["url"]), path
        assert (entry["compression"] == "gzip") == ("gzip of this file" in row["mirror_url"]), path


def test_every_dataset_has_an_importable_builder(registry):
    for name in registry["datasets"]:
        spec = registry_mod.dataset_spec(registry, name)
        func = registry_mod.builder(spec)
        assert callable(func), name
        module = importlib.import_module(func.__module__)
        assert module.__doc__, f"builder module of {name} needs a docstring"


def test_dataset_spec_errors_name_the_problem(registry):
    with pytest.raises(RegistryError, match="'nope' is not in the registry"):
        registry_mod.dataset_spec(registry, "nope")
    with pytest.raises(RegistryError, match=r"unknown parameter\(s\) \['bogus'\]"):
        registry_mod.dataset_spec(registry, "school", {"bogus": 1})
    broken = {"files": {}, "datasets": {"x": {"kind": "vectors", "builder": "a.b", "files": ["f"]}}}
    with pytest.raises(RegistryError, match="needs file 'f'"):
        registry_mod.dataset_spec(broken, "x")


def test_mirror_location_is_beside_the_checkout():
    # CI and the tests read ../shared/datasets (or $EMBEDLAB_MIRROR); never a copy in the repo
    assert "shared" in MIRROR.parts or MIRROR.is_absolute()
