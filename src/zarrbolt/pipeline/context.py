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
        from ..codecs.sharding import ShardingCodec
        from .plan import compile_decode_plan

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
        self.bound = metadata.bound_codecs
        self.chain = self.bound.chain
        self.chunk_shape = tuple(metadata.chunks)
        self.grid = metadata.chunk_grid
        self.dtype: np.dtype = metadata.data_type.numpy_dtype
        self.fill = metadata.fill_value
        self.key_prefix = f"{path}/" if path else ""
        self._encode_key: Callable[[tuple[int, ...]], str] = metadata.chunk_key_encoding.encode_chunk_key
        ab = self.chain.ab
        self.sharding = ab if isinstance(ab, ShardingCodec) else None
        # Partial reads/writes of shards need the shard to be the array->bytes input directly.
        self.shard_direct = self.sharding is not None and not self.chain.aa and not self.chain.bb
        self.layout = self.sharding.layout(self.bound.ab_spec) if self.sharding is not None else None
        if self.shard_direct and self.layout is not None:
            self.plan = compile_decode_plan(self.layout.inner)
        else:
            self.plan = compile_decode_plan(self.bound) if self.sharding is None else None
        self.eplans: dict[Any, Any] = {}

    def with_store(self, store: Store) -> ArrayIO:
        """This array's I/O over another store (a shallow copy: the compiled plans are shared):
        the new store's native files and async source, if any, are used."""
        io = copy.copy(self)
        io.store = store
        io.files = store.native_files()
        io.source = async_source(store)
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
