"""Compare the tables of two runs: every CSV under results/tables of one against the other.

    python scripts/compare_tables.py BEFORE/results/tables AFTER/results/tables

Used to check that a refactoring changes no number (e.g. the quick configuration's tables
before and after). Columns of run time (``seconds``, ``*_s``, ``time``, ``wall``) are not
compared; every other cell must be equal (numbers to ``--rtol``, 0 = exactly). Exit status 1
and a list of the differences when any table differs, is missing or is extra.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

TIMING = re.compile(r"(^|_)(seconds|time|wall|minutes)($|_)|_s$")


def compare(before: Path, after: Path, rtol: float = 0.0) -> list[str]:
    """Differences between the CSV tables of two folders, one line each."""
    names_before = {p.name for p in before.glob("*.csv")}
    names_after = {p.name for p in after.glob("*.csv")}
    problems = [f"{n}: only in {before}" for n in sorted(names_before - names_after)]
    problems += [f"{n}: only in {after}" for n in sorted(names_after - names_before)]
    for name in sorted(names_before & names_after):
        a, b = pd.read_csv(before / name), pd.read_csv(after / name)
        if list(a.columns) != list(b.columns) or a.shape != b.shape:
            problems.append(f"{name}: columns/shape {list(a.columns)} {a.shape} vs {b.shape}")
            continue
        for col in a.columns:
            if TIMING.search(str(col)):
                continue
            x, y = a[col], b[col]
            if pd.api.types.is_numeric_dtype(x) and pd.api.types.is_numeric_dtype(y):
                same = np.isclose(x, y, rtol=rtol, atol=0.0, equal_nan=True)
            else:
                both_missing = (x.isna() & y.isna()).to_numpy(dtype=bool)
                equal = (x.astype(object) == y.astype(object)).to_numpy(dtype=bool, na_value=False)
                same = both_missing | equal
            for row in np.flatnonzero(~same)[:3]:
                problems.append(f"{name}: row {row}, {col}: {x.iloc[row]} vs {y.iloc[row]}")
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
    print(f"{n} tables equal (timing columns skipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
