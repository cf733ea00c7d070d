"""Writes gather each row of complete chunks out of the value in one pass (pipeline.write.WriteRows)."""

from __future__ import annotations

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt import kernels
from zarrbolt.storage import MemoryStore

BLOSC = [{"name": "bytes", "configuration": {"endian": "little"}},
         {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2,
                                             "blocksize": 0}}]


def _values(shape):
    base = (np.arange(np.prod(shape)) % 60000).astype("uint16").reshape(shape)
    yield "c-order", base
    yield "fortran", np.asfortranarray(base)
    big = (np.arange(np.prod(shape) * 4) % 50000).astype("uint16").reshape(shape[0] * 2, shape[1], shape[2] * 2)
    yield "strided view", big[::2, :, ::2]
    yield "reversed", base[::-1, :, ::-1].copy()[::-1, :, ::-1]
    yield "negative strides", base[::-1]


@pytest.mark.parametrize("max_bytes", [0, 3 * 8 * 6 * 10 * 2, 16 << 20])
@pytest.mark.parametrize("threads", [1, 3])
def test_rows_of_chunks_written_like_numpy(max_bytes, threads, monkeypatch):
    import sys

    monkeypatch.setattr(sys.modules["zarrbolt.pipeline.write"].WriteRows, "MAX_BYTES", max_bytes)
    calls = []
    real = kernels.strided_copy

    def spy(dst, src, **kw):
        calls.append(kw.get("src_order", False))
        return real(dst, src, **kw)

    monkeypatch.setattr(kernels, "strided_copy", spy)
    shape, chunks = (7, 13, 95), (3, 6, 10)  # edge chunks on every axis
    for name, value in _values(shape):
        for codecs in (None, BLOSC):
            a = zarr.create_array(MemoryStore(), shape=shape, chunks=chunks, dtype="uint16", fill_value=9,
                                  **({"codecs": codecs} if codecs else {}))
            with zarr.config.set(threads=threads):
                a[...] = value
                np.testing.assert_array_equal(a[...], value, err_msg=name)
                a[1:6, 2:11, 7:93] = value[:5, :9, :86][::-1]  # unaligned: partial chunks and a few whole ones
                expect = value.copy()
                expect[1:6, 2:11, 7:93] = value[:5, :9, :86][::-1]
                np.testing.assert_array_equal(a[...], expect, err_msg=name)
                a[...] = 9  # a scalar: nothing to gather, every chunk is the fill value
                assert a.nchunks_initialized == 0
    assert any(calls) == (max_bytes > 0)


def test_rows_skip_empty_chunks_and_go_through_every_dtype():
    shape, chunks = (4, 6, 40), (2, 3, 8)
    value = np.zeros(shape, "float64")
    value[1, 4, 17] = 2.5  # one chunk not all fill value
    a = zarr.create_array(MemoryStore(), shape=shape, chunks=chunks, dtype="float64", fill_value=0)
    a[...] = value
    assert a.nchunks_initialized == 1
    np.testing.assert_array_equal(a[...], value)
    with zarr.config.set(write_empty_chunks=True):
        a[...] = value
    assert a.nchunks_initialized == a.nchunks
    np.testing.assert_array_equal(a[...], value)
