"""The kernels release the GIL: another Python thread runs while a kernel call is in progress.

Method (no timing assertions): a counter thread spins incrementing a counter.  The main thread,
holding the GIL, reads the counter, makes one kernel call and reads the counter again.  The
interpreter's switch interval is raised far above the duration of the call, so a kernel that
kept the GIL would leave the counter exactly unchanged (the main thread never gives the GIL
away between the two reads); a kernel that releases it lets the counter thread run.  The OS may
not schedule the counter thread during one short call on a loaded machine, so a few attempts
are made and the best one is checked.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

from zarrbolt import kernels

SWITCH_INTERVAL = 0.5  # seconds; each call below takes a few tens of milliseconds
ATTEMPTS = 5


def progress_during(call, attempts: int = ATTEMPTS) -> int:
    """How far a spinning Python thread gets between just before and just after `call()`."""
    state = {"count": 0, "stop": False}
    started = threading.Event()

    def spin():
        started.set()
        while not state["stop"]:
            state["count"] += 1

    old = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    t = threading.Thread(target=spin, daemon=True)
    best = 0
    try:
        t.start()
        started.wait()
        for _ in range(attempts):
            before = state["count"]
            call()
            best = max(best, state["count"] - before)
            if best > 1000:
                break
    finally:
        state["stop"] = True
        sys.setswitchinterval(old)
        t.join()
    return best


@pytest.fixture(scope="module")
def big_bytes():
    return np.random.default_rng(0).integers(0, 256, 32 << 20, dtype=np.uint8)


def test_crc32c_releases_gil(big_bytes):
    # The portable implementation is the slowest: ~20-40 ms for 32 MiB.
    assert progress_during(lambda: kernels.crc32c(big_bytes, impl="portable")) > 1000


def test_transpose_releases_gil():
    src = np.zeros((256, 256, 256), dtype=np.uint16)
    out = np.empty_like(src)
    assert progress_during(lambda: kernels.transpose(src, (2, 1, 0), out=out)) > 1000


def test_strided_copy_releases_gil():
    src = np.zeros((4096, 4096), dtype=np.uint8)[:, ::-1]
    dst = np.empty((4096, 4096), dtype=np.uint8, order="F")
    assert progress_during(lambda: kernels.strided_copy(dst, src)) > 1000


def test_cast_value_and_scale_offset_release_gil():
    x = np.random.default_rng(0).uniform(-10, 70000, 8 << 20).astype(np.float32)
    # the exact element path (towards-zero) is the slow one: tens of milliseconds
    assert progress_during(lambda: kernels.cast_value(x, np.uint16, rounding="towards-zero", out_of_range="clamp")) > 1000
    assert progress_during(lambda: kernels.scale_offset_encode(x.astype(np.int32), 1, 1)) > 1000


def test_fused_decode_releases_gil(tmp_path):
    import zarrbolt as zb

    a = zb.create_array(str(tmp_path / "g"), shape=(32, 512, 512), chunks=(16, 256, 256), dtype="uint16",
                        compressors=[{"name": "gzip", "configuration": {"level": 1}}])
    a[...] = np.random.default_rng(0).integers(0, 50, a.shape, dtype=np.uint16)
    with zb.config.set(threads=1):
        r = zb.open_array(str(tmp_path / "g"), mode="r")
        assert r._plan is not None
        assert progress_during(lambda: r[...]) > 1000


def test_method_detects_a_held_gil():
    """Control: a call of similar length that holds the GIL throughout (a pure-Python loop)
    lets the spinning thread make no progress at all."""

    def hold():
        x = 0
        for i in range(200_000):
            x += i
        return x

    assert progress_during(hold, attempts=1) == 0


def test_concurrent_calls_agree():
    """Several threads running the kernels at once get the single-threaded results."""
    rng = np.random.default_rng(1)
    datas = [rng.integers(0, 256, 1_000_003 + i, dtype=np.uint8) for i in range(4)]
    arrays = [rng.integers(0, 60000, (70, 90, 50), dtype=np.uint16) for _ in range(4)]
    expected_crc = [kernels.crc32c(d, impl="portable") for d in datas]
    expected_t = [np.ascontiguousarray(a.transpose(2, 0, 1)) for a in arrays]
    results: dict[int, tuple[list[int], list[np.ndarray]]] = {}
    barrier = threading.Barrier(4)

    def work(k):
        barrier.wait()
        crcs, ts = [], []
        for _ in range(5):
            crcs = [kernels.crc32c(d) for d in datas]
            ts = [kernels.transpose(a, (2, 0, 1)) for a in arrays]
        results[k] = (crcs, ts)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    for crcs, ts in results.values():
        assert crcs == expected_crc
        for got, exp in zip(ts, expected_t):
            np.testing.assert_array_equal(got, exp)
