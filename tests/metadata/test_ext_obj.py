"""The one parser of extension objects (``metadata/_ext_obj.py``) and the one check of configuration
members: every extension point (data type, chunk grid, chunk key encoding, codec, storage
transformer) reports the same malformations with the same typed error and message, raised there."""

from __future__ import annotations

import copy
import json
import os

import pytest

from zarrbolt.codecs import parse_codec
from zarrbolt.codecs.gzip import GzipCodec
from zarrbolt.errors import MetadataError, UnknownCodecError, UnknownDataTypeError
from zarrbolt.metadata import DataType, RegularChunkGrid, parse_chunk_key_encoding, parse_node_metadata
from zarrbolt.metadata._ext_obj import Extension, config_members, parse_extension

BASE = {
    "zarr_format": 3,
    "node_type": "array",
    "shape": [10, 20],
    "data_type": "uint16",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 8]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": 0,
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
}


def parse_doc(**changes):
    d = copy.deepcopy(BASE)
    d.update(changes)
    return parse_node_metadata(json.dumps(d).encode())


def raised_in(excinfo) -> str:
    """The file of the innermost frame: where the error was raised."""
    tb = excinfo.tb
    while tb.tb_next is not None:
        tb = tb.tb_next
    return os.path.basename(tb.tb_frame.f_code.co_filename)


# Each extension point as (what its messages call it, a parser of one value, a valid name).
POINTS = {
    "data_type": (lambda o: DataType.parse(o), "uint16"),
    "chunk_grid": (lambda o: RegularChunkGrid.from_json(o), "regular"),
    "chunk_key_encoding": (lambda o: parse_chunk_key_encoding(o), "default"),
    "codec": (lambda o: parse_codec(o), "bytes"),
    "storage transformer": (lambda o: parse_doc(storage_transformers=[o]), "foo"),
}


def test_parse_extension_forms():
    assert parse_extension("zstd", "codec") == Extension("zstd", {}, True)
    assert parse_extension({"name": "zstd"}, "codec") == Extension("zstd", {}, True)
    obj = {"name": "zstd", "configuration": {"level": 1}, "must_understand": False}
    assert parse_extension(obj, "codec") == Extension("zstd", {"level": 1}, False)
    # must_understand=false is not supported for data types, chunk grids, chunk key encodings
    assert parse_extension(obj, "data_type", ignorable=False).must_understand is True
    # old extensions named by URI
    assert parse_extension("https://example.org/ext", "codec").name == "https://example.org/ext"


@pytest.mark.parametrize("what", sorted(POINTS))
@pytest.mark.parametrize(
    "bad,message",
    [
        (5, "{what} must be a name or an extension object, got 5"),
        (["x"], "{what} must be a name or an extension object"),
        ({"configuration": {}}, "{what}: an extension object needs a string 'name'"),
        ({"name": 3}, "{what}: an extension object needs a string 'name'"),
        ({"name": "{name}", "extra": 1}, "{what} '{name}': unexpected members ['extra']"),
        ({"name": "{name}", "configuration": [1]}, "{what} '{name}': 'configuration' must be an object, got [1]"),
        ({"name": "{name}", "configuration": None}, "{what} '{name}': 'configuration' must be an object, got None"),
        ({"name": "{name}", "must_understand": "no"}, "{what} '{name}': 'must_understand' must be a boolean, got 'no'"),
    ],
)
def test_every_point_reports_malformed_objects_alike(what, bad, message):
    parse, name = POINTS[what]
    if isinstance(bad, dict) and bad.get("name") == "{name}":
        bad = {**bad, "name": name}
    with pytest.raises(MetadataError) as ei:
        parse(bad)
    assert message.format(what=what, name=name) in str(ei.value)
    assert raised_in(ei) == "_ext_obj.py"


@pytest.mark.parametrize(
    "what,unknown", [("data_type", UnknownDataTypeError), ("codec", UnknownCodecError),
                     ("chunk_grid", MetadataError), ("chunk_key_encoding", MetadataError)]
)
@pytest.mark.parametrize("name", ["Foo", "foo/bar", "x", "uint16 ", "zstd\n", "uint16\n", ""])
def test_invalid_names_are_unknown_extensions(what, unknown, name):
    parse, _ = POINTS[what]
    with pytest.raises(unknown, match="is not a valid extension name") as ei:
        parse(name)
    assert raised_in(ei) == "_ext_obj.py"
    with pytest.raises(unknown, match="is not a valid extension name"):
        parse({"name": name, "must_understand": False})  # an invalid name cannot be ignored


def test_must_understand_rules():
    # codecs and storage transformers: unknown ones marked must_understand=false are dropped
    assert parse_codec({"name": "foo", "must_understand": False}) is None
    with pytest.raises(UnknownCodecError):
        parse_codec({"name": "foo", "must_understand": True})
    with pytest.raises(UnknownCodecError):
        parse_codec("foo")
    known = parse_codec({"name": "gzip", "configuration": {"level": 1}, "must_understand": False})
    assert known.to_json() == {"name": "gzip", "configuration": {"level": 1}}
    assert parse_doc(storage_transformers=[{"name": "foo", "must_understand": False}]).storage_transformers == ()
    with pytest.raises(MetadataError, match="storage transformers"):
        parse_doc(storage_transformers=[{"name": "foo"}])
    # data type, chunk grid, chunk key encoding: the flag is not supported, unknown ones always fail
    with pytest.raises(UnknownDataTypeError):
        DataType.parse({"name": "float8", "must_understand": False})
    with pytest.raises(MetadataError, match="unsupported chunk grid"):
        RegularChunkGrid.from_json({"name": "rectilinear", "must_understand": False})
    with pytest.raises(MetadataError, match="unsupported chunk key encoding"):
        parse_chunk_key_encoding({"name": "v3", "must_understand": False})
    with pytest.raises(UnknownDataTypeError):
        parse_doc(data_type={"name": "float8", "must_understand": False})
    # known ones marked must_understand=false are read normally
    assert DataType.parse({"name": "int8", "must_understand": False}) is DataType("int8")
    g = RegularChunkGrid.from_json({"name": "regular", "configuration": {"chunk_shape": [2]}, "must_understand": False})
    assert g.chunk_shape == (2,)


def test_data_type_configuration_is_refused():
    with pytest.raises(UnknownDataTypeError, match="with configuration"):
        DataType.parse({"name": "int32", "configuration": {"x": 1}})
    assert DataType.parse({"name": "int32", "configuration": {}}) is DataType("int32")


def test_config_members_is_the_one_member_check():
    assert config_members(None, {"a"}, "codec 'x'") == {}
    assert config_members({"a": 1}, {"a"}, "codec 'x'") == {"a": 1}
    with pytest.raises(MetadataError, match=r"codec 'x': 'configuration' must be an object, got \[1\]"):
        config_members([1], {"a"}, "codec 'x'")
    cases = [
        (lambda: GzipCodec.from_json({"level": 1, "x": 2}), "codec 'gzip': unknown configuration members ['x']"),
        (lambda: parse_codec({"name": "crc32c", "configuration": {"x": 2}}),
         "codec 'crc32c': unknown configuration members ['x']"),
        (lambda: parse_codec({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1, "shuffle": "shuffle",
                                                                   "typesize": 2, "level": 1}}),
         "codec 'blosc': unknown configuration members ['level']"),
        (lambda: RegularChunkGrid.from_json({"name": "regular", "configuration": {"chunk_shape": [1], "x": 1}}),
         "chunk_grid 'regular': unknown configuration members ['x']"),
        (lambda: parse_chunk_key_encoding({"name": "v2", "configuration": {"sep": "/"}}),
         "chunk_key_encoding 'v2': unknown configuration members ['sep']"),
        (lambda: parse_doc(codecs=[{"name": "bytes", "configuration": {"endian": "little", "order": "C"}}]),
         "codec 'bytes': unknown configuration members ['order']"),
    ]
    for fn, message in cases:
        with pytest.raises(MetadataError) as ei:
            fn()
        assert message in str(ei.value)
        assert raised_in(ei) == "_ext_obj.py"
    # a codec's from_json called directly still refuses a configuration that is not an object
    with pytest.raises(MetadataError, match="'configuration' must be an object"):
        GzipCodec.from_json([("level", 1)])
