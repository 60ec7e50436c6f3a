"""Fingerprints of the package code that each workflow step runs.

Snakemake reruns a job when its parameters change, not when the Python it calls changes. So
every step's rule passes, as a parameter, the fingerprint of the code its step runs
(``workflow/rules/common.smk``: ``step_code(step)``): editing that code changes the parameter,
and the job is out of date.

What a step runs (:mod:`embedlab.steps`):

- the runner's :data:`RUNNER_FUNCTION` and the step function (``"ee.sweep"``: ``sweep`` of
  ``embedlab.experiments.ee.steps``), and of each module the functions and classes reached by
  name from them, with the module's top-level statements; another step of the same module is
  not part of it;
- every ``embedlab`` module imported there, top level or inside a reached function, followed
  through the package's imports, and of each the same: its top-level statements and the
  functions and classes reached from the names used of it (``from A import f`` where ``f`` is
  read; ``tables.write_csv`` on a module bound to a name; all of it where the module itself is
  passed on), transitively; the packages above each module count with their top-level
  statements. A new function in ``tables.py`` that no job calls reruns nothing; a change to a
  function that a fit calls reruns that fit.

Names are followed, not values: a local variable named as another step of the module would
make that step's code count (``tests/test_codeprint.py`` forbids it). Imports by computed
name (``importlib.import_module(f"...")``) cannot be followed; the rule that runs them names
the module it loads (the dataset builders: ``step_code("datasets.build", module)``). This
module is left out (:data:`NOT_FINGERPRINTED`): it computes no result.

The fingerprint hashes each module's parsed form (:mod:`ast`, docstrings removed), never its
bytes: comments, docstrings and layout do not change it, so tidying code reruns nothing.
This file imports nothing from ``embedlab`` and only the standard library, so the workflow can
load it at start without the package's dependencies (it also reads each step's settings fields
from the code: :meth:`CodePrints.settings_spec`).

Parsing the package is most of the workflow's start-up, and every Snakemake call (a dry run,
a report, each test that runs the workflow) pays it. Given a ``cache`` folder, the answers are
kept in one JSON file there, named by the hash of the bytes of every module of the package
(this one included): an edit anywhere, even to a comment, names another file, so a kept answer
is never read for sources other than those it was computed from. The file is written once,
by :meth:`CodePrints.save` or at the process's exit, with every answer computed by then.
"""

from __future__ import annotations

import ast
import atexit
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

PACKAGE = "embedlab"
#: the runner of every workflow step, and the module of each paper holding its steps
RUNNER = f"{PACKAGE}.steps"
RUNNER_FUNCTION = "run_rule"
STEPS_MODULE = "steps"
#: computes no result: not fingerprinted, so a change to how fingerprints are taken reruns
#: nothing
NOT_FINGERPRINTED = frozenset({f"{PACKAGE}.codeprint"})

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _strip_docstring(node: ast.AST) -> None:
    """Remove the docstring of a module, class or function ``node`` (in place)."""
    body = node.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        node.body = body[1:] or [ast.Pass()]


class _Module:
    """One parsed module of the package: its top-level definitions and other statements."""

    def __init__(self, name: str, path: Path):
        self.name = name
        self.is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        _strip_docstring(tree)
        self.body = tree.body
        self.defs = {node.name: node for node in tree.body if isinstance(node, _DEFS)}
        self.statements = [node for node in tree.body if not isinstance(node, _DEFS)]
        # per top-level node, from one walk: its import statements, the names it reads, and
        # its normalised code (docstrings removed)
        self.import_nodes: dict[int, list[ast.Import | ast.ImportFrom]] = {}
        self.names: dict[int, list[str]] = {}
        self.code: dict[int, str] = {}
        # per top-level node: name -> the attributes read on it (``tables.write_csv``), and
        # the names also used bare (passed on, called: every attribute may be used)
        self.attributes: dict[int, dict[str, set[str]]] = {}
        self.bare: dict[int, set[str]] = {}
        for node in tree.body:
            self._index(node)

    def _index(self, node: ast.AST) -> None:
        """Record a top-level ``node``'s imports, the names it reads, the attributes read on
        them and its normalised code (docstrings removed)."""
        walked = list(ast.walk(node))
        for n in walked:
            if isinstance(n, _DEFS):
                _strip_docstring(n)
        self.import_nodes[id(node)] = [
            n for n in walked if isinstance(n, (ast.Import, ast.ImportFrom))
        ]
        self.names[id(node)] = _names_used(walked)
        self.code[id(node)] = ast.dump(node, annotate_fields=False)
        attributes: dict[str, set[str]] = {}
        values = set()
        for n in walked:
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
                attributes.setdefault(n.value.id, set()).add(n.attr)
                values.add(id(n.value))
        self.attributes[id(node)] = attributes
        self.bare[id(node)] = {
            n.id for n in walked if isinstance(n, ast.Name) and id(n) not in values
        }

    def dump(self, nodes: Iterable[ast.AST] | None = None) -> str:
        """The normalised code of ``nodes`` (default: the whole module)."""
        return "\n".join(self.code[id(n)] for n in (self.body if nodes is None else nodes))

    def reached(self, roots: Iterable[str]) -> list[ast.AST]:
        """The top-level statements, plus the definitions reached by name from them and from
        ``roots``, in source order."""
        seen: set[str] = set()
        todo = list(roots)
        for statement in self.statements:
            todo += self.names[id(statement)]
        while todo:
            name = todo.pop()
            if name in seen or name not in self.defs:
                continue
            seen.add(name)
            todo += self.names[id(self.defs[name])]
        return [n for n in self.body if not isinstance(n, _DEFS) or n.name in seen]


def _names_used(walked: list[ast.AST]) -> list[str]:
    """The names that the nodes ``walked`` read."""
    return [n.id for n in walked if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


class CodePrints:
    """Fingerprints of the workflow steps of the ``embedlab`` package found under ``src``.

    Parses each module once and remembers each fingerprint, so a workflow pays one parse of
    the package however many rules ask.
    """

    def __init__(self, src: str | Path, cache: str | Path | None = None):
        self.src = Path(src)
        self.root = self.src / PACKAGE
        if not (self.root / "__init__.py").is_file():
            raise FileNotFoundError(f"{self.root}: no {PACKAGE} package (no __init__.py)")
        self._modules: dict[str, _Module] = {}
        self._steps: dict[str, str] | None = None
        # answers by key ("print", step, modules...) / ("spec", step), as JSON holds them
        self._answers: dict[str, list] = {}
        self._unsaved = False  # answers computed since the cache file was read or written
        self._cache_file = None
        if cache is not None:
            self._cache_file = Path(cache) / f"codeprint-{self.sources_hash()}.json"
            try:
                self._answers = json.loads(self._cache_file.read_text(encoding="utf-8"))
            except (OSError, ValueError):  # none yet, or unreadable: computed afresh
                self._answers = {}
            atexit.register(self.save)

    # --- the kept answers ----------------------------------------------------------------
    def sources_hash(self) -> str:
        """sha256 (16 hex digits) of the path and bytes of every module of the package."""
        digest = hashlib.sha256()
        for path in sorted(self.root.rglob("*.py")):
            digest.update(f"{path.relative_to(self.src).as_posix()}\n".encode())
            digest.update(path.read_bytes())
        return digest.hexdigest()[:16]

    def _answer(self, key: tuple[str, ...], compute):
        """The answer for ``key``: kept, or ``compute()`` kept."""
        name = "\t".join(key)
        if name not in self._answers:
            self._answers[name] = compute()
            self._unsaved = True
        return self._answers[name]

    def save(self) -> None:
        """Write the answers to the cache file, if any were computed since it was read
        (whole, by rename: a reader never sees half of it), and remove the files of other
        sources. A folder that cannot be written keeps no cache: the answers are computed
        again next time."""
        if self._cache_file is None or not self._unsaved:
            return
        folder = self._cache_file.parent
        tmp = None
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".codeprint-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self._answers, fh)
            os.replace(tmp, self._cache_file)
            tmp = None
            self._unsaved = False
            for old in folder.glob("codeprint-*.json"):
                if old != self._cache_file:
                    old.unlink(missing_ok=True)
        except OSError:
            pass
        finally:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)

    # --- modules -------------------------------------------------------------------------
    def _path(self, name: str) -> Path | None:
        parts = name.split(".")
        if parts[0] != PACKAGE:
            return None
        base = self.src.joinpath(*parts)
        if (base / "__init__.py").is_file():
            return base / "__init__.py"
        file = base.with_suffix(".py")
        return file if file.is_file() else None

    def module(self, name: str) -> _Module:
        """The parsed module ``name`` (parsed once)."""
        if name not in self._modules:
            path = self._path(name)
            if path is None:
                raise ModuleNotFoundError(f"no module {name!r} under {self.src}")
            self._modules[name] = _Module(name, path)
        return self._modules[name]

    def _base(self, node: ast.ImportFrom, current: _Module) -> str:
        """The absolute module name of a ``from ... import`` (relative imports resolved)."""
        base = node.module or ""
        if node.level:
            parts = current.name.split(".")
            parts = parts if current.is_package else parts[:-1]
            parts = parts[: len(parts) - (node.level - 1)]
            base = ".".join(parts + ([base] if base else []))
        return base

    def _nearest(self, name: str) -> str | None:
        """``name`` or its nearest enclosing package that is a package module (None: outside
        the package)."""
        parts = name.split(".")
        while parts:
            if self._path(".".join(parts)):
                return ".".join(parts)
            parts.pop()
        return None

    def _uses(
        self, nodes: list[ast.AST], current: _Module, wanted: set[str] | None = None
    ) -> dict[str, set[str] | None]:
        """The package modules that the top-level ``nodes`` of ``current`` import, each with
        the names used of it (None: all of it). ``from A import f`` inside a function uses
        ``f`` of A; at the top level, only where ``nodes`` read ``f`` or ``f`` is among the
        names ``wanted`` of ``current`` (a re-export; None: all of it), so a module's import
        for one of its functions is not a use by another (an imported module's top-level
        statements count wherever it is imported: importing runs them). A module bound to a name
        (``from embedlab import tables``) uses the attributes read on that name within the
        import's scope (the function holding it, or every node for a top-level import), or
        all of it where the name is also used bare."""
        uses: dict[str, set[str] | None] = {}
        read = {name for node in nodes for name in current.names[id(node)]}

        def use(module: str | None, names: set[str] | None) -> None:
            if module is None:
                return
            if names is None or (module in uses and uses[module] is None):
                uses[module] = None
            else:
                uses.setdefault(module, set()).update(names)

        def used_on(alias: str, scope: list[ast.AST]) -> set[str] | None:
            if any(alias in current.bare[id(n)] for n in scope):
                return None
            return {a for n in scope for a in current.attributes[id(n)].get(alias, ())}

        for node in nodes:
            scope = nodes if node in current.statements else [node]
            for statement in current.import_nodes[id(node)]:
                if isinstance(statement, ast.Import):
                    for alias in statement.names:
                        module = self._nearest(alias.name)
                        names = used_on(alias.asname, scope) if alias.asname else None
                        use(module, names)
                    continue
                base = self._base(statement, current)
                for alias in statement.names:
                    local = alias.asname or alias.name
                    if self._path(f"{base}.{alias.name}"):
                        use(f"{base}.{alias.name}", used_on(local, scope))
                    elif alias.name == "*":
                        use(self._nearest(base), None)
                    elif not (
                        scope is nodes
                        and wanted is not None
                        and local not in read
                        and local not in wanted
                    ):
                        use(self._nearest(base), {alias.name})
        return uses

    @staticmethod
    def _parents(name: str) -> list[str]:
        parts = name.split(".")
        return [".".join(parts[:i]) for i in range(1, len(parts))]

    def _closure(self, roots: list[tuple[str, set[str] | None]]) -> dict[str, str]:
        """module -> the normalised code reached from ``roots`` ((module, names used of it;
        None: all of it)), following the package's imports."""
        wanted: dict[str, set[str] | None] = {}
        todo: list[str] = []

        def want(name: str, names: set[str] | None) -> None:
            """Mark ``names`` of module ``name`` as run (None: all of it)."""
            if name in NOT_FINGERPRINTED:
                return
            known = name in wanted
            old = wanted[name] if known else set()
            new = None if names is None or old is None else old | names
            if not known or new != old:
                wanted[name] = new
                todo.append(name)

        for name, names in roots:
            want(name, names)
        reached: dict[str, list[ast.AST]] = {}
        while todo:
            name = todo.pop()
            module = self.module(name)
            names = wanted[name]
            nodes = module.body if names is None else module.reached(names)
            reached[name] = nodes
            for dependency, used in self._uses(nodes, module, names).items():
                want(dependency, used)
            for parent in self._parents(name):
                want(parent, set())
        return {name: self.module(name).dump(nodes) for name, nodes in reached.items()}

    # --- steps ---------------------------------------------------------------------------
    def _step_modules(self) -> dict[str, str]:
        """part -> the module holding its steps (embedlab.steps.STEP_HOMES, in order)."""
        if self._steps is not None:
            return self._steps
        found: dict[str, str] = {}
        for pattern in (f"experiments/*/{STEPS_MODULE}.py", f"*/{STEPS_MODULE}.py"):
            for path in sorted(self.root.glob(pattern)):
                module = ".".join(path.relative_to(self.src).with_suffix("").parts)
                found.setdefault(path.parent.name, module)
        self._steps = found
        return found

    def steps(self) -> list[str]:
        """Every workflow step: ``"<part>.<function>"`` for each public top-level function of
        each steps module."""
        found = []
        for part, name in self._step_modules().items():
            found += [
                f"{part}.{function}"
                for function, node in self.module(name).defs.items()
                if isinstance(node, ast.FunctionDef) and not function.startswith("_")
            ]
        return found

    def step_home(self, step: str) -> tuple[str, str]:
        """(module, function) of workflow step ``step`` (``"ee.sweep"``; embedlab.steps)."""
        part, _, function = step.partition(".")
        module = self._step_modules().get(part)
        if module is None or function not in self.module(module).defs:
            raise KeyError(f"no step {step!r}: expected a function {function!r} in {module}")
        return module, function

    def step_parts(self, step: str, *modules: str) -> dict[str, str]:
        """module -> the normalised code that running ``step`` runs: the runner's
        (:data:`RUNNER`), the step function and all they reach, and ``modules`` whole (those
        the step loads by computed name)."""
        home, function = self.step_home(step)
        roots = [(RUNNER, {RUNNER_FUNCTION}), (home, {function})]
        return self._closure(roots + [(name, None) for name in modules])

    def of_step(self, step: str, *modules: str) -> str:
        """The fingerprint (16 hex digits) of :meth:`step_parts`."""
        return self._answer(
            ("print", step, *modules), lambda: _digest(self.step_parts(step, *modules))
        )

    def settings_spec(self, step: str) -> tuple[str, list[str], list[str]]:
        """(config section, config fields, derived fields) of the settings class that
        ``step``'s function annotates its ``settings`` parameter with, read from the code (the
        package is not imported). The class is defined in the steps module or imported into it
        by ``from ... import``; its fields are its annotated names (:mod:`embedlab.settings`:
        no inheritance of fields), a field annotated ``Derived[...]`` being derived, and its
        ``section: ClassVar[str]`` the dotted config section it reads (default: the step's
        paper). A step without settings: (paper, [], [])."""
        section, config, derived = self._answer(
            ("spec", step), lambda: list(self._settings_spec(step))
        )
        return section, list(config), list(derived)

    def _settings_spec(self, step: str) -> tuple[str, list[str], list[str]]:
        home, function = self.step_home(step)
        paper = step.partition(".")[0]
        module = self.module(home)
        args = module.defs[function].args
        annotation = next(
            (a.annotation for a in args.args + args.kwonlyargs if a.arg == "settings"), None
        )
        if annotation is None:
            return paper, [], []
        name = annotation.value if isinstance(annotation, ast.Constant) else annotation.id
        section, config, derived = paper, [], []
        for node in self._class(module, name).body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                kind = node.annotation
                text = kind.value if isinstance(kind, ast.Constant) else ast.unparse(kind)
                if text.startswith("ClassVar"):
                    if node.target.id == "section" and isinstance(node.value, ast.Constant):
                        section = node.value.value
                elif text.startswith("Derived["):
                    derived.append(node.target.id)
                else:
                    config.append(node.target.id)
        return section, config, derived

    def _class(self, module: _Module, name: str) -> ast.ClassDef:
        """The class ``name`` as ``module`` sees it: its own, or one it imports by name."""
        if name in module.defs:
            return module.defs[name]
        for node in module.statements:
            if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
                return self.module(self._base(node, module)).defs[name]
        raise KeyError(f"{module.name}: no class {name!r} (defined or imported by name)")


def _digest(parts: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(parts):
        digest.update(f"{name}\n{parts[name]}\n".encode())
    return digest.hexdigest()[:16]
