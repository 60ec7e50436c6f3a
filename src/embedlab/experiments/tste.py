"""t-STE paper: Fig. 2 (triplet generalisation and 1-NN errors vs dimension), Figs. 3 and 4.

:func:`evaluate_method` runs the Fig. 2 protocol for one (dataset, method): k-fold cross
validation over the triplets for every embedding dimension; per fold the method is fitted on
the training triplets, its triplet generalisation error is measured on the held-out fold and
its leave-one-out 1-NN error on the item labels is measured on that same (training-fold)
embedding. The figure's values are means over folds. A method with a parameter grid (the K
forms' regulariser, CKL's mu) chooses its value per dimension on held-out training triplets of
the first fold and keeps it for all folds. K forms fit the kernel once per (fold, parameter
value) and read every dimension off it (:func:`fit_embeddings`). :func:`fig2_table`
aggregates over folds, :func:`claims_table` checks the paper's text.

Three readings of the protocol (config ``tste.protocols``): ``paper_text`` is the above;
``authors_code`` follows the authors' released MATLAB scripts (STE_Release), see
:func:`evaluate_authors` and :data:`AUTHORS_CODE`; ``authors_figure`` is the released protocol
with the settings that reproduce the paper's Fig. 2 (config ``tste.authors_figure.settings``:
t-STE-X at alpha = 1 and t-STE-X / STE-X maximising the sum of probabilities, options of the
released solvers that its scripts never pass): the released scripts' settings (t-STE-X alpha =
dims - 1, sum of log-probabilities) do not reproduce the figure's t-STE and STE-X curves, these
do. The methods it does not change are the authors_code fits, reused.
"""

from __future__ import annotations

import argparse
import json
import logging
import textwrap
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from embedlab import artifacts, runs, tables

log = logging.getLogger(__name__)

METHOD_ORDER = ["GNMDS-K", "GNMDS-X", "CKL-K", "CKL-X", "STE-K", "STE-X", "t-STE-X"]
METRICS = {"generalisation_error": "gen", "loo_1nn_error": "1nn"}
PANEL_NAME = {"gen": "generalisation", "1nn": "1-NN"}


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
    """The estimator named ``method`` (a key of METHODS) in ``dims`` dimensions."""
    from embedlab.methods.triplets import METHODS

    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {sorted(METHODS)}")
    return METHODS[method](n_components=int(dims), **params)


def fit_embeddings(
    method: str,
    dims: Iterable[int],
    triplets: np.ndarray,
    n: int,
    params: Mapping[str, Any],
    seed: int,
    max_iter: int,
) -> dict[int, tuple[np.ndarray, int, float]]:
    """dims -> (embedding, iterations, seconds) of ``method`` fitted on ``triplets``.

    X forms fit once per dimension. K forms optimise the whole n x n kernel, whatever the
    dimension (it only sets the rank of the initial K), so they fit once, initialised at the
    largest dimension, and each dimension's embedding is the classical-MDS truncation of that
    kernel (:func:`embedlab.methods.triplets.gram_embedding`), as in the paper's K forms.
    """
    from embedlab.methods.triplets import gram_embedding

    dims = sorted({int(d) for d in dims})
    if method.endswith("-K"):
        t0 = time.perf_counter()
        est = make_estimator(
            method, dims[-1], **params, max_iter=max_iter, random_state=seed, verbose=True
        )  # a kernel fit takes minutes at n = 1000: its cost every 100 iterations goes to the log
        est.fit(triplets, n=n)
        sec = (time.perf_counter() - t0) / len(dims)
        return {d: (gram_embedding(est.kernel_, d), int(est.n_iter_), sec) for d in dims}
    out = {}
    for d in dims:
        t0 = time.perf_counter()
        est = make_estimator(method, d, **params, max_iter=max_iter, random_state=seed)
        Y = est.fit(triplets, n=n).embedding_
        out[d] = (Y, int(est.n_iter_), time.perf_counter() - t0)
    return out


def choose_by_validation(
    method: str,
    dims: list[int],
    name: str,
    values: list,
    train: np.ndarray,
    n: int,
    seed: int,
    max_iter: int,
    val_fraction: float = 0.1,
    fixed: Mapping[str, Any] | None = None,
) -> tuple[dict[int, Any], dict[int, list[float]]]:
    """Per dimension, the grid value of ``name`` with the lowest triplet error on a seeded
    ``val_fraction`` of ``train`` held out from fitting (the first value on ties); ``fixed``
    holds estimator settings shared by every candidate (the K forms' solver). Returns
    (dims -> chosen value, dims -> every value's error in grid order):
    :func:`validation_errors` of each value, then :func:`choose_per_dimension`."""
    errors = [
        validation_errors(method, dims, name, v, train, n, seed, max_iter, val_fraction, fixed)
        for v in values
    ]
    return choose_per_dimension(values, errors)


def validation_errors(
    method: str,
    dims: list[int],
    name: str,
    value: Any,
    train: np.ndarray,
    n: int,
    seed: int,
    max_iter: int,
    val_fraction: float = 0.1,
    fixed: Mapping[str, Any] | None = None,
) -> dict[int, float]:
    """dims -> triplet error (5 decimals) of one grid value of ``name``: fitted on ``train``
    less a seeded ``val_fraction``, measured on that held-out share. Each value is one
    workflow job (rule ``tste_search``); :func:`choose_per_dimension` chooses from all."""
    from embedlab.evaluate.triplets import holdout_split, triplet_error

    fit_rows, val_rows = holdout_split(len(train), val_fraction, seed)
    fit, val = train[fit_rows], train[val_rows]
    params = {**(fixed or {}), name: value}
    fits = fit_embeddings(method, dims, fit, n, params, seed, max_iter)
    return {d: round(triplet_error(Y, val), 5) for d, (Y, _, _) in fits.items()}


def choose_per_dimension(
    values: list, errors: list[Mapping[int, float]]
) -> tuple[dict[int, Any], dict[int, list[float]]]:
    """(dims -> the value with the lowest error, the first on ties; dims -> the errors of
    every value in grid order) from :func:`validation_errors` of each value, in grid order;
    every value must have been validated at the same dimensions."""
    if len(errors) != len(values) or not errors:
        raise ValueError(f"validation: {len(errors)} error sets for {len(values)} grid values")
    dims = list(errors[0])
    if any(sorted(e) != sorted(dims) for e in errors):
        raise ValueError(f"validation: grid values validated at different dims {dims}")
    by_dim = {d: [e[d] for e in errors] for d in dims}
    return {d: values[int(np.argmin(errs))] for d, errs in by_dim.items()}, by_dim


@dataclass
class Validation:
    """The paper text's choice of a method's one tuned parameter: per dimension the chosen
    value (``{}`` for an untuned method) and the validation errors of every grid value in
    grid order (``[]`` untuned); the rows of every fold carry both."""

    chosen: dict[int, dict[str, Any]]
    errors: dict[int, list[float]]

    @classmethod
    def choose(cls, name: str, values: list, errors: list[Mapping[int, float]]):
        """From :func:`validation_errors` of each value, in grid order."""
        best, by_dim = choose_per_dimension(values, errors)
        return cls({d: {name: v} for d, v in best.items()}, by_dim)

    @classmethod
    def untuned(cls, dims: Iterable[int]):
        """No parameter to choose: every dimension fits with the estimator's defaults."""
        return cls({d: {} for d in dims}, {d: [] for d in dims})


def kform_settings(method: str, kform_solver: Mapping[str, Any] | None) -> dict[str, Any]:
    """The estimator settings every fit of ``method`` shares: the K forms' solver settings
    (``tste.kform_solver``); none for X forms."""
    return dict(kform_solver or {}) if method.endswith("-K") else {}


def _folds_and_grid(
    method: str,
    m: int,
    dims: Iterable[int],
    n_folds: int,
    grid: Mapping[str, list] | None,
    seed: int,
    folds_used: int | None,
) -> tuple[list[int], list, dict[str, list]]:
    """(sorted dims, the folds to evaluate, grid) of one (dataset, method), checked: the grid
    tunes at most one parameter; ``folds_used`` keeps the first folds of the same split."""
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


def _metric_row(dataset, method, d, fold, gen, nn, params, validation, n_iter, seconds) -> dict:
    """One row of a metrics CSV (logged as it is made)."""
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


def evaluate_method(
    artifact_dir: str | Path,
    method: str,
    dims: Iterable[int],
    n_folds: int,
    grid: Mapping[str, list] | None = None,
    *,
    seed: int,
    max_iter: int,
    max_triplets: int | None = None,
    folds_used: int | None = None,
    kform_solver: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """One row per (dims, fold): generalisation error, 1-NN error, chosen parameter, time.

    ``grid`` holds at most one parameter name -> candidate values, chosen per dimension on
    held-out triplets of the first fold's training set and kept for every fold.
    ``folds_used`` evaluates only the first folds of the ``n_folds``-fold split (the same
    split, so its folds are a subset of a full run's); None = all. ``kform_solver``: the K
    forms' projected-gradient settings ({"solver", "precision", "tol"}; None = the
    estimators' defaults), unused by X forms.

    The steps in one call: :func:`validation_errors` of each grid value, the choice
    (:meth:`Validation.choose`), :func:`paper_part` for each fold and :func:`merge_parts`.
    The workflow runs the same steps as separate jobs (one per grid value, one per fold, the
    merge) and writes the same rows.
    """
    trip, n, _ = load_triplets(artifact_dir, max_triplets, seed)
    dims, folds, grid = _folds_and_grid(method, len(trip), dims, n_folds, grid, seed, folds_used)
    validation = None
    if grid:
        ((name, values),) = grid.items()
        fixed = kform_settings(method, kform_solver)
        errors = [
            validation_errors(method, dims, name, v, trip[folds[0][0]], n, seed, max_iter,
                              fixed=fixed)
            for v in values
        ]  # fmt: skip
        validation = Validation.choose(name, list(values), errors)
        log.info("%s: chosen %s, validation errors %s", method, validation.chosen, errors)
    common = dict(
        seed=seed, max_iter=max_iter, max_triplets=max_triplets, kform_solver=kform_solver
    )
    return merge_parts(
        paper_part(artifact_dir, method, dims, n_folds, k, validation, **common)
        for k in range(len(folds))
    )


def paper_part(
    artifact_dir: str | Path,
    method: str,
    dims: Iterable[int],
    n_folds: int,
    fold: int,
    validation: Validation | None,
    *,
    seed: int,
    max_iter: int,
    max_triplets: int | None = None,
    kform_solver: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Metric rows of fold ``fold`` of the ``n_folds``-fold split for one (dataset, method)
    under the paper's text: per dimension a fit on the fold's training triplets (seed +
    ``fold``) with the value that ``validation`` chose (None: an untuned method), its triplet
    generalisation error on the fold's test triplets and its leave-one-out 1-NN error.
    Dimensions that share a chosen value share one K-form kernel fit (:func:`fit_embeddings`).
    """
    from embedlab.evaluate.knn import loo_1nn_error_rate
    from embedlab.evaluate.triplets import triplet_error

    trip, n, labels = load_triplets(artifact_dir, max_triplets, seed)
    dims, folds, _ = _folds_and_grid(method, len(trip), dims, n_folds, {}, seed, None)
    if not 0 <= fold < n_folds:
        raise ValueError(f"{method}: fold must be in 0..{n_folds - 1}, got {fold}")
    validation = validation or Validation.untuned(dims)
    if missing := sorted(set(dims) - set(validation.chosen)):
        raise ValueError(f"{method}: the validation has no choice at dims {missing}")
    fixed = kform_settings(method, kform_solver)
    dataset = Path(artifact_dir).name
    groups: dict[str, list[int]] = {}
    for d in dims:  # dimensions that share a parameter value share a K-form fit
        groups.setdefault(json.dumps(validation.chosen[d]), []).append(d)
    train, test = folds[fold]
    rows = []
    for key, group in groups.items():
        params = {**fixed, **json.loads(key)}
        fits = fit_embeddings(method, group, trip[train], n, params, seed + fold, max_iter)
        for d, (Y, n_iter, seconds) in fits.items():
            gen = triplet_error(Y, trip[test])
            nn = loo_1nn_error_rate(Y, labels)
            row = _metric_row(
                dataset, method, d, fold, gen, nn, key, validation.errors[d], n_iter, seconds
            )
            rows.append(row)
    return pd.DataFrame(rows)


def folds_per_method(metric_files: Iterable[str | Path]) -> dict[str, int]:
    """Number of folds evaluated per method (in METHOD_ORDER)."""
    df = pd.concat([pd.read_csv(f) for f in metric_files], ignore_index=True)
    counts = df[df["fold"] >= 0].groupby("method")["fold"].nunique()
    return {m: int(counts[m]) for m in METHOD_ORDER if m in counts.index}


def describe_folds(n_folds: Mapping[str, int]) -> str:
    """'folds: 5' when every method has that many folds, else 'folds per method: GNMDS-K 5,
    STE-X 10' (``n_folds`` from :func:`folds_per_method`): a table says how many folds its
    means average (``folds_used`` may keep fewer than the split's)."""
    counts = set(n_folds.values())
    if len(counts) == 1:
        return f"folds: {counts.pop()}"
    return "folds per method: " + ", ".join(f"{m} {k}" for m, k in n_folds.items())


def not_run(methods: Iterable[str]) -> list[str]:
    """The paper's methods (METHOD_ORDER) missing from ``methods``: a configuration may run a
    subset on a dataset (``methods_by_dataset``), and a table or claim says which it lacks."""
    present = set(methods)
    return [m for m in METHOD_ORDER if m not in present]


def describe_not_run(methods: Iterable[str]) -> str:
    """'not run in this configuration: GNMDS-K, CKL-K' for the paper's methods missing from
    ``methods``; '' when every one ran."""
    missing = not_run(methods)
    return f"not run in this configuration: {', '.join(missing)}" if missing else ""


def fig2_table(metric_files: Iterable[str | Path]) -> pd.DataFrame:
    """Rows = dims, columns '<method> gen' and '<method> 1nn' (means over folds; rows that lack
    a metric -- the authors' protocol measures 1-NN on one separate fit, fold -1 -- are
    skipped for it). Metrics of the authors' protocol add '<method> gen tied' (the mean over
    folds of the share of test triplets with d_ij = d_il) and '<method> 1nn tied' (the share
    of the 1-NN fit's training triplets), see :func:`degenerate_fits`."""
    df = pd.concat([pd.read_csv(f) for f in metric_files], ignore_index=True)
    if df["dataset"].nunique() != 1:
        raise ValueError(f"fig2_table: one dataset per table, got {sorted(df['dataset'].unique())}")
    columns = dict(METRICS)
    if "tied_fraction" in df.columns:  # written by evaluate_authors only
        if df["tied_fraction"].isna().any():
            raise ValueError("fig2_table: some metric files lack tied_fraction; rerun them")
        df["tied_gen"] = df["tied_fraction"].where(df["fold"] >= 0)
        df["tied_nn"] = df["tied_fraction"].where(df["fold"] < 0)
        columns.update({"tied_gen": "gen tied", "tied_nn": "1nn tied"})
    mean = df.groupby(["dims", "method"])[list(columns)].mean()
    methods = [m for m in METHOD_ORDER if m in set(df["method"])]
    out = pd.DataFrame(index=sorted(df["dims"].unique()))
    out.index.name = "dims"
    for metric, short in columns.items():
        for m in methods:
            out[f"{m} {short}"] = [round(float(mean.loc[(d, m), metric]), 4) for d in out.index]
    return out.reset_index()


#: a fit whose triplets are more than this share tied (d_ij = d_il) is degenerate: the
#: ties-correct error of the authors' code counts every tie as satisfied, so a collapsed
#: embedding (one point) scores 0 on its test triplets, and its 1-NN error is that of
#: coincident points
DEGENERATE_TIED = 0.5


def degenerate_fits(table: pd.DataFrame, metric: str = "gen") -> dict[str, list[int]]:
    """Method -> the dimensions at which its fits for ``metric`` ('gen': the fold fits; '1nn':
    the 1-NN fit) are degenerate (mean '<method> <metric> tied' above DEGENERATE_TIED) in a
    :func:`fig2_table`; empty for tables without tied columns."""
    suffix = f" {metric} tied"
    out: dict[str, list[int]] = {}
    for col in table.columns:
        if col.endswith(suffix):
            dims = table.loc[table[col] > DEGENERATE_TIED, "dims"]
            if len(dims):
                out[col.removesuffix(suffix)] = [int(d) for d in dims]
    return out


def describe_degenerate(degenerate: Mapping[str, list[int]]) -> str:
    """'GNMDS-K at dims 2-30' style text for captions (empty when nothing is degenerate)."""
    parts = []
    for m, dims in degenerate.items():
        span = f"{dims[0]}" if len(dims) == 1 else f"{dims[0]}-{dims[-1]} ({len(dims)} dims)"
        parts.append(f"{m} at dims {span}")
    return "; ".join(parts)


def in_claimed_range(value: float, low: float, high: float) -> bool:
    """Whether ``value`` lies in a claim's published range [low, high]; a single published
    number (low = high) is matched within 2 points."""
    tol = 0.02 if low == high else 0.0
    return low - tol <= value <= high + tol


def claims_table(tables_by_dataset: Mapping[str, pd.DataFrame], paper_csv: str | Path):
    """The paper's claims (config/paper_values/tste_claims.csv) with our values and verdicts.

    Datasets of the claims file map to ours by prefix ('mnist' -> mnist_triplets_1k). Methods:
    'all' (every method in range), 'tste_x' (t-STE-X; music: the lowest 1-NN error at every
    dimension), 'others' (every method but t-STE-X in range). A claim is judged on the
    methods the table has; 'ours' names the paper's methods it lacks (:func:`not_run`).
    """
    paper = pd.read_csv(paper_csv)
    rows = []
    for _, c in paper.iterrows():
        name = next((d for d in tables_by_dataset if d.startswith(str(c["dataset"]))), None)
        base = {"dataset": c["dataset"], "claim": c["note"]}
        if name is None:
            rows.append({**base, "ours": "", "holds": "not run"})
            continue
        short = METRICS[c["metric"]]
        degenerate = degenerate_fits(tables_by_dataset[name], short)
        t = tables_by_dataset[name].set_index("dims")
        methods = [col[: -len(short) - 1] for col in t.columns if col.endswith(f" {short}")]
        if pd.isna(c["dims"]):  # music: t-STE lowest genre error
            lowest = t[[f"{m} {short}" for m in methods]].idxmin(axis=1).str[: -len(short) - 1]
            wins = int((lowest == "t-STE-X").sum())
            ours = (
                f"t-STE-X lowest at {wins}/{len(t)} dims; "
                + ", ".join(f"{m} {t.loc[t.index[0], f'{m} {short}']:.3f}" for m in methods)
                + f" (d={t.index[0]})"
            )
            if missing := describe_not_run(methods):
                ours += f"; {missing}"
            collapsed = ", ".join(m for m in methods if m in degenerate)
            rows.append({**base, "ours": ours, "holds": wins == len(t), "degenerate": collapsed})
            continue
        d = int(c["dims"])
        if d not in t.index:
            rows.append({**base, "ours": f"dims {d} not run", "holds": "not run"})
            continue
        pick = {
            "all": methods,
            "tste_x": ["t-STE-X"],
            "others": [m for m in methods if m != "t-STE-X"],
        }[c["method"]]
        vals = {m: float(t.loc[d, f"{m} {short}"]) for m in pick}
        lo, hi = float(c["low"]), float(c["high"])
        holds = all(in_claimed_range(v, lo, hi) for v in vals.values())
        ours = ", ".join(f"{m} {v:.3f}" for m, v in vals.items())
        if c["method"] != "tste_x" and (missing := describe_not_run(methods)):
            ours += f"; {missing}"
        collapsed = [m for m in pick if d in degenerate.get(m, [])]
        rows.append(
            {
                **base,
                "paper": f"[{lo:.2f}, {hi:.2f}]",
                "ours": ours,
                "holds": holds,
                "degenerate": ", ".join(collapsed),
            }
        )
    return pd.DataFrame(rows)


def embed_map(
    artifact_dir: str | Path,
    method: str,
    out: str | Path,
    *,
    seed: int,
    max_iter: int | None,
    protocol: str,
    max_triplets: int | None = None,
    params: Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> None:
    """Fit ``method`` in 2-D on all triplets; save embedding, labels and errors to ``out``.

    ``protocol="authors_code"`` (mnist_make_maps.m): the coded solver settings
    (:func:`authors_params`; ``max_iter`` None = coded), self-triplets accepted, and each map
    axis rescaled to [0, 1] before the errors are measured (ties correct);
    ``"authors_figure"``: the same with the reading's solver ``settings``."""
    from embedlab.evaluate.knn import loo_1nn_error_rate
    from embedlab.evaluate.triplets import triplet_error

    if protocol not in PREFIX:
        raise ValueError(f"protocol must be one of {sorted(PREFIX)}, got {protocol!r}")
    authors = protocol != "paper_text"
    if settings and not authors:
        raise ValueError(f"{method}: solver settings belong to the authors' readings")
    trip, n, labels, allow_self = load_triplets(artifact_dir, max_triplets, seed, True)
    t0 = time.perf_counter()
    if authors:
        fit_params = authors_params(method, params, settings)
        max_iter = authors_max_iter(method, max_iter)
    else:
        if max_iter is None:
            raise ValueError(f"{method}: the paper_text protocol needs max_iter")
        fit_params = dict(params or {})
    est = make_estimator(method, 2, **fit_params, max_iter=max_iter, random_state=seed)
    Y = est.fit(trip, n=n, allow_self=allow_self).embedding_
    ties = "violated"
    if authors:
        Y = Y - Y.min(axis=0)
        span = Y.max(axis=0)
        Y = Y / np.where(span > 0, span, 1.0)
        ties = AUTHORS_CODE["ties"]
    meta = {
        "dataset": Path(artifact_dir).name,
        "method": method,
        "protocol": protocol,
        "n": n,
        "n_triplets": int(len(trip)),
        "training_error": triplet_error(Y, trip, allow_self=allow_self, ties=ties),
        "loo_1nn_error": loo_1nn_error_rate(Y, labels),
        "n_iter": int(est.n_iter_),
        "seconds": round(time.perf_counter() - t0, 2),
    }
    log.info("%s", meta)
    runs.save_npz(out, {"embedding": Y, "labels": labels}, {"meta": meta})


def load_map(path: str | Path) -> tuple[np.ndarray, np.ndarray, dict]:
    """(embedding, labels, meta) of a map written by :func:`embed_map`."""
    arrays, info = runs.load_npz(path)
    return arrays["embedding"], arrays["labels"], info["meta"]


# --------------------------------------------------------------------------------------
# the authors' released protocol (STE_Release: mnist_experiment.m, mnist_experiment2.m,
# music_experiment*.m, mnist_make_maps.m and the solvers)

#: facts of the authors' code that are not configuration: solver step eta (the step is
#: eta n / #triplets times the gradient), iterations, the K forms' initial rank, the tie rule
AUTHORS_CODE: dict[str, Any] = {
    "learning_rate": {
        "GNMDS-K": 1.0,
        "GNMDS-X": 1.0,
        "STE-K": 1.0,
        "STE-X": 1.0,
        "t-STE-X": 2.0,
        "CKL-K": 1e-5,
        "CKL-X": 1e-5,
    },
    "max_iter": {"STE-K": 2000},  # every other method: 1000
    "default_max_iter": 1000,
    "min_iter": {"GNMDS-X": 50},  # gnmds_x.m runs at least 50 iterations
    "init_rank": 2,
    "kform": "released",  # the K forms' gradient, projection and records as coded
    "ties": "correct",  # a test triplet is an error only when d_ij > d_il
}

#: estimator settings a reading of the released protocol may override (the options of the
#: released solvers): ``use_log`` (STE-X, STE-K, t-STE-X) and t-STE's ``alpha``
SETTINGS = {"STE-X": {"use_log"}, "STE-K": {"use_log"}, "t-STE-X": {"use_log", "alpha"}}


def check_settings(settings: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """A reading's per-method estimator settings, checked against :data:`SETTINGS`."""
    out = {}
    for method, values in settings.items():
        unknown = set(values) - SETTINGS.get(method, set())
        if unknown:
            raise ValueError(
                f"{method}: the released code has no option {sorted(unknown)} "
                f"(options: {sorted(SETTINGS.get(method, set()))})"
            )
        out[method] = dict(values)
    return out


def authors_params(
    method: str,
    values: Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Estimator parameters of ``method`` as the authors' code sets them, the searched value
    (GNMDS-K ``mu``, STE-K ``lam``, CKL ``mu``) mapped onto the coded objective:
    GNMDS-K (1 - mu) trace(K) + mu sum hinge; STE-K (1 - lam)(-log-likelihood) + lam
    trace(K); CKL-K without the unit diagonal; K forms start at rank 2 and run as coded
    (``kform="released"``); GNMDS-X runs at least 50 iterations. ``settings``: options of the
    released solver that the reading sets (:data:`SETTINGS`; none = the scripts' calls)."""
    values = dict(values or {})
    out: dict[str, Any] = {"learning_rate": AUTHORS_CODE["learning_rate"][method]}
    if method.endswith("-K"):
        out["init_rank"] = AUTHORS_CODE["init_rank"]
        out["kform"] = AUTHORS_CODE["kform"]
    if method in AUTHORS_CODE["min_iter"]:
        out["min_iter"] = AUTHORS_CODE["min_iter"][method]
    if method == "GNMDS-K":
        mu = float(values.pop("mu", 0.0))
        out.update(loss_weight=mu, lam=1.0 - mu)
    elif method == "STE-K":
        lam = float(values.pop("lam", 0.0))
        out.update(loss_weight=1.0 - lam, lam=lam)
    elif method == "CKL-K":
        out.update(mu=float(values.pop("mu", 0.05)), unit_diagonal=False)
    elif method == "CKL-X":
        out["mu"] = float(values.pop("mu", 0.05))
    if values:
        raise ValueError(f"{method}: the authors' protocol searches no {sorted(values)}")
    out.update(check_settings({method: settings or {}})[method])
    return out


def authors_max_iter(method: str, max_iter: int | None) -> int:
    """The coded iteration limit of ``method`` unless ``max_iter`` overrides it."""
    if max_iter is not None:
        return int(max_iter)
    return int(AUTHORS_CODE["max_iter"].get(method, AUTHORS_CODE["default_max_iter"]))


def authors_fit(
    method: str,
    dims: Iterable[int],
    triplets: np.ndarray,
    n: int,
    values: Mapping[str, Any] | None,
    seed: int,
    max_iter: int | None,
    allow_self: bool,
    settings: Mapping[str, Any] | None = None,
) -> tuple[dict[int, tuple[np.ndarray, int, float]], np.ndarray | None]:
    """(dims -> (embedding, iterations, seconds), kernel or None) of ``method`` fitted as the
    authors' code does: K forms learn one kernel (rank-2 start) and read every dimension off
    it by its top eigenvectors scaled by sqrt(eigenvalue), uncentred; X forms fit per
    dimension, t-STE with alpha = dims - 1 unless ``settings`` (the reading's solver options,
    :func:`authors_params`) set it."""
    from embedlab.methods.triplets import gram_embedding

    dims = sorted({int(d) for d in dims})
    params = authors_params(method, values, settings)
    iters = authors_max_iter(method, max_iter)
    if method.endswith("-K"):
        t0 = time.perf_counter()
        est = make_estimator(
            method, dims[-1], **params, max_iter=iters, random_state=seed, verbose=True
        )
        est.fit(triplets, n=n, allow_self=allow_self)
        sec = (time.perf_counter() - t0) / len(dims)
        K = est.kernel_
        return {d: (gram_embedding(K, d, centre=False), int(est.n_iter_), sec) for d in dims}, K
    out = {}
    for d in dims:
        t0 = time.perf_counter()
        est = make_estimator(method, d, **params, max_iter=iters, random_state=seed)
        Y = est.fit(triplets, n=n, allow_self=allow_self).embedding_
        out[d] = (Y, int(est.n_iter_), time.perf_counter() - t0)
    return out, None


def search_split(m: int, n_folds: int) -> int:
    """Size of the authors' search training set: the first round(m / n_folds) triplets in
    generation order (10 % for 10 folds); the rest is the validation set."""
    first = int(np.floor(m / n_folds + 0.5))
    if not 1 <= first < m:
        raise ValueError(f"search split: {m} triplets / {n_folds} folds leaves an empty side")
    return first


def authors_search_value(
    method: str,
    dims: list[int],
    name: str,
    value: Any,
    triplets: np.ndarray,
    n: int,
    n_folds: int,
    seed: int,
    max_iter: int | None,
    allow_self: bool,
    settings: Mapping[str, Any] | None = None,
) -> tuple[int, np.ndarray | None]:
    """One value of the authors' regulariser search: fit on the first 10 % of the triplets in
    generation order, count violations (d_ij > d_il) on the other 90 % in the learned kernel
    (K forms) or in X X^T of a fit at the largest dimension (CKL-X). Returns (violations, the
    kernel's embedding at the largest dimension for K forms -- the 1-NN fits reuse it -- else
    None)."""
    from embedlab.evaluate.triplets import triplet_error
    from embedlab.methods.triplets import gram_embedding

    first = search_split(len(triplets), n_folds)
    fit, val = triplets[:first], triplets[first:]
    fits, K = authors_fit(
        method, [max(dims)], fit, n, {name: value}, seed, max_iter, allow_self, settings
    )
    Z, gram = (K, True) if K is not None else (fits[max(dims)][0], False)
    err = triplet_error(Z, val, allow_self=allow_self, ties=AUTHORS_CODE["ties"], gram=gram)
    Y = None if K is None else gram_embedding(K, max(dims), centre=False)
    return int(round(err * len(val))), Y


@dataclass
class AuthorsSearch:
    """The outcome of the authors' search: the chosen value (``{}`` for an untuned method),
    the violations of every grid value, and for K forms the chosen kernel's embedding at the
    largest dimension (its first d columns are the d-dimensional embedding)."""

    chosen: dict[str, Any]
    violations: list[int]
    embedding: np.ndarray | None

    @classmethod
    def choose(cls, name: str, values: list, results: list[tuple[int, np.ndarray | None]]):
        """Fewest violations wins, the first value on ties (the authors' min)."""
        violations = [v for v, _ in results]
        k = int(np.argmin(violations))
        return cls({name: values[k]}, violations, results[k][1])


def authors_search(
    method: str,
    dims: list[int],
    name: str,
    values: list,
    triplets: np.ndarray,
    n: int,
    n_folds: int,
    seed: int,
    max_iter: int | None,
    allow_self: bool,
    settings: Mapping[str, Any] | None = None,
) -> AuthorsSearch:
    """:func:`authors_search_value` for every value of the grid, then the choice."""
    args = (triplets, n, n_folds, seed, max_iter, allow_self, settings)
    results = [authors_search_value(method, dims, name, v, *args) for v in values]
    return AuthorsSearch.choose(name, values, results)


def authors_part(
    artifact_dir: str | Path,
    method: str,
    dims: Iterable[int],
    n_folds: int,
    part: int,
    search: AuthorsSearch | None,
    seed: int = 0,
    max_iter: int | None = None,
    max_triplets: int | None = None,
    nn_training: str = "first",
    settings: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Metric rows of one part of the authors' Fig. 2 protocol for one (dataset, method),
    given the search's outcome (None: untuned) and the reading's solver ``settings``:

    * ``part = -1``, 1-NN error: one fit per dimension on the first 10 % of the triplets in
      generation order (``nn_training="first"``, MNIST; K forms reuse the search's kernel) or
      on all triplets (``"all"``, the music script); rows with ``fold = -1``;
    * ``part = k``, generalisation error of fold k of ``n_folds`` (a seeded permutation),
      trained on the other folds: the fraction of test triplets with d_ij > d_il (ties
      correct).

    Every row also holds ``tied_fraction``: the share of its triplets (test triplets; for the
    1-NN rows the fit's training triplets) with d_ij = d_il, which the ties-correct error
    counts as satisfied -- near 1 for a collapsed fit (see :func:`degenerate_fits`).
    """
    from embedlab.evaluate.knn import loo_1nn_error_rate
    from embedlab.evaluate.triplets import tied_fraction, triplet_error

    trip, n, labels, allow_self = load_triplets(artifact_dir, max_triplets, seed, True)
    if nn_training not in ("first", "all"):
        raise ValueError(f"{method}: nn_training must be 'first' or 'all', got {nn_training!r}")
    dims, folds, _ = _folds_and_grid(method, len(trip), dims, n_folds, {}, seed, None)
    if not -1 <= part < n_folds:
        raise ValueError(f"{method}: part must be -1 (1-NN) or a fold in 0..{n_folds - 1}")
    dataset = Path(artifact_dir).name
    search = search or AuthorsSearch({}, [], None)
    key = json.dumps(search.chosen)
    rows: list[dict[str, Any]] = []

    def add(d, fold, gen, nn, n_iter, seconds, tied):
        row = _metric_row(
            dataset, method, d, fold, gen, nn, key, search.violations, n_iter, seconds
        )
        rows.append({**row, "tied_fraction": round(tied, 6)})

    if part == -1:
        nn_trip = trip[: search_split(len(trip), n_folds)] if nn_training == "first" else trip
        if search.embedding is not None and nn_training == "first":  # the search fitted it
            nn_fits = {d: (search.embedding[:, :d], -1, 0.0) for d in dims}
        else:
            nn_fits, _ = authors_fit(
                method, dims, nn_trip, n, search.chosen, seed, max_iter, allow_self, settings
            )
        for d, (Y, n_iter, seconds) in nn_fits.items():
            tied = tied_fraction(Y, nn_trip, allow_self=allow_self)
            add(d, -1, np.nan, loo_1nn_error_rate(Y, labels), n_iter, seconds, tied)
    else:
        train, test = folds[part]
        fits, _ = authors_fit(
            method, dims, trip[train], n, search.chosen, seed + part, max_iter, allow_self,
            settings,
        )  # fmt: skip
        for d, (Y, n_iter, seconds) in fits.items():
            gen = triplet_error(Y, trip[test], allow_self=allow_self, ties=AUTHORS_CODE["ties"])
            tied = tied_fraction(Y, trip[test], allow_self=allow_self)
            add(d, part, gen, np.nan, n_iter, seconds, tied)
    return pd.DataFrame(rows)


def merge_parts(parts: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """One (dataset, method)'s metric rows from its parts, sorted by dimension and fold."""
    df = pd.concat(list(parts), ignore_index=True)
    if df.duplicated(["dims", "fold"]).any():
        raise ValueError("merge_parts: a (dims, fold) appears in two parts")
    return df.sort_values(["dims", "fold"]).reset_index(drop=True)


def evaluate_authors(
    artifact_dir: str | Path,
    method: str,
    dims: Iterable[int],
    n_folds: int,
    grid: Mapping[str, list] | None = None,
    seed: int = 0,
    max_iter: int | None = None,
    max_triplets: int | None = None,
    nn_training: str = "first",
    folds_used: int | None = None,
    settings: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """The authors' Fig. 2 protocol for one (dataset, method) in one call: the search
    (``grid``, one parameter; :func:`authors_search`), then :func:`authors_part` for the 1-NN
    fits and each of the first ``folds_used`` folds; ``settings``: the reading's solver
    options (:func:`authors_params`). The workflow runs the same steps as separate jobs (one
    per grid value, one per part)."""
    trip, n, _, allow_self = load_triplets(artifact_dir, max_triplets, seed, True)
    dims, folds, grid = _folds_and_grid(method, len(trip), dims, n_folds, grid, seed, folds_used)
    search = None
    if grid:
        ((name, values),) = grid.items()
        search = authors_search(
            method, dims, name, list(values), trip, n, n_folds, seed, max_iter, allow_self,
            settings,
        )  # fmt: skip
        log.info("%s: chosen %s, violations %s", method, search.chosen, search.violations)
    common = dict(
        seed=seed, max_iter=max_iter, max_triplets=max_triplets, nn_training=nn_training,
        settings=settings,
    )  # fmt: skip
    parts = [
        authors_part(artifact_dir, method, dims, n_folds, k, search, **common)
        for k in range(-1, len(folds))
    ]
    return merge_parts(parts)


# --------------------------------------------------------------------------------------
# command line


def _cmd_search(args: argparse.Namespace) -> None:
    method, value = args.method, json.loads(args.value)
    trip, n, _ = load_triplets(args.artifact, args.max_triplets, args.seed)
    dims, folds, _ = _folds_and_grid(method, len(trip), args.dims, args.folds, {}, args.seed, None)
    errors = validation_errors(
        method, dims, args.name, value, trip[folds[0][0]], n, args.seed, args.max_iter,
        fixed=kform_settings(method, json.loads(args.kform_solver)),
    )  # fmt: skip
    log.info("%s %s = %s: validation errors %s", method, args.name, value, errors)
    arrays = {"dims": np.array(list(errors)), "errors": np.array(list(errors.values()))}
    runs.save_npz(args.out, arrays, {"method": method, "name": args.name, "value": value})


def load_grid_files(files: Iterable[str | Path], what: str):
    """(the tuned parameter's name, its values, [(arrays, info)]) of one grid's files, one per
    value in grid order, written by a search verb; None without files (an untuned method)."""
    loaded = [runs.load_npz(f) for f in files]
    if not loaded:
        return None
    names = {info["name"] for _, info in loaded}
    if len(names) != 1:
        raise ValueError(f"{what} files tune different parameters: {sorted(names)}")
    return names.pop(), [info["value"] for _, info in loaded], loaded


def load_validation(files: Iterable[str | Path]) -> Validation | None:
    """The paper text's choice from the files of :func:`_cmd_search`, given in grid order
    (none: an untuned method)."""
    grid = load_grid_files(files, "validation")
    if grid is None:
        return None
    name, values, loaded = grid
    errors = [
        dict(zip(arrays["dims"].tolist(), arrays["errors"].tolist(), strict=True))
        for arrays, _ in loaded
    ]
    return Validation.choose(name, values, errors)


def _cmd_part(args: argparse.Namespace) -> None:
    df = paper_part(
        args.artifact, args.method, args.dims, args.folds, int(args.part.removeprefix("fold")),
        load_validation(args.search), seed=args.seed, max_iter=args.max_iter,
        max_triplets=args.max_triplets, kform_solver=json.loads(args.kform_solver),
    )  # fmt: skip
    tables.write_csv(df, args.out, measured=["seconds"])


def _cmd_authors_search(args: argparse.Namespace) -> None:
    trip, n, _, allow_self = load_triplets(args.artifact, args.max_triplets, args.seed, True)
    value = json.loads(args.value)
    violations, Y = authors_search_value(
        args.method, sorted(args.dims), args.name, value, trip, n, args.folds, args.seed,
        args.max_iter, allow_self, json.loads(args.settings),
    )  # fmt: skip
    log.info("%s %s = %s: %d validation violations", args.method, args.name, value, violations)
    info = {"method": args.method, "name": args.name, "value": value, "violations": violations}
    embedding = np.empty((0, 0)) if Y is None else Y
    runs.save_npz(args.out, {"embedding": embedding}, info)


def load_search(files: Iterable[str | Path]) -> AuthorsSearch | None:
    """The search's outcome from the files of :func:`_cmd_authors_search`, given in grid order
    (none: an untuned method)."""
    grid = load_grid_files(files, "search")
    if grid is None:
        return None
    name, values, loaded = grid
    results = [
        (int(info["violations"]), arrays["embedding"] if arrays["embedding"].size else None)
        for arrays, info in loaded
    ]
    return AuthorsSearch.choose(name, values, results)


def _cmd_authors_part(args: argparse.Namespace) -> None:
    part = -1 if args.part == "nn" else int(args.part.removeprefix("fold"))
    df = authors_part(
        args.artifact, args.method, args.dims, args.folds, part, load_search(args.search),
        seed=args.seed, max_iter=args.max_iter, max_triplets=args.max_triplets,
        nn_training=args.nn_training, settings=json.loads(args.settings),
    )  # fmt: skip
    tables.write_csv(df, args.out, measured=["seconds"])


def _cmd_authors_merge(args: argparse.Namespace) -> None:
    merged = merge_parts(pd.read_csv(p) for p in args.parts)
    tables.write_csv(merged, args.out, measured=["seconds"])


def _cmd_table(args: argparse.Namespace) -> None:
    df = fig2_table(args.metrics)
    title = f"t-STE Fig. 2 on {args.dataset}: mean over folds (gen = triplet generalisation "
    title += "error, 1nn = leave-one-out 1-NN label error)"
    if args.protocol != "paper_text":
        title = (
            f"t-STE Fig. 2 on {args.dataset}, protocol {args.protocol} ({READING[args.protocol]})"
            ": gen = mean over folds of "
            "the fraction of test triplets with d_ij > d_il; 1nn = leave-one-out 1-NN error of "
            "one fit per dimension on the 1-NN training set (MNIST: first 10 % of the triplets)"
        )
    found = {short: degenerate_fits(df, short) for short in METRICS.values()}
    if any(found.values()):
        title += (
            f"; DEGENERATE fits (over {DEGENERATE_TIED:.0%} of their triplets tied: the "
            "ties-correct error counts a tie as satisfied, so a collapsed embedding scores 0, "
            "and its 1-NN error is that of coincident points; the 'gen tied' and '1nn tied' "
            "columns give the shares): "
            + "; ".join(f"{PANEL_NAME[short]}: {describe_degenerate(d)}"
                        for short, d in found.items() if d)
        )
    title += "; " + describe_folds(folds_per_method(args.metrics))
    if missing := describe_not_run(folds_per_method(args.metrics)):
        title += f"; {missing}"
    tables.write_table(df, args.csv, args.md, measured=(), title=title)


#: file-name prefix of each protocol's tables and figures (results/tables/<prefix>_<dataset>.csv)
PREFIX = {
    "paper_text": "tste_",
    "authors_code": "tste_authors_",
    "authors_figure": "tste_authors_figure_",
}
READING = {
    "paper_text": "the paper's text",
    "authors_code": "the authors' released code as its scripts call it (t-STE-X alpha = "
    "dims - 1, STE-X / t-STE-X maximise sum log p); it does not reproduce the paper's Fig. 2",
    "authors_figure": "the authors' released code with t-STE-X at alpha = 1 and STE-X / "
    "t-STE-X maximising the sum of probabilities sum p (released options its scripts never "
    "pass), the variant that reproduces the paper's Fig. 2; the other methods are the "
    "authors_code fits",
}


def _dataset_of(path: str | Path, protocol: str) -> str:
    return Path(path).stem.removeprefix(PREFIX[protocol])


def _cmd_claims(args: argparse.Namespace) -> None:
    by_dataset = {_dataset_of(p, args.protocol): pd.read_csv(p) for p in args.tables}
    df = claims_table(by_dataset, args.paper)
    title = "t-STE paper's claims, as measured "
    title += f"(protocol {args.protocol}: {READING[args.protocol]})"
    after = tables.left_out_note(args.left_out)
    tables.write_table(df, args.csv, args.md, measured=(), title=title, after=after)


def _cmd_map(args: argparse.Namespace) -> None:
    embed_map(
        args.artifact,
        args.method,
        args.out,
        seed=args.seed,
        max_iter=args.max_iter,
        max_triplets=args.max_triplets,
        params=json.loads(args.params),
        protocol=args.protocol,
        settings=json.loads(args.settings),
    )


def _cmd_figure(args: argparse.Namespace) -> None:
    from embedlab.plots import tste as plots
    from embedlab.plots.common import save_figure

    if args.figure == "fig2":
        tables_ = {_dataset_of(p, args.protocol): pd.read_csv(p) for p in args.inputs}
        degenerate = {name: {short: degenerate_fits(t, short) for short in METRICS.values()}
                      for name, t in tables_.items()}
        title = textwrap.fill(f"protocol {args.protocol}: {READING[args.protocol]}", 120)
        if any(any(d.values()) for d in degenerate.values()):
            title += "\nx: degenerate fit (its triplets mostly tied; ties count as correct)"
        fig = plots.fig2(tables_, title=title, degenerate=degenerate)
    elif args.figure == "fig3":
        fig = plots.fig3([load_map(p) for p in args.inputs])
    else:
        (path,) = args.inputs
        Y, labels, meta = load_map(path)
        genres = artifacts.load(args.artifact).items["genre"].to_numpy()
        fig = plots.fig4(Y, genres, meta)
    save_figure(fig, args.out)


def _paper_text_options(p: argparse.ArgumentParser) -> None:
    """The options that the paper text's verbs share (one dataset and method each); called
    inside each verb's own group of :func:`register`, so that an edit here changes the code
    fingerprint of those verbs only."""
    p.add_argument("--artifact", required=True, help="triplets artifact folder")
    p.add_argument("--method", required=True, choices=METHOD_ORDER)
    p.add_argument("--dims", type=int, nargs="+", required=True)
    p.add_argument("--folds", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--max-iter", type=int, required=True)
    p.add_argument("--max-triplets", type=int, default=None)
    p.add_argument(
        "--kform-solver", required=True,
        help='JSON K-form solver settings, e.g. {"solver": "accelerated", "precision": '
        '"float32", "tol": 1e-7} (tste.kform_solver)',
    )  # fmt: skip
    p.add_argument("--out", required=True)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``tste-*`` verbs to the command line."""
    p = sub.add_parser("tste-search", help="the paper's text: one grid value's validation")
    _paper_text_options(p)
    p.add_argument("--name", required=True, help="the validated parameter (lam, mu)")
    p.add_argument("--value", required=True, help="its value (JSON)")
    p.set_defaults(func=_cmd_search)

    p = sub.add_parser("tste-part", help="the paper's text: one fold's fits (Fig. 2)")
    _paper_text_options(p)
    p.add_argument("--part", required=True, help="fold<k>")
    p.add_argument("--search", nargs="*", default=[], help="validation files, in grid order")
    p.set_defaults(func=_cmd_part)

    def authors_common(p):
        p.add_argument("--artifact", required=True, help="triplets artifact folder")
        p.add_argument("--method", required=True, choices=METHOD_ORDER)
        p.add_argument("--dims", type=int, nargs="+", required=True)
        p.add_argument("--folds", type=int, required=True)
        p.add_argument("--seed", type=int, required=True)
        p.add_argument("--max-iter", type=int, default=None, help="absent: as coded")
        p.add_argument("--max-triplets", type=int, default=None)
        p.add_argument(
            "--settings", required=True,
            help='JSON solver options of the reading, e.g. {"alpha": 1, "use_log": false} ({}: '
            "as the scripts call the solver)",
        )  # fmt: skip
        p.add_argument("--out", required=True)

    p = sub.add_parser("tste-authors-search", help="authors' protocol: one searched value")
    authors_common(p)
    p.add_argument("--name", required=True, help="the searched parameter (mu, lam)")
    p.add_argument("--value", required=True, help="its value (JSON)")
    p.set_defaults(func=_cmd_authors_search)

    p = sub.add_parser("tste-authors-part", help="authors' protocol: 1-NN fits or one fold")
    authors_common(p)
    p.add_argument("--part", required=True, help="nn or fold<k>")
    p.add_argument("--nn-training", choices=["first", "all"], required=True)
    p.add_argument("--search", nargs="*", default=[], help="search files, in grid order")
    p.set_defaults(func=_cmd_authors_part)

    p = sub.add_parser("tste-authors-merge", help="authors' protocol: one metrics CSV")
    p.add_argument("--out", required=True)
    p.add_argument("parts", nargs="+", help="CSV files written by tste-authors-part")
    p.set_defaults(func=_cmd_authors_merge)

    p = sub.add_parser("tste-table", help="Fig. 2 table of one dataset (mean over folds)")
    p.add_argument("--dataset", required=True)
    p.add_argument("--protocol", choices=list(PREFIX), required=True)
    p.add_argument("--csv", required=True)
    p.add_argument("--md", required=True)
    p.add_argument("metrics", nargs="+", help="metrics CSV files (tste-authors-merge)")
    p.set_defaults(func=_cmd_table)

    p = sub.add_parser("tste-claims", help="the paper's textual claims checked")
    p.add_argument("--paper", required=True, help="config/paper_values/tste_claims.csv")
    p.add_argument("--protocol", choices=list(PREFIX), required=True)
    p.add_argument("--csv", required=True)
    p.add_argument("--md", required=True)
    p.add_argument("tables", nargs="+", help="results/tables/tste_<dataset>.csv")
    p.add_argument("--left-out", required=True, help=tables.LEFT_OUT_HELP)
    p.set_defaults(func=_cmd_claims)

    p = sub.add_parser("tste-map", help="2-D embedding of all triplets (Figs. 3 and 4)")
    p.add_argument("--artifact", required=True)
    p.add_argument("--method", required=True, choices=METHOD_ORDER)
    p.add_argument("--out", required=True, help=".npz")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--protocol", choices=list(PREFIX), required=True)
    p.add_argument(
        "--max-iter", type=int, default=None, help="required for paper_text; authors_code: as coded"
    )
    p.add_argument("--max-triplets", type=int, default=None)
    p.add_argument("--params", default="{}", help="JSON fixed estimator parameters")
    p.add_argument(
        "--settings", required=True, help="JSON solver options of an authors' reading ({}: none)"
    )
    p.set_defaults(func=_cmd_map)

    p = sub.add_parser("tste-figure", help="t-STE paper figure (png + pdf)")
    p.add_argument("figure", choices=["fig2", "fig3", "fig4"])
    p.add_argument("--protocol", choices=list(PREFIX), required=True)
    p.add_argument("--out", required=True, help="output path without extension")
    p.add_argument("--artifact", help="music artifact (fig4)")
    p.add_argument("inputs", nargs="+", help="fig2: tables; fig3: four maps; fig4: one map")
    p.set_defaults(func=_cmd_figure)
