"""The scale steps of the workflow (run by :mod:`embedlab.steps`): paths in, files out; the
computations are :mod:`.affinities`, :mod:`.fits` and :mod:`.measures`."""

from __future__ import annotations

import dataclasses

import pandas as pd

from embedlab import artifacts, runs
from embedlab.experiments.scale.affinities import (
    load_affinities,
    save_affinities,
    sparse_affinities,
)
from embedlab.experiments.scale.fits import LABELS, fit_map, repulsion_note
from embedlab.experiments.scale.measures import scale_table, write_scale_table
from embedlab.experiments.scale.schedule import learning_rate
from embedlab.experiments.scale.settings import AffinitiesSettings, EmbedSettings


def affinities(settings: AffinitiesSettings, *, data, sparse_p) -> None:
    """The dataset's sparse P, with its neighbours, PCA scores and labels (one file)."""
    art = artifacts.load_files(data)
    aff, info = sparse_affinities(art, settings, where=str(artifacts.folder_of(data)))
    save_affinities(sparse_p, aff, art.arrays["labels"], info)


def embed(settings: EmbedSettings, *, sparse_p, map_file, method) -> None:
    """One method's map of the shared P, with its wall time and how its repulsion ran; the
    job's threads (NUMBA_NUM_THREADS, set by the runner) are openTSNE's too."""
    import numba

    arrays, info = load_affinities(sparse_p)
    n = arrays["P"].shape[0]
    fit = fit_map(method, arrays["P"], arrays["Z"], settings, numba.config.NUMBA_NUM_THREADS)
    meta = {
        "method": method,
        "label": LABELS[method],
        "n": n,
        "seconds": fit.seconds,
        "epochs": fit.epochs,
        "repulsion": repulsion_note(method, settings.repulsion, fit.exact_calls, fit.epochs),
        "settings": dataclasses.asdict(settings),
        "learning_rate": learning_rate(settings, n),
        "affinities": info,
    }
    runs.save_npz(map_file, {"embedding": fit.embedding, "cost_trace": fit.cost_trace}, meta)


def table(*, sparse_p, maps, csv, md) -> None:
    """Every map measured alike, in one table with the targets' ratios."""
    rows, info = scale_table(sparse_p, maps)
    write_scale_table(rows, info, csv, md)


def figure(*, sparse_p, tsne, snest, table_csv, png, pdf) -> None:
    """SNEST R^{2,1} by digit and by time beside t-SNE R^2, each with its measures."""
    from embedlab.plots.common import save_figure, stem_of
    from embedlab.plots.scale import maps_figure

    arrays, info = load_affinities(sparse_p)
    measured = pd.read_csv(table_csv).set_index("method")
    maps = {m: runs.load_npz(f)[0]["embedding"] for m, f in (("tsne", tsne), ("snest", snest))}
    notes = {
        m: f"exact KL {measured.loc[m, 'exact_kl']:.3f}, "
        f"1-NN error {measured.loc[m, 'nn1_error']:.3f}"
        for m in maps
    }
    title = f"{info['dataset']}, n = {info['n']}: one sparse P (perplexity {info['perplexity']:g})"
    drawn = maps_figure(maps["tsne"], maps["snest"], arrays["labels"], notes, title)
    save_figure(drawn, stem_of(png, pdf))
