"""numcodecs' lz4 format (csrc/codecs/lz4_codec.c: 4-byte size header + one LZ4 block).
Oracles in bytes_codec_common.codec_input, and ``decoded_size`` equals a successful decode's
length."""

from __future__ import annotations

import common
from bytes_codec_common import codec_input
from zarrbolt._ext import _lz4


def one_input(data: bytes) -> None:
    codec_input(data, _lz4.decompress, _lz4.decompress_into, _lz4.decompress_prefix)
    enc = data[2:]
    size = common.accept(lambda: _lz4.decoded_size(enc))
    if size is not None and size <= 1 << 20:
        whole = common.accept(lambda: _lz4.decompress(enc, size))
        if whole is not None:
            common.check(len(whole) == size, f"decoded {len(whole)} bytes, header says {size}")


if __name__ == "__main__":
    common.main(one_input)
