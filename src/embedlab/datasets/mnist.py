"""MNIST: an idx-file reader, a vectors subset and the t-STE nearest-neighbour triplets.

Vectors (:func:`build_vectors`): a seeded subset of the digits of the training set, the test
set or both (``sets: [train, test]``, 70,000 digits: the scale experiment's ``mnist_70000``).

Triplets (t-STE, van der Maaten & Weinberger 2012): from ``n_digits`` random training digits,
draw ``n_triplets`` triplets (i, j, l) with

* i uniform over the digits,
* j uniform over the ``n_neighbours`` nearest neighbours of i (Euclidean on raw pixels, i
  itself excluded),
* l uniform over the digits strictly farther from i than j: d(i, l) > d(i, j).

The digit labels play no part in the triplets; they are stored as ``labels``. Squared
distances between 8-bit images are integers, computed exactly, so ties are real ties: they are
broken by training-set order when ranking neighbours and never counted as "farther".

The authors' released code (STE_Release ``mnist_experiment.m``, ``mnist_make_maps.m``) draws
its triplets differently, :func:`build_triplets_authors`: PCA of the whole training set to 50
dimensions; ``n_digits`` random digits; each digit's neighbours ranked by squared Euclidean
distance in the 50-D space, rank 1 being the digit itself; max_away = round(n_digits / 20);

* i uniform over the digits,
* j = the digit at rank r, r uniform over 1..max_away (so j = i when r = 1),
* l = the digit at rank min(n_digits, r + u), u uniform over 1..max_away,

no de-duplication. The artifact's meta says ``self_triplets: true`` (j = i is allowed).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd

from embedlab.artifacts import Artifact
from embedlab.datasets import DatasetError
from embedlab.datasets.readers import raw_file, require

IMAGES = "mnist/train-images.idx3-ubyte"
LABELS = "mnist/train-labels.idx1-ubyte"
TEST_IMAGES = "mnist/t10k-images.idx3-ubyte"
TEST_LABELS = "mnist/t10k-labels.idx1-ubyte"
#: the idx files (images, labels) of each set
SETS = {"train": (IMAGES, LABELS), "test": (TEST_IMAGES, TEST_LABELS)}
IMAGE_SHAPE = (28, 28)
_UBYTE = 0x08


def read_idx(path: Path, ndim: int) -> np.ndarray:
    """Read an idx file of unsigned bytes with ``ndim`` dimensions (gzip is undone if present).

    Layout: magic ``00 00 08 <ndim>``, ``ndim`` big-endian int32 sizes, then the values.
    """
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    require(len(raw) >= 4 + 4 * ndim, path, f"too short for an idx header ({len(raw)} bytes)")
    magic = raw[:4]
    require(
        magic[:2] == b"\x00\x00" and magic[2] == _UBYTE and magic[3] == ndim,
        path,
        f"bad idx magic {magic.hex()}; expected 000008{ndim:02x} (unsigned bytes, {ndim}-D)",
    )
    dims = tuple(int(d) for d in np.frombuffer(raw, dtype=">i4", count=ndim, offset=4))
    header = 4 + 4 * ndim
    expected = header + int(np.prod(dims))
    require(
        len(raw) == expected,
        path,
        f"size {len(raw)} bytes does not match the header's shape {dims} ({expected} bytes)",
    )
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(dims)


def read_training_set(files: dict) -> tuple[np.ndarray, np.ndarray]:
    """The training images as (n, 784) uint8 and their digits as (n,) int64."""
    return read_set(files, "train")


def read_set(files: dict, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The images of set ``name`` ("train" or "test") as (n, 784) uint8, digits (n,) int64."""
    if name not in SETS:
        raise DatasetError(f"unknown MNIST set {name!r}; expected one of {sorted(SETS)}")
    images_path, labels_path = (raw_file(files, key) for key in SETS[name])
    images = read_idx(images_path, 3)
    labels = read_idx(labels_path, 1).astype(np.int64)
    require(
        images.shape[1:] == IMAGE_SHAPE,
        images_path,
        f"images are {images.shape[1:]}, expected {IMAGE_SHAPE}",
    )
    require(
        len(images) == len(labels),
        labels_path,
        f"{len(labels)} labels for {len(images)} images in {images_path.name}",
    )
    require(
        labels.size == 0 or (labels.min() >= 0 and labels.max() <= 9),
        labels_path,
        f"labels outside 0..9 (found {labels.min()}..{labels.max()})",
    )
    return images.reshape(len(images), -1), labels


def random_subset(n_total: int, n_digits: int, seed: int, source: Path) -> np.ndarray:
    """``n_digits`` distinct training-set indices drawn with ``seed``, in increasing order."""
    require(
        0 < n_digits <= n_total,
        source,
        f"n_digits={n_digits} must lie in 1..{n_total} (digits in the file)",
    )
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n_total, size=n_digits, replace=False))


def _items(index: np.ndarray, digits: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {"name": [f"train{i}" for i in index], "training_index": index, "digit": digits}
    )


def build_vectors(
    files: dict, n_digits: int = 6000, seed: int = 0, sets: tuple = ("train",)
) -> Artifact:
    """A seeded subset of the digits of ``sets`` (train, then test, as one pool):
    X = pixels / 255 (float64), labels = digits. Items: name (train<i> / test<i>) and digit,
    with training_index for a training-set build, set and set_index otherwise."""
    sets = list(sets)
    if not sets or len(set(sets)) != len(sets):
        raise DatasetError(f"MNIST sets={sets} must name distinct sets among {sorted(SETS)}")
    parts = [read_set(files, name) for name in sets]
    source = raw_file(files, SETS[sets[0]][0])
    images = np.concatenate([p[0] for p in parts])
    labels = np.concatenate([p[1] for p in parts])
    index = random_subset(len(images), n_digits, seed, source)
    if sets == ["train"]:
        items = _items(index, labels[index])
    else:
        origin = np.repeat(sets, [len(p[1]) for p in parts])[index]
        within = np.concatenate([np.arange(len(p[1])) for p in parts])[index]
        items = pd.DataFrame(
            {
                "name": [f"{s}{i}" for s, i in zip(origin, within, strict=True)],
                "set": origin,
                "set_index": within,
                "digit": labels[index],
            }
        )
    return Artifact(
        kind="vectors",
        arrays={"X": images[index].astype(np.float64) / 255.0, "labels": labels[index]},
        items=items,
        meta={"image_shape": list(IMAGE_SHAPE), "sets": sets},
    )


def squared_distances(pixels: np.ndarray) -> np.ndarray:
    """Exact squared Euclidean distances between rows of an 8-bit image matrix (int32).

    ||x||^2 + ||y||^2 - 2 x.y in float64 is exact here: every term is an integer < 2^53, and
    a squared distance is at most 255^2 * 784 < 2^31.
    """
    x = pixels.astype(np.float64)
    sq = np.einsum("ij,ij->i", x, x)
    d = x @ x.T
    d *= -2.0
    d += sq[:, None]
    d += sq[None, :]
    return np.rint(d).astype(np.int32)


def neighbour_triplets(
    dist: np.ndarray, n_triplets: int, n_neighbours: int, rng: np.random.Generator
) -> np.ndarray:
    """Sample (i, j, l): i uniform, j uniform among i's ``n_neighbours`` nearest, d(i,l) > d(i,j).

    Each row of ``dist`` is ranked once (stable, so ties follow item order, with i itself
    first); l is then uniform over the ranks after the last one tied with j.
    """
    n = dist.shape[0]
    ranked = dist.copy()
    np.fill_diagonal(ranked, -1)  # i ranks first in its own row, even beside duplicates
    order = np.argsort(ranked, axis=1, kind="stable")
    sorted_dist = np.take_along_axis(ranked, order, axis=1)
    # first_farther[i, r]: the first rank whose distance exceeds that of rank r (r <= k)
    first_farther = np.empty((n, n_neighbours + 1), dtype=np.int64)
    for i in range(n):
        first_farther[i] = np.searchsorted(
            sorted_dist[i], sorted_dist[i, : n_neighbours + 1], side="right"
        )
    i = rng.integers(0, n, size=n_triplets)
    j_rank = rng.integers(1, n_neighbours + 1, size=n_triplets)
    low = first_farther[i, j_rank]
    if (low >= n).any():
        bad = int(i[np.argmax(low >= n)])
        raise ValueError(f"no item is farther from item {bad} than its sampled neighbour")
    l_rank = rng.integers(low, n)
    return np.stack([i, order[i, j_rank], order[i, l_rank]], axis=1).astype(np.int64)


def build_triplets(
    files: dict,
    n_digits: int = 1000,
    n_triplets: int = 100000,
    n_neighbours: int = 50,
    seed: int = 0,
) -> Artifact:
    """t-STE MNIST triplets over a seeded subset of training digits (see module docstring)."""
    images, labels = read_training_set(files)
    source = raw_file(files, IMAGES)
    index = random_subset(len(images), n_digits, seed, source)
    require(
        0 < n_neighbours < n_digits - 1,
        source,
        f"n_neighbours={n_neighbours} must lie in 1..n_digits-2 = {n_digits - 2}",
    )
    require(n_triplets > 0, source, f"n_triplets={n_triplets} must be positive")
    rng = np.random.default_rng([seed, 1])  # a stream apart from the subset's
    try:
        triplets = neighbour_triplets(
            squared_distances(images[index]), n_triplets, n_neighbours, rng
        )
    except ValueError as exc:
        raise DatasetError(f"{source}: {exc}") from exc
    return Artifact(
        kind="triplets",
        arrays={"triplets": triplets, "labels": labels[index]},
        items=_items(index, labels[index]),
        meta={"n": int(n_digits), "image_shape": list(IMAGE_SHAPE)},
    )


# --------------------------------------------------------------------------------------
# the authors' released rule (STE_Release)


def pca_scores(pixels: np.ndarray, n_components: int) -> np.ndarray:
    """Scores of ``pixels`` (rows) on their top ``n_components`` principal axes (float64):
    the centred data times the leading eigenvectors of its covariance (drtoolbox's PCA).
    Each axis' sign is fixed so that its largest-magnitude loading is positive."""
    x = pixels.astype(np.float64)
    mean = x.mean(axis=0)
    cov = np.zeros((x.shape[1], x.shape[1]))
    for start in range(0, len(x), 10000):  # float64 scatter in blocks (60000 x 784)
        block = x[start : start + 10000] - mean
        cov += block.T @ block
    cov /= max(len(x) - 1, 1)
    w, V = np.linalg.eigh(cov)
    V = V[:, np.argsort(w)[::-1][:n_components]]
    V *= np.where(V[np.abs(V).argmax(axis=0), np.arange(V.shape[1])] < 0, -1.0, 1.0)
    return (x - mean) @ V


def rank_order(dist: np.ndarray) -> np.ndarray:
    """order[i, r-1] = the item at rank r from item i: ascending distance, ties by item order,
    and item i itself at rank 1 (even beside duplicates or a rounding error)."""
    ranked = np.array(dist, dtype=np.float64)
    np.fill_diagonal(ranked, -np.inf)
    return np.argsort(ranked, axis=1, kind="stable")


def authors_triplets(
    order: np.ndarray, n_triplets: int, max_away: int, rng: np.random.Generator
) -> np.ndarray:
    """(i, j, l) by the authors' rule on a rank table ``order`` (see :func:`rank_order`):
    i uniform, j at rank r ~ U{1..max_away}, l at rank min(n, r + u), u ~ U{1..max_away}
    (1-based ranks; rank 1 is i itself). Returns int64 (n_triplets, 3) in generation order."""
    n = order.shape[0]
    if not 1 <= max_away < n:
        raise ValueError(f"max_away={max_away} must lie in 1..n-1 = {n - 1}")
    i = rng.integers(0, n, size=n_triplets)
    r = rng.integers(1, max_away + 1, size=n_triplets)
    u = rng.integers(1, max_away + 1, size=n_triplets)
    l_rank = np.minimum(n, r + u)
    return np.stack([i, order[i, r - 1], order[i, l_rank - 1]], axis=1).astype(np.int64)


def build_triplets_authors(
    files: dict,
    n_digits: int = 1000,
    n_triplets: int = 100000,
    max_away: int | None = None,
    pca_dims: int = 50,
    seed: int = 0,
) -> Artifact:
    """t-STE MNIST triplets by the authors' released rule (see module docstring):
    PCA-``pca_dims`` space of the whole training set, max_away = round(n_digits / 20) unless
    given, self-triplets (j = i) kept, no de-duplication; meta ``self_triplets: true``."""
    images, labels = read_training_set(files)
    source = raw_file(files, IMAGES)
    index = random_subset(len(images), n_digits, seed, source)
    if max_away is None:
        max_away = int(np.floor(n_digits / 20 + 0.5))  # MATLAB round: halves away from zero
    require(
        1 <= max_away < n_digits,
        source,
        f"max_away={max_away} must lie in 1..n_digits-1 = {n_digits - 1}",
    )
    require(n_triplets > 0, source, f"n_triplets={n_triplets} must be positive")
    require(
        0 < pca_dims <= images.shape[1],
        source,
        f"pca_dims={pca_dims} must lie in 1..{images.shape[1]}",
    )
    scores = pca_scores(images, pca_dims)[index]
    sq = np.einsum("ij,ij->i", scores, scores)
    dist = sq[:, None] + sq[None, :] - 2.0 * (scores @ scores.T)
    rng = np.random.default_rng([seed, 2])  # a stream apart from the subset's
    triplets = authors_triplets(rank_order(dist), n_triplets, max_away, rng)
    return Artifact(
        kind="triplets",
        arrays={"triplets": triplets, "labels": labels[index]},
        items=_items(index, labels[index]),
        meta={
            "n": int(n_digits),
            "image_shape": list(IMAGE_SHAPE),
            "self_triplets": True,
            "max_away": int(max_away),
            "counts": {"self_triplets": int(np.sum(triplets[:, 0] == triplets[:, 1]))},
        },
    )
