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

Background words (our addition): with the A words alone the expected count matrix is rank one
(p_ij = p_i p_j), which CODE explains by the marginals alone, so no X/Y difference would reach
the embedding (checked with the D-CODE implementation: X-A and Y-A distances stay equal). The
paper's figure shows only the entities it names; we add ``n_background_words`` words B1..
that every author uses at the constant rate ``background_rate``, which gives the A words a
contrast without changing the X-A / Y-A story. ``n_background_words = 0`` gives the sequence
exactly as the text describes it.

Parameters (registry defaults):

* ``n_steps = 80``      -- number of time steps T (not stated in the text; 20 steps on each
  side of the 20 - 60 change);
* ``change_start = 20``, ``change_end = 60`` -- the slow change, "time-steps 20 - 60";
* ``high = 20``, ``low = 1`` -- signal levels of the strong and the weak group;
* ``background = 1``    -- expected noise count added to every pair;
* ``n_background_words = 3``, ``background_rate = 9`` -- the B words (see above);
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
    n_steps: int,
    change_start: int,
    change_end: int,
    high: float,
    low: float,
    background: float,
    n_background_words: int = 0,
    background_rate: float = 0.0,
) -> np.ndarray:
    """Poisson means, shape (T, 6 authors, 3 + n_background_words words).

    Rows X1..X3 then Y1..Y3; columns A1..A3 then B1..; B columns are ``background_rate``.
    """
    w = transition_weight(n_steps, change_start, change_end)[:, None, None]
    x_rate = high * (1.0 - w) + low * w
    y_rate = low * (1.0 - w) + high * w
    ones = np.ones((1, GROUP_SIZE, GROUP_SIZE))
    a_words = np.concatenate([x_rate * ones, y_rate * ones], axis=1) + background
    b_words = np.full((n_steps, 2 * GROUP_SIZE, n_background_words), float(background_rate))
    return np.concatenate([a_words, b_words], axis=2)


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
    n_background_words: int = 0,
    background_rate: float = 0.0,
    seed: int = 0,
) -> Artifact:
    """Build the sequence: ``counts`` (T sparse 6 x 3 int64 Poisson draws) and their means.

    Arrays: ``counts`` and ``expected_counts`` (T x 6 x 3 float64). Items (``role``): authors
    X1..X3, Y1..Y3 and words A1..A3, with their ``group`` and ``index`` within the role.
    """
    _check_params(n_steps, change_start, change_end, high, low, background)
    if n_background_words < 0 or not np.isfinite(background_rate) or background_rate < 0:
        raise ValueError(
            "dcode_synthetic: need n_background_words >= 0 and background_rate >= 0, got "
            f"{n_background_words}, {background_rate!r}"
        )
    means = expected_counts(
        n_steps,
        change_start,
        change_end,
        high,
        low,
        background,
        n_background_words,
        background_rate,
    )
    rng = np.random.default_rng(seed)
    draws = rng.poisson(means).astype(np.int64)
    counts = [sp.csr_matrix(c) for c in draws]

    def entities(role: str, groups: tuple[str, ...]) -> pd.DataFrame:
        group = [g for g in groups for _ in range(GROUP_SIZE)]
        names = [f"{g}{k + 1}" for g in groups for k in range(GROUP_SIZE)]
        return pd.DataFrame(
            {"role": role, "index": np.arange(len(names)), "name": names, "group": group}
        )

    words = entities("word", WORD_GROUPS)
    extra = pd.DataFrame(
        {
            "role": "word",
            "index": GROUP_SIZE + np.arange(n_background_words),
            "name": [f"B{k + 1}" for k in range(n_background_words)],
            "group": "B",
        }
    )
    items = pd.concat([entities("author", AUTHOR_GROUPS), words, extra], ignore_index=True)
    meta = {
        "counts": {
            "authors": GROUP_SIZE * len(AUTHOR_GROUPS),
            "words": GROUP_SIZE * len(WORD_GROUPS) + n_background_words,
            "time_steps": n_steps,
        }
    }
    return Artifact(
        kind="cooccurrence",
        arrays={"counts": counts, "expected_counts": means},
        items=items,
        meta=meta,
    )
