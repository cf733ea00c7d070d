"""Array API: create/open, numpy-style reads and writes, fill chunks, resize, codecs, errors."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.errors import (
    ArrayNotFoundError,
    BoundsCheckError,
    ChecksumError,
    ContainsArrayError,
    CorruptChunkError,
    InvalidKeyError,
    MetadataError,
    ReadOnlyError,
    UnknownCodecError,
)
from zarrbolt.storage import LocalStore, MemoryStore

CODEC_CHAINS = {
    "bytes": [{"name": "bytes", "configuration": {"endian": "little"}}],
    "bytes-big": [{"name": "bytes", "configuration": {"endian": "big"}}],
    "zstd": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 3, "checksum": True}}],
    "gzip": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}],
    "blosc": [{"name": "bytes", "configuration": {"endian": "little"}},
              {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}],
    "transpose-crc": [{"name": "transpose", "configuration": {"order": [2, 0, 1]}},
                      {"name": "bytes", "configuration": {"endian": "big"}}, {"name": "crc32c"}],
}


@pytest.fixture(params=["memory", "local"])
def store(request, tmp_path):
    return MemoryStore() if request.param == "memory" else LocalStore(tmp_path / "data.zarr")


def volume(shape=(20, 30, 40), dtype="uint16"):
    return (np.arange(np.prod(shape)) % 4099).astype(dtype).reshape(shape)


@pytest.mark.parametrize("chain", sorted(CODEC_CHAINS))
def test_roundtrip_codecs(store, chain):
    data = volume()
    a = zarr.create_array(store, shape=data.shape, dtype=data.dtype, chunks=(8, 16, 16), codecs=CODEC_CHAINS[chain])
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    b = zarr.open_array(store, mode="r")
    np.testing.assert_array_equal(b[3:17, ::3, -5:], data[3:17, ::3, -5:])
    assert b.metadata.codecs == a.metadata.codecs


SELECTIONS = [
    (), (Ellipsis,), (0,), (-1,), (slice(None, None, -1),), (slice(3, 15, 4), Ellipsis, slice(None, None, -3)),
    (5, 7, 9), (-3, slice(1, -1), 4), (np.newaxis, 2), (Ellipsis, np.newaxis), (slice(18, 2, -5), slice(None), 0),
    (slice(100, 200),), (np.int64(4), np.int32(2)),
]


@pytest.mark.parametrize("sel", SELECTIONS, ids=repr)
def test_basic_selection_read_write(store, sel):
    data = volume(dtype="float32")
    a = zarr.create_array(store, shape=data.shape, dtype="float32", chunks=(7, 8, 9), fill_value=-1.0)
    a[...] = data
    np.testing.assert_array_equal(a[sel], data[sel])
    ref = data.copy()
    val = np.full(ref[sel].shape, 5.5, dtype="float32") if ref[sel].size else 5.5
    ref[sel] = val
    a[sel] = val
    np.testing.assert_array_equal(a[...], ref)


def test_bounds_and_bad_selections():
    a = zarr.zeros((4, 5), chunks=(2, 2), dtype="i4")
    with pytest.raises(BoundsCheckError):
        a[4]
    with pytest.raises(BoundsCheckError):
        a[0, -6]
    with pytest.raises(IndexError):
        a[0, 0, 0]
    assert a[[0, 1]].shape == (2, 5)  # an integer list selects rows (numpy, zarr-python: oindex)
    with pytest.raises(IndexError):
        a[[0, 1], ...]  # mixed with Ellipsis: not an index zarr-python accepts either
    with pytest.raises((IndexError, TypeError)):
        a[1.5]
    with pytest.raises(ValueError):
        a[0:2, 0:2] = np.ones((3, 3))


def test_oindex_vindex(store):
    data = volume((12, 13), "int32")
    a = zarr.create_array(store, shape=data.shape, dtype="int32", chunks=(5, 4))
    a[...] = data
    idx0 = np.array([11, 0, 3, 3])
    mask1 = np.arange(13) % 3 == 0
    np.testing.assert_array_equal(a.oindex[idx0, mask1], data[np.ix_(idx0, mask1)])
    np.testing.assert_array_equal(a.oindex[2, [0, 12]], data[2, [0, 12]])
    pts = (np.array([0, 11, 5, 5]), np.array([12, 0, 4, 4]))
    np.testing.assert_array_equal(a.vindex[pts], data[pts])
    m = data % 7 == 0
    np.testing.assert_array_equal(a.vindex[m], data[m])
    ref = data.copy()
    ref[np.ix_([1, 7], [2, 3, 9])] = -1
    a.oindex[[1, 7], [2, 3, 9]] = -1
    np.testing.assert_array_equal(a[...], ref)
    ref[(np.array([0, 4]), np.array([1, 11]))] = -2
    a.vindex[np.array([0, 4]), np.array([1, 11])] = -2
    np.testing.assert_array_equal(a[...], ref)


def test_missing_chunks_read_fill_and_fill_chunks_are_erased(tmp_path):
    st = LocalStore(tmp_path)
    a = zarr.create_array(st, shape=(10, 10), chunks=(5, 5), dtype="uint8", fill_value=7)
    np.testing.assert_array_equal(a[...], np.full((10, 10), 7, np.uint8))
    a[0:5, 0:5] = 1
    assert sorted(st.list_prefix("c")) == ["c/0/0"]
    a[0:5, 0:5] = 7  # back to the fill value: the chunk is deleted
    assert list(st.list_prefix("c")) == []
    with zarr.config.set({"write_empty_chunks": True}):
        a[5:, 5:] = 7
    assert list(st.list_prefix("c")) == ["c/1/1"]


def test_nan_fill_is_bit_exact():
    nan = np.array([0x7FC0BEEF], np.uint32).view(np.float32)[0]
    a = zarr.create_array(MemoryStore(), shape=(6,), chunks=(4,), dtype="float32", fill_value=nan)
    assert json.loads(a.store.get("zarr.json"))["fill_value"] == "0x7fc0beef"
    assert a[...].view(np.uint32).tolist() == [0x7FC0BEEF] * 6
    a[0] = 1.0
    a.resize((9,))
    assert a[...].view(np.uint32).tolist()[1:] == [0x7FC0BEEF] * 8
    b = zarr.open_array(a.store)
    assert np.asarray(b.fill_value).view(np.uint32) == 0x7FC0BEEF


def test_resize_resets_trimmed_region(store):
    a = zarr.create_array(store, shape=(10, 10), chunks=(4, 4), dtype="int16", fill_value=-1)
    a[...] = np.arange(100, dtype="int16").reshape(10, 10)
    a.resize(5, 6)
    assert a.shape == (5, 6)
    a.resize((10, 10))
    got = a[...]
    np.testing.assert_array_equal(got[:5, :6], np.arange(100).reshape(10, 10)[:5, :6])
    assert (got[5:, :] == -1).all() and (got[:, 6:] == -1).all()
    assert a.append(np.zeros((2, 10), "int16")) == (12, 10)
    np.testing.assert_array_equal(a[10:], 0)


def test_zero_dim_and_zero_length(store):
    a = zarr.create_array(store, name="scalar", shape=(), dtype="float64", fill_value=2.5)
    assert a[()] == 2.5
    a[()] = 4.0
    assert a[...] == 4.0
    assert "scalar/c" in set(store.list())
    z = zarr.create_array(store, name="empty", shape=(0, 5), dtype="int8", chunks=(1, 5))
    assert z[...].shape == (0, 5)
    z[...] = np.zeros((0, 5), "int8")
    v2 = zarr.create_array(store, name="v2", shape=(), dtype="uint8", chunk_key_encoding={"name": "v2"})
    v2[()] = 3
    assert "v2/0" in set(store.list())


def test_raw_and_complex_and_bool_dtypes(store):
    r = zarr.create_array(store, name="raw", shape=(5,), dtype="V3", chunks=(2,), fill_value=b"\x01\x02\x03")
    assert r.metadata.data_type.to_json() == {"name": "raw_bytes", "configuration": {"length_bytes": 3}}
    assert r[...].tobytes() == b"\x01\x02\x03" * 5
    vals = np.frombuffer(bytes(range(15)), dtype="V3")
    r[...] = vals
    assert r[...].tobytes() == bytes(range(15))
    c = zarr.create_array(store, name="cplx", shape=(7,), dtype="complex128", chunks=(3,), fill_value=[1, "NaN"])
    got = c[...]
    assert (got.real == 1).all() and np.isnan(got.imag).all()
    b = zarr.create_array(store, name="bool", shape=(9,), dtype=bool, chunks=(4,))
    b[::2] = True
    np.testing.assert_array_equal(b[...], np.arange(9) % 2 == 0)


def test_properties_and_attrs(store):
    a = zarr.create_array(store, name="g/a", shape=(100, 50), chunks=(30, 50), dtype="f8",
                          dimension_names=["y", "x"], attributes={"unit": "nm"})
    assert (a.shape, a.dtype, a.ndim, a.chunks, a.nchunks, a.fill_value) == ((100, 50), np.dtype("f8"), 2, (30, 50), 4, 0.0)
    assert a.attrs["unit"] == "nm"
    a.attrs["scale"] = [1, 2]
    b = zarr.open_array(store, path="g/a")
    assert b.attrs.asdict() == {"unit": "nm", "scale": [1, 2]}
    assert b.metadata.dimension_names == ("y", "x")
    assert "Chunk shape" in repr(b.info) and b.path == "g/a" and b.name == "/g/a"
    assert isinstance(zarr.open_group(store, mode="r")["g"], zarr.Group)


def test_modes(tmp_path):
    p = str(tmp_path / "m.zarr")
    with pytest.raises((ArrayNotFoundError, FileNotFoundError, KeyError)):
        zarr.open_array(p, mode="r")
    a = zarr.open_array(p, mode="w", shape=(4,), chunks=(2,), dtype="i2")
    a[...] = 3
    with pytest.raises(ContainsArrayError):
        zarr.open_array(p, mode="w-", shape=(4,), dtype="i2")
    r = zarr.open_array(p, mode="r")
    with pytest.raises(ReadOnlyError):
        r[0] = 1
    with pytest.raises(ReadOnlyError):
        r.attrs["x"] = 1
    rw = zarr.open_array(p, mode="r+")
    rw[0] = 9
    assert zarr.open(p)[0] == 9
    w = zarr.open_array(p, mode="w", shape=(2,), dtype="u1")
    assert w.shape == (2,) and (w[...] == 0).all()
    with pytest.raises(MetadataError):
        zarr.open_array(p, mode="x")


def test_file_uri(tmp_path):
    uri = (tmp_path / "u.zarr").as_uri()
    a = zarr.create_array(uri, shape=(3,), dtype="u1")
    a[...] = [1, 2, 3]
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "u.zarr"))[...], [1, 2, 3])


# ---------------------------------------------------------------------------- corrupt data
def _chunk_path(root, key):
    return os.path.join(root, *key.split("/"))


def test_truncated_and_corrupt_chunks(tmp_path):
    for name, chain in [("zstd", CODEC_CHAINS["zstd"]), ("gzip", CODEC_CHAINS["gzip"]),
                        ("blosc", CODEC_CHAINS["blosc"]), ("bytes", CODEC_CHAINS["bytes"])]:
        root = tmp_path / name
        a = zarr.create_array(str(root), shape=(64,), chunks=(64,), dtype="u2", codecs=chain)
        a[...] = np.arange(64)
        path = _chunk_path(root, "c/0")
        raw = open(path, "rb").read()
        bads = [raw[: len(raw) // 2], raw[:3], b"", raw + b"xx"]
        if name != "bytes":  # all-zero bytes are valid raw data
            bads.append(bytes(len(raw)))
        for bad in bads:
            with open(path, "wb") as f:
                f.write(bad)
            with pytest.raises(CorruptChunkError):
                a[...]


def test_checksum_mismatch(tmp_path):
    a = zarr.create_array(str(tmp_path / "c"), shape=(10, 10, 10), chunks=(10, 10, 10), dtype="u2",
                          codecs=CODEC_CHAINS["transpose-crc"])
    a[...] = 1
    path = _chunk_path(tmp_path / "c", "c/0/0/0")
    raw = bytearray(open(path, "rb").read())
    raw[10] ^= 0xFF
    open(path, "wb").write(bytes(raw))
    with pytest.raises(ChecksumError):
        a[...]


def test_metadata_errors_on_open(tmp_path):
    root = tmp_path / "bad"
    a = zarr.create_array(str(root), shape=(3,), dtype="u1")
    meta_path = root / "zarr.json"
    good = json.loads(meta_path.read_text())
    for bad, exc in [
        ("{not json", MetadataError),
        (json.dumps({**good, "codecs": [{"name": "nope"}]}), UnknownCodecError),
        (json.dumps({**good, "fill_value": 300}), MetadataError),
        (json.dumps({**good, "codecs": [{"name": "zstd", "configuration": {"level": 1}}, {"name": "bytes"}]}), MetadataError),
        (json.dumps({**good, "shape": "3"}), MetadataError),
    ]:
        meta_path.write_text(bad)
        with pytest.raises(exc):
            zarr.open_array(str(root))
    del a


def test_bad_keys_rejected(tmp_path):
    st = LocalStore(tmp_path)
    for key in ("../escape", "/abs", "a\\b", "a/../../b", "a//b", "C:/x"):
        with pytest.raises(InvalidKeyError):
            st.set(key, b"x")
    with pytest.raises((InvalidKeyError, MetadataError)):
        zarr.create_array(st, name="../evil", shape=(1,), dtype="u1")


def test_create_array_validation():
    with pytest.raises(MetadataError):
        zarr.create_array(MemoryStore(), shape=(3,), dtype="u1", fill_value=256)
    with pytest.raises(MetadataError):
        zarr.create_array(MemoryStore(), shape=(3,), dtype="u2", chunks=(0,))
    with pytest.raises(MetadataError):
        zarr.create_array(MemoryStore(), shape=(3, 3), dtype="u2", chunks=(1,))
    with pytest.raises(MetadataError):
        zarr.create_array(MemoryStore(), shape=(3,), dtype="u2", serializer=[{"name": "bytes"}])
    with pytest.raises(UnknownCodecError):
        zarr.create_array(MemoryStore(), shape=(3,), dtype="u2", compressors=[{"name": "lzma"}])
    b = zarr.create_array(MemoryStore(), shape=(3,), dtype="f4",
                          compressors=[{"name": "blosc", "configuration": {"cname": "zstd", "clevel": 1, "shuffle": "bitshuffle"}}])
    assert b.metadata.codecs[1].to_json()["configuration"]["typesize"] == 4


def test_threads_write_and_read_disjoint_chunks(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    a = zarr.create_array(str(tmp_path / "t"), shape=(64, 64), chunks=(8, 64), dtype="u2")
    data = volume((64, 64))

    def w(i):
        a[i * 8:(i + 1) * 8] = data[i * 8:(i + 1) * 8]

    with ThreadPoolExecutor(4) as ex:
        list(ex.map(w, range(8)))
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "t"))[...], data)


def test_get_basic_selection_reads_into_out_without_a_copy(tmp_path):
    a = zarr.create_array(str(tmp_path / "o.zarr"), shape=(20, 30), chunks=(7, 8), dtype="int16")
    data = np.arange(600, dtype="int16").reshape(20, 30)
    a[...] = data
    big = np.zeros((40, 40), dtype="int16")
    view = big[3:15, 5:26]          # a strided view: read straight into it
    got = a.get_basic_selection((slice(2, 14), slice(4, 25)), out=view)
    assert got is view
    np.testing.assert_array_equal(big[3:15, 5:26], data[2:14, 4:25])
    assert not big[:3].any() and not big[15:].any()
    with pytest.raises(ValueError):
        a.get_basic_selection((slice(0, 5), slice(0, 5)), out=np.zeros((4, 4), "int16"))
