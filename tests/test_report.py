"""The HTML report: every figure and table of the default run, checked in headless Chromium.

The report is built by the real workflow (its report() declarations and captions, rendered
against config/config.yaml) over placeholder outputs, so it needs no computation: a real PNG
for every figure, a one-row CSV for every table, an empty file for the rest.
"""

from __future__ import annotations

import base64
import json
import re
import shutil

import matplotlib
import pytest

from embedlab import report_check

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
    for name in outputs:
        path = work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".png":
            _placeholder_png(path)
        elif path.suffix == ".csv":
            path.write_text("column,value\nrow,1\n")
        else:
            path.write_text("")
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


def test_expected_items_are_every_figure_and_table_of_the_run(placeholder_report):
    _, expected, _ = placeholder_report
    papers = {re.match(r"results/\w+/([a-z]+)", p).group(1) for p in expected}
    assert {"snest", "tste", "dcode", "diffeomap", "ee", "summary", "datasets"} <= papers
    assert all(p.endswith((".png", ".csv")) for p in expected)


@needs_browser
def test_report_shows_every_figure_and_table(placeholder_report):
    report, expected, _ = placeholder_report
    assert report_check.check(report, expected, BROWSER) == []


def _without_result(report, tmp_path, path_to_drop=None, corrupt=None):
    """A copy of the report with one result dropped from, or corrupted in, its embedded data."""
    html = report.read_text()
    block = html.index('<script id="results">')
    start = html.index("var results = ", block) + len("var results = ")
    end = html.index(";\n", start)
    results = json.loads(html[start:end])
    if path_to_drop:  # as if its rule had no report(): gone from the results and the menu
        del results[path_to_drop]
        cat_start = html.index("var categories = ", end) + len("var categories = ")
        cat_end = html.index(";\n", cat_start)
        categories = json.loads(html[cat_start:cat_end])
        for subcats in categories.values():
            for paths in subcats.values():
                if path_to_drop in paths:
                    paths.remove(path_to_drop)
        html = html[:cat_start] + json.dumps(categories) + html[cat_end:]
    if corrupt:
        bad = base64.b64encode(b"not a png").decode()
        results[corrupt]["data_uri"] = f"data:image/png;base64,{bad}"
    out = tmp_path / "report.html"
    out.write_text(html[:start] + json.dumps(results) + html[end:])
    return out


@needs_browser
def test_check_fails_when_a_figure_is_missing(placeholder_report, tmp_path):
    report, expected, _ = placeholder_report
    figure = next(p for p in expected if p.endswith("snest_fig3.png"))
    problems = report_check.check(_without_result(report, tmp_path, figure), expected, BROWSER)
    assert f"{figure}: missing from the report" in problems
    assert not any(p.startswith("JavaScript") for p in problems)


@needs_browser
def test_check_fails_when_a_figure_does_not_load(placeholder_report, tmp_path):
    report, expected, _ = placeholder_report
    figure = next(p for p in expected if p.endswith("tste_fig2.png"))
    problems = report_check.check(_without_result(report, tmp_path, corrupt=figure), expected)
    assert f"{figure}: the image does not load in the browser" in problems


def test_expected_from_summary_keeps_figures_and_tables_only():
    summary = (
        "output_file\tdate\trule\n"
        "results/figures/a.png\t-\tr\nresults/figures/a.pdf\t-\tr\n"
        "results/tables/t.csv\t-\tr\nresults/tables/t.md\t-\tr\nresults/datasets/x/meta.json\t-\tr\n"
    )
    assert report_check.expected_from_summary(summary) == [
        "results/figures/a.png",
        "results/tables/t.csv",
    ]
