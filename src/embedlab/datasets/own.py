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
cooccurrence  csv         a long table, one line per (period, row item, column item) with a
                          count, a header line (default ``time,row,column,count``;
                          ``columns`` maps each role to another header name); periods are
                          numbers or ISO 8601 dates, repeated lines add up
============  ==========  ==================================================================

Every entry may also give ``description`` and, with ``path``, a ``sha256`` that the file must
have. The readers live in one module per kind (:mod:`.own_vectors`, :mod:`.own_similarity`,
:mod:`.own_triplets`, :mod:`.own_cooccurrence`); :mod:`.own_papers` says which papers can use
a dataset.

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
* cooccurrence: ``counts``, one sparse (rows x columns) int64 matrix per period in period
  order, as the NIPS builder's (authors x words); the rows play D-CODE's authors, the columns
  its words. Items: ``role`` (``author`` / ``word``), ``index``, ``name`` and ``count``;
  ``meta["step_names"]`` labels the periods (:mod:`.own_cooccurrence`).

``meta.json`` records the entry, the builder (``own.<format>``; ``own.cooccurrence.csv``) and
each raw file's path, size and sha256 (``meta["raw"]``). A bad raw file raises
:class:`embedlab.datasets.DatasetError` naming the file, the line (1-based, as an editor shows
it) and the column; the whole file is parsed and checked before anything is written, so a
failed build leaves no new file behind.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from embedlab import __version__, artifacts, fetch
from embedlab.affinities import AffinityError, row_normalised_symmetric
from embedlab.datasets import DatasetError, own_cooccurrence
from embedlab.datasets.own_cells import label_codes
from embedlab.datasets.own_similarity import read_edges, read_matrix
from embedlab.datasets.own_triplets import read_labels_file, read_triplets
from embedlab.datasets.own_vectors import read_vectors_npy, read_vectors_npz, read_vectors_table

#: The generic formats of each kind.
FORMATS: dict[str, tuple[str, ...]] = {
    "vectors": ("csv", "tsv", "npy", "npz"),
    "similarity": ("edges", "matrix"),
    "triplets": ("triplets",),
    "cooccurrence": ("csv",),
}
#: Fields every entry may have.
COMMON_FIELDS = ("kind", "format", "path", "url", "sha256", "description")
#: The options of each (kind, format) beyond :data:`COMMON_FIELDS`, with their types.
FORMAT_FIELDS: dict[tuple[str, str], dict[str, type]] = {
    ("vectors", "csv"): {"labels": str, "names": str},
    ("vectors", "tsv"): {"labels": str, "names": str},
    ("vectors", "npy"): {},
    ("vectors", "npz"): {"array": str, "labels": str},
    ("similarity", "edges"): {"directed": bool, "sep": str},
    ("similarity", "matrix"): {},
    ("triplets", "triplets"): {"labels": str, "n": int, "first_index": int},
    ("cooccurrence", "csv"): {"columns": dict},
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
    options = FORMAT_FIELDS.get((kind, fmt)) if kind in FORMATS else None
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
    if kind == "cooccurrence" and isinstance(entry.get("columns"), Mapping):
        problems += own_cooccurrence.columns_problems(f"{where}.columns", entry["columns"])
    if kind == "vectors" and fmt in ("csv", "tsv") and "labels" in entry:
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


def entry_facts(entry: Mapping[str, Any]) -> dict[str, int]:
    """What a glance at a checked entry's local file tells (the facts
    :func:`embedlab.datasets.own_papers.paper_problems` judges): ``n`` (:func:`count_items`)
    and, for a long co-occurrence table, ``words`` (its column items) and ``periods``
    (:func:`embedlab.datasets.own_cooccurrence.glance`). A fact it takes a build to know is
    left out."""
    if entry["kind"] == "cooccurrence":
        path = entry.get("path")
        seen = None
        if path is not None and Path(path).is_file():
            seen = own_cooccurrence.glance(path, entry.get("columns"))
        return seen or {}
    n = count_items(entry)
    return {} if n is None else {"n": n}


def count_items(entry: Mapping[str, Any]) -> int | None:
    """The number of items of a checked entry whose count a glance at its local file gives
    (a table's or matrix's non-empty lines, an array's rows, a triplets entry's ``n`` or
    labels file, a long co-occurrence table's row items), without its checks; None where it
    takes a build to know (a url entry, an edge list, triplets without n or labels). The
    workflow leaves a dataset out of a paper that needs more points before any job runs; the
    build checks the file itself."""
    if entry["kind"] == "cooccurrence":
        return entry_facts(entry).get("n")
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
    kind, fmt = entry["kind"], entry["format"]
    arrays: dict[str, Any]
    meta: dict[str, Any] = {}
    if kind == "cooccurrence":
        counts, items, meta = own_cooccurrence.read_long_table(raw, entry.get("columns"))
        arrays = {"counts": counts}
    elif fmt in ("csv", "tsv"):
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
            y, label_names = label_codes(raw_labels)
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
            "builder": f"own.{fmt}" if kind != "cooccurrence" else f"own.{kind}.{fmt}",
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


