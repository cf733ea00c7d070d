"""Nothing global serializes independent arrays read from different Python threads.

Structural checks, not timings: (1) two reads of two arrays each wait inside their store's
fetch until the other read is inside its own (a barrier): a lock held by one read across its
fetch would stop the other from arriving, and the barrier would break; (2) two reads (and two
writes) of arrays in local directories are seen inside the native, GIL-free batch runner at the
same time (a counter in csrc/pool.c, ``_plans.pool_callers_peak``).  The throughput ratio is
benchmarks/thread_scaling.py's ``--two-arrays``.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt._ext import _plans
from zarrbolt.storage import LocalStore, MemoryStore

SHAPE = (32, 256, 512)  # 8 MiB of uint16
BARRIER_TIMEOUT = 60  # only guards against a hang: a serializing lock breaks the barrier


class RendezvousStore(MemoryStore):
    """A MemoryStore whose first chunk fetch (while ``armed``) waits at ``barrier`` for the
    other thread's store to get there too."""

    def __init__(self, barrier: threading.Barrier):
        super().__init__()
        self.barrier = barrier
        self.armed = False
        self.met = False

    def _value(self, key: str):
        if self.armed and not key.endswith("zarr.json"):
            self.armed = False
            self.barrier.wait()  # raises BrokenBarrierError when the other read cannot get here
            self.met = True
        return super()._value(key)


def run_both(targets) -> list:
    errors: list = []

    def wrap(f):
        try:
            f()
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(f,)) for f in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(BARRIER_TIMEOUT * 2)
    assert not any(t.is_alive() for t in threads), "a read never finished"
    return errors


@pytest.mark.parametrize("sharded", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
def test_two_arrays_fetch_at_the_same_time(sharded, threads):
    barrier = threading.Barrier(2, timeout=BARRIER_TIMEOUT)
    rng = np.random.default_rng(1)
    arrays, datas = [], []
    for _i in range(2):
        store = RendezvousStore(barrier)
        kw = {"shards": (16, 128, 256)} if sharded else {}
        a = zarr.create_array(store, shape=SHAPE, chunks=(8, 64, 128), dtype="uint16", **kw)
        d = rng.integers(0, 4000, SHAPE, dtype=np.uint16)
        a[...] = d
        store.armed = True
        arrays.append(a)
        datas.append(d)
    results: dict = {}
    with zarr.config.set(threads=threads):
        errors = run_both([lambda i=i: results.__setitem__(i, arrays[i][...]) for i in range(2)])
    assert not errors, errors
    assert all(a.store.met for a in arrays)
    for i in range(2):
        np.testing.assert_array_equal(results[i], datas[i])


def _both_inside_the_batch_runner(make_calls, attempts=200) -> int:
    """Run the two calls from two threads (started together) until the native batch runner has
    seen both inside it at once, at most ``attempts`` times; the peak seen."""
    start = threading.Barrier(2, timeout=BARRIER_TIMEOUT)
    peak = 0
    for _ in range(attempts):
        _plans.pool_callers_peak(reset=True)
        calls = make_calls()
        errors = run_both([lambda f=f: (start.wait(), f()) for f in calls])
        assert not errors, errors
        peak = _plans.pool_callers_peak()
        if peak >= 2:
            break
    return peak


@pytest.mark.parametrize("threads", [1, 2])
def test_two_reads_are_inside_the_gil_free_region_at_once(tmp_path, threads):
    rng = np.random.default_rng(2)
    arrays, datas = [], []
    for i in range(2):
        a = zarr.create_array(LocalStore(tmp_path / f"a{i}"), shape=SHAPE, chunks=(8, 64, 128), dtype="uint16",
                              codecs=[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}])
        d = rng.integers(0, 4000, SHAPE, dtype=np.uint16)
        a[...] = d
        arrays.append(a)
        datas.append(d)
    out: dict = {}
    with zarr.config.set(threads=threads):
        peak = _both_inside_the_batch_runner(
            lambda: [lambda i=i: out.__setitem__(i, arrays[i][...]) for i in range(2)])
    assert peak >= 2
    for i in range(2):
        np.testing.assert_array_equal(out[i], datas[i])


def test_two_writes_are_inside_the_gil_free_region_at_once(tmp_path):
    data = np.random.default_rng(3).integers(0, 4000, SHAPE, dtype=np.uint16)
    arrays = [zarr.create_array(LocalStore(tmp_path / f"w{i}"), shape=SHAPE, chunks=(8, 64, 128), dtype="uint16",
                                codecs=[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}])
              for i in range(2)]

    def write(i):
        arrays[i][...] = data

    with zarr.config.set(threads=1):
        peak = _both_inside_the_batch_runner(lambda: [lambda i=i: write(i) for i in range(2)])
    assert peak >= 2
    for a in arrays:
        np.testing.assert_array_equal(a[...], data)
