"""Blosc getitem (csrc/codecs/blosc2_codec.c).  LZ4 chunks stop inside blocks (getitem_lz4): the
same bytes as the data and as c-blosc2's whole-block getitem for every split / shuffle / leftover
layout c-blosc 1.x writes, damaged chunks rejected or confined to the bytes they touch.  Other
chunks go through c-blosc2, asked for whole blocks only (its getitem is wrong on some ranges that
start inside a block)."""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest

from zarrbolt.errors import CorruptChunkError
from zarrbolt._ext import _blosc1, _blosc2

HAVE_FAST_LZ4 = _blosc2._set_fast_lz4(True)
needs_fast_lz4 = pytest.mark.skipif(not HAVE_FAST_LZ4, reason="built without LZ4 partial decode")


@pytest.fixture
def fast_lz4():
    old = _blosc2._set_fast_lz4(True)
    yield
    _blosc2._set_fast_lz4(old)


def _data(n: int, kind: str, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    if kind == "noise":  # microscopy-like: compresses, mostly literals
        return (rng.integers(0, 300, n // 2 + 1) + 1000).astype("<u2").tobytes()[:n]
    if kind == "ramp":
        return np.arange(n // 4 + 1, dtype="<u4").tobytes()[:n]
    if kind == "random":  # incompressible: streams stored raw
        return rng.integers(0, 256, n, dtype=np.uint8).tobytes()
    return bytes(n)


def _getitem(enc: bytes, start: int, k: int, ts: int, fast: bool) -> bytes:
    _blosc2._set_fast_lz4(fast)
    try:
        out = bytearray(k * ts)
        assert _blosc2.getitem(enc, start, k, out) == k * ts
        return bytes(out)
    finally:
        _blosc2._set_fast_lz4(True)


def _ranges(nitems: int, per_block: int, rnd: random.Random):
    """Edges (block boundaries, first / last items, whole chunk) and random ranges."""
    yield 0, nitems
    yield 0, 1
    yield nitems - 1, 1
    for b in range(0, nitems, per_block):
        for s in (b, max(b - 1, 0)):
            yield s, min(per_block, nitems - s)
            yield s, min(3, nitems - s)
    for _ in range(12):
        a = rnd.randrange(nitems)
        yield a, rnd.randrange(1, nitems - a + 1)


@needs_fast_lz4
@pytest.mark.parametrize("ts", [1, 2, 3, 4, 8, 16, 17])
@pytest.mark.parametrize("shuffle", [0, 1])
@pytest.mark.parametrize("cname", ["lz4", "lz4hc"])
def test_lz4_getitem_equals_data_and_whole_block_decode(ts, shuffle, cname, fast_lz4):
    rnd = random.Random(ts * 10 + shuffle)
    for n_items, blocksize in [(1000, 0), (70_001, 0), (70_001, 4096 * ts), (200_000, 65536 + 128 * ts), (5000, 256)]:
        for kind in ("noise", "ramp", "random", "zeros"):
            raw = _data(n_items * ts, kind, seed=n_items)
            enc = _blosc1.compress(raw, ts, 5, shuffle, cname, blocksize)
            bs = _blosc2.cbuffer_sizes(enc)[2]
            for start, k in _ranges(n_items, max(bs // ts, 1), rnd):
                got = _getitem(enc, start, k, ts, True)
                assert got == raw[start * ts : (start + k) * ts], (n_items, blocksize, kind, start, k)
                if k < 50:
                    assert got == _getitem(enc, start, k, ts, False)


def _stream_table(enc: bytes):
    """(block start offsets, [(stream offset, size)] of block 0) of an LZ4 chunk."""
    nbytes, blocksize = struct.unpack_from("<ii", enc, 4)
    nblocks = -(-nbytes // blocksize)
    starts = struct.unpack_from(f"<{nblocks}i", enc, 16)
    return starts


@needs_fast_lz4
def test_prefix_of_a_block_reads_only_its_stream_prefixes(fast_lz4):
    """Block 0's last stream cut short (its size field 3 bytes smaller): the first items still
    decode (the fast path stops before the cut), c-blosc2's whole-block getitem and whole
    decodes report it."""
    raw = _data(64 * 64 * 64 * 2, "noise")
    enc = bytearray(_blosc1.compress(raw, 2, 5, 1, "lz4", 0))
    nbytes, blocksize = struct.unpack_from("<ii", enc, 4)
    assert nbytes // blocksize >= 2
    starts = _stream_table(bytes(enc))
    s0 = starts[0]
    (cs0,) = struct.unpack_from("<i", enc, s0)
    s1 = s0 + 4 + cs0  # second stream (byte plane 1) of block 0
    (cs1,) = struct.unpack_from("<i", enc, s1)
    assert cs1 < blocksize // 2  # compressed, not stored raw
    struct.pack_into("<i", enc, s1, cs1 - 3)
    bad = bytes(enc)
    assert _getitem(bad, 0, 4096, 2, True) == raw[: 4096 * 2]
    with pytest.raises(CorruptChunkError):
        _getitem(bad, 0, 4096, 2, False)
    with pytest.raises(CorruptChunkError):
        _getitem(bad, 0, blocksize // 2, 2, True)  # the whole block: every stream read to its end
    with pytest.raises(CorruptChunkError):
        _blosc2.decompress(bad, nbytes)
    # other blocks are untouched
    b1 = blocksize // 2
    assert _getitem(bad, b1, 1000, 2, True) == raw[blocksize : blocksize + 2000]


@needs_fast_lz4
@pytest.mark.parametrize("field", ["bstart-low", "bstart-high", "bstart-negative", "stream-size", "stream-negative"])
def test_damaged_offsets_are_corrupt_chunk_errors(field, fast_lz4):
    raw = _data(300_000, "noise")
    enc = bytearray(_blosc1.compress(raw, 2, 5, 1, "lz4", 65536))
    starts = _stream_table(bytes(enc))
    if field == "bstart-low":
        struct.pack_into("<i", enc, 16, 8)  # inside the header
    elif field == "bstart-high":
        struct.pack_into("<i", enc, 16, len(enc) - 2)
    elif field == "bstart-negative":
        struct.pack_into("<i", enc, 16, -100)
    elif field == "stream-size":
        struct.pack_into("<i", enc, starts[0], len(enc))
    else:
        struct.pack_into("<i", enc, starts[0], -5)
    with pytest.raises(CorruptChunkError):
        _getitem(bytes(enc), 10, 100, 2, True)


def _damaged(rnd: random.Random, raw: bytes):
    """LZ4 chunks of ``raw`` (shuffled and not) with 1-3 random bytes changed, a fifth of them
    also cut short (their header's cbytes matching)."""
    for shuffle in (0, 1):
        enc = _blosc1.compress(raw, 2, 5, shuffle, "lz4", 8192)
        for _ in range(300):
            bad = bytearray(enc)
            for _ in range(rnd.randrange(1, 4)):
                bad[rnd.randrange(16, len(bad))] = rnd.randrange(256)
            if rnd.random() < 0.2:
                bad = bad[: rnd.randrange(16, len(bad))]
                struct.pack_into("<i", bad, 12, len(bad))
            yield bad


@needs_fast_lz4
def test_random_damage_never_crashes(fast_lz4):
    rnd = random.Random(5)
    raw = _data(100_000, "noise")
    for bad in _damaged(rnd, raw):
        start = rnd.randrange(50_000)
        k = rnd.randrange(1, 50_000 - start + 1)
        try:
            got = _getitem(bytes(bad), start, k, 2, True)
        except CorruptChunkError:
            continue
        assert len(got) == 2 * k


def test_other_formats_keep_whole_block_decodes(fast_lz4):
    """zstd, bit shuffle and stored (clevel 0) chunks go through c-blosc2 unchanged."""
    raw = _data(200_000, "noise")
    for args in [(2, 5, 1, "zstd"), (2, 5, 2, "lz4"), (2, 0, 1, "lz4"), (2, 5, 1, "blosclz")]:
        enc = _blosc1.compress(raw, *args, 4096)
        assert _getitem(enc, 777, 3000, 2, True) == raw[777 * 2 : 3777 * 2]


@pytest.mark.parametrize("cname", ["lz4", "zstd", "blosclz"])
@pytest.mark.parametrize("fast", [True, False])
def test_getitem_ranges_starting_inside_blocks(cname, fast):
    """c-blosc2 2.x's own getitem returns wrong bytes for some ranges starting inside a block (a
    block's worth of items from a block's last item, for one); zarrbolt asks it for whole blocks
    only.  Every such range, for every layout, equals the data."""
    rnd = random.Random(9)
    for ts in (1, 2, 4, 8):
        for shuffle in (0, 1, 2):
            for blocksize in (256, 1024, 4096, 0):
                raw = _data(20000 * ts, "noise", 1)
                enc = _blosc1.compress(raw, ts, 5, shuffle, cname, blocksize)
                per = _blosc2.cbuffer_sizes(enc)[2] // ts
                cases = [(b - 1, per) for b in range(per, 20000 - per, per)][:8]
                cases += [(rnd.randrange(19990), rnd.randrange(1, 3 * per)) for _ in range(8)]
                for s, k in cases:
                    k = min(k, 20000 - s)
                    assert _getitem(enc, s, k, ts, fast) == raw[s * ts : (s + k) * ts], (ts, shuffle, blocksize, s, k)


@pytest.mark.parametrize("cname", ["lz4", "zstd"])
def test_huge_blocksize_in_header_allocates_nothing(cname):
    """A header claiming 1 GiB blocks (the chunk holds 200 KB): no block-sized scratch is made."""
    resource = pytest.importorskip("resource")
    raw = _data(200_000, "noise")
    enc = bytearray(_blosc1.compress(raw, 2, 5, 1, cname, 65536))
    struct.pack_into("<i", enc, 8, 1 << 30)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for start in (0, 1000, 99_000):
        try:
            _getitem(bytes(enc), start, 500, 2, True)
        except CorruptChunkError:
            pass
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024  # KiB


def _decompress(enc: bytes, nbytes: int, fast: bool) -> bytes:
    _blosc2._set_fast_lz4(fast)
    try:
        return bytes(_blosc2.decompress(enc, nbytes))
    finally:
        _blosc2._set_fast_lz4(True)


@needs_fast_lz4
@pytest.mark.parametrize("ts", [1, 2, 3, 4, 8, 16, 17])
@pytest.mark.parametrize("shuffle", [0, 1])
def test_whole_lz4_chunks_decode_like_c_blosc2(ts, shuffle, fast_lz4):
    """Whole LZ4 chunks are decoded by getitem_lz4 too (raw byte planes unshuffled in place):
    the data, and c-blosc2's bytes, for every split / leftover / raw-stream layout."""
    for n_items, blocksize in [(1000, 0), (70_001, 0), (70_001, 4096 * ts), (5000, 256), (1, 0)]:
        for kind in ("noise", "ramp", "random", "zeros"):
            raw = _data(n_items * ts, kind, seed=n_items + ts)
            for cname in ("lz4", "lz4hc"):
                enc = _blosc1.compress(raw, ts, 5, shuffle, cname, blocksize)
                got = _decompress(enc, len(raw), True)
                assert got == raw, (n_items, blocksize, kind, cname)
                assert got == _decompress(enc, len(raw), False)


@needs_fast_lz4
def test_whole_lz4_chunks_with_random_damage_never_crash(fast_lz4):
    rnd = random.Random(11)
    raw = _data(100_000, "noise")
    for bad in _damaged(rnd, raw):
        try:
            got = _decompress(bytes(bad), len(raw), True)
        except CorruptChunkError:
            continue
        assert len(got) == len(raw)
