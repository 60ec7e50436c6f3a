"""Helpers shared by several test modules (fixtures live in conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from embedlab import artifacts
from embedlab.methods.neighbour_affinities import validate_affinities

REPO = Path(__file__).resolve().parents[1]


def save_labelled_vectors(folder: Path, X: np.ndarray, labels: np.ndarray) -> Path:
    """A vectors artifact of rows X with class ``labels`` (items p0, p1, ...) saved in
    ``folder``, named as the folder; returns the folder."""
    art = artifacts.Artifact(
        kind="vectors",
        arrays={"X": X, "labels": labels},
        items=pd.DataFrame({"name": [f"p{i}" for i in range(len(X))]}),
        meta={},
    )
    artifacts.save(art, folder, folder.name)
    return folder


def random_P(n: int, seed: int, density: float = 0.2) -> sp.csr_matrix:
    """A random sparse joint distribution: symmetric, zero diagonal, no empty row."""
    rng = np.random.default_rng(seed)
    W = sp.random(n, n, density=density, random_state=rng, format="csr")
    ring = sp.csr_matrix((rng.uniform(0.5, 1, n), (np.arange(n), (np.arange(n) + 1) % n)), (n, n))
    W = W + W.T + ring + ring.T
    W.setdiag(0)
    W.eliminate_zeros()
    return validate_affinities(W / W.sum())


def random_embedding(n: int, n_space: int, n_time: int, seed: int, scale: float = 1.0):
    """Normal space columns (sd ``scale``), then normal time columns (sd 0.3)."""
    rng = np.random.default_rng(seed)
    return np.hstack([scale * rng.normal(size=(n, n_space)), 0.3 * rng.normal(size=(n, n_time))])


def central_difference(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """(f(x + h e_k) - f(x - h e_k)) / 2h for every entry k of x: the gradient of scalar f."""
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += h
        xm[idx] -= h
        g[idx] = (f(xp) - f(xm)) / (2 * h)
    return g


def snakemake(
    *args: str, cwd: Path = REPO, check: bool = True, path_first: Path | None = None
) -> subprocess.CompletedProcess:
    """Run snakemake with this interpreter's environment (the step script runs `python`);
    ``path_first`` goes before it on PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    if path_first is not None:
        env["PATH"] = f"{path_first}{os.pathsep}{env['PATH']}"
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), *args]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def planned_jobs(configfiles: list[str], targets: list[str]) -> list[dict]:
    """Every job of a step the workflow plans for ``targets`` (benchmarks/workflow_jobs.py,
    the one reader of a plan's parameters: a dry run does not print a script job's)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import workflow_jobs
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    return workflow_jobs.planned_jobs(configfiles, targets)
