"""The chunk-grid arithmetic of box selections (csrc/grid.c through _shard.box_tasks and
_shard.shard_of_tasks) against a brute-force reference."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrbolt._ext import _shard


def reference_tasks(lo, hi, chunk):
    per = []
    for a, b, c in zip(lo, hi, chunk):
        per.append([(k, max(a, k * c) - k * c, min(b, (k + 1) * c) - max(a, k * c), max(a, k * c) - a)
                    for k in range(a // c, (b - 1) // c + 1)] if b > a else [])
    rows = list(itertools.product(*per))
    nd = len(chunk)
    if not rows:
        z = np.zeros((0, nd), np.int64)
        return z, z, z, z
    arr = np.array(rows, dtype=np.int64)  # (n, nd, 4)
    return tuple(np.ascontiguousarray(arr[:, :, i]) for i in range(4))


@st.composite
def boxes(draw):
    nd = draw(st.integers(1, 4))
    chunk = [draw(st.integers(1, 9)) for _ in range(nd)]
    lo, hi = [], []
    for _ in range(nd):
        a = draw(st.integers(0, 40))
        lo.append(a)
        hi.append(a + draw(st.integers(0, 25)))
    return lo, hi, chunk


@settings(max_examples=300, deadline=None)
@given(boxes())
def test_box_tasks_match_reference(box):
    lo, hi, chunk = box
    got = _shard.box_tasks(lo, hi, chunk)
    for g, r in zip(got, reference_tasks(lo, hi, chunk)):
        assert g.dtype == np.int64 and g.flags.c_contiguous
        np.testing.assert_array_equal(g, r)


@settings(max_examples=200, deadline=None)
@given(boxes(), st.data())
def test_shard_of_tasks_match_reference(box, data):
    lo, hi, chunk = box
    coords = _shard.box_tasks(lo, hi, chunk)[0]
    cps = [data.draw(st.integers(1, 5)) for _ in chunk]
    flat, shard, one = _shard.shard_of_tasks(coords, cps)
    assert shard.shape == coords.shape and flat.shape == (len(coords),)
    np.testing.assert_array_equal(shard, coords // np.asarray(cps))
    local = coords - shard * np.asarray(cps)
    want = np.ravel_multi_index(local.T, cps) if len(coords) else np.zeros(0, np.int64)
    np.testing.assert_array_equal(flat, want)
    assert one == (len({tuple(s) for s in shard.tolist()}) <= 1)


def test_box_tasks_in_c_order_with_edges():
    coords, starts, shapes, outs = _shard.box_tasks((10, 100), (74, 130), (64, 64))
    assert coords.tolist() == [[0, 1], [0, 2], [1, 1], [1, 2]]
    assert starts.tolist() == [[10, 36], [10, 0], [0, 36], [0, 0]]
    assert shapes.tolist() == [[54, 28], [54, 2], [10, 28], [10, 2]]
    assert outs.tolist() == [[0, 0], [0, 28], [54, 0], [54, 28]]


@pytest.mark.parametrize("lo, hi, chunk", [
    ((0,), (5,), (0,)),          # chunk extent < 1
    ((-1,), (5,), (4,)),         # negative start
    ((5,), (4,), (4,)),          # hi < lo
    ((0, 0), (5,), (4, 4)),      # lengths differ
    ((), (), ()),                # no dimensions
    ((0,) * 33, (1,) * 33, (1,) * 33),  # too many
])
def test_box_tasks_rejects_bad_boxes(lo, hi, chunk):
    with pytest.raises(ValueError):
        _shard.box_tasks(lo, hi, chunk)


def test_box_tasks_count_overflow():
    with pytest.raises(ValueError):  # 2**62 chunks per dimension, twice: the count overflows
        _shard.box_tasks((0, 0), (2 ** 62, 2 ** 62), (1, 1))


def test_shard_of_tasks_rejects_bad_input():
    with pytest.raises(ValueError):
        _shard.shard_of_tasks(np.zeros((2, 3), np.int64), (1, 1))  # cps of 2 dims, coords of 3
    with pytest.raises(ValueError):
        _shard.shard_of_tasks(np.zeros((2, 2), np.int64), (1, 0))
    with pytest.raises(ValueError):
        _shard.shard_of_tasks(np.array([[0, -1]], np.int64), (2, 2))
    flat, shard, one = _shard.shard_of_tasks(np.zeros((0, 2), np.int64), (2, 2))
    assert flat.shape == (0,) and shard.shape == (0, 2) and one
