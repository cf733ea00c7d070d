"""Shard index parsing/validation and read coalescing: compiled module ``_shard.pyx``."""

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer

_U64 = np.ndarray[Any, np.dtype[np.uint64]]
_I64 = np.ndarray[Any, np.dtype[np.int64]]

def parse_index(raw: Buffer, n: int, has_crc: bool, data_begin: int, data_end: int) -> _U64:
    """Decode and validate ``n`` little-endian ``(offset, nbytes)`` pairs (+ optional CRC-32C);
    an ``(n, 2)`` uint64 array.  Raises ChecksumError / CorruptChunkError."""

def validate_pairs(pairs_in: npt.ArrayLike, data_begin: int, data_end: int) -> _U64:
    """Validate an already decoded ``(n, 2)`` uint64 index; the validated pairs."""

def find_overlap(pairs_in: npt.ArrayLike) -> tuple[int, int] | None:
    """Two entry numbers whose byte ranges overlap, or None."""

def coalesce(pairs_in: npt.ArrayLike, wanted_in: npt.ArrayLike, max_gap: int,
             max_read: int = 0) -> tuple[_I64, _I64, _U64, _U64]:
    """Group the byte ranges of the wanted entries into reads: ``(order, range_of, begins, ends)``."""

def shard_windows(offsets: npt.ArrayLike, nbytes: npt.ArrayLike, entries: npt.ArrayLike, arena_cap: int,
                  max_gap: int) -> tuple[_I64, _I64, _I64, _U64, _U64]:
    """The sharded-read I/O plan: ``(window_ends, order, read_of, begins, ends)``."""

def box_tasks(lo: Sequence[int], hi: Sequence[int], chunk: Sequence[int]) -> tuple[_I64, _I64, _I64, _I64]:
    """The chunk-grid tasks of the box ``[lo, hi)``: ``(coords, starts, shapes, out_starts)``, (n, ndim) each."""

def shard_of_tasks(coords_in: npt.ArrayLike, cps: Sequence[int]) -> tuple[_I64, _I64, bool]:
    """``(flat, shard, one)`` of tasks at inner-chunk grid ``coords``: flat number in the shard,
    shard coordinates, whether all are in one shard."""
