"""The SNEST steps of the workflow (run by :mod:`embedlab.steps`): paths in, files out; the
computations are :mod:`.fit`, :mod:`.table1` and :mod:`.figures`."""

from __future__ import annotations

import logging

from embedlab import artifacts, runs, tables
from embedlab.experiments.snest.fit import embed_cell
from embedlab.experiments.snest.settings import EmbedSettings, TableSettings
from embedlab.experiments.snest.table1 import kl_table, table1_markdown

log = logging.getLogger(__name__)


def embed(settings: EmbedSettings, *, data, runs_file, dataset, cell, first=0) -> None:
    """Every restart x grid point of one Table 1 cell on one dataset, all runs kept; of a
    cell split over jobs, the block of ``restarts_per_job`` restarts from restart ``first``
    (the last block takes what is left)."""
    start = int(first)
    per_job = settings.restarts_per_job or settings.restarts
    block = range(start, min(start + per_job, settings.restarts))
    all_runs, meta = embed_cell(artifacts.load_files(data), cell, settings, dataset, block)
    runs.save_runs(runs_file, all_runs, meta)
    if not runs.finished(all_runs):
        log.warning(
            "%s on %s: all %d runs failed (the table reports the cell); the first: %s",
            cell, meta["dataset"], len(all_runs), all_runs[0].error,
        )  # fmt: skip
        return
    best = runs.best_run(all_runs)
    log.info(
        "%s on %s: best KL %.4f (%s, seed %d)",
        cell,
        meta["dataset"],
        best.cost,
        best.params,
        best.seed,
    )


def merge(*, parts, runs_file, dataset, cell) -> None:
    """A split cell's runs file from its blocks (:func:`embed`), as one job would have
    written it: every run in the order of one job's, the best of all, the blocks' meta with
    all the cell's restarts (``backed_off`` where any block backed off)."""
    loaded = {str(part): runs.load_runs(part) for part in parts}
    parts = list(loaded)
    metas = [data["meta"] for data in loaded.values()]
    per_block = {"n_restarts", "first_restart", "backed_off"}
    shared = [{k: v for k, v in m.items() if k not in per_block} for m in metas]
    for part, meta in zip(parts, shared, strict=True):
        if meta["cell"] != cell or meta != shared[0]:
            raise ValueError(f"{part}: not a block of {cell} on {dataset} like {parts[0]}")
    meta = {
        **metas[0],
        "n_restarts": sum(m["n_restarts"] for m in metas),
        "first_restart": min(m["first_restart"] for m in metas),
        "backed_off": any(m["backed_off"] for m in metas),
    }
    runs.merge_runs(loaded, runs_file, meta)
    log.info("%s on %s: %d blocks merged", cell, dataset, len(parts))


def table(settings: TableSettings, *, run_files, paper, csv, md, md_long) -> None:
    """Table 1: the long form (csv and markdown) and the paper's layout (markdown)."""
    rows = kl_table(run_files, paper)
    columns = list(settings.datasets) or list(dict.fromkeys(rows["dataset"]))
    tables.write_table(
        rows, csv, md_long, measured=["seconds_per_run"], title="SNEST Table 1 (long form)"
    )
    artifacts.write_text_atomic(md, table1_markdown(rows, columns, settings.left_out))


def figure(*, runs_file, data, png, pdf, fig) -> None:
    """Fig. 2a, 3 or 4 (``fig``): the best SNEST R^{2,1} run of its dataset."""
    from embedlab.experiments.snest.figures import run_figure
    from embedlab.plots.common import save_figure, stem_of

    drawn = run_figure(fig, runs.load_runs(runs_file), artifacts.load_files(data), where=runs_file)
    save_figure(drawn, stem_of(png, pdf))


def kernel_figure(*, png, pdf) -> None:
    """Fig. 2b: contours of the SNEST output kernel exp(dt^2) / (1 + ds^2) (no input)."""
    from embedlab.plots.common import save_figure, stem_of
    from embedlab.plots.snest import kernel_contour_figure

    save_figure(kernel_contour_figure(), stem_of(png, pdf))
