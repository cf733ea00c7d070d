"""Creating arrays from zarr-python 3's user arguments: :func:`create_array` (a Zarr v3 array, or
with ``zarr_format=2`` a Zarr v2 one), zarr-python's legacy :func:`create`, and the inverse,
:func:`layout_settings` (the arguments that reproduce an array's layout).

User sugar (shapes as ints, chunks="auto" / -1, shards, the filters / serializer / compressors
shortcuts, numcodecs-style codec dicts and objects, zarr-python's codec objects, blosc's numeric
shuffle and left-out typesize, ``dtype=str``) is turned here, and only here, into what the metadata says.  What both formats
take (the data and the shape and dtype it implies, the shape, the chunks, the attributes, where
the array is stored) is normalised by the one normaliser of the first section; each format then
builds its metadata document.  The rules themselves are checked once, by their owners: the
metadata (shape, chunk grid, dimension names) and the codecs (configuration, shard multiples).
This module adds no check of its own on top of theirs.

Below both the other entry points and :mod:`zarrbolt.group` (``Group.create_array``): it imports
neither."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..array import Array
from ..codecs import ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, Codec, parse_codecs
from ..codecs.registry import codecs_for_writing
from ..errors import ContainsArrayError, ContainsGroupError, MetadataError
from ..metadata import ArrayMetadata
from ..metadata.chunk_grid import ChunkGrid, RectilinearChunkGrid, RegularChunkGrid, parse_int_list
from ..metadata.chunk_key import DefaultChunkKeyEncoding, V2ChunkKeyEncoding, parse_chunk_key_encoding
from ..metadata.dtypes import DataType
from ..node import check_json_attributes, ensure_parent_groups, erase_node, load_metadata, save_metadata
from .location import locate

DEFAULT_COMPRESSOR_V2 = {"id": "zstd", "level": 0}  # zarr-python's default compressor of a v2 array


# ---------------------------------------------------------------------------- the user's arguments, both formats
def _with_data(data: Any, shape: Any, dtype: Any) -> tuple[Any, Any, Any]:
    """``data`` as an array, and the shape and dtype it implies where they are not given."""
    if data is None:
        return None, shape, dtype
    data = np.asanyarray(data)
    return data, data.shape if shape is None else shape, data.dtype if dtype is None else dtype


def normalize_shape(shape: Any) -> tuple[int, ...]:
    """A user's shape (an int or a sequence of ints) as the metadata's tuple; MetadataError when it
    is not one (the metadata's own rule, checked before the chunks use the shape)."""
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    try:
        out = tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise MetadataError(f"shape must be an int or a sequence of ints, got {shape!r}") from None
    for _s, orig in zip(out, shape):
        if isinstance(orig, (bool, np.bool_)) or (isinstance(orig, float) and not float(orig).is_integer()):
            raise MetadataError(f"shape must hold integers, got {shape!r}")
    return parse_int_list(out, "shape", minimum=0)


def guess_chunks(shape: tuple[int, ...], itemsize: int, target_bytes: int = 1 << 20) -> tuple[int, ...]:
    """A chunk shape of about ``target_bytes`` (at most ~4 MiB), halving the largest dims first."""
    if not shape:
        return ()
    chunks = [max(1, s) for s in shape]
    while math.prod(chunks) * itemsize > 4 * target_bytes or (
        math.prod(chunks) * itemsize > target_bytes and max(chunks) > 1
    ):
        i = int(np.argmax(chunks))
        if chunks[i] == 1:
            break
        chunks[i] = math.ceil(chunks[i] / 2)
    return tuple(chunks)


def normalize_chunks(chunks: Any, shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """A user's chunks (``"auto"`` / None, an int for every dimension, a sequence with -1 for a
    whole dimension) as the chunk grid's shape, checked by the grid."""
    if chunks is None or (isinstance(chunks, str) and chunks == "auto"):
        return guess_chunks(shape, itemsize)
    if isinstance(chunks, bool):
        raise MetadataError(f"invalid chunks {chunks!r}")
    if isinstance(chunks, (int, np.integer)):
        chunks = (int(chunks),) * len(shape)
    try:
        out = [int(c) for c in chunks]
    except (TypeError, ValueError):
        raise MetadataError(f"chunks must be 'auto', an int or a sequence of ints, got {chunks!r}") from None
    if len(out) == len(shape):  # (a rank mismatch is the chunk grid's to report)
        # -1 means the full dimension (zarr-python convention); 0 for an empty dimension means 1
        out = [s if c == -1 else c for c, s in zip(out, shape)]
        out = [max(c, 1) if s == 0 and c == 0 else c for c, s in zip(out, shape)]
    grid = RegularChunkGrid(out)  # the grid checks the chunk sizes (before the codecs are bound to them)
    grid.validate(shape)
    return grid.chunk_shape


def _attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    attrs = dict(attributes or {})
    check_json_attributes(attrs)
    return attrs


def _store_new_array(store: Any, name: str | None, meta: Any, *, overwrite: bool, storage_options: Any,
                     config: Any) -> Array:
    """Write the metadata of a new array at ``name`` of ``store`` (replacing a node there only
    when ``overwrite``; missing parent groups are created) and open it."""
    st, path = locate(store, "w" if overwrite else "a", name, storage_options)
    if st.read_only:
        from ..errors import ReadOnlyError

        raise ReadOnlyError(f"cannot create an array in read-only {st!r}")
    existing = load_metadata(st, path)
    if existing is not None:
        if not overwrite:
            err = ContainsArrayError if isinstance(existing, ArrayMetadata) else ContainsGroupError
            raise err(f"a node already exists at path {path!r} in {st!r}")
        erase_node(st, path)
    ensure_parent_groups(st, path, meta.zarr_format)
    save_metadata(st, path, meta)
    return Array(st, path, meta, config=config)


# ---------------------------------------------------------------------------- Zarr v3
def _normalize_shards(shards: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shard shape from a sequence of ints, one int (every dimension) or ``{"shape": ...}``.

    That it is a grid of positive sizes, one per dimension, is the chunk grid's rule; that each size
    is a multiple of the inner chunk's is the sharding codec's."""
    if isinstance(shards, Mapping):
        if "shape" not in shards:
            raise MetadataError(f"shards must be a shape or {{'shape': ...}}, got {shards!r}")
        shards = shards["shape"]
    if isinstance(shards, (int, np.integer)) and not isinstance(shards, bool):
        shards = (int(shards),) * len(shape)
    try:
        return tuple(int(s) for s in shards)
    except (TypeError, ValueError):
        raise MetadataError(f"shards must be a sequence of ints, got {shards!r}") from None


def _listed_grid(chunks: Any, shape: tuple[int, ...]) -> ChunkGrid | None:
    """A ``rectilinear`` chunk grid when the user's chunks (or shards) list the edges of some
    dimension (a sequence there: e.g. ``[[10, 20, 34], 16]``; ints elsewhere are one size for the
    whole dimension), else None.  The grid checks the edges, and that they cover the shape."""
    if isinstance(chunks, Mapping):
        chunks = chunks.get("shape")
    if isinstance(chunks, (str, bytes)) or not isinstance(chunks, Sequence):
        return None
    if not any(isinstance(c, (Sequence, np.ndarray)) and not isinstance(c, (str, bytes)) for c in chunks):
        return None
    dims = [[int(e) for e in c] if isinstance(c, (Sequence, np.ndarray)) else c for c in chunks]
    grid = RectilinearChunkGrid(dims)
    grid.validate(shape)
    return grid


# numcodecs' (zarr v2's) numbering of blosc's shuffle, and what the blosc codec means when a user
# leaves a member out (zarr-python's defaults); typesize left out is the item size blosc sees.
_BLOSC_SHUFFLE_NUMBERS = {0: "noshuffle", 1: "shuffle", 2: "bitshuffle"}
_BLOSC_USER_DEFAULTS = {"cname": "zstd", "clevel": 5, "shuffle": "noshuffle"}


def _numcodecs_name(codec_id: Any) -> Any:
    """The v3 codec name of a numcodecs codec id (``"zstd"``, else ``"numcodecs.<id>"`` when known)."""
    from ..codecs import registered_codecs

    known = registered_codecs()
    if isinstance(codec_id, str) and codec_id not in known and f"numcodecs.{codec_id}" in known:
        return f"numcodecs.{codec_id}"
    return codec_id


def _blosc_configuration(conf: dict[str, Any]) -> dict[str, Any]:
    conf = {**_BLOSC_USER_DEFAULTS, **conf}
    shuffle = conf["shuffle"]
    if isinstance(shuffle, (int, np.integer)) and not isinstance(shuffle, bool) and shuffle in _BLOSC_SHUFFLE_NUMBERS:
        conf["shuffle"] = _BLOSC_SHUFFLE_NUMBERS[int(shuffle)]
    return conf


# a blosc setting zarr-python's BloscCodec leaves to the array ("tunable"): set by _with_typesize
_TUNED_BY_ITEMSIZE = "zarrbolt:tuned-by-itemsize"


def _object_json(obj: Any) -> Any:
    """A codec object of another library as JSON: a numcodecs codec's ``get_config()``, a
    zarr-python codec's (``zarr.codecs.*``, ``numcodecs.zarr3.*``) ``to_dict()``; anything else
    unchanged."""
    if isinstance(obj, (Codec, dict, str)):
        return obj
    if callable(getattr(obj, "get_config", None)):
        return obj.get_config()
    if callable(getattr(obj, "to_dict", None)):
        return obj.to_dict()
    return obj


def _zarr_codec_json(obj: Any) -> Any:
    """:func:`_object_json`, with the settings a zarr-python codec leaves to the array (blosc's
    ``typesize`` and ``shuffle`` when not given) tuned as zarr-python tunes them."""
    doc = _object_json(obj)
    tunable = getattr(obj, "_tunable_attrs", ()) if doc is not obj else ()
    if isinstance(doc, dict) and tunable and isinstance(doc.get("configuration"), dict):
        conf = {k: v for k, v in doc["configuration"].items() if k not in tunable}
        if "shuffle" in tunable:
            conf["shuffle"] = _TUNED_BY_ITEMSIZE
        doc = {**doc, "configuration": conf}
    return doc


def _codec_json(obj: Any) -> Any:
    """One user-given codec spelled as the metadata spells it (Codec objects and anything that is
    not sugar pass unchanged: the codec registry parses and checks them)."""
    obj = _zarr_codec_json(obj)
    if isinstance(obj, dict) and "id" in obj and "name" not in obj:  # numcodecs-style dict
        obj = {"name": _numcodecs_name(obj["id"]), "configuration": {k: v for k, v in obj.items() if k != "id"}}
    if isinstance(obj, str) and obj == "blosc":
        obj = {"name": "blosc"}
    if isinstance(obj, dict) and obj.get("name") == "blosc" and isinstance(obj.get("configuration", {}), dict):
        obj = {**obj, "configuration": _blosc_configuration(obj.get("configuration", {}))}
    return obj


def _user_codecs(obj: Any) -> list[Any]:
    """``filters=`` / ``serializer=`` / ``compressors=`` (one codec or a list) as metadata JSON."""
    if obj is None:
        return []
    return [_codec_json(o) for o in (obj if isinstance(obj, (list, tuple)) else [obj])]


def _as_codec_list(obj: Any) -> list[Codec]:
    return list(parse_codecs(_user_codecs(obj)))


def _with_typesize(objs: list[Any], itemsize: Any) -> list[Any]:
    """Blosc codecs given as JSON without ``typesize`` get ``itemsize()`` (the spec wants it recorded)."""
    out = []
    for o in objs:
        if isinstance(o, dict) and o.get("name") == "blosc" and isinstance(o.get("configuration"), dict):
            if o["configuration"].get("typesize") is None:
                o = {**o, "configuration": {**o["configuration"], "typesize": itemsize()}}
            if o["configuration"].get("shuffle") == _TUNED_BY_ITEMSIZE:  # zarr-python's choice
                tuned = "bitshuffle" if o["configuration"]["typesize"] == 1 else "shuffle"
                o = {**o, "configuration": {**o["configuration"], "shuffle": tuned}}
        out.append(o)
    return out


def _default_compressors(dtype: DataType) -> list[Codec]:
    # zarr-python 3 writes zstd level 0 by default for v3 arrays
    return list(parse_codecs([{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]))


def _default_serializer(dtype: DataType) -> Codec:
    # zarr-python's: vlen codecs for variable-length types, no endian where the order is moot
    if dtype.kind == "string":
        return parse_codecs([{"name": "vlen-utf8", "configuration": {}}])[0]
    if dtype.kind == "vbytes":
        return parse_codecs([{"name": "vlen-bytes", "configuration": {}}])[0]
    if dtype.itemsize == 1 or dtype.swap_unit == 1:
        return parse_codecs(["bytes"])[0]
    return parse_codecs([{"name": "bytes", "configuration": {"endian": "little"}}])[0]


def _build_codecs(spec: Any, filters: Any, serializer: Any, compressors: Any, codecs: Any) -> tuple[Codec, ...]:
    """The codec chain from ``codecs=`` (the metadata's list, taken as it is) or the shortcuts."""
    if codecs is not None:
        if not isinstance(codecs, (list, tuple)):
            codecs = [codecs]
        objs = []
        for c in codecs:  # zarr-python's codec objects as their JSON, blosc's settings tuned to the items
            doc = _zarr_codec_json(c)
            objs.append(c if doc is c else _with_typesize([doc], lambda: spec.dtype.itemsize)[0])
        return parse_codecs(objs)
    dtype = spec.dtype
    flt = [] if (filters is None or (isinstance(filters, str) and filters == "auto")) else _as_codec_list(filters)
    for c in flt:
        if not isinstance(c, ArrayToArrayCodec):
            raise MetadataError(f"filters must be array->array codecs, got {c.name!r}")
    if isinstance(serializer, str) and serializer == "auto":
        ser = _default_serializer(dtype)
    else:
        sers = _as_codec_list(serializer)
        if len(sers) != 1 or not isinstance(sers[0], ArrayToBytesCodec):
            raise MetadataError(f"serializer must be one array->bytes codec, got {serializer!r}")
        ser = sers[0]
    if isinstance(compressors, str) and compressors == "auto":
        comp = _default_compressors(dtype)
    else:
        from ..codecs.chain import CodecChain

        def itemsize() -> int:  # of the data the compressors see
            return CodecChain((*flt, ser)).bind(spec).ab_spec.dtype.itemsize

        comp = list(parse_codecs(_with_typesize(_user_codecs(compressors), itemsize)))
    for c in comp:
        if not isinstance(c, BytesToBytesCodec):
            raise MetadataError(f"compressors must be bytes->bytes codecs, got {c.name!r}")
    return (*flt, ser, *comp)


def _complete_codecs(codecs: tuple[Codec, ...], spec: Any) -> tuple[Codec, ...]:
    """Fill in what the spec says must be recorded in the metadata but users may leave out of
    hand-built codec objects (blosc's typesize: the item size of the data the blosc codec sees)."""
    if not any(hasattr(c, "with_array_dtype") for c in codecs):
        return codecs
    from ..codecs.chain import CodecChain

    itemsize = CodecChain(codecs).bind(spec).ab_spec.dtype.itemsize
    return tuple(c.with_array_dtype(itemsize) if hasattr(c, "with_array_dtype") else c for c in codecs)


def _normalize_dimension_names(names: Any) -> Any:
    """Any iterable of names (a generator, a numpy array) as a tuple; the metadata checks them."""
    from collections.abc import Set as AbstractSet

    if names is None or isinstance(names, (str, Sequence, Mapping, AbstractSet)):
        return names
    try:
        return tuple(names)
    except TypeError:
        return names


def _v3_config(config: Any, order: str | None) -> Any:
    """The array config of a new v3 array, checked before anything is written.  zarr-python 3:
    for a v3 array ``order`` is the memory order of reads (the stored order is C; a transpose
    codec changes that), i.e. the array config's ``order``."""
    from ..array_config import ArrayConfig

    config = ArrayConfig.parse(config)
    if order is not None:
        if order not in ("C", "F"):
            raise MetadataError(f"order must be 'C' or 'F', got {order!r}")
        if config.order is not None and config.order != order:
            raise MetadataError(f"order={order!r} contradicts config order {config.order!r}")
        config = config.merged({"order": order})
    return config


def _v3_metadata(*, shape: Any, dtype: Any, chunks: Any, shards: Any, filters: Any, serializer: Any,
                 compressors: Any, codecs: Sequence[Any] | None, fill_value: Any, chunk_key_encoding: Any,
                 attributes: Mapping[str, Any] | None, dimension_names: Any) -> ArrayMetadata:
    """The metadata of a new v3 array from :func:`create_array`'s settings (checked)."""
    if shape is None:
        raise MetadataError("create_array needs a shape (or data)")
    if dtype is None:
        raise MetadataError("create_array needs a dtype (or data)")
    shape_t = normalize_shape(shape)
    dt = dtype if isinstance(dtype, DataType) else DataType.from_numpy(dtype)
    grid = _listed_grid(shards if shards is not None else chunks, shape_t)
    if grid is not None and shards is None:  # chunks that differ in shape: the codecs see the longest
        chunk_shape = grid.max_chunk_shape
    else:
        chunk_shape = normalize_chunks(chunks, shape_t, dt.itemsize)
    fill = dt.normalize_fill_value(fill_value)
    if chunk_key_encoding is None:
        cke: DefaultChunkKeyEncoding | V2ChunkKeyEncoding = DefaultChunkKeyEncoding(separator="/")
    else:
        cke = parse_chunk_key_encoding(dict(chunk_key_encoding) if isinstance(chunk_key_encoding, Mapping) else chunk_key_encoding)
    attrs = _attributes(attributes)
    from ..codecs.abc import ChunkSpec

    spec = ChunkSpec(chunk_shape, dt, fill)
    chain = codecs_for_writing(_complete_codecs(_build_codecs(spec, filters, serializer, compressors, codecs), spec))
    if shards is not None:
        from ..codecs.sharding import ShardingCodec

        if grid is None:
            grid = RegularChunkGrid(_normalize_shards(shards, shape_t))
        chain = (ShardingCodec(chunk_shape, chain),)
    elif grid is None:
        grid = RegularChunkGrid(chunk_shape)
    return ArrayMetadata(
        shape=shape_t,
        data_type=dt,
        chunk_grid=grid,
        chunk_key_encoding=cke,
        fill_value=fill,
        codecs=chain,
        attributes=attrs,
        dimension_names=_normalize_dimension_names(dimension_names),
    )


def _v3_array(*, shape: Any, dtype: Any, data: Any, order: str | None, config: Any, dimension_separator: Any,
              **settings: Any) -> tuple[ArrayMetadata, Any, Any]:
    """(metadata, array config, data) of a new Zarr v3 array; ``settings``: :func:`_v3_metadata`'s."""
    if dimension_separator is not None:
        raise MetadataError("dimension_separator is a Zarr v2 setting; v3 arrays take chunk_key_encoding")
    config = _v3_config(config, order)
    data, shape, dtype = _with_data(data, shape, dtype)
    return _v3_metadata(shape=shape, dtype=dtype, **settings), config, data


# ---------------------------------------------------------------------------- Zarr v2
# Filters and the compressor of a v2 array are given as numcodecs codecs (objects with
# ``get_config``), their ``{"id": ...}`` configurations, or zarrbolt codecs that have a v2 form;
# ``order`` is "C" or "F"; ``dimension_separator`` (or ``chunk_key_encoding={"name": "v2",
# "separator": ...}``) is "." or "/".  ``dtype=str`` / ``bytes`` make object arrays with the
# ``vlen-utf8`` / ``vlen-bytes`` filter.  The default compressor is zarr-python's.
def _v2_codec(obj: Any) -> dict[str, Any]:
    """One user-given codec as a v2 configuration."""
    import warnings

    from ..codecs import parse_codec
    from ..codecs.v2_ids import codec_to_v2, v2_for_writing
    from ..errors import MetadataNormalizedWarning

    obj = _object_json(obj)
    if isinstance(obj, dict) and "id" in obj and "name" not in obj:
        conf = dict(obj)
    else:
        codec = parse_codec(obj)
        if codec is None:
            raise MetadataError(f"codec {obj!r} is not known")
        conf = codec_to_v2(codec)
    if conf.get("id") == "zstd" and conf.get("checksum") is False:
        del conf["checksum"]  # as zarr-python writes it (numcodecs' default)
    conf, note = v2_for_writing(conf)
    if note is not None:
        warnings.warn(note, MetadataNormalizedWarning, stacklevel=5)
    return conf


def _v2_codec_list(obj: Any) -> list[dict[str, Any]]:
    if obj is None:
        return []
    return [_v2_codec(o) for o in (obj if isinstance(obj, (list, tuple)) else [obj])]


def _v2_storage_dtype(dtype: Any) -> tuple[np.dtype, str | None]:
    """The stored numpy dtype and the object codec it needs (None for fixed-size types)."""
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


def _v2_separator(chunk_key_encoding: Any, dimension_separator: Any) -> str:
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


def _v2_fill_scalar(value: Any, dt: np.dtype) -> Any:
    """A user's fill value for the stored type ``dt`` (strings for the fixed-length types)."""
    if value is None or dt.kind in "OV" or isinstance(value, np.generic):
        return value
    if dt.kind in "SUmM":
        try:
            return np.asarray(value, dtype=dt.newbyteorder("=") if dt.kind in "mMU" else dt)[()]
        except (TypeError, ValueError) as e:
            raise MetadataError(f"fill_value {value!r} is not a {dt.str} value ({e})") from None
    return value


def _v2_array(*, shape: Any, dtype: Any, data: Any, chunks: Any, shards: Any, filters: Any, compressors: Any,
              serializer: Any, codecs: Any, fill_value: Any, order: Any, attributes: Any, chunk_key_encoding: Any,
              dimension_separator: Any, dimension_names: Any, config: Any) -> tuple[Any, Any, Any]:
    """(metadata, array config, data) of a new Zarr v2 array (a ``.zarray`` document)."""
    from ..array_config import ArrayConfig
    from ..metadata.v2 import V2ArrayMetadata

    for what, value in (("shards", shards), ("codecs", codecs), ("dimension_names", dimension_names)):
        if value is not None:
            raise MetadataError(f"Zarr v2 arrays have no {what} (create a Zarr v3 array for them)")
    if not (isinstance(serializer, str) and serializer == "auto"):
        raise MetadataError("Zarr v2 arrays have no serializer: give filters and a compressor")
    data, shape, dtype = _with_data(data, shape, dtype)
    if shape is None or dtype is None:
        raise MetadataError("create_array needs a shape and a dtype (or data)")
    order = "C" if order is None else order
    if order not in ("C", "F"):
        raise MetadataError(f"order must be 'C' or 'F', got {order!r}")
    shape_t = normalize_shape(shape)
    dt, ocodec = _v2_storage_dtype(dtype)
    chunk_shape = normalize_chunks(chunks, shape_t, max(dt.itemsize, 1))
    flt = [] if filters is None or (isinstance(filters, str) and filters == "auto") else _v2_codec_list(filters)
    if ocodec is not None and not any(f.get("id") == ocodec for f in flt):
        flt.insert(0, {"id": ocodec})
    if isinstance(compressors, str) and compressors == "auto":
        comp: Any = dict(DEFAULT_COMPRESSOR_V2)
    else:
        comps = _v2_codec_list(compressors)
        if len(comps) > 1:
            raise MetadataError(f"a Zarr v2 array has one compressor, got {len(comps)}")
        comp = comps[0] if comps else None
    attrs = _attributes(attributes)
    meta = V2ArrayMetadata.build(
        shape=shape_t, chunks=chunk_shape, dtype=dt, fill_value=None, order=order, filters=flt or None,
        compressor=comp, dimension_separator=_v2_separator(chunk_key_encoding, dimension_separator),
        attributes=attrs,
    )
    # the fill value: the data type's default unless given (written out, as zarr-python does)
    meta = meta.evolve(fill_value=meta.data_type.normalize_fill_value(_v2_fill_scalar(fill_value, dt)),
                       fill_value_null=False)
    return meta, ArrayConfig.parse(config), data  # (the config checked before anything is written)


# ---------------------------------------------------------------------------- the entry points
def create_array(store: Any = None, *, name: str | None = None, shape: Any = None, dtype: Any = None,
                 data: Any = None, chunks: Any = "auto", shards: Any = None, filters: Any = "auto",
                 compressors: Any = "auto", compressor: Any = "auto", serializer: Any = "auto",
                 codecs: Sequence[Any] | None = None, fill_value: Any = None, order: str | None = None,
                 zarr_format: int | None = 3, attributes: Mapping[str, Any] | None = None,
                 chunk_key_encoding: Any = None, dimension_names: Any = None, storage_options: Any = None,
                 overwrite: bool = False, config: Any = None, write_data: bool = True,
                 dimension_separator: str | None = None) -> Array:
    """Create a Zarr v3 array (zarr-python 3's ``create_array``; ``codecs=[...]`` for a raw codec
    list; codecs as zarrbolt's codec objects, their JSON, or zarr-python's codec objects
    (``zarr.codecs.*``, ``zarr.codecs.numcodecs.*``, ``numcodecs.zarr3.*``), giving the metadata
    zarr-python writes for them), or with ``zarr_format=2`` a Zarr v2 array (filters and a
    compressor as numcodecs codecs or their ``{"id": ...}`` configurations; ``dtype=str`` / ``bytes`` for ``vlen-utf8`` /
    ``vlen-bytes`` object arrays; default compressor ``{"id": "zstd", "level": 0}``).

    Parameters
    ----------
    store
        Where the node lives: a :class:`~zarrbolt.Store`, a local path, a URL
        (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``memory://``; fsspec URLs) or None (a new
        :class:`~zarrbolt.MemoryStore`).
    name
        The array's path in the store ("" or None: the root).
    shape
        The shape (an int or a tuple of ints); taken from ``data`` when that is given.
    dtype
        A numpy dtype (or its spelling) or a Zarr data type name; taken from ``data`` when given.
    data
        Data to write into the new array (its shape and dtype are the array's unless given).
    chunks
        The chunk shape (of the inner chunks when ``shards`` is given); ``"auto"`` picks one.
        Listing the edges of a dimension (e.g. ``[[100, 200, 212], 64]``) makes chunks that
        differ in shape: the ``rectilinear`` chunk grid (an int there: one size for the whole
        dimension); the edges must add up to at least the shape.
    shards
        The shard shape (a multiple of ``chunks``): the chunks are stored in shards
        (``sharding_indexed``); None: no sharding.  Listing the edges of a dimension makes shards
        that differ in shape (the ``rectilinear`` grid; each edge a multiple of the chunk's).
    filters
        The array -> array codecs (``"auto"``: none).
    compressors, compressor
        The bytes -> bytes codecs (``"auto"``: zstd; None or ``()``: none); ``compressor`` is
        zarr-python 2's one-codec spelling.
    serializer
        The array -> bytes codec (``"auto"``: ``bytes``, little-endian; ``vlen-utf8`` for strings).
    codecs
        A whole codec list (JSON objects or codec instances) replacing filters, serializer and
        compressors.
    fill_value
        What reads return where no chunk is stored (None: the data type's default).
    order
        The memory order of reads (``"C"`` or ``"F"``); Zarr v2 stores it.
    zarr_format
        3, or 2 for a Zarr v2 array.
    attributes
        The array's attributes (JSON-serialisable).
    chunk_key_encoding
        ``"default"`` / ``"v2"`` or its JSON object (default ``c/``-prefixed, ``/``-separated keys).
    dimension_names
        One name (or None) per dimension.
    storage_options
        Options of the store a URL opens (credentials, endpoint, ...).
    overwrite
        Replace a node already at ``name``.
    config
        The array's runtime options (:class:`ArrayConfig` or a dict).
    write_data
        Write ``data`` (False: only its shape and dtype are used).
    dimension_separator
        Zarr v2's chunk key separator (``"."`` or ``"/"``).

    Returns
    -------
    Array

    Raises
    ------
    MetadataError
        For invalid settings (a subclass names an unknown codec or data type).
    ContainsArrayError, ContainsGroupError
        When a node exists at ``name`` and ``overwrite`` is false.
    """
    if zarr_format not in (None, 2, 3):
        raise MetadataError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    settings: dict[str, Any] = dict(
        shape=shape, dtype=dtype, data=data, chunks=chunks, shards=shards, filters=filters, serializer=serializer,
        compressors=compressor if compressor != "auto" else compressors, codecs=codecs, fill_value=fill_value,
        order=order, attributes=attributes, chunk_key_encoding=chunk_key_encoding, dimension_names=dimension_names,
        dimension_separator=dimension_separator, config=config)
    meta, config, data = _v2_array(**settings) if zarr_format == 2 else _v3_array(**settings)
    arr = _store_new_array(store, name, meta, overwrite=overwrite, storage_options=storage_options, config=config)
    if data is not None and write_data:
        arr[...] = data
    return arr


def create(shape: Any, *, store: Any = None, path: str | None = None, **kwargs: Any) -> Array:
    """zarr-python's legacy ``create`` (positional shape).

    Parameters
    ----------
    shape
        The array's shape.
    store
        Where the node lives: a :class:`~zarrbolt.Store`, a local path, a URL
        (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``memory://``; fsspec URLs) or None (a new
        :class:`~zarrbolt.MemoryStore`).
    path
        The array's path in the store.
    **kwargs
        :func:`create_array`'s other arguments (``overwrite`` defaults to false).

    Returns
    -------
    Array
    """
    kwargs.setdefault("overwrite", False)
    return create_array(store, name=path, shape=shape, **kwargs)


def layout_settings(array: Array) -> dict[str, Any]:
    """The :func:`create_array` arguments that reproduce ``array``'s layout: its chunks, shards
    and codecs (``from_array``'s ``"keep"``, and the layout ``zarrbolt cp`` starts from).

    Parameters
    ----------
    array
        The array.

    Returns
    -------
    dict
        ``chunks``, ``shards`` (None when the array is not sharded), ``filters``, ``serializer``
        and ``compressors`` (of the inner chunks of a sharded array).
    """
    from ..codecs.chain import CodecChain

    sharding = array._sharding
    if sharding is not None and not array._chain.aa:
        inner = CodecChain(sharding.codecs)
        return {"chunks": sharding.chunk_shape, "shards": array.metadata.chunk_grid.chunk_shape,
                "filters": list(inner.aa), "serializer": inner.ab, "compressors": list(inner.bb)}
    chain = array._chain
    return {"chunks": array.metadata.chunk_grid.chunk_shape, "shards": None,
            "filters": list(chain.aa), "serializer": chain.ab, "compressors": list(chain.bb)}
