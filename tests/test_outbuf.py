"""Large read results reuse the memory of recently dropped ones (zarrbolt.pipeline.outbuf)."""

from __future__ import annotations

import gc
import time

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.pipeline import outbuf
from zarrbolt.storage import LocalStore, MemoryStore

SHAPE = (16, 512, 1024)  # 16 MiB of uint16


@pytest.fixture(autouse=True)
def fresh_cache():
    outbuf.clear()
    yield
    outbuf.clear()


def make(store, fill=0, sharded=False):
    kw = {"shards": (16, 256, 512)} if sharded else {}
    return zarr.create_array(store, shape=SHAPE, chunks=(8, 128, 256), dtype="uint16", fill_value=fill, **kw)


@pytest.mark.parametrize("sharded", [False, True])
def test_dropped_result_is_reused_and_never_shows_old_values(tmp_path, sharded):
    rng = np.random.default_rng(0)
    data = rng.integers(1, 60000, SHAPE, dtype=np.uint16)
    a = make(LocalStore(tmp_path / "a"), sharded=sharded)
    a[...] = data
    b = make(MemoryStore(), fill=7, sharded=sharded)  # mostly never written: fill value
    b[:4, :100] = 3
    x = a[...]
    np.testing.assert_array_equal(x, data)
    ptr = x.ctypes.data
    del x
    gc.collect()
    assert outbuf.held_bytes() >= data.nbytes
    y = b[...]
    assert y.ctypes.data == ptr  # the same memory, every element rewritten
    expect = np.full(SHAPE, 7, np.uint16)
    expect[:4, :100] = 3
    np.testing.assert_array_equal(y, expect)
    assert y.flags.writeable and y.flags.c_contiguous
    y[0, 0, 0] = 1  # an ordinary writable array
    assert outbuf.held_bytes() == 0


def test_views_keep_the_memory_until_the_last_one_goes():
    a = make(MemoryStore(), fill=1)
    x = a[...]
    v = x[::2]
    del x
    gc.collect()
    assert outbuf.held_bytes() == 0
    assert int(v.sum()) == v.size
    del v
    gc.collect()
    assert outbuf.held_bytes() > 0


def test_limits_expiry_and_small_reads():
    a = make(MemoryStore(), fill=2)
    with zarr.config.set(output_cache_bytes=0):
        x = a[...]
        del x
        assert outbuf.held_bytes() == 0
    with zarr.config.set(output_cache_bytes=8 << 20):  # smaller than one result
        x = a[...]
        del x
        assert outbuf.held_bytes() == 0
    small = a[:2]  # 2 MiB: below the size worth caching
    del small
    assert outbuf.held_bytes() == 0
    x = a[...]
    del x
    assert outbuf.held_bytes() == np.prod(SHAPE) * 2
    with zarr.config.set(output_cache_bytes=1 << 20):  # lowering the limit drops what is over it
        assert outbuf.held_bytes() == 0
    with zarr.config.set(output_cache_seconds=0.2):
        x = a[...]
        del x
        assert outbuf.held_bytes() > 0
        deadline = time.monotonic() + 5
        while outbuf.held_bytes() and time.monotonic() < deadline:  # the reaper thread drops it
            time.sleep(0.05)
        assert outbuf.held_bytes() == 0
    x = a[...]
    del x
    assert outbuf.held_bytes() > 0
    with zarr.config.set(output_cache_seconds=0):  # shortening the time drops what is older
        time.sleep(0.01)
        assert outbuf.held_bytes() == 0


@pytest.mark.parametrize("value", [-1, float("inf"), float("nan"), True, "10"])
def test_output_cache_seconds_is_validated(value):
    with pytest.raises((ValueError, TypeError, zarr.errors.MetadataError)):
        zarr.config.set(output_cache_seconds=value)


def test_default_output_cache_is_bounded_by_memory():
    from zarrbolt import _memory

    assert zarr.config.get("output_cache_bytes") == "auto"
    auto = _memory.auto_cache_bytes()
    assert 0 < auto <= 1 << 30
    assert outbuf.limit() == auto  # not a dask worker here
    for bound in (_memory.physical_memory(), _memory.process_memory_limit()):
        if bound:
            assert auto <= bound // 16
    with zarr.config.set(output_cache_bytes=12345):
        assert outbuf.limit() == 12345
    with zarr.config.set(output_cache_bytes="auto"):
        assert outbuf.limit() == auto


def test_a_much_smaller_read_does_not_take_a_large_buffer():
    a = make(MemoryStore(), fill=4)
    x = a[...]
    del x
    held = outbuf.held_bytes()
    y = a[:9]  # 9/16 of the size: below the reuse window
    assert outbuf.held_bytes() == held
    np.testing.assert_array_equal(y, 4)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="POSIX only")
def test_forked_child_starts_with_an_empty_cache():
    """...and with a new thread pool: the parent's pool threads do not exist in the child, and
    a read there used to wait for them forever."""
    import os

    a = make(MemoryStore(), fill=5)
    x = a[...]
    del x
    assert outbuf.held_bytes() > 0
    with zarr.config.set(threads=2):
        a[...]  # the parent's pool exists
    pid = os.fork()
    if pid == 0:  # child: must not deadlock or see the parent's buffers
        with zarr.config.set(threads=2):
            ok = outbuf.held_bytes() == 0 and int(a[...][0, 0, 0]) == 5
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize("env,expect", [
    ({"ZARRBOLT_OUTPUT_CACHE_SECONDS": "5.5", "ZARRBOLT_OUTPUT_CACHE_BYTES": "0"}, "5.5 0"),
    ({"ZARRBOLT_OUTPUT_CACHE_SECONDS": "", "ZARRBOLT_NUM_THREADS": "3"}, "30.0 auto 3"),
    ({"ZARRBOLT_OUTPUT_CACHE_BYTES": "AUTO"}, "30.0 auto"),
    ({"ZARRBOLT_OUTPUT_CACHE_BYTES": "1048576"}, "30.0 1048576"),
    ({"ZARRBOLT_OUTPUT_CACHE_BYTES": "lots"}, "MetadataError"),
    ({"ZARRBOLT_OUTPUT_CACHE_SECONDS": "-1"}, "MetadataError"),
    ({"ZARRBOLT_OUTPUT_CACHE_SECONDS": "inf"}, "MetadataError"),
    ({"ZARRBOLT_OUTPUT_CACHE_SECONDS": "soon"}, "MetadataError"),
    ({"ZARRBOLT_OUTPUT_CACHE_BYTES": "-5"}, "MetadataError"),
    ({"ZARRBOLT_NUM_THREADS": "0"}, "MetadataError"),
])
def test_environment_variables(env, expect):
    import os
    import subprocess
    import sys

    code = ("import zarrbolt; c = zarrbolt.config; "
            "print(c.get('output_cache_seconds'), c.get('output_cache_bytes'), c.get('threads'))")
    r = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True)
    out = r.stdout + r.stderr
    assert expect in out, out
    if expect == "MetadataError":
        assert r.returncode != 0


@pytest.mark.parametrize("how", ["kept until exit", "dropped at exit by an exception", "dropped, then exit"])
def test_the_interpreter_exits_with_large_results_alive(tmp_path, how):
    # A result dropped while the interpreter shuts down used to start the cache's reaper thread
    # from __del__; such a thread never runs, and Thread.start() waited for it forever.
    import os
    import subprocess
    import sys

    code = f"""
import sys
import numpy as np
import zarrbolt as zarr
a = zarr.create_array({str(tmp_path / 'a')!r}, shape={SHAPE}, chunks=(8, 128, 256), dtype="uint16")
a[...] = 5
x = a[...]
assert int(x[3, 4, 5]) == 5
how = {how!r}
if how.startswith("dropped at exit"):
    raise SystemExit(x.base.missing_attribute)
if how.startswith("dropped, then"):
    del x
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    if how.startswith("dropped at exit"):
        assert r.returncode != 0 and "missing_attribute" in r.stderr
    else:
        assert r.returncode == 0, r.stderr


def test_the_reaper_returns_and_is_joined_at_exit(tmp_path):
    # atexit stops the reaper (a daemon thread cut off during finalisation is never joined:
    # ThreadSanitizer reports it as a leak); no reaper starts after that.
    import os
    import subprocess
    import sys

    code = f"""
import zarrbolt as zarr
from zarrbolt.pipeline import outbuf
a = zarr.create_array({str(tmp_path / 'a')!r}, shape={SHAPE}, chunks=(8, 128, 256), dtype="uint16")
a[...] = 5
x = a[...]
del x
assert outbuf._reaper is not None and outbuf._reaper.is_alive()
outbuf._stop_reaper()
assert not outbuf._reaper.is_alive()
outbuf._start_reaper()
assert not outbuf._reaper.is_alive()
print("ok")
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr
