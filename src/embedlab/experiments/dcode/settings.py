"""Settings of the D-CODE steps: fields named as the properties of the config's ``dcode``
section and of its figures' sections (``workflow/schemas/dcode.schema.yaml``, which holds
their defaults)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from embedlab.settings import Derived, Settings

#: properties of the config section (key) that the workflow reads to lay out the jobs, not a
#: step: the Table 2 subset sizes (one job each), which figures are drawn and which own
#: co-occurrence datasets run
WORKFLOW_KEYS = {"dcode": {"sizes", "figures", "own_datasets"}}


@dataclass(frozen=True)
class RankSettings(Settings):
    """``dcode``: Table 2 for one subset size and observation model (:mod:`.rank`).

    ``observations`` says which block runs what: the first runs every method and the
    references, the others the D-CODE variants only (the baselines do not depend on the
    observation model). An own dataset's job (:mod:`.own`) takes the same settings; its
    ``fit_step`` is the dataset's last period but one and its pool is capped by ``pool``."""

    pool: tuple[int, ...]  # (authors, words) of the pool the subsets are drawn from
    subsets: int
    seed: int
    fit_step: int
    observations: tuple[str, ...]
    prediction: str
    paper_words: str
    methods: tuple[str, ...]
    references: tuple[str, ...]
    params: dict  # {method: {setting: value}}; "dcode" for both D-CODE fits
    grid: dict  # {"transition_var": [...], "initial_var": [...]}
    val_subsets: int
    val_steps: int
    grid_extensions: int



@dataclass(frozen=True)
class SyntheticFigureSettings(Settings):
    """``dcode.figures.fig3``: the synthetic sequence's ellipses and rank trajectories."""

    section: ClassVar[str] = "dcode.figures.fig3"

    params: dict  # the D-CODE model's settings
    epochs: tuple[int, ...]  # the three steps whose ellipses are drawn
    seed: Derived[int]  # dcode.seed


@dataclass(frozen=True)
class EmbeddingFigureSettings(Settings):
    """``dcode.figures.fig4``: the last NIPS volume's embedding of the most prolific authors
    and their words; an own dataset's map of its last period (:mod:`.own`) takes the same."""

    section: ClassVar[str] = "dcode.figures.fig4"

    params: dict  # the D-CODE model's settings
    n_authors: int
    n_words: int
    seed: Derived[int]  # dcode.seed


@dataclass(frozen=True)
class PairsFigureSettings(Settings):
    """``dcode.figures.fig5``: the rank of an author given a word over the NIPS volumes."""

    section: ClassVar[str] = "dcode.figures.fig5"

    params: dict  # the D-CODE model's settings
    pca: dict  # Dynamic PCA's settings
    n_authors: int
    n_words: int
    pairs: tuple[tuple[str, ...], ...]  # (author, word) names
    seed: Derived[int]  # dcode.seed
