"""EncodePlan.encode_stream (csrc/encode_stream.c): a shard's inner chunks encoded on the pool and
written to the file in order by one job -- the same bytes, sizes and fill markers as
encode_chunks laid end to end, whatever the ring's size (chunks waiting for their slot, chunks
larger than a slot), from one thread or from several at once, and OS errors raised as OSError."""

from __future__ import annotations

import os
import sys
import threading

import numpy as np
import pytest

import zarrbolt
from zarrbolt._ext import _plans, _zstd

CHUNK = (8, 16)


def _plan(level: int = 1) -> _plans.EncodePlan:
    steps = [("transform", _zstd.ENCODE_STEP, _zstd.encode_params(level, False))]
    return _plans.EncodePlan(steps, 4, 0, list(CHUNK), None, b"\0\0\0\0", True, 1 << 16)


def _tasks(shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every chunk of an int32 array of ``shape`` in C order: (offsets, shapes) for C."""
    src = np.zeros(shape, "int32")
    starts, shapes = [], []
    for y in range(0, shape[0], CHUNK[0]):
        for x in range(0, shape[1], CHUNK[1]):
            starts.append((y, x))
            shapes.append((min(CHUNK[0], shape[0] - y), min(CHUNK[1], shape[1] - x)))
    st = np.array(starts, np.int64)
    return src, np.ascontiguousarray(st @ np.asarray(src.strides, np.int64)), np.array(shapes, np.int64)


def _value(shape: tuple[int, int], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.integers(0, 50, shape, dtype="int32")
    v[:CHUNK[0], CHUNK[1]:2 * CHUNK[1]] = 0  # an all-fill chunk: not written
    v[CHUNK[0]:2 * CHUNK[0], :CHUNK[1]] = rng.integers(-2**31, 2**31 - 1, CHUNK, dtype="int32")  # incompressible
    return v


def _stream(plan, value, offsets, shapes, path, *, ring_slots: int, slot: int = 0, workers: int = 2, base: int = 0):
    room = slot or plan.pack_room
    ring = np.zeros(room * ring_slots, np.uint8)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        where, end = plan.encode_stream(value, offsets, shapes, [None] * workers, fd, ring, base, slot)
    finally:
        os.close(fd)
    with open(path, "rb") as f:
        return where, end, f.read()


def _expected(plan, value, offsets, shapes, base: int = 0):
    """encode_chunks' pieces laid end to end from ``base``, fill chunks left out."""
    buf, where = plan.encode_chunks(value, offsets, shapes, [0, len(offsets)], [None])
    out, places, pos = [], [], base
    for o, n in where.tolist():
        assert o != _plans.ENC_SKIPPED_ROOM
        if o == _plans.ENC_SKIPPED_FILL:
            places.append([_plans.ENC_SKIPPED_FILL, 0])
            continue
        out.append(bytes(buf[o:o + n]))
        places.append([pos, n])
        pos += n
    return places, pos, b"".join(out)


@pytest.mark.parametrize("ring_slots", [1, 2, 3, 64])
@pytest.mark.parametrize("workers", [1, 2, 4])
def test_stream_is_encode_chunks_end_to_end(tmp_path, ring_slots, workers):
    value = _value((77, 93), ring_slots * 10 + workers)  # edge chunks on both axes
    _, offsets, shapes = _tasks(value.shape)
    plan = _plan()
    places, end, data = _expected(plan, value, offsets, shapes)
    where, got_end, got = _stream(plan, value, offsets, shapes, tmp_path / "s", ring_slots=ring_slots,
                                  workers=workers)
    assert where.tolist() == places and got_end == end and got == data


def test_chunks_larger_than_a_slot_wait_in_memory_of_their_own(tmp_path):
    value = _value((64, 64), 3)
    _, offsets, shapes = _tasks(value.shape)
    plan = _plan()
    places, end, data = _expected(plan, value, offsets, shapes)
    # slots of 100 bytes: the noisy chunk (about 500 bytes encoded) does not fit one
    where, got_end, got = _stream(plan, value, offsets, shapes, tmp_path / "s", ring_slots=3, slot=100)
    assert where.tolist() == places and got_end == end and got == data
    assert max(n for _, n in places) > 100


def test_stream_from_a_base_offset(tmp_path):
    value = _value((40, 40), 4)
    _, offsets, shapes = _tasks(value.shape)
    plan = _plan()
    places, end, data = _expected(plan, value, offsets, shapes, base=1000)
    where, got_end, got = _stream(plan, value, offsets, shapes, tmp_path / "s", ring_slots=2, base=1000)
    assert where.tolist() == places and got_end == end and got[1000:] == data and got[:1000] == bytes(1000)


def test_streams_from_several_threads_at_once(tmp_path):
    """The pool runs one job at a time: the other threads' streams run on their own threads."""
    plan = _plan()
    values = [_value((96, 96), 10 + k) for k in range(4)]
    _, offsets, shapes = _tasks(values[0].shape)
    results: dict[int, object] = {}

    def run(k: int) -> None:
        try:
            results[k] = _stream(plan, values[k], offsets, shapes, tmp_path / f"s{k}", ring_slots=2)
        except BaseException as e:  # noqa: BLE001 - reported below
            results[k] = e

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        places, end, data = _expected(plan, values[k], offsets, shapes)
        where, got_end, got = results[k]
        assert where.tolist() == places and got_end == end and got == data


def test_a_failed_write_is_an_os_error(tmp_path):
    value = _value((32, 32), 5)
    src, offsets, shapes = _tasks(value.shape)
    plan = _plan()
    path = tmp_path / "ro"
    path.write_bytes(b"")
    fd = os.open(path, os.O_RDONLY)  # pwrite: EBADF
    try:
        with pytest.raises(OSError) as info:
            plan.encode_stream(value, offsets, shapes, [None, None], fd, np.zeros(plan.pack_room * 2, np.uint8))
    finally:
        os.close(fd)
    assert info.value.errno is not None


def test_codec_errors_name_the_chunk():
    from zarrbolt._ext import _blosc1

    step = ("transform", _blosc1.ENCODE_STEP, _blosc1.encode_params(5, 0, 1, "nope"))
    plan = _plans.EncodePlan([step], 1, 0, [8], None, b"\0", False, 1024)
    r, w = os.pipe()
    try:
        with pytest.raises(ValueError) as e:
            plan.encode_stream(np.ones(8, "uint8"), np.zeros(1, np.int64), np.array([[8]], np.int64), [None], w,
                               np.zeros(plan.pack_room, np.uint8))
    finally:
        os.close(r)
        os.close(w)
    assert e.value.task_index == 0


def test_bad_arguments_are_refused(tmp_path):
    plan = _plan()
    value = _value((16, 16), 6)
    _, offsets, shapes = _tasks(value.shape)
    with pytest.raises(ValueError, match="ring"):
        plan.encode_stream(value, offsets, shapes, [None], 1, np.zeros(10, np.uint8))
    with pytest.raises(ValueError, match="ring"):
        plan.encode_stream(value, offsets, shapes, [None], 1, np.zeros((plan.pack_room, 2), np.uint8))


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_shard_write_that_fails_part_way_keeps_the_old_shard(tmp_path):
    """A streamed shard whose file hits the process's file size limit (EFBIG, a real failing
    write of the C job) part way: a typed store error, the old shard as it was, no temporary."""
    import resource
    import signal

    from zarrbolt.errors import StoreError
    from zarrbolt.pipeline.shard import storing as shard_stream
    from zarrbolt.storage._local_safety import TMP_PREFIX

    a = zarrbolt.create_array(tmp_path / "s", shape=(64, 64), dtype="int32", chunks=(8, 8), shards=(64, 64),
                              fill_value=0)
    old = np.random.default_rng(7).integers(0, 1 << 30, (64, 64), dtype="int32")
    mp = pytest.MonkeyPatch()
    mp.setattr(shard_stream, "STREAM_MIN_BYTES", 0)
    streamed = []
    real = shard_stream._stream
    mp.setattr(shard_stream, "_stream", lambda *args: streamed.append(1) or real(*args))
    try:
        with zarrbolt.config.set(threads=2):
            a[:] = old
        before = (tmp_path / "s" / "c" / "0" / "0").read_bytes()
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(before) // 2, hard))
        try:
            with zarrbolt.config.set(threads=2), pytest.raises(StoreError, match="c/0/0"):
                a[:] = -old
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
            signal.signal(signal.SIGXFSZ, handler)
    finally:
        mp.undo()
    assert len(streamed) == 2  # both writes went the C way
    assert (tmp_path / "s" / "c" / "0" / "0").read_bytes() == before
    assert not [f for _, _, fs in os.walk(tmp_path) for f in fs if f.startswith(TMP_PREFIX)]
    np.testing.assert_array_equal(a[:], old)
