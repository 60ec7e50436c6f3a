"""Figs. 2-4 of the paper from the best run of a fit file (the workflow draws the full-set,
exact flow): fig2 mocap (frames joined in temporal order, beside the GP-LVM maps the
workflow made), fig3 vowel (PCA beside Diffeomap), fig4 USPS (digit thumbnails); the drawing
is :mod:`embedlab.plots.diffeomap`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from embedlab import artifacts
from embedlab.experiments.diffeomap.fits import best_index, load

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: the paper's figures this module draws
FIGURES = ("fig2", "fig3", "fig4")
#: how a figure names the GP-LVM models (the methods of their files)
GPLVM_TITLES = {"gplvm": "GP-LVM", "bc_gplvm": "back-constrained GP-LVM"}


def _gplvm_panel(path: str | Path) -> tuple[np.ndarray, str]:
    """(map, title) of a GP-LVM file: the model and its settings."""
    data = load(path)
    run = data["runs"][0]
    params = run["params"]
    kind = f"{params['inducing']} inducing inputs" if params["inducing"] else "exact GP"
    back = f", {params['back_constraint']} back constraint" if "back_constraint" in params else ""
    title = f"{GPLVM_TITLES[run['method']]} (GPy)\n{kind}{back}, {params['max_iter']} iterations"
    return data["arrays"][f"map_{run['method']}"], title


def paper_figure(
    name: str,
    fit_file: str | Path,
    artifact_dir: str | Path,
    baselines_file: str | Path,
    gplvm_files: Sequence[str | Path] = (),
) -> Figure:
    """Figure ``name`` from the best run of ``fit_file``; the data's artifact gives fig3's
    class names and fig4's images, ``baselines_file`` fig3's PCA map; fig2 draws the map of
    each GP-LVM file (:mod:`.gplvm`) beside Diffeomap's."""
    from embedlab.plots import diffeomap as plots

    data = load(fit_file)
    k = best_index(data["runs"])
    Y = data["arrays"][f"flow_{k}"]
    rows = data["arrays"]["rows"]
    r = data["runs"][k]
    kind = "exact flow" if data["meta"]["stage"] == "full_set" else f"n = {r['n_basis']}"
    title = f"Diffeomap, {kind} (sigma_rel={r['sigma_rel']:g}, lambda={r['lam']:g}, p={r['p']})"
    if name == "fig2":
        return plots.temporal_figure([(Y, title), *map(_gplvm_panel, gplvm_files)])
    if name == "fig3":
        return plots.side_by_side_figure(
            load(baselines_file)["arrays"]["map_pca"],
            Y,
            data["arrays"]["classes"],
            artifacts.load(artifact_dir).meta.get("label_names"),
            title,
        )
    if name == "fig4":
        art = artifacts.load(artifact_dir)
        shape = tuple(art.meta.get("image_shape", (16, 16)))
        return plots.thumbnails_figure(
            Y, data["arrays"]["classes"], art.arrays["X"][rows], shape, title
        )
    raise ValueError(f"unknown Diffeomap figure {name!r}; expected one of {', '.join(FIGURES)}")
