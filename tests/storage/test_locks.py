"""Partial updates of one shard (or chunk) by several writers lose nothing (issue #21.1): the
per-key write locks of zarrbolt.storage.locks, across processes on a LocalStore and across the
threads of a process on every store; the ``write_lock`` switch; the lock files live outside the
store (never a key, nothing made in the array directory)."""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import stat
import tempfile
import threading

import numpy as np
import pytest

import zarrbolt
from zarrbolt import config
from zarrbolt.errors import InvalidKeyError
from zarrbolt.storage import LocalStore, MemoryStore
from zarrbolt.storage.locks import (
    LOCK_DIR_ENV,
    LOCK_NAME,
    FileLocks,
    key_lock,
    lock_dir,
    lock_offset,
    lock_path,
)

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


def _lock_env(monkeypatch, tmp_path):
    d = tmp_path / "locks"
    monkeypatch.setenv(LOCK_DIR_ENV, str(d))
    return d


def _store_files(root) -> set[str]:
    out = set()
    for dirpath, _dirs, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        out.update(f if rel == "." else f"{rel}/{f}".replace(os.sep, "/") for f in files)
    return out


def test_lock_file_is_never_a_key(tmp_path, monkeypatch):
    locks = _lock_env(monkeypatch, tmp_path)
    root = tmp_path / "r"
    store = LocalStore(root)
    a = zarrbolt.create_array(store, name="g/a", shape=(ROWS, COLS), dtype="int32", chunks=(INNER, COLS),
                              shards=(ROWS, COLS))
    a[0:4, :] = 1  # a partial shard update: takes the lock
    # the lock file is in the lock dir, named by the array directory's real path; nothing is made
    # in the array directory
    path = lock_path(str(root / "g" / "a"))
    assert os.path.dirname(path) == str(locks) and os.listdir(locks) == [os.path.basename(path)]
    assert sorted(os.listdir(root / "g" / "a")) == ["c", "zarr.json"]
    assert not (root / "g" / "a" / LOCK_NAME).exists()
    keys = sorted(store.list())
    assert keys == ["g/a/c/0/0", "g/a/zarr.json", "g/zarr.json", "zarr.json"]
    assert _store_files(root) == set(keys)
    assert a.nchunks_initialized == 1
    # a stale .zb-lock of an older version stays hidden and refused as a key
    (root / "g" / "a" / LOCK_NAME).write_bytes(b"")
    assert sorted(store.list()) == keys
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


def test_store_files_are_exactly_the_keys(tmp_path):
    """Other readers of the store (zarr-python, tensorstore, ``ls``) see every file as a key:
    after partial shard and chunk writes the files under the root are
    exactly the keys."""
    root = tmp_path / "r"
    store = LocalStore(root)
    a = zarrbolt.create_array(store, name="g/a", shape=(ROWS, COLS), dtype="int32", chunks=(INNER, COLS),
                              shards=(ROWS // 2, COLS))
    b = zarrbolt.create_array(store, name="b", shape=(8, 8), dtype="uint8", chunks=(4, 4))
    a[0:4, :] = 1
    a[70:90, 3:5] = 2
    b[1:3, 1:3] = 7
    a[0:8, :] = 5
    assert (a[0:8] == 5).all() and (b[1:3, 1:3] == 7).all()
    keys = set(store.list())
    assert "g/a/c/0/0" in keys and "g/a/c/1/0" in keys and "b/c/0/0" in keys
    assert _store_files(root) == keys


def test_lock_dir_default_and_modes(tmp_path, monkeypatch):
    # the default: zarrbolt-locks in the temporary directory, world-writable and sticky like /tmp;
    # lock files readable and writable by every user whatever the umask
    monkeypatch.delenv(LOCK_DIR_ENV, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    os.mkdir(tmp_path / "tmp")
    assert lock_dir() == str(tmp_path / "tmp" / "zarrbolt-locks")
    old = os.umask(0o077)
    try:
        with key_lock(LocalStore(tmp_path / "r"), "a/c/0", "a/"):
            pass
    finally:
        os.umask(old)
    path = lock_path(str(tmp_path / "r" / "a"))
    assert os.path.dirname(path) == lock_dir() and os.path.exists(path)
    if os.name != "nt":
        assert stat.S_IMODE(os.stat(lock_dir()).st_mode) == 0o1777
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o666
    assert not os.path.exists(tmp_path / "r")  # nothing is made in the store for a lock


def test_lock_path_by_real_path(tmp_path, monkeypatch):
    _lock_env(monkeypatch, tmp_path)
    (tmp_path / "real" / "a").mkdir(parents=True)
    assert lock_path(str(tmp_path / "real" / "a")) == lock_path(str(tmp_path / "real" / "." / "a"))
    assert lock_path(str(tmp_path / "real" / "a")) != lock_path(str(tmp_path / "real" / "b"))
    if hasattr(os, "symlink"):
        os.symlink(tmp_path / "real", tmp_path / "link")
        assert lock_path(str(tmp_path / "link" / "a")) == lock_path(str(tmp_path / "real" / "a"))
        assert (LocalStore(tmp_path / "link").write_locks("a")
                is LocalStore(tmp_path / "real").write_locks("a/"))


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="needs symlinks")
def test_lock_file_symlink_not_followed(tmp_path, monkeypatch):
    # the lock dir is world-writable: a link planted at a lock file's name is refused, and the
    # file it points to is left alone
    locks = _lock_env(monkeypatch, tmp_path)
    locks.mkdir()
    victim = tmp_path / "victim"
    victim.write_bytes(b"secret")
    os.chmod(victim, 0o600)
    os.symlink(victim, lock_path(str(tmp_path / "r" / "a")))
    with pytest.raises(zarrbolt.errors.StoreError, match="write lock file"):
        with key_lock(LocalStore(tmp_path / "r"), "a/c/0", "a/"):
            pass
    assert stat.S_IMODE(os.stat(victim).st_mode) == 0o600 and victim.read_bytes() == b"secret"


def test_write_lock_switch_off_takes_no_lock(tmp_path, monkeypatch):
    locks = _lock_env(monkeypatch, tmp_path)
    with config.set(write_lock=False):
        a = zarrbolt.create_array(LocalStore(tmp_path / "r"), shape=(ROWS, COLS), dtype="int32",
                                  chunks=(INNER, COLS), shards=(ROWS, COLS))
        a[0:4, :] = 1
        assert (a[0:4] == 1).all()
    assert not locks.exists()
    assert sorted(os.listdir(tmp_path / "r")) == ["c", "zarr.json"]
    with pytest.raises(zarrbolt.errors.MetadataError):
        config.set(write_lock="yes")


def test_full_shard_writes_take_no_lock(tmp_path, monkeypatch):
    locks = _lock_env(monkeypatch, tmp_path)
    a = zarrbolt.create_array(LocalStore(tmp_path / "r"), shape=(ROWS, COLS), dtype="int32",
                              chunks=(INNER, COLS), shards=(ROWS, COLS))
    a[:] = 3
    assert not locks.exists()
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
    path = str(tmp_path / "x.lock")
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


def test_lock_file_recreated_after_lock_dir_deleted(tmp_path, monkeypatch):
    locks = _lock_env(monkeypatch, tmp_path)
    root = tmp_path / "r"
    store = LocalStore(root)
    with key_lock(store, "a/c/0", "a/"):
        pass  # the lock file stays open in this process, idle
    lockfile = lock_path(str(root / "a"))
    assert os.path.exists(lockfile)
    store.erase_prefix("a/")
    assert os.path.exists(lockfile)  # lock files stay (tiny), whatever happens to the array
    shutil.rmtree(locks)  # someone cleaning the temporary directory
    with key_lock(store, "a/c/0", "a/"):
        assert os.path.exists(lockfile)  # a fresh lock file, locked there (not the deleted one)
    assert not root.exists() or "a" not in os.listdir(root)


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


@pytest.mark.skipif(os.name == "nt", reason="POSIX symlinks")
@pytest.mark.parametrize("which", ["env", "default"])
def test_lock_dir_that_is_a_symlink_is_refused(tmp_path, monkeypatch, which):
    """A lock dir that is a symbolic link (planted in the world-writable temporary directory, or
    named by ZARRBOLT_LOCK_DIR) is refused with a SymlinkError; nothing is made where it points."""
    from zarrbolt.errors import SymlinkError

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if which == "env":
        link = tmp_path / "locks"
        monkeypatch.setenv(LOCK_DIR_ENV, str(link))
    else:
        monkeypatch.delenv(LOCK_DIR_ENV, raising=False)
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
        (tmp_path / "tmp").mkdir()
        link = tmp_path / "tmp" / "zarrbolt-locks"
    os.symlink(elsewhere, link)
    assert lock_dir() == str(link)
    _make(str(tmp_path / "a"))
    a = zarrbolt.open_array(LocalStore(tmp_path / "a"), mode="r+")
    with pytest.raises(SymlinkError, match="symbolic link") as ei:
        a[:INNER] = 1  # a partial update of the shard: locked
    assert LOCK_DIR_ENV in str(ei.value)
    assert list(elsewhere.iterdir()) == []
    # a real directory (the directories above it may be links) is fine
    os.unlink(link)
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "via")
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "via" / "locks"))
    a = zarrbolt.open_array(LocalStore(tmp_path / "a"), mode="r+")
    a[:INNER] = 2
    assert os.listdir(real / "locks") and zarrbolt.open_array(LocalStore(tmp_path / "a"), mode="r")[0, 0] == 2
