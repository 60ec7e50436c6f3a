"""Compare the results/ of two runs of the workflow (a local run and a SLURM run).

    python scripts/slurm/compare_runs.py LOCAL_DIR SLURM_DIR [--expected FILE]

Checks, each reported PASS/FAIL:
  files      both runs wrote the same set of files under results/;
  expected   every file in --expected (the outputs the DAG of the run plans, one per line,
             from `snakemake --summary`) exists and is non-empty in both runs, in particular
             every figure (results/figures/*.png|pdf);
  datasets   each dataset artifact is identical: data.npz the same arrays (names, dtypes,
             shapes, values bit for bit; the zip's member time stamps are not compared),
             items.tsv byte for byte, meta.json the same JSON;
  tables     every results/tables/*.csv has the same columns, rows and text cells, and its
             numbers agree within --rtol/--atol, apart from the columns that its writer
             declared measurements of the machine (times, memory, CPU use) in the
             x.columns.json beside it (embedlab.tables.compare_csv); a table without that
             declaration fails.
Exit status 0 only if all checks pass.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from embedlab.tables import compare_csv

# No tolerance beyond the defaults: the kernels sum in a fixed order (tests/test_ne_kernel.py
# checks a fresh and a cached compile give the same bits), so a correct run reproduces every
# result to the last bit, on one node or many.


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in (root / "results").rglob("*") if p.is_file()}


def compare_npz(a: Path, b: Path) -> list[str]:
    problems = []
    with np.load(a, allow_pickle=False) as za, np.load(b, allow_pickle=False) as zb:
        if sorted(za.files) != sorted(zb.files):
            return [f"arrays {sorted(za.files)} != {sorted(zb.files)}"]
        for key in za.files:
            x, y = za[key], zb[key]
            if x.dtype != y.dtype or x.shape != y.shape:
                problems.append(f"{key}: {x.dtype}{x.shape} != {y.dtype}{y.shape}")
            elif not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
                problems.append(f"{key}: values differ")
    return problems


def compare_dataset_dir(a: Path, b: Path) -> list[str]:
    problems = []
    for name in ("data.npz", "items.tsv", "meta.json"):
        fa, fb = a / name, b / name
        if not (fa.exists() and fb.exists()):
            problems.append(f"{name} missing")
        elif name == "data.npz":
            problems += [f"{name} {p}" for p in compare_npz(fa, fb)]
        elif name == "meta.json":
            if json.loads(fa.read_text()) != json.loads(fb.read_text()):
                problems.append(f"{name} differs")
        elif fa.read_bytes() != fb.read_bytes():
            problems.append(f"{name} differs")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("local", type=Path)
    parser.add_argument("slurm", type=Path)
    parser.add_argument("--expected", type=Path, help="file listing the planned outputs")
    parser.add_argument("--rtol", type=float, default=1e-6)
    parser.add_argument("--atol", type=float, default=1e-9)
    args = parser.parse_args(argv)
    local, slurm = args.local, args.slurm
    results: list[tuple[str, bool, str]] = []

    # files
    fl, fs = files_under(local), files_under(slurm)
    only_l, only_s = sorted(fl - fs), sorted(fs - fl)
    detail = f"{len(fl)} files in each run"
    if only_l or only_s:
        detail = f"only local: {only_l[:10]}; only SLURM: {only_s[:10]}"
    results.append(("files", not (only_l or only_s), detail))

    # expected outputs, figures in particular
    if args.expected:
        expected = [ln.strip() for ln in args.expected.read_text().splitlines() if ln.strip()]
        missing = [
            f"{name}:{p}"
            for name, root in (("local", local), ("slurm", slurm))
            for p in expected
            if not (root / p).is_file() or (root / p).stat().st_size == 0
        ]
        figures = [p for p in expected if p.startswith("results/figures/")]
        results.append(
            (
                "expected",
                bool(expected) and not missing,
                f"{len(expected)} planned outputs, {len(figures)} of them figures, present and "
                f"non-empty in both runs"
                if not missing
                else f"missing or empty: {missing[:10]}",
            )
        )

    # dataset artifacts
    dirs = sorted(p.parent for p in (local / "results" / "datasets").glob("*/meta.json"))
    bad = {}
    for d in dirs:
        problems = compare_dataset_dir(d, slurm / d.relative_to(local))
        if problems:
            bad[d.name] = problems
    results.append(
        (
            "datasets",
            bool(dirs) and not bad,
            f"{len(dirs)} artifacts identical" if not bad else json.dumps(bad)[:2000],
        )
    )

    # tables
    tables = sorted((local / "results" / "tables").glob("*.csv"))
    table_problems, table_notes = {}, {}
    for t in tables:
        other = slurm / t.relative_to(local)
        if not other.exists():
            table_problems[t.name] = ["missing in the SLURM run"]
            continue
        problems, notes = compare_csv(t, other, args.rtol, args.atol)
        if problems:
            table_problems[t.name] = problems
        if notes:
            table_notes[t.name] = notes
    for name, notes in table_notes.items():
        for note in notes:
            print(f"  note  {name}: {note}")
    for name, problems in table_problems.items():
        for problem in problems:
            print(f"  DIFF  {name}: {problem}")
    results.append(
        (
            "tables",
            bool(tables) and not table_problems,
            f"{len(tables)} CSV tables equal (rtol {args.rtol:g}, atol {args.atol:g}; "
            f"declared measurements of the machine skipped)"
            if not table_problems
            else f"{len(table_problems)} of {len(tables)} tables differ: {sorted(table_problems)}",
        )
    )

    width = max(len(n) for n, _, _ in results)
    for name, ok, detail in results:
        print(f"{'PASS' if ok else 'FAIL'}  {name:<{width}}  {detail}")
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
