"""USPS handwritten digits (Diffeomap Fig. 4): digits 0-4, 600 per class, 16 x 16 pixels.

``USPS.mat`` holds ``fea`` (11000 x 256 grey levels 0..255, row-major 16 x 16 images) and
``gnd`` (11000 class codes 1..10, 1100 each). The code is digit + 1: code 1 is digit 0 (its
images are zeros, and the file stores that class last), code 3 is digit 2, and so on. The
builder takes the first ``per_class`` images of each requested digit in file order (no
randomness). X = grey level / 255, labels = digit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from embedlab.artifacts import Artifact
from embedlab.datasets.readers import check_shape, load_mat, raw_file, require, unit_pixels

DIGITS = "usps/USPS.mat"
IMAGE_SHAPE = (16, 16)


def build(files: dict, digits: tuple[int, ...] = (0, 1, 2, 3, 4), per_class: int = 600) -> Artifact:
    """The first ``per_class`` images of each digit in ``digits``."""
    path = raw_file(files, DIGITS)
    mat = load_mat(path, ("fea", "gnd"))
    pixels, code = mat["fea"], np.asarray(mat["gnd"]).ravel().astype(np.int64)
    check_shape(path, "fea", pixels, (len(code), IMAGE_SHAPE[0] * IMAGE_SHAPE[1]))
    require(code.size > 0, path, "variable 'gnd' is empty")
    require(
        code.min() >= 1 and code.max() <= 10, path, f"gnd codes {code.min()}..{code.max()}"
    )
    digit = code - 1
    rows = []
    for d in digits:
        found = np.flatnonzero(digit == d)
        require(
            len(found) >= per_class,
            path,
            f"digit {d} has {len(found)} images, fewer than per_class={per_class}",
        )
        rows.append(found[:per_class])
    rows = np.concatenate(rows)
    return Artifact(
        kind="vectors",
        arrays={"X": unit_pixels(pixels[rows], path, "fea"), "labels": digit[rows]},
        items=pd.DataFrame({"name": [f"usps{r}" for r in rows], "row": rows, "digit": digit[rows]}),
        meta={"image_shape": list(IMAGE_SHAPE)},
    )
