"""Which papers can use an own dataset, and why a paper leaves one out.

The workflow asks at parse time (``workflow/rules/common.smk``, ``with_own_datasets``) with
the facts a glance at the entry's file gives (:func:`embedlab.datasets.own.entry_facts`); the
reasons go to the paper's table notes and the datasets table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from embedlab import artifacts

#: the fewest row items and column items of D-CODE's rank protocol on an own dataset: its
#: subsets take at least 2 of each from a pool of more (embedlab.experiments.dcode.own)
DCODE_MIN_ITEMS = 3


def dcode_min_periods(val_steps: int) -> int:
    """The fewest periods of D-CODE's rank protocol on an own dataset: the last is ranked
    (fitted up to the one before), the ``val_steps`` periods up to that one are each predicted
    from the filter of the periods before them, which needs one period more before them."""
    return int(val_steps) + 2


@dataclass(frozen=True)
class PaperNeeds:
    """What one paper's experiment needs of a dataset of its kind.

    ``labels``: "required" (the experiment fails without), "optional" (a measure that needs
    them is left out without) or "unused". ``min_points`` is the fewest items (``unit``) it
    can run on under the full config's settings (``ee``: perplexity 40; ``tste``: dims up to
    30; ``dcode``: val_steps 3); :func:`paper_problems` takes the values in use.
    """

    paper: str
    kind: str
    labels: str
    min_points: int
    min_dims: int = 1
    min_triplets: int = 0
    #: co-occurrence: the fewest column items (words) and periods (time steps)
    min_words: int = 0
    min_periods: int = 0
    unit: str = "points"
    note: str = ""
    #: further kinds it takes by converting them (SNEST: vectors, through perplexity P)
    also: tuple[str, ...] = ()

    def takes(self, kind: str) -> bool:
        """Whether the paper's experiment runs on datasets of ``kind``."""
        return kind == self.kind or kind in self.also


#: One entry per paper whose experiment takes a dataset by kind.
PAPER_NEEDS: dict[str, PaperNeeds] = {
    "snest": PaperNeeds(
        "snest", "similarity", "unused", 3, also=("vectors",),
        note="Table 1 cells (KL per method) on P (vectors: the perplexity P of snest.perplexity; "
             "n > perplexity + 1); Figs. 2-4 are drawn for the paper's datasets",
    ),
    "ee": PaperNeeds(
        "ee", "vectors", "optional", 42,
        note="perplexity must lie in (1, n - 1]: n >= perplexity + 2; labels give the 1-NN "
             "error column (left empty without)",
    ),
    "diffeomap": PaperNeeds(
        "diffeomap", "vectors", "required", 3, min_dims=3,
        note="the grid search picks (sigma_rel, lam) by leave-one-out 1-NN error on the "
             "labels (use_labels: false runs a single grid point without); the 2-D map needs "
             "more than 2 dimensions",
    ),
    "tste": PaperNeeds(
        "tste", "triplets", "required", 30, min_triplets=10,
        note="the 1-NN error of every fit needs labels; the K forms embed in up to max(dims) "
             "dimensions (30) and need as many items; n_folds (10) folds of the triplets",
    ),
    "dcode": PaperNeeds(
        "dcode", "cooccurrence", "unused", DCODE_MIN_ITEMS, min_words=DCODE_MIN_ITEMS,
        min_periods=dcode_min_periods(3), unit="row items",
        note="Table 2's rank protocol: random subsets of at least 2 rows and 2 columns drawn "
             "from a larger pool; the last period is ranked, the val_steps before it choose "
             "the variances, one more starts the filter",
    ),
}


def papers_for_kind(kind: str) -> list[PaperNeeds]:
    """The papers whose experiment takes datasets of ``kind``, with what each needs."""
    if kind not in artifacts.KINDS:
        raise ValueError(f"unknown kind {kind!r}; kinds: {', '.join(artifacts.KINDS)}")
    return [needs for needs in PAPER_NEEDS.values() if needs.takes(kind)]


def paper_problems(
    paper: str,
    kind: str,
    n: int | None = None,
    has_labels: bool | None = None,
    dims: int | None = None,
    n_triplets: int | None = None,
    perplexity: float | None = None,
    n_folds: int | None = None,
    max_dim: int | None = None,
    words: int | None = None,
    periods: int | None = None,
    val_steps: int | None = None,
) -> list[str]:
    """Why ``paper`` cannot use a dataset (empty: it can). Facts left ``None`` are not judged:
    at parse time the kind and whether labels are declared are known, the counts only once
    the artifact is built (its ``meta.json`` summary: ``n``, ``dims``, ``triplets``,
    ``classes``; a long co-occurrence table's glance: ``n`` rows, ``words`` columns and
    ``periods``). The paper's settings, where given, replace the full config's:
    ``perplexity`` (ee), ``n_folds`` and ``max_dim`` (tste: the largest of its ``dims``),
    ``val_steps`` (dcode)."""
    if paper not in PAPER_NEEDS:
        raise ValueError(f"unknown paper {paper!r}; papers: {', '.join(PAPER_NEEDS)}")
    needs = PAPER_NEEDS[paper]
    if not needs.takes(kind):
        return [f"{paper} takes {' or '.join((needs.kind, *needs.also))} datasets, not {kind}"]
    problems = []
    if needs.labels == "required" and has_labels is False:
        problems.append(f"{paper} needs labels ({needs.note})")
    fewest = needs.min_points
    if paper in ("ee", "snest") and kind == "vectors" and perplexity is not None:
        fewest = max(3, math.floor(perplexity) + 2)
    if paper == "tste" and max_dim is not None:
        fewest = max(3, int(max_dim))
    if n is not None and n < fewest:
        problems.append(f"{paper} needs at least {fewest} {needs.unit}, the dataset has {n}")
    if dims is not None and dims < needs.min_dims:
        problems.append(f"{paper} needs at least {needs.min_dims} dimensions, got {dims}")
    least = needs.min_triplets if n_folds is None else max(needs.min_triplets, n_folds)
    if n_triplets is not None and n_triplets < least:
        problems.append(f"{paper} needs at least {least} triplets, the dataset has {n_triplets}")
    if words is not None and words < needs.min_words:
        problems.append(
            f"{paper} needs at least {needs.min_words} column items, the dataset has {words}"
        )
    fewest_periods = needs.min_periods
    if paper == "dcode" and val_steps is not None:
        fewest_periods = dcode_min_periods(val_steps)
    if periods is not None and periods < fewest_periods:
        problems.append(
            f"{paper} needs at least {fewest_periods} periods (the last ranked, the "
            f"{fewest_periods - 2} before it validating the variances, one more starting the "
            f"filter), the dataset has {periods}"
        )
    return problems
