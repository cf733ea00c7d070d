"""What the read and write paths need to know about one open array (:class:`ArrayIO`)."""

from __future__ import annotations

import copy
from typing import Any, Callable

import numpy as np

from .. import config
from ..errors import CodecError, CorruptChunkError, MetadataError
from ..storage import Store


def async_source(store: Any) -> Any | None:
    """``store.async_source()`` (None for objects that only look like stores)."""
    return store.async_source() if isinstance(store, Store) else None


class ArrayIO:
    """One array's store, chunk keys, bound codec chain and compiled C plans, as the pipeline
    uses them (:mod:`.read`, :mod:`.write`).  Made again whenever the array's metadata changes.

    ``files`` is the store's native file access (:meth:`~zarrbolt.storage.Store.native_files`);
    ``plan`` is the fused decode plan (of the inner chunks for shards read directly), or None;
    ``eplans`` caches the encode plans: by ``write_empty`` (False / True) and ``"inner"``."""

    def __init__(self, store: Store, path: str, metadata: Any):
        self.store = store
        # the store's native file access (see Store.native_files), or None; objects that only
        # look like stores have none
        self.files = store.native_files() if isinstance(store, Store) else None
        # the store's async face (remote stores; see Store.async_source), or None: reads of
        # such a store are staged (pipeline/remote.py), writes collected (storage/write_behind.py)
        self.source = async_source(store)
        self.metadata = metadata
        self.shape = tuple(metadata.shape)
        self.ndim = len(self.shape)
        self.grid = metadata.chunk_grid
        self.dtype: np.dtype = metadata.data_type.numpy_dtype
        self.fill = metadata.fill_value
        self.key_prefix = f"{path}/" if path else ""
        self._encode_key: Callable[[tuple[int, ...]], str] = metadata.chunk_key_encoding.encode_chunk_key
        self._bind(metadata.bound_codecs)
        self._variants: dict[tuple[int, ...], ArrayIO] = {}

    def _bind(self, bound: Any) -> None:
        """What depends on the chunk shape the codecs see: the bound chain, the shard layout and
        the compiled plans."""
        from ..codecs.sharding import ShardingCodec
        from .plan import compile_decode_plan

        self.bound = bound
        self.chain = bound.chain
        self.chunk_shape = tuple(bound.spec.shape)
        ab = self.chain.ab
        self.sharding = ab if isinstance(ab, ShardingCodec) else None
        # Partial reads/writes of shards need the shard to be the array->bytes input directly.
        self.shard_direct = self.sharding is not None and not self.chain.aa and not self.chain.bb
        self.layout = self.sharding.layout(bound.ab_spec) if self.sharding is not None else None
        if self.shard_direct and self.layout is not None:
            self.plan = compile_decode_plan(self.layout.inner)
        else:
            self.plan = compile_decode_plan(bound) if self.sharding is None else None
        self.eplans: dict[Any, Any] = {}

    # ------------------------------------------------------------------ chunks of several shapes
    def variant(self, shape: tuple[int, ...]) -> ArrayIO:
        """This array's I/O for its chunks of codec shape ``shape`` (a grid whose chunks differ in
        shape: each shape has its own bound chain, shard layout and plans); cached."""
        if shape == self.chunk_shape:
            return self
        io = self._variants.get(shape)
        if io is None:
            from ..codecs.abc import ChunkSpec

            io = copy.copy(self)
            io._bind(self.chain.bind(ChunkSpec(shape, self.metadata.data_type, self.fill)))
            io._variants = {}
            self._variants[shape] = io
        return io

    def _by_shape(self, shapes: np.ndarray | None) -> list[tuple[ArrayIO, np.ndarray | None]]:
        """Tasks grouped by their chunks' codec ``shapes`` (None: all this I/O's)."""
        if shapes is None:
            return [(self, None)]
        uniq, inv = np.unique(shapes, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        return [(self.variant(tuple(int(x) for x in u)), np.flatnonzero(inv == k)) for k, u in enumerate(uniq)]

    def task_groups(self, coords: np.ndarray) -> list[tuple[ArrayIO, np.ndarray | None, np.ndarray]]:
        """The read tasks at chunk grid ``coords`` ((n, ndim): of the inner chunk grid for shards
        read directly) grouped by the codec shape of the chunk or shard they are in:
        ``[(this array's I/O for that shape, the tasks' indices (None: all), their coordinates
        as that I/O sees them)]``.  A shard's inner chunks are seen as if every shard had that
        shard's shape (its shard at ``coords // chunks_per_shard``), so that the shard I/O below
        works on one layout.  One group for a grid whose chunks have one shape."""
        if self.grid.regular:
            return [(self, None, coords)]
        if not self.shard_direct:
            return [(io, ii, coords if ii is None else coords[ii])
                    for io, ii in self._by_shape(self.grid.codec_shapes(coords))]
        outer, local = self._outer(coords)
        groups = []
        for io, ii in self._by_shape(self.grid.codec_shapes(outer)):
            assert io.layout is not None
            sel = slice(None) if ii is None else ii
            groups.append((io, ii, outer[sel] * np.asarray(io.layout.chunks_per_shard, np.int64) + local[sel]))
        return groups

    def projection_groups(self, projections: list[Any]) -> list[tuple[ArrayIO, list[Any]]]:
        """:meth:`task_groups` of projections (``ChunkProjection`` s; their chunk coordinates as
        the group's I/O sees them)."""
        if self.grid.regular or not projections:
            return [(self, projections)]
        coords = np.array([p.chunk_coords for p in projections], dtype=np.int64).reshape(len(projections), self.ndim)
        out = []
        for io, ii, seen in self.task_groups(coords):
            idx = range(len(projections)) if ii is None else ii.tolist()
            out.append((io, [projections[i]._replace(chunk_coords=tuple(seen[k].tolist())) for k, i in enumerate(idx)]))
        return out

    def write_groups(self, projections: list[Any]) -> list[tuple[ArrayIO, list[Any]]]:
        """The projections of a write (over the array's chunk grid: its chunks, or its shards)
        grouped by their chunks' codec shape: ``[(this array's I/O for that shape, projections)]``."""
        if self.grid.regular or not projections:
            return [(self, projections)]
        coords = np.array([p.chunk_coords for p in projections], dtype=np.int64).reshape(len(projections), self.ndim)
        return [(io, projections if ii is None else [projections[i] for i in ii.tolist()])
                for io, ii in self._by_shape(self.grid.codec_shapes(coords))]

    def _outer(self, coords: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For inner chunks at ``coords`` of the inner chunk grid: the coordinates of their shards
        (the array's chunk grid) and theirs within their shard."""
        assert self.layout is not None
        inner = self.layout.chunk_shape
        outer = np.empty_like(coords)
        local = np.empty_like(coords)
        for d in range(self.ndim):
            pos = coords[:, d] * inner[d]
            ax = self.grid.axis(d, self.shape[d])
            if isinstance(ax, (int, np.integer)):
                outer[:, d] = pos // int(ax)
                local[:, d] = (pos % int(ax)) // inner[d]
            else:
                o = ax.index(pos)
                outer[:, d] = o
                local[:, d] = (pos - ax.start(o)) // inner[d]
        return outer, local

    def with_store(self, store: Store) -> ArrayIO:
        """This array's I/O over another store (a shallow copy: the compiled plans are shared):
        the new store's native files and async source, if any, are used."""
        io = copy.copy(self)
        io.store = store
        io.files = store.native_files()
        io.source = async_source(store)
        io._variants = {}
        return io

    def chunk_key(self, coords: tuple[int, ...]) -> str:
        return self.key_prefix + self._encode_key(coords)

    def decode_chunk(self, data: Any, key: str) -> np.ndarray:
        """Chunk ``key``'s bytes decoded by the per-codec chain; errors name the chunk."""
        try:
            arr: np.ndarray = self.bound.decode(data)
            return arr
        except (CodecError, MetadataError) as e:
            raise type(e)(f"chunk {key!r}: {e}") from e
        except (ValueError, TypeError) as e:
            raise CorruptChunkError(f"chunk {key!r}: {e}") from e

    def encode_plan(self, write_empty: bool) -> Any | None:
        """The fused encode plan of whole chunks (None: the chain has none, or it is off)."""
        if not config.get("fused_pipeline"):
            return None
        if write_empty not in self.eplans:
            from .plan import compile_encode_plan

            self.eplans[write_empty] = compile_encode_plan(self.bound, not write_empty)
        return self.eplans[write_empty]

    def inner_encode_plan(self, keep_empty: bool = False) -> Any | None:
        """The fused encode plan of the inner chunks of shards written whole, or None.
        Inner chunks equal to the fill value are left out of the shard, unless ``keep_empty``
        (zarr-python's ``write_empty_chunks=True`` keeps them)."""
        if not config.get("fused_pipeline"):
            return None
        name = "inner-keep" if keep_empty else "inner"
        if name not in self.eplans:
            from .plan import compile_encode_plan

            assert self.layout is not None  # (the inner chains are the sharded arrays')
            self.eplans[name] = compile_encode_plan(self.layout.inner, not keep_empty)
        return self.eplans[name]
