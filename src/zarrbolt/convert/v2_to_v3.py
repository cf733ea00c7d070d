"""Converting a Zarr v2 hierarchy to Zarr v3 (:func:`migrate`): the one place zarrbolt writes v3
metadata for v2 data, and only when asked.

Each v2 node gets a ``zarr.json``: a group keeps its attributes; an array keeps its shape, chunks,
data type, fill value (a null one becomes the data type's default, which is what readers filled
with), attributes, and its v2 codec pipeline as the equivalent v3 chain (``[transpose] + filters +
bytes + compressor``, the codecs zarrbolt already uses to read it).  Every v2 codec zarrbolt reads
has a v3 form, so chunk bytes are never re-encoded: chunks keep their keys (the v3 ``v2`` chunk key
encoding, same separator) or, with ``chunk_key_encoding="default"``, are renamed to ``c/0/0``
keys.  xarray's ``_ARRAY_DIMENSIONS`` attribute becomes ``dimension_names``, and the fill value of
an xarray array its ``_FillValue`` attribute (what xarray masks by in v3).  A group with
consolidated metadata (``.zmetadata``) gets v3 consolidated metadata; in place, the ``.zmetadata``
objects go with the other v2 documents."""

from __future__ import annotations

import base64
import struct
from typing import Any

from ..errors import ContainsArrayError, ContainsGroupError, MetadataError, NodeNotFoundError
from ..metadata import ArrayMetadata, GroupMetadata
from ..metadata.chunk_key import DefaultChunkKeyEncoding
from ..metadata.consolidated import ZMETADATA
from ..metadata.v2 import V2_KEYS, V2ArrayMetadata
from ..node import load_metadata, meta_key, node_exists
from ..storage import Store


def _dimension_names(attrs: dict[str, Any], ndim: int) -> Any:
    dims = attrs.get("_ARRAY_DIMENSIONS")
    if isinstance(dims, list) and len(dims) == ndim and all(isinstance(d, str) for d in dims):
        del attrs["_ARRAY_DIMENSIONS"]
        return tuple(dims)
    return None


def _xarray_fill_value(meta: V2ArrayMetadata, attrs: dict[str, Any]) -> None:
    """xarray masks a v2 array's values equal to its fill value (``_FillValue`` is the fill value
    in v2) but a v3 array's only by a ``_FillValue`` attribute: an xarray array (one with
    ``_ARRAY_DIMENSIONS``) with a fill value gets that attribute, in xarray's encoding, so its
    missing values stay missing."""
    if "_ARRAY_DIMENSIONS" not in attrs or "_FillValue" in attrs or meta.fill_value_null:
        return
    fv, kind = meta.fill_value, meta.storage_dtype.kind
    if kind == "f":
        attrs["_FillValue"] = base64.standard_b64encode(struct.pack("<d", float(fv))).decode()
    elif kind == "c":
        attrs["_FillValue"] = [base64.standard_b64encode(struct.pack("<d", float(x))).decode()
                               for x in (complex(fv).real, complex(fv).imag)]
    elif kind in "iu":
        attrs["_FillValue"] = int(fv)
    elif kind == "b":
        attrs["_FillValue"] = bool(fv)
    elif kind == "S":
        attrs["_FillValue"] = base64.standard_b64encode(bytes(fv).rstrip(b"\0")).decode()
    elif kind == "U" or (kind == "O" and meta.object_codec == "vlen-utf8"):
        attrs["_FillValue"] = str(fv)


def v3_metadata(meta: Any, chunk_key_encoding: str = "v2") -> ArrayMetadata | GroupMetadata:
    """The v3 metadata of a v2 node's (attributes included)."""
    attrs = dict(meta.attributes)
    if not isinstance(meta, V2ArrayMetadata):
        return GroupMetadata(attributes=attrs)
    if chunk_key_encoding not in ("v2", "default"):
        raise MetadataError(f"chunk_key_encoding must be 'v2' or 'default', got {chunk_key_encoding!r}")
    from ..codecs.chain import CodecChain

    codecs = tuple(c.with_array_dtype(CodecChain(meta.codecs).bind(meta.chunk_spec()).ab_spec.dtype.itemsize)
                   if hasattr(c, "with_array_dtype") else c for c in meta.codecs)
    _xarray_fill_value(meta, attrs)
    cke = meta.chunk_key_encoding if chunk_key_encoding == "v2" else DefaultChunkKeyEncoding("/")
    return ArrayMetadata(
        shape=meta.shape, data_type=meta.data_type, chunk_grid=meta.chunk_grid, chunk_key_encoding=cke,
        fill_value=meta.fill_value, codecs=codecs, attributes=attrs,
        dimension_names=_dimension_names(attrs, len(meta.shape)),
    )


def _children(store: Store, path: str) -> list[str]:
    prefix = f"{path}/" if path else ""
    out = []
    for entry in store.list_dir(prefix):
        if entry.endswith("/"):
            child = prefix + entry[len(prefix):].rstrip("/")
            if node_exists(store, child):
                out.append(child)
    return sorted(out)


def _chunk_keys(store: Store, path: str, meta: V2ArrayMetadata) -> list[tuple[str, tuple[int, ...]]]:
    prefix = f"{path}/" if path else ""
    out = []
    for key in store.list_prefix(prefix):
        rel = key[len(prefix):]
        if rel in V2_KEYS:
            continue
        try:
            coords = meta.chunk_key_encoding.decode_chunk_key(rel)
        except (MetadataError, ValueError):
            continue
        if len(coords) == max(len(meta.shape), 1) and (meta.shape or coords == (0,)):
            out.append((key, coords))
    return out


def _migrate_node(src: Store, sp: str, dst: Store, dp: str, cke: str, in_place: bool) -> None:
    meta = load_metadata(src, sp, zarr_format=2)
    if meta is None:
        raise NodeNotFoundError(f"no Zarr v2 array or group at path {sp!r} in {src!r}")
    new = v3_metadata(meta, cke)
    if not in_place:
        existing = load_metadata(dst, dp)
        if existing is not None:
            err = ContainsArrayError if isinstance(existing, ArrayMetadata) else ContainsGroupError
            raise err(f"a node already exists at path {dp!r} in {dst!r}")
    if isinstance(meta, V2ArrayMetadata):
        assert isinstance(new, ArrayMetadata)
        dprefix = f"{dp}/" if dp else ""
        for key, coords in _chunk_keys(src, sp, meta):
            new_key = dprefix + new.chunk_key_encoding.encode_chunk_key(coords if meta.shape else ())
            if in_place and new_key == key:
                continue
            value = src.get(key)
            if value is not None:
                dst.set(new_key, value)
                if in_place:
                    src.erase(key)
    else:
        for child in _children(src, sp):
            name = child.rsplit("/", 1)[-1]
            _migrate_node(src, child, dst, f"{dp}/{name}" if dp else name, cke, in_place)
    dst.set(meta_key(dp), new.to_bytes())
    if in_place:
        prefix = f"{sp}/" if sp else ""
        for name in (*V2_KEYS, ZMETADATA):  # a v2 .zmetadata describes the v2 documents: gone too
            if src.exists(prefix + name):
                src.erase(prefix + name)


def migrate(source: Any, dest: Any = None, *, path: str | None = None, dest_path: str | None = None,
            chunk_key_encoding: str = "v2") -> Any:
    """Convert the Zarr v2 array or group (with everything below it) at ``path`` of ``source`` to
    Zarr v3: in place when ``dest`` is None (``zarr.json`` written, ``.zarray`` / ``.zgroup`` /
    ``.zattrs`` removed), else into ``dest`` (chunks copied byte for byte; ``source`` unchanged).
    ``chunk_key_encoding``: ``"v2"`` keeps the chunk keys, ``"default"`` renames them to v3's
    ``c/...`` keys.  Returns the v3 node, opened.

    Parameters
    ----------
    source
        The store (or store path / URL) holding the Zarr v2 node.
    dest
        The store to write the Zarr v3 node into (None: ``source``, in place).
    path
        The node's path in ``source``.
    dest_path
        Its path in ``dest`` (None: ``path``).
    chunk_key_encoding
        ``"v2"`` or ``"default"``.

    Returns
    -------
    Array or Group

    Raises
    ------
    NodeNotFoundError
        When there is no Zarr v2 node at ``path``.
    """
    from ..api.location import locate
    from ..api.opening import open as open_node

    src, sp = locate(source, "r" if dest is not None else "r+", path)
    if dest is None:
        dst, dp = src, sp
    else:
        dst, dp = locate(dest, "a", dest_path)
    was_consolidated = src.exists(f"{sp}/{ZMETADATA}" if sp else ZMETADATA)
    _migrate_node(src, sp, dst, dp, chunk_key_encoding, in_place=dest is None)
    if was_consolidated:  # the v3 group gets v3 consolidated metadata (inline in its zarr.json)
        from ..api.opening import consolidate_metadata

        return consolidate_metadata(dst, path=dp)
    return open_node(dst, path=dp, mode="r+", zarr_format=3)
