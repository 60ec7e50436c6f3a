"""Settings of the report's steps: each is derived by the workflow (no config section)."""

from __future__ import annotations

from dataclasses import dataclass

from embedlab.settings import Derived, Settings


@dataclass(frozen=True)
class DatasetsSettings(Settings):
    """own dataset -> {paper: "" (runs it) or why it does not}."""

    own: Derived[dict]


@dataclass(frozen=True)
class TimingsSettings(Settings):
    """The folder of the run's benchmark files (Snakemake's ``benchmark:`` of each rule)."""

    benchmarks: Derived[str]


@dataclass(frozen=True)
class PageSettings(Settings):
    """The title of a table's page in the report (its category and label there)."""

    title: Derived[str]
