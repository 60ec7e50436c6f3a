"""Where a run's time went: Snakemake's per-job benchmark files summed per paper and rule.

Every rule writes ``logs/benchmarks/<rule>/<its log path>.tsv`` (Snakemake's ``benchmark:``
directive: wall seconds ``s``, ``cpu_time``, ``max_rss`` in MB). :func:`timings_table` sums
them: per rule and per paper the job count, wall seconds (the serial sum), CPU seconds and the
largest resident memory; and for the whole run its span (first job start to last job end,
start = file time - wall seconds) and the average number of busy cores, CPU seconds / span.

A run resumed over several sittings (a long reproduction, target by target) has idle gaps
between them: :func:`parts_run_in_one_go` splits the jobs where no job ran for ``gap_s``
seconds and gives each part its span and its average number of jobs running (serial wall
seconds / span), so that "both cores busy" can be read per part.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from embedlab import tables

#: rule-name prefix -> paper
PAPERS = {
    "snest": "SNEST",
    "tste": "t-STE",
    "dcode": "D-CODE",
    "diffeomap": "Diffeomap",
    "ee": "EE",
    "scale": "scale (beyond the papers)",
}


#: the rows of the rules of no paper: fetching, building and counting datasets, the summary
OTHER = "datasets, summary"


def paper_of(rule: str) -> str:
    prefix = rule.split("_", 1)[0]
    return PAPERS.get(prefix, OTHER)


def read_benchmarks(folder: str | Path) -> pd.DataFrame:
    """One row per benchmark file: rule, paper, wall and CPU seconds, max RSS, end time."""
    folder = Path(folder)
    rows = []
    for path in sorted(folder.rglob("*.tsv")):
        rule = path.relative_to(folder).parts[0]
        data = pd.read_csv(path, sep="\t")
        if data.empty or not {"s", "cpu_time", "max_rss"} <= set(data.columns):
            raise ValueError(f"{path}: not a Snakemake benchmark file (columns {list(data)})")
        last = data.iloc[-1]
        rows.append(
            {
                "rule": rule,
                "paper": paper_of(rule),
                "wall_s": float(last["s"]),
                "cpu_s": float(pd.to_numeric(last["cpu_time"], errors="coerce")),
                "max_rss_mb": float(pd.to_numeric(last["max_rss"], errors="coerce")),
                "end": path.stat().st_mtime,
            }
        )
    if not rows:
        raise ValueError(f"{folder}: no benchmark files (run the workflow first)")
    return pd.DataFrame(rows)


def timings_table(jobs: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """(per paper and rule, then per paper, then the whole run: jobs, wall_s, cpu_s,
    max_rss_mb, cpu_per_wall; the run's span and average busy cores)."""

    def summed(group):
        return group.agg(
            jobs=("wall_s", "size"),
            wall_s=("wall_s", "sum"),
            cpu_s=("cpu_s", "sum"),
            max_rss_mb=("max_rss_mb", "max"),
        )

    by_rule = summed(jobs.groupby(["paper", "rule"])).reset_index()
    by_paper = summed(jobs.groupby("paper")).reset_index().assign(rule="(all)")
    total = summed(jobs.assign(paper="all").groupby("paper")).reset_index().assign(rule="(all)")
    table = pd.concat([by_rule, by_paper, total], ignore_index=True)
    table["cpu_per_wall"] = (table["cpu_s"] / table["wall_s"]).round(2)
    table[["wall_s", "cpu_s"]] = table[["wall_s", "cpu_s"]].round(1)
    span = float(jobs["end"].max() - (jobs["end"] - jobs["wall_s"]).min())
    run = {
        "jobs": int(len(jobs)),
        "span_s": round(span, 1),
        "busy_cores": round(float(jobs["cpu_s"].sum()) / span, 2) if span > 0 else float("nan"),
    }
    return table[["paper", "rule", "jobs", "wall_s", "cpu_s", "max_rss_mb", "cpu_per_wall"]], run


MEASURED = ["wall_s", "cpu_s", "max_rss_mb", "cpu_per_wall"]


def replace_paper(table: pd.DataFrame, jobs: pd.DataFrame, paper: str) -> pd.DataFrame:
    """The timings ``table`` with the rows of ``paper`` replaced by those of its jobs in
    ``jobs`` (:func:`read_benchmarks` of the run that reran it), and the whole run's row
    summed again over the papers' rows (its ``jobs``, ``wall_s``, ``cpu_s`` sums; the largest
    ``max_rss_mb``)."""
    mine = jobs[jobs["paper"] == paper]
    if mine.empty:
        raise ValueError(f"no benchmark file of a {paper} rule (rules {sorted(set(jobs['rule']))})")
    fresh, _ = timings_table(mine)
    fresh = fresh[fresh["paper"] == paper]
    kept = table[(table["paper"] != paper) & (table["paper"] != "all")]
    per_paper = pd.concat([kept, fresh], ignore_index=True)
    papers = per_paper[per_paper["rule"] == "(all)"]
    total = {
        "paper": "all",
        "rule": "(all)",
        "jobs": int(papers["jobs"].sum()),
        "wall_s": round(float(papers["wall_s"].sum()), 1),
        "cpu_s": round(float(papers["cpu_s"].sum()), 1),
        "max_rss_mb": float(papers["max_rss_mb"].max()),
    }
    total["cpu_per_wall"] = round(total["cpu_s"] / total["wall_s"], 2)
    out = pd.concat([per_paper, pd.DataFrame([total])], ignore_index=True)
    order = {p: i for i, p in enumerate(sorted(set(out["paper"]) - {"all"}))} | {"all": 1e9}
    out = out.assign(_all=out["rule"] == "(all)", _order=out["paper"].map(order))
    out = out.sort_values(["_all", "_order", "rule"], kind="stable")
    return out.drop(columns=["_all", "_order"]).reset_index(drop=True)


#: an idle gap longer than this (seconds) ends a part run in one go
PART_GAP_S = 600.0


def parts_run_in_one_go(jobs: pd.DataFrame, gap_s: float = PART_GAP_S) -> pd.DataFrame:
    """The jobs' time line cut where nothing ran for more than ``gap_s`` seconds: per part its
    first start and last end (UTC), jobs, span, serial wall and CPU seconds, and
    ``jobs_running`` = serial wall seconds / span (2.0: two jobs at all times)."""
    timeline = jobs.assign(start=jobs["end"] - jobs["wall_s"]).sort_values("start")
    part = (timeline["start"] > timeline["end"].cummax().shift() + gap_s).cumsum()
    parts = timeline.groupby(part.to_numpy()).agg(
        start=("start", "min"),
        end=("end", "max"),
        jobs=("wall_s", "size"),
        wall_s=("wall_s", "sum"),
        cpu_s=("cpu_s", "sum"),
    )
    parts["span_s"] = parts["end"] - parts["start"]
    parts["jobs_running"] = (parts["wall_s"] / parts["span_s"].where(parts["span_s"] > 0)).round(2)
    for column in ("start", "end"):
        parts[column] = pd.to_datetime(parts[column], unit="s").dt.strftime("%Y-%m-%d %H:%M")
    parts[["span_s", "wall_s", "cpu_s"]] = parts[["span_s", "wall_s", "cpu_s"]].round(1)
    columns = ["start", "end", "jobs", "span_s", "wall_s", "cpu_s", "jobs_running"]
    return parts[columns].reset_index(drop=True)


def write_timings(folder: str | Path, csv: str | Path, md: str | Path) -> pd.DataFrame:
    """The per-rule table (csv and md) with, in the md, the run's parts run in one go and its
    total CPU hours."""
    jobs = read_benchmarks(folder)
    table, run = timings_table(jobs)
    title = (
        f"Timings of the last run ({folder}): {run['jobs']} jobs; from the first job's start "
        f"to the last one's end {run['span_s']} s ({run['span_s'] / 3600:.2f} h), on average "
        f"{run['busy_cores']} cores busy (CPU seconds / span). wall_s sums the jobs' wall "
        "times (serial); cpu_per_wall > 1: a job used several cores"
    )
    parts = parts_run_in_one_go(jobs)
    cpu_h = float(jobs["cpu_s"].sum()) / 3600
    after = (
        f"## Parts run in one go\n\n{cpu_h:.2f} CPU hours in all. A part ends where no job ran"
        f" for {PART_GAP_S:.0f} s; jobs_running = the part's serial wall seconds / its span"
        " (2.0 keeps 2 cores busy with single-thread jobs; a 2-thread job counts once).\n\n"
        + parts.to_markdown(index=False)
        + "\n"
    )
    tables.write_table(table, csv, md, measured=MEASURED, title=title, after=after)
    return table
