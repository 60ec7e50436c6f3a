"""Compare the tables of two runs: every CSV under results/tables of one against the other.

    python scripts/compare_tables.py BEFORE/results/tables AFTER/results/tables

Used to check that a refactoring changes no number (e.g. the quick configuration's tables
before and after). The columns that a table's writer declared measurements of the machine
(times, memory; ``x.columns.json`` beside ``x.csv``) are not compared; every other cell must
be equal (numbers to ``--rtol``, 0 = exactly): ``embedlab.tables.compare_csv``. Exit status 1
and a list of the differences when any table differs, is missing, is extra or has no column
declaration.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from embedlab.tables import compare_csv


def compare(before: Path, after: Path, rtol: float = 0.0) -> list[str]:
    """Differences between the CSV tables of two folders, one line each."""
    names_before = {p.name for p in before.glob("*.csv")}
    names_after = {p.name for p in after.glob("*.csv")}
    problems = [f"{n}: only in {before}" for n in sorted(names_before - names_after)]
    problems += [f"{n}: only in {after}" for n in sorted(names_after - names_before)]
    for name in sorted(names_before & names_after):
        found, _ = compare_csv(before / name, after / name, rtol=rtol)
        problems += [f"{name}: {problem}" for problem in found]
    return problems


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path)
    p.add_argument("--rtol", type=float, default=0.0, help="relative tolerance of numbers")
    args = p.parse_args(argv)
    problems = compare(args.before, args.after, args.rtol)
    n = len(list(args.before.glob("*.csv")))
    if problems:
        print("\n".join(problems))
        print(f"{len(problems)} difference(s) over {n} tables")
        return 1
    print(f"{n} tables equal (declared measurements of the machine skipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
