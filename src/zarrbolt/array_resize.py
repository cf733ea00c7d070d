"""The chunk side of :meth:`Array.resize`: chunks wholly outside a smaller shape are deleted and
the part of a boundary chunk that falls outside is reset to the fill value (under the chunk's
write lock: a read-modify-write like any partial write), so growing the array again shows the
fill value there, never stale data."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import numpy as np

from . import config

if TYPE_CHECKING:
    from .array import Array


def trim_to(arr: Array, new_shape: tuple[int, ...]) -> None:
    """Delete ``arr``'s stored chunks outside ``new_shape`` and trim those crossing its edge."""
    old_shape = arr.shape
    grid = arr._metadata.chunk_grid
    shrink_dims = [d for d in range(arr.ndim) if new_shape[d] < old_shape[d]]
    to_delete: list[str] = []
    to_trim: list[tuple[int, ...]] = []
    if shrink_dims:
        for key in list(arr._iter_stored_chunk_keys()):
            coords = arr._metadata.chunk_key_encoding.decode_chunk_key(key[len(arr._key_prefix):])
            starts = [c * s for c, s in zip(coords, arr._chunk_shape)]
            if any(st >= ns for st, ns in zip(starts, new_shape)):
                to_delete.append(key)
            elif any(st + cs > ns and st < os_
                     for st, cs, ns, os_ in zip(starts, arr._chunk_shape, new_shape, old_shape)):
                to_trim.append(tuple(coords))
    for coords in to_trim:
        region = grid.chunk_region(coords, old_shape)
        key = arr._chunk_key(coords)
        with _write_lock(arr, key):
            _trim_chunk(arr, key, region, new_shape)
    arr._store.erase_values(to_delete)


def _write_lock(arr: Array, key: str) -> Any:
    """The write lock of chunk ``key`` for a read-modify-write (``write_lock`` option)."""
    if not config.get("write_lock"):
        return contextlib.nullcontext()
    from .storage.locks import key_lock

    return key_lock(arr._store, key, arr._key_prefix)


def _trim_chunk(arr: Array, key: str, region: Any, new_shape: tuple[int, ...]) -> None:
    """Reset the part of boundary chunk ``key`` (at ``region``) outside ``new_shape``."""
    data = arr._store.get(key)
    if data is None:
        return
    chunk = np.array(arr._decode_chunk(data, key), copy=True)
    for d, r in enumerate(region):  # everything outside [0, keep) along any dimension
        keep = max(0, min(new_shape[d], r.stop) - r.start)
        sl = [slice(None)] * arr.ndim
        sl[d] = slice(keep, None)
        chunk[tuple(sl)] = arr._fill
    if not arr._config.value("write_empty_chunks") and arr._bound.spec.is_fill(chunk):
        arr._store.erase(key)
    else:
        arr._store.set(key, arr._bound.encode(chunk))
