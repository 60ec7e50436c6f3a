"""The docs pages' reading rules, and the Markdown that keeps them.

A page is read on a screen: its right-hand contents list must be a list of short titles, a
table that gives verdicts must fit its columns, and a paper page must show its headline
figure before the reader meets its tables. So:

* a heading has at most :data:`HEADING_MAX` characters; a longer title (a table's own title
  is often its whole definition) becomes a short heading with the full text below it
  (:func:`short_heading`);
* a cell of a table with a verdict column (``verdict``, ``holds``) has at most
  :data:`CELL_MAX` characters, except inside a folded block (a mkdocs-material ``???``
  admonition, closed until clicked: :func:`fold`), where the details go;
* a page of :data:`HEADLINE_PAGES` shows a figure (or the note that the run lacks it) before
  its first table and its first ``##`` section.

:func:`page_problems` checks a generated page against these rules (``python -m embedlab docs``
fails on pages that break them, naming each place).
"""

from __future__ import annotations

import re

import pandas as pd

from embedlab.summary import compact_ours

#: the most characters of a heading's text (without its ``#`` marks)
HEADING_MAX = 60
#: the most characters of a cell of a verdict table outside a folded block
CELL_MAX = 60
#: the columns that make a table a verdict table (the claims, the paper-vs-ours rows)
VERDICT_COLUMNS = {"verdict", "holds"}
#: the paper pages, each with its headline figure near the top
HEADLINE_PAGES = ["snest.md", "tste.md", "dcode.md", "diffeomap.md", "ee.md", "scale.md"]
#: where a title may be cut into a short heading, in order of preference, leaving at least
#: HEADING_MIN characters
_CUTS = (" (", ": ", "; ", ", ")
HEADING_MIN = 8
#: the first lines of a figure: its image, or the note that the run has no such figure
FIGURE_LINE = re.compile(r"^(!\[|\*`results/figures/)")
_FOLD = re.compile(r'^\?\?\?\+? ')
_BLOCK = re.compile(r"^(\?\?\?\+?|!!!) ")
_HEADING = re.compile(r"^(#+)\s+(.*?)\s*#*\s*$")


def short_heading(text: str, limit: int = HEADING_MAX) -> tuple[str, str]:
    """(heading, text below it): ``text`` and '' where it fits in ``limit`` characters; else
    its beginning up to the first ``" ("`` or else ``": "``, ``"; "``, ``", "`` that leaves a
    heading of :data:`HEADING_MIN` to ``limit`` characters (or, with no such cut, the words
    that fit, then an ellipsis), and the whole ``text`` to be written below it."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text, ""
    for cut in _CUTS:
        at = text.find(cut, HEADING_MIN)
        if 0 <= at <= limit:
            return text[:at], text
    words = text[: limit - 1].rsplit(" ", 1)[0]
    return words.rstrip(" ,;:") + "\u2026", text


def fold(title: str, body: str) -> str:
    """``body`` (Markdown) in a folded block titled ``title``: closed until clicked, its
    contents outside the contents list (a heading inside becomes a bold line)."""
    lines = []
    for line in body.strip().splitlines():
        m = _HEADING.match(line)
        if m:
            line = f"**{m.group(2)}**"
        lines.append(f"    {line}" if line.strip() else "")
    title = title.replace('"', "'")
    return f'??? note "{title}"\n' + "\n".join(lines) + "\n"


def table_cell(value: str) -> str:
    """``value`` as the text of one Markdown table cell (its ``|`` escaped, on one line)."""
    return value.replace("|", "\\|").replace("\n", " ")


def markdown_table(df: pd.DataFrame) -> str:
    """``df`` as a Markdown table, its cells as they are (no number formatting)."""
    return df.to_markdown(index=False, disable_numparse=True) + "\n"


#: a cell of at most this many characters is kept on one line (its spaces not breaking)
ONE_LINE_MAX = 24


def _one_line(value: str) -> str:
    """A short ``value`` that the browser will not wrap: no-break spaces, and word joiners
    around a range's dash (a browser breaks after an en dash)."""
    if len(value) > ONE_LINE_MAX:
        return value
    return value.replace(" ", "\u00a0").replace("\u2013", "\u2060\u2013\u2060")


def verdict_rows(rows: pd.DataFrame, label: str = "") -> str:
    """Summary rows as a table of short cells (item, the paper's value, ours, the difference,
    the verdict, the note) and, folded below it, what it shortens: ours in full where
    :func:`embedlab.summary.compact_ours` shortened it, a long note in full (the table has
    its :func:`short_heading` and an ellipsis)."""
    ours = rows["ours"].map(compact_ours)
    notes = rows["note"].map(_short_note)
    shown = pd.DataFrame(
        {
            "table": rows["table"],
            "item": rows["item"],
            "paper": rows["paper_value"].map(_one_line),
            "ours": ours.map(_one_line),
            "diff": rows["diff"].map(_one_line),
            "verdict": rows["verdict"].map(_one_line),
            "note": notes,
        }
    )
    dropped = ["table"] if label else []
    dropped += [c for c in ("diff", "note") if not rows[c].str.strip().any()]
    text = markdown_table(shown.drop(columns=dropped).map(table_cell))
    hidden = (ours != rows["ours"]) | (notes != rows["note"])
    if hidden.any():
        details = rows.loc[hidden, ["item", "ours", "note"]]
        details = details.drop(columns=[] if (notes != rows["note"]).any() else ["note"])
        title = f"{label or rows['paper'].iloc[0]}: the values in full"
        title += ", the notes" if "note" in details else ""
        text += "\n" + fold(title, markdown_table(details.map(table_cell)))
    return text


def _short_note(note: str) -> str:
    heading, whole = short_heading(note, CELL_MAX - 2)
    return f"{heading.rstrip(chr(0x2026))} \u2026" if whole else heading


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def page_problems(name: str, text: str) -> list[str]:
    """Where the page ``name`` breaks the reading rules: one line per problem, naming the line."""
    problems = []
    in_fence = in_block = folded = False
    header: list[str] | None = None
    first_table = first_section = first_figure = None
    for number, line in enumerate(text.splitlines(), start=1):
        where = f"{name}:{number}"
        if line.startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if _BLOCK.match(line):
            in_block, folded, header = True, bool(_FOLD.match(line)), None
            continue
        if in_block and (line.startswith("    ") or not line.strip()):
            if folded:  # the details: not shown until clicked
                continue
            line = line[4:]  # an open admonition's text is read as any other
        else:
            in_block = folded = False
        if not line.startswith("|"):
            header = None
        if FIGURE_LINE.match(line) and first_figure is None:
            first_figure = number
        m = _HEADING.match(line)
        if m:
            if len(m.group(2)) > HEADING_MAX:
                problems.append(
                    f"{where}: heading of {len(m.group(2))} characters (at most {HEADING_MAX}): "
                    f"{m.group(2)[:80]!r}"
                )
            if m.group(1) == "##" and first_section is None:
                first_section = number
            continue
        if not line.startswith("|"):
            continue
        if first_table is None:
            first_table = number
        cells = _cells(line)
        if header is None:
            header = cells
            continue
        if not VERDICT_COLUMNS & set(header) or set("".join(cells)) <= set("-: "):
            continue
        for column, cell in zip(header, cells, strict=False):
            if len(cell) > CELL_MAX:
                problems.append(
                    f"{where}: verdict table cell of {len(cell)} characters (at most "
                    f"{CELL_MAX} outside a folded block), column {column!r}: {cell[:80]!r}"
                )
    if name in HEADLINE_PAGES:
        before = [n for n in (first_table, first_section) if n is not None]
        if first_figure is None or (before and first_figure > min(before)):
            problems.append(
                f"{name}: no headline figure before the first table or section (a figure "
                f"on line {first_figure}, the first table on line {first_table}, the first "
                f"section on line {first_section})"
            )
    return problems


def check_pages(pages: dict[str, str]) -> list[str]:
    """Every page's :func:`page_problems`."""
    return [problem for name, text in pages.items() for problem in page_problems(name, text)]
