"""A chunk shape far larger than memory in an array's metadata (zarr.json or .zarray) is a typed
error when the array is read or written, never a bare MemoryError or a crash."""

import json

import numpy as np
import pytest

import zarrbolt
from zarrbolt.errors import ChunkMemoryError, ZarrboltError

HUGE = 2**40  # elements per chunk: 2 TiB of uint16


def _damaged_v3(tmp_path, **kw):
    p = tmp_path / "a.zarr"
    a = zarrbolt.create_array(str(p), shape=(100,), chunks=(10,), dtype="u2", **kw)
    a[:] = np.arange(100)
    doc = json.loads((p / "zarr.json").read_text())
    doc["shape"], doc["chunk_grid"]["configuration"]["chunk_shape"] = [2 * HUGE], [HUGE]
    for codec in doc["codecs"]:
        if codec["name"] == "sharding_indexed":  # inner chunks as large as the shard
            codec["configuration"]["chunk_shape"] = [HUGE]
    (p / "zarr.json").write_text(json.dumps(doc))
    return str(p)


def _damaged_v2(tmp_path):
    p = tmp_path / "v2.zarr"
    a = zarrbolt.create_array(str(p), shape=(100,), chunks=(10,), dtype="u2", zarr_format=2)
    a[:] = np.arange(100)
    doc = json.loads((p / ".zarray").read_text())
    doc["shape"], doc["chunks"] = [2 * HUGE], [HUGE]
    (p / ".zarray").write_text(json.dumps(doc))
    return str(p)


@pytest.mark.parametrize("kind", ["v3-fused", "v3-gzip", "v3-sharded", "v2"])
def test_reading_a_huge_chunk_is_a_typed_error(tmp_path, kind):
    if kind == "v2":
        path = _damaged_v2(tmp_path)
    elif kind == "v3-sharded":
        path = _damaged_v3(tmp_path, shards=(20,))
    else:
        path = _damaged_v3(tmp_path, compressors=None if kind == "v3-fused" else {"name": "gzip", "configuration": {"level": 1}})
    a = zarrbolt.open_array(path, mode="r+")
    with pytest.raises((ChunkMemoryError, ZarrboltError)) as info:
        a[:5]
    assert isinstance(info.value, ZarrboltError)
    with pytest.raises(ZarrboltError):
        a[:5] = 1


def _read_missing(arr, index):
    """A read of chunks that are not stored: the fill value, or (where the read's C plan sizes its
    scratch by the chunk) ChunkMemoryError -- both correct, nothing else is."""
    try:
        return arr[index]
    except ChunkMemoryError:
        return 0


# Arrays whose chunks are legal in metadata but can never be held in memory: creating and opening
# them works (nothing is allocated), reads of chunks that are not stored give the fill value or a
# ChunkMemoryError, writes are ChunkMemoryError (a MemoryError) -- never an OverflowError from compiling the C plan
# (a size beyond size_t), numpy's own _ArrayMemoryError or its "array is too big" ValueError.
@pytest.mark.parametrize("shape", [(2**40, 2**40), (2**40,)], ids=["beyond-size_t", "8TiB"])
@pytest.mark.parametrize("kw", [{}, {"compressors": None}, {"zarr_format": 2}], ids=["zstd", "raw", "v2"])
def test_huge_chunks_of_a_new_array(tmp_path, shape, kw):
    a = zarrbolt.create_array(str(tmp_path / "h.zarr"), shape=shape, chunks=shape, dtype="float64", **kw)
    assert _read_missing(a, (0,) * len(shape)) == 0.0
    reopened = zarrbolt.open_array(str(tmp_path / "h.zarr"), mode="r+")
    for arr in (a, reopened):
        with pytest.raises(ChunkMemoryError) as info:
            arr[(0,) * len(shape)] = 1.0
        assert isinstance(info.value, MemoryError)
        assert "does not fit in memory" in str(info.value)
    assert not any(p.name.startswith("c") or p.name[0].isdigit() for p in (tmp_path / "h.zarr").iterdir())


def test_huge_shard_of_a_new_array(tmp_path):
    a = zarrbolt.create_array(str(tmp_path / "s.zarr"), shape=(2**40, 2**40), chunks=(2**20, 2**20),
                              shards=(2**40, 2**40), dtype="uint16")
    assert _read_missing(a, (5, 5)) == 0
    with pytest.raises(ChunkMemoryError, match="shard"):
        a[5, 5] = 1


def test_huge_chunk_in_memory_store():
    a = zarrbolt.create_array(shape=(2**40, 2**40), chunks=(2**40, 2**40), dtype="float64")
    assert _read_missing(a, (0, 0)) == 0.0
    with pytest.raises(ChunkMemoryError):
        a[0, 0] = 1.0
    a2 = zarrbolt.create_array(shape=(2**40,), chunks=(2**40,), dtype="float64")
    with pytest.raises(ChunkMemoryError):
        a2[:3] = [1.0, 2.0, 3.0]
