"""The timings table: benchmark files summed per rule and paper; the run's span and cores."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from embedlab import timings

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
