"""The NIPS data of Table 2: the pool, its random subsets, their counts and test papers.

The *pool* is the ``pool = (authors, words)`` most prolific authors (papers in volumes
``0..fit_step``) and the words they use most (counts summed over those volumes). A subset of
size ``(a, w)`` draws ``a`` authors and ``w`` words from the pool uniformly without replacement,
one numpy Generator per subset, seeded ``seed + index``. A subset's data are its (authors x
words) count matrices and, for a later volume, the papers with at least one subset author and
one subset word (the paper's words outside the subset are ignored).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from embedlab.artifacts import Artifact
from embedlab.experiments.dcode.settings import RankSettings

#: the arrays of a cooccurrence artifact that hold the NIPS papers
PAPER_ARRAYS = ("counts", "paper_step", "paper_words", "paper_authors")


def items_of(art: Artifact, role: str) -> pd.DataFrame:
    """The artifact's items of ``role`` ("author" or "word"), in index order."""
    items = art.items[art.items["role"] == role]
    return items.sort_values("index").reset_index(drop=True)


def check_papers(art: Artifact) -> None:
    """Fail unless ``art`` is a cooccurrence artifact with the NIPS papers' arrays."""
    if art.kind != "cooccurrence":
        raise ValueError(f"D-CODE needs a cooccurrence artifact, got kind {art.kind!r}")
    for key in PAPER_ARRAYS:
        if key not in art.arrays:
            raise ValueError(f"cooccurrence artifact lacks array {key!r} (NIPS papers needed)")


def word_usage(art: Artifact, authors: np.ndarray, up_to: int) -> np.ndarray:
    """Each word's total count in ``authors``' rows of ``counts[0..up_to]``."""
    usage = sum(sp.csr_matrix(art.arrays["counts"][t])[authors] for t in range(up_to + 1))
    return np.asarray(usage.sum(axis=0)).ravel()


def largest(values: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` largest ``values``, ties broken by index (deterministic)."""
    return np.lexsort((np.arange(values.size), -values))[:n]


def prolific(art: Artifact, n_authors: int, n_words: int, up_to: int):
    """(authors, words), sorted: the ``n_authors`` authors with most papers in steps
    ``<= up_to`` and the ``n_words`` words of largest :func:`word_usage` by them."""
    check_papers(art)
    steps = np.asarray(art.arrays["paper_step"])
    if not 0 <= up_to < len(art.arrays["counts"]):
        raise ValueError(f"up_to={up_to} outside the {len(art.arrays['counts'])} steps")
    pa = sp.csr_matrix(art.arrays["paper_authors"])
    n_papers = np.asarray(pa[steps <= up_to].sum(axis=0)).ravel()
    if n_authors > np.count_nonzero(n_papers):
        raise ValueError(
            f"only {np.count_nonzero(n_papers)} authors have papers; {n_authors} asked"
        )
    authors = largest(n_papers, n_authors)
    usage = word_usage(art, authors, up_to)
    if n_words > np.count_nonzero(usage):
        raise ValueError(f"these authors use only {np.count_nonzero(usage)} words; {n_words} asked")
    return np.sort(authors), np.sort(largest(usage, n_words))


def draw_subset(pool, size, seed) -> tuple[np.ndarray, np.ndarray]:
    """``size = (a, w)`` random authors and words of ``pool = (authors, words)``."""
    (pool_a, pool_w), (a, w) = pool, size
    if a > len(pool_a) or w > len(pool_w):
        raise ValueError(f"subset {size} larger than the pool ({len(pool_a)}, {len(pool_w)})")
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(pool_a, a, replace=False)), np.sort(
        rng.choice(pool_w, w, replace=False)
    )


def sub_counts(art: Artifact, authors, words, up_to: int) -> list[np.ndarray]:
    """Dense (authors x words) count matrices of steps 0..``up_to``."""
    return [
        sp.csr_matrix(art.arrays["counts"][t])[authors][:, words].toarray()
        for t in range(up_to + 1)
    ]


def test_papers(art: Artifact, authors, words, step: int):
    """Word counts (papers x words) and true-author lists (subset indices) of ``step``'s papers.

    Only papers with at least one subset author and one subset word are kept.
    """
    steps = np.asarray(art.arrays["paper_step"])
    pw = sp.csr_matrix(art.arrays["paper_words"])[:, words].toarray()
    pa = sp.csr_matrix(art.arrays["paper_authors"])[:, authors].toarray()
    keep = (steps == step) & (pa.sum(axis=1) > 0) & (pw.sum(axis=1) > 0)
    return pw[keep], [np.flatnonzero(row) for row in pa[keep]]


@dataclass(frozen=True)
class RankSetup:
    """What every fit of one Table 2 job shares: the corpus, its pool, the subset size, the
    observation model (one of :data:`embedlab.methods.dcode.LIKELIHOODS`) and the job's
    settings."""

    art: Artifact
    pool: tuple[np.ndarray, np.ndarray]
    size: tuple[int, int]
    observation: str
    settings: RankSettings

    @classmethod
    def of(cls, art: Artifact, size, observation: str, settings: RankSettings) -> RankSetup:
        """The setup of subsets of ``size`` drawn from ``art``'s pool (``settings.pool``)."""
        if len(settings.pool) != 2:
            raise ValueError(f"pool must be (authors, words), got {settings.pool!r}")
        pool = prolific(art, *settings.pool, settings.fit_step)
        return cls(art, pool, tuple(size), observation, settings)

    def subset(self, index: int, up_to: int):
        """Authors, words (pool indices) and count matrices of steps 0..``up_to`` of subset
        ``index``."""
        authors, words = draw_subset(self.pool, self.size, self.settings.seed + index)
        return authors, words, sub_counts(self.art, authors, words, up_to)
