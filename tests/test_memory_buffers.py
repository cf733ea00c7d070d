"""How large the per-thread buffers of the fused pipeline are (zarrbolt.pipeline.buffers): sized
to the chunks a call reads, shared between the decode scratch and the encode's work buffer, and
lazily committed.  Deterministic checks of sizes and identities; the resident memory they lead
to is measured by benchmarks/peak_memory.py."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.pipeline import buffers, outbuf
from zarrbolt.storage import LocalStore, MemoryStore

MiB = 1 << 20


def in_fresh_thread(fn):
    """Run ``fn`` in a new thread (fresh thread-local buffers); return its result."""
    out: list = []
    err: list = []

    def run():
        try:
            out.append(fn())
        except BaseException as e:  # noqa: BLE001 - re-raised below
            err.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if err:
        raise err[0]
    return out[0]


def test_arena_bytes_is_two_chunks_within_bounds():
    assert buffers.arena_bytes(1000) == buffers.ARENA_MIN_BYTES
    assert buffers.arena_bytes(3 * MiB) == 6 * MiB
    assert buffers.arena_bytes(3 * MiB, 4096) == 6 * MiB + 4096
    assert buffers.arena_bytes(64 * MiB) == buffers._ARENA_BYTES
    assert buffers.ARENA_MIN_BYTES <= buffers._ARENA_BYTES


def test_thread_arena_grows_and_hands_out_what_is_asked():
    def check():
        a = buffers.thread_arena(MiB)
        assert len(a) == MiB and not a.readonly
        assert len(buffers.thread_arena(1000)) == 1000
        assert buffers.thread_arena(1000).obj is a.obj  # the same memory, not a new buffer
        big = buffers.thread_arena(3 * MiB)
        assert len(big) == 3 * MiB and big.obj is not a.obj  # grown
        assert buffers.thread_arena(MiB).obj is big.obj  # kept at its largest
        assert len(buffers.thread_arena(1 << 40)) == buffers._ARENA_BYTES  # never above the most
        assert len(buffers.thread_arena()) == buffers._ARENA_BYTES
        return True

    assert in_fresh_thread(check)


def test_work_buffers_are_the_decode_scratch_grown_up_to_a_limit():
    def check():
        s = buffers.thread_scratch(2 * MiB)
        assert s is not None and len(s) >= 2 * MiB
        w = buffers.pool_work_buffers(1, MiB)
        assert w[0] is s  # the scratch's pages serve the encode
        assert buffers.thread_scratch(buffers.GROUP_SCRATCH_BYTES + 1) is None  # reads: at most this
        w = buffers.pool_work_buffers(1, buffers.GROUP_SCRATCH_BYTES + 1)  # encodes: more
        assert w[0] is not None and len(w[0]) == buffers.GROUP_SCRATCH_BYTES + 1
        assert buffers.thread_scratch(MiB) is w[0]  # and the reads then use that
        assert buffers.pool_work_buffers(1, buffers.WORK_MAX_BYTES + 1) == [None]
        return True

    assert in_fresh_thread(check)


def test_helper_buffers_follow_the_same_rules():
    buffers.release()
    try:
        a, s = buffers.helper_buffers(1, MiB, 2 * MiB)
        assert len(a) == 2 * MiB and s is not None and len(s) == MiB
        a2, s2 = buffers.helper_buffers(1, 1000, 1000)
        assert a2.obj is a.obj and len(a2) == 1000 and s2 is s
        _, none = buffers.helper_buffers(1, buffers.GROUP_SCRATCH_BYTES + 1, 1000)
        assert none is None
        bufs = buffers.pool_read_buffers(3, MiB, 4096)
        assert len(bufs) == 3 and all(len(x) == 4096 for x, _ in bufs)
        w = buffers.pool_work_buffers(2, MiB)
        assert w[1] is buffers._helpers[0][1]
    finally:
        buffers.release()


def test_lazy_buffer_is_writable_zeroed_memory():
    b = buffers.lazy_buffer(3 * MiB + 5)
    assert len(b) == 3 * MiB + 5 and not b.readonly
    x = np.frombuffer(b, np.uint8)
    assert not x.any()
    x[-1] = 7
    assert b[-1] == 7


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="POSIX only")
def test_buffers_are_not_shared_with_a_forked_child():
    """A forked child (dask's process workers) inherits the parent's thread buffers: it must get
    its own copy of them.  Python's anonymous mmap is shared by default, which let the workers
    of one ``da.store`` write into one another's scratch and store garbage inner chunks."""
    import os

    arena = np.frombuffer(buffers.thread_arena(MiB), np.uint8)
    scratch = np.frombuffer(buffers.thread_scratch(MiB), np.uint8)
    helper = np.frombuffer(buffers.helper_buffers(1, MiB, MiB)[0], np.uint8)
    sparse = outbuf.empty((MiB,), np.uint8, sparse=True)
    views = [arena, scratch, helper, sparse]
    for v in views:
        v[:] = 1
    pid = os.fork()
    if pid == 0:  # child: overwrites every inherited buffer
        try:
            for v in views:
                v[:] = 2
            ok = all(int(v.min()) == 2 for v in views)
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    for name, v in zip(["arena", "scratch", "helper", "sparse output"], views):
        assert int(v.max()) == 1, f"the child wrote into the parent's {name} buffer"


@pytest.mark.parametrize("store", ["local", "memory"])
def test_a_read_asks_for_an_arena_of_two_chunks(tmp_path, store):
    data = np.arange(64 * 512 * 512, dtype=np.uint16).reshape(64, 512, 512)
    st = LocalStore(tmp_path / "a") if store == "local" else MemoryStore()
    a = zarr.create_array(st, shape=data.shape, chunks=(4, 256, 512), dtype="uint16",
                          compressors=[{"name": "zstd", "configuration": {"level": 1}}])
    a[...] = data
    chunk = 4 * 256 * 512 * 2  # 1 MiB

    def read():
        with zarr.config.set(threads=1):
            np.testing.assert_array_equal(a[...], data)
        return len(buffers._arenas.buf)

    assert in_fresh_thread(read) == buffers.arena_bytes(chunk) == 2 * chunk


def test_sparse_output_buffers_are_cached_like_the_others():
    outbuf.clear()
    try:
        x = outbuf.empty((outbuf.MIN_BYTES + 4096,), np.uint8, sparse=True)
        assert x.flags.writeable and x.nbytes == outbuf.MIN_BYTES + 4096
        x[:10] = 3
        addr = x.ctypes.data
        del x
        if outbuf.limit() >= outbuf.MIN_BYTES + 4096:
            assert outbuf.held_bytes() == outbuf.MIN_BYTES + 4096
            z = outbuf.empty((outbuf.MIN_BYTES + 4096,), np.uint8)
            assert z.ctypes.data != addr  # not to a use that writes it all (huge pages there)
            y = outbuf.empty((outbuf.MIN_BYTES + 4096,), np.uint8, sparse=True)
            assert y.ctypes.data == addr  # the kept memory, handed out again
            del y
            y = outbuf.empty((outbuf.MIN_BYTES + 4096,), np.uint8, sparse=True)
            assert y.ctypes.data in (addr, z.ctypes.data)
    finally:
        outbuf.clear()


def test_row_gathers_use_a_released_thread_buffer():
    a = zarr.create_array(MemoryStore(), shape=(8, 64, 256), chunks=(8, 64, 64), dtype="uint16")
    data = np.arange(8 * 64 * 256, dtype=np.uint16).reshape(8, 64, 256)

    def write():
        with zarr.config.set(threads=1):
            a[...] = data
        n = buffers._gathers.buf.nbytes
        buffers.release()
        return n, getattr(buffers._gathers, "buf", None)

    n, after = in_fresh_thread(write)
    assert n == 4 * 8 * 64 * 64 * 2  # one row of four chunks
    assert after is None
    np.testing.assert_array_equal(a[...], data)


def test_values_written_to_a_new_directory_are_not_kept(tmp_path):
    """Creating the directory of a key is a caught error: its traceback must not keep the
    written pieces (a shard's encoded bytes) alive until a garbage collection."""
    import gc
    import weakref

    store = LocalStore(tmp_path / "s")
    piece = np.arange(1000, dtype=np.uint8)
    ref = weakref.ref(piece)
    enabled = gc.isenabled()
    gc.disable()
    try:
        store.set_parts("a/b/c/0", [memoryview(piece)[:10], memoryview(piece)[10:]])
        del piece
        assert ref() is None
    finally:
        if enabled:
            gc.enable()
    assert store.get("a/b/c/0") == bytes(range(256)) * 3 + bytes(range(232))
