"""A table's page of the HTML report (embedlab.report.pages), and the report's front text that
shows the summary's headline from it (workflow/report/workflow.rst)."""

from __future__ import annotations

from html.parser import HTMLParser
from types import SimpleNamespace

import jinja2
import pandas as pd
import pytest
from docutils.core import publish_parts

from embedlab.report import pages
from embedlab.summary import COLUMNS, VERDICTS

from .conftest import REPO


class Cells(HTMLParser):
    """Every cell of a page's tables: (table number, tag, class, text)."""

    def __init__(self):
        super().__init__()
        self.tables, self.cells, self.open = 0, [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables += 1
        if tag in ("td", "th"):
            self.open = [self.tables, tag, dict(attrs).get("class") or "", ""]

    def handle_data(self, data):
        if self.open is not None:
            self.open[3] += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.open is not None:
            self.cells.append(tuple(self.open))
            self.open = None


def _cells(page: str) -> list[tuple]:
    parser = Cells()
    parser.feed(page)
    return parser.cells


def _summary() -> pd.DataFrame:
    rows = [
        ["SNEST", "Table 1", "iris t-SNE", 0.3, 0.31, 0.01, "matched", ""],
        ["SNEST", "Table 1", "iris SNE", 0.5, 0.7, 0.2, "worse", ""],
        ["D-CODE", "Table 2", "20a dcode", 4.1, 3.5, -0.6, "better", ""],
        ["D-CODE", "Table 2", "30a dcode", 8, None, None, "not reproduced", "not in this run"],
        ["datasets", "music", "triplets", 9107, 9090, -17, "differs", ""],
        ["t-STE", "claims", "2-D error", "[0.34, 0.37]", 0.35, None, "holds", ""],
        ["t-STE", "claims", "1-NN error 66%", "[0.66, 0.66]", 0.51, None, "does not hold", ""],
    ]
    return pd.DataFrame(rows, columns=COLUMNS)


def test_verdict_cells_are_classed_and_coloured_by_what_they_say(tmp_path):
    csv = tmp_path / "summary.csv"
    _summary().to_csv(csv, index=False)
    page = (tmp_path / "summary.html")
    pages.write_page(csv, page, "All papers: paper vs ours")
    text = page.read_text()
    main = [c for c in _cells(text) if c[0] == 2]  # the headline's table comes first
    verdicts = [(cls, value) for _, tag, cls, value in main if tag == "td" and "v-" in cls]
    assert [value for _, value in verdicts] == _summary()["verdict"].tolist()
    assert all(f"v-{value.replace(' ', '-')}" in cls for cls, value in verdicts)
    assert "table.embedlab-table .v-worse { background-color: #f7cdd0" in text
    # the verdict column (the 7th) stays in sight on a table wider than the window
    assert "table.embedlab-table tr > :nth-child(7) { position: sticky; right: 0;" in text
    assert [c[3] for c in main if c[1] == "th"] == COLUMNS


def test_summary_page_opens_on_the_counts_of_its_verdicts_per_paper(tmp_path):
    text = pages.table_page(_summary(), title="paper vs ours", source="summary.csv")
    said = "1 matched, 1 better, 1 worse, 1 differs, 1 holds, 1 does not hold, 1 not reproduced"
    assert f"7 published numbers: {said}" in text
    counts = [c for c in _cells(text) if c[0] == 1]
    header = [c[3] for c in counts if c[1] == "th"]
    present = [v for v in VERDICTS if v in set(_summary()["verdict"])]  # in the summary's order
    assert header == ["paper", *present, "total"] and len(present) == 7
    rows = [c[3] for c in counts if c[1] == "td"]
    assert rows[:9] == ["D-CODE", "0", "1", "0", "0", "0", "0", "1", "2"]
    assert rows[-9:] == ["all", "1", "1", "1", "1", "1", "1", "1", "7"]
    assert text.index(pages.HEADLINE_START) < text.index(pages.HEADLINE_END)


def test_a_table_with_verdicts_counts_them_and_claims_count_those_held():
    table = pd.DataFrame({"cell": ["a", "b", "c"], "paper": [1.0, 2.0, None],
                          "verdict": ["matched", "subsampled: not comparable", None]})
    text = pages.table_page(table, title="t", source="t.csv")
    assert "2 verdicts: 1 matched, 1 subsampled: not comparable" in text
    assert "v-not-comparable" in text and "<th>matched</th>" not in text  # no per-paper table
    claims = pd.DataFrame({"claim": list("xyzw"), "holds": ["True", "False", "False", "not run"]})
    text = pages.table_page(claims, title="claims", source="c.csv")
    assert "4 claims: 1 hold, 2 do not, 1 not run" in text
    classes = [c[2].split()[-1] for c in _cells(text) if c[1] == "td" and "holds" in c[2]]
    assert classes == ["holds-true", "holds-false", "holds-false"]


def test_a_table_without_verdicts_has_no_headline():
    text = pages.table_page(pd.DataFrame({"step": [1, 2]}), title="t", source="t.csv")
    assert pages.HEADLINE_START not in text and text.count("<tr>") == 3


def test_cells_are_escaped_and_numbers_shown_as_in_the_markdown_tables():
    table = pd.DataFrame({"note": ["<script>alert(1)</script> & co"],
                          "n": [5241.0], "kl": [0.123456789], "gap": [float("nan")]})
    text = pages.table_page(table, title="<b>", source="t.csv")
    assert "<script>alert" not in text and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in text
    assert "<title>&lt;b&gt;</title>" in text
    cells = [c[3] for c in _cells(text) if c[1] == "td"]
    assert cells == ["<script>alert(1)</script> & co", "5241", "0.123457", ""]
    assert pages.cell_text(1e20) == "1e+20" and pages.cell_text(None) == ""


@pytest.mark.parametrize("content", ["", "\x00\xff\xfe binary"])
def test_a_file_that_is_no_table_is_an_error_naming_it(tmp_path, content):
    csv = tmp_path / "broken.csv"
    csv.write_bytes(content.encode("latin-1"))
    with pytest.raises(ValueError, match="broken.csv"):
        pages.write_page(csv, tmp_path / "broken.html", "t")
    assert not (tmp_path / "broken.html").exists()


def _front_text(files) -> str:
    """workflow/report/workflow.rst rendered as Snakemake renders a report's text (Jinja with
    its `snakemake`, `categories` and `files`, then reStructuredText to HTML)."""
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    template = env.from_string((REPO / "workflow" / "report" / "workflow.rst").read_text())
    config = {"datasets": {"build": "all"}, "own_datasets": {}, "data": {"registry": "r.yaml"}}
    text = template.render(snakemake=SimpleNamespace(config=config), categories={}, files=files)
    return publish_parts(text, writer="html")["html_body"]


def test_the_front_text_shows_the_summarys_headline_and_opens_it(tmp_path):
    csv, page = tmp_path / "summary.csv", tmp_path / "summary.html"
    _summary().to_csv(csv, index=False)
    pages.write_page(csv, page, "All papers: paper vs ours")
    category = SimpleNamespace(name="All papers")
    record = SimpleNamespace(name="summary.html", path=page, category=category)
    front = _front_text([record])
    assert "7 published numbers: 1 matched, 1 better, 1 worse" in front
    assert [c[3] for c in _cells(front)][-9:] == ["all", "1", "1", "1", "1", "1", "1", "1", "7"]
    assert f"contentPath: results['{page}'].data_uri" in front
    assert "category: 'All papers'" in front
    assert "published numbers" not in _front_text([])  # no summary in the report: no headline
