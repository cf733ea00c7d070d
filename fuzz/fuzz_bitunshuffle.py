"""zarrbolt's bit-unshuffle kernel (csrc/bitshuffle.c), every instruction set this CPU has.

Input: one byte (typesize 1..32), then the bit-shuffled block (cut to a multiple of 8 elements).
Oracle: unshuffling is the inverse of the numpy reference shuffle (the layout c-blosc writes), for
every ISA."""

from __future__ import annotations

import numpy as np

import common
from zarrbolt._ext import _blosc2

ISAS = _blosc2._bitshuffle_isas()


def bitshuffle_ref(raw: np.ndarray, typesize: int) -> bytes:
    """Rows 8*b + j of nelem/8 bytes: bit j of byte b of every element, element 8k+i in bit i
    of byte k (tests/codecs/test_bitshuffle.py checks this layout against c-blosc)."""
    bits = np.unpackbits(raw.reshape(-1, typesize), axis=1, bitorder="little")  # column 8*b + j
    return np.packbits(bits.T, axis=1, bitorder="little").tobytes()


def one_input(data: bytes) -> None:
    if not data:
        return
    ts = 1 + data[0] % 32
    block = data[1:]
    block = block[: len(block) - len(block) % (8 * ts)]
    for isa in ISAS:
        old = _blosc2._bitshuffle_set_isa(isa)
        try:
            out = _blosc2._bitunshuffle(block, ts)
        finally:
            _blosc2._bitshuffle_set_isa(old)
        common.check(len(out) == len(block), f"{isa}: {len(out)} bytes out of {len(block)}")
        back = bitshuffle_ref(np.frombuffer(out, dtype=np.uint8), ts)
        common.check(back == block, f"{isa}: unshuffle is not the inverse of the shuffle (typesize {ts})")


if __name__ == "__main__":
    common.main(one_input)
