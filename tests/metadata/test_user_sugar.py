"""``create_array``'s sugar is normalised in ``api/creation.py`` and then checked once, by the metadata and the
codecs: each malformed input raises from the rule's owner with the owner's message, and every
spelling that was accepted before still is."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.codecs.blosc import BloscCodec
from zarrbolt.errors import MetadataError, UnknownCodecError
from zarrbolt.metadata import ArrayMetadata, parse_node_metadata
from zarrbolt.storage import MemoryStore

LE = {"name": "bytes", "configuration": {"endian": "little"}}


def raised_in(excinfo) -> str:
    tb = excinfo.tb
    while tb.tb_next is not None:
        tb = tb.tb_next
    return os.path.basename(tb.tb_frame.f_code.co_filename)


def create(**kw):
    kw.setdefault("shape", (4, 6))
    kw.setdefault("dtype", "u2")
    return zarr.create_array(MemoryStore(), **kw)


def codecs_json(a):
    return a.metadata.to_json()["codecs"]


# ---------------------------------------------------------------------------- dimension names
BAD_NAMES = [
    ("yx", "dimension_names must be an array of strings or nulls, got 'yx'"),
    (5, "dimension_names must be an array of strings or nulls, got 5"),
    ({"y"}, "dimension_names must be an array of strings or nulls"),
    ({"y": 1, "x": 2}, "dimension_names must be an array of strings or nulls"),
    (["y"], "dimension_names has 1 entries, the array has 2 dimensions"),
    (["y", 1], "dimension names must be strings or null, got 1"),
]


@pytest.mark.parametrize("names,message", BAD_NAMES)
def test_dimension_names_are_checked_by_array_metadata(names, message):
    """The same rule, message and place whether the names come from create_array or zarr.json."""
    with pytest.raises(MetadataError) as ei:
        create(dimension_names=names)
    assert message in str(ei.value) and raised_in(ei) == "nodes.py"
    if isinstance(names, set):
        return  # (no JSON spelling)
    doc = create().metadata.to_json() | {"dimension_names": names}
    with pytest.raises(MetadataError) as ei:
        parse_node_metadata(json.dumps(doc).encode())
    assert message in str(ei.value) and raised_in(ei) == "nodes.py"


def test_dimension_names_accepted_spellings():
    assert create(dimension_names=["y", None]).metadata.dimension_names == ("y", None)
    assert create(dimension_names=("y", "x")).metadata.dimension_names == ("y", "x")
    assert create(dimension_names=iter(["y", "x"])).metadata.dimension_names == ("y", "x")
    assert create(dimension_names=np.array(["y", "x"])).metadata.dimension_names == ("y", "x")
    assert create(dimension_names=None).metadata.dimension_names is None
    # null is read as absent (as zarr-python reads it; zarrita.js writes it) and written absent
    doc = create().metadata.to_json() | {"dimension_names": None}
    meta = parse_node_metadata(json.dumps(doc).encode())
    assert meta.dimension_names is None and "dimension_names" not in meta.to_json()


# ---------------------------------------------------------------------------- shape and chunks
def test_shape_and_chunks_are_checked_by_the_metadata():
    cases = [
        (dict(shape=(4, -1)), "shape must contain integers >= 0, got -1"),
        (dict(chunks=(0, 2)), "chunk_shape must contain integers >= 1, got 0"),
        (dict(chunks=(2, -5)), "chunk_shape must contain integers >= 1, got -5"),
        (dict(chunks=(2,)), "chunk_shape [2] has 1 dimensions, array shape [4, 6] has 2"),
        (dict(chunks=(2, 2, 2)), "chunk_shape [2, 2, 2] has 3 dimensions, array shape [4, 6] has 2"),
    ]
    for kw, message in cases:
        with pytest.raises(MetadataError) as ei:
            create(**kw)
        assert message in str(ei.value) and raised_in(ei) == "chunk_grid.py", kw
    assert create(chunks=(-1, 4)).chunks == (4, 4)
    assert create(chunks=2).chunks == (2, 2)
    assert create(shape=(0, 3), chunks=(0, 3)).chunks == (1, 3)
    assert create(shape=np.int64(5), chunks="auto").shape == (5,)
    for bad in ((4.5, 2), (True, 2), "ab"):
        with pytest.raises(MetadataError, match="shape must"):
            create(shape=bad)


# ---------------------------------------------------------------------------- codecs
class NumcodecsLike:
    """What create_array uses of a numcodecs codec object."""

    def __init__(self, config):
        self.config = config

    def get_config(self):
        return dict(self.config)


def test_codec_shortcuts_accept_every_spelling():
    blosc_json = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                      "typesize": 2, "blocksize": 0}}
    spellings = [
        {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle"}},
        {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": 1}},
        {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": np.int32(1), "typesize": 2}},
        [{"name": "blosc", "configuration": {"cname": "lz4", "shuffle": "shuffle"}}],
        {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
        NumcodecsLike({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}),
        BloscCodec("lz4", 5, "shuffle"),
        blosc_json,
    ]
    for comp in spellings:
        assert codecs_json(create(compressors=comp)) == [LE, blosc_json], comp
        assert codecs_json(create(compressor=comp)) == [LE, blosc_json], comp
    default = {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "noshuffle",
                                                  "typesize": 2, "blocksize": 0}}
    assert codecs_json(create(compressors="blosc")) == [LE, default]
    assert codecs_json(create(compressors={"name": "blosc"})) == [LE, default]
    # typesize is the item size blosc sees: after a cast_value filter that is 1
    cast = {"name": "cast_value", "configuration": {"data_type": "uint8", "out_of_range": "clamp"}}
    a = create(filters=[cast], compressors={"name": "blosc", "configuration": {"shuffle": 2}})
    assert codecs_json(a)[2]["configuration"]["typesize"] == 1
    assert codecs_json(a)[2]["configuration"]["shuffle"] == "bitshuffle"
    zstd = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
    assert codecs_json(create(compressors=[{"id": "zstd", "level": 3}, {"id": "crc32c"}])) == [
        LE, zstd, {"name": "crc32c"}]
    assert codecs_json(create(compressors=None)) == [LE]
    assert codecs_json(create(serializer="bytes", dtype="u1", compressors=None)) == [{"name": "bytes"}]
    assert codecs_json(create(filters={"name": "transpose", "configuration": {"order": [1, 0]}}))[0]["name"] == "transpose"
    a = create(chunk_key_encoding="v2")
    assert a.metadata.chunk_key_encoding.to_json() == {"name": "v2", "configuration": {"separator": "."}}
    a = create(chunk_key_encoding={"name": "default", "configuration": {"separator": "."}})
    assert a.metadata.chunk_key_encoding.separator == "."


def test_codec_shortcuts_report_the_owners_errors():
    cases = [
        (dict(compressors=5), MetadataError, "codec must be a name or an extension object, got 5", "_ext_obj.py"),
        (dict(compressors={"name": "lzma"}), UnknownCodecError, "unknown codec 'lzma'", "registry.py"),
        (dict(compressors={"id": "no_such_codec"}), UnknownCodecError, "unknown codec 'no_such_codec'", "registry.py"),
        (dict(compressors={"name": "Blosc"}), UnknownCodecError, "'Blosc' is not a valid extension name", "_ext_obj.py"),
        (dict(compressors={"name": "gzip", "configuration": {"level": 1, "x": 0}}), MetadataError,
         "codec 'gzip': unknown configuration members ['x']", "_ext_obj.py"),
        (dict(compressors={"name": "blosc", "configuration": None}), MetadataError,
         "codec 'blosc': 'configuration' must be an object, got None", "_ext_obj.py"),
        (dict(chunk_key_encoding={"name": "default", "configuration": {"separator": "-"}}), MetadataError,
         "separator must be '/' or '.'", "chunk_key.py"),
        (dict(chunk_key_encoding=5), MetadataError,
         "chunk_key_encoding must be a name or an extension object, got 5", "_ext_obj.py"),
    ]
    for kw, exc, message, owner in cases:
        with pytest.raises(exc) as ei:
            create(**kw)
        assert message in str(ei.value) and raised_in(ei) == owner, kw
    for kw, message in ((dict(filters="bytes"), "filters must be array->array codecs"),
                        (dict(serializer={"name": "gzip", "configuration": {"level": 1}}), "serializer must be one array->bytes codec"),
                        (dict(compressors="bytes"), "compressors must be bytes->bytes codecs")):
        with pytest.raises(MetadataError, match=message):
            create(**kw)


def test_codecs_list_is_the_metadata_list():
    """``codecs=`` is taken as the metadata's list: no sugar, the codecs' own rules."""
    with pytest.raises(MetadataError, match="shuffle must be one of"):
        create(codecs=[LE, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1, "shuffle": 1,
                                                                "typesize": 2}}])
    a = create(codecs=[LE, BloscCodec("lz4", 1, "shuffle")])  # a hand-built codec gets its typesize
    assert codecs_json(a)[1]["configuration"]["typesize"] == 2
    assert isinstance(ArrayMetadata.from_json(a.metadata.to_json()), ArrayMetadata)
