"""The data steps of the workflow (run by :mod:`embedlab.steps`): a raw file fetched and
verified, a dataset's artifact built. The command line's ``fetch`` / ``build`` verbs call the
same functions."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from embedlab.datasets.settings import (
    BuildSettings,
    FetchSettings,
    OwnBuildSettings,
    OwnFetchSettings,
)

log = logging.getLogger(__name__)


def env_mirrors() -> list[str]:
    """The mirror folders the workflow names in $EMBEDLAB_MIRRORS. They reach a fetch job
    through the environment, not as a setting: where a file comes from is not part of its
    identity (its sha256 is), so adding or moving a mirror must rerun nothing."""
    return [m for m in os.environ.get("EMBEDLAB_MIRRORS", "").split(os.pathsep) if m]


def fetch_registered(
    registry_path: str, name: str, dest: str, mirrors: Sequence[str], offline: bool
) -> Path:
    """Raw file ``name`` of the registry at ``registry_path`` placed at ``dest``: from the
    cache, else a mirror, else its URL (not when ``offline``); its sha256 verified."""
    from embedlab import fetch as fetching
    from embedlab import registry

    reg = registry.load(registry_path)
    try:
        entry = reg["files"][name]
    except KeyError:
        raise registry.RegistryError(
            f"raw file {name!r} is not in the registry {registry_path}"
        ) from None
    got = fetching.fetch(name, entry, dest, mirrors, allow_download=not offline)
    log.info("fetched %s -> %s (sha256 ok)", name, got)
    return got


def log_built(name: str, art: Any, started: float) -> None:
    """One log line for a built artifact: name, kind, seconds since ``started``, summary."""
    seconds = time.perf_counter() - started
    log.info("built %s (%s) in %.1fs: %s", name, art.kind, seconds, art.summary())


def build_registered(
    registry_path: str, name: str, raw_dir: str, out: str, overrides: Mapping | None
) -> None:
    """Dataset ``name`` of the registry built from the raw files under ``raw_dir`` into the
    artifact folder ``out``, its builder's parameters overridden by ``overrides``."""
    from embedlab import registry
    from embedlab.datasets import build_dataset

    spec = registry.dataset_spec(registry.load(registry_path), name, overrides)
    started = time.perf_counter()
    log_built(name, build_dataset(name, spec, raw_dir, out), started)


def fetch(settings: FetchSettings, *, raw: str, path: str) -> None:
    """Registry file ``path`` into the raw-file cache (``raw``)."""
    fetch_registered(settings.registry, path, raw, env_mirrors(), settings.offline)


def build(settings: BuildSettings, *, raw, data, table, meta, dataset: str) -> None:
    """Registry dataset ``dataset``'s artifact (data.npz, items.tsv, meta.json)."""
    out = str(Path(meta).parent)
    build_registered(settings.registry, dataset, settings.raw_dir, out, settings.overrides)


def fetch_own(settings: OwnFetchSettings, *, raw: str, dataset: str, file: str) -> None:
    """The raw file of own dataset ``dataset`` given by url, verified, into the cache."""
    from embedlab.datasets import own

    got = own.fetch_entry(dataset, settings.entry, raw, not settings.offline)
    log.info("fetched own dataset %s -> %s (sha256 ok)", dataset, got)


def build_own(settings: OwnBuildSettings, *, raw, labels, data, table, meta, dataset) -> None:
    """Own dataset ``dataset``'s artifact from its raw file (and triplets' labels file)."""
    from embedlab.datasets import own

    labels_file = labels[0] if labels else None
    started = time.perf_counter()
    art = own.build_own(dataset, settings.entry, raw, labels_file, str(Path(meta).parent))
    log_built(dataset, art, started)
