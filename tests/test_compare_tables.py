"""Comparing two runs' tables: the writer declares which columns measure the machine; the
comparisons (scripts/compare_tables.py, scripts/slurm/compare_runs.py) skip those and only
those, and fail on a table without a declaration."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pandas as pd
import pytest

from embedlab import tables, timings

from .conftest import REPO
from .test_timings import _bench


def _script(name, path):
    spec = importlib.util.spec_from_file_location(name, REPO / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


compare_tables = _script("compare_tables", "scripts/compare_tables.py")
compare_runs = _script("compare_runs", "scripts/slurm/compare_runs.py")

TABLE = pd.DataFrame(
    {"method": ["x", "y"], "note": ["a", None], "kl": [0.5, 0.25], "seconds": [1.0, 2.0]}
)


def test_the_writer_declares_each_columns_role(tmp_path):
    tables.write_csv(TABLE, tmp_path / "t.csv", measured=["seconds"])
    assert tables.read_columns(tmp_path / "t.csv") == {
        "method": "result", "note": "result", "kl": "result", "seconds": "measurement",
    }  # fmt: skip
    with pytest.raises(ValueError, match=r"measured column\(s\) \['secs'\]"):
        tables.write_csv(TABLE, tmp_path / "u.csv", measured=["secs"])
    assert not (tmp_path / "u.csv").exists()
    (tmp_path / "v.csv").write_text("a\n1\n")
    with pytest.raises(FileNotFoundError, match="no column declaration v.columns.json"):
        tables.read_columns(tmp_path / "v.csv")


def test_equal_tables_pass_and_changes_fail(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    tables.write_csv(TABLE, a / "t.csv", measured=["seconds"])
    tables.write_csv(TABLE.assign(seconds=[9.0, 9.0]), b / "t.csv", measured=["seconds"])
    assert compare_tables.compare(a, b) == []  # a measurement of the machine: not compared
    tables.write_csv(TABLE.assign(kl=[0.5, 0.2500001]), b / "t.csv", measured=["seconds"])
    assert compare_tables.compare(a, b) == [
        "t.csv: kl: 1 of 2 values differ beyond tolerance (max |diff| 1e-07; first row 1: "
        "0.25 vs 0.2500001)"
    ]
    assert compare_tables.compare(a, b, rtol=1e-5) == []
    tables.write_csv(TABLE.assign(note=["a", "b"]), b / "t.csv", measured=["seconds"])
    assert compare_tables.compare(a, b) == [
        "t.csv: note: 1 cells differ (first row 1: '<NA>' vs 'b')"
    ]
    tables.write_csv(TABLE, b / "t.csv", measured=["seconds"])
    tables.write_csv(TABLE, b / "u.csv", measured=["seconds"])
    assert any("u.csv: only in" in line for line in compare_tables.compare(a, b, rtol=1e-5))


def test_a_column_declared_otherwise_or_undeclared_fails(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    tables.write_csv(TABLE, a / "t.csv", measured=["seconds"])
    tables.write_csv(TABLE, b / "t.csv", measured=["seconds", "kl"])
    assert "column declarations differ" in compare_tables.compare(a, b)[0]
    tables.write_csv(TABLE, b / "t.csv", measured=["seconds"])
    TABLE.assign(extra=1).to_csv(b / "t.csv", index=False)  # a column no writer declared
    assert "!= declared" in compare_tables.compare(a, b)[0]
    tables.columns_path(b / "t.csv").unlink()
    assert "no column declaration" in compare_tables.compare(a, b)[0]


def _results(root, machine: int):
    """A results/ folder as the workflow writes it, with tables from the package's writers;
    ``machine`` varies what the host measures (times, memory)."""
    out = root / "results" / "tables"
    kl = pd.DataFrame(
        {"dataset": ["school", "school"], "cell": ["tsne-2", "sne-2"], "kl": [0.3185, 0.4012],
         "runs": ["4/4", "4/4"], "seconds_per_run": [1.5 * machine, 2.5 * machine]}
    )  # fmt: skip
    tables.write_table(kl, out / "snest_kl.csv", out / "snest_kl.md", measured=["seconds_per_run"])
    rank = pd.DataFrame({"method": ["dcode", "lle"], "mean_rank": [12.5, 30.25]})
    tables.write_table(rank, out / "dcode_rank.csv", out / "dcode_rank.md", measured=())
    nn = pd.DataFrame(
        {
            "dataset": ["vowel"],
            "method": ["diffeomap"],
            "errors": [126],
            "seconds": [40.0 * machine],
        }
    )
    tables.write_table(
        nn, out / "diffeomap_1nn.csv", out / "diffeomap_1nn.md", measured=["seconds"]
    )
    bench = root / "logs" / "benchmarks"
    _bench(bench, "snest_embed", "snest/school/tsne-2", 100.0 * machine, 190.0 * machine,
           300.0 + machine, end=1100 + machine)  # fmt: skip
    _bench(bench, "dcode_rank", "dcode/20_188", 50.0 * machine, 45.0, 500.0 * machine, end=1200)
    timings.write_timings(bench, out / "timings.csv", out / "timings.md")
    dataset = root / "results" / "datasets" / "school"
    dataset.mkdir(parents=True)
    (dataset / "meta.json").write_text(json.dumps({"name": "school"}))
    (dataset / "items.tsv").write_text("name\na\n")
    np.savez_compressed(dataset / "data.npz", X=np.arange(6.0).reshape(3, 2))
    return root


def _perturb(path, column, row, value):
    table = pd.read_csv(path)
    table.loc[row, column] = value
    table.to_csv(path, index=False)  # the declaration beside it is unchanged


@pytest.mark.parametrize(
    "table, column, value, passes",
    [
        ("snest_kl.csv", "kl", 0.3186, False),  # one KL
        ("dcode_rank.csv", "mean_rank", 12.75, False),  # one rank
        ("diffeomap_1nn.csv", "errors", 127, False),  # one error count
        ("timings.csv", "max_rss_mb", 1e6, True),  # one measurement of the machine
    ],
)
def test_a_science_value_fails_the_cluster_check_and_a_measurement_does_not(
    tmp_path, capsys, table, column, value, passes
):
    local = _results(tmp_path / "local", machine=1)
    slurm = _results(tmp_path / "slurm", machine=3)  # another host: every measurement differs
    assert compare_runs.main([str(local), str(slurm)]) == 0, capsys.readouterr().out
    _perturb(slurm / "results" / "tables" / table, column, 0, value)
    rc = compare_runs.main([str(local), str(slurm)])
    out = capsys.readouterr().out
    assert (rc == 0) == passes, out
    if not passes:
        assert f"DIFF  {table}: {column}:" in out


def test_a_tables_note_names_each_own_dataset_it_leaves_out():
    assert tables.left_out_note("{}") == ""
    note = tables.left_out_note('{"small": "ee needs at least 42 points, the dataset has 20"}')
    assert note == (
        "Own datasets left out of this table: small (ee needs at least 42 points, the dataset "
        "has 20).\n"
    )
    with pytest.raises(ValueError, match="JSON object"):
        tables.left_out_note("[1]")
