"""gzip (csrc/codecs/deflate_codec.c: RFC 1952 members, several concatenated, header flags,
trailers) and numcodecs' zlib (csrc/codecs/zlib_codec.c).  The input's first byte picks the
format; the rest goes to bytes_codec_common.codec_input."""

from __future__ import annotations

import common
from bytes_codec_common import codec_input
from zarrbolt._ext import _deflate


def one_input(data: bytes) -> None:
    if not data:
        return
    if data[0] & 1:
        codec_input(data[1:], _deflate.zlib_decompress, _deflate.zlib_decompress_into, _deflate.zlib_decompress_prefix)
    else:
        codec_input(data[1:], _deflate.gzip_decompress, _deflate.gzip_decompress_into, _deflate.gzip_decompress_prefix)


if __name__ == "__main__":
    common.main(one_input)
