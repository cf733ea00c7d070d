"""zstd frames (csrc/codecs/zstd_codec.c): concatenated and skippable frames, declared and
undeclared content sizes, prefixes.  Oracles in bytes_codec_common.codec_input."""

from __future__ import annotations

import common
from bytes_codec_common import codec_input
from zarrbolt._ext import _zstd


def one_input(data: bytes) -> None:
    codec_input(data, _zstd.decompress, _zstd.decompress_into, _zstd.decompress_prefix)


if __name__ == "__main__":
    common.main(one_input)
