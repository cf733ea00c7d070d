"""The zarr-python side of the pipeline: its metadata as zarrbolt's, its buffers as numpy
arrays, its stores as zarrbolt stores (through :mod:`.stores` / :mod:`.staging`), and what
decides that zarrbolt serves an array or a call."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import numpy as np
from zarr.core.buffer import cpu as zarr_cpu
from zarr.core.buffer import default_buffer_prototype
from zarr.core.codec_pipeline import BatchedCodecPipeline

from ..errors import UnknownCodecError, ZarrboltError
from ..storage import Store

from .staging import deferred_store as _deferred, staged_read_store, write_requests
from .stores import LoopBridge
from .stores import native_store as _native_store


# Codec classes zarrbolt may stand in for: zarr-python's own and numcodecs' zarr 3 wrappers (a
# user's own class registered under a known name is left to zarr-python).
_KNOWN_CODEC_MODULES = ("zarr.codecs", "numcodecs.zarr3", "numcodecs")


# ---------------------------------------------------------------------------- arrays
def zarr_pipeline(array_metadata: Any) -> Any:
    """zarr-python's own pipeline for the array, made the way zarr-python makes it."""
    from zarr.codecs._v2 import V2Codec
    from zarr.core.array_spec import ArrayConfig, ArraySpec

    if array_metadata.zarr_format == 2:
        codecs: list[Any] = [V2Codec(filters=array_metadata.filters, compressor=array_metadata.compressor)]
        shape = array_metadata.chunks
        conf = ArrayConfig.from_dict({"order": array_metadata.order})
    else:
        codecs = list(array_metadata.codecs)
        grid = array_metadata.chunk_grid
        shape = getattr(grid, "chunk_shape", None) or (1,) * len(array_metadata.shape)
        conf = ArrayConfig.from_dict({})
    spec = ArraySpec(shape=shape, dtype=array_metadata.dtype if array_metadata.zarr_format == 2
                     else array_metadata.data_type, fill_value=array_metadata.fill_value, config=conf,
                     prototype=default_buffer_prototype())
    return BatchedCodecPipeline.from_codecs(codecs).evolve_from_array_spec(spec)


def _codec_reason(codecs: Any) -> str | None:
    for c in codecs:
        mod = type(c).__module__
        if not mod.startswith(_KNOWN_CODEC_MODULES):
            return f"codec class {mod}.{type(c).__qualname__}"
        inner = getattr(c, "codecs", None)
        if isinstance(inner, tuple) and inner:
            why = _codec_reason(inner) or _codec_reason(getattr(c, "index_codecs", ()))
            if why:
                return why
    return None


def _codecs_of(array_metadata: Any) -> list[Any]:
    """The codec objects of a zarr-python array: its v3 codecs, or its v2 filters and compressor."""
    if array_metadata.zarr_format == 2:
        return [c for c in (*(array_metadata.filters or ()), array_metadata.compressor) if c is not None]
    return list(array_metadata.codecs)


def _data_type(array_metadata: Any) -> Any:
    return array_metadata.dtype if array_metadata.zarr_format == 2 else array_metadata.data_type


def parse_documents(array_metadata: Any, docs: Any) -> Any:
    """zarrbolt's metadata from zarr-python's documents of one array (``{name: bytes}``:
    ``zarr.json``, or ``.zarray`` for Zarr v2); None when the document is missing."""
    from ..metadata.nodes import parse_node_metadata
    from ..metadata.v2 import ZARRAY, load_json, parse_v2_array

    if array_metadata.zarr_format == 2:
        raw = docs.get(ZARRAY)
        return None if raw is None else parse_v2_array(load_json(raw, ZARRAY))
    raw = docs.get("zarr.json")
    return None if raw is None else parse_node_metadata(raw)


def zarrbolt_metadata(array_metadata: Any, store: Any) -> tuple[Any, str | None]:
    """``(zarrbolt ArrayMetadata, None)`` when zarrbolt serves the array (Zarr v3 or v2), else
    ``(None, reason)``."""
    if array_metadata.zarr_format not in (2, 3):
        return None, f"zarr_format {array_metadata.zarr_format}"
    if not issubclass(default_buffer_prototype().nd_buffer, zarr_cpu.NDBuffer):
        return None, "buffer prototype"
    why = _codec_reason(_codecs_of(array_metadata))
    if why is not None:
        return None, why
    try:
        docs = array_metadata.to_buffer_dict(default_buffer_prototype())
        meta = parse_documents(array_metadata, {k: v.to_bytes() for k, v in docs.items()})
    except UnknownCodecError as e:
        return None, f"codec {_unknown_name(e)}"
    except (ZarrboltError, ValueError, TypeError, KeyError) as e:
        return None, _metadata_reason(array_metadata, e)
    if getattr(meta, "node_type", None) != "array":
        return None, "metadata"
    try:
        native = _data_type(array_metadata).to_native_dtype()
    except Exception:  # noqa: BLE001 - a data type zarr cannot map to numpy
        return None, f"dtype {_data_type(array_metadata)}"
    if np.dtype(native) != meta.dtype and not swapped_of(np.dtype(native), meta.dtype):
        return None, f"dtype {native} (zarrbolt: {meta.dtype})"
    if array_metadata.zarr_format == 3:
        copy_write_orders(array_metadata.codecs, meta.codecs)
    return meta, None


def swapped_of(dtype: np.dtype, native: np.dtype) -> bool:
    """Whether ``dtype`` (zarr-python's in-memory data type of an array) is zarrbolt's ``native``
    one in the other byte order: zarr-python keeps a big-endian data type's arrays big-endian in
    memory, zarrbolt reads and writes native ones (:func:`native_view`, :func:`to_native`)."""
    return not dtype.isnative and dtype.itemsize > 1 and dtype.newbyteorder("=") == native


def native_view(arr: np.ndarray, native: np.ndarray | np.dtype) -> np.ndarray:
    """``arr`` (zarr-python's buffer, perhaps of the byte-swapped type) seen as zarrbolt's
    ``native`` data type: a view of the same memory (its values are swapped until
    :func:`swap_in_place`)."""
    return arr if arr.dtype == native else arr.view(native)


def swap_in_place(arr: np.ndarray) -> None:
    """Reverse the bytes of each item of ``arr`` (a native view of a byte-swapped buffer), which
    turns the native values zarrbolt read into it into the buffer's byte order."""
    arr.byteswap(inplace=True)


def to_native(arr: np.ndarray, native: np.dtype) -> np.ndarray:
    """Values to write, in zarrbolt's native data type (a copy where zarr-python's are swapped)."""
    return arr if arr.dtype == native else arr.astype(native)


def copy_write_orders(source: Any, target: Any) -> None:
    """Give zarrbolt's sharding codecs in ``target`` the inner chunk layout order of the
    matching sharding codecs in ``source`` (zarr-python's ``subchunk_write_order``, or another
    zarrbolt chain's ``write_order``): a runtime setting the metadata JSON does not carry, so
    shards written through the pipeline are laid out as zarr-python lays them out."""
    from ..codecs.sharding import WRITE_ORDERS, ShardingCodec

    for src, dst in zip(source, target):
        if not isinstance(dst, ShardingCodec):
            continue
        order = getattr(src, "subchunk_write_order", None) or getattr(src, "write_order", None)
        if order in WRITE_ORDERS:
            dst.write_order = order
        copy_write_orders(getattr(src, "codecs", ()), dst.codecs)


def _unknown_name(e: Exception) -> str:
    msg = str(e)
    if "'" in msg:
        return msg.split("'")[1]
    return msg


def _metadata_reason(array_metadata: Any, e: Exception) -> str:
    msg = str(e)
    if "data type" in msg or "dtype" in msg or "data_type" in msg:
        return f"dtype {_data_type(array_metadata)}"
    return f"metadata: {msg[:120]}"


async def load_metadata(zstore: Any, prefix: str, old: Any) -> Any:
    """The array's metadata read again from the store (after a resize), when only its shape
    (and a chunk grid that lists its chunks: the chunks a resize added) differs from ``old``;
    else None."""
    name = ".zarray" if old.zarr_format == 2 else "zarr.json"
    buf = await zstore.get(f"{prefix}/{name}" if prefix else name, prototype=default_buffer_prototype())
    if buf is None:
        return None
    try:
        meta = parse_documents(old, {name: buf.to_bytes()})
    except ZarrboltError:
        return None
    if getattr(meta, "node_type", None) != "array":
        return None
    same = {"attributes": meta.attributes, "shape": meta.shape}
    if not old.chunk_grid.regular:
        same["chunk_grid"] = meta.chunk_grid
    if old.evolve(**same) != meta:
        return None
    if old.zarr_format == 3:
        copy_write_orders(old.codecs, meta.codecs)
    return meta


# ---------------------------------------------------------------------------- calls
def numpy_of(buf: Any) -> np.ndarray | None:
    """The numpy array behind a zarr-python CPU (ND)Buffer (a view, never a copy), or None."""
    if not isinstance(buf, zarr_cpu.NDBuffer):
        return None
    data = getattr(buf, "_data", None)
    return data if type(data) is np.ndarray else None


def batch_problem(batch: list[Any], buf: Any, meta: Any) -> str | None:
    """Why zarrbolt does not serve this call, or None when it does."""
    from zarr.storage import StorePath

    arr = numpy_of(buf)
    if arr is None:
        return "buffer type"
    if arr.dtype != meta.dtype and not swapped_of(arr.dtype, meta.dtype):
        return f"buffer dtype {arr.dtype}"
    first = batch[0]
    if not isinstance(first[0], StorePath):
        return "byte getter"
    zstore = first[0].store
    spec = first[1]
    # each item's chunk spec has its chunk's codec shape (a grid whose chunks differ in shape:
    # checked against the chunk's coordinates, see spec_problem)
    chunks = tuple(meta.chunks) if meta.chunk_grid.regular else None
    if not issubclass(spec.prototype.nd_buffer, zarr_cpu.NDBuffer):
        return "buffer prototype"
    for item in batch:
        if chunks is not None and item[1] is not spec and tuple(item[1].shape) != chunks:
            return "chunk spec"
        if not isinstance(item[0], StorePath) or item[0].store is not zstore:
            return "store"
    if chunks is not None and tuple(spec.shape) != chunks:
        return "chunk spec"
    return None


def spec_problem(batch: list[Any], coords: list[Any], meta: Any) -> str | None:
    """Of a grid whose chunks differ in shape: "chunk spec" unless each item's chunk spec has the
    codec shape of its chunk (at ``coords``)."""
    grid = meta.chunk_grid
    if grid.regular:
        return None
    if any(tuple(item[1].shape) != grid.chunk_box(c)[1] for item, c in zip(batch, coords)):
        return "chunk spec"
    return None


# ---------------------------------------------------------------------------- stores
class _NoStore(Store):
    """A placeholder store (ArrayIO needs one to be made; calls then give it theirs)."""

    def get(self, key: str, byte_range: Any = None) -> None:  # pragma: no cover
        raise RuntimeError("no store")

    def exists(self, key: str) -> bool:  # pragma: no cover
        raise RuntimeError("no store")

    def set(self, key: str, value: Any) -> None:  # pragma: no cover
        raise RuntimeError("no store")

    def erase(self, key: str) -> None:  # pragma: no cover
        raise RuntimeError("no store")

    def list(self) -> Iterator[str]:  # pragma: no cover
        return iter(())

    def with_read_only(self, read_only: bool = True) -> Store:  # pragma: no cover
        return self


NO_STORE = _NoStore()


def native_store(zstore: Any) -> Store | None:
    return _native_store(zstore)


async def staged_store(zstore: Any, io: Any, requests: dict[str, list[int] | None]) -> Store:
    return await staged_read_store(zstore, asyncio.get_running_loop(), io, requests)


async def deferred_store(zstore: Any, io: Any, indexer: Any) -> Any:
    """A store for a write of ``io`` at ``indexer`` to a zarr store without a native one: what
    the write reads (chunks and shards it updates in part) staged, its writes kept until
    ``flush()``."""
    staged = await staged_read_store(zstore, asyncio.get_running_loop(), io, write_requests(io, indexer))
    bridge = staged.base
    assert isinstance(bridge, LoopBridge)
    return _deferred(staged, bridge)

