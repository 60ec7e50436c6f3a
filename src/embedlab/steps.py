"""The one way a workflow rule runs a step.

A step is a function ``step(settings, **paths_and_wildcards)`` in a paper's
``embedlab.experiments.<paper>.steps`` module, or in ``embedlab.<part>.steps`` for the
workflow's plumbing (:data:`STEP_HOMES`); its name in the workflow is ``"<part>.<function>"``
(``"ee.sweep"``, ``"datasets.build"``). Every rule runs its step through the same script
(``workflow/scripts/step.py``), which calls :func:`run_rule` with Snakemake's job object:

- the job's named inputs and outputs and its wildcards become the step's keyword arguments
  (a path, or a list of paths where the rule names several; a clash of names is an error);
- ``params.step`` names the step and ``params.settings`` holds the values of its settings
  class's fields, which become the ``settings`` argument (:class:`embedlab.settings.Settings`,
  checked before anything is computed); a step without a ``settings`` parameter takes none;
- the job's threads bound the compiled kernels (``NUMBA_NUM_THREADS``) and BLAS, set before
  the step's module is imported;
- the process's output goes to the rule's log; an error for bad input (ValueError, KeyError,
  FileNotFoundError, RuntimeError) ends the job with one line naming what was wrong, written to
  the log and to Snakemake's own output, where the user sees it; any other error leaves its
  traceback in the log;
- a job that ends well logs the CPU seconds its process used from its start (imports
  included), every thread and waited-for child counted (:func:`cpu_line`): Snakemake's
  benchmark samples a job's CPU time every 30 s after its first 15 s and keeps the last
  sample, so it misses up to 30 s of a longer job (a 40 CPU-s job reads 14.7), and
  :mod:`embedlab.timings` reads this line instead where a job's log has it.

Snakemake deletes the outputs of a failed job, so nothing half-written is left as finished.

A step's fingerprint follows names (:mod:`embedlab.codeprint`): no local variable or input in
a steps module is named as one of its steps, or that step's code would count as the other's.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import logging
import os
import resource
import sys
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from embedlab.settings import Settings

#: the errors a step raises for bad input: reported in one line, without a traceback
INPUT_ERRORS = (ValueError, KeyError, FileNotFoundError, RuntimeError)


#: where the steps of a name's first part live, in order: a paper's package, else a package
#: of the workflow's plumbing (``datasets``: fetch and build; ``report``: the summary tables)
STEP_HOMES = ("embedlab.experiments.{part}.steps", "embedlab.{part}.steps")


def step_module(name: str) -> str:
    """The module holding step ``name`` (``"ee.sweep"`` -> ``embedlab.experiments.ee.steps``,
    ``"datasets.build"`` -> ``embedlab.datasets.steps``): the first of :data:`STEP_HOMES`
    that exists."""
    part, _, function = name.partition(".")
    if not part or not function:
        raise ValueError(f"step {name!r}: expected '<part>.<function>'")
    for home in STEP_HOMES:
        module = home.format(part=part)
        try:
            if importlib.util.find_spec(module) is not None:
                return module
        except ModuleNotFoundError:
            continue
    raise ValueError(f"step {name!r}: no module {' or '.join(STEP_HOMES).format(part=part)}")


def step_function(name: str) -> Callable:
    """The function of step ``name``."""
    module = importlib.import_module(step_module(name))
    function = name.partition(".")[2]
    try:
        return getattr(module, function)
    except AttributeError:
        raise ValueError(f"step {name!r}: {module.__name__} has no function {function!r}") from None


def settings_class(function: Callable) -> type[Settings] | None:
    """The settings class a step function takes (None: it takes no settings)."""
    if "settings" not in inspect.signature(function).parameters:
        return None
    return typing.get_type_hints(function)["settings"]


def _named(items: Any) -> dict[str, Any]:
    """The named entries of a Snakemake Namedlist (or a plain mapping)."""
    if isinstance(items, Mapping):
        return dict(items)
    return dict(items.items())


def call(name: str, settings: Mapping[str, Any], arguments: Mapping[str, Any]) -> None:
    """Run step ``name`` with ``settings`` (its settings class's fields) and ``arguments``
    (paths and wildcards, by keyword)."""
    function = step_function(name)
    kind = settings_class(function)
    if kind is None:
        if settings:
            raise ValueError(f"step {name!r} takes no settings, got {sorted(settings)}")
        function(**arguments)
    else:
        function(kind.from_mapping(settings, where=name), **arguments)


def job_arguments(job: Any) -> dict[str, Any]:
    """A Snakemake job's named inputs, named outputs and wildcards as one keyword mapping
    (an input named in several places is an error naming it)."""
    arguments: dict[str, Any] = {}
    for part in ("input", "output", "wildcards"):
        for key, value in _named(getattr(job, part)).items():
            if key in arguments:
                raise ValueError(f"rule {job.rule}: {part} {key!r} clashes with another name")
            arguments[key] = value if isinstance(value, str) else list(value)
    return arguments


#: the start of the line a job's log ends with (:func:`cpu_line`), which timings parses
CPU_LINE = "job CPU seconds:"


def cpu_line() -> str:
    """``"job CPU seconds: <user + system> (user <u>, system <s>)"``: this process's CPU time
    from its start, its threads and the children it waited for included (getrusage)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    user, system = own.ru_utime + children.ru_utime, own.ru_stime + children.ru_stime
    return f"{CPU_LINE} {user + system:.2f} (user {user:.2f}, system {system:.2f})"


def _set_threads(threads: int) -> None:
    for variable in ("NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ[variable] = str(threads)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def run_rule(job: Any) -> int:
    """Run the step of Snakemake job ``job`` (the ``snakemake`` object of a script rule) with
    its output in the job's log; returns the exit status (0, or 1 after an error)."""
    _set_threads(int(job.threads))
    name = job.params.step
    console = os.fdopen(os.dup(2), "w")
    if job.log:
        with open(job.log[0], "w") as log_file:
            os.dup2(log_file.fileno(), 1)
            os.dup2(log_file.fileno(), 2)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stderr,
        force=True,
    )
    package = Path(__file__).resolve().parent
    logging.getLogger("embedlab").info("step %s, embedlab from %s", name, package)
    try:
        call(name, dict(job.params.settings), job_arguments(job))
    except INPUT_ERRORS as exc:
        message = f"embedlab {name}: error: {exc}"
        print(message, file=sys.stderr, flush=True)
        print(message, file=console, flush=True)
        return 1
    except BaseException:
        logging.getLogger("embedlab").exception("step %s failed", name)
        where = f" (traceback in {job.log[0]})" if job.log else ""
        print(f"embedlab {name}: failed{where}", file=console, flush=True)
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    logging.getLogger("embedlab").info("%s", cpu_line())
    return 0
