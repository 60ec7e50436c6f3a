"""Face and object image sets of the Elastic Embedding sweeps: Frey, Olivetti, COIL-20.

Every image set becomes X = grey level / 255 (float64 in [0, 1]), one row per image, pixels in
row-major order; ``meta["image_shape"]`` is (rows, columns).

* Frey (``frey_rawface.mat``): ``ff`` is 560 x 1965, one 28 x 20 frame per column -> 1965 x 560.
  Frames of one video; no classes, so no labels (items keep the frame number).
* Olivetti / AT&T (``att_faces.zip``): ``orl_faces/s<subject>/<k>.pgm``, 40 subjects x 10
  binary PGM images of 112 x 92 -> 400 x 10304, labels = subject - 1.
* COIL-20 (``COIL20.mat``): ``data`` 1440 x 256 (16 x 16 images), ``class`` 1..20 -> labels
  0..19 (72 poses per object).
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from embedlab.artifacts import Artifact
from embedlab.datasets import DatasetError
from embedlab.datasets.readers import check_shape, load_mat, raw_file, require, unit_pixels

FREY = "frey/frey_rawface.mat"
OLIVETTI = "olivetti/att_faces.zip"
COIL20 = "coil20/COIL20.mat"
FREY_SHAPE = (28, 20)
COIL20_SHAPE = (16, 16)
_PGM_IMAGE = re.compile(r"(?:^|/)s(\d+)/(\d+)\.pgm$")


def image_set(
    pixels: np.ndarray, path: Path, what: str, shape: tuple[int, int], items: dict,
    codes: np.ndarray | None = None,
) -> Artifact:
    """An image set's artifact (the module docstring): X = the grey levels ``pixels`` (one
    image a row, ``what`` naming them in errors) / 255; labels = the class ``codes`` (1, 2,
    ...) - 1, none without codes; the items' columns ``items``; ``meta["image_shape"]``."""
    arrays = {"X": unit_pixels(pixels, path, what)}
    if codes is not None:
        arrays["labels"] = codes - 1
    return Artifact(
        kind="vectors", arrays=arrays, items=pd.DataFrame(items), meta={"image_shape": list(shape)}
    )


def build_frey(files: dict) -> Artifact:
    """Frey faces: the columns of ``ff`` as rows of X."""
    path = raw_file(files, FREY)
    frames = load_mat(path, ("ff",))["ff"]
    check_shape(path, "ff", frames, (FREY_SHAPE[0] * FREY_SHAPE[1], None))
    n = frames.shape[1]
    items = {"name": [f"frame{k + 1}" for k in range(n)], "frame": np.arange(n)}
    return image_set(frames.T, path, "ff", FREY_SHAPE, items)


def read_pgm(data: bytes, source: str) -> np.ndarray:
    """Decode a binary (P5) PGM image: header ``P5 width height maxval`` (``#`` comments
    allowed), one whitespace byte, then ``height * width`` samples (2 bytes big-endian if
    maxval > 255). Returns a (height, width) array of grey levels."""
    fields: list[int] = []
    magic = data[:2]
    if magic != b"P5":
        raise DatasetError(f"{source}: not a binary PGM (magic {magic!r}, expected b'P5')")
    pos = 2
    while len(fields) < 3:
        while pos < len(data) and data[pos : pos + 1].isspace():
            pos += 1
        if data[pos : pos + 1] == b"#":
            end = data.find(b"\n", pos)
            pos = len(data) if end < 0 else end + 1
            continue
        start = pos
        while pos < len(data) and data[pos : pos + 1].isdigit():
            pos += 1
        if pos == start:
            raise DatasetError(f"{source}: malformed PGM header at byte {pos}")
        fields.append(int(data[start:pos]))
    width, height, maxval = fields
    if not (width > 0 and height > 0 and 0 < maxval < 65536):
        raise DatasetError(f"{source}: bad PGM header width={width} height={height} max={maxval}")
    pos += 1  # the single whitespace byte after maxval
    dtype = np.dtype(">u2") if maxval > 255 else np.dtype(np.uint8)
    size = width * height * dtype.itemsize
    if len(data) - pos < size:
        raise DatasetError(
            f"{source}: PGM holds {len(data) - pos} data bytes, expected {size} "
            f"for {width} x {height}"
        )
    pixels = np.frombuffer(data, dtype=dtype, count=width * height, offset=pos)
    if pixels.max(initial=0) > maxval:
        raise DatasetError(f"{source}: grey level {pixels.max()} above maxval {maxval}")
    return pixels.reshape(height, width)


def build_olivetti(files: dict) -> Artifact:
    """Olivetti faces: every ``s<subject>/<k>.pgm`` in the zip, by subject then image number."""
    path = raw_file(files, OLIVETTI)
    try:
        with zipfile.ZipFile(path) as archive:
            entries = sorted(
                (int(m.group(1)), int(m.group(2)), name)
                for name in archive.namelist()
                if (m := _PGM_IMAGE.search(name))
            )
            require(bool(entries), path, "no s<subject>/<k>.pgm images in the zip")
            images = [read_pgm(archive.read(name), f"{path}!{name}") for *_, name in entries]
    except zipfile.BadZipFile as exc:
        raise DatasetError(f"{path}: not a zip archive: {exc}") from exc
    shape = images[0].shape
    odd = [name for (*_, name), im in zip(entries, images, strict=True) if im.shape != shape]
    require(not odd, path, f"images of another size than {shape}: {odd[:3]}")
    subject = np.array([s for s, _, _ in entries], dtype=np.int64)
    image = np.array([k for _, k, _ in entries], dtype=np.int64)
    pixels = np.stack([im.reshape(-1) for im in images])
    names = [f"s{s}/{k}" for s, k in zip(subject, image, strict=True)]
    items = {"name": names, "subject": subject, "image": image}
    return image_set(pixels, path, "pgm images", shape, items, codes=subject)


def build_coil20(files: dict) -> Artifact:
    """COIL-20 at 16 x 16: rows of ``data``, labels = ``class`` - 1."""
    path = raw_file(files, COIL20)
    mat = load_mat(path, ("data", "class"))
    pixels, klass = mat["data"], np.asarray(mat["class"]).ravel().astype(np.int64)
    check_shape(path, "data", pixels, (len(klass), COIL20_SHAPE[0] * COIL20_SHAPE[1]))
    require(klass.size > 0 and klass.min() >= 1, path, "class codes must be >= 1")
    pose = np.zeros(len(klass), dtype=np.int64)
    for c in np.unique(klass):
        rows = np.flatnonzero(klass == c)
        pose[rows] = np.arange(len(rows))
    names = [f"obj{c}_{p}" for c, p in zip(klass, pose, strict=True)]
    items = {"name": names, "object": klass, "pose": pose}
    return image_set(pixels, path, "data", COIL20_SHAPE, items, codes=klass)
