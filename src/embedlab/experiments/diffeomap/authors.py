"""NIPS text: which reading of the paper's "authors as classes" gives its 2-D PCA accuracy.

Readings, for the K most prolific authors (ties: lower index): ``exactly one`` (papers with
exactly one of them, label = that author: :func:`.data.author_classes`); ``any`` (papers with
at least one, all of their top-K authors as classes, a hit when the nearest such paper shares
one); and ``all authors`` (every paper, all its authors as classes). The config's
``top_authors`` and ``author_match`` of nips_text are chosen from this table.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from embedlab.experiments.diffeomap.baselines import baseline_map
from embedlab.experiments.diffeomap.data import author_classes, load_vectors, principal_components
from embedlab.experiments.diffeomap.scoring import class_errors, shared_class_errors
from embedlab.experiments.diffeomap.settings import AuthorSetSettings

#: the paper's PCA 1-NN accuracy on NIPS text (section 4.4), the target of the author-set choice
PAPER_PCA_ACCURACY = 0.33

#: the numbers of most prolific authors tried
TOP_AUTHORS_TRIED = (4, 5, 6, 7, 8, 10, 15, 20, 30)


def author_set_readings(artifact_dir: str | Path, settings: AuthorSetSettings) -> pd.DataFrame:
    """2-D PCA 1-NN accuracy of each reading, on every paper (PCA pre-reduction to
    ``settings.pca_dims`` as the fits); the row closest to the paper's 33 % is ``closest``."""
    art = load_vectors(artifact_dir)
    X = np.asarray(art.arrays["X"], dtype=np.float64)
    if settings.pca_dims is not None and settings.pca_dims < X.shape[1]:
        X, _ = principal_components(X, settings.pca_dims, settings.seed)
    A = (art.arrays["paper_authors"] != 0).astype(np.int64).tocsc()
    Y = baseline_map("pca", X, settings.seed, 0)
    counts = np.asarray(A.sum(axis=0)).ravel()
    rows = []
    for k in TOP_AUTHORS_TRIED:
        labels, top = author_classes(A, k)
        reading = {"top_authors": k, "min_papers": int(counts[top].min())}
        for reading_name, classes in (("exactly one", labels), ("any", A[:, top])):
            errors, n = class_errors(Y, classes)
            rows.append({"reading": reading_name, **reading, "papers": n, "pca": 1 - errors / n})
    errors, n = shared_class_errors(Y, A)
    rows.append({"reading": "all authors", "top_authors": A.shape[1], "min_papers": 1,
                 "papers": n, "pca": 1 - errors / n})  # fmt: skip
    df = pd.DataFrame(rows)
    df["pca"] = df["pca"].round(4)
    df["gap_to_paper"] = (df["pca"] - PAPER_PCA_ACCURACY).abs().round(4)
    df["closest"] = df["gap_to_paper"] == df["gap_to_paper"].min()
    return df
