"""The configuration reference of the docs site: every setting of the workflow's schemas
(``workflow/schemas/*.schema.yaml``) with its type, default and description, one table per
schema (the ``{{ config_reference }}`` placeholder of :mod:`embedlab.docs`)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import yaml

from embedlab.docs_layout import markdown_table, table_cell

#: the order of the schemas in the configuration reference (others follow by name)
SCHEMA_ORDER = ["config", "snest", "tste", "dcode", "diffeomap", "ee", "scale", "datasets"]


def _resolve(node: dict, root: dict) -> dict:
    """``node`` with a local ``$ref`` merged in (the node's own keys win)."""
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 10:
        ref = node["$ref"]
        if ref.startswith("#/"):
            target = root
            for part in ref[2:].split("/"):
                target = target[part]
        else:  # another schema file beside this one
            other = Path(root.get("$base", ".")) / ref
            if not other.is_file():
                break
            target = yaml.safe_load(other.read_text())
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        seen += 1
    return node


def _type(node: dict, root: dict) -> str:
    if "const" in node:
        return f"`{node['const']}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{v}`" for v in node["enum"])
    if "oneOf" in node or "anyOf" in node:
        options = node.get("oneOf", node.get("anyOf"))
        return " or ".join(_type(_resolve(o, root), root) for o in options)
    kind = node.get("type", "")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    if kind == "array" and isinstance(node.get("items"), dict):
        return f"array of {_type(_resolve(node['items'], root), root) or 'values'}"
    if kind == "object" or "properties" in node:
        if isinstance(node.get("additionalProperties"), dict) and not node.get("properties"):
            inner = _type(_resolve(node["additionalProperties"], root), root)
            return f"mapping of name to {inner or 'values'}"
        return "object"
    return kind or "any"


def _text(value) -> str:
    return " ".join(str(value).split())


def _default(node: dict) -> str:
    if "default" not in node:
        return ""
    return f"`{json.dumps(node['default'], sort_keys=True)}`"


def _settings(node: dict, root: dict, prefix: str, depth: int = 0) -> list[dict]:
    rows = []
    required = set(node.get("required", ()))
    for name, child in node.get("properties", {}).items():
        child = _resolve(child, root)
        key = f"{prefix}.{name}" if prefix else name
        rows.append(
            {
                "setting": f"`{key}`",
                "type": _type(child, root),
                "default": _default(child) or ("required" if name in required else ""),
                "description": table_cell(_text(child.get("description", ""))),
            }
        )
        if depth < 4:
            rows += _settings(child, root, key, depth + 1)
            extra = child.get("additionalProperties")
            if isinstance(extra, dict) and not child.get("properties"):
                rows += _settings(_resolve(extra, root), root, f"{key}.<name>", depth + 1)
    return rows


def config_reference(schemas: Path) -> str:
    """Every setting of the workflow's schemas, one table per schema."""
    paths = {p.name.split(".")[0]: p for p in Path(schemas).glob("*.schema.yaml")}
    order = [n for n in SCHEMA_ORDER if n in paths] + sorted(set(paths) - set(SCHEMA_ORDER))
    out = io.StringIO()
    for name in order:
        root = {**yaml.safe_load(paths[name].read_text()), "$base": str(schemas)}
        section = {"config": "top level", "datasets": "the dataset registry"}.get(name)
        out.write(f"## `{name}`: {section}\n\n" if section else f"## `{name}`\n\n")
        out.write(f"Schema: `workflow/schemas/{paths[name].name}`.")
        if root.get("description"):
            out.write(f" {_text(root['description'])}")
        out.write("\n\n")
        rows = _settings(root, root, "" if name in ("config", "datasets") else name)
        if rows:
            out.write(markdown_table(pd.DataFrame(rows)))
        out.write("\n")
    return out.getvalue()
