"""What kind of selection ``array[sel]`` is (zarr-python's and numpy's rules), and block
selections (``array.blocks[...]``) as the array regions they stand for."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .errors import BoundsCheckError


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_int_list(x: Any) -> bool:
    return isinstance(x, list) and len(x) > 0 and all(_is_int(i) for i in x)


def _is_bool_list(x: Any) -> bool:
    return isinstance(x, list) and len(x) > 0 and all(isinstance(i, (bool, np.bool_)) for i in x)


def _is_int_array(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.dtype.kind in "ui"


def _is_bool_array(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.dtype == np.bool_


def _is_index_iterable(x: Any) -> bool:
    return _is_int_list(x) or _is_int_array(x) or _is_bool_array(x) or _is_bool_list(x)


def selection_kind(selection: Any, ndim: int) -> str:
    """``"vindex"`` (a boolean mask, or integer arrays for every dimension: coordinates),
    ``"oindex"`` (1-D integer or boolean arrays per dimension, mixed with ints and slices) or
    ``"basic"``, by zarr-python's rules for ``Array.__getitem__``."""
    if type(selection) is tuple and all(type(s) is slice or type(s) is int for s in selection):
        return "basic"  # the common case, decided without the checks below
    if _is_bool_array(selection):
        if selection.ndim == ndim or ndim == 1:
            return "vindex"  # a mask of the array's shape
        return "oindex"  # a 1-D mask of the first dimension
    if ndim == 1 and (_is_int_list(selection) or _is_int_array(selection) or _is_bool_list(selection)):
        return "vindex"
    if (
        isinstance(selection, tuple)
        and len(selection) == ndim
        and not any(isinstance(s, slice) or s is Ellipsis for s in selection)
        and all(_is_int(s) or _is_int_list(s) or _is_int_array(s) for s in selection)
        and any(_is_int_list(s) or _is_int_array(s) for s in selection)
    ):
        return "vindex"
    if not ndim:
        return "basic"
    sel = selection if isinstance(selection, tuple) else (selection,)
    if len(sel) == ndim and all(_is_index_iterable(s) for s in sel):
        return "oindex"
    n_iter = sum(_is_index_iterable(s) for s in sel)
    if 0 < n_iter <= 1 and len(sel) <= ndim and all(_is_index_iterable(s) or _is_int(s) or isinstance(s, slice)
                                                     for s in sel):
        return "oindex"
    return "basic"


def block_region(selection: Any, shape: tuple[int, ...], chunks: tuple[int, ...]) -> tuple[slice, ...]:
    """The array region of a block selection: per dimension a block number (negative counts from
    the end) or a step-1 slice of block numbers; dimensions left out are whole.  Blocks are the
    chunks of the array's chunk grid (the shards of a sharded array, as in zarr-python)."""
    sel = selection if isinstance(selection, tuple) else (selection,)
    if any(s is Ellipsis for s in sel):
        i = next(k for k, s in enumerate(sel) if s is Ellipsis)
        fill = len(shape) - (len(sel) - 1)
        sel = sel[:i] + (slice(None),) * max(fill, 0) + sel[i + 1:]
    if len(sel) > len(shape):
        raise IndexError(f"too many indices for a block selection: {len(sel)} for {len(shape)} dimensions")
    sel = sel + (slice(None),) * (len(shape) - len(sel))
    out = []
    for d, (s, n, c) in enumerate(zip(sel, shape, chunks)):
        nblocks = -(-n // c) if c else 0
        if isinstance(s, slice):
            if s.step not in (None, 1):
                raise IndexError(f"block selections take slices with step 1, got step {s.step} in dimension {d}")
            start, stop, _ = s.indices(nblocks)
            stop = max(stop, start)
        else:
            try:
                b = operator.index(s)
            except TypeError:
                raise IndexError(
                    f"block selections take integers and slices, got {type(s).__name__} in dimension {d}"
                ) from None
            if isinstance(s, (bool, np.bool_)):
                raise IndexError(f"block selections take integers and slices, got a boolean in dimension {d}")
            if b < 0:
                b += nblocks
            if not 0 <= b < nblocks:
                raise BoundsCheckError(f"block index {s} out of bounds for dimension {d} with {nblocks} blocks")
            start, stop = b, b + 1
        out.append(slice(min(start * c, n), min(stop * c, n)))
    return tuple(out)


class BlockIndex:
    """``array.blocks[...]``: read and write whole blocks (chunks) by their grid position."""

    def __init__(self, array: Any):
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        return self._array.get_block_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_block_selection(selection, value)
