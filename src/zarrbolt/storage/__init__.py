"""Stores: where chunks and metadata live (``LocalStore``, ``MemoryStore``; the remote
``ObjectStore`` and ``FsspecStore``, imported on first use) and ``make_store``."""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from typing import Any

from ..errors import StoreError
from ._base import (
    ByteRequest,
    OffsetByteRequest,
    RangeByteRequest,
    Store,
    SuffixByteRequest,
    check_key,
    check_prefix,
)
from .local import LocalStore
from .native_files import NativeFiles
from .memory import MemoryStore


def make_store(store_like: Any, *, mode: str = "a", storage_options: Any = None) -> tuple[Store, str]:
    """``(store, path)`` for anything zarrbolt accepts as a store: a Store, a local path, a
    ``file://`` URI, a remote URL (``s3://``, ``gs://``, ``az://``, ``https://``, ``memory://``,
    any fsspec protocol; see :mod:`zarrbolt.storage.urls`) with ``storage_options``,
    zarr-python's ``FsspecStore`` / ``ObjectStore``, an obstore store, an fsspec filesystem or
    mapper (read by ranges, never whole), a dict (an in-memory store over it) or None (a new
    in-memory store).  Mode ``"r"`` opens the store read-only.  ``storage_options`` with
    anything but a URL string is an error (as in zarr-python)."""
    read_only = mode == "r"
    from . import urls

    options = urls.check_options(storage_options)
    is_url = isinstance(store_like, str) and urls.url_scheme(store_like) not in (None, "file")
    if options and not is_url:
        raise StoreError(f"storage_options were given with a store that is not a remote URL "
                         f"({type(store_like).__name__}); they are only used to open URLs such as s3://...")
    if isinstance(store_like, Store):
        if read_only and not store_like.read_only:
            return store_like.with_read_only(True), ""
        return store_like, ""
    if store_like is None:
        return MemoryStore(read_only=read_only), ""
    if is_url:
        return urls.open_url(store_like, options, read_only=read_only)
    foreign = _foreign_store(store_like, read_only)
    if foreign is not None:
        return foreign, ""
    if isinstance(store_like, MutableMapping):
        return MemoryStore(store_like, read_only=read_only), ""
    if isinstance(store_like, (str, os.PathLike)):
        return LocalStore(store_like, read_only=read_only), ""
    raise StoreError(f"cannot make a store from {type(store_like).__name__} {store_like!r}")


def _foreign_store(obj: Any, read_only: bool) -> Store | None:
    """A zarrbolt store over another library's store object (duck-typed, nothing imported):
    zarr-python's ``FsspecStore`` / ``ObjectStore``, obstore stores, fsspec filesystems and
    mappers; None for anything else."""
    module = type(obj).__module__ or ""
    name = type(obj).__name__
    if module.startswith("zarr.") and name == "ObjectStore" and hasattr(obj, "store"):
        from .object_store import ObjectStore

        return ObjectStore(obj.store, read_only=read_only or bool(getattr(obj, "read_only", False)))
    if module.startswith("zarr.") and name == "FsspecStore" and hasattr(obj, "fs"):
        from .fsspec_store import FsspecStore

        return FsspecStore.from_zarr(obj, read_only=read_only)
    if module.startswith("obstore"):
        from .object_store import ObjectStore, is_obstore_store

        if is_obstore_store(obj):
            return ObjectStore(obj, read_only=read_only)
    if module.startswith("fsspec") and name == "FSMap":
        from .fsspec_store import FsspecStore

        return FsspecStore(obj.fs, path=obj.root, read_only=read_only)
    if _is_filesystem(obj):
        from .fsspec_store import FsspecStore

        return FsspecStore(obj, read_only=read_only)
    return None


def _is_filesystem(obj: Any) -> bool:
    return any((c.__module__ or "").startswith("fsspec") and c.__name__ == "AbstractFileSystem"
               for c in type(obj).__mro__)


def __getattr__(name: str) -> Any:
    # the remote stores import obstore / fsspec only when used
    if name == "ObjectStore":
        from .object_store import ObjectStore

        return ObjectStore
    if name == "FsspecStore":
        from .fsspec_store import FsspecStore

        return FsspecStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ByteRequest",
    "FsspecStore",
    "LocalStore",
    "MemoryStore",
    "NativeFiles",
    "ObjectStore",
    "OffsetByteRequest",
    "RangeByteRequest",
    "Store",
    "SuffixByteRequest",
    "check_key",
    "check_prefix",
    "make_store",
]
