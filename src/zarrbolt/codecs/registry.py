"""Codec registry: codec names (and aliases) to codec classes, and JSON parsing of codec lists."""

from __future__ import annotations

import threading
from typing import Any

from ..errors import MetadataError, UnknownCodecError
from .abc import Codec

_REGISTRY: dict[str, type[Codec]] = {}

# Codecs hold codecs (``sharding_indexed``'s ``codecs`` and ``index_codecs``); metadata from a
# store could nest them deep enough to exhaust Python's stack.  Lists of codecs are parsed at most
# this many levels deep (MetadataError beyond: see ShardingCodec for codecs made as objects).
MAX_NESTING = 16
_nesting = threading.local()


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
    """A ``codecs`` list (or one codec) parsed; MetadataError beyond MAX_NESTING levels of codecs
    holding codecs."""
    depth = getattr(_nesting, "depth", 0)
    if depth >= MAX_NESTING:
        raise MetadataError(f"codecs nested more than {MAX_NESTING} levels deep (codecs holding codecs, such as "
                            "sharding_indexed)")
    _nesting.depth = depth + 1
    try:
        return _parse_codecs(objs)
    finally:
        _nesting.depth = depth


def _parse_codecs(objs: Any) -> tuple[Codec, ...]:
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
