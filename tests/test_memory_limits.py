"""The output cache's "auto" size (zarrbolt._memory): memory limits, dask workers, memory
pressure and zarrbolt.release_memory().  A real dask.distributed worker: tests/ecosystem."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt import _memory
from zarrbolt.pipeline import buffers, outbuf
from zarrbolt.storage import MemoryStore

SHAPE = (16, 512, 1024)  # 16 MiB of uint16


@pytest.fixture(autouse=True)
def fresh_cache():
    outbuf.clear()
    yield
    outbuf.clear()


def run_child(code: str, env: dict | None = None) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), **(env or {})}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().splitlines()[-1]


def fake_proc(tmp_path, cgroup: str, mounts: list[str]) -> str:
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "cgroup").write_text(cgroup)
    (proc / "mountinfo").write_text("\n".join(mounts) + "\n")
    return str(proc)


def test_cgroup_v2_limit_of_the_group_or_an_ancestor(tmp_path):
    top = tmp_path / "cg2"
    (top / "jobs" / "me").mkdir(parents=True)
    (top / "memory.max").write_text("max\n")
    (top / "jobs" / "memory.max").write_text(f"{8 << 30}\n")
    (top / "jobs" / "me" / "memory.max").write_text("max\n")
    proc = fake_proc(tmp_path, "0::/jobs/me\n", [f"41 23 0:38 / {top} rw,relatime - cgroup2 cgroup2 rw"])
    assert _memory.cgroup_limit(proc) == 8 << 30
    (top / "jobs" / "me" / "memory.max").write_text(f"{2 << 30}\n")
    assert _memory.cgroup_limit(proc) == 2 << 30


def test_cgroup_v1_limit_and_a_container_that_sees_its_group_as_root(tmp_path):
    top = tmp_path / "memory"
    top.mkdir()
    (top / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # v1's "no limit"
    proc = fake_proc(tmp_path, "4:memory:/docker/abc\n9:name=systemd:/\n",
                     [f"35 31 0:32 /docker/abc {top} rw,relatime - cgroup cgroup rw,memory",
                      "32 31 0:29 / /nowhere rw,relatime - cgroup cgroup rw,cpu"])
    assert _memory.cgroup_limit(proc) is None
    (top / "memory.limit_in_bytes").write_text(f"{3 << 30}\n")
    assert _memory.cgroup_limit(proc) == 3 << 30


@pytest.mark.parametrize("cgroup,mounts", [
    ("", []),
    ("garbage\n0::\n", ["not a mountinfo line", "1 2 3 - cgroup2"]),
    ("0::/x\n", ["41 23 0:38 / /does/not/exist rw - cgroup2 cgroup2 rw"]),
])
def test_no_cgroup_limit_when_nothing_is_readable(tmp_path, cgroup, mounts):
    assert _memory.cgroup_limit(fake_proc(tmp_path, cgroup, mounts)) is None
    assert _memory.cgroup_limit(str(tmp_path / "missing")) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_DATA semantics: Linux")
@pytest.mark.skipif(bool(os.environ.get("ZARRBOLT_SANITIZER")),
                    reason="under ASan/TSan (make asan-test/tsan-test) the sanitizer's shadow memory counts "
                           "against RLIMIT_DATA: the child cannot start with a limit of 8 GiB")
def test_an_rlimit_caps_the_auto_size_at_a_sixteenth():
    code = """
import resource
resource.setrlimit(resource.RLIMIT_DATA, (8 << 30, resource.RLIM_INFINITY))
import zarrbolt
from zarrbolt import _memory
from zarrbolt.pipeline import outbuf
print(_memory.rlimit(), outbuf.limit())
"""
    limit, size = map(int, run_child(code).split())
    assert limit == 8 << 30
    expect = min(1 << 30, (8 << 30) // 16, *[v // 16 for v in (_memory.physical_memory(), _memory.cgroup_limit())
                                             if v])
    assert size == expect == min(_memory.auto_cache_bytes(), (8 << 30) // 16)


def test_auto_size_without_dask_and_distributed_is_never_imported():
    code = """
import sys
import zarrbolt as zarr
from zarrbolt.pipeline import outbuf
a = zarr.create_array(zarr.MemoryStore(), shape=(16, 512, 1024), chunks=(8, 128, 256), dtype="uint16")
x = a[...]
del x
print(int(outbuf.held_bytes() > 0), int("distributed" in sys.modules), outbuf.limit() > 0)
"""
    assert run_child(code) == "1 0 True"


def test_explicit_sizes_override_auto():
    a = zarr.create_array(MemoryStore(), shape=SHAPE, chunks=(8, 128, 256), dtype="uint16", fill_value=1)
    with zarr.config.set(output_cache_bytes=0):
        assert outbuf.limit() == 0
        x = a[...]
        del x
        assert outbuf.held_bytes() == 0
    with zarr.config.set(output_cache_bytes=64 << 20):
        assert outbuf.limit() == 64 << 20
        x = a[...]
        del x
        assert outbuf.held_bytes() == x_nbytes()


def x_nbytes() -> int:
    return int(np.prod(SHAPE)) * 2


@pytest.mark.parametrize("value", ["Auto", "off", -1, 1.5, None])
def test_output_cache_bytes_is_validated(value):
    with pytest.raises(zarr.errors.MetadataError):
        zarr.config.set(output_cache_bytes=value)


def test_release_memory_empties_the_cache_and_the_thread_buffers():
    a = zarr.create_array(MemoryStore(), shape=SHAPE, chunks=(8, 128, 256), dtype="uint16", fill_value=3)
    a[:8] = 5  # stored chunks: the read decodes through the arena
    x = a[...]
    assert int(x[0, 0, 0]) == 5 and int(x[-1, -1, -1]) == 3
    del x
    gc.collect()
    assert outbuf.held_bytes() == x_nbytes()
    arena = buffers.thread_arena().obj  # (the view's memory)
    zarr.release_memory()
    assert outbuf.held_bytes() == 0
    assert buffers.thread_arena().obj is not arena  # a new one: the old one was let go
    y = a[...]  # reads still work afterwards
    assert int(y[0, 0, 0]) == 5 and int(y[-1, -1, -1]) == 3


def test_memory_pressure_makes_the_reaper_drop_the_cache(monkeypatch):
    a = zarr.create_array(MemoryStore(), shape=SHAPE, chunks=(8, 128, 256), dtype="uint16", fill_value=2)
    x = a[...]
    del x
    assert outbuf.held_bytes() > 0
    assert _memory.memory_available() is None or not _memory.under_pressure()
    if _memory.memory_available() is None:
        pytest.skip("no /proc/meminfo: memory pressure is not observed on this platform")
    monkeypatch.setattr(_memory, "PRESSURE_FRACTION", 1.01)  # "less than 101% available": always short
    assert _memory.under_pressure()
    deadline = time.monotonic() + 30
    while outbuf.held_bytes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert outbuf.held_bytes() == 0


@pytest.mark.parametrize("min_bytes", [0, 1 << 40])
def test_large_shards_are_written_one_at_a_time_with_the_same_bytes(tmp_path, monkeypatch, min_bytes):
    """Shards too large to encode side by side (pipeline/write.py _large_shards) are encoded one
    at a time, their inner chunks in parallel: the stored bytes are the same either way."""
    from zarrbolt.pipeline.shard import storing as write_mod

    data = np.random.default_rng(4).integers(0, 3000, (32, 256, 256), dtype=np.uint16)
    kw = dict(shape=data.shape, chunks=(16, 128, 128), shards=(32, 128, 128), dtype="uint16")
    ref = zarr.create_array(str(tmp_path / "ref"), **kw)
    with zarr.config.set(threads=1):
        ref[...] = data
    monkeypatch.setattr(write_mod, "SHARDS_IN_FLIGHT_MIN", min_bytes)
    a = zarr.create_array(str(tmp_path / "a"), **kw)
    with zarr.config.set(threads=2):
        assert write_mod._large_shards(a._io, 4) is (min_bytes == 0)
        a[...] = data
    for k in ("c/0/0/0", "c/0/1/1"):
        assert (tmp_path / "a" / k).read_bytes() == (tmp_path / "ref" / k).read_bytes()
    np.testing.assert_array_equal(a[...], data)
