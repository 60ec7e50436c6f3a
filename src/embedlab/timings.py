"""Where a run's time went: Snakemake's per-job benchmark files summed per paper and rule.

Every rule writes ``logs/benchmarks/<rule>/<its log path>.tsv`` (Snakemake's ``benchmark:``
directive: wall seconds ``s``, ``cpu_time``, ``max_rss`` in MB) beside its log
``logs/<its log path>.log``. A job's CPU seconds are the last line of its log where the step
runner wrote it (:func:`embedlab.steps.cpu_line`, getrusage of the whole process): Snakemake
samples ``cpu_time`` every 30 s after a job's first 15 s and keeps the last sample, so it
misses up to 30 s of every longer job; its ``cpu_time`` counts where a log has no such line
(``cpu_from``). :func:`timings_table` sums them: per rule and per paper the job count, wall
seconds (the serial sum), CPU seconds and the largest resident memory; and for the whole
run its span (first job start to last job end, start = file time - wall seconds) and the
average number of busy cores, CPU seconds / span.

A run resumed over several sittings (a long reproduction, target by target) has idle gaps
between them: :func:`parts_run_in_one_go` splits the jobs where no job ran for ``gap_s``
seconds and gives each part its span and its average number of jobs running (serial wall
seconds / span), so that "both cores busy" can be read per part.

The run's critical path (:func:`run_critical_path`) is the longest chain of dependent jobs,
each weighted by its own seconds (:func:`own_seconds`: its wall seconds, or its CPU seconds
where other load on the host slowed it below one busy core): the least wall time that more
cores could reach.
The dependencies are Snakemake's, read from its dry run of the run's config files
(:func:`parse_dry_run`, which says why that output); :func:`critical_path` is the computation
alone, on any job durations and (before, after) pairs.
"""

from __future__ import annotations

import graphlib
import heapq
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from embedlab import tables
from embedlab.steps import CPU_LINE

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


#: the step runner's last log line (embedlab.steps.cpu_line): its CPU seconds
_CPU_LINE = re.compile(re.escape(CPU_LINE) + r" ([0-9.]+) \(user ")


def logged_cpu(log: Path) -> float | None:
    """The CPU seconds the step runner wrote last in job log ``log``; None where the log or
    the line is missing (a job of older code, or one that did not end well)."""
    try:
        found = _CPU_LINE.findall(log.read_text(errors="replace"))
    except OSError:
        return None
    return float(found[-1]) if found else None


def job_log(benchmarks: str | Path, path: str | Path) -> Path | None:
    """The log of the job whose benchmark file is ``path`` under the benchmarks folder
    ``benchmarks`` (``logs/benchmarks/<rule>/<p>.tsv`` -> ``logs/<p>.log``: every rule's
    benchmark sits at its log's path); None for a file directly in a rule's folder."""
    rule, *rest = Path(path).relative_to(benchmarks).parts
    return Path(benchmarks).parent.joinpath(*rest).with_suffix(".log") if rest else None


def read_benchmark(path: str | Path, log: str | Path | None = None) -> dict:
    """One job's benchmark file (its last line, the last repeat): wall and CPU seconds, max RSS
    (MB), its end (the file's time) and where its CPU seconds come from (``cpu_from``: ``log``,
    the step runner's line in the job's log ``log``, or ``snakemake``, the benchmark's sampled
    ``cpu_time``, where no log is given or it lacks the line)."""
    data = pd.read_csv(path, sep="\t")
    if data.empty or not {"s", "cpu_time", "max_rss"} <= set(data.columns):
        raise ValueError(f"{path}: not a Snakemake benchmark file (columns {list(data)})")
    last = data.iloc[-1]
    logged = logged_cpu(Path(log)) if log is not None else None
    return {
        "wall_s": float(last["s"]),
        "cpu_s": float(pd.to_numeric(last["cpu_time"], errors="coerce"))
        if logged is None
        else logged,
        "cpu_from": "snakemake" if logged is None else "log",
        "max_rss_mb": float(pd.to_numeric(last["max_rss"], errors="coerce")),
        "end": Path(path).stat().st_mtime,
    }


def read_benchmarks(folder: str | Path) -> pd.DataFrame:
    """One row per benchmark file: rule, paper, wall and CPU seconds (:func:`read_benchmark`
    with the job's log, :func:`job_log`), max RSS, end time, the file's path (under
    ``folder`` as given) and where its CPU seconds come from."""
    folder = Path(folder)
    rows = []
    for path in sorted(folder.rglob("*.tsv")):
        rule = path.relative_to(folder).parts[0]
        job = read_benchmark(path, job_log(folder, path))
        rows.append({"rule": rule, "paper": paper_of(rule), **job, "path": str(path)})
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


#: a job block of Snakemake's dry run: its first line (``rule name:``, ``localrule name:``)
_JOB = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):$")
#: the lines of a job block that the job graph needs (``    key: value``)
_FIELD = re.compile(r"^    (jobid|input|output|log|benchmark): (.*)$")
#: the ", " between two files of a list; a file's note, "path (pipe, send to storage)", is one
_BETWEEN_FILES = re.compile(r", (?![^()]*\))")
_FILE_NOTE = re.compile(r" \([^()]*\)$")


def parse_dry_run(text: str) -> pd.DataFrame:
    """The jobs of Snakemake's ``--dry-run --forceall`` output: one row per job with its
    ``jobid``, ``rule``, ``input``, ``output`` and ``log`` (lists of paths) and ``benchmark``
    (a path; NA for a rule without one: the target rules, which run nothing).

    Why the dry run: it is the one output of Snakemake 9 that gives, per job of the DAG of the
    config files and targets it is given, both its files (hence its dependencies: a job waits
    for the jobs whose outputs are its inputs) and its benchmark file, from the DAG itself.
    ``--forceall`` lists every job, not only those left to run. ``--detailed-summary`` names no
    benchmark file, and its log and input columns come from the metadata a job records when it
    runs ("-" for a job without); ``--d3dag`` names no file and leaves out the dependencies on
    finished jobs; ``--dag`` labels a job with only some of its wildcards. The dry run's text
    is meant for people, so this parser is strict: only the blocks' ``    key: value`` lines
    are read, and a text with no job block raises ValueError (e.g. ``--quiet rules``, or a
    Snakemake error instead of a dry run)."""
    jobs, job = [], None
    for line in text.splitlines():
        if match := _JOB.match(line):
            job = {"rule": match[1], "input": [], "output": [], "log": [], "benchmark": None}
            jobs.append(job)
        elif job is not None and (match := _FIELD.match(line)):
            key, value = match[1], match[2].strip()
            if key == "jobid":
                job[key] = value
            elif key == "benchmark":
                job[key] = _FILE_NOTE.sub("", value)
            else:
                job[key] = [_FILE_NOTE.sub("", f) for f in _BETWEEN_FILES.split(value) if f]
        elif not line.startswith("    "):
            job = None
    if not jobs:
        raise ValueError(
            "no job in the text: expected Snakemake's --dry-run --forceall output (without "
            "--quiet rules); it starts: " + repr(text[:300])
        )
    missing_id = [j["rule"] for j in jobs if "jobid" not in j]
    if missing_id:
        raise ValueError(f"a job block without its jobid line (rules {missing_id[:5]})")
    return pd.DataFrame(jobs, columns=["jobid", "rule", "input", "output", "log", "benchmark"])


def job_edges(jobs: pd.DataFrame) -> list[tuple[str, str]]:
    """(before, after) jobids of :func:`parse_dry_run`'s jobs: ``after`` reads an output of
    ``before``. A job without a benchmark (a target rule) is left out and its waits passed on:
    each job before it comes before each job after it."""
    made_by = {f: job.jobid for job in jobs.itertuples() for f in job.output}
    waits = {
        job.jobid: {made_by[f] for f in job.input if f in made_by} for job in jobs.itertuples()
    }
    for gone in jobs.loc[jobs["benchmark"].isna(), "jobid"]:
        before = waits.pop(gone)
        for job_waits in waits.values():
            if gone in job_waits:
                job_waits.discard(gone)
                job_waits.update(before)
    return sorted((before, after) for after, befores in waits.items() for before in befores)


def _waits_and_order(
    jobs: Iterable[str], edges: Iterable[tuple[str, str]]
) -> tuple[dict[str, set[str]], list[str]]:
    """(job -> the jobs it waits for, the jobs in an order where each comes after those);
    ValueError on an edge naming a job not in ``jobs`` and on a cycle."""
    waits: dict[str, set[str]] = {job: set() for job in jobs}
    for before, after in edges:
        if before not in waits or after not in waits:
            raise ValueError(f"edge {before!r} -> {after!r}: a job without a duration")
        waits[after].add(before)
    try:
        order = list(graphlib.TopologicalSorter(waits).static_order())
    except graphlib.CycleError as exc:
        raise ValueError(f"the jobs' dependencies have a cycle: {exc.args[1]}") from None
    return waits, order


def critical_path(
    durations: Mapping[str, float], edges: Iterable[tuple[str, str]]
) -> tuple[float, list[str]]:
    """(seconds, jobs): the longest chain of dependent jobs, weighted by each job's seconds in
    ``durations`` (NaN: not measured, counts 0 s), and its jobs first to last. ``edges`` are
    (before, after) pairs of jobs of ``durations``: ``after`` starts when ``before`` ends. No
    schedule on any number of cores ends sooner. Ties go to the job first in sorted order.
    Raises ValueError on an edge naming a job without a duration, and on a cycle."""
    waits, order = _waits_and_order(durations, edges)
    longest: dict[str, float] = {}  # job -> the longest chain ending with it, in seconds
    previous: dict[str, str | None] = {}
    for job in order:
        before = max(sorted(waits[job]), key=longest.__getitem__, default=None)
        seconds = float(durations[job])
        longest[job] = (0.0 if math.isnan(seconds) else seconds) + (
            longest[before] if before is not None else 0.0
        )
        previous[job] = before
    last = max(sorted(longest), key=longest.__getitem__, default=None)
    path = []
    while last is not None:
        path.append(last)
        last = previous[last]
    return (longest[path[0]] if path else 0.0), path[::-1]


def list_schedule(
    jobs: Mapping[str, tuple[float, int]], edges: Iterable[tuple[str, str]], cores: int
) -> float:
    """The wall seconds of running ``jobs`` (job -> (seconds, cores it holds), NaN seconds
    count 0) on ``cores`` cores, each job started as soon as the jobs before it (``edges``:
    (before, after) pairs) have ended and enough cores are free; of the jobs ready, the one
    with the longest chain of seconds still ahead of it (itself included) starts first (a
    job holding more cores than there are holds them all). A model of a run, not of
    Snakemake's scheduler: no start-up, no memory limit, each job as fast as measured.
    Raises ValueError as :func:`critical_path` does."""
    seconds = {job: (0.0 if math.isnan(s) else float(s)) for job, (s, _) in jobs.items()}
    held = {job: max(1, min(int(k), cores)) for job, (_, k) in jobs.items()}
    waits, order = _waits_and_order(jobs, edges)
    after: dict[str, list[str]] = {job: [] for job in jobs}
    for job, befores in waits.items():
        for before in befores:
            after[before].append(job)
    ahead: dict[str, float] = {}  # job -> the longest chain from its start, in seconds
    for job in reversed(order):
        ahead[job] = seconds[job] + max((ahead[j] for j in after[job]), default=0.0)
    left = {job: len(befores) for job, befores in waits.items()}
    ready = [job for job in order if left[job] == 0]
    running: list[tuple[float, str]] = []
    now, free = 0.0, cores
    while ready or running:
        ready.sort(key=lambda j: (-ahead[j], j))
        for job in list(ready):
            if held[job] <= free:
                free -= held[job]
                heapq.heappush(running, (now + seconds[job], job))
                ready.remove(job)
        now, job = heapq.heappop(running)
        free += held[job]
        for later in after[job]:
            left[later] -= 1
            if left[later] == 0:
                ready.append(later)
    return now


def own_seconds(job: Mapping) -> float:
    """A measured job's own seconds for :func:`critical_path` (``job``: a
    :func:`read_benchmark` record): its wall seconds, or its CPU seconds where fewer (a job
    that other load on the host kept below one busy core, as a niced run beside other work,
    counts the time it worked; a job that kept a core or more busy counts its wall time).
    Only the runner's logged CPU seconds count: Snakemake's sample can miss the end of a job,
    so a job without the runner's line counts its wall seconds."""
    if job["cpu_from"] != "log":
        return job["wall_s"]
    return min(job["wall_s"], job["cpu_s"])


def as_scheduled(cpu_s: float, wall_s: float, cores: int) -> tuple[float, int]:
    """(seconds, cores held) of a measured job for :func:`list_schedule`: it holds the cores
    its CPU / wall seconds round to (1 to ``cores``) for its CPU seconds over the cores it
    kept busy (its wall seconds where it ran alone; a job that others slowed down as if they
    had not). NaN CPU seconds (not measured) stay NaN: 0 s in the schedule."""
    busy = cpu_s / wall_s if wall_s > 0 else 1.0
    if math.isnan(busy):
        return cpu_s, 1
    held = int(min(max(round(busy), 1), cores))
    return cpu_s / min(max(busy, 1.0), held), held


def benchmark_name(benchmark: str, rule: str) -> str:
    """A job's name in the timings: its benchmark path after ``<rule>/``, without ``.tsv``
    (``logs/benchmarks/snest_embed/snest/school/sne-2.tsv`` -> ``snest/school/sne-2``); the
    whole path, without ``.tsv``, where it has no ``<rule>/`` folder."""
    parts = Path(benchmark).with_suffix("").parts
    return "/".join(parts[parts.index(rule) + 1 :] if rule in parts else parts)


def run_critical_path(
    dry_run: str,
    root: str | Path = ".",
    cores: int = 2,
    measured: Mapping[Path, Mapping] | None = None,
) -> tuple[pd.DataFrame, dict]:
    """The critical path of the last run of the DAG in ``dry_run`` (Snakemake's ``--dry-run
    --forceall`` text, :func:`parse_dry_run`), each job weighted by its :func:`own_seconds`
    (from its benchmark file, paths relative to ``root``, the workflow's directory, and its
    CPU seconds read with its log), and the wall time of the same jobs run in one sitting on
    ``cores`` cores (:func:`list_schedule` of each job :func:`as_scheduled`). ``measured``:
    the :func:`read_benchmark` records already read, by resolved benchmark path (a file not
    among them is not measured); without it, each job's file is read here.

    Returns (the path's jobs in order: ``step``, ``rule``, ``job``, ``wall_s``, ``cpu_s``,
    ``seconds`` (its own), ``cumulative_s``; a record: ``total_s``, ``jobs`` (of the DAG,
    with a benchmark), ``missing`` (the names of those without a benchmark file: not run, or
    their file deleted; they count 0 s, so the path is then a lower bound),
    ``missing_on_path``, ``cores``,
    ``one_sitting_s``). No benchmark file at all raises ValueError: the DAG is not the one
    that ran."""
    jobs = parse_dry_run(dry_run)
    edges = job_edges(jobs)
    timed = jobs[jobs["benchmark"].notna()].set_index("jobid")
    wall, cpu, own, scheduled, names = {}, {}, {}, {}, {}
    for job in timed.itertuples():
        found = Path(root, job.benchmark)
        if measured is not None:
            record = measured.get(found.resolve())
        elif found.is_file():
            record = read_benchmark(found, Path(root, job.log[0]) if job.log else None)
        else:
            record = None
        wall[job.Index] = record["wall_s"] if record else math.nan
        cpu[job.Index] = record["cpu_s"] if record else math.nan
        own[job.Index] = own_seconds(record) if record else math.nan
        scheduled[job.Index] = as_scheduled(cpu[job.Index], wall[job.Index], cores)
        names[job.Index] = benchmark_name(job.benchmark, job.rule)
    missing = sorted(
        f"{timed.at[job, 'rule']}: {names[job]}" for job, s in wall.items() if math.isnan(s)
    )
    if len(missing) == len(wall):
        raise ValueError(
            f"none of the {len(wall)} jobs of the dry run has its benchmark file under {root} "
            "(another configuration, or not run yet)"
        )
    total, path = critical_path(own, edges)
    table = pd.DataFrame(
        {
            "step": range(1, len(path) + 1),
            "rule": [timed.at[job, "rule"] for job in path],
            "job": [names[job] for job in path],
            "wall_s": [round(wall[job], 1) for job in path],
            "cpu_s": [round(cpu[job], 1) for job in path],
            "seconds": [round(own[job], 1) for job in path],
        }
    )
    table["cumulative_s"] = table["seconds"].fillna(0.0).cumsum().round(1)
    record = {
        "total_s": round(total, 1),
        "jobs": len(wall),
        "missing": missing,
        "missing_on_path": int(table["wall_s"].isna().sum()),
        "cores": cores,
        "one_sitting_s": round(list_schedule(scheduled, edges, cores), 1),
    }
    return table, record


#: the critical path's columns: all depend on the measured times (which jobs form the longest
#: chain does too), none is a result to compare between runs
CRITICAL_PATH_MEASURED = [
    "step", "rule", "job", "wall_s", "cpu_s", "seconds", "cumulative_s"
]  # fmt: skip


def critical_path_markdown(table: pd.DataFrame, record: dict) -> str:
    """The Markdown section of the critical path (:func:`run_critical_path`)."""
    total = record["total_s"]
    text = (
        f"## Critical path\n\nThe longest chain of dependent jobs, by each job's measured "
        f"seconds: **{total} s ({total / 60:.1f} min)**, {len(table)} of the DAG's "
        f"{record['jobs']} jobs. No number of cores runs the DAG in less wall time (with each "
        "job as fast as measured); the dependencies are Snakemake's, from its dry run of the "
        "configuration. A job's seconds are its wall time, or its CPU time where fewer: a job "
        "that other load on the host kept below one busy core counts the time it worked.\n\n"
    )
    sitting = record["one_sitting_s"]
    text += (
        f"The same jobs run in one sitting on {record['cores']} "
        f"core{'s' if record['cores'] != 1 else ''}: **{sitting} s "
        f"({sitting / 3600:.2f} h)**, a list schedule (the longest chain still ahead first; "
        "each job as fast as measured, holding the cores its CPU / wall seconds show it kept "
        "busy; start-up and Snakemake's own time left out): the wall time of this run made "
        "without breaks, where it was resumed over several sittings.\n\n"
    )
    missing = record["missing"]
    if missing:
        shown = "; ".join(missing[:5]) + ("; ..." if len(missing) > 5 else "")
        text += (
            f"**{len(missing)} of the DAG's jobs without a benchmark file** (not run, or their "
            f"file deleted), {record['missing_on_path']} of them on the path; each counts 0 s, "
            f"so the critical path may be longer: {shown}\n\n"
        )
    shown = table.astype(object).where(table.notna(), "missing")
    return text + shown.to_markdown(index=False, floatfmt="g") + "\n"


#: the section of a timings table written without a dry run (the workflow's own timings job)
NO_CRITICAL_PATH = (
    '## Critical path\n\nNot computed here: `make timings CONFIG="<the run\'s config files>"` '
    "adds it (it asks Snakemake for the jobs' dependencies, from a dry run of those config "
    "files; a job of the run does not know the run's config files, targets and --config "
    "values, and its own benchmark is written after it ends).\n"
)


def jobs_of_dag(jobs: pd.DataFrame, dry_run: str, root: str | Path = ".") -> pd.DataFrame:
    """The rows of :func:`read_benchmarks` whose file is the benchmark of a job of the DAG in
    ``dry_run`` (:func:`parse_dry_run`; its paths relative to ``root``, the workflow's
    directory). A folder of benchmark files also holds those of jobs outside that DAG: another
    configuration's (the quick run writes the same folders), a job since removed from the
    workflow; they are not this run's time. Raises ValueError when no file is of the DAG."""
    dag = parse_dry_run(dry_run)["benchmark"].dropna()
    planned = {Path(root, b).resolve() for b in dag}
    inside = jobs[[Path(p).resolve() in planned for p in jobs["path"]]]
    if inside.empty:
        raise ValueError(
            f"none of the {len(dag)} jobs of the dry run has one of the {len(jobs)} benchmark "
            "files (another configuration, or not run yet)"
        )
    return inside


def write_timings(
    folder: str | Path,
    csv: str | Path,
    md: str | Path,
    dry_run: str | Path | None = None,
    critical_path_csv: str | Path | None = None,
    cores: int = 2,
) -> pd.DataFrame:
    """The per-rule table (csv and md) with, in the md, the run's parts run in one go, its
    total CPU hours and its critical path (:func:`run_critical_path` of the file ``dry_run``,
    Snakemake's ``--dry-run --forceall`` output for the run's config files, whose paths are
    relative to the working directory; without it, a line saying how to get it). The critical
    path's jobs go to ``critical_path_csv`` when given; ``cores``: of the one-sitting
    schedule beside it. With ``dry_run``, every sum is over
    the DAG's jobs only (:func:`jobs_of_dag`) and the title counts the files of other jobs
    left out; without it, over every file in ``folder``."""
    jobs = read_benchmarks(folder)
    dag = None if dry_run is None else Path(dry_run).read_text()
    scope = ""
    if dag is not None:
        found = len(jobs)
        jobs = jobs_of_dag(jobs, dag)
        scope = (
            f" (the jobs of the configuration's DAG; {found - len(jobs)} benchmark files of "
            "other jobs, another configuration's or a removed rule's, left out)"
        )
    table, run = timings_table(jobs)
    title = (
        f"Timings of the last run ({folder}){scope}: {run['jobs']} jobs; from the first job's "
        f"start to the last one's end {run['span_s']} s ({run['span_s'] / 3600:.2f} h), on "
        f"average {run['busy_cores']} cores busy (CPU seconds / span). wall_s sums the jobs' "
        "wall times (serial); cpu_per_wall > 1: a job used several cores. cpu_s: each job's "
        "CPU seconds as its step runner logged them"
    )
    sampled = int((jobs["cpu_from"] == "snakemake").sum())
    if sampled:
        title += (
            f"; {sampled} jobs without that line count Snakemake's sampled cpu_time, which "
            "misses up to 30 s of a job longer than 15 s"
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
    if dag is None:
        after += "\n" + NO_CRITICAL_PATH
    else:
        records = {Path(row["path"]).resolve(): row for row in jobs.to_dict("records")}
        path, record = run_critical_path(dag, cores=cores, measured=records)
        after += "\n" + critical_path_markdown(path, record)
        if critical_path_csv is not None:
            tables.write_csv(path, critical_path_csv, measured=CRITICAL_PATH_MEASURED)
    tables.write_table(table, csv, md, measured=MEASURED, title=title, after=after)
    return table
