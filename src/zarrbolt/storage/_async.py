"""The asynchronous side of remote stores: one event-loop thread per process, the
:class:`AsyncSource` protocol the read/write planners use, and :class:`AsyncSourceBase`, which
gives every remote backend the same bounds, retries, range coalescing and error mapping.

Event loop
    Remote requests run as coroutines on one background event-loop thread per process, started
    on first use (:func:`event_loop`).  A child process made by ``fork`` starts its own on first
    use (the parent's thread does not exist there).  :func:`run` runs a coroutine on it from any
    other thread and blocks until it is done; a ``KeyboardInterrupt`` (Ctrl-C) in the waiting
    thread cancels the coroutine, waits briefly for the cancellation to land (so no request
    keeps writing into the caller's buffers) and re-raises at once.  Calling :func:`run` on the
    loop thread itself would deadlock: it raises :class:`~zarrbolt.errors.StoreError` instead.

Bounds
    Each source has a semaphore of ``concurrency`` requests in flight (config
    ``remote_concurrency``) and a budget of ``max_bytes_in_flight`` bytes being fetched at once
    (config ``remote_bytes_in_flight``; a request for more than the whole budget waits until it
    can run alone).  Both are read from :mod:`zarrbolt.config` when the source is made.

Retries
    A request failing with a 5xx / 429 status, a connection reset, a timeout or a truncated
    body is retried up to ``retries`` times (config ``remote_retries``) after an exponential
    backoff with full jitter (``backoff * 2**attempt`` seconds, capped at ``max_backoff``, times
    a random factor in [0.5, 1.5)).  Then it raises :class:`~zarrbolt.errors.
    StoreUnavailableError` (or :class:`~zarrbolt.errors.StoreError` for a truncated body) naming
    the key.  A missing object is never an error for reads: ``None``.  Conditional writes are
    retried too; a retry of a conditional write whose first attempt did land but whose reply was
    lost reports a :class:`~zarrbolt.errors.ConflictError` (the service cannot tell the two apart).

Counters
    ``source.stats`` counts requests (by operation), retries and bytes received, for tests and
    benchmarks (updated on the loop thread only).
"""

from __future__ import annotations

import asyncio
import collections
import os
import random
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Protocol, runtime_checkable

from .. import config
from ..errors import StoreError
from . import _remote_errors as rerr
from ._base import (
    OffsetByteRequest,
    RangeByteRequest,
    SuffixByteRequest,
    normalize_range,
)

__all__ = [
    "AsyncSource",
    "AsyncSourceBase",
    "ByteBudget",
    "coalesce_ranges",
    "event_loop",
    "run",
]

# ---------------------------------------------------------------------------- the loop thread
_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_pid: int | None = None
CANCEL_GRACE_S = 2.0  # how long a Ctrl-C waits for the cancelled coroutine to finish


def _after_fork_in_child() -> None:
    global _lock, _loop, _thread, _pid
    # the parent's loop thread does not exist here; its lock may have been held at the fork
    _lock = threading.Lock()
    _loop = _thread = _pid = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _serve(loop: asyncio.AbstractEventLoop, started: threading.Event) -> None:
    asyncio.set_event_loop(loop)
    loop.call_soon(started.set)
    loop.run_forever()


def event_loop() -> asyncio.AbstractEventLoop:
    """This process's remote-I/O event loop, running in a daemon thread (started on first use)."""
    global _loop, _thread, _pid
    loop = _loop
    if loop is not None and _pid == os.getpid():
        return loop
    with _lock:
        if _loop is None or _pid != os.getpid():
            loop = asyncio.new_event_loop()
            started = threading.Event()
            t = threading.Thread(target=_serve, args=(loop, started), name="zarrbolt-remote-io", daemon=True)
            t.start()
            started.wait()
            _loop, _thread, _pid = loop, t, os.getpid()
            _register_exit_drain()
        return _loop


# ---------------------------------------------------------------------------- interpreter exit
# obstore completes its futures from tokio worker threads, which take the GIL to hand the result
# to our loop (pyo3-async-runtimes' set_result -> call_soon_threadsafe).  A tokio thread doing
# that while the interpreter finalizes aborts the process ("Fatal Python error" / SIGABRT, seen in
# a few percent of short processes that wrote through obstore).  At exit we therefore wait,
# bounded by EXIT_GRACE_S, until the loop has no pending task (no request can complete later)
# and no foreign thread (one Python did not create) is executing Python code.
EXIT_GRACE_S = 2.0
_exit_registered_pid: int | None = None


def _register_exit_drain() -> None:
    global _exit_registered_pid
    if _exit_registered_pid != os.getpid():
        import atexit

        atexit.register(drain_at_exit)
        _exit_registered_pid = os.getpid()


def _pending_tasks(loop: asyncio.AbstractEventLoop, timeout: float) -> int:
    """Tasks on ``loop`` other than the asking one (-1 when the loop does not answer in time)."""
    async def count() -> int:
        me = asyncio.current_task()
        return sum(1 for t in asyncio.all_tasks() if t is not me and not t.done())

    import concurrent.futures

    fut = asyncio.run_coroutine_threadsafe(count(), loop)
    try:
        return fut.result(timeout=max(0.001, timeout))
    except (concurrent.futures.TimeoutError, RuntimeError):
        fut.cancel()
        return -1


def _foreign_threads_in_python() -> bool:
    """Whether a thread that Python did not start (a tokio worker) is running Python code now."""
    import sys

    ours = {t.ident for t in threading.enumerate() if not isinstance(t, threading._DummyThread)}
    return any(ident not in ours for ident in sys._current_frames())


def drain_at_exit(grace: float = EXIT_GRACE_S) -> bool:
    """Wait (at most ``grace`` seconds) for the remote-I/O loop's pending tasks and for foreign
    threads to leave Python code; True when everything settled in time.  Registered with
    :mod:`atexit` when the loop starts."""
    import time

    loop = _loop
    if loop is None or _pid != os.getpid() or loop.is_closed() or not loop.is_running():
        return True
    deadline = time.monotonic() + grace
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        n = _pending_tasks(loop, left)
        if n == 0:
            break
        if n < 0:
            return False
        time.sleep(0.005)
    quiet = 0
    while quiet < 2:  # twice in a row: a thread between two callbacks is not mistaken for done
        if time.monotonic() > deadline:
            return False
        quiet = 0 if _foreign_threads_in_python() else quiet + 1
        time.sleep(0.002)
    return True


def on_loop_thread() -> bool:
    """Whether the calling thread is the remote-I/O loop thread."""
    t = _thread
    return t is not None and _pid == os.getpid() and threading.current_thread() is t


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` on the remote-I/O loop and return its result (or raise its exception).

    Callable from any thread but the loop's own.  Ctrl-C while waiting cancels the coroutine."""
    if on_loop_thread():
        coro.close()
        raise StoreError("zarrbolt.storage run() was called on the remote-I/O event-loop thread itself "
                         "(it would wait for itself forever); await the coroutine instead")
    loop = event_loop()
    finished = threading.Event()
    holder: dict[str, asyncio.Task[Any]] = {}

    def start() -> None:
        task = loop.create_task(coro)
        holder["task"] = task
        task.add_done_callback(lambda _t: finished.set())

    def cancel() -> None:
        task = holder.get("task")
        if task is not None:
            task.cancel()

    loop.call_soon_threadsafe(start)
    try:
        finished.wait()
    except BaseException:  # KeyboardInterrupt (Ctrl-C) or another asynchronous exception
        loop.call_soon_threadsafe(cancel)
        finished.wait(CANCEL_GRACE_S)
        raise
    return holder["task"].result()


# ---------------------------------------------------------------------------- the protocol
@runtime_checkable
class AsyncSource(Protocol):
    """What the read/write planners need of a remote store (``store.async_source()``).

    ``run`` executes a coroutine on the source's event-loop thread and blocks the caller.
    Byte ranges are ``(begin, end)``, end exclusive.  A missing object is ``None``, never an
    exception; every failure raises a :class:`~zarrbolt.errors.StoreError` naming the key."""

    concurrency: int
    max_bytes_in_flight: int

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any: ...

    async def aget(self, key: str, byte_range: Any = None) -> memoryview | None: ...

    async def aget_ranges(self, key: str, ranges: list[tuple[int, int]], *, max_gap: int) -> list[memoryview] | None: ...

    async def aset(self, key: str, value: Any) -> None: ...

    async def adelete(self, key: str) -> None: ...


# ---------------------------------------------------------------------------- bounds
class ByteBudget:
    """At most ``limit`` bytes in flight, granted first come first served; a request larger
    than the whole budget waits until nothing else is in flight and then runs alone.  Used on
    one event loop; :meth:`release` is synchronous (safe in ``finally`` of a cancelled task)."""

    def __init__(self, limit: int):
        self.limit = int(limit)
        self.used = 0
        self._waiters: collections.deque[Any] = collections.deque()

    async def acquire(self, n: int) -> int:
        """Wait for ``n`` bytes (capped at the limit); returns what to :meth:`release`."""
        n = max(0, min(int(n), self.limit))
        if n == 0:
            return 0
        if not self._waiters and self.used + n <= self.limit:
            self.used += n
            return n
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append((n, fut))
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # granted just as it was cancelled
                self.release(n)
            else:
                self._wake()
            raise
        return n

    def release(self, n: int) -> None:
        if n:
            self.used -= n
            self._wake()

    def _wake(self) -> None:
        while self._waiters:
            n, fut = self._waiters[0]
            if fut.done():  # its task was cancelled
                self._waiters.popleft()
                continue
            if self.used + n > self.limit:
                return
            self._waiters.popleft()
            self.used += n
            fut.set_result(None)


def coalesce_ranges(ranges: Sequence[tuple[int, int]], max_gap: int) -> list[tuple[int, int, list[int]]]:
    """Group ``(begin, end)`` ranges into requests: ranges whose gap is at most ``max_gap``
    bytes (overlapping ones included) share one ``(begin, end, [indices of the ranges])``."""
    order = sorted(range(len(ranges)), key=lambda i: (ranges[i][0], ranges[i][1]))
    groups: list[tuple[int, int, list[int]]] = []
    for i in order:
        a, b = ranges[i]
        if groups and a - groups[-1][1] <= max_gap:
            ga, gb, idx = groups[-1]
            idx.append(i)
            groups[-1] = (ga, max(gb, b), idx)
        else:
            groups.append((a, b, [i]))
    return groups


async def gather_or_cancel(aws: Sequence[Awaitable[Any]]) -> list[Any]:
    """``asyncio.gather`` that cancels the remaining awaitables when one fails (so a failed
    read does not leave requests running into buffers nobody will use)."""
    tasks = [asyncio.ensure_future(a) for a in aws]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


# ---------------------------------------------------------------------------- the base
class AsyncSourceBase:
    """The bounded, retrying :class:`AsyncSource` of a remote backend.

    A backend supplies four raw coroutines that raise the backend's own exceptions:
    ``_raw_get(key, rng)`` → ``(bytes-like, etag | None)`` where ``rng`` is None,
    ``("range", a, b)``, ``("offset", a)`` or ``("suffix", n)``; ``_raw_head(key)`` →
    ``(size, etag | None)``; ``_raw_put(key, value, mode)`` → etag or None, ``mode`` None
    (overwrite), ``"create"`` (only if absent) or ``("etag", tag)`` (only if unchanged); and
    ``_raw_delete(key)``.  Keys are store keys (the backend adds its own prefix).  ``where``
    names the store (its URL) in error messages."""

    def __init__(self, where: str, *, concurrency: int | None = None, max_bytes_in_flight: int | None = None,
                 retries: int | None = None, backoff: float = 0.05, max_backoff: float = 2.0):
        self.where = where
        self.concurrency = int(concurrency if concurrency is not None else config.get("remote_concurrency"))
        self.max_bytes_in_flight = int(max_bytes_in_flight if max_bytes_in_flight is not None
                                       else config.get("remote_bytes_in_flight"))
        self.retries = int(retries if retries is not None else config.get("remote_retries"))
        if self.concurrency < 1 or self.max_bytes_in_flight < 1 or self.retries < 0:
            raise StoreError(f"invalid remote bounds: concurrency={self.concurrency}, "
                             f"max_bytes_in_flight={self.max_bytes_in_flight}, retries={self.retries}")
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.stats: dict[str, int] = {}
        # the bounds of each event loop that runs this source's coroutines (asyncio primitives
        # belong to one loop; usually there is one: zarrbolt's remote-I/O loop)
        self._limits_by_loop: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

    # ------------------------------------------------------------------ raw operations
    async def _raw_get(self, key: str, rng: tuple[Any, ...] | None) -> tuple[Any, str | None]:  # pragma: no cover
        raise NotImplementedError

    async def _raw_head(self, key: str) -> tuple[int, str | None]:  # pragma: no cover
        raise NotImplementedError

    async def _raw_put(self, key: str, value: Any, mode: Any) -> str | None:  # pragma: no cover
        raise NotImplementedError

    async def _raw_delete(self, key: str) -> None:  # pragma: no cover
        raise NotImplementedError

    # ------------------------------------------------------------------ machinery
    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return run(coro)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.update(_limits_by_loop=None, stats={})
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._limits_by_loop = weakref.WeakKeyDictionary()

    def _limits(self) -> tuple[asyncio.Semaphore, ByteBudget]:
        loop = asyncio.get_running_loop()
        limits = self._limits_by_loop.get(loop)
        if limits is None:
            limits = (asyncio.Semaphore(self.concurrency), ByteBudget(self.max_bytes_in_flight))
            self._limits_by_loop[loop] = limits
        return limits

    def _count(self, name: str, n: int = 1) -> None:
        self.stats[name] = self.stats.get(name, 0) + n

    async def _call(self, op: str, key: str, make: Callable[[], Awaitable[Any]], nbytes: int = 0,
                    passthrough: frozenset[Any] = frozenset()) -> Any:
        """``await make()`` within the bounds, retried on transient failures.  A failure whose
        kind is in ``passthrough`` is returned as ``(kind, exception)`` for the caller to
        handle; any other failure raises the mapped :mod:`zarrbolt.errors` exception."""
        sem, budget = self._limits()
        attempt = 0
        while True:
            got = await budget.acquire(nbytes)
            try:
                async with sem:
                    self._count(op)
                    return await make()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                kind = rerr.classify(exc)
                if kind in passthrough:
                    return _Failure(kind, exc)
                if kind in rerr.RETRYABLE and attempt < self.retries:
                    delay = min(self.max_backoff, self.backoff * (2 ** attempt)) * random.uniform(0.5, 1.5)
                    attempt += 1
                    self._count("retries")
                    await asyncio.sleep(delay)
                    continue
                raise rerr.store_error(exc, kind, op=op, key=key, where=self.where, attempts=attempt + 1) from exc
            finally:
                budget.release(got)

    # ------------------------------------------------------------------ reads
    async def ahead(self, key: str) -> tuple[int, str | None] | None:
        """``(size, etag)`` of ``key`` by one HEAD request; None when absent."""
        got = await self._call("head", key, lambda: self._raw_head(key), passthrough=frozenset({rerr.ABSENT}))
        return None if isinstance(got, _Failure) else got

    async def aget_versioned(self, key: str, byte_range: Any = None) -> tuple[memoryview | None, str | None]:
        """The value (or the requested bytes of it) and the object's ETag; ``(None, None)`` when
        absent.  Ranges are clipped to the value, as :meth:`Store.get` does."""
        r = normalize_range(byte_range)
        if isinstance(r, RangeByteRequest):
            if r.end == r.start:  # nothing to fetch: only whether the key exists
                head = await self.ahead(key)
                return (None, None) if head is None else (memoryview(b""), head[1])
            rng: tuple[Any, ...] | None = ("range", r.start, r.end)
            expect = r.end - r.start
        elif isinstance(r, OffsetByteRequest):
            rng, expect = ("offset", r.offset), 0
        elif isinstance(r, SuffixByteRequest):
            if r.suffix == 0:
                head = await self.ahead(key)
                return (None, None) if head is None else (memoryview(b""), head[1])
            rng, expect = ("suffix", r.suffix), r.suffix
        else:
            rng, expect = None, 0
        skip = frozenset({rerr.ABSENT, rerr.UNSATISFIABLE, rerr.NOT_PARTIAL})
        got = await self._call("get", key, lambda: self._raw_get(key, rng), nbytes=expect, passthrough=skip)
        if isinstance(got, _Failure):
            if got.kind == rerr.ABSENT:
                return None, None
            if got.kind == rerr.UNSATISFIABLE:  # the range starts at or past the end of the object
                head = await self.ahead(key)
                return (None, None) if head is None else (memoryview(b""), head[1])
            # the server ignored the Range header (an empty object): fetch it whole and clip
            whole, etag = await self.aget_versioned(key)
            if whole is None:
                return None, None
            from ._base import resolve_range

            a, b = resolve_range(r, len(whole))
            return whole[a:b], etag
        data, etag = got
        mv = memoryview(data)
        if mv.ndim != 1 or mv.format != "B":
            mv = mv.cast("B")
        if rng is not None and rng[0] == "range" and len(mv) > expect:
            raise StoreError(f"get of key {key!r} in {self.where}: asked for {expect} bytes, the server sent {len(mv)}")
        self._count("bytes", len(mv))
        return mv, etag

    async def aget(self, key: str, byte_range: Any = None) -> memoryview | None:
        return (await self.aget_versioned(key, byte_range))[0]

    async def aget_ranges(self, key: str, ranges: list[tuple[int, int]], *, max_gap: int | None = None) -> list[memoryview] | None:
        """The ``(begin, end)`` ranges of ``key`` (clipped to the value), fetched concurrently;
        ranges closer than ``max_gap`` bytes (config ``remote_coalesce_gap`` when None) share one
        request and come back as views of its buffer (no copy).  None when ``key`` is absent."""
        if max_gap is None:
            max_gap = int(config.get("remote_coalesce_gap"))
        ranges = [(int(a), int(b)) for a, b in ranges]
        for a, b in ranges:
            if a < 0 or b < a:
                raise ValueError(f"invalid byte range [{a}, {b}) for key {key!r}")
        nonempty = [i for i, (a, b) in enumerate(ranges) if b > a]
        if not nonempty:
            return None if await self.ahead(key) is None else [memoryview(b"") for _ in ranges]
        wanted = [ranges[i] for i in nonempty]
        groups = coalesce_ranges(wanted, max_gap)
        bufs = await gather_or_cancel([self.aget(key, RangeByteRequest(ga, gb)) for ga, gb, _ in groups])
        if any(b is None for b in bufs):
            return None
        out: list[memoryview] = [memoryview(b"")] * len(ranges)
        for (ga, _gb, idx), buf in zip(groups, bufs):
            for w_i in idx:
                a, b = wanted[w_i]
                out[nonempty[w_i]] = buf[a - ga: b - ga]
        return out

    # ------------------------------------------------------------------ writes
    async def aset(self, key: str, value: Any) -> None:
        await self._call("put", key, lambda: self._raw_put(key, value, None))

    async def aset_if_version(self, key: str, value: Any, version: str | None) -> str | None:
        """Write ``value`` only if the object's ETag is still ``version`` (None: only if the
        object is absent); :class:`~zarrbolt.errors.ConflictError` otherwise.  The new ETag."""
        mode = "create" if version is None else ("etag", version)
        etag: str | None = await self._call("put", key, lambda: self._raw_put(key, value, mode))
        return etag

    async def adelete(self, key: str) -> None:
        got = await self._call("delete", key, lambda: self._raw_delete(key), passthrough=frozenset({rerr.ABSENT}))
        del got  # deleting a missing key is fine


class _Failure:
    """A failure the caller of ``_call`` asked to handle itself."""

    __slots__ = ("exc", "kind")

    def __init__(self, kind: str, exc: BaseException):
        self.kind = kind
        self.exc = exc
