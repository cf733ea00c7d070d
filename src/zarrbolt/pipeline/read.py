"""The read planner: one dispatch from a selection to the way it is read and decoded.

:func:`read` decides once, from three questions, and hands the work to the backend below it:

- the layout: chunks, or shards read directly (the sharding codec alone in the chain: the tasks
  are inner chunks, their shard's index read first: :mod:`.shard`);
- the decode mode: fused (the chain, or a shard's inner chain, has a C plan and the selection is
  ints and step-1 slices: :mod:`.fused`) or per codec (:mod:`.per_codec`);
- where the bytes come from: local files by C (``files``: a store with native file access; for
  shards, when the index is one C parses), the Store API (``store``), or an async source
  (``remote``: windows fetched concurrently, :mod:`.remote`).

Each read counts its strategy in :data:`strategy_counts`: ``"fused-files"``, ``"fused-store"``,
``"fused-remote"``, ``"per-codec"``, ``"per-codec-remote"``, and the same prefixed ``"sharded-"``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ChunkMemoryError
from ..indexing import MAX_ALLOCATION
from . import fused, per_codec, remote
from .context import ArrayIO

__all__ = ["check_out", "read", "strategy_counts"]

# How many reads took each strategy (a debugging and testing aid; see the module docstring).
strategy_counts: Counter[Any] = Counter()

# (shards, source) -> the fused backend: fn(io, fused_output)
_FUSED: dict[tuple[bool, str], Callable[[ArrayIO, fused.FusedOutput], None]] = {
    (False, "files"): fused.chunk_files,
    (False, "store"): fused.chunks_via_store,
    (False, "remote"): remote.chunks_fused,
    (True, "files"): fused.shard_files,
    (True, "store"): fused.shards_via_store,
    (True, "remote"): remote.shards_fused,
}
# (shards, source) -> the per-codec backend: fn(io, projections, out, missing)
_PER_CODEC: dict[tuple[bool, str], Callable[[ArrayIO, list[Any], np.ndarray, set[Any] | None], None]] = {
    (False, "store"): per_codec.projections,
    (False, "remote"): remote.chunks_per_codec,
    (True, "store"): per_codec.shards,
    (True, "remote"): remote.shards_per_codec,
}


def read(io: ArrayIO, make_indexer: Callable[[Any], Any], *, out: np.ndarray | None = None,
         missing: set[Any] | None = None) -> np.ndarray:
    """Read a selection: ``make_indexer(chunking)`` makes its indexer over the chunks it is given
    (the array's chunk grid, or the inner chunk shape of shards read directly).

    ``out``: an existing array of the selection's shape and the array's dtype (any strides) that
    the read writes into (and returns) instead of a new one.  ``missing``: a set the store keys
    of absent chunks / shards are added to (absent inner chunks of a present shard are not).

    A grid whose chunks differ in shape is read a shape at a time (:meth:`ArrayIO.task_groups`:
    each with its own codec chain), into one output.

    A result (or its list of chunks) too large for memory is a ChunkMemoryError naming the
    array: refused before any work when it could not exist in any address space (shapes from
    metadata, such as 2**62 x 2**62, make such requests easy), and any failed allocation of the
    read."""
    try:
        return _read(io, make_indexer, out, missing)
    except MemoryError as e:
        name = io.key_prefix.rstrip("/") or "/"
        raise ChunkMemoryError(f"array {name!r}: {e if isinstance(e, ChunkMemoryError) else f'out of memory ({e})'}") from e


def _read(io: ArrayIO, make_indexer: Callable[[Any], Any], out: np.ndarray | None,
          missing: set[Any] | None) -> np.ndarray:
    shards = io.shard_direct
    lay = io.layout
    indexer = make_indexer(lay.chunk_shape if shards and lay is not None else io.grid)
    nbytes = math.prod(indexer.shape) * io.dtype.itemsize
    if out is None and nbytes > MAX_ALLOCATION:
        raise ChunkMemoryError(f"the selection's result of shape {tuple(indexer.shape)} and data type {io.dtype} "
                               f"({nbytes} bytes) would be larger than any address space")
    out = check_out(io, indexer, out)
    items = _fused_tasks(io, indexer)
    if io.source is not None:
        source = "remote"
    elif io.files is not None and items is not None and (not shards or (lay is not None and lay.fast_index_crc is not None)):
        source = "files"
    else:
        source = "store"
    prefix = "sharded-" if shards else ""
    if items is not None:
        if not len(items[0]):
            return fused.FusedOutput(io, indexer, items, out, missing).out
        strategy_counts[f"{prefix}fused-{source}"] += 1
        backend = _FUSED[(shards, source)]
        for g_io, ii, coords in io.task_groups(items[0]):
            g_items = items if ii is None else (coords, items[1][ii], items[2][ii], items[3][ii])
            fo = fused.FusedOutput(g_io, indexer, g_items, out, missing)
            fo.prepare()
            backend(g_io, fo)
            out = fo.out
        assert out is not None
        return out
    strategy_counts[f"{prefix}per-codec" + ("-remote" if source == "remote" else "")] += 1
    if out is None:
        out = np.empty(indexer.shape, dtype=io.dtype)
    backend2 = _PER_CODEC[(shards, "remote" if source == "remote" else "store")]
    for g_io, projs in io.projection_groups(list(indexer)):
        backend2(g_io, projs, out, missing)
    return out


def check_out(io: ArrayIO, indexer: Any, out: np.ndarray | None) -> np.ndarray | None:
    """``out`` checked as the output of a read of ``indexer`` (the selection's shape, the array's
    dtype, writable), or None."""
    if out is None:
        return None
    if not isinstance(out, np.ndarray) or tuple(out.shape) != tuple(indexer.shape) or out.dtype != io.dtype:
        raise ValueError(f"out must be a numpy array of shape {tuple(indexer.shape)} and dtype {io.dtype}, got "
                         f"{type(out).__name__} {getattr(out, 'shape', None)} {getattr(out, 'dtype', None)}")
    if not out.flags.writeable:
        raise ValueError("out must be writable")
    return out


def _fused_tasks(io: ArrayIO, indexer: Any) -> tuple[Any, ...] | None:
    """The fused decode's tasks (ints and step-1 slices, a chain with a C plan), or None."""
    if io.plan is None or not io.ndim or not hasattr(indexer, "unit_step_items"):
        return None
    items: tuple[Any, ...] | None = indexer.unit_step_items()
    return items
