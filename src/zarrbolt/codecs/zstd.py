"""The ``zstd`` codec (bytes -> bytes): zstd frames, compressed and decoded in C with the GIL
released (``zarrbolt._ext._zstd``); the codec owns its fused-plan steps and its partial decoder
(decoding stops after the block holding the wanted prefix)."""

from __future__ import annotations

from typing import Any, cast

from ..errors import MetadataError
from .abc import BytesToBytesCodec, ChunkSpec
from .registry import register_codec
from ._util import as_bytes_view, config_dict, int_param


def _zstd_ext() -> Any:
    from .._ext import _zstd

    return _zstd


@register_codec
class ZstdCodec(BytesToBytesCodec):
    name = "zstd"

    def __init__(self, level: int = 0, checksum: bool = False):
        self.level = int_param(level, "zstd", "level", -131072, 22)
        if not isinstance(checksum, bool):
            raise MetadataError(f"codec 'zstd': checksum must be a boolean, got {checksum!r}")
        self.checksum = checksum

    @classmethod
    def from_json(cls, configuration: Any) -> ZstdCodec:
        conf = config_dict(configuration, "zstd", {"level", "checksum"})
        return cls(conf.get("level", 0), conf.get("checksum", False))

    def to_json(self) -> dict[str, Any]:
        return {"name": "zstd", "configuration": {"level": self.level, "checksum": self.checksum}}

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        return cast(bytes, _zstd_ext().compress(as_bytes_view(data), self.level, self.checksum))

    def decode(self, data: Any, spec: ChunkSpec, max_size: int) -> bytes:
        return cast(bytes, _zstd_ext().decompress(as_bytes_view(data), max_size))

    def c_decode_step(self, spec: ChunkSpec) -> tuple[Any, ...]:
        return ("transform", _zstd_ext().DECODE_STEP, b"")

    def c_encode_step(self, spec: ChunkSpec) -> tuple[Any, ...]:
        m = _zstd_ext()
        return ("transform", m.ENCODE_STEP, m.encode_params(self.level, self.checksum))

    def c_partial(self, spec: ChunkSpec) -> tuple[Any, ...]:
        return ("prefix", _zstd_ext().PREFIX_FN)
