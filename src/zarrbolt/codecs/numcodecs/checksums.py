"""numcodecs' checksums (bytes -> bytes): ``numcodecs.crc32``, ``numcodecs.crc32c``,
``numcodecs.adler32``, ``numcodecs.fletcher32``, ``numcodecs.jenkins_lookup3``: 4 bytes of the
data's checksum before or after it.  CRC-32 and Adler-32 are the standard library's (the zlib
numcodecs calls), CRC-32C, Fletcher-32 and lookup3 zarrbolt's C kernels.  Checksums that differ
raise ChecksumError; the configuration is written back as it was given."""

from __future__ import annotations

import zlib
from typing import Any

from ...errors import ChecksumError, CorruptChunkError, MetadataError
from ..abc import BytesToBytesCodec, ChunkSpec
from ..registry import register_codec
from .._util import as_bytes_view, int_param
from . import KeptConfiguration


class _Checksum32(KeptConfiguration, BytesToBytesCodec):
    """numcodecs' 32-bit checksums: 4 little-endian bytes before the data (``location``
    "start", the default) or after it ("end")."""

    _members = frozenset({"location"})
    _where = "start"

    def _check(self) -> None:
        loc = self.config.get("location", self._where)
        if loc not in ("start", "end"):
            raise MetadataError(f"codec {self.name!r}: location must be 'start' or 'end', got {loc!r}")
        self.location = loc

    def _sum(self, data: memoryview) -> int:
        raise NotImplementedError

    def encoded_size(self, decoded_nbytes: int) -> int:
        return decoded_nbytes + 4

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        mv = as_bytes_view(data)
        tag = (self._sum(mv) & 0xFFFFFFFF).to_bytes(4, "little")
        return tag + bytes(mv) if self.location == "start" else bytes(mv) + tag

    def decode(self, data: Any, spec: ChunkSpec, max_size: int) -> memoryview:
        mv = as_bytes_view(data)
        if len(mv) < 4:
            raise CorruptChunkError(f"{self.name}: {len(mv)} bytes is too short to hold a checksum")
        if len(mv) - 4 > max_size:
            raise CorruptChunkError(f"{self.name}: {len(mv) - 4} bytes of data, at most {max_size} expected")
        body, tag = (mv[4:], mv[:4]) if self.location == "start" else (mv[:-4], mv[-4:])
        stored, actual = int.from_bytes(tag, "little"), self._sum(body) & 0xFFFFFFFF
        if stored != actual:
            raise ChecksumError(f"{self.name} mismatch: stored {stored:#010x}, computed {actual:#010x}")
        return body


@register_codec
class NumcodecsCRC32(_Checksum32):
    name = "numcodecs.crc32"

    def _sum(self, data: memoryview) -> int:
        return zlib.crc32(data)


@register_codec
class NumcodecsCRC32C(_Checksum32):
    """``numcodecs.crc32c``: CRC-32C (zarrbolt's C kernel), last by default (numcodecs')."""

    name = "numcodecs.crc32c"
    _where = "end"

    def _sum(self, data: memoryview) -> int:
        from ... import kernels

        return kernels.crc32c(data)


@register_codec
class NumcodecsAdler32(_Checksum32):
    name = "numcodecs.adler32"

    def _sum(self, data: memoryview) -> int:
        return zlib.adler32(data)


@register_codec
class NumcodecsFletcher32(_Checksum32):
    """``numcodecs.fletcher32``: HDF5's Fletcher-32 of the data read as big-endian 16-bit words
    (an odd last byte padded with zero), appended (numcodecs has no ``location`` for it)."""

    name = "numcodecs.fletcher32"
    _members = frozenset()
    _where = "end"

    def _sum(self, data: memoryview) -> int:
        return fletcher32(data)


def fletcher32(data: Any) -> int:
    """HDF5's Fletcher-32 (``H5_checksum_fletcher32``; C: csrc/checksum32.c)."""
    from ..._ext import _checksum32

    return _checksum32.fletcher32(as_bytes_view(data))


@register_codec
class NumcodecsJenkinsLookup3(_Checksum32):
    """``numcodecs.jenkins_lookup3``: Bob Jenkins' lookup3 hash of the data with ``initval``
    (default 0), appended.  numcodecs' ``prefix`` (bytes hashed before the data) has no JSON form
    and must be null."""

    name = "numcodecs.jenkins_lookup3"
    _members = frozenset({"initval", "prefix"})
    _where = "end"

    def _check(self) -> None:
        self.location = "end"
        self.initval = int_param(self.config.get("initval", 0), self.name, "initval", 0, 2**32 - 1)
        if self.config.get("prefix") is not None:
            raise MetadataError(f"codec {self.name!r}: a prefix is not supported, got {self.config['prefix']!r}")

    def _sum(self, data: memoryview) -> int:
        from ..._ext import _checksum32

        return _checksum32.jenkins_lookup3(data, self.initval)
