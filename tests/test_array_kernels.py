"""Array-kernel stages of the fused plans (zarrbolt.codecs.stages.ArrayKernelStage): a codec defined
here, with a per-codec numpy path and a C kernel (the test-only delta filter exported by
zarrbolt._ext._kernels), must read and write exactly what the per-codec path does: plain and
sharded, transposed, with cast_value / scale_offset, widening, two kernels in a row, from memory
and from local files."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.codecs import registry
from zarrbolt.codecs.abc import ArrayToArrayCodec, ChunkSpec
from zarrbolt.codecs.stages import ArrayKernelStage
from zarrbolt.storage import LocalStore, MemoryStore

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
GZIP = {"name": "gzip", "configuration": {"level": 1}}
CRC = {"name": "crc32c"}
BLOSC = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4,
                                           "blocksize": 256}}


class DeltaTestCodec(ArrayToArrayCodec):
    """TEST ONLY: x[i] - x[i-1] over the chunk in C order, in ``astype`` (signed integers)."""

    name = "test.delta"

    def __init__(self, astype: str | None = None):
        self.astype = astype

    @classmethod
    def from_json(cls, configuration: Any) -> DeltaTestCodec:
        return cls((configuration or {}).get("astype"))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": {"astype": self.astype} if self.astype else {}}

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        from zarrbolt.metadata.dtypes import DataType

        if self.astype is None:
            return spec
        dt = DataType.from_numpy(self.astype)
        return ChunkSpec(spec.shape, dt, np.asarray(spec.fill_value).astype(dt.numpy_dtype)[()])

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        x = np.ascontiguousarray(array).reshape(-1).astype(self.astype or array.dtype)
        out = x.copy()
        out[1:] = x[1:] - x[:-1]
        return out.reshape(array.shape)

    def decode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        a = np.ascontiguousarray(array)
        return np.cumsum(a.reshape(-1), dtype=a.dtype).astype(spec.dtype.numpy_dtype).reshape(a.shape)

    def c_stage(self, spec_in: ChunkSpec, spec_out: ChunkSpec) -> ArrayKernelStage:
        from zarrbolt._ext import _kernels

        din, dout = spec_in.dtype.numpy_dtype, spec_out.dtype.numpy_dtype
        return ArrayKernelStage(_kernels._TEST_DELTA_DECODE, _kernels._TEST_DELTA_ENCODE,
                                _kernels._test_delta_params(din.itemsize, dout.itemsize), din, dout)


@pytest.fixture(autouse=True)
def _registered(monkeypatch):
    registry._ensure_builtins()
    monkeypatch.setitem(registry._REGISTRY, DeltaTestCodec.name, DeltaTestCodec)


def delta(astype=None):
    return {"name": "test.delta", "configuration": {"astype": astype} if astype else {}}


def transpose(order):
    return {"name": "transpose", "configuration": {"order": list(order)}}


CHAINS = {
    # name: (array dtype, codecs)
    "delta": ("int32", [delta(), LE]),
    "delta-be-zstd-crc": ("int16", [delta(), BE, ZSTD, CRC]),
    "widen-blosc": ("int16", [delta("int32"), LE, BLOSC]),
    "transpose-delta-gzip": ("int32", [transpose((2, 0, 1)), delta(), LE, GZIP]),
    "two-kernels": ("int16", [delta("int32"), delta("int64"), BE]),
    "so-cast-delta": ("float32", [{"name": "scale_offset", "configuration": {"offset": 10, "scale": 4}},
                                  {"name": "cast_value", "configuration": {"data_type": "int16"}},
                                  transpose((1, 2, 0)), delta("int32"), LE, ZSTD]),
    "cast-delta-crc": ("float64", [{"name": "cast_value", "configuration": {"data_type": "int32"}}, delta(), LE, CRC]),
}

SELS = [(...,), (3, slice(2, 30), slice(None)), (slice(5, 6), 7, 8), (slice(None), slice(None), 0),
        (slice(1, 19), slice(4, 33), slice(3, 20)), (slice(0, 0),)]


def _data(dtype, shape=(20, 35, 22), quarters=True):
    rng = np.random.default_rng(3)
    if dtype.startswith("float"):  # exact through scale_offset (scale 4) and the casts
        return (rng.integers(-2000, 2000, shape) / (4 if quarters else 1) + 10).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def _codecs(name, sharded):
    codecs = CHAINS[name][1]
    if sharded:
        codecs = [{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 8, 11], "codecs": codecs,
                                                                 "index_codecs": [LE, CRC]}}]
    return codecs


@pytest.mark.parametrize("name", sorted(CHAINS))
@pytest.mark.parametrize("sharded", [False, True])
@pytest.mark.parametrize("where", ["memory", "local"])
@pytest.mark.parametrize("grouped", [True, False])
def test_kernel_chains_equal_the_per_codec_path(tmp_path, name, sharded, where, grouped, monkeypatch):
    import sys

    if not grouped:  # every chunk copied on its own (one scratch slot)
        monkeypatch.setattr(sys.modules["zarrbolt.pipeline.buffers"], "GROUP_SCRATCH_BYTES", 0)
    dtype = CHAINS[name][0]
    data = _data(dtype, quarters=name.startswith("so"))
    arrays, stored = [], []
    for fused in (True, False):
        store = MemoryStore() if where == "memory" else LocalStore(tmp_path / f"f{fused}")
        with zarr.config.set(fused_pipeline=fused):
            a = zarr.create_array(store, name="a", shape=data.shape, chunks=(8, 16, 22), dtype=dtype,
                                  codecs=_codecs(name, sharded), fill_value=0)
            a[2:, :30] = data[2:, :30]
            assert any(p is not None for p in a._eplans.values()) == (fused and (sharded or where == "local"))
            arrays.append((store, a))
        stored.append(sorted((k, bytes(store.get(k) or b"")) for k in _keys(store)))
    assert stored[0] == stored[1]  # the fused encode writes the per-codec path's bytes
    expect = np.zeros(data.shape, dtype)
    expect[2:, :30] = data[2:, :30]
    store = arrays[0][0]
    with zarr.config.set(fused_pipeline=True):
        fused = zarr.open_array(store, path="a")
    with zarr.config.set(fused_pipeline=False):
        slow = zarr.open_array(store, path="a")
    assert fused._plan is not None and slow._plan is None
    for sel in SELS:
        assert fused[sel].tobytes() == slow[sel].tobytes() == expect[sel].tobytes(), sel


def _keys(store):
    return [k for k in store.list() if not k.endswith("zarr.json")]


def test_kernels_before_a_permutation_take_the_per_codec_path():
    """Permutations and elementwise maps must come before the array kernels in chain order."""
    data = _data("int32", (8, 9)) // 4
    for codecs in ([delta(), transpose((1, 0)), LE],
                   [delta("int64"), {"name": "cast_value", "configuration": {"data_type": "int32"}}, LE]):
        a = zarr.create_array(MemoryStore(), shape=data.shape, chunks=(4, 9), dtype="int32", codecs=codecs)
        a[...] = data
        assert a._plan is None
        np.testing.assert_array_equal(a[...], data)


def test_plans_check_the_kernels_item_sizes():
    from zarrbolt._ext import _kernels, _plans

    k = (_kernels._TEST_DELTA_DECODE, _kernels._test_delta_params(2, 4), 2, 4)
    _plans.Plan([], 4, 0, [8], None, 64, kernels=[k])
    with pytest.raises(ValueError):
        _plans.Plan([], 2, 0, [8], None, 64, kernels=[k])  # stored elements are 4 bytes
    with pytest.raises(ValueError):
        _plans.Plan([], 4, 0, [8], None, 64, kernels=[k, k])  # 4-byte output into a 2-byte input
    with pytest.raises(ValueError):  # partial decodes never run through kernels
        from zarrbolt._ext import _zstd

        _plans.Plan([("transform", _zstd.DECODE_STEP, b"")], 4, 0, [8], None, 64,
                       ("prefix", _zstd.PREFIX_FN), kernels=[k])
    ke = (_kernels._TEST_DELTA_ENCODE, _kernels._test_delta_params(2, 4), 2, 4)
    _plans.EncodePlan([], 2, 4, [8], None, b"\0\0", False, 64, kernels=[ke])  # swaps the 4-byte output
    with pytest.raises(ValueError):
        _plans.EncodePlan([], 4, 0, [8], None, b"\0\0\0\0", False, 64, kernels=[ke])
    with pytest.raises(ValueError):
        _plans.EncodePlan([], 2, 0, [8], None, b"\0\0", False, 16, kernels=[ke])  # buffers too small


def test_kernel_errors_name_the_chunk():
    """A kernel's status reaches Python as the chunk's error (bad parameters: invalid)."""
    from zarrbolt._ext import _kernels, _plans

    bad = (_kernels._TEST_DELTA_DECODE, _kernels._test_delta_params(4, 3), 4, 4)
    plan = _plans.Plan([], 4, 0, [4], None, 64, kernels=[bad])
    out = np.zeros(4, "int32")
    with pytest.raises(ValueError) as e:
        plan.decode([bytes(16)], np.zeros((1, 1), np.int64), np.full((1, 1), 4, np.int64), np.zeros(1, np.int64), out)
    assert e.value.task_index == 0
