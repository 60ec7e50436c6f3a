"""The Elastic Embedding steps of the workflow (run by :mod:`embedlab.steps`): paths in, files
out; the computations are :mod:`.sweep` and :mod:`.homotopy`."""

from __future__ import annotations

import pandas as pd

from embedlab import artifacts, runs, tables
from embedlab.experiments.ee.homotopy import homotopy_comparison
from embedlab.experiments.ee.settings import HomotopySettings, SweepSettings
from embedlab.experiments.ee.sweep import sweep as sweep_dataset
from embedlab.settings import LeftOutSettings


def sweep(settings: SweepSettings, *, data, maps, csv, dataset) -> None:
    """One dataset's lambda sweep: the maps (npz) and their metrics (csv)."""
    art = artifacts.load_files(data, "vectors")
    rows, embeddings = sweep_dataset(art.arrays["X"], art.arrays.get("labels"), dataset, settings)
    tables.write_csv(rows, csv, measured=["seconds"])
    arrays = {
        "maps": embeddings,
        "kinds": rows["negative_weights"].to_numpy(str),
        "lambdas": rows["lam"].to_numpy(float),
    }
    meta = {"dataset": dataset, "perplexity": settings.perplexity, "max_iter": settings.max_iter}
    runs.save_npz(maps, arrays, {"meta": meta})


def table(settings: LeftOutSettings, *, sweeps, csv, md) -> None:
    """Every dataset's sweep metrics in one table."""
    rows = pd.concat([pd.read_csv(f) for f in sweeps], ignore_index=True)
    tables.write_table(
        rows,
        csv,
        md,
        measured=["seconds"],
        title="Elastic Embedding: lambda sweep (1-NN error, trustworthiness k=10)",
        after=tables.left_out_note(settings.left_out),
    )


def figure(*, data, maps, csv, png, pdf, dataset) -> None:
    """The lambda grid of one dataset (rows: distance / uniform weights)."""
    from embedlab.plots.common import save_figure, stem_of
    from embedlab.plots.ee import sweep_figure

    art = artifacts.load_files(data, "vectors")
    embeddings = runs.load_npz(maps)[0]["maps"]
    colour = art.arrays.get("t", art.arrays.get("labels"))
    drawn = sweep_figure(embeddings, pd.read_csv(csv), colour, dataset)
    save_figure(drawn, stem_of(png, pdf), tight=True)


def homotopy(settings: HomotopySettings, *, data, csv, md, maps) -> None:
    """The Swiss roll's homotopy comparison: the table and each schedule's map (npz)."""
    art = artifacts.load_files(data, "vectors")
    rows, embeddings = homotopy_comparison(art.arrays["X"], art.arrays["t"], settings)
    tables.write_table(
        rows,
        csv,
        md,
        measured=["seconds"],
        title="Elastic Embedding on the Swiss roll: homotopy vs fixed lambda",
    )
    runs.save_npz(maps, embeddings, {"meta": {"schedules": list(embeddings)}})


def homotopy_figure(*, data, csv, maps, png, pdf) -> None:
    """One panel per schedule, coloured by the roll angle, in the table's order (a job of its
    own: redrawing it reruns no fit)."""
    from embedlab.plots.common import save_figure, stem_of
    from embedlab.plots.ee import homotopy_figure as draw

    rows = pd.read_csv(csv)
    embeddings = runs.load_npz(maps)[0]
    in_order = {name: embeddings[name] for name in rows["schedule"]}
    t = artifacts.load_files(data, "vectors").arrays["t"]
    save_figure(draw(in_order, rows, t), stem_of(png, pdf), tight=True)
