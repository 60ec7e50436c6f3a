"""D-CODE's Table 2 protocol and its map on a user's own co-occurrence data: a long table of
counts per (period, row item, column item) (:mod:`embedlab.datasets.own_cooccurrence`), its rows
in the authors' place and its columns in the words'.

Documents. Table 2 ranks the true authors of each paper of the test year; a long table has
counts, not papers. Each (period, row item) with counts is read as one document, written by
that row item alone, its words the row's counts in that period (:func:`with_row_documents`).
Naive Bayes then ranks, for each document of the test period, its row among the subset's rows
given the set of columns it uses: Table 2's "who wrote this?" asked of the table.

Protocol (:func:`rank_own`). The last period is ranked and every method fits the periods before
it (``fit_step = T - 2``); the D-CODE variances are validated as on NIPS, each of the
``val_steps`` periods up to ``fit_step`` predicted from the filter of the periods before it
(:func:`embedlab.datasets.own_papers.dcode_min_periods` periods at least). The pool
(:func:`own_pool`) is the ``pool[0]`` rows with documents in the most fitted periods and the
``pool[1]`` columns they use most, each capped at what the data has. A size ``(a, w)`` of
``dcode.sizes``, drawn by the paper from its pool of ``pool = (100, 500)``, becomes subsets of
the same fractions of this pool (:func:`scaled_size`): ``a * rows / pool[0]`` rows, rounded and
kept within ``[2, rows - 1]`` (so subsets of at least two rows differ), and likewise for the
columns; a dataset as large as NIPS's pool gets the paper's sizes. The methods, references and
their settings are Table 2's (the config's ``dcode`` section); ``fit_step`` is NIPS's and is
replaced by the dataset's.

Map (:func:`last_period_map`): Fig. 4's embedding of the last period, with Fig. 4's settings: D-CODE
fitted on every period, of the ``n_authors`` rows with documents in most periods and the
``n_words`` columns they use most (each capped at what the data has).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from embedlab.artifacts import Artifact
from embedlab.datasets.own_papers import DCODE_MIN_ITEMS, dcode_min_periods
from embedlab.experiments.dcode.figures import Embedding, last_volume_embedding
from embedlab.experiments.dcode.rank import rank_size
from embedlab.experiments.dcode.settings import EmbeddingFigureSettings, RankSettings
from embedlab.experiments.dcode.subsets import PAPER_ARRAYS, prolific, word_usage


def with_row_documents(art: Artifact) -> Artifact:
    """``art`` with the paper arrays of :data:`.subsets.PAPER_ARRAYS` built from its counts:
    one document per (period, row) with a positive count, its one author the row, its words
    the row's counts (an artifact that has papers is returned as it is)."""
    if all(key in art.arrays for key in PAPER_ARRAYS):
        return art
    counts = [sp.csr_matrix(c) for c in art.arrays["counts"]]
    n_rows = counts[0].shape[0]
    rows = [np.flatnonzero(np.asarray(c.sum(axis=1)).ravel() > 0) for c in counts]
    authors = np.concatenate(rows)
    documents = sp.csr_matrix(
        (np.ones(len(authors)), (np.arange(len(authors)), authors)), shape=(len(authors), n_rows)
    )
    arrays = {
        **art.arrays,
        "paper_step": np.concatenate([np.full(len(r), t) for t, r in enumerate(rows)]),
        "paper_words": sp.vstack([c[r] for c, r in zip(counts, rows, strict=True)]).tocsr(),
        "paper_authors": documents,
    }
    return Artifact(art.kind, arrays, art.items, art.meta)


def own_pool(art: Artifact, cap: tuple[int, int], fit_step: int) -> tuple[int, int]:
    """(rows, columns) of the pool of a dataset with documents: at most ``cap[0]`` rows with a
    document up to ``fit_step`` and at most ``cap[1]`` of the columns those rows use."""
    steps = np.asarray(art.arrays["paper_step"])
    documents = sp.csr_matrix(art.arrays["paper_authors"])[steps <= fit_step]
    rows = min(int(cap[0]), int(np.count_nonzero(documents.sum(axis=0))))
    if rows < DCODE_MIN_ITEMS:
        raise ValueError(
            f"{rows} row items have counts up to the fitted period {fit_step} (from 0); the "
            f"protocol draws subsets of at least 2 from a pool of {DCODE_MIN_ITEMS} or more"
        )
    authors, _ = prolific(art, rows, 1, fit_step)
    columns = min(int(cap[1]), int(np.count_nonzero(word_usage(art, authors, fit_step))))
    if columns < DCODE_MIN_ITEMS:
        raise ValueError(
            f"the pool's rows use {columns} column items up to the fitted period; the protocol "
            f"draws subsets of at least 2 from a pool of {DCODE_MIN_ITEMS} or more"
        )
    return rows, columns


def scaled_size(paper_size, paper_pool, pool) -> tuple[int, int]:
    """The subset size of ``pool`` with the fractions that ``paper_size`` has of
    ``paper_pool``: ``floor(size * pool / paper_pool + 1/2)`` each, kept within
    ``[2, pool - 1]``."""
    return tuple(
        int(min(max(np.floor(size * have / paper + 0.5), 2), have - 1))
        for size, paper, have in zip(paper_size, paper_pool, pool, strict=True)
    )


def rank_own(
    art: Artifact, paper_size, observation: str, settings: RankSettings, dataset: str
) -> dict:
    """Table 2's job for the size ``paper_size`` of ``dcode.sizes`` on own dataset ``dataset``
    (module docstring): :func:`.rank.rank_size`'s result, with ``dataset``, ``paper_size``,
    ``pool`` (rows, columns) and ``periods`` (how many; the first, the last fitted and the
    ranked one's labels)."""
    art = with_row_documents(art)
    names = art.meta["step_names"]
    fewest = dcode_min_periods(settings.val_steps)
    if len(names) < fewest:
        raise ValueError(
            f"own dataset {dataset!r}: {len(names)} periods; the rank protocol needs "
            f"{fewest} (val_steps {settings.val_steps} + 2)"
        )
    fit_step = len(names) - 2
    pool = own_pool(art, settings.pool, fit_step)
    size = scaled_size(paper_size, settings.pool, pool)
    own_settings = dataclasses.replace(settings, fit_step=fit_step, pool=pool)
    result = rank_size(art, size, observation, own_settings)
    periods = {"count": len(names), "first": names[0], "fitted": names[fit_step],
               "ranked": names[-1]}  # fmt: skip
    return {
        **result,
        "dataset": dataset,
        "paper_size": [int(v) for v in paper_size],
        "pool": list(pool),
        "periods": periods,
    }


def last_period_map(art: Artifact, settings: EmbeddingFigureSettings) -> Embedding:
    """Fig. 4's embedding of an own dataset's last period (module docstring)."""
    art = with_row_documents(art)
    last = len(art.arrays["counts"]) - 1
    pool = own_pool(art, (settings.n_authors, settings.n_words), last)
    shown = dataclasses.replace(settings, n_authors=pool[0], n_words=pool[1])
    return last_volume_embedding(art, shown)
