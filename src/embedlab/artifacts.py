"""Dataset artifacts: the four standard kinds, one writer and one reader.

An artifact is a folder holding three files:

* ``data.npz``   -- the arrays; a sparse matrix ``M`` is stored as ``M.data``, ``M.indices``,
  ``M.indptr`` and ``M.shape`` (CSR), a list of sparse matrices ``C`` as ``C.0.data`` ...
* ``items.tsv``  -- one row per item (name plus metadata columns); artifacts with several
  kinds of item (co-occurrence: authors, words, papers) have a ``role`` column.
* ``meta.json``  -- kind, builder, parameters, counts, provenance. Written last, so a folder
  without it is not a finished artifact.

Kinds and the arrays they must hold:

* ``similarity``   -- ``P``: symmetric, non-negative, zero diagonal, sums to 1, no empty row.
* ``vectors``      -- ``X`` (n x D, finite); optional ``labels`` (n,).
* ``triplets``     -- ``triplets`` (m x 3, int64, 0 <= index < n, three distinct indices);
  ``n`` in meta; optional ``labels`` (n,). ``self_triplets: true`` in meta allows j = i (the
  t-STE authors' released rule draws them); i = l and j = l stay errors.
* ``cooccurrence`` -- ``counts``: list of T sparse (authors x words) count matrices; optional
  per-paper arrays (``paper_step``, ``paper_authors``, ``paper_words``).

``validate`` checks these invariants and raises :class:`ArtifactError` naming the field.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

# scipy.sparse is imported by the functions that meet a sparse matrix: the table, figure and
# summary jobs that read and write through this module need none.
if TYPE_CHECKING:
    import scipy.sparse as sp

KINDS = ("similarity", "vectors", "triplets", "cooccurrence")
FILES = ("data.npz", "items.tsv", "meta.json")


class ArtifactError(ValueError):
    """An artifact violates the invariants of its kind."""


@dataclass
class Artifact:
    """A dataset artifact held in memory.

    ``arrays`` maps names to dense arrays, sparse matrices or lists of sparse matrices.
    """

    kind: str
    arrays: dict[str, Any]
    items: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        return self.arrays[name]

    @property
    def n(self) -> int:
        """Number of items (points, nodes, artists; authors for co-occurrence)."""
        if self.kind == "similarity":
            return self.arrays["P"].shape[0]
        if self.kind == "vectors":
            return self.arrays["X"].shape[0]
        if self.kind == "triplets":
            return int(self.meta["n"])
        return self.arrays["counts"][0].shape[0]

    def summary(self) -> dict[str, Any]:
        """Counts that describe the artifact (for the dataset summary table)."""
        out: dict[str, Any] = {"kind": self.kind, "n": self.n}
        if self.kind == "similarity":
            import scipy.sparse as sp

            P = self.arrays["P"]
            out["nnz"] = int(P.nnz if sp.issparse(P) else np.count_nonzero(P))
        elif self.kind == "vectors":
            out["dims"] = int(self.arrays["X"].shape[1])
        elif self.kind == "triplets":
            out["triplets"] = int(self.arrays["triplets"].shape[0])
        else:
            counts = self.arrays["counts"]
            out["time_steps"] = len(counts)
            out["words"] = int(counts[0].shape[1])
            out["nnz"] = int(sum(c.nnz for c in counts))
        if "labels" in self.arrays:
            out["classes"] = int(len(np.unique(self.arrays["labels"])))
        return out


# --------------------------------------------------------------------------------------
# validation


def _fail(name: str, field_name: str, message: str) -> None:
    raise ArtifactError(f"artifact {name!r}, field {field_name!r}: {message}")


def _check_finite(name: str, field_name: str, values: np.ndarray) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        first = np.argwhere(bad)[0].tolist()
        _fail(name, field_name, f"{int(bad.sum())} non-finite values (first at index {first})")


def _check_labels(art: Artifact, name: str) -> None:
    if "labels" in art.arrays and len(art.arrays["labels"]) != art.n:
        _fail(name, "labels", f"has {len(art.arrays['labels'])} entries for {art.n} items")


def validate(art: Artifact, name: str = "?", *, atol: float = 1e-9) -> Artifact:
    """Check the invariants of ``art.kind``; return ``art`` or raise :class:`ArtifactError`."""
    if art.kind not in KINDS:
        _fail(name, "kind", f"unknown kind {art.kind!r}; expected one of {KINDS}")
    a = art.arrays
    required = {
        "similarity": ("P",),
        "vectors": ("X",),
        "triplets": ("triplets",),
        "cooccurrence": ("counts",),
    }[art.kind]
    for key in required:
        if key not in a:
            _fail(name, key, f"missing (required for kind {art.kind!r})")

    if art.kind == "similarity":
        import scipy.sparse as sp

        P = sp.csr_matrix(a["P"], dtype=np.float64)
        _check_finite(name, "P", P.data)
        if P.shape[0] != P.shape[1] or P.shape[0] == 0:
            _fail(name, "P", f"must be a non-empty square matrix, got shape {P.shape}")
        if (P.data < 0).any():
            _fail(name, "P", "has negative entries")
        if np.abs(P.diagonal()).max() > 0:
            _fail(name, "P", "has a non-zero diagonal")
        asym = abs(P - P.T)
        if asym.nnz and asym.max() > atol:
            _fail(name, "P", f"is not symmetric (max |P - P^T| = {asym.max():.3g})")
        total = P.sum()
        if abs(total - 1.0) > 1e-9:
            _fail(name, "P", f"sums to {total!r}, expected 1")
        empty = np.flatnonzero(np.diff(P.indptr) == 0)
        if empty.size:
            _fail(name, "P", f"{empty.size} empty rows (first: item {int(empty[0])})")
    elif art.kind == "vectors":
        X = np.asarray(a["X"])
        if X.ndim != 2 or X.shape[0] == 0:
            _fail(name, "X", f"must be a non-empty 2-D array, got shape {X.shape}")
        _check_finite(name, "X", X)
    elif art.kind == "triplets":
        T = np.asarray(a["triplets"])
        if "n" not in art.meta:
            _fail(name, "meta.n", "missing: the number of items must be in meta")
        n = int(art.meta["n"])
        if T.ndim != 2 or T.shape[1] != 3 or T.shape[0] == 0:
            _fail(name, "triplets", f"must be a non-empty (m, 3) array, got shape {T.shape}")
        if not np.issubdtype(T.dtype, np.integer):
            _fail(name, "triplets", f"must be integer, got {T.dtype}")
        if T.min() < 0 or T.max() >= n:
            _fail(name, "triplets", f"indices must lie in [0, {n}), got [{T.min()}, {T.max()}]")
        rep = (T[:, 0] == T[:, 2]) | (T[:, 1] == T[:, 2])
        if art.meta.get("self_triplets") is not True:
            rep |= T[:, 0] == T[:, 1]
        if rep.any():
            row = int(np.flatnonzero(rep)[0])
            _fail(name, "triplets", f"row {row} repeats an index: {T[row].tolist()}")
    else:
        counts = a["counts"]
        if not counts:
            _fail(name, "counts", "has no time steps")
        shape = counts[0].shape
        for t, c in enumerate(counts):
            if c.shape != shape:
                _fail(name, f"counts[{t}]", f"shape {c.shape} differs from counts[0] {shape}")
            _check_finite(name, f"counts[{t}]", c.data)
            if (c.data < 0).any():
                _fail(name, f"counts[{t}]", "has negative counts")
    _check_labels(art, name)
    if len(art.items) != art.n and "role" not in art.items.columns:
        _fail(name, "items", f"has {len(art.items)} rows for {art.n} items")
    return art


# --------------------------------------------------------------------------------------
# writing and reading


def flatten_arrays(arrays: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Plain arrays for ``np.savez``: a sparse matrix ``M`` as ``M.data``, ``M.indices``,
    ``M.indptr``, ``M.shape`` (CSR); a list of them as ``C.len`` and ``C.0.data`` ...; names
    must not contain '.'."""
    import scipy.sparse as sp

    flat: dict[str, np.ndarray] = {}

    def put_sparse(prefix: str, m: Any) -> None:
        m = sp.csr_matrix(m)
        flat[f"{prefix}.data"] = m.data
        flat[f"{prefix}.indices"] = m.indices
        flat[f"{prefix}.indptr"] = m.indptr
        flat[f"{prefix}.shape"] = np.asarray(m.shape, dtype=np.int64)

    for key, value in arrays.items():
        if "." in key:
            raise ArtifactError(f"array name {key!r} must not contain '.'")
        if isinstance(value, list):
            flat[f"{key}.len"] = np.asarray(len(value), dtype=np.int64)
            for i, m in enumerate(value):
                put_sparse(f"{key}.{i}", m)
        elif sp.issparse(value):
            put_sparse(key, value)
        else:
            flat[key] = np.asarray(value)
    return flat


def unflatten_arrays(flat: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The inverse of :func:`flatten_arrays`."""

    def get_sparse(prefix: str) -> sp.csr_matrix:
        import scipy.sparse as sp

        shape = tuple(int(s) for s in flat[f"{prefix}.shape"])
        parts = (flat[f"{prefix}.data"], flat[f"{prefix}.indices"], flat[f"{prefix}.indptr"])
        return sp.csr_matrix(parts, shape=shape)

    arrays: dict[str, Any] = {}
    for key in flat:
        base, _, suffix = key.partition(".")
        if not suffix:
            arrays[key] = flat[key]
        elif suffix == "len":
            arrays[base] = [get_sparse(f"{base}.{i}") for i in range(int(flat[key]))]
        elif suffix == "shape" and base not in arrays:
            arrays[base] = get_sparse(base)
    return arrays


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def atomic_write(path: str | Path, write) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then move it into place: a
    reader never sees a half-written file, and a failed write leaves nothing behind. The file
    gets the usual permissions (0666 less the umask), not mkstemp's 0600."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_npz(path: str | Path, arrays: dict) -> None:
    """``np.savez_compressed`` to exactly ``path`` (numpy would add ``.npz`` to a bare name)."""
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **arrays)


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file: never left half-written."""
    return atomic_write(path, lambda p: Path(p).write_text(text))


def save(art: Artifact, folder: str | Path, name: str = "?") -> Path:
    """Validate ``art`` and write it to ``folder``; ``meta.json`` is written last."""
    validate(art, name)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "meta.json").unlink(missing_ok=True)
    flat = flatten_arrays(art.arrays)
    atomic_write(folder / "data.npz", lambda p: write_npz(p, flat))
    atomic_write(folder / "items.tsv", lambda p: art.items.to_csv(p, sep="\t", index=False))
    meta = {"kind": art.kind, "name": name, **art.meta, "summary": art.summary()}
    atomic_write(
        folder / "meta.json",
        lambda p: Path(p).write_text(json.dumps(meta, indent=2, default=_json_default) + "\n"),
    )
    return folder


def folder_of(files: Sequence[str | Path]) -> Path:
    """The folder of the artifact whose files are ``files`` (a rule's input: its data.npz,
    items.tsv and meta.json, in one folder)."""
    folders = {Path(f).parent for f in files}
    if len(folders) != 1 or {Path(f).name for f in files} != set(FILES):
        raise ValueError(f"expected the files {', '.join(FILES)} of one artifact, got {files}")
    return folders.pop()


def load_files(files: Sequence[str | Path], kind: str | None = None) -> Artifact:
    """The artifact whose files are ``files`` (:func:`folder_of`), checked to be of ``kind``
    where given."""
    folder = folder_of(files)
    art = load(folder)
    if kind is not None and art.kind != kind:
        raise ValueError(f"{folder}: expected a {kind} artifact, got {art.kind!r}")
    return art


def load(folder: str | Path) -> Artifact:
    """Read the artifact in ``folder`` (raises FileNotFoundError naming the missing file)."""
    folder = Path(folder)
    for fname in FILES:
        if not (folder / fname).exists():
            raise FileNotFoundError(f"artifact {folder}: missing {fname} (not a finished artifact)")
    meta = json.loads((folder / "meta.json").read_text())
    with np.load(folder / "data.npz", allow_pickle=False) as npz:
        arrays = unflatten_arrays({k: npz[k] for k in npz.files})
    items = pd.read_csv(
        folder / "items.tsv", sep="\t", keep_default_na=False, dtype={"name": str, "role": str}
    )
    meta.pop("summary", None)
    kind = meta.pop("kind")
    return Artifact(kind=kind, arrays=arrays, items=items, meta=meta)
