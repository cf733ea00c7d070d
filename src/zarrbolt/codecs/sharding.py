"""The ``sharding_indexed`` codec (array -> bytes): many inner chunks in one stored object.

A shard is the inner chunks' encoded bytes followed (``index_location="end"``) or preceded
(``"start"``) by an index of ``(offset, nbytes)`` uint64 pairs, one per inner chunk in C order,
encoded with the fixed-size ``index_codecs``.  Empty inner chunks (all fill value) are stored as
the pair ``(2^64-1, 2^64-1)`` and take no space.

Besides whole-shard ``encode``/``decode`` this module gives what partial reads and writes need:
where the index is (:meth:`ShardingCodec.index_range`), its validation
(:meth:`ShardingCodec.decode_index`, in C: :func:`zarrbolt.kernels.parse_shard_index`) and the
read-modify-write of a shard (:meth:`ShardingCodec.update_shard`).  The partial reads themselves
(fetch the index with one prefix/suffix byte-range request, then only the inner chunks a
selection touches, neighbours coalesced) are planned by :mod:`zarrbolt.pipeline.shard`."""

from __future__ import annotations

import math
from functools import lru_cache
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import config, kernels
from ..errors import ChunkMemoryError, CodecError, CorruptChunkError, MetadataError
from .._threads import run_batches
from .abc import ArrayToBytesCodec, ChunkSpec
from .chain import CodecChain, SpecCache
from .registry import MAX_NESTING, parse_codecs, register_codec
from ._util import config_dict

EMPTY = 2**64 - 1
_U64 = None  # DataType("uint64"), resolved lazily (metadata imports codecs)


# The orders in which a shard's inner chunks may be laid out (``write_order``): lexicographic
# (C order of the chunk grid, zarrbolt's default), colexicographic (first axis fastest) and
# morton (Z order over the grid, axes with more chunks keep their extra bits last).  The index
# stays in C order either way; only where each chunk's bytes sit changes.
WRITE_ORDERS = ("lexicographic", "colexicographic", "morton", "unordered")


def in_storage_order(chunks_per_shard: Sequence[int], order: str, flats: Any) -> np.ndarray:
    """The flat C-order inner chunk numbers ``flats`` sorted in the order their bytes are laid
    out (``write_order``), by a key computed from their own coordinates: memory and work in
    proportion to ``flats``, not to the shard's number of inner chunks (the metadata's)."""
    flats = np.asarray(flats, dtype=np.int64).reshape(-1)
    cps = tuple(int(c) for c in chunks_per_shard)
    if order not in WRITE_ORDERS:
        raise MetadataError(f"sharding_indexed: unknown inner chunk write order {order!r}; one of {list(WRITE_ORDERS)}")
    if order in ("lexicographic", "unordered") or len(flats) <= 1 or math.prod(cps) <= 1:
        return np.sort(flats)
    coords = np.unravel_index(flats, cps)
    key: np.ndarray
    if order == "colexicographic":
        key = np.asarray(np.ravel_multi_index(coords, cps, order="F"), dtype=np.int64)
    else:  # morton: one bit of each axis in turn, axes with more chunks keep their extra bits last
        bits = [(c - 1).bit_length() for c in cps]
        key = np.zeros(len(flats), dtype=np.int64)
        out_bit = 0
        for b in range(max(bits)):
            for d, nb in enumerate(bits):
                if b < nb:
                    key |= ((coords[d].astype(np.int64) >> b) & 1) << out_bit
                    out_bit += 1
    ordered: np.ndarray = flats[np.argsort(key, kind="stable")]
    return ordered


@lru_cache(maxsize=16)
def storage_order(chunks_per_shard: tuple[int, ...], order: str) -> tuple[int, ...] | None:
    """Flat C-order inner chunk numbers of a whole shard in the order their bytes are laid out
    (None: C order); :func:`in_storage_order` of some of them."""
    n = math.prod(chunks_per_shard)
    if order in ("lexicographic", "unordered") or n <= 1:
        return None
    return tuple(in_storage_order(chunks_per_shard, order, np.arange(n, dtype=np.int64)).tolist())


def _u64() -> Any:
    global _U64
    if _U64 is None:
        from ..metadata.dtypes import DataType

        _U64 = DataType("uint64")
    return _U64


@dataclass(frozen=True)
class ShardLayout:
    """Everything about a shard that depends only on the shard's chunk spec."""

    shard_shape: tuple[int, ...]
    chunk_shape: tuple[int, ...]
    chunks_per_shard: tuple[int, ...]
    n: int
    inner: Any  # BoundChain of the inner codecs
    index: Any  # BoundChain of the index codecs
    index_nbytes: int
    # The recommended index codecs [bytes(little), crc32c] / [bytes(little)] are parsed by the
    # C kernel directly (None: decode through the index chain, then validate in C).
    fast_index_crc: bool | None


@register_codec
class ShardingCodec(ArrayToBytesCodec):
    name = "sharding_indexed"

    def __init__(
        self,
        chunk_shape: Sequence[int],
        codecs: Iterable[Any] = ({"name": "bytes", "configuration": {"endian": "little"}},),
        index_codecs: Iterable[Any] = (
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "crc32c"},
        ),
        index_location: str = "end",
        *,
        write_order: str = "lexicographic",
    ):
        if isinstance(chunk_shape, (str, bytes)) or not isinstance(chunk_shape, Sequence):
            raise MetadataError(f"sharding_indexed: chunk_shape must be an array of integers, got {chunk_shape!r}")
        cs = []
        for c in chunk_shape:
            if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer)) or c < 1:
                raise MetadataError(f"sharding_indexed: chunk_shape must hold positive integers, got {list(chunk_shape)!r}")
            cs.append(int(c))
        self.chunk_shape = tuple(cs)
        if index_location not in ("start", "end"):
            raise MetadataError(f"sharding_indexed: index_location must be 'start' or 'end', got {index_location!r}")
        self.index_location = index_location
        self.write_order = write_order  # a runtime setting: not in the metadata JSON
        if write_order not in WRITE_ORDERS:
            raise MetadataError(f"sharding_indexed: unknown inner chunk write order {write_order!r}; one of {list(WRITE_ORDERS)}")
        self.codecs = tuple(parse_codecs(list(codecs)))
        self.index_codecs = tuple(parse_codecs(list(index_codecs)))
        # shards in shards: binding and encoding recurse once per level (see registry.MAX_NESTING)
        self.nesting: int = 1 + max((c.nesting for c in self.codecs + self.index_codecs if isinstance(c, ShardingCodec)),
                                    default=0)
        if self.nesting >= MAX_NESTING:
            raise MetadataError(f"sharding_indexed: shards nested {self.nesting} levels deep (at most {MAX_NESTING - 1})")
        self.inner_chain = CodecChain(self.codecs)
        self.index_chain = CodecChain(self.index_codecs)
        self._layouts = SpecCache(16)  # pickles empty (see SpecCache)

    # ------------------------------------------------------------------ JSON
    @classmethod
    def from_json(cls, configuration: Any) -> ShardingCodec:
        conf = config_dict(configuration, "sharding_indexed", {"chunk_shape", "codecs", "index_codecs", "index_location"})
        for k in ("chunk_shape", "codecs", "index_codecs"):
            if k not in conf:
                raise MetadataError(f"sharding_indexed: {k!r} is required")
        for k in ("codecs", "index_codecs"):
            if not isinstance(conf[k], list):
                raise MetadataError(f"sharding_indexed: {k!r} must be an array of codecs")
        return cls(conf["chunk_shape"], conf["codecs"], conf["index_codecs"], conf.get("index_location", "end"))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": "sharding_indexed",
            "configuration": {
                "chunk_shape": list(self.chunk_shape),
                "codecs": [c.to_json() for c in self.codecs],
                "index_codecs": [c.to_json() for c in self.index_codecs],
                "index_location": self.index_location,
            },
        }

    # ------------------------------------------------------------------ layout
    def _make_layout(self, spec: ChunkSpec) -> ShardLayout:
        shape = tuple(spec.shape)
        if len(shape) != len(self.chunk_shape):
            raise MetadataError(
                f"sharding_indexed: inner chunk_shape {list(self.chunk_shape)} has {len(self.chunk_shape)} dimensions, "
                f"the shard shape {list(shape)} has {len(shape)}"
            )
        for s, c in zip(shape, self.chunk_shape):
            if s % c:
                raise MetadataError(
                    f"sharding_indexed: inner chunk_shape {list(self.chunk_shape)} does not evenly divide the shard shape {list(shape)}"
                )
        cps = tuple(s // c for s, c in zip(shape, self.chunk_shape))
        n = math.prod(cps)
        inner = self.inner_chain.bind(ChunkSpec(self.chunk_shape, spec.dtype, spec.fill_value))
        index = self.index_chain.bind(ChunkSpec(cps + (2,), _u64(), np.uint64(EMPTY)))
        index_nbytes = index.encoded_size()
        if index_nbytes is None:
            raise MetadataError(
                "sharding_indexed: index_codecs must produce a fixed-size encoding (no compression codecs), got "
                f"{[c.name for c in self.index_codecs]}"
            )
        fast: bool | None = None
        names = [c.to_json() for c in self.index_codecs]
        little = {"name": "bytes", "configuration": {"endian": "little"}}
        if names == [little, {"name": "crc32c"}]:
            fast = True
        elif names == [little]:
            fast = False
        return ShardLayout(shape, self.chunk_shape, cps, n, inner, index, index_nbytes, fast)

    def layout(self, spec: ChunkSpec) -> ShardLayout:
        """The shard layout (inner chunk grid, bound inner chain, index codec) of shards of
        ``spec``, cached per spec."""
        return self._layouts.get(spec, self._make_layout)

    _layout = layout

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        self._layout(spec)
        return spec

    def max_encoded_size_for(self, spec: ChunkSpec) -> int:
        lay = self._layout(spec)
        size: int = lay.n * lay.inner.max_encoded_size() + lay.index_nbytes
        return size

    # ------------------------------------------------------------------ index
    def check_new_index(self, lay: ShardLayout, key: str = "") -> None:
        """ChunkMemoryError when a write would create an index of ``lay`` (a shard that does not
        exist yet, or a whole shard written) larger than ``shard_index_max_bytes``
        (``zarrbolt.config``): the index's size comes from the metadata alone (16 bytes per
        inner chunk), and building one takes work and memory in proportion to it.  (Reads need
        no such check: a stored index is read only once the shard proves to hold it.)"""
        limit = int(config.get("shard_index_max_bytes"))
        if lay.index_nbytes > limit:
            where = f"shard {key!r}" if key else "a shard"
            raise ChunkMemoryError(
                f"{where}: inner chunks {list(lay.chunk_shape)} in shards of {list(lay.shard_shape)} make an index of "
                f"{lay.n} entries ({lay.index_nbytes} bytes), more than shard_index_max_bytes ({limit} bytes); "
                "such a shard is not created (raise the limit in zarrbolt.config to write it)"
            )

    def index_range(self, lay: ShardLayout) -> tuple[str, int]:
        """``("suffix"|"prefix", nbytes)``: where the index is in a shard."""
        return ("suffix" if self.index_location == "end" else "prefix", lay.index_nbytes)

    def decode_index(self, raw: Any, lay: ShardLayout, shard_nbytes: int, key: str = "") -> tuple[np.ndarray, np.ndarray]:
        """Flat ``(offsets, nbytes)`` uint64 arrays of the inner chunks, validated against the shard size."""
        where = f"shard {key!r}" if key else "shard"
        if len(raw) != lay.index_nbytes:
            raise CorruptChunkError(f"{where}: index has {len(raw)} bytes, expected {lay.index_nbytes}")
        try:
            if lay.fast_index_crc is not None:
                offs, nb = kernels.parse_shard_index(
                    raw, (lay.n,), shard_nbytes=shard_nbytes, index_location=self.index_location,
                    checksum=lay.fast_index_crc,
                )
                return offs, nb
            pairs = lay.index.decode(raw)
            from .._ext import _shard

            if self.index_location == "end":
                begin, end = 0, shard_nbytes - lay.index_nbytes
            else:
                begin, end = lay.index_nbytes, shard_nbytes
            pairs = _shard.validate_pairs(np.ascontiguousarray(pairs).reshape(-1, 2), begin, end)
            pairs = np.asarray(pairs, dtype=np.uint64).reshape(-1, 2)
            return np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1])
        except CodecError as e:
            raise type(e)(f"{where}: {e}") from None

    def split_shard(self, data: Any, lay: ShardLayout, key: str = "") -> tuple[memoryview, np.ndarray, np.ndarray]:
        """A shard's bytes split into ``(bytes, offsets, nbytes)``: the encoded shard as a byte view
        and its index's offset and size per inner chunk (checked: CorruptChunkError / ChecksumError
        naming ``key``).
        """
        mv = memoryview(data).cast("B") if not isinstance(data, memoryview) or data.format != "B" else data
        total = len(mv)
        if total < lay.index_nbytes:
            raise CorruptChunkError(
                f"shard {key!r}: {total} bytes is smaller than its {lay.index_nbytes}-byte index"
            )
        raw = mv[total - lay.index_nbytes:] if self.index_location == "end" else mv[: lay.index_nbytes]
        offs, nb = self.decode_index(raw, lay, total, key)
        return mv, offs, nb

    # ------------------------------------------------------------------ whole-shard decode/encode
    def inner_region(self, lay: ShardLayout, flat: int) -> tuple[slice, ...]:
        """The region of the shard (one slice per dimension) inner chunk ``flat`` (C order) covers."""
        coords = np.unravel_index(flat, lay.chunks_per_shard) if lay.chunks_per_shard else ()
        return tuple(slice(int(c) * s, (int(c) + 1) * s) for c, s in zip(coords, lay.chunk_shape))

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        lay = self._layout(spec)
        mv, offs, nb = self.split_shard(data, lay)
        out = np.empty(spec.shape, dtype=spec.dtype.numpy_dtype)
        inner = lay.inner
        fill = spec.fill_value
        for i in range(lay.n):
            region = self.inner_region(lay, i)
            o = int(offs[i])
            if o == EMPTY:
                out[region] = fill
                continue
            out[region] = inner.decode(mv[o: o + int(nb[i])])
        return out

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> bytes:
        enc: bytes | None = self.encode_shard(array, spec)
        if enc is None:  # every inner chunk is empty: the shard is just its index
            lay = self._layout(spec)
            empty = np.full(lay.chunks_per_shard + (2,), EMPTY, dtype=np.uint64)
            return bytes(memoryview(lay.index.encode(empty)).cast("B"))
        return enc

    def encode_shard(
        self,
        array: np.ndarray,
        spec: ChunkSpec,
        *,
        reuse: tuple[memoryview, np.ndarray, np.ndarray] | None = None,
        touched: np.ndarray | None = None,
        is_fill: Callable[[np.ndarray], bool] | None = None,
        parts: bool = False,
        encoder: Callable[[np.ndarray, list[Any]], tuple[np.ndarray, np.ndarray]] | None = None,
    ) -> Any:
        """Encode a whole shard.  Inner chunks equal to the fill value become empty entries;
        returns None when all of them are empty (the caller deletes the shard).  ``parts=True``
        returns the shard's pieces in order (for ``Store.set_parts``) instead of joined bytes.

        ``array`` may be smaller than the shard (an edge shard: the part of it inside the
        array, from the shard's origin): the inner chunks that lie wholly outside it are left
        out of the shard (empty), those it cuts are padded with the fill value.

        With a boolean ``touched`` mask (flat, one per inner chunk) only the touched inner chunks
        are encoded; the untouched ones copy their existing encoded bytes from
        ``reuse=(shard_bytes, offsets, nbytes)`` (partial writes), or stay empty without
        ``reuse`` (a new shard written in part: like zarr-python, a write stores no inner chunk
        it does not touch, even where empty chunks are written).

        ``encoder(array, regions)``, when given, encodes the inner chunks at ``regions`` of
        ``array`` in one call (the fused C encode; a region cut by the array's edge is padded
        with the fill value): it returns ``(buffer, where)``, each chunk's ``(offset, size)`` in
        the buffer, or offset -1 (all fill, by ``is_fill``'s rule: bit for bit against the fill
        value) or -2 (not done: encoded here)."""
        lay = self._layout(spec)
        if reuse is None:
            self.check_new_index(lay)
        flats = self.inner_within(lay, array.shape)
        if touched is not None:
            flats = flats[np.asarray(touched, dtype=bool)[flats]]
        encoded = self.encode_inner(array, spec, flats, is_fill=is_fill, encoder=encoder)
        if reuse is not None and touched is not None:
            mv, offs, nb = reuse
            for i in np.flatnonzero(~np.asarray(touched, dtype=bool)).tolist():
                o = int(offs[i])
                if o != EMPTY:
                    encoded[i] = mv[o: o + int(nb[i])]
        return self.assemble(lay, encoded, parts)

    def inner_within(self, lay: ShardLayout, extent: Sequence[int]) -> np.ndarray:
        """Flat numbers (C order) of the inner chunks that overlap ``[0, extent)`` of a shard."""
        counts = [min(n, -(-int(e) // c)) for n, c, e in zip(lay.chunks_per_shard, lay.chunk_shape, extent)]
        if counts == list(lay.chunks_per_shard):
            return np.arange(lay.n, dtype=np.int64)
        if any(k <= 0 for k in counts):
            return np.zeros(0, dtype=np.int64)
        grids = np.meshgrid(*[np.arange(k) for k in counts], indexing="ij")
        return np.ravel_multi_index(tuple(g.reshape(-1) for g in grids), lay.chunks_per_shard).astype(np.int64)

    def encode_inner(
        self, array: np.ndarray, spec: ChunkSpec, flats: Any, *, is_fill: Callable[[np.ndarray], bool] | None = None,
        encoder: Callable[[np.ndarray, list[Any]], tuple[np.ndarray, np.ndarray]] | None = None,
        origin: Sequence[int] | None = None, stacked: bool = False,
    ) -> dict[int, Any]:
        """``{flat: encoded bytes}`` of inner chunks ``flats`` of a shard whose part
        ``[origin, origin + array.shape)`` is ``array`` (origin: zeros by default); chunks equal
        to the fill value (by ``is_fill``) are left out.  A chunk cut by ``array``'s edge is
        padded with the fill value.  ``stacked``: ``array`` holds the chunks one after another
        instead (chunk ``k`` of ``flats`` at :func:`stacked_region` ``k``; see merge_stacked)."""
        lay = self._layout(spec)
        inner = lay.inner
        if is_fill is None:
            is_fill = spec.is_fill
        org = tuple(origin) if origin is not None else (0,) * len(lay.chunk_shape)
        flats = [int(i) for i in flats]
        encoded: dict[int, Any] = {}

        def region(k: int) -> tuple[slice, ...]:
            if stacked:
                return stacked_region(lay.chunk_shape, k)
            reg = self.inner_region(lay, flats[k])
            return tuple(slice(r.start - o, min(r.stop - o, e)) for r, o, e in zip(reg, org, array.shape))

        def encode_batch(todo: Sequence[int]) -> None:
            for k in todo:
                reg = region(k)
                part = array[reg]
                if part.shape == lay.chunk_shape:
                    chunk = np.ascontiguousarray(part)
                else:  # cut by the array's edge: padded with the fill value
                    chunk = np.full(lay.chunk_shape, spec.fill_value, dtype=array.dtype)
                    chunk[tuple(slice(0, n) for n in part.shape)] = part
                if not is_fill(chunk):
                    encoded[flats[k]] = inner.encode(chunk)

        if encoder is not None and flats:
            buf, where = encoder(array, [region(k) for k in range(len(flats))])
            mv = memoryview(buf)
            redo = []
            for k, (o, n) in enumerate(where.tolist()):
                if o >= 0:
                    encoded[flats[k]] = mv[o: o + n]
                elif o == -2:
                    redo.append(k)
            encode_batch(redo)
        else:
            # Inner chunks are encoded on the shared pool (the codecs release the GIL).  When this
            # shard is itself one task of a parallel write, the nested call runs inline.
            run_batches(encode_batch, range(len(flats)), cost=spec.nbytes)
        return encoded

    def assemble(self, lay: ShardLayout, encoded: dict[int, Any], parts: bool = False) -> Any:
        """The shard holding the inner chunks ``{flat: encoded bytes}`` (the others empty), laid
        out in ``write_order``, as pieces (``parts``) or joined bytes; None when none is given."""
        if not encoded:
            return None
        pieces: list[Any] = []
        offsets = np.full(lay.n, EMPTY, dtype=np.uint64)
        nbytes = np.full(lay.n, EMPTY, dtype=np.uint64)
        pos = lay.index_nbytes if self.index_location == "start" else 0
        flats = np.fromiter(encoded, dtype=np.int64, count=len(encoded))
        for i in in_storage_order(lay.chunks_per_shard, self.write_order, flats).tolist():
            enc = encoded.get(i)
            if enc is None:
                continue
            size = _nbytes(enc)
            offsets[i] = pos
            nbytes[i] = size
            pos += size
            pieces.append(enc)
        raw_index = self.encode_index(lay, offsets, nbytes)
        if self.index_location == "start":
            pieces.insert(0, raw_index)
        else:
            pieces.append(raw_index)
        return pieces if parts else b"".join(pieces)

    def encode_index(self, lay: ShardLayout, offsets: np.ndarray, nbytes: np.ndarray) -> Any:
        """The encoded index of flat ``(offsets, nbytes)`` uint64 arrays."""
        index = np.stack([np.asarray(offsets, np.uint64), np.asarray(nbytes, np.uint64)], axis=1)
        return lay.index.encode(index.reshape(lay.chunks_per_shard + (2,)))

    def touched_inner_chunks(self, lay: ShardLayout, selection: Any) -> np.ndarray:
        """Flat numbers (C order, ascending) of the inner chunks that ``selection`` (within the
        shard) touches.  An orthogonal selection costs memory in proportion to the chunks it
        touches, not to the shard's (the metadata's) number of inner chunks."""
        axes = _touched_axes(lay, selection)
        if axes is not None:
            if not axes:
                return np.zeros(1, dtype=np.int64)
            grids = np.meshgrid(*axes, indexing="ij")
            flat: np.ndarray = np.ravel_multi_index(tuple(g.reshape(-1) for g in grids), lay.chunks_per_shard)
            return flat.astype(np.int64)
        mask = np.zeros(lay.shard_shape, dtype=bool)
        mask[selection] = True
        shp: list[int] = []
        for n, c in zip(lay.chunks_per_shard, lay.chunk_shape):
            shp += [n, c]
        axes2 = tuple(range(1, 2 * len(lay.chunk_shape), 2))
        touched = mask.reshape(shp).any(axis=axes2).reshape(-1) if axes2 else mask.reshape(1)
        return np.flatnonzero(touched).astype(np.int64)

    def plan_update(self, lay: ShardLayout, selection: Any) -> ShardUpdate:
        """What writing at ``selection`` (within the shard) changes: see :class:`ShardUpdate`."""
        return plan_update(lay, selection, self.touched_inner_chunks(lay, selection))

    def merge_update(self, spec: ChunkSpec, upd: ShardUpdate, value: Any, existing: Sequence[Any],
                     key: str = "", decoder: Callable[[np.ndarray, list[Any], list[Any]], None] | None = None,
                     empty: Callable[[tuple[int, ...], np.dtype], np.ndarray] | None = None) -> np.ndarray:
        """The box of ``upd`` holding the touched inner chunks after the write: each one not
        wholly overwritten decoded from ``existing`` (its encoded bytes, in the order of
        ``upd.touched[~upd.covered]``; None: empty), then ``value`` put at the selection.
        ``decoder(box, regions, datas)``, when given, decodes the inner chunks ``datas`` into
        ``regions`` of the box in one call (the fused C decode); it may raise a CodecError
        with the failing chunk's position as ``task_index``.  ``empty(shape, dtype)``: makes the
        box (e.g. from reused memory; default ``numpy.empty``)."""
        lay = self._layout(spec)
        box = (empty or np.empty)(upd.box_shape, spec.dtype.numpy_dtype)
        partial = upd.touched[~upd.covered].tolist()
        regions = [tuple(slice(r.start - o, r.stop - o) for r, o in zip(self.inner_region(lay, i), upd.origin))
                   for i in partial]
        self._decode_into(lay, spec, box, partial, regions, existing, key, decoder)
        box[upd.local] = value
        return box

    def merge_stacked(self, spec: ChunkSpec, upd: ShardUpdate, value: Any, existing: Sequence[Any],
                      key: str = "", decoder: Callable[[np.ndarray, list[Any], list[Any]], None] | None = None,
                      empty: Callable[[tuple[int, ...], np.dtype], np.ndarray] | None = None) -> np.ndarray | None:
        """As :meth:`merge_update`, but the touched inner chunks one after another along the
        first axis ("stacked": chunk ``k`` of ``upd.touched`` is :func:`stacked_region` ``k``):
        each chunk is contiguous, so it is decoded in place and encoded without a strided
        gather (``encode_inner(..., stacked=True)``).  None (nothing done) unless the selection
        is of integers and slices of step 1 and ``value`` broadcasts to it."""
        dtype = spec.dtype.numpy_dtype
        local, nd = upd.local, len(upd.origin)
        if dtype.hasobject or not nd or not isinstance(local, tuple) or len(local) != nd or not len(upd.touched):
            return None
        shape: list[int] = []
        for s in local:
            if isinstance(s, slice):
                if s.step != 1 or not isinstance(s.start, int) or not isinstance(s.stop, int) or s.stop <= s.start:
                    return None
                shape.append(s.stop - s.start)
            elif not isinstance(s, int):
                return None
        try:
            v = np.broadcast_to(np.asarray(value, dtype=dtype), tuple(shape))
        except (ValueError, TypeError):
            return None
        lay = self._layout(spec)
        cs = lay.chunk_shape
        t = len(upd.touched)
        stack = (empty or np.empty)((t * cs[0],) + tuple(cs[1:]), dtype)
        ks = np.flatnonzero(~upd.covered).tolist()
        self._decode_into(lay, spec, stack, upd.touched[ks].tolist(), [stacked_region(cs, k) for k in ks], existing,
                          key, decoder)
        chunks = stack.reshape((t,) + tuple(cs))
        firsts = np.array(np.unravel_index(upd.touched, lay.chunks_per_shard)).T * np.asarray(cs) - np.asarray(upd.origin)
        for k, lo in enumerate(firsts.tolist()):
            dst: list[Any] = []
            src: list[slice] = []
            for s, a, c in zip(local, lo, cs):
                if isinstance(s, int):
                    dst.append(s - a)
                    continue
                b, e = max(s.start, a), min(s.stop, a + c)
                dst.append(slice(b - a, e - a))
                src.append(slice(b - s.start, e - s.start))
            chunks[k][tuple(dst)] = v[tuple(src)]
        return stack

    def merge_encode(self, spec: ChunkSpec, upd: ShardUpdate, value: Any, existing: Sequence[Any], key: str = "", *,
                     is_fill: Callable[[np.ndarray], bool] | None = None, encoder: Any = None,
                     decoder: Callable[[np.ndarray, list[Any], list[Any]], None] | None = None,
                     empty: Callable[[tuple[int, ...], np.dtype], np.ndarray] | None = None) -> dict[int, Any]:
        """``{flat: encoded bytes}`` of the touched inner chunks of ``upd`` after the write
        (:meth:`encode_inner`), merged one after another (:meth:`merge_stacked`) where the
        selection allows, else in their box (:meth:`merge_update`)."""
        box = self.merge_stacked(spec, upd, value, existing, key, decoder, empty)
        if box is not None:
            return self.encode_inner(box, spec, upd.touched, is_fill=is_fill, encoder=encoder, stacked=True)
        box = self.merge_update(spec, upd, value, existing, key, decoder, empty)
        return self.encode_inner(box, spec, upd.touched, is_fill=is_fill, encoder=encoder, origin=upd.origin)

    def _decode_into(self, lay: ShardLayout, spec: ChunkSpec, box: np.ndarray, flats: Sequence[int],
                     regions: Sequence[tuple[slice, ...]], existing: Sequence[Any], key: str,
                     decoder: Callable[[np.ndarray, list[Any], list[Any]], None] | None) -> None:
        """Decode inner chunks ``flats`` from ``existing`` (their encoded bytes; None: empty, the
        fill value) into ``regions`` of ``box``."""
        todo: list[tuple[int, tuple[slice, ...], Any]] = []
        for i, reg, data in zip(flats, regions, existing):
            if data is None:
                box[reg] = spec.fill_value
            else:
                todo.append((i, reg, data))
        try:
            if decoder is not None and todo:
                try:
                    decoder(box, [t[1] for t in todo], [t[2] for t in todo])
                    todo = []
                except CodecError as e:
                    k = getattr(e, "task_index", None)
                    which = todo[k][0] if isinstance(k, int) and 0 <= k < len(todo) else "?"
                    raise type(e)(f"shard {key!r}, inner chunk {which}: {e}") from e
            for i, reg, data in todo:
                try:
                    box[reg] = lay.inner.decode(data)
                except (CodecError, MetadataError) as e:
                    raise type(e)(f"shard {key!r}, inner chunk {i}: {e}") from e
        except (ValueError, TypeError) as e:
            raise CorruptChunkError(f"shard {key!r}: {e}") from e

    def update_shard(
        self, data: Any, spec: ChunkSpec, selection: Any, value: Any, key: str, is_fill: Callable[[np.ndarray], bool],
        parts: bool = False, encoder: Any = None, decoder: Any = None,
    ) -> Any:
        """Read-modify-write of part of an existing shard (``data``; None: a new shard): decode
        only the touched inner chunks that the write does not wholly cover, apply ``value`` at
        ``selection``, re-encode the touched chunks, and copy the untouched ones' bytes."""
        lay = self._layout(spec)
        if data is None:
            self.check_new_index(lay, key)
        upd = self.plan_update(lay, selection)
        if data is None:
            mv, offs, nb = None, None, None
            existing: list[Any] = [None] * int((~upd.covered).sum())
        else:
            mv, offs, nb = self.split_shard(data, lay, key)
            existing = [None if int(offs[i]) == EMPTY else mv[int(offs[i]): int(offs[i]) + int(nb[i])]
                        for i in upd.touched[~upd.covered].tolist()]
        encoded = self.merge_encode(spec, upd, value, existing, key, is_fill=is_fill, encoder=encoder, decoder=decoder)
        if mv is not None:
            assert offs is not None and nb is not None
            keep = np.ones(lay.n, dtype=bool)
            keep[upd.touched] = False
            for i in np.flatnonzero(keep & (offs != EMPTY)).tolist():
                encoded[i] = mv[int(offs[i]): int(offs[i]) + int(nb[i])]
        return self.assemble(lay, encoded, parts)


def stacked_region(chunk_shape: Sequence[int], k: int) -> tuple[slice, ...]:
    """Where chunk ``k`` is in an array of chunks stacked along the first axis."""
    c0 = chunk_shape[0]
    return (slice(k * c0, (k + 1) * c0),) + tuple(slice(0, c) for c in chunk_shape[1:])


def _nbytes(enc: Any) -> int:
    return len(enc) if isinstance(enc, (bytes, bytearray)) else len(memoryview(enc).cast("B"))


@dataclass(frozen=True)
class ShardUpdate:
    """A write into part of a shard: the inner chunks it ``touched`` (flat numbers, sorted),
    which of them it ``covered`` wholly (no need to read them), and the ``box`` (``origin``,
    ``box_shape``: the inner-chunk-aligned bounding box of the touched chunks, in shard
    coordinates) that the merge works in, with the write's selection ``local`` to it."""

    touched: np.ndarray
    covered: np.ndarray
    origin: tuple[int, ...]
    box_shape: tuple[int, ...]
    local: tuple[Any, ...]


def _touched_axes(lay: ShardLayout, selection: Any) -> list[np.ndarray] | None:
    """Per axis, the inner-chunk indices that an orthogonal ``selection`` of ints and slices
    touches (None: another kind of selection)."""
    if not isinstance(selection, tuple) or len(selection) != len(lay.chunk_shape):
        return None
    axes = []
    for s, c, n in zip(selection, lay.chunk_shape, lay.shard_shape):
        if isinstance(s, slice):
            r = range(*s.indices(n))
            if len(r) == 0:
                axes.append(np.zeros(0, dtype=np.int64))
            elif abs(r.step) < c:  # every inner chunk from the first to the last is touched
                lo, hi = sorted((r[0] // c, r[-1] // c))
                axes.append(np.arange(lo, hi + 1, dtype=np.int64))
            else:  # as many elements as the value has along this axis
                axes.append(np.unique(np.arange(r.start, r.stop, r.step, dtype=np.int64) // c))
        elif isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)):
            axes.append(np.array([int(s) % n // c]))
        else:
            return None
    return axes


def plan_update(lay: ShardLayout, selection: Any, touched: np.ndarray) -> ShardUpdate:
    """What writing at ``selection`` changes (see :class:`ShardUpdate`), ``touched`` the flat
    numbers of the inner chunks it touches (ascending)."""
    nd = len(lay.chunk_shape)
    coords = np.array(np.unravel_index(touched, lay.chunks_per_shard)).T.reshape(-1, nd) if nd else np.zeros((1, 0))
    lo = coords.min(axis=0) if len(touched) else np.zeros(nd, np.int64)
    hi = coords.max(axis=0) + 1 if len(touched) else np.zeros(nd, np.int64)
    origin = tuple(int(k) * c for k, c in zip(lo, lay.chunk_shape))
    box_shape = tuple(int(h - k) * c for k, h, c in zip(lo, hi, lay.chunk_shape))
    covered = np.zeros(len(touched), dtype=bool)
    simple = isinstance(selection, tuple) and len(selection) == nd
    local: list[Any] = []
    for d in range(nd) if simple else ():
        s, o = selection[d], origin[d]
        if isinstance(s, slice):
            start, stop, step = s.indices(lay.shard_shape[d])
            if step < 0:
                simple = False
                break
            local.append(slice(start - o, stop - o, step))
        elif isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)):
            local.append(int(s) % lay.shard_shape[d] - o)
        else:
            simple = False
            break
    if not simple:  # another kind of selection: the box is the whole shard
        return ShardUpdate(touched, covered, (0,) * nd, tuple(lay.shard_shape), selection)
    full = np.ones(len(touched), dtype=bool)
    for d, s in enumerate(local):
        c = lay.chunk_shape[d]
        if isinstance(s, int) or s.step != 1:
            full &= c == 1 if isinstance(s, int) else False
            continue
        k0 = coords[:, d] * c - origin[d]
        full &= (s.start <= k0) & (s.stop >= k0 + c)
    return ShardUpdate(touched, full, origin, box_shape, tuple(local))
