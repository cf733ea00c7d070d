"""Codec rules checked once, by the codec that owns them, whether the codec comes from metadata JSON,
from its constructor or from ``create_array``'s shortcuts: blosc's ``shuffle`` and ``typesize``,
sharding's inner chunk shape and shard multiples, the registry's handling of codec lists."""

from __future__ import annotations

import os

import pytest

import zarrbolt as zarr
from zarrbolt.codecs import parse_codecs
from zarrbolt.codecs.blosc import BloscCodec
from zarrbolt.codecs.sharding import ShardingCodec
from zarrbolt.errors import MetadataError
from zarrbolt.metadata import ArrayMetadata
from zarrbolt.storage import MemoryStore

LE = {"name": "bytes", "configuration": {"endian": "little"}}
SHUFFLE_MSG = "codec 'blosc': shuffle must be one of ['noshuffle', 'shuffle', 'bitshuffle']"


def raised_in(excinfo) -> str:
    tb = excinfo.tb
    while tb.tb_next is not None:
        tb = tb.tb_next
    return os.path.basename(tb.tb_frame.f_code.co_filename)


def blosc(**conf):
    return {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "typesize": 2} | conf}


def meta_doc(codecs, shape=(16,), chunks=(8,), dtype="uint16"):
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs}


# ---------------------------------------------------------------------------- blosc shuffle
@pytest.mark.parametrize("shuffle", [1, 0, True, "SHUFFLE", "bit", None, [1]])
def test_blosc_shuffle_is_checked_by_the_codec(shuffle):
    """The metadata spells shuffle as a name; anything else is refused by BloscCodec.__init__,
    through JSON and through the constructor alike."""
    for make in (lambda: parse_codecs([blosc(shuffle=shuffle)]),
                 lambda: BloscCodec.from_json(blosc(shuffle=shuffle)["configuration"]),
                 lambda: BloscCodec("lz4", 5, shuffle, 2),
                 lambda: ArrayMetadata.from_json(meta_doc([LE, blosc(shuffle=shuffle)]))):
        with pytest.raises(MetadataError) as ei:
            make()
        assert SHUFFLE_MSG in str(ei.value)
        assert raised_in(ei) == "blosc.py"


@pytest.mark.parametrize("shuffle", ["noshuffle", "shuffle", "bitshuffle"])
def test_blosc_shuffle_names_round_trip(shuffle):
    c = parse_codecs([blosc(shuffle=shuffle)])[0]
    assert c.shuffle == shuffle and c.to_json()["configuration"]["shuffle"] == shuffle


def test_blosc_json_needs_typesize_unless_noshuffle():
    conf = {"cname": "lz4", "clevel": 5, "shuffle": "shuffle"}
    with pytest.raises(MetadataError, match="'typesize' is required unless shuffle is 'noshuffle'"):
        BloscCodec.from_json(conf)
    assert BloscCodec.from_json(conf | {"shuffle": "noshuffle"}).typesize is None
    # an invalid shuffle is reported as such, not as a missing typesize
    with pytest.raises(MetadataError, match="shuffle must be one of"):
        BloscCodec.from_json(conf | {"shuffle": "bogus"})
    for k in ("cname", "clevel", "shuffle"):
        with pytest.raises(MetadataError, match=f"'{k}' is required"):
            BloscCodec.from_json({kk: v for kk, v in (conf | {"typesize": 2}).items() if kk != k})


def test_create_array_blosc_sugar_is_validated_by_the_codec():
    """create_array normalises blosc sugar (numeric shuffle, left-out members), then the codec checks."""
    def make(comp):
        return zarr.create_array(MemoryStore(), shape=(4,), dtype="u2", compressors=comp)

    for bad in (7, -1, "bogus", 1.0):
        with pytest.raises(MetadataError) as ei:
            make({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1, "shuffle": bad}})
        assert SHUFFLE_MSG in str(ei.value) and raised_in(ei) == "blosc.py"
    with pytest.raises(MetadataError) as ei:
        make({"name": "blosc", "configuration": {"cname": "lz4", "level": 1}})
    assert "codec 'blosc': unknown configuration members ['level']" in str(ei.value)
    assert raised_in(ei) == "_ext_obj.py"
    with pytest.raises(MetadataError) as ei:
        make({"name": "blosc", "configuration": {"cname": "lz5"}})
    assert "cname must be one of" in str(ei.value) and raised_in(ei) == "blosc.py"
    with pytest.raises(MetadataError) as ei:
        make({"name": "blosc", "configuration": {"clevel": 10}})
    assert "clevel=10 is outside [0, 9]" in str(ei.value) and raised_in(ei) == "_util.py"


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
