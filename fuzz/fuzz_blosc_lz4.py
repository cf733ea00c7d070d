"""zarrbolt's LZ4 block decoder inside Blosc chunks (csrc/codecs/blosc2_codec.c getitem_lz4:
block offsets, split streams, raw streams, partial LZ4 decodes, byte-plane unshuffle).

Input: control byte, 8 selector bytes (4 item ranges), then an LZ4 Blosc chunk (seeds: c-blosc
1.x LZ4 chunks of every shuffle, split and block layout).  Same oracles as fuzz_blosc."""

from __future__ import annotations

import common
from fuzz_blosc import blosc_input


def one_input(data: bytes) -> None:
    if len(data) < 9:
        return
    # fast LZ4 always on for the ranges (bit 8) and for the first whole decode (bit 1)
    blosc_input(data[0] | 1 | 8, data[1:9], data[9:])


if __name__ == "__main__":
    common.main(one_input)
