"""From zarr-python's batch of chunk items to what zarrbolt's planners take.

zarr-python hands a codec pipeline one item per chunk: ``(store path, chunk spec,
chunk_selection, out_selection, is_complete_chunk)``.  When every selection is made of ints and
step-1 slices (what dask, xarray and napari send), the items tile one box of the array; that box
goes to zarrbolt's read/write planners in one call (:func:`box_of`).  Other selections go item
by item (:func:`item_bbox`, :func:`shift_selection`).

Nothing here imports zarr: the items are read by duck typing."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import MetadataError


@dataclass(frozen=True)
class KeyParser:
    """Splits a chunk's store key into (array prefix, chunk coordinates) for one chunk key
    encoding and number of dimensions."""

    encoding: Any
    ndim: int

    def parts(self) -> int:
        """How many ``/``-separated parts of a key the chunk key takes."""
        enc = self.encoding
        if self.ndim == 0 or enc.separator != "/":
            return 1
        return self.ndim + (1 if enc.name == "default" else 0)

    def split(self, path: str) -> tuple[str, tuple[int, ...]]:
        n = self.parts()
        pieces = path.split("/")
        if len(pieces) < n:
            raise MetadataError(f"{path!r} is not a chunk key")
        coords = self.encoding.decode_chunk_key("/".join(pieces[-n:]))
        if len(coords) != self.ndim:
            raise MetadataError(f"{path!r} is not a chunk key of a {self.ndim}-d array")
        return "/".join(pieces[:-n]), coords


def _unit_slice(s: Any) -> tuple[int, int] | None:
    """``(start, stop)`` of a slice with concrete bounds and step 1, else None."""
    if not isinstance(s, slice) or s.step not in (None, 1):
        return None
    if s.start is None or s.stop is None:
        return None
    try:
        return operator.index(s.start), operator.index(s.stop)
    except TypeError:
        return None


def _as_int(x: Any) -> int | None:
    if isinstance(x, (bool, np.bool_)) or isinstance(x, np.ndarray) and x.ndim:
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


@dataclass
class Box:
    """An array-level selection: per dimension an int or a ``[lo, hi)`` range (``sel``), with
    the per-chunk pieces ``(chunk coords, [(lo, hi) within the chunk per dim])`` of the items."""

    sel: tuple[Any, ...]
    hi: tuple[int, ...]  # the exclusive upper bound per dimension (int + 1 for ints)

    def shape(self) -> tuple[int, ...]:
        return tuple(s.stop - s.start for s in self.sel if isinstance(s, slice))


def box_of(coords: Sequence[tuple[int, ...]], items: Sequence[tuple[Any, ...]],
           boxes: Sequence[tuple[tuple[int, ...], tuple[int, ...]]], drop_axes: Sequence[int]) -> Box | None:
    """The box the items tile exactly (with out_selections consistent with it), or None.
    ``items`` are zarr's ``(_, _, chunk_selection, out_selection, _)`` tuples; ``boxes`` the
    ``(origin, shape)`` of each item's chunk (the chunk grid's ``chunk_box``)."""
    if drop_axes or not items:
        return None
    nd = len(boxes[0][1])
    lo: list[Any] = [None] * nd
    hi: list[Any] = [None] * nd
    ints: list[int | None] = [None] * nd
    per: list[list[tuple[int, int]]] = []
    for (origin, size), item in zip(boxes, items):
        csel = item[2]
        if not isinstance(csel, tuple) or len(csel) != nd:
            return None
        row = []
        for d in range(nd):
            s = csel[d]
            base = origin[d]
            i = _as_int(s)
            if i is not None:
                if ints[d] is None and lo[d] is None:
                    ints[d] = base + i
                if ints[d] != base + i:
                    return None
                row.append((i, i + 1))
                continue
            r = _unit_slice(s)
            if r is None or ints[d] is not None or not 0 <= r[0] < r[1] <= size[d]:
                return None
            a, b = base + r[0], base + r[1]
            lo[d] = a if lo[d] is None else min(lo[d], a)
            hi[d] = b if hi[d] is None else max(hi[d], b)
            row.append(r)
        per.append(row)
    return _check_tiling(coords, items, per, boxes, lo, hi, ints)


def _check_tiling(coords: Sequence[tuple[int, ...]], items: Sequence[tuple[Any, ...]], per: list[Any],
                  boxes: Sequence[tuple[tuple[int, ...], tuple[int, ...]]], lo: list[Any], hi: list[Any],
                  ints: list[Any]) -> Box | None:
    """The box when every item is exactly its chunk's piece of it and each piece of the box is
    there once, else None."""
    nd = len(lo)
    expected = 1
    for d in range(nd):
        if ints[d] is not None:
            continue
        # the chunks along d: one after another, from the one holding lo to the one holding hi - 1
        spans = sorted({(c[d], b[0][d], b[1][d]) for c, b in zip(coords, boxes)})
        if spans[0][1] > lo[d] or spans[-1][1] + spans[-1][2] < hi[d]:
            return None
        if any(q[0] != p[0] + 1 or q[1] != p[1] + p[2] for p, q in zip(spans, spans[1:])):
            return None
        expected *= len(spans)
    if expected != len(items) or len(set(coords)) != len(items):
        return None
    for (origin, size), item, row in zip(boxes, items, per):
        osel = item[3]
        if not isinstance(osel, tuple):
            return None
        k = 0
        for d in range(nd):
            if ints[d] is not None:
                continue
            base = origin[d]
            a = max(lo[d], base)
            b = min(hi[d], base + size[d])
            if row[d] != (a - base, b - base) or k >= len(osel):
                return None
            o = _unit_slice(osel[k])
            if o is None or o != (a - lo[d], b - lo[d]):
                return None
            k += 1
        if k != len(osel):
            return None
    sel = tuple(ints[d] if ints[d] is not None else slice(lo[d], hi[d]) for d in range(nd))
    return Box(sel, tuple(ints[d] + 1 if ints[d] is not None else hi[d] for d in range(nd)))


def complete_in(box: tuple[tuple[int, ...], tuple[int, ...]], row_sel: tuple[Any, ...], shape: Sequence[int]) -> bool:
    """Whether ``row_sel`` (ints / step-1 slices) covers the whole in-array part of the chunk at
    ``box`` (``(origin, shape)``) of an array of ``shape``."""
    for o, s, cs, n in zip(box[0], row_sel, box[1], shape):
        end = min(cs, n - o)
        if isinstance(s, slice):
            if (s.start, s.stop) != (0, end):
                return False
        elif end != 1 or s != 0:
            return False
    return True


def _entry_bounds(s: Any, n: int) -> tuple[Any, int, int] | None:
    """A chunk selection entry normalised (ints; slices with concrete bounds; int arrays), with
    the ``[lo, hi)`` it touches (hi <= lo: nothing), or None when it is something else."""
    i = _as_int(s)
    if i is not None:
        if not -n <= i < n:
            return None
        i = i + n if i < 0 else i
        return i, i, i + 1
    if isinstance(s, slice):
        start, stop, step = s.indices(n)
        r = range(start, stop, step)
        if not len(r):
            return slice(0, 0), 0, 0
        if step < 0:
            return None
        return slice(start, stop, step), r[0], r[-1] + 1
    a = np.asarray(s)
    if a.dtype == bool:
        if a.ndim != 1 or a.shape[0] != n:
            return None
        a = np.flatnonzero(a)
    elif a.dtype.kind not in "iu":
        return None
    if a.size == 0:
        return a.astype(np.intp), 0, 0
    a = np.where(a < 0, a + n, a) if a.dtype.kind == "i" else a
    mn, mx = int(a.min()), int(a.max())
    if mn < 0 or mx >= n:
        return None
    return a, mn, mx + 1


def item_bbox(csel: Any, chunk_shape: Sequence[int]) -> tuple[tuple[Any, ...], list[int], list[int]] | None:
    """For any chunk selection: its entries normalised, and the ``[lo, hi)`` bounding box of
    what it touches in the chunk (per dimension); None when it is not understood."""
    if not isinstance(csel, tuple):
        csel = (csel,)
    if len(csel) != len(chunk_shape):
        return None
    norm, lo, hi = [], [], []
    for s, n in zip(csel, chunk_shape):
        e = _entry_bounds(s, n)
        if e is None:
            return None
        norm.append(e[0])
        lo.append(e[1])
        hi.append(max(e[1], e[2]))
    return tuple(norm), lo, hi


def shift_selection(norm: tuple[Any, ...], lo: Sequence[int]) -> tuple[Any, ...]:
    """A normalised chunk selection moved to a box that starts at ``lo`` within the chunk."""
    out: list[Any] = []
    for s, o in zip(norm, lo):
        if isinstance(s, slice):
            out.append(slice(s.start - o, s.stop - o, s.step) if s.stop > s.start else slice(0, 0))
        elif isinstance(s, np.ndarray):
            out.append(s - o)
        else:
            out.append(s - o)
    return tuple(out)


def inner_flats(lo: Sequence[int], hi: Sequence[int], inner: Sequence[int], cps: Sequence[int]) -> np.ndarray:
    """Flat (C order) indices of the inner chunks of a shard that the box ``[lo, hi)`` of the
    shard touches."""
    axes = []
    for a, b, ic in zip(lo, hi, inner):
        if b <= a:
            return np.zeros(0, np.int64)
        axes.append(np.arange(a // ic, (b - 1) // ic + 1, dtype=np.int64))
    strides = [math.prod(cps[d + 1:]) for d in range(len(cps))]
    flat = np.zeros(1, np.int64)
    for ax, st in zip(axes, strides):
        flat = (flat[:, None] + ax[None, :] * st).reshape(-1)
    return flat
