"""The one runner of the workflow's steps (embedlab.steps) and the settings objects it builds
(embedlab.settings)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from dataclasses import FrozenInstanceError, dataclass

import pandas as pd
import pytest

from embedlab import steps
from embedlab.experiments.ee.settings import HomotopySettings, SweepSettings
from embedlab.settings import Derived, Settings, SettingsError

from .conftest import REPO


@dataclass(frozen=True)
class Example(Settings):
    rate: float
    count: int
    names: tuple[str, ...]
    note: Derived[dict]


def test_settings_take_exactly_their_fields_typed_and_frozen():
    made = Example.from_mapping(
        {"rate": 1, "count": 3, "names": ["a", "b"], "note": {}}, where="x.step"
    )
    assert made.rate == 1.0 and isinstance(made.rate, float) and made.names == ("a", "b")
    with pytest.raises(FrozenInstanceError):
        made.rate = 2.0
    assert Example.derived_names() == ("note",)
    with pytest.raises(SettingsError, match=r"x\.step: .*unknown rat; missing rate"):
        Example.from_mapping({"rat": 1, "count": 3, "names": [], "note": {}}, where="x.step")
    with pytest.raises(SettingsError, match=r"x\.step: count: 2\.5 is not a int"):
        Example.from_mapping({"rate": 1, "count": 2.5, "names": [], "note": {}}, where="x.step")
    with pytest.raises(SettingsError, match=r"names\[1\]: 3 is not a str"):
        Example.from_mapping({"rate": 1, "count": 2, "names": ["a", 3], "note": {}}, "x.step")
    with pytest.raises(SettingsError, match="True is not a float"):
        Example.from_mapping({"rate": True, "count": 2, "names": [], "note": {}}, "x.step")


@dataclass(frozen=True)
class Group(Settings):
    tol: float
    solver: str


@dataclass(frozen=True)
class WithGroup(Settings):
    group: Group
    maybe: Derived[Group | None]


def test_a_field_typed_as_settings_is_made_from_its_mapping():
    made = WithGroup.from_mapping(
        {"group": {"tol": 1, "solver": "a"}, "maybe": None}, where="x.step"
    )
    assert made.group == Group(tol=1.0, solver="a") and made.maybe is None
    with pytest.raises(SettingsError, match=r"x\.step: group: .*missing solver"):
        WithGroup.from_mapping({"group": {"tol": 1}, "maybe": None}, where="x.step")
    with pytest.raises(SettingsError, match="is not a mapping of Group's fields"):
        WithGroup.from_mapping({"group": 3, "maybe": None}, where="x.step")


def test_a_step_is_found_by_name_with_its_settings_class():
    function = steps.step_function("ee.sweep")
    assert steps.settings_class(function) is SweepSettings
    assert steps.settings_class(steps.step_function("ee.homotopy")) is HomotopySettings
    assert steps.settings_class(steps.step_function("ee.figure")) is None
    with pytest.raises(ValueError, match="has no function 'nope'"):
        steps.step_function("ee.nope")
    with pytest.raises(ValueError, match="expected '<part>.<function>'"):
        steps.step_function("ee")


def test_call_checks_the_settings_before_running(tmp_path):
    csv = tmp_path / "a.csv"
    pd.DataFrame({"dataset": ["a"], "seconds": [1.0]}).to_csv(csv, index=False)
    paths = {"sweeps": [str(csv)], "csv": str(tmp_path / "t.csv"), "md": str(tmp_path / "t.md")}
    with pytest.raises(SettingsError, match="ee.table: settings do not fit LeftOutSettings"):
        steps.call("ee.table", {"left_out": {}, "extra": 1}, paths)
    assert not (tmp_path / "t.csv").exists()
    steps.call("ee.table", {"left_out": {"mine": "too small"}}, paths)
    assert "mine (too small)" in (tmp_path / "t.md").read_text()
    with pytest.raises(ValueError, match="takes no settings"):
        steps.call("ee.figure", {"x": 1}, {})


def test_job_arguments_joins_inputs_outputs_and_wildcards():
    class Job:
        rule = "r"
        input = {"data": ["a", "b"]}
        output = {"csv": "c"}
        wildcards = {"dataset": "d"}

    assert steps.job_arguments(Job) == {"data": ["a", "b"], "csv": "c", "dataset": "d"}
    Job.wildcards = {"csv": "x"}
    with pytest.raises(ValueError, match="rule r: wildcards 'csv' clashes"):
        steps.job_arguments(Job)


RUN_JOB = """
import sys
from types import SimpleNamespace
from embedlab.steps import run_rule
job = SimpleNamespace(
    rule="ee_table", threads=1, log=[{log!r}],
    params=SimpleNamespace(step="ee.table", settings={settings}),
    input={{"sweeps": {sweeps!r}}}, output={{"csv": {csv!r}, "md": {md!r}}}, wildcards={{}},
)
sys.exit(run_rule(job))
"""


def _run_job(tmp_path, settings, sweeps):
    log = tmp_path / "job.log"
    code = RUN_JOB.format(
        log=str(log),
        settings=settings,
        sweeps=sweeps,
        csv=str(tmp_path / "t.csv"),
        md=str(tmp_path / "t.md"),
    )
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    return done, log.read_text()


def test_run_rule_writes_the_log_and_shows_an_input_error_in_one_line(tmp_path):
    csv = tmp_path / "a.csv"
    pd.DataFrame({"dataset": ["a"], "seconds": [1.0]}).to_csv(csv, index=False)
    done, log = _run_job(tmp_path, json.dumps({"left_out": {}}), [str(csv)])
    assert done.returncode == 0, log
    assert (tmp_path / "t.md").exists()
    assert "step ee.table, embedlab from " in log  # which code ran, first in every job's log
    # its CPU seconds from its start, imports included, last
    cpu = re.search(r"job CPU seconds: ([0-9.]+) \(user ([0-9.]+), system ([0-9.]+)\)\n$", log)
    assert cpu and float(cpu[1]) == pytest.approx(float(cpu[2]) + float(cpu[3]), abs=0.011)
    assert float(cpu[1]) > 0.05
    # a missing input: one line on the console (Snakemake's output) and in the log
    done, log = _run_job(tmp_path, json.dumps({"left_out": {}}), [str(tmp_path / "none.csv")])
    assert done.returncode == 1
    line = "embedlab ee.table: error:"
    assert line in done.stderr and "none.csv" in done.stderr and "Traceback" not in done.stderr
    assert line in log
    # settings that do not fit: named before anything runs
    done, log = _run_job(tmp_path, json.dumps({}), [str(csv)])
    assert done.returncode == 1 and "missing left_out" in done.stderr
