"""environment.yml (conda users), workflow/envs/embedlab.yaml (rules) and pyproject.toml agree."""

import re
import tomllib

import yaml

from .conftest import REPO


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject_names():
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return {_name(r) for r in meta["dependencies"]}, meta["requires-python"]


def _conda_names(path):
    deps = yaml.safe_load(path.read_text())["dependencies"]
    names = {_name(d) for d in deps if isinstance(d, str)}
    return names - {"python", "pip"}, [
        d for d in deps if isinstance(d, str) and d.startswith("python")
    ]


def test_conda_files_list_the_pip_dependencies():
    pip_names, requires_python = _pyproject_names()
    for path in (REPO / "environment.yml", REPO / "workflow" / "envs" / "embedlab.yaml"):
        conda_names, python = _conda_names(path)
        assert conda_names == pip_names, (
            f"{path.name}: only in conda {sorted(conda_names - pip_names)}, "
            f"only in pyproject {sorted(pip_names - conda_names)}"
        )
        assert python == [f"python{requires_python}"], path.name


def test_version_bounds_agree():
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pip_specs = {_name(r): r.replace(" ", "") for r in meta["dependencies"]}
    conda = yaml.safe_load((REPO / "environment.yml").read_text())["dependencies"]
    for dep in conda:
        if isinstance(dep, str) and _name(dep) in pip_specs:
            assert dep.replace(" ", "") == pip_specs[_name(dep)], dep
