"""Table 1's cells: ``sne-D`` and ``tsne-D`` (R^D), ``snest-DS-DT`` (R^{DS,DT}); their
labels, parameter budgets and estimators."""

from __future__ import annotations

import re
from typing import Any

CELL = re.compile(r"^(sne|tsne|snest)-(\d+)(?:-(\d+))?$")
LABEL = {"sne": "SNE", "tsne": "t-SNE", "snest": "SNEST"}
#: grid keys of SNEST's time coordinates, which SNE and t-SNE do not have
TIME_KEYS = ("learning_rate_time", "time_ratio")


def parse_cell(cell: str) -> tuple[str, int, int]:
    """``"snest-2-1"`` -> ("snest", 2, 1); ``"tsne-3"`` -> ("tsne", 3, 0)."""
    m = CELL.match(cell)
    if not m:
        raise ValueError(f"cell {cell!r} is not of the form sne-D, tsne-D or snest-DS-DT")
    method, n_space, n_time = m.group(1), int(m.group(2)), int(m.group(3) or 0)
    if (method == "snest") != (m.group(3) is not None):
        raise ValueError(f"cell {cell!r}: only snest cells have a time dimension")
    return method, n_space, n_time


def cell_label(cell: str) -> str:
    """The paper's row label, e.g. ``SNEST R^{2,1}``."""
    method, n_space, n_time = parse_cell(cell)
    space = f"R^{{{n_space},{n_time}}}" if method == "snest" else f"R^{n_space}"
    return f"{LABEL[method]} {space}"


def budget(cell: str) -> int:
    """Free coordinates per item: d for R^d, ds + dt for R^{ds,dt}."""
    _, n_space, n_time = parse_cell(cell)
    return n_space + n_time


def make_estimator(cell: str, **params: Any):
    """The estimator of ``cell`` with ``params`` (learning rates, max_iter, random_state ...)
    over the paper's optimiser settings
    (:func:`embedlab.methods.neighbour_protocol.paper_protocol`), fitted on a precomputed P
    (``affinity="precomputed"``).

    ``time_ratio`` sets SNEST's time learning rate relative to the space one:
    gamma_t = time_ratio * gamma_s (the paper asks gamma_t / gamma_s <= 1/100).
    """
    from embedlab.methods.neighbour import METHODS
    from embedlab.methods.neighbour_protocol import paper_protocol

    method, n_space, n_time = parse_cell(cell)
    ratio = params.pop("time_ratio", None)
    if ratio is not None:
        params["learning_rate_time"] = ratio * params["learning_rate"]
    # the paper's optimiser settings under the given ones; the input is the artifact's P
    params = {**paper_protocol(time=method == "snest"), "affinity": "precomputed", **params}
    if method == "snest":
        return METHODS[method](n_space=n_space, n_time=n_time, **params)
    params.pop("learning_rate_time", None)  # SNE and t-SNE have no time coordinates
    return METHODS[method](n_components=n_space, **params)
