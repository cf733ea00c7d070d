"""A MemoryStore with an async face honouring the AsyncSource protocol (CONTRACT18), for unit
tests of the remote read and write planners without a network: its coroutines run on a private
event-loop thread, every request is counted (GETs and bytes), and latency and faults can be
injected.  The acceptance tests use the real ObjectStore against moto (tests/remote_helpers.py)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from zarrbolt.errors import StoreError
from zarrbolt.storage import MemoryStore
from zarrbolt.storage._base import RangeByteRequest, SuffixByteRequest, normalize_range


def conflict_error() -> type:
    import zarrbolt.errors as e

    return getattr(e, "ConflictError", StoreError)


class _Loop:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="double-loop")
        self.thread.start()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


class DoubleSource:
    """The async face of :class:`AsyncMemoryStore`."""

    def __init__(self, store: AsyncMemoryStore):
        self.store = store
        self.concurrency = store.bounds[0]
        self.max_bytes_in_flight = store.bounds[1]

    def run(self, coro: Any) -> Any:
        fut = asyncio.run_coroutine_threadsafe(coro, self.store._loop.loop)
        try:
            return fut.result()
        except BaseException:
            fut.cancel()
            raise

    async def _request(self, key: str, nbytes_of: Any) -> Any:
        st = self.store
        async with st._sem():
            with st.lock:
                st.in_flight += 1
                st.max_seen = max(st.max_seen, st.in_flight)
            try:
                if st.latency:
                    await asyncio.sleep(st.latency)
                fault = st.faults.get(key)
                if fault is not None:
                    raise fault
                return nbytes_of()
            finally:
                with st.lock:
                    st.in_flight -= 1

    def _get(self, key: str, byte_range: Any) -> memoryview | None:
        v = self.store._data.get(key)
        st = self.store
        with st.lock:
            st.gets.append((key, byte_range))
        if v is None:
            return None
        r = normalize_range(byte_range)
        mv = memoryview(v)
        if r is None:
            out = mv
        elif isinstance(r, RangeByteRequest):
            out = mv[r.start: r.end]
        elif isinstance(r, SuffixByteRequest):
            out = mv[max(0, len(mv) - r.suffix):]
        else:
            out = mv[r.offset:]
        with st.lock:
            st.bytes_got += len(out)
        return out

    async def aget(self, key: str, byte_range: Any = None) -> memoryview | None:
        return await self._request(key, lambda: self._get(key, byte_range))

    async def aget_ranges(self, key: str, ranges: list[tuple[int, int]], *, max_gap: int) -> list[memoryview] | None:
        # coalesce, one request per merged range, concurrently
        merged: list[list[int]] = []
        for b, e in sorted(ranges):
            if merged and b - merged[-1][1] < max_gap:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([b, e])
        got = await asyncio.gather(*[self.aget(key, RangeByteRequest(b, e)) for b, e in merged])
        if any(g is None for g in got):
            return None
        out = []
        for b, e in ranges:
            for (mb, me), g in zip(merged, got):
                if mb <= b and e <= me:
                    out.append(g[b - mb: e - mb])
                    break
        return out

    async def aset(self, key: str, value: Any) -> None:
        st = self.store
        with st.lock:
            st.puts.append(key)
        await self._request(key, lambda: MemoryStore.set(st, key, value))

    async def adelete(self, key: str) -> None:
        await self._request(key, lambda: MemoryStore.erase(self.store, key))


class AsyncMemoryStore(MemoryStore):
    """A MemoryStore whose ``async_source()`` is a :class:`DoubleSource`; versions (an
    incrementing number per key) for the conditional writes of the contract."""

    supports_conditional_writes = True

    def __init__(self, *, latency: float = 0.0, concurrency: int = 8, max_bytes_in_flight: int = 256 << 20,
                 conditional: bool = True):
        super().__init__()
        self._loop = _Loop()
        self.latency = latency
        self.bounds = (concurrency, max_bytes_in_flight)  # its source's (Store.concurrency asks that)
        self.supports_conditional_writes = conditional
        self.lock = threading.Lock()
        self.faults: dict[str, BaseException] = {}
        self.versions: dict[str, int] = {}
        self._sems: dict[Any, asyncio.Semaphore] = {}
        self.reset()
        self.source = DoubleSource(self)

    def _sem(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if loop not in self._sems:
            self._sems[loop] = asyncio.Semaphore(self.concurrency)
        return self._sems[loop]

    def reset(self) -> None:
        self.gets: list[tuple[str, Any]] = []
        self.puts: list[str] = []
        self.bytes_got = 0
        self.in_flight = 0
        self.max_seen = 0

    def async_source(self) -> DoubleSource:
        return self.source

    def chunk_gets(self) -> list:
        return [g for g in self.gets if not g[0].endswith("zarr.json")]

    # versions
    def set(self, key: str, value: Any) -> None:
        super().set(key, value)
        with self.lock:
            self.versions[key] = self.versions.get(key, 0) + 1

    def erase(self, key: str) -> None:
        super().erase(key)
        with self.lock:
            self.versions.pop(key, None)

    def get_versioned(self, key: str) -> tuple[Any, str | None]:
        with self._lock:
            v = self._data.get(key)
            return (None, None) if v is None else (bytes(v), str(self.versions.get(key, 0)))

    def set_if_version(self, key: str, value: Any, version: str | None) -> None:
        with self._lock:
            cur = None if key not in self._data else str(self.versions.get(key, 0))
            if cur != version:
                raise conflict_error()(f"{key!r}: version {cur} is not {version}")
            self.set(key, value)

    def with_read_only(self, read_only: bool = True) -> AsyncMemoryStore:
        return self  # (the tests share one store and its counters across modes)

    def close(self) -> None:
        self._loop.close()
