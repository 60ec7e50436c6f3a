"""Figures of the Elastic Embedding experiments (Agg canvas, no pyplot state).

* :func:`sweep_figure`     one dataset: rows = negative weights, columns = lambda
* :func:`homotopy_figure`  Swiss roll: fixed lambda vs homotopy schedules, coloured by angle
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from embedlab.plots.common import new_figure


def _scatter(ax, Y, colour, title):
    ax.set_title(title, fontsize=8)
    ax.set_xticks([])
    ax.set_yticks([])
    if not np.isfinite(Y).all():
        ax.text(0.5, 0.5, "diverged", ha="center", va="center", transform=ax.transAxes)
        return
    cmap = (
        "tab10"
        if colour is not None and np.issubdtype(np.asarray(colour).dtype, np.integer)
        else "viridis"
    )
    if colour is not None and cmap == "tab10" and len(np.unique(colour)) > 10:
        cmap = "tab20"
    ax.scatter(
        Y[:, 0],
        Y[:, 1],
        c=colour if colour is not None else "#1f4e99",
        s=3,
        cmap=cmap,
        linewidths=0,
    )
    ax.set_aspect("equal", adjustable="datalim")


def sweep_figure(maps: np.ndarray, table: pd.DataFrame, colour, dataset: str) -> Figure:
    """Grid of maps: one row per negative-weight kind, lambda increasing to the right."""
    kinds = list(dict.fromkeys(table["negative_weights"]))
    n_cols = max(int((table["negative_weights"] == k).sum()) for k in kinds)
    fig = new_figure(figsize=(2.4 * n_cols, 2.6 * len(kinds)), layout="constrained")
    axes = fig.subplots(len(kinds), n_cols, squeeze=False)
    for ax in axes.ravel():
        ax.set_axis_off()
    for r, kind in enumerate(kinds):
        for c, idx in enumerate(np.flatnonzero(table["negative_weights"].to_numpy() == kind)):
            row = table.iloc[idx]
            ax = axes[r, c]
            ax.set_axis_on()
            metric = ""
            if pd.notna(row.get("nn1_error")):
                metric = f"\n1-NN err {row['nn1_error']:.3f}"
            if pd.notna(row.get("trustworthiness")):
                metric += f", T {row['trustworthiness']:.3f}"
            lr = "" if pd.isna(row["learning_rate"]) else f", lr {row['learning_rate']:g}"
            _scatter(ax, maps[idx], colour, f"{kind} ({row['lam']:g}){lr}{metric}")
    fig.suptitle(f"{dataset}: Elastic Embedding, lambda sweep")
    return fig


def homotopy_figure(maps: dict, table: pd.DataFrame, t: np.ndarray) -> Figure:
    """One panel per schedule, points coloured by the roll angle t."""
    fig = new_figure(figsize=(3.2 * len(maps), 3.4), layout="constrained")
    axes = fig.subplots(1, len(maps), squeeze=False)[0]
    for ax, (name, Y) in zip(axes, maps.items(), strict=True):
        row = table.set_index("schedule").loc[name]
        _scatter(
            ax,
            Y,
            t,
            f"{name}: {int(row['n_iter'])} epochs\n|Spearman(axis, t)| {row['spearman_t']:.3f}",
        )
    fig.suptitle("Swiss roll, Elastic Embedding (lambda target 100)")
    return fig
