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
    """The properties of ``section`` that the workflow reads itself (``WORKFLOW_KEYS`` of the
    settings module beside each steps module)."""
    keys = set()
    for step in PRINTS.steps():
        package = steps.step_module(step).rpartition(".")[0]
        module = importlib.import_module(f"{package}.settings")
        keys |= set(getattr(module, "WORKFLOW_KEYS", {}).get(section, ()))
    return keys


def schema_properties(section: str) -> dict:
    """The properties of config section ``section`` (``ee.homotopy``): a paper's schema file,
    or the main schema's property of that name (``data``)."""
    top, *inner = section.split(".")
    own = SCHEMAS / f"{top}.schema.yaml"
    if own.exists():
        schema = yaml.safe_load(own.read_text())
    else:
        schema = yaml.safe_load((SCHEMAS / "config.schema.yaml").read_text())["properties"][top]
    for key in inner:
        schema = schema["properties"][key]
    return schema["properties"]


def read_by_steps() -> dict[str, set[str]]:
    """config section -> the fields that steps' settings read of it."""
    fields = defaultdict(set)
    for step in PRINTS.steps():
        section, config, _ = PRINTS.settings_spec(step)
        if config:  # a step whose settings are all derived reads no section
            fields[section] |= set(config)
    return fields


@pytest.mark.parametrize("step", PRINTS.steps())
def test_each_settings_field_is_a_property_of_its_section(step):
    section, config, derived = PRINTS.settings_spec(step)
    unknown = set(config) - set(schema_properties(section)) if config else set()
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
