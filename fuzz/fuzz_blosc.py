"""Blosc container (c-blosc 1.x format as Zarr stores it; chunks written by c-blosc 1.x and by
c-blosc2): header checks, c-blosc2's decoder, zarrbolt's LZ4 block decoder and bit-unshuffle fast
paths, whole chunks and item ranges (``getitem``).

Input: one control byte (which fast paths are on, which item range), then the chunk.  Oracles:
a whole decode gives exactly the header's ``nbytes``; with the fast paths on and off, successful
decodes agree byte for byte; every successful ``getitem`` equals the same slice of the whole
decode."""

from __future__ import annotations

import common
from zarrbolt._ext import _blosc2

# decoded sizes the harness allocates (the pipeline allocates what the array metadata says)
MAX_NBYTES = 1 << 22


def _decode(chunk: bytes, nb: int, lz4: bool, bitshuffle: bool) -> bytes | None:
    _blosc2._set_fast_lz4(lz4)
    _blosc2._set_fast_bitshuffle(bitshuffle)
    return common.accept(lambda: _blosc2.decompress(chunk, nb))


def _getitem(chunk: bytes, start: int, nitems: int, ts: int) -> bytes | None:
    out = bytearray(nitems * ts)
    n = common.accept(lambda: _blosc2.getitem(chunk, start, nitems, out))
    if n is None:
        return None
    common.check(n == nitems * ts, f"getitem wrote {n} bytes, {nitems * ts} asked")
    return bytes(out)


def ranges(sel: bytes, nitems_total: int) -> list[tuple[int, int]]:
    """Item ranges [start, start + n) chosen by the selector bytes (pairs of bytes)."""
    out = []
    for i in range(0, len(sel) - 1, 2):
        a = sel[i] * nitems_total // 256
        b = a + 1 + sel[i + 1] * (nitems_total - a) // 256
        out.append((a, min(b, nitems_total) - a))
    return out


def blosc_input(ctl: int, sel: bytes, chunk: bytes) -> None:
    hdr = common.accept(lambda: _blosc2.cbuffer_sizes(chunk))
    if hdr is None:
        return
    nb, cb, bs = hdr
    common.check(cb <= len(chunk) and nb >= 0 and bs >= 0, f"sizes {hdr} for {len(chunk)} bytes")
    if nb > MAX_NBYTES:
        return
    first = _decode(chunk, nb, bool(ctl & 1), bool(ctl & 2))
    if first is not None:
        common.check(len(first) == nb, f"decoded {len(first)} bytes, header says {nb}")
    if ctl & 4:  # the other routes: c-blosc2 alone, then every fast path on
        for lz4, bit in ((False, False), (True, True)):
            other = _decode(chunk, nb, lz4, bit)
            if first is not None and other is not None:
                common.check(other == first, f"decodes differ (fast lz4={lz4}, bitshuffle={bit})")
            first = first if first is not None else other
    _blosc2._set_fast_lz4(bool(ctl & 8))
    _blosc2._set_fast_bitshuffle(bool(ctl & 16))
    ts = chunk[3] if len(chunk) > 3 else 0
    if ts == 0 or nb // ts == 0:
        return
    for start, n in ranges(sel, nb // ts):
        part = _getitem(chunk, start, n, ts)
        if part is not None and first is not None:
            common.check(part == first[start * ts:(start + n) * ts], f"getitem({start}, {n}) differs from the decode")


def one_input(data: bytes) -> None:
    if len(data) < 3:
        return
    blosc_input(data[0], data[1:3], data[3:])


if __name__ == "__main__":
    common.main(one_input)
