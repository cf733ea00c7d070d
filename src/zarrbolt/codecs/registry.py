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


def parse_codec(obj: Any, kind: str | None = None) -> Codec | None:
    """Parse one element of a ``codecs`` list (the short-hand string form or the object form).

    Returns None for an unknown codec marked ``"must_understand": false`` (the caller drops it);
    raises UnknownCodecError for any other unknown codec and MetadataError for malformed JSON.
    A ``numcodecs.<id>`` zarrbolt has no codec of is run by numcodecs where it knows the id
    (:mod:`zarrbolt.codecs.numcodecs.external`), as a codec of ``kind`` (default: bytes -> bytes,
    or array -> bytes for the ids numcodecs' Zarr v3 wrappers run so; :func:`parse_codecs`
    infers it from the codec's place in the list).
    """
    if isinstance(obj, Codec):
        return obj
    name, config, must = parse_extension(obj, "codec", unknown=UnknownCodecError)
    try:
        cls = get_codec_class(name)
    except UnknownCodecError:
        from .numcodecs import external

        if not external.is_external_name(name):
            if not must:
                return None
            raise
        if kind is None:
            kind = external.infer_kinds([name], [None])[0]
        try:
            return external.v3_codec(name, config, kind or "bytes_to_bytes")
        except UnknownCodecError:
            if not must:
                return None
            raise
    return cls.from_json(config)


def _external_kinds(objs: list[Any] | tuple[Any, ...]) -> list[str | None] | None:
    """The kinds of a codecs list's elements, inferred for the ``numcodecs.<id>`` codecs zarrbolt
    has no codec of (numcodecs runs them: see :func:`~zarrbolt.codecs.numcodecs.external.infer_kinds`);
    None when the list has none (the common case: nothing more is parsed)."""
    _ensure_builtins()
    names = [o.name if isinstance(o, Codec) else o if isinstance(o, str)
             else o.get("name") if isinstance(o, dict) else None for o in objs]
    if all(not isinstance(n, str) or n in _REGISTRY or not n.startswith("numcodecs.") for n in names):
        return None
    from .numcodecs.external import infer_kinds

    kinds: list[str | None] = []
    for o, n in zip(objs, names):
        if isinstance(o, Codec):
            kinds.append(o.kind)
        else:
            cls = _REGISTRY.get(n) if isinstance(n, str) else None
            kinds.append(cls.kind if cls is not None else None if isinstance(n, str) else "?")
    return [None if k == "?" else k for k in infer_kinds(list(names), kinds)]


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
    kinds = _external_kinds(objs)
    out = []
    for i, o in enumerate(objs):
        c = parse_codec(o, None if kinds is None else kinds[i])
        if c is not None:
            out.append(c)
    return tuple(out)


def codecs_for_writing(codecs: tuple[Codec, ...]) -> tuple[Codec, ...]:
    """``codecs`` as zarrbolt writes them into the metadata of a new array: each codec's
    :meth:`~zarrbolt.codecs.abc.Codec.for_writing` (also inside a codec holding a chain, such as
    ``sharding_indexed``), with a :class:`~zarrbolt.errors.MetadataNormalizedWarning` for each
    value normalised."""
    import warnings

    from ..errors import MetadataNormalizedWarning

    out = []
    for codec in codecs:
        new, note = codec.for_writing()
        if note is not None:
            warnings.warn(note, MetadataNormalizedWarning, stacklevel=5)  # (create_array's caller)
        doc = None
        for member in ("codecs", "index_codecs"):  # a codec holding chains of codecs
            inner = getattr(new, member, None)
            if isinstance(inner, tuple) and inner and all(isinstance(c, Codec) for c in inner):
                strict = codecs_for_writing(inner)
                if strict != inner:
                    doc = doc or new.to_json()
                    doc["configuration"][member] = [c.to_json() for c in strict]
        if doc is not None:
            rebuilt = parse_codec(doc)
            assert rebuilt is not None
            for attr in ("write_order",):  # runtime settings the JSON does not carry
                if hasattr(new, attr):
                    setattr(rebuilt, attr, getattr(new, attr))
            new = rebuilt
        out.append(new)
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
