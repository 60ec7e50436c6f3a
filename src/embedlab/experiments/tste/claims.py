"""The paper's textual claims about Fig. 2 (``config/paper_values/tste_claims.csv``) checked on
one protocol's Fig. 2 tables: our values, whether each claim holds, the degenerate fits among
the methods it judges."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from embedlab.experiments.tste.fig2 import METRICS, degenerate_fits, describe_not_run
from embedlab.experiments.tste.protocol import READING


def in_claimed_range(value: float, low: float, high: float) -> bool:
    """Whether ``value`` lies in a claim's published range [low, high]; a single published
    number (low = high) is matched within 2 points."""
    tol = 0.02 if low == high else 0.0
    return low - tol <= value <= high + tol


def claims_table(tables_by_dataset: Mapping[str, pd.DataFrame], paper_csv: str | Path):
    """The paper's claims (config/paper_values/tste_claims.csv) with our values and verdicts.

    Datasets of the claims file map to ours by prefix ('mnist' -> mnist_triplets_1k). Methods:
    'all' (every method in range), 'tste_x' (t-STE-X; music: the lowest 1-NN error at every
    dimension), 'others' (every method but t-STE-X in range). A claim is judged on the
    methods the table has; 'ours' names the paper's methods it lacks (:func:`not_run`).
    """
    paper = pd.read_csv(paper_csv)
    rows = []
    for _, c in paper.iterrows():
        name = next((d for d in tables_by_dataset if d.startswith(str(c["dataset"]))), None)
        base = {"dataset": c["dataset"], "claim": c["note"]}
        if name is None:
            rows.append({**base, "ours": "", "holds": "not run"})
            continue
        short = METRICS[c["metric"]]
        degenerate = degenerate_fits(tables_by_dataset[name], short)
        t = tables_by_dataset[name].set_index("dims")
        methods = [col[: -len(short) - 1] for col in t.columns if col.endswith(f" {short}")]
        if pd.isna(c["dims"]):  # music: t-STE lowest genre error
            lowest = t[[f"{m} {short}" for m in methods]].idxmin(axis=1).str[: -len(short) - 1]
            wins = int((lowest == "t-STE-X").sum())
            ours = (
                f"t-STE-X lowest at {wins}/{len(t)} dims; "
                + ", ".join(f"{m} {t.loc[t.index[0], f'{m} {short}']:.3f}" for m in methods)
                + f" (d={t.index[0]})"
            )
            if missing := describe_not_run(methods):
                ours += f"; {missing}"
            collapsed = ", ".join(m for m in methods if m in degenerate)
            rows.append({**base, "ours": ours, "holds": wins == len(t), "degenerate": collapsed})
            continue
        d = int(c["dims"])
        if d not in t.index:
            rows.append({**base, "ours": f"dims {d} not run", "holds": "not run"})
            continue
        pick = {
            "all": methods,
            "tste_x": ["t-STE-X"],
            "others": [m for m in methods if m != "t-STE-X"],
        }[c["method"]]
        vals = {m: float(t.loc[d, f"{m} {short}"]) for m in pick}
        lo, hi = float(c["low"]), float(c["high"])
        holds = all(in_claimed_range(v, lo, hi) for v in vals.values())
        ours = ", ".join(f"{m} {v:.3f}" for m, v in vals.items())
        if c["method"] != "tste_x" and (missing := describe_not_run(methods)):
            ours += f"; {missing}"
        collapsed = [m for m in pick if d in degenerate.get(m, [])]
        rows.append(
            {
                **base,
                "paper": f"[{lo:.2f}, {hi:.2f}]",
                "ours": ours,
                "holds": holds,
                "degenerate": ", ".join(collapsed),
            }
        )
    return pd.DataFrame(rows)


def claims_title(protocol: str) -> str:
    """The title of ``protocol``'s claims table."""
    return f"t-STE paper's claims, as measured (protocol {protocol}: {READING[protocol]})"
