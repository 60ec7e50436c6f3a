"""The dataset registry (``config/datasets.yaml``): raw files and dataset builders.

``files`` maps a raw file's path (relative to the mirror / raw folder) to its ``url``,
``sha256`` (of the content as parsed, i.e. after decompression), ``compression`` (``null`` or
``gzip``: how the URL serves it) and ``bytes``.

``datasets`` maps an artifact name to its ``kind``, ``builder`` (``module.function`` inside
:mod:`embedlab.datasets`), the raw ``files`` it reads, the builder ``params`` and, for paper
datasets, the ``paper`` counts to show beside ours.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml


class RegistryError(KeyError):
    """A dataset or file is not in the registry, or its entry is unusable."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain
        return str(self.args[0])


def load(path: str | Path) -> dict[str, Any]:
    """Read the registry YAML at ``path``."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"dataset registry {path} does not exist")
    with path.open() as fh:
        reg = yaml.safe_load(fh) or {}
    for section in ("files", "datasets"):
        if not isinstance(reg.get(section), dict):
            raise RegistryError(
                f"dataset registry {path}: section {section!r} missing or not a map"
            )
    return reg


def dataset_spec(
    registry: Mapping[str, Any], name: str, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The registry entry of dataset ``name`` with ``overrides`` merged into its params."""
    try:
        spec = copy.deepcopy(registry["datasets"][name])
    except KeyError:
        known = ", ".join(sorted(registry["datasets"]))
        raise RegistryError(f"dataset {name!r} is not in the registry (known: {known})") from None
    spec.setdefault("files", [])
    spec.setdefault("params", {})
    if overrides:
        unknown = set(overrides) - set(spec["params"])
        if unknown:
            raise RegistryError(
                f"dataset {name!r}: override of unknown parameter(s) {sorted(unknown)}; "
                f"builder parameters are {sorted(spec['params'])}"
            )
        spec["params"].update(overrides)
    for f in spec["files"]:
        if f not in registry["files"]:
            raise RegistryError(f"dataset {name!r} needs file {f!r}, which has no 'files' entry")
    return spec


def builder(spec: Mapping[str, Any]) -> Callable[..., Any]:
    """Import the builder function named ``module.function`` in :mod:`embedlab.datasets`."""
    target = spec["builder"]
    module_name, _, func_name = target.rpartition(".")
    if not module_name:
        raise RegistryError(f"builder {target!r} must be written 'module.function'")
    module = importlib.import_module(f"embedlab.datasets.{module_name}")
    try:
        return getattr(module, func_name)
    except AttributeError:
        raise RegistryError(
            f"builder {target!r}: no function {func_name!r} in {module.__name__}"
        ) from None
