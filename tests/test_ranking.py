"""Naive Bayes author ranking and the median predicted rank (D-CODE paper, Table 2)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from embedlab.evaluate.ranking import (
    median_rank,
    naive_bayes_scores,
    paper_word_weights,
    rank_of,
    true_author_ranks,
)

# p(w | a) of three authors over four words, chosen by hand
P_WORD_GIVEN_AUTHOR = np.array(
    [
        [0.5, 0.3, 0.1, 0.1],  # author 0: words 0 and 1
        [0.1, 0.1, 0.4, 0.4],  # author 1: words 2 and 3
        [0.25, 0.25, 0.25, 0.25],  # author 2: anything
    ]
)
LOG_P = np.log(P_WORD_GIVEN_AUTHOR)
PAPERS = np.array(
    [
        [2, 1, 0, 0],  # words 0, 0, 1
        [0, 0, 1, 1],  # words 2, 3
    ]
)


def test_scores_are_log_prior_plus_summed_log_likelihoods():
    scores = naive_bayes_scores(LOG_P, PAPERS)
    # paper 0: 0.5^2 0.3 = 0.075, 0.1^3 = 0.001, 0.25^3 = 0.015625
    assert np.allclose(np.exp(scores[0]), [0.075, 0.001, 0.015625])
    # paper 1: 0.1 0.1, 0.4 0.4, 0.25 0.25
    assert np.allclose(np.exp(scores[1]), [0.01, 0.16, 0.0625])
    prior = np.log([0.1, 0.1, 0.8])
    with_prior = naive_bayes_scores(LOG_P, PAPERS, prior)
    assert np.allclose(with_prior, scores + prior)
    # a single paper as a vector, sparse papers
    assert np.allclose(naive_bayes_scores(LOG_P, PAPERS[1]), scores[1:])
    assert np.allclose(naive_bayes_scores(LOG_P, sp.csr_matrix(PAPERS)), scores)


def test_ranks_of_true_authors_on_the_hand_made_example():
    # paper 0 ranks authors 0 > 2 > 1; paper 1 ranks 1 > 2 > 0
    ranks = true_author_ranks(LOG_P, PAPERS, [[0, 1], [2]])
    assert ranks.tolist() == [1.0, 3.0, 2.0]
    assert median_rank(ranks) == 2.0
    # a strong prior for author 2 moves it ahead on paper 0 (0.0125 > 0.0075 > 0.0001)
    ranks = true_author_ranks(LOG_P, PAPERS, [[0, 1], [2]], np.log([0.1, 0.1, 0.8]))
    assert ranks.tolist() == [2.0, 3.0, 1.0]
    # papers without an embedded author contribute nothing
    assert true_author_ranks(LOG_P, PAPERS, [[], [1]]).tolist() == [1.0]


def test_a_paper_as_its_set_of_words_or_its_word_counts():
    """The paper ranks authors "given a set of words": each distinct word once. Counting every
    occurrence (multinomial) can change the ranking: word 0 five times and word 2 once favour
    author 0 (0.5^5 0.1) over author 2 (0.25^6); as the set {0, 2} author 2 wins (0.0625 >
    0.05 > 0.04)."""
    paper = np.array([[5, 0, 1, 0]])
    as_set = paper_word_weights(paper, "set")
    assert as_set.tolist() == [[1.0, 0.0, 1.0, 0.0]]
    assert paper_word_weights(paper, "counts") is paper
    assert true_author_ranks(LOG_P, paper, [[0]]).tolist() == [1.0]
    assert true_author_ranks(LOG_P, as_set, [[0, 2]]).tolist() == [2.0, 1.0]
    sparse = paper_word_weights(sp.csr_matrix(paper), "set")
    assert sp.issparse(sparse) and np.array_equal(sparse.toarray(), as_set)
    with pytest.raises(ValueError, match="paper words must be one of"):
        paper_word_weights(paper, "bag")


def test_ties_share_their_mean_position():
    assert rank_of(np.array([1.0, 1.0, 1.0]), 1) == 2.0
    assert rank_of(np.array([3.0, 1.0, 1.0, 0.0]), 2) == 2.5
    uniform = np.log(np.full((4, 3), 1 / 3))
    assert true_author_ranks(uniform, np.array([[1, 2, 0]]), [[3]]).tolist() == [2.5]


def test_identical_authors_tie_despite_rounding():
    """Authors with identical p(w | a) rows (a flat model, authors a method cannot place) must
    tie. The matrix product that sums a paper's log-probabilities can round identical rows
    differently (BLAS kernels treat the last rows apart): such differences of ~1e-13 must not
    order the authors."""
    rng = np.random.default_rng(0)
    n_authors, n_words = 30, 289
    flat = np.full((n_authors, n_words), -np.log(n_words))
    papers = (rng.random((5, n_words)) < 0.3).astype(float)
    ranks = true_author_ranks(flat, papers, [[0, 1, 29]] * 5)
    assert np.all(ranks == (n_authors + 1) / 2)
    L = rng.normal(size=(n_authors, n_words))
    L[5:] = L[5]  # authors 5..29 identical, 0..4 different
    scores = naive_bayes_scores(L, papers)
    for p in range(5):
        r = [rank_of(scores[p], a) for a in range(5, n_authors)]
        assert len(set(r)) == 1, r


def test_unknown_and_impossible_words():
    L = LOG_P.copy()
    L = np.c_[L, np.full(3, -np.inf)]  # word 4: p(w | a) = 0 for every author
    papers = np.c_[PAPERS, [5, 0]]
    assert np.allclose(naive_bayes_scores(L, papers), naive_bayes_scores(LOG_P, PAPERS))
    L[0, 2] = -np.inf  # word 2 is impossible for author 0 only
    scores = naive_bayes_scores(L, papers)
    assert np.isneginf(scores[1, 0]) and np.isfinite(scores[1, 1:]).all()
    assert true_author_ranks(L, papers, [[0], [0]]).tolist() == [1.0, 3.0]


def test_median_rank_and_bad_input():
    assert median_rank([1, 5, 2, 8]) == 3.5
    with pytest.raises(ValueError, match="no \\(paper, true author\\) pairs"):
        median_rank([])
    with pytest.raises(ValueError, match="3 words, the model has 4"):
        naive_bayes_scores(LOG_P, np.ones((1, 3)))
    with pytest.raises(ValueError, match="NaN"):
        naive_bayes_scores(np.full((2, 2), np.nan), np.ones((1, 2)))
    with pytest.raises(ValueError, match="non-negative"):
        naive_bayes_scores(LOG_P, -np.ones((1, 4)))
    with pytest.raises(ValueError, match="log_prior"):
        naive_bayes_scores(LOG_P, PAPERS, np.zeros(2))
    with pytest.raises(ValueError, match="paper 1: author index 3"):
        true_author_ranks(LOG_P, PAPERS, [[0], [3]])
    with pytest.raises(ValueError, match="1 author lists for 2 papers"):
        true_author_ranks(LOG_P, PAPERS, [[0]])
