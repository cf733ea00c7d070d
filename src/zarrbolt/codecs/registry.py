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
    """Parse one element of a ``codecs`` list (the short-hand string form or the object form).

    Returns None for an unknown codec marked ``"must_understand": false`` (the caller drops it);
    raises UnknownCodecError for any other unknown codec and MetadataError for malformed JSON.
    """
    if isinstance(obj, Codec):
        return obj
    name, config, must = parse_extension(obj, "codec", unknown=UnknownCodecError)
    try:
        cls = get_codec_class(name)
    except UnknownCodecError:
        if not must:
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


# Imported last: importing metadata runs metadata/__init__, whose nodes module imports this one
# (by then complete up to here).
from ..metadata._ext_obj import parse_extension  # noqa: E402
