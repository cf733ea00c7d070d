"""Arrays on the ``rectilinear`` chunk grid (chunks whose edges are listed per dimension): reads and
writes equal numpy's, unsharded and as the outer grid of sharded arrays, on every kind of store
(local files by C, the Store API, an async source), fused and codec by codec, with edge chunks
that overhang the array's end; resizes; and the selections' indexers against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import zarrbolt
from async_double import AsyncMemoryStore
from zarrbolt.errors import MetadataError
from zarrbolt.indexing import basic_indexer, orthogonal_indexer, vectorized_indexer
from zarrbolt.metadata.chunk_grid import RectilinearChunkGrid
from zarrbolt.pipeline import read as read_planner

SHAPE = (37, 29)
DATA = (np.arange(SHAPE[0] * SHAPE[1], dtype="int32").reshape(SHAPE) * 7919) % 10007
# chunks: edges that differ, the last ones past the array's end (40 > 37; a regular step of 6)
CHUNKS = [[5, 12, 1, 9, 13], 6]
# shards: multiples of the (4, 6) inner chunks, again past the end
SHARDS = [[8, 16, 4, 12], [12, 6, 18]]

SELECTIONS = [
    (slice(None), slice(None)),
    (slice(3, 33), slice(4, 27)),
    (17, slice(None)),
    (slice(None), 28),
    (slice(None, None, 4), slice(1, 29, 5)),
    (slice(30, 2, -3), slice(None, None, -1)),
    (slice(6, 18), slice(0, 6)),  # exactly chunk (1, 0)
]


def _store(kind, tmp_path):
    if kind == "local":
        return zarrbolt.LocalStore(tmp_path / "a")
    if kind == "memory":
        return zarrbolt.MemoryStore()
    return AsyncMemoryStore()


def _create(store, sharded, **kw):
    if sharded:
        return zarrbolt.create_array(store, shape=SHAPE, dtype="int32", chunks=(4, 6), shards=SHARDS, fill_value=-1,
                                     **kw)
    return zarrbolt.create_array(store, shape=SHAPE, dtype="int32", chunks=CHUNKS, fill_value=-1, **kw)


@pytest.mark.parametrize("kind", ["local", "memory", "remote"])
@pytest.mark.parametrize("sharded", [False, True])
@pytest.mark.parametrize("fused", [True, False])
def test_reads_and_writes_equal_numpy(tmp_path, kind, sharded, fused):
    store = _store(kind, tmp_path)
    with zarrbolt.config.set(fused_pipeline=fused):
        a = _create(store, sharded)
        assert isinstance(a.metadata.chunk_grid, RectilinearChunkGrid)
        np.testing.assert_array_equal(a[:], np.full(SHAPE, -1))  # nothing stored: the fill value
        a[:] = DATA
        b = zarrbolt.open_array(store, mode="r")
        for sel in SELECTIONS:
            np.testing.assert_array_equal(b[sel], DATA[sel])
        np.testing.assert_array_equal(b.oindex[[0, 36, 17], [28, 0, 5]], DATA[np.ix_([0, 36, 17], [28, 0, 5])])
        np.testing.assert_array_equal(b.vindex[[0, 36, 17, 5], [28, 0, 5, 5]], DATA[[0, 36, 17, 5], [28, 0, 5, 5]])
        # writes in part: across chunks of every shape, and an edge chunk
        expect = DATA.copy()
        for sel, v in [((slice(2, 31), slice(3, 20)), 5), ((slice(30, 37), slice(22, 29)), 9),
                       ((slice(None, None, 3), 4), -8)]:
            a[sel] = v
            expect[sel] = v
        np.testing.assert_array_equal(zarrbolt.open_array(store, mode="r")[:], expect)
        a.set_orthogonal_selection(([1, 35], [0, 27]), np.array([[1, 2], [3, 4]], dtype="int32"))
        expect[np.ix_([1, 35], [0, 27])] = [[1, 2], [3, 4]]
        np.testing.assert_array_equal(a[:], expect)


@pytest.mark.parametrize("sharded", [False, True])
def test_chunk_keys_and_what_is_stored(tmp_path, sharded):
    a = _create(zarrbolt.LocalStore(tmp_path / "a"), sharded)
    a[:] = DATA
    keys = sorted(k for k in a.store.list() if not k.endswith("zarr.json"))
    grid = (5, 5) if not sharded else (4, 3)  # chunks (shards) covering the array
    assert keys == sorted(f"c/{i}/{j}" for i in range(grid[0]) for j in range(grid[1]))
    assert a.nchunks_initialized == len(keys) and a.cdata_shape == grid
    a[:] = -1  # all fill: nothing stored
    assert sorted(k for k in a.store.list() if not k.endswith("zarr.json")) == []


def test_the_fused_paths_serve_it(tmp_path):
    for sharded, name in [(False, "fused-files"), (True, "sharded-fused-files")]:
        a = _create(zarrbolt.LocalStore(tmp_path / str(sharded)), sharded)
        a[:] = DATA
        before = read_planner.strategy_counts[name]
        np.testing.assert_array_equal(a[3:33, 4:27], DATA[3:33, 4:27])
        assert read_planner.strategy_counts[name] == before + 1


@pytest.mark.parametrize("sharded", [False, True])
def test_resize(tmp_path, sharded):
    a = _create(zarrbolt.LocalStore(tmp_path / "a"), sharded)
    a[:] = DATA
    a.resize(20, 29)  # within the edges: the grid stays, the chunks past the new end go
    assert a.metadata.chunk_grid == _create(zarrbolt.MemoryStore(), sharded).metadata.chunk_grid
    # past the edges: one more chunk, up to the new end (as zarr-python), of a sharded array
    # rounded up to whole inner chunks (zarr-python refuses that resize)
    a.resize(50, 29)
    first = (CHUNKS if not sharded else SHARDS)[0]
    edges = a.metadata.to_json()["chunk_grid"]["configuration"]["chunk_shapes"][0]
    assert edges[-1] == (50 - sum(first) if not sharded else 12)
    assert sum(e if isinstance(e, int) else e[0] * e[1] for e in edges) == (50 if not sharded else 52)
    expect = np.full((50, 29), -1, dtype="int32")
    expect[:20] = DATA[:20]  # what lay past 20 was trimmed by the shrink: the fill value again
    np.testing.assert_array_equal(a[:], expect)
    a[40:, :] = 3
    expect[40:, :] = 3
    np.testing.assert_array_equal(zarrbolt.open_array(a.store, mode="r")[:], expect)


def test_sharded_edges_must_be_multiples_of_the_inner_chunks():
    with pytest.raises(MetadataError, match="evenly divide"):
        zarrbolt.create_array(zarrbolt.MemoryStore(), shape=SHAPE, dtype="int32", chunks=(4, 6),
                              shards=[[8, 10, 20], 12])


def test_edges_must_cover_the_shape():
    with pytest.raises(MetadataError, match="add up to 30, less than the array's 37"):
        zarrbolt.create_array(zarrbolt.MemoryStore(), shape=SHAPE, dtype="int32", chunks=[[10, 20], 6])


# ---------------------------------------------------------------------------- the indexers
def _edges(rng, n):
    out, total = [], 0
    while total < n + int(rng.integers(0, 4)) or not out:
        e = int(rng.integers(1, 7))
        out.append(e)
        total += e
    return out


def _read(indexer, data, starts, edges):
    """What a reader does with the indexer's projections, chunk by chunk (chunks padded past the end)."""
    out = np.full(indexer.shape, -1, dtype=data.dtype)
    for p in indexer:
        box = tuple(slice(starts[d][c], starts[d][c] + edges[d][c]) for d, c in enumerate(p.chunk_coords))
        chunk = np.full(tuple(edges[d][c] for d, c in enumerate(p.chunk_coords)), -7, data.dtype)
        part = data[box]
        chunk[tuple(slice(0, n) for n in part.shape)] = part
        out[p.out_selection] = chunk[p.chunk_selection]
    return out


@pytest.mark.parametrize("seed", range(40))
def test_indexers_against_numpy(seed):
    rng = np.random.default_rng(seed)
    nd = int(rng.integers(1, 4))
    shape = tuple(int(x) for x in rng.integers(0, 25, nd))
    edges = [_edges(rng, n) for n in shape]
    grid = RectilinearChunkGrid(edges)
    grid.validate(shape)
    starts = [[0, *np.cumsum(e).tolist()] for e in edges]
    data = rng.integers(0, 1000, shape)
    for _ in range(8):
        sel = []
        for n in shape:
            k = int(rng.integers(0, 3))
            if k == 0 and n:
                sel.append(int(rng.integers(-n, n)))
            elif k == 1:
                a, b = sorted(int(x) for x in rng.integers(-n - 2, n + 2, 2))
                sel.append(slice(a, b, int(rng.choice([1, 1, 2, 3, 5, -1, -2]))))
            else:
                sel.append(slice(None))
        sel = tuple(sel)
        idx = basic_indexer(sel, shape, grid)
        got = _read(idx, data, starts, edges)
        np.testing.assert_array_equal(got, data[sel])
        items = idx.unit_step_items()
        if items is not None:  # the fused decode's tasks: each chunk's part and its place in the output
            full = got.reshape(idx.unit_shape())
            assert len(items[0]) == len(list(idx))
            for c, a, n, o in zip(*items):
                src = tuple(slice(starts[d][c[d]] + a[d], starts[d][c[d]] + a[d] + n[d]) for d in range(nd))
                np.testing.assert_array_equal(full[tuple(slice(x, x + k) for x, k in zip(o, n))], data[src])
    if all(shape):
        osel = tuple(rng.integers(-n, n, int(rng.integers(1, 5))) for n in shape)
        np.testing.assert_array_equal(_read(orthogonal_indexer(osel, shape, grid), data, starts, edges),
                                      data[np.ix_(*[np.where(o < 0, o + n, o) for o, n in zip(osel, shape)])])
        vsel = tuple(rng.integers(0, n, 7) for n in shape)
        np.testing.assert_array_equal(_read(vectorized_indexer(vsel, shape, grid), data, starts, edges), data[vsel])
