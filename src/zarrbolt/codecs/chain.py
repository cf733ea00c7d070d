"""A codec chain: ``array->array* , array->bytes , bytes->bytes*`` validated and bound per chunk spec."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

import numpy as np

from .abc import ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, ChunkSpec, Codec
from ..errors import CodecError, CorruptChunkError, MetadataError


_T = TypeVar("_T")


class SpecCache:
    """A small per-instance memo of values made from one chunk spec (bound chains, shard
    layouts).  Unlike a per-instance ``functools.lru_cache`` it pickles, and it pickles empty:
    what it holds is rebuilt on first use in the process that unpickles it.  Safe to share
    between threads (a race makes the value twice; both are equal)."""

    __slots__ = ("_data", "_maxsize")

    def __init__(self, maxsize: int):
        self._maxsize = maxsize
        self._data: dict[Any, Any] = {}

    def get(self, spec: Any, make: Callable[[Any], _T]) -> _T:
        """The value for ``spec``, made by ``make(spec)`` the first time (errors are not cached)."""
        try:
            hit: _T = self._data[spec]
            return hit
        except KeyError:
            pass
        value = make(spec)
        if len(self._data) >= self._maxsize:
            self._data = {}
        self._data[spec] = value
        return value

    def __len__(self) -> int:
        return len(self._data)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self._maxsize,))


@dataclass(frozen=True)
class BoundChain:
    """A chain bound to one decoded chunk spec: the spec each codec sees on its decoded side."""

    chain: CodecChain
    aa_specs: tuple[ChunkSpec, ...]  # input spec of each array->array codec
    ab_spec: ChunkSpec  # input spec of the array->bytes codec
    bb_specs: tuple[ChunkSpec, ...]  # the spec passed to each bytes->bytes codec (= ab_spec)
    bb_limits: tuple[int, ...] = ()  # the largest valid decoded size of each bytes->bytes codec

    @property
    def spec(self) -> ChunkSpec:
        return self.aa_specs[0] if self.aa_specs else self.ab_spec

    def encoded_size(self) -> int | None:
        """Size in bytes of every encoded chunk when the chain makes it fixed, else None."""
        n = self.chain.ab.encoded_size(self.ab_spec.nbytes)
        for c in self.chain.bb:
            if n is None:
                return None
            n = c.encoded_size(n)
        return n

    def max_encoded_size(self) -> int:
        """Upper bound of the encoded size of one chunk."""
        n = self.chain.ab.max_encoded_size_for(self.ab_spec)
        for c in self.chain.bb:
            n = c.max_encoded_size(n)
        return n

    def decode(self, data: bytes | bytearray | memoryview) -> np.ndarray:
        c = self.chain
        codec: Any
        for codec, limit in zip(reversed(c.bb), reversed(self.bb_limits)):
            data = codec.decode(data, self.ab_spec, limit)
        arr = c.ab.decode(data, self.ab_spec)
        i = len(c.aa) - 1
        while i >= 0:
            codec = c.aa[i]
            if i > 0 and _fusable(c.aa[i - 1], codec):
                # scale_offset followed by cast_value: one fused pass
                arr = codec.fused_decode(c.aa[i - 1], arr, self.aa_specs[i - 1])
                i -= 2
                continue
            arr = codec.decode(arr, self.aa_specs[i])
            i -= 1
        spec = self.spec
        if arr.shape != spec.shape or arr.dtype != spec.dtype.numpy_dtype:
            raise CorruptChunkError(
                f"decoded chunk has shape {arr.shape} / dtype {arr.dtype}, expected {spec.shape} / {spec.dtype.numpy_dtype}"
            )
        return arr

    def encode(self, arr: np.ndarray) -> bytes | bytearray | memoryview:
        c = self.chain
        codec: Any
        i = 0
        while i < len(c.aa):
            codec = c.aa[i]
            if i + 1 < len(c.aa) and _fusable(codec, c.aa[i + 1]):
                arr = c.aa[i + 1].fused_encode(codec, arr, self.aa_specs[i])  # type: ignore[attr-defined]
                i += 2
                continue
            arr = codec.encode(arr, self.aa_specs[i])
            i += 1
        data = c.ab.encode(arr, self.ab_spec)
        for codec in c.bb:
            data = codec.encode(data, self.ab_spec)
        return data


class CodecChain:
    """An ordered, validated list of codecs (the ``codecs`` of an array's metadata)."""

    __slots__ = ("codecs", "aa", "ab", "bb", "_binds")

    def __init__(self, codecs: Sequence[Codec]):
        codecs = tuple(codecs)
        aa: list[ArrayToArrayCodec] = []
        ab: ArrayToBytesCodec | None = None
        bb: list[BytesToBytesCodec] = []
        for c in codecs:
            if isinstance(c, ArrayToArrayCodec):
                if ab is not None:
                    raise MetadataError(
                        f"codec {c.name!r} (array->array) must come before the array->bytes codec {ab.name!r}"
                    )
                aa.append(c)
            elif isinstance(c, ArrayToBytesCodec):
                if ab is not None:
                    raise MetadataError(
                        f"exactly one array->bytes codec is allowed, found {ab.name!r} and {c.name!r}"
                    )
                ab = c
            elif isinstance(c, BytesToBytesCodec):
                if ab is None:
                    raise MetadataError(
                        f"codec {c.name!r} (bytes->bytes) must come after the array->bytes codec"
                    )
                bb.append(c)
            else:
                raise MetadataError(f"{c!r} is not a codec")
        if ab is None:
            raise MetadataError("the codec chain needs exactly one array->bytes codec (e.g. 'bytes'), found none")
        self.codecs = codecs
        self.aa = tuple(aa)
        self.ab = ab
        self.bb = tuple(bb)
        self._binds = SpecCache(64)

    def bind(self, spec: ChunkSpec) -> BoundChain:
        """Validate the chain against ``spec`` and return the bound chain (cached per spec)."""
        return self._binds.get(spec, self._bind_uncached)

    def _bind_uncached(self, spec: ChunkSpec) -> BoundChain:
        aa_specs = []
        for c in self.aa:
            aa_specs.append(spec)
            spec = c.resolve(spec)
        spec = self.ab.resolve(spec)
        limits = []
        limit = self.ab.max_encoded_size_for(spec)
        for bc in self.bb:
            bc.resolve(spec)
            limits.append(limit)
            limit = bc.max_encoded_size(limit)
        return BoundChain(self, tuple(aa_specs), spec, tuple(spec for _ in self.bb), tuple(limits))

    def to_json(self) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.codecs]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CodecChain) and self.codecs == other.codecs

    def __hash__(self) -> int:
        return hash(self.codecs)

    def __repr__(self) -> str:
        return f"CodecChain({list(self.codecs)!r})"


def _fusable(first: Codec, second: Codec) -> bool:
    from .numeric import CastValueCodec, ScaleOffsetCodec

    return type(first) is ScaleOffsetCodec and type(second) is CastValueCodec


def wrap_codec_error(exc: Exception, where: str) -> Exception:
    """Turn an unexpected exception from a codec into a CodecError naming the chunk."""
    if isinstance(exc, (CodecError, MetadataError)):
        return exc
    return CodecError(f"{where}: {exc}")
