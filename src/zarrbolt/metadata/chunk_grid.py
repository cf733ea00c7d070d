"""The regular chunk grid (``chunk-grid-regular.rst``)."""

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


class RegularChunkGrid:
    """Chunks of one shape; the grid is aligned with the origin and overhangs the array end."""

    name = "regular"
    __slots__ = ("chunk_shape",)

    def __init__(self, chunk_shape: Sequence[int]):
        self.chunk_shape = parse_int_list(list(chunk_shape), "chunk_shape", minimum=1)

    @classmethod
    def from_json(cls, obj: Any) -> RegularChunkGrid:
        name, conf, _ = parse_extension(obj, "chunk_grid", ignorable=False)
        if name != "regular":
            raise MetadataError(f"unsupported chunk grid {name!r} (only 'regular' is supported)")
        config_members(conf, {"chunk_shape"}, "chunk_grid", name)
        if "chunk_shape" not in conf:
            raise MetadataError("chunk_grid 'regular' needs configuration.chunk_shape")
        return cls(parse_int_list(conf["chunk_shape"], "chunk_shape", minimum=1))

    def to_json(self) -> dict[str, Any]:
        return {"name": "regular", "configuration": {"chunk_shape": list(self.chunk_shape)}}

    def validate(self, shape: Sequence[int]) -> None:
        if len(shape) != len(self.chunk_shape):
            raise MetadataError(
                f"chunk_shape {list(self.chunk_shape)} has {len(self.chunk_shape)} dimensions, array shape {list(shape)} has {len(shape)}"
            )

    def grid_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(-(-s // c) for s, c in zip(shape, self.chunk_shape))

    def nchunks(self, shape: Sequence[int]) -> int:
        return math.prod(self.grid_shape(shape))

    def chunk_region(self, coords: Sequence[int], shape: Sequence[int]) -> tuple[slice, ...]:
        """The region of the array a chunk covers, clipped to the array shape."""
        return tuple(
            slice(c * cs, min((c + 1) * cs, s)) for c, cs, s in zip(coords, self.chunk_shape, shape)
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RegularChunkGrid) and other.chunk_shape == self.chunk_shape

    def __hash__(self) -> int:
        return hash(self.chunk_shape)

    def __repr__(self) -> str:
        return f"RegularChunkGrid(chunk_shape={self.chunk_shape})"
