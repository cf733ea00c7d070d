"""The ``rectilinear`` chunk grid (zarr-extensions ``chunk-grids/rectilinear``): its JSON (ints and
``[length, count]`` run-length pairs, written back as zarr-python writes them), what it answers the
indexers and planners (chunks, regions, codec shapes), and its errors."""

from __future__ import annotations

import json
import time
import tracemalloc

import numpy as np
import pytest

from zarrbolt.errors import MetadataError
from zarrbolt.metadata import ArrayMetadata, parse_chunk_grid
from zarrbolt.metadata.chunk_grid import RectilinearChunkGrid, RegularChunkGrid


def grid(*shapes):
    return parse_chunk_grid({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": list(shapes)}})


def edges(g, d, extent):
    """The expanded edge lengths of dimension ``d`` that cover ``extent``."""
    n = g.grid_shape([extent if i == d else 1 for i in range(g.ndim)])[d]
    return [g.chunk_box([c if i == d else 0 for i in range(g.ndim)])[1][d] for c in range(n)]


def test_the_specs_example():
    g = grid(4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4])
    shape = (6, 6, 6, 6, 6)
    g.validate(shape)
    assert not g.regular
    assert [edges(g, d, 6) for d in range(5)] == [[4, 4], [1, 2, 3], [4, 4], [1, 1, 1, 3], [4, 4]]
    assert g.grid_shape(shape) == (2, 3, 2, 4, 2)
    assert g.covering_shape(shape) == (8, 6, 8, 6, 8)  # the last chunks overhang the array's end
    assert g.max_chunk_shape == (4, 3, 4, 3, 4)
    # a chunk's origin and codec shape (the whole edge, also past the array's end)
    assert g.chunk_box((1, 2, 1, 3, 1)) == ((4, 3, 4, 3, 4), (4, 3, 4, 3, 4))
    assert g.chunk_region((1, 2, 1, 3, 1), shape) == tuple(slice(a, b) for a, b in [(4, 6), (3, 6), (4, 6), (3, 6), (4, 6)])
    assert g.codec_shapes(np.array([[0, 0, 0, 0, 0], [1, 1, 0, 2, 2]])).tolist() == [[4, 1, 4, 1, 4], [4, 2, 4, 1, 4]]


def test_json_runs_are_merged_and_written_as_zarr_python_writes_them():
    g = grid([5, 5, 5, 2], [[3, 2], 3, [3, 1], 7], 9, [1])
    assert g.to_json() == {"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [[[5, 3], 2], [[3, 4], 7], 9, [1]]}}
    again = parse_chunk_grid(json.loads(json.dumps(g.to_json())))
    assert again == g and hash(again) == hash(g)
    assert RectilinearChunkGrid([[5, 5, 5, 2], [3, 3, 3, 3, 7], 9, [1]]) == g


def test_all_one_size_is_regular_but_stays_rectilinear_in_json():
    g = grid(4, 3)
    assert g.regular and g.chunk_shape == (4, 3) and g.codec_shapes(np.zeros((2, 2), np.int64)) is None
    assert g.to_json()["name"] == "rectilinear"
    assert g != RegularChunkGrid((4, 3))


def test_no_one_chunk_shape():
    with pytest.raises(MetadataError, match="differ in shape"):
        _ = grid([1, 2], 3).chunk_shape


def test_representative_shapes_hold_every_edge():
    g = grid([4, 8, 4, 12], 6, [[2, 5]])
    shapes = g.representative_shapes()
    assert shapes[0] == (12, 6, 2)
    assert {s[0] for s in shapes} == {4, 8, 12} and all(s[1:] == (6, 2) for s in shapes)


def test_resize_appends_an_edge_where_the_array_grows_past_the_edges():
    g = grid([4, 4], 3)
    assert g.resized((8, 30)) is g  # within the edges (or a repeated size): the same grid
    assert g.resized((6, 3)) is g
    bigger = g.resized((11, 3))
    assert bigger.to_json()["configuration"]["chunk_shapes"] == [[[4, 2], 3], 3]
    assert edges(bigger, 0, 11) == [4, 4, 3]


def test_huge_run_lengths_cost_nothing():
    """A run of 2**40 chunks is looked up, never expanded."""
    tracemalloc.start()
    t0 = time.perf_counter()
    g = grid([[1, 2**40], 5], [[3, 2**20]])
    shape = (2**40 + 5, 3 * 2**20)
    g.validate(shape)
    assert g.grid_shape(shape) == (2**40 + 1, 2**20)
    assert g.chunk_box((2**40, 7)) == ((2**40, 21), (5, 3))
    assert g.codec_shapes(np.array([[2**40 - 1, 0], [2**40, 1]])).tolist() == [[1, 3], [5, 3]]
    assert g.covering_shape(shape) == shape
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 1 << 20 and time.perf_counter() - t0 < 1


@pytest.mark.parametrize(("config", "match"), [
    ({"chunk_shapes": [[1, 2]]}, "kind must be 'inline'"),
    ({"kind": "external", "chunk_shapes": [[1, 2]]}, "kind must be 'inline'"),
    ({"kind": "inline"}, "needs configuration.chunk_shapes"),
    ({"kind": "inline", "chunk_shapes": 4}, "must be an array"),
    ({"kind": "inline", "chunk_shapes": [[]]}, "non-empty array"),
    ({"kind": "inline", "chunk_shapes": [0]}, ">= 1"),
    ({"kind": "inline", "chunk_shapes": [[3, -1]]}, ">= 1"),
    ({"kind": "inline", "chunk_shapes": [True]}, "positive integer or a non-empty array"),
    ({"kind": "inline", "chunk_shapes": [[2.5]]}, "integers"),
    ({"kind": "inline", "chunk_shapes": [[[3]]]}, r"\[length, count\]"),
    ({"kind": "inline", "chunk_shapes": [[[3, 1, 1]]]}, r"\[length, count\]"),
    ({"kind": "inline", "chunk_shapes": [[[3, 0]]]}, ">= 1"),
    ({"kind": "inline", "chunk_shapes": [[[0, 3]]]}, ">= 1"),
    ({"kind": "inline", "chunk_shapes": [[[2**40, 2**30]]]}, "more than 2\\*\\*63"),
    ({"kind": "inline", "chunk_shapes": ["4"]}, "positive integer or a non-empty array"),
    ({"kind": "inline", "chunk_shapes": [[1]], "extra": 1}, "unknown configuration members"),
])
def test_malformed_json_is_a_metadata_error(config, match):
    with pytest.raises(MetadataError, match=match):
        parse_chunk_grid({"name": "rectilinear", "configuration": config})


def _doc(chunk_shapes, shape, codecs=None):
    return {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "uint16", "fill_value": 0,
            "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": chunk_shapes}},
            "chunk_key_encoding": {"name": "default"},
            "codecs": codecs or [{"name": "bytes", "configuration": {"endian": "little"}}]}


def test_array_metadata_reads_and_writes_it():
    meta = ArrayMetadata.from_json(_doc([[5, 10, 8], 4], [23, 17]))
    assert isinstance(meta.chunk_grid, RectilinearChunkGrid)
    assert meta.to_json()["chunk_grid"] == _doc([[5, 10, 8], 4], [23, 17])["chunk_grid"]
    assert meta.chunks == (10, 4)  # the longest edges: what one chunk's buffers hold at most
    assert meta.nchunks() == 3 * 5


@pytest.mark.parametrize(("chunk_shapes", "shape", "match"), [
    ([[5, 10], 4], [23, 17], "add up to 15, less than the array's 23"),
    ([[5, 10, 8]], [23, 17], "dimensions"),
])
def test_array_metadata_checks_the_grid_against_the_shape(chunk_shapes, shape, match):
    with pytest.raises(MetadataError, match=match):
        ArrayMetadata.from_json(_doc(chunk_shapes, shape))


def test_every_edge_is_checked_against_the_codecs():
    """A sharding codec's inner chunks must divide every shard edge (not only the longest)."""
    sharding = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 4], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]
    ArrayMetadata.from_json(_doc([[8, 12, 4], 8], [24, 16], sharding))
    with pytest.raises(MetadataError, match="evenly divide"):
        ArrayMetadata.from_json(_doc([[8, 6, 12], 8], [24, 16], sharding))
