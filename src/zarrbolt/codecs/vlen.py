"""``vlen-utf8`` and ``vlen-bytes`` (array -> bytes): numcodecs' variable-length format, as
zarr-python writes it for the ``string`` and ``variable_length_bytes`` data types (v3) and for
``|O`` arrays with the ``{"id": "vlen-utf8"}`` / ``{"id": "vlen-bytes"}`` filter (v2).

The bytes: a 4-byte little-endian item count, then per item (C order) a 4-byte little-endian
byte length and the item's bytes (UTF-8 for ``vlen-utf8``).  Decoding trusts nothing: the count
must be the chunk's element count, every length must fit in what is left, nothing may follow
the last item, and ``vlen-utf8`` items must be valid UTF-8; anything else is a
:class:`~zarrbolt.errors.CorruptChunkError`, found before anything is allocated from a size in
the data.

The work is C (``zarrbolt._ext._vlen``, csrc/vlen.c).  ``string`` arrays decode to numpy's
``StringDType`` (numpy >= 2: zarr-python's choice) straight from the bytes, without the GIL and
without a Python object per item; object arrays (``variable_length_bytes``, or ``string`` on
numpy 1.x) need the GIL to make their objects.  Without the extension (numpy 1.x) a Python form
of the same rules runs.
"""

from __future__ import annotations

import math
import struct
from typing import Any, Literal

import numpy as np

from ..errors import CodecError, CorruptChunkError, MetadataError
from .abc import ArrayToBytesCodec, ChunkSpec
from .registry import register_codec
from ._util import as_bytes_view, config_dict

# The largest encoded chunk the next codec of the chain may decode to (its ``max_size``): the
# format has no size bound of its own (4 GiB per item); numcodecs' chunks stay under 2 GiB.
MAX_CHUNK_BYTES = 2**31 - 1

try:
    from .._ext import _vlen
except ImportError:  # numpy 1.x, or the extension not built
    _vlen = None  # type: ignore[assignment]


def _items(spec: ChunkSpec) -> int:
    return math.prod(spec.shape)


class _VLenCodec(ArrayToBytesCodec):
    _kinds: tuple[str, ...] = ()  # the data type kinds this codec serialises
    _item: Literal["str", "bytes"]  # "str" or "bytes"

    def __init__(self) -> None:
        pass

    @classmethod
    def from_json(cls, configuration: Any) -> _VLenCodec:
        config_dict(configuration, cls.name, set())
        return cls()

    @classmethod
    def from_v2_config(cls, config: Any) -> _VLenCodec:
        """The codec of a Zarr v2 filter object ``{"id": "vlen-utf8"}``."""
        if not isinstance(config, dict) or config.get("id") != cls.name or set(config) != {"id"}:
            raise MetadataError(f"filter {config!r} is not {{'id': {cls.name!r}}}")
        return cls()

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": {}}

    def to_v2_config(self) -> dict[str, Any]:
        return {"id": self.name}

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if spec.dtype.kind not in self._kinds:
            raise MetadataError(f"codec {self.name!r} does not serialise the data type {spec.dtype}")
        return spec

    def max_encoded_size_for(self, spec: ChunkSpec) -> int:
        return MAX_CHUNK_BYTES

    def max_encoded_size(self, decoded_nbytes: int) -> int:
        return MAX_CHUNK_BYTES

    def _decode_kind(self, spec: ChunkSpec) -> Literal["str", "bytes", "stringdtype"]:
        if self._item == "str" and spec.dtype.numpy_dtype.kind == "T":
            return "stringdtype"
        return self._item

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        mv = as_bytes_view(data)
        n = _items(spec)
        kind = self._decode_kind(spec)
        if _vlen is not None:
            try:
                flat = _vlen.decode(mv, n, kind)
            except UnicodeDecodeError as e:  # (the C check runs first; kept for safety)
                raise CorruptChunkError(f"{self.name}: an item is not valid UTF-8 ({e})") from None
        else:
            flat = _py_decode(mv, n, self._item, self.name)
            if kind == "stringdtype":
                flat = flat.astype(spec.dtype.numpy_dtype)
        return flat.reshape(spec.shape)

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> bytes:
        a = np.ascontiguousarray(array).reshape(-1)
        try:
            if a.dtype.kind == "T" and _vlen is not None:
                return _vlen.encode_strings(a)
            if a.dtype.kind != "O":
                a = a.astype(object)
            if _vlen is not None:
                return _vlen.encode_objects(a, self._item)
            return _py_encode(a, self._item, self.name)
        except TypeError as e:
            raise CodecError(str(e)) from None


@register_codec
class VLenUTF8Codec(_VLenCodec):
    """``vlen-utf8``: variable-length text (the ``string`` data type)."""

    name = "vlen-utf8"
    _kinds = ("string",)
    _item = "str"


@register_codec
class VLenBytesCodec(_VLenCodec):
    """``vlen-bytes``: variable-length bytes (the ``variable_length_bytes`` data type)."""

    name = "vlen-bytes"
    _kinds = ("vbytes",)
    _item = "bytes"


_U32 = struct.Struct("<I")


def _py_decode(mv: memoryview, n: int, item: str, name: str) -> np.ndarray:
    """The rules of the C form, in Python (numpy 1.x)."""
    size = len(mv)
    if size < 4:
        raise CorruptChunkError(f"{name}: a chunk of {size} bytes has no item count")
    count = _U32.unpack_from(mv, 0)[0]
    if count != n:
        raise CorruptChunkError(f"{name}: the chunk holds {count} items, it has {n} elements")
    if (size - 4) // 4 < n:
        raise CorruptChunkError(f"{name}: {size} bytes cannot hold {n} items")
    out = np.empty(n, dtype=object)
    pos = 4
    raw = bytes(mv)
    for i in range(n):
        if size - pos < 4:
            raise CorruptChunkError(f"{name}: item {i} runs past the end of the chunk")
        m = _U32.unpack_from(raw, pos)[0]
        pos += 4
        if size - pos < m:
            raise CorruptChunkError(f"{name}: item {i} ({m} bytes) runs past the end of the chunk")
        b = raw[pos:pos + m]
        pos += m
        if item == "str":
            try:
                out[i] = b.decode("utf-8")
            except UnicodeDecodeError:
                raise CorruptChunkError(f"{name}: item {i} is not valid UTF-8") from None
        else:
            out[i] = b
    if pos != size:
        raise CorruptChunkError(f"{name}: {size - pos} bytes follow the last item")
    return out


def _py_encode(a: np.ndarray, item: str, name: str) -> bytes:
    parts = [_U32.pack(len(a))]
    for i, o in enumerate(a):
        if item == "str":
            if not isinstance(o, str):
                raise TypeError(f"{name}: element {i} is {type(o).__name__}, not str")
            o = o.encode("utf-8")
        elif not isinstance(o, bytes):
            raise TypeError(f"{name}: element {i} is {type(o).__name__}, not bytes")
        parts.append(_U32.pack(len(o)))
        parts.append(o)
    return b"".join(parts)
