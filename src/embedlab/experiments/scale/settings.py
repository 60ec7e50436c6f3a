"""Settings of the scale steps: fields named as the properties of the config's ``scale``
section (``workflow/schemas/scale.schema.yaml``, which holds their defaults and reasons)."""

from __future__ import annotations

from dataclasses import dataclass

from embedlab.settings import Derived, Settings

#: properties of the config section (key) that the workflow reads to lay out the jobs, not a
#: step: the dataset embedded, which methods get a job, each method's repulsion (the job's
#: own entry reaches its step: EmbedSettings.repulsion)
WORKFLOW_KEYS = {"scale": {"dataset", "methods", "repulsion"}}


@dataclass(frozen=True)
class AffinitiesSettings(Settings):
    """``scale``: the sparse perplexity P shared by every method."""

    perplexity: float
    pca_dims: int  # PCA before the neighbour search
    seed: int


@dataclass(frozen=True)
class EmbedSettings(Settings):
    """``scale``: one method's map of the shared P (:mod:`.schedule` reads the schedule)."""

    max_iter: int
    learning_rate: str | float  # "auto" or a number (our gradient's units)
    exaggeration: float
    exaggeration_epochs: int
    momentum: tuple[float, ...]
    momentum_epochs: tuple[int, ...]
    #: SNEST's own: time_ratio (learning_rate_time = time_ratio x learning_rate),
    #: exaggeration, exaggeration_epochs
    snest: dict
    ee: dict  # lam_n: EE's lambda = lam_n / n
    #: "exact" or "fft": the job's method's entry of the section's ``repulsion`` (openTSNE
    #: always runs its FFT)
    repulsion: Derived[str]
    seed: int
    log_every: int
    cost_every: int  # epochs between our methods' cost evaluations (the gradient every epoch)
