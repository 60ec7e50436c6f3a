"""D-CODE's synthetic sequence (Sarkar, Siddiqi & Gordon, Fig. 3): a slow swap of partners.

Entities (section 4.2 of the paper): two groups of authors ``X1..X3`` and ``Y1..Y3`` and one
group of words ``A1..A3``; every author co-occurs only with the A words. (Section 4.3 once
speaks of "the word list A1, A2, A3, A4"; the data description and the caption of Fig. 3 both
say ``A1..A3``, which is what is built here.)

Three epochs over ``t = 0 .. n_steps - 1`` with the transition fraction

    w(t) = clip((t - change_start) / (change_end - change_start), 0, 1):

* ``t <= change_start``: X-A pairs have ``high`` expected counts, Y-A pairs ``low``;
* ``change_start < t < change_end``: both change linearly (equal at the midpoint);
* ``t >= change_end``: X-A pairs ``low``, Y-A pairs ``high``.

Expected counts: ``E[C_t(x, a)] = high (1 - w) + low w + background`` for the X authors and
``E[C_t(y, a)] = low (1 - w) + high w + background`` for the Y authors, where ``background`` is
a noise rate added to every author-word pair. The counts are Poisson draws from these means
(numpy Generator seeded with ``seed``): the paper calls the sequence "noisy", and the noise is
what makes D-CODE's uncertainty (and the abrupt switch of the MLE variant) visible.

Parameters (registry defaults):

* ``n_steps = 80``      -- number of time steps T (not stated in the text; 20 steps on each
  side of the 20 - 60 change);
* ``change_start = 20``, ``change_end = 60`` -- the slow change, "time-steps 20 - 60";
* ``high = 20``, ``low = 1`` -- signal levels of the strong and the weak group;
* ``background = 1``    -- expected noise count added to every pair;
* ``seed = 0``          -- seed of the Poisson draws.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from embedlab.artifacts import Artifact

GROUP_SIZE = 3  # X1..X3, Y1..Y3 and A1..A3 (paper, section 4.2)
AUTHOR_GROUPS = ("X", "Y")
WORD_GROUPS = ("A",)


def transition_weight(n_steps: int, change_start: int, change_end: int) -> np.ndarray:
    """``w(t) = clip((t - change_start) / (change_end - change_start), 0, 1)``, t = 0..T-1."""
    t = np.arange(n_steps, dtype=np.float64)
    return np.clip((t - change_start) / (change_end - change_start), 0.0, 1.0)


def expected_counts(
    n_steps: int, change_start: int, change_end: int, high: float, low: float, background: float
) -> np.ndarray:
    """Poisson means, shape (T, 6 authors, 3 words); rows X1..X3 then Y1..Y3."""
    w = transition_weight(n_steps, change_start, change_end)[:, None, None]
    x_rate = high * (1.0 - w) + low * w
    y_rate = low * (1.0 - w) + high * w
    ones = np.ones((1, GROUP_SIZE, GROUP_SIZE))
    return np.concatenate([x_rate * ones, y_rate * ones], axis=1) + background


def _check_params(n_steps, change_start, change_end, high, low, background) -> None:
    if n_steps < 2:
        raise ValueError(f"dcode_synthetic: n_steps must be >= 2, got {n_steps}")
    if not 0 <= change_start < change_end <= n_steps - 1:
        raise ValueError(
            "dcode_synthetic: need 0 <= change_start < change_end <= n_steps - 1, got "
            f"change_start={change_start}, change_end={change_end}, n_steps={n_steps}"
        )
    for name, value in (("high", high), ("low", low), ("background", background)):
        if not np.isfinite(value) or value < 0:
            raise ValueError(f"dcode_synthetic: {name} must be finite and >= 0, got {value!r}")
    if high <= low:
        raise ValueError(f"dcode_synthetic: high ({high}) must exceed low ({low})")


def build(
    files: dict,
    n_steps: int = 80,
    change_start: int = 20,
    change_end: int = 60,
    high: float = 20,
    low: float = 1,
    background: float = 1,
    seed: int = 0,
) -> Artifact:
    """Build the sequence: ``counts`` (T sparse 6 x 3 int64 Poisson draws) and their means.

    Arrays: ``counts`` and ``expected_counts`` (T x 6 x 3 float64). Items (``role``): authors
    X1..X3, Y1..Y3 and words A1..A3, with their ``group`` and ``index`` within the role.
    """
    _check_params(n_steps, change_start, change_end, high, low, background)
    means = expected_counts(n_steps, change_start, change_end, high, low, background)
    rng = np.random.default_rng(seed)
    draws = rng.poisson(means).astype(np.int64)
    counts = [sp.csr_matrix(c) for c in draws]

    def entities(role: str, groups: tuple[str, ...]) -> pd.DataFrame:
        group = [g for g in groups for _ in range(GROUP_SIZE)]
        names = [f"{g}{k + 1}" for g in groups for k in range(GROUP_SIZE)]
        return pd.DataFrame(
            {"role": role, "index": np.arange(len(names)), "name": names, "group": group}
        )

    items = pd.concat(
        [entities("author", AUTHOR_GROUPS), entities("word", WORD_GROUPS)], ignore_index=True
    )
    meta = {
        "counts": {
            "authors": GROUP_SIZE * len(AUTHOR_GROUPS),
            "words": GROUP_SIZE * len(WORD_GROUPS),
            "time_steps": n_steps,
        }
    }
    return Artifact(
        kind="cooccurrence",
        arrays={"counts": counts, "expected_counts": means},
        items=items,
        meta=meta,
    )
