"""The read planner (zarrbolt.pipeline.read) picks the strategy by the store's capabilities and
the chain, and the sharded reads window shards the one way: the C rule (zarrbolt.kernels.
shard_windows, zb_shard_windows) equals the windowing the reads used before it."""

from __future__ import annotations

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt import kernels
from zarrbolt.codecs.sharding import EMPTY
from zarrbolt.errors import ChecksumError, CodecError, StoreError
from zarrbolt.kernels import shard_windows
from zarrbolt.pipeline import read as planner
from zarrbolt.pipeline.fused import task_error
from zarrbolt.pipeline.shard.fetch import COALESCE_GAP
from zarrbolt.storage import LocalStore, MemoryStore

BLOSC = [{"name": "bytes", "configuration": {"endian": "little"}},
         {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2,
                                             "blocksize": 0}}]


class CountingMemoryStore(MemoryStore):
    """A MemoryStore (a real Store, so no native files) that counts its batched range reads."""

    def __init__(self):
        super().__init__()
        self.batched = 0
        self.single = 0

    def get_ranges_into(self, key, ranges, buffer):
        self.batched += 1
        return super().get_ranges_into(key, ranges, buffer)

    def get_into(self, key, buffer, offset=0):
        self.single += 1
        return super().get_into(key, buffer, offset)


class SubLocalStore(LocalStore):
    """A LocalStore subclass: it may change how values are read, so it gets no native files."""


def data(shape=(24, 40)):
    return (np.arange(np.prod(shape)) * 7 % 60000).astype("uint16").reshape(shape)


def strategy_of(read) -> str:
    before = dict(planner.strategy_counts)
    read()
    after = dict(planner.strategy_counts)
    changed = [k for k in after if after[k] != before.get(k, 0)]
    assert len(changed) == 1, changed
    return changed[0]


def make(store, sharded, **kw):
    v = data()
    if sharded:
        a = zarr.create_array(store, shape=v.shape, dtype="uint16", chunks=(4, 8), shards=(12, 16), **kw)
    else:
        a = zarr.create_array(store, shape=v.shape, dtype="uint16", chunks=(4, 8), codecs=BLOSC, **kw)
    a[...] = v
    return a, v


@pytest.mark.parametrize("sharded", [False, True])
@pytest.mark.parametrize("kind", ["local", "memory", "local-subclass"])
def test_strategy_follows_the_store(tmp_path, kind, sharded):
    store = {"local": lambda: LocalStore(tmp_path), "memory": MemoryStore,
             "local-subclass": lambda: SubLocalStore(tmp_path)}[kind]()
    a, v = make(store, sharded)
    prefix = "sharded-" if sharded else ""
    expect = "fused-files" if kind == "local" else "fused-store"
    for sel in [(...,), (slice(3, 21), slice(5, 33)), (7,)]:
        got = []
        assert strategy_of(lambda: got.append(a[sel])) == prefix + expect
        np.testing.assert_array_equal(got[0], v[sel])
    # steps and index arrays: the per-codec path
    assert strategy_of(lambda: np.testing.assert_array_equal(a[::2, 1::3], v[::2, 1::3])) == prefix + "per-codec"
    with zarr.config.set(fused_pipeline=False):
        b = zarr.open_array(store, mode="r")
        assert strategy_of(lambda: np.testing.assert_array_equal(b[2:9], v[2:9])) == prefix + "per-codec"


def test_memory_store_shards_are_read_in_batches():
    store = CountingMemoryStore()
    a, v = make(store, True)
    store.batched = store.single = 0
    with zarr.config.set(threads=1):
        assert strategy_of(lambda: np.testing.assert_array_equal(a[...], v)) == "sharded-fused-store"
    # one batched read per window (here: per shard, 6 shards), no single range reads
    assert store.batched == 6 and store.single == 0


def test_local_shards_without_a_fast_index_go_through_the_store(tmp_path):
    v = data()
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 8], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "big"}}], "index_location": "start"}}]
    a = zarr.create_array(LocalStore(tmp_path), shape=v.shape, dtype="uint16", chunks=(12, 16), codecs=codecs)
    a[...] = v
    assert strategy_of(lambda: np.testing.assert_array_equal(a[1:23, 2:39], v[1:23, 2:39])) == "sharded-fused-store"


# ---------------------------------------------------------------------------- shard_windows
def old_windows(offs, nb, ents, cap, max_gap):
    """The windowing the sharded reads used before shard_windows (array.py at fb75307)."""
    sizes = np.where(offs[ents] == EMPTY, 0, nb[ents]).tolist()
    out = []
    w0 = 0
    while w0 < len(ents):
        w1, tot = w0 + 1, sizes[w0]
        while w1 < len(ents) and tot + sizes[w1] <= cap:
            tot += sizes[w1]
            w1 += 1
        window = ents[w0:w1]
        out.append((w1, kernels.coalesce_ranges(offs, nb, window, max_gap=max_gap, max_read=cap)))
        w0 = w1
    return out


def random_shard(rng, n, empty_frac):
    sizes = rng.integers(1, 300, n).astype(np.uint64)
    perm = rng.permutation(n)  # file order differs from entry order
    offs = np.zeros(n, np.uint64)
    pos = 0
    for e in perm:
        pos += int(rng.integers(0, 3)) * int(rng.integers(0, 200))  # gaps, some of them large
        offs[e] = pos
        pos += int(sizes[e])
    empty = rng.random(n) < empty_frac
    offs[empty] = EMPTY
    sizes[empty] = EMPTY
    return offs, sizes


@pytest.mark.parametrize("seed", range(12))
def test_shard_windows_equal_the_old_windowing(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    offs, nb = random_shard(rng, n, [0, 0.2, 0.9][seed % 3])
    ents = rng.permutation(n)[: int(rng.integers(1, n + 1))].astype(np.int64)
    for cap in (1, 150, 600, 5000, 1 << 30):
        for gap in (0, 50, COALESCE_GAP):
            window_ends, order, read_of, begins, ends = shard_windows(offs, nb, ents, cap, gap)
            old = old_windows(offs, nb, ents, cap, gap)
            assert window_ends.tolist() == [w1 for w1, _ in old]
            k = r = lo = 0
            for hi, (o_old, ro_old, b_old, e_old) in zip(window_ends.tolist(), [x for _, x in old]):
                m = len(o_old)
                assert all(lo <= p < hi for p in order[k: k + m])
                assert ents[order[k: k + m]].tolist() == o_old.tolist()  # positions of the same entries
                assert (read_of[k: k + m] - r).tolist() == ro_old.tolist()
                assert begins[r: r + len(b_old)].tolist() == b_old.tolist()
                assert ends[r: r + len(e_old)].tolist() == e_old.tolist()
                k, r, lo = k + m, r + len(b_old), hi
            assert k == len(order) and r == len(begins) == len(ends)
            nonempty = [p for p in range(len(ents)) if offs[ents[p]] != EMPTY]
            assert sorted(order.tolist()) == nonempty


def test_shard_windows_of_nothing():
    offs = np.array([0, EMPTY], np.uint64)
    nb = np.array([10, EMPTY], np.uint64)
    for ents in ([], [1]):
        window_ends, order, read_of, begins, ends = shard_windows(offs, nb, ents, 100, 0)
        assert window_ends.tolist() == ([1] if ents else [])
        assert order.tolist() == read_of.tolist() == begins.tolist() == ends.tolist() == []
        assert order.dtype == np.int64 and begins.dtype == np.uint64


# ---------------------------------------------------------------------------- failing tasks
def test_task_error_names_the_failing_task():
    e = ChecksumError("checksum mismatch")
    e.task_index = 2
    err = task_error(e, lambda i: f"chunk c/{i}")
    assert type(err) is ChecksumError and str(err) == "chunk c/2: checksum mismatch"
    assert str(task_error(CodecError("bad"), lambda i: f"chunk {'?' if i is None else i}")) == "chunk ?: bad"
    assert task_error(StoreError("gone"), lambda i: None if i is None else "x") is None
    # a second argument is not a task index: only the attribute is
    assert str(task_error(StoreError("io", 1), lambda i: f"shard {i}")) == "shard None: io"
