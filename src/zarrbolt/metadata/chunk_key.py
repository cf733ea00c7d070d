"""Chunk key encodings ``default`` and ``v2`` (``chunk-key-encoding-*.rst``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import MetadataError
from ._ext_obj import config_members, parse_extension


class _SeparatorEncoding:
    name: str
    default_separator: str
    __slots__ = ("separator",)

    def __init__(self, separator: str | None = None):
        separator = self.default_separator if separator is None else separator
        if separator not in ("/", "."):
            raise MetadataError(f"chunk key encoding {self.name!r}: separator must be '/' or '.', got {separator!r}")
        self.separator = separator

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": {"separator": self.separator}}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.separator == self.separator

    def __hash__(self) -> int:
        return hash((self.name, self.separator))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(separator={self.separator!r})"

    @staticmethod
    def _parse_ints(parts: Sequence[str], key: str) -> tuple[int, ...]:
        out = []
        for p in parts:
            if not p.isascii() or not p.isdigit() or (len(p) > 1 and p[0] == "0"):
                raise MetadataError(f"{key!r} is not a chunk key")
            out.append(int(p))
        return tuple(out)


class DefaultChunkKeyEncoding(_SeparatorEncoding):
    """``c`` followed by ``<sep><index>`` per dimension; a 0-d array's single chunk is ``c``."""

    name = "default"
    default_separator = "/"
    __slots__ = ()

    def encode_chunk_key(self, coords: Sequence[int]) -> str:
        if not len(coords):
            return "c"
        s = self.separator
        return "c" + s + s.join(map(str, map(int, coords)))

    def decode_chunk_key(self, key: str) -> tuple[int, ...]:
        if key == "c":
            return ()
        if not key.startswith("c" + self.separator):
            raise MetadataError(f"{key!r} is not a chunk key")
        return self._parse_ints(key[2:].split(self.separator), key)


class V2ChunkKeyEncoding(_SeparatorEncoding):
    """Indices joined by the separator; a 0-d array's single chunk is ``0``."""

    name = "v2"
    default_separator = "."
    __slots__ = ()

    def encode_chunk_key(self, coords: Sequence[int]) -> str:
        if len(coords) == 0:
            return "0"
        return self.separator.join(map(str, map(int, coords)))

    def decode_chunk_key(self, key: str) -> tuple[int, ...]:
        return self._parse_ints(key.split(self.separator), key)


_ENCODINGS: dict[str, type[DefaultChunkKeyEncoding] | type[V2ChunkKeyEncoding]] = {
    "default": DefaultChunkKeyEncoding, "v2": V2ChunkKeyEncoding}


def parse_chunk_key_encoding(obj: Any) -> DefaultChunkKeyEncoding | V2ChunkKeyEncoding:
    if isinstance(obj, (DefaultChunkKeyEncoding, V2ChunkKeyEncoding)):
        return obj
    name, conf, _ = parse_extension(obj, "chunk_key_encoding", ignorable=False)
    cls = _ENCODINGS.get(name)
    if cls is None:
        raise MetadataError(f"unsupported chunk key encoding {name!r} (supported: {sorted(_ENCODINGS)})")
    config_members(conf, {"separator"}, "chunk_key_encoding", name)
    return cls(conf.get("separator"))
