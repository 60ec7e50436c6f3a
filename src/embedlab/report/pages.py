"""A table of the run as a page of the HTML report.

Snakemake's report (``snakemake --report``) shows a ``text/html`` result in its content pane
and offers any other file, a CSV included, only as a download. So the report holds each table
as this page: its title, the CSV it shows (which stays in ``results/tables/`` for the docs and
the comparisons of two runs), a headline with the counts of its verdicts, then the table
itself with every verdict cell coloured by what it says.

The page is one file with its styles inline and no script. Its headline sits between
:data:`HEADLINE_START` and :data:`HEADLINE_END` with styles of its own, so that the report's
front text (``workflow/report/workflow.rst``) can show the summary's headline as it is.
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from embedlab import artifacts
from embedlab.summary import COLUMNS as SUMMARY_COLUMNS
from embedlab.summary import VERDICTS

#: the comment lines around the page's headline (the front text of the report cuts it out)
HEADLINE_START, HEADLINE_END = "<!-- headline -->", "<!-- /headline -->"

#: a table's column of verdicts (paper vs ours) and its column of claims held or not
VERDICT, HOLDS = "verdict", "holds"

#: the colour of each verdict's cells; a cell is coloured by the first of these it contains
#: ("subsampled: not comparable" is a "not comparable")
VERDICT_COLOURS = {
    "not comparable": "#e5e7eb",
    "not reproduced": "#fde2c8",
    "no paper value": "#e5e7eb",
    "matched": "#c9ecd2",
    "better": "#c6e3f7",
    "worse": "#f7cdd0",
    "differs": "#fbefc0",
    "does not hold": "#f7cdd0",
    "holds": "#c9ecd2",
}
#: the colour of a claim's ``holds`` cell
HOLDS_COLOURS = {"True": "#c9ecd2", "False": "#f7cdd0"}

PAGE_STYLE = """
body { font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2937;
       margin: 16px 20px; }
h1 { font-size: 18px; margin: 0 0 4px; }
p.source { color: #6b7280; margin: 0 0 12px; }
p.source code { font-size: 12px; }
table.embedlab-table { border-collapse: collapse; }
table.embedlab-table th, table.embedlab-table td { border: 1px solid #d1d5db;
       padding: 3px 7px; text-align: left; vertical-align: top; max-width: 36em; }
table.embedlab-table thead th { position: sticky; top: 0; background: #f3f4f6; }
table.embedlab-table tbody tr:nth-child(even) td { background-color: #fafafa; }
table.embedlab-table td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.embedlab-table td[class*=" v-"] { white-space: nowrap; }
"""


def _slug(text: str) -> str:
    return "-".join(text.lower().split())


def _verdict_style(scope: str) -> str:
    """The CSS of verdict cells (class ``v-<verdict>``) and held claims inside ``scope``."""
    rules = [
        f"{scope} .v-{_slug(verdict)} {{ background-color: {colour} !important; }}"
        for verdict, colour in VERDICT_COLOURS.items()
    ]
    rules += [
        f"{scope} .holds-{value.lower()} {{ background-color: {colour} !important; }}"
        for value, colour in HOLDS_COLOURS.items()
    ]
    return "\n".join(rules) + "\n"


HEADLINE_STYLE = (
    """
.embedlab-headline p { margin: 0 0 6px; font-weight: 600; }
.embedlab-headline table { border-collapse: collapse; margin: 0 0 14px; }
.embedlab-headline th, .embedlab-headline td { border: 1px solid #d1d5db; padding: 2px 6px;
       text-align: right; }
.embedlab-headline th:first-child, .embedlab-headline td:first-child { text-align: left; }
.embedlab-headline td.zero { color: #9ca3af; }
"""
    + _verdict_style(".embedlab-headline")
)


def verdict_class(value: object) -> str:
    """The CSS class of a verdict cell: ``v-<verdict>`` for the first verdict of
    :data:`VERDICT_COLOURS` it contains, "" for a blank or unknown one."""
    text = str(value)
    return next((f"v-{_slug(v)}" for v in VERDICT_COLOURS if v in text), "")


def cell_text(value: object) -> str:
    """A cell as the page shows it: a whole float as an integer (5241, not 5241.0), any other
    float with 6 significant digits (as the Markdown tables), a missing value blank."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:.6g}"
    return str(value)


def read_table(csv: str | Path) -> pd.DataFrame:
    """The CSV table ``csv``; a file that is not one is an error naming it."""
    try:
        return pd.read_csv(csv)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"{csv}: not a CSV table ({exc})") from exc


def verdict_counts(df: pd.DataFrame) -> dict[str, int]:
    """verdict -> rows, in the order of :data:`embedlab.summary.VERDICTS`, any other verdict
    after them; blank cells (a row without a paper value to compare) are no verdict."""
    counts = df[VERDICT].dropna().astype(str).str.strip().value_counts()
    counts = counts[counts.index != ""]
    order = [v for v in VERDICTS if v in counts.index]
    order += sorted(v for v in counts.index if v not in VERDICTS)
    return {verdict: int(counts[verdict]) for verdict in order}


def _many(n: int, one: str, many: str) -> str:
    """``n`` with the word for one or for many ("1 claim", "3 claims")."""
    return f"{n} {one if n == 1 else many}"


def _counts_table(df: pd.DataFrame) -> str:
    """Published numbers per paper (rows) and verdict (columns), with totals, as HTML."""
    verdicts = list(verdict_counts(df))
    counts = pd.crosstab(df["paper"], df[VERDICT].astype(str)).reindex(
        columns=verdicts, fill_value=0
    )
    counts["total"] = counts.sum(axis=1)
    counts.loc["all"] = counts.sum()
    head = "".join(
        f'<th class="{verdict_class(c)}">{html.escape(c)}</th>' if verdict_class(c)
        else f"<th>{html.escape(c)}</th>"
        for c in ["paper", *counts]
    )
    rows = []
    for paper, line in counts.iterrows():
        cells = "".join(
            '<td class="zero">0</td>' if n == 0 else f"<td>{n}</td>" for n in line.to_numpy()
        )
        rows.append(f"<tr><td>{html.escape(str(paper))}</td>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def headline(df: pd.DataFrame) -> str:
    """The counts above a table, as HTML: of its verdicts (for the paper-vs-ours summary, whose
    columns are :data:`embedlab.summary.COLUMNS`, also per paper in a table) and of its claims
    that hold; "" for a table with neither column."""
    parts = []
    if VERDICT in df.columns:
        counts = verdict_counts(df)
        said = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
        summary = list(df.columns) == SUMMARY_COLUMNS
        what = ("published number", "published numbers") if summary else ("verdict", "verdicts")
        parts.append(f"<p>{_many(sum(counts.values()), *what)}: {html.escape(said) or 'none'}</p>")
        if summary and counts:
            parts.append(_counts_table(df))
    if HOLDS in df.columns:
        held = df[HOLDS].astype(str).value_counts()
        said = [f"{int(held.get('True', 0))} hold", f"{int(held.get('False', 0))} do not"]
        said += [f"{n} {value}" for value, n in held.items() if value not in HOLDS_COLOURS]
        parts.append(f"<p>{_many(len(df), 'claim', 'claims')}: {html.escape(', '.join(said))}</p>")
    if not parts:
        return ""
    return (
        f'{HEADLINE_START}\n<section class="embedlab-headline">\n<style>{HEADLINE_STYLE}</style>\n'
        + "\n".join(parts)
        + f"\n</section>\n{HEADLINE_END}\n"
    )


def cell_classes(df: pd.DataFrame) -> pd.DataFrame:
    """The CSS class of every cell: the verdict's in a ``verdict`` column, held or not in a
    ``holds`` column, ``num`` in a column of numbers (set right), none elsewhere."""
    classes = pd.DataFrame("", index=df.index, columns=df.columns)
    for column in df.columns:
        if pd.api.types.is_numeric_dtype(df[column]) and not pd.api.types.is_bool_dtype(
            df[column]
        ):
            classes[column] = "num"
    if VERDICT in df.columns:
        classes[VERDICT] = df[VERDICT].map(verdict_class)
    if HOLDS in df.columns:
        classes[HOLDS] = df[HOLDS].astype(str).map(
            lambda v: f"holds-{v.lower()}" if v in HOLDS_COLOURS else ""
        )
    return classes


def table_html(df: pd.DataFrame) -> str:
    """``df`` as an HTML table: every cell escaped and shown by :func:`cell_text`, verdict
    cells classed by :func:`cell_classes`."""
    styler = df.style.hide(axis="index")
    styler = styler.format(cell_text, escape="html").set_td_classes(cell_classes(df))
    styler = styler.set_uuid("table").set_table_attributes('class="embedlab-table"')
    return styler.to_html(doctype_html=False)


def _pinned_style(df: pd.DataFrame) -> str:
    """CSS that keeps the verdict and ``holds`` columns of a table wider than the window at
    its right edge, so every row's verdict stays in sight while the reader scrolls."""
    return "".join(
        f"table.embedlab-table tr > :nth-child({df.columns.get_loc(column) + 1}) "
        "{ position: sticky; right: 0; box-shadow: -2px 0 3px rgba(0, 0, 0, 0.08); }\n"
        for column in (VERDICT, HOLDS)
        if column in df.columns
    )


def table_page(df: pd.DataFrame, *, title: str, source: str) -> str:
    """The page of table ``df`` (read from ``source``), titled ``title``."""
    shape = f"{len(df)} rows, {len(df.columns)} columns"
    style = PAGE_STYLE + _verdict_style("table.embedlab-table") + _pinned_style(df)
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{style}</style>\n"
        "</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n"
        f'<p class="source"><code>{html.escape(source)}</code>: {shape}</p>\n'
        f"{headline(df)}{table_html(df)}"
        "</body>\n</html>\n"
    )


def write_page(csv: str | Path, page: str | Path, title: str) -> pd.DataFrame:
    """Write the page of the CSV table ``csv`` to ``page`` (atomically); returns the table."""
    df = read_table(csv)
    if df.columns.empty:
        raise ValueError(f"{csv}: a table without columns")
    artifacts.write_text_atomic(page, table_page(df, title=title, source=str(csv)))
    return df
