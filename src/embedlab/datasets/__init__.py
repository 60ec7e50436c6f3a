"""Dataset builders: one module per source format.

A builder is a function ``build(files, **params) -> Artifact`` where ``files`` maps each raw
file's registry path (e.g. ``"grqc/ca-GrQc.txt"``) to a local, checksum-verified path, and
``params`` are the registry entry's parameters. It returns an :class:`embedlab.artifacts.Artifact`
of the kind declared in the registry; :func:`build_dataset` validates and writes it.

Builders raise :class:`DatasetError` with the file and what was wrong when a raw file cannot be
parsed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from embedlab import __version__, artifacts, registry


class DatasetError(ValueError):
    """A raw file could not be parsed into a dataset (message names file and problem)."""


def build_dataset(
    name: str,
    spec: Mapping[str, Any],
    raw_dir: str | Path,
    out: str | Path | None = None,
) -> artifacts.Artifact:
    """Run the builder of dataset ``name`` on the raw files under ``raw_dir``.

    The artifact is validated; if ``out`` is given it is written there.
    """
    raw_dir = Path(raw_dir)
    files = {f: raw_dir / f for f in spec.get("files", [])}
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"dataset {name!r}: raw file(s) missing: {', '.join(missing)}")
    art = registry.builder(spec)(files, **spec.get("params", {}))
    if art.kind != spec["kind"]:
        raise DatasetError(
            f"dataset {name!r}: builder {spec['builder']} returned kind {art.kind!r}, "
            f"registry says {spec['kind']!r}"
        )
    art.meta = {
        "builder": spec["builder"],
        "params": dict(spec.get("params", {})),
        "files": list(spec.get("files", [])),
        "description": spec.get("description", ""),
        "paper": dict(spec.get("paper", {})),
        "embedlab_version": __version__,
        **art.meta,
    }
    artifacts.validate(art, name)
    if out is not None:
        artifacts.save(art, out, name)
    return art
