"""zarrbolt's zarr-python codec pipeline: zarr-python's reads and writes through zarrbolt's read
and write planners and C plans (see :mod:`zarrbolt.codec_pipeline`)."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
from zarr.abc.codec import CodecPipeline, GetResult
from zarr.core.codec_pipeline import BatchedCodecPipeline
from zarr.core.config import config as zarr_config

from .. import config as zb_config
from ..indexing import basic_indexer
from ..pipeline import read as read_planner
from ..pipeline import write as write_planner
from ..pipeline.context import ArrayIO
from . import adapt
from .batch import KeyParser, box_of, complete_in, inner_flats, item_bbox, shift_selection
from .stores import run_in_worker

logger = logging.getLogger("zarrbolt.codec_pipeline")

# Arrays that zarr-python's own pipeline serves, by reason (see adapt.unsupported_reason).
fallback_counts: Counter[Any] = Counter()
# Calls of arrays zarrbolt serves that were handed to zarr-python's pipeline all the same, by
# reason (selections the planners do not take, a non-CPU buffer, ...).
delegated_counts: Counter[Any] = Counter()

_MISSING = GetResult(status="missing")
_PRESENT = GetResult(status="present")


class ZarrboltCodecPipeline(CodecPipeline):
    """A zarr-python 3 codec pipeline that reads and writes through zarrbolt.

    Turn it on with ``zarr.config.set({"codec_pipeline.path":
    "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"})``.  Arrays zarrbolt cannot serve (zarr
    format 2, codecs or data types it lacks) use zarr-python's own ``BatchedCodecPipeline``,
    counted in ``fallback_counts``."""

    __module__ = "zarrbolt.codec_pipeline"

    def __init__(self, wrapped: Any, meta: Any = None, reason: str | None = None):
        self._wrapped = wrapped  # zarr-python's pipeline for the same codecs
        self._meta = meta  # zarrbolt's ArrayMetadata of the array; None: delegate everything
        self.fallback_reason = reason
        self._cache: _Cache | None = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_codecs(cls, codecs: Iterable[Any]) -> ZarrboltCodecPipeline:
        """A pipeline of ``codecs`` not yet bound to an array: zarr-python's pipeline serves it."""
        return cls(BatchedCodecPipeline.from_codecs(codecs))

    @classmethod
    def from_array_metadata_and_store(cls, array_metadata: Any, store: Any) -> ZarrboltCodecPipeline:
        """The pipeline of an array (zarr-python's metadata object) in ``store``: zarrbolt serves it
        when it supports the array, else zarr-python's pipeline (the reason counted in ``fallback_counts``).
        """
        wrapped = adapt.zarr_pipeline(array_metadata)
        meta, reason = adapt.zarrbolt_metadata(array_metadata, store)
        if meta is None:
            fallback_counts[reason] += 1
            logger.debug("zarr-python's pipeline serves this array: %s", reason)
        return cls(wrapped, meta, reason)

    def evolve_from_array_spec(self, array_spec: Any) -> ZarrboltCodecPipeline:
        """The pipeline for ``array_spec`` (zarr-python's hook), serving the same array."""
        return type(self)(self._wrapped.evolve_from_array_spec(array_spec), self._meta, self.fallback_reason)

    # ------------------------------------------------------------------ delegated
    def __iter__(self) -> Iterator[Any]:
        return iter(self._wrapped)

    @property
    def codecs(self) -> tuple[Any, ...]:
        """The codecs, as zarr-python's pipeline has them."""
        return tuple(self._wrapped.codecs)

    @property
    def supports_partial_decode(self) -> bool:
        """Whether the codecs decode parts of a chunk (zarr-python's)."""
        return self._wrapped.supports_partial_decode

    @property
    def supports_partial_encode(self) -> bool:
        """Whether the codecs encode parts of a chunk (zarr-python's)."""
        return self._wrapped.supports_partial_encode

    def validate(self, *, shape: tuple[int, ...], dtype: Any, chunk_grid: Any) -> None:
        """Check the codecs against an array's ``shape``, ``dtype`` and ``chunk_grid`` (zarr-python's)."""
        self._wrapped.validate(shape=shape, dtype=dtype, chunk_grid=chunk_grid)

    def compute_encoded_size(self, byte_length: int, array_spec: Any) -> int:
        """The encoded size of ``byte_length`` bytes of a chunk of ``array_spec`` (zarr-python's)."""
        return self._wrapped.compute_encoded_size(byte_length, array_spec)

    async def decode(self, chunk_bytes_and_specs: Iterable[tuple[Any, Any]]) -> Iterable[Any]:
        """Decode chunks' bytes (zarr-python's pipeline: zarrbolt serves :meth:`read`)."""
        return await self._wrapped.decode(chunk_bytes_and_specs)

    async def encode(self, chunk_arrays_and_specs: Iterable[tuple[Any, Any]]) -> Iterable[Any]:
        """Encode chunks (zarr-python's pipeline: zarrbolt serves :meth:`write`)."""
        return await self._wrapped.encode(chunk_arrays_and_specs)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._wrapped == other._wrapped and self._meta == other._meta

    def __hash__(self) -> int:
        return hash(self._wrapped)

    def __repr__(self) -> str:
        how = "zarrbolt" if self._meta is not None else f"zarr-python ({self.fallback_reason or 'codecs'})"
        return f"ZarrboltCodecPipeline({how})"

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict[str, Any]:
        return {"wrapped": self._wrapped, "meta": None if self._meta is None else self._meta.to_json(),
                "reason": self.fallback_reason}

    def __setstate__(self, state: dict[str, Any]) -> None:
        from ..metadata import ArrayMetadata

        self._wrapped = state["wrapped"]
        doc = state["meta"]
        if doc is None:
            self._meta = None
        elif doc.get("zarr_format") == 2:
            from ..metadata.v2 import parse_v2_array

            self._meta = parse_v2_array(doc)
        else:
            self._meta = ArrayMetadata.from_json(doc)
        self.fallback_reason = state["reason"]
        self._cache = None

    # ------------------------------------------------------------------ reading
    async def read(self, batch_info: Iterable[tuple[Any, ...]], out: Any, drop_axes: tuple[int, ...] = ()) -> tuple[Any, ...]:
        """Read the chunks of ``batch_info`` (zarr-python's ``(byte getter, chunk spec, chunk
        selection, out selection, is complete)`` items) into ``out``, in C with the GIL released when
        zarrbolt serves the array and the selection; otherwise zarr-python's pipeline does.  Returns
        per item zarr-python's ``GetResult``: whether its chunk was stored.
        """
        batch = list(batch_info)
        if not batch:
            return ()
        job = await self._job(batch, out)
        if job is None:
            return await self._wrapped.read(batch, out, drop_axes)
        zstore, prefix, coords = job
        out_np = adapt.numpy_of(out)
        assert out_np is not None  # (batch_problem checked the buffer)
        io = self._io(zstore, prefix)
        boxes = [io.grid.chunk_box(c) for c in coords]
        box = box_of(coords, batch, boxes, drop_axes)
        if box is not None and tuple(out_np.shape) != box.shape():
            box = None
        plan = None if box is not None else _item_plans(batch, boxes)
        if box is None and plan is None:
            delegated_counts["read selection"] += 1
            return await self._wrapped.read(batch, out, drop_axes)
        missing: set[Any] = set()
        with _zarr_settings():
            if io.store is None:
                io = io.with_store(await adapt.staged_store(zstore, io, _requests(io, coords, batch)))
            if box is not None:
                await run_in_worker(_read_box, io, box, out_np, missing)
            else:
                await run_in_worker(_read_items, io, boxes, batch, plan, out_np, drop_axes, missing)
        return tuple(_MISSING if it[0].path in missing else _PRESENT for it in batch)

    # ------------------------------------------------------------------ writing
    async def write(self, batch_info: Iterable[tuple[Any, ...]], value: Any, drop_axes: tuple[int, ...] = ()) -> None:
        """Write ``value`` into the chunks of ``batch_info`` (as :meth:`read`'s), through zarrbolt's
        write pipeline when it serves the array and the selection; otherwise zarr-python's pipeline does.
        """
        batch = list(batch_info)
        if not batch:
            return
        job = await self._job(batch, value)
        if job is None:
            return await self._wrapped.write(batch, value, drop_axes)
        zstore, prefix, coords = job
        if getattr(zstore, "read_only", False) is True:  # zarr-python raises its own error for it
            return await self._wrapped.write(batch, value, drop_axes)
        value_np = adapt.numpy_of(value)
        assert value_np is not None  # (batch_problem checked the buffer)
        value_np = adapt.to_native(value_np, self._meta.dtype)  # (a big-endian type's values: swapped)
        io = self._io(zstore, prefix)
        box = box_of(coords, batch, [io.grid.chunk_box(c) for c in coords], drop_axes)
        if box is not None and value_np.ndim and tuple(value_np.shape) != box.shape():
            box = None
        if box is not None and not _shape_agrees(io, box, coords, batch):
            # the array was resized since this pipeline was made (zarr-python resizes in place,
            # keeping its pipeline): the shape grown to hold the box, where the batch agrees with
            # it, writes exactly as the array's own shape would (see _grown); else the metadata
            # is read again
            grown = self._grown(zstore, prefix, io, box, coords, batch)
            fresh = grown if grown is not None else await self._refresh(zstore, prefix)
            if fresh is None or not _shape_agrees(fresh, box, coords, batch):
                box = None
            else:
                io = fresh
        if box is None:
            delegated_counts["write selection"] += 1
            return await self._wrapped.write(batch, value, drop_axes)
        write_empty = bool(batch[0][1].config.write_empty_chunks)
        with _zarr_settings():
            io, indexer = _write_target(io, box)
            if io.store is None:
                deferred = await adapt.deferred_store(zstore, io, indexer)
                await run_in_worker(_write_box, io.with_store(deferred), indexer, value_np, write_empty)
                await deferred.aflush()
            else:
                await run_in_worker(_write_box, io, indexer, value_np, write_empty)

    # ------------------------------------------------------------------ helpers
    async def _job(self, batch: list[Any], buf: Any) -> tuple[Any, str, list[Any]] | None:
        """``(zarr store, array prefix, chunk coords per item)`` when zarrbolt serves this
        call, else None (and the reason is counted)."""
        if self._meta is None:
            return None
        why = adapt.batch_problem(batch, buf, self._meta)
        if why is None:
            try:
                prefix, coords = _split_keys(batch, self._meta)
            except Exception:  # noqa: BLE001 - keys zarrbolt does not parse: zarr-python's way
                prefix, coords, why = "", [], "chunk keys"
            else:
                why = adapt.spec_problem(batch, coords, self._meta)
                if why is not None and await self._refresh(batch[0][0].store, prefix) is not None:
                    # chunks whose shape the metadata this pipeline was made with does not know: the
                    # array was resized since (its grid lists its chunks): read its metadata again
                    why = adapt.spec_problem(batch, coords, self._meta)
        if why is not None:
            delegated_counts[why] += 1
            return None
        return batch[0][0].store, prefix, coords

    def _io(self, zstore: Any, prefix: str) -> ArrayIO:
        """The array's ArrayIO for ``prefix`` on ``zstore``'s native store (``store`` None when
        the zarr store has none: each call then gives it its own)."""
        cache = self._cache
        if cache is None:
            cache = self._cache = _Cache()
        key = (id(zstore), prefix)
        with cache.lock:
            hit = cache.ios.get(key)
            if hit is not None and hit[0] is zstore:
                return hit[1]
        native = adapt.native_store(zstore)
        io = ArrayIO(native if native is not None else adapt.NO_STORE, prefix, self._meta)
        if native is None:
            io.store = None  # type: ignore[assignment]  # each call gives it its own
        with cache.lock:
            cache.ios[key] = (zstore, io)
        return io

    def _grown(self, zstore: Any, prefix: str, io: ArrayIO, box: Any, coords: list[Any],
               batch: list[Any]) -> ArrayIO | None:
        """The array grown to hold ``box`` (of a regular grid), when every item's whole-chunk
        flag is what that shape gives: then each chunk is clipped to it as to the array's real
        shape (which is at least as large: a complete chunk ends within the box, an incomplete
        one is updated, not rewritten), so the write is the same.  Becomes this pipeline's
        metadata (its shape is only ever compared and grown); None where it does not agree."""
        if not io.grid.regular:
            return None
        shape = _shape_eff(io, box.hi)
        if shape == tuple(io.shape):
            return None
        meta = self._meta.resized(shape)
        grown = ArrayIO(io.store if io.store is not None else adapt.NO_STORE, prefix, meta)
        if io.store is None:
            grown.store = None
        if not _shape_agrees(grown, box, coords, batch):
            return None
        if self._meta.zarr_format == 3:
            adapt.copy_write_orders(self._meta.codecs, meta.codecs)
        self._meta = meta
        self._cache = None
        return self._io(zstore, prefix)

    async def _refresh(self, zstore: Any, prefix: str) -> ArrayIO | None:
        meta = await adapt.load_metadata(zstore, prefix, self._meta)
        if meta is None:
            return None
        self._meta = meta
        self._cache = None
        return self._io(zstore, prefix)


class _Cache:
    """What a pipeline keeps between calls (never pickled): an ArrayIO per store and prefix."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ios: dict[tuple[int, str], tuple[Any, ArrayIO]] = {}


@contextlib.contextmanager
def _zarr_settings() -> Iterator[None]:
    """zarr-python's ``threading.max_workers`` as zarrbolt's thread count for this call, and no
    shard-index cache (zarr-python reads each shard's index anew: another process may have
    rewritten the shard since)."""
    n = zarr_config.get("threading.max_workers", None)
    try:
        n = None if n is None else max(1, int(n))
    except (TypeError, ValueError):
        n = None
    with zb_config.override(remote_index_cache=0, **({} if n is None else {"threads": n})):
        yield


def _split_keys(batch: list[Any], meta: Any) -> tuple[str, list[tuple[int, ...]]]:
    parser = KeyParser(meta.chunk_key_encoding, len(meta.shape))
    prefix, first = parser.split(batch[0][0].path)
    coords = [first]
    for item in batch[1:]:
        p, c = parser.split(item[0].path)
        if p != prefix:
            raise ValueError("items of several arrays in one batch")
        coords.append(c)
    return prefix, coords


def _shape_eff(io: ArrayIO, hi: Iterable[int]) -> tuple[int, ...]:
    """A shape that holds the selection: reads do not depend on the array's shape beyond that,
    so a pipeline made before the array grew still reads right."""
    return tuple(max(a, b) for a, b in zip(io.shape, hi))


def _read_box(io: ArrayIO, box: Any, out: np.ndarray, missing: set[Any]) -> None:
    shape = _shape_eff(io, box.hi)
    target = adapt.native_view(out, io.dtype)  # a big-endian buffer: read native, then swapped
    read_planner.read(io, lambda cs: basic_indexer(box.sel, shape, cs), out=target, missing=missing)
    if target is not out:
        adapt.swap_in_place(target)


def _item_plans(batch: list[Any], boxes: list[Any]) -> list[Any] | None:
    """Per item: its chunk selection normalised and its bounding box in the chunk (at ``boxes``:
    ``(origin, shape)`` each); None when one is not understood."""
    plans = []
    for item, (_, shape) in zip(batch, boxes):
        bb = item_bbox(item[2], shape)
        if bb is None:
            return None
        plans.append(bb)
    return plans


def _read_items(io: ArrayIO, boxes: list[Any], batch: list[Any], plans: list[Any], out: np.ndarray,
                drop_axes: tuple[int, ...], missing: set[Any]) -> None:
    """Any selection, item by item: the bounding box of the item's selection in its chunk (at
    ``boxes``) read by the planner, then the selection taken from it and put in its place in
    ``out`` (numpy's assignment: into a big-endian buffer, swapped)."""
    for (origin, _), item, (norm, lo, hi) in zip(boxes, batch, plans):
        key = item[0].path
        if any(h <= l for l, h in zip(lo, hi)):
            if not io.store.exists(key):
                missing.add(key)
            continue
        g = tuple(slice(o + a, o + b) for o, a, b in zip(origin, lo, hi))
        shape = _shape_eff(io, [s.stop for s in g])
        tmp = np.empty(tuple(b - a for a, b in zip(lo, hi)), dtype=io.dtype)
        read_planner.read(io, lambda chunks: basic_indexer(g, shape, chunks), out=tmp, missing=missing)  # noqa: B023
        piece = tmp[shift_selection(norm, lo)]
        if drop_axes:
            piece = piece.squeeze(axis=drop_axes)
        out[item[3]] = piece


def _requests(io: ArrayIO, coords: list[Any], batch: list[Any]) -> dict[str, list[int] | None]:
    """What a read of ``batch`` needs from a store it stages: per store key None (the whole
    value) or, for shards read directly, the flat indices of the inner chunks it touches."""
    if not io.shard_direct:
        return {item[0].path: None for item in batch}
    req: dict[str, list[int] | None] = {}
    for c, item in zip(coords, batch):
        shard_shape = io.grid.chunk_box(c)[1]
        lay = io.variant(shard_shape).layout
        assert lay is not None
        inner, cps = lay.chunk_shape, lay.chunks_per_shard
        bb = item_bbox(item[2], shard_shape)
        if bb is None:
            req[item[0].path] = list(range(int(np.prod(cps))))
            continue
        req[item[0].path] = inner_flats(bb[1], bb[2], inner, cps).tolist()
    return req


def _shape_agrees(io: ArrayIO, box: Any, coords: list[Any], batch: list[Any]) -> bool:
    """Whether the array shape this pipeline knows agrees with the batch: the box lies inside
    it and zarr-python's ``is_complete_chunk`` of every item is what that shape gives."""
    if any(b > n for b, n in zip(box.hi, io.shape)):
        return False
    return all(complete_in(io.grid.chunk_box(c), item[2], io.shape) == bool(item[4]) for c, item in zip(coords, batch))


def _write_target(io: ArrayIO, box: Any) -> tuple[ArrayIO, Any]:
    """The ArrayIO and indexer a write of ``box`` goes through."""
    shape = io.shape
    if io.shard_direct:
        # as zarr-python: a shard at the array's edge is updated, not rewritten, so that what
        # it holds beyond the edge (after a shrinking resize) stays
        shape = io.grid.covering_shape(shape)
    return io, basic_indexer(box.sel, shape, io.grid)


def _write_box(io: ArrayIO, indexer: Any, value: np.ndarray, write_empty: bool) -> None:
    write_planner.write(io, indexer, value, write_empty=write_empty)
