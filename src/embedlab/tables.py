"""Tables: aggregation into CSV + Markdown, and the paper-vs-ours comparison."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pandas as pd


def write_table(
    df: pd.DataFrame, csv_path: str | Path, md_path: str | Path, title: str = ""
) -> None:
    """Write ``df`` as CSV and as a Markdown table (with an optional heading)."""
    csv_path, md_path = Path(csv_path), Path(md_path)
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    md_path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(csv_path, index=False)
    body = df.to_markdown(index=False, floatfmt="g")
    md_path.write_text((f"# {title}\n\n" if title else "") + body + "\n")


def dataset_summary(meta_files: Iterable[str | Path]) -> pd.DataFrame:
    """One row per dataset artifact: its counts, and the paper's counts beside them.

    Ours come from the artifact's ``summary`` and ``counts`` meta fields; the paper's from
    the registry's ``paper`` entry (copied into the artifact's meta as ``paper``). Each paper
    count ``k`` gets a column ``paper_k`` next to ours.
    """
    rows = []
    for path in meta_files:
        meta = json.loads(Path(path).read_text())
        row = {"dataset": meta.get("name", Path(path).parent.name)}
        row.update(meta.get("summary", {}))
        row.update(meta.get("counts", {}))
        for key, value in meta.get("paper", {}).items():
            row[f"paper_{key}"] = value
        row["description"] = meta.get("description", "")
        rows.append(row)
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    # order: identity, our counts each followed by the paper's where it has one
    ordered = ["dataset", "kind"]
    for col in df.columns:
        if col in ordered or col.startswith("paper_") or col == "description":
            continue
        ordered.append(col)
        if f"paper_{col}" in df.columns:
            ordered.append(f"paper_{col}")
    ordered += [c for c in df.columns if c.startswith("paper_") and c not in ordered]
    ordered.append("description")
    df = df[ordered]
    return df.convert_dtypes()
