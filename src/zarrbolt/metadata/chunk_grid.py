"""Chunk grids: how an array is cut into chunks (the ``chunk_grid`` member of its metadata).

:class:`ChunkGrid` is everything the rest of zarrbolt asks of a grid: the chunks along each
dimension (:meth:`ChunkGrid.axis`: the chunk size, or where each chunk starts), the region of the
array a chunk covers, and the shape its codecs encode it at (the chunk's *codec shape*: the whole
chunk, also where it overhangs the array's end).  The indexers and the planners ask nothing else,
so a grid is added here alone.  :class:`RegularChunkGrid` (``chunk-grid-regular.rst``): chunks of
one shape.  :func:`parse_chunk_grid` reads a grid's JSON.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import MetadataError
from ._ext_obj import config_members, parse_extension


def parse_int_list(obj: Any, what: str, *, minimum: int) -> tuple[int, ...]:
    """A JSON array of integers (a list or tuple; ``what`` names it in errors, e.g. ``"shape"``),
    each at least ``minimum`` and below 2**63, as a tuple; MetadataError otherwise."""
    if not isinstance(obj, (list, tuple)):
        raise MetadataError(f"{what} must be an array of integers, got {obj!r}")
    out = []
    for v in obj:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise MetadataError(f"{what} must contain integers, got {v!r}")
        v = int(v)
        if v < minimum:
            raise MetadataError(f"{what} must contain integers >= {minimum}, got {v}")
        if v >= 2**63:
            raise MetadataError(f"{what}: {v} is too large")
        out.append(int(v))
    return tuple(out)


class ChunkGrid:
    """A chunk grid (see the module doc).  ``regular``: every chunk has the codec shape
    ``chunk_shape``; otherwise the chunks differ in shape, and ``chunk_shape`` is refused."""

    name = ""
    regular = True

    @property
    def ndim(self) -> int:  # pragma: no cover - each grid's
        raise NotImplementedError

    @property
    def chunk_shape(self) -> tuple[int, ...]:  # pragma: no cover - each grid's
        raise NotImplementedError

    @property
    def max_chunk_shape(self) -> tuple[int, ...]:
        """The longest chunk edge along each dimension (what one chunk's buffers hold at most)."""
        return self.chunk_shape

    def to_json(self) -> dict[str, Any]:  # pragma: no cover - each grid's
        raise NotImplementedError

    def validate(self, shape: Sequence[int]) -> None:
        """MetadataError unless the grid fits an array of ``shape``."""
        if len(shape) != self.ndim:
            raise MetadataError(f"the chunk grid has {self.ndim} dimensions, the array shape {list(shape)} "
                                f"has {len(shape)}")

    def axis(self, d: int, extent: int) -> int | np.ndarray:
        """The chunks along dimension ``d`` of an array ``extent`` long: their size (an int)
        where they have one, else where each chunk covering ``[0, extent)`` starts and, last,
        where the last one ends (int64)."""
        return self.chunk_shape[d]

    def grid_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        """How many chunks cover ``[0, shape)`` along each dimension."""
        return tuple(-(-s // c) for s, c in zip(shape, self.chunk_shape))

    def nchunks(self, shape: Sequence[int]) -> int:
        return math.prod(self.grid_shape(shape))

    def chunk_region(self, coords: Sequence[int], shape: Sequence[int]) -> tuple[slice, ...]:
        """The region of the array a chunk covers, clipped to the array shape."""
        return tuple(slice(c * cs, min((c + 1) * cs, s)) for c, cs, s in zip(coords, self.chunk_shape, shape))

    def chunk_box(self, coords: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(origin, codec shape)`` of the chunk at ``coords``: where it starts in the array and
        the shape its codecs encode (the whole chunk, also where it overhangs the array's end)."""
        cs = self.chunk_shape
        return tuple(c * s for c, s in zip(coords, cs)), cs

    def codec_shapes(self, coords: np.ndarray) -> np.ndarray | None:
        """The codec shape of each chunk at ``coords`` ((n, ndim) ints), one row per chunk; None
        when every chunk has ``chunk_shape``."""
        return None

    def representative_shapes(self) -> list[tuple[int, ...]]:
        """Codec shapes that together hold every chunk edge of the grid along each dimension: a
        codec chain that takes them takes every chunk (checked when the metadata is read)."""
        return [self.chunk_shape]

    def covering_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        """Where the chunks covering ``[0, shape)`` end, along each dimension."""
        return tuple(-(-s // c) * c for s, c in zip(shape, self.chunk_shape))

    def resized(self, shape: Sequence[int]) -> ChunkGrid:
        """The grid of the array after a resize to ``shape``."""
        return self


class RegularChunkGrid(ChunkGrid):
    """Chunks of one shape; the grid is aligned with the origin and overhangs the array end."""

    name = "regular"
    __slots__ = ("_chunk_shape",)

    def __init__(self, chunk_shape: Sequence[int]):
        self._chunk_shape = parse_int_list(list(chunk_shape), "chunk_shape", minimum=1)

    @property
    def chunk_shape(self) -> tuple[int, ...]:
        return self._chunk_shape

    @property
    def ndim(self) -> int:
        return len(self._chunk_shape)

    @classmethod
    def from_json(cls, obj: Any) -> RegularChunkGrid:
        name, conf, _ = parse_extension(obj, "chunk_grid", ignorable=False)
        if name != "regular":
            raise MetadataError(f"unsupported chunk grid {name!r} (RegularChunkGrid reads 'regular' only)")
        config_members(conf, {"chunk_shape"}, "chunk_grid", name)
        if "chunk_shape" not in conf:
            raise MetadataError("chunk_grid 'regular' needs configuration.chunk_shape")
        return cls(parse_int_list(conf["chunk_shape"], "chunk_shape", minimum=1))

    def to_json(self) -> dict[str, Any]:
        return {"name": "regular", "configuration": {"chunk_shape": list(self.chunk_shape)}}

    def validate(self, shape: Sequence[int]) -> None:
        if len(shape) != len(self.chunk_shape):
            raise MetadataError(
                f"chunk_shape {list(self.chunk_shape)} has {len(self.chunk_shape)} dimensions, array shape "
                f"{list(shape)} has {len(shape)}"
            )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RegularChunkGrid) and other.chunk_shape == self.chunk_shape

    def __hash__(self) -> int:
        return hash(self.chunk_shape)

    def __repr__(self) -> str:
        return f"RegularChunkGrid(chunk_shape={self.chunk_shape})"


# the grids by name (a new grid registers itself here)
GRIDS: dict[str, Any] = {"regular": RegularChunkGrid}


def parse_chunk_grid(obj: Any) -> ChunkGrid:
    """The chunk grid of a ``chunk_grid`` metadata member (MetadataError for an unknown or a
    malformed one)."""
    name, _, _ = parse_extension(obj, "chunk_grid", ignorable=False)
    cls = GRIDS.get(name)
    if cls is None:
        raise MetadataError(f"unsupported chunk grid {name!r} (supported: {', '.join(sorted(GRIDS))})")
    grid: ChunkGrid = cls.from_json(obj)
    return grid
