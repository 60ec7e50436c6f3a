"""A dataset as the Diffeomap paper fits it: the rows, the features and the classes of the
1-NN criterion, from a vectors artifact and its :class:`.settings.Preparation`.

Classes: vowel / USPS ``labels``; NIPS text: the papers with one (``author_match``
"exactly_one", label = that author) or at least one ("any", all of them its classes) of the
``top_authors`` most prolific authors, 1-NN searched among those papers only (the reading is
chosen by :func:`.authors.author_set_readings`); mocap has none (``use_labels`` False).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from embedlab import artifacts
from embedlab.experiments.diffeomap.settings import Preparation


def load_vectors(artifact_dir: str | Path) -> artifacts.Artifact:
    """The vectors artifact in ``artifact_dir`` (another kind raises, naming it)."""
    art = artifacts.load(artifact_dir)
    if art.kind != "vectors":
        raise ValueError(f"{artifact_dir}: Diffeomap needs a vectors artifact, got {art.kind!r}")
    return art


def prepare(
    artifact_dir: str | Path, preparation: Preparation, seed: int
) -> tuple[np.ndarray, np.ndarray | None, dict[str, Any]]:
    """(X, classes, info) of a vectors artifact prepared as ``preparation`` says.

    ``subsample``: that many rows drawn at random (``seed``); ``centre_frames``: each row a
    frame of 3-D markers (:func:`centre_on_body`); ``pca_dims``: X replaced by its first
    principal components (NIPS text); ``top_authors`` K: classes from the artifact's
    ``paper_authors``: ``author_match`` "exactly_one": papers with exactly one of the K most
    prolific authors (-1 = unlabelled); "any": the 0/1 papers x K incidence (a paper's top-K
    authors are all its classes; :func:`.scoring.class_errors`). Otherwise the artifact's
    ``labels`` where ``use_labels``, else no classes (None). ``info["rows"]`` holds the kept
    row indices of the artifact.
    """
    art = load_vectors(artifact_dir)
    X = np.asarray(art.arrays["X"], dtype=np.float64)
    rows = np.arange(len(X))
    subsample = preparation.subsample
    if subsample is not None and subsample < len(X):
        rows = np.sort(np.random.default_rng(seed).choice(len(X), size=subsample, replace=False))
    info: dict[str, Any] = {"n_rows_artifact": len(X)}
    if preparation.top_authors is not None:
        if "paper_authors" not in art.arrays:
            raise ValueError(
                f"{artifact_dir}: top_authors={preparation.top_authors} needs 'paper_authors'"
            )
        classes, authors = author_classes(art.arrays["paper_authors"], preparation.top_authors)
        if preparation.author_match == "any":
            classes = (art.arrays["paper_authors"][:, authors] != 0).astype(np.int8).toarray()
        elif preparation.author_match != "exactly_one":
            raise ValueError(
                f"author_match={preparation.author_match!r}; expected 'exactly_one' or 'any'"
            )
        info["top_authors"] = authors.tolist()
        info["author_match"] = preparation.author_match
    elif preparation.use_labels and "labels" in art.arrays:
        classes = np.asarray(art.arrays["labels"])
    else:
        classes = None
    X = X[rows]
    if preparation.centre_frames:
        X = centre_on_body(X)
        info["centre_frames"] = True
    if preparation.pca_dims is not None and preparation.pca_dims < X.shape[1]:
        X, info["pca_variance_kept"] = principal_components(X, preparation.pca_dims, seed)
    info["rows"] = rows.tolist()
    return X, None if classes is None else classes[rows], info


def principal_components(X: np.ndarray, dims: int, seed: int) -> tuple[np.ndarray, float]:
    """(X on its first ``dims`` principal components, the fraction of variance kept)."""
    from sklearn.decomposition import PCA

    if dims > min(X.shape) - 1:
        raise ValueError(f"pca_dims={dims} exceeds min(shape) - 1 of X {X.shape}")
    pca = PCA(n_components=dims, random_state=seed).fit(X)
    return pca.transform(X), float(pca.explained_variance_ratio_.sum())


def centre_on_body(X: np.ndarray) -> np.ndarray:
    """Frames in body coordinates: x_(f,m) - (1/M) sum_m' x_(f,m') for each frame f, marker m.

    Rows of ``X`` are frames of M markers stored as (x, y, z) column triples. Removing each
    frame's marker centroid drops the subject's translation (a run covers metres, far more
    than any pose change), so nearby points in the map are similar poses, the property the
    paper's Fig. 2 discussion asks for; inclination and limb positions are kept.
    """
    if X.ndim != 2 or X.shape[1] % 3:
        raise ValueError(f"centre_frames needs rows of (x, y, z) triples, got shape {X.shape}")
    frames = X.reshape(len(X), -1, 3)
    return (frames - frames.mean(axis=1, keepdims=True)).reshape(X.shape)


def author_classes(paper_authors, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Label = the one author among the k most prolific (ties: lower index) a paper has, or -1.

    Returns (labels (papers,), the k author column indices).
    """
    A = (paper_authors != 0).astype(np.int64).tocsc()
    counts = np.asarray(A.sum(axis=0)).ravel()
    top = np.argsort(-counts, kind="stable")[:k]
    sub = A[:, top].tocsr()
    n_top = np.asarray(sub.sum(axis=1)).ravel()
    labels = np.full(A.shape[0], -1, dtype=np.int64)
    one = np.flatnonzero(n_top == 1)
    labels[one] = top[sub[one].indices]
    return labels, top
