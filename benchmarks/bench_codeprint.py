"""Time the workflow's start-up cost of code fingerprints (embedlab.codeprint): a cold parse
of the package and the fingerprint of every step, as common.smk computes them once per run.

    python benchmarks/bench_codeprint.py [--rounds 5]

Prints the median and the range over the rounds, the same for parsing alone (ast.parse of
every module: the floor of computing them) and for reading them back from the cache the
workflow keeps (``CodePrints(src, cache=...)``, the sources unchanged: what every Snakemake
call after the first pays).
"""

from __future__ import annotations

import argparse
import ast
import statistics
import tempfile
import time
from pathlib import Path

from embedlab.codeprint import CodePrints

SRC = Path(__file__).resolve().parents[1] / "src"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    full, parse, kept = [], [], []
    with tempfile.TemporaryDirectory() as cache:
        computing = CodePrints(SRC, cache=cache)
        every_print(computing)
        computing.save()
        for _ in range(args.rounds):
            started = time.perf_counter()
            every_print(CodePrints(SRC))
            full.append(time.perf_counter() - started)
            started = time.perf_counter()
            for path in (SRC / "embedlab").rglob("*.py"):
                ast.parse(path.read_text())
            parse.append(time.perf_counter() - started)
            started = time.perf_counter()
            every_print(CodePrints(SRC, cache=cache))
            kept.append(time.perf_counter() - started)
    n_steps = len(CodePrints(SRC).steps())
    for name, times in (
        ("every step's fingerprint", full),
        ("ast.parse alone", parse),
        ("read back from the cache", kept),
    ):
        print(
            f"{name:>26}: median {statistics.median(times):.3f} s "
            f"(min {min(times):.3f}, max {max(times):.3f}; {args.rounds} rounds)"
        )
    full_s, parse_s, kept_s = (statistics.median(t) for t in (full, parse, kept))
    print(f"{n_steps} steps; fingerprints / parse alone: x{full_s / parse_s:.2f}")
    print(f"fingerprints computed / read back from the cache: x{full_s / kept_s:.1f}")


def every_print(prints: CodePrints) -> None:
    """Every step's fingerprint, as the workflow's rules ask for them."""
    for step in prints.steps():
        prints.of_step(step)


if __name__ == "__main__":
    main()
