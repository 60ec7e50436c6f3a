"""Settings of the t-STE steps: fields named as the properties of the config's ``tste``
section (``workflow/schemas/tste.schema.yaml``, which holds their defaults) or of its
``authors_code`` section.

A value the config sets per dataset or per method without a ``default`` (``max_triplets``,
``grids``, ``nn_training``, the authors_figure reading's solver options) reaches a step as a
derived field that the workflow resolves for the job's dataset and method
(``workflow/rules/tste_helpers.smk``), so a change to one dataset's or method's entry reruns
that entry's jobs only.

Two typed groups sit inside a settings object: :class:`KFormSolver` (the nested section
``tste.kform_solver``) and :class:`SolverOptions` (one method's entry of
``tste.authors_figure.settings``); each is given as a mapping and made and checked with the
settings object (:mod:`embedlab.settings`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from embedlab.settings import Derived, Settings, SettingsError

#: properties of each config section (key) that the workflow reads to lay out the jobs or
#: resolves for a job's dataset and method (the derived fields), not read whole by a step
WORKFLOW_KEYS = {
    "tste": {
        "own_datasets",  # the own triplets datasets that follow `datasets`
        "protocols",  # which readings run
        "datasets",  # one Fig. 2 table per dataset
        "methods",  # one metrics file per (dataset, method)
        "methods_by_dataset",
        "folds_used",  # one part job per fold used
        "grids",  # one search job per value; PaperTextSettings.grid per method
        "grids_by_dataset",  # a dataset's grid of a method: PaperTextSettings.grid
        "max_triplets",  # per dataset: PaperTextSettings.max_triplets
        "maps",  # the maps' jobs; MapSettings.max_iter / max_triplets
        "authors_figure",  # its methods' refits; AuthorsSettings.solver, MapSettings.solver
    },
    "tste.authors_code": {
        "datasets",
        "methods",
        "methods_by_dataset",
        "folds_used",
        "grids",  # per dataset and method: AuthorsSettings.grid
        "max_triplets",  # per dataset: AuthorsSettings.max_triplets
        "max_iter",  # absent = as coded: AuthorsSettings.max_iter None
        "nn_training",  # per dataset and method: AuthorsSettings.nn_training
        "maps",  # the authors' Fig. 3 jobs; MapSettings
    },
}


@dataclass(frozen=True)
class KFormSolver(Settings):
    """``tste.kform_solver``: the projected gradient of the paper-text K forms (GNMDS-K,
    STE-K, CKL-K): ``accelerated`` or ``adaptive``, the precision of the PSD projection and
    the stopping tolerance; estimator parameters of those methods by the same names."""

    solver: str
    precision: str
    tol: float


@dataclass(frozen=True)
class SolverOptions(Settings):
    """One method's options of the released solvers that a reading sets (one entry of
    ``tste.authors_figure.settings``): ``use_log`` False maximises the sum of probabilities
    instead of sum log p; ``alpha`` is t-STE's Student-t degrees of freedom. None: the option
    as the released scripts call the solver (sum log p; alpha = dims - 1)."""

    use_log: bool | None
    alpha: float | None

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any] | None, where: str) -> SolverOptions:
        """The options as given in the config: only those a reading sets (None or {}: none;
        the others None), or options already made; an unknown option or a wrong type fails
        naming ``where``."""
        if isinstance(values, cls):
            return values
        names = cls.field_names()
        if unknown := sorted(set(values or {}) - set(names)):
            raise SettingsError(
                f"{where}: the released solvers have no option {unknown} "
                f"(options: {', '.join(names)})"
            )
        given = {name: (values or {}).get(name) for name in names}
        return super().from_mapping(given, where)

    def given(self) -> dict[str, Any]:
        """The options set ({name: value}), as estimator parameters."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass(frozen=True)
class PaperTextSettings(Settings):
    """``tste``: the paper text's validation of one grid value and one fold's fits, for one
    (dataset, method)."""

    dims: tuple[int, ...]
    n_folds: int
    seed: int
    max_iter: int
    kform_solver: KFormSolver | None  # None (a call in code, not the config): the estimators'
    max_triplets: Derived[int | None]  # the dataset's seeded subset (None: every triplet)
    grid: Derived[dict]  # the method's {parameter: [values]} ({}: untuned)


@dataclass(frozen=True)
class AuthorsSettings(Settings):
    """``tste.authors_code``: the released protocol's search of one grid value and its parts
    (the 1-NN fits, one fold) for one (dataset, method) under one reading; the search does
    not read ``nn_training``."""

    section: ClassVar[str] = "tste.authors_code"

    dims: tuple[int, ...]
    n_folds: int
    seed: Derived[int]  # tste.seed
    max_iter: Derived[int | None]  # None: the coded iterations (authors.AUTHORS_CODE)
    max_triplets: Derived[int | None]  # the dataset's subset, in generation order
    grid: Derived[dict]  # the (dataset, method)'s {parameter: [values]} ({}: untuned)
    nn_training: Derived[str]  # the 1-NN fits' triplets: first (10 %) or all
    solver: Derived[SolverOptions]  # the reading's options of the method (authors_figure)


@dataclass(frozen=True)
class MapSettings(Settings):
    """``tste``: one 2-D map of all triplets (Figs. 3 and 4) under one protocol."""

    seed: int
    protocol: Derived[str]  # paper_text, or authors_code / authors_figure (the authors' Fig. 3)
    max_iter: Derived[int | None]  # None: the coded iterations (the authors' readings)
    max_triplets: Derived[int | None]
    solver: Derived[SolverOptions]  # the authors_figure reading's options of the method


@dataclass(frozen=True)
class ClaimsSettings(Settings):
    left_out: Derived[dict]  # own dataset -> why the paper does not run it
