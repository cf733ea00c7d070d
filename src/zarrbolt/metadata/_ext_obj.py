"""Helpers for extension objects (``{"name": ..., "configuration": {...}}`` or a short-hand name)."""

from __future__ import annotations

import re
from typing import Any

from ..errors import MetadataError

# Registered names (core spec, "Extension naming"); URIs are still accepted for old extensions.
_NAME_RE = re.compile(r"^[a-z][a-z0-9\-_.]+$")
_URI_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:\S+$")


def valid_extension_name(name: str) -> bool:
    return bool(_NAME_RE.match(name) or _URI_RE.match(name))


def split_extension(obj: Any, what: str) -> tuple[str, dict[str, Any], bool]:
    """``(name, configuration, must_understand)`` of an extension object or short-hand name."""
    if isinstance(obj, str):
        name, conf, must = obj, {}, True
    elif isinstance(obj, dict):
        name = obj.get("name")
        if not isinstance(name, str):
            raise MetadataError(f"{what}: an extension object needs a string 'name', got {obj!r}")
        conf = obj.get("configuration", {})
        if not isinstance(conf, dict):
            raise MetadataError(f"{what} {name!r}: 'configuration' must be an object, got {conf!r}")
        must = obj.get("must_understand", True)
        if not isinstance(must, bool):
            raise MetadataError(f"{what} {name!r}: 'must_understand' must be a boolean, got {must!r}")
        extra = set(obj) - {"name", "configuration", "must_understand"}
        if extra:
            raise MetadataError(f"{what} {name!r}: unexpected members {sorted(extra)}")
    else:
        raise MetadataError(f"{what} must be a name or an extension object, got {obj!r}")
    if not valid_extension_name(name):
        raise MetadataError(f"{what}: {name!r} is not a valid extension name")
    return name, conf, must


def check_config_keys(conf: dict[str, Any], allowed: set[str], what: str) -> None:
    extra = set(conf) - allowed
    if extra:
        raise MetadataError(f"{what}: unknown configuration members {sorted(extra)}")
