"""The schema is the one home of every setting: each step's settings fields are properties of
the config section they read, and each property of a section that steps read is a field of
one of them, or one the workflow itself reads (each paper's settings module lists those in
``WORKFLOW_KEYS``, with what they do)."""

from __future__ import annotations

import importlib
from collections import defaultdict

import pytest
import yaml

from embedlab import steps
from embedlab.codeprint import CodePrints

from .conftest import REPO

SCHEMAS = REPO / "workflow" / "schemas"
PRINTS = CodePrints(REPO / "src")


def workflow_keys(section: str) -> set[str]:
    """The properties of ``section`` that the workflow reads itself (its paper's
    ``settings.WORKFLOW_KEYS``)."""
    paper = section.split(".")[0]
    module = importlib.import_module(f"embedlab.experiments.{paper}.settings")
    return set(getattr(module, "WORKFLOW_KEYS", {}).get(section, ()))


def schema_properties(section: str) -> dict:
    paper, *inner = section.split(".")
    schema = yaml.safe_load((SCHEMAS / f"{paper}.schema.yaml").read_text())
    for key in inner:
        schema = schema["properties"][key]
    return schema["properties"]


def read_by_steps() -> dict[str, set[str]]:
    """config section -> the fields that steps' settings read of it."""
    fields = defaultdict(set)
    for step in PRINTS.steps():
        section, config, _ = PRINTS.settings_spec(step)
        fields[section] |= set(config)
    return fields


@pytest.mark.parametrize("step", PRINTS.steps())
def test_each_settings_field_is_a_property_of_its_section(step):
    section, config, derived = PRINTS.settings_spec(step)
    unknown = set(config) - set(schema_properties(section))
    assert not unknown, f"{step}: fields not in the {section} schema: {sorted(unknown)}"
    # what the workflow reads from the code is what the runner builds
    kind = steps.settings_class(steps.step_function(step))
    if kind is None:
        assert config == derived == []
    else:
        assert sorted(kind.field_names()) == sorted(config + derived)
        assert sorted(kind.derived_names()) == sorted(derived)


@pytest.mark.parametrize("section", sorted(read_by_steps()))
def test_each_property_is_read_by_a_step_or_the_workflow(section):
    sections = read_by_steps()
    nested = {s.split(".")[-1] for s in sections if s.startswith(section + ".")}
    read = sections[section] | workflow_keys(section) | nested
    unread = set(schema_properties(section)) - read
    assert not unread, f"{section}: schema properties no step reads: {sorted(unread)}"
