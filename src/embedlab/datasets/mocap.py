"""OSU ACCAD motion capture "run" (Diffeomap Fig. 2): 217 frames x 102 coordinates.

``run1TXT.ZIP`` holds one tab-separated table: columns ``Field`` (frame number), ``Time`` (s),
then ``<prefix>:<MARKER>:<X|Y|Z>`` for 41 markers; ``-9999.99`` marks a missing value. The 7
markers with any missing value are dropped, leaving 34 x 3 = 102 dimensions. The builder checks
these counts (``n_frames``, ``n_dropped_markers``) and fails if the file disagrees.

``connections.txt`` lists skeleton edges as ``A, B`` marker-name pairs; the edges between kept
markers are stored as ``edges`` (pairs of kept-marker indices; column block 3m..3m+2 of X holds
marker m). labels = frame index 0..n-1 (time order).
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from embedlab.artifacts import Artifact
from embedlab.datasets import DatasetError
from embedlab.datasets.readers import raw_file, require

MOTION = "mocap/run1TXT.ZIP"
CONNECTIONS = "mocap/connections.txt"
MISSING = -9999.99
AXES = ("X", "Y", "Z")


def read_motion(path: Path) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Times (n,), coordinates (n, markers, 3) with NaN where missing, and the marker names."""
    try:
        with zipfile.ZipFile(path) as archive:
            tables = [m for m in archive.namelist() if m.lower().endswith(".txt")]
            require(len(tables) == 1, path, f"expected one .txt table, found {tables}")
            text = archive.read(tables[0]).decode("latin-1")
    except zipfile.BadZipFile as exc:
        raise DatasetError(f"{path}: not a zip archive: {exc}") from exc
    source = f"{path}!{tables[0]}"
    try:
        table = pd.read_csv(io.StringIO(text), sep="\t", dtype=np.float64, index_col=False)
    except ValueError as exc:
        raise DatasetError(f"{source}: not a numeric tab-separated table: {exc}") from exc
    columns = list(table.columns)
    require(columns[:2] == ["Field", "Time"], source, f"header starts {columns[:2]}")
    coords = columns[2:]
    require(len(coords) > 0 and len(coords) % 3 == 0, source, f"{len(coords)} coordinate columns")
    parts = [c.split(":") for c in coords]
    markers = [p[-2] if len(p) >= 2 else "" for p in parts[::3]]
    axes_ok = all(
        len(p) >= 2 and p[-1] == AXES[k % 3] and p[-2] == markers[k // 3]
        for k, p in enumerate(parts)
    )
    require(axes_ok, source, "coordinate columns are not <marker>:X, :Y, :Z triples")
    values = table[coords].to_numpy()
    require(np.isfinite(values).all(), source, "has empty or non-numeric cells")
    values[values == MISSING] = np.nan
    return table["Time"].to_numpy(), values.reshape(len(table), len(markers), 3), markers


def read_connections(path: Path) -> list[tuple[str, str]]:
    """Skeleton edges as (marker, marker) name pairs."""
    edges = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        names = [name.strip() for name in line.split(",")]
        require(len(names) == 2 and all(names), path, f"line {number} is not 'A, B': {line!r}")
        edges.append((names[0], names[1]))
    return edges


def build(files: dict, n_frames: int = 217, n_dropped_markers: int = 7) -> Artifact:
    """Frames x coordinates of the markers without gaps; ``edges`` between kept markers."""
    motion_path = raw_file(files, MOTION)
    time, coords, markers = read_motion(motion_path)
    gappy = np.isnan(coords).any(axis=(0, 2))
    require(
        len(time) == n_frames and int(gappy.sum()) == n_dropped_markers,
        motion_path,
        f"{len(time)} frames and {int(gappy.sum())} markers with gaps; expected {n_frames} "
        f"and {n_dropped_markers}",
    )
    kept = [m for m, g in zip(markers, gappy, strict=True) if not g]
    position = {m: k for k, m in enumerate(kept)}
    edges = []
    if CONNECTIONS in files:
        connections_path = raw_file(files, CONNECTIONS)
        for a, b in read_connections(connections_path):
            unknown = [m for m in (a, b) if m not in markers]
            require(not unknown, connections_path, f"unknown marker(s) {unknown}")
            if a in position and b in position:
                edges.append((position[a], position[b]))
    X = coords[:, ~gappy, :].reshape(len(time), -1)
    return Artifact(
        kind="vectors",
        arrays={
            "X": X,
            "labels": np.arange(len(time), dtype=np.int64),
            "time": time,
            "edges": np.asarray(edges, dtype=np.int64).reshape(-1, 2),
        },
        items=pd.DataFrame({"name": [f"frame{k + 1}" for k in range(len(time))], "time": time}),
        meta={
            "markers": kept,
            "dropped_markers": [m for m, g in zip(markers, gappy, strict=True) if g],
            "counts": {"markers": len(kept), "edges": len(edges)},
        },
    )
