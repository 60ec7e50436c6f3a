"""Figure of the scale experiment: SNEST R^{2,1} and t-SNE R^2 maps of the same P side by side.

:func:`maps_figure`: t-SNE coloured by digit; SNEST's space coordinates coloured by digit,
then by its time coordinate (the diverging scale of the SNEST paper's figures,
:data:`embedlab.plots.snest.TIME_CMAP`, centred at 0, limit the 99th percentile of |t|).
Points are drawn small and rasterised (70,000 per panel; the pdf stays small).
"""

from __future__ import annotations

import numpy as np
from matplotlib.cm import ScalarMappable
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from embedlab.plots.common import new_figure
from embedlab.plots.snest import TIME_CMAP, time_norm

DIGIT_CMAP = "tab10"


def _point_size(n: int) -> float:
    """Marker area: 4 at a few thousand points, 0.3 at 70,000."""
    return float(np.clip(2e4 / max(n, 1), 0.3, 4.0))


def _panel(ax, Y, colour, title, **style):
    ax.scatter(Y[:, 0], Y[:, 1], c=colour, s=_point_size(len(Y)), linewidths=0,
               rasterized=True, **style)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title, fontsize=9)


def maps_figure(
    tsne: np.ndarray, snest: np.ndarray, digits: np.ndarray, notes: dict, title: str
) -> Figure:
    """Three panels: ``tsne`` (n x 2) by digit, ``snest`` (n x 3: space, then time) by digit
    and by time. ``notes``: a line under each method's title, by "tsne" and "snest"."""
    tsne, snest, digits = np.asarray(tsne), np.asarray(snest), np.asarray(digits)
    n = len(digits)
    if tsne.shape != (n, 2) or snest.shape != (n, 3):
        raise ValueError(
            f"expected a t-SNE map (n x 2) and a SNEST R^{{2,1}} map (n x 3) of the {n} "
            f"labelled points, got {tsne.shape} and {snest.shape}"
        )
    fig = new_figure(figsize=(13.5, 4.9), layout="constrained")
    axes = fig.subplots(1, 3)
    digit_style = {"cmap": DIGIT_CMAP, "vmin": -0.5, "vmax": 9.5}
    _panel(axes[0], tsne, digits, f"t-SNE $\\mathbb{{R}}^2$, by digit\n{notes['tsne']}",
           **digit_style)
    _panel(axes[1], snest[:, :2], digits,
           f"SNEST $\\mathbb{{R}}^{{2,1}}$ (space), by digit\n{notes['snest']}", **digit_style)
    norm = time_norm(snest[:, 2], None)
    _panel(axes[2], snest[:, :2], snest[:, 2], "SNEST $\\mathbb{R}^{2,1}$ (space), by time",
           cmap=TIME_CMAP, norm=norm)
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=TIME_CMAP), ax=axes[2], shrink=0.7,
                       extend="both")
    bar.set_label("time", fontsize=8)
    colours = ScalarMappable(cmap=DIGIT_CMAP).get_cmap()
    handles = [
        Line2D([], [], marker="o", linestyle="", markersize=5, color=colours(d / 10 + 0.05),
               label=str(d))
        for d in range(10)
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=10, fontsize=8, frameon=False,
               title="digit", title_fontsize=8)
    fig.suptitle(title, fontsize=11)
    return fig
