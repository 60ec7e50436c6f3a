"""Tables: aggregation into CSV + Markdown, and the paper-vs-ours comparison."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from embedlab import artifacts


def write_table(
    df: pd.DataFrame, csv_path: str | Path, md_path: str | Path, title: str = "", after: str = ""
) -> None:
    """Write ``df`` as CSV and as a Markdown table (with an optional heading and Markdown
    ``after`` it), atomically."""
    write_csv(df, csv_path)
    shown = df.astype(object).where(df.notna(), "")
    body = shown.to_markdown(index=False, floatfmt="g")
    text = (f"# {title}\n\n" if title else "") + body + "\n" + (f"\n{after}" if after else "")
    artifacts.write_text_atomic(md_path, text)


def write_csv(df: pd.DataFrame, path: str | Path) -> Path:
    """``df`` as CSV (no index) at ``path``, atomically."""
    return artifacts.atomic_write(path, lambda tmp: df.to_csv(tmp, index=False))


SIZE_FIELD = {
    "similarity": "nnz",
    "vectors": "dims",
    "triplets": "triplets",
    "cooccurrence": "time_steps",
}


def _fmt(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def dataset_summary(meta_files: Iterable[str | Path]) -> pd.DataFrame:
    """One row per dataset artifact: our counts, and the paper's beside them.

    Columns: ``n`` (items) and ``size`` (the kind's measure: nnz of P, dims of X, number of
    triplets, number of time steps) each followed by the paper's value where the registry's
    ``paper`` entry states it; ``classes``; ``other_counts``: every further count the builder
    recorded (``meta["counts"]``), as ``name ours (paper p)``.
    """
    rows = []
    for path in meta_files:
        meta = json.loads(Path(path).read_text())
        summary, paper = meta.get("summary", {}), dict(meta.get("paper", {}))
        counts = {
            **{k: v for k, v in summary.items() if k not in ("kind", "n")},
            **meta.get("counts", {}),
        }
        kind = summary.get("kind", meta.get("kind"))
        size_field = SIZE_FIELD[kind]
        row = {
            "dataset": meta.get("name", Path(path).parent.name),
            "kind": kind,
            "n": summary.get("n"),
            "paper_n": paper.pop("n", None),
            "size": f"{size_field} {_fmt(counts.pop(size_field, ''))}",
            "paper_size": _fmt(paper.pop(size_field)) if size_field in paper else None,
            "classes": counts.pop("classes", None),
        }
        other = []
        for key, value in counts.items():
            if key == "n":
                continue
            text = f"{key} {_fmt(value)}"
            if key in paper:
                text += f" (paper {_fmt(paper.pop(key))})"
            other.append(text)
        other += [f"{key} - (paper {_fmt(value)})" for key, value in paper.items()]
        row["other_counts"] = "; ".join(other)
        row["description"] = meta.get("description", "")
        rows.append(row)
    return pd.DataFrame(rows).convert_dtypes()


def verdict(ours: float | None, paper: float | None, tol: float, lower_is_better: bool) -> str:
    """'matched' if |ours - paper| <= tol, else 'better' or 'worse'; 'no paper value' if none."""
    if paper is None or pd.isna(paper):
        return "no paper value"
    if ours is None or pd.isna(ours):
        return "not reproduced"
    diff = float(ours) - float(paper)
    if abs(diff) <= tol:
        return "matched"
    return "better" if (diff < 0) == lower_is_better else "worse"
