"""How many cross-validation folds does each t-STE curve need? A replay of metric files.

Every t-STE method is evaluated on the folds of one fixed split (:func:`kfold_triplets`);
``tste.folds_used`` (or ``tste.authors_code.folds_used``) keeps the first N folds of that
same split. Fold fits are independent, so a shorter protocol's Fig. 2 values are the means
over a prefix of the folds a full run already holds: this script recomputes them from the
metric files of a finished run, without fitting anything, and prints per (protocol, dataset,
method) the seconds its fold fits took (the metric rows' wall seconds, summed), the share a prefix
of N folds keeps, and the largest change of a Fig. 2 value (mean over folds, any dimension)
that the prefix causes; then whether any verdict of the claims tables changes. The
authors_figure reading counts as a protocol: its refitted methods get rows, its table takes
the authors_code fits of the others (as the workflow's does). With
``--benchmarks`` (the run's ``logs/benchmarks``), also the CPU seconds of the fold jobs (the
fits, their start-up and their errors: the runner's line in each job's log, else its benchmark
file's sample), all and kept, and per dataset the
CPU seconds a prefix saves, over every reading whose fold jobs are there (the authors_figure
reading's refits included).

    python benchmarks/bench_tste_folds.py --results results --folds 3 5
    python benchmarks/bench_tste_folds.py --results results --benchmarks logs/benchmarks --folds 5

``--datasets`` cuts only the named datasets' folds: the others keep every fold their files
hold (the claims span the datasets of a protocol).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd

from embedlab.experiments.tste.claims import claims_table
from embedlab.experiments.tste.fig2 import fig2_table
from embedlab.experiments.tste.protocol import METHOD_ORDER
from embedlab.timings import job_log, read_benchmark

#: each protocol's metrics folders (under results/metrics), a later one's method replacing an
#: earlier one's: the authors_figure reading refits some methods and takes the authors' others
PROTOCOLS = {
    "paper_text": ["tste"],
    "authors_code": ["tste_authors"],
    "authors_figure": ["tste_authors", "tste_authors_figure"],
}
#: the fold jobs' benchmark folders (under logs/benchmarks): rule / reading
FOLD_JOBS = [
    ("tste_part", "tste"),
    ("tste_authors_part", "tste_authors"),
    ("tste_authors_part", "tste_authors_figure"),
]


def fold_cpu(benchmarks: Path) -> pd.DataFrame:
    """One row per fold job's benchmark file: rule, reading, dataset, method, fold, cpu_s."""
    rows = []
    for rule, reading in FOLD_JOBS:
        for path in sorted((benchmarks / rule / reading).glob("*/*/fold*.tsv")):
            dataset, method = path.parent.parent.name, path.parent.name
            fold = int(path.stem.removeprefix("fold"))
            cpu = read_benchmark(path, job_log(benchmarks, path))["cpu_s"]
            rows.append({"rule": rule, "reading": reading, "dataset": dataset,
                         "method": method, "fold": fold, "cpu_s": cpu})  # fmt: skip
    return pd.DataFrame(rows, columns=["rule", "reading", "dataset", "method", "fold", "cpu_s"])


def metric_files(results: Path, folders: list[str]) -> dict[str, dict[str, Path]]:
    """Dataset -> method -> its metric CSV under results/metrics/<folder>, the last of
    ``folders`` that has it."""
    out: dict[str, dict[str, Path]] = {}
    for folder in folders:
        for path in sorted((results / "metrics" / folder).glob("*/*.csv")):
            out.setdefault(path.parent.name, {})[path.stem] = path
    return out


def complete(df: pd.DataFrame) -> int:
    """Number of folds in a method's metric rows (fold -1 rows: the authors' 1-NN fit)."""
    return int(df.loc[df["fold"] >= 0, "fold"].nunique())


def prefix(df: pd.DataFrame, n_folds: int) -> pd.DataFrame:
    """The rows a run with only the first ``n_folds`` folds would have written."""
    return df[df["fold"] < n_folds]


def tables(files: list[Path], n_folds: int | None, workdir: Path) -> pd.DataFrame:
    """fig2_table of ``files``, restricted to the first ``n_folds`` folds (None = all)."""
    paths = []
    for k, path in enumerate(files):
        df = pd.read_csv(path)
        if n_folds is not None:
            df = prefix(df, n_folds)
        out = workdir / f"{k}_{path.name}"
        df.to_csv(out, index=False)
        paths.append(out)
    return fig2_table(paths)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results", type=Path, default=Path("results"))
    p.add_argument("--folds", type=int, nargs="+", default=[3, 5])
    p.add_argument("--paper", type=Path, default=Path("config/paper_values/tste_claims.csv"))
    p.add_argument("--benchmarks", type=Path, help="the run's logs/benchmarks: CPU seconds")
    p.add_argument("--datasets", nargs="+", help="cut only these datasets' folds (default: all)")
    args = p.parse_args(argv)
    cpu = fold_cpu(args.benchmarks) if args.benchmarks else None

    rows, verdicts = [], []
    for protocol, folders in PROTOCOLS.items():
        by_dataset = metric_files(args.results, folders)
        full_tables, short_tables = {}, {k: {} for k in args.folds}
        for dataset, by_method in by_dataset.items():
            files = list(by_method.values())
            # a row per method the protocol fits itself (not those it takes from another)
            frames = {m: pd.read_csv(f) for m, f in by_method.items()
                      if f.parent.parent.name == folders[-1]}  # fmt: skip
            with tempfile.TemporaryDirectory() as tmp:
                full = tables(files, None, Path(tmp))
                full_tables[dataset] = full
                cut = args.datasets is None or dataset in args.datasets
                for k in args.folds:
                    short = tables(files, k if cut else None, Path(tmp))
                    short_tables[k][dataset] = short
                    for method, df in frames.items() if cut else ():
                        n = complete(df)
                        cols = [c for c in full.columns if c.startswith(f"{method} ")]
                        cols = [c for c in cols if not c.endswith("tied")]
                        diff = (short[cols] - full[cols]).abs().max()
                        folds = df[df["fold"] >= 0]
                        row = {
                            "protocol": protocol,
                            "dataset": dataset,
                            "method": method,
                            "folds": n,
                            "fit_s": round(float(folds["seconds"].sum())),
                            "keep": k,
                            "fit_s_kept": round(float(prefix(folds, k)["seconds"].sum())),
                        }
                        if cpu is not None:
                            jobs = cpu[(cpu["reading"] == folders[-1])
                                       & (cpu["dataset"] == dataset)
                                       & (cpu["method"] == method)]  # fmt: skip
                            row["cpu_s"] = round(float(jobs["cpu_s"].sum()))
                            row["cpu_s_kept"] = round(float(prefix(jobs, k)["cpu_s"].sum()))
                        row.update({f"max_change {c.split(' ', 1)[1]}": diff[c] for c in cols})
                        rows.append(row)
        missing = {
            d: len(METHOD_ORDER) - len(f)
            for d, f in by_dataset.items()
            if len(f) < len(METHOD_ORDER)
        }
        if not full_tables:
            continue
        if missing:  # the claims table names the methods a dataset did not run
            print(f"{protocol}: claims compared without {missing} methods (per dataset)")
        full_claims = claims_table(full_tables, args.paper)
        for k in args.folds:
            short_claims = claims_table(short_tables[k], args.paper)
            changed = full_claims["holds"].astype(str) != short_claims["holds"].astype(str)
            verdicts.append((protocol, k, int(changed.sum()), len(full_claims)))
            for _, c in short_claims[changed].iterrows():
                print(f"  {protocol}, {k} folds: claim '{c['claim']}' -> {c['holds']}")

    if not rows:
        print(f"no t-STE metric files under {args.results}/metrics", file=sys.stderr)
        return 1
    table = pd.DataFrame(rows)
    pd.set_option("display.width", 200)
    print(table.round(4).to_string(index=False))
    for protocol, k, changed, total in verdicts:
        print(f"{protocol}: {changed} of {total} claim verdicts change with the first {k} folds")
    if cpu is not None:
        for dataset, jobs in cpu.groupby("dataset"):
            if args.datasets is not None and dataset not in args.datasets:
                continue
            for k in args.folds:
                saved = float(jobs.loc[jobs["fold"] >= k, "cpu_s"].sum())
                readings = ", ".join(sorted(jobs["reading"].unique()))
                print(
                    f"{dataset}: the first {k} folds save {saved:.0f} of "
                    f"{jobs['cpu_s'].sum():.0f} CPU s of fold jobs ({readings})"
                )
    incomplete = table[table["folds"] < table["folds"].max()]
    if len(incomplete):
        names = sorted(set(incomplete["method"] + "/" + incomplete["dataset"]))
        print("note: fewer folds in", names)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
