"""gzip (csrc/codecs/deflate_codec.c: RFC 1952 members, several concatenated, header flags,
trailers) and numcodecs' zlib (csrc/codecs/zlib_codec.c).  The input's first byte picks the
format; the rest goes to bytes_codec_common.codec_input."""

from __future__ import annotations

import common
from bytes_codec_common import codec_input
from zarrbolt._ext import _codecs, _zlib


def one_input(data: bytes) -> None:
    if not data:
        return
    if data[0] & 1:
        codec_input(data[1:], _zlib.decompress, _zlib.decompress_into, _zlib.decompress_prefix)
    else:
        codec_input(data[1:], _codecs.gzip_decompress, _codecs.gzip_decompress_into, _codecs.gzip_decompress_prefix)


if __name__ == "__main__":
    common.main(one_input)
