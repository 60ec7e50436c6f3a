"""Figures of the t-STE paper, one function each (Agg canvas, no pyplot state).

* :func:`fig2`  errors vs dimension: rows (MNIST, music) x columns (generalisation, 1-NN)
* :func:`fig3`  2-D maps of MNIST digits by four methods, coloured by digit
* :func:`fig4`  2-D t-STE map of the music artists, coloured by genre (legend; the data set
  carries no artist names, so genres are named in the legend rather than artists on the map)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from embedlab.plots.common import new_figure

__all__ = ["fig2", "fig3", "fig4"]

STYLE = {
    "GNMDS-K": ("tab:blue", "--"),
    "GNMDS-X": ("tab:blue", "-"),
    "CKL-K": ("tab:orange", "--"),
    "CKL-X": ("tab:orange", "-"),
    "STE-K": ("tab:green", "--"),
    "STE-X": ("tab:green", "-"),
    "t-STE-X": ("tab:red", "-"),
}
PANEL = {"gen": "triplet generalisation error", "1nn": "leave-one-out 1-NN error"}


def fig2(
    tables: Mapping[str, pd.DataFrame],
    title: str | None = None,
    degenerate: Mapping[str, Mapping[str, Mapping[str, Sequence[int]]]] | None = None,
) -> Figure:
    """One row per dataset, columns (generalisation, 1-NN); one curve per method, one legend;
    ``title`` names the protocol. ``degenerate`` (dataset -> 'gen' | '1nn' -> method -> dims)
    marks those errors with a black x: the fit collapsed and its error means nothing."""
    degenerate = degenerate or {}
    if not tables:
        raise ValueError("fig2 needs at least one dataset table")
    fig = new_figure((10.0, 3.4 * len(tables)))
    axes = np.asarray(fig.subplots(len(tables), 2, squeeze=False))
    handles: dict[str, object] = {}
    for row, (dataset, t) in zip(axes, tables.items(), strict=True):
        for ax, short in zip(row, PANEL, strict=True):
            for col in t.columns:
                if not col.endswith(f" {short}"):
                    continue
                method = col[: -len(short) - 1]
                color, ls = STYLE.get(method, ("k", ":"))
                (line,) = ax.plot(t["dims"], t[col], ls, color=color, marker="o", ms=3)
                handles.setdefault(method, line)
                bad = t["dims"].isin(degenerate.get(dataset, {}).get(short, {}).get(method, []))
                if bad.any():
                    ax.plot(t.loc[bad, "dims"], t.loc[bad, col], "x", color="k", ms=7)
            ax.set_title(f"{dataset}: {PANEL[short]}", fontsize=9)
            ax.set_xlabel("embedding dimension")
            ax.set_ylabel("error")
            ax.grid(alpha=0.3)
    order = [m for m in STYLE if m in handles] + [m for m in handles if m not in STYLE]
    fig.legend([handles[m] for m in order], order, loc="center right", fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 0.86, 0.97 if title else 1))
    return fig


def _scatter(ax, Y: np.ndarray, labels: np.ndarray, names: Sequence[str] | None = None):
    classes = np.unique(labels)
    cmap = "tab10" if len(classes) <= 10 else "tab20"
    for c_idx, c in enumerate(classes):
        sel = labels == c
        color = _cmap_color(cmap, c_idx)
        name = str(c) if names is None else names[c_idx]
        ax.scatter(
            Y[sel, 0],
            Y[sel, 1],
            s=3 if len(Y) > 1000 else 10,
            color=color,
            label=name,
            linewidths=0,
        )
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_aspect("equal", adjustable="datalim")


def _cmap_color(cmap: str, k: int):
    from matplotlib import colormaps

    return colormaps[cmap](k % colormaps[cmap].N)


def fig3(maps: Sequence[tuple[np.ndarray, np.ndarray, dict]]) -> Figure:
    """A row of 2-D maps (embedding, digit labels, meta with method and errors)."""
    if not maps:
        raise ValueError("fig3 needs at least one map")
    fig = new_figure((3.6 * len(maps), 4.0))
    axes = np.atleast_1d(fig.subplots(1, len(maps)))
    for ax, (Y, labels, meta) in zip(axes, maps, strict=True):
        _scatter(ax, Y, labels)
        ax.set_title(
            f"{meta['method']}\ntraining error {meta['training_error']:.3f}, "
            f"1-NN {meta['loo_1nn_error']:.3f}",
            fontsize=9,
        )
    axes[-1].legend(
        markerscale=3, fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), title="digit"
    )
    protocols = [meta.get("protocol", "paper_text") for _, _, meta in maps]
    suffix = ""
    if "authors_figure" in protocols:  # the figure's refits beside the authors_code maps
        refit = [meta["method"] for _, _, meta in maps if meta.get("protocol") == "authors_figure"]
        suffix = (
            f"; protocol authors_figure ({', '.join(refit)} with the figure's solver settings, "
            "the others as the authors' scripts call them), axes rescaled to [0, 1]"
        )
    elif "authors_code" in protocols:
        suffix = "; protocol authors_code, axes rescaled to [0, 1]"
    fig.suptitle(
        f"{maps[0][2]['n']} digits, {maps[0][2]['n_triplets']} triplets{suffix}", fontsize=9
    )
    fig.tight_layout()
    return fig


def fig4(Y: np.ndarray, genres: np.ndarray, meta: dict) -> Figure:
    """2-D map of the music artists coloured by super-genre (named in the legend)."""
    genres = np.asarray(genres).astype(str)
    if len(genres) != len(Y):
        raise ValueError(f"fig4: {len(genres)} genres for {len(Y)} artists")
    fig = new_figure((7.0, 6.0))
    ax = fig.subplots()
    names = sorted(set(genres))
    _scatter(ax, Y, genres, names)
    ax.legend(
        markerscale=2, fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5), title="super-genre"
    )
    ax.set_title(
        f"{meta['method']} map of {meta['n']} music artists ({meta['n_triplets']} triplets); "
        f"1-NN genre error {meta['loo_1nn_error']:.3f}",
        fontsize=9,
    )
    fig.tight_layout()
    return fig
