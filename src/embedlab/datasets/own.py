"""User-declared datasets: one config entry and one raw file in a generic format -> an artifact.

An entry (one item of a config's ``own_datasets:`` map) names its ``kind``, the ``format`` of
its raw file, the file itself (``path``: a local file; or ``url`` + ``sha256``: fetched like the
registry's files) and the format's few options:

============  ==========  ==================================================================
kind          format      raw file, options
============  ==========  ==================================================================
vectors       csv, tsv    one row per point, a header line naming the columns; every column
                          is a coordinate except ``labels`` (the label column, optional) and
                          ``names`` (the item-name column, optional)
vectors       npy         one 2-D numeric array (no labels: an ``.npy`` holds one array)
vectors       npz         the array ``array`` (default ``X``); ``labels`` names a 1-D array
similarity    edges       one edge a line, ``i j [weight]`` separated by tabs or spaces, node
                          names or integer ids, ``#`` starts a comment; ``directed`` (default
                          false) reads a line as i -> j only; ``sep: tab`` splits at tabs
                          only, so node names may hold spaces (default ``whitespace``)
similarity    matrix      a square matrix of weights, one row a line, separated by tabs,
                          spaces or commas (or an ``.npy`` file)
triplets      triplets    a CSV of index triples ``i,j,l`` ("i is more similar to j than to
                          l"), an optional header line; ``labels``: a second file with one
                          label a line, item by item; ``n``: the number of items; ``first_index``
                          0 (default) or 1
============  ==========  ==================================================================

Every entry may also give ``description`` and, with ``path``, a ``sha256`` that the file must
have. Co-occurrence data has no generic format: a new format keeps its Python builder and
registry entry (README, "Adding a dataset").

The artifacts are those of the registry's builders for the same kind, so each paper reads a
user's dataset as it reads its own:

* vectors: ``X`` (float64); with labels, ``labels`` (int64 codes) and, where the labels are
  text, ``meta["label_names"]`` (code k is ``label_names[k]``; names sorted); integer labels
  are kept as they are. Items: ``name`` (the ``names`` column, else the row number from 0)
  and ``label`` (the label as written).
* similarity: ``P`` from the weights W (W_ij = W_ji = weight for an undirected edge; W_ij for
  a directed one or a matrix row) as the SNEST paper's networks:
  :func:`embedlab.affinities.row_normalised_symmetric`, p_ij ∝ W_ij / sum_k W_ik + W_ji /
  sum_k W_jk, summing to 1. Self-loops and the diagonal are ignored; an edge-list node left
  without another node is dropped (counted), a matrix row without any weight is an error (rows
  are items: dropping one would renumber the rest). Items: ``name`` (the node's name or id) and
  ``degree``.
* triplets: ``triplets`` (m x 3 int64, from 0), ``meta["n"]``; with labels, ``labels`` as for
  vectors. Items: ``name`` (the index as written in the file) and ``label``.

``meta.json`` records the entry, the builder (``own.<format>``) and each raw file's path, size
and sha256 (``meta["raw"]``). A bad raw file raises :class:`embedlab.datasets.DatasetError`
naming the file, the line (1-based, as an editor shows it) and the column; the whole file is
parsed and checked before anything is written, so a failed build leaves no new file behind.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from embedlab import __version__, artifacts, fetch
from embedlab.affinities import AffinityError, drop_isolated, row_normalised_symmetric
from embedlab.datasets import DatasetError

#: The generic formats of each kind.
FORMATS: dict[str, tuple[str, ...]] = {
    "vectors": ("csv", "tsv", "npy", "npz"),
    "similarity": ("edges", "matrix"),
    "triplets": ("triplets",),
}
#: Fields every entry may have.
COMMON_FIELDS = ("kind", "format", "path", "url", "sha256", "description")
#: The options of each format beyond :data:`COMMON_FIELDS`, with their types.
FORMAT_FIELDS: dict[str, dict[str, type]] = {
    "csv": {"labels": str, "names": str},
    "tsv": {"labels": str, "names": str},
    "npy": {},
    "npz": {"array": str, "labels": str},
    "edges": {"directed": bool, "sep": str},
    "matrix": {},
    "triplets": {"labels": str, "n": int, "first_index": int},
}
#: how an edge list's fields are split: at any run of spaces and tabs, or at each tab only
EDGE_SEPS = ("whitespace", "tab")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
_SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")


class EntryError(ValueError):
    """An ``own_datasets`` entry is malformed (one line per problem, each naming the field)."""


# --------------------------------------------------------------------------------------
# the entry


def entry_problems(name: str, entry: Any) -> list[str]:
    """Every problem of entry ``name``, one line each (``own_datasets.<name>.<field>: ...``);
    empty when the entry is usable. Reads no file: the Snakefile calls it at parse time."""
    where = f"own_datasets.{name}"
    if not isinstance(name, str) or not _NAME.match(name):
        return [f"{where}: the name must be letters, digits, '_' or '-' (it names a folder)"]
    if not isinstance(entry, Mapping):
        return [f"{where}: must be a map with kind, format and path (or url + sha256)"]
    problems = []
    kind, fmt = entry.get("kind"), entry.get("format")
    if kind == "cooccurrence":
        return [
            f"{where}.kind: 'cooccurrence' has no generic format; a new format needs a Python "
            "builder in src/embedlab/datasets and a registry entry (README, 'Adding a dataset')"
        ]
    if kind not in FORMATS:
        problems.append(f"{where}.kind: {kind!r} is not one of {', '.join(FORMATS)}")
    elif fmt not in FORMATS[kind]:
        problems.append(
            f"{where}.format: {fmt!r} is not a format of kind {kind!r} "
            f"(one of {', '.join(FORMATS[kind])})"
        )
    has_path, has_url = "path" in entry, "url" in entry
    if has_path == has_url:
        problems.append(f"{where}: give exactly one of path (a local file) and url")
    for key in ("path", "url", "description"):
        if key in entry and not (isinstance(entry[key], str) and entry[key].strip()):
            problems.append(f"{where}.{key}: must be a non-empty string, got {entry[key]!r}")
    if has_url and "sha256" not in entry:
        problems.append(f"{where}.sha256: required with url (the fetched file is verified)")
    if "sha256" in entry and not (
        isinstance(entry["sha256"], str) and _SHA256.match(entry["sha256"])
    ):
        problems.append(f"{where}.sha256: must be 64 hexadecimal digits, got {entry['sha256']!r}")
    options = FORMAT_FIELDS.get(fmt, {}) if kind in FORMATS and fmt in FORMATS[kind] else None
    for key, value in entry.items():
        if key in COMMON_FIELDS:
            continue
        if options is None:
            continue  # the format is wrong already: its options cannot be judged
        if key not in options:
            allowed = ", ".join(COMMON_FIELDS + tuple(options))
            hint = " (this format has no labels)" if key == "labels" else ""
            problems.append(
                f"{where}.{key}: not a field of format {fmt!r}{hint}; fields: {allowed}"
            )
        elif options[key] is int and (isinstance(value, bool) or not isinstance(value, int)):
            problems.append(f"{where}.{key}: must be an integer, got {value!r}")
        elif options[key] is not int and not isinstance(value, options[key]):
            problems.append(f"{where}.{key}: must be a {options[key].__name__}, got {value!r}")
        elif options[key] is str and not value.strip():
            problems.append(f"{where}.{key}: must not be empty")
    if fmt == "edges" and options is not None and entry.get("sep", "whitespace") not in EDGE_SEPS:
        problems.append(
            f"{where}.sep: must be one of {', '.join(EDGE_SEPS)}, got {entry['sep']!r}"
        )
    if fmt == "triplets" and options is not None:
        if entry.get("first_index", 0) not in (0, 1):
            problems.append(f"{where}.first_index: must be 0 or 1, got {entry['first_index']!r}")
        if isinstance(entry.get("n"), int) and not isinstance(entry["n"], bool) and entry["n"] < 3:
            problems.append(f"{where}.n: must be at least 3 (a triplet has three items)")
    if fmt in ("csv", "tsv") and options is not None and "labels" in entry:
        if entry.get("labels") == entry.get("names"):
            problems.append(f"{where}.names: the same column as labels ({entry['labels']!r})")
    return problems


def check_entry(name: str, entry: Any) -> dict[str, Any]:
    """The entry with its defaults filled in, or :class:`EntryError` listing every problem."""
    problems = entry_problems(name, entry)
    if problems:
        raise EntryError("\n".join(problems))
    out = dict(entry)
    if out["format"] == "npz":
        out.setdefault("array", "X")
    elif out["format"] == "edges":
        out.setdefault("directed", False)
        out.setdefault("sep", "whitespace")
    elif out["format"] == "triplets":
        out.setdefault("first_index", 0)
    return out


def count_items(entry: Mapping[str, Any]) -> int | None:
    """The number of items of a checked entry whose count a glance at its local file gives
    (a table's or matrix's non-empty lines, an array's rows, a triplets entry's ``n`` or
    labels file), without parsing it; None where it takes a build to know (a url entry, an
    edge list, triplets without n or labels). The workflow leaves a dataset out of a paper
    that needs more points before any job runs; the build checks the file itself."""
    fmt = entry["format"]
    if fmt == "triplets":
        if "n" in entry:
            return int(entry["n"])
        source = entry.get("labels")
    else:
        source = entry.get("path") if fmt != "edges" else None
    if source is None or not Path(source).is_file():
        return None
    path = Path(source)
    if fmt == "npz":
        with np.load(path, allow_pickle=False) as loaded:
            if entry["array"] not in loaded.files:
                return None  # the build names the missing array
            return int(loaded[entry["array"]].shape[0])
    if fmt == "npy" or path.suffix == ".npy":
        array = np.load(path, mmap_mode="r", allow_pickle=False)
        return int(array.shape[0]) if array.ndim else None
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = sum(1 for line in fh if line.strip() and not line.lstrip().startswith("#"))
    return lines - 1 if fmt in ("csv", "tsv") else lines


def entry_files(entry: Mapping[str, Any]) -> list[str]:
    """The local files a build of ``entry`` reads as the entry names them: ``path`` (absent
    for a url entry) and a triplets entry's labels file."""
    files = [entry["path"]] if "path" in entry else []
    if entry.get("format") == "triplets" and "labels" in entry:
        files.append(entry["labels"])
    return files


def fetch_entry(
    name: str, entry: Mapping[str, Any], dest: str | Path, allow_download: bool = True
) -> Path:
    """Place the raw file of a url entry at ``dest``, verified against its sha256 (as
    :func:`embedlab.fetch.fetch` does for the registry's files; ``dest`` is the cache)."""
    entry = check_entry(name, entry)
    if "url" not in entry:
        raise EntryError(f"own_datasets.{name}.url: the entry has a path, nothing to fetch")
    spec = {"url": entry["url"], "sha256": entry["sha256"], "compression": None}
    return fetch.fetch(f"own_datasets.{name}", spec, dest, allow_download=allow_download)


# --------------------------------------------------------------------------------------
# reading cells


def _where(
    path: Path, line: int | None = None, column: int | None = None, header: str | None = None
) -> str:
    """``<file>, line L, column C ('<header>')``: lines and columns 1-based, as an editor
    shows them."""
    text = str(path)
    if line is not None:
        text += f", line {line}"
    if column is not None:
        text += f", column {column}" + (f" ({header!r})" if header is not None else "")
    return text


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc})") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def _numbers(
    cells: np.ndarray,
    path: Path,
    lines: np.ndarray,
    names: list[str | None],
    columns: list[int] | None = None,
) -> np.ndarray:
    """float64 of a 2-D array of text cells: rows from file lines ``lines``, columns the file's
    ``columns`` (1-based; default 1, 2, ...) named ``names``. DatasetError at the first cell in
    file order that is not a finite number, naming its line and column."""
    columns = list(range(1, cells.shape[1] + 1)) if columns is None else columns
    frame = pd.DataFrame(cells)
    values = frame.apply(lambda col: pd.to_numeric(col, errors="coerce")).to_numpy(np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        r, c = (int(k) for k in np.argwhere(bad)[0])
        text = str(cells[r, c])
        if not text.strip():
            problem = "empty cell"
        elif math.isnan(values[r, c]) and text.strip().lower() not in ("nan", "-nan", "+nan"):
            problem = f"{text!r} is not a number"
        else:
            problem = f"{text!r} is not a finite number"
        raise DatasetError(
            f"{_where(path, int(lines[r]), columns[c], names[c])}: {problem}"
        )
    return values


def _read_delimited(path: Path, sep: str) -> tuple[list[list[str]], list[int]]:
    """(rows of stripped text cells, the 1-based line of each row) of a delimited file, read
    with the csv module (quotes as in CSV). A row with another number of fields than the first
    is an error naming its line (a ragged row); blank lines at the end are ignored, blank
    lines between rows are errors."""
    rows: list[list[str]] = []
    lines: list[int] = []
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh, delimiter=sep)
            for row in reader:
                rows.append([cell.strip() for cell in row])
                lines.append(reader.line_num)
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc})") from None
    except csv.Error as exc:
        raise DatasetError(f"{path}: not a {sep!r}-separated table ({exc})") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    while rows and not rows[-1]:
        rows.pop()
        lines.pop()
    if not rows:
        raise DatasetError(f"{path}: the file is empty")
    width = len(rows[0])
    for row, line in zip(rows, lines, strict=True):
        if not row:
            raise DatasetError(f"{_where(path, line)}: blank line")
        if len(row) != width:
            raise DatasetError(
                f"{_where(path, line, min(len(row), width) + 1)}: {len(row)} fields, the "
                f"first line has {width} (a ragged row)"
            )
    return rows, lines


def _first_row(path: Path, sep: str) -> list[str] | None:
    """The stripped fields of the first line (None: unreadable or empty; the exact reader then
    says why)."""
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            return [cell.strip() for cell in next(csv.reader(fh, delimiter=sep))]
    except (OSError, UnicodeDecodeError, csv.Error, StopIteration):
        return None


def _fast_table(
    path: Path, sep: str, header: list[str] | None, text_columns: list[int]
) -> tuple[np.ndarray, dict[int, np.ndarray]] | None:
    """(the numeric columns as float64, the text columns) of a regular delimited file, read by
    pandas' C parser; None for any irregularity (a cell that is not a finite number, an empty
    text cell, a short or long row, a blank line, a header pandas reads otherwise). Large
    files are read this way; :func:`_read_delimited` and :func:`_numbers` reread the others
    cell by cell to name the line and column of the problem."""
    if header is not None and len(set(header)) != len(header):
        return None
    try:
        frame = pd.read_csv(
            path,
            sep=sep,
            header=0 if header is not None else None,
            dtype={(header[k] if header is not None else k): str for k in text_columns},
            keep_default_na=False,
            skip_blank_lines=False,
            engine="c",
            low_memory=False,
        )
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError):
        return None
    if len(frame) == 0 or (header is not None and list(frame.columns) != header):
        return None
    numeric = [k for k in range(frame.shape[1]) if k not in text_columns]
    if not all(frame.dtypes.iloc[k].kind in "iuf" for k in numeric):
        return None
    values = frame.iloc[:, numeric].to_numpy(np.float64)
    if not np.isfinite(values).all():
        return None
    text = {k: frame.iloc[:, k].to_numpy().astype(str) for k in text_columns}
    if any((t == "").any() for t in text.values()):
        return None
    return values, text


def _codes(labels: np.ndarray) -> tuple[np.ndarray, list[str] | None]:
    """int64 label codes: integers as written, else codes of the sorted names (and the names)."""
    as_int = pd.to_numeric(pd.Series(labels), errors="coerce")
    if as_int.notna().all() and (as_int == np.round(as_int)).all():
        return as_int.to_numpy().astype(np.int64), None
    names, codes = np.unique(labels.astype(str), return_inverse=True)
    return codes.astype(np.int64), [str(s) for s in names]


# --------------------------------------------------------------------------------------
# vectors


def read_vectors_table(
    path: str | Path, sep: str, labels: str | None = None, names: str | None = None
) -> tuple[np.ndarray, np.ndarray | None, pd.DataFrame, dict]:
    """(X, labels or None, items, meta) of a CSV / TSV with a header line."""
    path = Path(path)
    header = _first_row(path, sep)
    if header is None:
        _read_delimited(path, sep)  # raises, naming the problem
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
    fast = _fast_table(path, sep, header, text_columns)
    if fast is not None:
        X, text = fast
    else:
        rows, lines = _read_delimited(path, sep)
        body, lines = np.asarray(rows[1:], dtype=object), np.asarray(lines[1:])
        if len(body) == 0:
            raise DatasetError(f"{path}: a header line and no rows")
        X = _numbers(
            body[:, coords], path, lines, [header[k] for k in coords], [k + 1 for k in coords]
        )
        text = {k: body[:, k].astype(str) for k in text_columns}
        if labels is not None:
            k = header.index(labels)
            empty = np.flatnonzero(text[k] == "")
            if empty.size:
                raise DatasetError(
                    f"{_where(path, int(lines[empty[0]]), k + 1, labels)}: empty label"
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
        y, label_names = _codes(raw)
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
            y, label_names = _codes(raw.astype(str) if raw.dtype.kind in "USO" else
                                    raw.astype(np.int64).astype(str))
            if label_names is not None:
                meta["label_names"] = label_names
    return X, y, meta


# --------------------------------------------------------------------------------------
# similarity


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
    for lineno, line in enumerate(_read_text(path).splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        fields = text.split() if sep == "whitespace" else [f.strip() for f in text.split("\t")]
        if len(fields) not in (2, 3):
            raise DatasetError(
                f"{_where(path, lineno)}: {len(fields)} fields, expected 'i j' or 'i j weight'"
            )
        if n_fields is None:
            n_fields, first_line = len(fields), lineno
        elif len(fields) != n_fields:
            raise DatasetError(
                f"{_where(path, lineno, min(len(fields), n_fields) + 1)}: {len(fields)} fields, "
                f"line {first_line} has {n_fields} (a ragged row: every edge or none has a weight)"
            )
        rows.append((lineno, *fields))
    if not rows:
        raise DatasetError(f"{path}: no edges")
    table = pd.DataFrame(rows, columns=["line", "i", "j", "weight"][: 1 + n_fields])
    lines = table["line"].to_numpy()
    if n_fields == 3:
        weight = _numbers(table[["weight"]].to_numpy(), path, lines, ["weight"], [3])[:, 0]
        bad = np.flatnonzero(weight <= 0)
        if bad.size:
            raise DatasetError(
                f"{_where(path, int(lines[bad[0]]), 3, 'weight')}: weight "
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
            f"{_where(path, int(c.line), 3, 'weight')}: the edge {node_names[int(c.a)]} - "
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

        def where(r: int, c: int | None = None) -> str:
            return f"{path}: row {r}" + ("" if c is None else f", column {c}") + " (from 0)"
    else:
        text_lines = _read_text(path).splitlines()
        while text_lines and not text_lines[-1].strip():
            text_lines.pop()
        if not text_lines:
            raise DatasetError(f"{path}: the file is empty")
        sep = "," if "," in text_lines[0] else r"\s+"
        fast = _fast_table(path, sep, None, [])
        lines = np.arange(1, len(text_lines) + 1)
        if fast is not None and len(fast[0]) == len(text_lines):
            W = fast[0]
        else:
            rows = []
            for lineno, line in enumerate(text_lines, 1):
                if not line.strip():
                    raise DatasetError(f"{_where(path, lineno)}: blank line")
                rows.append(re.split(r"[,\s]+", line.strip()))
            width = len(rows[0])
            for r, fields in enumerate(rows):
                if len(fields) != width:
                    raise DatasetError(
                        f"{_where(path, r + 1, min(len(fields), width) + 1)}: {len(fields)} "
                        f"fields, line 1 has {width} (a ragged row)"
                    )
            W = _numbers(np.asarray(rows, dtype=object), path, lines, [None] * width)

        def where(r: int, c: int | None = None) -> str:
            return _where(path, int(lines[r]), None if c is None else c + 1)
    n_rows, n_cols = W.shape
    if n_rows != n_cols:
        first = where(0, n_rows) if n_cols > n_rows else where(n_cols, 0)
        raise DatasetError(
            f"{first}: not square, {n_rows} rows of {n_cols} columns (a similarity matrix is "
            f"square: this is the first {'column' if n_cols > n_rows else 'row'} beyond it)"
        )
    negative = np.argwhere(W < 0)
    if negative.size:
        r, c = (int(k) for k in negative[0])
        raise DatasetError(f"{where(r, c)}: weight {W[r, c]!r} is negative")
    off = W - np.diag(np.diag(W))
    empty = np.flatnonzero((off.sum(axis=1) == 0) & (off.sum(axis=0) == 0))
    if empty.size:
        r = int(empty[0])
        raise DatasetError(
            f"{where(r)}: item {r} (from 0) has no weight to another item, in its row or its "
            f"column ({empty.size} such items); P would have an empty row"
        )
    return W


# --------------------------------------------------------------------------------------
# triplets


def read_labels_file(path: str | Path) -> np.ndarray:
    """The label text of each item: one label a line (line k + 1 is item k's)."""
    path = Path(path)
    lines = _read_text(path).splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise DatasetError(f"{path}: no labels")
    labels = np.asarray([s.strip() for s in lines])
    empty = np.flatnonzero(labels == "")
    if empty.size:
        raise DatasetError(f"{_where(path, int(empty[0]) + 1, 1)}: empty label")
    return labels


def read_triplets(
    path: str | Path, n: int | None = None, first_index: int = 0
) -> tuple[np.ndarray, int, dict]:
    """(triplets from 0, n, meta) of a CSV of index triples with an optional header line (a
    first line of three non-numeric fields). ``n`` defaults to the largest index + 1."""
    path = Path(path)
    first = _first_row(path, ",")
    header = None
    if first is not None and pd.to_numeric(pd.Series(first), errors="coerce").isna().all():
        header = first
    fast = _fast_table(path, ",", header, []) if first is not None and len(first) == 3 else None
    if fast is not None and np.array_equal(fast[0], np.round(fast[0])):
        values, cells = fast[0], None
        lines = np.arange(len(values)) + (2 if header is not None else 1)
    else:
        rows, lines = _read_delimited(path, ",")
        if len(rows[0]) != 3:
            raise DatasetError(
                f"{_where(path, lines[0])}: {len(rows[0])} fields, a triplet has 3"
            )
        cells, lines = np.asarray(rows, dtype=object), np.asarray(lines)
        if header is not None:
            cells, lines = cells[1:], lines[1:]
        if len(cells) == 0:
            raise DatasetError(f"{path}: a header line and no triplets")
        values = _numbers(cells, path, lines, header or [None, None, None])
    columns = header or [None, None, None]

    def cell(r: int, c: int) -> str:  # the cell as written (as read, on the fast path)
        return str(cells[r, c]) if cells is not None else str(int(values[r, c]))

    noninteger = np.argwhere(values != np.round(values))
    if noninteger.size:
        r, c = (int(k) for k in noninteger[0])
        raise DatasetError(
            f"{_where(path, int(lines[r]), c + 1, columns[c])}: {cell(r, c)!r} is not an "
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
            f"{_where(path, int(lines[r]), c + 1, columns[c])}: index {cell(r, c)} is out of "
            f"range {text}"
        )
    repeat = (T[:, 0] == T[:, 1]) | (T[:, 0] == T[:, 2]) | (T[:, 1] == T[:, 2])
    if repeat.any():
        r = int(np.flatnonzero(repeat)[0])
        raise DatasetError(
            f"{_where(path, int(lines[r]))}: the triplet {[cell(r, c) for c in range(3)]} repeats "
            "an index"
        )
    return T, top, {"columns": header}


# --------------------------------------------------------------------------------------
# building


def _raw_record(path: Path, expected: str | None, name: str) -> dict[str, Any]:
    if not path.is_file():
        raise FileNotFoundError(f"own_datasets.{name}: raw file {path} does not exist")
    if expected is not None:
        fetch.verify(path, expected, f"own_datasets.{name}")
    return {"path": str(path), "bytes": path.stat().st_size, "sha256": fetch.sha256sum(path)}


def build_own(
    name: str,
    entry: Mapping[str, Any],
    raw: str | Path | None = None,
    labels_file: str | Path | None = None,
    out: str | Path | None = None,
) -> artifacts.Artifact:
    """The artifact of entry ``name`` built from ``raw`` (default: the entry's ``path``) and,
    for triplets with labels, ``labels_file`` (default: the entry's ``labels``); validated,
    and written to ``out`` when given (``meta.json`` last; nothing is written before the raw
    file is parsed and checked)."""
    entry = check_entry(name, entry)
    if raw is None:
        if "path" not in entry:
            raise EntryError(
                f"own_datasets.{name}: a url entry is built from its fetched file; give raw"
            )
        raw = entry["path"]
    raw = Path(raw)
    records = {"data": _raw_record(raw, entry.get("sha256"), name)}
    records["data"]["source"] = entry.get("url", entry.get("path"))
    fmt = entry["format"]
    arrays: dict[str, Any]
    meta: dict[str, Any] = {}
    if fmt in ("csv", "tsv"):
        X, y, items, meta = read_vectors_table(
            raw, "," if fmt == "csv" else "\t", entry.get("labels"), entry.get("names")
        )
        arrays = {"X": X} if y is None else {"X": X, "labels": y}
    elif fmt == "npy":
        X = read_vectors_npy(raw)
        arrays, items = {"X": X}, pd.DataFrame({"name": np.arange(len(X)).astype(str)})
    elif fmt == "npz":
        X, y, meta = read_vectors_npz(raw, entry["array"], entry.get("labels"))
        arrays = {"X": X} if y is None else {"X": X, "labels": y}
        items = pd.DataFrame({"name": np.arange(len(X)).astype(str)})
        if y is not None:
            items["label"] = y if "label_names" not in meta else np.asarray(
                meta["label_names"])[y]
    elif fmt in ("edges", "matrix"):
        if fmt == "edges":
            W, items, counts = read_edges(raw, entry["directed"], entry["sep"])
        else:
            W = read_matrix(raw)
            off = W - np.diag(np.diag(W))
            degree = np.count_nonzero(off, axis=1) + np.count_nonzero(off, axis=0)
            items = pd.DataFrame({"name": np.arange(len(W)).astype(str), "degree": degree})
            counts = {"n": int(len(W)), "weights": int(np.count_nonzero(off))}
        try:
            P = row_normalised_symmetric(W, name=str(raw))
        except AffinityError as exc:
            raise DatasetError(str(exc)) from None
        arrays, meta = {"P": P}, {"counts": counts}
    else:
        labels_path = labels_file if labels_file is not None else entry.get("labels")
        raw_labels = None
        n = entry.get("n")
        if labels_path is not None:
            labels_path = Path(labels_path)
            records["labels"] = _raw_record(labels_path, None, name)
            records["labels"]["source"] = entry.get("labels", str(labels_path))
            raw_labels = read_labels_file(labels_path)
            if n is not None and len(raw_labels) != n:
                raise DatasetError(
                    f"{labels_path}: {len(raw_labels)} labels (one a line), but the entry says "
                    f"n = {n}"
                )
            n = len(raw_labels)
        T, n, meta = read_triplets(raw, n, entry["first_index"])
        arrays = {"triplets": T}
        items = pd.DataFrame({"name": (np.arange(n) + entry["first_index"]).astype(str)})
        if raw_labels is not None:
            y, label_names = _codes(raw_labels)
            arrays["labels"] = y
            items["label"] = raw_labels
            if label_names is not None:
                meta["label_names"] = label_names
        meta["n"] = int(n)
    art = artifacts.Artifact(
        kind=entry["kind"],
        arrays=arrays,
        items=items,
        meta={
            "builder": f"own.{fmt}",
            "own_dataset": True,
            "entry": dict(entry),
            "raw": records,
            "description": entry.get("description", ""),
            "embedlab_version": __version__,
            **meta,
        },
    )
    artifacts.validate(art, name)
    if out is not None:
        artifacts.save(art, out, name)
    return art


# --------------------------------------------------------------------------------------
# which papers can use a kind


@dataclass(frozen=True)
class PaperNeeds:
    """What one paper's experiment needs of a dataset of its kind.

    ``labels``: "required" (the experiment fails without), "optional" (a measure that needs
    them is left out without) or "unused". ``min_points`` is the fewest items it can run on
    under the full config's settings (``ee``: perplexity 40; ``tste``: dims up to 30);
    :func:`paper_problems` takes the values in use.
    """

    paper: str
    kind: str
    labels: str
    min_points: int
    min_dims: int = 1
    min_triplets: int = 0
    note: str = ""
    #: further kinds it takes by converting them (SNEST: vectors, through perplexity P)
    also: tuple[str, ...] = ()

    def takes(self, kind: str) -> bool:
        """Whether the paper's experiment runs on datasets of ``kind``."""
        return kind == self.kind or kind in self.also


#: One entry per paper whose experiment takes a dataset by kind (D-CODE: cooccurrence, which
#: has no generic format).
PAPER_NEEDS: dict[str, PaperNeeds] = {
    "snest": PaperNeeds(
        "snest", "similarity", "unused", 3, also=("vectors",),
        note="Table 1 cells (KL per method) on P (vectors: the perplexity P of snest.perplexity; "
             "n > perplexity + 1); Figs. 2-4 are drawn for the paper's datasets",
    ),
    "ee": PaperNeeds(
        "ee", "vectors", "optional", 42,
        note="perplexity must lie in (1, n - 1]: n >= perplexity + 2; labels give the 1-NN "
             "error column (left empty without)",
    ),
    "diffeomap": PaperNeeds(
        "diffeomap", "vectors", "required", 3, min_dims=3,
        note="the grid search picks (sigma_rel, lam) by leave-one-out 1-NN error on the "
             "labels (use_labels: false runs a single grid point without); the 2-D map needs "
             "more than 2 dimensions",
    ),
    "tste": PaperNeeds(
        "tste", "triplets", "required", 30, min_triplets=10,
        note="the 1-NN error of every fit needs labels; the K forms embed in up to max(dims) "
             "dimensions (30) and need as many items; n_folds (10) folds of the triplets",
    ),
    "dcode": PaperNeeds(
        "dcode", "cooccurrence", "unused", 2,
        note="cooccurrence only (no generic format: a Python builder)",
    ),
}


def papers_for_kind(kind: str) -> list[PaperNeeds]:
    """The papers whose experiment takes datasets of ``kind``, with what each needs."""
    if kind not in artifacts.KINDS:
        raise ValueError(f"unknown kind {kind!r}; kinds: {', '.join(artifacts.KINDS)}")
    return [needs for needs in PAPER_NEEDS.values() if needs.takes(kind)]


def paper_problems(
    paper: str,
    kind: str,
    n: int | None = None,
    has_labels: bool | None = None,
    dims: int | None = None,
    n_triplets: int | None = None,
    perplexity: float | None = None,
    n_folds: int | None = None,
    max_dim: int | None = None,
) -> list[str]:
    """Why ``paper`` cannot use a dataset (empty: it can). Facts left ``None`` are not judged:
    at parse time the kind and whether labels are declared are known, the counts only once
    the artifact is built (its ``meta.json`` summary: ``n``, ``dims``, ``triplets``,
    ``classes``). The paper's settings, where given, replace the full config's: ``perplexity``
    (ee), ``n_folds`` and ``max_dim`` (tste: the largest of its ``dims``)."""
    if paper not in PAPER_NEEDS:
        raise ValueError(f"unknown paper {paper!r}; papers: {', '.join(PAPER_NEEDS)}")
    needs = PAPER_NEEDS[paper]
    if not needs.takes(kind):
        return [f"{paper} takes {' or '.join((needs.kind, *needs.also))} datasets, not {kind}"]
    problems = []
    if needs.labels == "required" and has_labels is False:
        problems.append(f"{paper} needs labels ({needs.note})")
    fewest = needs.min_points
    if paper in ("ee", "snest") and kind == "vectors" and perplexity is not None:
        fewest = max(3, math.floor(perplexity) + 2)
    if paper == "tste" and max_dim is not None:
        fewest = max(3, int(max_dim))
    if n is not None and n < fewest:
        problems.append(f"{paper} needs at least {fewest} points, the dataset has {n}")
    if dims is not None and dims < needs.min_dims:
        problems.append(f"{paper} needs at least {needs.min_dims} dimensions, got {dims}")
    least = needs.min_triplets if n_folds is None else max(needs.min_triplets, n_folds)
    if n_triplets is not None and n_triplets < least:
        problems.append(f"{paper} needs at least {least} triplets, the dataset has {n_triplets}")
    return problems
