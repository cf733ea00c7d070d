"""``dask.array.store`` into a sharded zarrbolt array with dask chunks smaller than the shards
(issue #21.1): several tasks update one shard at the same time, from threads (the threaded
scheduler) and from worker processes (multiprocessing); zarrbolt's write locks lose nothing.
zarr-python 3.4.2 loses about a third of such data; that comparison lives in
``benchmarks/writers_lose_nothing.py``."""

import multiprocessing as mp
import os

import pytest

dask = pytest.importorskip("dask")

import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402

import zarrbolt  # noqa: E402
from zarrbolt.storage import LocalStore  # noqa: E402
from zarrbolt.storage.locks import lock_path  # noqa: E402

# dask's multiprocessing scheduler forks from a process with threads (dask's own, zarrbolt's pool)
pytestmark = pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")

SHAPE, SHARDS, INNER, DASK_CHUNKS = (256, 64), (128, 64), (8, 64), (8, 64)  # 16 dask chunks per shard


def _target(path):
    return zarrbolt.create_array(LocalStore(path), shape=SHAPE, dtype="int32", chunks=INNER, shards=SHARDS,
                                 fill_value=-1)


def _source(seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 1 << 30, SHAPE, dtype="int32")


@pytest.mark.parametrize("scheduler", ["threads", "processes"])
def test_dask_store_chunks_smaller_than_shards_lose_nothing(tmp_path, scheduler):
    if scheduler == "processes" and "fork" not in mp.get_all_start_methods():
        pytest.skip("needs fork")
    for trial in range(3):
        data = _source(trial)
        arr = _target(str(tmp_path / f"t{trial}"))
        x = da.from_array(data, chunks=DASK_CHUNKS)
        with dask.config.set({"scheduler": scheduler, "multiprocessing.context": "fork"}):
            da.store(x, arr, lock=False, num_workers=8)
        got = zarrbolt.open_array(LocalStore(str(tmp_path / f"t{trial}")), mode="r")[:]
        lost = int((got != data).any(axis=1).sum())
        assert lost == 0, f"{lost} rows of {SHAPE[0]} lost (trial {trial}, {scheduler})"


def test_without_locks_updates_can_be_lost(tmp_path):
    """The switch turns the protection off (single-writer pipelines): with dask threads updating
    one shard, some updates may then be lost; the data stay decodable either way."""
    data = _source(7)
    arr = _target(str(tmp_path / "nolock"))
    x = da.from_array(data, chunks=DASK_CHUNKS)
    with zarrbolt.config.set(write_lock=False), dask.config.set(scheduler="threads"):
        da.store(x, arr, lock=False, num_workers=8)
    got = zarrbolt.open_array(LocalStore(str(tmp_path / "nolock")), mode="r")[:]
    assert got.shape == SHAPE  # decodable; how much was lost depends on timing
    assert not os.path.exists(lock_path(str(tmp_path / "nolock")))
    assert not os.path.exists(os.path.join(str(tmp_path / "nolock"), ".zb-lock"))
