"""Own datasets of kind triplets: a CSV of index triples and an optional labels file
(:mod:`embedlab.datasets.own` describes the format)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from embedlab.datasets import DatasetError
from embedlab.datasets.own_cells import (
    fast_table,
    first_row,
    numbers,
    read_delimited,
    read_text,
    where,
)


def read_labels_file(path: str | Path) -> np.ndarray:
    """The label text of each item: one label a line (line k + 1 is item k's)."""
    path = Path(path)
    lines = read_text(path).splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise DatasetError(f"{path}: no labels")
    labels = np.asarray([s.strip() for s in lines])
    empty = np.flatnonzero(labels == "")
    if empty.size:
        raise DatasetError(f"{where(path, int(empty[0]) + 1, 1)}: empty label")
    return labels


def read_triplets(
    path: str | Path, n: int | None = None, first_index: int = 0
) -> tuple[np.ndarray, int, dict]:
    """(triplets from 0, n, meta) of a CSV of index triples with an optional header line (a
    first line of three non-numeric fields). ``n`` defaults to the largest index + 1."""
    path = Path(path)
    first = first_row(path, ",")
    header = None
    if first is not None and pd.to_numeric(pd.Series(first), errors="coerce").isna().all():
        header = first
    fast = fast_table(path, ",", header, []) if first is not None and len(first) == 3 else None
    if fast is not None and np.array_equal(fast[0], np.round(fast[0])):
        values, cells = fast[0], None
        lines = np.arange(len(values)) + (2 if header is not None else 1)
    else:
        rows, lines = read_delimited(path, ",")
        if len(rows[0]) != 3:
            raise DatasetError(
                f"{where(path, lines[0])}: {len(rows[0])} fields, a triplet has 3"
            )
        cells, lines = np.asarray(rows, dtype=object), np.asarray(lines)
        if header is not None:
            cells, lines = cells[1:], lines[1:]
        if len(cells) == 0:
            raise DatasetError(f"{path}: a header line and no triplets")
        values = numbers(cells, path, lines, header or [None, None, None])
    columns = header or [None, None, None]

    def cell(r: int, c: int) -> str:  # the cell as written (as read, on the fast path)
        return str(cells[r, c]) if cells is not None else str(int(values[r, c]))

    noninteger = np.argwhere(values != np.round(values))
    if noninteger.size:
        r, c = (int(k) for k in noninteger[0])
        raise DatasetError(
            f"{where(path, int(lines[r]), c + 1, columns[c])}: {cell(r, c)!r} is not an "
            "integer index"
        )
    T = values.astype(np.int64) - first_index
    top = int(T.max()) + 1 if n is None else int(n)
    out = np.argwhere((T < 0) | (T >= top))
    if out.size:
        r, c = (int(k) for k in out[0])
        text = f"[{first_index}, {top - 1 + first_index}]" if n is not None else (
            f"from {first_index} (first_index)")
        raise DatasetError(
            f"{where(path, int(lines[r]), c + 1, columns[c])}: index {cell(r, c)} is out of "
            f"range {text}"
        )
    repeat = (T[:, 0] == T[:, 1]) | (T[:, 0] == T[:, 2]) | (T[:, 1] == T[:, 2])
    if repeat.any():
        r = int(np.flatnonzero(repeat)[0])
        raise DatasetError(
            f"{where(path, int(lines[r]))}: the triplet {[cell(r, c) for c in range(3)]} repeats "
            "an index"
        )
    return T, top, {"columns": header}
