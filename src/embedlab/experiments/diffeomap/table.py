"""The 1-NN table: every run of the table datasets (Diffeomap's full-set, final and grid
runs, the baselines, the GP-LVMs) with the paper's value and a verdict beside the runs it
compares.

The headline is the best full-set run (the exact method: every point a basis function), then
the best final run (the paper's reduced-set approximation) and the baselines; grid runs are
listed, not compared. The GP-LVM and back-constrained GP-LVM are baselines rerun through GPy
(:mod:`.gplvm`) where the config's ``diffeomap.gplvm`` names the dataset; a paper value whose
method has no run here is listed as quoted from the paper.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from embedlab import tables
from embedlab.experiments.diffeomap.fits import best_index, load

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
    span formulation). Files laid out as a baselines file (the GP-LVMs' too) give baseline
    rows. A paper value of a method without a run is a row quoted from the paper.
    """
    paper = pd.read_csv(paper_csv)
    rows = []
    for path in files:
        data = load(path)
        meta = data["meta"]
        dataset = meta["dataset"]
        metric = _metric(dataset)
        for k, r in enumerate(data["runs"]):
            if "method" in r:  # baselines or GP-LVM file
                row = {
                    "method": r["method"],
                    "stage": "baseline",
                    "label": COMPARED["baseline"],
                    "_best": True,
                    "value": _value(r["errors"], r["n_labelled"], metric),
                    "params": json.dumps(r["params"]) if r["params"] else "",
                    "seconds": r["seconds"],
                }
            else:
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
                    "params": json.dumps({k: r[k] for k in RUN_PARAMS if k in r}),
                    "sigma": round(r["sigma"], 4),
                    "seconds": r["seconds"],
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
