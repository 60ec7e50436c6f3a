"""The neighbour embeddings' protocols: the SNEST paper's optimiser settings, the library's
defaults (openTSNE's schedule, with SNEST's own exaggeration and time rate) and the initial map.

The estimators of :mod:`embedlab.methods.neighbour` take the library's defaults; the workflow
passes the paper's protocol explicitly (:func:`paper_protocol`). Both start from
:func:`initial_embedding`.
"""

from __future__ import annotations

import numpy as np

from embedlab.kernels.fft_repulsion import FFTSettings
from embedlab.optimize import GradientDescent

#: the SNEST paper's optimiser settings (:func:`paper_protocol`); the estimators' defaults are
#: the library's, :data:`embedlab.optimize.LIBRARY`
PAPER = GradientDescent()
#: sd of the initial space and time coordinates (the paper's driver; both protocols)
INIT_SCALE = 1e-4
INIT_SCALE_TIME = 1e-5
#: the library's perplexity (openTSNE's and scikit-learn's)
PERPLEXITY = 30.0
#: SNEST's library time rate: gamma_t = TIME_RATIO gamma_s (the paper asks <= 1/100; with the
#: exaggeration below, 1e-2 blew the time coordinates up on digits, 3e-3 and 1e-3 converged on
#: digits and iris, 1e-3 also on 5,000 MNIST digits)
TIME_RATIO = 1e-3
#: SNEST's library exaggeration: its paper's, 4 for the first 100 epochs
#: (see :class:`embedlab.methods.neighbour.SNEST`)
SNEST_EXAGGERATION = 4.0
SNEST_EXAGGERATION_EPOCHS = 100
#: the approximate repulsion's grid defaults (used only with ``repulsion="fft"``)
FFT = FFTSettings()


def initial_embedding(
    n: int, n_space: int, n_time: int, scale: float, scale_time: float, random_state
) -> np.ndarray:
    """The estimators' start: normal space columns (sd ``scale``), then normal time columns
    (sd ``scale_time``), drawn in that order from ``np.random.default_rng(random_state)``
    (another optimiser given this array starts where ours does)."""
    rng = np.random.default_rng(random_state)
    space = rng.normal(0.0, scale, size=(n, n_space))
    time = rng.normal(0.0, scale_time, size=(n, n_time))
    return np.hstack([space, time])


def paper_protocol(time: bool = False) -> dict:
    """The SNEST paper's optimiser settings as estimator keywords (from
    :class:`embedlab.optimize.GradientDescent`, the home of the paper's protocol).

    The workflow passes these explicitly (with its schema's learning rates, ``max_iter``,
    precision and stopping tests on top); the estimators' own defaults are the library's
    (:data:`embedlab.optimize.LIBRARY`). ``time``: include SNEST's time learning rate and the
    sd of its initial time coordinates."""
    kw = {
        "learning_rate": PAPER.learning_rate,
        "momentum": tuple(PAPER.momentum),
        "momentum_epochs": tuple(PAPER.momentum_epochs),
        "exaggeration": PAPER.exaggeration,
        "exaggeration_epochs": PAPER.exaggeration_epochs,
        "min_gain": PAPER.min_gain,
        "max_iter": PAPER.max_iter,
        "min_iter": PAPER.min_iter,
        "tol": PAPER.tol,
        "init_scale": INIT_SCALE,
        "precision": "float64",
        "backoff": 0,  # the protocol searches a grid of rates: a divergence is a failed run
    }
    if time:
        kw["learning_rate_time"] = PAPER.learning_rate_time
        kw["init_scale_time"] = INIT_SCALE_TIME
    return kw
