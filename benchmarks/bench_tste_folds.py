"""How many cross-validation folds does each t-STE curve need? A replay of metric files.

Every t-STE method is evaluated on the folds of one fixed split (:func:`kfold_triplets`);
``tste.folds_used`` (or ``tste.authors_code.folds_used``) keeps the first N folds of that
same split. Fold fits are independent, so a shorter protocol's Fig. 2 values are the means
over a prefix of the folds a full run already holds: this script recomputes them from the
metric files of a finished run, without fitting anything, and prints per (protocol, dataset,
method) the seconds its fold fits took (the metric rows' wall seconds, summed), the share a prefix
of N folds keeps, and the largest change of a Fig. 2 value (mean over folds, any dimension)
that the prefix causes; then whether any verdict of the claims tables changes.

    python benchmarks/bench_tste_folds.py --results results --folds 3 5
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

PROTOCOLS = {"paper_text": "tste", "authors_code": "tste_authors"}


def metric_files(results: Path, folder: str) -> dict[str, list[Path]]:
    """Dataset -> its per-method metric CSVs under results/metrics/<folder>."""
    out: dict[str, list[Path]] = {}
    for path in sorted((results / "metrics" / folder).glob("*/*.csv")):
        out.setdefault(path.parent.name, []).append(path)
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
    args = p.parse_args(argv)

    rows, verdicts = [], []
    for protocol, folder in PROTOCOLS.items():
        by_dataset = metric_files(args.results, folder)
        full_tables, short_tables = {}, {k: {} for k in args.folds}
        for dataset, files in by_dataset.items():
            frames = {f.stem: pd.read_csv(f) for f in files}
            with tempfile.TemporaryDirectory() as tmp:
                full = tables(files, None, Path(tmp))
                full_tables[dataset] = full
                for k in args.folds:
                    short = tables(files, k, Path(tmp))
                    short_tables[k][dataset] = short
                    for method, df in frames.items():
                        n = complete(df)
                        cols = [c for c in full.columns if c.startswith(f"{method} ")]
                        cols = [c for c in cols if not c.endswith("tied")]
                        diff = (short[cols] - full[cols]).abs().max()
                        folds = df[df["fold"] >= 0]
                        rows.append(
                            {
                                "protocol": protocol,
                                "dataset": dataset,
                                "method": method,
                                "folds": n,
                                "fit_s": round(float(folds["seconds"].sum())),
                                "keep": k,
                                "fit_s_kept": round(float(prefix(folds, k)["seconds"].sum())),
                                **{f"max_change {c.split(' ', 1)[1]}": diff[c] for c in cols},
                            }
                        )
        missing = {
            d: len(METHOD_ORDER) - len(f)
            for d, f in by_dataset.items()
            if len(f) < len(METHOD_ORDER)
        }
        if not full_tables or missing:
            print(f"{protocol}: claims not compared (methods missing per dataset: {missing})")
            continue
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
    incomplete = table[table["folds"] < table["folds"].max()]
    if len(incomplete):
        names = sorted(set(incomplete["method"] + "/" + incomplete["dataset"]))
        print("note: fewer folds in", names)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
