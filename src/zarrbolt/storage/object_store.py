"""``ObjectStore``: a :class:`~zarrbolt.storage.Store` on `obstore`_ (Rust ``object_store``):
Amazon S3 and S3-compatible services, Google Cloud Storage, Azure Blob Storage, HTTP(S) and
local files through one client.

.. _obstore: https://developmentseed.org/obstore/

obstore is an optional dependency (``pip install zarrbolt[remote]``); it is imported when a
store is made, never by ``import zarrbolt``.

What each operation costs
    ``get`` with a byte range is one ranged GET (a suffix range is one ``Range: bytes=-n``
    request, never a HEAD first); ``getsize`` and ``exists`` are one HEAD, never a download;
    ``get_ranges_into`` and the async source's ``aget_ranges`` coalesce ranges closer than
    config ``remote_coalesce_gap`` into one request each and fetch those concurrently, within
    the source's bounds (see :mod:`zarrbolt.storage._async`); ``set`` is one PUT (obstore uses a
    multipart upload above its chunk size); ``list_dir`` is a delimited LIST.  Reading a range
    that starts past the end of an object, or a range of an empty object, costs one more HEAD
    (to tell "empty" from "absent").

Conditional writes
    :meth:`ObjectStore.get_versioned` returns the object's ETag; :meth:`ObjectStore.set_if_version`
    writes only if the ETag is unchanged (``If-Match``) or, with ``None``, only if the object is
    absent (``If-None-Match: *``), else :class:`~zarrbolt.errors.ConflictError`.  S3 (and
    S3-compatible services that implement conditional PUT, moto included), GCS, Azure and
    obstore's MemoryStore support both (``supports_conditional_writes``); obstore's LocalStore
    cannot update on an ETag (``supports_conditional_writes = False``: ``get_versioned`` gives no
    version and ``set_if_version`` is a plain write, as the store contract says).

Errors
    A missing object reads as None; a missing bucket, 401/403, 5xx after the retries, resets,
    timeouts and truncated bodies raise :mod:`zarrbolt.errors` classes naming the key (see
    :mod:`zarrbolt.storage._remote_errors`).  Retries: stores zarrbolt makes from URLs switch
    obstore's own retries off and retry in zarrbolt (config ``remote_retries``, counted in
    ``async_source().stats``); a store you build yourself keeps its own ``retry_config`` and
    zarrbolt adds none on top.  HTTP(S) stores are read-only: writes raise
    :class:`~zarrbolt.errors.ReadOnlyError`.  With obstore's HEAD a missing bucket cannot be
    told from a missing key, so ``exists`` / ``getsize`` on a missing bucket say "absent";
    every GET, PUT and LIST names the missing bucket.

Pickling
    An ObjectStore pickles with its obstore store, which pickles its configuration
    (bucket, prefix, credentials given as options, client and retry options), so dask workers
    rebuild the same client.  A store over obstore's MemoryStore pickles as a copy of its
    contents (as :class:`~zarrbolt.storage.MemoryStore` does).
"""

from __future__ import annotations

import itertools
import os
from typing import Any

from ..errors import ReadOnlyError, StoreError
from ._async import AsyncSourceBase
from ._base import as_byte_view, check_key
from ._remote import RemoteStore

_INSTALL = "ObjectStore needs obstore: pip install 'zarrbolt[remote]' (or pip install obstore)"
_CONDITIONAL = ("S3Store", "GCSStore", "AzureStore", "MemoryStore")


def import_obstore() -> Any:
    """The ``obstore`` module, or an ImportError saying how to install it."""
    try:
        import obstore
    except ImportError as exc:
        raise ImportError(_INSTALL) from exc
    return obstore


_used_in_pid: int | None = None


def _obs() -> Any:
    """obstore, for a request.  obstore's I/O runtime (tokio) does not survive ``fork``: in a
    child forked after the parent used obstore every request would hang forever, so it raises
    :class:`~zarrbolt.errors.StoreError` instead (use the "spawn" or "forkserver" start
    method, or pass the store pickled, as dask does)."""
    global _used_in_pid
    obs = import_obstore()
    pid = os.getpid()
    if _used_in_pid is None:
        _used_in_pid = pid
    elif _used_in_pid != pid:
        raise StoreError("obstore was used before this process was forked, and its I/O runtime does not "
                         "survive fork (requests would hang): start worker processes with the 'spawn' or "
                         "'forkserver' method, or make the store in the child")
    return obs


def is_obstore_store(obj: Any) -> bool:
    """Whether ``obj`` is one of obstore's store classes (without importing obstore)."""
    return (type(obj).__module__ or "").startswith("obstore") and type(obj).__name__.endswith("Store")


def describe_obstore(store: Any) -> str:
    """A URL naming an obstore store's location, for messages, equality and dask tokens."""
    name = type(store).__name__
    prefix = str(getattr(store, "prefix", None) or "").strip("/")
    cfg = getattr(store, "config", None) or {}
    if name == "S3Store":
        base = f"s3://{cfg.get('bucket', '?')}"
    elif name == "GCSStore":
        base = f"gs://{cfg.get('bucket', '?')}"
    elif name == "AzureStore":
        base = f"az://{cfg.get('container_name', '?')}"
    elif name == "HTTPStore":
        return str(getattr(store, "url", "http://?")).rstrip("/")
    elif name == "LocalStore":
        return "file://" + str(getattr(store, "prefix", "") or "/")
    elif name == "MemoryStore":
        return f"memory://obstore-{id(store):x}"
    else:
        base = f"{name}:/"
    return f"{base}/{prefix}" if prefix else base


class ObstoreSource(AsyncSourceBase):
    """The :class:`~zarrbolt.storage._async.AsyncSource` of an :class:`ObjectStore`: obstore's
    async API within zarrbolt's bounds and retries.  Keys are the store's keys; ``prefix``
    (``""`` or ending in ``/``) is put in front of them."""

    def __init__(self, store: Any, prefix: str, where: str, **bounds: Any):
        super().__init__(where, **bounds)
        self.store = store
        self.prefix = prefix

    def _path(self, key: str) -> str:
        return self.prefix + key

    async def _raw_get(self, key: str, rng: tuple[Any, ...] | None) -> tuple[Any, str | None]:
        obs = _obs()
        opts: dict[str, Any] = {}
        if rng is not None:
            kind = rng[0]
            opts["range"] = (rng[1], rng[2]) if kind == "range" else {kind: rng[1]}
        res = await obs.get_async(self.store, self._path(key), options=opts or None)
        data = await res.bytes_async()
        start, end = res.range
        if len(data) != end - start:
            raise StoreError(f"get of key {key!r} in {self.where}: the response body was truncated "
                             f"({len(data)} of {end - start} bytes)")
        return data, res.meta.get("e_tag")

    async def _raw_head(self, key: str) -> tuple[int, str | None]:
        meta = await _obs().head_async(self.store, self._path(key))
        return int(meta["size"]), meta.get("e_tag")

    async def _raw_put(self, key: str, value: Any, mode: Any) -> str | None:
        obs = _obs()
        kw: dict[str, Any] = {}
        if mode == "create":
            kw = {"mode": "create", "use_multipart": False}
        elif mode is not None:
            kw = {"mode": {"e_tag": mode[1]}, "use_multipart": False}
        res = await obs.put_async(self.store, self._path(key), as_byte_view(value), **kw)
        return res.get("e_tag") if isinstance(res, dict) else None

    async def _raw_delete(self, key: str) -> None:
        await _obs().delete_async(self.store, self._path(key))

    async def alist(self, prefix: str) -> list[str]:
        """Every key under the directory ``prefix`` (``""`` or ending in ``/``), retried."""
        obs = _obs()

        async def go() -> list[str]:
            out: list[str] = []
            stream = obs.list(self.store, self._path(prefix) or None, chunk_size=1000)
            async for chunk in stream:
                out.extend(m["path"] for m in chunk)
            return out

        paths = await self._call("list", prefix or "/", go)
        n = len(self.prefix)
        return [p[n:] for p in paths if p.startswith(self.prefix)]

    async def alist_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        """``(keys, child prefixes)`` directly under the directory ``prefix``, retried."""
        obs = _obs()
        res = await self._call("list", prefix or "/",
                               lambda: obs.list_with_delimiter_async(self.store, self._path(prefix) or None))
        n = len(self.prefix)
        keys = [m["path"][n:] for m in res["objects"] if m["path"].startswith(self.prefix)]
        dirs = [p[n:] for p in res["common_prefixes"] if p.startswith(self.prefix)]
        return keys, dirs


class ObjectStore(RemoteStore):
    """A zarrbolt store over an obstore store (``S3Store``, ``GCSStore``, ``AzureStore``,
    ``HTTPStore``, ``LocalStore``, ``MemoryStore``), at ``prefix`` inside it.

    ``concurrency``, ``max_bytes_in_flight`` and ``retries`` override the config values
    ``remote_concurrency``, ``remote_bytes_in_flight`` and ``remote_retries`` for this store.
    See the module documentation for what each operation costs and how failures are reported.

    Parameters
    ----------
    store
        The obstore store.
    prefix
        The key prefix inside it ("" for its root).
    read_only
        Refuse writes (:class:`~zarrbolt.errors.ReadOnlyError`).  HTTP(S) stores are always read-only.
    concurrency, max_bytes_in_flight, retries
        Requests in flight, bytes in flight and retries of a failed request for this store (None:
        the config options).
    """

    supports_conditional_writes = True

    def __init__(self, store: Any, *, prefix: str = "", read_only: bool = False,
                 concurrency: int | None = None, max_bytes_in_flight: int | None = None,
                 retries: int | None = None):
        import_obstore()
        if not is_obstore_store(store):
            raise StoreError(f"ObjectStore needs an obstore store (obstore.store.S3Store, ...), got "
                             f"{type(store).__name__}")
        self._http = type(store).__name__ == "HTTPStore"
        super().__init__(read_only=read_only or self._http)
        if not isinstance(prefix, str):
            raise StoreError(f"ObjectStore prefix must be a string, got {type(prefix).__name__}")
        prefix = prefix.strip("/")
        if prefix:
            check_key(prefix)
        self._store = store
        self._prefix = prefix
        self._bounds = {"concurrency": concurrency, "max_bytes_in_flight": max_bytes_in_flight, "retries": retries}
        base = describe_obstore(store)
        self.url = f"{base}/{prefix}" if prefix else base
        self.supports_conditional_writes = type(store).__name__ in _CONDITIONAL
        self._source = ObstoreSource(store, prefix + "/" if prefix else "", self.url, **self._bounds)

    @property
    def store(self) -> Any:
        """The obstore store."""
        return self._store

    @property
    def prefix(self) -> str:
        """The key prefix inside the bucket / container ("" for its root)."""
        return self._prefix

    def _check_writable(self) -> None:
        if self._http:
            raise ReadOnlyError(f"{self!r}: HTTP(S) stores are read-only")
        super()._check_writable()

    # ------------------------------------------------------------------ misc
    def with_read_only(self, read_only: bool = True) -> ObjectStore:
        s = ObjectStore.__new__(ObjectStore)
        s.__dict__.update(self.__dict__)
        s._read_only = bool(read_only) or self._http
        return s

    def __getstate__(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k != "_source"}
        if type(self._store).__name__ == "MemoryStore":  # obstore's MemoryStore does not pickle
            state["_store"] = None
            state["_memory_contents"] = {p: bytes(self._source.run(_read_all(self._store, p)))
                                         for p in _list_paths(self._store)}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        contents = state.pop("_memory_contents", None)
        self.__dict__.update(state)
        if contents is not None:
            obs = import_obstore()
            self._store = obs.store.MemoryStore()
            for p, v in contents.items():
                obs.put(self._store, p, v)
        prefix = self._prefix + "/" if self._prefix else ""
        self._source = ObstoreSource(self._store, prefix, self.url, **self._bounds)

    def token(self) -> tuple[Any, ...]:
        if type(self._store).__name__ == "MemoryStore":
            return ("ObjectStore", id(self._store), self._prefix)
        return ("ObjectStore", self.url)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ObjectStore) or other.read_only != self.read_only:
            return False
        if type(self._store).__name__ == "MemoryStore" or type(other._store).__name__ == "MemoryStore":
            return other._store is self._store and other._prefix == self._prefix
        return other.url == self.url

    def __hash__(self) -> int:
        return hash(("ObjectStore", self.url, self.read_only))

    def __repr__(self) -> str:
        return f"ObjectStore({self.url!r}{', read_only' if self.read_only else ''})"


async def _read_all(store: Any, path: str) -> Any:
    obs = _obs()
    res = await obs.get_async(store, path)
    return await res.bytes_async()


def _list_paths(store: Any) -> list[str]:
    obs = _obs()
    return [m["path"] for m in itertools.chain.from_iterable(obs.list(store))]


__all__ = ["ObjectStore", "ObstoreSource", "describe_obstore", "import_obstore", "is_obstore_store"]
