"""Zarr v2 ``.zarray`` / ``.zgroup`` / ``.zattrs`` documents (zarrbolt.metadata.v2): dtype
strings and structured dtypes, fill values (base64, NaN strings, ...), compressor and filter
configurations (numcodecs ids), then opening the array and reading one element.

Input: the ``.zarray`` (or ``.zgroup`` when the first byte is odd) document, optionally followed
by a NUL byte and the ``.zattrs`` document.  Oracle: a parsed node written back as v2 documents
parses to equal metadata."""

from __future__ import annotations

import math

import common
import zarrbolt
from zarrbolt.metadata.v2 import V2ArrayMetadata, read_v2_node, v2_documents
from zarrbolt.storage import MemoryStore

MAX_ELEMENTS = 1 << 16


def one_input(data: bytes) -> None:
    if not data:
        return
    doc, _, attrs = data[1:].partition(b"\x00")
    keys = {(".zgroup" if data[0] & 1 else ".zarray"): doc}
    if data[0] & 2:
        keys[".zattrs"] = attrs
    meta = read_v2_node(keys.get, "")
    if meta is None:
        return
    docs = v2_documents(meta)
    again = read_v2_node(lambda k: zarrbolt.metadata.v2.dumps(docs[k]) if k in docs else None, "")
    common.check(again == meta, "metadata changed through v2_documents / parse")
    if isinstance(meta, V2ArrayMetadata):
        store = MemoryStore()
        for k, v in keys.items():
            store.set(k, v)
        arr = zarrbolt.open_array(store, mode="r", zarr_format=2)
        if arr.ndim and all(s > 0 for s in arr.shape) and math.prod(arr.chunks) <= MAX_ELEMENTS:
            arr[(0,) * arr.ndim]


if __name__ == "__main__":
    common.main(one_input)
