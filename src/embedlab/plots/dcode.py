"""Figures of the D-CODE paper: Fig. 3 (synthetic, ellipses + ranks), Fig. 4 (NIPS 1999
embedding), Fig. 5 (rank of an author given a word over time vs the empirical p(a | w))."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Ellipse

from embedlab.plots.common import new_figure, surname
from embedlab.plots.labels import place_labels, spread_order

__all__ = ["synthetic_figure", "nips_figure", "pairs_figure", "ellipse_axes"]

#: squared Mahalanobis radius of a 95% region of a 2-D Gaussian (chi-square, 2 dof)
CHI2_95_2D = 5.991464547107979
GROUP_COLOR = {"X": "tab:blue", "Y": "tab:red", "A": "tab:green", "B": "tab:gray"}
GROUP_MARKER = {"X": "o", "Y": "o", "A": "s", "B": "s"}
GROUP_ROLE = {"X": "authors", "Y": "authors", "A": "words", "B": "background words"}


def ellipse_axes(cov: np.ndarray, mass_radius2: float = CHI2_95_2D):
    """(width, height, angle in degrees) of the ellipse ``x^T cov^{-1} x = mass_radius2``."""
    cov = np.asarray(cov, dtype=np.float64)
    if cov.shape != (2, 2) or not np.isfinite(cov).all():
        raise ValueError(f"ellipse needs a finite 2x2 covariance, got shape {cov.shape}")
    values, vectors = np.linalg.eigh(cov)
    if values[0] < 0:
        raise ValueError(f"covariance is not positive semi-definite (eigenvalues {values})")
    width, height = 2.0 * np.sqrt(mass_radius2 * values[::-1])
    angle = np.degrees(np.arctan2(vectors[1, 1], vectors[0, 1]))
    return float(width), float(height), float(angle)


def synthetic_figure(means, covariances, names, ranks: pd.DataFrame, epochs) -> Figure:
    """Fig. 3: D-CODE means (``means[i]``: entities x 2 at step ``epochs[i]``) with the 95%
    ellipses of their conditional posteriors (``covariances[i]``: entities x 2 x 2) at
    ``epochs`` (A-C) and the mean rank of the X authors given the A words over time for D-CODE
    and D-CODE MLE (D)."""
    means, covariances = np.asarray(means), np.asarray(covariances)
    if means.shape != (len(epochs), len(names), 2):
        raise ValueError(
            f"Fig. 3 needs 2-D means of {len(names)} entities at {len(epochs)} epochs, "
            f"got shape {means.shape}"
        )
    fig = new_figure((13, 3.6))
    axes = fig.subplots(1, len(epochs) + 1)
    groups = np.array([str(name)[0] for name in names])
    for ax, t, at_t, covs in zip(axes[:-1], epochs, means, covariances, strict=True):
        for group, mean, cov in zip(groups, at_t, covs, strict=True):
            color = GROUP_COLOR.get(group, "k")
            w, h, ang = ellipse_axes(cov)
            ax.add_patch(Ellipse(mean, w, h, angle=ang, fill=False, color=color, lw=0.8))
        # members of a group sit almost on top of each other: markers + a legend, no labels
        for group in dict.fromkeys(groups):
            members = groups == group
            ax.plot(
                *at_t[members].T,
                GROUP_MARKER.get(group, "o"),
                ms=4,
                color=GROUP_COLOR.get(group, "k"),
                label=f"{group}1-{members.sum()} ({GROUP_ROLE.get(group, 'entity')})",
            )
        ax.set_aspect("equal", adjustable="datalim")
        ax.autoscale_view()
        ax.set_title(f"t = {t}", fontsize=10)
    axes[0].legend(fontsize=7, loc="upper left", framealpha=0.9)
    ax = axes[-1]
    ax.plot(ranks["step"], ranks["dcode"], label="D-CODE", color="tab:blue")
    ax.plot(ranks["step"], ranks["dcode_mle"], label="D-CODE MLE", color="tab:orange", ls="--")
    for t in epochs:
        ax.axvline(t, color="0.8", lw=0.8)
    ax.set_xlabel("time step")
    ax.set_ylabel("mean rank of X1-3 given A words (of 6)")
    ax.set_ylim(0.8, 6.2)
    ax.set_title("Naive Bayes rank over time", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def nips_figure(
    embedding,
    author_names,
    word_names,
    counts,
    title: str,
    author_label=surname,
    roles: tuple[str, str] = ("authors", "words"),
) -> Figure:
    """Fig. 4: authors (red, labelled ``author_label(name)``: surnames) and words (black) at
    the last step, labels placed without overlap in order of frequency and spread over the
    map; ``roles`` names the two kinds of entity in the title (an own dataset's map: row and
    column items)."""
    embedding = np.asarray(embedding, dtype=np.float64)
    A = len(author_names)
    if embedding.shape != (A + len(word_names), 2):
        raise ValueError(f"embedding {embedding.shape} does not match {A} authors + words")
    fig = new_figure((11, 11))
    ax = fig.add_axes((0.03, 0.03, 0.94, 0.92))
    ax.scatter(*embedding[A:].T, s=4, color="0.55", lw=0)
    ax.scatter(*embedding[:A].T, s=14, color="tab:red", lw=0)
    lo, hi = np.percentile(embedding, [1, 99], axis=0)
    pad = 0.08 * (hi - lo)
    ax.set_xlim(lo[0] - pad[0], hi[0] + pad[0])
    ax.set_ylim(lo[1] - pad[1], hi[1] + pad[1])
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(
        f"D-CODE embedding, {title}: {A} {roles[0]} (red), {len(word_names)} {roles[1]}"
    )
    inside = ((embedding >= lo - pad) & (embedding <= hi + pad)).all(axis=1)
    author_order = np.flatnonzero(inside[:A])
    freq = np.asarray(counts, dtype=np.float64).sum(axis=0) + 1.0
    word_idx = np.flatnonzero(inside[A:])
    word_order = A + word_idx[spread_order(embedding[A:][word_idx], freq[word_idx])]
    labels = [author_label(n) for n in author_names] + list(word_names)
    colors = ["tab:red"] * A + ["black"] * len(word_names)
    sizes = [9.0] * A + [7.0] * len(word_names)
    place_labels(
        ax,
        embedding[:, 0],
        embedding[:, 1],
        labels,
        order=np.concatenate([author_order, word_order]),
        colors=colors,
        fontsizes=sizes,
    )
    return fig


def pairs_figure(table: pd.DataFrame, n_authors: int) -> Figure:
    """Fig. 5: per (author, word) column, rank by D-CODE (top), Dynamic PCA (middle) and the
    empirical p(a | w) (bottom) over time."""
    pairs = list(dict.fromkeys(zip(table["author"], table["word"], strict=True)))
    fig = new_figure((4 * len(pairs), 7.5))
    axes = fig.subplots(3, len(pairs), squeeze=False, sharex=True)
    rows = [
        ("rank_dcode", "D-CODE rank"),
        ("rank_dynamic_pca", "Dynamic PCA rank"),
        ("p_author_given_word", "empirical p(a | w)"),
    ]
    for col, (author, word) in enumerate(pairs):
        g = table[(table["author"] == author) & (table["word"] == word)]
        for row, (field, label) in enumerate(rows):
            ax = axes[row, col]
            ax.plot(g["step"], g[field], "o-", ms=3)
            if field.startswith("rank"):
                ax.set_ylim(n_authors + 1, 0)
            if col == 0:
                ax.set_ylabel(label)
        axes[0, col].set_title(f"{surname(author)}, '{word}'")
        axes[-1, col].set_xlabel("step (12 = 1999)")
    fig.suptitle(f"Rank of the author given the word among {n_authors} authors", fontsize=10)
    fig.tight_layout()
    return fig
