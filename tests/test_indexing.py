"""Indexers (zarrbolt.indexing) against numpy, through a fake chunked array.

The fake array stores a numpy array as a dict of full-size chunks (edge chunks overhang the array
end and are padded with a sentinel).  Reads and writes go only through the chunk projections,
exactly as ``zarrbolt.array`` uses them, and are compared with numpy's own indexing.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zarrbolt.errors import BoundsCheckError, ZarrboltError
from zarrbolt.indexing import (
    ChunkProjection,
    basic_indexer,
    check_value_shape,
    is_total_slice,
    orthogonal_indexer,
    vectorized_indexer,
)

PAD = -7777  # value of chunk cells outside the array
FILL = -1  # value of cells in chunks that were never written


class FakeChunked:
    """A numpy array split into chunks of ``chunk_shape`` (a dict keyed by chunk coordinates)."""

    def __init__(self, a: np.ndarray, chunk_shape: tuple[int, ...]):
        self.shape = a.shape
        self.chunk_shape = tuple(chunk_shape)
        self.grid = tuple(-(-n // c) for n, c in zip(a.shape, chunk_shape))
        self.chunks: dict[tuple[int, ...], np.ndarray] = {}
        for cc in itertools.product(*[range(g) for g in self.grid]):
            chunk = np.full(self.chunk_shape, PAD, dtype=a.dtype)
            part = a[self.region(cc)]
            chunk[tuple(slice(0, n) for n in part.shape)] = part
            self.chunks[cc] = chunk

    def region(self, cc: tuple[int, ...]) -> tuple[slice, ...]:
        return tuple(slice(c * s, min((c + 1) * s, n)) for c, s, n in zip(cc, self.chunk_shape, self.shape))

    def local(self, cc: tuple[int, ...]) -> tuple[slice, ...]:
        return tuple(slice(0, r.stop - r.start) for r in self.region(cc))

    def to_array(self) -> np.ndarray:
        out = np.empty(self.shape, dtype=np.int64)
        for cc, chunk in self.chunks.items():
            out[self.region(cc)] = chunk[self.local(cc)]
            pad = np.ones(self.chunk_shape, dtype=bool)
            pad[self.local(cc)] = False
            assert (chunk[pad] == PAD).all(), "a write touched the part of an edge chunk outside the array"
        return out

    def check_projections(self, ix) -> list[ChunkProjection]:
        projections = list(ix)
        seen = set()
        for p in projections:
            assert isinstance(p, ChunkProjection)
            assert isinstance(p.chunk_coords, tuple) and all(isinstance(c, int) for c in p.chunk_coords)
            assert isinstance(p.chunk_selection, tuple) and isinstance(p.out_selection, tuple)
            assert isinstance(p.is_complete_chunk, bool)
            assert p.chunk_coords not in seen, "a chunk appears twice"
            seen.add(p.chunk_coords)
            assert all(0 <= c < g for c, g in zip(p.chunk_coords, self.grid))
            if p.is_complete_chunk:
                # the selection covers exactly the in-array part of the chunk, in order
                probe = np.zeros(self.chunk_shape, dtype=np.int64)
                probe[p.chunk_selection] = 1
                expect = np.zeros(self.chunk_shape, dtype=np.int64)
                expect[self.local(p.chunk_coords)] = 1
                np.testing.assert_array_equal(probe, expect)
                for s in p.chunk_selection:
                    assert isinstance(s, slice) and s.step in (None, 1)
        if hasattr(ix, "nchunks"):
            assert ix.nchunks == len(projections) == len(ix)
        return projections

    def read(self, ix) -> np.ndarray:
        out = np.full(ix.shape, -999_999, dtype=np.int64)
        for p in self.check_projections(ix):
            out[p.out_selection] = self.chunks[p.chunk_coords][p.chunk_selection]
        return out

    def write(self, ix, value) -> None:
        value = check_value_shape(value, ix.shape)
        for p in self.check_projections(ix):
            src = value[p.out_selection] if np.ndim(value) else value
            if p.is_complete_chunk:  # a writer skips reading the old chunk
                chunk = np.full(self.chunk_shape, PAD, dtype=np.int64)
                chunk[self.local(p.chunk_coords)] = FILL
            else:
                chunk = self.chunks[p.chunk_coords].copy()
            chunk[p.chunk_selection] = src
            self.chunks[p.chunk_coords] = chunk


def make(shape):
    return np.asarray(np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) * 3 + 1)


def check_basic(shape, chunks, sel):
    a = make(shape)
    f = FakeChunked(a, chunks)
    ix = basic_indexer(sel, shape, chunks)
    expect = a[sel]
    assert ix.shape == expect.shape
    np.testing.assert_array_equal(f.read(ix), expect)
    # write an array of the selection's shape
    value = -np.arange(expect.size, dtype=np.int64).reshape(expect.shape) - 100
    ref = a.copy()
    ref[sel] = value
    f.write(basic_indexer(sel, shape, chunks), value)
    np.testing.assert_array_equal(f.to_array(), ref)
    # write a scalar
    ref[sel] = 42
    f.write(basic_indexer(sel, shape, chunks), 42)
    np.testing.assert_array_equal(f.to_array(), ref)
    # unit_step_items, where given, lists the same chunks with the same regions
    items = ix.unit_step_items()
    if items is not None:
        coords, starts, shapes, out_starts = items
        projections = list(ix)
        assert [tuple(c) for c in coords.tolist()] == [p.chunk_coords for p in projections]
        full = np.full(ix.shape, -5, dtype=np.int64).reshape(ix.unit_shape())
        for cc, st_, sh, os_ in zip(coords.tolist(), starts.tolist(), shapes.tolist(), out_starts.tolist()):
            full[tuple(slice(o, o + n) for o, n in zip(os_, sh))] = \
                f.chunks[tuple(cc)][tuple(slice(s, s + n) for s, n in zip(st_, sh))]
        np.testing.assert_array_equal(full.reshape(ix.shape), ref[sel])


# ------------------------------------------------------------------------------ basic: fixed cases
GEOMETRIES = [
    ((10,), (3,)),
    ((10,), (10,)),
    ((10,), (25,)),  # chunk larger than the array
    ((1,), (1,)),
    ((7, 5), (2, 3)),
    ((7, 5), (7, 5)),
    ((4, 6), (8, 8)),
    ((5, 4, 3), (2, 3, 2)),
    ((3, 4, 5, 6), (2, 3, 2, 4)),
    ((3, 4, 5, 6), (1, 1, 1, 1)),
]

BASIC_SELECTIONS_1D = [
    (), Ellipsis, 0, -1, 3, np.int64(2), np.uint8(1), np.array(4),
    slice(None), slice(2, 7), slice(None, None, 2), slice(None, None, -1), slice(-2, None, -3),
    slice(8, 1, -2), slice(5, 5), slice(7, 2), slice(-100, 100), slice(None, None, 7), slice(None, None, -11),
    (None,), (None, slice(1, 4)), (slice(1, 4), None), (Ellipsis, None), (None, Ellipsis, None),
    (Ellipsis, 2), (2, Ellipsis),
]


@pytest.mark.parametrize("sel", BASIC_SELECTIONS_1D, ids=repr)
@pytest.mark.parametrize("chunks", [(1,), (3,), (4,), (10,), (25,)])
def test_basic_1d(sel, chunks):
    check_basic((10,), chunks, sel)


@pytest.mark.parametrize("shape,chunks", GEOMETRIES[4:])
@pytest.mark.parametrize(
    "sel",
    [
        (), Ellipsis, 0, -1, (0, 0), (slice(None), -1), (slice(1, None, 2), slice(None, None, -2)),
        (Ellipsis, slice(None, None, -1)), (None, 1, Ellipsis, None), (slice(None, None, -3), None, 0),
        (slice(0, 0),), (slice(2, 3), Ellipsis, slice(1, 2)),
    ],
    ids=repr,
)
def test_basic_nd(shape, chunks, sel):
    check_basic(shape, chunks, sel)


@pytest.mark.parametrize("sel", [(), Ellipsis, (None,), (Ellipsis, None), (None, Ellipsis)], ids=repr)
def test_basic_0d(sel):
    check_basic((), (), sel)
    ix = basic_indexer(sel, (), ())
    (p,) = list(ix)
    assert p.chunk_coords == () and p.chunk_selection == () and p.is_complete_chunk


@pytest.mark.parametrize("shape,chunks", [((0,), (3,)), ((4, 0), (2, 2)), ((0, 5, 3), (1, 2, 2))])
@pytest.mark.parametrize("sel", [(), Ellipsis, slice(None), slice(None, None, -1), (Ellipsis, None)], ids=repr)
def test_basic_zero_length(shape, chunks, sel):
    check_basic(shape, chunks, sel)
    assert list(basic_indexer(sel, shape, chunks)) == []


def test_basic_zero_length_with_int():
    check_basic((4, 0), (2, 2), (1,))
    with pytest.raises(BoundsCheckError):
        basic_indexer((slice(None), 0), (4, 0), (2, 2))


# ------------------------------------------------------------------------------ basic: hypothesis
@st.composite
def basic_case(draw):
    shape = tuple(draw(st.lists(st.integers(0, 9), min_size=0, max_size=4)))
    chunks = tuple(draw(st.integers(1, 11)) for _ in shape)
    sel: list = []
    for n in shape:
        kind = draw(st.sampled_from(["slice", "slice", "int", "full"]))
        if kind == "int" and n > 0:
            sel.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            sel.append(slice(draw(st.none() | st.integers(-12, 12)), draw(st.none() | st.integers(-12, 12)),
                             draw(st.none() | st.integers(-5, 5).filter(bool))))
        else:
            sel.append(slice(None))
    # replace a run of items by an Ellipsis, or drop trailing items (padded with full slices)
    i = draw(st.integers(0, len(sel)))
    j = draw(st.integers(i, len(sel)))
    if draw(st.booleans()):
        sel = sel[:i] + [Ellipsis] + sel[j:]
    else:
        sel = sel[:i]
    for _ in range(draw(st.integers(0, 2))):
        sel.insert(draw(st.integers(0, len(sel))), None)
    return shape, chunks, tuple(sel)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(basic_case())
def test_basic_hypothesis(case):
    check_basic(*case)


# ------------------------------------------------------------------------------ orthogonal
def ortho_reference(a: np.ndarray, sel: tuple) -> tuple[tuple, tuple[int, ...]]:
    """The np.ix_ index equivalent to an orthogonal selection, and the output shape."""
    sel = list(sel)
    if any(s is Ellipsis for s in sel):
        i = next(k for k, s in enumerate(sel) if s is Ellipsis)
        sel[i: i + 1] = [slice(None)] * (a.ndim - len(sel) + 1)
    sel = sel + [slice(None)] * (a.ndim - len(sel))
    idx, out_shape = [], []
    for s, n in zip(sel, a.shape):
        if isinstance(s, (int, np.integer)):
            idx.append(np.array([s % n]))
        else:
            idx.append(np.arange(n)[s if not isinstance(s, list) else np.asarray(s, dtype=None if s else np.intp)])
            out_shape.append(len(idx[-1]))
    return np.ix_(*idx), tuple(out_shape)


def check_orthogonal(shape, chunks, sel, *, write=True):
    a = make(shape)
    f = FakeChunked(a, chunks)
    ix = orthogonal_indexer(sel, shape, chunks)
    ref_idx, out_shape = ortho_reference(a, sel if isinstance(sel, tuple) else (sel,))
    expect = a[ref_idx].reshape(out_shape)
    assert ix.shape == out_shape
    np.testing.assert_array_equal(f.read(ix), expect)
    if write:
        value = -np.arange(expect.size, dtype=np.int64).reshape(expect.shape) - 100
        ref = a.copy()
        ref[ref_idx] = value.reshape(a[ref_idx].shape)
        f.write(orthogonal_indexer(sel, shape, chunks), value)
        np.testing.assert_array_equal(f.to_array(), ref)


@pytest.mark.parametrize("chunks", [(1,), (3,), (10,), (16,)])
@pytest.mark.parametrize(
    "sel",
    [
        [0], [9, 0, 5], [-1, -10, 3], np.array([5, 6, 7, 8]), np.array([2, 3, 4, 0, 1]), np.array([], dtype=np.int64),
        [], np.array([7, 3], dtype=np.uint16), np.arange(10) % 3 == 0, np.ones(10, bool), np.zeros(10, bool),
        [True, False] * 5, 4, slice(None, None, -2), (Ellipsis, [1, 2]),
    ],
    ids=repr,
)
def test_orthogonal_1d(sel, chunks):
    check_orthogonal((10,), chunks, sel)


ORTHO_ND = [
    ([2, 0, 1],), ([2, 0, 1], [3, 0]), (0, [2, 1]), ([2, 1], 0), ([1, 2], slice(None, None, -1)),
    (slice(1, None, 2), [0, 2]), (Ellipsis, [0, 1]), (np.array([True, False, True]), Ellipsis),
]
ORTHO_3D = [(1, slice(None), [0, 1]), ([0, 2], 1, [1, 0]), (slice(None, None, -1), [3, 0], [2, 1, 0])]


@pytest.mark.parametrize("shape,chunks", [((7, 5), (2, 3)), ((7, 5), (10, 10)), ((5, 4, 3), (2, 3, 2)),
                                          ((3, 4, 5, 6), (2, 3, 2, 4))])
@pytest.mark.parametrize("sel", ORTHO_ND, ids=repr)
def test_orthogonal_nd(shape, chunks, sel):
    sel = tuple(s if not (isinstance(s, np.ndarray) and s.dtype == bool) else np.resize(s, shape[0]) for s in sel)
    check_orthogonal(shape, chunks, sel)


@pytest.mark.parametrize("shape,chunks", [((5, 4, 3), (2, 3, 2)), ((5, 4, 3), (1, 9, 2)), ((3, 4, 5, 6), (2, 3, 2, 4))])
@pytest.mark.parametrize("sel", ORTHO_3D, ids=repr)
def test_orthogonal_3d_4d(shape, chunks, sel):
    check_orthogonal(shape, chunks, sel)


def test_orthogonal_duplicates_read():
    # duplicates are read as numpy does; writes with duplicates are order dependent (last one wins)
    check_orthogonal((10, 6), (3, 4), ([1, 1, 9, 1, 0], [5, 5, 0]), write=False)
    a = make((10,))
    f = FakeChunked(a, (3,))
    f.write(orthogonal_indexer(([4, 4],), (10,), (3,)), np.array([50, 60]))
    assert f.to_array()[4] == 60


def test_orthogonal_zero_length_and_0d():
    check_orthogonal((0, 4), (2, 2), ([], [1, 2]))
    check_orthogonal((0, 4), (2, 2), (np.zeros(0, bool), slice(None)))
    check_orthogonal((5, 4), (2, 2), ([], [1, 2]))
    ix = orthogonal_indexer((), (), ())
    assert ix.shape == () and len(list(ix)) == 1
    ix = orthogonal_indexer(Ellipsis, (), ())
    assert ix.shape == () and len(list(ix)) == 1


def test_orthogonal_mask_runs_become_slices():
    # a mask run that covers a whole chunk is a complete chunk written without reading it
    mask = np.array([True] * 4 + [False, True, True, False] + [True, True])
    ix = orthogonal_indexer((mask,), (10,), (4,))
    ps = list(ix)
    assert [p.is_complete_chunk for p in ps] == [True, False, True]
    assert all(isinstance(p.chunk_selection[0], slice) for p in ps)
    check_orthogonal((10,), (4,), mask)
    # an unsorted array stays an array
    (p,) = list(orthogonal_indexer(([2, 1],), (10,), (4,)))
    assert isinstance(p.chunk_selection[0], np.ndarray) and not p.is_complete_chunk


@st.composite
def ortho_case(draw):
    shape = tuple(draw(st.lists(st.integers(1, 8), min_size=1, max_size=4)))
    chunks = tuple(draw(st.integers(1, 9)) for _ in shape)
    sel = []
    for n in shape:
        kind = draw(st.sampled_from(["ints", "perm", "mask", "slice", "int", "list"]))
        if kind == "ints":  # duplicates allowed: read only
            sel.append(np.array(draw(st.lists(st.integers(-n, n - 1), max_size=6)), dtype=np.int64))
        elif kind == "perm":
            sel.append(np.array(draw(st.permutations(range(n)))[: draw(st.integers(0, n))], dtype=np.int32))
        elif kind == "list":
            sel.append(sorted(set(draw(st.lists(st.integers(0, n - 1), max_size=4)))))
        elif kind == "mask":
            sel.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool))
        elif kind == "int":
            sel.append(draw(st.integers(-n, n - 1)))
        else:
            sel.append(slice(draw(st.none() | st.integers(-9, 9)), draw(st.none() | st.integers(-9, 9)),
                             draw(st.none() | st.integers(-4, 4).filter(bool))))
    return shape, chunks, tuple(sel)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ortho_case())
def test_orthogonal_hypothesis(case):
    shape, chunks, sel = case
    unique = all(not (isinstance(s, np.ndarray) and s.dtype != bool and len(set(s.tolist())) != s.size) for s in sel)
    # negative and positive spellings of one index are duplicates too
    unique = unique and all(
        not (isinstance(s, np.ndarray) and s.dtype != bool and len({int(x) % n for x in s}) != s.size)
        for s, n in zip(sel, shape)
    )
    check_orthogonal(shape, chunks, sel, write=unique)


# ------------------------------------------------------------------------------ vectorized
def check_vectorized(shape, chunks, sel, *, write=True):
    a = make(shape)
    f = FakeChunked(a, chunks)
    ix = vectorized_indexer(sel, shape, chunks)
    np_sel = sel if not isinstance(sel, list) else np.asarray(sel)
    expect = a[np_sel]
    assert ix.shape == expect.shape
    np.testing.assert_array_equal(f.read(ix), expect)
    if write:
        value = -np.arange(expect.size, dtype=np.int64).reshape(expect.shape) - 100
        ref = a.copy()
        ref[np_sel] = value
        f.write(vectorized_indexer(sel, shape, chunks), value)
        np.testing.assert_array_equal(f.to_array(), ref)
    return ix


@pytest.mark.parametrize("chunks", [(1, 1), (2, 3), (4, 4), (9, 9)])
def test_vectorized_cases(chunks):
    shape = (7, 5)
    ix = check_vectorized(shape, chunks, (np.array([6, 0, 3, 6]), np.array([4, 0, 2, 0])))
    assert ix.shape == (4,)
    check_vectorized(shape, chunks, (np.array([-1, -7]), np.array([-5, 4])))
    check_vectorized(shape, chunks, ([1, 2, 3], [4, 3, 2]))  # lists
    check_vectorized(shape, chunks, (np.array([[0, 1, 2], [6, 5, 4]]), np.array([[4, 3, 2], [1, 0, 0]])))  # 2-d
    check_vectorized(shape, chunks, (np.array([[0], [3], [6]]), np.array([0, 2, 4])))  # broadcast (3, 3)
    check_vectorized(shape, chunks, (2, np.array([0, 4, 1])))  # scalar broadcast
    ix = check_vectorized(shape, chunks, (np.array(2), np.array(3)))  # 0-d output
    assert ix.shape == ()
    check_vectorized(shape, chunks, (np.array([], dtype=np.int64), np.array([], dtype=np.int64)))
    check_vectorized(shape, chunks, ([], []))
    check_vectorized(shape, chunks, (np.array([1, 2], dtype=np.uint8), np.array([3, 4], dtype=np.uint64)))
    check_vectorized(shape, chunks, (np.array([1, 1, 2]), np.array([3, 3, 0])), write=False)  # duplicates
    mask = make(shape) % 4 == 1
    ix = check_vectorized(shape, chunks, mask)
    assert ix.shape == (int(mask.sum()),)
    check_vectorized(shape, chunks, (mask,))
    check_vectorized(shape, chunks, np.zeros(shape, bool))
    check_vectorized(shape, chunks, mask.tolist())  # a nested list of booleans is a mask too


def test_vectorized_1d_3d_4d_and_0d():
    check_vectorized((10,), (3,), np.array([9, 0, 4, 5]))
    check_vectorized((10,), (3,), [9, 0, 4, 5])
    check_vectorized((10,), (3,), np.arange(10) % 2 == 0)
    check_vectorized((5, 4, 3), (2, 3, 2), (np.array([4, 0, 2]), np.array([3, 0, 1]), np.array([2, 1, 0])))
    shape = (3, 4, 5, 6)
    rng = np.random.default_rng(0)
    pts = tuple(rng.integers(0, n, size=(4, 5)) for n in shape)
    check_vectorized(shape, (2, 3, 2, 4), pts, write=False)
    check_vectorized(shape, (2, 3, 2, 4), make(shape) % 7 == 0)
    # 0-d arrays: the empty selection and a 0-d mask
    for _sel in [(), Ellipsis]:
        ix = vectorized_indexer((), (), ())
        assert ix.shape == () and ix.nchunks == 1
    check_vectorized((), (), ())
    ix = check_vectorized((), (), np.array(True))
    assert ix.shape == (1,) and ix.nchunks == 1
    ix = check_vectorized((), (), np.array(False))
    assert ix.shape == (0,) and list(ix) == [] and ix.nchunks == 0
    # zero-length dimension
    check_vectorized((0, 3), (2, 2), (np.array([], np.int64), np.array([], np.int64)))
    check_vectorized((0, 3), (2, 2), np.zeros((0, 3), bool))


def test_vectorized_groups_points_per_chunk():
    shape, chunks = (100, 100), (10, 10)
    rng = np.random.default_rng(1)
    pts = (rng.integers(0, 100, 500), rng.integers(0, 100, 500))
    ix = vectorized_indexer(pts, shape, chunks)
    ps = list(ix)
    expected_chunks = {(int(i) // 10, int(j) // 10) for i, j in zip(*pts)}
    assert {p.chunk_coords for p in ps} == expected_chunks and len(ps) == len(expected_chunks)
    assert sum(p.chunk_selection[0].size for p in ps) == 500
    for p in ps:
        for s, c in zip(p.chunk_selection, chunks):
            assert s.dtype == np.intp and (s >= 0).all() and (s < c).all()
    check_vectorized(shape, chunks, pts, write=False)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_vectorized_hypothesis(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 8), min_size=1, max_size=4)))
    chunks = tuple(data.draw(st.integers(1, 9)) for _ in shape)
    out_shape = tuple(data.draw(st.lists(st.integers(0, 4), max_size=2)))
    coords = []
    for n in shape:
        bshape = tuple(data.draw(st.sampled_from([k, 1])) for k in out_shape)  # broadcastable shapes
        vals = data.draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(bshape)), max_size=int(np.prod(bshape))))
        coords.append(np.array(vals, dtype=np.int64).reshape(bshape))
    sel = tuple(coords)
    b = np.broadcast_arrays(*sel)
    flat = set()
    unique = True
    for pt in zip(*[x.reshape(-1).tolist() for x in b]):
        key = tuple(v % n for v, n in zip(pt, shape))
        unique = unique and key not in flat
        flat.add(key)
    check_vectorized(shape, chunks, sel, write=unique)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))))
    check_vectorized(shape, chunks, mask.reshape(shape))


# ------------------------------------------------------------------------------ is_complete_chunk
def test_complete_chunks():
    # a full read: every chunk is complete, edge chunks included
    ps = list(basic_indexer(Ellipsis, (7, 5), (3, 2)))
    assert len(ps) == 9 and all(p.is_complete_chunk for p in ps)
    # a chunk larger than the array
    (p,) = list(basic_indexer(slice(None), (4,), (10,)))
    assert p.is_complete_chunk and p.chunk_selection == (slice(0, 4),)
    # partial, strided, reversed, int
    assert [p.is_complete_chunk for p in basic_indexer(slice(1, 10), (10,), (3,))] == [False, True, True, True]
    assert not any(p.is_complete_chunk for p in basic_indexer(slice(None, None, 2), (10,), (3,)))
    assert not any(p.is_complete_chunk for p in basic_indexer(slice(None, None, -1), (10,), (3,)))
    assert not any(p.is_complete_chunk for p in basic_indexer((0, slice(None)), (10, 4), (1, 4)))
    assert not any(p.is_complete_chunk for p in vectorized_indexer(np.ones((4, 4), bool), (4, 4), (2, 2)))


def test_negative_step_projections_are_reversed_within_chunks():
    ps = list(basic_indexer(slice(None, None, -1), (10,), (4,)))
    assert [p.chunk_coords for p in ps] == [(2,), (1,), (0,)]
    assert ps[0].chunk_selection == (slice(1, None, -1),) and ps[0].out_selection == (slice(0, 2),)
    assert ps[2].chunk_selection == (slice(3, None, -1),) and ps[2].out_selection == (slice(6, 10),)


def test_large_steps_and_many_chunks():
    # a step larger than the chunk size: one element per chunk, chunks without elements skipped
    ix = basic_indexer(slice(3, None, 1000), (1_000_000,), (7,))
    ps = list(ix)
    assert ix.shape == (1000,) and len(ps) == 1000
    assert ps[5].chunk_coords == ((3 + 5000) // 7,) and ps[5].out_selection == (slice(5, 6),)
    check_basic((50,), (3,), slice(None, None, -7))
    check_basic((50,), (3,), slice(49, None, -4))
    # a full read of a large volume with thousands of chunks
    ix = basic_indexer(Ellipsis, (512, 512, 512), (32, 32, 32))
    assert ix.nchunks == 4096 and len(list(ix)) == 4096
    coords, starts, shapes, out_starts = ix.unit_step_items()
    assert coords.shape == (4096, 3) and (shapes == 32).all() and (starts == 0).all()
    assert out_starts[-1].tolist() == [480, 480, 480]


def test_orthogonal_projection_forms():
    # one array dimension and slices: no outer-product arrays needed
    (p,) = list(orthogonal_indexer((slice(None), [3, 1]), (4, 4), (4, 4)))
    assert isinstance(p.chunk_selection[0], slice) and p.chunk_selection[1].tolist() == [3, 1]
    # an int separated from the array by a slice: outer-product arrays keep the layout right
    check_orthogonal((4, 5, 6), (2, 2, 4), (1, slice(None), [5, 0, 2]))
    check_orthogonal((4, 5, 6), (2, 2, 4), ([3, 0], slice(None, None, -2), 1))
    check_orthogonal((4, 5, 6), (2, 2, 4), ([3, 0], 2, [5, 1]))


# ------------------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "sel,exc,match",
    [
        (10, BoundsCheckError, "out of bounds for axis 0 with size 10"),
        (-11, BoundsCheckError, "index -11 is out of bounds"),
        ((1, 2), IndexError, "too many indices"),
        ((Ellipsis, Ellipsis), IndexError, "single ellipsis"),
        (1.0, IndexError, "unsupported selection item 1.0"),
        ("a", IndexError, "unsupported selection item"),
        (True, IndexError, "unsupported selection item"),
        (np.array(True), IndexError, "oindex"),
        ([1, 2], IndexError, r"\.oindex\[\].*\.vindex\[\]"),
        ((np.array([1, 2]),), IndexError, r"\.oindex\[\]"),
        (np.array([1, 2]), IndexError, r"\.vindex\[\]"),
        (((1, 2),), IndexError, r"\.oindex\[\]"),
        (np.arange(10) > 3, IndexError, r"\.vindex\[\]"),
        (slice(None, None, 0), IndexError, "step cannot be zero"),
        (slice(1.0, 3), IndexError, "slice indices must be integers"),
        (slice(None, "x"), IndexError, "slice indices must be integers"),
    ],
    ids=repr,
)
def test_basic_errors(sel, exc, match):
    with pytest.raises(exc, match=match):
        basic_indexer(sel, (10,), (3,))


def test_bounds_error_is_index_error():
    assert issubclass(BoundsCheckError, IndexError) and issubclass(BoundsCheckError, ZarrboltError)
    with pytest.raises(IndexError):
        basic_indexer((0, 5), (2, 5), (1, 1))
    with pytest.raises(IndexError, match="too many indices"):
        basic_indexer(0, (), ())


@pytest.mark.parametrize(
    "sel,exc,match",
    [
        ((None, 1), IndexError, "newaxis"),
        (np.array([[1, 2]]), IndexError, "one-dimensional"),
        ((np.array([True, False]),), IndexError, "must be 1-d of length 10"),
        ((np.zeros((10, 4), bool),), IndexError, "vindex"),
        ((np.array([1.5]),), IndexError, "integers or booleans"),
        ((["a"],), IndexError, "integers or booleans"),
        ((np.array([10]),), BoundsCheckError, "index 10 is out of bounds"),
        ((np.array([3, -11]),), BoundsCheckError, "index -11 is out of bounds"),
        ((np.array([3, 300], np.uint16),), BoundsCheckError, "index 300 is out of bounds"),
        ((slice(None), [4]), BoundsCheckError, "axis 1 with size 4"),
        ((11,), BoundsCheckError, "out of bounds"),
        ((1.5,), IndexError, "unsupported selection item"),
        (("x",), IndexError, "unsupported selection item"),
        ((np.array(True),), IndexError, "must be 1-d"),
        (np.zeros((10, 4), bool), IndexError, r"multi-dimensional boolean mask needs \.vindex"),
        ((np.zeros((10, 4), bool), 0), IndexError, r"shape \(10, 4\); a multi-dimensional mask needs \.vindex"),
        ((1, 2, 3), IndexError, "too many indices"),
        ((slice(0, 3, 0),), IndexError, "step cannot be zero"),
    ],
    ids=repr,
)
def test_orthogonal_errors(sel, exc, match):
    with pytest.raises(exc, match=match):
        orthogonal_indexer(sel, (10, 4), (3, 3))


@pytest.mark.parametrize(
    "sel,exc,match",
    [
        ((np.array([1]), slice(None)), IndexError, "slices, Ellipsis and np.newaxis are not supported"),
        ((Ellipsis, np.array([1])), IndexError, "not supported in coordinate"),
        ((None, np.array([1])), IndexError, "not supported in coordinate"),
        ((np.array([1]),), IndexError, r"one integer array per dimension \(2\), got 1"),
        ((np.array([1]), np.array([1]), np.array([1])), IndexError, "got 3"),
        ((np.array([1, 2]), np.array([1, 2, 3])), IndexError, r"shapes \(2,\), \(3,\) do not broadcast"),
        ((np.array([1]), np.array([5])), BoundsCheckError, "index 5 is out of bounds for axis 1 with size 5"),
        ((np.array([-6]), np.array([0])), BoundsCheckError, "index -6 is out of bounds for axis 0"),
        ((np.array([6], np.uint32), np.array([0])), BoundsCheckError, "index 6 is out of bounds"),
        ((np.array([1.0]), np.array([0])), IndexError, "must hold integers"),
        (("a", np.array([0])), IndexError, "unsupported coordinate selection item"),
        ((np.array([True]), np.array([0])), IndexError, "boolean mask in a coordinate selection"),
        (np.ones((5, 4), bool), IndexError, r"mask of shape \(5, 4\) does not match the array shape \(5, 5\)"),
        (np.ones(5, bool), IndexError, "does not match"),
    ],
    ids=repr,
)
def test_vectorized_errors(sel, exc, match):
    with pytest.raises(exc, match=match):
        vectorized_indexer(sel, (5, 5), (2, 2))


@pytest.mark.parametrize("factory", [basic_indexer, orthogonal_indexer, vectorized_indexer])
def test_bad_geometry(factory):
    with pytest.raises(ValueError, match="dimensions"):
        factory((), (4, 4), (2,))
    with pytest.raises(ValueError, match="at least 1"):
        factory((), (4,), (0,))
    with pytest.raises(ValueError, match="negative"):
        factory((), (-1,), (2,))


# ------------------------------------------------------------------------------ helpers
def test_check_value_shape():
    assert check_value_shape(5, (3, 3)) == 5
    assert check_value_shape(2.5, ()) == 2.5
    z = np.array(7)
    assert check_value_shape(z, (2, 2)) is z
    assert check_value_shape(np.float32(1), (4,)) == 1
    v = np.arange(6).reshape(2, 3)
    assert check_value_shape(v, (2, 3)) is v
    got = check_value_shape(np.arange(3), (2, 3))
    assert got.shape == (2, 3) and (got == [[0, 1, 2], [0, 1, 2]]).all()
    assert check_value_shape([[1], [2]], (2, 3)).tolist() == [[1, 1, 1], [2, 2, 2]]
    assert check_value_shape(np.ones((1, 1, 3)), (3,)).shape == (3,)  # leading length-1 axes dropped
    assert check_value_shape(np.ones((1, 3)), (2, 3)).shape == (2, 3)
    assert check_value_shape(np.ones((0,)), (0,)).shape == (0,)
    with pytest.raises(ValueError, match=r"expected an array of shape \(2,\).*got shape \(3,\)"):
        check_value_shape(np.ones(3), (2,))
    with pytest.raises(ValueError, match=r"got shape \(2, 2\)"):
        check_value_shape(np.ones((2, 2)), (2,))
    with pytest.raises(ValueError, match=r"shape \(\)"):
        check_value_shape(np.ones(2), ())
    with pytest.raises(ValueError, match=r"got shape \(2,\)"):
        check_value_shape([1, 2], (3,))


def test_is_total_slice():
    assert is_total_slice(Ellipsis, (3, 4))
    assert is_total_slice((), (3, 4))
    assert is_total_slice(slice(None), (3,))
    assert is_total_slice(slice(None), (3, 4))
    assert is_total_slice((slice(None), slice(0, 4)), (3, 4))
    assert is_total_slice((slice(-3, None), Ellipsis), (3, 4))
    assert is_total_slice((slice(0, 100, 1), slice(None)), (3, 4))
    assert is_total_slice((slice(2, 1),), (0,))  # nothing to select in a zero-length dimension
    assert is_total_slice((), ())
    assert not is_total_slice((slice(1, None),), (3,))
    assert not is_total_slice((slice(None, None, -1),), (3,))
    assert not is_total_slice((slice(None, None, 2), slice(None)), (3, 4))
    assert not is_total_slice((0, slice(None)), (1, 4))
    assert not is_total_slice((None, slice(None)), (4,))
    assert not is_total_slice((Ellipsis, Ellipsis), (4,))
    assert not is_total_slice((slice(None), slice(None)), (4,))
    assert not is_total_slice((slice(0.0, None),), (4,))
    assert not is_total_slice(0, (4,))
    assert not is_total_slice([0, 1, 2, 3], (4,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not is_total_slice(np.arange(4), (4,))
