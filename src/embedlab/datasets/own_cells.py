"""Reading the cells of an own dataset's text file, with the place of every problem.

Every reader of :mod:`embedlab.datasets.own` and its format modules reports a bad cell as
:class:`embedlab.datasets.DatasetError` naming the file, the line (1-based, as an editor shows
it) and the column (:func:`where`). Regular files are read by pandas' C parser
(:func:`fast_table`); any irregularity sends them to the exact reader (:func:`read_delimited`,
:func:`numbers`), which names the first bad cell.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pandas as pd

from embedlab.datasets import DatasetError


def where(
    path: Path, line: int | None = None, column: int | None = None, header: str | None = None
) -> str:
    """``<file>, line L, column C ('<header>')``: lines and columns 1-based, as an editor
    shows them."""
    text = str(path)
    if line is not None:
        text += f", line {line}"
    if column is not None:
        text += f", column {column}" + (f" ({header!r})" if header is not None else "")
    return text


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc})") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def numbers(
    cells: np.ndarray,
    path: Path,
    lines: np.ndarray,
    names: list[str | None],
    columns: list[int] | None = None,
) -> np.ndarray:
    """float64 of a 2-D array of text cells: rows from file lines ``lines``, columns the file's
    ``columns`` (1-based; default 1, 2, ...) named ``names``. DatasetError at the first cell in
    file order that is not a finite number, naming its line and column."""
    columns = list(range(1, cells.shape[1] + 1)) if columns is None else columns
    frame = pd.DataFrame(cells)
    values = frame.apply(lambda col: pd.to_numeric(col, errors="coerce")).to_numpy(np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        r, c = (int(k) for k in np.argwhere(bad)[0])
        text = str(cells[r, c])
        if not text.strip():
            problem = "empty cell"
        elif math.isnan(values[r, c]) and text.strip().lower() not in ("nan", "-nan", "+nan"):
            problem = f"{text!r} is not a number"
        else:
            problem = f"{text!r} is not a finite number"
        raise DatasetError(
            f"{where(path, int(lines[r]), columns[c], names[c])}: {problem}"
        )
    return values


def read_delimited(path: Path, sep: str) -> tuple[list[list[str]], list[int]]:
    """(rows of stripped text cells, the 1-based line of each row) of a delimited file, read
    with the csv module (quotes as in CSV). A row with another number of fields than the first
    is an error naming its line (a ragged row); blank lines at the end are ignored, blank
    lines between rows are errors."""
    rows: list[list[str]] = []
    lines: list[int] = []
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh, delimiter=sep)
            for row in reader:
                rows.append([cell.strip() for cell in row])
                lines.append(reader.line_num)
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc})") from None
    except csv.Error as exc:
        raise DatasetError(f"{path}: not a {sep!r}-separated table ({exc})") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    while rows and not rows[-1]:
        rows.pop()
        lines.pop()
    if not rows:
        raise DatasetError(f"{path}: the file is empty")
    width = len(rows[0])
    for row, line in zip(rows, lines, strict=True):
        if not row:
            raise DatasetError(f"{where(path, line)}: blank line")
        if len(row) != width:
            raise DatasetError(
                f"{where(path, line, min(len(row), width) + 1)}: {len(row)} fields, the "
                f"first line has {width} (a ragged row)"
            )
    return rows, lines


def first_row(path: Path, sep: str) -> list[str] | None:
    """The stripped fields of the first line (None: unreadable or empty; the exact reader then
    says why)."""
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            return [cell.strip() for cell in next(csv.reader(fh, delimiter=sep))]
    except (OSError, UnicodeDecodeError, csv.Error, StopIteration):
        return None


def fast_table(
    path: Path, sep: str, header: list[str] | None, text_columns: list[int]
) -> tuple[np.ndarray, dict[int, np.ndarray]] | None:
    """(the numeric columns as float64, the text columns) of a regular delimited file, read by
    pandas' C parser; None for any irregularity (a cell that is not a finite number, an empty
    text cell, a short or long row, a blank line, a header pandas reads otherwise). Large
    files are read this way; :func:`read_delimited` and :func:`numbers` reread the others
    cell by cell to name the line and column of the problem."""
    if header is not None and len(set(header)) != len(header):
        return None
    try:
        frame = pd.read_csv(
            path,
            sep=sep,
            header=0 if header is not None else None,
            dtype={(header[k] if header is not None else k): str for k in text_columns},
            keep_default_na=False,
            skip_blank_lines=False,
            engine="c",
            low_memory=False,
        )
    except (ValueError, OSError, UnicodeDecodeError, pd.errors.ParserError):
        return None
    if len(frame) == 0 or (header is not None and list(frame.columns) != header):
        return None
    numeric = [k for k in range(frame.shape[1]) if k not in text_columns]
    if not all(frame.dtypes.iloc[k].kind in "iuf" for k in numeric):
        return None
    values = frame.iloc[:, numeric].to_numpy(np.float64)
    if not np.isfinite(values).all():
        return None
    text = {k: frame.iloc[:, k].to_numpy().astype(str) for k in text_columns}
    if any((t == "").any() for t in text.values()):
        return None
    return values, text


def label_codes(labels: np.ndarray) -> tuple[np.ndarray, list[str] | None]:
    """int64 label codes: integers as written, else codes of the sorted names (and the names)."""
    as_int = pd.to_numeric(pd.Series(labels), errors="coerce")
    if as_int.notna().all() and (as_int == np.round(as_int)).all():
        return as_int.to_numpy().astype(np.int64), None
    names, codes = np.unique(labels.astype(str), return_inverse=True)
    return codes.astype(np.int64), [str(s) for s in names]
