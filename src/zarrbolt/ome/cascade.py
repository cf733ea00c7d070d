"""Writing every level of a pyramid in one pass over the source (zarrbolt.ome.writer).

Each block of level k (a shard, or a chunk when unsharded) is made from the blocks of level
k - 1 that its windows cover, produced first (recursively, down to level 0, which is read from
the source) and halved as they come; the block is written and handed up.  So every source block
is read once, no level is read back from the store, and at any moment there is at most one block
per level in memory (the level's output under construction), plus the child block being halved.

This needs the blocks of each level to start on even indices along the axes the next level
halves (true for even block sizes, and for a level held in one block); :func:`aligned` says
whether a pyramid qualifies.  Otherwise the writer reads each level back instead.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .downsample import downsample
from .pyramid import LevelPlan, blocks, source_region

Progress = Callable[[int, int, int], None]


def aligned(plans: Sequence[LevelPlan]) -> bool:
    """True when every block of every level starts on an even index along the axes the next
    level halves."""
    for prev, lp in itertools.pairwise(plans):
        for i, h in enumerate(lp.halve):
            if h and prev.block[i] % 2 and prev.block[i] < prev.shape[i]:
                return False
    return True


def _grid_within(region: tuple[slice, ...], block: Sequence[int]) -> Iterator[tuple[slice, ...]]:
    """The blocks of a grid of ``block`` inside ``region`` (whose start is on the grid)."""
    shape = tuple(s.stop - s.start for s in region)
    for local in blocks(shape, block):
        yield tuple(slice(r.start + s.start, r.start + s.stop) for r, s in zip(region, local))


class Cascade:
    """One pass writing ``arrays`` (level 0 first) from ``data`` as ``plans`` say."""

    def __init__(self, data: Any, arrays: Sequence[Any], plans: Sequence[LevelPlan], method: str, threads: int,
                 progress: Progress | None):
        self.data, self.arrays, self.plans = data, arrays, plans
        self.method, self.threads, self.progress = method, threads, progress
        self.done = [0] * len(plans)
        self.totals = [sum(1 for _ in blocks(p.shape, p.block)) for p in plans]

    def _tick(self, k: int) -> None:
        self.done[k] += 1
        if self.progress:
            self.progress(k, self.done[k], self.totals[k])

    def produce(self, k: int, region: tuple[slice, ...]) -> np.ndarray:
        """Level k's pixels in ``region`` (a block), written to the store, returned."""
        if k == 0:
            block = np.asarray(self.data[region])
            self.arrays[0][region] = block
            self._tick(0)
            return block
        lp, prev = self.plans[k], self.plans[k - 1]
        out = np.empty(tuple(s.stop - s.start for s in region), dtype=self.arrays[k].dtype)
        src = source_region(region, lp.halve, prev.shape)
        for child in _grid_within(src, prev.block):
            piece = downsample(self.produce(k - 1, child), lp.halve, self.method, threads=self.threads)
            at = tuple(slice(o, o + n) for o, n in zip(
                ((c.start - s.start) // 2 if h else c.start - s.start for c, s, h in zip(child, src, lp.halve)),
                piece.shape))
            out[at] = piece
        self.arrays[k][region] = out
        self._tick(k)
        return out

    def run(self) -> None:
        top = len(self.plans) - 1
        for region in blocks(self.plans[top].shape, self.plans[top].block):
            self.produce(top, region)
