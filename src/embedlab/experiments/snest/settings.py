"""Settings of the SNEST steps: fields named as the properties of the config's ``snest``
section (``workflow/schemas/snest.schema.yaml``, which holds their defaults)."""

from __future__ import annotations

from dataclasses import dataclass

from embedlab.settings import Derived, Settings

#: properties of the config section (key) that the workflow reads to lay out the jobs, not a
#: step: which datasets and cells get a job, the threads of a job, which figures are drawn;
#: ``grid`` and ``grid_by_dataset``, which it merges into each job's grid (EmbedSettings.grid)
WORKFLOW_KEYS = {
    "snest": {
        "datasets",
        "own_datasets",
        "cells",
        "threads",
        "figures",
        "grid",
        "grid_by_dataset",
    }
}


@dataclass(frozen=True)
class EmbedSettings(Settings):
    """``snest``: every restart x grid point of one Table 1 cell on one dataset, or of one
    block of its restarts (per-dataset values resolved)."""

    #: the job's (dataset, cell) grid: ``grid.default``, the method's ``grid``, the dataset's
    #: ``grid_by_dataset`` default and method entries merged key by key in that order
    #: (workflow/rules/snest_helpers.smk); lists of values per estimator parameter
    grid: Derived[dict]
    restarts: int
    #: restarts one job runs (0: all); a cell of more runs as blocks (rule snest_embed_part)
    restarts_per_job: int
    seed: int
    max_iter: int
    log_every: int
    #: rate_window, plateau_tol, abandon_margin of embedlab.optimize.GradientDescent
    stopping: dict
    precision: str
    perplexity: float


@dataclass(frozen=True)
class TableSettings(Settings):
    """``snest``: Table 1 from every cell's runs."""

    #: Table 1's columns in order: the papers' datasets, then the own datasets SNEST takes
    #: (the workflow adds them to the section's list)
    datasets: tuple[str, ...]
    left_out: Derived[dict]  # own dataset -> why the paper does not run it
