"""The long tail of codecs through numcodecs (zarrbolt.codecs.numcodecs.external): how a Zarr v3
list's codecs that numcodecs runs get their kind, and the error naming what to install when
nothing knows a codec (numcodecs itself is optional: tests/ecosystem/test_liberal_reads.py runs
the codecs with numcodecs, pcodec and zfpy installed)."""

from __future__ import annotations

import importlib.util
import json

import pytest

import zarrbolt
from zarrbolt.codecs import parse_codecs
from zarrbolt.codecs.numcodecs.external import infer_kinds, package_for
from zarrbolt.errors import UnknownCodecError
from zarrbolt.storage import MemoryStore

HAVE_NUMCODECS = importlib.util.find_spec("numcodecs") is not None
AA, AB, BB = "array_to_array", "array_to_bytes", "bytes_to_bytes"


@pytest.mark.parametrize("names, kinds, want", [
    (["numcodecs.pcodec"], [None], [AB]),
    (["numcodecs.zfpy", "zstd"], [None, BB], [AB, BB]),
    (["numcodecs.foo", "bytes", "numcodecs.bar"], [None, AB, None], [AA, AB, BB]),
    (["numcodecs.foo", "numcodecs.pcodec", "numcodecs.bar"], [None, None, None], [AA, AB, BB]),
    (["numcodecs.foo", "numcodecs.bar", "gzip"], [None, None, BB], [AA, AB, BB]),
    (["transpose", "bytes", "numcodecs.base64", "crc32c"], [AA, AB, None, BB], [AA, AB, BB, BB]),
])
def test_kinds_from_the_place_in_the_list(names, kinds, want):
    assert infer_kinds(names, kinds) == want


def test_packages_named():
    assert package_for("pcodec") == "pcodec"
    assert package_for("zfpy") == "zfpy"
    assert package_for("imagecodecs_jpeg2k") == "imagecodecs"
    assert package_for("base64") == "numcodecs"


@pytest.mark.skipif(HAVE_NUMCODECS, reason="checks the message given when numcodecs is not installed")
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_without_numcodecs_the_error_names_it(zarr_format):
    store = MemoryStore()
    if zarr_format == 2:
        doc = {"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<f4", "fill_value": 0, "order": "C",
               "filters": None, "compressor": {"id": "pcodec", "level": 8}}
        store.set(".zarray", json.dumps(doc).encode())
    else:
        doc = {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "float32",
               "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
               "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
               "codecs": [{"name": "numcodecs.pcodec", "configuration": {"level": 8}}]}
        store.set("zarr.json", json.dumps(doc).encode())
    with pytest.raises(UnknownCodecError, match=r"install numcodecs \(pip install 'zarrbolt\[numcodecs\]'\) and pcodec"):
        zarrbolt.open_array(store, mode="r")


def test_unknown_codec_marked_optional_is_dropped():
    codecs = parse_codecs([{"name": "bytes"}, {"name": "numcodecs.no-such-codec", "must_understand": False}])
    assert [c.name for c in codecs] == ["bytes"]
    with pytest.raises(UnknownCodecError, match="no-such-codec"):
        parse_codecs([{"name": "bytes"}, {"name": "numcodecs.no-such-codec"}])
