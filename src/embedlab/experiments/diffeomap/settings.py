"""Settings of the Diffeomap steps: fields named as the properties of the config's
``diffeomap`` section (``workflow/schemas/diffeomap.schema.yaml``, which holds their defaults).

A dataset's entry of ``diffeomap.datasets`` is not one section the settings could name: the
workflow resolves what a job reads of it (and of the stage settings) into derived fields, so
a changed entry reruns that dataset's jobs only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from embedlab.settings import Derived, Settings

#: properties of the config section (key) that the workflow reads to lay out the jobs, not a
#: step: which datasets, tables and figures; each dataset's entry (its grid and threads; what
#: prepares its data, handed to the steps as ``preparation``); the stage settings, resolved
#: per stage and dataset into a fit's ``p``, ``n_basis``, ``max_iter`` and ``grid``
WORKFLOW_KEYS = {
    "diffeomap": {
        "own_datasets",
        "table_datasets",
        "figures",
        "datasets",
        "dataset_defaults",
        "grid_settings",
        "final_settings",
        "full_set",
    },
    # which datasets get the GP-LVM maps, and which of the two models
    "diffeomap.gplvm": {"datasets", "methods"},
}


@dataclass(frozen=True)
class Preparation(Settings):
    """How a dataset is prepared for its fits and baselines: the keys of its
    ``diffeomap.datasets`` entry (schema ``$defs/dataset``) other than ``grid`` and
    ``threads``, None where the entry has none (no subset, no PCA, no author classes)."""

    subsample: int | None  # a random subset of this many rows (seeded)
    pca_dims: int | None  # X replaced by its first principal components
    top_authors: int | None  # NIPS text: classes from the K most prolific authors
    author_match: str  # "exactly_one" or "any" (with top_authors)
    use_labels: bool  # False: no classes (mocap, whose labels are frame numbers)
    centre_frames: bool  # mocap: each frame's marker centroid subtracted


@dataclass(frozen=True)
class FitSettings(Settings):
    """``diffeomap``: one dataset's Diffeomap fits at one stage (grid, final or full_set):
    every point of ``grid``, or the best point of the stage-1 file where ``grid`` is None."""

    seed: int
    eps: float
    optimizer: str
    formulation: str
    p: Derived[int]  # the stage's time steps (grid_settings, final_settings or full_set)
    n_basis: Derived[int | None]  # reduced-set size; None: every distinct point (full_set)
    max_iter: Derived[int]
    grid: Derived[dict | None]  # {"sigma_rel": [...], "lam": [...]}
    preparation: Derived[Preparation]  # the dataset's entry, made with the settings


@dataclass(frozen=True)
class BaselineSettings(Settings):
    """``diffeomap``: one dataset's baseline maps (the same data as its fits)."""

    seed: int
    baselines: tuple[str, ...]
    isomap_neighbors: int
    preparation: Derived[Preparation]  # the dataset's entry, made with the settings



@dataclass(frozen=True)
class AuthorSetSettings(Settings):
    """``diffeomap``: the NIPS text author-set readings, on the data its fits use."""

    seed: int
    pca_dims: Derived[int | None]  # of nips_text's entry


@dataclass(frozen=True)
class GplvmSettings(Settings):
    """``diffeomap.gplvm``: one dataset's GP-LVM map through GPy (per-dataset values resolved;
    :mod:`.gplvm`)."""

    section: ClassVar[str] = "diffeomap.gplvm"

    inducing: int  # 0: the exact GP; M > 0: GPy's variational sparse GP, M inducing inputs
    max_iter: int  # optimiser iterations
    optimizer: str  # GPy's name of the optimiser ("scg", "lbfgsb")
    data_scale: float  # the centred data divided by this before the fit
    seed: Derived[int]  # diffeomap.seed
    preparation: Derived[Preparation]  # the dataset's entry, made with the settings


@dataclass(frozen=True)
class BcGplvmSettings(Settings):
    """``diffeomap.gplvm``: one dataset's back-constrained GP-LVM map through GPy: the fields
    of :class:`GplvmSettings` (a settings class inherits none) and the back constraint's."""

    section: ClassVar[str] = "diffeomap.gplvm"

    inducing: int
    max_iter: int
    optimizer: str
    data_scale: float
    back_constraint: str  # "mlp" or "rbf": the mapping g with X = g(Y)
    mlp_hidden: int  # hidden units of the MLP back constraint
    rbf_inverse_width: float  # gamma of the rbf back constraint, exp(-gamma/2 ||y - y'||^2)
    back_init_iters: int  # L-BFGS iterations fitting the MLP to the PCA start
    seed: Derived[int]
    preparation: Derived[Preparation]
