"""numcodecs' compressors (bytes -> bytes): ``numcodecs.zstd``, ``numcodecs.gzip``,
``numcodecs.blosc``, ``numcodecs.zlib``, ``numcodecs.lz4``, ``numcodecs.bz2``, ``numcodecs.lzma``.

Where the codec is a compressor zarrbolt already has in C, the numcodecs form is mapped onto it
(``numcodecs.zstd`` → the zstd codec, ``numcodecs.gzip`` → libdeflate's gzip, ``numcodecs.blosc``
→ c-blosc 1.x / c-blosc2): same format, same fused plans.  ``numcodecs.blosc`` compresses the
chunk's bytes as numcodecs does in Zarr v3 (type size 1 unless ``typesize`` is given; numcodecs'
``shuffle: -1``, AUTOSHUFFLE, is then the bit shuffle).  ``numcodecs.zlib`` (libdeflate) and
``numcodecs.lz4`` (liblz4) have C sides of their own, each an extension module that owns the
codec's fused-plan steps and its partial decoder.  bz2 and lzma are the standard library's (the
same libbz2 / liblzma numcodecs calls: encodes are byte-identical); ``numcodecs.gzip``'s header
holds a time stamp in numcodecs and 0 here.  The configuration is written back as it was given (members left
out take numcodecs' defaults), as zarr-python does.  Decoding is bounded: a chunk never decodes to
more than the chain allows (CorruptChunkError)."""

from __future__ import annotations

import bz2
import lzma
from typing import Any, cast

from ...errors import CodecError, CorruptChunkError, MetadataError
from ..abc import BytesToBytesCodec, ChunkSpec
from ..blosc import BloscCodec
from ..gzip import GzipCodec
from ..registry import register_codec
from ..zstd import ZstdCodec
from .._util import as_bytes_view, config_dict, int_param
from . import KeptConfiguration, check_numcodecs_id


class _Configured(KeptConfiguration, BytesToBytesCodec):
    """A numcodecs compressor whose configuration is kept as given (less ``id``)."""


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


ZSTD_MIN_LEVEL, ZSTD_MAX_LEVEL = -131072, 22  # libzstd's range (ZSTD_minCLevel, ZSTD_maxCLevel)
ZLIB_DEFAULT_COMPRESSION = 6  # what zlib's level -1 (Z_DEFAULT_COMPRESSION) means


@register_codec
class NumcodecsZstd(_Delegating):
    """``numcodecs.zstd``: ``level`` (default 0: zstd's default), ``checksum`` (default false).
    A level outside libzstd's range is read as libzstd takes it, clamped (numcodecs passes any
    level on); a new array gets the clamped level (:meth:`for_writing`)."""

    name = "numcodecs.zstd"
    _members = frozenset({"level", "checksum"})
    inner: ZstdCodec

    def _check(self) -> None:
        level = int_param(self.config.get("level", 0), self.name, "level")
        self.inner = ZstdCodec(max(ZSTD_MIN_LEVEL, min(level, ZSTD_MAX_LEVEL)), self.config.get("checksum", False))

    def for_writing(self) -> tuple[NumcodecsZstd, str | None]:
        level = self.config.get("level", 0)
        if level == self.inner.level:
            return self, None
        note = f"codec {self.name!r}: level {level} is outside zstd's range; written as {self.inner.level}"
        return NumcodecsZstd(**{**self.config, "level": self.inner.level}), note


@register_codec
class NumcodecsGzip(_Delegating):
    """``numcodecs.gzip``: ``level`` 0..9 (default 1); -1, zlib's default, is read as 6, and a new
    array gets 6 (:meth:`for_writing`)."""

    name = "numcodecs.gzip"
    _members = frozenset({"level"})
    inner: GzipCodec

    def _check(self) -> None:
        level = self.config.get("level", 1)
        self.inner = GzipCodec(ZLIB_DEFAULT_COMPRESSION if level == -1 and not isinstance(level, bool) else level)

    def for_writing(self) -> tuple[NumcodecsGzip, str | None]:
        level = self.config.get("level", 1)
        if level == self.inner.level:
            return self, None
        note = f"codec {self.name!r}: level -1 (zlib's default) written as {self.inner.level}"
        return NumcodecsGzip(**{**self.config, "level": self.inner.level}), note


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


# The decoder's memory is bounded by this: the dictionary an xz / lzma-alone header asks for
# (liblzma's memlimit), and the dictionary of a raw stream's filters (from the metadata, checked
# when the codec is made; preset 9 takes 64 MiB).
LZMA_MEMLIMIT = 2**28
LZMA_MAX_DICT = LZMA_MEMLIMIT
_LZMA_MIN_DICT = 4096  # liblzma's LZMA_DICT_SIZE_MIN
# integrity checks liblzma has (CHECK_NONE, CRC32, CRC64, SHA256; -1: the format's default)
_LZMA_CHECKS = (-1, lzma.CHECK_NONE, lzma.CHECK_CRC32, lzma.CHECK_CRC64, lzma.CHECK_SHA256)


@register_codec
class NumcodecsLZMA(_Configured):
    """``numcodecs.lzma``: Python's lzma with numcodecs' members ``format`` (default 1, xz),
    ``check`` (-1: the format's default), ``preset`` (None: 6) and ``filters`` (a list of filter
    objects, as the lzma module takes them).

    Made from metadata, the configuration is checked without building a compressor (whose
    memory is about ten times the dictionary): what liblzma would refuse to encode with (an
    integrity check the format cannot have, a preset beyond 9, preset and filters together,
    format 3 without filters, a filter's options) and an LZMA filter's ``dict_size`` above
    :data:`LZMA_MAX_DICT`.  Decoding never takes more than :data:`LZMA_MEMLIMIT` for the
    dictionary.  An xz or lzma-alone stream names its own filters, so ``filters`` with ``format``
    1 or 2 are ignored when reading (numcodecs cannot decode such chunks; zarrbolt reads them);
    a new array refuses that configuration (:meth:`for_writing`)."""

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
        for f in self.filters or ():
            self._check_filter(f)
        fmt, where = self.format, f"codec {self.name!r}"
        if fmt == lzma.FORMAT_RAW and not self.filters:
            raise MetadataError(f"{where}: format 3 (raw) needs filters")
        if self.filters is not None and self.preset is not None:
            raise MetadataError(f"{where}: give either preset or filters, not both")
        if self.check not in _LZMA_CHECKS or (fmt != lzma.FORMAT_XZ and self.check not in (-1, lzma.CHECK_NONE)):
            raise MetadataError(f"{where}: check {self.check} is not an integrity check that format {fmt} can have")
        if self.preset is not None and self.preset & ~lzma.PRESET_EXTREME > 9:
            raise MetadataError(f"{where}: preset {self.preset} is not 0-9 (optionally with PRESET_EXTREME)")

    def _check_filter(self, f: dict[str, Any]) -> None:
        """One filter's options parsed by the lzma module (no encoder made), and an LZMA
        filter's dictionary bounded."""
        if f.get("id") in (lzma.FILTER_LZMA1, lzma.FILTER_LZMA2) and "dict_size" in f:
            d = f["dict_size"]
            if isinstance(d, bool) or not isinstance(d, int) or not _LZMA_MIN_DICT <= d <= LZMA_MAX_DICT:
                raise MetadataError(f"codec {self.name!r}: a filter's dict_size must be an integer from {_LZMA_MIN_DICT} to "
                                    f"{LZMA_MAX_DICT} (the decoder's memory bound), got {d!r}")
        encode_props = getattr(lzma, "_encode_filter_properties", None)  # (what zipfile uses)
        try:
            if encode_props is not None:
                encode_props(f)
        except (ValueError, TypeError, KeyError, OverflowError, lzma.LZMAError) as e:
            raise MetadataError(f"codec {self.name!r}: filter {f!r}: {e}") from None

    def for_writing(self) -> tuple[NumcodecsLZMA, str | None]:
        """A new array takes only what numcodecs reads back: ``filters`` only with format 3 (raw;
        numcodecs decodes xz and lzma-alone streams with the filters it is given, which liblzma
        refuses), and a raw filter chain the decoder takes (made here: its memory is the
        dictionary's, bounded when the codec was made); MetadataError otherwise."""
        fmt, where = self.format, f"codec {self.name!r}"
        if self.filters is not None and fmt != lzma.FORMAT_RAW:
            raise MetadataError(f"{where}: filters are only written with format 3 (raw): numcodecs decodes format {fmt} "
                                "with them, which fails, so such chunks could not be read back; leave out filters, or "
                                "use format 3")
        if fmt == lzma.FORMAT_RAW:
            try:
                lzma.LZMADecompressor(fmt, None, self.filters)
            except (ValueError, TypeError, KeyError, lzma.LZMAError) as e:
                raise MetadataError(f"{where}: the filter chain {self.filters!r} cannot be decoded: {e}") from None
        return self, None

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        try:
            return lzma.compress(as_bytes_view(data), self.format, self.check, self.preset, self.filters)
        except (ValueError, lzma.LZMAError) as e:
            raise CodecError(f"{self.name}: cannot encode with {self.config}: {e}") from None

    def decode(self, data: Any, spec: ChunkSpec, max_size: int) -> bytes:
        raw = self.format == lzma.FORMAT_RAW
        try:
            # a raw stream: the metadata's filters (their dictionary bounded when the codec was
            # made); else the stream's own, the dictionary it asks for bounded by the memlimit
            d = lzma.LZMADecompressor(self.format, None, self.filters) if raw else \
                lzma.LZMADecompressor(self.format, LZMA_MEMLIMIT)
            out = d.decompress(as_bytes_view(data), max_length=max_size + 1)
        except (lzma.LZMAError, ValueError, EOFError) as e:
            raise CorruptChunkError(f"{self.name}: {e}") from None
        if len(out) > max_size:
            raise CorruptChunkError(f"{self.name}: the stream decodes to more than {max_size} bytes")
        if not d.eof and not raw:
            raise CorruptChunkError(f"{self.name}: the stream is truncated")
        if d.unused_data:
            raise CorruptChunkError(f"{self.name}: {len(d.unused_data)} bytes follow the stream")
        return out


def _deflate_ext() -> Any:
    from ..._ext import _deflate

    return _deflate


def _lz4_ext() -> Any:
    from ..._ext import _lz4

    return _lz4


ZLIB_NAME = "numcodecs.zlib"
ZLIB_DEFAULT_LEVEL = 1  # numcodecs.Zlib's


@register_codec
class ZlibCodec(BytesToBytesCodec):
    """``numcodecs.zlib``: one zlib stream (RFC 1950), as zarr-python 3 writes it
    (``zarr.codecs.numcodecs.Zlib``, numcodecs' ``Zlib`` over Python's zlib module).

    JSON: ``{"name": "numcodecs.zlib", "configuration": {"level": 1}}``; the configuration may be
    empty (numcodecs' default level, 1) and may carry numcodecs' ``"id": "zlib"``.  Levels are
    Python's, -1..9 (-1 is zlib's default, 6).  The C side is libdeflate's zlib functions in
    ``zarrbolt._ext._deflate`` (csrc/codecs/zlib_codec.c), which exports the codec's fused-plan
    steps and its partial decoder.  Stricter than Python's zlib on one point: bytes after the end
    of the stream are corrupt data, not ignored (no writer produces them).

    ``level`` None (not given: numcodecs' default, 1) or -1..9."""

    name = ZLIB_NAME

    def __init__(self, level: int | None = None):
        if level is not None:
            level = int_param(level, ZLIB_NAME, "level", -1, 9)
        self.level = level

    @property
    def effective_level(self) -> int:
        """The compression level used: the configured one, else zlib's default."""
        return ZLIB_DEFAULT_LEVEL if self.level is None else self.level

    @classmethod
    def from_json(cls, configuration: Any) -> ZlibCodec:
        conf = config_dict(configuration, ZLIB_NAME, {"level", "id"})
        check_numcodecs_id(conf, ZLIB_NAME)
        return cls(conf.get("level"))

    def to_json(self) -> dict[str, Any]:
        conf = {} if self.level is None else {"level": self.level}
        return {"name": ZLIB_NAME, "configuration": conf}

    def max_encoded_size(self, decoded_nbytes: int) -> int:
        # zb_zlib_compress_bound: stored blocks' overhead, padding, header and Adler-32
        return decoded_nbytes + 5 * (decoded_nbytes // 1000 + 1) + 64 + 6

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        return cast(bytes, _deflate_ext().zlib_compress(as_bytes_view(data), self.effective_level))

    def decode(self, data: Any, spec: ChunkSpec, max_size: int) -> bytes:
        return cast(bytes, _deflate_ext().zlib_decompress(as_bytes_view(data), max_size))

    # -- codec-owned fused-plan stages
    def c_decode_step(self, spec: ChunkSpec) -> tuple[str, Any, bytes]:
        return ("transform", _deflate_ext().ZLIB_DECODE_STEP, b"")

    def c_encode_step(self, spec: ChunkSpec) -> tuple[str, Any, bytes]:
        m = _deflate_ext()
        return ("transform", m.ZLIB_ENCODE_STEP, m.zlib_encode_params(self.effective_level))

    def c_partial(self, spec: ChunkSpec) -> tuple[str, Any]:
        return ("prefix", _deflate_ext().ZLIB_PREFIX_FN)


LZ4_NAME = "numcodecs.lz4"
LZ4_HEADER = 4
INT32_MAX = 2**31 - 1


@register_codec
class LZ4Codec(BytesToBytesCodec):
    """``numcodecs.lz4``: numcodecs' LZ4 format, a 4-byte little-endian decoded size followed by
    one LZ4 block, as zarr-python 3 writes it (``zarr.codecs.numcodecs.LZ4``).

    JSON: ``{"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}``; the configuration
    may be empty (acceleration 1) and may carry numcodecs' ``"id": "lz4"``.  The C side is
    ``zarrbolt._ext._lz4`` (csrc/codecs/lz4_codec.c, linked with liblz4 or the LZ4 inside
    c-blosc2); it owns its fused-plan steps and its partial decoder (LZ4 stops after the wanted
    prefix).

    ``acceleration`` None (not given: LZ4's default, 1) or an integer; values below 1 mean 1,
    as in LZ4 and numcodecs."""

    name = LZ4_NAME

    def __init__(self, acceleration: int | None = None):
        if acceleration is not None:
            acceleration = int_param(acceleration, LZ4_NAME, "acceleration", -INT32_MAX, INT32_MAX)
        self.acceleration = acceleration

    @property
    def effective_acceleration(self) -> int:
        """The acceleration LZ4 is given: the configured one, 1 when unset or below 1."""
        return 1 if self.acceleration is None or self.acceleration < 1 else self.acceleration

    @classmethod
    def from_json(cls, configuration: Any) -> LZ4Codec:
        conf = config_dict(configuration, LZ4_NAME, {"acceleration", "id"})
        check_numcodecs_id(conf, LZ4_NAME)
        return cls(conf.get("acceleration"))

    def to_json(self) -> dict[str, Any]:
        conf = {} if self.acceleration is None else {"acceleration": self.acceleration}
        return {"name": LZ4_NAME, "configuration": conf}

    def max_encoded_size(self, decoded_nbytes: int) -> int:
        return LZ4_HEADER + decoded_nbytes + decoded_nbytes // 255 + 16  # LZ4_compressBound + header

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        return cast(bytes, _lz4_ext().compress(as_bytes_view(data), self.effective_acceleration))

    def decode(self, data: Any, spec: ChunkSpec, max_size: int) -> bytes:
        return cast(bytes, _lz4_ext().decompress(as_bytes_view(data), max_size))

    # -- codec-owned fused-plan stages
    def c_decode_step(self, spec: ChunkSpec) -> tuple[str, Any, bytes]:
        return ("transform", _lz4_ext().DECODE_STEP, b"")

    def c_encode_step(self, spec: ChunkSpec) -> tuple[str, Any, bytes]:
        m = _lz4_ext()
        return ("transform", m.ENCODE_STEP, m.encode_params(self.effective_acceleration))

    def c_partial(self, spec: ChunkSpec) -> tuple[str, Any]:
        return ("prefix", _lz4_ext().PREFIX_FN)
