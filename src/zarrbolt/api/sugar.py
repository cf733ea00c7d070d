"""zarr-python 3's module-level sugar over opening and creating: the filled constructors
(``zeros``, ``ones``, ``full``, ``empty``, ``array``) and their ``*_like`` kin (with ``open_like``),
``from_array``, ``save`` / ``save_array`` / ``save_group``, ``tree`` and ``create_hierarchy``."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ..array import Array
from ..errors import ContainsArrayError, ContainsGroupError, MetadataError
from ..group import Group
from ..metadata import ArrayMetadata, GroupMetadata, parse_node_metadata
from ..node import ensure_parent_groups, erase_node, load_metadata, normalize_node_path, save_metadata
from .creation import create_array, layout_settings
from .location import locate
from .opening import create_group, open_array

_COPY_BYTES = 64 << 20  # from_array copies an array-like source in pieces of about this size


# ---------------------------------------------------------------------------- filled arrays
def _filled(fill: Any, shape: Any, **kwargs: Any) -> Array:
    kwargs.setdefault("dtype", np.float64)
    store = kwargs.pop("store", None)
    path = kwargs.pop("path", None)
    return create_array(store, name=path, shape=shape, fill_value=fill, **kwargs)


def zeros(shape: Any, **kwargs: Any) -> Array:
    """An array filled with zeros (stored as its fill value: no chunk is written).

    Parameters
    ----------
    shape
        The array's shape.
    **kwargs
        :func:`create_array`'s arguments (``store=``, ``path=``, ``dtype=`` (default float64),
        ``chunks=``, ...).

    Returns
    -------
    Array
    """
    return _filled(0, shape, **kwargs)


def ones(shape: Any, **kwargs: Any) -> Array:
    """An array filled with ones (its fill value: no chunk is written).

    Parameters
    ----------
    shape
        The array's shape.
    **kwargs
        :func:`create_array`'s arguments (``store=``, ``path=``, ``dtype=`` (default float64),
        ``chunks=``, ...).

    Returns
    -------
    Array
    """
    return _filled(1, shape, **kwargs)


def full(shape: Any, fill_value: Any, **kwargs: Any) -> Array:
    """An array filled with ``fill_value``.

    Parameters
    ----------
    shape
        The array's shape.
    fill_value
        The value of every element (the array's fill value: no chunk is written).
    **kwargs
        :func:`create_array`'s arguments (``store=``, ``path=``, ``dtype=`` (default float64),
        ``chunks=``, ...).

    Returns
    -------
    Array
    """
    return _filled(fill_value, shape, **kwargs)


def empty(shape: Any, **kwargs: Any) -> Array:
    """A new array whose elements read as the data type's default fill value.

    Parameters
    ----------
    shape
        The array's shape.
    **kwargs
        :func:`create_array`'s arguments (``store=``, ``path=``, ``dtype=`` (default float64),
        ``chunks=``, ...).

    Returns
    -------
    Array
    """
    return _filled(None, shape, **kwargs)


def array(data: Any, **kwargs: Any) -> Array:
    """Create an array filled with ``data``.

    Parameters
    ----------
    data
        The data (numpy or array-like); its shape and dtype are the array's unless given.
    **kwargs
        :func:`create_array`'s arguments (``store=``, ``path=`` or ``name=``, ``chunks=``, ...).

    Returns
    -------
    Array
    """
    store = kwargs.pop("store", None)
    path = kwargs.pop("path", kwargs.pop("name", None))
    return create_array(store, name=path, data=data, **kwargs)




# ---------------------------------------------------------------------------- *_like
def _like_args(a: Any, zarr_format: int | None) -> dict[str, Any]:
    """What a new array takes over from ``a``: shape, dtype, and for a zarrbolt array its chunk
    grid, codecs and fill value (zarr-python's rule); other array-likes give shape, dtype and
    chunks when they have them."""
    if zarr_format not in (None, 3):
        raise MetadataError("zarrbolt writes Zarr format 3 only")
    out: dict[str, Any] = {}
    shape = getattr(a, "shape", None)
    if isinstance(shape, tuple):
        out["shape"] = shape
        chunks = getattr(a, "chunks", None)
        if isinstance(chunks, tuple) and len(chunks) == len(shape) and all(isinstance(c, int) for c in chunks):
            out["chunks"] = chunks
    if hasattr(a, "dtype"):
        out["dtype"] = np.dtype(a.dtype)
    if isinstance(a, Array):
        out["chunks"] = a.metadata.chunk_grid.chunk_shape  # the grid: codecs carry any sharding
        out["codecs"] = a.metadata.codecs
        out["fill_value"] = a.fill_value
    return out


def _like(a: Any, zarr_format: int | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    args = _like_args(a, zarr_format)
    if any(k in kwargs for k in ("filters", "compressors", "compressor", "serializer")):
        args.pop("codecs", None)  # the caller builds the chain from the shortcuts
    return {**args, **kwargs}


def empty_like(a: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """A new array like ``a`` (shape, dtype, chunks, codecs, fill value); ``kwargs`` as
    :func:`zarrbolt.create` (``store=``, ``path=``, ...) override them.

    Parameters
    ----------
    a
        The model: a zarrbolt or zarr-python array, or any array-like with a shape and dtype.
    zarr_format
        The new array's format (None: ``a``'s, else 3).
    **kwargs
        :func:`zarrbolt.create`'s arguments (``store=``, ``path=``, ``dtype=``, ...), overriding
        what is taken from ``a``.

    Returns
    -------
    Array
    """
    kw = _like(a, zarr_format, kwargs)
    return _filled(kw.pop("fill_value", None), kw.pop("shape", None), **kw)


def zeros_like(a: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """A new array like ``a`` (see :func:`empty_like`) filled with zeros.

    Parameters
    ----------
    a
        The model: a zarrbolt or zarr-python array, or any array-like with a shape and dtype.
    zarr_format
        The new array's format (None: ``a``'s, else 3).
    **kwargs
        :func:`zarrbolt.create`'s arguments (``store=``, ``path=``, ``dtype=``, ...), overriding
        what is taken from ``a``.

    Returns
    -------
    Array
    """
    kw = _like(a, zarr_format, kwargs)
    kw.pop("fill_value", None)
    return _filled(0, kw.pop("shape", None), **kw)


def ones_like(a: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """A new array like ``a`` (see :func:`empty_like`) filled with ones.

    Parameters
    ----------
    a
        The model: a zarrbolt or zarr-python array, or any array-like with a shape and dtype.
    zarr_format
        The new array's format (None: ``a``'s, else 3).
    **kwargs
        :func:`zarrbolt.create`'s arguments (``store=``, ``path=``, ``dtype=``, ...), overriding
        what is taken from ``a``.

    Returns
    -------
    Array
    """
    kw = _like(a, zarr_format, kwargs)
    kw.pop("fill_value", None)
    return _filled(1, kw.pop("shape", None), **kw)


def full_like(a: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """Like :func:`empty_like`; ``fill_value=`` (default: ``a``'s fill value).

    Parameters
    ----------
    a
        The model: a zarrbolt or zarr-python array, or any array-like with a shape and dtype.
    zarr_format
        The new array's format (None: ``a``'s, else 3).
    **kwargs
        :func:`zarrbolt.create`'s arguments (``store=``, ``path=``, ``dtype=``, ...), overriding
        what is taken from ``a``.

    Returns
    -------
    Array

    Raises
    ------
    MetadataError
        When there is no fill value.
    """
    kw = _like(a, zarr_format, kwargs)
    if kw.get("fill_value") is None:
        raise MetadataError("full_like needs a fill_value (or an array `a` that has one)")
    return _filled(kw.pop("fill_value"), kw.pop("shape", None), **kw)


def open_like(a: Any, path: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """Open the array at ``path`` (a store or store path), creating it like ``a`` when missing.

    Parameters
    ----------
    a
        The model (see :func:`empty_like`).
    path
        The store or store path of the array.
    zarr_format
        The format of an array created here (None: ``a``'s, else 3).
    **kwargs
        :func:`zarrbolt.open_array`'s arguments (``mode=``, default ``"a"``), and what overrides
        ``a``'s settings.

    Returns
    -------
    Array
    """
    kw = _like(a, zarr_format, kwargs)
    mode = kw.pop("mode", None) or "a"
    return open_array(path, mode=mode, **kw)


# ---------------------------------------------------------------------------- from_array
def _keep(value: Any, source: Any) -> Any:
    return source if isinstance(value, str) and value == "keep" else value


def from_array(
    store: Any,
    *,
    data: Any,
    write_data: bool = True,
    name: str | None = None,
    chunks: Any = "keep",
    shards: Any = "keep",
    filters: Any = "keep",
    compressors: Any = "keep",
    serializer: Any = "keep",
    fill_value: Any = None,
    order: str | None = None,
    zarr_format: int | None = None,
    attributes: Mapping[str, Any] | None = None,
    chunk_key_encoding: Any = None,
    dimension_names: Any = None,
    storage_options: Any = None,
    overwrite: bool = False,
    config: Any = None,
) -> Array:
    """A new array holding ``data`` (zarr-python's ``from_array``).  From a zarrbolt array,
    ``"keep"`` takes over its chunks, shards, filters, serializer and compressors, and left-out
    fill value, attributes, chunk key encoding and dimension names are its own; from any other
    array-like ``"keep"`` means the defaults.  The data is copied in pieces of about 64 MiB (the
    source is never loaded whole unless it is a numpy array).

    Parameters
    ----------
    store
        Where the node lives: a :class:`~zarrbolt.Store`, a local path, a URL
        (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``memory://``; fsspec URLs) or None (a new
        :class:`~zarrbolt.MemoryStore`).
    data
        The source: a zarrbolt array, a numpy array or any array-like with a shape and dtype.
    write_data
        Copy the data (False: only create the array).
    name
        The array's path in the store.
    chunks, shards, filters, compressors, serializer
        As :func:`create_array`'s, or ``"keep"`` (see above).
    fill_value, order, attributes, chunk_key_encoding, dimension_names
        As :func:`create_array`'s (None: the source array's, see above).
    zarr_format
        The new array's format (None: a zarrbolt source's, else 3).
    storage_options
        Options of the store a URL opens (credentials, endpoint, ...).
    overwrite
        Replace a node already there.
    config
        The new array's runtime options (:class:`ArrayConfig`).

    Returns
    -------
    Array
    """
    if isinstance(data, Array):
        src = layout_settings(data)
        if fill_value is None:
            fill_value = data.fill_value
        if attributes is None:
            attributes = dict(data.attrs)
        if chunk_key_encoding is None:
            chunk_key_encoding = data.metadata.chunk_key_encoding.to_json()
        if dimension_names is None:
            dimension_names = data.metadata.dimension_names
    else:
        src = {"chunks": "auto", "shards": None, "filters": "auto", "serializer": "auto", "compressors": "auto"}
        if not hasattr(data, "shape") or not hasattr(data, "dtype"):
            data = np.asanyarray(data)
    arr = create_array(
        store, name=name, shape=tuple(data.shape), dtype=data.dtype,
        chunks=_keep(chunks, src["chunks"]), shards=_keep(shards, src["shards"]),
        filters=_keep(filters, src["filters"]), serializer=_keep(serializer, src["serializer"]),
        compressors=_keep(compressors, src["compressors"]), fill_value=fill_value, order=order,
        zarr_format=zarr_format, attributes=attributes, chunk_key_encoding=chunk_key_encoding,
        dimension_names=dimension_names, storage_options=storage_options, overwrite=overwrite, config=config,
    )
    if write_data:
        _copy_into(arr, data)
    return arr


def _copy_into(arr: Array, data: Any) -> None:
    if isinstance(data, np.ndarray) or arr.ndim == 0:
        arr[...] = data[...] if arr.ndim == 0 else data
        return
    # along the first axis, in whole blocks of the new array's grid of about _COPY_BYTES
    grid0 = arr.metadata.chunk_grid.chunk_shape[0]
    row_bytes = max(1, math.prod(arr.shape[1:]) * arr.dtype.itemsize)
    step = max(1, (_COPY_BYTES // (row_bytes * grid0))) * grid0
    for start in range(0, arr.shape[0], step):
        stop = min(start + step, arr.shape[0])
        arr[start:stop] = np.asarray(data[start:stop])


# ---------------------------------------------------------------------------- save / tree
def save_array(store: Any, arr: Any, *, zarr_format: int | None = None, path: str | None = None,
               storage_options: Any = None, **kwargs: Any) -> Array:
    """An array at ``path`` (replacing what is there) holding ``arr``; ``kwargs`` as
    :func:`create_array`'s.  Returns the array (zarr-python returns None).

    Parameters
    ----------
    store
        Where the node lives: a :class:`~zarrbolt.Store`, a local path, a URL
        (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``memory://``; fsspec URLs) or None (a new
        :class:`~zarrbolt.MemoryStore`).
    arr
        The data.
    zarr_format
        2 or 3 (None: what is there, else 3; a child of a Zarr v2 group is v2).
    path
        The array's path in the store.
    storage_options
        Options of the store a URL opens (credentials, endpoint, ...).
    **kwargs
        :func:`create_array`'s other arguments.

    Returns
    -------
    Array
    """
    return create_array(store, name=path, data=np.asanyarray(arr), overwrite=True, zarr_format=zarr_format,
                        storage_options=storage_options, **kwargs)


def save(store: Any, *args: Any, zarr_format: int | None = None, path: str | None = None,
         storage_options: Any = None, **kwargs: Any) -> None:
    """One positional array and no keywords: :func:`save_array`; else :func:`save_group`.

    Parameters
    ----------
    store
        Where the node lives: a :class:`~zarrbolt.Store`, a local path, a URL
        (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``memory://``; fsspec URLs) or None (a new
        :class:`~zarrbolt.MemoryStore`).
    *args
        The arrays.
    zarr_format
        2 or 3 (None: what is there, else 3; a child of a Zarr v2 group is v2).
    path
        The node's path in the store.
    storage_options
        Options of the store a URL opens (credentials, endpoint, ...).
    **kwargs
        Named arrays (for a group).

    Raises
    ------
    MetadataError
        When there is no array.
    """
    if len(args) == 0 and not kwargs:
        raise MetadataError("save needs at least one array")
    if len(args) == 1 and not kwargs:
        save_array(store, args[0], path=path, zarr_format=zarr_format)
        return
    save_group(store, *args, zarr_format=zarr_format, path=path, storage_options=storage_options, **kwargs)


def save_group(store: Any, *args: Any, zarr_format: int | None = None, path: str | None = None,
               storage_options: Any = None, **kwargs: Any) -> None:
    """A group at ``path`` (replacing what is there) holding ``args`` as ``arr_0``, ``arr_1``, ...
    and ``kwargs`` by their names.  Every value must be an array (numpy or array-like with a
    shape and dtype), checked before anything is removed.

    Parameters
    ----------
    store
        Where the node lives: a :class:`~zarrbolt.Store`, a local path, a URL
        (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``memory://``; fsspec URLs) or None (a new
        :class:`~zarrbolt.MemoryStore`).
    *args
        Arrays named ``arr_0``, ``arr_1``, ...
    zarr_format
        2 or 3 (None: what is there, else 3; a child of a Zarr v2 group is v2).
    path
        The group's path in the store.
    storage_options
        Options of the store a URL opens (credentials, endpoint, ...).
    **kwargs
        Arrays by name.

    Raises
    ------
    MetadataError
        When a value is not an array, or there is none.
    """
    if zarr_format not in (None, 3):
        raise MetadataError("zarrbolt writes Zarr format 3 only")
    items = [(f"arr_{i}", a) for i, a in enumerate(args)] + list(kwargs.items())
    if not items:
        raise MetadataError("save_group needs at least one array")
    for k, a in items:
        if not (hasattr(a, "shape") and hasattr(a, "dtype")):
            raise MetadataError(f"save_group: {k!r} is a {type(a).__name__}, not an array")
        from ..metadata.dtypes import DataType

        DataType.from_numpy(a.dtype)  # a dtype Zarr cannot store fails before anything is erased
    g = create_group(store, path=path, overwrite=True)
    for k, a in items:
        create_array(g.store, name=f"{g.path}/{k}" if g.path else k, data=np.asanyarray(a), overwrite=True)


def tree(grp: Group, expand: bool | None = None, level: int | None = None) -> str:
    """The hierarchy below ``grp`` as text (``grp.tree(level=level)``; ``expand`` is accepted for
    zarr-python compatibility and has no effect on text output).

    Parameters
    ----------
    grp
        The group.
    expand
        Ignored (zarr-python's).
    level
        How many levels to show (None: all).

    Returns
    -------
    str
    """
    if not isinstance(grp, Group):
        raise MetadataError(f"tree needs a zarrbolt Group, got {type(grp).__name__}")
    return grp.tree(level=level)


# ---------------------------------------------------------------------------- create_hierarchy
def _as_metadata(path: str, node: Any) -> ArrayMetadata | GroupMetadata:
    if isinstance(node, (ArrayMetadata, GroupMetadata)):
        return node
    if isinstance(node, Mapping):  # a zarr.json document
        import json

        return parse_node_metadata(json.dumps(dict(node)))
    to_dict = getattr(node, "to_dict", None)  # zarr-python's metadata objects
    if callable(to_dict) and getattr(node, "zarr_format", 3) == 3:
        import json

        doc = {k: v for k, v in to_dict().items() if not (k == "consolidated_metadata" and v is None)}
        return parse_node_metadata(json.dumps(doc, default=_json_default))
    raise MetadataError(f"create_hierarchy: node {path!r} must be array or group metadata, got {type(node).__name__}")


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, tuple):
        return list(obj)
    raise TypeError(f"not JSON: {type(obj).__name__}")


def create_hierarchy(*, store: Any, nodes: Mapping[str, Any], overwrite: bool = False,
                     ) -> Iterator[tuple[str, Array | Group]]:
    """Create the nodes ``{path: metadata}`` (zarrbolt ``ArrayMetadata``/``GroupMetadata``,
    ``zarr.json`` documents as dicts, or zarr-python v3 metadata objects) and yield
    ``(path, node)`` for each, parents first.  Missing ancestors become groups (an existing one
    is kept); an existing node at a given path is an error unless ``overwrite``.  Every document
    is checked before anything is written.

    Parameters
    ----------
    store
        Where the node lives: a :class:`~zarrbolt.Store`, a local path, a URL
        (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``memory://``; fsspec URLs) or None (a new
        :class:`~zarrbolt.MemoryStore`).
    nodes
        ``{path: metadata}``, paths relative to the store's root (or the URL's path).
    overwrite
        Replace existing nodes at the given paths.

    Yields
    ------
    tuple of (str, Array | Group)
        Each path and its node, parents first.

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        When a node exists at a given path (and ``overwrite`` is false), or a node would be below an array.
    """
    st, base = locate(store, "a", None)
    parsed = {normalize_node_path(f"{base}/{p}"): _as_metadata(p, m) for p, m in nodes.items()}
    for p in parsed:
        parts = p.split("/") if p else []
        for i in range(len(parts)):
            anc = "/".join(parts[:i])
            if isinstance(parsed.get(anc), ArrayMetadata):
                raise ContainsArrayError(f"create_hierarchy: {p!r} is below the array {anc!r}")
    if not overwrite:
        for p, _m in parsed.items():
            existing = load_metadata(st, p)
            if existing is not None:
                err = ContainsArrayError if isinstance(existing, ArrayMetadata) else ContainsGroupError
                raise err(f"create_hierarchy: a node already exists at {p!r} in {st!r}")
    created: list[tuple[str, Array | Group]] = []
    for p in sorted(parsed, key=lambda q: (q.count("/") + (1 if q else 0), q)):
        m = parsed[p]
        if load_metadata(st, p) is not None:
            erase_node(st, p)
        ensure_parent_groups(st, p)
        save_metadata(st, p, m)
        created.append((p, Array(st, p, m) if isinstance(m, ArrayMetadata) else Group(st, p, m)))
    return iter(created)
