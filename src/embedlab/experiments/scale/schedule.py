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
    """The t-SNE schedule as our optimiser's settings (every epoch run: min_iter = max): the
    fields of :class:`EmbedSettings` named as the optimiser's, the learning rate resolved."""
    return GradientDescent.read(
        settings, learning_rate=learning_rate(settings, n), min_iter=settings.max_iter
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


#: the schedule's settings that the neighbour estimators take as keywords of the same names
ESTIMATOR_KEYS = ("learning_rate", "momentum", "momentum_epochs", "exaggeration",
                  "exaggeration_epochs", "max_iter", "min_iter", "log_every", "cost_every")


def estimator_kw(s: GradientDescent) -> dict:
    """The neighbour estimators' optimiser keywords for the settings ``s``."""
    return s.values(ESTIMATOR_KEYS)


def phases(s: GradientDescent) -> list[tuple[int, float, float]]:
    """(epochs, exaggeration, momentum) of each stretch of the schedule where neither
    changes: the openTSNE ``optimize`` calls that replay it."""
    changes = (s.exaggeration_epochs, *s.momentum_epochs)
    cuts = sorted({0, s.max_iter, *(e for e in changes if 0 < e < s.max_iter)})
    return [(b - a, s.exaggeration_at(a), s.momentum_at(a)) for a, b in pairwise(cuts)]
