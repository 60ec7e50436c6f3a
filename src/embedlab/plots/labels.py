"""Greedy non-overlapping text labels for scatter plots.

Labels are drawn in priority order. Each one is measured with the figure's renderer (its
window extent in display pixels); a label whose box, grown by ``pad_points``, would overlap a
box already placed (or an obstacle such as an inset, or leave the axes) is tried at a few small
offsets around its point and dropped when none fits. Offsets are multiples of the label's own
height and width, so a label never moves further than about one line from its point
("positions adjusted up to a tiny radius", SNEST paper, Fig. 3).

The axes' limits, aspect and position must be final before placing: anything that moves the
axes afterwards (a colourbar added later, ``tight_layout``) invalidates the measured boxes.
:func:`place_labels` freezes the limits and applies the aspect itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from matplotlib.axes import Axes
from matplotlib.text import Text
from matplotlib.transforms import Bbox, offset_copy

# Candidate offsets (dx, dy) in units of the label's (width, height): centred on the point,
# then just above / below / right / left of it, the four diagonals, and one line up / down.
DEFAULT_OFFSETS: tuple[tuple[float, float], ...] = (
    (0.0, 0.0),
    (0.0, 0.6),
    (0.0, -0.6),
    (0.55, 0.0),
    (-0.55, 0.0),
    (0.55, 0.6),
    (-0.55, 0.6),
    (0.55, -0.6),
    (-0.55, -0.6),
    (0.0, 1.2),
    (0.0, -1.2),
)


@dataclass
class Placement:
    """What :func:`place_labels` did: indices (into its inputs) of placed / dropped labels,
    the placed Text artists and their boxes in display pixels (without padding)."""

    placed: list[int] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    texts: list[Text] = field(default_factory=list)
    boxes: list[Bbox] = field(default_factory=list)

    @property
    def n_placed(self) -> int:
        return len(self.placed)

    @property
    def n_dropped(self) -> int:
        return len(self.dropped)


def _as_column(values, n: int, name: str) -> list:
    """Broadcast a scalar or a length-n sequence to a list of length n."""
    if values is None or np.isscalar(values) or isinstance(values, tuple | str):
        return [values] * n
    values = list(values)
    if len(values) != n:
        raise ValueError(f"place_labels: {name} has {len(values)} entries, expected {n}")
    return values


def place_labels(
    ax: Axes,
    x,
    y,
    labels,
    *,
    order=None,
    colors=None,
    fontsizes=8.0,
    offsets=DEFAULT_OFFSETS,
    pad_points: float = 1.0,
    obstacles=(),
    max_labels: int | None = None,
    keep_inside: bool = True,
    **text_kwargs,
) -> Placement:
    """Add ``labels[i]`` at data point (``x[i]``, ``y[i]``) to ``ax`` without overlaps.

    order : indices in priority order (default: input order); labels not listed are dropped.
    colors, fontsizes : one value or one per label.
    offsets : candidate (dx, dy) shifts in units of the label's (width, height).
    pad_points : margin kept free around each label, in points.
    obstacles : display-pixel Bboxes no label may overlap (e.g. an inset's tight bbox).
    max_labels : stop after this many labels are placed; the rest count as dropped.
    keep_inside : drop positions whose box leaves the axes.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    labels = [str(s) for s in labels]
    n = len(labels)
    if x.shape != (n,) or y.shape != (n,):
        raise ValueError(
            f"place_labels: x {x.shape} and y {y.shape} must both have shape ({n},) like labels"
        )
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("place_labels: x and y must be finite")
    order = np.arange(n) if order is None else np.asarray(order, dtype=np.int64)
    if order.size and (order.min() < 0 or order.max() >= n):
        raise ValueError(f"place_labels: order has indices outside [0, {n})")
    colors = _as_column(colors, n, "colors")
    fontsizes = _as_column(fontsizes, n, "fontsizes")

    fig = ax.figure
    ax.set_xlim(ax.get_xlim())  # freeze the limits: later artists must not rescale them
    ax.set_ylim(ax.get_ylim())
    ax.apply_aspect()
    renderer = fig.canvas.get_renderer()
    pad_px = pad_points * fig.dpi / 72.0
    points_per_px = 72.0 / fig.dpi
    bounds = ax.get_window_extent(renderer)
    # Occupied boxes as rows (x0, y0, x1, y1), padded; obstacles first.
    occupied = [tuple(b.extents) for b in obstacles]

    result = Placement()
    chosen = set()
    for i in order:
        i = int(i)
        if i in chosen:
            continue
        chosen.add(i)
        if max_labels is not None and result.n_placed >= max_labels:
            result.dropped.append(i)
            continue
        text = ax.text(
            x[i],
            y[i],
            labels[i],
            color=colors[i],
            fontsize=fontsizes[i],
            ha="center",
            va="center",
            **text_kwargs,
        )
        box = text.get_window_extent(renderer)
        spot = _first_free_offset(box, offsets, occupied, bounds if keep_inside else None)
        if spot is None:
            text.remove()
            result.dropped.append(i)
            continue
        dx, dy = spot
        if dx or dy:
            text.set_transform(
                offset_copy(
                    ax.transData,
                    fig=fig,
                    x=dx * points_per_px,
                    y=dy * points_per_px,
                    units="points",
                )
            )
        placed_box = box.translated(dx, dy)
        occupied.append(
            (
                placed_box.x0 - pad_px,
                placed_box.y0 - pad_px,
                placed_box.x1 + pad_px,
                placed_box.y1 + pad_px,
            )
        )
        result.placed.append(i)
        result.texts.append(text)
        result.boxes.append(placed_box)
    result.dropped.extend(i for i in range(n) if i not in chosen)
    return result


def _first_free_offset(box: Bbox, offsets, occupied, bounds: Bbox | None):
    """The first pixel shift (dx, dy) from ``offsets`` at which ``box`` overlaps nothing."""
    taken = np.asarray(occupied, dtype=np.float64).reshape(-1, 4)
    for fx, fy in offsets:
        dx, dy = fx * box.width, fy * box.height
        x0, y0, x1, y1 = box.x0 + dx, box.y0 + dy, box.x1 + dx, box.y1 + dy
        if bounds is not None and (
            x0 < bounds.x0 or y0 < bounds.y0 or x1 > bounds.x1 or y1 > bounds.y1
        ):
            continue
        clash = (taken[:, 0] < x1) & (x0 < taken[:, 2]) & (taken[:, 1] < y1) & (y0 < taken[:, 3])
        if not clash.any():
            return dx, dy
    return None


def spread_order(xy, score, n_cells: int = 12) -> np.ndarray:
    """Priority order that favours high ``score`` AND spatial spread.

    The bounding square of ``xy`` is cut into an ``n_cells`` x ``n_cells`` grid; round k takes
    the k-th best item of every non-empty cell, rounds are concatenated, and items within a
    round are sorted by score (best first). Ties keep the input order (stable sort).
    """
    xy = np.asarray(xy, dtype=np.float64)
    score = np.asarray(score, dtype=np.float64)
    if xy.ndim != 2 or xy.shape[1] != 2 or score.shape != (xy.shape[0],):
        raise ValueError(
            f"spread_order: need xy (n, 2) and score (n,), got {xy.shape}, {score.shape}"
        )
    if xy.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    lo = xy.min(axis=0)
    span = max(float(np.ptp(xy, axis=0).max()), 1e-300)
    cell_xy = np.minimum(((xy - lo) / span * n_cells).astype(np.int64), n_cells - 1)
    cell = cell_xy[:, 0] * n_cells + cell_xy[:, 1]
    by_score = np.argsort(-score, kind="stable")
    # rank of each item inside its cell, walking items from best to worst score
    rank = np.empty(xy.shape[0], dtype=np.int64)
    seen: dict[int, int] = {}
    for i in by_score:
        c = int(cell[i])
        rank[i] = seen.get(c, 0)
        seen[c] = rank[i] + 1
    return np.lexsort((np.argsort(by_score, kind="stable"), rank)).astype(np.int64)
