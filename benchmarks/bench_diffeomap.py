"""Time one Diffeomap objective + gradient evaluation at the vowel size (m=2700, a=24, p=20,
n=300) against a plain-numpy version of the same algebra, and estimate a 1000-iteration CG fit;
with --compare, L-BFGS against CG at equal numbers of gradient evaluations; with --kernel, the
Gaussian kernel matrix K(A, B) (every step of every Diffeomap evaluation builds one) against
scipy's cdist + numpy's exp; with --full-set, the full-set span energy + gradient (every point
a basis function, the exact method) by the stored-matrix path against the fused kernel; with
--convergence, the LOO 1-NN errors of full-set vowel flows against p and iterations.

    .venv/bin/python benchmarks/bench_diffeomap.py [--repeats 3] [--fit-iters 10]
    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_diffeomap.py \
        --full-set [--p 20]
    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_diffeomap.py \
        --convergence --artifact results/datasets/vowel [--ps 5 10 20] [--iters 300]
    .venv/bin/python benchmarks/bench_diffeomap.py --compare [--artifact results/datasets/vowel]
    NUMBA_NUM_THREADS=1 .venv/bin/python benchmarks/bench_diffeomap.py --kernel

The data are Gaussian with the vowel shape (timings do not depend on the values). The plain
version builds the kernel matrix and its derivative contraction through broadcast (m, n, a)
arrays instead of the numba kernel and the BLAS contraction; the rest is shared.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.linalg
from timing import best_of

from embedlab.methods.diffeomap import diffeomap_energy, fit_trajectories


def plain_step(Phi, V, basis, sigma, eps):
    """One charged reduced-set step with broadcast numpy kernels (the reference for timing)."""
    centres = Phi[basis]
    diff = Phi[:, None, :] - centres[None, :, :]  # (m, n, a)
    Kmn = np.exp(-np.sum(diff**2, axis=2) / (2 * sigma**2))
    Knn = Kmn[basis]
    Y = scipy.linalg.solve(Kmn.T @ Kmn + eps * Knn, Kmn.T @ V, assume_a="pos")
    R = (V - Kmn @ Y) / eps
    weight = -2 * R @ Y.T
    weight[basis] += Y @ Y.T
    C = (weight * Kmn)[:, :, None] * diff / sigma**2  # dF/dPhi_j summands
    grad = -C.sum(axis=1)
    np.add.at(grad, basis, C.sum(axis=0))
    return float(np.sum(V * R)), 2 * R, grad


def plain_energy(T, sigma, lam, b, basis, eps):
    p = len(T) - 1
    grad = np.zeros_like(T)
    energy = 0.0
    for k in range(p):
        V = p * (T[k + 1] - T[k])
        norm2, dV, dPhi = plain_step(T[k], V, basis, sigma, eps)
        energy += norm2 / p
        grad[k + 1] += dV
        grad[k] += dPhi / p - dV
    energy += lam * np.sum(T[p][:, b:] ** 2)
    grad[p][:, b:] += 2 * lam * T[p][:, b:]
    return energy, grad


def two_sheets(m=80, seed=0):
    """The two-class toy of tests/test_diffeomap.py: sheets z = +-0.5 of a 6 x 3 box."""
    rng = np.random.default_rng(seed)
    labels = np.repeat([0, 1], m // 2)
    x, y = rng.uniform(-3, 3, m), rng.uniform(-1.5, 1.5, m)
    z = np.where(labels == 0, 0.5, -0.5) + 0.05 * rng.standard_normal(m)
    return np.c_[x, y, z], labels


def compare_optimizers(args) -> None:
    """Lowest energy after equal numbers of evaluations, and 1-NN errors, L-BFGS vs CG."""
    from embedlab.evaluate.knn import loo_1nn_errors
    from embedlab.experiments.diffeomap import prepare, rms_radius
    from embedlab.methods.diffeomap import Diffeomap

    cases = [("two sheets (m=80, p=5, n=40)", *two_sheets(), 0.3, 10.0, 5, 40)]
    if args.artifact:
        X, labels, _ = prepare(args.artifact, subsample=args.subsample)
        size = f"m={len(X)}, p={args.p}, n={args.n}"
        name = f"{args.artifact.rstrip('/').split('/')[-1]} ({size}, sigma_rel={args.sigma_rel})"
        sigma = args.sigma_rel * rms_radius(X)
        cases.append((name, X, labels, sigma, args.lam, args.p, args.n))
    checkpoints = [c for c in (50, 100, 200, 300, 450, 700, 1000, 1500) if c <= args.evaluations]
    for name, X, labels, sigma, lam, p, n in cases:
        print(f"{name}: sigma={sigma:.4g} lam={lam:g}, budget {args.evaluations} evaluations")
        print("optimizer | " + " | ".join(f"E@{c}" for c in checkpoints) + " | 1-NN errors | s")
        for optimizer in ("lbfgs", "cg"):
            model = Diffeomap(
                sigma=sigma, lam=lam, p=p, n_basis=n, max_iter=10 * args.evaluations,
                optimizer=optimizer, random_state=0,
            )  # fmt: skip
            start = time.perf_counter()
            fit = _fit_with_budget(model, X, args.evaluations)
            wall = time.perf_counter() - start
            trace = fit.evaluation_trace
            at = [f"{trace[min(c, len(trace)) - 1]:.5g}" for c in checkpoints]
            errors = loo_1nn_errors(fit.trajectories[-1][:, :2], labels)
            print(f"{optimizer} | " + " | ".join(at) + f" | {errors} | {wall:.0f}")


def _fit_with_budget(model, X, evaluations):
    """fit_trajectories with the estimator's settings, stopped after ``evaluations``."""
    from embedlab.methods.diffeomap import fit_pca_rotation, select_basis

    Z = fit_pca_rotation(X).apply(X)
    basis = select_basis(X, model.n_basis, np.random.default_rng(model.random_state))
    return fit_trajectories(
        Z, n_components=2, sigma=model.sigma, lam=model.lam, p=model.p, basis=basis,
        max_iter=model.max_iter, eps=model.eps, optimizer=model.optimizer,
        max_evaluations=evaluations,
    )  # fmt: skip


def compare_kernels(repeats: int) -> None:
    """embedlab's gaussian_kernel against exp(-cdist(A, B)^2 / (2 sigma^2)) at the vowel (grid
    and final basis sizes) and USPS shapes; both float64 on the same thread count."""
    from scipy.spatial.distance import cdist

    from embedlab.kernels.diffeomap import gaussian_kernel

    rng = np.random.default_rng(0)
    print("m x n x a | ours ms | cdist + exp ms | ratio | max rel diff")
    for m, n, a in [(2700, 150, 24), (2700, 300, 24), (7291, 300, 50)]:
        A = rng.standard_normal((m, a))
        B = A[rng.choice(m, n, replace=False)]
        sigma = 0.1 * np.sqrt((A**2).sum(axis=1).mean())
        gaussian_kernel(A[:10], B[:5], sigma)  # compile
        ours, K = best_of(lambda: gaussian_kernel(A, B, sigma), repeats)  # noqa: B023
        plain, ref = best_of(
            lambda: np.exp(-cdist(A, B, "sqeuclidean") / (2 * sigma**2)), repeats  # noqa: B023
        )
        diff = np.max(np.abs(K - ref) / ref)
        print(f"{m} x {n} x {a} | {1e3 * ours:.2f} | {1e3 * plain:.2f} | {plain / ours:.1f}x"
              f" | {diff:.1e}")


def compare_full_set(args) -> None:
    """Seconds per full-set span energy + gradient evaluation at the vowel shape (m=2700,
    r=24, sigma = 0.1 x the rms radius): span_energy_matrices (stored K_k, BLAS and numpy
    elementwise passes) against span_energy (the fused row-block kernel), both timed in this
    run on the same thread counts, with their agreement."""
    from embedlab.methods.diffeomap import span_energy, span_energy_matrices

    rng = np.random.default_rng(0)
    Z = rng.standard_normal((args.m, args.a))
    Z -= Z.mean(axis=0)
    beta = 0.05 * rng.standard_normal((args.p, args.m, args.a))
    sigma = 0.1 * np.sqrt(np.mean(np.sum(Z**2, axis=1)))
    every = np.arange(args.m)
    span_energy(Z[:300], beta[:, :300], sigma, args.lam, 2, every[:300])  # compile
    old, ref = best_of(
        lambda: span_energy_matrices(Z, beta, sigma, args.lam, 2, every), args.repeats
    )
    new, fused = best_of(lambda: span_energy(Z, beta, sigma, args.lam, 2, every), args.repeats)
    flops = 7 * args.p * args.m**2 * args.a * 2  # the O(p m^2 r) products, 2 flops a multiply-add
    print(f"full set m={args.m} r={args.a} p={args.p} (best of {args.repeats}, one run)")
    print(f"stored-matrix path: {old:.3f} s per evaluation")
    print(f"fused kernel      : {new:.3f} s per evaluation ({flops / new / 1e9:.1f} GFlop/s)")
    print(f"ratio             : {old / new:.2f}x")
    rel = abs(fused.energy - ref.energy) / abs(ref.energy)
    grad_rel = np.abs(fused.grad - ref.grad).max() / np.abs(ref.grad).max()
    print(f"agreement: energy {rel:.1e}, gradient {grad_rel:.1e} (relative)")


def convergence(args) -> None:
    """LOO 1-NN errors (2-D) of the full-set vowel flow after each checkpoint iteration, for
    each p in --ps: the smallest p and iteration count beyond which the errors stop changing."""
    from embedlab.evaluate.knn import loo_1nn_errors
    from embedlab.experiments.diffeomap import prepare, rms_radius
    from embedlab.methods.diffeomap import fit_pca_rotation, fit_span, span_energy

    X, labels, _ = prepare(args.artifact, subsample=args.subsample)
    Z = fit_pca_rotation(X).apply(X)
    sigma = args.sigma_rel * rms_radius(X)
    every = np.arange(len(X))
    checkpoints = {c for c in (10, 25, 50, 100, 150, 200, 300, 400, 600, 800, 1000)}
    checkpoints = sorted(c for c in checkpoints | {args.iters} if c <= args.iters)
    print(f"full-set flow, m={len(X)} r={Z.shape[1]}, sigma_rel={args.sigma_rel} "
          f"lam={args.lam}, L-BFGS; LOO 1-NN errors in 2-D after n iterations")  # fmt: skip
    print("p | " + " | ".join(f"n={c}" for c in checkpoints) + " | evaluations | s | energy")
    for p in args.ps:
        errors = {}

        def at(n, beta, p=p, errors=errors):
            if n in checkpoints:
                T = span_energy(Z, beta, sigma, args.lam, 2, every).trajectories
                errors[n] = loo_1nn_errors(T[-1][:, :2], labels)

        start = time.perf_counter()
        fit = fit_span(
            Z, n_components=2, sigma=sigma, lam=args.lam, p=p, basis=every,
            max_iter=args.iters, on_iteration=at,
        )  # fmt: skip
        wall = time.perf_counter() - start
        final = loo_1nn_errors(fit.trajectories[-1][:, :2], labels)
        row = [str(errors.get(c, "-")) for c in checkpoints]
        print(f"{p} | " + " | ".join(row) + f" | {fit.n_evaluations} | {wall:.0f} | "
              f"{fit.energy:.6g} = kinetic {fit.kinetic:.6g} + lam x {fit.off_subspace:.6g}"
              f" (final {final} after {fit.n_iter} iterations)", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=2700)
    parser.add_argument("--a", type=int, default=24)
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fit-iters", type=int, default=0, help="also run this many CG iterations")
    parser.add_argument("--skip-plain", action="store_true", help="time only embedlab's version")
    parser.add_argument("--compare", action="store_true", help="L-BFGS vs CG (see docstring)")
    parser.add_argument("--artifact", help="--compare: also this vectors artifact (labels)")
    parser.add_argument("--subsample", type=int, help="--compare: rows of the artifact")
    parser.add_argument("--sigma-rel", type=float, default=0.1)
    parser.add_argument("--lam", type=float, default=10.0)
    parser.add_argument("--evaluations", type=int, default=450)
    parser.add_argument("--kernel", action="store_true", help="the Gaussian kernel alone")
    parser.add_argument("--full-set", action="store_true", help="fused full-set energy vs matrices")
    parser.add_argument("--convergence", action="store_true", help="full-set vowel: p, iterations")
    parser.add_argument("--ps", type=int, nargs="+", default=[5, 10, 20])
    parser.add_argument("--iters", type=int, default=300)
    args = parser.parse_args()
    if args.full_set:
        compare_full_set(args)
        return
    if args.convergence:
        convergence(args)
        return
    if args.kernel:
        compare_kernels(max(args.repeats, 10))
        return
    if args.compare:
        compare_optimizers(args)
        return

    rng = np.random.default_rng(0)
    X = rng.standard_normal((args.m, args.a))
    T = X[None] + np.cumsum(0.05 * rng.standard_normal((args.p + 1, args.m, args.a)), axis=0)
    T[0] = X
    basis = np.sort(rng.choice(args.m, args.n, replace=False))
    sigma, lam, eps = 3.0, 1.0, 1.0

    diffeomap_energy(T[:2, :50], sigma, lam, 2, basis[basis < 50], eps)  # compile
    ours, parts = best_of(lambda: diffeomap_energy(T, sigma, lam, 2, basis, eps), args.repeats)
    print(f"m={args.m} a={args.a} p={args.p} n={args.n}")
    print(f"embedlab objective+gradient: {ours:.3f} s per evaluation")
    if not args.skip_plain:
        plain, (energy, grad) = best_of(
            lambda: plain_energy(T, sigma, lam, 2, basis, eps), max(1, args.repeats - 1)
        )
        rel = abs(parts.energy - energy) / abs(energy)
        grad_rel = np.abs(parts.grad - grad).max() / np.abs(grad).max()
        print(f"plain numpy               : {plain:.3f} s per evaluation ({plain / ours:.1f}x)")
        print(f"agreement: energy {rel:.1e}, gradient {grad_rel:.1e} (relative)")

    evals_per_iter = 1.5  # measured on vowel (1.45-1.53); replaced by --fit-iters if given
    if args.fit_iters:
        Z = X - X.mean(axis=0)
        start = time.perf_counter()
        fit = fit_trajectories(
            Z, n_components=2, sigma=sigma, lam=lam, p=args.p, basis=basis,
            max_iter=args.fit_iters, eps=eps, optimizer="cg",
        )  # fmt: skip
        wall = time.perf_counter() - start
        evals_per_iter = fit.n_evaluations / max(fit.n_iter, 1)
        print(
            f"CG: {fit.n_iter} iterations, {fit.n_evaluations} evaluations in {wall:.1f} s "
            f"({evals_per_iter:.2f} evaluations per iteration)"
        )
    estimate = 1000 * evals_per_iter * ours
    print(f"estimated 1000-iteration fit: {estimate / 60:.0f} min ({evals_per_iter:.2f} eval/iter)")


if __name__ == "__main__":
    main()
