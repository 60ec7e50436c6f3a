"""Vocal Joystick vowels (Diffeomap Fig. 3): 9 vowels x 300 frames, 24 features.

``jon_vowel_data.mat`` holds ``<vowel>_raw`` arrays (300 x 26 each). Columns 1-13 are
per-frame features (12 cepstral-like ones plus column 13) and columns 14-26 their frame-to-frame
deltas (each correlates +0.2..+0.5 with the difference of successive frames of its column).
Column 13 is almost constant (values 0.97..1.31, standard deviation 0.016 against about 0.95
for every other column; a normalised energy), and column 26 is its delta, so the paper drops
columns 13 and 26 (``drop_columns``, 1-based). Vowels are taken in alphabetical order;
labels = vowel index, item name = vowel.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from embedlab.artifacts import Artifact
from embedlab.datasets.readers import check_shape, load_mat, raw_file, require

VOWELS = "vowel/jon_vowel_data.mat"
SUFFIX = "_raw"
N_FEATURES = 26


def build(files: dict, drop_columns: tuple[int, ...] = (13, 26)) -> Artifact:
    """Stack the ``<vowel>_raw`` arrays and drop the 1-based feature columns ``drop_columns``."""
    path = raw_file(files, VOWELS)
    mat = load_mat(path)
    names = sorted(k[: -len(SUFFIX)] for k in mat if k.endswith(SUFFIX))
    require(bool(names), path, f"no '<vowel>{SUFFIX}' variables")
    blocks = []
    for name in names:
        block = np.asarray(mat[name + SUFFIX], dtype=np.float64)
        check_shape(path, name + SUFFIX, block, (None, N_FEATURES))
        require(np.isfinite(block).all(), path, f"{name + SUFFIX!r} has non-finite values")
        blocks.append(block)
    drop = sorted(set(int(c) for c in drop_columns))
    require(
        all(1 <= c <= N_FEATURES for c in drop),
        path,
        f"drop_columns {drop} must be 1-based column numbers in 1..{N_FEATURES}",
    )
    keep = np.setdiff1d(np.arange(N_FEATURES), np.asarray(drop, dtype=np.int64) - 1)
    X = np.vstack(blocks)[:, keep]
    labels = np.repeat(np.arange(len(names), dtype=np.int64), [len(b) for b in blocks])
    frame = np.concatenate([np.arange(len(b)) for b in blocks])
    return Artifact(
        kind="vectors",
        arrays={"X": X, "labels": labels},
        items=pd.DataFrame({"name": [names[k] for k in labels], "frame": frame}),
        meta={"label_names": names, "kept_columns": (keep + 1).tolist()},
    )
