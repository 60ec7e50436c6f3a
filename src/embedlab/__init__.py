"""embedlab: reproducible embeddings (SNEST, D-CODE, Diffeomap, t-STE, Elastic Embedding).

The estimators follow scikit-learn's conventions (``fit`` / ``fit_transform``, parameters in
``__init__``, results in attributes ending in ``_``) and are importable from here:

    neighbour embeddings   SNE, TSNE, SNEST           (embedlab.methods.neighbour)
    elastic embedding      ElasticEmbedding            (embedlab.methods.elastic)
    triplet embeddings     GNMDS, CKL, STE, TSTE       (embedlab.methods.triplets)
    co-occurrence          DCODE                       (embedlab.methods.dcode)
    diffeomorphic          Diffeomap                   (embedlab.methods.diffeomap)

The neighbour embeddings take points X (n x D) and build their perplexity affinities inside,
or take an affinity matrix P with ``affinity="precomputed"``; their defaults are the
library's (openTSNE's schedule), the papers' protocols are what the workflow passes.

Examples
--------
>>> from sklearn.datasets import load_digits
>>> from embedlab import SNEST, TSNE
>>> X, y = load_digits(return_X_y=True)
>>> Y = TSNE(random_state=0).fit_transform(X)  # doctest: +SKIP
>>> snest = SNEST(n_space=2, n_time=1, random_state=0).fit(X)  # doctest: +SKIP
>>> snest.space_.shape, snest.time_.shape  # doctest: +SKIP
((1797, 2), (1797, 1))
>>> P = snest.affinities_  # or any symmetric P summing to 1  # doctest: +SKIP
>>> Y = TSNE(affinity="precomputed", random_state=0).fit_transform(P)  # doctest: +SKIP

Design: this package module is the facade at the top of the layers (base -> methods ->
evaluate -> experiments -> top). It names the estimators by module and loads a module only
when one of its names is first read (PEP 562 ``__getattr__``): every module of the package
imports ``embedlab`` first, and the workflow's table and figure jobs must start without
scikit-learn and numba, which the methods load.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: exported name -> the module (under embedlab) that defines it
EXPORTS = {
    "SNE": "methods.neighbour",
    "TSNE": "methods.neighbour",
    "SNEST": "methods.neighbour",
    "ElasticEmbedding": "methods.elastic",
    "GNMDS": "methods.triplets",
    "CKL": "methods.triplets",
    "STE": "methods.triplets",
    "TSTE": "methods.triplets",
    "DCODE": "methods.dcode",
    "Diffeomap": "methods.diffeomap",
}

__all__ = ["__version__", *EXPORTS]


def __getattr__(name: str):
    """The exported estimator ``name``, its module imported on first use."""
    if name not in EXPORTS:
        raise AttributeError(f"module 'embedlab' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{EXPORTS[name]}"), name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *EXPORTS})
