"""SNEST paper, Table 1: minimal KL of SNE, t-SNE and SNEST per dataset and dimension.

A *cell* is one (method, n_space, n_time) row of Table 1, named e.g. ``sne-2``, ``tsne-3`` or
``snest-2-1``. :func:`embed_cell` runs every restart x learning-rate grid point of one cell on
one dataset and keeps every run (:mod:`embedlab.runs`); :func:`kl_table` takes the minimum KL
per (dataset, cell) and puts the paper's value beside it, with the winner per parameter budget
(free coordinates per item: d for R^d, ds + dt for R^{ds,dt}).
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from embedlab import artifacts, runs, tables
from embedlab.optimize import DivergenceError

log = logging.getLogger(__name__)

CELL = re.compile(r"^(sne|tsne|snest)-(\d+)(?:-(\d+))?$")
LABEL = {"sne": "SNE", "tsne": "t-SNE", "snest": "SNEST"}


def parse_cell(cell: str) -> tuple[str, int, int]:
    """``"snest-2-1"`` -> ("snest", 2, 1); ``"tsne-3"`` -> ("tsne", 3, 0)."""
    m = CELL.match(cell)
    if not m:
        raise ValueError(f"cell {cell!r} is not of the form sne-D, tsne-D or snest-DS-DT")
    method, n_space, n_time = m.group(1), int(m.group(2)), int(m.group(3) or 0)
    if (method == "snest") != (m.group(3) is not None):
        raise ValueError(f"cell {cell!r}: only snest cells have a time dimension")
    return method, n_space, n_time


def cell_label(cell: str) -> str:
    """The paper's row label, e.g. ``SNEST R^{2,1}``."""
    method, n_space, n_time = parse_cell(cell)
    space = f"R^{{{n_space},{n_time}}}" if method == "snest" else f"R^{n_space}"
    return f"{LABEL[method]} {space}"


def make_estimator(cell: str, **params: Any):
    """The estimator of ``cell`` with ``params`` (learning rates, max_iter, random_state ...)
    over the paper's optimiser settings (:func:`embedlab.methods.neighbour.paper_protocol`),
    fitted on a precomputed P (``affinity="precomputed"``).

    ``time_ratio`` sets SNEST's time learning rate relative to the space one:
    gamma_t = time_ratio * gamma_s (the paper asks gamma_t / gamma_s <= 1/100).
    """
    from embedlab.methods.neighbour import METHODS, paper_protocol

    method, n_space, n_time = parse_cell(cell)
    ratio = params.pop("time_ratio", None)
    if ratio is not None:
        params["learning_rate_time"] = ratio * params["learning_rate"]
    # the paper's optimiser settings under the given ones; the input is the artifact's P
    params = {**paper_protocol(time=method == "snest"), "affinity": "precomputed", **params}
    if method == "snest":
        return METHODS[method](n_space=n_space, n_time=n_time, **params)
    params.pop("learning_rate_time", None)  # SNE and t-SNE have no time coordinates
    return METHODS[method](n_components=n_space, **params)


#: above this many points the perplexity P comes from nearest neighbours, not all pairs
DENSE_AFFINITIES_BELOW = 5000


def vectors_affinities(X: np.ndarray, perplexity: float, seed: int):
    """t-SNE's joint P of the points ``X`` at ``perplexity``: from all pairs below
    :data:`DENSE_AFFINITIES_BELOW` points, else from the 3 x perplexity nearest neighbours
    (:func:`embedlab.knn_affinities.knn_affinities`, as the scale experiment)."""
    n = len(X)
    if not 1 < perplexity < n - 1:
        raise ValueError(
            f"perplexity {perplexity:g} needs more than {perplexity + 1:g} points, got {n}"
        )
    if n < DENSE_AFFINITIES_BELOW:
        from embedlab.perplexity import squared_distances, symmetric_affinities

        return symmetric_affinities(squared_distances(np.asarray(X, dtype=np.float64)), perplexity)
    from embedlab.knn_affinities import knn_affinities

    return knn_affinities(X, perplexity, seed=seed).P


def embed_cell(
    artifact_dir: str | Path,
    cell: str,
    out: str | Path,
    grid: Mapping[str, list],
    n_restarts: int,
    *,
    seed: int,
    max_iter: int,
    log_every: int,
    stopping: Mapping[str, float],
    precision: str,
    perplexity: float,
) -> runs.Run:
    """Run every restart x grid point of ``cell`` on the artifact's P; save all runs.

    A similarity artifact gives its P; a vectors artifact (a user's own dataset) the joint P
    of t-SNE at ``perplexity`` (:func:`vectors_affinities`).

    ``stopping``: ``rate_window``, ``plateau_tol`` and ``abandon_margin`` of
    :class:`embedlab.optimize.GradientDescent`; with a finite margin each run is compared
    with the best finished run so far of the cell and abandoned once it cannot catch up.
    ``precision``: the kernel's working precision, "float64" or "float32" (the estimators'
    ``precision``)."""
    art = artifacts.load(artifact_dir)
    if art.kind == "vectors":
        P = vectors_affinities(art.arrays["X"], perplexity, seed)
    elif art.kind == "similarity":
        P = art.arrays["P"]
    else:
        raise ValueError(
            f"{artifact_dir}: SNEST needs a similarity or vectors artifact, got {art.kind!r}"
        )
    method, _, n_time = parse_cell(cell)
    if method != "snest":
        grid = {k: v for k, v in grid.items() if k not in ("learning_rate_time", "time_ratio")}
    stopping = {k: stopping[k] for k in ("rate_window", "plateau_tol", "abandon_margin")}
    factory = functools.partial(
        make_estimator, cell, max_iter=max_iter, log_every=log_every, precision=precision,
        **stopping,
    )
    all_runs = runs.run_grid(
        factory,
        P,
        grid,
        n_restarts,
        seed=seed,
        catch=(DivergenceError,),
        reference=True,
    )
    meta = {
        "experiment": "snest",
        "dataset": art.meta.get("name", Path(artifact_dir).name),
        "cell": cell,
        "label": cell_label(cell),
        "n_time": n_time,
        "grid": dict(grid),
        "n_restarts": n_restarts,
        "seed": seed,
        "max_iter": max_iter,
        "stopping": stopping,
        "precision": precision,
    }
    runs.save_runs(out, all_runs, meta)
    best = runs.best_run(all_runs)
    log.info(
        "%s on %s: best KL %.4f (%s, seed %d)",
        cell,
        meta["dataset"],
        best.cost,
        best.params,
        best.seed,
    )
    return best


def budget(cell: str) -> int:
    """Free coordinates per item: d for R^d, ds + dt for R^{ds,dt}."""
    _, n_space, n_time = parse_cell(cell)
    return n_space + n_time


def kl_table(run_files: Iterable[str | Path], paper_csv: str | Path) -> pd.DataFrame:
    """Long table: one row per (dataset, cell) with our minimal KL beside the paper's.

    Columns: dataset, cell, label, budget, kl (ours, min over runs), paper_kl, diff
    (ours - paper), verdict, runs (finite / total), best_params, seconds_per_run,
    winner_in_budget (the lowest-KL cell among those with the same budget on that dataset).
    """
    paper = pd.read_csv(paper_csv)
    paper["cell"] = [
        f"{m}-{s}-{t}" if m == "snest" else f"{m}-{s}"
        for m, s, t in zip(paper["method"], paper["n_space"], paper["n_time"], strict=True)
    ]
    paper_kl = {
        (d, c): v for d, c, v in zip(paper["dataset"], paper["cell"], paper["kl"], strict=True)
    }
    rows = []
    for path in run_files:
        data = runs.load_runs(path)
        meta, table = data["meta"], data["runs"]
        finite = [r for r in table if r["cost"] is not None]
        ours = data["best"]["cost"]
        ref = paper_kl.get((meta["dataset"], meta["cell"]))
        best_params = {k: v for k, v in data["best"].items() if k in meta["grid"]}
        rows.append(
            {
                "dataset": meta["dataset"],
                "cell": meta["cell"],
                "label": cell_label(meta["cell"]),
                "budget": budget(meta["cell"]),
                "kl": round(ours, 4),
                "paper_kl": ref,
                "diff": None if ref is None else round(ours - ref, 4),
                "verdict": tables.verdict(ours, ref, tol=0.005, lower_is_better=True),
                "runs": f"{len(finite)}/{len(table)}",
                "best_params": json.dumps(best_params, sort_keys=True),
                "seconds_per_run": round(float(np.mean([r["seconds"] for r in table])), 3),
            }
        )
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    best_in_budget = df.loc[df.groupby(["dataset", "budget"])["kl"].idxmin()]
    winners = {
        (d, b): lab
        for d, b, lab in zip(
            best_in_budget["dataset"],
            best_in_budget["budget"],
            best_in_budget["label"],
            strict=True,
        )
    }
    df["winner_in_budget"] = [
        winners[(d, b)] for d, b in zip(df["dataset"], df["budget"], strict=True)
    ]
    return df.sort_values(["dataset", "budget", "cell"]).reset_index(drop=True)


def kl_matrix(df: pd.DataFrame, datasets: list[str]) -> pd.DataFrame:
    """Table 1's layout: one row per method/space, one column per dataset, cells 'ours (paper)'."""
    order = sorted(
        df["cell"].unique(),
        key=lambda c: (["sne", "tsne", "snest"].index(parse_cell(c)[0]), budget(c)),
    )
    out = []
    for cell in order:
        row = {"method": cell_label(cell)}
        for d in datasets:
            hit = df[(df["cell"] == cell) & (df["dataset"] == d)]
            if hit.empty:
                row[d] = ""
                continue
            r = hit.iloc[0]
            paper = "" if pd.isna(r["paper_kl"]) else f" ({r['paper_kl']:.2f})"
            mark = " *" if r["winner_in_budget"] == r["label"] else ""
            row[d] = f"{r['kl']:.2f}{paper}{mark}"
        out.append(row)
    return pd.DataFrame(out)


def space_time_claims(df: pd.DataFrame) -> pd.DataFrame:
    """The paper's claim, per dataset: SNEST R^{2,1} has lower KL than t-SNE R^3 (and R^4)."""
    rows = []
    for d, g in df.groupby("dataset"):
        kl = dict(zip(g["cell"], g["kl"], strict=True))
        for rival in ("tsne-3", "tsne-4", "sne-4"):
            if "snest-2-1" in kl and rival in kl:
                rows.append(
                    {
                        "dataset": d,
                        "claim": f"SNEST R^{{2,1}} < {cell_label(rival)}",
                        "snest_2_1": kl["snest-2-1"],
                        "rival": kl[rival],
                        "holds": bool(kl["snest-2-1"] < kl[rival]),
                    }
                )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# command line


def _cmd_embed(args: argparse.Namespace) -> None:
    embed_cell(
        args.artifact,
        args.cell,
        args.out,
        json.loads(args.grid),
        args.restarts,
        seed=args.seed,
        max_iter=args.max_iter,
        log_every=args.log_every,
        stopping={
            "rate_window": args.rate_window,
            "plateau_tol": args.plateau_tol,
            "abandon_margin": args.abandon_margin,
        },
        precision=args.precision,
        perplexity=args.perplexity,
    )


def _cmd_table(args: argparse.Namespace) -> None:
    df = kl_table(args.runs, args.paper)
    datasets = args.datasets.split(",") if args.datasets else list(dict.fromkeys(df["dataset"]))
    tables.write_table(
        df, args.csv, args.md_long, measured=["seconds_per_run"], title="SNEST Table 1 (long form)"
    )
    matrix = kl_matrix(df, datasets)
    claims = space_time_claims(df)
    note = (
        "Minimal KL over all runs, ours (paper's Table 1); * = lowest KL among the methods "
        "with the same number of free coordinates per item (R^2 ~ R^{1,1}, R^3 ~ R^{2,1}, "
        "R^4 ~ R^{3,1})."
    )
    md = [f"# SNEST Table 1: minimal KL\n\n{note}\n", matrix.to_markdown(index=False), ""]
    if not claims.empty:
        md += [
            "## Does SNEST R^{2,1} beat the Euclidean embeddings with more dimensions?\n",
            claims.to_markdown(index=False),
            "",
        ]
    md += [tables.left_out_note(args.left_out)]
    artifacts.write_text_atomic(args.md, "\n".join(md) + "\n")


# figure -> colour limit of its time axis, as in the paper's figure (which dataset each figure
# shows is the workflow's choice: SNEST_FIGURES in workflow/rules/snest.smk); fig2b (the
# kernel's contour) needs no run
TIME_LIMITS = {"fig2a": None, "fig3": 1.0, "fig4": 0.8}


def figure(name: str, out_stem: str | Path, runs_file=None, artifact_dir=None) -> None:
    """Draw SNEST paper figure ``name`` (fig2a, fig2b, fig3, fig4) to ``out_stem``.png/.pdf."""
    from embedlab.plots import snest as plots
    from embedlab.plots.common import save_figure

    if name == "fig2b":
        save_figure(plots.kernel_contour_figure(), out_stem)
        return
    if name not in TIME_LIMITS:
        raise ValueError(f"unknown SNEST figure {name!r}; expected fig2a, fig2b, fig3 or fig4")
    if runs_file is None or artifact_dir is None:
        raise ValueError(f"figure {name} needs a runs file and the dataset artifact")
    data = runs.load_runs(runs_file)
    if data["meta"]["cell"] != "snest-2-1":
        raise ValueError(
            f"{runs_file}: figure {name} shows SNEST R^{{2,1}}, got {data['meta']['cell']}"
        )
    Y, art = data["best_embedding"], artifacts.load(artifact_dir)
    items, time_limit = art.items, TIME_LIMITS[name]
    if name == "fig2a":
        fig = plots.school_figure(
            Y, art.arrays["links"], items["class"].to_numpy(), items["role_in_class"].to_numpy()
        )
    elif name == "fig3":
        fig = plots.authors_figure(
            Y, items["name"].tolist(), items["n_papers"].to_numpy(), time_limit=time_limit
        )
    else:
        fig = plots.words_figure(Y, items["name"].tolist(), time_limit=time_limit)
    ax = fig.axes[0]
    kl_note = f"KL = {data['best']['cost']:.3f} (best of {len(data['runs'])} runs)"
    ax.set_title(f"{ax.get_title()}\n{kl_note}", fontsize=ax.title.get_fontsize())
    save_figure(fig, out_stem)


def _cmd_figure(args: argparse.Namespace) -> None:
    figure(args.figure, args.out, args.runs, args.artifact)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``snest-*`` verbs to the command line."""
    p = sub.add_parser("snest-embed", help="all runs of one Table 1 cell on one dataset")
    p.add_argument("--artifact", required=True, help="similarity artifact folder")
    p.add_argument("--cell", required=True, help="sne-D, tsne-D or snest-DS-DT")
    p.add_argument("--out", required=True, help="runs file (.npz)")
    p.add_argument("--grid", required=True, help="JSON parameter grid")
    p.add_argument("--restarts", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--max-iter", type=int, required=True)
    p.add_argument("--log-every", type=int, required=True)
    p.add_argument("--rate-window", type=int, required=True, help="0: no plateau test")
    p.add_argument("--plateau-tol", type=float, required=True)
    p.add_argument("--abandon-margin", type=float, required=True, help="inf: never abandon")
    p.add_argument("--precision", required=True, help="the estimators' precision (checked there)")
    p.add_argument("--perplexity", type=float, required=True, help="P of a vectors artifact")
    p.set_defaults(func=_cmd_embed)

    p = sub.add_parser("snest-table", help="Table 1: minimal KL per cell beside the paper's")
    p.add_argument("--paper", required=True, help="config/paper_values/snest_table1.csv")
    p.add_argument("--csv", required=True)
    p.add_argument("--md", required=True, help="Table 1 layout (markdown)")
    p.add_argument("--md-long", required=True, help="long form (markdown)")
    p.add_argument("--datasets", help="column order, comma-separated")
    p.add_argument("runs", nargs="+", help="runs files written by snest-embed")
    p.add_argument("--left-out", required=True, help=tables.LEFT_OUT_HELP)
    p.set_defaults(func=_cmd_table)

    p = sub.add_parser("snest-figure", help="one figure of the SNEST paper (png + pdf)")
    p.add_argument("figure", choices=["fig2a", "fig2b", "fig3", "fig4"])
    p.add_argument("--out", required=True, help="output path without extension")
    p.add_argument("--runs", help="runs file of the dataset's snest-2-1 cell")
    p.add_argument("--artifact", help="the dataset artifact folder")
    p.set_defaults(func=_cmd_figure)
