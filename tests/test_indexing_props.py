"""Indexers against numpy: reads and writes through chunk projections equal numpy indexing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrbolt.errors import BoundsCheckError
from zarrbolt.indexing import (
    basic_indexer,
    check_value_shape,
    is_total_slice,
    orthogonal_indexer,
    vectorized_indexer,
)


def chunked_read(a, indexer, chunk_shape):
    out = np.full(indexer.shape, -999, dtype=a.dtype)
    seen = set()
    for p in indexer:
        assert p.chunk_coords not in seen
        seen.add(p.chunk_coords)
        region = tuple(slice(c * s, (c + 1) * s) for c, s in zip(p.chunk_coords, chunk_shape))
        chunk = np.zeros(chunk_shape, dtype=a.dtype)
        part = a[region]
        chunk[tuple(slice(0, n) for n in part.shape)] = part
        out[p.out_selection] = chunk[p.chunk_selection]
        if p.is_complete_chunk:  # writers skip read-modify-write: the whole in-array part, in order
            for cs, n, cn in zip(p.chunk_selection, part.shape, chunk_shape):
                assert isinstance(cs, slice) and cs.indices(cn) == (0, n, 1)
    return out


def chunked_write(a, indexer, chunk_shape, value):
    a = a.copy()
    for p in indexer:
        region = tuple(slice(c * s, (c + 1) * s) for c, s in zip(p.chunk_coords, chunk_shape))
        chunk = np.zeros(chunk_shape, dtype=a.dtype)
        part = a[region]
        local = tuple(slice(0, n) for n in part.shape)
        chunk[local] = part
        v = value[p.out_selection] if np.ndim(value) else value
        chunk[p.chunk_selection] = v
        a[region] = chunk[local]
    return a


shapes = st.lists(st.integers(0, 9), min_size=1, max_size=3).map(tuple)


@st.composite
def case(draw):
    shape = draw(shapes)
    chunks = tuple(draw(st.integers(1, 5)) for _ in shape)
    sel = []
    for n in shape:
        kind = draw(st.sampled_from(["slice", "int", "full"]))
        if kind == "int" and n > 0:
            sel.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            a = draw(st.none() | st.integers(-12, 12))
            b = draw(st.none() | st.integers(-12, 12))
            c = draw(st.none() | st.integers(-4, 4).filter(lambda x: x != 0))
            sel.append(slice(a, b, c))
        else:
            sel.append(slice(None))
    return shape, chunks, tuple(sel)


@settings(max_examples=300, deadline=None)
@given(case())
def test_basic_matches_numpy(c):
    shape, chunks, sel = c
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    ix = basic_indexer(sel, shape, chunks)
    expect = a[sel]
    assert ix.shape == expect.shape
    np.testing.assert_array_equal(chunked_read(a, ix, chunks), expect)
    value = -np.arange(expect.size, dtype=np.int32).reshape(expect.shape) - 1
    ref = a.copy()
    ref[sel] = value
    np.testing.assert_array_equal(chunked_write(a, basic_indexer(sel, shape, chunks), chunks, value), ref)
    items = ix.unit_step_items()
    if items is not None:
        assert len(items[0]) == len(list(basic_indexer(sel, shape, chunks)))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_orthogonal_matches_numpy(data):
    shape = data.draw(st.lists(st.integers(1, 8), min_size=1, max_size=3).map(tuple))
    chunks = tuple(data.draw(st.integers(1, 4)) for _ in shape)
    sel = []
    for n in shape:
        kind = data.draw(st.sampled_from(["ints", "mask", "slice", "int"]))
        if kind == "ints":
            sel.append(np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=0, max_size=6)), dtype=np.int64))
        elif kind == "mask":
            sel.append(np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n))))
        elif kind == "int":
            sel.append(data.draw(st.integers(-n, n - 1)))
        else:
            sel.append(slice(data.draw(st.none() | st.integers(0, n)), None, data.draw(st.sampled_from([None, 2, -1]))))
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    np_sel = []
    for s, n in zip(sel, shape):
        np_sel.append(np.arange(n)[s] if not isinstance(s, (int, np.integer)) else s)
    # numpy reference of the outer product: index one axis at a time
    ref = a
    axis = 0
    for x in np_sel:
        if isinstance(x, (int, np.integer)):
            ref = np.take(ref, x, axis=axis)
        else:
            ref = np.take(ref, x, axis=axis)
            axis += 1
    ix = orthogonal_indexer(tuple(sel), shape, chunks)
    assert ix.shape == ref.shape
    np.testing.assert_array_equal(chunked_read(a, ix, chunks), ref)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_vectorized_matches_numpy(data):
    shape = data.draw(st.lists(st.integers(1, 8), min_size=1, max_size=3).map(tuple))
    chunks = tuple(data.draw(st.integers(1, 4)) for _ in shape)
    npts = data.draw(st.integers(0, 10))
    coords = tuple(np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=npts, max_size=npts)), dtype=np.int64)
                   for n in shape)
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    ix = vectorized_indexer(coords, shape, chunks)
    np.testing.assert_array_equal(chunked_read(a, ix, chunks), a[coords])
    mask = a % 3 == 0
    np.testing.assert_array_equal(chunked_read(a, vectorized_indexer(mask, shape, chunks), chunks), a[mask])
    # 2-d coordinate arrays keep their shape
    c2 = tuple(np.resize(c, (2, npts // 2)) for c in coords) if npts >= 2 else None
    if c2 is not None:
        np.testing.assert_array_equal(chunked_read(a, vectorized_indexer(c2, shape, chunks), chunks), a[c2])


def test_errors_and_helpers():
    with pytest.raises(BoundsCheckError):
        basic_indexer((5,), (5,), (2,))
    with pytest.raises(IndexError):
        basic_indexer((Ellipsis, Ellipsis), (5,), (2,))
    with pytest.raises(IndexError):
        basic_indexer(([1, 2],), (5,), (2,))
    with pytest.raises(IndexError):
        basic_indexer((slice(None, None, 0),), (5,), (2,))
    with pytest.raises(IndexError):
        basic_indexer((1.0,), (5,), (2,))
    with pytest.raises(IndexError):
        orthogonal_indexer((np.array([True, False]),), (5,), (2,))
    with pytest.raises(BoundsCheckError):
        orthogonal_indexer((np.array([7]),), (5,), (2,))
    with pytest.raises(IndexError):
        vectorized_indexer((np.array([1]), slice(None)), (5, 5), (2, 2))
    with pytest.raises(IndexError):
        vectorized_indexer((np.array([1, 2]), np.array([1, 2, 3])), (5, 5), (2, 2))
    with pytest.raises(BoundsCheckError):
        vectorized_indexer((np.array([1]), np.array([5])), (5, 5), (2, 2))
    with pytest.raises(ValueError):
        check_value_shape(np.ones(3), (2,))
    assert check_value_shape(5, (3, 3)) == 5
    assert check_value_shape(np.ones(3), (2, 3)).shape == (2, 3)
    assert is_total_slice(Ellipsis, (3, 4)) and is_total_slice((slice(None), slice(0, 4)), (3, 4))
    assert not is_total_slice((slice(1, None),), (3,))
    ix = basic_indexer((), (), ())
    assert ix.shape == () and len(list(ix)) == 1
