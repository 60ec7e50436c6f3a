"""Diffeomap paper (Walder & Schoelkopf 2008): 1-NN errors on vowel / NIPS text, Figs. 2-4.

Protocol:

1. ``grid``: ``diffeomap-embed`` with a JSON grid of (sigma_rel, lam) at cheap reduced-set
   settings (fewer basis points, time steps and iterations): every grid point is fitted once.
2. ``full_set`` (the headline): the exact method, every point a basis function (the paper's
   eq. 13 without the reduced set), fitted at the grid point with the fewest leave-one-out
   1-NN errors (``--select-from <stage-1 file>``) or at each point of its own grid, the best
   one reported. The map is the learned flow applied to the data. Each point can be its own
   job (``--point k``: one point's file) and ``diffeomap-gather`` joins the points' files into
   the file one job of the whole grid writes (:func:`gather`), apart from each run's seconds.
3. ``final``: the stage-1 best point refitted with the paper's reduced set (n = 300 basis
   functions, p = 20, 1000 iterations), reported as the paper's approximation.

``sigma = sigma_rel * rms_radius`` with ``rms_radius = sqrt(mean_j ||x_j - mean||^2)`` of the
data as fitted, so one grid suits datasets of any scale. For every run both maps are kept:
``flow`` (``transform(X)``, the learned flow integrated from X: the map, whose errors are
reported and select runs) and ``phi`` (the optimised end points Phi_p). Under the span
formulation (the default) they are the same; under "charged" the end points are not reached
by the learned field, so they are not a map and only shown beside it. Class labels for the
1-NN criterion: vowel / USPS ``labels``; NIPS text: the papers with one (``author_match``
"exactly_one", label = that author) or at least one ("any", all of them its classes) of the
``top_authors`` most prolific authors, 1-NN searched among those papers only (the set is
chosen by :func:`author_set_readings`); mocap has none (its grid must be a single point).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from embedlab import artifacts, runs, tables

log = logging.getLogger(__name__)

FIT_ERRORS = (FloatingPointError, np.linalg.LinAlgError, RuntimeError)


# ----------------------------------------------------------------------------- data


def prepare(
    artifact_dir: str | Path,
    subsample: int | None = None,
    pca_dims: int | None = None,
    top_authors: int = 0,
    seed: int = 0,
    use_labels: bool = True,
    centre_frames: bool = False,
    author_match: str = "exactly_one",
) -> tuple[np.ndarray, np.ndarray | None, dict[str, Any]]:
    """(X, classes, info) of a vectors artifact.

    ``subsample``: that many rows drawn at random (seeded); ``pca_dims``: X replaced by its
    first principal components (NIPS text); ``top_authors`` K > 0: classes from the artifact's
    ``paper_authors``: ``author_match`` "exactly_one": papers with exactly one of the K most
    prolific authors (-1 = unlabelled); "any": the 0/1 papers x K incidence (a paper's top-K
    authors are all its classes; see :func:`class_errors`).
    ``use_labels`` False: no classes (mocap, whose labels are frame numbers).
    ``centre_frames``: each row is a frame of 3-D markers; see :func:`centre_on_body`.
    ``info["rows"]`` holds the kept row indices of the artifact.
    """
    from sklearn.decomposition import PCA

    art = artifacts.load(artifact_dir)
    if art.kind != "vectors":
        raise ValueError(f"{artifact_dir}: Diffeomap needs a vectors artifact, got {art.kind!r}")
    X = np.asarray(art.arrays["X"], dtype=np.float64)
    rows = np.arange(len(X))
    if subsample is not None and subsample < len(X):
        rows = np.sort(np.random.default_rng(seed).choice(len(X), size=subsample, replace=False))
    info: dict[str, Any] = {"n_rows_artifact": len(X)}
    if top_authors > 0:
        if "paper_authors" not in art.arrays:
            raise ValueError(f"{artifact_dir}: top_authors={top_authors} needs 'paper_authors'")
        classes, authors = author_classes(art.arrays["paper_authors"], top_authors)
        if author_match == "any":
            classes = (art.arrays["paper_authors"][:, authors] != 0).astype(np.int8).toarray()
        elif author_match != "exactly_one":
            raise ValueError(f"author_match={author_match!r}; expected 'exactly_one' or 'any'")
        info["top_authors"] = authors.tolist()
        info["author_match"] = author_match
    elif use_labels and "labels" in art.arrays:
        classes = np.asarray(art.arrays["labels"])
    else:
        classes = None
    X = X[rows]
    if centre_frames:
        X = centre_on_body(X)
        info["centre_frames"] = True
    if pca_dims is not None and pca_dims < X.shape[1]:
        if pca_dims > min(X.shape) - 1:
            raise ValueError(f"pca_dims={pca_dims} exceeds min(shape) - 1 of X {X.shape}")
        pca = PCA(n_components=pca_dims, random_state=seed).fit(X)
        info["pca_variance_kept"] = float(pca.explained_variance_ratio_.sum())
        X = pca.transform(X)
    info["rows"] = rows.tolist()
    return X, None if classes is None else classes[rows], info


def centre_on_body(X: np.ndarray) -> np.ndarray:
    """Frames in body coordinates: x_(f,m) - (1/M) sum_m' x_(f,m') for each frame f, marker m.

    Rows of ``X`` are frames of M markers stored as (x, y, z) column triples. Removing each
    frame's marker centroid drops the subject's translation (a run covers metres, far more
    than any pose change), so nearby points in the map are similar poses, the property the
    paper's Fig. 2 discussion asks for; inclination and limb positions are kept.
    """
    if X.ndim != 2 or X.shape[1] % 3:
        raise ValueError(f"centre_frames needs rows of (x, y, z) triples, got shape {X.shape}")
    frames = X.reshape(len(X), -1, 3)
    return (frames - frames.mean(axis=1, keepdims=True)).reshape(X.shape)


def author_classes(paper_authors, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Label = the one author among the k most prolific (ties: lower index) a paper has, or -1.

    Returns (labels (papers,), the k author column indices).
    """
    A = (paper_authors != 0).astype(np.int64).tocsc()
    counts = np.asarray(A.sum(axis=0)).ravel()
    top = np.argsort(-counts, kind="stable")[:k]
    sub = A[:, top].tocsr()
    n_top = np.asarray(sub.sum(axis=1)).ravel()
    labels = np.full(A.shape[0], -1, dtype=np.int64)
    one = np.flatnonzero(n_top == 1)
    labels[one] = top[sub[one].indices]
    return labels, top


def class_errors(Y: np.ndarray, classes) -> tuple[int | None, int]:
    """(LOO 1-NN errors among the labelled points (label >= 0), number of labelled points).

    ``classes`` 2-D: a 0/1 incidence, several classes per point (:func:`shared_class_errors`).
    """
    from embedlab.evaluate.knn import loo_1nn_errors

    if classes is None:
        return None, 0
    if classes.ndim == 2:
        return shared_class_errors(Y, classes)
    keep = classes >= 0
    if keep.sum() < 2:
        return None, int(keep.sum())
    return loo_1nn_errors(Y[keep], classes[keep]), int(keep.sum())


def rms_radius(X: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.sum((X - X.mean(axis=0)) ** 2, axis=1))))


def shared_class_errors(Y: np.ndarray, S) -> tuple[int, int]:
    """LOO 1-NN with several classes per point, S the 0/1 incidence (points x classes): among
    the rows with a class, (#rows whose nearest such row shares none of its classes, #rows)."""
    import scipy.sparse as sp
    from sklearn.neighbors import NearestNeighbors

    S = sp.csr_matrix(S, dtype=np.int64)
    keep = np.flatnonzero(np.asarray(S.sum(axis=1)).ravel() > 0)
    if len(keep) < 2:
        raise ValueError(f"shared-class 1-NN needs at least two labelled points, got {len(keep)}")
    _, idx = NearestNeighbors(n_neighbors=2).fit(Y[keep]).kneighbors(Y[keep])
    own = np.arange(len(keep))
    nearest = np.where(idx[:, 0] == own, idx[:, 1], idx[:, 0])
    shared = np.asarray(S[keep].multiply(S[keep][nearest]).sum(axis=1)).ravel()
    return int(np.count_nonzero(shared == 0)), len(keep)


#: the paper's PCA 1-NN accuracy on NIPS text (section 4.4), the target of the author-set choice
PAPER_PCA_ACCURACY = 0.33


def author_set_readings(
    artifact_dir, pca_dims: int | None, seed: int = 0, ks=(4, 5, 6, 7, 8, 10, 15, 20, 30)
) -> pd.DataFrame:
    """2-D PCA 1-NN accuracy on NIPS text for readings of the paper's "authors as classes".

    Readings, for the K most prolific authors (ties: lower index): ``exactly one`` (papers with
    exactly one of them, label = that author: :func:`author_classes`); ``any`` (papers with at
    least one, all of their top-K authors as classes, a hit when the nearest such paper shares
    one); and ``all authors`` (every paper, all its authors as classes). The row whose PCA
    accuracy is closest to the paper's 33 % is marked ``closest``.
    """
    X, _, _ = prepare(artifact_dir, pca_dims=pca_dims, seed=seed, use_labels=False)
    A = (artifacts.load(artifact_dir).arrays["paper_authors"] != 0).astype(np.int64).tocsc()
    Y = baseline_map("pca", X, seed, 0)
    counts = np.asarray(A.sum(axis=0)).ravel()
    rows = []
    for k in ks:
        labels, top = author_classes(A, k)
        reading = {"top_authors": k, "min_papers": int(counts[top].min())}
        for reading_name, classes in (("exactly one", labels), ("any", A[:, top])):
            errors, n = class_errors(Y, classes)
            rows.append({"reading": reading_name, **reading, "papers": n, "pca": 1 - errors / n})
    errors, n = shared_class_errors(Y, A)
    rows.append({"reading": "all authors", "top_authors": A.shape[1], "min_papers": 1,
                 "papers": n, "pca": 1 - errors / n})  # fmt: skip
    df = pd.DataFrame(rows)
    df["pca"] = df["pca"].round(4)
    df["gap_to_paper"] = (df["pca"] - PAPER_PCA_ACCURACY).abs().round(4)
    df["closest"] = df["gap_to_paper"] == df["gap_to_paper"].min()
    return df


# ----------------------------------------------------------------------------- Diffeomap runs


def fit_point(X, classes, sigma_rel, lam, settings: dict, seed: int) -> tuple[dict, dict]:
    """One Diffeomap fit: (row of the runs table, {"phi": Phi_p map, "flow": transform(X)})."""
    from embedlab.methods.diffeomap import Diffeomap

    sigma = sigma_rel * rms_radius(X)
    est = Diffeomap(n_components=2, sigma=sigma, lam=lam, random_state=seed, **settings)
    row: dict[str, Any] = {"sigma_rel": sigma_rel, "lam": lam, "sigma": sigma, **settings}
    t0 = time.perf_counter()
    try:
        est.fit(X)
        maps = {"phi": est.embedding_, "flow": est.transform(X)}
    except FIT_ERRORS as exc:
        log.warning("sigma_rel=%g lam=%g failed: %s", sigma_rel, lam, exc)
        row.update(seconds=time.perf_counter() - t0, error=f"{type(exc).__name__}: {exc}")
        return row, {}
    row.update(
        seconds=round(time.perf_counter() - t0, 2),
        n_basis=len(est.basis_),  # what was used ("all": every point, or every distinct one)
        energy=est.energy_,
        kinetic=est.kinetic_energy_,
        off_subspace=est.off_subspace_energy_,
        n_iter=est.n_iter_,
        n_evaluations=est.n_evaluations_,
        optimizer_message=est.optimizer_message_,
        flow_gap_rms=float(np.sqrt(np.mean(np.sum((maps["phi"] - maps["flow"]) ** 2, 1)))),
        error="",
    )
    for name, Y in maps.items():
        row[f"errors_{name}"], row["n_labelled"] = class_errors(Y, classes)
    log.info("sigma_rel=%g lam=%g: %s", sigma_rel, lam, row)
    return row, maps


def select(grid_file: str | Path) -> dict[str, float]:
    """The (sigma_rel, lam) of the stage-1 run with the fewest 1-NN errors in its flow (or the
    only successful run of a single-point grid)."""
    table = load(grid_file)["runs"]
    ok = [r for r in table if not r["error"]]
    if len(ok) > 1:
        ok = [r for r in ok if r.get("errors_flow") is not None]
    if not ok:
        raise ValueError(f"{grid_file}: no successful run (with class labels) to select from")
    best = min(ok, key=lambda r: (r.get("errors_flow") or 0, r.get("errors_phi") or 0))
    return {"sigma_rel": [best["sigma_rel"]], "lam": [best["lam"]]}


def embed(
    artifact_dir,
    out,
    grid: dict,
    settings: dict,
    *,
    stage: str,
    seed=0,
    subsample=None,
    pca_dims=None,
    top_authors=0,
    use_labels=True,
    centre_frames=False,
    dataset: str | None = None,
    author_match="exactly_one",
    point: int | None = None,
) -> Path:
    """Fit every (sigma_rel, lam) of ``grid``; save all maps + the runs table to ``out``.

    ``point`` k: fit only the k-th point of ``grid`` (0-based, :func:`runs.grid_points` order)
    and write a point file: its one run, its maps under index k (``flow_<k>``, ``phi_<k>``) and
    ``meta["point"]`` = k, for :func:`gather`. Every point's fit starts from the same seed, so
    the points' files joined equal the whole grid's file.
    """
    X, classes, info = prepare(
        artifact_dir, subsample, pca_dims, top_authors, seed, use_labels, centre_frames,
        author_match,
    )  # fmt: skip
    points = runs.grid_points(grid)
    if classes is None and len(points) > 1:
        raise ValueError(f"{artifact_dir}: no class labels to choose among {len(points)} points")
    if point is not None and not 0 <= point < len(points):
        raise ValueError(f"point {point} of a grid of {len(points)}: 0 to {len(points) - 1}")
    arrays, table = {}, []
    for k, values in enumerate(points):
        if point is not None and k != point:
            continue
        row, maps = fit_point(X, classes, values["sigma_rel"], values["lam"], settings, seed)
        table.append(row)
        for name, Y in maps.items():
            arrays[f"{name}_{k}"] = Y
    meta = {
        "experiment": "diffeomap",
        "dataset": dataset or Path(artifact_dir).name,
        "stage": stage,
        "grid": grid,
        "settings": settings,
        "seed": seed,
        "subsample": subsample,
        "pca_dims": pca_dims,
        "top_authors": top_authors,
        "centre_frames": centre_frames,
        **{k: v for k, v in info.items() if k != "rows"},
        **({} if point is None else {"point": point}),
    }
    arrays["rows"] = np.asarray(info["rows"], dtype=np.int64)
    if classes is not None:
        arrays["classes"] = classes
    return runs.save_npz(out, arrays, {"meta": meta, "runs": table})


#: the arrays every point file of a grid holds alike (the data as fitted)
SHARED_ARRAYS = ("rows", "classes")


def gather(files: list[str | Path], out) -> Path:
    """Join the point files of one grid (``diffeomap-embed --point``, one per point, any order)
    into the file ``diffeomap-embed`` of the whole grid writes: the runs in grid order, each
    point's maps under its index, the shared meta (less ``point``), rows and classes.

    The files must be every point of the same grid, fitted at the same settings on the same
    data: a missing, repeated or foreign point raises rather than give a table that is not the
    grid's.
    """
    parts = []
    for path in files:
        arrays, info = runs.load_npz(path)
        if "point" not in info["meta"]:
            raise ValueError(f"{path}: not a point file (diffeomap-embed --point)")
        parts.append((info["meta"]["point"], path, arrays, info))
    parts.sort(key=lambda part: part[0])
    meta = {k: v for k, v in parts[0][3]["meta"].items() if k != "point"}
    n_points = len(runs.grid_points(meta["grid"]))
    if [part[0] for part in parts] != list(range(n_points)):
        raise ValueError(
            f"points {[part[0] for part in parts]} of a grid of {n_points}: need each of "
            f"0 to {n_points - 1} once"
        )
    first = parts[0][2]
    gathered, table = {}, []
    for _, path, arrays, info in parts:
        if {k: v for k, v in info["meta"].items() if k != "point"} != meta:
            raise ValueError(f"{path}: another grid, settings or data than {parts[0][1]}")
        if any(
            (name in arrays) != (name in first)
            or (name in first and not np.array_equal(arrays[name], first[name]))
            for name in SHARED_ARRAYS
        ):
            raise ValueError(f"{path}: other rows or classes than {parts[0][1]}")
        table.extend(info["runs"])
        gathered.update({k: v for k, v in arrays.items() if k not in SHARED_ARRAYS})
    gathered.update({name: first[name] for name in SHARED_ARRAYS if name in first})
    return runs.save_npz(out, gathered, {"meta": meta, "runs": table})


def load(path) -> dict[str, Any]:
    """{"meta", "runs", "arrays"} of a file written by :func:`embed` or :func:`baselines`."""
    arrays, info = runs.load_npz(path)
    return {**info, "arrays": arrays}


def best_index(runs_table: list[dict]) -> int:
    """Index of the run with the fewest errors in its flow (or the only successful run)."""
    ok = [k for k, r in enumerate(runs_table) if not r["error"]]
    if not ok:
        raise RuntimeError(f"every Diffeomap run failed; first: {runs_table[0]['error']}")
    return min(ok, key=lambda k: runs_table[k].get("errors_flow") or 0)


# ----------------------------------------------------------------------------- baselines


def baseline_map(method: str, X: np.ndarray, seed: int, n_neighbors: int) -> np.ndarray:
    """2-D PCA, Isomap (n_neighbors) or t-SNE (scikit-learn) of X."""
    from sklearn.decomposition import PCA
    from sklearn.manifold import TSNE, Isomap

    if method == "pca":
        return PCA(n_components=2, random_state=seed).fit_transform(X)
    if method == "isomap":
        return Isomap(n_neighbors=n_neighbors, n_components=2).fit_transform(X)
    if method == "tsne":
        return TSNE(n_components=2, random_state=seed, init="pca").fit_transform(X)
    raise ValueError(f"unknown baseline {method!r}; expected pca, isomap or tsne")


def baselines(
    artifact_dir,
    out,
    methods: list[str],
    *,
    seed=0,
    subsample=None,
    pca_dims=None,
    top_authors=0,
    n_neighbors=10,
    centre_frames=False,
    dataset=None,
    author_match="exactly_one",
) -> Path:
    """The 2-D maps of the baseline ``methods`` and their 1-NN errors, saved to ``out``."""
    X, classes, info = prepare(
        artifact_dir, subsample, pca_dims, top_authors, seed, centre_frames=centre_frames,
        author_match=author_match,
    )  # fmt: skip
    arrays, table = {}, []
    for method in methods:
        t0 = time.perf_counter()
        Y = baseline_map(method, X, seed, n_neighbors)
        errors, n_lab = class_errors(Y, classes)
        table.append(
            {
                "method": method,
                "errors": errors,
                "n_labelled": n_lab,
                "seconds": round(time.perf_counter() - t0, 2),
                "n_neighbors": n_neighbors if method == "isomap" else None,
            }
        )
        arrays[f"map_{method}"] = Y
    meta = {
        "dataset": dataset or Path(artifact_dir).name,
        "seed": seed,
        "subsample": subsample,
        "pca_dims": pca_dims,
        "top_authors": top_authors,
    }
    arrays["rows"] = np.asarray(info["rows"], dtype=np.int64)
    info.pop("rows")
    return runs.save_npz(out, arrays, {"meta": {**meta, **info}, "runs": table})


# ----------------------------------------------------------------------------- table

#: the stages of a Diffeomap run file (``diffeomap-embed --stage``)
STAGES = ("grid", "final", "full_set")

#: the order of a dataset's rows in the 1-NN table: the headline (the exact flow) first
STAGE_ORDER = {"full_set": 0, "final": 1, "grid": 2, "baseline": 3}

#: the stages compared with the paper's numbers, and how the table names them
COMPARED = {
    "full_set": "exact flow (every point a basis function)",
    "final": "paper's approximation (reduced set, n = {n_basis})",
    "baseline": "baseline",
}

#: the settings of a Diffeomap run shown in the table's ``params``
RUN_PARAMS = ("sigma_rel", "lam", "p", "n_basis", "max_iter", "optimizer", "formulation")

PAPER_METHOD = {"diffeomap": "diffeomap", "pca": "pca", "isomap": "isomap", "tsne": "tsne"}


def _metric(dataset: str) -> str:
    return "1nn_accuracy" if dataset == "nips_text" else "loo_1nn_errors"


def _value(errors, n_labelled, metric):
    if errors is None:
        return None
    return round(1 - errors / n_labelled, 4) if metric == "1nn_accuracy" else int(errors)


def results_table(files: list[str | Path], paper_csv: str | Path) -> pd.DataFrame:
    """One row per run (Diffeomap full_set / final / grid, baselines), the paper's value and a
    verdict beside the best full-set run (the headline: the exact method), the best final run
    (``label``: the paper's reduced-set approximation) and the baselines.

    ``value`` is LOO 1-NN errors (vowel, USPS; lower is better) or 1-NN accuracy among the
    labelled papers (NIPS text). Diffeomap rows: ``value`` in the map (the learned flow applied
    to the data), ``value_end_points`` in the optimised end points Phi_p (the same under the
    span formulation). The paper's GP-LVM rows are quoted, not rerun.
    """
    paper = pd.read_csv(paper_csv)
    rows = []
    for path in files:
        data = load(path)
        meta = data["meta"]
        dataset = meta["dataset"]
        metric = _metric(dataset)
        for k, r in enumerate(data["runs"]):
            if "method" in r:  # baselines file
                row = {
                    "method": r["method"],
                    "stage": "baseline",
                    "label": COMPARED["baseline"],
                    "_best": True,
                    "value": _value(r["errors"], r["n_labelled"], metric),
                    "params": json.dumps({"n_neighbors": r["n_neighbors"]})
                    if r["n_neighbors"]
                    else "",
                }
            else:
                s = r
                row = {
                    "method": "diffeomap",
                    "stage": meta["stage"],
                    "label": "",
                    "_best": k == best_index(data["runs"]),
                    "value": None
                    if r["error"]
                    else _value(r["errors_flow"], r["n_labelled"], metric),
                    "value_end_points": None
                    if r["error"]
                    else _value(r["errors_phi"], r["n_labelled"], metric),
                    "params": json.dumps({k: s[k] for k in RUN_PARAMS if k in s}),
                    "sigma": round(s["sigma"], 4),
                    "seconds": s["seconds"],
                    "error": r["error"],
                }
            rows.append(
                {
                    "dataset": dataset,
                    "metric": metric,
                    "n": len(data["arrays"]["rows"]),
                    "n_labelled": r["n_labelled"],
                    "subsampled": len(data["arrays"]["rows"]) < meta["n_rows_artifact"],
                    **row,
                }
            )
    df = pd.DataFrame(rows)
    compared = df["_best"] & df["stage"].isin(list(COMPARED))
    df.loc[compared & (df["stage"] != "baseline"), "label"] = [
        COMPARED[s].format(n_basis=json.loads(p).get("n_basis"))
        for s, p in zip(
            df.loc[compared & (df["stage"] != "baseline"), "stage"],
            df.loc[compared & (df["stage"] != "baseline"), "params"],
            strict=True,
        )
    ]
    df = df.assign(_compared=compared).drop(columns=["_best"])
    # each dataset's rows together (datasets in file order), its stages in STAGE_ORDER
    datasets = {d: k for k, d in enumerate(dict.fromkeys(df["dataset"]))}
    df = df.assign(_d=df["dataset"].map(datasets), _s=df["stage"].map(STAGE_ORDER))
    df = df.sort_values(["_d", "_s"], kind="stable").drop(columns=["_d", "_s"])
    df = df.reset_index(drop=True)
    ref = {
        (d, m): v for d, m, v in zip(paper["dataset"], paper["method"], paper["value"], strict=True)
    }
    df["paper"] = [
        ref.get((d, m)) if c else None
        for d, m, c in zip(df["dataset"], df["method"], df["_compared"], strict=True)
    ]
    df["verdict"] = [
        ""
        if not c
        else "subsampled: not comparable"
        if sub and p is not None and not pd.isna(p)
        else tables.verdict(
            v,
            p,
            tol=0.02 if m == "1nn_accuracy" else 0.1 * (p or 0),
            lower_is_better=m != "1nn_accuracy",
        )
        for v, p, m, c, sub in zip(
            df["value"], df["paper"], df["metric"], df["_compared"], df["subsampled"], strict=True
        )
    ]
    df = df.drop(columns=["_compared"])
    quoted = paper[~paper["method"].isin(df["method"])]
    quoted = quoted[quoted["dataset"].isin(df["dataset"])]
    extra = pd.DataFrame(
        {
            "dataset": quoted["dataset"],
            "metric": quoted["metric"],
            "method": quoted["method"],
            "stage": "quoted from the paper (not rerun)",
            "paper": quoted["value"],
        }
    )
    return pd.concat([df, extra], ignore_index=True)


# ----------------------------------------------------------------------------- figures


def figure(name: str, out_stem, diffeomap_file, artifact_dir=None, baseline_file=None) -> None:
    """fig2 (mocap, temporal line), fig3 (vowel: PCA beside Diffeomap), fig4 (USPS digits),
    from the best run of ``diffeomap_file`` (the workflow passes the full-set, exact flow)."""
    from embedlab.plots import diffeomap as plots
    from embedlab.plots.common import save_figure

    data = load(diffeomap_file)
    k = best_index(data["runs"])
    Y = data["arrays"][f"flow_{k}"]
    rows = data["arrays"]["rows"]
    r = data["runs"][k]
    kind = "exact flow" if data["meta"]["stage"] == "full_set" else f"n = {r['n_basis']}"
    title = f"Diffeomap, {kind} (sigma_rel={r['sigma_rel']:g}, lambda={r['lam']:g}, p={r['p']})"
    if name == "fig2":
        fig = plots.temporal_figure(Y, title)
    elif name == "fig3":
        base = load(baseline_file)
        fig = plots.side_by_side_figure(
            base["arrays"]["map_pca"],
            Y,
            data["arrays"]["classes"],
            artifacts.load(artifact_dir).meta.get("label_names"),
            title,
        )
    elif name == "fig4":
        art = artifacts.load(artifact_dir)
        shape = tuple(art.meta.get("image_shape", (16, 16)))
        fig = plots.thumbnails_figure(
            Y, data["arrays"]["classes"], art.arrays["X"][rows], shape, title
        )
    else:
        raise ValueError(f"unknown Diffeomap figure {name!r}; expected fig2, fig3 or fig4")
    save_figure(fig, out_stem, tight=True)


# ----------------------------------------------------------------------------- command line


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--artifact", required=True, help="vectors artifact folder")
    p.add_argument("--out", required=True, help="output file (.npz)")
    p.add_argument("--dataset", help="dataset name (default: the artifact folder's name)")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--subsample", type=int, help="random subset of this many rows")
    p.add_argument("--pca-dims", type=int, help="reduce X to this many principal components")
    p.add_argument(
        "--top-authors", type=int, default=0, help="NIPS text: author classes (0: none)"
    )
    p.add_argument(
        "--author-match", required=True, choices=["exactly_one", "any"],
        help="NIPS text: papers with exactly one top author, or any (all of them as classes)",
    )  # fmt: skip
    p.add_argument("--no-labels", action="store_true", help="ignore labels (mocap frames)")
    p.add_argument(
        "--centre-frames", action="store_true", help="mocap: remove each frame's centroid"
    )


def _n_basis(text: str) -> int | None:
    """--n-basis: a positive count, or "all" (None: every distinct point)."""
    if text == "all":
        return None
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"--n-basis must be 'all' or >= 1, got {text!r}")
    return value


def _cmd_embed(args):
    grid = select(args.select_from) if args.select_from else json.loads(args.grid)
    settings = {
        "p": args.p,
        "n_basis": args.n_basis,
        "max_iter": args.max_iter,
        "eps": args.eps,
        "optimizer": args.optimizer,
        "formulation": args.formulation,
    }
    embed(
        args.artifact,
        args.out,
        grid,
        settings,
        stage=args.stage,
        seed=args.seed,
        subsample=args.subsample,
        pca_dims=args.pca_dims,
        top_authors=args.top_authors,
        use_labels=not args.no_labels,
        centre_frames=args.centre_frames,
        dataset=args.dataset,
        author_match=args.author_match,
        point=args.point,
    )


def _cmd_gather(args):
    gather(args.files, args.out)


def _cmd_baselines(args):
    baselines(
        args.artifact,
        args.out,
        args.methods,
        seed=args.seed,
        subsample=args.subsample,
        pca_dims=args.pca_dims,
        top_authors=args.top_authors,
        n_neighbors=args.n_neighbors,
        centre_frames=args.centre_frames,
        dataset=args.dataset,
        author_match=args.author_match,
    )


def _cmd_table(args):
    df = results_table(args.files, args.paper)
    title = "Diffeomap: 1-NN in the 2-D map"
    after = tables.left_out_note(args.left_out)
    tables.write_table(df, args.csv, args.md, measured=["seconds"], title=title, after=after)


def _cmd_author_sets(args):
    df = author_set_readings(args.artifact, args.pca_dims, args.seed)
    title = "NIPS text: PCA 1-NN accuracy per reading of the paper's author classes (paper 33 %)"
    tables.write_table(df, args.csv, args.md, measured=(), title=title)


def _cmd_figure(args):
    figure(args.figure, args.out, args.runs, args.artifact, args.baselines)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``diffeomap-*`` verbs to the command line."""
    p = sub.add_parser("diffeomap-embed", help="Diffeomap over a (sigma_rel, lam) grid")
    _common(p)
    points = p.add_mutually_exclusive_group(required=True)
    points.add_argument("--grid", help='JSON grid, e.g. {"sigma_rel": [0.1], "lam": [10.0]}')
    points.add_argument("--select-from", help="stage-1 file: refit its best grid point")
    p.add_argument(
        "--stage", required=True, choices=STAGES,
        help="grid: stage 1; full_set: every point a basis function (the exact method, the "
        "headline); final: the paper's reduced-set approximation",
    )  # fmt: skip
    p.add_argument("--p", type=int, required=True, help="time steps")
    p.add_argument(
        "--n-basis", type=_n_basis, required=True,
        help="reduced-set size n, or 'all' for every distinct point",
    )  # fmt: skip
    p.add_argument("--max-iter", type=int, required=True)
    p.add_argument(
        "--eps", type=float, required=True, help="charged: eps of (K_mn K_nn^-1 K_nm + eps)^-1"
    )
    p.add_argument("--optimizer", required=True, choices=["lbfgs", "cg"])
    p.add_argument(
        "--formulation", required=True, choices=["span", "charged"],
        help="span: the map is the flow of a field spanned by the basis; charged: free end points",
    )  # fmt: skip
    p.add_argument(
        "--point", type=int,
        help="fit only this point of the grid (0-based) into a point file for diffeomap-gather",
    )  # fmt: skip
    p.set_defaults(func=_cmd_embed)

    p = sub.add_parser(
        "diffeomap-gather", help="join diffeomap-embed --point files into the grid's file"
    )
    p.add_argument("--out", required=True, help="output file (.npz)")
    p.add_argument("files", nargs="+", help="one diffeomap-embed --point file per grid point")
    p.set_defaults(func=_cmd_gather)

    p = sub.add_parser("diffeomap-baselines", help="PCA / Isomap / t-SNE maps + 1-NN errors")
    _common(p)
    p.add_argument("--methods", nargs="+", required=True, help="pca, isomap, tsne")
    p.add_argument("--n-neighbors", type=int, required=True, help="Isomap neighbours")
    p.set_defaults(func=_cmd_baselines)

    p = sub.add_parser("diffeomap-table", help="1-NN table beside the paper's numbers")
    p.add_argument("--paper", required=True)
    p.add_argument("--csv", required=True)
    p.add_argument("--md", required=True)
    p.add_argument("files", nargs="+", help="files of diffeomap-embed / diffeomap-baselines")
    p.add_argument("--left-out", required=True, help=tables.LEFT_OUT_HELP)
    p.set_defaults(func=_cmd_table)

    p = sub.add_parser("diffeomap-author-sets", help="NIPS text: PCA accuracy per author set")
    p.add_argument("--artifact", required=True, help="nips_text artifact folder")
    p.add_argument("--pca-dims", type=int, help="reduce X to this many principal components")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--csv", required=True)
    p.add_argument("--md", required=True)
    p.set_defaults(func=_cmd_author_sets)

    p = sub.add_parser("diffeomap-figure", help="Figs. 2-4 of the Diffeomap paper")
    p.add_argument("figure", choices=["fig2", "fig3", "fig4"])
    p.add_argument("--out", required=True, help="output path without extension")
    p.add_argument("--runs", required=True, help="diffeomap-embed file (its best run is drawn)")
    p.add_argument("--artifact", help="dataset artifact folder (fig3, fig4)")
    p.add_argument("--baselines", help="baselines file (fig3: PCA map)")
    p.set_defaults(func=_cmd_figure)
