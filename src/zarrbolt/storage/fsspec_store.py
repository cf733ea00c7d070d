"""``FsspecStore``: a :class:`~zarrbolt.storage.Store` on any `fsspec`_ filesystem (s3fs, gcsfs,
adlfs, HTTP, memory, local, zip, ...), for what obstore does not cover.

.. _fsspec: https://filesystem-spec.readthedocs.io/

fsspec is an optional dependency (``pip install zarrbolt[remote]``), imported when a store is
made, never by ``import zarrbolt``.

Reads are ranged: ``get`` with a range is one ``cat_file(path, start, end)`` (a suffix range is
``start=-n``, one ``Range: bytes=-n`` request on HTTP and S3), ``getsize`` / ``exists`` are one
``info`` (HEAD), and ranges of one value are coalesced and fetched concurrently like
:class:`~zarrbolt.storage.object_store.ObjectStore`'s — an fsspec mapper (``FSMap``) given to
zarrbolt becomes an FsspecStore, so a shard is never fetched whole to read one chunk.

Asynchronous filesystems (``fs.async_impl``) are driven through their coroutines
(``_cat_file``, ``_info``, ``_pipe_file``, ``_rm_file``, ``_find``, ``_ls``): on fsspec's own
I/O loop when the filesystem was made with ``asynchronous=False`` (the default), on zarrbolt's
remote-I/O loop when it was made with ``asynchronous=True``.  Synchronous filesystems run in
worker threads.  Bounds, retries and error mapping are those of
:class:`~zarrbolt.storage._async.AsyncSourceBase`; fsspec's own retries (s3fs retries 5xx
itself) come first.

No conditional writes: ``supports_conditional_writes = False`` (``get_versioned`` gives no
version and ``set_if_version`` is a plain write, the store contract's fallback), because fsspec
has no portable "write if unchanged".  ``set_if_not_exists`` uses ``pipe_file(mode="create")``
where the filesystem implements it (s3fs, memory, local), else checks and writes (not atomic).

Pickling: the filesystem pickles (fsspec rebuilds it from its constructor arguments);
fsspec's memory filesystem is per process, so a pickled memory:// store sees that process's.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..errors import StoreError
from ._async import AsyncSourceBase
from ._remote import RemoteStore

_INSTALL = "FsspecStore needs fsspec: pip install 'zarrbolt[remote]' (or pip install fsspec)"


def import_fsspec() -> Any:
    try:
        import fsspec
    except ImportError as exc:
        raise ImportError(_INSTALL) from exc
    return fsspec


class FsspecSource(AsyncSourceBase):
    """The async source of an :class:`FsspecStore`; ``root`` is the store's directory in ``fs``."""

    def __init__(self, fs: Any, root: str, where: str, **bounds: Any):
        super().__init__(where, **bounds)
        self.fs = fs
        self.root = root.rstrip("/")
        self.is_async = bool(getattr(fs, "async_impl", False))
        self.is_local = "file" in _protocols(fs) or "local" in _protocols(fs)

    def _path(self, key: str) -> str:
        return f"{self.root}/{key}" if self.root else key

    async def _do(self, name: str, *args: Any, **kw: Any) -> Any:
        """``fs._name(...)`` (async filesystems) or ``fs.name(...)`` in a worker thread."""
        fs = self.fs
        if self.is_async:
            coro = getattr(fs, "_" + name)(*args, **kw)
            if getattr(fs, "asynchronous", False):
                return await coro
            loop = fs.loop  # fsspec's I/O loop, where the filesystem's session lives
            return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))
        return await asyncio.to_thread(getattr(fs, name), *args, **kw)

    async def _raw_get(self, key: str, rng: tuple[Any, ...] | None) -> tuple[Any, str | None]:
        path = self._path(key)
        if rng is None:
            data = await self._do("cat_file", path)
        elif rng[0] == "range":
            data = await self._do("cat_file", path, start=rng[1], end=rng[2])
        elif rng[0] == "offset":
            data = await self._do("cat_file", path, start=rng[1], end=None)
        else:
            data = await self._do("cat_file", path, start=-rng[1], end=None)
        if rng is not None and rng[0] == "range" and len(data) > rng[2] - rng[1]:
            # a server that ignored the Range header sent the whole value: never pass it as the range
            raise StoreError(f"get of key {key!r} in {self.where}: the server ignored the byte range "
                             f"[{rng[1]}, {rng[2]}) and sent {len(data)} bytes")
        return data, None

    async def _raw_head(self, key: str) -> tuple[int, str | None]:
        info = await self._do("info", self._path(key))
        if info.get("type") == "directory":
            raise FileNotFoundError(self._path(key))
        size = info.get("size")
        if size is None:
            raise StoreError(f"the size of key {key!r} in {self.where} is unknown (the server sent none)")
        return int(size), info.get("ETag") or info.get("etag")

    async def _raw_put(self, key: str, value: Any, mode: Any) -> str | None:
        path = self._path(key)
        data = bytes(value)
        if self.is_local:
            parent = path.rsplit("/", 1)[0]
            await self._do("makedirs", parent, exist_ok=True)
        if mode == "create":
            try:
                await self._do("pipe_file", path, data, mode="create")
                return None
            except (TypeError, NotImplementedError):
                if await self._exists(path):
                    raise FileExistsError(path) from None
        elif mode is not None:
            raise StoreError(f"write of key {key!r} in {self.where}: fsspec filesystems cannot write on a version")
        await self._do("pipe_file", path, data)
        return None

    async def _exists(self, path: str) -> bool:
        try:
            info = await self._do("info", path)
        except FileNotFoundError:
            return False
        is_file: bool = info.get("type") != "directory"
        return is_file

    async def _raw_delete(self, key: str) -> None:
        await self._do("rm_file", self._path(key))

    async def alist(self, prefix: str) -> list[str]:
        base = self._path(prefix.rstrip("/")) if prefix else self.root

        async def go() -> list[str]:
            try:
                return list(await self._do("find", base or "/", withdirs=False))
            except FileNotFoundError:
                return []

        return self._relative(await self._call("list", prefix or "/", go))

    async def alist_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        base = self._path(prefix.rstrip("/")) if prefix else self.root

        async def go() -> list[dict[str, Any]]:
            try:
                return list(await self._do("ls", base or "/", detail=True))
            except FileNotFoundError:
                return []

        entries = await self._call("list", prefix or "/", go)
        files = self._relative([e["name"] for e in entries if e.get("type") != "directory"])
        dirs = self._relative([e["name"] for e in entries if e.get("type") == "directory"])
        return files, dirs

    def _relative(self, paths: list[str]) -> list[str]:
        root = self.fs._strip_protocol(self.root).rstrip("/") if self.root else ""
        out = []
        for p in paths:
            p = self.fs._strip_protocol(p)
            if root and not p.startswith(root + "/"):
                continue
            rel = p[len(root) + 1:] if root else p.lstrip("/")
            if rel:
                out.append(rel)
        return out


def _protocols(fs: Any) -> tuple[str, ...]:
    p = getattr(fs, "protocol", ())
    return (p,) if isinstance(p, str) else tuple(p)


class FsspecStore(RemoteStore):
    """A zarrbolt store over an fsspec filesystem ``fs`` at directory ``path`` in it.

    ``concurrency``, ``max_bytes_in_flight`` and ``retries`` override the config values
    ``remote_concurrency``, ``remote_bytes_in_flight`` and ``remote_retries``.

    Parameters
    ----------
    fs
        The fsspec filesystem (synchronous or asynchronous).
    path
        The directory in ``fs``.
    read_only
        Refuse writes (:class:`~zarrbolt.errors.ReadOnlyError`).
    concurrency, max_bytes_in_flight, retries
        Requests in flight, bytes in flight and retries of a failed request for this store (None:
        the config options).
    """

    supports_conditional_writes = False

    def __init__(self, fs: Any, *, path: str = "", read_only: bool = False, concurrency: int | None = None,
                 max_bytes_in_flight: int | None = None, retries: int | None = None):
        import_fsspec()
        if not hasattr(fs, "cat_file") or not hasattr(fs, "_strip_protocol"):
            raise StoreError(f"FsspecStore needs an fsspec filesystem, got {type(fs).__name__}")
        if not isinstance(path, str):
            raise StoreError(f"FsspecStore path must be a string, got {type(path).__name__}")
        self._http = "http" in _protocols(fs) or "https" in _protocols(fs)
        super().__init__(read_only=read_only or self._http)
        self.fs = fs
        self.path = fs._strip_protocol(path).rstrip("/") if path else ""
        self._bounds = {"concurrency": concurrency, "max_bytes_in_flight": max_bytes_in_flight, "retries": retries}
        proto = _protocols(fs)[0] if _protocols(fs) else "fsspec"
        if "://" in self.path or proto in ("file", "local"):
            shown = self.path if "://" in self.path else f"file://{self.path}"
        else:
            shown = f"{proto}://{self.path.lstrip('/')}"
        self.url = shown
        self._source = FsspecSource(fs, self.path, self.url, **self._bounds)

    @classmethod
    def from_url(cls, url: str, storage_options: dict[str, Any] | None = None, *, read_only: bool = False) -> FsspecStore:
        """A store over the fsspec filesystem and path of ``url`` (``fsspec.url_to_fs(url,
        **storage_options)``).
        """
        fsspec = import_fsspec()
        fs, path = fsspec.url_to_fs(url, **(storage_options or {}))
        return cls(fs, path=path, read_only=read_only)

    @classmethod
    def from_zarr(cls, zstore: Any, *, read_only: bool = False) -> FsspecStore:
        """From zarr-python's ``FsspecStore``: its filesystem (made ``asynchronous=True`` for
        zarr's own loop) is rebuilt from its options in fsspec's default mode, so its sessions
        live on fsspec's I/O loop rather than zarr's."""
        fs = zstore.fs
        if getattr(fs, "asynchronous", False):
            opts = dict(getattr(fs, "storage_options", {}) or {})
            opts.update(asynchronous=False, skip_instance_cache=True)
            opts.pop("loop", None)
            try:
                fs = type(fs)(**opts)
            except TypeError as exc:
                raise StoreError(f"cannot rebuild the fsspec filesystem of {zstore!r}: {exc}") from exc
        return cls(fs, path=str(getattr(zstore, "path", "") or ""),
                   read_only=read_only or bool(getattr(zstore, "read_only", False)))

    def _check_writable(self) -> None:
        if self._http:
            from ..errors import ReadOnlyError

            raise ReadOnlyError(f"{self!r}: HTTP(S) stores are read-only")
        super()._check_writable()

    def with_read_only(self, read_only: bool = True) -> FsspecStore:
        s = FsspecStore.__new__(FsspecStore)
        s.__dict__.update(self.__dict__)
        s._read_only = bool(read_only) or self._http
        return s

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_source"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._source = FsspecSource(self.fs, self.path, self.url, **self._bounds)

    def token(self) -> tuple[Any, ...]:
        return ("FsspecStore", self.url, _protocols(self.fs))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, FsspecStore) and other.read_only == self.read_only and other.url == self.url
                and other.fs == self.fs)

    def __hash__(self) -> int:
        return hash(("FsspecStore", self.url, self.read_only))

    def __repr__(self) -> str:
        return f"FsspecStore({self.url!r}{', read_only' if self.read_only else ''})"


__all__ = ["FsspecSource", "FsspecStore", "import_fsspec"]
