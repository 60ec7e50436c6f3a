"""The D-CODE steps of the workflow (run by :mod:`embedlab.steps`): paths in, files out; the
computations are :mod:`.rank`, :mod:`.table` and :mod:`.figures`."""

from __future__ import annotations

import json

from embedlab import artifacts, tables
from embedlab.experiments.dcode.figures import (
    last_volume_embedding,
    pair_trajectories,
    synthetic_ranks,
)
from embedlab.experiments.dcode.rank import rank_size
from embedlab.experiments.dcode.settings import (
    EmbeddingFigureSettings,
    PairsFigureSettings,
    RankSettings,
    SyntheticFigureSettings,
)
from embedlab.experiments.dcode.subsets import items_of
from embedlab.experiments.dcode.table import rank_table, table_markdown
from embedlab.settings import LeftOutSettings


def rank(settings: RankSettings, *, corpus, result, observation, a, w) -> None:
    """Table 2 for subsets of ``a`` authors and ``w`` words under ``observation``: the
    validation of the D-CODE variances and every method's ranks per subset (JSON)."""
    outcome = rank_size(
        artifacts.load_files(corpus, "cooccurrence"), (int(a), int(w)), observation, settings
    )
    artifacts.write_text_atomic(result, json.dumps(outcome, indent=1, default=float))


def own_rank(settings: RankSettings, *, corpus, result, dataset, observation, a, w) -> None:
    """Table 2's protocol on own co-occurrence dataset ``dataset`` for the paper's size ``a``
    authors, ``w`` words, scaled to the dataset's pool (JSON, as :func:`rank`'s)."""
    from embedlab.experiments.dcode.own import rank_own

    art = artifacts.load_files(corpus, "cooccurrence")
    outcome = rank_own(art, (int(a), int(w)), observation, settings, dataset)
    artifacts.write_text_atomic(result, json.dumps(outcome, indent=1, default=float))


def table(settings: LeftOutSettings, *, results, own_results, paper, csv, md, md_long) -> None:
    """Table 2: our median ranks beside the paper's, then the own datasets' (csv and its long
    markdown), and the markdown page with the paired tests, the validated variances and the
    own datasets left out."""
    long, tests, meta = rank_table(results, paper, own_results)
    tables.write_table(long, csv, md_long, measured=(), title="D-CODE Table 2 (long form)")
    artifacts.write_text_atomic(md, table_markdown(long, tests, meta, settings.left_out))


def synthetic(settings: SyntheticFigureSettings, *, corpus, png, pdf, ranks) -> None:
    """Fig. 3 (synthetic): ellipses at three epochs and the X authors' rank trajectories."""
    from embedlab.plots.common import save_figure, stem_of
    from embedlab.plots.dcode import synthetic_figure

    art = artifacts.load_files(corpus, "cooccurrence")
    by_step, model = synthetic_ranks(art, settings)
    tables.write_csv(by_step, ranks, measured=())
    names = items_of(art, "author")["name"].tolist() + items_of(art, "word")["name"].tolist()
    save_figure(synthetic_figure(model, names, by_step, settings.epochs), stem_of(png, pdf))


def _save_embedding(placed, coordinates, png, pdf, title: str, **labelling) -> None:
    """A Fig. 4 embedding's coordinates (csv) and its drawing (png, pdf); ``labelling``:
    :func:`embedlab.plots.dcode.nips_figure`'s ``author_label`` and ``roles``."""
    from embedlab.plots.common import save_figure, stem_of
    from embedlab.plots.dcode import nips_figure

    tables.write_csv(placed.coordinates, coordinates, measured=())
    xy = placed.coordinates[["x", "y"]].to_numpy()
    drawn = nips_figure(xy, placed.authors, placed.words, placed.counts, title, **labelling)
    save_figure(drawn, stem_of(png, pdf))


def embedding(settings: EmbeddingFigureSettings, *, corpus, png, pdf, coordinates) -> None:
    """Fig. 4: the last NIPS volume's embedding (figure and coordinates)."""
    placed = last_volume_embedding(artifacts.load_files(corpus, "cooccurrence"), settings)
    _save_embedding(placed, coordinates, png, pdf, placed.title)


def own_map(
    settings: EmbeddingFigureSettings, *, corpus, png, pdf, coordinates, dataset
) -> None:
    """Fig. 4's map of own co-occurrence dataset ``dataset``'s last period (figure and
    coordinates)."""
    from embedlab.experiments.dcode.own import last_period_map

    placed = last_period_map(artifacts.load_files(corpus, "cooccurrence"), settings)
    title = f"{dataset}, period {placed.title}"
    roles = ("row items", "column items")
    _save_embedding(placed, coordinates, png, pdf, title, author_label=str, roles=roles)


def pairs(settings: PairsFigureSettings, *, corpus, png, pdf, trajectories) -> None:
    """Fig. 5: each (author, word) pair's rank over the volumes (figure and trajectories)."""
    from embedlab.plots.common import save_figure, stem_of
    from embedlab.plots.dcode import pairs_figure

    by_step, n_embedded = pair_trajectories(artifacts.load_files(corpus, "cooccurrence"), settings)
    tables.write_csv(by_step, trajectories, measured=())
    save_figure(pairs_figure(by_step, n_embedded), stem_of(png, pdf))
