"""Staged reads and deferred writes of zarr-python stores: everything one read needs fetched
concurrently on the event loop first (by zarrbolt's core staging, :func:`zarrbolt.pipeline.remote.
stage`, with a :class:`~.stores.LoopBridge` as the async source) into a
:class:`~zarrbolt.storage.staged.StagedStore`, then served from memory to zarrbolt's planner
(which runs in a worker thread and would otherwise wait for one request at a time); a write's
stores collected in a :class:`~zarrbolt.storage.write_behind.WriteBehindStore` and sent together.

:func:`staged_read_store` fetches whole objects for chunk keys, and for the shards of arrays
read shard by shard (``ArrayIO.shard_direct``) the index by one suffix (or prefix) request,
then the wanted inner chunks' byte ranges coalesced as the planner coalesces them
(:data:`~zarrbolt.pipeline.shard.fetch.COALESCE_GAP`), all with at most ``concurrency`` requests
in flight.  The store it returns serves those bytes as views of the fetched buffers; anything
else falls through to the bridge.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import numpy as np

from ..pipeline.remote import Staged, stage
from ..pipeline.shard.fetch import COALESCE_GAP, group_by_shard
from ..storage.staged import StagedStore
from ..storage.write_behind import WriteBehindStore
from .stores import LoopBridge

__all__ = ["deferred_store", "read_requests", "staged_read_store", "write_requests"]


async def staged_read_store(zstore: Any, loop: asyncio.AbstractEventLoop, io: Any,
                            requests: dict[str, list[int] | None], *, concurrency: int | None = None) -> StagedStore:
    """Fetch, concurrently, what a read of array ``io`` (a :class:`~zarrbolt.pipeline.context.
    ArrayIO`) needs from the zarr-python store ``zstore``, and return a store serving it.

    ``requests``: store key -> None (the whole object) or the flat numbers of the inner chunks
    wanted from that shard (used when ``io.shard_direct``; all of them: the whole shard in one
    request).  At most ``concurrency`` requests (zarr-python's ``async.concurrency`` by
    default) are in flight.  Absent keys and shards read as absent.  A damaged shard index
    raises what zarrbolt raises for it everywhere (CorruptChunkError, ChecksumError), a store
    failure StoreError; every fetch has finished when it does."""
    bridge = LoopBridge(zstore, loop, concurrency=concurrency)
    staged = await stage(Staged(io, bridge), bridge, requests, max_gap=COALESCE_GAP)
    return staged.store


def deferred_store(base: Any, bridge: LoopBridge) -> WriteBehindStore:
    """The store a write goes through: its reads from ``base`` (the bridge, or what was staged
    over it), its writes collected and sent through ``bridge`` (at the latest by ``aflush()``,
    awaited on the bridge's loop; before that whenever half the bytes in flight are collected)."""
    return WriteBehindStore(base, bridge, limit=max(1, bridge.max_bytes_in_flight // 2))


# ---------------------------------------------------------------------------- what a read needs
def _chunk_coords(indexer: Any, ndim: int) -> np.ndarray:
    items = indexer.unit_step_items() if hasattr(indexer, "unit_step_items") else None
    if items is not None:
        return np.asarray(items[0], dtype=np.int64).reshape(-1, ndim)
    return np.asarray([p.chunk_coords for p in indexer], dtype=np.int64).reshape(-1, ndim)


def read_requests(io: Any, make_indexer: Callable[[Any], Any]) -> dict[str, list[int] | None]:
    """The ``requests`` argument of :func:`staged_read_store` for a read of ``io`` whose indexer
    ``make_indexer(chunks)`` makes (as :func:`zarrbolt.pipeline.read.read` takes it)."""
    if io.ndim == 0:
        return {io.chunk_key(()): None}
    if io.shard_direct:
        coords = _chunk_coords(make_indexer(io.layout.chunk_shape), io.ndim)
        if not len(coords):
            return {}
        req: dict[str, list[int] | None] = {}
        for g_io, _, seen in io.task_groups(coords):
            flat, groups = group_by_shard(seen, g_io.layout.chunks_per_shard)
            req.update({io.chunk_key(sc): sorted(set(flat[g].tolist())) for sc, g in groups})
        return req
    coords = _chunk_coords(make_indexer(io.grid), io.ndim)
    return {io.chunk_key(tuple(c)): None for c in coords.tolist()}


def write_requests(io: Any, indexer: Any) -> dict[str, list[int] | None]:
    """The ``requests`` for staging what a write of ``io`` at ``indexer`` (over ``io.chunk_shape``,
    as :func:`zarrbolt.pipeline.write.write` takes it) reads: the chunks and shards it updates in
    part (whole: the write planner reads them whole), not the ones it overwrites."""
    return {io.chunk_key(p.chunk_coords): None for p in indexer if not p.is_complete_chunk}
