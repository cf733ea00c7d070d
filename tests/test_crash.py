"""A writer killed with SIGKILL at a random moment (issue #21.2) leaves every chunk whole (old or
new, never torn), nothing a listing or ``nchunks_initialized`` counts that is not a chunk, and
temporary files that the next writer in their directory (or ``fsck --clean``) removes.

Full, partial and resize writes, on a chunked and a sharded layout.  ``ZARRBOLT_CRASH_KILLS``
kills per layout and kind of write (default 4 here; ``make crash-test`` runs 50)."""

from __future__ import annotations

import os
import random
import signal
import time

import numpy as np
import pytest

import zarrbolt
from zarrbolt.fsck import fsck
from zarrbolt.storage import LocalStore
from zarrbolt.storage._local_safety import TMP_PREFIX

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and SIGKILL")

KILLS = int(os.environ.get("ZARRBOLT_CRASH_KILLS", "4"))
SHAPE, CHUNKS, SHARDS = (256, 192), (32, 32), (128, 96)
LAYOUTS = {"chunked": {"chunks": CHUNKS}, "sharded": {"chunks": CHUNKS, "shards": SHARDS}}


def _create(path: str, layout: str) -> None:
    zarrbolt.create_array(LocalStore(path), shape=SHAPE, dtype="int32", fill_value=-1, **LAYOUTS[layout])


def _write_forever(path: str, kind: str, ready_w: int, seed: int) -> None:
    """The child: write without end (until killed)."""
    rng = random.Random(seed)
    a = zarrbolt.open_array(LocalStore(path), mode="r+")
    os.write(ready_w, b"x")
    gen = 0
    while True:
        gen += 1
        if kind == "full":
            a[:] = gen  # whole chunks / shards: every chunk uniform
        elif kind == "partial":
            r0, c0 = rng.randrange(SHAPE[0] - 40), rng.randrange(SHAPE[1] - 40)
            a[r0:r0 + rng.randrange(1, 40), c0:c0 + rng.randrange(1, 40)] = gen
        else:  # resize: shrink (trims boundary chunks, deletes the rest) and grow again
            rows = rng.choice([SHAPE[0], SHAPE[0] - 50, SHAPE[0] - 130])
            a.resize((rows, SHAPE[1]))
            a[: rows // 2] = gen


def _kill_one(path: str, kind: str, seed: int) -> int:
    """Start a writer, kill it at a random moment; its pid."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(r)
            _write_forever(path, kind, w, seed)
        finally:
            os._exit(3)
    os.close(w)
    os.read(r, 1)  # the child is about to write
    os.close(r)
    time.sleep(random.Random(seed).uniform(0.0, 0.08))
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return pid


def _temps(path: str) -> list[str]:
    return [os.path.join(d, n) for d, _, names in os.walk(path) for n in names if n.startswith(TMP_PREFIX)]


def _check_whole(path: str, kind: str) -> None:
    """0 torn, 0 strays: fsck finds every chunk decodable, every key a chunk or metadata; the
    listing shows no temporary file; full writes leave each chunk uniform (old or new)."""
    rep = fsck(path)
    assert rep.torn == [] and rep.bad_shards == [] and rep.strays == [] and rep.unreadable == []
    store = LocalStore(path)
    assert not [k for k in store.list() if TMP_PREFIX in k or ".zb-lock" in k]
    a = zarrbolt.open_array(store, mode="r")
    assert a.nchunks_initialized == rep.chunks_checked
    data = a[:]
    if kind == "full":
        n = LAYOUTS["sharded" if a.shards else "chunked"]["chunks"]
        for i in range(0, a.shape[0], n[0]):
            for j in range(0, a.shape[1], n[1]):
                block = data[i:i + n[0], j:j + n[1]]
                assert (block == block.flat[0]).all(), f"chunk at {(i, j)} mixes two writes"


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("kind", ["full", "partial", "resize"])
def test_sigkill_leaves_no_torn_chunk_and_no_stray(tmp_path, layout, kind):
    path = str(tmp_path / "a")
    _create(path, layout)
    seed0 = random.randrange(1 << 30)
    for i in range(KILLS):
        _kill_one(path, kind, seed0 + i)
        _check_whole(path, kind)
    # the temporary files of the dead writers are orphans: a writer in their directories
    # removes them (each directory: the array's and its chunks')
    a = zarrbolt.open_array(LocalStore(path), mode="r+")
    a.resize(SHAPE)
    a[:] = 7
    a.attrs["done"] = True
    assert _temps(path) == []
    assert fsck(path).ok


def test_fsck_clean_removes_orphans_of_dead_writers(tmp_path):
    path = str(tmp_path / "a")
    _create(path, "sharded")
    for i in range(3):
        _kill_one(path, "full", 100 + i)
    os.makedirs(os.path.join(path, "c", "0"), exist_ok=True)
    # an orphan of a dead process of this host (pid 2**22 + 1 is above Linux's default pid_max
    # of 2**22), and a fresh temp of a running writer (this process): only the first goes
    from zarrbolt.storage import _local_safety as safety

    dead = os.path.join(path, "c", "0", f"{TMP_PREFIX}{safety.HOST}-{2 ** 22 + 1}-deadbeef")
    live = os.path.join(path, "c", "0", safety.tmp_name())
    for p in (dead, live):
        with open(p, "wb") as f:
            f.write(b"partial")
    rep = fsck(path)
    assert "c/0/" + os.path.basename(dead) in rep.temp_orphans
    assert "c/0/" + os.path.basename(live) in rep.temp_live
    assert not rep.ok
    rep = fsck(path, clean=True)
    assert rep.ok and set(rep.removed) == set(rep.temp_orphans)
    assert _temps(path) == [live]
    np.testing.assert_array_equal(zarrbolt.open_array(LocalStore(path), mode="r").shape, SHAPE)
