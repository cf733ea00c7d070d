"""zarrbolt arrays as dask arrays: :func:`to_dask`.

dask is imported only when :func:`to_dask` is called (``import zarrbolt`` never imports it).
The graph holds the zarrbolt array itself, which pickles as its store, path and metadata (see
:class:`zarrbolt.Array`), so it runs on ``dask.distributed`` workers in other processes too."""

from __future__ import annotations

from typing import Any

from .array import Array
from .errors import MetadataError


def _storage_chunks(arr: Array) -> tuple[int, ...]:
    """The shape of the stored objects: the shard shape when sharded, else the chunk shape."""
    return tuple(arr.shards or arr.metadata.chunks)


def _aligned(arr: Array, chunks: Any) -> Any:
    """``chunks`` for dask: None or ``"auto"`` -> dask's automatic block sizes (its
    ``array.chunk-size``) made of whole stored objects, or one stored object per block when
    those are already larger; anything else as given (dask checks it)."""
    if chunks is None or (isinstance(chunks, str) and chunks == "auto"):
        base = _storage_chunks(arr)
        one = tuple((b,) * (s // b) + ((s % b,) if s % b else ()) for b, s in zip(base, arr.shape))
        if 0 in arr.shape:
            return tuple(max(1, b) for b in base)
        from dask.array.core import normalize_chunks

        auto = normalize_chunks("auto", arr.shape, dtype=arr.dtype, previous_chunks=base)
        return auto if shard_aligned(arr, auto) else one
    return chunks


def to_dask(arr: Array, chunks: Any = None, *, name: str | None = None, inline_array: bool = False) -> Any:
    """A lazy ``dask.array.Array`` over the zarrbolt array ``arr``.

    ``chunks=None`` (the default, or ``"auto"``) gives blocks made of whole stored objects
    (shards of a sharded array, else chunks), as many per block as fit dask's
    ``array.chunk-size`` (128 MiB unless configured) and at least one: every task reads whole
    shards (one index read, coalesced inner chunks, decoded in C with the GIL released), and
    writes of the blocks with ``dask.array.store`` never share a shard.  Any other ``chunks``
    is passed to dask as it is (``chunks=arr.shards`` for exactly one shard per task).

    The graph's name is deterministic: it is made from the store's location, the array's path
    and metadata and the chunks (not the data, as for zarr-python's arrays: after writing to
    the array, make a new dask array rather than reusing a persisted one).

    Parameters
    ----------
    arr
        The array.
    chunks
        The dask chunks (see above).
    name
        The graph's name (None: made from the array, see above).
    inline_array
        dask's ``inline_array``.

    Returns
    -------
    dask.array.Array

    Raises
    ------
    MetadataError
        When ``arr`` is not a zarrbolt array, or ``chunks`` does not fit its shape.
    """
    if not isinstance(arr, Array):
        raise MetadataError(f"to_dask needs a zarrbolt.Array, got {type(arr).__name__}")
    import dask.array as da
    from dask.base import tokenize

    try:
        dchunks = _aligned(arr, chunks)
        if name is None:
            name = "zarrbolt-" + tokenize(arr, dchunks)
        return da.from_array(
            arr, chunks=dchunks, name=name, lock=False, asarray=True, fancy=False,
            inline_array=inline_array, meta=_meta(arr),
        )
    except (ValueError, TypeError, ZeroDivisionError) as e:  # dask's own checks of chunks
        raise MetadataError(f"to_dask: invalid chunks {chunks!r} for shape {arr.shape}: {e}") from e


def _meta(arr: Array) -> Any:
    import numpy as np

    return np.empty((0,) * arr.ndim, dtype=arr.dtype)


def shard_aligned(arr: Array, chunks: tuple[tuple[int, ...], ...]) -> bool:
    """Whether dask ``chunks`` (normalised: a tuple of block sizes per dimension) start and end
    on shard (or, unsharded, chunk) boundaries, so that concurrent writes of the blocks never
    touch the same stored object.  The last block of a dimension may end at the array's end.

    Parameters
    ----------
    arr
        The array.
    chunks
        The dask chunks.

    Returns
    -------
    bool
    """
    base = _storage_chunks(arr)
    if len(chunks) != arr.ndim:
        return False
    for sizes, b, n in zip(chunks, base, arr.shape):
        pos = 0
        for s in sizes:
            pos += s
            if pos % b and pos != n:
                return False
    return True


__all__ = ["shard_aligned", "to_dask"]
