"""The ``crc32c`` codec (bytes -> bytes): appends the little-endian CRC32C of the data."""

from __future__ import annotations

from typing import Any

from .. import kernels
from ..errors import ChecksumError, CorruptChunkError
from .abc import BytesToBytesCodec, ChunkSpec
from .registry import register_codec
from ._util import as_bytes_view, config_dict


@register_codec
class Crc32cCodec(BytesToBytesCodec):
    name = "crc32c"

    @classmethod
    def from_json(cls, configuration: Any) -> Crc32cCodec:
        config_dict(configuration, "crc32c", set())
        return cls()

    def to_json(self) -> dict[str, Any]:
        return {"name": "crc32c"}

    def encoded_size(self, decoded_nbytes: int) -> int:
        return decoded_nbytes + 4

    def c_decode_step(self, spec: ChunkSpec) -> tuple[Any, ...]:
        from .._ext import _kernels

        return ("inplace", _kernels.CRC32C_DECODE_STEP, b"")  # check and strip

    def c_encode_step(self, spec: ChunkSpec) -> tuple[Any, ...]:
        from .._ext import _kernels

        return ("inplace", _kernels.CRC32C_ENCODE_STEP, b"")  # append

    def encode(self, data: Any, spec: ChunkSpec) -> bytes | bytearray:
        mv = as_bytes_view(data)
        out = bytearray(len(mv) + 4)
        out[: len(mv)] = mv
        out[len(mv):] = kernels.crc32c(mv).to_bytes(4, "little")
        return out

    def decode(self, data: Any, spec: ChunkSpec, max_size: int) -> memoryview:
        mv = as_bytes_view(data)
        if len(mv) < 4:
            raise CorruptChunkError(f"crc32c: {len(mv)} bytes is too short to hold a checksum")
        if len(mv) - 4 > max_size:
            raise CorruptChunkError(f"crc32c: {len(mv) - 4} bytes of data, at most {max_size} expected")
        body = mv[:-4]
        stored = int.from_bytes(mv[-4:], "little")
        actual = kernels.crc32c(body)
        if stored != actual:
            raise ChecksumError(f"crc32c mismatch: stored {stored:#010x}, computed {actual:#010x}")
        return body
