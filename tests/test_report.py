"""The HTML report: every figure and table of the default run, checked in headless Chromium.

The report is built by the real workflow (its report() declarations and captions, rendered
against config/config.yaml) over placeholder outputs, so it needs no computation: a real PNG
for every figure, a one-row CSV for every table and its page rendered as the workflow renders
it (embedlab.report.pages), an empty file for the rest.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
from pathlib import Path

import matplotlib
import pytest

from embedlab import report_check
from embedlab.report.pages import write_page
from embedlab.summary import COLUMNS

from .conftest import REPO
from .helpers import snakemake

matplotlib.use("Agg")

BROWSER = report_check.find_browser()
needs_browser = pytest.mark.skipif(
    BROWSER is None, reason="Chromium not installed (make test installs Debian's chromium)"
)


def _placeholder_png(path):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1, 1), dpi=20)
    ax.plot([0, 1], [0, 1])
    fig.savefig(path)
    plt.close(fig)


def _placeholder_run(folder):
    """The default run's outputs as placeholders in ``folder/work``, its report beside them,
    and the two snakemake outputs (summary.tsv, report.log) that the tests read."""
    work = folder / "work"
    shutil.copytree(REPO / "config", work / "config")
    summary = snakemake("--summary", "--directory", str(work), cwd=work).stdout
    outputs = [line.split("\t")[0] for line in summary.splitlines()[1:] if line.strip()]
    pages = [name for name in outputs if name.startswith("results/report/")]
    for name in outputs:
        path = work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".png":
            _placeholder_png(path)
        elif name == "results/tables/summary.csv":
            path.write_text(f"{','.join(COLUMNS)}\nSNEST,Table 1,iris,0.3,0.3,0,matched,\n")
        elif path.suffix == ".csv":
            path.write_text("column,value,verdict\nrow,1,matched\n")
        elif name not in pages:
            path.write_text("")
    for name in pages:  # from the tables' placeholders
        table = re.sub(r"^results/report/(.+)\.html$", r"results/tables/\1.csv", name)
        write_page(work / table, work / name, f"placeholder of {table}")
    report = work / "results" / "report.html"
    made = snakemake("--report", str(report), "--directory", str(work), cwd=work)
    (folder / "summary.tsv").write_text(summary)
    (folder / "report.log").write_text(made.stdout + made.stderr)


@pytest.fixture(scope="session")
def placeholder_report(once_per_run):
    """(report, expected figures and tables, snakemake log) of the default run over
    placeholders, built once per test run."""
    folder = once_per_run("placeholder_report", _placeholder_run)
    summary = (folder / "summary.tsv").read_text()
    report = folder / "work" / "results" / "report.html"
    return report, report_check.expected_from_summary(summary), (folder / "report.log").read_text()


@pytest.mark.slow
def test_captions_render_without_restructuredtext_errors(placeholder_report):
    *_, log = placeholder_report
    assert "(ERROR/" not in log and "(SEVERE/" not in log, log


def test_the_reports_text_names_the_datasets_built_and_the_users_own(placeholder_report):
    report, *_ = placeholder_report
    html = report.read_text()
    assert "Datasets built:" in html and "your own datasets: none" in html


def test_the_reports_text_shows_the_summarys_headline(placeholder_report):
    report, *_ = placeholder_report
    *_, text = _embedded(report.read_text(), "workflow_desc", "workflow-desc")
    assert "1 published number: 1 matched" in text and "Open the summary" in text


def test_expected_items_are_every_figure_and_table_of_the_run(placeholder_report):
    _, expected, _ = placeholder_report
    papers = {re.match(r"results/\w+/([a-z]+)", p).group(1) for p in expected}
    assert {"snest", "tste", "dcode", "diffeomap", "ee", "summary", "datasets"} <= papers
    assert all(re.match(r"results/(figures/.+\.png|report/.+\.html)$", p) for p in expected)


@needs_browser
def test_report_shows_every_figure_and_table(placeholder_report):
    report, expected, _ = placeholder_report
    assert report_check.check(report, expected, BROWSER) == []


def _embedded(html, name, script=None):
    """(start, end, value) of the JSON that the report's script ``script`` (default: ``name``)
    assigns to ``var <name>``."""
    block = html.index(f'<script id="{script or name}">')
    start = html.index(f"var {name} = ", block) + len(f"var {name} = ")
    end = html.index(";\n", start)
    return start, end, json.loads(html[start:end])


def _edited(report, tmp_path, edit):
    """A copy of the report whose embedded results and categories ``edit(results,
    categories)`` changed in place."""
    html = report.read_text()
    *_, results = _embedded(html, "results")
    *_, categories = _embedded(html, "categories")
    edit(results, categories)
    for name, value in [("results", results), ("categories", categories)]:
        start, end, _ = _embedded(html, name)
        html = html[:start] + json.dumps(value) + html[end:]
    out = tmp_path / "report.html"
    out.write_text(html)
    return out


def _data_uri(mime, text):
    return f"data:{mime};base64,{base64.b64encode(text.encode()).decode()}"


def _drop(path):
    """As if the rule of ``path`` had no report(): gone from the results and the menu."""

    def edit(results, categories):
        del results[path]
        for subcats in categories.values():
            for paths in subcats.values():
                if path in paths:
                    paths.remove(path)

    return edit


def _as_csv(page):
    """As if the table of ``page`` were marked for the report as its CSV: a download."""
    table = re.sub(r"^results/report/(.+)\.html$", r"results/tables/\1.csv", page)

    def edit(results, categories):
        entry = results.pop(page)
        entry.update(
            name=Path(table).name,
            filename=Path(table).name,
            mime_type="text/csv",
            data_uri=_data_uri("text/csv", "item,verdict\nx,matched\n"),
        )
        results[table] = entry
        for subcats in categories.values():
            for paths in subcats.values():
                paths[:] = [table if p == page else p for p in paths]

    return edit


def _replaced(path, mime, text):
    """The result ``path`` with the content ``text`` of type ``mime``."""

    def edit(results, categories):
        results[path]["data_uri"] = _data_uri(mime, text)

    return edit


@needs_browser
def test_check_fails_when_a_figure_is_missing(placeholder_report, tmp_path):
    report, expected, _ = placeholder_report
    figure = next(p for p in expected if p.endswith("snest_fig3.png"))
    problems = report_check.check(_edited(report, tmp_path, _drop(figure)), expected, BROWSER)
    assert f"{figure}: missing from the report" in problems
    assert not any(p.startswith("JavaScript") for p in problems)


@needs_browser
def test_check_fails_when_a_figure_does_not_load(placeholder_report, tmp_path):
    report, expected, _ = placeholder_report
    figure = next(p for p in expected if p.endswith("tste_fig2.png"))
    broken = _replaced(figure, "image/png", "not a png")
    problems = report_check.check(_edited(report, tmp_path, broken), expected, BROWSER)
    assert f"{figure}: the image does not load in the browser" in problems


@needs_browser
def test_check_fails_when_a_table_is_only_a_download(placeholder_report, tmp_path):
    report, expected, _ = placeholder_report
    page = "results/report/summary.html"
    problems = report_check.check(_edited(report, tmp_path, _as_csv(page)), expected, BROWSER)
    assert f"{page}: missing from the report" in problems
    assert any(p.startswith("results/tables/summary.csv: only a download") for p in problems)
    assert not any(p.startswith("JavaScript") for p in problems)


@needs_browser
def test_check_fails_when_a_page_shows_no_table(placeholder_report, tmp_path):
    report, expected, _ = placeholder_report
    page = "results/report/snest_kl.html"
    text = "<!doctype html><html><body><p>row,1,matched</p></body></html>"
    edited = _edited(report, tmp_path, _replaced(page, "text/html", text))
    problems = report_check.check(edited, expected, BROWSER)
    assert problems == [f"{page}: the page holds no HTML table with a header and rows"]


def test_every_table_of_the_run_is_a_page_of_the_report(placeholder_report):
    report, expected, _ = placeholder_report
    *_, results = _embedded(report.read_text(), "results")
    pages = [p for p in expected if p.startswith("results/report/")]
    assert "results/report/summary.html" in pages and "results/report/tste_claims.html" in pages
    assert {results[p]["mime_type"] for p in pages} == {"text/html"}
    downloads = [p for p, r in results.items() if r["mime_type"] not in ("image/png", "text/html")]
    assert downloads == []
    summary = results["results/report/summary.html"]
    assert summary["labels"] == {"table": "paper vs ours"} and summary["caption"]


def _found(**item):
    """A probe's findings of one table page, its fields replaced by ``item``."""
    page = {"mime": "text/html", "caption": 40, "tables": 1, "rows": 3, "download": False}
    return {
        "errors": [],
        "mounted": True,
        "items": {"results/report/t.html": {**page, "shown": True, **item}},
        "listed": {"results/report/t.html": True},
    }


def test_problems_name_a_table_offered_only_as_a_download():
    assert report_check.problems(_found(), ["results/report/t.html"]) == []
    found = _found(mime="text/csv", download=True, shown=False)
    assert report_check.problems(found, ["results/report/t.html"]) == [
        "results/report/t.html: only a download in the report (text/csv), not shown: the "
        "report shows a table as its HTML page (report_table in common.smk)"
    ]


def test_problems_name_a_page_without_a_table_or_not_shown():
    found = _found(tables=0, rows=0, shown=False)
    assert report_check.problems(found, ["results/report/t.html"]) == [
        "results/report/t.html: opened in the report, it is not what the report shows",
        "results/report/t.html: the page holds no HTML table with a header and rows",
    ]


def test_expected_from_summary_keeps_figures_and_tables_as_their_pages():
    summary = (
        "output_file\tdate\trule\n"
        "results/figures/a.png\t-\tr\nresults/figures/a.pdf\t-\tr\n"
        "results/tables/t.csv\t-\tr\nresults/tables/t.md\t-\tr\nresults/datasets/x/meta.json\t-\tr\n"
    )
    assert report_check.expected_from_summary(summary) == [
        "results/figures/a.png",
        "results/report/t.html",
    ]
