"""Typed, frozen settings of one workflow step.

A step (:mod:`embedlab.steps`) is a function of its paths and one settings object: a frozen
dataclass deriving from :class:`Settings`, its fields named as the properties of the config
section the step reads (``workflow/schemas/<paper>.schema.yaml``, the one home of every
default, so the fields have none). The workflow hands a step the values of exactly those
fields, a per-dataset value already resolved for the job's dataset, in one ``params``
entry: a changed setting reruns exactly the jobs whose steps read it.

A class reads the config section of its step's paper (``ee``) unless it names another in
``section: ClassVar[str]`` (``"ee.homotopy"``). A field annotated :data:`Derived` is not a
config property: the workflow computes it from
the config (which own datasets a paper leaves out, say) and names it where the rule calls
the step.

:meth:`Settings.from_mapping` checks the names and the simple types (``float``, ``int``,
``str``, ``bool``, ``tuple[X, ...]``, ``dict``, ``X | None``) and turns lists into tuples and
a mapping given for a field typed as another settings class into that class (a group of
settings, such as a nested config section), so a settings object is immutable and a wrong
value fails before any computation, naming the step and the field.

Imports only the standard library: the workflow reads the field names without the package's
dependencies (:func:`embedlab.codeprint.CodePrints.settings_fields`).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Annotated, Any, TypeVar

_T = TypeVar("_T")

#: marks a field that the workflow derives from the config, not a property of the schema
DERIVED = "derived by the workflow"
Derived = Annotated[_T, DERIVED]


class SettingsError(ValueError):
    """A settings mapping that does not fit its step's settings class."""


def _coerce(value: Any, kind: Any, where: str) -> Any:
    """``value`` checked against the annotation ``kind`` (lists become tuples; an int is a
    valid float); raises SettingsError naming ``where``."""
    origin = typing.get_origin(kind)
    if origin is Annotated:
        return _coerce(value, typing.get_args(kind)[0], where)
    if kind is Any or kind is object:
        return value
    if isinstance(kind, type) and issubclass(kind, Settings):
        return value if isinstance(value, kind) else kind.from_mapping(value, where)
    if kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif kind in (str, bool):
        if isinstance(value, kind):
            return value
    elif origin is tuple or kind is tuple:
        if isinstance(value, (list, tuple)):
            args = typing.get_args(kind)
            if len(args) == 2 and args[1] is Ellipsis:
                return tuple(_coerce(v, args[0], f"{where}[{i}]") for i, v in enumerate(value))
            return tuple(value)
    elif origin is dict or kind is dict:
        if isinstance(value, Mapping):
            return dict(value)
    elif origin in (typing.Union, types.UnionType):
        for option in typing.get_args(kind):
            if option is type(None) and value is None:
                return None
            try:
                return _coerce(value, option, where)
            except SettingsError:
                continue
    else:
        return value
    raise SettingsError(f"{where}: {value!r} is not a {getattr(kind, '__name__', kind)}")


@dataclasses.dataclass(frozen=True)
class Settings:
    """Base of the steps' settings classes (frozen dataclasses, no defaults)."""

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def derived_names(cls) -> tuple[str, ...]:
        """The fields the workflow derives (annotated :data:`Derived`)."""
        hints = typing.get_type_hints(cls, include_extras=True)
        return tuple(
            name
            for name in cls.field_names()
            if typing.get_origin(hints[name]) is Annotated
            and DERIVED in typing.get_args(hints[name])[1:]
        )

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], where: str):
        """The settings ``values`` as this class: every field given, no other key, each of
        its type; ``where`` (the step's name) starts each error message."""
        if not isinstance(values, Mapping):
            raise SettingsError(f"{where}: {values!r} is not a mapping of {cls.__name__}'s fields")
        names = cls.field_names()
        unknown = sorted(set(values) - set(names))
        missing = [name for name in names if name not in values]
        if unknown or missing:
            parts = [
                f"unknown {', '.join(unknown)}" if unknown else "",
                f"missing {', '.join(missing)}" if missing else "",
            ]
            raise SettingsError(
                f"{where}: settings do not fit {cls.__name__} ("
                + "; ".join(p for p in parts if p)
                + f"; its fields: {', '.join(names)})"
            )
        hints = typing.get_type_hints(cls, include_extras=True)
        return cls(**{n: _coerce(values[n], hints[n], f"{where}: {n}") for n in names})


@dataclasses.dataclass(frozen=True)
class LeftOutSettings(Settings):
    """A paper's table step that reads only which own datasets the paper leaves out."""

    left_out: Derived[dict]  # own dataset -> why the paper does not run it
