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
