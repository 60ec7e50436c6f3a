"""The D-CODE variances of one Table 2 job, chosen on held-out years.

``transition_var`` / ``initial_var`` are chosen per subset size (and observation model): the
dynamic fit on volumes ``<= fit_step - 1`` predicts each of the last ``val_steps`` volumes up to
``fit_step`` from the filtered state of the year before (the test year is never seen); the
static fit embeds the year before each of them. The criterion is the mean rank over all
validation (paper, true author) pairs of the first ``val_subsets`` subsets, of D-CODE (dynamic
fit) and Static D-CODE (static fit); lower is better, ties go to the smaller values. The grid
is log-spaced; where the best value lies on an edge of the grid, the grid is extended by its
own ratio beyond that edge (at most ``grid_extensions`` times), so a chosen value at an edge
is reported, not hidden.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

import numpy as np

from embedlab.evaluate.ranking import paper_word_weights, true_author_ranks
from embedlab.experiments.dcode.fits import FITS, dcode_log_p, dcode_params, fit_dcode
from embedlab.experiments.dcode.subsets import RankSetup, test_papers

log = logging.getLogger(__name__)


@dataclass
class ValidationSubset:
    """One subset's validation data, drawn once for every grid point: its authors, words and
    counts up to ``fit_step - 1``, and the papers of each held-out year."""

    index: int
    authors: np.ndarray
    words_idx: np.ndarray
    counts: list
    held_out: list  # (step, paper word weights, true authors) per held-out year with papers


def validation_subset(setup: RankSetup, index: int) -> ValidationSubset:
    """Held-out years ``fit_step - val_steps + 1 .. fit_step`` of subset ``index``."""
    fit_step, settings = setup.settings.fit_step, setup.settings
    authors, words_idx, counts = setup.subset(index, fit_step - 1)
    held_out = []
    for step in range(fit_step - settings.val_steps + 1, fit_step + 1):
        pw, pa = test_papers(setup.art, authors, words_idx, step)
        if pa:
            held_out.append((step, paper_word_weights(pw, settings.paper_words), pa))
    if not held_out:
        raise ValueError(f"subset {setup.size}/{index}: no papers in the held-out years")
    return ValidationSubset(index, authors, words_idx, counts, held_out)


def validation_ranks(setup: RankSetup, data: ValidationSubset, fit: str, params: dict):
    """Ranks of every validation (paper, true author) pair of one subset for one grid point.

    Each held-out year is predicted from the year before: the dynamic fit filters volumes
    ``<= fit_step - 1`` once; the static fit embeds the year before each held-out year. Ranked
    with D-CODE (dynamic) / Static D-CODE (static).
    """
    variant, seed = FITS[fit][0], setup.settings.seed + data.index
    prediction = setup.settings.prediction
    model_params = {**params, "likelihood": setup.observation}
    dynamic = fit_dcode("dynamic", model_params, data.counts, seed) if fit == "dynamic" else None
    ranks = []
    for step, weights, pa in data.held_out:
        if fit == "dynamic":
            L = dcode_log_p(dynamic, variant, prediction, t=step - 1)
        else:
            static = fit_dcode("static", model_params, data.counts[:step], seed)
            L = dcode_log_p(static, variant, prediction)
        ranks.append(true_author_ranks(L, weights, pa))
    return np.concatenate(ranks)


def _extend(values: list[float], best: float) -> list[float] | None:
    """One more log-spaced point beyond the edge of ``values`` that ``best`` sits on."""
    values = sorted(values)
    if len(values) < 2 or best not in (values[0], values[-1]):
        return None
    if best == values[0]:
        return [values[0] * values[0] / values[1]]
    return [values[-1] * values[-1] / values[-2]]


def validate_dcode(setup: RankSetup, params: dict) -> tuple[dict, list[dict]]:
    """Choose ``transition_var`` / ``initial_var`` of the dynamic and the static D-CODE fit.

    ``params``: the fixed settings of the fits (:func:`.fits.dcode_params`). Returns
    ``({fit: best params}, rows of every grid point evaluated)``, on the first
    ``min(val_subsets, subsets)`` subsets. The grid grows only where another pass evaluates
    the new points, so the rows hold the whole grid searched (see :func:`grid_report`).
    """
    settings = setup.settings
    n_subsets = min(settings.val_subsets, settings.subsets)
    chosen, rows = {}, []
    subsets = [validation_subset(setup, i) for i in range(n_subsets)]
    for fit in FITS:
        axes = {k: sorted(float(v) for v in settings.grid[k]) for k in settings.grid}
        if fit == "static":  # no transitions in the static model
            axes.pop("transition_var", None)
        scores = {}
        for extension in range(settings.grid_extensions + 1):
            for point in itertools.product(*axes.values()):
                if point in scores:
                    continue
                values = dict(zip(axes, point, strict=True))
                point_params = {**dcode_params(params, fit), **values}
                ranks = np.concatenate(
                    [validation_ranks(setup, d, fit, point_params) for d in subsets]
                )
                scores[point] = float(ranks.mean())
                rows.append({"fit": fit, **values, "mean_rank": scores[point]})
            best = min(scores, key=lambda p: (scores[p], p))
            grown = {name: _extend(axes[name], best[i]) for i, name in enumerate(axes)}
            if extension == settings.grid_extensions or not any(grown.values()):
                break
            for name, more in grown.items():
                axes[name] = sorted(axes[name] + (more or []))
        chosen[fit] = dict(zip(axes, best, strict=True))
        log.info("validation %s: chose %s (mean rank %.3f)", fit, chosen[fit], scores[best])
    return chosen, rows


def grid_report(validation_rows, chosen) -> dict:
    """``{fit: {parameter: {"grid": values evaluated, "at_edge": bool}}}`` of a validation."""
    report = {}
    for fit, values in chosen.items():
        rows = [r for r in validation_rows if r["fit"] == fit]
        report[fit] = {}
        for name, value in values.items():
            grid = sorted({r[name] for r in rows})
            report[fit][name] = {"grid": grid, "at_edge": value in (grid[0], grid[-1])}
    return report
