"""Each method's fit of the shared sparse P, timed after a warm-up on 300 points (compiled
code, imports); the package's documentation (:mod:`embedlab.experiments.scale`) gives each
method's settings and why."""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from embedlab.experiments.scale.schedule import (
    OPENTSNE_FACTOR,
    ee_lambda,
    estimator_kw,
    phases,
    schedule,
    snest_schedule,
)
from embedlab.experiments.scale.settings import EmbedSettings

log = logging.getLogger(__name__)

METHODS = ("tsne", "snest", "ee", "opentsne", "tsne3")
LABELS = {
    "tsne": "t-SNE R^2 (ours)",
    "snest": "SNEST R^{2,1} (ours)",
    "ee": "EE, uniform weights (ours)",
    "opentsne": "openTSNE t-SNE R^2",
    "tsne3": "t-SNE R^3 (ours)",
}
WARM_UP_POINTS = 300
WARM_UP_EPOCHS = 5


@dataclass
class Fit:
    """One method's map and what it cost."""

    embedding: np.ndarray
    seconds: float  # wall clock of the fit alone
    epochs: int
    cost_trace: np.ndarray  # the method's own objective per epoch (empty for openTSNE)
    exact_calls: int  # FFT-repulsion evaluations computed exactly instead (grid too large)


def _tsne(P, Z, settings: EmbedSettings, threads: int, dims: int = 2):
    from embedlab.methods.neighbour import TSNE

    est = TSNE(
        dims,
        affinity="precomputed",
        precision="float64",
        random_state=settings.seed,
        repulsion=settings.repulsion,
        **estimator_kw(schedule(settings, P.shape[0])),
    ).fit(P)
    return est.embedding_, est.n_iter_, est.cost_trace_


def _tsne3(P, Z, settings: EmbedSettings, threads: int):
    """t-SNE R^3, the SNEST paper's rival of R^{2,1}, with t-SNE's schedule. Its 3-D FFT grid
    exceeds the cap at MNIST's extents, so its epochs run the exact kernel (~3 s each at
    n = 70,000 on 2 cores): opt-in (``scale.methods``)."""
    return _tsne(P, Z, settings, threads, dims=3)


def _snest(P, Z, settings: EmbedSettings, threads: int):
    from embedlab.methods.neighbour import SNEST

    s, rate_time = snest_schedule(settings, P.shape[0])
    est = SNEST(
        2,
        1,
        affinity="precomputed",
        precision="float64",
        learning_rate_time=rate_time,
        random_state=settings.seed,
        repulsion=settings.repulsion,
        **estimator_kw(s),
    ).fit(P)
    return est.embedding_, est.n_iter_, est.cost_trace_


def _ee(P, Z, settings: EmbedSettings, threads: int):
    from embedlab.methods.elastic import ElasticCost, ElasticEmbedding

    n = P.shape[0]
    lam = ee_lambda(settings, n)
    kw = {
        k: v
        for k, v in estimator_kw(schedule(settings, n)).items()
        if not k.startswith("exaggeration")
    }
    est = ElasticEmbedding(
        lam=lam,
        negative_weights="uniform",
        n_components=2,
        repulsion=settings.repulsion,
        **kw,  # EE has no early exaggeration
    )
    est.fit(Z, objective=ElasticCost(P, None, lam, 2, repulsion=settings.repulsion))
    return est.embedding_, est.n_iter_, est.cost_trace_


def opentsne_start(n: int, seed: int) -> np.ndarray:
    """Our t-SNE's start (:func:`embedlab.methods.neighbour_protocol.initial_embedding` with
    TSNE's own init_scale and ``random_state=seed``), handed to openTSNE."""
    from embedlab.methods.neighbour import TSNE
    from embedlab.methods.neighbour_protocol import initial_embedding

    return initial_embedding(n, 2, 0, TSNE().init_scale, 0.0, seed)


def _opentsne(P, Z, settings: EmbedSettings, threads: int):
    from openTSNE import TSNEEmbedding  # the optional extra `scale`
    from openTSNE.affinity import PrecomputedAffinities

    n = P.shape[0]
    s = schedule(settings, n)
    affinities = PrecomputedAffinities(P.copy(), normalize=False)  # it scales P in place
    embedding = TSNEEmbedding(
        opentsne_start(n, settings.seed),
        affinities,
        negative_gradient_method="fft",
        n_jobs=threads,
        random_state=settings.seed,
    )
    for epochs, exaggeration, momentum in phases(s):
        embedding = embedding.optimize(
            epochs,
            exaggeration=exaggeration,
            momentum=momentum,
            learning_rate=OPENTSNE_FACTOR * s.learning_rate,
            max_step_norm=None,
            inplace=True,
        )
    return np.array(embedding, dtype=np.float64), s.max_iter, np.empty(0)


FITS = {"tsne": _tsne, "snest": _snest, "ee": _ee, "opentsne": _opentsne, "tsne3": _tsne3}


def fit_map(
    method: str, P: sp.csr_matrix, Z: np.ndarray, settings: EmbedSettings, threads: int
) -> Fit:
    """Fit ``method`` (one of METHODS) on P (``Z``: the PCA scores, EE's start), after a
    warm-up of the same method on the first 300 points (compiled code, imports)."""
    from embedlab.kernels import neighbour_fft
    from embedlab.knn_affinities import knn_affinities

    if method not in FITS:
        raise ValueError(f"unknown scale method {method!r}; expected one of {list(FITS)}")
    m = min(WARM_UP_POINTS, P.shape[0])
    warm = knn_affinities(Z[:m], perplexity=5.0, pca_dims=None, seed=settings.seed)
    short = dataclasses.replace(settings, max_iter=WARM_UP_EPOCHS, log_every=0)
    FITS[method](warm.P, warm.Z, short, threads)
    before = sum(neighbour_fft.FALLBACKS.values())
    started = time.perf_counter()
    Y, epochs, trace = FITS[method](P, Z, settings, threads)
    seconds = time.perf_counter() - started
    exact_calls = sum(neighbour_fft.FALLBACKS.values()) - before
    log.info(
        "%s: %d epochs in %.1f s (%d exact repulsion calls)", method, epochs, seconds, exact_calls
    )
    return Fit(
        np.asarray(Y, dtype=np.float64), seconds, int(epochs), np.asarray(trace), exact_calls
    )


def repulsion_note(method: str, repulsion: str, exact_calls: int, epochs: int) -> str:
    """How the repulsion was computed, for the table: "fft", "exact", "fft; exact in k
    epochs (grid too large)", "exact (fft grid too large in every epoch)"."""
    if method == "opentsne":
        return "openTSNE fft"
    if repulsion == "exact":
        return "exact"
    if exact_calls == 0:
        return "fft"
    if exact_calls >= epochs:
        return "exact (fft grid too large in every epoch)"
    return f"fft; exact in {exact_calls} of {epochs} epochs (grid too large)"
