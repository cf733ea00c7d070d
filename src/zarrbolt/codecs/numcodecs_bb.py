"""The bytes -> bytes ``numcodecs.*`` codecs zarr-python 3 writes (``zarr.codecs.numcodecs``):
``numcodecs.bz2``, ``numcodecs.zstd``, ``numcodecs.gzip``, ``numcodecs.blosc``,
``numcodecs.lzma``, ``numcodecs.shuffle``, ``numcodecs.crc32``, ``numcodecs.crc32c``,
``numcodecs.adler32``, ``numcodecs.fletcher32``, ``numcodecs.jenkins_lookup3``.

JSON: ``{"name": "numcodecs.<id>", "configuration": {...}}`` with numcodecs' own configuration
(members left out take numcodecs' defaults; numcodecs' ``"id"`` may be present and must name the
codec).  The configuration is written back as it was given, as zarr-python does.

Where the codec is a compressor zarrbolt already has in C, the numcodecs form is mapped onto it
(``numcodecs.zstd`` → the zstd codec, ``numcodecs.gzip`` → libdeflate's gzip, ``numcodecs.blosc``
→ c-blosc 1.x / c-blosc2): same format, same fused plans.  ``numcodecs.blosc`` compresses the
chunk's bytes as numcodecs does in Zarr v3 (type size 1 unless ``typesize`` is given; numcodecs'
``shuffle: -1``, AUTOSHUFFLE, is then the bit shuffle).  bz2, lzma, CRC-32 and Adler-32 are the
standard library's (the same libbz2 / liblzma / zlib numcodecs calls: encodes are byte-identical;
gzip's header holds a time stamp in numcodecs and 0 here).  Decoding is bounded: a chunk never
decodes to more than the chain allows (CorruptChunkError), checksums that differ raise
ChecksumError.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from typing import Any

import numpy as np

from ..errors import ChecksumError, CorruptChunkError, MetadataError
from .abc import BytesToBytesCodec, ChunkSpec
from .blosc import BloscCodec
from .gzip import GzipCodec
from .zstd import ZstdCodec
from .registry import register_codec
from ._numcodecs import KeptConfiguration
from ._util import as_bytes_view, int_param


class _Configured(KeptConfiguration, BytesToBytesCodec):
    """A numcodecs bytes -> bytes codec whose configuration is kept as given (less ``id``)."""


class _Delegating(_Configured):
    """A numcodecs compressor run by one of zarrbolt's compressor codecs (``self.inner``)."""

    inner: BytesToBytesCodec

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        return self.inner.encode(data, spec)

    def decode(self, data: Any, spec: ChunkSpec, max_size: int) -> Any:
        return self.inner.decode(data, spec, max_size)

    def max_encoded_size(self, decoded_nbytes: int) -> int:
        return self.inner.max_encoded_size(decoded_nbytes)

    def c_decode_step(self, spec: ChunkSpec) -> Any:
        return self.inner.c_decode_step(spec)

    def c_encode_step(self, spec: ChunkSpec) -> Any:
        return self.inner.c_encode_step(spec)

    def c_partial(self, spec: ChunkSpec) -> Any:
        return self.inner.c_partial(spec)


@register_codec
class NumcodecsZstd(_Delegating):
    """``numcodecs.zstd``: ``level`` (default 0: zstd's default), ``checksum`` (default false)."""

    name = "numcodecs.zstd"
    _members = frozenset({"level", "checksum"})

    def _check(self) -> None:
        self.inner = ZstdCodec(self.config.get("level", 0), self.config.get("checksum", False))


@register_codec
class NumcodecsGzip(_Delegating):
    """``numcodecs.gzip``: ``level`` 0..9 (default 1)."""

    name = "numcodecs.gzip"
    _members = frozenset({"level"})

    def _check(self) -> None:
        self.inner = GzipCodec(self.config.get("level", 1))


_BLOSC_SHUFFLE = {-1: None, 0: "noshuffle", 1: "shuffle", 2: "bitshuffle"}


@register_codec
class NumcodecsBlosc(_Delegating):
    """``numcodecs.blosc``: ``cname`` (default lz4), ``clevel`` (5), ``shuffle`` (numcodecs'
    integers: -1 auto, 0 none, 1 byte, 2 bit; default 1), ``blocksize`` (0: automatic) and
    ``typesize`` (default: 1, the item size of the bytes numcodecs is given in Zarr v3)."""

    name = "numcodecs.blosc"
    _members = frozenset({"cname", "clevel", "shuffle", "blocksize", "typesize"})

    def _check(self, item_size: int = 1) -> None:
        c = self.config
        shuffle = c.get("shuffle", 1)
        if isinstance(shuffle, bool) or shuffle not in _BLOSC_SHUFFLE:
            raise MetadataError(f"codec {self.name!r}: shuffle must be -1, 0, 1 or 2, got {shuffle!r}")
        typesize = c.get("typesize")
        typesize = item_size if typesize is None else int_param(typesize, self.name, "typesize", 1, 255)
        name = _BLOSC_SHUFFLE[shuffle] or ("bitshuffle" if typesize == 1 else "shuffle")
        self.inner = BloscCodec(c.get("cname", "lz4"), c.get("clevel", 5), name, min(typesize, 255),
                                c.get("blocksize", 0))

    def for_item_size(self, item_size: int) -> NumcodecsBlosc:
        """This codec as numcodecs runs it on an array of ``item_size``-byte items (Zarr v2's
        ``blosc`` compressor: the type size, and AUTOSHUFFLE's choice, follow the array's item
        size); its JSON is unchanged."""
        out = NumcodecsBlosc(**self.config)
        out._check(item_size)
        return out


@register_codec
class NumcodecsBZ2(_Configured):
    """``numcodecs.bz2``: ``level`` 1..9 (default 1); one bzip2 stream."""

    name = "numcodecs.bz2"
    _members = frozenset({"level"})

    def _check(self) -> None:
        self.level = int_param(self.config.get("level", 1), self.name, "level", 1, 9)

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        return bz2.compress(as_bytes_view(data), self.level)

    def decode(self, data: Any, spec: ChunkSpec, max_size: int) -> bytes:
        d = bz2.BZ2Decompressor()
        try:
            out = d.decompress(as_bytes_view(data), max_length=max_size + 1)
        except (OSError, ValueError, EOFError) as e:
            raise CorruptChunkError(f"{self.name}: {e}") from None
        if len(out) > max_size:
            raise CorruptChunkError(f"{self.name}: the stream decodes to more than {max_size} bytes")
        if not d.eof:
            raise CorruptChunkError(f"{self.name}: the stream is truncated")
        if d.unused_data:
            raise CorruptChunkError(f"{self.name}: {len(d.unused_data)} bytes follow the bzip2 stream")
        return out


# the decoder's memory (the dictionary an xz header asks for) is bounded by this
LZMA_MEMLIMIT = 2**28


@register_codec
class NumcodecsLZMA(_Configured):
    """``numcodecs.lzma``: Python's lzma with numcodecs' members ``format`` (default 1, xz),
    ``check`` (-1: the format's default), ``preset`` (None: 6) and ``filters`` (a list of filter
    objects, as the lzma module takes them)."""

    name = "numcodecs.lzma"
    _members = frozenset({"format", "check", "preset", "filters"})

    def _check(self) -> None:
        c = self.config
        self.format = int_param(c.get("format", 1), self.name, "format", 1, 3)
        self.check = int_param(c.get("check", -1), self.name, "check", -1, 15)
        preset = c.get("preset")
        self.preset = None if preset is None else int_param(preset, self.name, "preset", 0, 2**32 - 1)
        self.filters = c.get("filters")
        if self.filters is not None and not (isinstance(self.filters, list)
                                             and all(isinstance(f, dict) for f in self.filters)):
            raise MetadataError(f"codec {self.name!r}: filters must be a list of objects, got {self.filters!r}")
        try:
            lzma.LZMACompressor(self.format, self.check, self.preset, self.filters)
        except (ValueError, TypeError, KeyError, lzma.LZMAError) as e:
            raise MetadataError(f"codec {self.name!r}: {e}") from None

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        return lzma.compress(as_bytes_view(data), self.format, self.check, self.preset, self.filters)

    def decode(self, data: Any, spec: ChunkSpec, max_size: int) -> bytes:
        limit = None if self.format == lzma.FORMAT_RAW else LZMA_MEMLIMIT
        try:
            d = lzma.LZMADecompressor(self.format, limit, self.filters)
            out = d.decompress(as_bytes_view(data), max_length=max_size + 1)
        except (lzma.LZMAError, ValueError, EOFError) as e:
            raise CorruptChunkError(f"{self.name}: {e}") from None
        if len(out) > max_size:
            raise CorruptChunkError(f"{self.name}: the stream decodes to more than {max_size} bytes")
        if not d.eof and self.format != lzma.FORMAT_RAW:
            raise CorruptChunkError(f"{self.name}: the stream is truncated")
        if d.unused_data:
            raise CorruptChunkError(f"{self.name}: {len(d.unused_data)} bytes follow the stream")
        return out


@register_codec
class NumcodecsShuffle(_Configured):
    """``numcodecs.shuffle``: the bytes of ``elementsize``-byte elements (default 4) grouped by
    position (all first bytes, then all second bytes, ...); the chunk's size must be a multiple
    of it."""

    name = "numcodecs.shuffle"
    _members = frozenset({"elementsize"})

    def _check(self) -> None:
        self.elementsize = int_param(self.config.get("elementsize", 4), self.name, "elementsize", 0, 2**31 - 1)

    def with_array_dtype(self, itemsize: int) -> NumcodecsShuffle:
        """As zarr-python: an ``elementsize`` left out is the array's item size at creation."""
        if "elementsize" in self.config:
            return self
        return NumcodecsShuffle(**self.config, elementsize=itemsize)

    def encoded_size(self, decoded_nbytes: int) -> int:
        return decoded_nbytes

    def _split(self, data: Any) -> np.ndarray | None:
        a = np.frombuffer(as_bytes_view(data), np.uint8)
        if self.elementsize <= 1:
            return None
        if a.size % self.elementsize:
            raise CorruptChunkError(f"{self.name}: {a.size} bytes are not whole elements of {self.elementsize}")
        return a

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        a = self._split(data)
        if a is None:
            return bytes(as_bytes_view(data))
        return np.ascontiguousarray(a.reshape(-1, self.elementsize).T).reshape(-1).data

    def decode(self, data: Any, spec: ChunkSpec, max_size: int) -> Any:
        a = self._split(data)
        if a is None:
            return as_bytes_view(data)
        return np.ascontiguousarray(a.reshape(self.elementsize, -1).T).reshape(-1).data


class _Checksum32(_Configured):
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
        from .. import kernels

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
    from .._ext import _checksum32

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
        from .._ext import _checksum32

        return _checksum32.jenkins_lookup3(data, self.initval)
