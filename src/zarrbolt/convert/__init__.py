"""Copying and converting arrays and hierarchies: :func:`copy` (``zarrbolt cp``) and
:func:`copy_array`.

Any source zarrbolt opens (Zarr v2 or v3, local, ``s3://``, ``https://``, ``memory://``, ...)
is copied to any writable destination, optionally re-chunked (``chunks``), sharded or
unsharded (``shards``), re-compressed (``codecs`` / ``compressor``), converted to another Zarr
format (``zarr_format``) or data type (``dtype``).  The copy streams in blocks of whole
destination shards with a stated memory bound (:mod:`zarrbolt.convert.copier`), carries the
attributes and dimension names over, writes each shard atomically and the metadata last, and
can finish an interrupted copy (``resume=True``).

:func:`zarrbolt.migrate` (:mod:`zarrbolt.convert.v2_to_v3`) converts a Zarr v2 hierarchy to Zarr
v3 in place or into another store, metadata only: the chunks keep their bytes."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import CopyError, DestinationExistsError, MetadataError
from .copier import DEFAULT_MAX_MEMORY, copy_one, timed, with_threads
from .layout import COMPRESSOR_NAMES, LayoutOptions, parse_codec_json, parse_compressor, sharding_asked
from .report import CopyReport, Progress

__all__ = ["COMPRESSOR_NAMES", "DEFAULT_MAX_MEMORY", "CopyReport", "Progress", "copy", "copy_array"]


def _options(chunks: Any, shards: Any, codecs: Any, compressor: Any, zarr_format: Any, dtype: Any) -> LayoutOptions:
    if codecs is not None and compressor is not None:
        raise MetadataError("give codecs or compressor, not both")
    if isinstance(codecs, str):
        codecs = parse_codec_json(codecs)
    elif isinstance(codecs, dict):
        codecs = [codecs]
    if compressor is not None:
        codecs = parse_compressor(compressor)
    return LayoutOptions(chunks=chunks, shards=shards, codecs=codecs, zarr_format=zarr_format, dtype=dtype)


def _open_source(src: Any, storage_options: Any) -> Any:
    from ..array import Array
    from ..group import Group

    if isinstance(src, (Array, Group)):
        return src
    from ..api.opening import open as zb_open

    return zb_open(src, mode="r", storage_options=storage_options)


def _destination(dst: Any, storage_options: Any) -> tuple[Any, str]:
    from ..node import normalize_node_path
    from ..storage import make_store

    store, base = make_store(dst, mode="a", storage_options=storage_options)
    if store.read_only:
        from ..errors import ReadOnlyError

        raise ReadOnlyError(f"the destination {dst!r} is read-only (http(s):// stores cannot be written)")
    return store, normalize_node_path(base)


def _location(x: Any) -> str | None:
    """A comparable name of where a path or URL points (None for other store objects)."""
    import os

    from ..storage.urls import url_scheme

    if isinstance(x, os.PathLike):
        x = os.fspath(x)
    if not isinstance(x, str):
        return None
    scheme = url_scheme(x)
    if scheme is None or scheme == "file":
        path = x[len("file://"):] if scheme == "file" else x
        return os.path.realpath(path).rstrip(os.sep) + os.sep
    return x.rstrip("/") + "/"


def _check_not_overlapping(src: Any, dst: Any) -> None:
    """Refuse a destination that is the source, inside it, or holds it (an overwrite would
    erase the data being copied)."""
    a, b = _location(src), _location(dst)
    if a is not None and b is not None and (a.startswith(b) or b.startswith(a)):
        raise DestinationExistsError(f"the destination {dst!r} is the source {src!r}, inside it or holds it: "
                                     "copy to another place")


def _src_error(path: str, exc: BaseException) -> CopyError:
    err = CopyError(f"cannot read source node /{path}: {type(exc).__name__}: {exc}")
    err.node_path = path  # type: ignore[attr-defined]
    return err


def copy_array(src: Any, dst: Any, *, chunks: Any = None, shards: Any = "keep", codecs: Any = None,
               compressor: str | None = None, zarr_format: int | None = None, dtype: Any = None,
               threads: int | None = None, max_memory: int | None = None, resume: bool = False,
               overwrite: bool = False, progress: Progress | None = None, storage_options: Any = None,
               dst_storage_options: Any = None) -> CopyReport:
    """Copy the array ``src`` to ``dst``, converting its layout on the way.

    The copy streams in blocks of whole destination shards, each written atomically; the
    destination's metadata is written last, so an interrupted copy is never opened as complete.

    Parameters
    ----------
    src : Array, str
        The source array: an open array, a path or a store URL.
    dst : str, Store
        The destination: a path, a store URL or a store.
    chunks : tuple of int, optional
        The destination's (inner) chunk shape; default the source's.
    shards : tuple of int, "keep", "none" or None
        The destination's shard shape; ``None`` / ``"none"`` for unsharded, ``"keep"`` (default)
        for the source's.
    codecs : list or str, optional
        Bytes-to-bytes codecs (v3 JSON, numcodecs dicts or a JSON string) replacing the source's
        compressors.
    compressor : str, optional
        A shorthand for ``codecs``: ``"zstd:3"``, ``"blosc-lz4"``, ``"none"`` ...
    zarr_format : {2, 3}, optional
        The destination's format; default the source's (3 when shards are asked for).
    dtype : str or numpy.dtype, optional
        A new data type; every value must fit in it.
    threads : int, optional
        Worker threads for the copy (default: ``zarrbolt.config``'s).
    max_memory : int, optional
        The memory budget of the blocks in bytes (default 1 GiB).
    resume : bool
        Finish an interrupted copy: destination shards whose index validates are kept.
    overwrite : bool
        Replace an existing destination (else it is refused).
    progress : Progress, optional
        Receives progress updates (the CLI's progress bar).
    storage_options : dict, optional
        Options for the source URL's store.
    dst_storage_options : dict, optional
        Options for the destination URL's store.

    Returns
    -------
    CopyReport
        What was copied, skipped and resumed, and the memory bound used.

    Raises
    ------
    DestinationExistsError
        The destination exists and neither ``overwrite`` nor ``resume`` was given.
    CopyError
        The source cannot be read.
    DiskFullError
        The destination's disk or quota is full (nothing half-written is left as complete).
    """
    opts = _options(chunks, shards, codecs, compressor, zarr_format, dtype)
    _check_not_overlapping(src, dst)
    source = _open_source(src, storage_options)
    from ..array import Array

    if not isinstance(source, Array):
        raise MetadataError(f"copy_array: {src!r} is a group; use zarrbolt.copy for a hierarchy")
    store, path = _destination(dst, dst_storage_options)
    report = CopyReport(source=str(src), destination=str(dst))
    with with_threads(threads):
        return timed(copy_one, source, store, path, opts, max_memory=max_memory, overwrite=overwrite,
                     resume=resume, progress=progress, report=report)


def copy(src: Any, dst: Any, *, chunks: Any = None, shards: Any = "keep", codecs: Any = None,
         compressor: str | None = None, zarr_format: int | None = None, dtype: Any = None,
         threads: int | None = None, max_memory: int | None = None, resume: bool = False,
         overwrite: bool = False, skip_errors: bool = False, progress: Progress | None = None,
         storage_options: Any = None, dst_storage_options: Any = None) -> CopyReport:
    """Copy an array or a whole hierarchy from ``src`` to ``dst``.

    The options apply to every array (see :func:`copy_array`); groups keep their attributes.
    A hierarchy is written in one Zarr format, its groups and arrays alike: ``zarr_format``, else
    3 when shards are asked for or any node of the source is Zarr v3, else 2 (a Zarr v2
    hierarchy copied with ``shards`` becomes a Zarr v3 one, groups and attributes included).

    Parameters
    ----------
    src : Array, str
        The source array: an open array, a path or a store URL.
    dst : str, Store
        The destination: a path, a store URL or a store.
    chunks : tuple of int, optional
        The destination's (inner) chunk shape; default the source's.
    shards : tuple of int, "keep", "none" or None
        The destination's shard shape; ``None`` / ``"none"`` for unsharded, ``"keep"`` (default)
        for the source's.
    codecs : list or str, optional
        Bytes-to-bytes codecs (v3 JSON, numcodecs dicts or a JSON string) replacing the source's
        compressors.
    compressor : str, optional
        A shorthand for ``codecs``: ``"zstd:3"``, ``"blosc-lz4"``, ``"none"`` ...
    zarr_format : {2, 3}, optional
        The destination's format; default the source's (3 when shards are asked for).
    dtype : str or numpy.dtype, optional
        A new data type; every value must fit in it.
    threads : int, optional
        Worker threads for the copy (default: ``zarrbolt.config``'s).
    max_memory : int, optional
        The memory budget of the blocks in bytes (default 1 GiB).
    resume : bool
        Finish an interrupted copy: destination shards whose index validates are kept.
    overwrite : bool
        Replace an existing destination (else it is refused).
    skip_errors : bool
        Report source nodes that cannot be opened or read in ``CopyReport.skipped`` and go on,
        instead of stopping with :class:`~zarrbolt.errors.CopyError`.
    progress : Progress, optional
        Receives progress updates (the CLI's progress bar).
    storage_options : dict, optional
        Options for the source URL's store.
    dst_storage_options : dict, optional
        Options for the destination URL's store.

    Returns
    -------
    CopyReport
        What was copied, skipped and resumed, and the memory bound used.

    Raises
    ------
    DestinationExistsError
        The destination exists and neither ``overwrite`` nor ``resume`` was given.
    CopyError
        A source node cannot be opened or read (without ``skip_errors``).
    DiskFullError
        The destination's disk or quota is full.
    """
    from ..array import Array

    opts = _options(chunks, shards, codecs, compressor, zarr_format, dtype)
    _check_not_overlapping(src, dst)
    source = _open_source(src, storage_options)
    store, path = _destination(dst, dst_storage_options)
    report = CopyReport(source=str(src), destination=str(dst))
    kw = {"max_memory": max_memory, "resume": resume, "progress": progress}
    with with_threads(threads):
        if isinstance(source, Array):
            return timed(copy_one, source, store, path, opts, overwrite=overwrite, **kw, report=report)
        return timed(_copy_group, source, store, path, opts, overwrite=overwrite, skip_errors=skip_errors,
                     **kw, report=report)


def hierarchy_format(group: Any, members: list[tuple[str, Any]], opts: LayoutOptions) -> int:
    """The one Zarr format of a copied hierarchy without ``zarr_format``: 3 when shards are asked
    for (only v3 has them) or any node of the source is v3, else 2."""
    if sharding_asked(opts):
        return 3
    nodes = [group, *(node for _rel, node in members)]
    formats = {getattr(getattr(n, "metadata", None), "zarr_format", None) for n in nodes}
    return 3 if 3 in formats else 2


def _copy_group(group: Any, store: Any, path: str, opts: LayoutOptions, *, overwrite: bool, skip_errors: bool,
                report: CopyReport, **kw: Any) -> CopyReport:
    from ..array import Array
    from ..group import Group
    from ..node import (
        erase_node,
        join_path,
        load_metadata,
        new_group_metadata,
        save_metadata,
    )

    existing = load_metadata(store, path)
    prefix = f"{path}/" if path else ""
    if existing is not None or next(iter(store.list_prefix(prefix)), None) is not None:
        if overwrite:
            erase_node(store, path)
        elif not kw.get("resume"):
            raise DestinationExistsError(f"the destination /{path} already holds data: use --overwrite to replace "
                                         "it or --resume to finish an interrupted copy")
    members = list(group.members(max_depth=None))
    fmt = opts.zarr_format or hierarchy_format(group, members, opts)
    opts = dataclasses.replace(opts, zarr_format=fmt)   # one format for the groups and the arrays
    groups = [("", group)]
    for rel, node in members:
        if isinstance(node, Group):
            groups.append((rel, node))
            continue
        target = join_path(path, rel)
        try:
            if not isinstance(node, Array):  # an UnsupportedNode: opening it raises its typed error
                try:
                    node = node.open()
                except (MetadataError, OSError) as exc:
                    raise _src_error(rel, exc) from exc
            copy_one(node, store, target, opts, report=report, overwrite=False, **kw)
        except CopyError as exc:
            if not skip_errors:
                raise
            report.skipped.append((rel, str(exc)))
            erase_node(store, target)  # the shards of a partly copied array (its metadata was never written)
    for rel, g in groups:  # the groups last: the hierarchy appears when its arrays are complete
        target = join_path(path, rel) if rel else path
        save_metadata(store, target, new_group_metadata(fmt, dict(g.attrs)))
        report.groups.append(rel)
    return report
