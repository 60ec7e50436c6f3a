"""The documentation site's data: a run's tables, figures and configuration, kept for the pages.

The pages (:mod:`embedlab.docs`) are made from a data folder, never from ``results/``
(which is not committed), so the committed pages can be checked against a fresh rendering of
the committed data. This module writes and reads that folder:

* :func:`snapshot` copies a run's ``results/tables/*.{csv,md}`` into the data folder and the
  figures the templates name (``{{ figure NAME ... }}``) into the site's ``figures/``, and
  records the run's configuration (given by whoever ran it) in ``run.json``;
* :func:`snapshot_section` replaces one section of that snapshot with another run's: a paper
  rerun on its own (e.g. one target of a long reproduction: its tables, figures, summary rows
  and timing rows), or the dataset counts' part; ``run.json`` names that run's configuration
  for the section's page;
* :func:`resummarized` makes the snapshot's summary rows again from its own tables;
* :func:`read_run` and :func:`read_summary` read the record and the summary back.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd

from embedlab import summary, tables, timings

#: a template's placeholder line, ``{{ KIND ARGUMENTS }}`` (the syntax: :mod:`embedlab.docs`)
PLACEHOLDER = re.compile(r"^\{\{\s*(\w+)\s*(.*?)\s*\}\}\s*$")
#: the snapshot's record of its run, in the data folder
RUN_FILE = "run.json"
#: the site's folder of figures
FIGURES = "figures"
#: the site's copy of a figure is at most this wide (pixels), in 256 colours
FIGURE_WIDTH = 1000

#: the dataset counts' section (the datasets page), named as the summary names their rows
DATASETS = summary.DATASETS
#: the parts of a snapshot that a run of its own can replace (:func:`snapshot_section`): each
#: paper's (its rule prefix, as in the config and ``snakemake <paper>``), and the dataset
#: counts' (``snakemake datasets``), each with its name in the timings' and index pages' lists
SECTIONS = timings.PAPERS | {DATASETS: "dataset counts"}


class DocsError(ValueError):
    """A template or a data folder the pages cannot be made from."""


def read_run(data: Path) -> dict:
    """The snapshot's record, ``run.json`` (:func:`snapshot`, :func:`snapshot_section`)."""
    path = Path(data) / RUN_FILE
    if not path.is_file():
        raise DocsError(f"{data}: no {RUN_FILE} (made by `python -m embedlab docs --results`)")
    return json.loads(path.read_text())


def read_summary(data: Path) -> pd.DataFrame:
    """The snapshot's summary table, every cell a string."""
    path = Path(data) / "tables" / "summary.csv"
    if not path.is_file():
        raise DocsError(f"{path}: missing")
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def figures_named(templates: Path) -> list[str]:
    """The figure names that the templates' ``{{ figure ... }}`` placeholders ask for."""
    names = set()
    for path in sorted(Path(templates).glob("*.md")):
        for line in path.read_text().splitlines():
            m = PLACEHOLDER.match(line)
            if m and m.group(1) == "figure":
                names.add(m.group(2).split()[0])
    return sorted(names)


def copy_figure(src: Path, dst: Path, width: int = FIGURE_WIDTH) -> None:
    """``src`` as a PNG of at most ``width`` pixels across in 256 colours on white (a tenth
    of a run's PNG, for the committed site); a file Pillow cannot read is copied as is."""
    try:
        from PIL import Image

        with Image.open(src) as im:
            im = im.convert("RGBA")
            white = Image.new("RGBA", im.size, (255, 255, 255, 255))
            im = Image.alpha_composite(white, im).convert("RGB")
            if im.width > width:
                im = im.resize((width, round(im.height * width / im.width)), Image.LANCZOS)
            im.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(dst, optimize=True)
    except (ImportError, OSError):
        shutil.copyfile(src, dst)


def _table_files(folder: Path) -> list[str]:
    return sorted(p.name for p in Path(folder).iterdir() if p.suffix in (".csv", ".md"))


def snapshot(
    results: Path, data: Path, site: Path, templates: Path, configuration: str
) -> dict:
    """Replace ``data`` with a copy of ``results/tables/*.{csv,md}`` and ``site/figures`` with
    the PNGs of ``results/figures`` that the templates name; write ``data/run.json``
    (``configuration``, the tables and figures copied). Returns that record."""
    results, data, site = Path(results), Path(data), Path(site)
    tables_dir = results / "tables"
    if not (tables_dir / "summary.csv").is_file():
        raise DocsError(f"{tables_dir}: no summary.csv (not the results folder of a whole run)")
    if not configuration.strip():
        raise DocsError("the run's configuration must be named (e.g. 'quick: config/quick.yaml')")
    if data.exists():
        shutil.rmtree(data)
    (data / "tables").mkdir(parents=True)
    table_names = _table_files(tables_dir)
    for name in table_names:
        shutil.copyfile(tables_dir / name, data / "tables" / name)
    figures_dir = site / FIGURES
    if figures_dir.exists():
        shutil.rmtree(figures_dir)
    figures_dir.mkdir(parents=True)
    figures = []
    for name in figures_named(templates):
        src = results / "figures" / f"{name}.png"
        if src.is_file():
            copy_figure(src, figures_dir / src.name)
            figures.append(name)
    record = {"configuration": configuration.strip(), "tables": table_names, "figures": figures}
    (data / RUN_FILE).write_text(json.dumps(record, indent=1) + "\n")
    return record


def _section_files(names, section: str) -> list[str]:
    return [n for n in names if n.split(".")[0] == section or n.startswith(f"{section}_")]


def snapshot_section(
    results: Path,
    data: Path,
    site: Path,
    templates: Path,
    section: str,
    configuration: str,
    paper_values: list[Path],
    benchmarks: Path,
) -> dict:
    """Replace the part of the snapshot in ``data`` (and ``site/figures``) that belongs to
    ``section`` (one of :data:`SECTIONS`: a paper, its tables and figures named
    ``<section>_*``; or ``datasets``, the table ``datasets``) with that of another run,
    ``results``: its tables and the figures the templates name, its rows of the summary
    (recomputed from its tables and ``paper_values``; the dataset counts' from its artifacts'
    ``meta.json``) and of the timings (from its ``benchmarks`` folder; the dataset counts':
    the rows of the rules of no paper). ``run.json`` records ``configuration`` under
    ``sections``. Returns the updated record."""
    if section not in SECTIONS:
        known = sorted(SECTIONS)
        raise DocsError(f"section {section!r}: not a section of the pages (one of {known})")
    if not configuration.strip():
        raise DocsError("the run's configuration must be named (e.g. 'default: config.yaml')")
    results, data, site = Path(results), Path(data), Path(site)
    record = read_run(data)
    tables_dir = results / "tables"
    new = _section_files(_table_files(tables_dir), section)
    if not new:
        raise DocsError(f"{tables_dir}: no table of section {section!r} ({section}_*.csv)")
    for name in _section_files(record["tables"], section):
        (data / "tables" / name).unlink(missing_ok=True)
    for name in new:
        shutil.copyfile(tables_dir / name, data / "tables" / name)
    figures = [n for n in record["figures"] if n not in _section_files(record["figures"], section)]
    for name in _section_files(figures_named(templates), section):
        (site / FIGURES / f"{name}.png").unlink(missing_ok=True)
        src = results / "figures" / f"{name}.png"
        if src.is_file():
            copy_figure(src, site / FIGURES / src.name)
            figures.append(name)

    if section == DATASETS:  # the dataset counts: from the artifacts the run built
        paper, timed = DATASETS, timings.OTHER
        rows = summary.summary_table([], tables_dir, sorted(results.glob("datasets/*/meta.json")))
    else:
        paper = timed = timings.PAPERS[section]
        rows = summary.summary_table(paper_values, tables_dir)
    write_summary(data, replace_rows(read_summary(data), rows[rows["paper"] == paper], {paper}))

    times = pd.read_csv(data / "tables" / "timings.csv")
    times = timings.replace_paper(times, timings.read_benchmarks(benchmarks), timed)
    sections = record.get("sections", {}) | {section: configuration.strip()}
    title = (
        "Timings per paper and rule, each paper from the run its page names (the whole run: "
        + record["configuration"]
        + "; "
        + "; ".join(f"{SECTIONS[k]}: {v}" for k, v in sorted(sections.items()))
        + ")"
    )
    tables.write_table(
        times,
        data / "tables" / "timings.csv",
        data / "tables" / "timings.md",
        measured=timings.MEASURED,
        title=title,
    )

    tables.columns_path(data / "tables" / "timings.csv").unlink(missing_ok=True)
    record = record | {
        "tables": _table_files(data / "tables"),
        "figures": sorted(figures),
        "sections": sections,
    }
    (data / RUN_FILE).write_text(json.dumps(record, indent=1) + "\n")
    return record


def replace_rows(old: pd.DataFrame, rows: pd.DataFrame, papers: set[str]) -> pd.DataFrame:
    """The summary ``old`` with the rows of ``papers`` replaced by ``rows``, each paper where
    it stood (a new one last)."""
    merged = pd.concat(
        [old[~old["paper"].isin(papers)], rows.where(rows.notna(), "").astype(str)],
        ignore_index=True,
    )
    order = {name: i for i, name in enumerate(dict.fromkeys(old["paper"]))}
    return merged.sort_values(
        "paper", key=lambda column: column.map(order).fillna(len(order)), kind="stable"
    ).reset_index(drop=True)


def write_summary(data: Path, rows: pd.DataFrame) -> None:
    """``rows`` as the snapshot's summary (CSV and Markdown; the snapshot keeps tables, not
    their column declarations)."""
    tables_dir = Path(data) / "tables"
    summary.write_summary(rows, tables_dir / "summary.csv", tables_dir / "summary.md")
    tables.columns_path(tables_dir / "summary.csv").unlink(missing_ok=True)


def resummarized(data: Path, paper_values: list[Path]) -> pd.DataFrame:
    """The snapshot's summary with its papers' rows made again from its own tables and
    ``paper_values`` by :func:`embedlab.summary.summary_table` (after a change to how the
    summary reads a table or words a verdict); the rows of the dataset counts and of own
    datasets are kept (the artifacts they come from are not in the snapshot)."""
    rows = summary.summary_table(paper_values, Path(data) / "tables")
    return replace_rows(read_summary(data), rows, set(rows["paper"]))
