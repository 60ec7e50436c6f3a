"""Fig. 2 as a table: per dataset, rows = dimension, columns = each method's mean errors over
folds ('<method> gen', '<method> 1nn'); under the authors' readings also the share of tied
triplets, which exposes degenerate (collapsed) fits. The table's and the figure's titles say
what the numbers are, how many folds they average and which methods did not run."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from embedlab.experiments.tste.protocol import METHOD_ORDER, READING

METRICS = {"generalisation_error": "gen", "loo_1nn_error": "1nn"}
PANEL_NAME = {"gen": "generalisation", "1nn": "1-NN"}


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
    if "tied_fraction" in df.columns:  # written by the authors' protocol only
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


def degenerate_by_metric(table: pd.DataFrame) -> dict[str, dict[str, list[int]]]:
    """'gen' and '1nn' -> :func:`degenerate_fits` of ``table`` for that metric."""
    return {short: degenerate_fits(table, short) for short in METRICS.values()}


def fig2_title(dataset: str, protocol: str, table: pd.DataFrame, metric_files: list) -> str:
    """The title of ``dataset``'s Fig. 2 table (:func:`fig2_table` of ``metric_files``) under
    ``protocol``: what the numbers are, its degenerate fits, its folds, the methods not run."""
    title = f"t-STE Fig. 2 on {dataset}: mean over folds (gen = triplet generalisation "
    title += "error, 1nn = leave-one-out 1-NN label error)"
    if protocol != "paper_text":
        title = (
            f"t-STE Fig. 2 on {dataset}, protocol {protocol} ({READING[protocol]})"
            ": gen = mean over folds of "
            "the fraction of test triplets with d_ij > d_il; 1nn = leave-one-out 1-NN error of "
            "one fit per dimension on the 1-NN training set (MNIST: first 10 % of the triplets)"
        )
    found = degenerate_by_metric(table)
    if any(found.values()):
        title += (
            f"; DEGENERATE fits (over {DEGENERATE_TIED:.0%} of their triplets tied: the "
            "ties-correct error counts a tie as satisfied, so a collapsed embedding scores 0, "
            "and its 1-NN error is that of coincident points; the 'gen tied' and '1nn tied' "
            "columns give the shares): "
            + "; ".join(f"{PANEL_NAME[short]}: {describe_degenerate(d)}"
                        for short, d in found.items() if d)
        )  # fmt: skip
    title += "; " + describe_folds(folds_per_method(metric_files))
    if missing := describe_not_run(folds_per_method(metric_files)):
        title += f"; {missing}"
    return title


def figure_title(protocol: str, degenerate: Mapping[str, Mapping[str, list[int]]]) -> str:
    """The title of a protocol's Fig. 2 (``degenerate``: dataset -> :func:`degenerate_by_metric`
    of its table), with the key of the mark of a degenerate fit where there is one."""
    title = textwrap.fill(f"protocol {protocol}: {READING[protocol]}", 120)
    if any(any(d.values()) for d in degenerate.values()):
        title += "\nx: degenerate fit (its triplets mostly tied; ties count as correct)"
    return title
