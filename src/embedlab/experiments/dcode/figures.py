"""The data of the D-CODE figures: Fig. 3 (synthetic sequence), Fig. 4 (NIPS embedding of
the last volume) and Fig. 5 (an author's rank given a word over the volumes).

Each function fits its models and returns the plotted table with what the figure draws; the
steps (:mod:`.steps`) save that to the figure's data file, which its own job draws with
:mod:`embedlab.plots.dcode`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from embedlab.artifacts import Artifact
from embedlab.evaluate.ranking import naive_bayes_scores, rank_of
from embedlab.experiments.dcode.fits import FITS, fit_dcode
from embedlab.experiments.dcode.settings import (
    EmbeddingFigureSettings,
    PairsFigureSettings,
    SyntheticFigureSettings,
)
from embedlab.experiments.dcode.subsets import (
    items_of,
    largest,
    prolific,
    sub_counts,
    word_usage,
)


def synthetic_ranks(art: Artifact, settings: SyntheticFigureSettings):
    """Fig. 3(D): mean Naive-Bayes rank of the X authors given the A words, per step.

    The 'paper' is one occurrence of every word of group A; ranks are among all authors at
    each filtered step t (D-CODE and D-CODE MLE from one fit). Returns (table, fitted model).
    """
    from embedlab.methods.dcode import VARIANTS

    items_a, items_w = items_of(art, "author"), items_of(art, "word")
    x = np.flatnonzero(items_a["group"].to_numpy() == "X")
    words = (items_w["group"].to_numpy() == "A").astype(np.float64)
    if x.size == 0 or not words.any():
        raise ValueError("synthetic artifact needs authors of group X and words of group A")
    counts = art.arrays["counts"]
    model = fit_dcode("dynamic", settings.params, counts, settings.seed)
    ranks_by_step = {"step": np.arange(len(counts))}
    for variant in FITS["dynamic"]:
        ranks = []
        for t in range(len(counts)):
            L = model.log_word_given_author(t, mode=VARIANTS[variant]["mode"])
            scores = naive_bayes_scores(L, words)[0]
            ranks.append(np.mean([rank_of(scores, a) for a in x]))
        ranks_by_step[variant] = ranks
    return pd.DataFrame(ranks_by_step), model


def _index_of(names: np.ndarray, name: str, role: str) -> np.ndarray:
    hit = np.flatnonzero(names == name)
    if hit.size == 0:
        raise ValueError(f"{role} {name!r} is not in the artifact's items")
    return hit


def figure_subset(art, n_authors, n_words, last_step, extra_authors=(), extra_words=()):
    """The NIPS figures' entities: the ``n_authors`` most prolific authors (papers up to
    ``last_step``; + named extras) and the ``n_words`` words they use most (+ named extras).

    Returns (authors, words, every author's name, every word's name), indices sorted.
    """
    authors, _ = prolific(art, n_authors, 1, last_step)
    names_a = items_of(art, "author")["name"].to_numpy()
    names_w = items_of(art, "word")["name"].to_numpy()
    for name in extra_authors:
        authors = np.union1d(authors, _index_of(names_a, name, "author"))
    words = largest(word_usage(art, authors, last_step), n_words)
    for name in extra_words:
        words = np.union1d(words, _index_of(names_w, name, "word"))
    return np.sort(authors), np.sort(words), names_a, names_w


@dataclass(frozen=True)
class Embedding:
    """Fig. 4: the D-CODE means of the last volume (``coordinates``: name, role, x, y; authors
    first), the embedded names and the last volume's counts among them."""

    coordinates: pd.DataFrame
    authors: list[str]
    words: list[str]
    counts: np.ndarray
    title: str


def last_volume_embedding(art: Artifact, settings: EmbeddingFigureSettings) -> Embedding:
    """Fig. 4: D-CODE (dynamic fit of every volume) of the most prolific authors and their
    words; the last volume's posterior means."""
    last = len(art.arrays["counts"]) - 1
    authors, words, names_a, names_w = figure_subset(
        art, settings.n_authors, settings.n_words, last
    )
    counts = sub_counts(art, authors, words, last)
    model = fit_dcode("dynamic", settings.params, counts, settings.seed)
    names = list(names_a[authors]) + list(names_w[words])
    coordinates = pd.DataFrame(model.means_[-1], columns=["x", "y"])
    coordinates.insert(0, "name", names)
    coordinates.insert(1, "role", ["author"] * len(authors) + ["word"] * len(words))
    return Embedding(
        coordinates,
        list(names_a[authors]),
        list(names_w[words]),
        counts[-1],
        art.meta.get("step_names", [""])[-1],
    )


def pair_trajectories(art: Artifact, settings: PairsFigureSettings) -> tuple[pd.DataFrame, int]:
    """Fig. 5: per (author, word) and step, the rank of the author given the word (D-CODE,
    Dynamic PCA; Naive Bayes, uniform prior, among the embedded authors) and the empirical
    ``p(a | w) = C_t(a, w) / sum_a' C_t(a', w)`` over all authors of the corpus.

    Returns (the trajectories, the number of embedded authors)."""
    from embedlab.methods.dynamic_pca import DynamicPCA

    pairs = settings.pairs
    for pair in pairs:
        if len(pair) != 2:
            raise ValueError(f"dcode.figures.fig5.pairs: expected (author, word), got {pair!r}")
    last = len(art.arrays["counts"]) - 1
    authors, words, names_a, names_w = figure_subset(
        art,
        settings.n_authors,
        settings.n_words,
        last,
        [a for a, _ in pairs],
        [w for _, w in pairs],
    )
    counts = sub_counts(art, authors, words, last)
    models = {
        "dcode": fit_dcode("dynamic", settings.params, counts, settings.seed),
        "dynamic_pca": DynamicPCA(**settings.pca).fit(counts),
    }
    rows = []
    for author, word in pairs:
        a = int(np.flatnonzero(names_a[authors] == author)[0])
        w = int(np.flatnonzero(names_w[words] == word)[0])
        paper = np.zeros(len(words))
        paper[w] = 1.0
        for t in range(last + 1):
            full = sp.csr_matrix(art.arrays["counts"][t])[:, words[w]].toarray().ravel()
            row = {
                "author": author,
                "word": word,
                "step": t,
                "p_author_given_word": full[authors[a]] / full.sum() if full.sum() else 0.0,
            }
            for name, model in models.items():
                L = model.log_word_given_author(t, p_words=np.full(len(words), 1.0 / len(words)))
                row[f"rank_{name}"] = rank_of(naive_bayes_scores(L, paper)[0], a)
            rows.append(row)
    return pd.DataFrame(rows), len(authors)
