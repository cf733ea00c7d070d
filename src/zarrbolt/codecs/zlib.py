"""``numcodecs.zlib`` (bytes -> bytes): one zlib stream (RFC 1950), as zarr-python 3 writes it
(``zarr.codecs.numcodecs.Zlib``, numcodecs' ``Zlib`` over Python's zlib module).

JSON: ``{"name": "numcodecs.zlib", "configuration": {"level": 1}}``; the configuration may be
empty (numcodecs' default level, 1) and may carry numcodecs' ``"id": "zlib"``.  Levels are
Python's, -1..9 (-1 is zlib's default, 6).  The C side is ``zarrbolt._ext._zlib``
(csrc/codecs/zlib_codec.c, libdeflate's zlib functions), which owns its fused-plan steps and its
partial decoder.  Stricter than Python's zlib on one point: bytes after the end of the stream are
corrupt data, not ignored (no writer produces them)."""

from __future__ import annotations

from typing import Any

from ._numcodecs import ExtensionCompressor, check_numcodecs_id
from .registry import register_codec
from ._util import config_dict, int_param

NAME = "numcodecs.zlib"
DEFAULT_LEVEL = 1  # numcodecs.Zlib's


@register_codec
class ZlibCodec(ExtensionCompressor):
    """``level`` None (not given: numcodecs' default, 1) or -1..9."""

    name = NAME
    _module = "_zlib"

    def __init__(self, level: int | None = None):
        if level is not None:
            level = int_param(level, NAME, "level", -1, 9)
        self.level = level

    @property
    def effective_level(self) -> int:
        """The compression level used: the configured one, else zlib's default."""
        return DEFAULT_LEVEL if self.level is None else self.level

    @classmethod
    def from_json(cls, configuration: Any) -> ZlibCodec:
        conf = config_dict(configuration, NAME, {"level", "id"})
        check_numcodecs_id(conf, NAME)
        return cls(conf.get("level"))

    def to_json(self) -> dict[str, Any]:
        conf = {} if self.level is None else {"level": self.level}
        return {"name": NAME, "configuration": conf}

    def max_encoded_size(self, decoded_nbytes: int) -> int:
        # zb_zlib_compress_bound: stored blocks' overhead, padding, header and Adler-32
        return decoded_nbytes + 5 * (decoded_nbytes // 1000 + 1) + 64 + 6

    def _param(self) -> int:
        return self.effective_level
