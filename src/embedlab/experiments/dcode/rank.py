"""One Table 2 job: the author ranking of one subset size and observation model.

Protocol (paper section 4.5): ``subsets`` random subsets of the pool (:mod:`.subsets`). Every
method embeds the subset's count matrices up to ``fit_step`` (our 0-based volume 11, the
paper's t = 12; nothing of volume 12 is seen) and ranks, by Naive Bayes with a uniform prior,
all subset authors for every paper of the test step ``fit_step + 1`` (volume 12 = the paper's
t = 13, 1999) with at least one subset author. A paper enters as its set of distinct words
(``paper_words="set"``, the paper's "set of words"; ``"counts"``, every occurrence, is recorded
beside it). Every true author of a paper is ranked among all candidates (co-authors included,
the paper's "harsh metric"). The metric is the median rank over all (paper, true author) pairs
of a subset (:mod:`embedlab.evaluate.ranking`); the table (:mod:`.table`) gives its mean over
the subsets, with the standard error of that mean and paired tests over the subsets.

The D-CODE variances are first chosen on held-out years (:mod:`.validation`); the methods and
their fits are :mod:`.fits`.
"""

from __future__ import annotations

import time

import numpy as np

from embedlab.artifacts import Artifact
from embedlab.evaluate.ranking import (
    PAPER_WORDS,
    median_rank,
    paper_word_weights,
    true_author_ranks,
)
from embedlab.experiments.dcode.fits import FIT_OF, METHODS, REFERENCES, subset_log_ps
from embedlab.experiments.dcode.settings import RankSettings
from embedlab.experiments.dcode.subsets import RankSetup, test_papers
from embedlab.experiments.dcode.validation import validate_dcode


def block_methods(settings: RankSettings, observation: str) -> list[str]:
    """The methods of ``observation``'s block: the first observation model's runs every method
    and the references; another's the D-CODE variants only (the baselines do not depend on
    the observation model)."""
    if observation not in settings.observations:
        raise ValueError(
            f"observation {observation!r} is not one of dcode.observations "
            f"{list(settings.observations)}"
        )
    for method in [*settings.methods, *settings.references]:
        if method not in METHODS + REFERENCES:
            raise ValueError(f"unknown method {method!r}; expected one of {METHODS + REFERENCES}")
    if observation != settings.observations[0]:
        return [m for m in settings.methods if m in FIT_OF]
    return [*settings.methods, *settings.references]


def _candidates(method: str, counts) -> int:
    """Authors the method could place (LLE: active in the last matrix); all are ranked."""
    if method == "lle":
        return int(np.count_nonzero(counts[-1].sum(axis=1) > 0))
    return int(counts[-1].shape[0])


def evaluate_subset(setup: RankSetup, index: int, methods, params: dict) -> list[dict]:
    """One random subset: the median rank of every method (and both readings of a paper).

    ``params``: ``{method: settings}`` of the fits (:func:`.fits.subset_log_ps`).
    ``median_rank`` / ``mean_rank`` use ``paper_words``; ``median_rank_set`` and
    ``median_rank_counts`` give both readings of a paper. A degenerate LLE embedding, or a
    subset none of whose authors wrote a paper of the test year, gives rows without a rank
    (``status`` says which; the table counts the subsets used); other failures raise.
    """
    settings = setup.settings
    authors, words_idx, counts = setup.subset(index, settings.fit_step)
    pw, pa = test_papers(setup.art, authors, words_idx, settings.fit_step + 1)
    start = time.perf_counter()
    log_ps = subset_log_ps(
        methods, params, counts, settings.seed + index, setup.observation, settings.prediction
    )
    seconds = round(time.perf_counter() - start, 3)
    rows = []
    for method, L in log_ps.items():
        row = {"n_authors": setup.size[0], "n_words": setup.size[1], "subset": index}
        row["method"] = method
        if L is None or not pa:
            status = "no test paper" if not pa else "degenerate"
            row.update(median_rank=np.nan, mean_rank=np.nan, pairs=0, status=status)
            row.update({f"median_rank_{mode}": np.nan for mode in PAPER_WORDS})
        else:
            both = {m: true_author_ranks(L, paper_word_weights(pw, m), pa) for m in PAPER_WORDS}
            ranks = both[settings.paper_words]
            row.update(median_rank=median_rank(ranks), mean_rank=float(ranks.mean()))
            row.update({f"median_rank_{m}": median_rank(r) for m, r in both.items()})
            row.update(pairs=int(ranks.size), status="ok")
        row["candidates"] = _candidates(method, counts)
        rows.append(row)
    rows[0]["seconds"] = seconds  # time of the whole subset, on its first row
    return rows


def rank_size(art: Artifact, size, observation: str, settings: RankSettings) -> dict:
    """Validation, then every method of ``observation``'s block on each subset of ``size``.

    Returns the job's result (its JSON file, read by :mod:`.table`): ``size``,
    ``observation``, ``prediction``, ``fit_step``, ``paper_words``, ``params`` (the fits'
    settings, the validated variances included), ``chosen`` (``{fit: variances}``),
    ``validation`` (every grid point's mean rank) and ``rows`` (one per subset and method,
    :func:`evaluate_subset`).
    """
    methods = block_methods(settings, observation)
    setup = RankSetup.of(art, size, observation, settings)
    params = {m: dict(v) for m, v in settings.params.items()}
    chosen, val_rows = {}, []
    if any(m in FIT_OF for m in methods):
        chosen, val_rows = validate_dcode(setup, params)
        params["dcode"] = {**params.get("dcode", {}), **chosen["dynamic"]}
        params["static"] = chosen["static"]
    rows = []
    for index in range(settings.subsets):
        rows += evaluate_subset(setup, index, methods, params)
    return {
        "size": list(setup.size),
        "observation": observation,
        "prediction": settings.prediction,
        "fit_step": settings.fit_step,
        "paper_words": settings.paper_words,
        "params": params,
        "chosen": chosen,
        "validation": val_rows,
        "rows": rows,
    }
