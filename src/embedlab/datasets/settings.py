"""Settings of the data steps (fetch a raw file, build an artifact): fields named as the
properties of the config's ``data`` section (``workflow/schemas/config.schema.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from embedlab.settings import Derived, Settings

#: properties the workflow reads itself: the mirror folders reach a fetch job through the
#: environment (EMBEDLAB_MIRRORS), not as a setting: a raw file's identity is its sha256, so
#: adding or moving a mirror reruns nothing
WORKFLOW_KEYS = {"data": {"mirror"}}


@dataclass(frozen=True)
class FetchSettings(Settings):
    """One registry file: where the registry is, whether downloading is allowed."""

    section: ClassVar[str] = "data"

    registry: str
    offline: bool


@dataclass(frozen=True)
class BuildSettings(Settings):
    """One registry dataset: the registry, the raw files' folder, the config's overrides of
    its builder's parameters (``datasets.overrides.<name>``)."""

    section: ClassVar[str] = "data"

    registry: str
    raw_dir: str
    overrides: Derived[dict]


@dataclass(frozen=True)
class OwnFetchSettings(Settings):
    """One own dataset given by url: its checked ``own_datasets`` entry."""

    section: ClassVar[str] = "data"

    offline: bool
    entry: Derived[dict]


@dataclass(frozen=True)
class OwnBuildSettings(Settings):
    """One own dataset: its checked ``own_datasets`` entry."""

    entry: Derived[dict]
