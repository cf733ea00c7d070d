"""Opening nodes by path (zarr-python 3's ``open``, ``open_array``, ``open_group``, ``load``) and
the groups the entry points open or create (``group``, ``create_group``), with consolidated
metadata (``open_consolidated``, ``consolidate_metadata``); the metadata loading they share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..array import Array
from ..errors import (
    ArrayNotFoundError,
    ContainsArrayError,
    ContainsGroupError,
    GroupNotFoundError,
    MetadataError,
    NodeNotFoundError,
)
from ..group import Group
from ..metadata import ArrayMetadata, GroupMetadata
from ..node import inherited_format as _inherited_format
from ..node import load_metadata as _node_load_metadata
from .creation import create_array
from .location import locate


def _load_metadata(store: Any, path: str, zarr_format: int | None = None) -> Any:
    """The node's metadata (``zarr_format``: as :func:`zarrbolt.node.load_metadata`); a document
    zarrbolt cannot use raises its typed error naming the path."""
    from ..unsupported import with_path

    try:
        meta = _node_load_metadata(store, path, zarr_format)
    except MetadataError as e:
        raise with_path(e, path) from None
    if zarr_format is None and meta is not None:
        from ..node import meta_key, shadowed_v2_key

        hidden = shadowed_v2_key(store, path, meta)
        if hidden is not None:
            import warnings

            warnings.warn(
                f"{meta_key(path)!r} in {store!r} is an empty Zarr v3 group beside the Zarr v2 document {hidden!r} "
                "(earlier zarrbolt versions wrote it when opening v2 data in mode 'a'); the v3 group is opened. "
                "Open with zarr_format=2, or delete that zarr.json, to use the v2 node.", UserWarning, stacklevel=3)
    return meta


def _check_format(zarr_format: Any) -> None:
    if zarr_format not in (None, 2, 3):
        raise MetadataError(f"zarr_format must be 2, 3 or None, got {zarr_format!r}")


# ---------------------------------------------------------------------------- groups
def create_group(
    store: Any = None,
    *,
    path: str | None = None,
    overwrite: bool = False,
    attributes: Mapping[str, Any] | None = None,
    zarr_format: int | None = 3,
    storage_options: Any = None,
) -> Group:
    """Create a group (zarr-python's ``create_group``).

    Parameters
    ----------
    store
        Where the node lives: a :class:`~zarrbolt.Store`, a local path, a URL
        (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``memory://``; fsspec URLs) or None (a new
        :class:`~zarrbolt.MemoryStore`).
    path
        The group's path in the store (missing parent groups are created).
    overwrite
        Replace a node already there.
    attributes
        The group's attributes (JSON-serialisable).
    zarr_format
        3, or 2.
    storage_options
        Options of the store a URL opens (credentials, endpoint, ...).

    Returns
    -------
    Group

    Raises
    ------
    ContainsArrayError, ContainsGroupError
        When a node exists at ``path`` and ``overwrite`` is false.
    """
    _check_format(zarr_format)
    st, p = locate(store, "w" if overwrite else "a", path, storage_options)
    return Group.create(st, p, attributes=attributes, overwrite=overwrite, zarr_format=zarr_format or 3)


def group(store: Any = None, *, path: str | None = None, overwrite: bool = False, attributes: Any = None, **kw: Any) -> Group:
    """zarr-python's ``group``: open the group at ``path``, creating it if needed.

    Parameters
    ----------
    store
        Where the node lives: a :class:`~zarrbolt.Store`, a local path, a URL
        (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``memory://``; fsspec URLs) or None (a new
        :class:`~zarrbolt.MemoryStore`).
    path
        The group's path in the store.
    overwrite
        Create the group anew, replacing what is there.
    attributes
        The attributes of a group created here.
    **kw
        ``zarr_format`` and ``storage_options``, as :func:`open_group`'s.

    Returns
    -------
    Group
    """
    zf = kw.get("zarr_format")
    _check_format(zf)
    st, p = locate(store, "w" if overwrite else "a", path, kw.get("storage_options"))
    if not overwrite:
        meta = _load_metadata(st, p, zf)
        if isinstance(meta, GroupMetadata):
            return Group(st, p, meta)
    return Group.create(st, p, attributes=attributes, overwrite=overwrite, zarr_format=zf or _inherited_format(st, p))


# ---------------------------------------------------------------------------- opening
def open_array(store: Any = None, *, mode: str = "a", path: str | None = None, zarr_format: int | None = None,
               storage_options: Any = None, **kwargs: Any) -> Array:
    """Open an array; with mode 'a' / 'w' / 'w-' and a ``shape`` it is created when missing.

    Parameters
    ----------
    store
        Where the node lives: a :class:`~zarrbolt.Store`, a local path, a URL
        (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``memory://``; fsspec URLs) or None (a new
        :class:`~zarrbolt.MemoryStore`).
    mode
        ``"r"`` read only; ``"r+"`` read and write, must exist; ``"a"`` read and write, created
        when missing; ``"w"`` created, replacing what is there; ``"w-"`` created, must not exist.
    path
        The array's path in the store.
    zarr_format
        2 or 3 (None: what is there, else 3; a child of a Zarr v2 group is v2).
    storage_options
        Options of the store a URL opens (credentials, endpoint, ...).
    **kwargs
        :func:`create_array`'s arguments for an array created here (``shape`` is needed then);
        ``config`` (:class:`ArrayConfig` options) for an array opened.

    Returns
    -------
    Array

    Raises
    ------
    ArrayNotFoundError
        When there is no array and none is created.
    ContainsGroupError
        When ``path`` holds a group.
    MetadataError
        When the array's metadata is invalid (or a subclass: unknown codec or data type).
    """
    _check_format(zarr_format)
    st, p = locate(store, mode, path, storage_options)
    if mode in ("w", "w-") or (mode == "a" and "shape" in kwargs and _load_metadata(st, p, zarr_format) is None):
        if "shape" not in kwargs:
            raise MetadataError(f"open_array(mode={mode!r}) creates an array and needs a shape")
        return create_array(st, name=p, overwrite=(mode == "w"), zarr_format=zarr_format or _inherited_format(st, p),
                            **kwargs)
    meta = _load_metadata(st, p, zarr_format)
    if meta is None:
        raise ArrayNotFoundError(st.no_node(p, _documents(zarr_format, ".zarray")))
    if not isinstance(meta, ArrayMetadata):
        raise ContainsGroupError(f"path {p!r} in {st!r} holds a group, not an array")
    return Array(st, p, meta, read_only=(mode == "r"), config=kwargs.get("config"))


def open_group(store: Any = None, *, mode: str = "a", path: str | None = None, attributes: Any = None,
               zarr_format: int | None = None, storage_options: Any = None,
               use_consolidated: bool | str | None = None, **kwargs: Any) -> Group:
    """Open (or with mode 'a' / 'w' / 'w-' create) a group.  ``use_consolidated`` as zarr-python's:
    None uses the group's consolidated metadata when it has some, True requires it (MetadataError
    when absent), False ignores it; a string names a Zarr v2 group's consolidated key.

    Parameters
    ----------
    store
        Where the node lives: a :class:`~zarrbolt.Store`, a local path, a URL
        (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``memory://``; fsspec URLs) or None (a new
        :class:`~zarrbolt.MemoryStore`).
    mode
        ``"r"`` read only; ``"r+"`` read and write, must exist; ``"a"`` read and write, created
        when missing; ``"w"`` created, replacing what is there; ``"w-"`` created, must not exist.
    path
        The group's path in the store.
    attributes
        The attributes of a group created here.
    zarr_format
        2 or 3 (None: what is there, else 3; a child of a Zarr v2 group is v2).
    storage_options
        Options of the store a URL opens (credentials, endpoint, ...).
    use_consolidated
        See above.
    **kwargs
        Accepted for zarr-python compatibility; ignored.

    Returns
    -------
    Group

    Raises
    ------
    GroupNotFoundError
        When there is no group and none is created.
    ContainsArrayError
        When ``path`` holds an array.
    """
    _check_format(zarr_format)
    st, p = locate(store, mode, path, storage_options)
    if mode in ("w", "w-"):
        zf = zarr_format or _inherited_format(st, p)  # of a group created here
        return Group.create(st, p, attributes=attributes, overwrite=(mode == "w"), zarr_format=zf)
    meta = _load_metadata(st, p, zarr_format)
    if meta is None:
        if mode == "a":
            return Group.create(st, p, attributes=attributes, zarr_format=zarr_format or _inherited_format(st, p))
        raise GroupNotFoundError(st.no_node(p, _documents(zarr_format, ".zgroup")))
    if not isinstance(meta, GroupMetadata):
        raise ContainsArrayError(f"path {p!r} in {st!r} holds an array, not a group")
    return Group(st, p, meta, read_only=(mode == "r"), use_consolidated=use_consolidated)


def open(store: Any = None, *, mode: str = "a", path: str | None = None, zarr_format: int | None = None,  # noqa: A001
         storage_options: Any = None, **kwargs: Any) -> Array | Group:
    """Open the array or group at ``path``; with a writable mode and nothing there, create an array
    when ``shape`` is given, else a group.

    Parameters
    ----------
    store
        Where the node lives: a :class:`~zarrbolt.Store`, a local path, a URL
        (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``memory://``; fsspec URLs) or None (a new
        :class:`~zarrbolt.MemoryStore`).
    mode
        ``"r"`` read only; ``"r+"`` read and write, must exist; ``"a"`` read and write, created
        when missing; ``"w"`` created, replacing what is there; ``"w-"`` created, must not exist.
    path
        The node's path in the store.
    zarr_format
        2 or 3 (None: what is there, else 3; a child of a Zarr v2 group is v2).
    storage_options
        Options of the store a URL opens (credentials, endpoint, ...).
    **kwargs
        :func:`open_array`'s (``shape=``, ``config=``, ...) or :func:`open_group`'s
        (``attributes=``, ``use_consolidated=``).

    Returns
    -------
    Array or Group

    Raises
    ------
    NodeNotFoundError
        When there is no node and none is created.
    """
    _check_format(zarr_format)
    st, p = locate(store, mode, path, storage_options)
    if mode in ("w", "w-"):
        zf = zarr_format or _inherited_format(st, p)  # of a node created here
        if "shape" in kwargs:
            return create_array(st, name=p, overwrite=(mode == "w"), zarr_format=zf, **kwargs)
        return Group.create(st, p, attributes=kwargs.get("attributes"), overwrite=(mode == "w"), zarr_format=zf)
    meta = _load_metadata(st, p, zarr_format)
    if meta is None:
        if mode == "a":
            zf = zarr_format or _inherited_format(st, p)
            if "shape" in kwargs:
                return create_array(st, name=p, zarr_format=zf, **kwargs)
            return Group.create(st, p, attributes=kwargs.get("attributes"), zarr_format=zf)
        raise NodeNotFoundError(st.no_node(p, _documents(zarr_format, ".zarray", ".zgroup")))
    if isinstance(meta, ArrayMetadata):
        return Array(st, p, meta, read_only=(mode == "r"), config=kwargs.get("config"))
    return Group(st, p, meta, read_only=(mode == "r"), use_consolidated=kwargs.get("use_consolidated"))


def _documents(zarr_format: int | None, *v2: str) -> str:
    """The metadata documents a node of ``zarr_format`` would have, for "has no ..." messages."""
    names = (["zarr.json"] if zarr_format != 2 else []) + (list(v2) if zarr_format != 3 else [])
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


# ---------------------------------------------------------------------------- consolidated metadata, loading
def open_consolidated(*args: Any, use_consolidated: Any = True, **kwargs: Any) -> Group:
    """:func:`open_group` with ``use_consolidated=True``: the group's members are listed and opened
    from its consolidated metadata (MetadataError when it has none).

    Parameters
    ----------
    *args, **kwargs
        :func:`open_group`'s arguments.
    use_consolidated
        Must be True.

    Returns
    -------
    Group
    """
    if use_consolidated is not True:
        raise MetadataError("open_consolidated needs use_consolidated=True; use open_group(use_consolidated=False) "
                            "to bypass consolidated metadata")
    return open_group(*args, use_consolidated=True, **kwargs)


def consolidate_metadata(store: Any, path: str | None = None, zarr_format: int | None = None) -> Group:
    """Write the consolidated metadata of the group at ``path`` (the store's root by default): the
    ``zarr.json`` documents of every node below it inline in the group's ``zarr.json`` (Zarr v3),
    or a ``.zmetadata`` object (Zarr v2), as zarr-python does.  Returns the group, opened with it.
    zarrbolt keeps it current as nodes are created, changed or deleted through zarrbolt.

    Parameters
    ----------
    store
        The store (or store path / URL).
    path
        The group's path.
    zarr_format
        The format the group must have (None: any).

    Returns
    -------
    Group

    Raises
    ------
    MetadataError
        When the group is of another format than ``zarr_format``.
    """
    from ..metadata import consolidated

    st, p = locate(store, "r+", path)
    fmt = consolidated.consolidate(st, p)
    if zarr_format is not None and zarr_format != fmt:
        raise MetadataError(f"the group at {p!r} is Zarr format {fmt}, not {zarr_format}")
    return open_group(st, mode="r+", path=p, use_consolidated=True)


def load(store: Any, path: str | None = None, zarr_format: int | None = None) -> Any:
    """The data of the array at ``path``, or a dict of the data of a group's arrays (an array
    zarrbolt cannot open raises its typed error).

    Parameters
    ----------
    store
        The store (or store path / URL).
    path
        The node's path.
    zarr_format
        2 or 3 (None: what is there).

    Returns
    -------
    numpy.ndarray or dict of str to numpy.ndarray
    """
    from ..unsupported import UnsupportedNode

    node = open(store, mode="r", path=path, zarr_format=zarr_format)
    if isinstance(node, Array):
        return node[...]
    return {name: (arr.open() if isinstance(arr, UnsupportedNode) else arr)[...] for name, arr in node.arrays()}
