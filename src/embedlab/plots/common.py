"""What every paper's figures share: a headless figure, atomic png + pdf saving, author names.

Figures are :class:`matplotlib.figure.Figure` objects on their own Agg canvas (no pyplot
state, no ``show``), saved by :func:`save_figure` as ``<stem>.png`` (dpi 150) and
``<stem>.pdf`` without a reader ever seeing a half-written file.
"""

from __future__ import annotations

import os
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

PNG_DPI = 150


def new_figure(figsize, **kwargs) -> Figure:
    """A figure on its own Agg canvas (so ``fig.canvas.get_renderer()`` works headless);
    ``kwargs`` go to :class:`~matplotlib.figure.Figure` (e.g. ``layout="constrained"``)."""
    fig = Figure(figsize=figsize, **kwargs)
    FigureCanvasAgg(fig)
    return fig


def stem_of(png, pdf) -> Path:
    """The path without extension that :func:`save_figure` takes, of a rule's two outputs
    ``png`` and ``pdf`` (which must name one figure: ``x.png``, ``x.pdf``)."""
    png, pdf = Path(png), Path(pdf)
    if png.suffix != ".png" or pdf.suffix != ".pdf" or png.with_suffix("") != pdf.with_suffix(""):
        raise ValueError(f"a figure's outputs must be x.png and x.pdf, got {png} and {pdf}")
    return pdf.with_suffix("")


def save_figure(fig: Figure, stem, tight: bool = False) -> tuple[Path, Path]:
    """Write ``stem.png`` (dpi 150) and ``stem.pdf`` atomically, close ``fig``; return paths.

    Each file is written to a temporary name in the target folder, then moved into place with
    ``os.replace``. ``tight`` crops the page to the drawn content (``bbox_inches="tight"``).
    """
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    options = {"bbox_inches": "tight"} if tight else {}
    paths = []
    for fmt in ("png", "pdf"):
        path = stem.with_name(f"{stem.name}.{fmt}")
        tmp = stem.with_name(f".{stem.name}.{fmt}.tmp{os.getpid()}")
        try:
            fig.savefig(tmp, format=fmt, dpi=PNG_DPI, **options)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        paths.append(path)
    if fig.canvas.manager is not None:  # a pyplot figure: release it from pyplot's registry
        import matplotlib.pyplot as plt

        plt.close(fig)
    return paths[0], paths[1]


def surname(name: str) -> str:
    """Display name of an author key "Lastname_F" (the papers show last names only)."""
    return str(name).rsplit("_", 1)[0]
