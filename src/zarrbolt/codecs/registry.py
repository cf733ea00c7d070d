"""Codec registry: codec names (and aliases) to codec classes, and JSON parsing of codec lists."""

from __future__ import annotations

from typing import Any

from ..errors import MetadataError, UnknownCodecError
from .abc import Codec

_REGISTRY: dict[str, type[Codec]] = {}


def register_codec(cls: type[Codec]) -> type[Codec]:
    """Register ``cls`` under its ``name`` and ``aliases`` (usable as a class decorator)."""
    for n in (cls.name, *cls.aliases):
        _REGISTRY[n] = cls
    return cls


def get_codec_class(name: str) -> type[Codec]:
    _ensure_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownCodecError(f"unknown codec {name!r}; known codecs: {sorted(_REGISTRY)}") from None


def registered_codecs() -> list[str]:
    _ensure_builtins()
    return sorted(_REGISTRY)


def parse_codec(obj: Any) -> Codec | None:
    """Parse one element of a ``codecs`` list.

    Accepts the short-hand string form (``"bytes"``) and the object form.  Returns None for an
    unknown codec marked ``"must_understand": false`` (the caller drops it); raises
    UnknownCodecError for any other unknown codec and MetadataError for malformed JSON.
    """
    if isinstance(obj, Codec):
        return obj
    if isinstance(obj, str):
        return get_codec_class(obj).from_json(None)
    if not isinstance(obj, dict):
        raise MetadataError(f"a codec must be a string or an object, got {obj!r}")
    extra = set(obj) - {"name", "configuration", "must_understand"}
    if extra:
        raise MetadataError(f"codec {obj.get('name')!r} has unexpected members {sorted(extra)}")
    name = obj.get("name")
    if not isinstance(name, str):
        raise MetadataError(f"codec object needs a string 'name', got {obj!r}")
    must = obj.get("must_understand", True)
    if not isinstance(must, bool):
        raise MetadataError(f"codec {name!r}: 'must_understand' must be a boolean")
    config = obj.get("configuration")
    if config is not None and not isinstance(config, dict):
        raise MetadataError(f"codec {name!r}: 'configuration' must be an object")
    try:
        cls = get_codec_class(name)
    except UnknownCodecError:
        if must is False:
            return None
        raise
    return cls.from_json(config)


def parse_codecs(objs: Any) -> tuple[Codec, ...]:
    if isinstance(objs, (str, dict, Codec)):
        objs = [objs]
    if not isinstance(objs, (list, tuple)):
        raise MetadataError(f"'codecs' must be a list, got {type(objs).__name__}")
    out = []
    for o in objs:
        c = parse_codec(o)
        if c is not None:
            out.append(c)
    return tuple(out)


_loaded = False


def _ensure_builtins() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        from . import _builtin  # noqa: F401  (imports every built-in codec module)
