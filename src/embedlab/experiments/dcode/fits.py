"""The methods Table 2 compares, each fitted on a subset's counts, as ``log p(w | a)``.

D-CODE fits: one dynamic fit per subset serves D-CODE (posterior distributions) and D-CODE MLE
(its means); one static fit (the last matrix only) serves Static D-CODE and Static D-CODE MLE.
The observation model is one of :data:`embedlab.methods.dcode.LIKELIHOODS` (``observation``):
``counts`` (N_t x eq. 2, the table's reading) or ``per_token`` (eq. 2 as printed), each a block
of the table. D-CODE ranks the next year's papers with the one-step predictive distribution
(``prediction="predictive"``: filtered at t = 12 plus the transition noise) or, as a labelled
option, the filtered one (``"filtered"``; the paper: "the filtering distribution ... can be used
to calculate expected probabilities for prediction").

LLE embeds only authors with counts in the last fitted matrix; the others cannot be placed and
are ranked below every placed author (tied), so LLE is scored on the same candidates and the
same (paper, true author) pairs as the other methods. Degenerate LLE embeddings are left out
(as in the paper) and counted in the table; any other failure of a method is an error.

Two reference rows without an embedding put the numbers in scale: ``chance`` (every author
tied: rank (a + 1) / 2) and ``empirical`` (Naive Bayes with the add-one smoothed empirical
``p(w | a)`` of the counts summed over the fitted steps).

The methods are imported where they fit: the table job reads this module's names only and
imports neither scikit-learn nor numba.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from embedlab.methods.dcode import DCODE

log = logging.getLogger(__name__)

METHODS = ["dcode", "dcode_mle", "static_dcode", "static_dcode_mle", "dynamic_pca", "lle"]
LABEL = {
    "dcode": "D-CODE",
    "dcode_mle": "D-CODE MLE",
    "static_dcode": "Static D-CODE",
    "static_dcode_mle": "Static D-CODE MLE",
    "dynamic_pca": "Dynamic PCA",
    "lle": "LLE",
    "empirical": "Empirical NB (no embedding)",
    "chance": "Chance",
}
#: reference rows without an embedding (not in the paper's table)
REFERENCES = ["empirical", "chance"]
#: add-one smoothing of the empirical p(w | a) of the ``empirical`` reference
EMPIRICAL_ALPHA = 1.0
#: the D-CODE fits and the variants each serves (section 4.1); the same split as the
#: ``static`` flags of :data:`embedlab.methods.dcode.VARIANTS`, without importing the method
FITS = {"dynamic": ("dcode", "dcode_mle"), "static": ("static_dcode", "static_dcode_mle")}
#: each D-CODE variant's fit
FIT_OF = {variant: fit for fit, variants in FITS.items() for variant in variants}
#: how D-CODE ranks the next year's papers (see the module docstring)
PREDICTIONS = ("predictive", "filtered")


def fit_dcode(fit: str, params: dict, counts, seed: int) -> DCODE:
    """The ``fit`` ("dynamic" or "static") D-CODE model of ``counts`` (steps 0..fit_step)."""
    from embedlab.methods.dcode import DCODE

    return DCODE(static=fit == "static", random_state=seed, **params).fit(counts)


def dcode_log_p(model: DCODE, variant: str, prediction: str, t: int = -1) -> np.ndarray:
    """``log p(w | a)`` of ``variant`` for the step after ``t`` from a fitted model.

    ``prediction="predictive"`` uses the one-step predictive distribution of a dynamic model
    (the static model has no transition: its filtered distribution is its prediction).
    """
    from embedlab.methods.dcode import VARIANTS

    if prediction not in PREDICTIONS:
        raise ValueError(f"prediction must be one of {PREDICTIONS}, got {prediction!r}")
    horizon = int(prediction == "predictive" and not model.static)
    return model.log_word_given_author(t, mode=VARIANTS[variant]["mode"], horizon=horizon)


def method_log_p(method: str, params: dict, counts, seed: int) -> np.ndarray:
    """``log p(w | a)`` (A, W) of a method other than the D-CODE variants, fitted on ``counts``.

    Every subset author gets a row. LLE places only the authors with counts in the last matrix;
    the others get ``-inf`` rows (ranked below every placed author, tied); with no more
    active authors than ``n_neighbors`` it cannot embed (counted as degenerate). References:
    ``chance`` is flat, ``empirical`` the smoothed word frequencies of the summed counts.
    """
    from embedlab.methods.cooc_lle import CooccurrenceLLE, DegenerateEmbeddingError
    from embedlab.methods.dynamic_pca import DynamicPCA

    A, W = counts[-1].shape
    if method == "chance":
        return np.full((A, W), -np.log(W))
    if method == "empirical":
        total = np.sum(counts, axis=0) + EMPIRICAL_ALPHA
        return np.log(total / total.sum(axis=1, keepdims=True))
    if method == "lle":  # LLE places only authors active in the last matrix
        active = np.flatnonzero(counts[-1].sum(axis=1) > 0)
        if active.size <= params["n_neighbors"]:  # counted with the degenerate embeddings
            raise DegenerateEmbeddingError(
                f"{active.size} authors active in the last year, n_neighbors "
                f"{params['n_neighbors']}: LLE cannot embed them"
            )
        model = CooccurrenceLLE(random_state=seed, **params).fit([c[active] for c in counts])
        L = np.full((A, W), -np.inf)
        L[active] = model.log_word_given_author(-1)
        return L
    if method == "dynamic_pca":  # its windows need counts: start at the first non-empty step
        first = next(t for t, c in enumerate(counts) if c.sum() > 0)
        return DynamicPCA(**params).fit(counts[first:]).log_word_given_author(-1)
    raise ValueError(f"unknown method {method!r}; expected one of {METHODS + REFERENCES}")


def dcode_params(params: dict, fit: str) -> dict:
    """Settings of the ``fit`` D-CODE model: ``params["dcode"]``, then ``params["static"]``."""
    base = dict(params.get("dcode", {}))
    return {**base, **params.get("static", {})} if fit == "static" else base


def subset_log_ps(methods, params: dict, counts, seed: int, observation: str, prediction: str):
    """``{method: log p(w | a)}`` for one subset; D-CODE variants share their fit.

    ``params``: ``{"dcode": {...}}`` (both D-CODE fits, e.g. the validated variances; a
    ``"static"`` entry overrides them for the static fit) and ``{method: {...}}`` for the
    others. A degenerate LLE embedding gives ``None``.
    """
    from embedlab.methods.cooc_lle import DegenerateEmbeddingError

    out, models = {}, {}
    for method in methods:
        if method in FIT_OF:
            fit = FIT_OF[method]
            if fit not in models:
                models[fit] = fit_dcode(
                    fit, {**dcode_params(params, fit), "likelihood": observation}, counts, seed
                )
            out[method] = dcode_log_p(models[fit], method, prediction)
            continue
        try:
            out[method] = method_log_p(method, params.get(method, {}), counts, seed)
        except DegenerateEmbeddingError as err:
            log.warning("%s: degenerate embedding: %s", method, err)
            out[method] = None
    return out
