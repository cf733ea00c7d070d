"""Sizes from untrusted metadata never turn into huge allocations or minutes of work: each attack
below gives a typed ``zarrbolt.errors`` error (or its correct answer) at once, with little memory.

Where Python allocates, the peak is measured with tracemalloc (numpy's arrays are traced too);
where C or a compression library allocates, the attack runs in a fresh process whose peak
resident memory (``VmHWM``, reset just before the attack) is measured, under an address-space
limit so that a regression fails instead of taking the machine's memory.  The time bounds are
loose guards against work that runs for minutes, not benchmarks."""

from __future__ import annotations

import json
import lzma
import os
import subprocess
import sys
import textwrap
import time
import tracemalloc

import numpy as np
import pytest

import zarrbolt
from zarrbolt.errors import ChunkMemoryError, CorruptChunkError, MetadataError, ZarrboltError
from zarrbolt.storage import LocalStore, MemoryStore

MIB = 1 << 20
MEMORY_BOUND = 100 * MIB
TIME_BOUND = 10.0  # seconds: the attacks took 7-37 s or minutes before, and take milliseconds now
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="measures VmHWM in /proc")
# under ASan / TSan (make asan-test, tsan-test) a fresh process carries the sanitizer's shadow
# memory and quarantine: no address-space limit there, and its resident memory is not measured
SANITIZED = bool(os.environ.get("ZARRBOLT_SANITIZER"))

LITTLE = {"name": "bytes", "configuration": {"endian": "little"}}


def _sharded_meta(shard: int, *, index_codecs=None, location="end") -> dict:
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1], "codecs": [LITTLE],
        "index_codecs": index_codecs if index_codecs is not None else [LITTLE, {"name": "crc32c"}],
        "index_location": location}}]
    return {"zarr_format": 3, "node_type": "array", "shape": [shard], "data_type": "uint8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [shard]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs}


def _put_json(store, path: str, doc: dict, name: str = "zarr.json") -> None:
    store.set(f"{path}/{name}", json.dumps(doc).encode())


class Bounded:
    """The error (or None), seconds and traced peak bytes of ``fn()`` (its result in ``.value``)."""

    def __init__(self, fn):
        tracemalloc.start()
        t0 = time.perf_counter()
        try:
            self.value, self.error = fn(), None
        except ZarrboltError as e:
            self.value, self.error = None, e
        finally:
            self.seconds = time.perf_counter() - t0
            self.peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()

    def check(self, error: type | None = None, match: str | None = None) -> Bounded:
        if error is None:
            assert self.error is None, repr(self.error)
        else:
            assert isinstance(self.error, error), repr(self.error)
            if match is not None:
                assert match in str(self.error), str(self.error)
        assert self.seconds < TIME_BOUND
        assert self.peak < MEMORY_BOUND, f"{self.peak / MIB:.0f} MiB traced"
        return self


_HARNESS = """
import json, resource, sys, time
def _status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
if not {sanitized}:  # a regression gets a MemoryError here, not the machine's memory
    resource.setrlimit(resource.RLIMIT_AS, (_status("VmSize") + (3 << 30), resource.getrlimit(resource.RLIMIT_AS)[1]))
import numpy as np
import zarrbolt
args = sys.argv[1:]
{setup}
rss = _status("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the peak (VmHWM) starts again from here
t0 = time.perf_counter()
try:
{attack}
    out = {{"error": None, "value": repr(value)}}
except Exception as e:
    out = {{"error": type(e).__name__, "typed": isinstance(e, zarrbolt.errors.ZarrboltError), "message": str(e)}}
out["seconds"] = time.perf_counter() - t0
out["growth"] = _status("VmHWM") - rss
print("RESULT " + json.dumps(out))
"""


def isolated(attack: str, *args: str, setup: str = "") -> dict:
    """Run ``attack`` (statements setting ``value``) in a fresh process: its error (type name,
    message, whether a zarrbolt error) or value, seconds, and growth of the peak resident memory."""
    code = _HARNESS.format(setup=textwrap.dedent(setup), attack=textwrap.indent(textwrap.dedent(attack), "    "),
                           sanitized=SANITIZED)
    env = {**os.environ, "ZARRBOLT_NUM_THREADS": "2"}  # (the address-space limit counts thread stacks)
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout + proc.stderr
    out: dict = json.loads(lines[-1][len("RESULT "):])
    assert out["seconds"] < TIME_BOUND, out
    assert SANITIZED or out["growth"] < MEMORY_BOUND, f"peak resident memory grew {out['growth'] / MIB:.0f} MiB: {out}"
    return out


# ---------------------------------------------------------------------------- shard indexes
SHARD_READ = 2 ** 29  # inner chunks [1]: an index of 8 GiB claimed by the metadata


@linux_only
@pytest.mark.parametrize("shard_file", ["absent", "small", "small-index-start", "small-no-crc"])
def test_a_shard_index_is_not_allocated_from_metadata_native_reads(tmp_path, shard_file):
    """Local shard files are read by C: a 1-element read allocated the 8 GiB index's room
    (4 GiB touched, 7-37 s) before learning the shard has 100 bytes, or is absent."""
    st = LocalStore(tmp_path)
    kw = {"location": "start"} if shard_file == "small-index-start" else \
        {"index_codecs": [LITTLE]} if shard_file == "small-no-crc" else {}
    _put_json(st, "g/attack", _sharded_meta(SHARD_READ, **kw))
    if shard_file != "absent":
        st.set("g/attack/c/0", b"x" * 100)
    out = isolated("value = zarrbolt.open_array(args[0], path='g/attack', mode='r')[5]", str(tmp_path))
    if shard_file == "absent":
        assert out["error"] is None and out["value"] == "np.uint8(0)"
    else:
        assert out["error"] == "CorruptChunkError" and out["typed"]
        assert "'g/attack/c/0'" in out["message"] and "smaller than its" in out["message"]


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("location", ["end", "start"])
def test_a_shard_index_is_not_allocated_from_metadata_store_reads(fused, location):
    st = MemoryStore()
    _put_json(st, "g/attack", _sharded_meta(SHARD_READ, location=location))
    a = zarrbolt.open_array(st, path="g/attack", mode="r")
    with zarrbolt.config.set(fused_pipeline=fused):
        assert Bounded(lambda: a[5]).check().value == 0  # no shard: the fill value
        assert Bounded(lambda: a[3:9]).check().value.tolist() == [0] * 6
        st.set("g/attack/c/0", b"x" * 100)
        Bounded(lambda: a[5]).check(CorruptChunkError, "'g/attack/c/0': 100 bytes is smaller than its")


@linux_only
@pytest.mark.parametrize("shard_file", ["absent", "small"])
def test_a_shard_index_is_not_allocated_from_metadata_remote_reads(moto_server, s3_bucket, shard_file):
    """An S3 shard: the index is one suffix request, which brings back at most the object."""
    from remote_helpers import s3_object_store

    st = s3_object_store(moto_server.endpoint, s3_bucket)
    _put_json(st, "g/attack", _sharded_meta(SHARD_READ))
    if shard_file == "small":
        st.set("g/attack/c/0", b"x" * 100)
    setup = """
        from zarrbolt.storage.urls import open_url
        store, _ = open_url(f"s3://{args[1]}", {"endpoint_url": args[0], "key": "testing", "secret": "testing",
                                                 "region": "us-east-1"})
        a = zarrbolt.open_array(store, path="g/attack", mode="r")
    """
    out = isolated("value = a[5]", moto_server.endpoint, s3_bucket, setup=setup)
    if shard_file == "absent":
        assert out["error"] is None and out["value"] == "np.uint8(0)"
    else:
        assert out["error"] == "CorruptChunkError" and "smaller than its" in out["message"]


SHARD_WRITE = 2 ** 28  # inner chunks [1]: a 4 GiB index to create


@pytest.mark.parametrize("store", ["local", "memory"])
def test_creating_a_shard_whose_index_exceeds_the_limit_is_refused(tmp_path, store):
    """A 1-element write into an absent shard of 2**28 inner chunks ran for minutes."""
    st = LocalStore(tmp_path) if store == "local" else MemoryStore()
    _put_json(st, "g/attack", _sharded_meta(SHARD_WRITE))
    a = zarrbolt.open_array(st, path="g/attack", mode="r+")
    limit = zarrbolt.config.get("shard_index_max_bytes")
    assert limit == 256 * MIB
    for sel in (5, slice(0, 3), slice(None)):
        def write(sel=sel):
            a[sel] = 1
        Bounded(write).check(ChunkMemoryError, "'g/attack/c/0'")
        assert "shard_index_max_bytes" in str(Bounded(write).error)
    assert list(st.list_prefix("g/attack/c")) == []


def test_the_shard_index_limit_is_a_setting():
    st = MemoryStore()
    a = zarrbolt.create_array(st, name="a", shape=(4096,), chunks=(1,), shards=(4096,), dtype="uint8", fill_value=0)
    index_bytes = 16 * 4096 + 4
    with zarrbolt.config.set(shard_index_max_bytes=index_bytes - 1):
        with pytest.raises(ChunkMemoryError, match=f"{index_bytes} bytes"):
            a[7] = 3  # a new shard
        with pytest.raises(ChunkMemoryError):
            a[:] = 3  # a whole shard
        assert a.nchunks_initialized == 0
    with zarrbolt.config.set(shard_index_max_bytes=index_bytes):
        a[7] = 3
    with zarrbolt.config.set(shard_index_max_bytes=1024):
        a[9] = 4  # an update of a stored shard: its index is bounded by the object itself
    assert a[5:10].tolist() == [0, 0, 3, 0, 4]
    with pytest.raises(MetadataError):
        zarrbolt.config.set(shard_index_max_bytes=0)


def test_a_write_lists_the_inner_chunks_it_touches_not_the_shards_grid():
    """What a write into part of a shard touches costs memory by the chunks touched, not by the
    shard's (the metadata's) number of inner chunks: here 2**40."""
    from zarrbolt.codecs.abc import ChunkSpec
    from zarrbolt.codecs.sharding import ShardingCodec
    from zarrbolt.metadata.dtypes import DataType

    codec = ShardingCodec([1, 1], codecs=[LITTLE])
    lay = codec.layout(ChunkSpec((2 ** 20, 2 ** 20), DataType("uint8"), 0))
    upd = Bounded(lambda: codec.plan_update(lay, (slice(10, 12), slice(20, 23)))).check().value
    assert upd.touched.tolist() == [10 * 2 ** 20 + c for c in (20, 21, 22)] + [11 * 2 ** 20 + c for c in (20, 21, 22)]
    assert upd.covered.all() and upd.origin == (10, 20) and upd.box_shape == (2, 3)
    assert Bounded(lambda: codec.touched_inner_chunks(lay, (5, slice(0, 0)))).check().value.tolist() == []


# ---------------------------------------------------------------------------- lzma
def _lzma_meta(conf: dict) -> dict:
    return {"zarr_format": 3, "node_type": "array", "shape": [100], "data_type": "uint8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [100]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": [{"name": "bytes"}, {"name": "numcodecs.lzma", "configuration": conf}]}


@linux_only
@pytest.mark.parametrize("fmt", [1, 3])
def test_an_lzma_dictionary_from_metadata_is_bounded_at_open(tmp_path, fmt):
    """A filter chain with a 1.5 GiB dict_size cost 2 GiB of memory at open."""
    conf = {"format": fmt, "filters": [{"id": lzma.FILTER_LZMA2, "dict_size": 1536 * MIB}]}
    _put_json(LocalStore(tmp_path), "g/attack", _lzma_meta(conf))
    out = isolated("value = zarrbolt.open_array(args[0], path='g/attack', mode='r')", str(tmp_path))
    assert out["error"] == "MetadataError" and "dict_size" in out["message"] and "g/attack" in out["message"]


@linux_only
def test_an_lzma_stream_asking_for_a_huge_dictionary_is_refused_when_decoded(tmp_path):
    """An lzma-alone chunk whose header asks for a 1.5 GiB dictionary: the decoder's memlimit."""
    st = LocalStore(tmp_path)
    _put_json(st, "g/attack", _lzma_meta({"format": 2, "preset": 1}))
    chunk = bytearray(lzma.compress(bytes(range(100)), format=lzma.FORMAT_ALONE, preset=1))
    chunk[1:5] = (1536 * MIB).to_bytes(4, "little")  # the header's dictionary size
    st.set("g/attack/c/0", bytes(chunk))
    out = isolated("value = zarrbolt.open_array(args[0], path='g/attack', mode='r')[:]", str(tmp_path))
    assert out["error"] == "CorruptChunkError" and out["typed"], out


def test_lzma_filters_with_an_xz_stream_are_read_but_not_created():
    """format 1 plus filters: numcodecs writes such chunks and cannot read them back (it hands
    the filters to the xz decoder); zarrbolt reads them, and refuses to create such an array."""
    filters = [{"id": lzma.FILTER_DELTA, "dist": 1}, {"id": lzma.FILTER_LZMA2, "preset": 1}]
    for make in (lambda st: zarrbolt.create_array(st, name="a", shape=(100,), chunks=(100,), dtype="uint8",
                                                  compressors=[{"id": "lzma", "format": 1, "filters": filters}]),
                 lambda st: zarrbolt.create_array(st, name="a", shape=(100,), chunks=(100,), dtype="uint8",
                                                  zarr_format=2, compressor={"id": "lzma", "format": 1,
                                                                             "filters": filters})):
        st = MemoryStore()
        with pytest.raises(MetadataError, match="filters are only written with format 3"):
            make(st)
        assert list(st.list()) == []
    st = MemoryStore()
    _put_json(st, "a", _lzma_meta({"format": 1, "filters": filters}))
    data = np.arange(100, dtype="uint8")
    st.set("a/c/0", lzma.compress(data.tobytes(), format=lzma.FORMAT_XZ, filters=filters))
    assert zarrbolt.open_array(st, path="a", mode="r")[:].tolist() == data.tolist()
    raw = zarrbolt.create_array(MemoryStore(), shape=(100,), chunks=(100,), dtype="uint8",
                                compressors=[{"id": "lzma", "format": 3, "filters": filters}])
    raw[:] = data
    assert raw[:].tolist() == data.tolist()


# ---------------------------------------------------------------------------- nesting, huge shapes, dtypes
def _nested(depth: int) -> dict:
    codec = LITTLE
    for _ in range(depth):
        codec = {"name": "sharding_indexed", "configuration": {"chunk_shape": [1], "codecs": [codec],
                                                              "index_codecs": [LITTLE], "index_location": "end"}}
    return codec


def test_codecs_nested_too_deep_are_a_metadata_error():
    """300 nested sharding_indexed codecs: RecursionError."""
    st = MemoryStore()
    meta = {**_sharded_meta(4), "codecs": [_nested(300)]}
    _put_json(st, "g/attack", meta)
    Bounded(lambda: zarrbolt.open_array(st, path="g/attack", mode="r")).check(MetadataError, "nested")
    from zarrbolt.codecs.registry import MAX_NESTING
    from zarrbolt.codecs.sharding import ShardingCodec

    codec = ShardingCodec([1])
    with pytest.raises(MetadataError, match="nested"):
        for _ in range(MAX_NESTING + 1):  # made as objects, one inside the other
            codec = ShardingCodec([1], codecs=[codec])
    ok = zarrbolt.create_array(MemoryStore(), shape=(4,), chunks=(4,), dtype="uint8", codecs=[_nested(3)])
    ok[:] = [1, 2, 3, 4]
    assert ok[:].tolist() == [1, 2, 3, 4]


def _huge(chunk: list[int]) -> dict:
    return {"zarr_format": 3, "node_type": "array", "shape": [2 ** 62, 2 ** 62], "data_type": "uint8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunk}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]}


@pytest.mark.parametrize("chunk", [[1, 1], [64, 64], [2 ** 31, 2 ** 31]])
@pytest.mark.parametrize("sel", ["all", "row", "strided"])
def test_reads_too_large_for_any_memory_are_a_typed_error_naming_the_array(chunk, sel):
    """``a[:]`` on a 2**62 x 2**62 array: ValueError "box_tasks: bad box"."""
    st = MemoryStore()
    _put_json(st, "g/attack", _huge(chunk))
    a = zarrbolt.open_array(st, path="g/attack", mode="r")
    selection = {"all": slice(None), "row": 0, "strided": (slice(None, None, 2 ** 40),)}[sel]
    Bounded(lambda: a[selection]).check(ChunkMemoryError, "array 'g/attack'")
    assert Bounded(lambda: a[:3, :2]).check().value.tolist() == [[0, 0]] * 3


def test_a_v2_structured_dtype_of_a_huge_field_is_a_metadata_error():
    """A v2 dtype ``[["a", "<u1", [2**31]]]``: numpy's ValueError."""
    st = MemoryStore()
    _put_json(st, "g/attack", {"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": [["a", "<u1", [2 ** 31]]],
                               "compressor": None, "filters": None, "fill_value": None, "order": "C"}, ".zarray")
    Bounded(lambda: zarrbolt.open_array(st, path="g/attack", mode="r")).check(MetadataError, "g/attack")
    _put_json(st, "g/attack", {"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": [["a", "<u1", [2 ** 40, 2 ** 40]]],
                               "compressor": None, "filters": None, "fill_value": None, "order": "C"}, ".zarray")
    Bounded(lambda: zarrbolt.open_array(st, path="g/attack", mode="r")).check(MetadataError, "structured")


def test_a_v2_array_of_huge_chunks_read_is_a_typed_error_naming_the_array():
    """Shape and chunks ``[2**31] * 3``, ``a[0]``: numpy's "array is too big"."""
    st = MemoryStore()
    _put_json(st, "g/attack", {"zarr_format": 2, "shape": [2 ** 31] * 3, "chunks": [2 ** 31] * 3, "dtype": "|u1",
                               "compressor": None, "filters": None, "fill_value": 0, "order": "C"}, ".zarray")
    a = zarrbolt.open_array(st, path="g/attack", mode="r")
    Bounded(lambda: a[0]).check(ChunkMemoryError, "array 'g/attack'")
    assert Bounded(lambda: a[0, 0, :3]).check().value.tolist() == [0, 0, 0]
