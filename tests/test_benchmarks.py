"""Every script under benchmarks/ still runs: each at a toy size, in a subprocess, as a user
would call it. The scripts are the evidence behind benchmarks/README.md; one of them had
failed on a changed signature for weeks before this test. Nothing here asserts a timing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from embedlab import artifacts, runs, steps
from embedlab.datasets.school import build as build_school
from embedlab.experiments.tste.protocol import METHOD_ORDER

from .conftest import REPO
from .helpers import save_labelled_vectors

BENCH = REPO / "benchmarks"


def run_script(name: str, *args: str, cwd: Path = REPO) -> str:
    """stdout + stderr of ``benchmarks/<name> args``; fails the test on a non-zero exit."""
    env = {**os.environ, "NUMBA_NUM_THREADS": "1", "OMP_WAIT_POLICY": "PASSIVE"}
    proc = subprocess.run(
        [sys.executable, str(BENCH / name), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{name} {' '.join(args)} exited {proc.returncode}:\n{out[-3000:]}"
    return out


# (script, toy arguments, a line its report must hold). bench_ne_kernel's toy n is below the
# kernel's SERIAL_BELOW: it runs the serial entry points, which the unit tests compile anyway,
# where a parallel toy run would compile all six parallel entry points in its own process
# (~100 s on a cold numba cache). bench_ne_fft runs two of its five cases (one per output
# kernel the workflow uses most): every case takes the same path, and each compiles its own.
TOY_RUNS = [
    ("bench_ne_kernel.py", ["--n", "200", "--repeats", "1", "--slow-repeats", "1"],
     "t-SNE R^2: float64 / float32"),
    ("bench_ne_fft.py", ["--n", "300", "--repeats", "1", "--kinds", "random",
                         "--cases", "t-SNE R^2", "SNEST R^{2,1}"], "SNEST R^{2,1}"),
    ("bench_attraction.py", ["--n", "600", "--repeats", "1"], "forces equal"),
    ("bench_dcode.py", ["--repeats", "1", "--years", "2"], "per token, mode"),
    ("bench_codeprint.py", ["--rounds", "1"], "fingerprints computed / read back from the cache"),
    ("bench_startup.py", ["--rounds", "1", "--kinds", "help", "build"], "lean / eager"),
    ("bench_diffeomap.py", ["--m", "100", "--a", "5", "--p", "3", "--n", "20", "--repeats", "1"],
     "agreement: energy"),
    ("bench_diffeomap.py", ["--full-set", "--m", "100", "--a", "5", "--p", "3", "--repeats", "1",
                            "--fit-iters", "3"], "energy trace bitwise identical"),
    ("bench_tste.py", ["--n", "60", "--m", "600", "--max-iter", "10", "--seeds", "0"],
     "embedlab TSTE"),
    ("bench_scale.py", ["--n", "600", "--max-iter", "30", "--exaggeration-epochs", "10",
                        "--rounds", "2"], "wall s per round"),
    ("bench_kform.py", ["--artifact", "no-such-artifact", "--max-triplets", "3000",
                        "--max-iter", "5"], "accelerated float32"),
]  # fmt: skip


@pytest.mark.parametrize("script,args,expect", TOY_RUNS, ids=[r[0] for r in TOY_RUNS])
@pytest.mark.slow
def test_benchmark_script_runs_at_a_toy_size(script, args, expect):
    assert expect in run_script(script, *args)


def test_precision_benchmark_runs_on_school(mirror):
    out = run_script(
        "bench_ne_precision.py", "--datasets", "school", "--cells", "tsne-2,snest-2-1",
        "--max-iter", "20", "--mirror", str(mirror),
    )  # fmt: skip
    assert "largest relative KL difference" in out


def test_restarts_and_stopping_replays_read_a_runs_file(tmp_path):
    """bench_ne_restarts replays a real runs file; bench_ne_stopping's replay (its jobs come
    from a Snakemake dry run of the repository, so only the replay is exercised here) reads
    the same file and, with its tests off, keeps the file's minimal KL."""
    artifacts.save(build_school({}), tmp_path / "school", "school")
    out = tmp_path / "runs" / "school" / "tsne-2.npz"
    out.parent.mkdir(parents=True)
    settings = dict(
        grid={"learning_rate": [10.0, 50.0]}, restarts=2, restarts_per_job=0,
        stopping={"rate_window": 0, "plateau_tol": 0.0, "abandon_margin": float("inf")},
        seed=0, max_iter=100, log_every=0, precision="float64", perplexity=30.0,
    )  # fmt: skip
    data = [str(tmp_path / "school" / f) for f in ("data.npz", "items.tsv", "meta.json")]
    job = {"data": data, "runs_file": str(out), "dataset": "school", "cell": "tsne-2"}
    steps.call("snest.embed", settings, job)
    report = run_script("bench_ne_restarts.py", str(tmp_path / "runs" / "*" / "*.npz"))
    assert "1 runs files" in report and "screened" in report

    sys.path.insert(0, str(BENCH))
    try:
        import bench_ne_stopping
    finally:
        sys.path.remove(str(BENCH))
    best, spent = bench_ne_stopping.replay(out, 0, 0.0, float("inf"))
    kept = [r["cost"] for r in runs.load_runs(out)["runs"] if r["cost"] is not None]
    assert best == pytest.approx(min(kept), rel=1e-12) and spent == 4 * 100


def _metric_rows(dataset: str, method: str, authors: bool, rng) -> pd.DataFrame:
    """Toy metric rows in the layout the Fig. 2 jobs write: 4 folds x dims 2 and 10; the
    authors' protocol adds its separate 1-NN fit (fold -1) and tied_fraction."""
    rows = []
    for dims in (2, 10):
        for fold in ([-1] if authors else []) + [0, 1, 2, 3]:
            gen = np.nan if fold < 0 else rng.uniform(0.1, 0.4)
            nn = rng.uniform(0.3, 0.9) if (fold < 0 or not authors) else np.nan
            row = {"dataset": dataset, "method": method, "dims": dims, "fold": fold,
                   "generalisation_error": gen, "loo_1nn_error": nn, "params": json.dumps({}),
                   "validation_errors": "[]", "n_iter": 10, "seconds": 1.0}  # fmt: skip
            if authors:
                row["tied_fraction"] = 0.0
            rows.append(row)
    return pd.DataFrame(rows)


def test_folds_replay_reads_metric_files(tmp_path):
    rng = np.random.default_rng(0)
    datasets = {"tste": ["mnist_triplets_1k", "music"],
                "tste_authors": ["mnist_triplets_1k_authors", "music"]}  # fmt: skip
    for folder, names in datasets.items():
        for dataset in names:
            target = tmp_path / "metrics" / folder / dataset
            target.mkdir(parents=True)
            for method in METHOD_ORDER:
                rows = _metric_rows(dataset, method, folder == "tste_authors", rng)
                rows.to_csv(target / f"{method}.csv", index=False)
    # the authors_figure reading refits t-STE-X on music and takes the authors' others
    figure = tmp_path / "metrics" / "tste_authors_figure" / "music"
    figure.mkdir(parents=True)
    _metric_rows("music", "t-STE-X", True, rng).to_csv(figure / "t-STE-X.csv", index=False)
    # the benchmark files of music's fold jobs, CPU seconds 10 + fold
    bench = tmp_path / "benchmarks"
    for rule, reading in [("tste_part", "tste"), ("tste_authors_part", "tste_authors")]:
        for fold in range(4):
            path = bench / rule / reading / "music" / "CKL-X" / f"fold{fold}.tsv"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("s\tcpu_time\tmax_rss\n1.0\t" + f"{10 + fold}\t5.0\n")
    out = run_script(
        "bench_tste_folds.py", "--results", str(tmp_path), "--folds", "2",
        "--paper", str(REPO / "config" / "paper_values" / "tste_claims.csv"),
        "--benchmarks", str(bench),
    )  # fmt: skip
    assert "paper_text: " in out and "authors_code: " in out
    assert "claim verdicts change with the first 2 folds" in out
    figure_rows = [line.split()[1:3] for line in out.splitlines()
                   if line.split()[:1] == ["authors_figure"] and len(line.split()) > 3]  # fmt: skip
    assert figure_rows == [["music", "t-STE-X"]]
    assert re.search(r"authors_figure: \d of 4 claim verdicts change with the first 2", out)
    # each reading's fold jobs: 10 + 11 + 12 + 13 CPU s; cutting folds 2 and 3 saves
    # (12 + 13) x 2 of 92
    assert "music: the first 2 folds save 50 of 92 CPU s of fold jobs" in out
    assert "(tste, tste_authors)" in out
    # only MNIST's folds cut, one of its authors' methods not run: music keeps its 4 folds
    # (no row, no CPU line), the claims are still compared
    (tmp_path / "metrics" / "tste_authors" / "mnist_triplets_1k_authors" / "GNMDS-K.csv").unlink()
    out = run_script(
        "bench_tste_folds.py", "--results", str(tmp_path), "--folds", "2",
        "--benchmarks", str(bench), "--datasets", "mnist_triplets_1k", "mnist_triplets_1k_authors",
    )  # fmt: skip
    table = [line.split() for line in out.splitlines() if line.split()[:1] == ["paper_text"]]
    assert {row[1] for row in table if len(row) > 2} == {"mnist_triplets_1k"}
    assert "claims compared without {'mnist_triplets_1k_authors': 1} methods" in out
    assert re.search(r"authors_code: \d of 4 claim verdicts change with the first 2 folds", out)
    assert "music: the first" not in out


def test_isomap_neighbourhood_bench_counts_components_and_errors(tmp_path):
    """Two far-apart blobs: the k-NN graph has two components, each embedded alone."""
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(2), 20)
    X = rng.normal(size=(40, 3)) + 50.0 * labels[:, None]
    toy = save_labelled_vectors(tmp_path / "toy", X, labels)
    out = run_script("bench_isomap_vowel.py", "--artifact", str(toy), "--k", "5")
    assert "| 5 | 2 | 20 |" in out


def test_the_dag_estimate_takes_each_job_from_the_first_run_that_measured_it(tmp_path):
    """Job a (tste_part) measured in both runs counts the first run's, its runner's log line
    (40.5 s, not the sample 14.7); job b (snest_embed) only in the second, its sample (20 s);
    the chain a -> b weighs 60.5 CPU s, and on the critical path 40.5 + 41 s (b's wall time:
    its CPU seconds are a sample); job c was measured nowhere."""
    from .test_timings import HEADER

    dry_run = tmp_path / "dag.txt"
    blocks = [("tste_part", "1", "out/a.txt", "", "logs/a.log", "logs/benchmarks/tste_part/a.tsv"),
              ("snest_embed", "2", "out/b.txt", "out/a.txt", "logs/b.log",
               "logs/benchmarks/snest_embed/b.tsv"),
              ("ee_table", "3", "out/c.txt", "", "logs/c.log",
               "logs/benchmarks/ee_table/c.tsv")]  # fmt: skip
    text = ""
    for rule, jobid, output, inputs, log, bench in blocks:
        text += f"rule {rule}:\n" + (f"    input: {inputs}\n" if inputs else "")
        text += f"    output: {output}\n    log: {log}\n    jobid: {jobid}\n"
        text += f"    benchmark: {bench}\n\n"
    dry_run.write_text(text)
    first, second = tmp_path / "first", tmp_path / "second"
    for run, name, cpu in [(first, "tste_part/a", 14.7), (second, "tste_part/a", 99.0),
                           (second, "snest_embed/b", 20.0)]:  # fmt: skip
        path = run / "logs" / "benchmarks" / f"{name}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(HEADER + f"41.0\t0:00:41\t100\t1\t1\t1\t0\t0\t50\t{cpu}\n")
    (first / "logs" / "a.log").write_text("x INFO job CPU seconds: 40.50 (user 40.0, system 0.5)\n")
    out = run_script("estimate_dag_cpu.py", "--dry-run", str(dry_run),
                     "--runs", str(first), str(second))  # fmt: skip
    assert "measured: 60 CPU s (0.02 CPU h) of 2 of 3 jobs" in out
    assert "not measured: ee_table 1" in out
    assert "critical path by the jobs' own seconds (jobs not measured count 0): 82 s" in out
    # b waits for a, each on one core (CPU / wall below 1.5): no schedule is shorter
    assert "list schedule on 2 cores (jobs not measured count 0): 60 s (0.02 h)" in out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:8]}
    assert rows["t-STE"] == ["1", "1", "40.5", "0"] and rows["SNEST"] == ["1", "1", "20.0", "1"]
