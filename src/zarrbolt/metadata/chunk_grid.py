"""Chunk grids: how an array is cut into chunks (the ``chunk_grid`` member of its metadata).

:class:`ChunkGrid` is everything the rest of zarrbolt asks of a grid: the chunks along each
dimension (:meth:`ChunkGrid.axis`: the chunk size, or where each chunk starts), the region of the
array a chunk covers, and the shape its codecs encode it at (the chunk's *codec shape*: the whole
chunk, also where it overhangs the array's end).  The indexers and the planners ask nothing else,
so a grid is added here alone.  :class:`RegularChunkGrid` (``chunk-grid-regular.rst``): chunks of
one shape; :class:`RectilinearChunkGrid` (the ``rectilinear`` extension): chunks whose edges are
listed per dimension.  :func:`parse_chunk_grid` reads a grid's JSON.
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

    def axis(self, d: int, extent: int) -> Any:
        """The chunks along dimension ``d`` of an array ``extent`` long: their size (an int)
        where they have one, else an axis object whose ``index(pos)`` (the chunk holding a
        position), ``start(c)`` and ``size(c)`` (a chunk's first position and edge length) take an
        int or an int64 array."""
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

    def resized(self, shape: Sequence[int], multiple: Sequence[int] | None = None) -> ChunkGrid:
        """The grid of the array after a resize to ``shape``; a chunk it adds has an edge that is a
        multiple of ``multiple`` (e.g. a sharded array's inner chunk shape)."""
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


class RunAxis:
    """The chunks along one dimension of a :class:`RectilinearChunkGrid` that lists its edges: runs
    of equal edge lengths (``values[r]`` repeated ``counts[r]`` times), looked up without
    expanding them (an edge list of 2**40 chunks costs two small arrays).  The lookups take an
    int or an int64 array."""

    __slots__ = ("values", "counts", "starts", "firsts", "total", "nchunks")

    def __init__(self, runs: Sequence[tuple[int, int]]):
        self.values = np.array([v for v, _ in runs], dtype=np.int64)
        self.counts = np.array([n for _, n in runs], dtype=np.int64)
        spans = [v * n for v, n in runs]
        # where each run starts (elements, chunks); the end of the last run last
        self.starts = np.array([0, *np.cumsum(spans, dtype=object).tolist()], dtype=np.int64)
        self.firsts = np.array([0, *np.cumsum([n for _, n in runs], dtype=object).tolist()], dtype=np.int64)
        self.total = int(self.starts[-1])
        self.nchunks = int(self.firsts[-1])

    def index(self, pos: Any) -> Any:
        """The chunk holding element ``pos`` (at or past the end: past the last chunk)."""
        r = np.minimum(np.searchsorted(self.starts, pos, side="right") - 1, len(self.values) - 1)
        out = self.firsts[r] + (np.asarray(pos) - self.starts[r]) // self.values[r]
        return int(out) if np.ndim(out) == 0 else out

    def _run(self, c: Any) -> Any:
        return np.minimum(np.searchsorted(self.firsts, c, side="right") - 1, len(self.values) - 1)

    def start(self, c: Any) -> Any:
        """Where chunk ``c`` starts."""
        r = self._run(c)
        out = self.starts[r] + (np.asarray(c) - self.firsts[r]) * self.values[r]
        return int(out) if np.ndim(out) == 0 else out

    def size(self, c: Any) -> Any:
        """Chunk ``c``'s edge length (its codec shape along this dimension)."""
        out = self.values[self._run(c)]
        return int(out) if np.ndim(out) == 0 else out

    def to_json(self) -> list[Any]:
        """The edges as the extension writes them: a run of one as its length, longer ones as
        ``[length, count]``."""
        return [int(v) if n == 1 else [int(v), int(n)] for v, n in zip(self.values.tolist(), self.counts.tolist())]


def _edge_runs(spec: Any, d: int) -> int | list[tuple[int, int]]:
    """One dimension of ``chunk_shapes``: a regular step (an int), or the runs of an edge list
    (ints and ``[length, count]`` pairs), neighbours of one length merged."""
    what = f"chunk_grid 'rectilinear': chunk_shapes[{d}]"
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, (bool, np.bool_)):
        return parse_int_list([spec], what, minimum=1)[0]
    if not isinstance(spec, list) or not spec:
        raise MetadataError(f"{what} must be a positive integer or a non-empty array of edge lengths, got {spec!r}")
    runs: list[tuple[int, int]] = []
    total = 0
    for item in spec:
        if isinstance(item, list):
            if len(item) != 2:
                raise MetadataError(f"{what}: a run-length pair must be [length, count], got {item!r}")
            v, n = parse_int_list(item, what, minimum=1)
        else:
            v, n = parse_int_list([item], what, minimum=1)[0], 1
        total += v * n
        if total >= 2**63:
            raise MetadataError(f"{what}: the edges add up to more than 2**63")
        if runs and runs[-1][0] == v:
            runs[-1] = (v, runs[-1][1] + n)
        else:
            runs.append((v, n))
    return runs


class RectilinearChunkGrid(ChunkGrid):
    """The ``rectilinear`` chunk grid (zarr-extensions ``chunk-grids/rectilinear``; zarr-python 3.4
    writes it behind its ``array.rectilinear_chunks`` option): along each dimension either one
    chunk size, repeated to cover the dimension, or an explicit list of edge lengths (JSON: ints
    and ``[length, count]`` run-length pairs) that covers it (more is allowed: chunks past the
    array's end).  A chunk's codec shape is its edge lengths, also past the array's end.  A grid
    whose dimensions are all one size is ``regular`` (its chunks have one shape)."""

    name = "rectilinear"
    __slots__ = ("dims", "regular")

    def __init__(self, chunk_shapes: Sequence[Any]):
        if isinstance(chunk_shapes, (str, bytes)) or not isinstance(chunk_shapes, Sequence):
            raise MetadataError(f"chunk_grid 'rectilinear': chunk_shapes must be an array, got {chunk_shapes!r}")
        dims: list[int | RunAxis] = []
        for d, spec in enumerate(chunk_shapes):
            if isinstance(spec, RunAxis):
                dims.append(spec)
                continue
            runs = _edge_runs(list(spec) if isinstance(spec, tuple) else spec, d)
            dims.append(runs if isinstance(runs, int) else RunAxis(runs))
        self.dims = tuple(dims)
        self.regular = all(isinstance(x, int) for x in self.dims)

    @classmethod
    def from_json(cls, obj: Any) -> RectilinearChunkGrid:
        name, conf, _ = parse_extension(obj, "chunk_grid", ignorable=False)
        if name != "rectilinear":
            raise MetadataError(f"unsupported chunk grid {name!r} (RectilinearChunkGrid reads 'rectilinear' only)")
        config_members(conf, {"kind", "chunk_shapes"}, "chunk_grid", name)
        if conf.get("kind") != "inline":
            raise MetadataError(f"chunk_grid 'rectilinear': kind must be 'inline', got {conf.get('kind')!r}")
        if "chunk_shapes" not in conf:
            raise MetadataError("chunk_grid 'rectilinear' needs configuration.chunk_shapes")
        shapes = conf["chunk_shapes"]
        if not isinstance(shapes, list):
            raise MetadataError(f"chunk_grid 'rectilinear': chunk_shapes must be an array, got {shapes!r}")
        return cls(shapes)

    def to_json(self) -> dict[str, Any]:
        shapes = [x if isinstance(x, int) else x.to_json() for x in self.dims]
        return {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": shapes}}

    @property
    def ndim(self) -> int:
        return len(self.dims)

    @property
    def chunk_shape(self) -> tuple[int, ...]:
        if not self.regular:
            raise MetadataError("this array's chunks differ in shape (a rectilinear chunk grid): it has no one chunk "
                                f"shape; its chunk edges are {self.to_json()['configuration']['chunk_shapes']}")
        return tuple(x for x in self.dims if isinstance(x, int))

    @property
    def max_chunk_shape(self) -> tuple[int, ...]:
        return tuple(x if isinstance(x, int) else int(x.values.max()) for x in self.dims)

    def validate(self, shape: Sequence[int]) -> None:
        super().validate(shape)
        for d, (x, n) in enumerate(zip(self.dims, shape)):
            if isinstance(x, RunAxis) and x.total < n:
                raise MetadataError(f"chunk_grid 'rectilinear': the chunk edges of dimension {d} add up to {x.total}, "
                                    f"less than the array's {n}")

    def axis(self, d: int, extent: int) -> int | Any:
        return self.dims[d]

    def grid_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(-(-n // x) if isinstance(x, int) else (x.index(n - 1) + 1 if n else 0)
                     for x, n in zip(self.dims, shape))

    def chunk_box(self, coords: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        origin = tuple(c * x if isinstance(x, int) else x.start(c) for c, x in zip(coords, self.dims))
        return origin, tuple(x if isinstance(x, int) else x.size(c) for c, x in zip(coords, self.dims))

    def chunk_region(self, coords: Sequence[int], shape: Sequence[int]) -> tuple[slice, ...]:
        origin, size = self.chunk_box(coords)
        return tuple(slice(o, min(o + e, n)) for o, e, n in zip(origin, size, shape))

    def codec_shapes(self, coords: np.ndarray) -> np.ndarray | None:
        if self.regular:
            return None
        coords = np.asarray(coords, dtype=np.int64).reshape(-1, self.ndim)
        out = np.empty_like(coords)
        for d, x in enumerate(self.dims):
            out[:, d] = x if isinstance(x, int) else x.size(coords[:, d])
        return out

    def representative_shapes(self) -> list[tuple[int, ...]]:
        top = self.max_chunk_shape
        shapes = [top]
        for d, x in enumerate(self.dims):
            if isinstance(x, RunAxis):
                shapes += [top[:d] + (int(v),) + top[d + 1:] for v in np.unique(x.values).tolist() if v != top[d]]
        return shapes

    def covering_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        out = []
        for x, n in zip(self.dims, shape):
            if isinstance(x, int):
                out.append(-(-n // x) * x)
            else:
                c = x.index(n - 1) if n else 0
                out.append(x.start(c) + x.size(c) if n else 0)
        return tuple(out)

    def resized(self, shape: Sequence[int], multiple: Sequence[int] | None = None) -> ChunkGrid:
        grown = [d for d, (x, n) in enumerate(zip(self.dims, shape)) if isinstance(x, RunAxis) and n > x.total]
        if not grown:
            return self
        dims: list[Any] = list(self.dims)
        for d in grown:  # as zarr-python: one more chunk, up to the new end (rounded up to `multiple`)
            x = dims[d]
            m = 1 if multiple is None else int(multiple[d])
            dims[d] = RunAxis([*zip(x.values.tolist(), x.counts.tolist()), (-(-(int(shape[d]) - x.total) // m) * m, 1)])
        return RectilinearChunkGrid(dims)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RectilinearChunkGrid) and other.to_json() == self.to_json()

    def __hash__(self) -> int:
        return hash(repr(self.to_json()))

    def __repr__(self) -> str:
        return f"RectilinearChunkGrid({self.to_json()['configuration']['chunk_shapes']})"


# the grids by name (a new grid registers itself here)
GRIDS: dict[str, Any] = {"regular": RegularChunkGrid, "rectilinear": RectilinearChunkGrid}


def parse_chunk_grid(obj: Any) -> ChunkGrid:
    """The chunk grid of a ``chunk_grid`` metadata member (MetadataError for an unknown or a
    malformed one)."""
    name, _, _ = parse_extension(obj, "chunk_grid", ignorable=False)
    cls = GRIDS.get(name)
    if cls is None:
        raise MetadataError(f"unsupported chunk grid {name!r} (supported: {', '.join(sorted(GRIDS))})")
    grid: ChunkGrid = cls.from_json(obj)
    return grid
