"""Time one Diffeomap objective + gradient evaluation at the vowel size (m=2700, a=24, p=20,
n=300) against a plain-numpy version of the same algebra, and estimate a 1000-iteration CG fit;
with --compare, L-BFGS against CG at equal numbers of gradient evaluations; with --kernel, the
Gaussian kernel matrix K(A, B) (every step of every Diffeomap evaluation builds one) against
scipy's cdist + numpy's exp; with --full-set, the full-set span energy + gradient (every point
a basis function, the exact method) by the stored-matrix path against the fused kernel, and the
fused kernel reusing its forward pass's kernel matrices against recomputing them (time, peak
memory, bitwise agreement); with --convergence, the LOO 1-NN errors of full-set vowel flows
against p and iterations.

    .venv/bin/python benchmarks/bench_diffeomap.py [--repeats 3] [--fit-iters 10]
    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_diffeomap.py \
        --full-set [--p 20] [--skip-plain] [--fit-iters 10]
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

from embedlab.methods.diffeomap_energy import diffeomap_energy
from embedlab.methods.diffeomap_fit import fit_trajectories


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


def artifact_rows(args) -> tuple[np.ndarray, np.ndarray | None]:
    """(X, labels) of --artifact as the paper's fits see it: --subsample rows (seed 0), no
    PCA, its labels as the classes."""
    from embedlab.experiments.diffeomap.data import prepare
    from embedlab.experiments.diffeomap.settings import Preparation

    preparation = Preparation(
        subsample=args.subsample,
        pca_dims=None,
        top_authors=None,
        author_match="exactly_one",
        use_labels=True,
        centre_frames=False,
    )
    X, labels, _ = prepare(args.artifact, preparation, seed=0)
    return X, labels


def compare_optimizers(args) -> None:
    """Lowest energy after equal numbers of evaluations, and 1-NN errors, L-BFGS vs CG."""
    from embedlab.evaluate.knn import loo_1nn_errors
    from embedlab.experiments.diffeomap.fits import rms_radius
    from embedlab.methods.diffeomap import Diffeomap

    cases = [("two sheets (m=80, p=5, n=40)", *two_sheets(), 0.3, 10.0, 5, 40)]
    if args.artifact:
        X, labels = artifact_rows(args)
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
            trace = fit.optimum.evaluation_trace
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


def peak_bytes(fn) -> int:
    """Peak bytes allocated through Python and numpy during fn() (tracemalloc; BLAS and numba
    workspaces are not counted)."""
    import tracemalloc

    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def compare_full_set(args) -> None:
    """Seconds per full-set span energy + gradient evaluation at the vowel shape (m=2700,
    r=24, sigma = 0.1 x the rms radius): the fused row-block kernel full_flow_energy
    recomputing every K_k in its reverse pass (no buffer) and reusing those of its forward pass
    (a flow_kernel_buffer of the default budget: a fresh one per evaluation, and one for all
    evaluations, as fit_span holds), and span_energy's matrix path (stored K_k, BLAS and numpy
    elementwise passes; skipped with --skip-plain). Timed in turns (one of each per round,
    best of --repeats rounds, so that load on a shared machine hits all alike), in wall and CPU
    seconds; the fused ways' peak memory and bitwise agreement, the matrix path's agreement.
    With --fit-iters, also a whole full-set fit (fit_span, L-BFGS, whitened) of that many
    iterations from beta = 0 with every step's K_k kept and with none (FLOW_STORE_BYTES = 0):
    CPU seconds and bitwise agreement of the fitted coefficients. Exits with status 1 when
    reusing and recomputing differ in any bit."""
    from embedlab.kernels import diffeomap as flow
    from embedlab.kernels.diffeomap import flow_kernel_buffer, full_flow_energy
    from embedlab.methods.diffeomap_energy import span_energy
    from embedlab.methods.diffeomap_fit import fit_span

    rng = np.random.default_rng(0)
    m, p = args.m, args.p
    Z = rng.standard_normal((m, args.a))
    Z -= Z.mean(axis=0)
    beta = 0.05 * rng.standard_normal((p, m, args.a))
    sigma = 0.1 * np.sqrt(np.mean(np.sum(Z**2, axis=1)))
    buffer = flow_kernel_buffer(m, p)
    recompute = "fused, recomputing K_k"
    ways = {
        recompute: lambda: full_flow_energy(Z, beta, sigma, args.lam, 2),
        "fused, reusing K_k, fresh buffer": lambda: full_flow_energy(
            Z, beta, sigma, args.lam, 2, kernels=flow_kernel_buffer(m, p)
        ),
        "fused, reusing K_k, fit's buffer": lambda: full_flow_energy(
            Z, beta, sigma, args.lam, 2, kernels=buffer
        ),
    }
    fused = list(ways)
    if not args.skip_plain:
        every = np.arange(m)
        ways["stored-matrix path"] = lambda: span_energy(
            Z, beta, sigma, args.lam, 2, every, path="matrices"
        )
    for kernels in (None, buffer[:1]):  # compile (the parallel or serial entry points of this m)
        full_flow_energy(Z, beta[:1], sigma, args.lam, 2, kernels=kernels)
    wall = {name: [] for name in ways}
    cpu = {name: [] for name in ways}
    out = {}
    for _ in range(max(1, args.repeats)):
        for name, fn in ways.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            out[name] = fn()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    print(f"full set m={m} r={args.a} p={p} (best of {args.repeats} rounds, one run)")
    base = min(cpu[recompute])
    for name in ways:
        print(f"{name:<32}: {min(wall[name]):.3f} s wall, {min(cpu[name]):.3f} CPU s per "
              f"evaluation ({base / min(cpu[name]):.2f}x recomputing's speed, CPU s)")  # fmt: skip
    low, high = peak_bytes(ways[recompute]), peak_bytes(ways[fused[1]])
    steps = len(buffer)
    print(f"peak memory: {low / 1e6:.1f} MB recomputing, {high / 1e6:.1f} MB reusing "
          f"(+{(high - low) / 1e6:.1f} MB; {steps} of {p} steps' K_k kept, "
          f"{8 * steps * m * m / 1e6:.1f} MB)")  # fmt: skip
    ref = out[recompute]
    same = all(all(map(np.array_equal, out[name], ref)) for name in fused)
    verdict = "bitwise identical" if same else "DIFFERENT"
    print(f"reusing against recomputing: {verdict} (energy, gradient, trajectories)")
    if not same:
        raise SystemExit(1)
    if not args.skip_plain:
        matrices = out["stored-matrix path"]
        energy = ref[0] + args.lam * ref[1]
        rel = abs(energy - matrices.energy) / abs(matrices.energy)
        grad_rel = np.abs(ref[2] - matrices.grad).max() / np.abs(matrices.grad).max()
        print(f"agreement with the stored-matrix path: energy {rel:.1e}, gradient {grad_rel:.1e}"
              " (relative)")  # fmt: skip
    if not args.fit_iters:
        return
    fits, default_budget = {}, flow.FLOW_STORE_BYTES
    for budget in (0, default_budget):
        flow.FLOW_STORE_BYTES = budget
        try:
            start = time.process_time()
            fit = fit_span(
                Z, n_components=2, sigma=sigma, lam=args.lam, p=p, basis=np.arange(m),
                max_iter=args.fit_iters,
            )  # fmt: skip
            fits[budget] = (time.process_time() - start, fit)
        finally:
            flow.FLOW_STORE_BYTES = default_budget
    (none, a), (kept, b) = fits[0], fits[default_budget]
    traces = a.optimum.energy_trace, b.optimum.energy_trace
    same = np.array_equal(a.coef, b.coef) and np.array_equal(*traces)
    print(f"fit_span, {a.optimum.n_iter} iterations ({a.optimum.n_evaluations} evaluations): "
          f"{none:.1f} CPU s "
          f"recomputing, {kept:.1f} CPU s reusing ({none / kept:.2f}x); coefficients and energy "
          f"trace {'bitwise identical' if same else 'DIFFERENT'}")  # fmt: skip
    if not same:
        raise SystemExit(1)


def convergence(args) -> None:
    """LOO 1-NN errors (2-D) of the full-set vowel flow after each checkpoint iteration, for
    each p in --ps: the smallest p and iteration count beyond which the errors stop changing."""
    from embedlab.evaluate.knn import loo_1nn_errors
    from embedlab.experiments.diffeomap.fits import rms_radius
    from embedlab.methods.diffeomap import fit_pca_rotation
    from embedlab.methods.diffeomap_energy import span_energy
    from embedlab.methods.diffeomap_fit import fit_span

    X, labels = artifact_rows(args)
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
        parts, optimum = fit.parts, fit.optimum
        print(f"{p} | " + " | ".join(row) + f" | {optimum.n_evaluations} | {wall:.0f} | "
              f"{parts.energy:.6g} = kinetic {parts.kinetic:.6g} + lam x {parts.off_subspace:.6g}"
              f" (final {final} after {optimum.n_iter} iterations)", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=2700)
    parser.add_argument("--a", type=int, default=24)
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fit-iters", type=int, default=0, help="also this many fit iterations")
    parser.add_argument("--skip-plain", action="store_true", help="time only embedlab's (fused)")
    parser.add_argument("--compare", action="store_true", help="L-BFGS vs CG (see docstring)")
    parser.add_argument("--artifact", help="--compare: also this vectors artifact (labels)")
    parser.add_argument("--subsample", type=int, help="--compare: rows of the artifact")
    parser.add_argument("--sigma-rel", type=float, default=0.1)
    parser.add_argument("--lam", type=float, default=10.0)
    parser.add_argument("--evaluations", type=int, default=450)
    parser.add_argument("--kernel", action="store_true", help="the Gaussian kernel alone")
    parser.add_argument("--full-set", action="store_true", help="full-set energy, 3 ways")
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
        optimum = fit.optimum
        evals_per_iter = optimum.n_evaluations / max(optimum.n_iter, 1)
        print(
            f"CG: {optimum.n_iter} iterations, {optimum.n_evaluations} evaluations in {wall:.1f} s "
            f"({evals_per_iter:.2f} evaluations per iteration)"
        )
    estimate = 1000 * evals_per_iter * ours
    print(f"estimated 1000-iteration fit: {estimate / 60:.0f} min ({evals_per_iter:.2f} eval/iter)")


if __name__ == "__main__":
    main()
