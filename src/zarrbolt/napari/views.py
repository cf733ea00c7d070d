"""Lazy arrays for napari's layers: :class:`LazyArray`, a numpy-like view (``shape``, ``dtype``,
``ndim``, ``chunks``, basic indexing, ``__array__``) over a *source* that reads a box of pixels
when napari materialises a view (``np.asarray(layer_data[...])``), never before.

Sources: :class:`ArraySource` (one zarrbolt array, read through zarrbolt's own pipeline, with a
:class:`BlockCache` of chunk-aligned blocks so that stepping through the planes of a chunk decodes
it once) and :class:`MosaicSource` (the wells of a plate side by side, each tile an
:class:`ArraySource` opened when first read).
"""

from __future__ import annotations

import itertools
import math
import operator
import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol

import numpy as np

from .._memory import physical_memory

__all__ = ["ArraySource", "BlockCache", "LazyArray", "MosaicSource", "Source", "Tile", "default_cache"]

Sel = tuple[Any, ...]  # per source axis: an int (the axis is dropped) or a non-empty range with step > 0


class Source(Protocol):
    shape: tuple[int, ...]
    dtype: np.dtype

    def read(self, sel: Sel) -> np.ndarray: ...

    def chunk_shape(self) -> tuple[int, ...] | None: ...


def _span(r: Any) -> tuple[int, int]:
    """[first, last + 1) of an int or a range with step > 0."""
    return (r, r + 1) if isinstance(r, int) else (r.start, r[-1] + 1)


def _point(r: Any) -> int | None:
    """The position of an index that selects one plane (an int, or a range of one: napari asks
    for ``z:z+1``), None for more."""
    if isinstance(r, int):
        return r
    return r.start if len(r) == 1 else None


def _as_index(r: Any) -> Any:
    return r if isinstance(r, int) else slice(r.start, r.stop, r.step)


def _local(sel: Sel, box: Sequence[range]) -> tuple[Any, ...]:
    """``sel`` relative to the start of ``box``, as an index into the box's array."""
    return tuple(r - b.start if isinstance(r, int) else slice(r.start - b.start, r.stop - b.start, r.step)
                 for r, b in zip(sel, box))


# ------------------------------------------------------------------------------------ the cache
class BlockCache:
    """Recently read chunk-aligned blocks, least recently used dropped first, at most
    ``max_bytes`` in all; a block larger than ``max_bytes // 2`` is not kept (its read goes
    straight through).  Thread-safe: napari may slice in a thread."""

    def __init__(self, max_bytes: int):
        self.max_bytes = int(max_bytes)
        self.nbytes = 0
        self._blocks: OrderedDict[tuple[int, tuple[range, ...]], np.ndarray] = OrderedDict()  # (owner, box)
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    @property
    def max_block(self) -> int:
        return self.max_bytes // 2

    def get(self, owner: int, box: Sequence[range]) -> tuple[tuple[range, ...], np.ndarray] | None:
        """A kept block of ``owner`` (a source's token) that contains ``box`` (and its own box)."""
        key0 = owner
        with self._lock:
            for key in reversed(self._blocks):
                if key[0] == key0 and all(b.start <= r.start and r.stop <= b.stop for r, b in zip(box, key[1])):
                    self._blocks.move_to_end(key)
                    self.hits += 1
                    return key[1], self._blocks[key]
            self.misses += 1
        return None

    def contains(self, owner: int, box: Sequence[range]) -> bool:
        """Whether a kept block of ``owner`` contains ``box`` (not counted as a hit or miss)."""
        key0 = owner
        with self._lock:
            return any(key[0] == key0 and all(b.start <= r.start and r.stop <= b.stop for r, b in zip(box, key[1]))
                       for key in self._blocks)

    def put(self, owner: int, box: tuple[range, ...], data: np.ndarray) -> None:
        if data.nbytes > self.max_block:
            return
        with self._lock:
            key = (owner, box)
            old = self._blocks.pop(key, None)
            if old is not None:
                self.nbytes -= old.nbytes
            self._blocks[key] = data
            self.nbytes += data.nbytes
            while self.nbytes > self.max_bytes and self._blocks:
                _, dropped = self._blocks.popitem(last=False)
                self.nbytes -= dropped.nbytes

    def forget(self, owner: int) -> None:
        with self._lock:
            for key in [k for k in self._blocks if k[0] == owner]:
                self.nbytes -= self._blocks.pop(key).nbytes

    def clear(self) -> None:
        with self._lock:
            self._blocks.clear()
            self.nbytes = 0


_tokens = itertools.count(1)
_default: BlockCache | None = None
_default_lock = threading.Lock()


def default_cache() -> BlockCache:
    """The cache the plugin's layers share: ``ZARRBOLT_NAPARI_CACHE_BYTES`` bytes (0: none), by
    default 1 GiB or an eighth of the machine's memory, whichever is less."""
    global _default
    with _default_lock:
        if _default is None:
            env = os.environ.get("ZARRBOLT_NAPARI_CACHE_BYTES", "").strip()
            if env:
                try:
                    n = int(env)
                except ValueError:
                    raise ValueError(f"ZARRBOLT_NAPARI_CACHE_BYTES={env!r} is not a number of bytes") from None
            else:
                mem = physical_memory()
                n = min(1 << 30, mem // 8) if mem else 256 << 20
            _default = BlockCache(max(n, 0))
        return _default


# ------------------------------------------------------------------------------------ sources
class ArraySource:
    """A zarrbolt array (or anything with shape, dtype and numpy-style basic indexing).

    Stepping through planes: decoding a chunk to show one of its planes decodes all of them, so
    once napari steps along an axis (the request moves by at most a chunk along one indexed axis,
    the view otherwise the same) a read is widened to the whole chunks it touches and that block
    is kept in ``cache``: the next planes of the same chunks are copies from memory.  The next
    block in the direction of the steps is then read ahead in a background thread, so that
    crossing into it does not wait either.  A first look (opening, panning, zooming) reads just
    what is asked for."""

    def __init__(self, array: Any, cache: BlockCache | None = None):
        self.array = array
        self.shape = tuple(int(n) for n in array.shape)
        self.dtype = np.dtype(array.dtype)
        self.cache = cache
        chunks = getattr(array, "chunks", None)
        ok = isinstance(chunks, tuple) and len(chunks) == len(self.shape) and all(
            isinstance(c, int) and c > 0 for c in chunks)
        self._chunks: tuple[int, ...] | None = chunks if ok else None
        self.token = next(_tokens)  # the cache's key for this source (never reused, unlike id())
        self._recent: list[Sel] = []
        self._inflight: dict[tuple[range, ...], Future[None]] = {}
        self._lock = threading.Lock()

    def chunk_shape(self) -> tuple[int, ...] | None:
        return self._chunks

    def _block(self, sel: Sel) -> tuple[range, ...]:
        assert self._chunks is not None
        out = []
        for r, c, n in zip(sel, self._chunks, self.shape):
            lo, hi = _span(r)
            out.append(range(lo // c * c, min(-(-hi // c) * c, n)))
        return tuple(out)

    def _direct(self, sel: Sel) -> np.ndarray:
        return np.asarray(self.array[tuple(_as_index(r) for r in sel)])

    def _step(self, sel: Sel) -> tuple[int, int] | None:
        """(axis, +1 or -1) when ``sel`` is one step from one of the last few requests (one axis
        selecting one plane moved by at most a chunk, everything else the same: napari asks for the
        view and the thumbnail in turn); None otherwise."""
        with self._lock:
            recent = list(self._recent)
            self._recent = ([sel] + [r for r in recent if r != sel])[:4]
        if self._chunks is None:
            return None
        for prev in recent:
            moved = [i for i, (a, b) in enumerate(zip(prev, sel)) if a != b]
            if len(moved) != 1:
                continue
            ax = moved[0]
            a, b = _point(prev[ax]), _point(sel[ax])
            if a is not None and b is not None and abs(b - a) <= self._chunks[ax]:
                return ax, 1 if b > a else -1
        return None

    def _load(self, block: tuple[range, ...]) -> tuple[tuple[range, ...], np.ndarray] | None:
        """Read ``block`` into the cache (waiting for a read of it already under way)."""
        assert self.cache is not None
        with self._lock:
            fut = self._inflight.get(block)
        if fut is not None:
            fut.result()
            return self.cache.get(self.token, block)
        kept = self.cache.get(self.token, block)  # a read ahead may have finished meanwhile
        if kept is not None:
            return kept
        data = np.asarray(self.array[tuple(slice(b.start, b.stop) for b in block)])
        self.cache.put(self.token, block, data)
        return block, data

    def _read_ahead(self, block: tuple[range, ...], step: tuple[int, int]) -> None:
        assert self.cache is not None and self._chunks is not None
        ax, sign = step
        c, n = self._chunks[ax], self.shape[ax]
        start = block[ax].stop if sign > 0 else block[ax].start - c
        if start < 0 or start >= n:
            return
        nxt = block[:ax] + (range(start, min(start + c, n)),) + block[ax + 1:]
        with self._lock:
            if nxt in self._inflight or self.cache.contains(self.token, nxt):
                return
            fut: Future[None] = Future()
            self._inflight[nxt] = fut

        cache = self.cache

        def run() -> None:
            try:
                cache.put(self.token, nxt, np.asarray(self.array[tuple(slice(b.start, b.stop) for b in nxt)]))
            except Exception:  # a read ahead that fails is read (and fails, typed) when asked for
                pass
            finally:
                with self._lock:
                    self._inflight.pop(nxt, None)
                fut.set_result(None)

        _background().submit(run)

    def read(self, sel: Sel) -> np.ndarray:
        cache = self.cache
        if cache is None or self._chunks is None or cache.max_block <= 0:
            return self._direct(sel)
        block = self._block(sel)
        if math.prod(len(b) for b in block) * self.dtype.itemsize > cache.max_block:
            return self._direct(sel)
        step = self._step(sel)
        hit = cache.get(self.token, block)
        if hit is None:
            with self._lock:
                pending = block in self._inflight
            if step is None and not pending:
                return self._direct(sel)  # a first look: just what is asked for
            hit = self._load(block)
            if hit is None:
                return self._direct(sel)
        if step is not None:
            self._read_ahead(block, step)
        box, data = hit
        # a copy: what napari keeps must not pin a whole block after the cache drops it
        return np.array(data[_local(sel, box)], copy=True)


_bg: ThreadPoolExecutor | None = None


def _background() -> ThreadPoolExecutor:
    """The one thread reading ahead (each read uses zarrbolt's own threads)."""
    global _bg
    with _default_lock:
        if _bg is None:
            _bg = ThreadPoolExecutor(max_workers=1, thread_name_prefix="zarrbolt-read-ahead")
        return _bg


class Tile:
    """One place of a mosaic: the source opened by ``opener`` at first use (None: nothing there)."""

    def __init__(self, opener: Callable[[], ArraySource | None], label: str):
        self._opener = opener
        self._source: ArraySource | None = None
        self._opened = False
        self._lock = threading.Lock()
        self.label = label

    def source(self) -> ArraySource | None:
        with self._lock:
            if not self._opened:
                try:
                    self._source = self._opener()
                except Exception as e:  # a broken well shows as empty, with a warning, not a broken plate
                    warnings.warn(f"zarrbolt napari reader: {self.label} cannot be read and shows empty: {e}",
                                  stacklevel=2)
                    self._source = None
                self._opened = True
            return self._source


_pool: ThreadPoolExecutor | None = None


def _tile_pool() -> ThreadPoolExecutor:
    global _pool
    with _default_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1), thread_name_prefix="zarrbolt-mosaic")
        return _pool


def _pieces(r: Any, size: int, count: int) -> list[tuple[int, Any, Any]]:
    """The tiles an int or range on a mosaic axis of ``count`` tiles of ``size`` crosses:
    (tile index, the selection inside the tile, where the result goes in the output axis, or
    None for an int)."""
    if isinstance(r, int):
        return [(r // size, r % size, None)]
    out = []
    pos = 0
    first = r.start
    while pos < len(r):
        t = first // size
        if t >= count:
            break
        end = (t + 1) * size  # the first index past this tile
        n = len(range(first, min(r.stop, end), r.step))
        out.append((t, range(first - t * size, first - t * size + (n - 1) * r.step + 1, r.step), slice(pos, pos + n)))
        pos += n
        first += n * r.step
    return out


class MosaicSource:
    """Tiles side by side on the last two axes (y, x): ``tiles[row][column]`` a :class:`Tile`
    or None, each ``tile_shape`` (a tile's array smaller than that is padded with ``fill``, a
    larger one cropped).  Tiles are read in parallel."""

    def __init__(self, tiles: Sequence[Sequence[Tile | None]], tile_shape: Sequence[int], dtype: Any, fill: Any = 0):
        self.tiles = [list(row) for row in tiles]
        self.tile_shape = tuple(int(n) for n in tile_shape)
        self.dtype = np.dtype(dtype)
        self.fill = fill
        nrows, ncols = len(self.tiles), len(self.tiles[0])
        self.shape = self.tile_shape[:-2] + (nrows * self.tile_shape[-2], ncols * self.tile_shape[-1])

    def chunk_shape(self) -> tuple[int, ...] | None:
        return None

    def read(self, sel: Sel) -> np.ndarray:
        th, tw = self.tile_shape[-2:]
        out_shape = [len(r) for r in sel if not isinstance(r, int)]
        out = np.full(out_shape, self.fill, dtype=self.dtype)
        ys, xs = _pieces(sel[-2], th, len(self.tiles)), _pieces(sel[-1], tw, len(self.tiles[0]))
        jobs = []
        for ty, ly, oy in ys:
            for tx, lx, ox in xs:
                tile = self.tiles[ty][tx]
                if tile is not None:
                    dst = tuple(o for o in (oy, ox) if o is not None)
                    jobs.append((tile, sel[:-2] + (ly, lx), dst))

        def one(job: tuple[Tile, Sel, tuple[slice, ...]]) -> None:
            tile, tsel, dst = job
            src = tile.source()
            if src is None:
                return
            clipped = _clip(tsel, src.shape)
            if clipped is None:
                return
            tsel2, keep = clipped
            data = src.read(tsel2)
            lead = (slice(None),) * (out.ndim - len(dst))
            target = out[(Ellipsis,) + lead + dst]  # a view also when every axis is an int (0-d)
            target[tuple(slice(0, k) for k in keep)] = data

        if len(jobs) > 1:
            list(_tile_pool().map(one, jobs))
        elif jobs:
            one(jobs[0])
        return out


def _clip(sel: Sel, shape: Sequence[int]) -> tuple[Sel, list[int]] | None:
    """``sel`` cut to ``shape`` (a tile smaller than the mosaic's tile shape): the selection and,
    per kept axis, how many results it gives; None when nothing of the tile is selected."""
    out: list[Any] = []
    keep: list[int] = []
    for r, n in zip(sel, shape):
        if isinstance(r, int):
            if r >= n:
                return None
            out.append(r)
            continue
        cut = r[:len(range(r.start, min(r.stop, n), r.step))] if r.start < n else range(0)
        if len(cut) == 0:
            return None
        out.append(cut)
        keep.append(len(cut))
    return tuple(out), keep


# ------------------------------------------------------------------------------------ the view
def _normalize_key(key: Any, ndim: int) -> tuple[Any, ...] | None:
    """A basic index (ints and slices, one per axis), or None for anything else (arrays, None,
    booleans)."""
    key = key if isinstance(key, tuple) else (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    out: list[Any] = []
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (ndim - (len(key) - 1)))
        elif isinstance(k, slice):
            out.append(k)
        elif isinstance(k, (bool, np.bool_)) or k is None:
            return None
        else:
            try:
                out.append(operator.index(k))
            except TypeError:
                return None
    if len(out) > ndim:
        raise IndexError(f"too many indices for an array of {ndim} dimensions: {len(out)}")
    return tuple(out) + (slice(None),) * (ndim - len(out))


class LazyArray:
    """A view of a source: ``shape``, ``dtype``, ``ndim``, ``size``, ``chunks``; indexing with
    ints and slices gives another view (nothing read); ``np.asarray(view)`` reads it.  Other
    indexing (integer or boolean arrays) reads the view and indexes the numpy array."""

    __array_priority__ = 10

    def __init__(self, source: Any, sel: Sel | None = None):
        self._source = source
        self._sel: Sel = tuple(range(n) for n in source.shape) if sel is None else sel
        self.shape = tuple(len(r) for r in self._sel if not isinstance(r, int))
        self.dtype = np.dtype(source.dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return int(self.size * self.dtype.itemsize)

    @property
    def chunks(self) -> tuple[int, ...] | None:
        """The source's chunk shape on the view's axes, where the view starts on chunk
        boundaries with step 1 (so that napari widens what it asks for to whole chunks)."""
        cs = self._source.chunk_shape()
        if cs is None:
            return None
        out = []
        for r, c in zip(self._sel, cs):
            if isinstance(r, int):
                continue
            if r.step != 1 or r.start % c:
                return None
            out.append(c)
        return tuple(out)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __getitem__(self, key: Any) -> Any:
        norm = _normalize_key(key, self.ndim)
        if norm is None:
            return np.asarray(self)[key]
        it = iter(norm)
        new: list[Any] = []
        for axis, r in enumerate(self._sel):
            if isinstance(r, int):
                new.append(r)
                continue
            k = next(it)
            if isinstance(k, slice):
                new.append(r[k])
            else:
                try:
                    new.append(r[k])
                except IndexError:
                    raise IndexError(f"index {k} is out of bounds for axis {axis} with size {len(r)}") from None
        view = LazyArray(self._source, tuple(new))
        return view if view.ndim else view.read()[()]

    def read(self) -> np.ndarray:
        """The view's pixels, read now."""
        sel: list[Any] = []
        flips = []
        out_axis = 0
        for r in self._sel:
            if isinstance(r, int):
                sel.append(r)
                continue
            if len(r) == 0:
                return np.empty(self.shape, dtype=self.dtype)
            if r.step < 0:
                r = r[::-1]
                flips.append(out_axis)
            sel.append(r)
            out_axis += 1
        out: np.ndarray = self._source.read(tuple(sel))
        for ax in flips:
            out = np.flip(out, ax)
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.read()
        return out if dtype is None else out.astype(dtype, copy=False)

    def __repr__(self) -> str:
        return f"<zarrbolt napari view shape={self.shape} dtype={self.dtype}>"
