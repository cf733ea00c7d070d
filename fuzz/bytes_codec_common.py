"""Shared by the harnesses of the byte codecs with ``decompress`` / ``decompress_into`` /
``decompress_prefix`` entry points (zstd, gzip, zlib, numcodecs' lz4)."""

from __future__ import annotations

from collections.abc import Callable

import common

MAX_OUT = 1 << 20


def codec_input(data: bytes, decompress: Callable, decompress_into: Callable, decompress_prefix: Callable) -> None:
    """Input: two bytes choosing the output capacity and a prefix length, then the encoded
    bytes.  Oracles: ``decompress_into`` with room enough and ``decompress_prefix`` agree with
    ``decompress`` whenever both succeed; nothing is written past the capacity."""
    if len(data) < 2:
        return
    cap = (data[0] * 4099) % (MAX_OUT + 1)
    enc = data[2:]
    whole = common.accept(lambda: decompress(enc, cap))
    if whole is not None:
        common.check(len(whole) <= cap, f"decompress gave {len(whole)} bytes, max_size {cap}")
    out = bytearray(cap + 16)
    view = memoryview(out)[:cap]
    n = common.accept(lambda: decompress_into(enc, view))
    view.release()
    common.check(out[cap:] == bytes(16), "decompress_into wrote past the end of its buffer")
    if n is not None:
        common.check(0 <= n <= cap, f"decompress_into returned {n} for a {cap}-byte buffer")
        if whole is not None:
            common.check(bytes(out[:n]) == whole, "decompress_into differs from decompress")
    if whole is not None:
        want = data[1] * len(whole) // 255
        part = common.accept(lambda: decompress_prefix(enc, len(whole), want))
        if part is not None:
            common.check(len(part) >= want, f"prefix of {len(part)} bytes, {want} wanted")
            common.check(bytes(part[:want]) == whole[:want], "decompress_prefix differs from decompress")
