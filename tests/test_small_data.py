"""Small and odd data fit to a real map: graphs of 10-40 nodes (connected, disconnected, a
star), a few points, duplicate points, fewer points than the perplexity asks for.

Step sizes made for thousands of points are far too long here; the estimators back off
(restart with halved rates, :mod:`embedlab.optimize`) instead of failing, and "a real map"
is checked as a KL (or EE cost) below that of the start. The workflow's SNEST cells, which
search the config's grid of rates without backing off, take a second pass with it where
every run diverged (:func:`embedlab.experiments.snest.fit.embed_cell`)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from embedlab import SNE, SNEST, TSNE, ElasticEmbedding, artifacts, runs, steps
from embedlab.affinities import row_normalised_symmetric

#: the Medici-era marriage ties between the 15 Florentine families of Padgett and Ansell
#: (the graph networkx ships as florentine_families_graph), by family index
FLORENTINE = [
    (0, 8), (1, 5), (1, 6), (1, 8), (2, 4), (2, 8), (3, 6), (3, 10), (3, 14), (4, 8), (4, 10),
    (4, 14), (5, 8), (7, 8), (8, 9), (8, 12), (8, 13), (10, 14), (11, 14), (12, 13),
]  # fmt: skip


def graph_P(edges, n: int) -> sp.csr_matrix:
    """The P of an own similarity dataset made from an unweighted edge list."""
    i, j = np.array(edges).T
    return row_normalised_symmetric(sp.coo_matrix((np.ones(len(i)), (i, j)), shape=(n, n)))


def chain(start: int, length: int) -> list[tuple[int, int]]:
    return [(k, k + 1) for k in range(start, start + length - 1)]


GRAPHS = {
    "florentine (15)": graph_P(FLORENTINE, 15),
    "star (13)": graph_P([(0, k) for k in range(1, 13)], 13),
    "two chains (16)": graph_P(chain(0, 8) + chain(8, 8), 16),
    "ring (40)": graph_P(chain(0, 40) + [(39, 0)], 40),
    "path (10)": graph_P(chain(0, 10), 10),
}
GRAPH_ESTIMATORS = {
    "SNE": lambda: SNE(affinity="precomputed", random_state=0),
    "t-SNE": lambda: TSNE(affinity="precomputed", random_state=0),
    "SNEST": lambda: SNEST(affinity="precomputed", random_state=0),
}


def descended(est) -> bool:
    """A finite map whose final cost is below the cost of its start."""
    cost = getattr(est, "kl_divergence_", getattr(est, "cost_", np.nan))
    return bool(np.isfinite(est.embedding_).all() and cost < est.cost_trace_[0])


@pytest.mark.parametrize("graph", list(GRAPHS))
@pytest.mark.parametrize("method", list(GRAPH_ESTIMATORS))
def test_small_graphs_fit_to_a_map(graph, method):
    est = GRAPH_ESTIMATORS[method]().fit(GRAPHS[graph])
    assert descended(est)
    assert est.embedding_.shape[0] == GRAPHS[graph].shape[0]


def test_a_diverging_run_backs_off_and_says_so():
    """SNE at openTSNE's rate floor diverges on the star's heavy hub row: it recovers at a
    halved rate, and without backoff the same fit raises."""
    from embedlab.optimize import DivergenceError

    P = GRAPHS["star (13)"]
    est = SNE(affinity="precomputed", random_state=0).fit(P)
    assert est.backoffs_ >= 1 and descended(est)
    first_rate = SNE()._settings(P.shape[0]).learning_rate
    assert est.learning_rate_ == first_rate / 2**est.backoffs_
    with pytest.raises(DivergenceError):
        SNE(affinity="precomputed", random_state=0, backoff=0).fit(P)


POINTS = {
    "10 random points": np.random.default_rng(0).normal(size=(10, 3)),
    "duplicates": np.repeat(np.random.default_rng(1).normal(size=(6, 4)), 3, axis=0),
    "6 points, perplexity 30": np.random.default_rng(2).normal(size=(6, 5)),
}
POINT_ESTIMATORS = {
    "SNE": lambda: SNE(random_state=0),
    "t-SNE": lambda: TSNE(random_state=0),
    "SNEST": lambda: SNEST(random_state=0),
    "EE": lambda: ElasticEmbedding(perplexity=30, init="random", random_state=0),
}


@pytest.mark.parametrize("data", list(POINTS))
@pytest.mark.parametrize("method", list(POINT_ESTIMATORS))
def test_a_few_points_fit_to_a_map(data, method):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the perplexity lowered to (n - 1) / 3
        est = POINT_ESTIMATORS[method]().fit(POINTS[data])
    assert descended(est)


def test_too_few_points_for_any_perplexity_is_a_clear_error():
    with pytest.raises(ValueError, match=r"4 points are too few for a perplexity P \(need n >= 5"):
        TSNE().fit(np.random.default_rng(0).normal(size=(4, 3)))


def test_a_workflow_cell_on_a_star_graph_backs_off_to_a_map(tmp_path):
    """The config's SNEST rates (1, 10, 100 with gamma_t = gamma_s / 100) all diverge on the
    star; the cell's second pass backs off and its table row is a number, with the halvings
    in its best parameters."""
    from embedlab.experiments.snest import table1

    P = GRAPHS["star (13)"]
    art = artifacts.Artifact(
        kind="similarity", arrays={"P": P},
        items=pd.DataFrame({"name": [f"n{k}" for k in range(13)]}), meta={},
    )  # fmt: skip
    artifacts.save(art, tmp_path / "star", "star")
    data = [str(tmp_path / "star" / name) for name in ("data.npz", "items.tsv", "meta.json")]
    out = tmp_path / "snest-2-1.npz"
    settings = dict(
        grid={"learning_rate": [1.0, 10.0, 100.0], "time_ratio": [0.01]}, restarts=1,
        restarts_per_job=0, seed=0, max_iter=1000, log_every=0, precision="float64",
        perplexity=30.0,
        stopping={"rate_window": 0, "plateau_tol": 0.0, "abandon_margin": float("inf")},
    )  # fmt: skip
    steps.call("snest.embed", settings, dict(data=data, runs_file=str(out), dataset="star",
                                              cell="snest-2-1"))  # fmt: skip
    result = runs.load_runs(out)
    assert result["meta"]["backed_off"] and result["best"] is not None
    row = table1.kl_table([out], "config/paper_values/snest_table1.csv").iloc[0]
    assert np.isfinite(row["kl"]) and '"backoffs"' in row["best_params"]
