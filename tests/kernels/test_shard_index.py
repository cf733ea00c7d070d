"""Shard index parsing/validation and range coalescing (zarrbolt._ext._shard)."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrbolt._ext import _shard
from zarrbolt.errors import ChecksumError, CorruptChunkError

EMPTY = 2**64 - 1


def _crc32c_ref(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def _raw(pairs, crc=True):
    body = b"".join(struct.pack("<QQ", o, n) for o, n in pairs)
    return body + (struct.pack("<I", _crc32c_ref(body)) if crc else b"")


def test_parse_valid_with_empty_entries():
    pairs = [(0, 10), (EMPTY, EMPTY), (10, 5), (15, 0)]
    out = _shard.parse_index(_raw(pairs), 4, True, 0, 100)
    assert out.dtype == np.uint64 and out.shape == (4, 2)
    assert [tuple(map(int, r)) for r in out] == pairs


def test_parse_without_crc_and_index_at_start():
    pairs = [(68, 10), (78, 4)]
    # index at start: data region begins after the index (2*16 bytes here, no crc)
    out = _shard.parse_index(_raw(pairs, crc=False), 2, False, 32, 82)
    assert int(out[1, 0]) == 78


@pytest.mark.parametrize(
    "pair,why",
    [
        ((EMPTY, 3), "half-empty offset"),
        ((3, EMPTY), "half-empty nbytes"),
        ((2**63, 2**63 + 5), "overflow"),
        ((90, 20), "past the end"),
        ((100, 1), "inside the index (end location)"),
    ],
)
def test_parse_rejects_corrupt_entries(pair, why):
    raw = _raw([(0, 4), pair])
    with pytest.raises(CorruptChunkError, match="entry 1"):
        _shard.parse_index(raw, 2, True, 0, 100)


def test_entry_pointing_into_index_at_start():
    raw = _raw([(0, 8)], crc=False)  # data region starts at 16 (after the index)
    with pytest.raises(CorruptChunkError):
        _shard.parse_index(raw, 1, False, 16, 64)


def test_checksum_mismatch():
    raw = bytearray(_raw([(0, 4), (4, 4)]))
    raw[3] ^= 0x40
    with pytest.raises(ChecksumError):
        _shard.parse_index(bytes(raw), 2, True, 0, 100)


@pytest.mark.parametrize("delta", [-1, 1, -16])
def test_wrong_index_size(delta):
    raw = _raw([(0, 4), (4, 4)])
    bad = raw[: len(raw) + delta] if delta < 0 else raw + b"\0" * delta
    with pytest.raises(CorruptChunkError, match="bytes"):
        _shard.parse_index(bad, 2, True, 0, 100)


def test_zero_entries():
    assert _shard.parse_index(b"\0\0\0\0", 0, True, 0, 0).shape == (0, 2)
    with pytest.raises(ChecksumError):
        _shard.parse_index(b"\1\0\0\0", 0, True, 0, 0)


def test_overlapping_entries_are_valid_and_detectable():
    pairs = [(0, 10), (0, 10), (20, 5)]  # identical inner chunks stored once
    out = _shard.parse_index(_raw(pairs), 3, True, 0, 100)
    assert _shard.find_overlap(out) == (0, 1)
    assert _shard.find_overlap(np.array([(0, 10), (10, 5), (EMPTY, EMPTY)], dtype=np.uint64)) is None
    assert _shard.find_overlap(np.array([(30, 10), (0, 5), (35, 1)], dtype=np.uint64)) == (0, 2)


def test_validate_pairs_decoded_by_other_codecs():
    good = np.array([[0, 5], [EMPTY, EMPTY]], dtype=np.uint64)
    assert _shard.validate_pairs(good, 0, 5).shape == (2, 2)
    with pytest.raises(CorruptChunkError, match="entry 0"):
        _shard.validate_pairs(good, 1, 5)


def test_large_index_parses():
    n = 65536
    nb = np.full(n, 100, dtype=np.uint64)
    pairs = np.stack([np.arange(n, dtype=np.uint64) * 100, nb], axis=1)
    raw = pairs.astype("<u8").tobytes()
    raw += struct.pack("<I", int(__import__("zarrbolt.kernels", fromlist=["crc32c"]).crc32c(raw)))
    out = _shard.parse_index(raw, n, True, 0, n * 100)
    assert np.array_equal(out, pairs)


def test_coalesce_adjacent_and_gaps():
    pairs = np.array([(0, 10), (10, 10), (25, 5), (100, 10), (EMPTY, EMPTY), (30, 2)], dtype=np.uint64)
    order, range_of, begins, ends = _shard.coalesce(pairs, [3, 1, 0, 4, 2, 5], 0)
    assert list(order) == [0, 1, 2, 5, 3]
    assert list(zip(map(int, begins), map(int, ends))) == [(0, 20), (25, 32), (100, 110)]
    assert list(range_of) == [0, 0, 1, 1, 2]
    order, range_of, begins, ends = _shard.coalesce(pairs, [0, 1, 2, 3], 5)
    assert list(zip(map(int, begins), map(int, ends))) == [(0, 30), (100, 110)]
    with pytest.raises(IndexError):
        _shard.coalesce(pairs, [6], 0)
    order, range_of, begins, ends = _shard.coalesce(pairs, [], 0)
    assert len(order) == 0 and len(begins) == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 500), st.integers(0, 60), st.booleans()), min_size=1, max_size=40),
    st.integers(0, 50),
    st.data(),
)
def test_coalesce_property(entries, gap, data):
    pairs = np.array([(EMPTY, EMPTY) if empty else (o, n) for o, n, empty in entries], dtype=np.uint64)
    wanted = data.draw(st.lists(st.integers(0, len(entries) - 1), unique=True))
    order, range_of, begins, ends = _shard.coalesce(pairs, wanted, gap)
    nonempty = [w for w in wanted if not entries[w][2]]
    assert sorted(order.tolist()) == sorted(nonempty)
    offs = [int(pairs[e, 0]) for e in order]
    assert offs == sorted(offs)
    for e, r in zip(order, range_of):
        o, n = int(pairs[e, 0]), int(pairs[e, 1])
        assert int(begins[r]) <= o and o + n <= int(ends[r])
    # reads are disjoint, ordered, and separated by more than the gap
    for r in range(1, len(begins)):
        assert int(begins[r]) > int(ends[r - 1]) + gap


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 500), st.integers(0, 60), st.booleans()), min_size=1, max_size=40),
    st.integers(0, 50),
    st.integers(1, 120),
    st.data(),
)
def test_coalesce_max_read_property(entries, gap, max_read, data):
    pairs = np.array([(EMPTY, EMPTY) if empty else (o, n) for o, n, empty in entries], dtype=np.uint64)
    wanted = data.draw(st.lists(st.integers(0, len(entries) - 1), unique=True))
    order, range_of, begins, ends = _shard.coalesce(pairs, wanted, gap, max_read)
    assert sorted(order.tolist()) == sorted(w for w in wanted if not entries[w][2])
    members = [[] for _ in range(len(begins))]
    for e, r in zip(order, range_of):
        o, n = int(pairs[e, 0]), int(pairs[e, 1])
        assert int(begins[r]) <= o and o + n <= int(ends[r])
        members[r].append(n)
    assert list(range_of) == sorted(range_of)  # reads follow the offset order
    for r, sizes in enumerate(members):
        size = int(ends[r]) - int(begins[r])
        # a read is within max_read, unless its first entry alone is larger
        assert size <= max_read or sizes[0] > max_read, (size, sizes)
    # without a limit the same call merges at least as much
    assert len(_shard.coalesce(pairs, wanted, gap)[2]) <= len(begins)


def test_public_parse_shard_index():
    from zarrbolt import kernels

    pairs = [(0, 10), (EMPTY, EMPTY), (10, 5), (15, 3)]
    raw = _raw(pairs)
    offs, nbs = kernels.parse_shard_index(raw, (2, 2), shard_nbytes=18 + len(raw))
    assert offs.shape == (2, 2) and int(offs[1, 0]) == 10 and int(nbs[0, 1]) == kernels.SHARD_INDEX_EMPTY
    # the same entries are out of bounds when the index sits at the start of a short shard
    with pytest.raises(CorruptChunkError):
        kernels.parse_shard_index(raw, (2, 2), shard_nbytes=18 + len(raw), index_location="start")
    with pytest.raises(CorruptChunkError, match="smaller"):
        kernels.parse_shard_index(raw, (2, 2), shard_nbytes=10)
    dup = _raw([(0, 10), (0, 10)])
    kernels.parse_shard_index(dup, (2,), shard_nbytes=10 + len(dup))
    with pytest.raises(CorruptChunkError, match="overlap"):
        kernels.parse_shard_index(dup, (2,), shard_nbytes=10 + len(dup), allow_overlap=False)
    order, read_of, begins, ends = kernels.coalesce_ranges(offs, nbs, [0, 2, 3])
    assert list(order) == [0, 2, 3] and list(map(int, begins)) == [0] and list(map(int, ends)) == [18]
