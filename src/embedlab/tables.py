"""Tables: CSV + Markdown with each column's role declared, the comparison of two runs' tables,
the dataset summary, and the paper-vs-ours verdict."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from embedlab import artifacts

#: beside each CSV table ``x.csv``, ``x.columns.json`` declares what each column holds
COLUMNS_SUFFIX = ".columns.json"
#: a column's role: a result of the method, or a measurement of the machine that ran it
#: (times, memory, CPU use), which differs between two correct runs
RESULT, MEASUREMENT = "result", "measurement"


def columns_path(csv_path: str | Path) -> Path:
    """Where the column declaration of the CSV table ``csv_path`` is written."""
    csv_path = Path(csv_path)
    return csv_path.with_name(csv_path.stem + COLUMNS_SUFFIX)


def write_table(
    df: pd.DataFrame,
    csv_path: str | Path,
    md_path: str | Path,
    *,
    measured: Collection[str],
    title: str = "",
    after: str = "",
) -> None:
    """Write ``df`` as CSV (with its column declaration, see :func:`write_csv`) and as a
    Markdown table (with an optional heading and Markdown ``after`` it), atomically."""
    write_csv(df, csv_path, measured=measured)
    shown = df.astype(object).where(df.notna(), "")
    body = shown.to_markdown(index=False, floatfmt="g")
    text = (f"# {title}\n\n" if title else "") + body + "\n" + (f"\n{after}" if after else "")
    artifacts.write_text_atomic(md_path, text)


def write_csv(df: pd.DataFrame, path: str | Path, *, measured: Collection[str]) -> Path:
    """``df`` as CSV (no index) at ``path``, atomically, and beside it the declaration of its
    columns (:func:`columns_path`): the ``measured`` ones measure the machine (times, memory,
    CPU use), every other one is a result. The writer of a table is the one place that knows
    which is which; comparisons of two runs read the declaration (:func:`read_columns`)."""
    unknown = sorted(set(measured) - set(df.columns))
    if unknown:
        raise ValueError(
            f"{path}: measured column(s) {unknown} are not columns of the table {list(df.columns)}"
        )
    fields = [{"name": c, "role": MEASUREMENT if c in measured else RESULT} for c in df.columns]
    artifacts.write_text_atomic(columns_path(path), json.dumps({"fields": fields}, indent=1) + "\n")
    return artifacts.atomic_write(path, lambda tmp: df.to_csv(tmp, index=False))


def read_columns(csv_path: str | Path) -> dict[str, str]:
    """column -> role (:data:`RESULT` or :data:`MEASUREMENT`) as :func:`write_csv` declared it
    beside ``csv_path``. Raises FileNotFoundError (no declaration) or ValueError (a role that
    is neither), naming the file."""
    path = columns_path(csv_path)
    if not path.is_file():
        raise FileNotFoundError(
            f"{csv_path}: no column declaration {path.name} beside it (tables are written by "
            "embedlab.tables.write_csv, which declares their measured columns)"
        )
    fields = json.loads(path.read_text())["fields"]
    roles = {f["name"]: f["role"] for f in fields}
    bad = {name: role for name, role in roles.items() if role not in (RESULT, MEASUREMENT)}
    if bad:
        raise ValueError(f"{path}: unknown column role(s) {bad}")
    return roles


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


def left_out_note(left_out: str | dict) -> str:
    """Markdown naming the own datasets a table leaves out and why, from {dataset: reason}
    (a step's settings) or that object as JSON (a verb's ``--left-out``); '' for none."""
    reasons = json.loads(left_out) if isinstance(left_out, str) else left_out
    if not isinstance(reasons, dict):
        raise ValueError(f"left-out datasets must be a JSON object, got {left_out!r}")
    if not reasons:
        return ""
    items = "; ".join(f"{name} ({why})" for name, why in reasons.items())
    return f"Own datasets left out of this table: {items}.\n"


def own_dataset_notes(places: dict[str, dict[str, str]]) -> str:
    """Markdown: for each own dataset, the papers that run it and those that leave it out,
    with the reason ('' when there is no own dataset); datasets and papers by name."""
    if not places:
        return ""
    lines = ["## Your own datasets", ""]
    for name, papers in sorted(places.items()):
        runs = [paper for paper, why in sorted(papers.items()) if not why]
        left = [f"{paper} ({why})" for paper, why in sorted(papers.items()) if why]
        text = f"- **{name}**: in {', '.join(runs) or 'no paper'}"
        lines.append(text + (f"; left out of {'; '.join(left)}" if left else ""))
    return "\n".join(lines) + "\n"


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


def _as_float(values: pd.Series) -> np.ndarray | None:
    """The column as floats, or None if some non-empty cell is not a number."""
    try:
        return pd.to_numeric(values, errors="raise").to_numpy(dtype=float)
    except (TypeError, ValueError):
        return None


def _compare_column(x: pd.Series, y: pd.Series, rtol: float, atol: float) -> tuple[str, str]:
    """(problem, note) for one result column of two runs; '' where there is none."""
    xv, yv = _as_float(x), _as_float(y)
    if pd.api.types.is_bool_dtype(x) or xv is None or yv is None:
        # text: identical, except cells that are numbers in both runs (within the tolerance)
        xs, ys = x.astype("string").fillna("<NA>"), y.astype("string").fillna("<NA>")
        bad = (xs != ys).to_numpy()
        for row in np.flatnonzero(bad):
            try:
                u, v = float(xs.iloc[row]), float(ys.iloc[row])
            except ValueError:
                continue
            bad[row] = not np.isclose(u, v, rtol=rtol, atol=atol, equal_nan=True)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            return (
                f"{int(bad.sum())} cells differ (first row {row}: "
                f"{xs.iloc[row]!r} vs {ys.iloc[row]!r})",
                "",
            )
        if (xs != ys).any():
            return "", "numbers in text cells equal within the tolerance"
        return "", ""
    ok = np.isclose(xv, yv, rtol=rtol, atol=atol, equal_nan=True)
    if not ok.all():
        rows = np.flatnonzero(~ok)
        worst = np.nanmax(np.abs(xv - yv)[rows])
        return (
            f"{len(rows)} of {len(xv)} values differ beyond tolerance (max |diff| {worst:.3g}; "
            f"first row {rows[0]}: {float(xv[rows[0]])!r} vs {float(yv[rows[0]])!r})",
            "",
        )
    both = ~(np.isnan(xv) & np.isnan(yv))
    diff = np.abs(xv - yv)[both]
    if diff.size and diff.max() > 0:
        return "", f"equal within the tolerance (max |diff| {diff.max():.3g})"
    return "", ""


def compare_csv(
    a: str | Path, b: str | Path, rtol: float = 0.0, atol: float = 0.0
) -> tuple[list[str], list[str]]:
    """(problems, notes) of two runs' copies of one CSV table. Their column declarations
    (:func:`read_columns`) must exist, agree and name the CSV's columns in order; every result
    column must agree (numbers to ``rtol`` / ``atol``, text exactly); the measurements of the
    machine are not compared (a note lists them). A table without a declaration is a problem,
    never skipped."""
    try:
        roles_a, roles_b = read_columns(a), read_columns(b)
    except (FileNotFoundError, ValueError) as exc:
        return [str(exc)], []
    if roles_a != roles_b:
        return [f"column declarations differ: {roles_a} vs {roles_b}"], []
    ta, tb = pd.read_csv(a), pd.read_csv(b)
    for name, table in (("a", ta), ("b", tb)):
        if list(table.columns) != list(roles_a):
            return [f"run {name}: columns {list(table.columns)} != declared {list(roles_a)}"], []
    if ta.shape != tb.shape:
        return [f"shape {ta.shape} != {tb.shape}"], []
    problems, notes = [], []
    measured = [c for c, role in roles_a.items() if role == MEASUREMENT]
    if measured:
        notes.append(f"{', '.join(measured)}: measurements of the machine, not compared")
    for col in ta.columns:
        if col in measured:
            continue
        problem, note = _compare_column(ta[col], tb[col], rtol, atol)
        problems += [f"{col}: {problem}"] if problem else []
        notes += [f"{col}: {note}"] if note else []
    return problems, notes
