"""How many restarts and learning rates does each Table 1 cell need? A replay of runs files.

Every SNEST-paper cell fits each learning rate of its grid from the same restarts (seeds
0..S-1, :func:`embedlab.runs.run_grid`) and reports the minimal KL. Runs are deterministic
and independent, so a smaller protocol's minimum is the minimum over a subset of the runs
already in a runs file (exact for runs that ran their full course; a run the abandonment test
stopped could not have beaten its cell's best). Two smaller protocols are replayed:

* ``first k``: every rate on seeds 0..k-1 (k rates x k runs);
* ``screened k``: every rate on seed 0, then only seed 0's best rate on seeds 1..k-1
  (rates + k - 1 runs).

For each, the cells whose minimal KL differs from the file's at the paper's 2 decimals, the
largest increase, and the epochs spent (sum of the runs' epochs) as a share of the file's.

    .venv/bin/python benchmarks/bench_ne_restarts.py                      # the workflow's runs
    .venv/bin/python benchmarks/bench_ne_restarts.py \\
        'results/benchmarks/ne_stopping/full/*/*.npz'                    # bench_ne_stopping's
"""

from __future__ import annotations

import argparse
import glob
from pathlib import Path

import numpy as np
import pandas as pd

from embedlab import runs


def replay(path: str) -> list[dict]:
    """One row per (protocol, k) of one runs file: its minimal KL and epochs."""
    table = [r for r in runs.load_runs(path)["runs"] if r["cost"] is not None]
    seeds = sorted({r["seed"] for r in table})
    first = seeds[0]
    cell = {"dataset": Path(path).parent.name, "cell": Path(path).stem, "seeds": len(seeds)}
    full = min(r["cost"] for r in table)
    all_epochs = sum(r["n_iter"] for r in table)
    at_first = [r for r in table if r["seed"] == first]
    best_rate = min(at_first, key=lambda r: r["cost"])["learning_rate"] if at_first else None
    rows = []
    for k in range(1, len(seeds) + 1):
        kept = seeds[:k]
        protocols = {
            "first": [r for r in table if r["seed"] in kept],
            "screened": [
                r
                for r in table
                if r["seed"] == first or (r["seed"] in kept and r["learning_rate"] == best_rate)
            ],
        }
        for name, subset in protocols.items():
            rows.append(
                {
                    **cell,
                    "protocol": name,
                    "k": k,
                    "kl": min((r["cost"] for r in subset), default=np.inf),
                    "kl_full": full,
                    "epochs_share": sum(r["n_iter"] for r in subset) / all_epochs,
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pattern", nargs="?", default="results/embeddings/snest/*/*.npz")
    args = parser.parse_args()
    paths = sorted(glob.glob(args.pattern))
    if not paths:
        raise SystemExit(f"no runs files match {args.pattern}")
    df = pd.DataFrame([row for path in paths for row in replay(path)])
    df["differs"] = df["kl"].round(2) != df["kl_full"].round(2)
    df["increase"] = df["kl"] - df["kl_full"]
    summary = (
        df.groupby(["dataset", "protocol", "k"])
        .agg(
            cells=("cell", "size"),
            differ_2dp=("differs", "sum"),
            max_increase=("increase", "max"),
            epochs_share=("epochs_share", "mean"),
        )
        .reset_index()
    )
    summary["max_increase"] = summary["max_increase"].round(4)
    summary["epochs_share"] = summary["epochs_share"].round(3)
    print(f"{len(paths)} runs files; per dataset, protocol and k (the file's own protocol: "
          "'first' at the largest k)")
    print(summary.to_string(index=False))
    changed = df[df["differs"]].sort_values(["protocol", "k", "dataset", "cell"])
    print("\ncells whose minimal KL changes at 2 decimals:")
    print(changed[["dataset", "cell", "protocol", "k", "kl", "kl_full"]].round(4).to_string(
        index=False))


if __name__ == "__main__":
    main()
