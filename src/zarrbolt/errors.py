"""The exceptions zarrbolt raises.

Every error zarrbolt reports on bad input is one of these classes.  They also derive from the
built-in exception a Python user would expect (``ValueError`` for bad metadata, ``KeyError`` for
a missing node, ``OSError`` for storage problems), so existing ``except`` clauses keep working.
"""

from __future__ import annotations

__all__ = [
    "ZarrboltError",
    "MetadataError",
    "UnknownCodecError",
    "UnknownDataTypeError",
    "NodeNotFoundError",
    "ArrayNotFoundError",
    "GroupNotFoundError",
    "ContainsArrayError",
    "ContainsGroupError",
    "CodecError",
    "CodecRangeError",
    "ChecksumError",
    "CorruptChunkError",
    "StoreError",
    "InvalidKeyError",
    "ReadOnlyError",
    "BoundsCheckError",
]


class ZarrboltError(Exception):
    """Base class of every zarrbolt exception."""


class MetadataError(ZarrboltError, ValueError):
    """Array/group metadata (``zarr.json``) or a user-supplied parameter is invalid."""


class UnknownCodecError(MetadataError):
    """A codec name that this build of zarrbolt does not implement."""


class UnknownDataTypeError(MetadataError):
    """A data type that this build of zarrbolt does not implement."""


class NodeNotFoundError(ZarrboltError, KeyError):
    """No array or group exists at the requested path."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep messages readable
        return str(self.args[0]) if self.args else ""


class ArrayNotFoundError(NodeNotFoundError):
    """No array exists at the requested path."""


class GroupNotFoundError(NodeNotFoundError):
    """No group exists at the requested path."""


class ContainsArrayError(ZarrboltError, ValueError):
    """An array already exists where something else was to be created."""


class ContainsGroupError(ZarrboltError, ValueError):
    """A group already exists where something else was to be created."""


class CodecError(ZarrboltError, RuntimeError):
    """A chunk could not be encoded or decoded."""


class CodecRangeError(CodecError, ValueError):
    """A value cannot be represented after a numeric codec's arithmetic: outside the range of
    the target data type, or (integer ``scale_offset`` decode) not exactly divisible by the
    scale.  Also a ``ValueError``, as zarr-python raises for the same data."""


class ChecksumError(CodecError):
    """A stored checksum does not match the data."""


class CorruptChunkError(CodecError):
    """Stored chunk bytes are malformed (truncated, inconsistent sizes, bad headers)."""


class StoreError(ZarrboltError, OSError):
    """A storage operation failed."""


class InvalidKeyError(StoreError, ValueError):
    """A store key is not valid (it would escape the store root, or is malformed)."""


class ReadOnlyError(StoreError, PermissionError):
    """A write was attempted on a store or array opened read-only."""


class ValueOverflowError(ZarrboltError, OverflowError):
    """A Python number written into an array is outside its integer data type's range (numpy and
    zarr-python raise OverflowError too); numpy arrays and scalars are cast as numpy casts them."""


class InvalidValueError(ZarrboltError, ValueError):
    """A Python value written into an array has no value of its data type (NaN into integers)."""


class BoundsCheckError(ZarrboltError, IndexError):
    """An index or selection lies outside the array."""
