"""The t-STE steps of the workflow (run by :mod:`embedlab.steps`): paths in, files out; the
computations are :mod:`.paper_text`, :mod:`.authors`, :mod:`.fig2`, :mod:`.claims` and
:mod:`.maps`.

Wildcards of a metrics job: ``reading`` (the folder: ``tste``, ``tste_authors`` or
``tste_authors_figure``), ``dataset``, ``method``, and ``index`` (a search job: the grid
value's position) or ``part`` (a part job: ``fold<k>``, or ``nn`` for the authors' 1-NN fits).

A step's fingerprint follows names (embedlab.codeprint): no local variable or parameter here
is named as a step, or that step's code would count as this one's."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from embedlab import artifacts, runs, tables
from embedlab.experiments.tste.authors import authors_part as run_authors_part
from embedlab.experiments.tste.authors import authors_search_value, load_search
from embedlab.experiments.tste.claims import claims_table, claims_title
from embedlab.experiments.tste.fig2 import fig2_table, fig2_title
from embedlab.experiments.tste.maps import embed_map
from embedlab.experiments.tste.paper_text import (
    load_validation,
    paper_part,
    validation_errors,
    validation_set,
)
from embedlab.experiments.tste.protocol import (
    dataset_of,
    load_triplets,
    merge_parts,
    protocol_of,
)
from embedlab.experiments.tste.settings import (
    AuthorsSettings,
    ClaimsSettings,
    MapSettings,
    PaperTextSettings,
)

log = logging.getLogger(__name__)


def _grid_value(grid: dict, index: str, method: str):
    """(name, value) of the ``index``-th value of a method's one-parameter ``grid``."""
    if len(grid) != 1:
        raise ValueError(f"{method}: a search needs a grid of one parameter, got {grid}")
    ((name, values),) = grid.items()
    if not 0 <= int(index) < len(values):
        raise ValueError(f"{method}: no value {index} in the grid {name} = {list(values)}")
    return name, values[int(index)]


def _fold_number(name: str) -> int:
    """k of a part ``fold<k>``."""
    if not name.startswith("fold") or not name.removeprefix("fold").isdigit():
        raise ValueError(f"part {name!r}: expected fold<k>")
    return int(name.removeprefix("fold"))


def search(settings: PaperTextSettings, *, data, npz, reading, dataset, method, index) -> None:
    """The paper text's validation of one grid value for one (dataset, method): its triplet
    error per dimension (:func:`.paper_text.validation_errors`)."""
    name, value = _grid_value(settings.grid, index, method)
    trip, n, _ = load_triplets(artifacts.folder_of(data), settings.max_triplets, settings.seed)
    train = validation_set(trip, settings.n_folds, settings.seed)
    errors = validation_errors(method, name, value, train, n, settings=settings)
    log.info("%s %s %s %s = %s: errors %s", reading, dataset, method, name, value, errors)
    arrays = {"dims": np.array(list(errors)), "errors": np.array(list(errors.values()))}
    runs.save_npz(npz, arrays, {"method": method, "name": name, "value": value})


def fold(
    settings: PaperTextSettings, *, data, search_files, csv, reading, dataset, method, part
) -> None:
    """One fold's fits of the paper text's protocol for one (dataset, method), with the values
    that the validation files (``search_files``, in grid order) chose
    (:func:`.paper_text.paper_part`)."""
    log.info("%s %s %s %s", reading, dataset, method, part)
    validation = load_validation(search_files, settings.grid)
    rows = paper_part(
        artifacts.folder_of(data), method, _fold_number(part), validation, settings=settings
    )
    tables.write_csv(rows, csv, measured=["seconds"])


def authors_search(
    settings: AuthorsSettings, *, data, npz, reading, dataset, method, index
) -> None:
    """The authors' search of one grid value for one (dataset, method): its violations, and
    for a K form the kernel's embedding (:func:`.authors.authors_search_value`)."""
    name, value = _grid_value(settings.grid, index, method)
    trip, n, _, allow_self = load_triplets(
        artifacts.folder_of(data), settings.max_triplets, settings.seed, with_self=True
    )
    violations, Y = authors_search_value(
        method, name, value, trip, n, allow_self, settings=settings
    )
    log.info("%s %s %s %s = %s: %d violations", reading, dataset, method, name, value, violations)
    info = {"method": method, "name": name, "value": value, "violations": violations}
    runs.save_npz(npz, {"embedding": np.empty((0, 0)) if Y is None else Y}, info)


def authors_part(
    settings: AuthorsSettings, *, data, search_files, csv, reading, dataset, method, part
) -> None:
    """One part of the authors' protocol for one (dataset, method): the 1-NN fits (``nn``) or
    one fold's fits, with the value the search files chose (:func:`.authors.authors_part`)."""
    log.info("%s %s %s %s", reading, dataset, method, part)
    chosen = load_search(search_files, settings.grid)
    number = -1 if part == "nn" else _fold_number(part)
    rows = run_authors_part(artifacts.folder_of(data), method, number, chosen, settings=settings)
    tables.write_csv(rows, csv, measured=["seconds"])


def merge(*, parts, csv, reading, dataset, method) -> None:
    """One (dataset, method)'s metrics CSV from its parts, under any reading."""
    merged = merge_parts(pd.read_csv(p) for p in parts)
    found = sorted(set(zip(merged["dataset"].astype(str), merged["method"], strict=True)))
    if found != [(dataset, method)]:
        raise ValueError(f"{reading}/{dataset}/{method}: the parts hold rows of {found}")
    tables.write_csv(merged, csv, measured=["seconds"])


def table(*, metrics, csv, md, prefix, dataset) -> None:
    """Fig. 2 of one dataset as a table (means over folds) under the protocol of ``prefix``."""
    rows = fig2_table(metrics)
    title = fig2_title(dataset, protocol_of(prefix), rows, metrics)
    tables.write_table(rows, csv, md, measured=(), title=title)


def claims(settings: ClaimsSettings, *, fig2_tables, paper, md, csv, prefix) -> None:
    """The paper's claims checked on the Fig. 2 tables of the protocol of ``prefix``."""
    protocol = protocol_of(prefix)
    by_dataset = {dataset_of(p, protocol): pd.read_csv(p) for p in fig2_tables}
    tables.write_table(
        claims_table(by_dataset, paper),
        csv,
        md,
        measured=(),
        title=claims_title(protocol),
        after=tables.left_out_note(settings.left_out),
    )


def embedding(settings: MapSettings, *, data, npz, maps, dataset, method) -> None:
    """A 2-D map of all triplets of one dataset (Figs. 3 and 4; ``maps``: the folder)."""
    log.info("%s %s %s: protocol %s", maps, dataset, method, settings.protocol)
    embed_map(
        artifacts.folder_of(data),
        method,
        npz,
        seed=settings.seed,
        max_iter=settings.max_iter,
        protocol=settings.protocol,
        max_triplets=settings.max_triplets,
        settings=settings.solver,
    )


def figure(*, sources, data, png, pdf, prefix, fig) -> None:
    """Fig. 2 (``sources``: the protocol's tables), Fig. 3 (the maps) or Fig. 4 (the music
    map; ``data``: the music artifact, whose items name the genres)."""
    from embedlab import artifacts
    from embedlab.experiments.tste.fig2 import degenerate_by_metric, figure_title
    from embedlab.experiments.tste.maps import load_map
    from embedlab.plots import tste as plots
    from embedlab.plots.common import save_figure, stem_of

    protocol = protocol_of(prefix)
    if fig == "fig2":
        by_dataset = {dataset_of(p, protocol): pd.read_csv(p) for p in sources}
        degenerate = {name: degenerate_by_metric(t) for name, t in by_dataset.items()}
        title = figure_title(protocol, degenerate)
        drawn = plots.fig2(by_dataset, title=title, degenerate=degenerate)
    elif fig == "fig3":
        drawn = plots.fig3([load_map(p) for p in sources])
    else:
        (path,) = sources
        Y, _, meta = load_map(path)
        genres = artifacts.load(artifacts.folder_of(data)).items["genre"].to_numpy()
        drawn = plots.fig4(Y, genres, meta)
    save_figure(drawn, stem_of(png, pdf))
