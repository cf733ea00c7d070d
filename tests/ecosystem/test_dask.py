"""zarrbolt arrays in dask graphs run by a real ``dask.distributed`` cluster with worker processes
(the arrays travel to the workers pickled: store + path + metadata)."""

import os
import pickle

import pytest

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402

import zarrbolt  # noqa: E402
from zarrbolt.dask import shard_aligned, to_dask  # noqa: E402
from zarrbolt.errors import MetadataError  # noqa: E402

LE = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
BLOSC = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2}}
SHAPE = (37, 64, 50)


@pytest.fixture(scope="module")
def client():
    # worker processes import zarrbolt from where this process does (an in-place build under src/)
    src = os.path.dirname(os.path.dirname(os.path.abspath(zarrbolt.__file__)))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p))
        with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                                      dashboard_address=None, silence_logs=40) as cluster:
            with distributed.Client(cluster) as c:
                yield c


def _volume(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 4000, SHAPE) + np.arange(SHAPE[2]) * 7).astype("uint16")


def _create(path, sharded, data=None):
    if sharded:
        codecs = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [8, 16, 25], "codecs": [LE, BLOSC], "index_codecs": [LE, {"name": "crc32c"}]}}]
        arr = zarrbolt.create_array(str(path), shape=SHAPE, chunks=(16, 32, 50), dtype="uint16", codecs=codecs)
    else:
        arr = zarrbolt.create_array(str(path), shape=SHAPE, chunks=(8, 16, 25), dtype="uint16", codecs=[LE, ZSTD])
    if data is not None:
        arr[...] = data
    return arr


def test_tasks_run_in_worker_processes(client):
    pids = set(client.run(os.getpid).values())
    assert len(pids) == 2 and os.getpid() not in pids


@pytest.mark.parametrize("sharded", [False, True], ids=["chunked", "sharded"])
@pytest.mark.parametrize("how", ["from_array", "to_dask"])
def test_reductions_equal_numpy(client, tmp_path, sharded, how):
    data = _volume()
    arr = _create(tmp_path / "v.zarr", sharded, data)
    x = da.from_array(arr, chunks=arr.chunks) if how == "from_array" else to_dask(arr)
    if how == "to_dask":
        assert shard_aligned(arr, x.chunks)
        x = to_dask(arr, chunks=arr.shards or arr.chunks)  # many tasks, on both workers
    ref = data.astype("float64")
    results = client.compute([x.sum(), x.mean(axis=0), x.max(axis=(1, 2)), x.sum(axis=2), x.min()], sync=True)
    assert int(results[0]) == int(data.sum(dtype="uint64"))
    np.testing.assert_allclose(results[1], ref.mean(axis=0))
    np.testing.assert_array_equal(results[2], data.max(axis=(1, 2)))
    np.testing.assert_array_equal(results[3], data.sum(axis=2))
    assert results[4] == data.min()
    sel = x[5:30, ::3, 7:41]
    np.testing.assert_array_equal(client.compute(sel, sync=True), data[5:30, ::3, 7:41])


def test_to_dask_names_and_chunks(tmp_path):
    arr = _create(tmp_path / "v.zarr", True, _volume())
    x = to_dask(arr)
    assert x.name == to_dask(zarrbolt.open_array(str(tmp_path / "v.zarr"))).name
    assert x.name.startswith("zarrbolt-") and x.name != to_dask(arr, chunks=(16, 64, 50)).name
    assert x.chunks == ((37,), (64,), (50,))  # small: one block
    assert to_dask(arr, chunks="auto").chunks == x.chunks
    per_shard = to_dask(arr, chunks=arr.shards)
    assert per_shard.chunks == ((16, 16, 5), (32, 32), (50,))
    assert shard_aligned(arr, per_shard.chunks)
    assert not shard_aligned(arr, da.from_array(arr, chunks=arr.chunks).chunks)
    with dask.config.set({"array.chunk-size": "100KiB"}):  # several shards per block
        small = to_dask(arr)
    assert shard_aligned(arr, small.chunks) and 1 < small.npartitions < per_shard.npartitions
    with dask.config.set({"array.chunk-size": "1KiB"}):  # never less than a shard
        assert to_dask(arr).chunks == per_shard.chunks
    np.testing.assert_array_equal(small.compute(scheduler="sync"), arr[:])
    empty = zarrbolt.create_array(None, shape=(0, 5), chunks=(4, 4), dtype="int8")
    assert to_dask(empty).compute().shape == (0, 5)
    with pytest.raises(MetadataError):
        to_dask(np.zeros(3))
    for bad in ((16, 32), (0, 32, 50), ((10, 10), (64,), (50,)), "nonsense"):
        with pytest.raises(MetadataError):
            to_dask(arr, chunks=bad)
    pickle.loads(pickle.dumps(x))  # the graph pickles


@pytest.mark.parametrize("sharded", [False, True], ids=["chunked", "sharded"])
@pytest.mark.parametrize("lock", [False, True])
def test_shard_aligned_store_writes(client, tmp_path, sharded, lock):
    data = _volume(seed=1)
    direct = _create(tmp_path / "direct.zarr", sharded, data)
    target = _create(tmp_path / "target.zarr", sharded)
    step = direct.shards or direct.chunks
    x = da.from_array(data, chunks=step) + 0  # blocks on shard boundaries
    assert shard_aligned(target, x.chunks)
    client.compute(da.store(x, target, lock=lock, compute=False), sync=True)
    np.testing.assert_array_equal(zarrbolt.open_array(str(tmp_path / "target.zarr"))[:], data)
    # byte for byte what zarrbolt writes itself
    a_keys = sorted(direct.store.list())
    assert a_keys == sorted(target.store.list())
    for k in a_keys:
        assert direct.store.get(k) == target.store.get(k), k


def test_to_dask_round_trip_write_then_read(client, tmp_path):
    src = _create(tmp_path / "src.zarr", True, _volume(seed=2))
    dst = _create(tmp_path / "dst.zarr", True)
    x = to_dask(src)
    client.compute(da.store(x * 2 // 3, dst, lock=False, compute=False), sync=True)
    got = client.compute(to_dask(dst), sync=True)
    np.testing.assert_array_equal(got, src[:] * 2 // 3)


def test_stale_array_on_a_worker_is_refused(client, tmp_path):
    arr = _create(tmp_path / "v.zarr", False, _volume())
    x = to_dask(arr)
    zarrbolt.open_array(str(tmp_path / "v.zarr")).resize((20, 64, 50))
    with pytest.raises(MetadataError, match="changed since it was pickled"):
        client.compute(x.sum(), sync=True)


def _worker_reads():
    import zarrbolt.codec_pipeline as cp
    from zarrbolt.pipeline import read as zb_read

    counts = getattr(cp, "strategy_counts", zb_read.strategy_counts)
    return sum(counts.values()), sum(cp.fallback_counts.values())


def test_from_zarr_through_the_pipeline_on_workers(client, tmp_path):
    """A zarr-python array opened with zarrbolt's pipeline pickles with it: the workers decode
    with zarrbolt."""
    zarr = pytest.importorskip("zarr")
    pytest.importorskip("zarrbolt.codec_pipeline", reason="zarrbolt.codec_pipeline is not built")
    data = _volume(seed=3)
    path = str(tmp_path / "z.zarr")
    z = zarr.create_array(path, shape=SHAPE, chunks=(8, 16, 25), shards=(16, 32, 50), dtype="uint16")
    z[...] = data
    before = client.run(_worker_reads)
    with zarr.config.set({"codec_pipeline.path": "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"}):
        x = da.from_zarr(path, chunks=(16, 32, 50))
    assert int(client.compute(x.sum(), sync=True)) == int(data.sum(dtype="uint64"))
    np.testing.assert_array_equal(client.compute(x.max(axis=0), sync=True), data.max(axis=0))
    after = client.run(_worker_reads)
    assert sum(after[w][0] - before[w][0] for w in after) > 0  # the workers read with zarrbolt
    assert all(after[w][1] == before[w][1] for w in after)  # and nothing fell back


def test_importing_zarrbolt_imports_no_dask():
    import subprocess
    import sys

    code = ("import sys, zarrbolt; f = zarrbolt.to_dask; import zarrbolt.dask; "
            "assert 'dask' not in sys.modules and 'zarr' not in sys.modules, sorted(sys.modules)")
    src = os.path.dirname(os.path.dirname(os.path.abspath(zarrbolt.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert zarrbolt.to_dask is to_dask and "to_dask" in zarrbolt.__all__
    with pytest.raises(AttributeError):
        zarrbolt.no_such_name  # noqa: B018
