"""The reshape codec: shape rules, views, partial reads and edge chunks through an array."""

from __future__ import annotations

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.codecs.abc import ChunkSpec
from zarrbolt.codecs.reshape import ReshapeCodec
from zarrbolt.errors import MetadataError
from zarrbolt.metadata import DataType
from zarrbolt.storage import MemoryStore

U16 = DataType("uint16")


def spec(shape):
    return ChunkSpec(tuple(shape), U16, np.uint16(0))


@pytest.mark.parametrize(
    "conf,a_shape,b_shape",
    [
        ([[0, 1], [2], 3], (100, 50, 64, 3), None),  # the spec's example: B = (5000, 64, 3)
        ([-1], (4, 5, 6), (120,)),
        ([4, -1], (4, 5, 6), (4, 30)),
        ([[0], [1, 2]], (4, 5, 6), (4, 30)),
        ([[0, 1, 2]], (4, 5, 6), (120,)),
        ([2, 2, 30], (4, 5, 6), (2, 2, 30)),
        ([[], [0], [1], [2]], (4, 5, 6), (1, 4, 5, 6)),
        ([1, [0, 1], -1], (2, 3, 4), (1, 6, 4)),
    ],
)
def test_output_shapes(conf, a_shape, b_shape):
    c = ReshapeCodec.from_json({"shape": conf})
    if b_shape is None:
        b_shape = (5000, 64, 3)
        conf = [[0, 1], [2], 3]
    assert c.resolve(spec(a_shape)).shape == b_shape
    a = np.arange(np.prod(a_shape), dtype=np.uint16).reshape(a_shape)
    enc = c.encode(a, spec(a_shape))
    assert enc.shape == b_shape and np.shares_memory(enc, a)  # a view, not a copy
    np.testing.assert_array_equal(c.decode(enc, spec(a_shape)), a)
    assert ReshapeCodec.from_json(c.to_json()["configuration"]).to_json() == c.to_json()


@pytest.mark.parametrize(
    "conf,a_shape",
    [
        ([[1], [0]], (4, 5)),            # not increasing
        ([[1, 0]], (4, 5)),
        ([[3, 4], 10, [0, 1]], (2, 5, 1, 3, 4)),
        ([-1, -1], (4, 5)),              # two -1
        ([7], (4, 5)),                    # wrong product
        ([-1, 3], (4, 5)),                # 20 not divisible by 3
        ([0, 20], (4, 5)),                # zero size
        ([[0], [2]], (4, 5)),             # dim 2 does not exist
        ([[1], 4], (4, 5)),               # prod(B[:0]) = 1 != prod(A[:1]) = 4
        ([5, [1]], (4, 5)),               # consistent product but prefix 5 != 4
        ("C", (4, 5)),
        ([1.5], (4, 5)),
        ([True], (4, 5)),
    ],
)
def test_invalid_shapes(conf, a_shape):
    with pytest.raises(MetadataError):
        ReshapeCodec.from_json({"shape": conf}).resolve(spec(a_shape))


def test_reshape_array_partial_reads_and_edges():
    data = np.arange(30 * 17 * 11, dtype=np.uint16).reshape(30, 17, 11)
    codecs = [{"name": "reshape", "configuration": {"shape": [[0, 1], -1]}},
              {"name": "bytes", "configuration": {"endian": "little"}},
              {"name": "zstd", "configuration": {"level": 1, "checksum": False}}]
    a = zarr.create_array(MemoryStore(), shape=data.shape, chunks=(8, 5, 4), dtype="uint16", codecs=codecs)
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(a[29, 16, 10], data[29, 16, 10])  # corner edge chunk
    np.testing.assert_array_equal(a[3:27:5, ::-4, 7], data[3:27:5, ::-4, 7])
    a[25:, 15:, 9:] = 0
    data[25:, 15:, 9:] = 0
    np.testing.assert_array_equal(a[20:, 10:, 5:], data[20:, 10:, 5:])
    with pytest.raises(MetadataError):
        zarr.create_array(MemoryStore(), shape=(10,), chunks=(5,), dtype="uint16",
                          codecs=[{"name": "reshape", "configuration": {"shape": [3]}}, "bytes"])
