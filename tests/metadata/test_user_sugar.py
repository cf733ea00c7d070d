"""``create_array``'s sugar is normalised in ``api.py`` and then checked once, by the metadata and the
codecs: each malformed input raises from the rule's owner with the owner's message, and every
spelling that was accepted before still is."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import zarrbolt as zarr
from zarrbolt.errors import MetadataError
from zarrbolt.metadata import parse_node_metadata
from zarrbolt.storage import MemoryStore

def raised_in(excinfo) -> str:
    tb = excinfo.tb
    while tb.tb_next is not None:
        tb = tb.tb_next
    return os.path.basename(tb.tb_frame.f_code.co_filename)


def create(**kw):
    kw.setdefault("shape", (4, 6))
    kw.setdefault("dtype", "u2")
    return zarr.create_array(MemoryStore(), **kw)


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
    doc = create().metadata.to_json() | {"dimension_names": None}
    with pytest.raises(MetadataError, match="dimension_names must be an array of strings or nulls, got null"):
        parse_node_metadata(json.dumps(doc).encode())


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
