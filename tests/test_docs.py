"""The docs site: pages generated from a run's tables, the committed pages equal to the
generator's output, the configuration reference complete, the site built in strict mode, and
the README short and free of history."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from embedlab import docs, docs_layout, summary
from embedlab.summary import COLUMNS

from .conftest import REPO

TEMPLATES = REPO / "docs" / "templates"
DATA = REPO / "docs" / "data"
SCHEMAS = REPO / "workflow" / "schemas"


def _results(tmp_path):
    """A small results folder: a summary of two papers, one table, one figure."""
    results = tmp_path / "results"
    (results / "tables").mkdir(parents=True)
    (results / "figures").mkdir()
    rows = [
        ["SNEST", "Table 1", "school sne-2", "0.52", "0.5156", "-0.0044", "matched", ""],
        ["SNEST", "Table 1", "school tsne-2", "0.61", "0.65", "0.04", "worse", ""],
        ["SNEST", "Table 1", "school snest-2-1", "0.31", "0.2", "-0.11", "better", "a | b"],
        ["D-CODE", "Table 2", "20a mle", "7.4", "", "", "not reproduced", "why"],
    ]
    pd.DataFrame(rows, columns=COLUMNS).to_csv(results / "tables" / "summary.csv", index=False)
    (results / "tables" / "snest_kl.md").write_text(
        "# Table 1: minimal KL\n\n| cell | school |\n|---|---|\n| sne-2 | 0.5156 |\n\nnote\n"
        "\n## Runs\n\n| run |\n|---|\n| seed 7 |\n"
    )
    (results / "figures" / "snest_fig2a.png").write_bytes(b"\x89PNG not really")
    (results / "figures" / "unused.png").write_bytes(b"\x89PNG")
    templates = tmp_path / "docs" / "templates"  # includes are relative to tmp_path
    templates.mkdir(parents=True)
    (templates / "snest.md").write_text(
        "# SNEST\n\n{{ configuration }}\n\n{{ counts }}\n\n{{ summary SNEST }}\n\n"
        "{{ table snest_kl }}\n\n{{ table dcode_rank }}\n\n{{ table snest_kl first }}\n\n"
        '{{ figure snest_fig2a "Fig. 2a: SCHOOL" }}\n\n{{ figure snest_fig3 }}\n\n'
        "{{ include notes/bench.md }}\n"
    )
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "bench.md").write_text("# Benchmarks\n\nfigures\n")
    return results, templates


def test_pages_are_filled_from_a_results_folder(tmp_path):
    results, templates = _results(tmp_path)
    data, site = tmp_path / "data", tmp_path / "site"
    record = docs.snapshot(results, data, site, templates, "quick: config/quick.yaml")
    assert record["figures"] == ["snest_fig2a"]
    assert (site / "figures" / "snest_fig2a.png").read_bytes() == b"\x89PNG not really"
    assert not (site / "figures" / "unused.png").exists()

    page = docs.render(templates, data, SCHEMAS)["snest.md"]
    assert "(configuration: **quick: config/quick.yaml**)" in page
    assert page.endswith("## Benchmarks\n\nfigures\n")  # included, one level down
    assert "| sne-2 | 0.5156 |" in page and "#### Table 1: minimal KL" in page
    assert page.count("| sne-2 | 0.5156 |") == 2 and page.count("| seed 7 |") == 1  # first
    assert "`results/tables/dcode_rank.md` is not in the run" in page
    assert "![Fig. 2a: SCHOOL](figures/snest_fig2a.png)" in page
    assert "`results/figures/snest_fig3.png` is not in the run" in page
    # the summary's rows of SNEST only, a '|' in a cell escaped
    assert "school tsne-2" in page and "20a mle" not in page.split("school sne-2")[1]
    assert "a \\| b" in page
    # the counts: SNEST 1 matched, 1 better, 1 worse of 3; D-CODE 1 not reproduced
    counts = docs.verdict_counts(pd.read_csv(data / "tables" / "summary.csv", dtype=str))
    snest = counts.set_index("paper").loc["SNEST"]
    assert (snest["matched"], snest["better"], snest["worse"], snest["total"]) == (1, 1, 1, 3)
    # on the page a row per verdict, a column per paper (D-CODE, SNEST, all)
    assert re.search(r"\| verdict\s+\|\s+D-CODE \|\s+SNEST \|\s+all \|", page)
    assert re.search(r"\| better\s+\|\s+0 \|\s+1 \|\s+1 \|", page)
    assert re.search(r"\| total\s+\|\s+1 \|\s+3 \|\s+4 \|", page)

    # the same inputs give the same pages; another run's numbers give other pages
    assert docs.render(templates, data, SCHEMAS)["snest.md"] == page
    (data / "tables" / "snest_kl.md").write_text("| cell | school |\n|---|---|\n| sne-2 | 9 |\n")
    assert "| sne-2 | 9 |" in docs.render(templates, data, SCHEMAS)["snest.md"]


def test_readme_block_counts_each_paper(tmp_path):
    results, templates = _results(tmp_path)
    data = tmp_path / "data"
    docs.snapshot(results, data, tmp_path / "site", templates, "quick")
    block = docs.readme_block(data)
    assert "- [SNEST](docs/snest.md): 3 published numbers: 1 matched, 1 better, 1 worse." in block
    readme = f"intro\n{docs.GLANCE_START}\nold\n{docs.GLANCE_END}\nrest\n"
    assert docs.fill_readme(readme, block) == f"intro\n{block}\nrest\n"
    with pytest.raises(docs.DocsError, match="markers"):
        docs.fill_readme("no markers", block)


def test_bad_inputs_are_refused(tmp_path):
    results, templates = _results(tmp_path)
    with pytest.raises(docs.DocsError, match="configuration must be named"):
        docs.snapshot(results, tmp_path / "d", tmp_path / "s", templates, " ")
    (results / "tables" / "summary.csv").unlink()
    with pytest.raises(docs.DocsError, match="no summary.csv"):
        docs.snapshot(results, tmp_path / "d", tmp_path / "s", templates, "quick")
    with pytest.raises(docs.DocsError, match="no run.json"):
        docs.render(templates, tmp_path / "nothing", SCHEMAS)
    results, templates = _results(tmp_path / "again")
    docs.snapshot(results, tmp_path / "d", tmp_path / "s", templates, "quick")
    (templates / "bad.md").write_text("{{ tabel snest_kl }}\n")
    with pytest.raises(docs.DocsError, match="bad.md: line 1: unknown placeholder"):
        docs.render(templates, tmp_path / "d", SCHEMAS)


def test_committed_pages_are_the_generators_output():
    """docs/*.md and README's results block are what `make docs` makes from docs/data: edit
    docs/templates (or the schemas) and run `make docs`, never the pages."""
    pages = docs.render(TEMPLATES, DATA, SCHEMAS)
    stale = [n for n, text in pages.items() if (REPO / "docs" / n).read_text() != text]
    assert not stale, (
        f"docs pages {stale} are not what docs/templates, docs/data, workflow/schemas and "
        "benchmarks/README.md give: run `python -m embedlab docs` (or `make docs`)"
    )
    assert sorted(pages) == sorted(p.name for p in (REPO / "docs").glob("*.md"))
    readme = (REPO / "README.md").read_text()
    assert docs.fill_readme(readme, docs.readme_block(DATA)) == readme
    run = docs.read_run(DATA)
    for name in run["figures"]:
        assert (REPO / "docs" / "figures" / f"{name}.png").is_file(), name
    assert sorted(p.stem for p in (REPO / "docs" / "figures").glob("*.png")) == run["figures"]


def test_committed_pages_keep_the_reading_rules():
    """Every generated page: short headings, short cells in its verdict tables outside folded
    blocks, and each paper page's headline figure before its first table and section."""
    pages = docs.render(TEMPLATES, DATA, SCHEMAS)
    assert set(docs_layout.HEADLINE_PAGES) <= set(pages)
    problems = docs_layout.check_pages(pages)
    assert not problems, "\n".join(problems)
    tste = pages["tste.md"]
    assert "does not hold" in tste and "| better" not in tste  # a claim is never 'better'


def test_the_reading_rules_catch_each_break():
    ok = (
        "# Paper\n\nsummary\n\n![Fig. 1](figures/a.png)\n\n## Numbers\n\n"
        "| item | verdict |\n|---|---|\n| x | matched |\n\n"
        '??? note "details"\n    | item | verdict |\n    |---|---|\n'
        f"    | {'y' * 80} | matched |\n"
    )
    assert docs_layout.page_problems("snest.md", ok) == []
    long_heading = ok.replace("## Numbers", "## " + "a long title " * 6)
    (problem,) = docs_layout.page_problems("x.md", long_heading)
    assert "x.md:7: heading of 77 characters" in problem
    unfolded = ok.replace('??? note "details"', '!!! note "details"')  # open: read as text
    (problem,) = docs_layout.page_problems("x.md", unfolded)
    assert "verdict table cell of 80 characters" in problem and "x.md:16" in problem
    late = ok.replace("![Fig. 1](figures/a.png)\n\n", "") + "\n![Fig. 1](figures/a.png)\n"
    assert docs_layout.page_problems("other.md", late) == []  # not a paper page
    (problem,) = docs_layout.page_problems("snest.md", late)
    assert "no headline figure before the first table or section" in problem
    missing = ok.replace("![Fig. 1]", "*`results/figures/a.png` is not in the run*\n\n![x]")
    assert docs_layout.page_problems("snest.md", missing) == []  # its place kept
    code = "# P\n\n```\n# " + "a comment " * 10 + "\n```\n"  # not a heading
    assert docs_layout.page_problems("x.md", code) == []


def test_a_long_title_becomes_a_short_heading_and_text():
    assert docs_layout.short_heading("Table 1: minimal KL") == ("Table 1: minimal KL", "")
    title = "t-STE Fig. 2 on music: mean over folds (gen = triplet generalisation error, ...)"
    assert docs_layout.short_heading(title) == (
        "t-STE Fig. 2 on music: mean over folds", title
    )  # fmt: skip
    question = "Does SNEST R^{2,1} beat the Euclidean embeddings with more dimensions?"
    heading, below = docs_layout.short_heading(question)
    assert heading == "Does SNEST R^{2,1} beat the Euclidean embeddings with more\u2026"
    assert below == question and len(heading) <= docs_layout.HEADING_MAX


def test_claims_show_short_cells_and_fold_their_details(tmp_path):
    """A claim's per-method values become their range and the verdict, the values in full go
    to a folded block; a table can be folded whole under a title of the template's."""
    data = tmp_path / "data"
    (data / "tables").mkdir(parents=True)
    ours = "GNMDS-K 0.199, GNMDS-X 0.122, CKL-K 0.121, CKL-X 0.112, t-STE-X 0.111"
    rows = [
        ["t-STE", "Fig. 2", "all methods in range", "[0.34, 0.37]", ours, "", "does not hold",
         "our errors all below the published range"],
        ["t-STE", "Fig. 2", "t-STE 66%", "[0.66, 0.66]", "t-STE-X 0.664", "", "holds", ""],
    ]  # fmt: skip
    pd.DataFrame(rows, columns=COLUMNS).to_csv(data / "tables" / "summary.csv", index=False)
    block = docs.summary_block(data, "t-STE")
    main, folded = block.split("??? note")
    assert block.startswith("**Fig. 2**")
    assert "0.111\u2060\u2013\u20600.199\u00a0(5\u00a0methods)" in main and ours not in main
    assert "does\u00a0not\u00a0hold" in main and "holds" in main
    assert folded.startswith(' "Fig. 2: the values in full"') and f"| {ours} |" in folded
    assert docs_layout.page_problems("tste.md", "# t\n\n![f](f.png)\n\n" + block) == []

    (data / "tables" / "tste_music.md").write_text(
        "# t-STE Fig. 2 on music: mean over folds (gen = generalisation error)\n\n"
        "| dims | gen |\n|---|---|\n| 2 | 0.2 |\n"
    )
    text = docs.table_block(data, "tste_music", title="Music: Fig. 2")
    assert text.startswith("#### Music: Fig. 2\n\nt-STE Fig. 2 on music: mean over folds (gen")
    text = docs.table_block(data, "tste_music", folded=True, title="Music: Fig. 2")
    assert text.startswith('??? note "Music: Fig. 2"\n    t-STE Fig. 2 on music: mean over')
    assert "\n    | 2 | 0.2 |\n" in text and "#" not in text
    run = {"configuration": "test", "figures": []}
    line = '{{ table tste_music folded "Music: Fig. 2" }}'
    assert docs.render_page(line, data, run, SCHEMAS, REPO) == text
    with pytest.raises(docs.DocsError, match="one title at most"):
        docs.render_page('{{ table tste_music folded "a" "b" }}', data, run, SCHEMAS, REPO)


def test_committed_summary_is_the_summarys_reading_of_the_committed_tables():
    """docs/data's summary rows of the papers are what embedlab.summary makes of docs/data's
    own tables today (its verdict words included): after a change to the summary's code,
    `python -m embedlab docs --resummarize` makes them again."""
    committed = pd.read_csv(DATA / "tables" / "summary.csv", dtype=str, keep_default_na=False)
    again = docs.resummarized(DATA, sorted((REPO / "config" / "paper_values").glob("*.csv")))
    pd.testing.assert_frame_equal(again, committed)
    assert set(committed["verdict"]) <= set(summary.VERDICTS)


def test_every_paper_has_a_page_with_generated_numbers():
    summary = pd.read_csv(DATA / "tables" / "summary.csv", dtype=str)
    for paper in set(summary["paper"]):
        template = (TEMPLATES / docs.PAPER_PAGES[paper]).read_text()
        assert f"{{{{ summary {paper} }}}}" in template, paper
    for page in ["snest", "tste", "dcode", "diffeomap", "ee", "scale"]:  # each its section's
        template = (TEMPLATES / f"{page}.md").read_text()
        assert f"{{{{ configuration {page} }}}}" in template and "{{ table " in template, page
    template = (TEMPLATES / "performance.md").read_text()
    assert "{{ configuration }}" in template and "{{ table " in template


def test_config_reference_lists_every_setting():
    text = docs.config_reference(SCHEMAS)
    for path in sorted(SCHEMAS.glob("*.schema.yaml")):
        name = path.name.split(".")[0]
        schema = yaml.safe_load(path.read_text())
        for key, node in schema.get("properties", {}).items():
            setting = key if name in ("config", "datasets") else f"{name}.{key}"
            row = next((r for r in text.splitlines() if r.startswith(f"| `{setting}` ")), None)
            assert row is not None, setting
            if isinstance(node, dict) and "default" in node and not isinstance(
                node["default"], dict | list
            ):
                assert f"`{json.dumps(node['default'])}`" in row, (setting, row)
    assert "| `snest.stopping.plateau_tol` " in text


HISTORY = re.compile(
    r"\b20\d\d-\d\d-\d\d\b|#\d+\b|\bissue\b|used to\b|this morning|yesterday|"
    r"\bno longer\b|\bsince then\b|\bbefore the\b.*\bchange|\bwas\b.*\bbefore\b",
    re.IGNORECASE,
)


def test_readme_and_docs_are_short_and_without_history():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    texts = {"README.md": readme, "benchmarks/README.md": (REPO / "benchmarks/README.md")}
    texts["benchmarks/README.md"] = texts["benchmarks/README.md"].read_text()
    texts.update({f"docs/templates/{p.name}": p.read_text() for p in TEMPLATES.glob("*.md")})
    found = [
        f"{name}:{number}: {line.strip()}"
        for name, text in texts.items()
        for number, line in enumerate(text.splitlines(), start=1)
        if HISTORY.search(line)
    ]
    assert not found, "history belongs in CHANGELOG.md:\n" + "\n".join(found)
    assert re.search(r"^## \[?\d", (REPO / "CHANGELOG.md").read_text(), re.MULTILINE)


def _mkdocs(config, site):
    """``mkdocs build --strict`` (not -q: with -q mkdocs 1.6 counts no warning, and passes)."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        cwd=config.parent,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs not installed")
def test_site_builds_in_strict_mode_and_a_broken_link_fails(tmp_path):
    built = _mkdocs(REPO / "mkdocs.yml", tmp_path / "site")
    assert built.returncode == 0, built.stdout + built.stderr
    for page in ["index", "snest", "tste", "dcode", "diffeomap", "ee", "scale", "configuration"]:
        assert (tmp_path / "site" / page / "index.html").is_file() or page == "index"
    assert (tmp_path / "site" / "index.html").is_file()

    copy = tmp_path / "copy"
    shutil.copytree(REPO / "docs", copy / "docs")
    shutil.copy(REPO / "mkdocs.yml", copy / "mkdocs.yml")
    with open(copy / "docs" / "snest.md", "a") as f:
        f.write("\n[a page that is not there](missing.md)\n")
    broken = _mkdocs(copy / "mkdocs.yml", tmp_path / "site2")
    assert broken.returncode != 0
    assert "missing.md" in broken.stdout + broken.stderr


def _benchmark(folder, rule, name, seconds):
    path = folder / rule / f"{name}.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{seconds}\t0:00:01\t100.0\t{seconds}\n")


def test_a_paper_rerun_on_its_own_replaces_only_its_part(tmp_path):
    results, templates = _results(tmp_path)
    (templates / "snest.md").write_text(
        "# SNEST\n\n{{ configuration snest }}\n\n{{ summary SNEST }}\n\n{{ table snest_kl }}\n"
        '\n{{ figure snest_fig2a "Fig. 2a" }}\n'
    )
    (templates / "dcode.md").write_text("# D-CODE\n\n{{ configuration dcode }}\n")
    (templates / "index.md").write_text("# all\n\n{{ configuration }}\n")
    (results / "tables" / "dcode_rank.md").write_text("| size | 20a |\n|---|---|\n| r | 1 |\n")
    whole = tmp_path / "whole_benchmarks"
    _benchmark(whole, "snest_embed", "a", 10)
    _benchmark(whole, "dcode_rank", "b", 20)
    from embedlab import tables, timings

    times, _ = timings.timings_table(timings.read_benchmarks(whole))
    tables.write_table(
        times, results / "tables" / "timings.csv", results / "tables" / "timings.md",
        measured=timings.MEASURED, title="t",
    )
    data, site = tmp_path / "data", tmp_path / "site"
    docs.snapshot(results, data, site, templates, "quick")

    # SNEST rerun on its own: a new Table 1 and figure, its own benchmark files
    rerun = tmp_path / "rerun"
    (rerun / "results" / "tables").mkdir(parents=True)
    (rerun / "results" / "figures").mkdir()
    (rerun / "results" / "tables" / "snest_kl.csv").write_text(
        "dataset,cell,kl,runs,verdict\nschool,sne-2,0.4,3,better\n"
    )
    (rerun / "results" / "tables" / "snest_kl.md").write_text(
        "| cell | school |\n|---|---|\n| sne-2 | 0.4 |\n"
    )
    (rerun / "results" / "figures" / "snest_fig2a.png").write_bytes(b"\x89PNG rerun")
    _benchmark(rerun / "logs" / "benchmarks", "snest_embed", "a", 30)
    _benchmark(rerun / "logs" / "benchmarks", "snest_table", "t", 2)
    paper_values = tmp_path / "paper_values"
    paper_values.mkdir()
    (paper_values / "snest_table1.csv").write_text(
        "dataset,method,n_space,n_time,label,kl\nschool,sne,2,0,SNE R^2,0.52\n"
    )

    record = docs.snapshot_section(
        rerun / "results", data, site, templates, "snest", "default: config/config.yaml",
        sorted(paper_values.glob("*.csv")), rerun / "logs" / "benchmarks",
    )
    assert record["sections"] == {"snest": "default: config/config.yaml"}
    assert (site / "figures" / "snest_fig2a.png").read_bytes() == b"\x89PNG rerun"
    assert (data / "tables" / "dcode_rank.md").is_file()  # another paper's table kept
    pages = docs.render(templates, data, SCHEMAS)
    assert "| sne-2 | 0.4 |" in pages["snest.md"]
    assert "(configuration: **default: config/config.yaml**)" in pages["snest.md"]
    assert "(configuration: **quick**)" in pages["dcode.md"]
    assert "SNEST: **default: config/config.yaml**" in pages["index.md"]
    # the summary: SNEST's rows recomputed from the rerun (one paper value), D-CODE's kept
    rows = pd.read_csv(data / "tables" / "summary.csv", dtype=str, keep_default_na=False)
    snest = rows[rows["paper"] == "SNEST"]
    assert list(snest["paper_value"]) == ["0.52"] and list(snest["ours"]) == ["0.4"]
    assert list(snest["verdict"]) == ["better"]
    assert list(rows[rows["paper"] == "D-CODE"]["item"]) == ["20a mle"]
    # the timings: SNEST's rows from the rerun, D-CODE's kept, the whole run summed again
    times = pd.read_csv(data / "tables" / "timings.csv").set_index(["paper", "rule"])
    assert times.loc[("SNEST", "(all)"), "cpu_s"] == 32
    assert times.loc[("D-CODE", "(all)"), "cpu_s"] == 20
    assert times.loc[("all", "(all)"), "cpu_s"] == 52
    assert times.loc[("all", "(all)"), "jobs"] == 3
    assert "default: config/config.yaml" in docs.readme_block(data)

    with pytest.raises(docs.DocsError, match="not a section of the pages"):
        docs.snapshot_section(rerun / "results", data, site, templates, "snst", "d", [], whole)
    with pytest.raises(docs.DocsError, match="no table of section 'ee'"):
        docs.snapshot_section(rerun / "results", data, site, templates, "ee", "d", [], whole)

    # the dataset counts from a run of their own (`snakemake datasets`): the datasets table,
    # the summary's dataset rows from the run's artifacts, the timings of the rules of no paper
    counts = tmp_path / "counts"
    tables_dir = counts / "results" / "tables"
    tables_dir.mkdir(parents=True)
    (tables_dir / "datasets.md").write_text("| dataset | n |\n|-|-|\n| v | 9 |\n")
    (tables_dir / "datasets.csv").write_text("dataset,n\nv,9\n")
    (counts / "results" / "datasets" / "v").mkdir(parents=True)
    (counts / "results" / "datasets" / "v" / "meta.json").write_text(
        '{"name": "v", "paper": {"n": 9, "dims": 3}, "summary": {"n": 9, "dims": 2}}'
    )
    _benchmark(counts / "logs" / "benchmarks", "build_dataset", "v", 4)
    (templates / "datasets.md").write_text(
        "# Datasets\n\n{{ configuration datasets }}\n\n{{ table datasets }}\n"
    )
    record = docs.snapshot_section(
        counts / "results", data, site, templates, "datasets", "default: counts", [],
        counts / "logs" / "benchmarks",
    )
    assert record["sections"]["datasets"] == "default: counts"
    pages = docs.render(templates, data, SCHEMAS)
    assert "| v | 9 |" in pages["datasets.md"]
    assert "(configuration: **default: counts**)" in pages["datasets.md"]
    assert "dataset counts: **default: counts**" in pages["index.md"]
    rows = pd.read_csv(data / "tables" / "summary.csv", dtype=str, keep_default_na=False)
    got = rows[rows["paper"] == "datasets"].set_index("item")
    assert list(got["verdict"]) == ["matched", "differs"]
    assert list(rows[rows["paper"] == "SNEST"]["ours"]) == ["0.4"]  # the paper's rows kept
    times = pd.read_csv(data / "tables" / "timings.csv").set_index(["paper", "rule"])
    assert times.loc[("datasets, summary", "build_dataset"), "cpu_s"] == 4
    assert times.loc[("all", "(all)"), "cpu_s"] == 56
