"""The package's layers: a module imports only from its own layer or the layers below.

    base (artifacts, registry, fetch, tables, runs, perplexity, affinities, optimize,
          kernels, datasets)  ->  methods  ->  evaluate  ->  experiments, plots
          ->  summary, timings, report_check, docs (with docs_snapshot, docs_layout,
              docs_reference), cli, steps (the workflow's runner), report
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "embedlab"
LAYERS = {
    "methods": 1,
    "evaluate": 2,
    "experiments": 3,
    "plots": 3,
    "summary": 4,
    "timings": 4,
    "report_check": 4,
    "docs": 4,
    "docs_snapshot": 4,
    "docs_layout": 4,
    "docs_reference": 4,
    "cli": 4,
    "steps": 4,
    "report": 4,
    "__main__": 4,
}  # every other module (the base) is layer 0


def layer(module: str) -> int:
    """Layer of a dotted module name inside embedlab (``embedlab.methods.dcode`` -> 1)."""
    parts = module.split(".")
    return LAYERS.get(parts[1], 0) if len(parts) > 1 else 0


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every embedlab import in ``path``, function-level ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("embedlab"):
            if node.module == "embedlab":
                found += [(node.lineno, f"embedlab.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("embedlab")]
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_import_runs_up_the_layers():
    upward = [
        f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, target in imports(path)
        if layer(target) > layer(module_name(path))
    ]
    assert not upward, "\n".join(upward)


@pytest.mark.parametrize(
    ("module", "target", "upward"),
    [
        ("embedlab.methods.triplets", "embedlab.evaluate.triplets", True),
        ("embedlab.evaluate.kl", "embedlab.methods.neighbour", False),
        ("embedlab.runs", "embedlab.experiments.snest", True),
        ("embedlab.cli", "embedlab.experiments.tste", False),
    ],
)
def test_the_layer_check_tells_up_from_down(module, target, upward):
    assert (layer(target) > layer(module)) is upward


def test_experiments_save_only_through_the_shared_writers():
    """Fitted runs and maps go through runs.save_npz, tables through tables.write_csv /
    write_table, text through artifacts.write_text_atomic: atomic, one format."""
    direct = re.compile(r"np\.savez|\.to_csv\(|\.write_text\(|\.savefig\(")
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}"
        for path in sorted((PACKAGE / "experiments").glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if direct.search(line)
    ]
    assert not found, "\n".join(found)
