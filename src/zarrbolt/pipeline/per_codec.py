"""The per-codec decode of a read: each chunk (or a shard's inner chunk) decoded by the Python codec
chain, then the selected part of it copied into its place in the output.

This is the way of chains without a C plan and of selections the fused decode does not take
(steps, index arrays, coordinates).  The chunks' bytes come through the Store API: whole chunks
by ``get``, a shard's wanted inner chunks by :func:`.shard.fetch.fetch_inner_chunks` (its index
by one byte range, then the chunks in coalesced ranges; a shard wanted whole by one request), or
from what a remote read staged (:mod:`.remote` gives its own ``fetch``).  Work is spread over the
Python thread pool (the codecs release the GIL).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._threads import run_batches
from ..errors import CodecError, CorruptChunkError, MetadataError
from ..indexing import ChunkProjection
from .context import ArrayIO
from .shard.fetch import fetch_inner_chunks, work_items

__all__ = ["projections", "shard_groups", "shards", "sharded_groups"]


def projections(io: ArrayIO, projs: list[Any], out: np.ndarray, missing: set[Any] | None) -> None:
    """The chunks of ``projs`` read through ``io.store`` and decoded into ``out``; the keys of
    absent ones are added to ``missing``."""
    if not projs:
        return
    store, fill = io.store, io.fill

    def work(batch: Sequence[ChunkProjection]) -> None:
        for p in batch:
            key = io.chunk_key(p.chunk_coords)
            data = store.get(key)
            if data is None:
                out[p.out_selection] = fill
                if missing is not None:
                    missing.add(key)
                continue
            chunk = io.decode_chunk(data, key)
            out[p.out_selection] = chunk[p.chunk_selection]

    run_batches(work, projs, cost=io.bound.spec.nbytes * len(projs))


def shards(io: ArrayIO, projs: list[Any], out: np.ndarray, missing: set[Any] | None) -> None:
    """Projections over the inner chunk grid: per shard only the inner chunks the selection
    touches fetched (see :func:`.shard.fetch.fetch_inner_chunks`), each decoded by the inner
    chain."""
    shard_groups(io, sharded_groups(io, projs), out, missing)


def sharded_groups(io: ArrayIO, projs: list[Any]) -> dict[tuple[int, ...], list[tuple[int, ChunkProjection]]]:
    """The projections over the inner chunk grid grouped by shard: ``{shard coords: [(flat
    inner chunk number, projection)]}``."""
    assert io.layout is not None
    cps = io.layout.chunks_per_shard
    by_shard: dict[tuple[int, ...], list[tuple[int, ChunkProjection]]] = {}
    strides = [1] * len(cps)
    for d in range(len(cps) - 2, -1, -1):
        strides[d] = strides[d + 1] * cps[d + 1]
    for p in projs:
        sc = tuple(c // n for c, n in zip(p.chunk_coords, cps))
        flat = sum((c % n) * st for c, n, st in zip(p.chunk_coords, cps, strides))
        by_shard.setdefault(sc, []).append((flat, p))
    return by_shard


def shard_groups(io: ArrayIO, by_shard: dict[tuple[int, ...], Any], out: np.ndarray, missing: set[Any] | None,
                 fetch: Callable[..., list[Any] | None] = fetch_inner_chunks) -> None:
    """Decode the inner chunks of ``by_shard`` (:func:`sharded_groups`) with the inner chain into
    ``out``; ``fetch`` gets a shard's wanted inner chunks (see :func:`.shard.fetch.fetch_inner_chunks`)."""
    if not by_shard:
        return
    lay = io.layout
    assert lay is not None
    items = work_items(list(by_shard.items()), sum(len(e) for e in by_shard.values()), lay)
    fill, inner = io.fill, lay.inner

    def work(batch: Sequence[tuple[Any, ...]]) -> None:
        for sc, entries, whole in batch:
            key = io.chunk_key(sc)
            parts = fetch(io.store, key, io.sharding, lay, [f for f, _ in entries], whole)
            if parts is None and missing is not None:
                missing.add(key)
            for (flat, p), data in zip(entries, parts if parts is not None else [None] * len(entries)):
                if data is None:
                    out[p.out_selection] = fill
                    continue
                try:
                    chunk = inner.decode(data)
                except (CodecError, MetadataError) as e:
                    raise type(e)(f"shard {key!r}, inner chunk {flat}: {e}") from e
                except (ValueError, TypeError) as e:
                    raise CorruptChunkError(f"shard {key!r}, inner chunk {flat}: {e}") from e
                out[p.out_selection] = chunk[p.chunk_selection]

    cost = lay.inner.spec.nbytes * sum(len(e) for _, e, _ in items)
    run_batches(work, items, cost=cost)
