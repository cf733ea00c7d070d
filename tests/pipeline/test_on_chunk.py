"""``Array.set_basic_selection(..., on_chunk=)``: every stored object a write touches is told once,
with whether it was stored or left out as all fill value, on every way a write takes (chunks in C
on a local store, chunk by chunk on a memory store, whole and partial shards)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import zarrbolt as zb
from zarrbolt.storage import MemoryStore


def _told(a, selection, value):
    seen: dict[str, bool] = {}
    lock = threading.Lock()

    def on_chunk(key: str, stored: bool) -> None:
        with lock:
            assert key not in seen
            seen[key] = stored

    a.set_basic_selection(selection, value, on_chunk=on_chunk)
    return seen


@pytest.mark.parametrize("where", ["local", "memory"])
@pytest.mark.parametrize("shards", [None, (8, 16)])
def test_each_stored_object_is_told_once(tmp_path, where, shards):
    store = str(tmp_path / "a.zarr") if where == "local" else MemoryStore()
    a = zb.create_array(store, shape=(32, 32), chunks=(4, 8), shards=shards, dtype="uint16")
    value = np.zeros((32, 32), np.uint16)
    value[:8, :16] = 7   # one shard (or its 4 chunks) holds data, the rest only the fill value
    seen = _told(a, ..., value)
    units = 8 if shards else 32
    assert len(seen) == units
    stored = {k for k, v in seen.items() if v}
    assert len(stored) == (1 if shards else 4)
    assert stored == set(a._iter_stored_chunk_keys())
    np.testing.assert_array_equal(a[...], value)


def test_partial_updates_are_told_too(tmp_path):
    a = zb.create_array(str(tmp_path / "a.zarr"), shape=(16, 16), chunks=(4, 4), shards=(8, 8), dtype="int32")
    a[...] = 1
    seen = _told(a, (slice(2, 10), slice(0, 3)), 5)
    assert seen == {"c/0/0": True, "c/1/0": True}
