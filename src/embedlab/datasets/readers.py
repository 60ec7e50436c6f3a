"""Shared helpers for the raw-file readers: look up a file, read a MATLAB file, check a shape.

Every failure raises :class:`embedlab.datasets.DatasetError` whose message names the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from embedlab.datasets import DatasetError


def raw_file(files: Mapping[str, Path], key: str) -> Path:
    """The local path of raw file ``key`` (a registry path such as ``"usps/USPS.mat"``).

    So that a new dataset in a known format needs only a registry entry, a builder's default
    path is matched loosely: the exact registry path, else the one file with the same file
    name (another folder), else the only file the builder was given.
    """
    if key in files:
        return Path(files[key])
    same_name = [k for k in files if Path(k).name == Path(key).name]
    if len(same_name) == 1:
        return Path(files[same_name[0]])
    if len(files) == 1:
        return Path(next(iter(files.values())))
    raise DatasetError(f"raw file {key!r} was not given to the builder (got: {sorted(files)})")


def require(condition: bool, path: Path | str, message: str) -> None:
    """Raise ``DatasetError("<path>: <message>")`` unless ``condition`` holds."""
    if not condition:
        raise DatasetError(f"{path}: {message}")


def load_mat(path: Path, names: tuple[str, ...] = ()) -> dict[str, Any]:
    """Read a MATLAB v4-v7.2 file with scipy; require the variables ``names``."""
    import scipy.io  # here, not at the top: most builders that use this module read no .mat
    from scipy.io.matlab import MatReadError

    try:
        mat = scipy.io.loadmat(path)
    except (ValueError, TypeError, OSError, NotImplementedError, MatReadError) as exc:
        raise DatasetError(f"{path}: not a readable MATLAB (v5) file: {exc}") from exc
    missing = [name for name in names if name not in mat]
    require(not missing, path, f"missing variable(s) {missing}; has {sorted(_variables(mat))}")
    return mat


def _variables(mat: Mapping[str, Any]) -> list[str]:
    return [k for k in mat if not k.startswith("__")]


def check_shape(path: Path, name: str, array: np.ndarray, shape: tuple[int | None, ...]) -> None:
    """Require ``array.shape`` to match ``shape`` (``None`` matches any length)."""
    ok = array.ndim == len(shape) and all(
        want is None or got == want for got, want in zip(array.shape, shape, strict=True)
    )
    require(ok, path, f"variable {name!r} has shape {array.shape}, expected {shape}")


def unit_pixels(pixels: np.ndarray, path: Path, name: str) -> np.ndarray:
    """8-bit grey levels -> float64 in [0, 1] (x / 255); rejects values outside 0..255."""
    values = np.asarray(pixels)
    require(values.size > 0, path, f"variable {name!r} is empty")
    lo, hi = float(values.min()), float(values.max())
    require(0 <= lo and hi <= 255, path, f"{name!r} has grey levels in [{lo}, {hi}], not 0..255")
    return values.astype(np.float64) / 255.0
