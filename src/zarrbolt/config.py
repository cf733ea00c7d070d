"""Runtime configuration.

``zarrbolt.config.get("threads")`` / ``zarrbolt.config.set(threads=4)`` (also usable as a context
manager).  Environment variables override the defaults at import: ``ZARRBOLT_NUM_THREADS``,
``ZARRBOLT_WRITE_EMPTY_CHUNKS``, ``ZARRBOLT_FUSED_PIPELINE``, ``ZARRBOLT_OUTPUT_CACHE_BYTES``,
``ZARRBOLT_OUTPUT_CACHE_SECONDS``.

``order`` (``"C"``/``"F"``): the memory order of the arrays reads return; ``read_missing_chunks``
(default True): False makes a read of a chunk that is not stored raise ``ChunkNotFoundError``.
``shard_update`` (``"rewrite"``, default, or ``"append"``; ``ZARRBOLT_SHARD_UPDATE``): how a write
into part of an existing shard is stored (see docs/sharding.md).
An array's own ``config=`` (``create_array``/``open_array``) overrides these and
``write_empty_chunks`` for that array.

zarr-python's option names are accepted too and mean the zarrbolt option they correspond to:
``array.write_empty_chunks``, ``array.order``, ``array.read_missing_chunks``,
``threading.max_workers`` (``threads``; None: the machine's CPU count) and ``async.concurrency``
(``remote_concurrency``, the requests in flight of a remote store).  Unknown names raise
``UnknownConfigKeyError`` (a ``KeyError``).

``output_cache_bytes``: how much memory of large read results (16 MiB or more) that the program
has dropped zarrbolt may keep to serve the next large read, instead of handing it back to the
operating system (0: never; see ``zarrbolt.pipeline.outbuf`` and docs/memory.md).  Default
``"auto"``: none inside a dask.distributed worker, else 1 GiB or 1/16 of the machine's memory or
of the process's memory limit (cgroup, rlimit), whichever is least (``zarrbolt._memory``).
``output_cache_seconds``: how long such memory is kept (default 30).

Remote stores (``zarrbolt.storage.ObjectStore`` / ``FsspecStore``): ``remote_concurrency``
(requests in flight per store, default 32, ``ZARRBOLT_REMOTE_CONCURRENCY``),
``remote_bytes_in_flight`` (bytes being fetched at once per store, default 256 MiB,
``ZARRBOLT_REMOTE_BYTES_IN_FLIGHT``), ``remote_retries`` (retries of a request failing with a 5xx,
a connection reset or a timeout, default 3, ``ZARRBOLT_REMOTE_RETRIES``), ``remote_coalesce_gap``
(byte ranges of one object closer than this are fetched by one request, default 1 MiB,
``ZARRBOLT_REMOTE_COALESCE_GAP``), ``remote_index_cache`` (shard indexes kept in memory per
array, default 4096, ``ZARRBOLT_REMOTE_INDEX_CACHE``).  A store reads these when it is made.

Bounds on what untrusted metadata makes zarrbolt allocate (see ``docs/sharding.md``):
``shard_index_max_bytes`` (default 256 MiB, ``ZARRBOLT_SHARD_INDEX_MAX_BYTES``): the largest
shard index (16 bytes per inner chunk, plus 4 for its checksum) that a write creates, for a shard
that does not exist yet or a whole shard written; a larger one is a ``ChunkMemoryError`` before
any work.  Reads need no such limit: a stored shard's index is read only once the object proves
to be at least that large, and an absent shard allocates none.

Writers (see ``docs/reliability.md``): ``write_lock`` (default True, ``ZARRBOLT_WRITE_LOCK``):
partial updates of one chunk or shard are serialized (a ``LocalStore``: across the processes of
one host, by record locks in lock files outside the store, in ``ZARRBOLT_LOCK_DIR`` or the
temporary directory; other stores: across threads); False for pipelines with one writer
per chunk.  ``write_fsync`` (``"none"`` default, ``"file"``, ``"dir"``;
``ZARRBOLT_WRITE_FSYNC``): what a ``LocalStore`` made without ``fsync=`` flushes to disk before
a write returns.

Codecs: ``allow_unsafe_pickle`` (default False, ``ZARRBOLT_ALLOW_UNSAFE_PICKLE``; zarr-python's
``array.allow_unsafe_pickle_decode``): arrays whose filters or compressor include numcodecs'
``pickle`` codec (which runs code from the data when it decodes) are refused unless this is True
(numcodecs' own opt-in, ``NUMCODECS_ALLOW_UNSAFE_PICKLE_DECODE=1``, is needed as well).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from .errors import MetadataError, UnknownConfigKeyError

_N = TypeVar("_N", int, float)


def _env_number(name: str, default: _N, minimum: Any, parse: Callable[[str], _N], what: str) -> _N:
    """The environment variable ``name`` parsed by ``parse`` (``int`` or ``float``), at least
    ``minimum`` and finite; ``default`` when unset or empty."""
    v = os.environ.get(name)
    if v is None or v.strip() == "":
        return default
    try:
        x = parse(v)
    except ValueError:
        raise MetadataError(f"environment variable {name}={v!r} is not {what}") from None
    if not x >= minimum or x == float("inf"):
        raise MetadataError(f"environment variable {name}={v!r} must be a finite number >= {minimum}")
    return x


def _env_int(name: str, default: int, minimum: int = 1) -> int:
    return _env_number(name, default, minimum, int, "an integer")


def _env_float(name: str, default: float, minimum: float = 0.0) -> float:
    return _env_number(name, default, minimum, float, "a number")


def _env_cache_bytes(name: str) -> int | str:
    """``"auto"`` (the default: see zarrbolt._memory) or a number of bytes >= 0."""
    v = os.environ.get(name)
    if v is not None and v.strip().lower() == "auto":
        return "auto"
    return _env_int(name, "auto", minimum=0)  # type: ignore[arg-type]


def _env_bool(name: str, default: bool) -> bool:
    v = os.environ.get(name)
    if v is None or v.strip() == "":
        return default
    if v.strip().lower() in ("1", "true", "yes", "on"):
        return True
    if v.strip().lower() in ("0", "false", "no", "off"):
        return False
    raise MetadataError(f"environment variable {name}={v!r} is not a boolean")


def _env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    v = os.environ.get(name)
    if v is None or v.strip() == "":
        return default
    if v.strip() not in choices:
        raise MetadataError(f"environment variable {name}={v!r} is not one of {list(choices)}")
    return v.strip()


_DEFAULTS: dict[str, Any] = {
    "threads": _env_int("ZARRBOLT_NUM_THREADS", os.cpu_count() or 1),
    "write_empty_chunks": _env_bool("ZARRBOLT_WRITE_EMPTY_CHUNKS", False),
    # the memory order of the arrays reads return (zarr-python's ``array.order``)
    "order": "C",
    # False: reading a chunk that is not stored raises ChunkNotFoundError instead of giving the
    # fill value (zarr-python's ``array.read_missing_chunks``)
    "read_missing_chunks": True,
    # how a write into part of an existing shard stores it: "rewrite" (the whole shard, atomic)
    # or "append" (the touched inner chunks and a new index appended; see pipeline/shard/storing.py)
    "shard_update": _env_choice("ZARRBOLT_SHARD_UPDATE", "rewrite", ("rewrite", "append")),
    # decode and encode with the fused C pipeline where the codec chain allows it (off: the
    # per-codec path)
    "fused_pipeline": _env_bool("ZARRBOLT_FUSED_PIPELINE", True),
    # bytes of dropped large read results kept (briefly) for reuse by the next large read;
    # "auto": 0 in dask workers, else min(1 GiB, memory / 16, the process's limit / 16)
    "output_cache_bytes": _env_cache_bytes("ZARRBOLT_OUTPUT_CACHE_BYTES"),
    # ... and for how long (seconds): virtual machines that return freed memory to the host make
    # touching it again cost ~1.4 s per GiB, more than the read itself
    "output_cache_seconds": _env_float("ZARRBOLT_OUTPUT_CACHE_SECONDS", 30.0),
    # remote stores: requests and bytes in flight, retries, range coalescing, shard-index cache
    "remote_concurrency": _env_int("ZARRBOLT_REMOTE_CONCURRENCY", 32),
    "remote_bytes_in_flight": _env_int("ZARRBOLT_REMOTE_BYTES_IN_FLIGHT", 256 << 20),
    "remote_retries": _env_int("ZARRBOLT_REMOTE_RETRIES", 3, minimum=0),
    "remote_coalesce_gap": _env_int("ZARRBOLT_REMOTE_COALESCE_GAP", 1 << 20, minimum=0),
    "remote_index_cache": _env_int("ZARRBOLT_REMOTE_INDEX_CACHE", 4096, minimum=0),
    # the largest shard index a write creates (new shards, whole shards written): the index size
    # comes from metadata (16 bytes per inner chunk), so a larger one is refused before any work
    "shard_index_max_bytes": _env_int("ZARRBOLT_SHARD_INDEX_MAX_BYTES", 256 << 20),
    # partial updates of one chunk / shard serialized across threads and (LocalStore) processes
    "write_lock": _env_bool("ZARRBOLT_WRITE_LOCK", True),
    # LocalStore without fsync=: "none", "file" (fsync each file), "dir" (and its directory)
    "write_fsync": os.environ.get("ZARRBOLT_WRITE_FSYNC", "").strip().lower() or "none",
    # codecs that run code from the data (numcodecs' ``pickle``): refused unless this is True
    "allow_unsafe_pickle": _env_bool("ZARRBOLT_ALLOW_UNSAFE_PICKLE", False),
}
if _DEFAULTS["write_fsync"] not in ("none", "file", "dir"):
    raise MetadataError(f"environment variable ZARRBOLT_WRITE_FSYNC={_DEFAULTS['write_fsync']!r} is not "
                        "'none', 'file' or 'dir'")
_values = dict(_DEFAULTS)
_lock = threading.Lock()
_VALIDATORS: dict[str, Callable[[Any], bool]] = {
    "threads": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
    "write_empty_chunks": lambda v: isinstance(v, bool),
    "order": lambda v: v in ("C", "F"),
    "read_missing_chunks": lambda v: isinstance(v, bool),
    "shard_update": lambda v: v in ("rewrite", "append"),
    "fused_pipeline": lambda v: isinstance(v, bool),
    "output_cache_bytes": lambda v: v == "auto" or (isinstance(v, int) and not isinstance(v, bool) and v >= 0),
    "output_cache_seconds": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < float("inf"),
    "remote_concurrency": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
    "remote_bytes_in_flight": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
    "remote_retries": lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 100,
    "remote_coalesce_gap": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
    "remote_index_cache": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
    "shard_index_max_bytes": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
    "write_lock": lambda v: isinstance(v, bool),
    "write_fsync": lambda v: v in ("none", "file", "dir"),
    "allow_unsafe_pickle": lambda v: isinstance(v, bool),
}

# zarr-python's configuration keys, accepted by set() / override() / get() as the zarrbolt option
# they mean (and converted: threading.max_workers None is "as many as the machine has").
ZARR_KEYS: dict[str, str] = {
    "array.write_empty_chunks": "write_empty_chunks",
    "array.order": "order",
    "array.read_missing_chunks": "read_missing_chunks",
    "threading.max_workers": "threads",
    "async.concurrency": "remote_concurrency",
    "array.allow_unsafe_pickle_decode": "allow_unsafe_pickle",
}


def _translate(name: str, value: Any = None, *, with_value: bool = False) -> tuple[str, Any]:
    """(zarrbolt option, value) for an option name that may be zarr-python's."""
    target = ZARR_KEYS.get(name, name)
    if target not in _values:
        known = sorted(_values) + sorted(k for k, v in ZARR_KEYS.items() if v in _values)
        if name in ZARR_KEYS:
            raise UnknownConfigKeyError(
                f"zarr-python's config option {name!r} maps to zarrbolt's {target!r}, which this build does not have"
            )
        raise UnknownConfigKeyError(f"unknown zarrbolt config option {name!r}; options: {known}")
    if with_value and name == "threading.max_workers" and value is None:
        value = os.cpu_count() or 1
    return target, value


def _check_options(options: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in options.items():
        target, v = _translate(k, v, with_value=True)
        if not _VALIDATORS[target](v):
            raise MetadataError(f"invalid value {v!r} for zarrbolt config option {k!r}")
        out[target] = v
    return out


# Context-local overrides (see override()): a ContextVar, so each thread / asyncio task sees its
# own, and ``asyncio.to_thread`` carries the caller's into the worker thread.
_override: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("zarrbolt_config", default=None)


def get(name: str) -> Any:
    """The value of an option (zarrbolt's name or zarr-python's dotted one).

    Parameters
    ----------
    name
        The option's name: zarrbolt's (``"threads"``) or zarr-python's dotted one.

    Returns
    -------
    object
        Its value (a context's :func:`override` first, else the global value).

    Raises
    ------
    UnknownConfigKeyError
        When there is no such option.
    """
    if name in ZARR_KEYS:
        name = _translate(name)[0]
    o = _override.get()
    if o is not None and name in o:
        return o[name]
    try:
        return _values[name]
    except KeyError:
        raise UnknownConfigKeyError(f"unknown zarrbolt config option {name!r}; options: {sorted(_values)}") from None


class _Restore:
    def __init__(self, old: dict[str, Any]):
        self._old = old

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        with _lock:
            _values.update(self._old)
        _on_change()


def set(mapping: dict[str, Any] | None = None, /, **options: Any) -> _Restore:  # noqa: A001
    """Set options (keywords or a dict, as donfig's ``config.set``); the return value restores
    the old values when used as a context manager.

    Parameters
    ----------
    mapping
        Options as a dict (positional only).
    **options
        Options as keywords (zarrbolt's names).

    Returns
    -------
    context manager
        Restores the previous values on exit (the options stay set without ``with``).

    Raises
    ------
    UnknownConfigKeyError
        For an unknown option.
    MetadataError
        For an invalid value.
    """
    if mapping is not None:
        options = {**dict(mapping), **options}
    options = _check_options(options)
    with _lock:
        old = {k: _values[k] for k in options}
        _values.update(options)
    _on_change()
    return _Restore(old)


@contextlib.contextmanager
def override(**options: Any) -> Iterator[None]:
    """Options for the current context only (this thread or asyncio task, and what it starts
    with ``asyncio.to_thread``); the global values (:func:`set`) stay as they are::

        with zarrbolt.config.override(threads=4):
            ...

    Used by zarr-python's codec pipeline to apply zarr's per-call settings.

    Parameters
    ----------
    **options
        The options (zarrbolt's names).

    Yields
    ------
    None

    Raises
    ------
    UnknownConfigKeyError
        For an unknown option.
    """
    options = _check_options(options)
    token = _override.set({**(_override.get() or {}), **options})
    try:
        yield
    finally:
        _override.reset(token)


def reset() -> None:
    """Restore every option to its default (as at import, with the ``ZARRBOLT_*`` environment variables read then)."""
    with _lock:
        _values.clear()
        _values.update(_DEFAULTS)
    _on_change()


_listeners: list[Any] = []


def _on_change() -> None:
    for f in _listeners:
        f()

