"""Naive Bayes author ranking given a paper's words, and the median predicted rank.

For a paper with word multiset ``w_1 .. w_m`` (counts ``n_j`` per word) the score of author
``a`` is ``log p(a) + sum_j n_j log p(w_j | a)``; ``p(w | a)`` comes from a model (D-CODE: the
expectation under the posterior; point-estimate models: eq. 1 at the positions). The rank of a
true author is its position when all candidate authors are sorted by decreasing score
(1 = best; tied authors share the mean of their positions). The D-CODE paper reports the median
of these ranks over all (paper, true author) pairs.

What a paper contributes: the paper ranks authors "given a set of words" from a paper (sections
4.1 and 4.5), which :func:`paper_word_weights` reads as each distinct word once (``"set"``); the
multinomial reading, every occurrence counted (``"counts"``), is kept as the alternative. With
counts a paper of a few thousand tokens makes the scores of Naive Bayes extremely peaked, which
favours any model whose ``p(w | a)`` carries the authors' word frequencies.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

PAPER_WORDS = ("set", "counts")


def paper_word_weights(paper_word_counts, mode: str = "set"):
    """The weights ``n_pj`` a paper's words get in :func:`naive_bayes_scores`.

    ``"set"``: 1 for every word the paper uses (the paper's "set of words"); ``"counts"``: the
    occurrence counts unchanged. Dense input gives a dense float array, sparse input a sparse one.
    """
    if mode not in PAPER_WORDS:
        raise ValueError(f"paper words must be one of {PAPER_WORDS}, got {mode!r}")
    if mode == "counts":
        return paper_word_counts
    if sp.issparse(paper_word_counts):
        out = sp.csr_matrix(paper_word_counts, dtype=np.float64, copy=True)
        out.data = (out.data > 0).astype(np.float64)
        out.eliminate_zeros()
        return out
    return (np.asarray(paper_word_counts) > 0).astype(np.float64)


def naive_bayes_scores(log_p_word_given_author, paper_word_counts, log_prior=None) -> np.ndarray:
    """Scores (papers x authors): ``log p(a) + sum_j n_pj log p(w_j | a)``.

    ``log_p_word_given_author`` is (A, W); ``paper_word_counts`` (papers x W, dense or sparse,
    or a single (W,) vector); ``log_prior`` (A,) or None for a uniform prior. A word with
    ``p(w | a) = 0`` for every author (unknown to the model) carries no information and is
    skipped; a word impossible for only some authors gives those authors ``-inf``.
    """
    L = np.asarray(log_p_word_given_author, dtype=np.float64)
    if L.ndim != 2:
        raise ValueError(f"log p(w|a) must be (authors, words), got shape {L.shape}")
    if np.isnan(L).any() or np.isposinf(L).any():
        raise ValueError("log p(w|a) contains NaN or +inf")
    counts = paper_word_counts
    counts = counts.toarray() if sp.issparse(counts) else np.asarray(counts, dtype=np.float64)
    counts = np.atleast_2d(counts)
    if counts.shape[1] != L.shape[1]:
        raise ValueError(
            f"paper word counts have {counts.shape[1]} words, the model has {L.shape[1]}"
        )
    if (counts < 0).any() or not np.isfinite(counts).all():
        raise ValueError("paper word counts must be finite and non-negative")
    unknown = np.isneginf(L).all(axis=0)
    L = np.where(unknown[None, :], 0.0, L)
    used = counts > 0
    # -inf * 0 must stay 0: sum only over the words the paper uses
    scores = np.zeros((counts.shape[0], L.shape[0]))
    for p in range(counts.shape[0]):
        cols = np.flatnonzero(used[p])
        scores[p] = L[:, cols] @ counts[p, cols] if cols.size else 0.0
    if log_prior is not None:
        log_prior = np.asarray(log_prior, dtype=np.float64)
        if log_prior.shape != (L.shape[0],):
            raise ValueError(f"log_prior must have shape ({L.shape[0]},), got {log_prior.shape}")
        scores = scores + log_prior[None, :]
    return scores


#: scores this close (relative) are tied: sums of identical log-probability rows can differ by
#: rounding (~1e-13 relative for a few hundred words), which must not order the authors
TIE_RTOL = 1e-9


def rank_of(scores: np.ndarray, author: int) -> float:
    """Rank (1 = best) of ``author`` under ``scores`` (A,); ties share their mean position.

    Scores within ``TIE_RTOL`` (relative) of the author's are ties; ``-inf`` ties ``-inf``.
    """
    scores = np.asarray(scores, dtype=np.float64)
    s = scores[author]
    tie = np.isclose(scores, s, rtol=TIE_RTOL, atol=0.0)
    higher = np.count_nonzero((scores > s) & ~tie)
    tied = np.count_nonzero(tie) - 1
    return 1.0 + higher + 0.5 * tied


def true_author_ranks(
    log_p_word_given_author,
    paper_word_counts,
    paper_authors: Sequence[Sequence[int]],
    log_prior=None,
) -> np.ndarray:
    """Ranks of every (paper, true author) pair, in paper order.

    ``paper_authors[p]`` lists the indices (into the model's authors) of paper p's authors;
    papers without an embedded author contribute nothing.
    """
    scores = naive_bayes_scores(log_p_word_given_author, paper_word_counts, log_prior)
    if len(paper_authors) != scores.shape[0]:
        raise ValueError(f"{len(paper_authors)} author lists for {scores.shape[0]} papers")
    n_authors = scores.shape[1]
    ranks = []
    for p, authors in enumerate(paper_authors):
        for a in np.asarray(authors, dtype=np.int64).ravel():
            if not 0 <= a < n_authors:
                raise ValueError(f"paper {p}: author index {a} outside [0, {n_authors})")
            ranks.append(rank_of(scores[p], int(a)))
    return np.asarray(ranks, dtype=np.float64)


def median_rank(ranks) -> float:
    """Median predicted rank of the true authors (the paper's Table 2 metric)."""
    ranks = np.asarray(ranks, dtype=np.float64)
    if ranks.size == 0:
        raise ValueError("no (paper, true author) pairs to rank")
    return float(np.median(ranks))
