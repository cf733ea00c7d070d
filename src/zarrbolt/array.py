"""The Array class: numpy-style reads and writes of a chunked Zarr v3 array."""

from __future__ import annotations

import math
import operator
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .array_config import ArrayConfig
from .codecs.abc import ChunkSpec
from .errors import (
    ArrayNotFoundError,
    ChunkMemoryError,
    ChunkNotFoundError,
    ContainsGroupError,
    MetadataError,
    ZarrboltError,
)
from .indexing import BlockIndex, basic_indexer, block_region, orthogonal_indexer, selection_kind, vectorized_indexer
from .metadata import ArrayMetadata
from .node import ZARR_JSON, Attributes, Node, load_metadata
from .pipeline import read as read_pipeline
from .pipeline import write as write_pipeline
from .pipeline.context import ArrayIO
from .storage import Store


class _OIndex:
    def __init__(self, array: Array):
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        return self._array.get_orthogonal_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_orthogonal_selection(selection, value)


class _VIndex:
    def __init__(self, array: Array):
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        return self._array.get_coordinate_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_coordinate_selection(selection, value)


class Array(Node):
    """A Zarr v3 array in a store.  Create with :func:`zarrbolt.create_array`, open with
    :func:`zarrbolt.open_array`.  Writes to a read-only array raise
    :class:`~zarrbolt.errors.ReadOnlyError`; an index outside the array raises
    :class:`~zarrbolt.errors.BoundsCheckError`.

    Parameters
    ----------
    store : Store
        The store the array lives in (a :class:`~zarrbolt.storage.LocalStore`, an object store,
        ...); the functions that open arrays make it from a path or URL.
    path : str
        The array's path in the store, without leading or trailing ``/`` (``""``: the store's root).
    metadata : ArrayMetadata
        The array's parsed metadata document (its ``zarr.json``, or ``.zarray`` + ``.zattrs`` of a
        Zarr v2 array).
    read_only : bool, optional
        Refuse writes with :class:`~zarrbolt.errors.ReadOnlyError`; None (the default): as the
        store is.
    config : ArrayConfig or dict, optional
        This array's runtime options (:class:`ArrayConfig`: ``order``, ``write_empty_chunks``,
        ``read_missing_chunks``, ...); the global configuration gives the rest.
    """

    _kind = "array"
    # True on an array made by unpickling until its first read or write checked its metadata
    _unpickled = False

    _config = ArrayConfig()

    def __init__(self, store: Store, path: str, metadata: ArrayMetadata, *, read_only: bool | None = None,
                 config: Any = None):
        self._store = store
        self._path = path
        self._read_only = store.read_only if read_only is None else (read_only or store.read_only)
        self._config = ArrayConfig.parse(config)
        self._set_metadata(metadata)

    # ------------------------------------------------------------------ construction
    @classmethod
    def open(cls, store: Store, path: str = "", *, read_only: bool | None = None, config: Any = None) -> Array:
        """Open the array at ``path`` in ``store``.

        Parameters
        ----------
        store : Store
            The store the array lives in.
        path : str
            The array's path in the store (``""``: the root).
        read_only : bool, optional
            Refuse writes (None: as the store is).
        config : ArrayConfig or dict, optional
            This array's runtime options (:class:`~zarrbolt.ArrayConfig`).

        Returns
        -------
        Array
            The array.

        Raises
        ------
        ArrayNotFoundError
            When there is no node at ``path``.
        ContainsGroupError
            When ``path`` holds a group.
        """
        meta = load_metadata(store, path)
        if meta is None:
            raise ArrayNotFoundError(store.no_node(path, "zarr.json or .zarray"))
        if not isinstance(meta, ArrayMetadata):
            raise ContainsGroupError(f"path {path!r} in {store!r} holds a group, not an array")
        return cls(store, path, meta, read_only=read_only, config=config)

    @property
    def config(self) -> ArrayConfig:
        """This array's runtime configuration, every option resolved (its own ``config=``, else
        the global option)."""
        return self._config.resolved()

    def with_config(self, config: Any) -> Array:
        """The same array with the options in ``config`` changed (zarr-python's ``with_config``).

        Parameters
        ----------
        config
            The options to change (an :class:`~zarrbolt.ArrayConfig` or a dict of its options).

        Returns
        -------
        Array
            A new array object over the same stored array.
        """
        out = type(self)(self._store, self._path, self._metadata, read_only=self._read_only,
                         config=self._config.merged(config))
        out._unpickled = self._unpickled
        return out

    def _set_metadata(self, metadata: ArrayMetadata) -> None:
        self._metadata = metadata
        self._io = io = ArrayIO(self._store, self._path, metadata)
        self._bound = io.bound  # bound once, by the metadata
        self._chain = io.chain
        self._chunk_shape = io.chunk_shape
        self._dtype = io.dtype
        self._fill = io.fill
        self._key_prefix = io.key_prefix
        self._sharding = io.sharding

    _replace_metadata = _set_metadata

    # ------------------------------------------------------------------ pickling
    # Arrays pickle as their store, path, metadata document and read_only (Node.__getstate__).
    _metadata_cls = ArrayMetadata

    def _restored(self) -> None:
        self._unpickled = True

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["config"] = {k: v for k, v in vars(self._config).items() if v is not None}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        cfg = state.get("config") if isinstance(state, dict) else None
        self._config = ArrayConfig.parse(cfg)
        super().__setstate__(state)

    def _sync_unpickled(self) -> None:
        if self._unpickled:
            self._check_unpickled()

    def _check_unpickled(self) -> None:
        """Before the first read or write of an unpickled array (and before it writes its
        attributes): one get of its ``zarr.json``
        (no more) to make sure the metadata the pickle carried is still the array's.  Changed
        attributes are taken over; any other change (a resize, new codecs, the array deleted)
        raises instead of reading or writing chunks by a stale layout."""
        current = load_metadata(self._store, self._path)
        if not isinstance(current, ArrayMetadata):
            raise ArrayNotFoundError(
                f"array {self.name} in {self._store!r} was removed or replaced since it was pickled"
            )
        if _layout_json(current) != _layout_json(self._metadata):
            raise MetadataError(
                f"array {self.name} in {self._store!r} changed since it was pickled (shape {self.shape} -> "
                f"{tuple(current.shape)}, or its chunks, codecs or data type): open it again"
            )
        if current != self._metadata:
            self._replace_metadata(current)
        self._unpickled = False

    def __dask_tokenize__(self) -> tuple[Any, ...]:
        """What dask names graphs over this array by (``dask.base.tokenize``): the store's
        identity, the path and the metadata; never the data (like zarr-python's arrays)."""
        return ("zarrbolt.Array", _store_token(self._store), self._path, self._metadata.to_bytes())

    # ------------------------------------------------------------------ properties
    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape, one size per dimension."""
        return tuple(self._metadata.shape)

    @property
    def dtype(self) -> np.dtype:
        """The numpy data type of the arrays reads return (native byte order)."""
        return self._dtype

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self._metadata.shape)

    @property
    def size(self) -> int:
        """The number of elements (the product of the shape)."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """The size in bytes of the whole array, uncompressed (``size * dtype.itemsize``)."""
        return self.size * self._dtype.itemsize

    @property
    def chunks(self) -> tuple[int, ...]:
        """The chunk shape users read and write by: the inner chunk shape for sharded arrays."""
        if self._sharding is not None and not self._chain.aa:
            return self._sharding.chunk_shape
        return self._chunk_shape

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape (the stored object's shape) of a sharded array, else None."""
        return self._chunk_shape if self._sharding is not None else None

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        """The shape of the chunk grid: the number of chunks (shards of a sharded array) per dimension."""
        return tuple(self._metadata.chunk_grid.grid_shape(self.shape))

    @property
    def nchunks(self) -> int:
        """The number of chunks in the chunk grid (shards of a sharded array)."""
        return math.prod(self.cdata_shape)

    @property
    def nchunks_initialized(self) -> int:
        """The number of chunks (shards of a sharded array) stored: listed in the store."""
        return sum(1 for _ in self._iter_stored_chunk_keys())

    @property
    def fill_value(self) -> Any:
        """The fill value: what reads return where no chunk is stored."""
        return self._fill

    @property
    def order(self) -> str:
        """The memory order of the arrays reads return: the array's ``config`` order when one is
        set, else a Zarr v2 array's stored order, else the global option (a Zarr v3 array is stored
        in C order; a transpose codec changes that)."""
        if self._config.order is None and getattr(self._metadata, "zarr_format", 3) == 2:
            order: str = self._metadata.order
            return order
        order = self._config.value("order")
        return order

    @property
    def codecs(self) -> tuple[Any, ...]:
        """The codecs of the array's metadata, in chain order."""
        return tuple(self._metadata.codecs)

    @property
    def compressors(self) -> tuple[Any, ...]:
        """The bytes -> bytes codecs of the chain (zarr-python's ``compressors``)."""
        return tuple(self._chain.bb)

    @property
    def filters(self) -> tuple[Any, ...]:
        """The array -> array codecs of the chain (zarr-python's ``filters``)."""
        return tuple(self._chain.aa)

    @property
    def serializer(self) -> Any:
        """The array -> bytes codec of the chain (zarr-python's ``serializer``)."""
        return self._chain.ab

    @property
    def oindex(self) -> _OIndex:
        """Orthogonal indexing: ``a.oindex[[0, 2], 1:4]`` selects rows 0 and 2 of columns 1..3 (and assigns)."""
        return _OIndex(self)

    @property
    def vindex(self) -> _VIndex:
        """Vectorized (coordinate) indexing: ``a.vindex[[0, 2], [1, 3]]`` selects the points (0, 1)
        and (2, 3), ``a.vindex[mask]`` the elements of a boolean mask (and assigns)."""
        return _VIndex(self)

    @property
    def info(self) -> ArrayInfo:
        """A summary of the array (type, shape, chunking, codecs), printed as a table; nothing is
        read from the store."""
        return ArrayInfo(self, with_stored=False)

    def info_complete(self) -> ArrayInfo:
        """A summary of the array like :attr:`info`, plus what it takes in the store (lists the store).

        Returns
        -------
        ArrayInfo
            The summary, with the stored chunk count and bytes.
        """
        return ArrayInfo(self, with_stored=True)

    def __len__(self) -> int:
        """The size of the first dimension.

        Returns
        -------
        int
            ``shape[0]``.

        Raises
        ------
        TypeError
            For a 0-dimensional array.
        """
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<zarrbolt.Array {self._store!r}/{self._path} shape={self.shape} dtype={self._dtype}>"

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """The whole array read into memory (``numpy.asarray(a)``).

        Parameters
        ----------
        dtype
            The data type of the result (None: the array's).
        copy
            numpy's ``copy`` argument (the result is always a new array).

        Returns
        -------
        numpy.ndarray
            The array's data.
        """
        a: np.ndarray = self[...]
        return a if dtype is None else a.astype(dtype, copy=False)

    # ------------------------------------------------------------------ chunk I/O helpers
    @property
    def _plan(self) -> Any:
        """The fused decode plan the reads use (None: per-codec); settable, for tests."""
        return self._io.plan

    @_plan.setter
    def _plan(self, plan: Any) -> None:
        self._io.plan = plan

    @property
    def _eplans(self) -> dict[Any, Any]:
        """The encode plans compiled so far (see ArrayIO)."""
        return self._io.eplans

    def _chunk_key(self, coords: tuple[int, ...]) -> str:
        return self._io.chunk_key(coords)

    def _decode_chunk(self, data: Any, key: str) -> np.ndarray:
        return self._io.decode_chunk(data, key)

    def _iter_stored_chunk_keys(self) -> Iterator[str]:
        prefix = self._key_prefix
        for key in self._store.list_prefix(prefix):
            rel = key[len(prefix):]
            if rel == ZARR_JSON:
                continue
            try:
                coords = self._metadata.chunk_key_encoding.decode_chunk_key(rel)
            except (MetadataError, ValueError):
                continue
            if len(coords) == self.ndim:
                yield key

    # ------------------------------------------------------------------ reading
    def _read(self, make_indexer: Any, into: np.ndarray | None = None) -> np.ndarray:
        if self._unpickled:
            self._check_unpickled()
        missing: set[Any] | None = None if self._config.value("read_missing_chunks") else set()
        out = read_pipeline.read(self._io, make_indexer, missing=missing, out=into)
        if missing:
            first = sorted(missing)[0]
            raise ChunkNotFoundError(
                f"array {self.name}: {len(missing)} chunk(s) of the selection are not stored (first: {first!r}) "
                "and read_missing_chunks is off"
            )
        if into is None and out.ndim > 1 and self._config.value("order") == "F":
            out = np.asfortranarray(out)
        return out

    def _finish(self, out: np.ndarray) -> Any:
        if out.ndim == 0:
            return out[()]
        return out

    def get_basic_selection(self, selection: Any = Ellipsis, *, out: Any = None, fields: Any = None) -> Any:
        """Read the part of the array a basic (numpy-style int/slice) selection picks.

        Parameters
        ----------
        selection
            An int, a slice (any step) or ``...`` per dimension, or a tuple of them; ``None`` adds an axis.
        out : numpy.ndarray, optional
            An array of the selection's shape to read into (None: a new one); one of the array's
            data type is filled without a copy (any strides).
        fields
            zarr-python's structured-field selection; ignored.

        Returns
        -------
        numpy.ndarray or scalar
            The selected data (a numpy scalar for a selection of one element).
        """
        if isinstance(out, np.ndarray) and out.dtype == self._dtype and out.ndim and out.flags.writeable:
            # read straight into ``out`` (of the selection's shape, any strides): no copy
            return self._read(lambda cs: basic_indexer(selection, self.shape, cs), into=out)
        res = self._finish(self._read(lambda cs: basic_indexer(selection, self.shape, cs)))
        return _into(res, out)

    def get_orthogonal_selection(self, selection: Any, *, out: Any = None, fields: Any = None) -> Any:
        """Read an orthogonal selection: each dimension selected independently (zarr-python's ``oindex``).

        Parameters
        ----------
        selection
            Per dimension: an int, a slice, a 1-D integer array or a 1-D boolean mask of that dimension.
        out : numpy.ndarray, optional
            An array of the selection's shape to read into (None: a new one).
        fields
            zarr-python's structured-field selection; ignored.

        Returns
        -------
        numpy.ndarray or scalar
            The selected data: the outer product of the per-dimension selections.
        """
        res = self._finish(self._read(lambda cs: orthogonal_indexer(selection, self.shape, cs)))
        return _into(res, out)

    def get_coordinate_selection(self, selection: Any, *, out: Any = None, fields: Any = None) -> Any:
        """Read points by their coordinates, or the elements of a boolean mask (zarr-python's ``vindex``).

        Parameters
        ----------
        selection
            Integer arrays, one per dimension, broadcast together (the points' coordinates), or one
            boolean array of the array's shape (the mask: also ``get_mask_selection``).
        out : numpy.ndarray, optional
            An array of the selection's shape to read into (None: a new one).
        fields
            zarr-python's structured-field selection; ignored.

        Returns
        -------
        numpy.ndarray
            The selected elements, shaped as the broadcast coordinate arrays (1-D for a mask).
        """
        res = self._finish(self._read(lambda cs: vectorized_indexer(selection, self.shape, cs)))
        return _into(res, out)

    get_mask_selection = get_coordinate_selection

    def get_block_selection(self, selection: Any, *, out: Any = None, fields: Any = None) -> Any:
        """The blocks (chunks of the chunk grid: shards of a sharded array) at ``selection``
        (block numbers or step-1 slices of them, per dimension).

        Parameters
        ----------
        selection
            Block numbers or step-1 slices of them, per dimension.
        out : numpy.ndarray, optional
            An array of the selection's shape to read into (None: a new one).
        fields
            zarr-python's structured-field selection; ignored.

        Returns
        -------
        numpy.ndarray
            The data of the selected blocks.
        """
        return self.get_basic_selection(block_region(selection, self.shape, self._chunk_shape), out=out)

    @property
    def blocks(self) -> BlockIndex:
        """``a.blocks[i, j]`` reads (and assigns) whole blocks by their grid position."""
        return BlockIndex(self)

    def __getitem__(self, selection: Any) -> Any:
        """numpy-style: ints and slices; a boolean mask of the array's shape or integer arrays
        for every dimension (as ``vindex``); 1-D integer or boolean arrays per dimension (as
        ``oindex``).

        Parameters
        ----------
        selection
            What to read (see above).

        Returns
        -------
        numpy.ndarray or scalar
            The selected data.
        """
        kind = selection_kind(selection, self.ndim)
        if kind == "vindex":
            return self.get_coordinate_selection(selection)
        if kind == "oindex":
            return self.get_orthogonal_selection(selection)
        return self.get_basic_selection(selection)

    # ------------------------------------------------------------------ writing
    def _write(self, indexer: Any, value: Any, on_chunk: Any = None) -> None:
        self._check_writable()
        if self._unpickled:
            self._check_unpickled()
        io = self._io
        # a write materializes whole stored chunks (shards): one that could never be allocated is
        # refused before anything is done, and a failed allocation is zarrbolt's typed error
        nbytes = math.prod(io.chunk_shape) * io.dtype.itemsize

        def too_large(why: str) -> ChunkMemoryError:
            what = "shard" if io.sharding is not None else "chunk"
            return ChunkMemoryError(f"{self._path or '/'}: a stored {what} of shape {tuple(io.chunk_shape)} and data "
                                    f"type {io.dtype} ({nbytes} bytes) does not fit in memory: {why}")

        if nbytes > sys.maxsize:
            raise too_large("larger than any address space")
        try:
            write_pipeline.write(io, indexer, value, write_empty=self._config.value("write_empty_chunks"),
                                 on_unit=on_chunk)
        except MemoryError as e:
            if isinstance(e, ZarrboltError):
                raise
            raise too_large(str(e)) from e

    def set_basic_selection(self, selection: Any, value: Any, *, fields: Any = None,
                            on_chunk: Callable[[str, bool], None] | None = None) -> None:
        """Write ``value`` into the part of the array a basic (int/slice) selection picks.

        Parameters
        ----------
        selection
            An int, a slice or ``...`` per dimension, or a tuple of them.
        value
            A scalar, or an array broadcastable to the selection's shape.
        fields
            zarr-python's; ignored.
        on_chunk
            Called as each stored object the write touches (a chunk, or a shard of a sharded
            array) is done, with its store key and whether it was stored (False: it holds only
            the fill value and was left out), from the threads that write: what progress
            reports of large writes use (``zarrbolt cp``).
        """
        self._write(basic_indexer(selection, self.shape, self._io.grid), value, on_chunk)

    def set_orthogonal_selection(self, selection: Any, value: Any, *, fields: Any = None) -> None:
        """Write ``value`` into an orthogonal selection (each dimension selected independently).

        Parameters
        ----------
        selection
            Per dimension: an int, a slice, a 1-D integer array or a 1-D boolean mask.
        value
            A scalar, or an array broadcastable to the selection's shape.
        fields
            zarr-python's; ignored.
        """
        self._write(orthogonal_indexer(selection, self.shape, self._io.grid), value)

    def set_coordinate_selection(self, selection: Any, value: Any, *, fields: Any = None) -> None:
        """Write ``value`` at points given by their coordinates, or at the elements of a boolean mask.

        Parameters
        ----------
        selection
            Integer arrays, one per dimension (the points' coordinates), or a boolean mask of the
            array's shape (also ``set_mask_selection``).
        value
            A scalar, or an array broadcastable to the selection's shape.
        fields
            zarr-python's; ignored.
        """
        self._write(vectorized_indexer(selection, self.shape, self._io.grid), value)

    set_mask_selection = set_coordinate_selection

    def set_block_selection(self, selection: Any, value: Any, *, fields: Any = None) -> None:
        """Write ``value`` into whole blocks (chunks of the chunk grid: shards of a sharded array).

        Parameters
        ----------
        selection
            Block numbers or step-1 slices of them, per dimension.
        value
            A scalar, or an array broadcastable to the selection's shape.
        fields
            zarr-python's; ignored.
        """
        self.set_basic_selection(block_region(selection, self.shape, self._chunk_shape), value)

    def __setitem__(self, selection: Any, value: Any) -> None:
        """numpy-style assignment: basic, orthogonal or coordinate/mask selections, as :meth:`__getitem__` reads them.

        Parameters
        ----------
        selection
            Where to write: as for :meth:`__getitem__`.
        value
            The data to write: a scalar, or an array broadcastable to the selection's shape.

        Raises
        ------
        ReadOnlyError
            When the array is read-only.
        """
        kind = selection_kind(selection, self.ndim)
        if kind == "vindex":
            self.set_coordinate_selection(selection, value)
        elif kind == "oindex":
            self.set_orthogonal_selection(selection, value)
        else:
            self.set_basic_selection(selection, value)

    def nbytes_stored(self) -> int:
        """Bytes this array takes in the store: its metadata document and every stored chunk
        (zarr-python's ``nbytes_stored``: the sizes of all keys under the array's prefix).

        Returns
        -------
        int
            The number of bytes.
        """
        return sum(self._store.getsize(k) for k in self._store.list_prefix(self._key_prefix))

    # ------------------------------------------------------------------ resizing
    def resize(self, *new_shape: Any) -> None:
        """Change the shape.  Chunks wholly outside the new shape are deleted, and the part of a
        boundary chunk that falls outside is reset to the fill value, so growing the array again
        shows the fill value there (never stale data).

        Parameters
        ----------
        *new_shape
            The new shape: one int per dimension, or one tuple of them.

        Raises
        ------
        ReadOnlyError
            When the array is read-only.
        MetadataError
            When the new shape does not have the array's number of dimensions or has a negative size.
        """
        self._check_writable()
        if self._unpickled:
            self._check_unpickled()
        if len(new_shape) == 1 and isinstance(new_shape[0], (tuple, list)):
            new_shape = tuple(new_shape[0])
        try:
            new_shape = tuple(int(operator_index(s)) for s in new_shape)
        except TypeError:
            raise MetadataError(f"resize: shape must be a sequence of integers, got {new_shape!r}") from None
        if len(new_shape) != self.ndim:
            raise MetadataError(f"resize: new shape {new_shape} must have {self.ndim} dimensions")
        if any(s < 0 for s in new_shape):
            raise MetadataError(f"resize: negative size in {new_shape}")
        new_meta = self._metadata.resized(new_shape)
        self._trim_to(new_shape)
        self._save_metadata(new_meta)

    def _trim_to(self, new_shape: tuple[int, ...]) -> None:
        """Delete the stored chunks wholly outside ``new_shape``, and reset to the fill value the
        part of each boundary chunk that falls outside it: a write of the fill value there through
        the write path (its read-modify-write of the chunk, or of the touched inner chunks of a
        shard, under the key's lock), storing no chunk that was not stored."""
        old_shape = self.shape
        if all(n >= o for n, o in zip(new_shape, old_shape)):
            return
        grid = self._metadata.chunk_grid
        to_delete = []
        for key in list(self._iter_stored_chunk_keys()):
            coords = self._metadata.chunk_key_encoding.decode_chunk_key(key[len(self._key_prefix):])
            if any(r.start >= n for r, n in zip(grid.chunk_region(coords, old_shape), new_shape)):
                to_delete.append(key)
        self._store.erase_values(to_delete)
        # the extent of the chunks that stay: up to the end of the chunk holding the new edge
        kept = tuple(min(o, c) for o, c in zip(old_shape, grid.covering_shape(new_shape)))
        for d in range(self.ndim):
            if new_shape[d] < kept[d]:
                sel = tuple(slice(new_shape[i], kept[i]) if i == d else slice(0, kept[i]) for i in range(self.ndim))
                write_pipeline.write(self._io, basic_indexer(sel, old_shape, grid), self._fill,
                                     write_empty=False)

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Grow along ``axis`` and write ``data`` at the end; returns the new shape.

        Parameters
        ----------
        data
            The data to append: the array's shape except along ``axis``.
        axis
            The dimension to grow.

        Returns
        -------
        tuple of int
            The new shape.

        Raises
        ------
        MetadataError
            When ``data``'s shape does not fit the array outside ``axis``, or ``axis`` is out of range.
        """
        data = np.asanyarray(data)
        if data.ndim != self.ndim:
            raise MetadataError(f"append: data has {data.ndim} dimensions, array has {self.ndim}")
        axis = axis + self.ndim if axis < 0 else axis
        if not 0 <= axis < self.ndim:
            raise MetadataError(f"append: axis {axis} out of range")
        for d in range(self.ndim):
            if d != axis and data.shape[d] != self.shape[d]:
                raise MetadataError(f"append: shape {data.shape} does not match {self.shape} outside axis {axis}")
        old = self.shape[axis]
        new_shape = list(self.shape)
        new_shape[axis] += data.shape[axis]
        self.resize(tuple(new_shape))
        sel = [slice(None)] * self.ndim
        sel[axis] = slice(old, new_shape[axis])
        self[tuple(sel)] = data
        return self.shape


def _layout_json(meta: ArrayMetadata) -> dict[str, Any]:
    """The metadata document without the attributes: what decides where and how chunks are stored."""
    doc = meta.to_json()
    doc.pop("attributes", None)
    return doc


def _store_token(store: Store) -> Any:
    return store.token() if isinstance(store, Store) else (type(store).__qualname__, id(store))


def operator_index(x: Any) -> int:
    return operator.index(x)


def _into(res: Any, out: Any) -> Any:
    if out is None:
        return res
    out[...] = res
    return out


class ArrayInfo:
    """Human-readable summary of an array (``Array.info``)."""

    def __init__(self, array: Array, *, with_stored: bool):
        self._a = array
        self._with_stored = with_stored

    def __repr__(self) -> str:
        a = self._a
        rows = [
            ("Type", "Array"),
            ("Zarr format", str(a.metadata.zarr_format)),
            ("Data type", a.metadata.data_type.to_json()),
            ("Fill value", a.metadata.data_type.fill_value_to_json(a.fill_value)),
            ("Shape", a.shape),
            *([("Shard shape", a.shards)] if a.shards is not None else []),
            ("Chunk shape", a.chunks),
            ("Order", a.order),
            ("Read-only", a.read_only),
            ("Store type", type(a.store).__name__),
            ("Filters", a.filters),
            ("Serializer", a.serializer),
            ("Compressors", a.compressors),
            ("No. bytes", f"{a.nbytes} ({_human(a.nbytes)})"),
        ]
        stored = a.nbytes_stored()  # (a listing of the array's prefix, made when the summary is shown)
        rows.append(("No. bytes stored", f"{stored} ({_human(stored)})"))
        rows.append(("Storage ratio", f"{a.nbytes / stored:.1f}" if stored else "-"))
        if self._with_stored:
            rows.append(("Chunks Initialized", f"{a.nchunks_initialized}/{a.nchunks}"))
        w = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{w}} : {v}" for k, v in rows)

    __str__ = __repr__


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.1f}{unit}" if unit != "B" else f"{n}B"
        n /= 1024
    return str(n)


__all__ = ["Array", "ArrayInfo", "Attributes", "ChunkSpec"]  # Attributes: re-exported from node
