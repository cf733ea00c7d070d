"""Creating Zarr v2 arrays (``create_array(..., zarr_format=2)``): zarr-python 3's arguments for a
v2 array turned into a ``.zarray`` document.

Filters and the compressor are given as numcodecs codecs (objects with ``get_config``), their
``{"id": ...}`` configurations, or zarrbolt codecs that have a v2 form; ``order`` is "C" or "F";
``dimension_separator`` (or ``chunk_key_encoding={"name": "v2", "separator": ...}``) is "." or
"/".  ``dtype=str`` / ``bytes`` make object arrays with the ``vlen-utf8`` / ``vlen-bytes`` filter.
The default compressor is zarr-python's: ``{"id": "zstd", "level": 0}``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import MetadataError

if TYPE_CHECKING:
    from .array import Array

DEFAULT_COMPRESSOR = {"id": "zstd", "level": 0}


def _v2_codec(obj: Any) -> dict[str, Any]:
    """One user-given codec as a v2 configuration."""
    from .codecs import Codec, parse_codec
    from .codecs.v2_ids import codec_to_v2

    if not isinstance(obj, (Codec, dict, str)) and callable(getattr(obj, "get_config", None)):
        obj = obj.get_config()  # a numcodecs codec object
    if isinstance(obj, dict) and "id" in obj and "name" not in obj:
        conf = dict(obj)
    else:
        codec = parse_codec(obj)
        if codec is None:
            raise MetadataError(f"codec {obj!r} is not known")
        conf = codec_to_v2(codec)
    if conf.get("id") == "zstd" and conf.get("checksum") is False:
        del conf["checksum"]  # as zarr-python writes it (numcodecs' default)
    return conf


def _codec_list(obj: Any) -> list[dict[str, Any]]:
    if obj is None:
        return []
    return [_v2_codec(o) for o in (obj if isinstance(obj, (list, tuple)) else [obj])]


def _storage_dtype(dtype: Any) -> tuple[np.dtype, str | None]:
    """The stored numpy dtype and the object codec it needs (None for fixed-size types)."""
    from .metadata.dtypes import DataType

    if dtype is str or (isinstance(dtype, str) and dtype in ("str", "string")):
        return np.dtype("O"), "vlen-utf8"
    if dtype is bytes or (isinstance(dtype, str) and dtype == "bytes"):
        return np.dtype("O"), "vlen-bytes"
    if isinstance(dtype, DataType):
        if dtype.name in ("string", "bytes"):
            return np.dtype("O"), "vlen-utf8" if dtype.name == "string" else "vlen-bytes"
        dtype = dtype.numpy_dtype
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise MetadataError(f"not a data type: {dtype!r} ({e})") from None
    if dt.kind == "O":
        return dt, None  # the filters must name the object codec
    if dt.kind in "SUV" and dt.itemsize == 0:
        raise MetadataError(f"data type {dtype!r} has no length; give one (e.g. 'S8', 'U8')")
    if dt.byteorder == "=":
        dt = dt.newbyteorder("<" if np.little_endian else ">")
    return dt, None


def _separator(chunk_key_encoding: Any, dimension_separator: Any) -> str:
    sep = dimension_separator
    if chunk_key_encoding is not None:
        cke = dict(chunk_key_encoding) if isinstance(chunk_key_encoding, Mapping) else chunk_key_encoding
        if isinstance(cke, dict):
            if cke.get("name") != "v2":
                raise MetadataError(f"a Zarr v2 array takes the 'v2' chunk key encoding, got {cke!r}")
            cke_sep = (cke.get("configuration") or {}).get("separator", cke.get("separator", "."))
        else:
            if getattr(cke, "name", None) != "v2":
                raise MetadataError(f"a Zarr v2 array takes the 'v2' chunk key encoding, got {cke!r}")
            cke_sep = cke.separator
        if sep is not None and sep != cke_sep:
            raise MetadataError(f"dimension_separator {sep!r} contradicts chunk_key_encoding {cke!r}")
        sep = cke_sep
    sep = "." if sep is None else sep
    if sep not in (".", "/"):
        raise MetadataError(f"dimension_separator must be '.' or '/', got {sep!r}")
    return sep


def create_array_v2(store: Any, *, name: Any, shape: Any, dtype: Any, data: Any, chunks: Any, shards: Any,
                    filters: Any, compressors: Any, serializer: Any, codecs: Any, fill_value: Any, order: Any,
                    attributes: Any, chunk_key_encoding: Any, dimension_separator: Any, dimension_names: Any,
                    overwrite: bool, write_data: bool, storage_options: Any = None, config: Any = None) -> Array:
    """``create_array(..., zarr_format=2)`` (see the module's docstring)."""
    from .creation import _create_array_from_metadata, _normalize_chunks, _normalize_shape, _resolve
    from .metadata.v2 import V2ArrayMetadata
    from .node import check_json_attributes

    for what, value in (("shards", shards), ("codecs", codecs), ("dimension_names", dimension_names)):
        if value is not None:
            raise MetadataError(f"Zarr v2 arrays have no {what} (create a Zarr v3 array for them)")
    if not (isinstance(serializer, str) and serializer == "auto"):
        raise MetadataError("Zarr v2 arrays have no serializer: give filters and a compressor")
    if data is not None:
        data = np.asanyarray(data)
        shape = data.shape if shape is None else shape
        dtype = data.dtype if dtype is None else dtype
    if shape is None or dtype is None:
        raise MetadataError("create_array needs a shape and a dtype (or data)")
    order = "C" if order is None else order
    if order not in ("C", "F"):
        raise MetadataError(f"order must be 'C' or 'F', got {order!r}")
    shape_t = _normalize_shape(shape)
    dt, ocodec = _storage_dtype(dtype)
    chunk_shape = _normalize_chunks(chunks, shape_t, max(dt.itemsize, 1))
    flt = [] if filters is None or (isinstance(filters, str) and filters == "auto") else _codec_list(filters)
    if ocodec is not None and not any(f.get("id") == ocodec for f in flt):
        flt.insert(0, {"id": ocodec})
    if isinstance(compressors, str) and compressors == "auto":
        comp: Any = dict(DEFAULT_COMPRESSOR)
    else:
        comps = _codec_list(compressors)
        if len(comps) > 1:
            raise MetadataError(f"a Zarr v2 array has one compressor, got {len(comps)}")
        comp = comps[0] if comps else None
    attrs = dict(attributes or {})
    check_json_attributes(attrs)
    meta = V2ArrayMetadata.build(
        shape=shape_t, chunks=chunk_shape, dtype=dt, fill_value=None, order=order, filters=flt or None,
        compressor=comp, dimension_separator=_separator(chunk_key_encoding, dimension_separator),
        attributes=attrs,
    )
    # the fill value: the data type's default unless given (written out, as zarr-python does)
    meta = meta.evolve(fill_value=meta.data_type.normalize_fill_value(_fill_scalar(fill_value, dt)),
                       fill_value_null=False)
    from .array_config import ArrayConfig

    config = ArrayConfig.parse(config)  # checked before anything is written
    st, path = _resolve(store, "w" if overwrite else "a", name, storage_options)
    arr = _create_array_from_metadata(st, path, meta, overwrite=overwrite, config=config)
    if data is not None and write_data:
        arr[...] = data
    return arr


def _fill_scalar(value: Any, dt: np.dtype) -> Any:
    """A user's fill value for the stored type ``dt`` (strings for the fixed-length types)."""
    if value is None or dt.kind in "OV" or isinstance(value, np.generic):
        return value
    if dt.kind in "SUmM":
        try:
            return np.asarray(value, dtype=dt.newbyteorder("=") if dt.kind in "mMU" else dt)[()]
        except (TypeError, ValueError) as e:
            raise MetadataError(f"fill_value {value!r} is not a {dt.str} value ({e})") from None
    return value
