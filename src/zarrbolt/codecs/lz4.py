"""``numcodecs.lz4`` (bytes -> bytes): numcodecs' LZ4 format, a 4-byte little-endian decoded size
followed by one LZ4 block, as zarr-python 3 writes it (``zarr.codecs.numcodecs.LZ4``).

JSON: ``{"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}``; the configuration may
be empty (acceleration 1) and may carry numcodecs' ``"id": "lz4"``.  The C side is
``zarrbolt._ext._lz4`` (csrc/codecs/lz4_codec.c, linked with liblz4 or the LZ4 inside c-blosc2);
it owns its fused-plan steps and its partial decoder (LZ4 stops after the wanted prefix)."""

from __future__ import annotations

from typing import Any

from ._numcodecs import ExtensionCompressor, check_numcodecs_id
from .registry import register_codec
from ._util import config_dict, int_param

NAME = "numcodecs.lz4"
HEADER = 4
INT32 = 2**31 - 1


@register_codec
class LZ4Codec(ExtensionCompressor):
    """``acceleration`` None (not given: LZ4's default, 1) or an integer; values below 1 mean 1,
    as in LZ4 and numcodecs."""

    name = NAME
    _module = "_lz4"

    def __init__(self, acceleration: int | None = None):
        if acceleration is not None:
            acceleration = int_param(acceleration, NAME, "acceleration", -INT32, INT32)
        self.acceleration = acceleration

    @property
    def effective_acceleration(self) -> int:
        """The acceleration LZ4 is given: the configured one, 1 when unset or below 1."""
        return 1 if self.acceleration is None or self.acceleration < 1 else self.acceleration

    @classmethod
    def from_json(cls, configuration: Any) -> LZ4Codec:
        conf = config_dict(configuration, NAME, {"acceleration", "id"})
        check_numcodecs_id(conf, NAME)
        return cls(conf.get("acceleration"))

    def to_json(self) -> dict[str, Any]:
        conf = {} if self.acceleration is None else {"acceleration": self.acceleration}
        return {"name": NAME, "configuration": conf}

    def max_encoded_size(self, decoded_nbytes: int) -> int:
        return HEADER + decoded_nbytes + decoded_nbytes // 255 + 16  # LZ4_compressBound + header

    def _param(self) -> int:
        return self.effective_acceleration
