"""Codec interfaces.

A codec is parsed from its JSON form (``from_json``), serialised back (``to_json``) and, for a
given chunk representation (:class:`ChunkSpec`), validated and resolved to the representation it
encodes to (``resolve``).  The three kinds follow the spec: array->array, array->bytes and
bytes->bytes.  Decoded arrays are always C-contiguous numpy arrays in native byte order.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

if TYPE_CHECKING:
    from ..metadata.dtypes import DataType
    from .stages import ArrayKernelStage, CStep, ElementwiseStage, PermuteStage

CodecKind = Literal["array_to_array", "array_to_bytes", "bytes_to_bytes"]


@dataclass(frozen=True, eq=False)
class ChunkSpec:
    """The representation of a chunk at one point of the codec chain.

    Equality and hashing compare the fill value bit for bit (so NaN fill values compare equal
    to themselves and specs can key caches)."""

    shape: tuple[int, ...]
    dtype: DataType
    fill_value: Any  # numpy scalar of dtype.numpy_dtype (np.void for raw types)

    def _key(self) -> tuple[Any, ...]:
        return (self.shape, self.dtype, np.asarray(self.fill_value).tobytes())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChunkSpec) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def is_fill(self, chunk: np.ndarray) -> bool:
        """True when every element of ``chunk`` equals the fill value bit for bit (any layout:
        no copy is made).  Chunks of data usually differ at their first or last element, which
        is checked before the whole chunk is compared."""
        npdt = self.dtype.numpy_dtype
        if chunk.size == 0:
            return True
        if npdt.hasobject or npdt.kind == "T":  # variable-length items: compared as values
            return bool(np.all(chunk == self.fill_value))
        bits = np.asarray(self.fill_value, dtype=npdt).tobytes()
        n = npdt.itemsize
        if n in (1, 2, 4, 8):
            u = chunk.view(f"u{n}")
            fv = np.frombuffer(bits, dtype=u.dtype)[0]
            if u.ndim and (u[(0,) * u.ndim] != fv or u[(-1,) * u.ndim] != fv):
                return False
            return bool((u == fv).all())
        flat = np.ascontiguousarray(chunk).reshape(-1)
        return bool((flat.view(np.uint8).reshape(-1, n) == np.frombuffer(bits, dtype=np.uint8)).all())

    @property
    def nbytes(self) -> int:
        n = self.dtype.itemsize
        for s in self.shape:
            n *= s
        return n


class Codec(ABC):
    """Base class of all codecs.  Subclasses are immutable after construction."""

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    kind: ClassVar[CodecKind]

    @classmethod
    @abstractmethod
    def from_json(cls, configuration: dict[str, Any] | None) -> Codec:
        """Build from the ``configuration`` member; raise MetadataError when it is invalid."""

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """``{"name": ..., "configuration": {...}}`` (configuration omitted when it has none)."""

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        """Check this codec supports ``spec`` (MetadataError if not); return the encoded spec.

        For array->bytes and bytes->bytes codecs the returned spec is the input spec.
        """
        return spec

    def encoded_size(self, decoded_nbytes: int) -> int | None:
        """Byte size of the encoded form of ``decoded_nbytes`` input bytes, or None if variable."""
        return None

    def max_encoded_size(self, decoded_nbytes: int) -> int:
        """An upper bound of the encoded size of ``decoded_nbytes`` bytes.

        Decoders of the next codec in the chain never produce more than this, so a corrupt size
        field cannot make them allocate more.  The default is a generous compression bound."""
        n = self.encoded_size(decoded_nbytes)
        if n is not None:
            return n
        return decoded_nbytes + decoded_nbytes // 8 + 65536

    def check_writable(self) -> None:
        """Raise MetadataError when a new array is created with a configuration of this codec
        that zarrbolt reads but does not write (its chunks could not be read back by numcodecs
        or zarr-python); codecs holding codecs ask them too.  Default: nothing to refuse."""

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash(repr(self.to_json()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_json().get('configuration', {})!r})"


class ArrayToArrayCodec(Codec):
    kind: ClassVar[CodecKind] = "array_to_array"

    @abstractmethod
    def resolve(self, spec: ChunkSpec) -> ChunkSpec: ...

    @abstractmethod
    def encode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """``array`` has the decoded ``spec``; returns an array of the resolved spec."""

    @abstractmethod
    def decode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """``array`` has the resolved spec; returns an array of the decoded ``spec``."""

    def c_stage(
        self, spec_in: ChunkSpec, spec_out: ChunkSpec
    ) -> PermuteStage | ElementwiseStage | ArrayKernelStage | None:
        """This codec's stage of the fused C plans (:mod:`zarrbolt.codecs.stages`) between its
        decoded side ``spec_in`` and its encoded side ``spec_out``; None: no C stage."""
        return None


class ArrayToBytesCodec(Codec):
    kind: ClassVar[CodecKind] = "array_to_bytes"

    def max_encoded_size_for(self, spec: ChunkSpec) -> int:
        """Upper bound of the encoded size of a chunk of ``spec``."""
        return self.max_encoded_size(spec.nbytes)

    @abstractmethod
    def encode(self, array: np.ndarray, spec: ChunkSpec) -> bytes | bytearray | memoryview:
        """Encode ``array`` (a C-contiguous array of ``spec.shape`` / ``spec.dtype``) to bytes."""

    @abstractmethod
    def decode(self, data: bytes | bytearray | memoryview, spec: ChunkSpec) -> np.ndarray:
        """Return a C-contiguous native-endian array of ``spec.shape`` / ``spec.dtype``.

        Raises CorruptChunkError when ``data`` does not decode to exactly that."""

    def c_byteswap(self, spec: ChunkSpec) -> int | None:
        """For the fused C plans: the encoded bytes are the chunk's elements in C order, each
        unit of this many bytes reversed (0: native order; the item size, or half of it for
        complex numbers); None when the codec has no such form (e.g. sharding)."""
        return None


class BytesToBytesCodec(Codec):
    kind: ClassVar[CodecKind] = "bytes_to_bytes"

    @abstractmethod
    def encode(self, data: bytes | bytearray | memoryview, spec: ChunkSpec) -> bytes | bytearray | memoryview:
        """Encode ``data`` (``spec`` as for :meth:`decode`)."""

    @abstractmethod
    def decode(
        self, data: bytes | bytearray | memoryview, spec: ChunkSpec, max_size: int
    ) -> bytes | bytearray | memoryview:
        """``spec`` is the array spec of the chunk seen by the array->bytes codec; ``max_size``
        bounds the decoded size (a larger result is corrupt data: never allocate beyond it).
        Raises CorruptChunkError / ChecksumError on bad data."""

    # -- the fused C plans (zarrbolt.codecs.stages); ``spec`` as for decode / encode
    def c_decode_step(self, spec: ChunkSpec) -> CStep | None:
        """The decode step ``(kind, capsule, params)`` of the fused plans, or None."""
        return None

    def c_encode_step(self, spec: ChunkSpec) -> CStep | None:
        """The encode step ``(kind, capsule, params)`` of the fused plans, or None."""
        return None

    def c_partial(self, spec: ChunkSpec) -> tuple[Any, ...] | None:
        """A partial decoder for when this is the chain's only bytes->bytes codec:
        ``("blocks", getitem capsule, sizes capsule)`` (decode the blocks holding a range of
        items) or ``("prefix", prefix capsule)`` (decode a leading part), or None."""
        return None
