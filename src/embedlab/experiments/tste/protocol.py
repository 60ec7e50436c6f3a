"""What the readings of the Fig. 2 protocol share: their names and file prefixes, the triplets
of an artifact, the methods by the paper's names, the k-fold split, one metrics row, the
merge of one (dataset, method)'s parts and the files of one grid's search jobs."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from embedlab import artifacts, runs

log = logging.getLogger(__name__)

METHOD_ORDER = ["GNMDS-K", "GNMDS-X", "CKL-K", "CKL-X", "STE-K", "STE-X", "t-STE-X"]

#: file-name prefix of each protocol's tables and figures (results/tables/<prefix>_<dataset>.csv)
PREFIX = {
    "paper_text": "tste_",
    "authors_code": "tste_authors_",
    "authors_figure": "tste_authors_figure_",
}
#: each protocol in words, for the titles of its tables and figures
READING = {
    "paper_text": "the paper's text",
    "authors_code": "the authors' released code as its scripts call it (t-STE-X alpha = "
    "dims - 1, STE-X / t-STE-X maximise sum log p); it does not reproduce the paper's Fig. 2",
    "authors_figure": "the authors' released code with t-STE-X at alpha = 1 and STE-X / "
    "t-STE-X maximising the sum of probabilities sum p (released options its scripts never "
    "pass), the variant that reproduces the paper's Fig. 2; the other methods are the "
    "authors_code fits",
}


def protocol_of(prefix: str) -> str:
    """The protocol whose files carry ``prefix`` (``tste_authors`` -> ``authors_code``)."""
    found = [p for p, pre in PREFIX.items() if pre == f"{prefix}_"]
    if not found:
        raise ValueError(f"no t-STE protocol has the prefix {prefix!r}: {sorted(PREFIX.values())}")
    return found[0]


def dataset_of(path: str | Path, protocol: str) -> str:
    """The dataset of a table ``results/tables/<prefix>_<dataset>.csv`` of ``protocol``."""
    return Path(path).stem.removeprefix(PREFIX[protocol])


def load_triplets(
    artifact_dir: str | Path,
    max_triplets: int | None = None,
    seed: int = 0,
    with_self: bool = False,
):
    """(triplets, n, labels) of a triplets artifact; a seeded subset of ``max_triplets`` (kept
    in their stored order). ``with_self`` adds a fourth value: whether the artifact allows
    self-triplets j = i (meta ``self_triplets``)."""
    art = artifacts.load(artifact_dir)
    if art.kind != "triplets":
        raise ValueError(f"{artifact_dir}: t-STE needs a triplets artifact, got {art.kind!r}")
    trip, n = art.arrays["triplets"], int(art.meta["n"])
    labels = art.arrays.get("labels")
    if labels is None or len(labels) != n:
        raise ValueError(f"{artifact_dir}: labels missing or not one per item (n = {n})")
    if max_triplets is not None and max_triplets < len(trip):
        keep = np.sort(np.random.default_rng(seed).permutation(len(trip))[:max_triplets])
        trip = trip[keep]
    out = np.ascontiguousarray(trip, dtype=np.int64), n, np.asarray(labels)
    if with_self:
        return (*out, art.meta.get("self_triplets") is True)
    return out


def make_estimator(method: str, dims: int, **params: Any):
    """The method named ``method`` (a key of FITS) in ``dims`` dimensions: the options and fit
    of its estimator without scikit-learn (:mod:`embedlab.methods.triplet_fit`), so that a
    job that fits starts without it."""
    from embedlab.methods.triplet_fit import FITS

    if method not in FITS:
        raise ValueError(f"unknown method {method!r}; expected one of {sorted(FITS)}")
    return FITS[method](n_components=int(dims), **params)


def folds_and_grid(
    method: str,
    m: int,
    dims: Iterable[int],
    n_folds: int,
    grid: Mapping[str, list] | None,
    seed: int,
    folds_used: int | None,
) -> tuple[list[int], list, dict[str, list]]:
    """(sorted dims, the folds to evaluate, grid) of one (dataset, method) with ``m``
    triplets, checked: the grid tunes at most one parameter; ``folds_used`` keeps the first
    folds of the same seeded split."""
    from embedlab.evaluate.triplets import kfold_triplets

    grid = dict(grid or {})
    if len(grid) > 1:
        raise ValueError(f"{method}: grid may tune one parameter, got {sorted(grid)}")
    folds = kfold_triplets(m, n_folds, seed=seed)
    if folds_used is not None:
        if not 1 <= folds_used <= n_folds:
            raise ValueError(f"{method}: folds_used must be in 1..{n_folds}, got {folds_used}")
        folds = folds[:folds_used]
    return sorted({int(d) for d in dims}), folds, grid


def metric_row(dataset, method, d, fold, gen, nn, params, validation, n_iter, seconds) -> dict:
    """One row of a metrics CSV (logged as it is made): ``params`` the JSON of the tuned
    value, ``validation`` what chose it (errors or violations of every grid value)."""
    log.info(
        "%s %s d=%d fold %d: gen %.4f 1-NN %.4f (%.1f s)",
        dataset, method, d, fold, gen, nn, seconds,
    )  # fmt: skip
    return {
        "dataset": dataset,
        "method": method,
        "dims": d,
        "fold": fold,
        "generalisation_error": gen,
        "loo_1nn_error": nn,
        "params": params,
        "validation_errors": json.dumps(validation),
        "n_iter": n_iter,
        "seconds": round(seconds, 3),
    }


def merge_parts(parts: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """One (dataset, method)'s metric rows from its parts, sorted by dimension and fold."""
    df = pd.concat(list(parts), ignore_index=True)
    if df.duplicated(["dims", "fold"]).any():
        raise ValueError("merge_parts: a (dims, fold) appears in two parts")
    return df.sort_values(["dims", "fold"]).reset_index(drop=True)


def load_grid_files(files: Iterable[str | Path], what: str, grid: Mapping[str, list] | None = None):
    """(the tuned parameter's name, its values, [(arrays, info)]) of one grid's files, one per
    value in grid order, written by a search step; None without files (an untuned method).
    ``grid`` ({name: values}, the configured grid) must be what the files hold, in order."""
    loaded = [runs.load_npz(f) for f in files]
    if not loaded:
        if grid:
            raise ValueError(f"{what}: the grid {dict(grid)} has values but no search files")
        return None
    names = {info["name"] for _, info in loaded}
    if len(names) != 1:
        raise ValueError(f"{what} files tune different parameters: {sorted(names)}")
    name, values = names.pop(), [info["value"] for _, info in loaded]
    if grid is not None and {k: list(v) for k, v in grid.items()} != {name: values}:
        raise ValueError(
            f"{what} files hold {name} = {values}, the grid is {dict(grid)}: rerun the search"
        )
    return name, values, loaded
