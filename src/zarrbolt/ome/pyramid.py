"""The plan of a pyramid: per level its shape, chunks, shards, the axes halved from the level
above, scale and translation; and the blocks it is written in."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import OmeMetadataError
from .metadata import Axis

MAX_LEVELS = 32


@dataclass(frozen=True)
class LevelPlan:
    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    shards: tuple[int, ...] | None
    halve: tuple[bool, ...]  # the axes halved from the level above (all False for level 0)
    scale: tuple[float, ...]
    translation: tuple[float, ...]

    @property
    def block(self) -> tuple[int, ...]:
        """The unit written at once: a shard, or a chunk when unsharded."""
        return self.shards or self.chunks


def _per_axis(value: Any, n: int, what: str) -> tuple[Any, ...]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (value,) * n
    try:
        t = tuple(value)
    except TypeError:
        raise OmeMetadataError(f"{what} must be a number or one per axis, got {value!r}") from None
    if len(t) != n:
        raise OmeMetadataError(f"{what} needs {n} values (one per axis), got {len(t)}: {value!r}")
    return t


def default_chunks(shape: Sequence[int], axes: Sequence[Axis]) -> tuple[int, ...]:
    """1 on time/channel/custom axes; on space axes 64 (three of them) or 256 (two)."""
    nspace = sum(a.type == "space" for a in axes)
    side = 64 if nspace >= 3 else 256
    return tuple(max(1, min(n, side)) if a.type == "space" else 1 for n, a in zip(shape, axes))


def _positive_ints(value: Any, n: int, what: str) -> tuple[int, ...]:
    t = _per_axis(value, n, what)
    if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in t):
        raise OmeMetadataError(f"{what} must be positive integers, got {value!r}")
    return t


def normalize_layout(shape: Sequence[int], axes: Sequence[Axis], chunks: Any,
                     shards: Any) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    """Level-0 (chunks, shards): ``chunks`` None for :func:`default_chunks`; ``shards`` "auto"
    for 4 chunks per space axis, None/False for no sharding, else one multiple of the chunk per
    axis."""
    n = len(shape)
    ch = default_chunks(shape, axes) if chunks is None else _positive_ints(chunks, n, "chunks")
    ch = tuple(min(c, max(1, s)) for c, s in zip(ch, shape))
    if shards is None or shards is False:
        return ch, None
    if isinstance(shards, str):
        if shards != "auto":
            raise OmeMetadataError(f"shards must be 'auto', None or integers, got {shards!r}")
        sh = tuple(c * 4 if a.type == "space" else c for c, a in zip(ch, axes))
    else:
        sh = _positive_ints(shards, n, "shards")
        bad = [(s, c) for s, c in zip(sh, ch) if s % c]
        if bad:
            valid = ", ".join(f"{c}, {2 * c}, {4 * c}, ..." for c in ch)
            raise OmeMetadataError(f"shards {sh} must be multiples of the chunks {ch} on every axis "
                                   f"(valid per axis: {valid})")
    return ch, clip_shards(sh, ch, shape)


def clip_shards(shards: Sequence[int], chunks: Sequence[int], shape: Sequence[int]) -> tuple[int, ...]:
    """Shards no larger than the array needs (a multiple of the chunk still)."""
    return tuple(min(s, math.ceil(max(n, 1) / c) * c) for s, c, n in zip(shards, chunks, shape))


def plan_levels(shape: Sequence[int], axes: Sequence[Axis], chunks: tuple[int, ...], shards: tuple[int, ...] | None,
                *, levels: int | None, downsample_axes: Sequence[str] | None, scale: Any, translation: Any,
                method: str) -> list[LevelPlan]:
    """The levels of the pyramid.  An axis in ``downsample_axes`` (default: the space axes) is
    halved at each level while it is longer than 1.  ``levels`` None: until every halved axis
    fits in one chunk."""
    n = len(shape)
    names = [a.name for a in axes]
    down = [a.name for a in axes if a.type == "space"] if downsample_axes is None else list(downsample_axes)
    unknown = [d for d in down if d not in names]
    if unknown:
        raise OmeMetadataError(f"downsample_axes {unknown} are not axes of the image ({names})")
    if levels is not None and (not isinstance(levels, int) or isinstance(levels, bool) or not 1 <= levels <= MAX_LEVELS):
        raise OmeMetadataError(f"levels must be an integer from 1 to {MAX_LEVELS}, got {levels!r}")
    s0 = tuple(float(x) for x in _per_axis(1.0 if scale is None else scale, n, "scale"))
    t0 = tuple(float(x) for x in _per_axis(0.0 if translation is None else translation, n, "translation"))
    if not all(math.isfinite(x) and x > 0 for x in s0) or not all(math.isfinite(x) for x in t0):
        raise OmeMetadataError(f"scale must be positive and finite, translation finite: {s0}, {t0}")
    plans = [LevelPlan(tuple(shape), chunks, shards, (False,) * n, s0, t0)]
    factors = [1] * n
    while len(plans) < (levels or MAX_LEVELS):
        prev = plans[-1].shape
        halve = tuple(names[i] in down and prev[i] > 1 for i in range(n))
        if not any(halve):
            break
        if levels is None and all(prev[i] <= chunks[i] for i in range(n) if halve[i]):
            break
        factors = [f * 2 if h else f for f, h in zip(factors, halve)]
        shp = tuple((p + 1) // 2 if h else p for p, h in zip(prev, halve))
        ch = tuple(min(c, s) for c, s in zip(chunks, shp))
        sh = clip_shards(shards, ch, shp) if shards is not None else None
        sc = tuple(s * f for s, f in zip(s0, factors))
        # area methods: a level's pixel centre is the centre of its window of level-0 pixels
        tr = t0 if method == "nearest" else tuple(t + (s - s_0) / 2 for t, s, s_0 in zip(t0, sc, s0))
        plans.append(LevelPlan(shp, ch, sh, halve, sc, tr))
    if levels is not None and len(plans) < levels:
        raise OmeMetadataError(f"{levels} levels asked for, but the axes {down} of shape {tuple(shape)} can be "
                               f"halved only {len(plans) - 1} times")
    return plans


def blocks(shape: Sequence[int], block: Sequence[int]) -> Iterator[tuple[slice, ...]]:
    """The regions of a grid of ``block`` over ``shape``, in C order."""
    ranges = [range(0, n, b) for n, b in zip(shape, block)]
    for starts in itertools.product(*ranges):
        yield tuple(slice(s, min(s + b, n)) for s, b, n in zip(starts, block, shape))


def source_region(out: tuple[slice, ...], halve: Sequence[bool], src_shape: Sequence[int]) -> tuple[slice, ...]:
    """The region of the level above that the output region ``out`` reduces."""
    return tuple(slice(2 * s.start, min(2 * s.stop, n)) if h else s for s, h, n in zip(out, halve, src_shape))
