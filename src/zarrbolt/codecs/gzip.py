"""The ``gzip`` codec (bytes -> bytes): one or more RFC 1952 gzip members, compressed and
decoded in C with the GIL released through libdeflate (``zarrbolt._ext._deflate``); the codec
owns its fused-plan steps and its partial decoder (inflating stops after the wanted prefix)."""

from __future__ import annotations

from typing import Any, cast

from ..errors import MetadataError
from .abc import BytesToBytesCodec, ChunkSpec
from .registry import register_codec
from ._util import as_bytes_view, config_dict, int_param


def _deflate_ext() -> Any:
    from .._ext import _deflate

    return _deflate


@register_codec
class GzipCodec(BytesToBytesCodec):
    name = "gzip"

    def __init__(self, level: int = 5):
        self.level = int_param(level, "gzip", "level", 0, 9)

    @classmethod
    def from_json(cls, configuration: Any) -> GzipCodec:
        conf = config_dict(configuration, "gzip", {"level"})
        if "level" not in conf:
            raise MetadataError("codec 'gzip': 'level' is required")
        return cls(conf["level"])

    def to_json(self) -> dict[str, Any]:
        return {"name": "gzip", "configuration": {"level": self.level}}

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        return cast(bytes, _deflate_ext().gzip_compress(as_bytes_view(data), self.level))

    def decode(self, data: Any, spec: ChunkSpec, max_size: int) -> bytes:
        return cast(bytes, _deflate_ext().gzip_decompress(as_bytes_view(data), max_size))

    def c_decode_step(self, spec: ChunkSpec) -> tuple[Any, ...]:
        return ("transform", _deflate_ext().GZIP_DECODE_STEP, b"")

    def c_encode_step(self, spec: ChunkSpec) -> tuple[Any, ...]:
        m = _deflate_ext()
        return ("transform", m.GZIP_ENCODE_STEP, m.gzip_encode_params(self.level))

    def c_partial(self, spec: ChunkSpec) -> tuple[Any, ...]:
        return ("prefix", _deflate_ext().GZIP_PREFIX_FN)  # stops soon after the region's last byte
