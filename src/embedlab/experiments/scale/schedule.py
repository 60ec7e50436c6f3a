"""One schedule for every method of the scale experiment: the learning rate ("auto" = n /
(4 exaggeration)), the t-SNE schedule as our optimiser's settings, SNEST's exaggeration and
time learning rate, EE's lambda, and the stretches of constant exaggeration and momentum in
which openTSNE replays the schedule."""

from __future__ import annotations

import dataclasses
from itertools import pairwise

from embedlab.experiments.scale.settings import EmbedSettings
from embedlab.optimize import GradientDescent

OPENTSNE_FACTOR = 4.0  # our gradient / openTSNE's: its learning rate is 4x ours


def learning_rate(settings: EmbedSettings, n: int) -> float:
    """The learning rate for n points: "auto" = n / (4 exaggeration)."""
    if settings.learning_rate == "auto":
        return n / (OPENTSNE_FACTOR * settings.exaggeration)
    rate = float(settings.learning_rate)
    if not rate > 0:
        raise ValueError(f"learning_rate must be 'auto' or a number > 0, got {rate!r}")
    return rate


def schedule(settings: EmbedSettings, n: int) -> GradientDescent:
    """The t-SNE schedule as our optimiser's settings (every epoch run: min_iter = max)."""
    return GradientDescent(
        learning_rate=learning_rate(settings, n),
        momentum=tuple(settings.momentum),
        momentum_epochs=tuple(settings.momentum_epochs),
        exaggeration=settings.exaggeration,
        exaggeration_epochs=settings.exaggeration_epochs,
        max_iter=settings.max_iter,
        min_iter=settings.max_iter,
        log_every=settings.log_every,
        cost_every=settings.cost_every,
    )


def snest_schedule(settings: EmbedSettings, n: int) -> tuple[GradientDescent, float]:
    """SNEST's schedule (t-SNE's with SNEST's own exaggeration) and its time learning rate
    (``time_ratio`` x the space one)."""
    own = settings.snest
    s = dataclasses.replace(
        schedule(settings, n),
        exaggeration=float(own["exaggeration"]),
        exaggeration_epochs=int(own["exaggeration_epochs"]),
    )
    return s, float(own["time_ratio"]) * s.learning_rate


def ee_lambda(settings: EmbedSettings, n: int) -> float:
    """EE's lambda for n points: lam_n / n (keeps the map's local scale)."""
    return float(settings.ee["lam_n"]) / n


def estimator_kw(s: GradientDescent) -> dict:
    """The neighbour estimators' optimiser keywords for the settings ``s``."""
    return {
        "learning_rate": s.learning_rate,
        "momentum": tuple(s.momentum),
        "momentum_epochs": tuple(s.momentum_epochs),
        "exaggeration": s.exaggeration,
        "exaggeration_epochs": s.exaggeration_epochs,
        "max_iter": s.max_iter,
        "min_iter": s.min_iter,
        "log_every": s.log_every,
        "cost_every": s.cost_every,
    }


def phases(s: GradientDescent) -> list[tuple[int, float, float]]:
    """(epochs, exaggeration, momentum) of each stretch of the schedule where neither
    changes: the openTSNE ``optimize`` calls that replay it."""
    changes = (s.exaggeration_epochs, *s.momentum_epochs)
    cuts = sorted({0, s.max_iter, *(e for e in changes if 0 < e < s.max_iter)})
    return [(b - a, s.exaggeration_at(a), s.momentum_at(a)) for a, b in pairwise(cuts)]
