"""The report's steps (run by :mod:`embedlab.steps`): paths in, tables out."""

from __future__ import annotations

import logging
from pathlib import Path

from embedlab.report.settings import DatasetsSettings, PageSettings, TimingsSettings

log = logging.getLogger(__name__)


def datasets(settings: DatasetsSettings, *, meta, csv, md) -> None:
    """Counts of every built artifact (its ``meta.json``) beside the papers' counts, and
    which papers run each own dataset."""
    from embedlab import tables

    counts = tables.dataset_summary(meta)
    own = tables.own_dataset_notes(settings.own) if settings.own else ""
    title = "Datasets: our counts beside the papers'"
    tables.write_table(counts, csv, md, measured=(), title=title, after=own)
    log.info("wrote %s and %s (%d datasets)", csv, md, len(counts))


def page(settings: PageSettings, *, csv, html, **wildcards) -> None:
    """The CSV table ``csv`` as a page of the HTML report (:mod:`embedlab.report.pages`),
    which shows it inline where it offers the CSV only as a download. ``wildcards``: those of
    the table's name (a t-STE table's protocol and dataset), already in the title."""
    from embedlab.report import pages

    table = pages.write_page(csv, html, settings.title)
    log.info("wrote %s: %s (%d rows)", html, settings.title, len(table))


def papers(*, tables, values, meta, csv, md) -> None:
    """One line per published number: the paper's value (``values``, CSV files), ours (the
    tables in the folder of ``csv``), the difference and a verdict."""
    from embedlab import summary

    lines = summary.summary_table(values, str(Path(csv).parent), meta)
    title = summary.write_summary(lines, csv, md)
    log.info("wrote %s and %s: %s", csv, md, title)


def timings(settings: TimingsSettings, *, csv, md) -> None:
    """Every job's benchmark file summed per paper and rule."""
    from embedlab import timings as timing

    timing.write_timings(settings.benchmarks, csv, md, None, None)
