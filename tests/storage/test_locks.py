"""Partial updates of one shard (or chunk) by several writers lose nothing (issue #21.1): the
per-key write locks of zarrbolt.storage.locks, across processes on a LocalStore and across the
threads of a process on every store; the ``write_lock`` switch; the lock file is never a key."""

from __future__ import annotations

import multiprocessing as mp
import os
import threading

import numpy as np
import pytest

import zarrbolt
from zarrbolt import config
from zarrbolt.errors import InvalidKeyError
from zarrbolt.storage import LocalStore, MemoryStore
from zarrbolt.storage.locks import LOCK_NAME, FileLocks, key_lock, lock_offset

ROWS, COLS, INNER = 128, 16, 4  # one 128x16 int32 shard of 32 inner chunks of 4x16
NPROC, PER = 4, 8


def _make(path: str, **kw) -> None:
    zarrbolt.create_array(LocalStore(path), shape=(ROWS, COLS), dtype="int32", chunks=(INNER, COLS),
                          shards=(ROWS, COLS), fill_value=-1, **kw)


def _writer(path: str, w: int, barrier, lock: bool) -> None:
    with config.set(write_lock=lock, threads=1):
        a = zarrbolt.open_array(LocalStore(path), mode="r+")
        barrier.wait()
        for j in range(PER):  # inner chunks w, w + 4, ...: interleaved with the other writers'
            c = j * NPROC + w
            a[c * INNER:(c + 1) * INNER, :] = c
    os._exit(0)


def _lost(path: str) -> int:
    got = zarrbolt.open_array(LocalStore(path), mode="r")[:]
    return sum(int(not (got[c * INNER:(c + 1) * INNER] == c).all()) for c in range(ROWS // INNER))


def _trial(path: str, lock: bool) -> int:
    _make(path)
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(NPROC)
    procs = [ctx.Process(target=_writer, args=(path, w, barrier, lock)) for w in range(NPROC)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    return _lost(path)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_four_processes_one_shard_lose_nothing(tmp_path):
    lost = [_trial(str(tmp_path / f"t{i}"), lock=True) for i in range(20)]
    assert lost == [0] * 20


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_four_processes_unsharded_partial_chunk(tmp_path):
    # distinct rows of ONE unsharded chunk: a read-modify-write of the chunk each
    for i in range(5):
        path = str(tmp_path / f"u{i}")
        zarrbolt.create_array(LocalStore(path), shape=(ROWS, COLS), dtype="int32", chunks=(ROWS, COLS),
                              fill_value=-1)
        ctx = mp.get_context("fork")
        barrier = ctx.Barrier(NPROC)
        procs = [ctx.Process(target=_writer, args=(path, w, barrier, True)) for w in range(NPROC)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
            assert p.exitcode == 0
        assert _lost(path) == 0


def _thread_writes(a, nthreads: int = 8) -> None:
    barrier = threading.Barrier(nthreads)
    errors = []

    def run(w: int) -> None:
        try:
            barrier.wait()
            for c in range(w, ROWS // INNER, nthreads):
                a[c * INNER:(c + 1) * INNER, :] = c
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=run, args=(w,)) for w in range(nthreads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


@pytest.mark.parametrize("kind", ["local", "memory"])
def test_threads_one_shard_lose_nothing(tmp_path, kind):
    for i in range(5):
        store = LocalStore(tmp_path / f"t{i}") if kind == "local" else MemoryStore()
        a = zarrbolt.create_array(store, shape=(ROWS, COLS), dtype="int32", chunks=(INNER, COLS),
                                  shards=(ROWS, COLS), fill_value=-1)
        _thread_writes(a)
        got = a[:]
        assert (got == np.repeat(np.arange(ROWS // INNER), INNER)[:, None]).all()


def test_lock_file_is_never_a_key(tmp_path):
    root = tmp_path / "r"
    store = LocalStore(root)
    a = zarrbolt.create_array(store, name="g/a", shape=(ROWS, COLS), dtype="int32", chunks=(INNER, COLS),
                              shards=(ROWS, COLS))
    a[0:4, :] = 1  # a partial shard update: takes the lock
    assert (root / "g" / "a" / LOCK_NAME).exists()
    keys = sorted(store.list())
    assert keys == ["g/a/c/0/0", "g/a/zarr.json", "g/zarr.json", "zarr.json"] or LOCK_NAME not in str(keys)
    assert not any(LOCK_NAME in k for k in keys)
    assert LOCK_NAME not in "".join(store.list_dir("g/a"))
    assert a.nchunks_initialized == 1
    with pytest.raises(InvalidKeyError):
        store.get(f"g/a/{LOCK_NAME}")
    with pytest.raises(InvalidKeyError):
        store.set(LOCK_NAME, b"x")
    # a copy of the store holds no lock file
    dst = MemoryStore()
    for k in store.list():
        dst.set(k, store.get(k))
    assert not any(LOCK_NAME in k for k in dst.list())


def test_write_lock_switch_off_takes_no_lock(tmp_path):
    with config.set(write_lock=False):
        a = zarrbolt.create_array(LocalStore(tmp_path / "r"), shape=(ROWS, COLS), dtype="int32",
                                  chunks=(INNER, COLS), shards=(ROWS, COLS))
        a[0:4, :] = 1
        assert (a[0:4] == 1).all()
    assert not (tmp_path / "r" / LOCK_NAME).exists()
    with pytest.raises(zarrbolt.errors.MetadataError):
        config.set(write_lock="yes")


def test_full_shard_writes_take_no_lock(tmp_path):
    a = zarrbolt.create_array(LocalStore(tmp_path / "r"), shape=(ROWS, COLS), dtype="int32",
                              chunks=(INNER, COLS), shards=(ROWS, COLS))
    a[:] = 3
    assert not (tmp_path / "r" / LOCK_NAME).exists()
    assert (a[:] == 3).all()


def _hold_then_report(path: str, key: str, held, release, done) -> None:
    f = FileLocks.of(path)
    with f.hold(key):
        held.set()
        release.wait(30)
    done.set()
    os._exit(0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_file_lock_excludes_another_process(tmp_path):
    path = str(tmp_path / LOCK_NAME)
    ctx = mp.get_context("fork")
    held, release, done = ctx.Event(), ctx.Event(), ctx.Event()
    p = ctx.Process(target=_hold_then_report, args=(path, "c/0/0", held, release, done))
    p.start()
    assert held.wait(30)
    got = threading.Event()

    def take() -> None:
        with FileLocks.of(path).hold("c/0/0"):
            got.set()

    t = threading.Thread(target=take)
    t.start()
    # the other process holds the byte: this thread must wait until it lets go
    assert not got.wait(0.3)
    release.set()
    t.join(30)
    assert got.is_set() and done.wait(30)
    p.join(30)


def test_lock_file_recreated_after_array_deleted(tmp_path):
    root = tmp_path / "r"
    store = LocalStore(root)
    with key_lock(store, "a/c/0", "a/"):
        pass
    lockfile = root / "a" / LOCK_NAME
    assert lockfile.exists()
    store.erase_prefix("a/")
    assert not lockfile.exists()
    with key_lock(store, "a/c/0", "a/"):
        assert lockfile.exists()  # a fresh lock file, locked there (not the deleted one)


def test_lock_offsets_spread():
    offs = {lock_offset(f"c/{i}/0") for i in range(1000)}
    assert len(offs) > 990


def test_in_process_lock_per_store_location():
    # two MemoryStore views of the same data share their key locks
    s = MemoryStore()
    v = s.with_read_only(False)
    with key_lock(s, "c/0"):
        ok = threading.Event()

        def other() -> None:
            with key_lock(v, "c/0"):
                ok.set()

        t = threading.Thread(target=other)
        t.start()
        assert not ok.wait(0.2)
    t.join(10)
    assert ok.is_set()


def test_fsspec_store_threads_lose_nothing():
    fsspec = pytest.importorskip("fsspec")
    import uuid

    from zarrbolt.storage.fsspec_store import FsspecStore

    fs = fsspec.filesystem("memory")
    root = f"/zb-locks-{uuid.uuid4().hex[:12]}"
    try:
        for i in range(3):
            store = FsspecStore(fs, path=f"{root}/{i}")
            a = zarrbolt.create_array(store, shape=(ROWS, COLS), dtype="int32", chunks=(INNER, COLS),
                                      shards=(ROWS, COLS), fill_value=-1)
            _thread_writes(a)
            got = zarrbolt.open_array(FsspecStore(fs, path=f"{root}/{i}"), mode="r")[:]
            assert (got == np.repeat(np.arange(ROWS // INNER), INNER)[:, None]).all()
    finally:
        if fs.exists(root):
            fs.rm(root, recursive=True)


def test_two_spellings_of_one_root_share_thread_locks(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    a = LocalStore(real).write_locks("")
    b = LocalStore(tmp_path / "link").write_locks("")
    assert a is b


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
def test_lock_files_kept_open_are_bounded(tmp_path):
    from zarrbolt.storage.locks import MAX_IDLE

    before = len(os.listdir("/proc/self/fd"))
    for i in range(3 * MAX_IDLE):  # many arrays, some deleted and made again at the same path
        store = LocalStore(tmp_path / f"a{i % (2 * MAX_IDLE)}")
        a = zarrbolt.create_array(store, shape=(8,), dtype="int32", chunks=(2,), shards=(8,), overwrite=True)
        a[1:3] = i
        assert (a[1:3] == i).all()
    assert len(os.listdir("/proc/self/fd")) <= before + MAX_IDLE
