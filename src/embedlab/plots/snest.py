"""Figures of the SNEST paper (space-time local embeddings), one function each.

All embeddings are SNEST embeddings in R^{2,1}: an (n x 3) array whose columns are the two
space coordinates, then the time coordinate. Space is drawn as position (equal aspect), time as
colour on a diverging scale centred at 0 (blue = negative, red = positive).

* :func:`school_figure`          Fig. 2a  SCHOOL, links drawn, teachers and classes marked
* :func:`kernel_contour_figure`  Fig. 2b  contours of exp(dt^2) / (1 + ds^2), unit 1e-3
* :func:`authors_figure`         Fig. 3   NIPS22, major authors named, time histogram inset
* :func:`words_figure`           Fig. 4   W5000, a spread subset of words, time histogram inset

Functions return a :class:`matplotlib.figure.Figure` drawn on an Agg canvas (no pyplot state,
no ``show``; :mod:`embedlab.plots.common`).
"""

from __future__ import annotations

import numpy as np
from matplotlib.cm import ScalarMappable
from matplotlib.collections import LineCollection
from matplotlib.colors import LinearSegmentedColormap, LogNorm, Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patheffects import withStroke
from matplotlib.ticker import MaxNLocator

from embedlab.plots.common import new_figure, surname
from embedlab.plots.labels import Placement, place_labels, spread_order

R21 = r"$\mathbb{R}^{2,1}$"
# Diverging map for time with a mid-grey centre: text stays readable on white at any value.
TIME_CMAP = LinearSegmentedColormap.from_list(
    "snest_time", ["#0b2a8f", "#2f6fd6", "#8c8c8c", "#d9452b", "#8f0b0b"]
)
# Contour levels from blue (small similarity) to red (large), dark enough to read the labels.
LEVEL_CMAP = LinearSegmentedColormap.from_list("snest_levels", ["#1f3fbf", "#7a3aa0", "#c62828"])
MIN_FONT, MAX_FONT = 5.0, 14.0


# --------------------------------------------------------------------------- helpers


def _check_embedding(embedding, name: str = "embedding") -> np.ndarray:
    """Return ``embedding`` as float64 (n x 3) = (space x, space y, time), or raise."""
    Y = np.asarray(embedding, dtype=np.float64)
    if Y.ndim != 2 or Y.shape[1] != 3 or Y.shape[0] < 2:
        raise ValueError(
            f"{name}: expected an (n x 3) R^{{2,1}} embedding (2 space + 1 time columns), "
            f"got shape {Y.shape}"
        )
    bad = ~np.isfinite(Y)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(f"{name}: non-finite value {Y[row, col]} at row {row}, column {col}")
    return Y


def _check_length(values, n: int, name: str) -> np.ndarray:
    values = np.asarray(values)
    if values.shape != (n,):
        raise ValueError(
            f"{name}: expected {n} entries (one per embedded item), got shape {values.shape}"
        )
    return values


def time_norm(time: np.ndarray, time_limit: float | None) -> Normalize:
    """Symmetric colour scale [-L, L]; L defaults to the 99th percentile of |time|."""
    if time_limit is None:
        time_limit = float(np.quantile(np.abs(time), 0.99))
    time_limit = max(float(time_limit), 1e-12)
    return Normalize(vmin=-time_limit, vmax=time_limit, clip=True)


def _time_fontsizes(time: np.ndarray, size_limit: float) -> np.ndarray:
    """Font size proportional to |time|: MAX_FONT at |time| >= size_limit, at least MIN_FONT."""
    scale = MAX_FONT / max(float(size_limit), 1e-12)
    return np.clip(np.abs(time) * scale, MIN_FONT, MAX_FONT)


def _frame(space: np.ndarray, margin: float, robust: bool) -> tuple[np.ndarray, np.ndarray]:
    """Data limits (lo, hi) framing ``space`` with a margin.

    robust: frame the central 99.6% of each coordinate (quantiles 0.002 / 0.998) widened by
    10%, so a handful of far-away items (left far out by the optimiser) does not shrink the
    rest of the map to a corner; the points outside are counted in the figure's note.
    """
    lo, hi = space.min(axis=0), space.max(axis=0)
    if robust:
        q_lo, q_hi = np.quantile(space, [0.002, 0.998], axis=0)
        widen = 0.1 * (q_hi - q_lo)
        lo, hi = np.maximum(lo, q_lo - widen), np.minimum(hi, q_hi + widen)
    pad = margin * max(float((hi - lo).max()), 1e-12)
    return lo - pad, hi + pad


def _space_axes(
    fig: Figure, rect, space: np.ndarray, title: str, margin: float = 0.04, robust: bool = False
):
    """Main axes with equal aspect, data limits framing ``space`` and few, small ticks."""
    ax = fig.add_axes(rect)
    lo, hi = _frame(space, margin, robust)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal", adjustable="box")
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.yaxis.set_major_locator(MaxNLocator(5))
    ax.tick_params(labelsize=7, length=2, colors="#555555")
    for spine in ax.spines.values():
        spine.set_color("#aaaaaa")
    ax.set_title(title, fontsize=11)
    return ax


def _time_colorbar(fig: Figure, norm: Normalize, rect, clipped: bool):
    cax = fig.add_axes(rect)
    bar = fig.colorbar(
        ScalarMappable(norm=norm, cmap=TIME_CMAP), cax=cax, extend="both" if clipped else "neither"
    )
    bar.set_label("time", fontsize=9)
    bar.ax.tick_params(labelsize=7)
    return bar


def _time_histogram(ax, time: np.ndarray, norm: Normalize, bounds=(0.015, 0.015, 0.24, 0.17)):
    """Inset histogram of the time coordinates, bars coloured like the labels."""
    inset = ax.inset_axes(bounds)
    lo, hi = np.quantile(time, [0.001, 0.999])
    widen = 0.1 * (hi - lo)
    lo, hi = max(time.min(), lo - widen), min(time.max(), hi + widen)
    n_outside = int(((time < lo) | (time > hi)).sum())
    counts, edges, patches = inset.hist(time, bins=40, range=(lo, hi), edgecolor="none")
    for patch, centre in zip(patches, 0.5 * (edges[:-1] + edges[1:]), strict=True):
        patch.set_facecolor(TIME_CMAP(norm(centre)))
    outside = f" ({n_outside} outside)" if n_outside else ""
    inset.set_title(f"histogram of time coordinates{outside}", fontsize=7, pad=2)
    inset.tick_params(labelsize=6, length=2, pad=1)
    inset.xaxis.set_major_locator(MaxNLocator(5))
    inset.yaxis.set_major_locator(MaxNLocator(3))
    inset.patch.set_alpha(0.85)
    return inset


def _labelled_map(
    embedding: np.ndarray,
    labels: list[str],
    candidates: np.ndarray,
    order: np.ndarray,
    *,
    title: str,
    figsize,
    time_limit: float | None,
    max_labels: int | None,
) -> Figure:
    """Shared body of Figs. 3 and 4: names at their space position, colour and size = time,
    unnamed items as small grey dots, a colourbar and an inset time histogram.

    ``candidates`` marks the items that may be named, ``order`` their priority (indices).
    The figure keeps the :class:`Placement` as ``fig.label_placement``.
    """
    space, time = embedding[:, :2], embedding[:, 2]
    norm = time_norm(time, time_limit)
    fig = new_figure(figsize)
    ax = _space_axes(fig, (0.04, 0.04, 0.84, 0.9), space, title, robust=True)
    clipped = bool(np.abs(time).max() > norm.vmax)
    _time_colorbar(fig, norm, (0.9, 0.25, 0.018, 0.5), clipped)
    inset = _time_histogram(ax, time, norm)
    ax.apply_aspect()
    renderer = fig.canvas.get_renderer()

    order = np.asarray([i for i in order if candidates[i]], dtype=np.int64)
    sizes = _time_fontsizes(time, norm.vmax)
    placement = place_labels(
        ax,
        space[:, 0],
        space[:, 1],
        labels,
        order=order,
        colors=[TIME_CMAP(norm(t)) for t in time],
        fontsizes=sizes,
        obstacles=[inset.get_tightbbox(renderer)],
        max_labels=max_labels,
        fontweight="bold",
        zorder=3,
        path_effects=[withStroke(linewidth=1.6, foreground="white", alpha=0.85)],
    )
    named = np.zeros(len(labels), dtype=bool)
    named[placement.placed] = True
    ax.scatter(space[~named, 0], space[~named, 1], s=3.0, c="#9a9a9a", linewidths=0, zorder=1)
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    outside = int(
        ((space[:, 0] < x0) | (space[:, 0] > x1) | (space[:, 1] < y0) | (space[:, 1] > y1)).sum()
    )
    note = f"{placement.n_placed} of {int(candidates.sum())} candidate names shown"
    note += f", {int((~named).sum())} dots" + (f", {outside} outside the frame" if outside else "")
    ax.text(
        0.995,
        0.005,
        note,
        transform=ax.transAxes,
        ha="right",
        va="bottom",
        fontsize=6,
        color="#777777",
    )
    fig.label_placement = placement
    return fig


# --------------------------------------------------------------------------- figures


def school_figure(embedding, links, classes, roles) -> Figure:
    """Fig. 2a: SCHOOL in R^{2,1}.

    Space coordinates as positions, time as colour (diverging, centred at 0, colourbar
    "time"), social ``links`` (m x 2 item indices, undirected) as thin grey lines; students
    drawn with one marker shape per class, teachers (``roles == "teacher"``) as large squares.
    """
    Y = _check_embedding(embedding)
    n = Y.shape[0]
    links = np.asarray(links)
    if links.ndim != 2 or links.shape[1] != 2 or not np.issubdtype(links.dtype, np.integer):
        raise ValueError(
            f"links: expected an (m x 2) integer array, got {links.dtype} {links.shape}"
        )
    if links.size and (links.min() < 0 or links.max() >= n):
        raise ValueError(f"links: indices must lie in [0, {n}), got [{links.min()}, {links.max()}]")
    classes = _check_length(classes, n, "classes")
    teacher = _check_length(roles, n, "roles").astype(str) == "teacher"

    space, time = Y[:, :2], Y[:, 2]
    norm = time_norm(time, float(np.abs(time).max()))
    fig = new_figure((7.0, 6.6))
    ax = _space_axes(
        fig,
        (0.07, 0.1, 0.77, 0.82),
        space,
        f"SCHOOL in {R21}: colour = time coordinate",
        margin=0.08,
    )
    _time_colorbar(fig, norm, (0.87, 0.2, 0.025, 0.6), clipped=False)
    ax.add_collection(
        LineCollection(space[links], colors="#9a9a9a", linewidths=0.6, zorder=1, label="links")
    )

    def scatter_in_time(rows: np.ndarray, marker: str, size: float, edge: float, zorder: int):
        """The points ``rows`` at their space coordinates, coloured by their time one."""
        ax.scatter(
            space[rows, 0],
            space[rows, 1],
            c=time[rows],
            cmap=TIME_CMAP,
            norm=norm,
            marker=marker,
            s=size,
            edgecolors="black",
            linewidths=edge,
            zorder=zorder,
        )

    student_markers = "o^vDph"
    handles = [Line2D([], [], color="#9a9a9a", lw=0.8, label="social link")]
    for k, cls in enumerate(np.unique(classes)):
        marker = student_markers[k % len(student_markers)]
        scatter_in_time((classes == cls) & ~teacher, marker, 55, 0.5, 2)
        handles.append(
            Line2D(
                [],
                [],
                ls="",
                marker=marker,
                mfc="white",
                mec="black",
                label=f"student, class {cls}",
            )
        )
    scatter_in_time(teacher, "s", 190, 1.4, 3)
    for i in np.flatnonzero(teacher):
        ax.annotate(
            f"teacher {classes[i]}",
            space[i],
            xytext=(0, 10),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=8,
            zorder=4,
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8},
        )
    handles.append(
        Line2D([], [], ls="", marker="s", ms=10, mfc="white", mec="black", mew=1.4, label="teacher")
    )
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.05),
        ncol=4,
        fontsize=8,
        frameon=False,
    )
    return fig


def kernel_contour_figure(
    ds_max: float = 200.0,
    dt_max: float = 2.0,
    levels=(0.1, 1.0, 10.0, 50.0, 100.0),
    unit: float = 1e-3,
    n_grid: int = 400,
) -> Figure:
    """Fig. 2b: contours of the SNEST similarity exp(dt^2) / (1 + ds^2).

    ds = ||s_i - s_j|| in [0, ds_max] (x-axis), dt = ||t_i - t_j|| in [0, dt_max] (y-axis);
    contour ``levels`` are in units of ``unit`` (the paper: 1e-3), coloured from blue (small
    similarity) to red (large) on a log scale and labelled inline.
    """
    levels = np.sort(np.asarray(levels, dtype=np.float64))
    if levels.size == 0 or (levels <= 0).any():
        raise ValueError(f"levels: need positive contour levels, got {levels.tolist()}")
    if not (ds_max > 0 and dt_max > 0 and unit > 0 and n_grid >= 2):
        raise ValueError(
            f"ds_max={ds_max}, dt_max={dt_max}, unit={unit}, n_grid={n_grid}: "
            "all must be positive (n_grid >= 2)"
        )
    ds = np.linspace(0.0, ds_max, n_grid)
    dt = np.linspace(0.0, dt_max, n_grid)
    DS, DT = np.meshgrid(ds, dt)
    similarity = np.exp(DT**2) / (1.0 + DS**2) / unit

    fig = new_figure((5.6, 4.2))
    ax = fig.add_axes((0.12, 0.13, 0.84, 0.76))
    norm = LogNorm(vmin=levels.min(), vmax=levels.max()) if levels.size > 1 else None
    contours = ax.contour(
        DS, DT, similarity, levels=levels, cmap=LEVEL_CMAP, norm=norm, linewidths=1.4
    )
    ax.clabel(contours, fmt="%g", fontsize=8, inline=True)
    ax.set_xlabel(r"$\|s_i - s_j\|$ (space distance)")
    ax.set_ylabel(r"$\|t_i - t_j\|$ (time distance)")
    exponent = int(round(np.log10(unit)))
    unit_text = f"$10^{{{exponent}}}$" if np.isclose(unit, 10.0**exponent) else f"{unit:g}"
    ax.set_title(
        r"SNEST similarity $\exp(\|t_i-t_j\|^2)\,/\,(1+\|s_i-s_j\|^2)$" + f"\nunit: {unit_text}",
        fontsize=10,
    )
    ax.set_xlim(0, ds_max)
    ax.set_ylim(0, dt_max)
    return fig


def authors_figure(
    embedding,
    names,
    n_papers,
    min_papers: int = 10,
    min_abs_time: float = 1.0,
    time_limit: float | None = None,
    figsize=(12.0, 10.5),
) -> Figure:
    """Fig. 3: NIPS22 in R^{2,1}.

    Authors with >= ``min_papers`` papers or |time| >= ``min_abs_time`` are named (last name)
    at their space position, text colour = time (colourbar clipped at +-``time_limit``; None:
    the 99th percentile of |time|; the paper used 1.0), font size proportional to |time|
    (clipped to 5-14 pt); all other authors, and names that would overlap (larger |time|
    wins), are small dots. Inset: histogram of the time coordinates.
    ``fig.label_placement`` records placed/dropped names.
    """
    Y = _check_embedding(embedding)
    n = Y.shape[0]
    names = _check_length(names, n, "names")
    n_papers = _check_length(n_papers, n, "n_papers").astype(np.float64)
    time = Y[:, 2]
    candidates = (n_papers >= min_papers) | (np.abs(time) >= min_abs_time)
    order = np.lexsort((-n_papers, -np.abs(time)))  # |time| first, then more papers
    return _labelled_map(
        Y,
        [surname(s) for s in names],
        candidates,
        order,
        title=f"NIPS22 in {R21}: names of authors with >= {min_papers} papers or "
        f"|time| >= {min_abs_time:g}; colour and size = time coordinate",
        figsize=figsize,
        time_limit=time_limit,
        max_labels=None,
    )


def words_figure(
    embedding,
    words,
    max_labels: int = 300,
    time_limit: float | None = None,
    figsize=(12.0, 10.5),
) -> Figure:
    """Fig. 4: W5000 in R^{2,1}.

    A readable subset of at most ``max_labels`` words is named: candidates are taken in
    rounds over a spatial grid (largest |time| first in each cell, see
    :func:`~embedlab.plots.labels.spread_order`) and dropped when they would overlap. Text
    colour = time (colourbar clipped at +-``time_limit``; None: 99th percentile of |time|; the
    paper used 0.8), font size
    proportional to |time|; the other words are dots. Inset: histogram of time coordinates.
    """
    Y = _check_embedding(embedding)
    n = Y.shape[0]
    words = _check_length(words, n, "words")
    order = spread_order(Y[:, :2], np.abs(Y[:, 2]))
    return _labelled_map(
        Y,
        [str(w) for w in words],
        np.ones(n, dtype=bool),
        order,
        title=f"W5000 in {R21}: a subset of words; colour and size = time coordinate",
        figsize=figsize,
        time_limit=time_limit,
        max_labels=max_labels,
    )


__all__ = [
    "Placement",
    "authors_figure",
    "kernel_contour_figure",
    "school_figure",
    "words_figure",
]
