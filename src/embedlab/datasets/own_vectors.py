"""Own datasets of kind vectors: a CSV / TSV table with a header line, an ``.npy`` array or
an ``.npz`` archive (:mod:`embedlab.datasets.own` describes the formats)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from embedlab.datasets import DatasetError
from embedlab.datasets.own_cells import (
    fast_table,
    first_row,
    label_codes,
    numbers,
    read_delimited,
    where,
)


def read_vectors_table(
    path: str | Path, sep: str, labels: str | None = None, names: str | None = None
) -> tuple[np.ndarray, np.ndarray | None, pd.DataFrame, dict]:
    """(X, labels or None, items, meta) of a CSV / TSV with a header line."""
    path = Path(path)
    header = first_row(path, sep)
    if header is None:
        read_delimited(path, sep)  # raises, naming the problem
        raise DatasetError(f"{path}: no header line")
    for option, column in (("labels", labels), ("names", names)):
        if column is not None and column not in header:
            raise DatasetError(
                f"{path}, line 1: no column {column!r} (the {option} column); header: {header}"
            )
    text_columns = [header.index(c) for c in (labels, names) if c is not None]
    coords = [k for k in range(len(header)) if k not in text_columns]
    if not coords:
        raise DatasetError(f"{path}, line 1: no coordinate column besides labels / names")
    fast = fast_table(path, sep, header, text_columns)
    if fast is not None:
        X, text = fast
    else:
        rows, lines = read_delimited(path, sep)
        body, lines = np.asarray(rows[1:], dtype=object), np.asarray(lines[1:])
        if len(body) == 0:
            raise DatasetError(f"{path}: a header line and no rows")
        X = numbers(
            body[:, coords], path, lines, [header[k] for k in coords], [k + 1 for k in coords]
        )
        text = {k: body[:, k].astype(str) for k in text_columns}
        if labels is not None:
            k = header.index(labels)
            empty = np.flatnonzero(text[k] == "")
            if empty.size:
                raise DatasetError(
                    f"{where(path, int(lines[empty[0]]), k + 1, labels)}: empty label"
                )
    if names is not None:
        item_names = text[header.index(names)]
    else:
        item_names = np.arange(len(X)).astype(str)
    items = pd.DataFrame({"name": item_names})
    meta: dict[str, Any] = {"columns": [header[k] for k in coords]}
    y = None
    if labels is not None:
        raw = text[header.index(labels)]
        y, label_names = label_codes(raw)
        items["label"] = raw
        if label_names is not None:
            meta["label_names"] = label_names
    return X, y, items, meta


def _finite_array(path: Path, what: str, X: Any) -> np.ndarray:
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise DatasetError(f"{path}: {what} must be a non-empty 2-D array, got shape {X.shape}")
    if not (np.issubdtype(X.dtype, np.number) or X.dtype == bool):
        raise DatasetError(f"{path}: {what} holds {X.dtype} values, not numbers")
    X = X.astype(np.float64)
    bad = ~np.isfinite(X)
    if bad.any():
        r, c = (int(k) for k in np.argwhere(bad)[0])
        raise DatasetError(
            f"{path}: {what} row {r}, column {c} (from 0) is {X[r, c]!r}, not a finite number "
            f"({int(bad.sum())} such values)"
        )
    return X


def _load_numpy(path: Path, suffix: str):
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise DatasetError(f"{path}: not a readable {suffix} file ({exc})") from None


def read_vectors_npy(path: str | Path) -> np.ndarray:
    """X of an ``.npy`` file (one 2-D numeric array)."""
    path = Path(path)
    X = _load_numpy(path, ".npy")
    if not isinstance(X, np.ndarray):
        raise DatasetError(f"{path}: holds several arrays (an .npz?); use format npz")
    return _finite_array(path, "the array", X)


def read_vectors_npz(
    path: str | Path, array: str = "X", labels: str | None = None
) -> tuple[np.ndarray, np.ndarray | None, dict]:
    """(X, labels or None, meta) of an ``.npz`` file: the arrays ``array`` and ``labels``."""
    path = Path(path)
    npz = _load_numpy(path, ".npz")
    if isinstance(npz, np.ndarray):
        raise DatasetError(f"{path}: holds one array (an .npy?); use format npy")
    with npz:
        keys = list(npz.files)
        for option, key in (("array", array), ("labels", labels)):
            if key is not None and key not in keys:
                raise DatasetError(f"{path}: no array {key!r} (the {option} option); has {keys}")
        X = _finite_array(path, f"array {array!r}", npz[array])
        meta: dict[str, Any] = {}
        y = None
        if labels is not None:
            raw = np.asarray(npz[labels])
            if raw.ndim != 1 or len(raw) != len(X):
                raise DatasetError(
                    f"{path}: labels array {labels!r} has shape {raw.shape}, expected "
                    f"({len(X)},): one label per row of {array!r}"
                )
            if raw.dtype.kind == "f":
                bad = np.flatnonzero(~np.isfinite(raw) | (raw != np.round(raw)))
                if bad.size:
                    raise DatasetError(
                        f"{path}: labels array {labels!r} row {int(bad[0])} (from 0) is "
                        f"{raw[bad[0]]!r}, not an integer label"
                    )
            y, label_names = label_codes(raw.astype(str) if raw.dtype.kind in "USO" else
                                    raw.astype(np.int64).astype(str))
            if label_names is not None:
                meta["label_names"] = label_names
    return X, y, meta
