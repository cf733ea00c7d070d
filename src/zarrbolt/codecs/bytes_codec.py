"""The ``bytes`` codec (array -> bytes): elements in C order, little or big endian."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ..errors import CorruptChunkError, MetadataError
from .abc import ArrayToBytesCodec, ChunkSpec
from .registry import register_codec
from ._util import config_dict

_NATIVE = sys.byteorder  # "little" or "big"


def _needs_order(spec: ChunkSpec) -> bool:
    """Whether the chunk's bytes depend on the byte order (records: when a field's do)."""
    dt = spec.dtype
    if dt.swap_unit is None:
        return dt.numpy_dtype.fields is not None and any(
            f[0].itemsize > 1 and f[0].kind not in "SVb" for f in dt.numpy_dtype.fields.values())
    return dt.swap_unit > 1


@register_codec
class BytesCodec(ArrayToBytesCodec):
    name = "bytes"
    aliases = ("endian",)  # the name used by early zarr v3 drafts

    def __init__(self, endian: str | None = "little"):
        if endian not in (None, "little", "big"):
            raise MetadataError(f"codec 'bytes': endian must be 'little' or 'big', got {endian!r}")
        self.endian = endian

    @classmethod
    def from_json(cls, configuration: Any) -> BytesCodec:
        conf = config_dict(configuration, "bytes", {"endian"})
        return cls(conf.get("endian"))

    def to_json(self) -> dict[str, Any]:
        if self.endian is None:
            return {"name": "bytes"}
        return {"name": "bytes", "configuration": {"endian": self.endian}}

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if spec.dtype.variable_length:
            raise MetadataError(
                f"codec 'bytes' cannot serialise the variable-length data type {spec.dtype} (use vlen-utf8 / vlen-bytes)"
            )
        if self.endian is None and _needs_order(spec):
            raise MetadataError(
                f"codec 'bytes': 'endian' is required for the multi-byte data type {spec.dtype.name}"
            )
        return spec

    def encoded_size(self, decoded_nbytes: int) -> int:
        return decoded_nbytes

    def _swap(self, spec: ChunkSpec) -> bool:
        return self.endian is not None and self.endian != _NATIVE and _needs_order(spec)

    def c_byteswap(self, spec: ChunkSpec) -> int | None:
        if not self._swap(spec):
            return 0
        # the unit the elements' bytes are reversed in (complex: each half; UTF-32: each code
        # point); records swap field by field, which only the per-codec path does
        return spec.dtype.swap_unit

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> Any:
        a = np.ascontiguousarray(array)
        if a.dtype.kind in "mM":  # memoryviews take no datetimes: their 64-bit integers
            a = a.view(np.int64)
        if self._swap(spec):
            a = a.byteswap()
        return memoryview(a.reshape(-1)).cast("B")

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        dt = spec.dtype.numpy_dtype
        mv = memoryview(data).cast("B") if not isinstance(data, (bytes, bytearray)) else data
        if len(mv) != spec.nbytes:
            raise CorruptChunkError(f"'bytes' codec: chunk has {len(mv)} bytes, expected {spec.nbytes}")
        a = np.frombuffer(mv, dtype=dt).reshape(spec.shape)
        if self._swap(spec):
            a = a.byteswap()
        return a
