"""The command line loads only the experiment module a verb needs, and that module only
what the verb needs."""

from __future__ import annotations

import subprocess
import sys

import pytest

from embedlab import cli


def _verbs(parser) -> set[str]:
    return set(parser._subparsers._group_actions[0].choices)


def test_every_experiment_verb_is_named_after_its_module():
    """A verb is found without importing every module only if it is '<module>-...'."""
    core = _verbs(cli.build_parser("fetch"))  # this file's verbs only
    modules = cli._experiment_modules()
    assert core and not any(v.startswith(f"{m}-") for v in core for m in modules), core
    every = _verbs(cli.build_parser())
    for module in modules:
        own = _verbs(cli.build_parser(f"{module}-")) - core
        assert own, module
        assert all(verb.startswith(f"{module}-") for verb in own), (module, own)
        every -= own
    assert every == core


@pytest.mark.parametrize(
    ("argv", "verb"),
    [(["--traceback", "snest-table", "--x"], "snest-table"), (["-h"], None), ([], None)],
)
def test_the_verb_is_the_first_word_that_is_not_an_option(argv, verb):
    assert cli._verb(argv) == verb


def test_an_unknown_verb_lists_every_verb():
    proc = subprocess.run(
        [sys.executable, "-m", "embedlab", "no-such-verb"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "snest-embed" in proc.stderr and "fetch" in proc.stderr


def test_a_core_verb_imports_no_method():
    """fetch / build jobs skip scikit-learn and numba (seconds of imports per job)."""
    code = (
        "import sys; from embedlab import cli; cli.build_parser('fetch');"
        "print(sorted(m for m in ('sklearn', 'numba', 'embedlab.experiments.snest')"
        " if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.strip() == "[]", proc.stderr


@pytest.mark.parametrize("module", cli._experiment_modules())
def test_an_experiment_module_imports_its_methods_where_it_fits(module):
    """Table, figure and merge jobs import neither scikit-learn nor numba (~1 s per job): the
    experiment modules import their methods inside the functions that fit."""
    code = (
        f"import sys, embedlab.experiments.{module};"
        "print(sorted(m for m in ('sklearn', 'numba') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.strip() == "[]", proc.stderr
