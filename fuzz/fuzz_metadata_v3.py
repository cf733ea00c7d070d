"""Zarr v3 ``zarr.json`` documents (zarrbolt.metadata.nodes): JSON, data types, fill values,
chunk grids and key encodings, codec configurations (every registered codec's ``from_json``),
then opening the array and reading one element (fill value through the codec chain's resolve).

Input: the document bytes.  Oracles: metadata that parses serialises to a document that parses to
equal metadata."""

from __future__ import annotations

import math

import common
import zarrbolt
from zarrbolt.metadata.nodes import ArrayMetadata, parse_node_metadata
from zarrbolt.storage import MemoryStore

MAX_ELEMENTS = 1 << 16


def read_one(store: MemoryStore, meta: ArrayMetadata) -> None:
    """Open the array and read its first element (a missing chunk: the fill value)."""
    arr = zarrbolt.open_array(store, mode="r")
    if arr.ndim and all(s > 0 for s in arr.shape) and math.prod(arr.chunks) <= MAX_ELEMENTS:
        arr[(0,) * arr.ndim]


def one_input(data: bytes) -> None:
    meta = parse_node_metadata(data)
    again = parse_node_metadata(meta.to_bytes())
    common.check(again == meta, "metadata changed through to_bytes / parse")
    if isinstance(meta, ArrayMetadata):
        store = MemoryStore()
        store.set("zarr.json", data)
        read_one(store, meta)


if __name__ == "__main__":
    common.main(one_input)
