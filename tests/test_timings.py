"""The timings table: benchmark files summed per rule and paper; the run's span and cores."""

from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd
import pytest

from embedlab import cli, timings

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _bench(folder, rule, name, wall, cpu, rss, end):
    path = folder / rule / f"{name}.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{wall}\t0:00:01\t{rss}\t1\t1\t1\t0\t0\t50\t{cpu}\n")
    os.utime(path, (end, end))


def test_sums_per_rule_and_paper_and_the_run_span(tmp_path):
    folder = tmp_path / "benchmarks"
    _bench(folder, "snest_embed", "snest/school/tsne-2", 100.0, 190.0, 300.0, end=1100)
    _bench(folder, "snest_embed", "snest/school/sne-2", 50.0, 50.0, 500.0, end=1100)
    _bench(folder, "tste_table", "tste/table_music", 2.0, 1.0, 80.0, end=1200)
    _bench(folder, "build_dataset", "datasets/school", 10.0, 9.0, 60.0, end=990)
    table = timings.write_timings(folder, tmp_path / "t.csv", tmp_path / "t.md")
    rows = table.set_index(["paper", "rule"])
    assert rows.loc[("SNEST", "snest_embed"), "jobs"] == 2
    assert rows.loc[("SNEST", "snest_embed"), "wall_s"] == 150.0
    assert rows.loc[("SNEST", "snest_embed"), "cpu_s"] == 240.0
    assert rows.loc[("SNEST", "snest_embed"), "max_rss_mb"] == 500.0
    assert rows.loc[("SNEST", "snest_embed"), "cpu_per_wall"] == 1.6
    assert rows.loc[("datasets, summary", "(all)"), "jobs"] == 1
    assert rows.loc[("all", "(all)"), "cpu_s"] == 250.0 and rows.loc[("all", "(all)"), "jobs"] == 4
    # span: from 980 (the dataset job's start) to 1200; 250 CPU s / 220 s
    text = (tmp_path / "t.md").read_text()
    assert "220.0 s" in text and "1.14 cores busy" in text
    assert pd.read_csv(tmp_path / "t.csv").shape == table.shape


def test_no_or_bad_benchmark_files_fail_with_the_path(tmp_path):
    with pytest.raises(ValueError, match="no benchmark files"):
        timings.read_benchmarks(tmp_path)
    bad = tmp_path / "rule_x" / "a.tsv"
    bad.parent.mkdir()
    bad.write_text("x\ty\n1\t2\n")
    with pytest.raises(ValueError, match="a.tsv: not a Snakemake benchmark file"):
        timings.read_benchmarks(tmp_path)


def test_a_resumed_run_is_cut_into_parts_run_in_one_go(tmp_path):
    """Jobs 10 s apart belong to one part; an idle hour starts another. jobs_running: the
    part's serial wall seconds over its span."""
    folder = tmp_path / "benchmarks"
    _bench(folder, "snest_embed", "a", 100.0, 100.0, 1.0, end=1100)  # 1000-1100
    _bench(folder, "snest_embed", "b", 100.0, 100.0, 1.0, end=1100)  # 1000-1100, beside a
    _bench(folder, "snest_table", "c", 10.0, 10.0, 1.0, end=1120)  # 1110-1120
    _bench(folder, "ee_sweep", "d", 50.0, 40.0, 1.0, end=5050)  # an hour later
    parts = timings.parts_run_in_one_go(timings.read_benchmarks(folder))
    assert parts["jobs"].tolist() == [3, 1]
    assert parts["span_s"].tolist() == [120.0, 50.0]
    assert parts["jobs_running"].tolist() == [round(210 / 120, 2), 1.0]
    assert parts["cpu_s"].tolist() == [210.0, 40.0]
    timings.write_timings(folder, tmp_path / "t.csv", tmp_path / "t.md")
    text = (tmp_path / "t.md").read_text()
    assert "## Parts run in one go" in text and "0.07 CPU hours in all" in text


# ---- the critical path ------------------------------------------------------------------------


def test_the_critical_path_is_the_heaviest_chain_not_the_one_with_most_jobs():
    """A diamond a -> (b, c) -> d beside a chain of five 5-s jobs: the chain has the most jobs
    (25 s), the diamond's a -> b -> d the most seconds (3 + 30 + 2)."""
    durations = {"a": 3.0, "b": 30.0, "c": 1.0, "d": 2.0} | {f"e{i}": 5.0 for i in range(5)}
    edges = [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")]
    edges += [(f"e{i}", f"e{i + 1}") for i in range(4)]
    total, path = timings.critical_path(durations, edges)
    assert path == ["a", "b", "d"]
    assert total == 35.0
    # the heavier branch is not the first one: c outweighs b
    total, path = timings.critical_path(durations | {"c": 40.0}, edges)
    assert path == ["a", "c", "d"] and total == 45.0


def test_an_unmeasured_job_counts_zero_and_a_cycle_or_unknown_job_fails():
    total, path = timings.critical_path({"a": 1.0, "b": float("nan"), "c": 2.0}, [("a", "b")])
    assert (total, path) == (2.0, ["c"])
    total, path = timings.critical_path({"a": 1.0, "b": float("nan")}, [("a", "b")])
    assert total == 1.0 and path[0] == "a"
    with pytest.raises(ValueError, match="cycle"):
        timings.critical_path({"a": 1.0, "b": 1.0}, [("a", "b"), ("b", "a")])
    with pytest.raises(ValueError, match="without a duration"):
        timings.critical_path({"a": 1.0}, [("a", "z")])


def test_the_list_schedule_starts_the_longest_chain_first_and_waits_for_free_cores():
    """p1, p2 (4 s each) and q (1 s) -> r (6 s) on 2 cores: q's chain (7 s) goes first, so r
    runs beside p1 and p2 and the run ends at 8 s; p1 and p2 first would end at 11. A job
    holding 2 cores waits for both."""
    jobs = {"p1": (4.0, 1), "p2": (4.0, 1), "q": (1.0, 1), "r": (6.0, 1)}
    assert timings.list_schedule(jobs, [("q", "r")], cores=2) == 8.0
    assert timings.list_schedule(jobs, [("q", "r")], cores=1) == 15.0
    # w holds both cores: it starts when p1 and p2 have ended, whatever its chain
    wide = {"p1": (4.0, 1), "p2": (5.0, 1), "w": (3.0, 2)}
    assert timings.list_schedule(wide, [("p1", "w")], cores=2) == 8.0
    assert timings.list_schedule(wide | {"w": (3.0, 4)}, [("p1", "w")], cores=2) == 8.0
    # an unmeasured job counts 0 s; the same errors as the critical path
    assert timings.list_schedule({"a": (float("nan"), 1), "b": (2.0, 1)}, [("a", "b")], 2) == 2.0
    with pytest.raises(ValueError, match="cycle"):
        timings.list_schedule({"a": (1.0, 1), "b": (1.0, 1)}, [("a", "b"), ("b", "a")], 2)
    assert timings.list_schedule({}, [], cores=2) == 0.0


def test_a_job_holds_the_cores_its_cpu_per_wall_shows():
    """2 threads kept busy: 2 cores for its wall time; one slowed down by other jobs: 1 core
    for its CPU seconds; 1.6 of 2 threads: 2 cores for its wall time; not measured: 0 s."""
    assert timings.as_scheduled(200.0, 100.0, 2) == (100.0, 2)
    assert timings.as_scheduled(30.0, 100.0, 2) == (30.0, 1)
    assert timings.as_scheduled(160.0, 100.0, 2) == (100.0, 2)
    assert timings.as_scheduled(400.0, 100.0, 2) == (200.0, 2)
    # the critical path's seconds: the wall time, or the CPU time where fewer
    logged = {"wall_s": 100.0, "cpu_from": "log"}
    assert timings.own_seconds({**logged, "cpu_s": 200.0}) == 100.0
    assert timings.own_seconds({**logged, "cpu_s": 30.0}) == 30.0
    # Snakemake's sample may miss the end of the job: its wall time counts
    assert timings.own_seconds({**logged, "cpu_s": 30.0, "cpu_from": "snakemake"}) == 100.0
    seconds, held = timings.as_scheduled(float("nan"), float("nan"), 2)
    assert held == 1 and timings.list_schedule({"a": (seconds, held)}, [], 2) == 0.0


#: Snakemake 9's ``--dry-run --forceall`` text, cut down: a header, a job table, job blocks (a
#: localrule target without log or benchmark, a file with a note) and the closing lines
DRY_RUN = """\
Building DAG of jobs...
Job stats:
job      count
-----  -------
a            1
b            1
all          1
total        3

[Fri Nov 27 13:02:52 2026]
rule a:
    output: out/a.txt
    log: logs/a.log
    jobid: 2
    benchmark: logs/benchmarks/a/a.tsv
    reason: Forced execution
    resources: tmpdir=/tmp
[Fri Nov 27 13:02:52 2026]
rule b:
    input: out/a.txt, resources/raw.txt (retrieve from storage)
    output: out/b/1.txt, out/b/1.npz
    log: logs/b/1.log
    jobid: 1
    benchmark: logs/benchmarks/b/b/1.tsv
    reason: Forced execution
    wildcards: x=1
    resources: tmpdir=/tmp
[Fri Nov 27 13:02:52 2026]
localrule all:
    input: out/b/1.txt
    jobid: 0
    reason: Forced execution
    resources: tmpdir=/tmp
Job stats:
job      count
-----  -------
total        3
This was a dry-run (flag -n). The order of jobs does not reflect the order of execution.
"""


def test_the_dry_runs_jobs_and_their_dependencies_are_parsed():
    jobs = timings.parse_dry_run(DRY_RUN).set_index("jobid")
    assert jobs["rule"].to_dict() == {"2": "a", "1": "b", "0": "all"}
    assert jobs.at["1", "input"] == ["out/a.txt", "resources/raw.txt"]
    assert jobs.at["1", "output"] == ["out/b/1.txt", "out/b/1.npz"]
    assert jobs.at["1", "benchmark"] == "logs/benchmarks/b/b/1.tsv"
    assert pd.isna(jobs.at["0", "benchmark"])
    # the target `all` (no benchmark) is left out; b waits for a
    assert timings.job_edges(jobs.reset_index()) == [("2", "1")]
    assert timings.benchmark_name("logs/benchmarks/b/b/1.tsv", "b") == "b/1"
    with pytest.raises(ValueError, match="no job in the text"):
        timings.parse_dry_run("MissingInputException in rule all\n")


def test_a_target_rule_between_jobs_passes_their_order_on():
    text = DRY_RUN.replace("    input: out/a.txt, resources", "    input: out/t.txt, resources")
    text += "localrule t:\n    input: out/a.txt\n    output: out/t.txt\n    jobid: 3\n"
    assert timings.job_edges(timings.parse_dry_run(text)) == [("2", "1")]


#: a tiny workflow: a -> b -> d and a -> c/{1,2} -> d, e beside them, `all` over d and e
SNAKEFILE = """\
rule all:
    input:
        "d.txt",
        "e.txt",
"""
STEPS = {  # rule: (inputs, output, wildcard-free benchmark name)
    "a": ([], "a.txt"),
    "b": (["a.txt"], "b.txt"),
    "c": (["a.txt"], "c/{x}.txt"),
    "d": (["b.txt", "c/1.txt", "c/2.txt"], "d.txt"),
    "e": ([], "e.txt"),
}


def _tiny_workflow(folder):
    text = SNAKEFILE
    for rule, (inputs, output) in STEPS.items():
        name = output.removesuffix(".txt")
        text += f"\n\nrule {rule}:\n"
        text += "    input:\n" + "".join(f'        "{f}",\n' for f in inputs) if inputs else ""
        text += f'    output:\n        "{output}",\n    log:\n        "logs/{name}.log",\n'
        text += f'    benchmark:\n        "logs/benchmarks/{rule}/{name}.tsv"\n'
        text += '    shell:\n        "touch {output} {log}"\n'
    (folder / "Snakefile").write_text(text)


def test_the_critical_path_of_a_run_from_snakemakes_own_dry_run(tmp_path, monkeypatch):
    """Snakemake itself gives the dry run of a tiny workflow; the benchmark files are made by
    hand: a -> c/1 -> d (1 + 10 + 1 s) outweighs a -> b -> d and c/2; e was not run. c/1 ran
    slowed by other load (30 s wall for the 10 CPU s its runner logged): it counts 10 s."""
    _tiny_workflow(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--dry-run", "--forceall", "--cores", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    dry_run = tmp_path / "dry_run.txt"
    dry_run.write_text(proc.stdout + proc.stderr)
    jobs = timings.parse_dry_run(dry_run.read_text())
    assert sorted(jobs["rule"]) == ["a", "all", "b", "c", "c", "d", "e"]
    folder = tmp_path / "logs" / "benchmarks"
    for rule, name, wall, cpu in [("a", "a", 1, 1), ("b", "b", 2, 2), ("c", "c/1", 30, 10),
                                  ("c", "c/2", 3, 3), ("d", "d", 1, 1)]:  # fmt: skip
        _bench(folder, rule, name, wall, cpu, 10.0, end=1000)
    log = tmp_path / "logs" / "c" / "1.log"
    log.parent.mkdir(parents=True)
    log.write_text("x INFO job CPU seconds: 10.00 (user 10.00, system 0.00)\n")
    monkeypatch.chdir(tmp_path)
    table = tmp_path / "results" / "timings"
    argv = ["timings", "--benchmarks", str(folder), "--csv", f"{table}.csv", "--md", f"{table}.md"]
    argv += ["--dry-run", str(dry_run), "--critical-path-csv", str(tmp_path / "path.csv")]
    assert cli.main(argv) == 0
    path = pd.read_csv(tmp_path / "path.csv")
    assert path[["rule", "job"]].values.tolist() == [["a", "a"], ["c", "c/1"], ["d", "d"]]
    assert path["cumulative_s"].tolist() == [1.0, 11.0, 12.0]
    assert path["wall_s"].tolist() == [1.0, 30.0, 1.0] and path["seconds"].tolist()[1] == 10.0
    # in one sitting on 2 cores: c/1 beside b, then c/2: the critical path's 12 s
    md = tmp_path / "results" / "timings.md"
    assert "in one sitting on 2 cores: **12.0 s (0.00 h)**" in md.read_text()
    # on 1 core, every job in turn: 1 + 2 + 10 + 3 + 1 s
    assert cli.main(argv + ["--cores", "1"]) == 0
    assert "in one sitting on 1 core: **17.0 s" in md.read_text()
    text = (tmp_path / "results" / "timings.md").read_text()
    sums = pd.read_csv(f"{table}.csv").set_index(["paper", "rule"])
    assert sums.loc[("all", "(all)"), "jobs"] == 5 and sums.loc[("all", "(all)"), "cpu_s"] == 17
    assert "0 benchmark files of other jobs" in text
    assert "## Critical path" in text and "**12.0 s (0.2 min)**, 3 of the DAG's 6 jobs" in text
    assert "**1 of the DAG's jobs without a benchmark file**" in text
    assert "0 of them on the path" in text
    assert "e: e" in text


def test_without_a_dry_run_the_table_says_how_to_get_the_critical_path(tmp_path):
    folder = tmp_path / "benchmarks"
    _bench(folder, "snest_embed", "a", 100.0, 100.0, 1.0, end=1100)
    timings.write_timings(folder, tmp_path / "t.csv", tmp_path / "t.md")
    assert "## Critical path\n\nNot computed here: `make timings" in (tmp_path / "t.md").read_text()


def test_a_dry_run_of_another_configuration_fails(tmp_path):
    with pytest.raises(ValueError, match="none of the 2 jobs"):
        timings.run_critical_path(DRY_RUN, root=tmp_path)


def test_with_a_dry_run_the_sums_leave_out_the_files_of_jobs_outside_its_dag(tmp_path):
    """A folder also holds the benchmark files of another configuration's jobs (the quick run
    writes the same folders) and of removed rules: with the run's dry run, only its DAG's jobs
    are summed, and the title counts the others; with no file of the DAG it fails."""
    folder = tmp_path / "logs" / "benchmarks"
    _bench(folder, "snest_embed", "snest/school/sne-2", 100.0, 90.0, 300.0, end=1100)
    _bench(folder, "tste_table", "tste/table_music", 2.0, 1.0, 80.0, end=1200)
    _bench(folder, "snest_embed", "snest/school/sne-9", 500.0, 400.0, 300.0, end=1000)
    _bench(folder, "gone_rule", "x", 70.0, 60.0, 80.0, end=1000)
    dry_run = tmp_path / "dry_run.txt"
    dry_run.write_text(
        "rule snest_embed:\n    jobid: 1\n"
        "    benchmark: logs/benchmarks/snest_embed/snest/school/sne-2.tsv\n\n"
        "rule tste_table:\n    jobid: 2\n"
        "    benchmark: logs/benchmarks/tste_table/tste/table_music.tsv\n"
    )
    before = os.getcwd()
    os.chdir(tmp_path)
    try:
        table = timings.write_timings(folder, tmp_path / "t.csv", tmp_path / "t.md", dry_run)
        everything = timings.write_timings(folder, tmp_path / "a.csv", tmp_path / "a.md")
        other = tmp_path / "other.txt"
        other.write_text(dry_run.read_text().replace("sne-2", "sne-5").replace("music", "x"))
        with pytest.raises(ValueError, match="none of the 2 jobs of the dry run"):
            timings.write_timings(folder, tmp_path / "o.csv", tmp_path / "o.md", other)
    finally:
        os.chdir(before)
    total = table.set_index(["paper", "rule"]).loc[("all", "(all)")]
    assert (total["jobs"], total["cpu_s"], total["wall_s"]) == (2, 91.0, 102.0)
    assert everything.set_index(["paper", "rule"]).loc[("all", "(all)"), "jobs"] == 4
    assert "2 benchmark files of other jobs" in (tmp_path / "t.md").read_text()


def test_a_jobs_cpu_seconds_come_from_its_runners_log_line(tmp_path):
    """Snakemake's sampled cpu_time misses the end of a job (14.7 s read for a 40 CPU-s
    job): where the job's log (beside the benchmarks folder, at the benchmark's path) ends with
    the step runner's line, its CPU seconds count; else the sample, and the title says how
    many jobs that is."""
    folder = tmp_path / "logs" / "benchmarks"
    _bench(folder, "snest_embed", "snest/school/sne-2", 41.0, 14.7, 300.0, end=1100)
    _bench(folder, "snest_embed", "snest/school/sne-3", 20.0, 14.6, 300.0, end=1100)
    log = tmp_path / "logs" / "snest" / "school" / "sne-2.log"
    log.parent.mkdir(parents=True)
    log.write_text(
        "2026-01-01 embedlab INFO step snest.embed, embedlab from x\n"
        "2026-01-01 embedlab INFO job CPU seconds: 40.51 (user 39.90, system 0.61)\n"
    )
    (tmp_path / "logs" / "snest" / "school" / "sne-3.log").write_text("no line\n")
    jobs = timings.read_benchmarks(folder).set_index("path")
    sne2, sne3 = (
        str(folder / "snest_embed/snest/school/sne-2.tsv"),
        str(folder / "snest_embed/snest/school/sne-3.tsv"),
    )
    assert (jobs.at[sne2, "cpu_s"], jobs.at[sne2, "cpu_from"]) == (40.51, "log")
    assert (jobs.at[sne3, "cpu_s"], jobs.at[sne3, "cpu_from"]) == (14.6, "snakemake")
    table = timings.write_timings(folder, tmp_path / "t.csv", tmp_path / "t.md")
    assert table.set_index(["paper", "rule"]).loc[("all", "(all)"), "cpu_s"] == 55.1
    assert "1 jobs without that line count Snakemake's sampled" in (tmp_path / "t.md").read_text()
