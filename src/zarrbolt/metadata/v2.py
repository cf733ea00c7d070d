"""Zarr v2 metadata (``.zarray``, ``.zgroup``, ``.zattrs``; the v2 storage specification).

A v2 array document becomes :class:`V2ArrayMetadata`, a subclass of
:class:`~zarrbolt.metadata.nodes.ArrayMetadata` that the rest of zarrbolt uses unchanged: its
data type is the v3 one of the same values, its chunk keys are v2's (``"0.0"``, ``"0/0"``, ``"0"``
for a 0-d array) and its codec chain (``bound_codecs``) is the v2 pipeline in v3 terms::

    [transpose (order "F")] + filters + bytes(endian of the dtype) + compressor

(an object array's ``vlen-utf8`` / ``vlen-bytes`` filter is the array -> bytes step instead of
``bytes``).  ``to_json`` writes the ``.zarray`` document back with everything it understood kept
as it was read (codec configurations, ``dimension_separator``, a null fill value, unknown keys);
the attributes live in ``.zattrs`` (:func:`v2_documents`).

Errors name the document (``'a/b/.zarray'``) and the member."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import MetadataError
from .chunk_key import V2ChunkKeyEncoding
from .chunk_grid import RegularChunkGrid
from .nodes import ArrayMetadata, GroupMetadata
from .v2_dtypes import (
    byte_order,
    data_type_for,
    parse_v2_dtype,
    parse_v2_fill_value,
    v2_dtype_to_json,
    v2_fill_value_to_json,
)

ZARRAY = ".zarray"
ZGROUP = ".zgroup"
ZATTRS = ".zattrs"
V2_KEYS = (ZARRAY, ZGROUP, ZATTRS)
_ARRAY_MEMBERS = ("zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value", "order", "filters",
                  "dimension_separator")
_REQUIRED = ("zarr_format", "shape", "chunks", "dtype", "fill_value", "order")


# ---------------------------------------------------------------------------- documents
def load_json(raw: Any, key: str) -> Any:
    """Parse the JSON document stored under ``key`` (NaN / Infinity literals read as floats)."""
    try:
        text = raw if isinstance(raw, str) else bytes(raw).decode("utf-8")
        return json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise MetadataError(f"{key!r} is not valid JSON: {e}") from None


def _check_zarr_format(doc: Any, key: str) -> None:
    if not isinstance(doc, dict):
        raise MetadataError(f"{key!r} must hold a JSON object, got {type(doc).__name__}")
    if "zarr_format" not in doc:
        raise MetadataError(f"{key!r} has no 'zarr_format'")
    zf = doc["zarr_format"]
    if isinstance(zf, bool) or zf != 2:
        raise MetadataError(f"{key!r}: zarr_format must be 2, got {zf!r}")


def _dims(obj: Any, key: str, member: str, minimum: int) -> tuple[int, ...]:
    if not isinstance(obj, list):
        raise MetadataError(f"{key!r}: {member!r} must be a list of integers, got {obj!r}")
    for v in obj:
        if isinstance(v, bool) or not isinstance(v, int):
            raise MetadataError(f"{key!r}: {member!r} must contain integers, got {v!r}")
        if v < minimum or v >= 2**63:
            raise MetadataError(f"{key!r}: {member!r} must contain integers >= {minimum}, got {v}")
    return tuple(obj)


def _object_codec(filters: Any, compressor: Any, dtype: Any = None) -> str | None:
    """The id of the codec that makes an object array's items bytes: an object codec (vlen-utf8,
    ...), else a ``categorize`` filter of object items (text labels to integer codes).  None for
    an array of fixed-size items (``dtype`` not ``O``: there numcodecs' ``pickle`` is a filter
    like any other)."""
    from ..codecs.v2_ids import is_object_codec

    if isinstance(dtype, np.dtype) and not dtype.hasobject:
        return None

    for f in (*(filters or ()), compressor):
        if is_object_codec(f):
            cid: str = f["id"]
            return cid
    for f in filters or ():
        if isinstance(f, dict) and f.get("id") == "categorize" and f.get("dtype") in ("|O", "O"):
            return "categorize"
    return None


def parse_attributes_doc(raw: Any, key: str) -> dict[str, Any]:
    """A ``.zattrs`` document (bytes or parsed JSON): a JSON object."""
    doc = load_json(raw, key) if isinstance(raw, (bytes, bytearray, memoryview, str)) else raw
    if not isinstance(doc, dict):
        raise MetadataError(f"{key!r} must hold a JSON object, got {type(doc).__name__}")
    return doc


def _native_members(conf: dict[str, Any], big: bool, where: str) -> dict[str, Any]:
    """A v2 filter's ``dtype`` / ``astype`` members in native byte order (the chain's arrays are
    native; the bytes codec writes the array's byte order), refusing byte orders that disagree
    with the array's: numcodecs reinterprets the chunk's bytes as the filter's type."""
    out = dict(conf)
    for m in ("dtype", "astype"):
        v = conf.get(m)
        if not isinstance(v, str) or not v or v[0] not in "<>":
            continue
        try:
            dt = np.dtype(v)
        except (TypeError, ValueError, SyntaxError):  # (numpy parses comma strings as Python)
            raise MetadataError(f"{where}: {m} {v!r} is not a numpy data type") from None
        if dt.itemsize > 1 and (v[0] == ">") != big:
            raise MetadataError(f"{where}: {m} {v!r} has a byte order other than the array's")
        out[m] = dt.newbyteorder("=").str
    return out


def _chain(meta: V2ArrayMetadata, data_type: Any, fill: Any, ocodec: str | None) -> tuple[Any, ...]:
    """The v2 pipeline as a zarrbolt codec chain: [transpose] + array filters + bytes (or the
    object codec) + bytes filters + compressor."""
    from ..codecs.abc import ChunkSpec
    from ..codecs.bytes_codec import BytesCodec
    from ..codecs.transpose import TransposeCodec
    from ..codecs.v2_ids import codec_from_v2

    key, ndim, dt = meta.key, len(meta.shape), meta.storage_dtype
    endian = byte_order(dt, f"{key!r} dtype")
    big = endian == "big"
    aa: list[Any] = []
    if meta.order == "F" and ndim > 1:
        aa.append(TransposeCodec(tuple(range(ndim - 1, -1, -1))))
    spec = ChunkSpec(tuple(meta.chunk_grid.chunk_shape), data_type, fill)
    for c in aa:
        spec = c.resolve(spec)
    ab: Any = None
    bb: list[Any] = []
    for i, conf in enumerate(meta.filters or ()):
        where = f"{key!r} filters[{i}]"
        itemsize = spec.dtype.itemsize if ab is None and not bb else 1
        codec = codec_from_v2(_native_members(conf, big, where) if isinstance(conf, dict) else conf,
                              itemsize=itemsize, where=where)
        if codec.kind == "array_to_array":
            if ab is not None or bb:
                raise MetadataError(f"{where}: the array filter {conf['id']!r} after a bytes filter is not supported")
            try:
                view = _reinterpreted(conf, spec)
                if view is not None:  # numcodecs takes the chunk's bytes as the filter's dtype
                    spec = view.resolve(spec)
                    aa.append(view)
                spec = codec.resolve(spec)
            except MetadataError as e:
                raise MetadataError(f"{where}: {e}") from None
            aa.append(codec)
        elif codec.kind == "array_to_bytes":
            if ab is not None or bb:
                raise MetadataError(f"{where}: the object codec {conf['id']!r} must be the first bytes filter")
            ab = codec
        else:
            if ab is None:
                ab = _bytes_codec(BytesCodec, spec, endian)
            bb.append(_typed_input(codec, spec, endian, meta, aa) if not bb and ab.name == "bytes" else codec)
    if ab is None:
        ab = _bytes_codec(BytesCodec, spec, endian)
    if meta.compressor is not None:
        first = ab.name == "bytes" and not bb
        codec = codec_from_v2(meta.compressor, itemsize=spec.dtype.itemsize if first else 1,
                              where=f"{key!r} compressor")
        bb.append(_typed_input(codec, spec, endian, meta, aa) if first else codec)
    if ocodec not in (None, "categorize") and getattr(ab, "name", None) != ocodec:
        raise MetadataError(f"{key!r}: the object codec {ocodec!r} must be a filter of this object array")
    return (*aa, ab, *bb)


def _typed_input(codec: Any, spec: Any, endian: str | None, meta: V2ArrayMetadata, aa: list[Any]) -> Any:
    """A codec numcodecs runs, right after the bytes step, given the chunk as zarr-python's v2
    pipeline gives it: an array of the stored type, of the chunk's shape (``order`` "F": its
    transpose; after an array filter: 1-d, as numcodecs' filters return it)."""
    if not hasattr(codec, "with_typed_input"):
        return codec
    dt = spec.dtype.numpy_dtype
    if dt.itemsize > 1 and endian is not None:
        dt = dt.newbyteorder(">" if endian == "big" else "<")
    filtered = any(c.name != "transpose" for c in aa)
    typed = codec.with_typed_input(dt, transposed=meta.order == "F" and not filtered)
    if filtered:
        typed.flat = True
    return typed


def _reinterpreted(conf: Any, spec: Any) -> Any:
    """The codec taking the chunk's bytes as the type a v2 filter names (its ``dtype``; astype's
    ``decode_dtype``) when that differs from the type of the data it receives: numcodecs' filters
    view their input as that type, and zarr-python views the decoded chunk as the array's type."""
    from ..codecs.numcodecs.filters import ReinterpretCodec

    if not isinstance(conf, dict):
        return None
    declared = conf.get("decode_dtype" if conf.get("id") == "astype" else "dtype")
    if not isinstance(declared, str) or conf.get("id") == "categorize":
        return None
    try:
        dt = np.dtype(declared).newbyteorder("=")
    except (TypeError, ValueError, SyntaxError):
        return None  # (the filter itself names the problem)
    src = spec.dtype.numpy_dtype
    if dt == src or dt.hasobject or dt.kind not in "biuf" or src.hasobject:
        return None
    return ReinterpretCodec(dt)


def _bytes_codec(cls: Any, spec: Any, endian: str | None) -> Any:
    """The bytes codec: the stored dtype's byte order, none where the bytes do not depend on it."""
    dt = spec.dtype
    if dt.itemsize == 1 or dt.kind == "raw" or getattr(dt, "swap_unit", 0) == 1:
        return cls(None)
    return cls(endian or "little")


@dataclass(frozen=True, eq=False)
class V2ArrayMetadata(ArrayMetadata):
    """A ``.zarray`` document as zarrbolt's array metadata (see the module's docstring).

    ``storage_dtype``: the numpy dtype as stored (byte order, structured fields, ``O``);
    ``filters`` / ``compressor``: the numcodecs configurations as read or to be written;
    ``fill_value_null``: the document's fill value is null (chunks not stored read as the data
    type's default, as zarr-python reads them); ``key``: the document's store key, for errors."""

    storage_dtype: Any = None
    order: str = "C"
    filters: tuple[dict[str, Any], ...] | None = None
    compressor: dict[str, Any] | None = None
    fill_value_null: bool = False
    empty_filters: bool = False
    key: str = field(default=ZARRAY, repr=False)

    zarr_format = 2

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        key = self.key
        if not isinstance(self.storage_dtype, np.dtype):
            raise MetadataError(f"{key!r}: storage_dtype must be a numpy dtype, got {self.storage_dtype!r}")
        if self.order not in ("C", "F"):
            raise MetadataError(f"{key!r}: 'order' must be 'C' or 'F', got {self.order!r}")
        if not isinstance(self.chunk_key_encoding, V2ChunkKeyEncoding):
            raise MetadataError(f"{key!r}: chunk keys of a v2 array are v2 keys")
        if self.filters is not None:
            set_(self, "filters", tuple(self.filters) or None)
        from ..codecs.v2_ids import check_known

        for i, conf in enumerate(self.filters or ()):
            check_known(conf, f"{key!r} filters[{i}]")
        if self.compressor is not None:
            check_known(self.compressor, f"{key!r} compressor")
        ocodec = _object_codec(self.filters, self.compressor, self.storage_dtype)
        dt = data_type_for(self.storage_dtype, ocodec, f"{key!r} dtype")
        set_(self, "data_type", dt)
        if self.fill_value_null:
            set_(self, "fill_value", None)
        fill = dt.normalize_fill_value(self.fill_value)
        set_(self, "fill_value", fill)
        set_(self, "chunk_grid", RegularChunkGrid(self.chunk_grid.chunk_shape))
        self.chunk_grid.validate(self.shape)
        set_(self, "codecs", _chain(self, dt, fill, ocodec))
        super().__post_init__()

    @classmethod
    def build(cls, *, shape: Any, chunks: Any, dtype: np.dtype, fill_value: Any, order: str = "C",
              filters: Any = None, compressor: Any = None, dimension_separator: str = ".",
              attributes: dict[str, Any] | None = None, extra: dict[str, Any] | None = None,
              key: str = ZARRAY, keep_empty_filters: bool = False) -> V2ArrayMetadata:
        """From the members of a ``.zarray`` (parsed: a numpy dtype, a fill value or None)."""
        return cls(
            shape=tuple(shape),
            data_type=None,  # type: ignore[arg-type]  # derived from storage_dtype
            chunk_grid=RegularChunkGrid(chunks),
            chunk_key_encoding=V2ChunkKeyEncoding(dimension_separator),
            fill_value=fill_value,
            codecs=(),
            attributes=dict(attributes or {}),
            extra=dict(extra or {}),
            storage_dtype=dtype,
            order=order,
            filters=tuple(filters) if filters else None,
            compressor=compressor,
            fill_value_null=fill_value is None,
            empty_filters=keep_empty_filters,
            key=key,
        )

    @property
    def dimension_separator(self) -> str:
        return self.chunk_key_encoding.separator

    @property
    def object_codec(self) -> str | None:
        return _object_codec(self.filters, self.compressor, self.storage_dtype)

    def to_json(self) -> dict[str, Any]:
        """The ``.zarray`` document (the attributes are ``.zattrs``'s: see :func:`v2_documents`)."""
        fv = None if self.fill_value_null else v2_fill_value_to_json(
            self.fill_value, self.storage_dtype, self.object_codec)
        filters = list(self.filters) if self.filters else ([] if self.empty_filters else None)
        d: dict[str, Any] = {
            "zarr_format": 2,
            "shape": list(self.shape),
            "chunks": list(self.chunks),
            "dtype": v2_dtype_to_json(self.storage_dtype),
            "fill_value": fv,
            "order": self.order,
            "filters": filters,
            "dimension_separator": self.dimension_separator,
            "compressor": self.compressor,
        }
        d.update(self.extra)
        return d

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, V2ArrayMetadata) and self.to_json() == other.to_json()
                and self.attributes == other.attributes)

    __hash__ = None


@dataclass(frozen=True, eq=False)
class V2GroupMetadata(GroupMetadata):
    """A ``.zgroup`` document and its ``.zattrs``."""

    zarr_format = 2

    def to_json(self) -> dict[str, Any]:
        """The ``.zgroup`` document."""
        return {"zarr_format": 2, **self.extra}

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, V2GroupMetadata) and self.to_json() == other.to_json()
                and self.attributes == other.attributes)

    __hash__ = None


def v2_documents(meta: V2ArrayMetadata | V2GroupMetadata) -> dict[str, dict[str, Any]]:
    """The documents of a v2 node by key suffix: ``.zarray`` or ``.zgroup``, and ``.zattrs``."""
    name = ZARRAY if isinstance(meta, V2ArrayMetadata) else ZGROUP
    return {name: meta.to_json(), ZATTRS: dict(meta.attributes)}


def dumps(doc: Any) -> bytes:
    try:
        return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=True).encode("utf-8")
    except (TypeError, ValueError) as e:
        raise MetadataError(f"metadata is not JSON-serialisable: {e}") from None


def parse_v2_array(doc: Any, attributes: dict[str, Any] | None = None, *, key: str = ZARRAY) -> V2ArrayMetadata:
    """A parsed ``.zarray`` document (``key`` names it in errors) and its attributes."""
    _check_zarr_format(doc, key)
    for m in _REQUIRED:
        if m not in doc:
            raise MetadataError(f"{key!r} is missing the mandatory member {m!r}")
    shape = _dims(doc["shape"], key, "shape", 0)
    chunks = _dims(doc["chunks"], key, "chunks", 1)
    if len(chunks) != len(shape):
        raise MetadataError(f"{key!r}: 'chunks' {list(chunks)} has {len(chunks)} dimensions, 'shape' {list(shape)} {len(shape)}")
    order = doc["order"]
    if order not in ("C", "F"):
        raise MetadataError(f"{key!r}: 'order' must be 'C' or 'F', got {order!r}")
    sep = doc.get("dimension_separator", ".")
    if sep not in (".", "/"):
        raise MetadataError(f"{key!r}: 'dimension_separator' must be '.' or '/', got {sep!r}")
    filters = doc.get("filters")
    if filters is not None and not isinstance(filters, list):
        raise MetadataError(f"{key!r}: 'filters' must be a list or null, got {filters!r}")
    compressor = doc.get("compressor")
    if compressor is not None and not isinstance(compressor, dict):
        raise MetadataError(f"{key!r}: 'compressor' must be an object or null, got {compressor!r}")
    dt = parse_v2_dtype(doc["dtype"], f"{key!r} dtype")
    ocodec = _object_codec(filters, compressor, dt)
    fv = doc["fill_value"]
    fill = None if fv is None else parse_v2_fill_value(fv, dt, ocodec, f"{key!r} fill_value")
    extra = {k: v for k, v in doc.items() if k not in _ARRAY_MEMBERS}
    return V2ArrayMetadata.build(
        shape=shape, chunks=chunks, dtype=dt, fill_value=fill, order=order, filters=filters or None,
        compressor=compressor, dimension_separator=sep, attributes=attributes or {}, extra=extra, key=key,
        keep_empty_filters=isinstance(filters, list) and not filters,
    )


def parse_v2_group(doc: Any, attributes: dict[str, Any] | None = None, *, key: str = ZGROUP) -> V2GroupMetadata:
    """A parsed ``.zgroup`` document and its attributes."""
    _check_zarr_format(doc, key)
    extra = {k: v for k, v in doc.items() if k != "zarr_format"}
    return V2GroupMetadata(attributes=attributes or {}, extra=extra)


def read_v2_node(get: Callable[[str], Any], path: str) -> V2ArrayMetadata | V2GroupMetadata | None:
    """The v2 node at ``path`` read through ``get(key) -> bytes | None``, or None when neither
    ``.zarray`` nor ``.zgroup`` exists there."""
    prefix = f"{path}/" if path else ""
    raw_array = get(prefix + ZARRAY)
    raw_group = get(prefix + ZGROUP) if raw_array is None else None
    if raw_array is None and raw_group is None:
        return None
    raw_attrs = get(prefix + ZATTRS)
    attrs = {} if raw_attrs is None else parse_attributes_doc(raw_attrs, prefix + ZATTRS)
    if raw_array is not None:
        key = prefix + ZARRAY
        return parse_v2_array(load_json(raw_array, key), attrs, key=key)
    key = prefix + ZGROUP
    return parse_v2_group(load_json(raw_group, key), attrs, key=key)


__all__ = [
    "V2ArrayMetadata",
    "V2GroupMetadata",
    "ZARRAY",
    "ZATTRS",
    "ZGROUP",
    "data_type_for",
    "parse_v2_array",
    "parse_v2_dtype",
    "parse_v2_fill_value",
    "parse_v2_group",
    "parse_pickled",
    "read_v2_node",
    "v2_documents",
    "v2_dtype_to_json",
    "v2_fill_value_to_json",
]


def parse_pickled(raw: Any, attributes: Any) -> V2ArrayMetadata | V2GroupMetadata:
    """A v2 node's metadata from its document (``.zarray`` or ``.zgroup`` bytes) and attributes."""
    doc = load_json(raw, "pickled v2 metadata")
    attrs = parse_attributes_doc(attributes if attributes is not None else {}, "pickled v2 attributes")
    if isinstance(doc, dict) and "dtype" in doc:
        return parse_v2_array(doc, attrs)
    return parse_v2_group(doc, attrs)
