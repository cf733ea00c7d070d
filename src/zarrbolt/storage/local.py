"""The filesystem store (``store-filesystem.rst``): one file per key under a root directory.

Writes go to a temporary file in the destination directory followed by ``os.replace``, so a
crash or an error never leaves a torn value and readers see the old or the new value whole.
Byte-range reads use ``pread`` (one syscall) where the platform has it.
"""

from __future__ import annotations

import errno
import os
import shutil
import threading
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ..errors import StoreError
from ._base import ByteRequest, Store, check_key, check_prefix, resolve_range

TMP_PREFIX = ".zb-tmp-"
_HAS_PREAD = hasattr(os, "pread")
_O_BINARY = getattr(os, "O_BINARY", 0)


def path_from_uri(root: str | os.PathLike) -> Path:
    """A local path from a path or a ``file://`` URI."""
    s = os.fspath(root)
    if isinstance(s, bytes):
        s = os.fsdecode(s)
    if s.startswith("file:"):
        u = urlparse(s)
        if u.netloc not in ("", "localhost"):
            raise StoreError(f"file URI with a remote host is not supported: {s!r}")
        p = unquote(u.path)
        if os.name == "nt" and len(p) > 2 and p[0] == "/" and p[2] == ":":
            p = p[1:]
        return Path(p)
    if "://" in s:
        raise StoreError(f"unsupported store URL {s!r}: zarrbolt stores are local paths, file:// URIs or in memory")
    return Path(s)


def _read_range(fd: int, start: int, length: int) -> bytes:
    if length <= 0:
        return b""
    if _HAS_PREAD:
        data = os.pread(fd, length, start)
        if len(data) == length:
            return data
        parts = [data]
        got = len(data)
        while got < length:  # short reads (rare on regular files)
            more = os.pread(fd, length - got, start + got)
            if not more:
                break
            parts.append(more)
            got += len(more)
        return b"".join(parts)
    os.lseek(fd, start, os.SEEK_SET)
    parts = []
    got = 0
    while got < length:
        more = os.read(fd, length - got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


class LocalStore(Store):
    def __init__(self, root: str | os.PathLike, *, read_only: bool = False, fsync: bool = False):
        super().__init__(read_only=read_only)
        self.root = path_from_uri(root).absolute()
        self.fsync = fsync
        self._root_str = str(self.root)

    # ------------------------------------------------------------------ paths
    def _path(self, key: str) -> str:
        check_key(key)
        return os.path.join(self._root_str, *key.split("/"))

    # ------------------------------------------------------------------ reading
    def get(self, key: str, byte_range: ByteRequest = None) -> bytes | None:
        path = self._path(key)
        try:
            fd = os.open(path, os.O_RDONLY | _O_BINARY)
        except FileNotFoundError:
            return None
        except (NotADirectoryError, IsADirectoryError):
            return None
        except OSError as e:
            if e.errno in (errno.ENOENT, errno.ENOTDIR, errno.EISDIR):
                return None
            raise StoreError(f"cannot read {key!r}: {e}") from e
        try:
            size = os.fstat(fd).st_size
            a, b = resolve_range(byte_range, size)
            return _read_range(fd, a, b - a)
        except IsADirectoryError:
            return None
        except OSError as e:
            if e.errno == errno.EISDIR:
                return None
            raise StoreError(f"cannot read {key!r}: {e}") from e
        finally:
            os.close(fd)

    def get_partial_values(self, key_ranges: Iterable[tuple[str, ByteRequest]]) -> list[bytes | None]:
        """Opens each file once for all of its ranges."""
        items = list(key_ranges)
        out: list[bytes | None] = [None] * len(items)
        by_key: dict[str, list[int]] = {}
        for i, (k, _) in enumerate(items):
            by_key.setdefault(k, []).append(i)
        for key, idxs in by_key.items():
            path = self._path(key)
            try:
                fd = os.open(path, os.O_RDONLY | _O_BINARY)
            except OSError as e:
                if e.errno in (errno.ENOENT, errno.ENOTDIR, errno.EISDIR):
                    continue
                raise StoreError(f"cannot read {key!r}: {e}") from e
            try:
                size = os.fstat(fd).st_size
                for i in idxs:
                    a, b = resolve_range(items[i][1], size)
                    out[i] = _read_range(fd, a, b - a)
            finally:
                os.close(fd)
        return out

    def get_into(self, key: str, buffer: Any, offset: int = 0) -> int | None:
        path = self._path(key)
        mv = memoryview(buffer).cast("B")
        try:
            f = open(path, "rb", buffering=0)
        except OSError as e:
            if e.errno in (errno.ENOENT, errno.ENOTDIR, errno.EISDIR):
                return None
            raise StoreError(f"cannot read {key!r}: {e}") from e
        with f:
            f.seek(offset)
            n = 0
            while n < len(mv):
                got = f.readinto(mv[n:])
                if not got:
                    break
                n += got
            return n

    def read_into(self, key: str, buffer: Any) -> int | None:
        path = self._path(key)
        try:
            fd = os.open(path, os.O_RDONLY | _O_BINARY)
        except OSError as e:
            if e.errno in (errno.ENOENT, errno.ENOTDIR, errno.EISDIR):
                return None
            raise StoreError(f"cannot read {key!r}: {e}") from e
        try:
            size = os.fstat(fd).st_size
            mv = memoryview(buffer).cast("B")
            if size > len(mv):
                return -size
            got = 0
            while got < size:
                n = os.readv(fd, [mv[got:size]]) if hasattr(os, "readv") else os.readinto(fd, mv[got:size])  # type: ignore[attr-defined]
                if n <= 0:
                    break
                got += n
            if got != size:
                raise StoreError(f"{key!r} changed while being read ({got} of {size} bytes)")
            return size
        except IsADirectoryError:
            return None
        except OSError as e:
            if e.errno == errno.EISDIR:
                return None
            raise StoreError(f"cannot read {key!r}: {e}") from e
        finally:
            os.close(fd)

    def exists(self, key: str) -> bool:
        return os.path.isfile(self._path(key))

    def getsize(self, key: str) -> int:
        try:
            st = os.stat(self._path(key))
        except OSError as e:
            raise StoreError(f"key {key!r} not found in {self!r}") from e
        return st.st_size

    # ------------------------------------------------------------------ writing
    def set(self, key: str, value: Any) -> None:
        self._check_writable()
        path = self._path(key)
        data = value if isinstance(value, (bytes, bytearray)) else memoryview(value).cast("B")
        directory = os.path.dirname(path)
        tmp = os.path.join(directory, f"{TMP_PREFIX}{uuid.uuid4().hex}")
        for attempt in range(2):
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY, 0o644)
                break
            except FileNotFoundError:
                if attempt:
                    raise
                self._makedirs(directory, key)
            except OSError as e:
                if e.errno == errno.ENOTDIR:
                    raise StoreError(f"cannot write {key!r}: a parent path component is a file") from e
                raise StoreError(f"cannot write {key!r}: {e}") from e
        try:
            try:
                with os.fdopen(fd, "wb", buffering=0) as f:
                    mv = memoryview(data)
                    written = 0
                    while written < len(mv):
                        written += f.write(mv[written:])
                    if self.fsync:
                        os.fsync(f.fileno())
                os.replace(tmp, path)
            except IsADirectoryError as e:
                raise StoreError(f"cannot write {key!r}: a directory exists at that key") from e
            except OSError as e:
                raise StoreError(f"cannot write {key!r}: {e}") from e
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def _makedirs(self, directory: str, key: str) -> None:
        try:
            os.makedirs(directory, exist_ok=True)
        except FileExistsError as e:
            raise StoreError(f"cannot write {key!r}: a parent path component is a file") from e
        except OSError as e:
            raise StoreError(f"cannot write {key!r}: {e}") from e

    _create_lock = threading.Lock()

    def set_if_not_exists(self, key: str, value: Any) -> None:
        """Store ``value`` unless ``key`` exists; the value appears atomically (hard link of a
        complete temporary file, which fails if another writer got there first)."""
        self._check_writable()
        path = self._path(key)
        if os.path.isfile(path):
            return
        directory = os.path.dirname(path)
        self._makedirs(directory, key)
        tmp = os.path.join(directory, f"{TMP_PREFIX}{uuid.uuid4().hex}")
        try:
            with open(tmp, "wb") as f:
                f.write(value if isinstance(value, (bytes, bytearray)) else memoryview(value).cast("B"))
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
            except OSError:  # file systems without hard links
                with self._create_lock:
                    if not os.path.exists(path):
                        os.replace(tmp, path)
        except OSError as e:
            raise StoreError(f"cannot write {key!r}: {e}") from e
        finally:
            try:
                os.unlink(tmp)
            except OSError:
                pass

    def erase(self, key: str) -> None:
        self._check_writable()
        try:
            os.unlink(self._path(key))
        except FileNotFoundError:
            pass
        except (IsADirectoryError, NotADirectoryError, PermissionError) as e:
            if os.path.isdir(self._path(key)):
                return  # a "directory" is a prefix, not a key
            raise StoreError(f"cannot erase {key!r}: {e}") from e

    def erase_prefix(self, prefix: str) -> None:
        self._check_writable()
        check_prefix(prefix)
        if prefix == "":
            if self.root.exists():
                for child in self.root.iterdir():
                    if child.is_dir() and not child.is_symlink():
                        shutil.rmtree(child)
                    else:
                        child.unlink()
            return
        if prefix.endswith("/"):
            d = os.path.join(self._root_str, *prefix[:-1].split("/"))
            if os.path.isdir(d):
                shutil.rmtree(d)
            return
        for k in list(self.list_prefix(prefix)):
            self.erase(k)
        # directories named with the prefix
        parent, _, stem = prefix.rpartition("/")
        pdir = os.path.join(self._root_str, *parent.split("/")) if parent else self._root_str
        if os.path.isdir(pdir):
            for name in os.listdir(pdir):
                full = os.path.join(pdir, name)
                if name.startswith(stem) and os.path.isdir(full):
                    shutil.rmtree(full)

    # ------------------------------------------------------------------ listing
    def _walk(self, rel_dir: str) -> Iterator[str]:
        base = os.path.join(self._root_str, *rel_dir.split("/")) if rel_dir else self._root_str
        try:
            entries = list(os.scandir(base))
        except (FileNotFoundError, NotADirectoryError):
            return
        for e in entries:
            if e.name.startswith(TMP_PREFIX):
                continue
            rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
            if e.is_dir(follow_symlinks=False):
                yield from self._walk(rel)
            elif e.is_file():
                yield rel

    def list(self) -> Iterator[str]:
        return self._walk("")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        check_prefix(prefix)
        # start the walk at the deepest directory the prefix names
        rel_dir = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        for k in self._walk(rel_dir):
            if k.startswith(prefix):
                yield k

    def list_dir(self, prefix: str) -> Iterator[str]:
        check_prefix(prefix)
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        base = os.path.join(self._root_str, *prefix[:-1].split("/")) if prefix else self._root_str
        try:
            entries = sorted(os.scandir(base), key=lambda e: e.name)
        except (FileNotFoundError, NotADirectoryError):
            return
        for e in entries:
            if e.name.startswith(TMP_PREFIX):
                continue
            if e.is_dir(follow_symlinks=False):
                yield f"{prefix}{e.name}/"
            elif e.is_file():
                yield f"{prefix}{e.name}"

    # ------------------------------------------------------------------ misc
    def with_read_only(self, read_only: bool = True) -> LocalStore:
        return LocalStore(self.root, read_only=read_only, fsync=self.fsync)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LocalStore) and other.root == self.root and other.read_only == self.read_only

    def __hash__(self) -> int:
        return hash(self.root)

    def __repr__(self) -> str:
        return f"LocalStore({self.root.as_uri()!r}{', read_only' if self.read_only else ''})"

    def __str__(self) -> str:
        return self.root.as_uri()
