"""Benchmark: D-CODE's CODE log-likelihood kernel and one Table 2 fit.

1. The CODE log-likelihood and its gradient (eq. 2), which the count-weighted filter's
   posterior-mode search (L-BFGS) evaluates thousands of times a year: embedlab's numba kernel
   against the obvious numpy expression (broadcast differences, ``scipy.special.logsumexp``),
   at the largest Table 2 size (40 authors x 348 words, k = 2); the two are checked equal.
2. One dynamic D-CODE fit of a Table 2 subset (12 years): count-weighted observations
   conditioned at the posterior mode (the table's model) against the paper's single expansion
   (``conditioning="single"``) and the per-token reading, CPU seconds and L-BFGS iterations.

Data: the first 40-author subset of ``results/datasets/nips12`` when it has been built, else
Poisson counts of the same shape. All timings come from this one run; compare only within it.

    .venv/bin/python benchmarks/bench_dcode.py
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import scipy.special
from timing import best_of

from embedlab.kernels.cooccurrence import log_likelihood_and_gradient
from embedlab.methods.dcode import DCODE

ROOT = Path(__file__).resolve().parents[1]


def numpy_log_likelihood_and_gradient(theta, p_joint):
    """The obvious numpy expression of eq. (2) and its gradient (the alternative)."""
    A = p_joint.shape[0]
    delta = theta[:A, None, :] - theta[None, A:, :]
    sq = np.einsum("ijd,ijd->ij", delta, delta)
    with np.errstate(divide="ignore"):
        log_w = np.log(p_joint.sum(axis=1))[:, None] + np.log(p_joint.sum(axis=0))[None, :]
    log_z = scipy.special.logsumexp(log_w - sq)
    pair = (2.0 * (np.exp(log_w - sq - log_z) - p_joint))[:, :, None] * delta
    value = float(-(p_joint * sq).sum() - log_z)
    return value, np.concatenate([pair.sum(axis=1), -pair.sum(axis=0)])


def table2_counts(size=(40, 348)):
    folder = ROOT / "results" / "datasets" / "nips12"
    if (folder / "meta.json").is_file():
        from embedlab import artifacts
        from embedlab.experiments.dcode import subsets

        art = artifacts.load(folder)
        pool = subsets.prolific(art, 100, 500, 11)
        authors, words = subsets.draw_subset(pool, size, 0)
        return "nips12 subset 0", subsets.sub_counts(art, authors, words, 11)
    rng = np.random.default_rng(0)
    return "Poisson(0.5) counts", [rng.poisson(0.5, size=size).astype(float) for _ in range(12)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument(
        "--years", type=int, default=12, help="the fits' last years (Table 2's subsets: 12)"
    )
    args = parser.parse_args()
    source, counts = table2_counts()
    counts = counts[-args.years :]
    C = counts[-1]
    p = C / C.sum()
    theta = np.random.default_rng(1).normal(size=(sum(C.shape), 2))
    v1, g1 = log_likelihood_and_gradient(theta, p)  # compiles
    v2, g2 = numpy_log_likelihood_and_gradient(theta, p)
    assert abs(v1 - v2) < 1e-10 and np.abs(g1 - g2).max() < 1e-12, "kernels disagree"
    t_numba, _ = best_of(lambda: log_likelihood_and_gradient(theta, p), args.repeats)
    t_numpy, _ = best_of(lambda: numpy_log_likelihood_and_gradient(theta, p), args.repeats)
    print(f"data: {source}, {C.shape[0]} authors x {C.shape[1]} words")
    print(
        f"CODE log-likelihood + gradient: numba {t_numba * 1e3:.3f} ms, "
        f"numpy {t_numpy * 1e3:.3f} ms, ratio numpy / numba {t_numpy / t_numba:.1f}x"
    )
    print(f"one dynamic fit of {len(counts)} years (transition_var 0.1, initial_var 10):")
    for label, settings in [
        ("counts, mode (Table 2)", {}),
        ("counts, single expansion", {"conditioning": "single"}),
        ("per token, mode", {"likelihood": "per_token"}),
    ]:
        start = time.process_time()
        model = DCODE(transition_var=0.1, initial_var=10.0, random_state=0, **settings)
        try:
            model.fit(counts)
        except FloatingPointError as err:  # the single expansion overshoots at count weights
            print(f"  {label:26s} fails: {err}")
            continue
        seconds = time.process_time() - start
        print(
            f"  {label:26s} {seconds:6.2f} s CPU, L-BFGS iterations {model.n_iter_.sum():5d}, "
            f"largest mode residual {model.mode_residual_.max():.1e}"
        )


if __name__ == "__main__":
    main()
