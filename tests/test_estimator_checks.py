"""scikit-learn's own conformance suite (``check_estimator``) on the estimators that take
points: every check passes, none is expected to fail.

The parameters are those scikit-learn's suite gives its own TSNE (a small perplexity, here 5:
the suite's data sets have 10-30 points) and, for Diffeomap, which maps to fewer dimensions
than the data has, ``n_components=1`` (the suite's data has as few as 2 features), with 4
time steps and 50 iterations (as the suite shortens its own iterative estimators). Its small
random data sets are where step sizes made for thousands of points diverge; the estimators
pass because they back off (:mod:`embedlab.optimize`), see also tests/test_small_data.py."""

from __future__ import annotations

import warnings

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from embedlab import SNE, SNEST, TSNE, Diffeomap, ElasticEmbedding

ESTIMATORS = [
    TSNE(perplexity=5),
    SNE(perplexity=5),
    SNEST(perplexity=5),
    ElasticEmbedding(perplexity=5),
    Diffeomap(n_components=1, p=4, max_iter=50),
]


@parametrize_with_checks(ESTIMATORS)
def test_scikit_learn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the lowered perplexity of 5 points
        check(estimator)


def test_every_estimator_is_checked():
    checked = {type(e).__name__ for e in ESTIMATORS}
    assert checked == {"TSNE", "SNE", "SNEST", "ElasticEmbedding", "Diffeomap"}
    pytest.importorskip("sklearn.utils.estimator_checks")
