"""The paper-vs-ours summary: one line per published number the workflow reproduces.

Every row of every file in ``config/paper_values/`` and every ``paper`` count of the dataset
registry becomes one line: the paper's value, ours, the difference and a verdict:

* ``matched`` / ``better`` / ``worse`` -- a number against the paper's number, taken from
  the paper's own comparison table (the tolerances live there: KL within 0.005, median rank
  within 1, 1-NN errors within 10 %, ...);
* ``holds`` / ``does not hold`` -- a claim of the paper's text (the t-STE claims: a range of
  errors, a method the best), judged on our values; a claim that does not hold is never
  ``better``, even where our errors lie below the published range (the note says so);
* ``differs`` -- a dataset count that is not the paper's (neither better nor worse);
* ``not comparable`` -- measured on a reduced run (a subsampled quick configuration);
* ``not reproduced`` -- with the reason in ``note`` (paper not in this run's configuration,
  cell not run, method quoted from the paper and not rerun);
* ``no paper value`` -- a user's own dataset (config ``own_datasets``): one line per table
  that holds it, so the summary shows where it went.

A paper-values file without a reader here is an error, so a new table cannot be left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd

from embedlab import tables
from embedlab.experiments.snest.cells import cell_label
from embedlab.experiments.tste.claims import in_claimed_range

COLUMNS = ["paper", "table", "item", "paper_value", "ours", "diff", "verdict", "note"]
NOT_IN_RUN = "not reproduced"
#: the verdicts of a claim of the paper's text (not a number: never better or worse)
HOLDS, DOES_NOT_HOLD = "holds", "does not hold"


def _plain(value):
    """Whole floats as int (1e+06 reads badly in a table), everything else as it is."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    return value


def _row(paper, table, item, paper_value, ours=None, verdict=NOT_IN_RUN, note="", diff=None):
    paper_value, ours = _plain(paper_value), _plain(ours)
    if diff is None and isinstance(ours, int | float) and isinstance(paper_value, int | float):
        diff = round(float(ours) - float(paper_value), 4)
    return dict(
        zip(COLUMNS, [paper, table, item, paper_value, ours, diff, verdict, note], strict=True)
    )


def _missing(ours_csv: Path | None, section: str) -> str:
    return f"paper not in this run (config section '{section}')" if ours_csv is None else ""


def snest_rows(paper_csv: Path, ours_csv: Path | None) -> list[dict]:
    """Table 1 of the SNEST paper against results/tables/snest_kl.csv."""
    ours = pd.read_csv(ours_csv) if ours_csv else pd.DataFrame(columns=["dataset", "cell"])
    by_cell = {(r.dataset, r.cell): r for r in ours.itertuples()}
    rows = []
    for p in pd.read_csv(paper_csv).itertuples():
        cell = (
            f"{p.method}-{p.n_space}-{p.n_time}"
            if p.method == "snest"
            else f"{p.method}-{p.n_space}"
        )
        item = f"{p.dataset} {cell_label(cell)} KL"
        r = by_cell.get((p.dataset, cell))
        if r is None:
            note = _missing(ours_csv, "snest") or "cell not in this run (snest.datasets / cells)"
            rows.append(_row("SNEST", "Table 1", item, p.kl, note=note))
            continue
        note = f"min over {r.runs} runs"
        rows.append(_row("SNEST", "Table 1", item, p.kl, float(r.kl), r.verdict, note))
    return rows


def dcode_rows(paper_csv: Path, ours_csv: Path | None) -> list[dict]:
    """Table 2 of the D-CODE paper against results/tables/dcode_rank.csv."""
    ours = pd.read_csv(ours_csv) if ours_csv else pd.DataFrame(columns=["observation"])
    ours = ours[ours["observation"] == "counts"]  # the table's reading; per-token is a second
    by_key = {(r.n_authors, r.n_words, r.method): r for r in ours.itertuples()}
    rows = []
    for p in pd.read_csv(paper_csv).itertuples():
        item = f"{p.n_authors}a,{p.n_words}w {p.method} median rank"
        r = by_key.get((p.n_authors, p.n_words, p.method))
        if r is None:
            note = _missing(ours_csv, "dcode") or "size or method not in this run"
            rows.append(_row("D-CODE", "Table 2", item, p.median_rank, note=note))
            continue
        note = f"mean over {r.subsets_ok} subsets, s.e. {r.standard_error:.2f}"
        ours_value = None if pd.isna(r.median_rank) else float(r.median_rank)
        rows.append(_row("D-CODE", "Table 2", item, p.median_rank, ours_value, r.verdict, note))
    return rows


def diffeomap_rows(paper_csv: Path, ours_csv: Path | None) -> list[dict]:
    """The Diffeomap paper's 1-NN numbers against results/tables/diffeomap_1nn.csv.

    Ours: for Diffeomap the headline, the best full-set run (the exact method, its map the
    learned flow), with the paper's reduced-set approximation (the table's labelled ``final``
    row) in the note; for the others the scikit-learn baseline of that name.
    """
    ours = pd.read_csv(ours_csv) if ours_csv else pd.DataFrame(columns=["dataset", "stage"])
    ours = ours[ours["label"].fillna("") != ""] if "label" in ours else ours.iloc[0:0]
    by_key = {(r.dataset, r.method, r.stage): r for r in ours.itertuples()}
    rows = []
    for p in pd.read_csv(paper_csv).itertuples():
        item = f"{p.dataset} {p.method} {p.metric}"
        headline = "full_set" if p.method == "diffeomap" else "baseline"
        r = by_key.get((p.dataset, p.method, headline))
        if r is None:
            note = _missing(ours_csv, "diffeomap") or (
                "quoted from the paper, not rerun" if "not rerun" in str(p.note) else "not run"
            )
            rows.append(_row("Diffeomap", "1-NN", item, p.value, note=note))
            continue
        verdict = "not comparable" if r.verdict.startswith("subsampled") else r.verdict
        note = "" if pd.isna(r.params) else str(r.params)
        if p.method == "diffeomap":
            note = f"{r.label} {note}"
            approx = by_key.get((p.dataset, p.method, "final"))
            if approx is not None:
                note += f"; {approx.label}: {approx.value:g} ({approx.verdict}) {approx.params}"
        if verdict == "not comparable":
            note = f"subsampled quick run; {note}"
        rows.append(_row("Diffeomap", "1-NN", item, p.value, float(r.value), verdict, note))
    return rows


_METHOD_VALUE = re.compile(r"([A-Za-z][\w-]*) (\d+\.\d+)")


def compact_ours(ours: str) -> str:
    """A claim's "ours" in a few characters, for a table that shows the full text elsewhere.

    A t-STE claim's "ours" (:func:`embedlab.experiments.tste.claims.claims_table`) is
    ``"M v, M v, ..."`` (each method judged, its value) or ``"t-STE-X lowest at w/d dims;
    M v, ..."``, either followed by ``"; <remark>"``. The short form keeps the part before
    the first ``;``: one method's value as it is, several as their range ``"lo-hi (k
    methods)"``; any other text is returned unchanged."""
    head = str(ours).split(";")[0].strip()
    pairs = _METHOD_VALUE.findall(head)
    if " lowest at " in head:
        return head
    if not pairs or head != ", ".join(f"{m} {v}" for m, v in pairs):
        return str(ours)
    if len(pairs) == 1:
        return head
    values = sorted(float(v) for _, v in pairs)
    digits = len(pairs[0][1].split(".")[1])
    return f"{values[0]:.{digits}f}\u2013{values[-1]:.{digits}f} ({len(pairs)} methods)"


def tste_rows(
    paper_csv: Path, ours_csv: Path | None, table: str = "Fig. 2", section: str = "tste"
) -> list[dict]:
    """The t-STE paper's claims (ranges of errors) against results/tables/tste_claims.csv
    (the paper-text reading; ``table`` names the reading in the summary)."""
    ours = pd.read_csv(ours_csv) if ours_csv else pd.DataFrame(columns=["claim", "holds"])
    by_claim = {r.claim: r for r in ours.itertuples()}
    rows = []
    for p in pd.read_csv(paper_csv).itertuples():
        value = "-" if pd.isna(p.low) else f"[{p.low:g}, {p.high:g}]"
        item = p.note
        r = by_claim.get(p.note)
        if r is None or str(r.holds) == "not run":
            note = _missing(ours_csv, section) or "dataset or dimension not in this run"
            rows.append(_row("t-STE", table, item, value, note=note))
            continue
        pairs = _METHOD_VALUE.findall(str(r.ours))
        named = getattr(r, "degenerate", "")  # a column of the authors' claims table only
        named = named if isinstance(named, str) else ""  # NaN when the column is empty
        collapsed = {m.strip() for m in named.split(",")} - {""}
        values = [float(v) for m, v in pairs if m not in collapsed]
        # a range claim that fails on a sound fit fails whatever the degenerate ones say
        fails_anyway = not pd.isna(p.low) and any(
            not in_claimed_range(v, p.low, p.high) for v in values
        )
        note = ""
        if collapsed:
            note = (
                f"{', '.join(sorted(collapsed))}: degenerate fit (its triplets mostly tied: the "
                "authors' error counts a tie as correct, and a collapsed map's 1-NN error is "
                "that of coincident points)"
            )
        if collapsed and not fails_anyway:
            verdict = "not comparable"
        elif str(r.holds) == "True":
            verdict = HOLDS
        else:
            verdict = DOES_NOT_HOLD
            if values and not pd.isna(p.low) and all(v < p.low for v in values):
                note = "; ".join(filter(None, ["our errors all below the published range", note]))
        rows.append(_row("t-STE", table, item, value, str(r.ours), verdict, note, diff=""))
    return rows


def tste_authors_rows(paper_csv: Path, ours_csv: Path | None) -> list[dict]:
    """The same claims against results/tables/tste_authors_claims.csv (the authors' code)."""
    return tste_rows(paper_csv, ours_csv, "Fig. 2 (authors' code)", "tste.authors_code")


def tste_authors_figure_rows(paper_csv: Path, ours_csv: Path | None) -> list[dict]:
    """The same claims against results/tables/tste_authors_figure_claims.csv: the authors'
    code with t-STE-X at alpha = 1 and STE-X / t-STE-X maximising the sum of probabilities
    (the settings that reproduce the paper's Fig. 2)."""
    table = "Fig. 2 (authors' code, sum of p, t-STE alpha 1)"
    return tste_rows(paper_csv, ours_csv, table, "tste.authors_figure")


#: paper-values file -> (our table under results/tables/, the config section, its reader)
READERS: dict[str, tuple[str, str, Callable[[Path, Path | None], list[dict]]]] = {
    "snest_table1.csv": ("snest_kl.csv", "snest", snest_rows),
    "dcode_table2.csv": ("dcode_rank.csv", "dcode", dcode_rows),
    "diffeomap_1nn.csv": ("diffeomap_1nn.csv", "diffeomap", diffeomap_rows),
    "tste_claims.csv": ("tste_claims.csv", "tste", tste_rows),
}
#: further readings of a paper-values file: the t-STE claims under the authors' protocol
MORE_READERS: dict[str, list[tuple[str, str, Callable[[Path, Path | None], list[dict]]]]] = {
    "tste_claims.csv": [
        ("tste_authors_claims.csv", "tste", tste_authors_rows),
        ("tste_authors_figure_claims.csv", "tste", tste_authors_figure_rows),
    ],
}


#: the summary's name for the dataset counts' rows (its "paper" column)
DATASETS = "datasets"


def dataset_rows(meta_files: Iterable[str | Path]) -> list[dict]:
    """Every count a paper states for a dataset (registry ``paper``) beside the one we built."""
    rows = []
    for path in meta_files:
        meta = json.loads(Path(path).read_text())
        ours = {**meta.get("summary", {}), **meta.get("counts", {})}
        for key, value in meta.get("paper", {}).items():
            got = ours.get(key)
            if got is None:
                verdict, note = NOT_IN_RUN, f"the builder records no count {key!r}"
            else:
                verdict, note = ("matched" if got == value else "differs"), ""
            rows.append(_row(DATASETS, meta["name"], key, value, got, verdict, note))
    return rows


NO_PAPER_VALUE = "no paper value"


def own_dataset_rows(tables_dir: str | Path, meta_files: Iterable[str | Path]) -> list[dict]:
    """One line per (own dataset, table holding it): the rows it has there, no paper value.
    A table holds a dataset in its ``dataset`` column or in its name (``tste_<dataset>.csv``)."""
    own = [
        meta["name"]
        for meta in (json.loads(Path(p).read_text()) for p in meta_files)
        if meta.get("own_dataset")
    ]
    if not own:
        return []
    rows = []
    for csv in sorted(Path(tables_dir).glob("*.csv")):
        if csv.name in ("summary.csv", "timings.csv"):
            continue
        table = pd.read_csv(csv)
        for name in own:
            if "dataset" in table.columns:
                count = int((table["dataset"].astype(str) == name).sum())
            else:
                count = len(table) if csv.stem.endswith(f"_{name}") else 0
            if count:
                note = f"{count} rows in {csv.name}"
                rows.append(_row("own datasets", csv.stem, name, None, count, NO_PAPER_VALUE, note))
    return rows


def summary_table(
    paper_files: Iterable[str | Path],
    tables_dir: str | Path,
    meta_files: Iterable[str | Path] = (),
) -> pd.DataFrame:
    """One row per published number: every row of ``paper_files`` and every dataset count;
    then where each own dataset appears (:func:`own_dataset_rows`)."""
    meta_files = list(meta_files)
    rows = dataset_rows(meta_files)
    for paper_csv in sorted(map(Path, paper_files)):
        if paper_csv.name not in READERS:
            raise ValueError(
                f"{paper_csv}: no summary reader for this paper-values file; "
                f"add one to embedlab.summary.READERS (known: {sorted(READERS)})"
            )
        for ours_name, _, reader in [
            READERS[paper_csv.name],
            *MORE_READERS.get(paper_csv.name, []),
        ]:
            ours_csv = Path(tables_dir) / ours_name
            rows += reader(paper_csv, ours_csv if ours_csv.exists() else None)
    rows += own_dataset_rows(tables_dir, meta_files)
    return pd.DataFrame(rows, columns=COLUMNS, dtype=object)  # 140 stays 140, not 140.0


VERDICTS = [
    "matched", "better", "worse", "differs", HOLDS, DOES_NOT_HOLD, "not comparable", NOT_IN_RUN,
    NO_PAPER_VALUE,
]


def verdict_table(df: pd.DataFrame) -> pd.DataFrame:
    """Published numbers per paper (rows) and verdict (columns), with totals."""
    counts = pd.crosstab(df["paper"], df["verdict"]).reindex(
        columns=[v for v in VERDICTS if v in set(df["verdict"])], fill_value=0
    )
    counts["total"] = counts.sum(axis=1)
    counts.loc["all"] = counts.sum()
    return counts.reset_index()


def verdict_counts(df: pd.DataFrame) -> str:
    """'12 matched, 3 better, ...' in a fixed order."""
    counts = df["verdict"].value_counts()
    return ", ".join(f"{counts[v]} {v}" for v in VERDICTS if v in counts)


def write_summary(df: pd.DataFrame, csv: str | Path, md: str | Path) -> str:
    """``df`` as ``csv`` and as ``md`` (a title with the verdict counts, the counts per paper,
    then every published number); returns the title."""
    title = f"Paper vs ours: {len(df)} published numbers ({verdict_counts(df)})"
    tables.write_table(df, csv, md, measured=(), title=title)
    counts = verdict_table(df).to_markdown(index=False)
    body = Path(md).read_text().split("\n", 2)[2]  # below the title line
    Path(md).write_text(f"# {title}\n\n{counts}\n\n## Every published number\n\n{body}")
    return title
