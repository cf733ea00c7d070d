"""The native read pool (csrc/pool.c) and Plan.read_decode_par: chunk files read and decoded on
several native threads with the GIL released once, giving exactly what one thread gives."""

from __future__ import annotations

import os
import sys
import threading

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt._ext import _kernels, _plans
from zarrbolt.errors import ChecksumError, CorruptChunkError
from zarrbolt.storage import LocalStore, MemoryStore

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BLOSC = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2,
                                            "blocksize": 0}}
za = sys.modules["zarrbolt.pipeline.buffers"]


def _array(tmp_path, name="a", shape=(48, 100, 130), chunks=(8, 16, 16), codecs=(LE, BLOSC), fill=3):
    rng = np.random.default_rng(len(name))
    data = rng.integers(0, 2000, shape).astype(np.uint16)
    a = zarr.create_array(LocalStore(tmp_path / name), shape=shape, chunks=chunks, dtype="uint16",
                          codecs=list(codecs), fill_value=fill)
    a[...] = data
    return zarr.open_array(LocalStore(tmp_path / name)), data


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
@pytest.mark.parametrize("bpt", [1, 4, 50])
def test_reads_on_the_pool_equal_numpy(tmp_path, threads, bpt, monkeypatch):
    """Every selection, with more or fewer batches than workers (and than chunks)."""
    from zarrbolt import _threads as executor

    monkeypatch.setattr(executor, "BATCHES_PER_THREAD", bpt)
    a, data = _array(tmp_path)
    sels = [(...,), (slice(3, 37), slice(5, 66), slice(7, 80)), (5,), (slice(None), 17), (slice(0, 8), slice(0, 16)),
            (slice(9, 10), slice(20, 21), slice(30, 31))]
    with zarr.config.set(threads=threads):
        for sel in sels:
            np.testing.assert_array_equal(a[sel], data[sel])


def test_missing_chunks_and_chunks_larger_than_a_helpers_arena(tmp_path, monkeypatch):
    a, data = _array(tmp_path, codecs=(LE,))  # 4 KiB chunk files
    os.remove(tmp_path / "a" / "c" / "1" / "2" / "3")
    expect = data.copy()
    expect[8:16, 32:48, 48:64] = 3  # c/1/2/3
    monkeypatch.setattr(za, "_helpers", [])
    monkeypatch.setattr(za, "_ARENA_BYTES", 5000)  # helpers: one chunk per round
    for arena in (1 << 20, 3000):  # worker 0: all chunks, then none, fit
        monkeypatch.setattr(za._arenas, "buf", memoryview(bytearray(arena)), raising=False)
        with zarr.config.set(threads=4):
            np.testing.assert_array_equal(a[...], expect)
            np.testing.assert_array_equal(a[2:30, 10:60, 5:85], expect[2:30, 10:60, 5:85])
    monkeypatch.setattr(za, "_ARENA_BYTES", 100)  # helpers: no chunk fits at all
    monkeypatch.setattr(za, "_helpers", [])
    with zarr.config.set(threads=3):
        np.testing.assert_array_equal(a[...], expect)


def test_the_lowest_failing_chunk_is_reported(tmp_path):
    """Two damaged chunks in different batches: every run, on any number of threads, names the
    first one in the read's order (the one a single thread reports)."""
    a, data = _array(tmp_path, codecs=(LE, {"name": "crc32c"}))
    for key in ("c/1/0/0", "c/4/3/5"):
        p = tmp_path / "a" / key
        raw = bytearray(p.read_bytes())
        raw[10] ^= 0xFF
        p.write_bytes(bytes(raw))
    for threads in (1, 2, 3, 8):
        with zarr.config.set(threads=threads):
            for _ in range(10):
                with pytest.raises(ChecksumError, match="c/1/0/0"):
                    a[...]
                with pytest.raises(ChecksumError, match="c/4/3/5"):
                    a[16:, 40:, 70:]


def test_many_python_threads_share_the_pool(tmp_path):
    """Reads from several Python threads at once: one runs on the pool, the others alone on their
    own threads; every result is right, and nothing waits forever."""
    arrays = [_array(tmp_path, name) for name in ("a", "bb", "ccc")]
    errors: list = []

    def reader(k: int) -> None:
        try:
            a, data = arrays[k % 3]
            rng = np.random.default_rng(k)
            for _ in range(30):
                z, y, x = rng.integers(0, 30), rng.integers(0, 50), rng.integers(0, 60)
                sel = (slice(z, z + 10), slice(y, y + 20), slice(x, x + 30))
                np.testing.assert_array_equal(a[sel], data[sel])
                np.testing.assert_array_equal(a[...], data)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    with zarr.config.set(threads=3):
        ts = [threading.Thread(target=reader, args=(k,)) for k in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(timeout=120)
        assert not any(t.is_alive() for t in ts)
    assert not errors, errors[0]
    assert 1 <= _plans.pool_threads() <= _plans.POOL_MAX


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX only")
def test_a_forked_child_reads_on_a_new_pool(tmp_path):
    a, data = _array(tmp_path)
    with zarr.config.set(threads=3):
        np.testing.assert_array_equal(a[...], data)  # the parent's pool threads are running
        assert _plans.pool_threads() >= 2
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: the parent's threads do not exist here
            ok = 0
            try:
                ok = int(_plans.pool_threads() == 0 and np.array_equal(a[...], data)
                         and _plans.pool_threads() >= 2 and np.array_equal(a[3:30, 5:60, 7:70], data[3:30, 5:60, 7:70]))
            finally:
                os.write(w, bytes([ok]))
                os._exit(0)
        os.close(w)
        got = os.read(r, 1)
        os.close(r)
        os.waitpid(pid, 0)
        assert got == b"\x01"
        np.testing.assert_array_equal(a[...], data)


def test_read_decode_par_arguments(tmp_path):
    a, data = _array(tmp_path, shape=(16, 16, 16), chunks=(8, 16, 16), codecs=(LE,))
    plan = a._plan
    paths = [os.fsencode(str(tmp_path / "a" / "c" / str(i) / "0" / "0")) for i in range(2)]
    out = np.zeros((16, 16, 16), np.uint16)
    starts = np.zeros((2, 3), np.int64)
    shapes = np.array([[8, 16, 16]] * 2, np.int64)
    offs = np.array([0, 8 * 16 * 16 * 2], np.int64)
    arena = memoryview(bytearray(1 << 16))
    ok = [(arena, None)]
    assert plan.read_decode_par(paths, ok, [0, 1, 2], starts, shapes, offs, out) == ([], [])
    np.testing.assert_array_equal(out, data)
    out[...] = 0
    two = [(arena, None), (memoryview(bytearray(1 << 16)), memoryview(bytearray(plan.scratch_bytes(1))))]
    assert plan.read_decode_par(paths, two, [0, 0, 2, 2], starts, shapes, offs, out) == ([], [])
    np.testing.assert_array_equal(out, data)
    for bounds in ([0, 1], [1, 2], [0, 2, 1, 2], [0]):
        with pytest.raises(ValueError, match="bounds"):
            plan.read_decode_par(paths, ok, bounds, starts, shapes, offs, out)
    with pytest.raises(ValueError, match="workers"):
        plan.read_decode_par(paths, [], [0, 2], starts, shapes, offs, out)
    with pytest.raises(ValueError, match="scratch"):
        plan.read_decode_par(paths, [(arena, memoryview(bytearray(10)))], [0, 2], starts, shapes, offs, out)
    with pytest.raises(ValueError, match="NUL"):
        plan.read_decode_par([b"a\0b", paths[1]], ok, [0, 2], starts, shapes, offs, out)
    with pytest.raises(CorruptChunkError):  # a chunk file of the wrong size
        p = tmp_path / "a" / "c" / "1" / "0" / "0"
        p.write_bytes(p.read_bytes()[:-2])
        plan.read_decode_par(paths, two, [0, 1, 2], starts, shapes, offs, out)


def _sharded(tmp_path, name="s", inner=(LE, BLOSC)):
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [8, 16, 16], "codecs": list(inner),
        "index_codecs": [LE, {"name": "crc32c"}], "index_location": "end"}}]
    return _array(tmp_path, name, shape=(48, 100, 130), chunks=(16, 64, 64), codecs=codecs)


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
@pytest.mark.parametrize("bpt", [1, 4, 50])
def test_sharded_reads_on_the_pool_equal_numpy(tmp_path, threads, bpt, monkeypatch):
    """Shards split into parts (each reading its index) over any number of workers; a missing
    shard reads as the fill value."""
    from zarrbolt import _threads as executor

    monkeypatch.setattr(executor, "BATCHES_PER_THREAD", bpt)
    a, data = _sharded(tmp_path)
    os.remove(tmp_path / "s" / "c" / "1" / "1" / "0")
    data[16:32, 64:, 0:64] = 3
    sels = [(...,), (slice(3, 37), slice(5, 96), slice(7, 120)), (5,), (slice(None), 17),
            (slice(9, 10), slice(20, 21), slice(30, 31)), (slice(10, 40), slice(60, 70))]
    with zarr.config.set(threads=threads):
        for sel in sels:
            np.testing.assert_array_equal(a[sel], data[sel])


def test_sharded_damage_on_the_pool(tmp_path, monkeypatch):
    """A damaged inner chunk is reported by the lowest failing part on any number of threads;
    a damaged index goes the Store way, which reports it; inner chunks larger than a helper's
    arena are read the Store way too."""
    a, data = _sharded(tmp_path, inner=(LE, {"name": "crc32c"}))
    monkeypatch.setattr(za, "_helpers", [])
    monkeypatch.setattr(za, "_ARENA_BYTES", 3000)  # inner chunks are 4 KiB: all too large for helpers
    with zarr.config.set(threads=3):
        np.testing.assert_array_equal(a[...], data)
    monkeypatch.setattr(za, "_helpers", [])
    monkeypatch.setattr(za, "_ARENA_BYTES", 8 << 20)
    p = tmp_path / "s" / "c" / "2" / "0" / "1"
    raw = bytearray(p.read_bytes())
    raw[100] ^= 0xFF  # inside the first inner chunk written
    p.write_bytes(bytes(raw))
    q = tmp_path / "s" / "c" / "2" / "1" / "1"
    raw = bytearray(q.read_bytes())
    raw[-3] ^= 0xFF  # the index's CRC-32C
    q.write_bytes(bytes(raw))
    for threads in (1, 2, 3):
        with zarr.config.set(threads=threads):
            for _ in range(5):
                with pytest.raises(ChecksumError, match=r"c/2/0/1\["):
                    a[...]
                with pytest.raises((ChecksumError, CorruptChunkError), match="c/2/1/1"):
                    a[32:, 64:, 64:]
            np.testing.assert_array_equal(a[:32], data[:32])


def test_read_shards_par_arguments(tmp_path):
    a, data = _sharded(tmp_path)
    plan = a._plan
    path = os.fsencode(str(tmp_path / "s" / "c" / "0" / "0" / "0"))
    out = np.zeros((8, 16, 16), np.uint16)
    starts = np.zeros((1, 3), np.int64)
    shapes = np.array([[8, 16, 16]], np.int64)
    offs = np.zeros(1, np.int64)
    entries = np.zeros(1, np.int64)
    bufs = [(memoryview(bytearray(1 << 20)), None)]
    n = 2 * 4 * 4
    assert plan.read_shards_par([path], [1], entries, bufs, [0, 1], starts, shapes, offs, out, n, True, True,
                                0) == ([], [], [])
    np.testing.assert_array_equal(out, data[:8, :16, :16])
    for bounds in ([0, 2], [1, 1], [0]):
        with pytest.raises(ValueError, match="bounds"):
            plan.read_shards_par([path], [1], entries, bufs, bounds, starts, shapes, offs, out, n, True, True, 0)
    with pytest.raises(ValueError, match="counts"):
        plan.read_shards_par([path], [2], entries, bufs, [0, 1], starts, shapes, offs, out, n, True, True, 0)
    with pytest.raises(ValueError, match="workers"):
        plan.read_shards_par([path], [1], entries, [], [0, 1], starts, shapes, offs, out, n, True, True, 0)


def test_more_threads_than_the_pool_takes(tmp_path, monkeypatch):
    """A thread count above the pool's limit (and far above the processors here) reads with the
    pool's largest job."""
    monkeypatch.setattr(za, "_helpers", [])  # the helpers' buffers go with the test
    a, data = _array(tmp_path)
    with zarr.config.set(threads=_plans.POOL_MAX + 50):
        np.testing.assert_array_equal(a[...], data)
        np.testing.assert_array_equal(a[1:40, 3:97, 2:120], data[1:40, 3:97, 2:120])


@pytest.mark.parametrize("sharded", [False, True])
def test_huge_reads_go_to_the_pool_in_windows(tmp_path, monkeypatch, sharded):
    """A read of more than READ_WINDOW_BYTES is handed to the pool in several calls (Python, and
    so Ctrl-C, gets a turn in between), with missing chunks and errors still placed right."""
    a, data = _sharded(tmp_path) if sharded else _array(tmp_path)
    name = "s" if sharded else "a"
    missing = tmp_path / name / "c" / "2" / "1" / "1"
    os.remove(missing)
    if sharded:
        data[32:48, 64:128, 64:128] = 3
    else:
        data[16:24, 16:32, 16:32] = 3
    calls = []

    class Spy:
        def __init__(self, plan):
            self.plan = plan

        def __getattr__(self, k):
            f = getattr(self.plan, k)
            if k.endswith("_par"):
                def counted(*args, **kw):
                    calls.append(k)
                    return f(*args, **kw)
                return counted
            return f

    a._plan = Spy(a._plan)
    monkeypatch.setattr(za, "READ_WINDOW_BYTES", 50_000)
    assert za._read_windows([30_000, 30_000, 60_000, 10_000, 10_000]) == [(0, 1), (1, 2), (2, 3), (3, 5)]
    assert za._read_windows([]) == []
    for threads in (1, 3):
        calls.clear()
        with zarr.config.set(threads=threads):
            np.testing.assert_array_equal(a[...], data)
            np.testing.assert_array_equal(a[3:40, 5:90, 7:120], data[3:40, 5:90, 7:120])
        assert len(calls) > 4


def _morton(cps):
    """Inner chunk numbers (C order) in Morton order, the first axis varying fastest (zarr-python's)."""
    bits = max(int(c - 1).bit_length() for c in cps)
    keys = []
    for flat in range(int(np.prod(cps))):
        coords = np.unravel_index(flat, cps)
        key = 0
        for b in range(bits):
            for d, c in enumerate(coords):
                key |= ((int(c) >> b) & 1) << (b * len(cps) + d)
        keys.append(key)
    return list(np.argsort(keys, kind="stable"))


def _rewrite_shard(path, n, order, gaps, empty, rng):
    """Lay the shard's inner chunks out again: in `order`, each after `gaps[k]` junk bytes, the
    entries in `empty` left empty; the index (at the end, with its CRC-32C) rewritten to match."""
    from zarrbolt.kernels import crc32c

    raw = path.read_bytes()
    idx = np.frombuffer(raw[-(16 * n + 4):-4], dtype="<u8").reshape(n, 2)
    body, new = bytearray(), np.full((n, 2), 2**64 - 1, dtype="<u8")
    for k, e in enumerate(order):
        body += rng.integers(0, 256, gaps[k], dtype=np.uint8).tobytes()
        if e in empty:
            continue
        off, nb = int(idx[e, 0]), int(idx[e, 1])
        new[e] = (len(body), nb)
        body += raw[off: off + nb]
    tail = new.tobytes()
    path.write_bytes(bytes(body) + tail + crc32c(tail).to_bytes(4, "little"))


@pytest.mark.parametrize("layout", ["c-order", "morton", "reversed", "random"])
def test_shard_reads_in_task_order_windows(tmp_path, layout, monkeypatch):
    """Inner chunks in any order in the file, with junk between them and empty entries, read in
    windows of the tasks (C order of the output) that fit the arena together: from every chunk in
    one window down to none fitting (the Store way), on 1-3 threads, whole and partial reads.
    Equal-sized chunks with gaps make windows whose coalesced reads would not fit the arena."""
    shape, shards, inner = (8, 32, 128), (4, 16, 64), (2, 4, 32)
    cps = tuple(s // c for s, c in zip(shards, inner))
    n = int(np.prod(cps))
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner), "codecs": [LE], "index_codecs": [LE, {"name": "crc32c"}],
        "index_location": "end"}}]
    data = np.arange(np.prod(shape), dtype=np.uint16).reshape(shape)
    zarr.create_array(LocalStore(tmp_path / "s"), shape=shape, chunks=shards, dtype="uint16", codecs=codecs,
                      fill_value=9)[...] = data
    rng = np.random.default_rng(7)
    order = {"c-order": list(range(n)), "morton": _morton(cps), "reversed": list(range(n))[::-1],
             "random": list(rng.permutation(n))}[layout]
    expect = data.copy()
    for s in range(8):
        sc = np.unravel_index(s, (2, 2, 2))
        gaps = [200] * n if s % 2 else list(rng.integers(0, 300, n))
        empty = {3, 11} if s in (1, 6) else set()
        _rewrite_shard(tmp_path / "s" / "c" / "/".join(map(str, sc)), n, order, gaps, empty, rng)
        for e in empty:
            ic = np.unravel_index(e, cps)
            box = tuple(slice(sc[d] * shards[d] + ic[d] * inner[d], sc[d] * shards[d] + (ic[d] + 1) * inner[d])
                        for d in range(3))
            expect[box] = 9
    mem = MemoryStore()  # the same files: read the Store way (Python windows)
    for p in (tmp_path / "s").rglob("*"):
        if p.is_file():
            mem.set(p.relative_to(tmp_path / "s").as_posix(), p.read_bytes())
    arrays = [zarr.open_array(LocalStore(tmp_path / "s")), zarr.open_array(mem)]
    sels = [(...,), (slice(1, 7), slice(3, 29), slice(5, 100)), (3,), (slice(None), 5), (slice(2, 4), slice(0, 8))]
    # an inner chunk is 512 bytes, the index 260: all of a part's chunks, 3 (not with the 200-byte
    # gaps between them), 2, 1, none per window
    for arena in (1 << 20, 1636, 1100, 600, 400):
        monkeypatch.setattr(za, "_helpers", [])
        monkeypatch.setattr(za, "_ARENA_BYTES", arena)
        monkeypatch.setattr(za._arenas, "buf", memoryview(bytearray(arena)), raising=False)
        for threads in (1, 2, 3):
            with zarr.config.set(threads=threads):
                for a in arrays:
                    for sel in sels:
                        assert a[sel].tobytes() == expect[sel].tobytes(), (a.store, arena, threads, sel)


# ----------------------------------------------------------------------- the one batch runner
@pytest.mark.parametrize("workers", [1, 2, 3, 8])
def test_batch_runner_lowest_failing_batch_wins(workers):
    """zb_pool_batches: whatever batches fail and however the workers interleave, the error is
    the lowest failing batch's, every batch below it ran, and each worker's state is freed."""
    rng = np.random.default_rng(workers)
    for _ in range(80):
        n = int(rng.integers(1, 40))
        fail = rng.random(n) < rng.choice([0.0, 0.05, 0.3, 1.0])
        st, failed, os_error, ran, allocs, frees = _kernels._test_batches(fail.tolist(), workers,
                                                                           int(rng.integers(0, 3000)))
        assert 1 <= allocs == frees <= workers
        if fail.any():
            low = int(np.flatnonzero(fail)[0])
            assert st < 0 and (failed, os_error) == (10 * low, low)
            assert all(ran[: low + 1])
        else:
            assert (st, failed, os_error) == (0, 0, 0) and all(ran)


def test_batch_runner_edge_cases():
    assert _kernels._test_batches([], 3) == (0, 0, 0, b"", 0, 0)
    st, *_ = _kernels._test_batches([False], 0)
    assert st < 0  # no worker: ZB_EINVAL, nothing ran
    st, failed, _, ran, _, _ = _kernels._test_batches([True] * 5, _plans.POOL_MAX + 10)
    assert st < 0 and failed == 0 and ran[0] == 1


# ------------------------------------------------------------------- failing tasks: task_index
def _corrupt(path, at=0):
    raw = bytearray(path.read_bytes())
    raw[at: at + 16] = b"\xff" * 16
    path.write_bytes(bytes(raw))


def test_failing_tasks_carry_task_index(tmp_path):
    """Batched C calls name the failing task by exc.task_index (its position in the call's
    input); args stay (message,)."""
    a, data = _array(tmp_path, shape=(24, 16, 16), chunks=(8, 16, 16), codecs=(LE, BLOSC))
    plan = a._plan
    files = [tmp_path / "a" / "c" / str(i) / "0" / "0" for i in range(3)]
    blobs = [f.read_bytes() for f in files]
    _corrupt(files[2])
    out = np.zeros((24, 16, 16), np.uint16)
    starts = np.zeros((3, 3), np.int64)
    shapes = np.array([[8, 16, 16]] * 3, np.int64)
    offs = np.arange(3, dtype=np.int64) * 8 * 16 * 16 * 2
    bufs = [(memoryview(bytearray(1 << 16)), None) for _ in range(2)]  # one scratch buffer per worker
    with pytest.raises(CorruptChunkError) as e:
        plan.read_decode_par([os.fsencode(str(f)) for f in files], bufs, [0, 1, 2, 3], starts, shapes, offs, out)
    assert e.value.task_index == 2 and len(e.value.args) == 1
    with pytest.raises(CorruptChunkError) as e:
        plan.decode([blobs[0], files[2].read_bytes(), blobs[1]], starts, shapes, offs, out)
    assert e.value.task_index == 1 and len(e.value.args) == 1


def test_failing_shard_tasks_carry_task_index(tmp_path):
    a, data = _sharded(tmp_path)
    plan = a._plan
    path = tmp_path / "s" / "c" / "0" / "0" / "0"
    n = 2 * 4 * 4
    raw = path.read_bytes()
    index = np.frombuffer(raw[-(16 * n + 4):-4], dtype="<u8").reshape(n, 2)
    _corrupt(path, int(index[5, 0]))  # inner chunk 5's header
    entries = np.array([0, 1, 5, 6], np.int64)
    starts = np.zeros((4, 3), np.int64)
    shapes = np.array([[8, 16, 16]] * 4, np.int64)
    out = np.zeros((4, 8, 16, 16), np.uint16)
    offs = np.arange(4, dtype=np.int64) * 8 * 16 * 16 * 2
    bufs = [(memoryview(bytearray(1 << 20)), None)]
    with pytest.raises(CorruptChunkError) as e:
        plan.read_shards_par([os.fsencode(str(path))], [4], entries, bufs, [0, 1], starts, shapes, offs,
                             out.reshape(32, 16, 16), n, True, True, 0)
    assert e.value.task_index == 2 and len(e.value.args) == 1
