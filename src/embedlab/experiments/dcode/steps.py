"""The D-CODE steps of the workflow (run by :mod:`embedlab.steps`): paths in, files out; the
computations are :mod:`.rank`, :mod:`.table` and :mod:`.figures`.

Each figure is two jobs: its computation (``synthetic``, ``embedding``, ``own_map``, ``pairs``)
publishes its table and writes everything the drawing needs to one data file (``drawn``, an
npz by :func:`embedlab.runs.save_npz`, as Elastic Embedding's maps); its drawing
(``synthetic_figure``, ``embedding_figure``, ``own_map_figure``, ``pairs_figure``) reads that
file alone and writes the png and pdf. A drawing step calls no computation, so its code
fingerprint (:mod:`embedlab.codeprint`) holds the plot and not the fits: an edit to a plot
reruns the drawing jobs only, and an edit to a computation reruns its job, whose new data file
reruns the drawing.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from embedlab import artifacts, runs, tables
from embedlab.experiments.dcode.figures import (
    Embedding,
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


def _save_drawing(path, arrays: dict, frames: dict[str, pd.DataFrame], **info) -> None:
    """A figure's data file: ``arrays``, each table of ``frames`` as its columns in the JSON
    info (JSON keeps every digit of a float) and the other ``info`` (titles, labels)."""
    tabled = {name: frame.to_dict(orient="list") for name, frame in frames.items()}
    runs.save_npz(path, arrays, {**info, "frames": tabled})


def _load_drawing(path) -> tuple[dict, dict[str, pd.DataFrame], dict]:
    """(arrays, tables, info) of a file written by :func:`_save_drawing`."""
    arrays, info = runs.load_npz(path)
    frames = {name: pd.DataFrame(columns) for name, columns in info.pop("frames").items()}
    return arrays, frames, info


def synthetic(settings: SyntheticFigureSettings, *, corpus, drawn, ranks) -> None:
    """Fig. 3 (synthetic): the X authors' rank trajectories (csv) and what the figure draws:
    the entities' means and conditional covariances at the three epochs, their names, the
    trajectories (``drawn``)."""
    art = artifacts.load_files(corpus, "cooccurrence")
    by_step, model = synthetic_ranks(art, settings)
    tables.write_csv(by_step, ranks, measured=())
    names = items_of(art, "author")["name"].tolist() + items_of(art, "word")["name"].tolist()
    epochs = list(settings.epochs)
    arrays = {
        "means": model.means_[epochs],
        "covariances": model.conditional_covariances_[epochs],
        "epochs": np.asarray(epochs),
    }
    _save_drawing(drawn, arrays, {"ranks": by_step}, names=names)


def synthetic_figure(*, drawn, png, pdf) -> None:
    """Fig. 3 from its data file: ellipses at three epochs and the rank trajectories."""
    from embedlab.plots.common import save_figure, stem_of
    from embedlab.plots.dcode import synthetic_figure as draw

    arrays, frames, info = _load_drawing(drawn)
    fig = draw(
        arrays["means"], arrays["covariances"], info["names"], frames["ranks"], arrays["epochs"]
    )
    save_figure(fig, stem_of(png, pdf))


#: how a map's file names its authors' labels (``author_label``): a NIPS author key
#: "Lastname_F" by its surname (as the paper), an own dataset's row item by its name
AUTHOR_LABELS = ("surname", "name")


def _save_embedding(
    placed: Embedding, coordinates, drawn, title: str, author_label: str, roles: list[str]
) -> None:
    """A Fig. 4 map's coordinates (csv) and its data file: the coordinates, the last step's
    counts among the embedded entities, the title, how authors are labelled (one of
    :data:`AUTHOR_LABELS`) and the names of the two kinds of entity (``roles``)."""
    tables.write_csv(placed.coordinates, coordinates, measured=())
    info = {"title": title, "author_label": author_label, "roles": roles}
    _save_drawing(drawn, {"counts": placed.counts}, {"coordinates": placed.coordinates}, **info)


def embedding(settings: EmbeddingFigureSettings, *, corpus, drawn, coordinates) -> None:
    """Fig. 4: the last NIPS volume's embedding (coordinates and data file)."""
    placed = last_volume_embedding(artifacts.load_files(corpus, "cooccurrence"), settings)
    _save_embedding(placed, coordinates, drawn, placed.title, "surname", ["authors", "words"])


def own_map(settings: EmbeddingFigureSettings, *, corpus, drawn, coordinates, dataset) -> None:
    """Fig. 4's map of own co-occurrence dataset ``dataset``'s last period (coordinates and data
    file), its row items labelled by their names."""
    from embedlab.experiments.dcode.own import last_period_map

    placed = last_period_map(artifacts.load_files(corpus, "cooccurrence"), settings)
    title = f"{dataset}, period {placed.title}"
    _save_embedding(placed, coordinates, drawn, title, "name", ["row items", "column items"])


def embedding_figure(*, drawn, png, pdf) -> None:
    """A Fig. 4 map (NIPS's, or an own dataset's) from its data file."""
    from embedlab.plots.common import save_figure, stem_of, surname
    from embedlab.plots.dcode import nips_figure

    arrays, frames, info = _load_drawing(drawn)
    placed = frames["coordinates"]
    role, names = placed["role"].to_numpy(), placed["name"].to_numpy()
    if info["author_label"] not in AUTHOR_LABELS:
        raise ValueError(f"{drawn}: author_label {info['author_label']!r} not in {AUTHOR_LABELS}")
    label = surname if info["author_label"] == "surname" else str
    fig = nips_figure(
        placed[["x", "y"]].to_numpy(),
        list(names[role == "author"]),
        list(names[role == "word"]),
        arrays["counts"],
        info["title"],
        author_label=label,
        roles=tuple(info["roles"]),
    )
    save_figure(fig, stem_of(png, pdf))


def own_map_figure(*, drawn, png, pdf, dataset) -> None:
    """An own dataset's map from its data file, drawn as Fig. 4 (``dataset``, the rule's
    wildcard, is already in the file's title)."""
    embedding_figure(drawn=drawn, png=png, pdf=pdf)


def pairs(settings: PairsFigureSettings, *, corpus, drawn, trajectories) -> None:
    """Fig. 5: each (author, word) pair's rank over the volumes (csv) and the data file: the
    trajectories and the number of embedded authors."""
    by_step, n_embedded = pair_trajectories(artifacts.load_files(corpus, "cooccurrence"), settings)
    tables.write_csv(by_step, trajectories, measured=())
    _save_drawing(drawn, {}, {"trajectories": by_step}, n_authors=n_embedded)


def pairs_figure(*, drawn, png, pdf) -> None:
    """Fig. 5 from its data file: per pair, the D-CODE and Dynamic PCA ranks and the empirical
    p(a | w) over the volumes."""
    from embedlab.plots.common import save_figure, stem_of
    from embedlab.plots.dcode import pairs_figure as draw

    _, frames, info = _load_drawing(drawn)
    save_figure(draw(frames["trajectories"], info["n_authors"]), stem_of(png, pdf))
