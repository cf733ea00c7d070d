"""Disk full and I/O errors while writing (issue #21.6): a typed error naming the key, the data
written before intact, no temporary file left behind.

The disk-full cases run on a real 1 MiB tmpfs when this process may mount one (root on Linux),
through both write paths (the C file batches of whole chunks and the Store API); the others use
a LocalStore subclass whose file writes fail with a real OSError after a chosen number of bytes."""

from __future__ import annotations

import errno
import os
import subprocess
import uuid

import numpy as np
import pytest

import zarrbolt
from zarrbolt.errors import StoreError, StoreFullError, StoreIOError
from zarrbolt.fsck import fsck
from zarrbolt.storage import LocalStore
from zarrbolt.storage._local_safety import TMP_PREFIX


def _temps(root) -> list[str]:
    return [n for _, _, names in os.walk(root) for n in names if n.startswith(TMP_PREFIX)]


class FaultyStore(LocalStore):
    """A LocalStore whose file writes fail with ``OSError(code)`` once ``fail_after`` bytes of
    the current file are written (None: never)."""

    def __init__(self, root, code: int, **kw):
        super().__init__(root, **kw)
        self.code = code
        self.fail_after: int | None = None

    def _write_file(self, fd: int, views: list[memoryview]) -> None:
        if self.fail_after is None:
            return super()._write_file(fd, views)
        left = self.fail_after
        for v in views:
            n = min(left, len(v))
            os.write(fd, v[:n])
            left -= n
            if left == 0:
                break
        raise OSError(self.code, os.strerror(self.code))

    def with_read_only(self, read_only: bool = True) -> LocalStore:
        s = FaultyStore(self.root, self.code, read_only=read_only)
        s.fail_after = self.fail_after
        return s


@pytest.mark.parametrize(("code", "err"), [(errno.EIO, StoreIOError), (errno.ENOSPC, StoreFullError)])
@pytest.mark.parametrize("layout", [{"chunks": (16, 16)}, {"chunks": (8, 8), "shards": (16, 16)}])
@pytest.mark.parametrize("partial", [False, True])
def test_write_fault_typed_error_data_intact(tmp_path, code, err, layout, partial):
    store = FaultyStore(tmp_path / "r", code)
    a = zarrbolt.create_array(store, shape=(32, 32), dtype="int32", fill_value=0, **layout)
    before = np.arange(32 * 32, dtype="int32").reshape(32, 32)
    a[:] = before
    store.fail_after = 10
    with pytest.raises(err) as info:
        if partial:
            a[3:5, 3:5] = -7
        else:
            a[:16, :16] = -7
    assert "c/0/0" in str(info.value)  # names the key
    assert isinstance(info.value, StoreError) and isinstance(info.value, OSError)
    store.fail_after = None
    np.testing.assert_array_equal(a[:], before)  # the earlier data: intact
    assert _temps(tmp_path) == []
    assert fsck(tmp_path / "r").ok


def test_metadata_write_fault(tmp_path):
    store = FaultyStore(tmp_path / "r", errno.ENOSPC)
    a = zarrbolt.create_array(store, shape=(8,), dtype="int32", chunks=(4,))
    a.attrs["x"] = 1
    store.fail_after = 3
    with pytest.raises(StoreFullError, match="zarr.json"):
        a.attrs["x"] = 2
    store.fail_after = None
    assert zarrbolt.open_array(LocalStore(tmp_path / "r"), mode="r").attrs["x"] == 1
    assert _temps(tmp_path) == []


@pytest.fixture
def tiny_tmpfs(tmp_path):
    """A 1 MiB tmpfs (root on Linux only)."""
    mnt = tmp_path / f"tmpfs-{uuid.uuid4().hex[:8]}"
    mnt.mkdir()
    if os.name != "posix" or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True, check=False)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode(errors='replace').strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.parametrize("layout", [{"chunks": (64, 64)}, {"chunks": (32, 32), "shards": (64, 64)}])
def test_disk_full_on_a_real_tmpfs(tiny_tmpfs, layout):
    root = tiny_tmpfs / "r"
    rng = np.random.default_rng(0)
    a = zarrbolt.create_array(LocalStore(root), shape=(512, 512), dtype="int32", fill_value=0, compressors=None,
                              **layout)
    big = zarrbolt.create_array(LocalStore(tiny_tmpfs / "big"), shape=(1 << 20,), dtype="int32", chunks=(1 << 20,),
                                compressors=None, fill_value=0)
    first = rng.integers(0, 1 << 30, (64, 64), dtype="int32")
    a[:64, :64] = first  # 16 KiB: fits
    # 1 MiB of incompressible data into a 1 MiB file system: runs out of space part way
    with pytest.raises(StoreFullError) as info:
        a[:] = rng.integers(0, 1 << 30, (512, 512), dtype="int32")
    assert "c/" in str(info.value)
    assert _temps(tiny_tmpfs) == []
    rep = fsck(root)
    assert rep.torn == [] and rep.bad_shards == [] and rep.strays == []
    got = a[:]  # every chunk is the old or the new value
    assert got.shape == (512, 512)
    # a partial update that cannot fit leaves the shard / chunk as it was
    old = a[:64, :64]
    with pytest.raises(StoreFullError):
        big[: 1 << 19] = 1
    np.testing.assert_array_equal(a[:64, :64], old)
    assert _temps(tiny_tmpfs) == []


@pytest.mark.parametrize("code", [errno.EIO, errno.ENOSPC])
def test_shards_stored_behind_fault(tmp_path, code, monkeypatch):
    """Fewer shards than threads: each shard is stored on a thread of its own while the next is
    encoded (pipeline.shard.encode.StoreBehind).  A store failure there is raised by the write as the
    typed error naming the key; no temporary file is left; every shard holds its old or its new
    value, and a write that works stores them all."""
    from zarrbolt.pipeline.shard import encode as write_mod

    behind = []
    submit = write_mod.StoreBehind.submit

    def counting(self, fn, *args):
        behind.append(args[0])
        return submit(self, fn, *args)

    monkeypatch.setattr(write_mod.StoreBehind, "submit", counting)
    store = FaultyStore(tmp_path / "r", code)
    a = zarrbolt.create_array(store, shape=(256, 64), dtype="int32", fill_value=0, chunks=(16, 16), shards=(64, 64))
    before = np.repeat(np.arange(256, dtype="int32"), 64).reshape(256, 64)  # compresses well: shards fit the budget
    new = before + 1
    with zarrbolt.config.set(threads=8):  # 4 shards < 8 threads: the one-shard-at-a-time path
        a[:] = before
        np.testing.assert_array_equal(a[:], before)
        assert len(behind) >= 3  # all but the last shard stored behind the next one's encoding
        store.fail_after = 10
        with pytest.raises(StoreError) as info:
            a[:] = new
        assert "c/" in str(info.value) and isinstance(info.value, OSError)
        store.fail_after = None
        got = a[:]
        for s in range(4):
            part = got[64 * s: 64 * s + 64]
            assert np.array_equal(part, before[64 * s: 64 * s + 64]) or np.array_equal(part, new[64 * s: 64 * s + 64])
        assert _temps(tmp_path) == []
        assert fsck(tmp_path / "r").ok
        a[:] = new
        np.testing.assert_array_equal(a[:], new)


def test_store_behind_budget():
    """Two encoded shards must fit the write's budget to be stored behind the next one."""
    from zarrbolt.pipeline.shard.encode import StoreBehind

    sb = StoreBehind(100)
    assert sb.fits([b"x" * 30, b"y" * 20])
    assert not sb.fits([b"x" * 30, b"y" * 21])
