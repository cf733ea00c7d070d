"""Where a shard's inner chunks are laid out (ShardingCodec.write_order, a runtime setting), which
inner chunks a write stores (only those it touches), and CodecRangeError."""

from __future__ import annotations

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.codecs.abc import ChunkSpec
from zarrbolt.codecs.sharding import EMPTY, ShardingCodec, storage_order
from zarrbolt.errors import CodecError, CodecRangeError, MetadataError
from zarrbolt.kernels import scale_offset_decode, scale_offset_encode
from zarrbolt.metadata.dtypes import DataType
from zarrbolt.storage import MemoryStore

LE = {"name": "bytes", "configuration": {"endian": "little"}}


def _layout_order(raw: bytes, n: int) -> list[int]:
    idx = np.frombuffer(raw[-(16 * n + 4):-4], dtype="<u8").reshape(n, 2)
    present = [i for i in range(n) if idx[i, 0] != EMPTY]
    return sorted(present, key=lambda i: int(idx[i, 0]))


@pytest.mark.parametrize("order,expect", [
    ("lexicographic", [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]),
    ("colexicographic", [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]),
    # Z order: bit 0 of axis 0, bit 0 of axis 1, then bit 1 of axis 0 (axis 1 has no more)
    ("morton", [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (2, 1)]),
])
def test_write_order_lays_inner_chunks_out(order, expect):
    codec = ShardingCodec((4, 4), [LE], write_order=order)
    spec = ChunkSpec((12, 8), DataType("uint16"), np.uint16(0))
    data = np.arange(96, dtype="uint16").reshape(12, 8) + 1
    raw = codec.encode(data, spec)
    got = [tuple(int(c) for c in np.unravel_index(i, (3, 2))) for i in _layout_order(raw, 6)]
    assert got == expect
    np.testing.assert_array_equal(codec.decode(raw, spec), data)
    # not part of the metadata
    assert codec.to_json() == ShardingCodec((4, 4), [LE]).to_json()
    assert "write_order" not in str(codec.to_json())


def test_write_order_partial_update_and_validation():
    codec = ShardingCodec((2, 2), [LE], write_order="morton")
    spec = ChunkSpec((8, 8), DataType("int32"), np.int32(0))
    data = np.arange(64, dtype="int32").reshape(8, 8) + 1
    raw = codec.encode(data, spec)
    data[2:4, 4:6] = -7
    upd = codec.update_shard(raw, spec, (slice(2, 4), slice(4, 6)), -7, "k", spec.is_fill)
    assert _layout_order(upd, 16) == _layout_order(raw, 16) == list(storage_order((4, 4), "morton"))
    np.testing.assert_array_equal(codec.decode(upd, spec), data)
    with pytest.raises(MetadataError):
        ShardingCodec((2, 2), [LE], write_order="spiral")
    assert storage_order((5,), "morton") is not None and sorted(storage_order((3, 5, 2), "morton")) == list(range(30))


@pytest.mark.parametrize("write_empty", [True, False])
def test_writes_store_only_the_inner_chunks_they_touch(write_empty):
    st = MemoryStore()
    with zarr.config.set(write_empty_chunks=write_empty):
        a = zarr.create_array(st, shape=(10,), dtype="uint16", chunks=(2,), shards=(8,), fill_value=0)
        a[:] = 0
        b = zarr.create_array(MemoryStore(), shape=(16,), dtype="uint16", chunks=(2,), shards=(8,), fill_value=0)
        b[0:2] = 0
        b[9:10] = 3
    if write_empty:
        # the edge shard holds one inner chunk inside the array; none beyond the edge is stored
        assert _layout_order(bytes(st.get("c/0")), 4) == [0, 1, 2, 3]
        assert _layout_order(bytes(st.get("c/1")), 4) == [0]
        assert _layout_order(bytes(b.store.get("c/0")), 4) == [0]
    else:
        assert st.get("c/0") is None and st.get("c/1") is None
        assert b.store.get("c/0") is None
    assert _layout_order(bytes(b.store.get("c/1")), 4) == [0]
    np.testing.assert_array_equal(b[:], [0] * 9 + [3] + [0] * 6)


def test_codec_range_error_is_a_value_error_with_detail():
    assert issubclass(CodecRangeError, CodecError) and issubclass(CodecRangeError, ValueError)
    with pytest.raises(CodecRangeError, match="outside the range of dtype int8"):
        scale_offset_encode(np.array([0, 1, 2], dtype="int8"), 0, 100)
    with pytest.raises(CodecRangeError, match="outside the range of dtype uint8"):
        scale_offset_encode(np.array([10, 5], dtype="uint8"), 10, 1)
    with pytest.raises(CodecRangeError, match="non-zero remainder"):
        scale_offset_decode(np.array([2, 3], dtype="int8"), 0, 2)


def test_fused_read_range_error_names_the_value():
    so = {"name": "scale_offset", "configuration": {"offset": 100, "scale": 1}}
    st = MemoryStore()
    a = zarr.create_array(st, shape=(3,), dtype="int8", chunks=(3,), codecs=[so, {"name": "bytes"}], fill_value=0)
    st.set("c/0", np.array([0, 50, 100], dtype="int8").tobytes())
    with pytest.raises(CodecRangeError, match="outside the range of dtype int8"):
        a[:]
    b = zarr.create_array(MemoryStore(), shape=(3,), dtype="int8", chunks=(3,),
                          codecs=[{"name": "scale_offset", "configuration": {"offset": 0, "scale": 2}},
                                  {"name": "bytes"}], fill_value=0)
    b.store.set("c/0", np.array([2, 3, 4], dtype="int8").tobytes())
    with pytest.raises(ValueError, match="non-zero remainder"):
        b[:]


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_sharded_fused_read_range_error_names_the_value(kind, tmp_path):
    from zarrbolt.storage import LocalStore

    so = {"name": "scale_offset", "configuration": {"offset": 100, "scale": 1}}
    st = MemoryStore() if kind == "memory" else LocalStore(str(tmp_path))
    a = zarr.create_array(st, shape=(8,), dtype="int8", chunks=(8,), fill_value=0, codecs=[{
        "name": "sharding_indexed", "configuration": {"chunk_shape": [4], "codecs": [so, {"name": "bytes"}],
                                              "index_codecs": [LE, {"name": "crc32c"}]}}])
    a[:] = np.arange(1, 9, dtype="int8")
    raw = bytearray(bytes(st.get("c/0")))
    raw[4:8] = np.array([0, 50, 100, 1], dtype="int8").tobytes()  # inner chunk 1 (its index is unchanged)
    st.set("c/0", bytes(raw))
    with pytest.raises(CodecRangeError, match="outside the range of dtype int8") as info:
        a[:]
    assert "c/0" in str(info.value)


@pytest.mark.parametrize("sel", [
    (slice(1, 7), slice(3, 12), slice(0, 16)),
    (5, slice(None), slice(2, 3)),
    (slice(0, 4), slice(4, 8), slice(8, 12)),  # one whole inner chunk (covered: not decoded)
    (slice(None), slice(None), slice(None)),
])
def test_merge_stacked_matches_merge_update(sel):
    # the touched inner chunks merged one after another hold what the box holds at their places
    codec = ShardingCodec((4, 4, 4), [LE])
    spec = ChunkSpec((8, 12, 16), DataType("int32"), np.int32(-1))
    lay = codec.layout(spec)
    data = np.arange(8 * 12 * 16, dtype="int32").reshape(8, 12, 16)
    mv, offs, nb = codec.split_shard(codec.encode(data, spec), lay)
    upd = codec.plan_update(lay, tuple(s for s in sel))
    existing = [None if i == upd.touched[0] else mv[int(offs[i]): int(offs[i]) + int(nb[i])]
                for i in upd.touched[~upd.covered].tolist()]  # the first one empty: the fill value
    value = -np.arange(data[sel].size, dtype="int32").reshape(data[sel].shape)
    box = codec.merge_update(spec, upd, value, existing)
    stack = codec.merge_stacked(spec, upd, value, existing)
    assert stack is not None and stack.shape == (len(upd.touched) * 4, 4, 4)
    for k, i in enumerate(upd.touched.tolist()):
        reg = tuple(slice(r.start - o, r.stop - o) for r, o in zip(codec.inner_region(lay, i), upd.origin))
        np.testing.assert_array_equal(stack[4 * k: 4 * k + 4], box[reg])
    a = codec.encode_inner(box, spec, upd.touched, origin=upd.origin)
    b = codec.encode_inner(stack, spec, upd.touched, stacked=True)
    assert {i: bytes(v) for i, v in a.items()} == {i: bytes(v) for i, v in b.items()}


def test_merge_stacked_leaves_other_selections_to_merge_update():
    codec = ShardingCodec((4, 4), [LE])
    spec = ChunkSpec((8, 8), DataType("int32"), np.int32(0))
    lay = codec.layout(spec)
    for sel in [(slice(0, 8, 2), slice(None)), (np.array([1, 5]), slice(None))]:
        upd = codec.plan_update(lay, sel)
        assert codec.merge_stacked(spec, upd, 1, [None] * int((~upd.covered).sum())) is None
    upd = codec.plan_update(lay, (slice(0, 2), slice(0, 3)))  # a value that does not broadcast
    assert codec.merge_stacked(spec, upd, np.zeros((3, 3), "int32"), [None]) is None
