"""Own datasets of kind similarity: an edge list or a square weight matrix
(:mod:`embedlab.datasets.own` describes the formats)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from embedlab.affinities import drop_isolated
from embedlab.datasets import DatasetError
from embedlab.datasets.own_cells import fast_table, numbers, read_text, where
from embedlab.datasets.own_vectors import read_vectors_npy


def read_edges(
    path: str | Path, directed: bool = False, sep: str = "whitespace"
) -> tuple[sp.csr_matrix, pd.DataFrame, dict]:
    """(W, items, counts) of an edge list (module docstring); ``sep`` one of
    :data:`EDGE_SEPS`. A pair listed again with the same weight counts once (edge lists often
    give an undirected edge in both directions); with another weight it is an error naming
    both lines."""
    path = Path(path)
    rows = []
    n_fields = first_line = None
    for lineno, line in enumerate(read_text(path).splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        fields = text.split() if sep == "whitespace" else [f.strip() for f in text.split("\t")]
        if len(fields) not in (2, 3):
            raise DatasetError(
                f"{where(path, lineno)}: {len(fields)} fields, expected 'i j' or 'i j weight'"
            )
        if n_fields is None:
            n_fields, first_line = len(fields), lineno
        elif len(fields) != n_fields:
            raise DatasetError(
                f"{where(path, lineno, min(len(fields), n_fields) + 1)}: {len(fields)} fields, "
                f"line {first_line} has {n_fields} (a ragged row: every edge or none has a weight)"
            )
        rows.append((lineno, *fields))
    if not rows:
        raise DatasetError(f"{path}: no edges")
    table = pd.DataFrame(rows, columns=["line", "i", "j", "weight"][: 1 + n_fields])
    lines = table["line"].to_numpy()
    if n_fields == 3:
        weight = numbers(table[["weight"]].to_numpy(), path, lines, ["weight"], [3])[:, 0]
        bad = np.flatnonzero(weight <= 0)
        if bad.size:
            raise DatasetError(
                f"{where(path, int(lines[bad[0]]), 3, 'weight')}: weight "
                f"{table['weight'].iloc[bad[0]]!r} is not positive (leave a missing edge out)"
            )
    else:
        weight = np.ones(len(table))
    ends = pd.concat([table["i"], table["j"]], ignore_index=True)
    if ends.str.fullmatch(r"[+-]?\d+").all():
        ids = ends.astype(np.int64)
        node_ids = np.unique(ids.to_numpy())
        index = np.searchsorted(node_ids, ids.to_numpy())
        node_names = node_ids.astype(str)
    else:
        node_names, index = np.unique(ends.to_numpy().astype(str), return_inverse=True)
    m = len(table)
    i, j = index[:m], index[m:]
    a, b = (np.minimum(i, j), np.maximum(i, j)) if not directed else (i, j)
    pairs = pd.DataFrame({"a": a, "b": b, "w": weight, "line": lines})
    first = pairs.drop_duplicates(["a", "b"])
    clash = pairs.merge(first, on=["a", "b"], suffixes=("", "_first"))
    clash = clash[clash["w"] != clash["w_first"]]
    if len(clash):
        c = next(clash.sort_values("line").itertuples())
        raise DatasetError(
            f"{where(path, int(c.line), 3, 'weight')}: the edge {node_names[int(c.a)]} - "
            f"{node_names[int(c.b)]} has weight {float(c.w)!r} here and {float(c.w_first)!r} "
            f"on line {int(c.line_first)}"
        )
    loops = first["a"].to_numpy() == first["b"].to_numpy()
    used = first[~loops]
    n_all = len(node_names)
    ra, rb, w = used["a"].to_numpy(), used["b"].to_numpy(), used["w"].to_numpy()
    if directed:
        W = sp.csr_matrix((w, (ra, rb)), shape=(n_all, n_all))
    else:
        W = sp.csr_matrix((np.r_[w, w], (np.r_[ra, rb], np.r_[rb, ra])), shape=(n_all, n_all))
    W, kept = drop_isolated(W)
    if W.shape[0] < 2:
        raise DatasetError(f"{path}: no edge between two different nodes")
    degree = np.diff(W.indptr) + (np.diff(W.tocsc().indptr) if directed else 0)
    items = pd.DataFrame({"name": node_names[kept], "degree": degree})
    counts = {
        "lines": int(m),
        "edges": int(len(first)),
        "self_loops": int(loops.sum()),
        "nodes_in_file": int(n_all),
        "isolated_dropped": int(n_all - len(kept)),
        "n": int(len(kept)),
    }
    return W, items, counts


def read_matrix(path: str | Path) -> np.ndarray:
    """W of a square weight matrix: text (tabs, spaces or commas; no header) or ``.npy``.
    Weights must be finite and non-negative; the diagonal is read but not used."""
    path = Path(path)
    if path.suffix.lower() == ".npy":
        W = read_vectors_npy(path)

        def place(r: int, c: int | None = None) -> str:
            return f"{path}: row {r}" + ("" if c is None else f", column {c}") + " (from 0)"
    else:
        text_lines = read_text(path).splitlines()
        while text_lines and not text_lines[-1].strip():
            text_lines.pop()
        if not text_lines:
            raise DatasetError(f"{path}: the file is empty")
        sep = "," if "," in text_lines[0] else r"\s+"
        fast = fast_table(path, sep, None, [])
        lines = np.arange(1, len(text_lines) + 1)
        if fast is not None and len(fast[0]) == len(text_lines):
            W = fast[0]
        else:
            rows = []
            for lineno, line in enumerate(text_lines, 1):
                if not line.strip():
                    raise DatasetError(f"{where(path, lineno)}: blank line")
                rows.append(re.split(r"[,\s]+", line.strip()))
            width = len(rows[0])
            for r, fields in enumerate(rows):
                if len(fields) != width:
                    raise DatasetError(
                        f"{where(path, r + 1, min(len(fields), width) + 1)}: {len(fields)} "
                        f"fields, line 1 has {width} (a ragged row)"
                    )
            W = numbers(np.asarray(rows, dtype=object), path, lines, [None] * width)

        def place(r: int, c: int | None = None) -> str:
            return where(path, int(lines[r]), None if c is None else c + 1)
    n_rows, n_cols = W.shape
    if n_rows != n_cols:
        first = place(0, n_rows) if n_cols > n_rows else place(n_cols, 0)
        raise DatasetError(
            f"{first}: not square, {n_rows} rows of {n_cols} columns (a similarity matrix is "
            f"square: this is the first {'column' if n_cols > n_rows else 'row'} beyond it)"
        )
    negative = np.argwhere(W < 0)
    if negative.size:
        r, c = (int(k) for k in negative[0])
        raise DatasetError(f"{place(r, c)}: weight {W[r, c]!r} is negative")
    off = W - np.diag(np.diag(W))
    empty = np.flatnonzero((off.sum(axis=1) == 0) & (off.sum(axis=0) == 0))
    if empty.size:
        r = int(empty[0])
        raise DatasetError(
            f"{place(r)}: item {r} (from 0) has no weight to another item, in its row or its "
            f"column ({empty.size} such items); P would have an empty row"
        )
    return W
