"""Table 1: our minimal KL per (dataset, cell) beside the paper's, the winner per parameter
budget (free coordinates per item), the paper's layout and its space-time claims."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from embedlab import runs, tables
from embedlab.experiments.snest.cells import budget, cell_label, parse_cell

#: |ours - paper| within which a KL matches the paper's (Table 1 prints two decimals)
TOLERANCE = 0.005


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
        best = data["best"]
        ref = paper_kl.get((meta["dataset"], meta["cell"]))
        if best is None:  # every run failed: the cell is reported with the first reason
            ours, best_params = None, {}
            verdict = (
                f"failed: all {len(table)} runs ({table[0]['error']}); the config's rates: "
                f"snest.grid, or snest.grid_by_dataset.{meta['dataset']} for this dataset"
            )
        else:
            ours = best["cost"]
            best_params = {k: v for k, v in best.items() if k in meta["grid"]}
            if best.get("backoffs"):  # the run restarted at halved rates (embed_cell)
                best_params["backoffs"] = best["backoffs"]
                best_params["learning_rate_used"] = best["learning_rate_used"]
            verdict = tables.verdict(ours, ref, tol=TOLERANCE, lower_is_better=True)
        rows.append(
            {
                "dataset": meta["dataset"],
                "cell": meta["cell"],
                "label": cell_label(meta["cell"]),
                "budget": budget(meta["cell"]),
                "kl": None if ours is None else round(ours, 4),
                "paper_kl": ref,
                "diff": None if ref is None or ours is None else round(ours - ref, 4),
                "verdict": verdict,
                "runs": f"{len(finite)}/{len(table)}",
                "best_params": json.dumps(best_params, sort_keys=True),
                "seconds_per_run": round(float(np.mean([r["seconds"] for r in table])), 3),
            }
        )
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df["kl"] = df["kl"].astype(float)
    finished = df.dropna(subset=["kl"])
    best_in_budget = finished.loc[finished.groupby(["dataset", "budget"])["kl"].idxmin()]
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
        winners.get((d, b), "") for d, b in zip(df["dataset"], df["budget"], strict=True)
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
            ours = "failed" if pd.isna(r["kl"]) else f"{r['kl']:.2f}"
            row[d] = f"{ours}{paper}{mark}"
        out.append(row)
    return pd.DataFrame(out)


def space_time_claims(df: pd.DataFrame) -> pd.DataFrame:
    """The paper's claim, per dataset: SNEST R^{2,1} has lower KL than t-SNE R^3 (and R^4)."""
    rows = []
    for d, g in df.dropna(subset=["kl"]).groupby("dataset"):
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


def table1_markdown(df: pd.DataFrame, datasets: list[str], left_out: dict) -> str:
    """Table 1 in the paper's layout (:func:`kl_matrix`), then the space-time claims
    (:func:`space_time_claims`) and the own datasets left out, as markdown."""
    claims = space_time_claims(df)
    note = (
        "Minimal KL over all runs, ours (paper's Table 1); * = lowest KL among the methods "
        "with the same number of free coordinates per item (R^2 ~ R^{1,1}, R^3 ~ R^{2,1}, "
        "R^4 ~ R^{3,1}); failed = every run of the cell failed (the long table says why)."
    )
    md = [
        f"# SNEST Table 1: minimal KL\n\n{note}\n",
        kl_matrix(df, datasets).to_markdown(index=False),
        "",
    ]
    if not claims.empty:
        md += [
            "## Does SNEST R^{2,1} beat the Euclidean embeddings with more dimensions?\n",
            claims.to_markdown(index=False),
            "",
        ]
    md += [tables.left_out_note(left_out)]
    return "\n".join(md) + "\n"
