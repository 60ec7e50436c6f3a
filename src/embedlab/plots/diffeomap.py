"""Figures of the Diffeomap paper, one function each (Agg canvas, no pyplot state).

* :func:`temporal_figure`     Fig. 2  mocap: the map, frames joined in temporal order (beside
  the GP-LVM maps)
* :func:`side_by_side_figure` Fig. 3  vowel: 2-D PCA beside Diffeomap, coloured by class
* :func:`thumbnails_figure`   Fig. 4  USPS 0-4: map coloured by digit + digit images drawn at
  the positions of a non-overlapping subset
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.offsetbox import AnnotationBbox, OffsetImage

from embedlab.plots.common import new_figure


def _temporal(ax, Y, title):
    order = np.arange(len(Y))
    ax.plot(Y[:, 0], Y[:, 1], "-", color="0.6", lw=0.8, zorder=1)
    sc = ax.scatter(Y[:, 0], Y[:, 1], c=order, cmap="viridis", s=12, zorder=2)
    ax.set_title(title, fontsize=9)
    ax.set_aspect("equal", adjustable="datalim")
    return sc


def temporal_figure(maps: list[tuple[np.ndarray, str]]) -> Figure:
    """Fig. 2: each (map, title) of ``maps`` a panel, frames joined in temporal order: the
    Diffeomap map (the learned flow applied to the frames) first, then the GP-LVM maps."""
    fig = new_figure(figsize=(0.8 + 5.2 * len(maps), 4.6))
    axes = np.atleast_1d(fig.subplots(1, len(maps)))
    for ax, (Y, title) in zip(axes, maps, strict=True):
        sc = _temporal(ax, Y, title)
    fig.colorbar(sc, ax=list(axes), label="frame", shrink=0.8)
    return fig


def _classes(ax, Y, classes, names, title):
    for c in np.unique(classes):
        pick = classes == c
        label = names[c] if names is not None and c < len(names) else str(c)
        ax.scatter(Y[pick, 0], Y[pick, 1], s=3, label=label, alpha=0.7)
    ax.set_title(title, fontsize=9)
    ax.set_aspect("equal", adjustable="datalim")


def side_by_side_figure(pca_map, diffeo_map, classes, names, title) -> Figure:
    """Fig. 3: 2-D PCA (left) beside Diffeomap (right), points coloured by class."""
    fig = new_figure(figsize=(10, 4.6))
    axes = fig.subplots(1, 2)
    _classes(axes[0], pca_map, classes, names, "PCA")
    _classes(axes[1], diffeo_map, classes, names, title)
    axes[1].legend(loc="center left", bbox_to_anchor=(1.0, 0.5), markerscale=4, fontsize=8)
    return fig


def spread_subset(Y: np.ndarray, min_dist: float) -> np.ndarray:
    """Greedy subset (in index order) whose points are pairwise at least ``min_dist`` apart
    in the max-norm, so thumbnails of that size do not overlap."""
    chosen: list[int] = []
    for i in range(len(Y)):
        if not chosen or np.min(np.max(np.abs(Y[chosen] - Y[i]), axis=1)) >= min_dist:
            chosen.append(i)
    return np.asarray(chosen, dtype=np.int64)


def thumbnails_figure(Y, classes, images, shape, title, n_across: int = 25) -> Figure:
    """Fig. 4: the map coloured by digit (left) and digit images at their positions (right)."""
    fig = new_figure(figsize=(12, 5.6))
    axes = fig.subplots(1, 2)
    _classes(axes[0], Y, classes, None, title)
    axes[0].legend(loc="best", markerscale=4, fontsize=8)
    span = float(np.max(np.ptp(Y, axis=0)))
    size = span / n_across
    order = np.random.default_rng(0).permutation(len(Y))
    keep = order[spread_subset(Y[order], size)]
    ax = axes[1]
    ax.scatter(Y[:, 0], Y[:, 1], s=1, c="0.85")
    for i in keep:
        img = images[i].reshape(shape)
        box = OffsetImage(img, cmap="gray_r", zoom=0.9)
        ax.add_artist(AnnotationBbox(box, Y[i], frameon=False, pad=0))
    ax.set_title(f"{len(keep)} digits drawn at their map positions", fontsize=9)
    ax.set_aspect("equal", adjustable="datalim")
    return fig
