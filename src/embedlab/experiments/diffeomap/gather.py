"""A full-set grid fitted one point per job: the point files joined into the file one fit of
the whole grid writes (:func:`.fits.fit_grid` with and without ``point``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from embedlab import runs

#: the arrays every point file of a grid holds alike (the data as fitted)
SHARED_ARRAYS = ("rows", "classes")


def gather(files: list[str | Path]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """(arrays, info) of the point files of one grid (one per point, any order) joined: the
    runs in grid order, each point's maps under its index, the shared meta (less ``point``),
    rows and classes.

    The files must be every point of the same grid, fitted at the same settings on the same
    data: a missing, repeated or foreign point raises rather than give a table that is not the
    grid's.
    """
    parts = []
    for path in files:
        arrays, info = runs.load_npz(path)
        if "point" not in info["meta"]:
            raise ValueError(f"{path}: not a point file (a fit of one point of a grid)")
        parts.append((info["meta"]["point"], path, arrays, info))
    parts.sort(key=lambda part: part[0])
    meta = {k: v for k, v in parts[0][3]["meta"].items() if k != "point"}
    n_points = len(runs.grid_points(meta["grid"]))
    if [part[0] for part in parts] != list(range(n_points)):
        raise ValueError(
            f"points {[part[0] for part in parts]} of a grid of {n_points}: need each of "
            f"0 to {n_points - 1} once"
        )
    first = parts[0][2]
    gathered, table = {}, []
    for _, path, arrays, info in parts:
        if {k: v for k, v in info["meta"].items() if k != "point"} != meta:
            raise ValueError(f"{path}: another grid, settings or data than {parts[0][1]}")
        if any(
            (name in arrays) != (name in first)
            or (name in first and not np.array_equal(arrays[name], first[name]))
            for name in SHARED_ARRAYS
        ):
            raise ValueError(f"{path}: other rows or classes than {parts[0][1]}")
        table.extend(info["runs"])
        gathered.update({k: v for k, v in arrays.items() if k not in SHARED_ARRAYS})
    gathered.update({name: first[name] for name in SHARED_ARRAYS if name in first})
    return gathered, {"meta": meta, "runs": table}
