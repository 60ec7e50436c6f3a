"""Own datasets of kind cooccurrence: a long table of counts, one line per (period, row, column).

The file is a CSV with a header line. Four of its columns are read, named by default
``time,row,column,count`` (the entry's ``columns:`` maps each role to another header name,
e.g. ``{time: year, row: author, column: word, count: n}``); any other column is ignored.

* ``time``: the period. Either every period is a number (sorted as numbers: ``1999``,
  ``1999.5``, ``-3``) or every period is an ISO 8601 date (``1999-06``, ``1999-06-03``,
  ``1999-06-03T10:00``; a bare year ``1999`` counts as a date among dates), sorted in time
  (a time zone, where given, is honoured; a date without one is read as UTC). Each distinct
  period is one step of the sequence, in that order; a gap between periods is not filled (the
  table gives no spacing). Two spellings of one period (``1999`` and ``1999.0``) are one step,
  labelled with the first in sort order.
* ``row`` and ``column``: the items, any non-empty text. The rows play D-CODE's authors and the
  columns its words (the artifact's items have role ``author`` / ``word``), each numbered in
  the sort order of their names.
* ``count``: a non-negative integer (``3`` or ``3.0``). Repeated lines of one (period, row,
  column) add up; a count of 0 makes the item known without a co-occurrence.

The artifact (:func:`read_long_table`): ``counts``, one sparse int64 (rows x columns) matrix
per period; items ``role``, ``index``, ``name`` and ``count`` (the item's total);
``meta["step_names"]`` (each period's label), ``meta["periods"]`` (``"number"`` or
``"date"``), ``meta["columns"]`` (the header name of each role) and ``meta["counts"]``
(``time_steps``, ``lines``, ``repeated_lines``, ``tokens``).

A bad file raises :class:`embedlab.datasets.DatasetError` naming the file, the line and the
column: an empty file, a missing column, an empty cell, a count that is negative, not an
integer or not a number, a period that is neither a number nor a date, numbers mixed with
dates.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from embedlab.datasets import DatasetError
from embedlab.datasets.own_cells import fast_table, first_row, numbers, read_delimited, where

#: the roles of the long table's columns, each named by its role unless ``columns:`` renames it
ROLES = ("time", "row", "column", "count")
#: an ISO 8601 date: a year, year-month or year-month-day, then an optional time and zone
ISO_DATE = re.compile(
    r"\d{4}(-\d{2}(-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?)?)?"
)
EPOCH = pd.Timestamp("1970-01-01", tz="UTC")


def columns_problems(where_in_config: str, columns: Any) -> list[str]:
    """Every problem of an entry's ``columns:`` mapping (``{role: header name}``), one line
    each; empty when it is usable."""
    if not isinstance(columns, Mapping):
        return [f"{where_in_config}: must be a map of {', '.join(ROLES)} to header names"]
    problems = []
    for role, name in columns.items():
        if role not in ROLES:
            problems.append(f"{where_in_config}.{role}: not a role; roles: {', '.join(ROLES)}")
        elif not (isinstance(name, str) and name.strip()):
            problems.append(f"{where_in_config}.{role}: must be a non-empty string, got {name!r}")
    names = list(header_names(columns).values()) if not problems else []
    if len(set(names)) != len(names):
        problems.append(f"{where_in_config}: two roles read the same column ({names})")
    return problems


def header_names(columns: Mapping[str, str] | None = None) -> dict[str, str]:
    """The header name of each role: the role itself unless ``columns`` renames it."""
    return {role: (columns or {}).get(role, role) for role in ROLES}


def _cells(path: Path, names: dict[str, str]) -> tuple[dict[str, np.ndarray], np.ndarray, list]:
    """({role: the column's cells}, each row's file line, the header) of the long table: the
    count column as float64, the others as stripped text. Regular files are read by pandas;
    any irregularity is read again cell by cell, so the error names its line and column."""
    header = first_row(path, ",")
    if not header:
        read_delimited(path, ",")  # raises, naming the problem (an empty file, say)
        raise DatasetError(f"{path}: no header line")
    missing = [f"{names[role]!r} (role {role})" for role in ROLES if names[role] not in header]
    if missing:
        raise DatasetError(
            f"{path}, line 1: no column {', '.join(missing)}; header: {header}; the entry's "
            "columns: {time: ..., row: ..., column: ..., count: ...} names them"
        )
    for role in ROLES:
        if header.count(names[role]) > 1:
            raise DatasetError(f"{path}, line 1: two columns are named {names[role]!r}")
    index = {role: header.index(names[role]) for role in ROLES}
    text_columns = [k for k in range(len(header)) if k != index["count"]]
    fast = fast_table(path, ",", header, text_columns)
    if fast is not None:
        values, text = fast
        lines = np.arange(len(values)) + 2
        count = values[:, 0]
        cells = {role: np.char.strip(text[index[role]]) for role in ROLES if role != "count"}
    else:
        rows, row_lines = read_delimited(path, ",")
        body, lines = np.asarray(rows[1:], dtype=object), np.asarray(row_lines[1:])
        if len(body) == 0:
            raise DatasetError(f"{path}: a header line and no rows")
        k = index["count"]
        count = numbers(body[:, [k]], path, lines, [names["count"]], [k + 1])[:, 0]
        cells = {role: body[:, index[role]].astype(str) for role in ROLES if role != "count"}
    for role, column in cells.items():
        empty = np.flatnonzero(column == "")
        if empty.size:
            k = index[role]
            place = where(path, int(lines[empty[0]]), k + 1, names[role])
            raise DatasetError(f"{place}: empty cell")
    cells["count"] = count
    return cells, lines, header


def _check_counts(count: np.ndarray, path: Path, lines: np.ndarray, column: int, name: str):
    """Fail at the first count that is negative or not an integer, naming its line."""
    bad = np.flatnonzero((count < 0) | (count != np.round(count)))
    if bad.size:
        r = int(bad[0])
        problem = "is negative" if count[r] < 0 else "is not an integer"
        place = where(path, int(lines[r]), column, name)
        raise DatasetError(f"{place}: count {count[r]:g} {problem}")


def parse_periods(
    text: np.ndarray, path: Path, lines: np.ndarray, column: int, name: str
) -> tuple[np.ndarray, list[str], str]:
    """(each line's step from 0, each step's label, ``"number"`` or ``"date"``) of the period
    cells ``text`` (module docstring). DatasetError at the first cell in file order that is
    neither a number nor a date, or that is a number among dates."""
    distinct, inverse = np.unique(text, return_inverse=True)
    as_number = pd.to_numeric(pd.Series(distinct), errors="coerce").to_numpy(np.float64)
    is_number = np.isfinite(as_number)
    looks_like_date = np.array([ISO_DATE.fullmatch(s) is not None for s in distinct], dtype=bool)
    as_date = pd.to_datetime(
        pd.Series(np.where(looks_like_date, distinct, "")), format="ISO8601", errors="coerce",
        utc=True,
    )
    is_date = looks_like_date & as_date.notna().to_numpy()

    def first_line_of(mask: np.ndarray) -> int:
        return int(np.flatnonzero(mask[inverse])[0])

    neither = ~is_number & ~is_date
    if neither.any():
        r = first_line_of(neither)
        raise DatasetError(
            f"{where(path, int(lines[r]), column, name)}: period {str(text[r])!r} is neither a "
            "number nor an ISO 8601 date (1999, 1999-06, 1999-06-03)"
        )
    if is_number.all():
        kind, values = "number", as_number
    elif is_date.all():
        kind, values = "date", ((as_date - EPOCH) // pd.Timedelta(1, "us")).to_numpy(np.int64)
    else:
        r, d = first_line_of(~is_date), first_line_of(is_date & ~is_number)
        raise DatasetError(
            f"{where(path, int(lines[r]), column, name)}: period {str(text[r])!r} is a number, "
            f"but line {int(lines[d])} has the date {str(text[d])!r}: the periods must be all "
            "numbers or all dates"
        )
    _, steps = np.unique(values, return_inverse=True)  # the step of each distinct spelling
    labels = [""] * (int(steps.max()) + 1)
    for k in reversed(range(len(distinct))):  # the first spelling in sort order wins
        labels[steps[k]] = str(distinct[k])
    return steps[inverse], labels, kind


def read_long_table(
    path: str | Path, columns: Mapping[str, str] | None = None
) -> tuple[list[sp.csr_matrix], pd.DataFrame, dict[str, Any]]:
    """(counts per period, items, meta) of a long co-occurrence table (module docstring)."""
    path = Path(path)
    names = header_names(columns)
    cells, lines, header = _cells(path, names)
    position = {role: header.index(names[role]) + 1 for role in ROLES}
    _check_counts(cells["count"], path, lines, position["count"], names["count"])
    step, step_names, kind = parse_periods(
        cells["time"], path, lines, position["time"], names["time"]
    )
    row_names, row = np.unique(cells["row"], return_inverse=True)
    column_names, column = np.unique(cells["column"], return_inverse=True)
    count = cells["count"].astype(np.int64)
    shape = (len(row_names), len(column_names))
    counts = []
    for t in range(len(step_names)):
        at = step == t
        matrix = sp.coo_matrix((count[at], (row[at], column[at])), shape=shape).tocsr()
        matrix.sum_duplicates()  # repeated lines of one (period, row, column) add up
        matrix.eliminate_zeros()
        counts.append(matrix)
    items = pd.concat(
        [
            pd.DataFrame(
                {
                    "role": role,
                    "index": np.arange(len(item_names)),
                    "name": item_names,
                    "count": np.bincount(code, weights=count, minlength=len(item_names)).astype(
                        np.int64
                    ),
                }
            )
            for role, item_names, code in (
                ("author", row_names, row),
                ("word", column_names, column),
            )
        ],
        ignore_index=True,
    )
    triples = np.unique(np.stack([step, row, column]), axis=1).shape[1]
    meta = {
        "columns": names,
        "periods": kind,
        "step_names": step_names,
        "counts": {
            "time_steps": len(step_names),
            "lines": int(len(count)),
            "repeated_lines": int(len(count) - triples),
            "tokens": int(count.sum()),
        },
    }
    return counts, items, meta


def glance(path: str | Path, columns: Mapping[str, str] | None = None) -> dict[str, int] | None:
    """``{"n": rows, "words": columns, "periods": periods}`` of a long table, read without its
    checks (the workflow judges at parse time whether D-CODE can use it); None where the file
    is missing or unreadable (its build names the problem)."""
    names = header_names(columns)
    try:
        frame = pd.read_csv(
            path, usecols=[names[role] for role in ("time", "row", "column")], dtype=str,
            keep_default_na=False,
        )
        periods = frame[names["time"]].str.strip().to_numpy().astype(str)
        step, _, _ = parse_periods(periods, Path(path), np.arange(len(periods)) + 2, 1, "time")
    except (OSError, ValueError, DatasetError, pd.errors.ParserError):
        return None
    return {
        "n": int(frame[names["row"]].str.strip().nunique()),
        "words": int(frame[names["column"]].str.strip().nunique()),
        "periods": int(step.max()) + 1 if len(step) else 0,
    }
