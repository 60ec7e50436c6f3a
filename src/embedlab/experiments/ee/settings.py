"""Settings of the Elastic Embedding steps: fields named as the properties of the config's
``ee`` section (``workflow/schemas/ee.schema.yaml``, which holds their defaults)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from embedlab.settings import Settings

#: properties of the config section (key) that the workflow reads to lay out the jobs, not a
#: step: which datasets get a sweep, the homotopy job's input
WORKFLOW_KEYS = {"ee": {"datasets", "own_datasets"}, "ee.homotopy": {"dataset"}}


@dataclass(frozen=True)
class SweepSettings(Settings):
    """``ee``: one dataset's lambda sweep (per-dataset values resolved)."""

    lambdas: dict  # {"distance": [...], "uniform": [...]}
    perplexity: float
    learning_rates: tuple[float, ...]
    max_iter: int



@dataclass(frozen=True)
class HomotopySettings(Settings):
    """``ee.homotopy``: fixed lambda against the homotopy schedules at one budget."""

    section: ClassVar[str] = "ee.homotopy"

    lam: float
    perplexity: float
    budget: int
    start: float
    logspace_steps: int
    learning_rate: float
