"""The output cache is off inside dask.distributed workers (``output_cache_bytes="auto"``): the
memory of dropped results stays where the worker's memory manager can see it (given back).
Real LocalClusters: worker processes, and workers in this process."""

from __future__ import annotations

import gc
import os

import pytest

distributed = pytest.importorskip("distributed")

import numpy as np  # noqa: E402

import zarrbolt  # noqa: E402

SHAPE = (16, 512, 1024)  # 16 MiB of uint16: large enough for the cache


def _read_and_drop(path: str) -> dict:
    """On a worker: read a large result, drop it, and report what the cache did."""
    import zarrbolt
    from zarrbolt import _memory
    from zarrbolt.pipeline import outbuf

    outbuf.clear()
    a = zarrbolt.open_array(path, mode="r")
    x = a[...]
    total = int(x.sum(dtype="uint64"))
    del x
    gc.collect()
    return {"limit": outbuf.limit(), "held": outbuf.held_bytes(), "in_worker": _memory.in_dask_worker(),
            "setting": zarrbolt.config.get("output_cache_bytes"), "total": total, "pid": os.getpid()}


@pytest.fixture(scope="module")
def volume(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("mem") / "v.zarr")
    a = zarrbolt.create_array(path, shape=SHAPE, chunks=(8, 128, 256), dtype="uint16")
    data = np.random.default_rng(0).integers(0, 4000, SHAPE, dtype=np.uint16)
    a[...] = data
    return path, int(data.sum(dtype="uint64"))


def test_cache_is_off_in_worker_processes(volume):
    path, total = volume
    src = os.path.dirname(os.path.dirname(os.path.abspath(zarrbolt.__file__)))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p))
        with distributed.LocalCluster(n_workers=1, processes=True, threads_per_worker=2, host="127.0.0.1",
                                      dashboard_address=None, silence_logs=40) as cluster:
            with distributed.Client(cluster) as client:
                r = client.submit(_read_and_drop, path, pure=False).result()
                # also outside a task (the worker's event loop thread): the process is a worker
                ran = client.run(lambda: (__import__("zarrbolt.pipeline.outbuf").pipeline.outbuf.limit()))
    assert r["pid"] != os.getpid()
    assert r["setting"] == "auto" and r["in_worker"]
    assert r["limit"] == 0 and r["held"] == 0
    assert r["total"] == total
    assert list(ran.values()) == [0]
    # this process is the client, not a worker: its cache stays on
    from zarrbolt.pipeline import outbuf

    assert outbuf.limit() > 0


def test_cache_is_off_for_workers_in_this_process(volume):
    path, total = volume
    from zarrbolt.pipeline import outbuf

    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=1, dashboard_address=None,
                                  silence_logs=40) as cluster:
        with distributed.Client(cluster) as client:
            r = client.submit(_read_and_drop, path, pure=False).result()
            assert outbuf.limit() == 0  # a worker lives in this process: its memory is counted
    assert r["pid"] == os.getpid() and r["in_worker"]
    assert r["limit"] == 0 and r["held"] == 0 and r["total"] == total
    gc.collect()
    assert outbuf.limit() > 0  # the worker is gone


def test_an_explicit_size_is_kept_in_workers(volume):
    path, _ = volume
    with zarrbolt.config.set(output_cache_bytes=64 << 20):
        with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=1, dashboard_address=None,
                                      silence_logs=40) as cluster:
            with distributed.Client(cluster) as client:
                r = client.submit(_read_and_drop, path, pure=False).result()
    assert r["limit"] == 64 << 20 and r["held"] == SHAPE[0] * SHAPE[1] * SHAPE[2] * 2
