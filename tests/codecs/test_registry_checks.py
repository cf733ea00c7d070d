"""Codec rules checked once, by the codec that owns them, whether the codec comes from metadata JSON,
from its constructor or from ``create_array``'s shortcuts: sharding's inner chunk shape and shard
multiples."""

from __future__ import annotations

import os

import pytest

import zarrbolt as zarr
from zarrbolt.codecs import parse_codecs
from zarrbolt.codecs.sharding import ShardingCodec
from zarrbolt.errors import MetadataError
from zarrbolt.metadata import ArrayMetadata
from zarrbolt.storage import MemoryStore

LE = {"name": "bytes", "configuration": {"endian": "little"}}


def raised_in(excinfo) -> str:
    tb = excinfo.tb
    while tb.tb_next is not None:
        tb = tb.tb_next
    return os.path.basename(tb.tb_frame.f_code.co_filename)


def meta_doc(codecs, shape=(16,), chunks=(8,), dtype="uint16"):
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs}


# ---------------------------------------------------------------------------- sharding
def shard(chunk_shape, codecs=(LE,)):
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": chunk_shape, "codecs": list(codecs), "index_codecs": [LE, {"name": "crc32c"}]}}


@pytest.mark.parametrize("chunk_shape", ["4", {"a": 4}, 4, None, True])
def test_sharding_chunk_shape_must_be_an_array(chunk_shape):
    with pytest.raises(MetadataError, match="sharding_indexed: chunk_shape must be an array of integers") as ei:
        parse_codecs([shard(chunk_shape)])
    assert raised_in(ei) == "sharding.py"


@pytest.mark.parametrize("chunk_shape", [[0], [-1], [1.5], [True]])
def test_sharding_chunk_shape_must_hold_positive_integers(chunk_shape):
    with pytest.raises(MetadataError, match="chunk_shape must hold positive integers"):
        parse_codecs([shard(chunk_shape)])


def test_shard_multiples_are_checked_by_the_sharding_codec():
    """An inner chunk shape that does not divide the shard shape is refused by the sharding codec,
    from metadata JSON and from create_array(shards=...) with the same message."""
    msg = "sharding_indexed: inner chunk_shape [3] does not evenly divide the shard shape [8]"
    with pytest.raises(MetadataError) as ei:
        ArrayMetadata.from_json(meta_doc([shard([3])], chunks=(8,)))
    assert msg in str(ei.value) and raised_in(ei) == "sharding.py"
    with pytest.raises(MetadataError) as ei:
        zarr.create_array(MemoryStore(), shape=(10,), chunks=(3,), shards=(8,), dtype="u1")
    assert msg in str(ei.value) and raised_in(ei) == "sharding.py"
    with pytest.raises(MetadataError) as ei:
        ShardingCodec([3]).layout(ArrayMetadata.from_json(meta_doc([shard([4])], chunks=(8,))).chunk_spec())
    assert msg in str(ei.value)
    with pytest.raises(MetadataError, match="inner chunk_shape .* has 2 dimensions, the shard shape .* has 1"):
        ArrayMetadata.from_json(meta_doc([shard([2, 2])], chunks=(8,)))


def test_shard_shape_is_checked_by_the_chunk_grid():
    def make(shards, chunks=(4,)):
        return zarr.create_array(MemoryStore(), shape=(16,), chunks=chunks, shards=shards, dtype="u1")

    for shards, msg in (((0,), "chunk_shape must contain integers >= 1, got 0"),
                        ((-8,), "chunk_shape must contain integers >= 1, got -8"),
                        ((8, 8), "chunk_shape [8, 8] has 2 dimensions, array shape [16] has 1")):
        with pytest.raises(MetadataError) as ei:
            make(shards)
        assert msg in str(ei.value) and raised_in(ei) == "chunk_grid.py"
    assert make(8).metadata.chunk_grid.chunk_shape == (8,)
    assert make({"shape": [16]}).metadata.chunk_grid.chunk_shape == (16,)
    with pytest.raises(MetadataError, match="shards must be a sequence of ints"):
        make("x")
