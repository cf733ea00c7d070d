"""zarr-python's semantics through zarrbolt's pipeline: shards byte-identical to zarr-python's for
every ``subchunk_write_order``, which inner chunks a write stores (edge shards included), and the
ValueErrors zarr-python users expect from ``scale_offset`` / ``cast_value`` range errors."""

from __future__ import annotations

import pytest

zarr = pytest.importorskip("zarr")

import numpy as np  # noqa: E402
from zarr.codecs import BytesCodec, ShardingCodec  # noqa: E402

import zarrbolt.codec_pipeline  # noqa: E402,F401
from zarrbolt.errors import CodecRangeError  # noqa: E402

OURS = "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"
THEIRS = "zarr.core.codec_pipeline.BatchedCodecPipeline"


def _chunks(store) -> dict[str, bytes]:
    return {k: v.to_bytes() for k, v in store._store_dict.items() if k.startswith("c/")}


def _sharded(store, shape, chunks, inner, order="morton", config=None, nested=False):
    codecs = [BytesCodec()]
    if nested:
        codecs = [ShardingCodec(chunk_shape=tuple(max(1, c // 2) for c in inner), codecs=[BytesCodec()],
                                subchunk_write_order=order)]
    return zarr.create_array(store, shape=shape, dtype="uint16", chunks=chunks, compressors=None, filters=None,
                             serializer=ShardingCodec(chunk_shape=inner, codecs=codecs, subchunk_write_order=order),
                             fill_value=0, config=config)


def _both(fn) -> tuple[dict, dict]:
    out = []
    for path in (OURS, THEIRS):
        with zarr.config.set({"codec_pipeline.path": path}):
            st = zarr.storage.MemoryStore()
            fn(st)
            out.append(_chunks(st))
    return out[0], out[1]


@pytest.mark.parametrize("order", ["morton", "lexicographic", "colexicographic", "unordered"])
@pytest.mark.parametrize("nested", [False, True])
def test_shards_byte_identical_for_every_subchunk_write_order(order, nested):
    data = (np.arange(40 * 27, dtype="uint16").reshape(40, 27) % 251) + 1

    def write(st):
        a = _sharded(st, (40, 27), (24, 18), (4, 6), order, nested=nested)
        if zarr.config.get("codec_pipeline.path") == OURS:  # zarrbolt serves it (no fallback)
            pipe = a._async_array.codec_pipeline
            assert type(pipe).__name__ == "ZarrboltCodecPipeline" and pipe.fallback_reason is None
        a[:] = data
        a[3:9, 5:7] = 7  # partial update of a shard
        a[30:, 20:] = 0
        expect = data.copy()
        expect[3:9, 5:7] = 7
        expect[30:, 20:] = 0
        np.testing.assert_array_equal(a[:], expect)

    ours, theirs = _both(write)
    assert ours.keys() == theirs.keys()
    for k in ours:
        assert ours[k] == theirs[k], f"shard {k} differs for subchunk_write_order={order}"


def test_morton_layout_differs_from_lexicographic():
    data = np.arange(24 * 24, dtype="uint16").reshape(24, 24) + 1
    got = {}
    for order in ("morton", "lexicographic"):
        with zarr.config.set({"codec_pipeline.path": OURS}):
            st = zarr.storage.MemoryStore()
            _sharded(st, (24, 24), (24, 24), (4, 4), order)[:] = data
            got[order] = _chunks(st)["c/0/0"]
    assert got["morton"] != got["lexicographic"]


@pytest.mark.parametrize("value", [0, 5])
@pytest.mark.parametrize("sel", [slice(None), slice(8, 9), slice(8, 10), slice(0, 2)])
@pytest.mark.parametrize("write_empty", [True, False])
def test_edge_and_new_shards_store_what_zarr_stores(value, sel, write_empty):
    def write(st):
        a = _sharded(st, (10,), (8,), (2,), config={"write_empty_chunks": write_empty})
        a[sel] = value
        later = zarr.open_array(st, config={"write_empty_chunks": not write_empty})
        later[8:9] = value + 1

    ours, theirs = _both(write)
    assert ours == theirs


def test_edge_shard_written_with_empty_chunks_then_without():
    def write(st):
        a = _sharded(st, (10, 7), (8, 4), (2, 2), config={"write_empty_chunks": True})
        a[:] = 0
        b = zarr.open_array(st, config={"write_empty_chunks": False})
        b[8:10, 4:7] = 3
        b[0:2, 0:2] = 0

    ours, theirs = _both(write)
    assert ours == theirs


def _scale_offset_array(dtype, offset, scale, fill):
    from zarr.codecs import ScaleOffset

    return zarr.create_array(store={}, shape=(3,), dtype=dtype, chunks=(3,), filters=[ScaleOffset(offset=offset,
                             scale=scale)], compressors=None, fill_value=fill)


@pytest.mark.parametrize("dtype,offset,scale,fill,values", [
    ("int8", 0, 100, 0, [0, 1, 2]),
    ("uint8", 10, 1, 10, [10, 5, 20]),
    ("uint64", 100, 1, 100, [100, 50, 200]),
])
def test_scale_offset_encode_range_errors_are_value_errors(dtype, offset, scale, fill, values):
    with zarr.config.set({"codec_pipeline.path": OURS}):
        a = _scale_offset_array(dtype, offset, scale, fill)
        with pytest.raises(ValueError, match=f"outside the range of dtype {dtype}") as info:
            a[:] = np.array(values, dtype=dtype)
    assert isinstance(info.value, CodecRangeError)


@pytest.mark.parametrize("offset,scale,stored,match", [
    (0, 2, [2, 3, 4], "non-zero remainder"),
    (100, 1, [0, 50, 100], "outside the range of dtype int8"),
])
def test_scale_offset_decode_range_errors_are_value_errors(offset, scale, stored, match):
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.sync import sync

    with zarr.config.set({"codec_pipeline.path": OURS}):
        a = _scale_offset_array("int8", offset, scale, 0)
        buf = default_buffer_prototype().buffer.from_bytes(np.array(stored, dtype="int8").tobytes())
        sync(a.store_path.store.set("c/0", buf))
        with pytest.raises(ValueError, match=match) as info:
            a[:]
    assert isinstance(info.value, CodecRangeError)


@pytest.mark.parametrize("dtype,values,match", [
    ("float32", [1, 300, 2], r"outside the range of dtype uint8 \[0, 255\]"),
    ("float32", [1, np.nan, 2], "NaN"),
    ("int32", [1, 300, 2], "outside the range of dtype uint8"),
])
def test_cast_value_range_errors_are_value_errors(dtype, values, match):
    from zarr.codecs import CastValue

    with zarr.config.set({"codec_pipeline.path": OURS}):
        a = zarr.create_array(store={}, shape=(3,), dtype=dtype, chunks=(3,), filters=[CastValue(data_type="uint8")],
                              compressors=None, fill_value=0)
        with pytest.raises(ValueError, match=match) as info:
            a[:] = np.array(values, dtype=dtype)
    assert isinstance(info.value, CodecRangeError)
