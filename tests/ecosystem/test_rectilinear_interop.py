"""The ``rectilinear`` chunk grid between zarrbolt and zarr-python 3.4 (behind its
``array.rectilinear_chunks`` option): what one writes the other reads bit-exactly, unsharded and as
the outer grid of sharded arrays, edge chunks past the array's end included; and zarrbolt's
pipeline inside zarr-python serves such arrays itself (no fallback to zarr-python's pipeline, no
call handed to it) with zarr-python's own values."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")

import zarrbolt  # noqa: E402
from zarrbolt import codec_pipeline as zcp  # noqa: E402

SHAPE = (40, 36)
LAYOUTS = {
    # unsharded: chunks that differ along both dimensions
    "chunks": dict(chunks=[[5, 10, 1, 24], [4, 4, 9, 19]]),
    # sharded: shards that differ (multiples of the inner chunks), inner chunks regular
    "shards": dict(chunks=(4, 6), shards=[[8, 16, 4, 12], [12, 6, 18]]),
}
DTYPES = ["uint16", "float32"]


@pytest.fixture(autouse=True)
def rectilinear():
    with zarr.config.set({"array.rectilinear_chunks": True}):
        yield


def _data(dtype):
    rng = np.random.default_rng(3)
    return rng.integers(0, 60000, SHAPE).astype(dtype) / (1 if dtype == "uint16" else 7)


def _chunk_files(root):
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            if n != "zarr.json":
                p = os.path.join(d, n)
                out[os.path.relpath(p, root)] = open(p, "rb").read()
    return out


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_zarr_python_writes_zarrbolt_reads(tmp_path, layout, dtype):
    data = _data(dtype)
    z = zarr.create_array(str(tmp_path / "z"), shape=SHAPE, dtype=dtype, fill_value=0, **LAYOUTS[layout])
    z[:] = data
    z[30:, 30:] = 0  # absent chunks / inner chunks: the fill value
    data[30:, 30:] = 0
    assert json.load(open(tmp_path / "z" / "zarr.json"))["chunk_grid"]["name"] == "rectilinear"
    a = zarrbolt.open_array(str(tmp_path / "z"), mode="r")
    np.testing.assert_array_equal(a[:], data)
    np.testing.assert_array_equal(a[3:37, 1:33:2], data[3:37, 1:33:2])
    np.testing.assert_array_equal(a.vindex[[0, 39, 17], [35, 0, 6]], data[[0, 39, 17], [35, 0, 6]])
    # zarrbolt writing the same data stores the same chunk bytes (shards: the same values; zarr-python
    # lays a shard's inner chunks out in Morton order, zarrbolt in C order by default)
    b = zarrbolt.create_array(str(tmp_path / "b"), shape=SHAPE, dtype=dtype, fill_value=0, **LAYOUTS[layout])
    b[:] = data
    za, zb = _chunk_files(tmp_path / "z"), _chunk_files(tmp_path / "b")
    assert sorted(za) == sorted(zb)
    if layout == "chunks":
        assert za == zb


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_zarrbolt_writes_zarr_python_reads(tmp_path, layout, dtype):
    data = _data(dtype)
    a = zarrbolt.create_array(str(tmp_path / "a"), shape=SHAPE, dtype=dtype, fill_value=0, **LAYOUTS[layout])
    a[:] = data
    a[5:20, 7:30] = 3
    data[5:20, 7:30] = 3
    z = zarr.open_array(str(tmp_path / "a"), mode="r")
    np.testing.assert_array_equal(z[:], data)
    np.testing.assert_array_equal(z[11:13, :], data[11:13, :])


def test_edges_past_the_end_both_ways(tmp_path):
    """Edges that add up to more than the shape (allowed by the extension; zarr-python keeps them
    when it shrinks an array)."""
    data = _data("uint16")[:37, :29]
    a = zarrbolt.create_array(str(tmp_path / "a"), shape=data.shape, dtype="uint16", fill_value=5,
                              chunks=[[5, 12, 1, 9, 13], 6])
    a[:] = data
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a"), mode="r")[:], data)
    z = zarr.create_array(str(tmp_path / "z"), shape=(40, 30), dtype="uint16", fill_value=5,
                          chunks=[[5, 12, 1, 9, 13], 6])
    z[:] = 1
    z.resize((37, 29))
    z[:] = data
    assert json.load(open(tmp_path / "z" / "zarr.json"))["shape"] == [37, 29]
    np.testing.assert_array_equal(zarrbolt.open_array(str(tmp_path / "z"), mode="r")[:], data)


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("kind", ["local", "memory"])
def test_zarrbolts_pipeline_serves_it(tmp_path, layout, kind):
    data = _data("uint16")
    store = str(tmp_path / "z") if kind == "local" else zarr.storage.MemoryStore()
    z = zarr.create_array(store, shape=SHAPE, dtype="uint16", fill_value=0, **LAYOUTS[layout])
    z[:] = data
    sels = [(slice(None), slice(None)), (slice(3, 37), slice(2, 33)), (17, slice(None)),
            (slice(None, None, 3), slice(1, None, 5))]
    expected = {s: zarr.open_array(store, mode="r")[s] for s in sels}
    for counter in (zcp.fallback_counts, zcp.delegated_counts, zcp.strategy_counts):
        counter.clear()
    with zarr.config.set({"codec_pipeline.path": "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"}):
        zz = zarr.open_array(store, mode="r+")
        assert type(zz._async_array.codec_pipeline).__name__ == "ZarrboltCodecPipeline"
        for s in sels:
            np.testing.assert_array_equal(zz[s], expected[s])
        zz[6:31, 4:20] = 9
        zz[39, :] = 1  # (strided writes go to zarr-python's pipeline on every grid: not asked here)
    data[6:31, 4:20] = 9
    data[39, :] = 1
    np.testing.assert_array_equal(zarr.open_array(store, mode="r")[:], data)
    assert not zcp.fallback_counts and not zcp.delegated_counts, (zcp.fallback_counts, zcp.delegated_counts)
    assert sum(zcp.strategy_counts.values()) >= len(sels)


def test_the_pipeline_follows_a_resize_past_the_edges(tmp_path):
    """zarr-python adds a chunk when it grows the array past its edges; the pipeline made before
    reads the metadata again for the new chunk's shape and serves it (no call handed over)."""
    store = str(tmp_path / "z")
    for counter in (zcp.fallback_counts, zcp.delegated_counts):
        counter.clear()
    with zarr.config.set({"codec_pipeline.path": "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"}):
        z = zarr.create_array(store, shape=(30,), dtype="int32", fill_value=0, chunks=[[10, 10, 10]])
        z[:] = np.arange(30)
        z.resize((45,))
        z[30:] = np.arange(30, 45)
        np.testing.assert_array_equal(z[:], np.arange(45))
    edges = json.load(open(tmp_path / "z" / "zarr.json"))["chunk_grid"]["configuration"]["chunk_shapes"]
    assert edges == [[[10, 3], 15]]
    np.testing.assert_array_equal(zarrbolt.open_array(store, mode="r")[:], np.arange(45))
    assert not zcp.fallback_counts and not zcp.delegated_counts, (zcp.fallback_counts, zcp.delegated_counts)
