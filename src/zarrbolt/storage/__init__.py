"""Stores: where chunks and metadata live (``LocalStore``, ``MemoryStore``) and ``make_store``."""

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
from .local import LocalStore, NativeFiles
from .memory import MemoryStore


def make_store(store_like: Any, *, mode: str = "a") -> tuple[Store, str]:
    """``(store, path)`` for anything zarrbolt accepts as a store: a Store, a local path, a
    ``file://`` URI, a dict (an in-memory store over it) or None (a new in-memory store).
    Mode ``"r"`` opens the store read-only."""
    read_only = mode == "r"
    if isinstance(store_like, Store):
        if read_only and not store_like.read_only:
            return store_like.with_read_only(True), ""
        return store_like, ""
    if store_like is None:
        return MemoryStore(read_only=read_only), ""
    if isinstance(store_like, MutableMapping):
        return MemoryStore(store_like, read_only=read_only), ""
    if isinstance(store_like, (str, os.PathLike)):
        return LocalStore(store_like, read_only=read_only), ""
    raise StoreError(f"cannot make a store from {type(store_like).__name__} {store_like!r}")


__all__ = [
    "ByteRequest",
    "LocalStore",
    "MemoryStore",
    "NativeFiles",
    "OffsetByteRequest",
    "RangeByteRequest",
    "Store",
    "SuffixByteRequest",
    "check_key",
    "check_prefix",
    "make_store",
]
