"""What a configuration's whole run costs, from the jobs already measured in other runs.

A long reproduction is measured over several sittings and clones: this script takes the DAG of
a configuration (Snakemake's ``--dry-run --forceall`` output of its config files) and, for each
job, its benchmark file in the first of the ``--runs`` folders (workflow directories) that has
it, then prints per paper the jobs, how many are measured, their CPU seconds (the step runner's
line in the job's log where there is one, else Snakemake's sampled ``cpu_time``, which misses
up to 30 s of a job longer than 15 s: :mod:`embedlab.timings`), the jobs not measured by rule,
the longest chain of dependent jobs weighted by each job's own seconds (the least wall time
of the run on any number of cores: :func:`embedlab.timings.own_seconds`), and the wall time of a
list schedule of the DAG on ``--cores`` cores (:func:`embedlab.timings.list_schedule` of
each job :func:`embedlab.timings.as_scheduled`): what a run of the configuration in one
sitting would take, start-up and Snakemake's own time left out.

    snakemake --dry-run --forceall --configfile config/config.yaml > dag.txt
    python benchmarks/estimate_dag_cpu.py --dry-run dag.txt --runs ../run2 ../run

A job measured under other code or settings than the DAG's counts as it was measured: the
estimate is only as current as the runs it reads (each row says which run it came from).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd

from embedlab.timings import (
    as_scheduled,
    critical_path,
    job_edges,
    list_schedule,
    own_seconds,
    paper_of,
    parse_dry_run,
    read_benchmark,
)


def measured_jobs(dag: pd.DataFrame, runs: list[Path]) -> pd.DataFrame:
    """One row per job of the DAG (:func:`parse_dry_run`) with a benchmark: jobid, rule,
    paper, benchmark, run (the folder it was measured in; None), cpu_s, wall_s, cpu_from
    (``log`` or ``snakemake``: :func:`read_benchmark` with the job's log)."""
    rows = []
    for job in dag[dag["benchmark"].notna()].itertuples():
        row = {"jobid": job.jobid, "rule": job.rule, "paper": paper_of(job.rule),
               "benchmark": job.benchmark, "run": None, "cpu_s": math.nan,
               "wall_s": math.nan, "cpu_from": None}  # fmt: skip
        for run in runs:
            path = run / job.benchmark
            if path.is_file():
                measured = read_benchmark(path, run / job.log[0] if job.log else None)
                row.update(run=str(run), cpu_s=measured["cpu_s"], wall_s=measured["wall_s"],
                           cpu_from=measured["cpu_from"])  # fmt: skip
                break
        rows.append(row)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dry-run", type=Path, required=True, help="--dry-run --forceall output")
    p.add_argument("--runs", type=Path, nargs="+", required=True, help="workflow folders")
    p.add_argument("--cores", type=int, default=2, help="cores of the list schedule")
    args = p.parse_args(argv)
    dag = parse_dry_run(args.dry_run.read_text())
    jobs = measured_jobs(dag, args.runs)
    per_paper = jobs.groupby("paper").agg(
        jobs=("rule", "size"),
        measured=("cpu_s", "count"),
        cpu_s=("cpu_s", "sum"),
        sampled=("cpu_from", lambda c: int((c == "snakemake").sum())),
    )
    per_paper.loc["all"] = per_paper.sum()
    pd.set_option("display.width", 200)
    print(per_paper.round(1).to_string())
    total = per_paper.at["all", "cpu_s"]
    print(f"measured: {total:.0f} CPU s ({total / 3600:.2f} CPU h) of "
          f"{int(per_paper.at['all', 'measured'])} of {len(jobs)} jobs")  # fmt: skip
    print("by run:", jobs.groupby("run")["cpu_s"].agg(["count", "sum"]).round(1).to_dict("index"))
    missing = jobs.loc[jobs["cpu_s"].isna(), "rule"].value_counts().sort_index()
    if len(missing):
        print("not measured:", ", ".join(f"{rule} {n}" for rule, n in missing.items()))
    own = {job.jobid: own_seconds(job._asdict()) for job in jobs.itertuples()}
    edges = job_edges(dag)
    longest, path = critical_path(own, edges)
    print(f"critical path by the jobs' own seconds (jobs not measured count 0): {longest:.0f} s")
    for job in jobs.set_index("jobid").loc[path].itertuples():
        print(f"  {job.rule} {job.benchmark} {own[job.Index]:.0f}")
    scheduled = {
        job.jobid: as_scheduled(job.cpu_s, job.wall_s, args.cores) for job in jobs.itertuples()
    }
    wall = list_schedule(scheduled, edges, args.cores)
    print(f"list schedule on {args.cores} cores (jobs not measured count 0): {wall:.0f} s "
          f"({wall / 3600:.2f} h)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
