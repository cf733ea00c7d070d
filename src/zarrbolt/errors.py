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
    "ChunkNotFoundError",
    "UnknownConfigKeyError",
    "ContainsArrayError",
    "ContainsGroupError",
    "CodecError",
    "CodecRangeError",
    "ChunkMemoryError",
    "ChecksumError",
    "CorruptChunkError",
    "ValueOverflowError",
    "InvalidValueError",
    "StoreError",
    "InvalidKeyError",
    "ReadOnlyError",
    "StorePermissionError",
    "StoreUnavailableError",
    "ConflictError",
    "BoundsCheckError",
    "StoreFullError",
    "StoreIOError",
    "SymlinkError",
    # copy / command line
    "DestinationExistsError",
    "DiskFullError",
    "CopyError",
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


class ArrayNotFoundError(NodeNotFoundError, FileNotFoundError):
    """No array exists at the requested path (also a ``FileNotFoundError``, as zarr-python's is)."""

    __str__ = NodeNotFoundError.__str__


class GroupNotFoundError(NodeNotFoundError, FileNotFoundError):
    """No group exists at the requested path (also a ``FileNotFoundError``, as zarr-python's is)."""

    __str__ = NodeNotFoundError.__str__


class ChunkNotFoundError(NodeNotFoundError):
    """A chunk is absent from the store and the array's ``read_missing_chunks`` is off."""


class UnknownConfigKeyError(MetadataError, KeyError):
    """A configuration key (``zarrbolt.config`` or an array's ``config=``) that zarrbolt does not know."""

    __str__ = MetadataError.__str__


class ContainsArrayError(ZarrboltError, ValueError):
    """An array already exists where something else was to be created."""


class ContainsGroupError(ZarrboltError, ValueError):
    """A group already exists where something else was to be created."""


class CodecError(ZarrboltError, RuntimeError):
    """A chunk could not be encoded or decoded."""


class ChunkMemoryError(CodecError, MemoryError):
    """Memory for a chunk (its decoded size comes from the array's metadata) or for a batch of
    chunks could not be allocated: a chunk shape far larger than the machine's memory, or a read
    too large for it.  Also a MemoryError."""


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


class StorePermissionError(StoreError, PermissionError):
    """The storage service refused the request: missing or wrong credentials, or no permission
    for the object (HTTP 401/403)."""


class StoreUnavailableError(StoreError, ConnectionError):
    """The storage service could not be reached or kept failing (5xx responses, connection
    resets, timeouts) after the configured number of retries."""


class ConflictError(StoreError):
    """A conditional write lost a race: the object changed (or appeared) since its version was
    read, so the write was refused rather than silently overwriting another writer's update."""


class ValueOverflowError(ZarrboltError, OverflowError):
    """A Python number written into an array is outside its integer data type's range (numpy and
    zarr-python raise OverflowError too); numpy arrays and scalars are cast as numpy casts them."""


class InvalidValueError(ZarrboltError, ValueError):
    """A Python value written into an array has no value of its data type (NaN into integers)."""


class BoundsCheckError(ZarrboltError, IndexError):
    """An index or selection lies outside the array."""


# --- reliability (issue #21): faults while writing, symlink policy -------------------------------
class StoreFullError(StoreError):
    """A write failed because the storage is full (``ENOSPC``, or a quota: ``EDQUOT``); the key's
    earlier value is intact and no temporary file is left."""


class StoreIOError(StoreError):
    """A write (or read) failed with an I/O error of the device (``EIO``); the key's earlier
    value is intact where the failure came before the final rename."""


class SymlinkError(StoreError, PermissionError):
    """A ``LocalStore`` key is (or is reached through) a symbolic link that the store's
    ``follow_symlinks`` policy refuses, e.g. a link leaving the store root."""


# ---------------------------------------------------------------------------- copy / command line (zarrbolt cp)
class DestinationExistsError(ZarrboltError, FileExistsError):
    """The destination of a copy already holds a node or data (give ``overwrite=True`` /
    ``--overwrite`` to replace it, or ``resume=True`` / ``--resume`` to finish an interrupted copy)."""


class DiskFullError(StoreFullError):
    """The destination ran out of space (or quota) during a copy (a :class:`StoreFullError`).  The shards written so far are
    complete; the unfinished array's metadata is not written, so it is not mistaken for a
    complete one."""


class CopyError(ZarrboltError, RuntimeError):
    """A source node could not be read during a copy (``skip_errors`` reports and skips it)."""


# --- zarrbolt.ome (OME-Zarr images and pyramids) ------------------------------------------
class OmeMetadataError(MetadataError):
    """OME-Zarr (NGFF) metadata that is missing, malformed or inconsistent with the arrays."""


__all__ += ["OmeMetadataError"]


# --- zarrbolt.codec_pipeline (inside zarr-python) ------------------------------------------
class ZarrVersionError(ZarrboltError, ImportError):
    """The installed zarr-python is not one zarrbolt's codec pipeline supports (the message names
    the versions it supports and the one found)."""


__all__ += ["ZarrVersionError"]


# --- read liberally, written strictly --------------------------------------------------------
class MetadataNormalizedWarning(UserWarning):
    """A value zarrbolt reads as other implementations do (e.g. numcodecs' zstd ``level`` 100, or
    gzip ``level`` -1) was normalised in the metadata of a new array (the warning says to what)."""


__all__ += ["MetadataNormalizedWarning"]
