"""Whole shards written while they are encoded (pipeline/shard/storing.py), by one C job or batch
by batch: the same bytes as a shard encoded whole, fill inner chunks left out, an all-fill shard
erased, and a failure part way leaves the old shard and no temporary file (the C job's own
failing writes: tests/test_encode_stream.py)."""

from __future__ import annotations

import errno
import os

import numpy as np
import pytest

import zarrbolt
from zarrbolt.errors import StoreFullError
from zarrbolt.fsck import fsck
from zarrbolt.pipeline.shard import storing as shard_stream
from zarrbolt.storage import files as storage_files
from zarrbolt.storage._local_safety import TMP_PREFIX


@pytest.fixture(autouse=True, params=["c-job", "batches"])
def way(request, monkeypatch):
    """Every test both ways: the whole shard by one C job (encode_stream), and batch by batch
    (the way when the C job cannot be had)."""
    if request.param == "batches":
        monkeypatch.setattr(shard_stream, "_stream", lambda *args: None)
    return request.param


def _files(root) -> dict[str, bytes]:
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            if n != "zarr.json":
                p = os.path.join(d, n)
                with open(p, "rb") as f:
                    out[os.path.relpath(p, root)] = f.read()
    return out


def _write(path, value, *, stream: bool, order: str = "lexicographic", write_empty: bool = False, monkeypatch):
    monkeypatch.setattr(shard_stream, "STREAM_MIN_BYTES", 0 if stream else 1 << 62)
    monkeypatch.setattr(shard_stream, "BATCH_BYTES", 3 * 8 * 8 * 4)  # three inner chunks a batch
    calls = []
    real = shard_stream.write_streamed

    def counting(*args, **kw):
        calls.append(args[1])
        return real(*args, **kw)

    monkeypatch.setattr(shard_stream, "write_streamed", counting)
    a = zarrbolt.create_array(path, shape=(40, 28), dtype="int32", chunks=(8, 8), shards=(32, 24), fill_value=0)
    a._io.sharding.write_order = order
    with zarrbolt.config.set(threads=2, write_empty_chunks=write_empty):
        a[:] = value
    return a, calls


@pytest.mark.parametrize("order", ["lexicographic", "morton", "colexicographic"])
@pytest.mark.parametrize("write_empty", [False, True])
def test_streamed_shards_are_the_same_bytes(tmp_path, monkeypatch, order, write_empty):
    rng = np.random.default_rng(1)
    value = rng.integers(0, 1000, (40, 28), dtype="int32")
    value[8:16, 0:8] = 0  # a fill inner chunk in an interior shard
    value[32:40, 24:28] = 0  # and one in the corner (edge) shard
    a, calls = _write(tmp_path / "s", value, stream=True, order=order, write_empty=write_empty, monkeypatch=monkeypatch)
    assert sorted(calls) == ["c/0/0", "c/0/1", "c/1/0", "c/1/1"]  # edge shards streamed too
    b, none = _write(tmp_path / "w", value, stream=False, order=order, write_empty=write_empty, monkeypatch=monkeypatch)
    assert none == []
    assert _files(tmp_path / "s") == _files(tmp_path / "w")
    np.testing.assert_array_equal(zarrbolt.open_array(tmp_path / "s", mode="r")[:], value)


def test_all_fill_shard_is_erased(tmp_path, monkeypatch):
    value = np.arange(40 * 28, dtype="int32").reshape(40, 28) + 1
    a, _ = _write(tmp_path / "s", value, stream=True, monkeypatch=monkeypatch)
    assert "c/0/0" in {k.replace(os.sep, "/") for k in _files(tmp_path / "s")}
    with zarrbolt.config.set(threads=2):
        a[:32, :24] = 0
    assert "c/0/0" not in {k.replace(os.sep, "/") for k in _files(tmp_path / "s")}
    assert not a[:32, :24].any() and (a[32:, :] == value[32:, :]).all()


def test_failure_part_way_keeps_the_old_shard(tmp_path, monkeypatch):
    old = np.arange(40 * 28, dtype="int32").reshape(40, 28)
    a, _ = _write(tmp_path / "s", old, stream=True, monkeypatch=monkeypatch)
    before = _files(tmp_path / "s")
    real = storage_files.pwrite_all
    n = []

    def full_disk(fd, views, offset):  # the second batch's write finds the disk full
        n.append(offset)
        if len(n) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, views, offset)

    monkeypatch.setattr(storage_files, "pwrite_all", full_disk)
    with zarrbolt.config.set(threads=2), pytest.raises(StoreFullError) as info:
        a[:] = -old
    assert "c/" in str(info.value)
    names = [f for _, _, fs in os.walk(tmp_path) for f in fs]
    assert not [f for f in names if f.startswith(TMP_PREFIX)]
    assert set(_files(tmp_path / "s")) == set(before)
    assert fsck(tmp_path / "s").ok
    got = a[:]
    for sl in [(slice(0, 32), slice(0, 24)), (slice(0, 32), slice(24, 28)), (slice(32, 40), slice(0, 24)),
               (slice(32, 40), slice(24, 28))]:
        assert np.array_equal(got[sl], old[sl]) or np.array_equal(got[sl], -old[sl])


@pytest.mark.parametrize("blocker", ["file", "dir"])
def test_something_in_the_way_is_a_store_error(tmp_path, monkeypatch, blocker):
    """A file where the shard's directory should be, or a directory where the shard should be:
    the store's typed error naming the key, nothing else changed."""
    from zarrbolt.errors import StoreError

    value = np.arange(40 * 28, dtype="int32").reshape(40, 28) + 1
    a, _ = _write(tmp_path / "s", value, stream=True, monkeypatch=monkeypatch)
    root = tmp_path / "s" / "c" / "1"
    import shutil

    shutil.rmtree(root)
    if blocker == "file":
        root.write_bytes(b"in the way")  # c/1 must be a directory
    else:
        (root / "0").mkdir(parents=True)  # c/1/0 must be a file
    with zarrbolt.config.set(threads=2), pytest.raises(StoreError, match="c/1/0"):
        a[32:, :24] = 5
    names = [f for _, _, fs in os.walk(tmp_path) for f in fs]
    assert not [f for f in names if f.startswith(TMP_PREFIX)]
    np.testing.assert_array_equal(a[:32], value[:32])


def test_a_codec_failing_in_the_c_job_leaves_it_to_the_batches(tmp_path, monkeypatch, way):
    """When the C job raises a codec's error, the file is emptied and written batch by batch
    (whose Python codecs report a real failure their way): the same bytes as always."""
    from zarrbolt.errors import CodecError
    from zarrbolt.pipeline.shard.encode import InnerEncoder

    value = np.random.default_rng(2).integers(0, 1000, (40, 28), dtype="int32")
    b, _ = _write(tmp_path / "w", value, stream=False, monkeypatch=monkeypatch)
    real = InnerEncoder.stream
    ran = []

    def failing(self, shard, regions, fd, ring_bytes, base=0):
        ran.append(real(self, shard, regions, fd, ring_bytes, base))  # bytes in the file, then the error
        raise CodecError("a codec failed in C")

    monkeypatch.setattr(InnerEncoder, "stream", failing)
    a, calls = _write(tmp_path / "s", value, stream=True, monkeypatch=monkeypatch)
    assert len(calls) == 4 and len(ran) == (4 if way == "c-job" else 0)
    assert _files(tmp_path / "s") == _files(tmp_path / "w")


@pytest.mark.parametrize("window", [8 * 8 * 4, 5 * 8 * 8 * 4])
def test_a_shard_in_several_c_jobs_is_the_same_bytes(tmp_path, monkeypatch, way, window):
    """A shard larger than WINDOW_BYTES is encoded by one C job per window (Python gets a turn
    between them), each writing on from where the last ended."""
    from zarrbolt.pipeline.shard.encode import InnerEncoder

    monkeypatch.setattr(shard_stream, "WINDOW_BYTES", window)  # one and five inner chunks a job
    real, jobs = InnerEncoder.stream, []

    def counting(self, shard, regions, fd, ring_bytes, base=0):
        jobs.append((len(regions), base))
        return real(self, shard, regions, fd, ring_bytes, base)

    monkeypatch.setattr(InnerEncoder, "stream", counting)
    rng = np.random.default_rng(3)
    value = rng.integers(0, 1000, (40, 28), dtype="int32")
    value[8:16, 0:8] = 0
    a, _ = _write(tmp_path / "s", value, stream=True, monkeypatch=monkeypatch)
    b, _ = _write(tmp_path / "w", value, stream=False, monkeypatch=monkeypatch)
    assert _files(tmp_path / "s") == _files(tmp_path / "w")
    if way == "c-job":  # shard c/0/0: 12 inner chunks, in jobs of one or five, each on from the last
        per = window // (8 * 8 * 4)
        first = [j for j in jobs[: -(-12 // per)]]
        assert [n for n, _ in first] == [min(per, 12 - k) for k in range(0, 12, per)]
        assert first[0][1] == 0 and all(b0 <= b1 for (_, b0), (_, b1) in zip(first, first[1:]))  # (fill: none)
        assert first[-1][1] > 0


def test_a_codec_failing_in_a_later_c_job_gives_up_the_earlier_ones(tmp_path, monkeypatch, way):
    """A shard in several C jobs whose third job raises a codec's error: what the first two
    wrote is given up, and the batched way writes the whole shard (the same bytes as always)."""
    from zarrbolt.errors import CodecError
    from zarrbolt.pipeline.shard.encode import InnerEncoder

    monkeypatch.setattr(shard_stream, "WINDOW_BYTES", 2 * 8 * 8 * 4)  # two inner chunks a job
    value = np.random.default_rng(4).integers(0, 1000, (40, 28), dtype="int32")
    value[0:8, 16:24] = 0  # a fill inner chunk in the second job
    b, _ = _write(tmp_path / "w", value, stream=False, monkeypatch=monkeypatch)
    real, jobs = InnerEncoder.stream, []

    def third_fails(self, shard, regions, fd, ring_bytes, base=0):
        jobs.append(base)
        if len(jobs) % 6 == 3:  # the third job of each 12-chunk shard (6 jobs)
            raise CodecError("a codec failed in C")
        return real(self, shard, regions, fd, ring_bytes, base)

    monkeypatch.setattr(InnerEncoder, "stream", third_fails)
    a, _ = _write(tmp_path / "s", value, stream=True, monkeypatch=monkeypatch)
    assert _files(tmp_path / "s") == _files(tmp_path / "w")
    np.testing.assert_array_equal(a[:], value)
