"""Real servers on loopback for the remote-store tests (no mocks).

* ``moto_server`` (pytest fixture, session): moto's S3 server (``moto_server -H 127.0.0.1 -p
  PORT``) on a free port, killed at the end.  ``.endpoint``, ``.make_bucket(name=None)`` (a
  fresh bucket, its name), ``.env()`` (the AWS_* variables pointing at it, AWS_ALLOW_HTTP on),
  ``.storage_options()`` (s3fs-style keys).  ``s3_bucket`` (fixture): a fresh bucket per test.
* :class:`FaultProxy` (fixture ``s3_proxy``: one in front of moto per test): a threaded HTTP
  proxy on loopback that forwards every request to an upstream server and counts them.
  ``.endpoint``; ``.counts`` (requests per method), ``.bytes_out`` (response body bytes per
  method), ``.log`` (``(method, path, range header, status)`` per request), ``.max_active``
  (the most requests in flight at once), ``.requests(method)``; ``.reset()``;
  ``.latency`` (seconds added to each request); ``.inject(fault, times=1, method=None,
  match=None, delay=5.0)`` makes the next ``times`` matching requests fail with ``fault``: an
  HTTP status (``403``, ``404``, ``500``, ``503``, ...: an S3-style XML error body), ``"reset"``
  (the connection is reset with no response), ``"truncate"`` (the full Content-Length is
  announced, half the body sent, the connection closed) or ``"delay"`` (the request waits
  ``delay`` seconds first, e.g. longer than the client's timeout).  ``match`` is a substring of
  the request path; ``method`` e.g. ``"GET"``.  Injected requests are counted too.
* :class:`RangeHTTPServer` (fixture ``http_server``: serving ``tmp_path / "www"``): a plain
  threaded HTTP server for a directory that honours ``Range`` (``bytes=a-b``, ``a-``, ``-n``:
  206 with Content-Range; 416 when unsatisfiable) and HEAD, with the same counters.  Build it on
  a :class:`FaultProxy`-like counter so tests can assert request counts.
* ``s3_object_store(endpoint, bucket, prefix="", **kw)``: a zarrbolt ObjectStore on it.
"""

from __future__ import annotations

import collections
import contextlib
import http.client
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

# ---------------------------------------------------------------------------- plumbing
_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te", "trailer", "upgrade"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def _reset(sock: socket.socket) -> None:
    """Close ``sock`` with a TCP RST (SO_LINGER 0)."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()


class _Counting:
    """Request counters shared by the proxy and the HTTP server (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: collections.Counter = collections.Counter()
        self.bytes_out: collections.Counter = collections.Counter()
        self.log: list[tuple[str, str, str | None, int]] = []
        self.latency = 0.0
        self.active = 0
        self.max_active = 0

    @contextlib.contextmanager
    def in_flight(self):
        """Count a request as in flight (``.max_active``: the most at once since ``reset``)."""
        with self._lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            yield
        finally:
            with self._lock:
                self.active -= 1

    def record(self, method: str, path: str, rng: str | None, status: int, nbytes: int) -> None:
        with self._lock:
            self.counts[method] += 1
            self.bytes_out[method] += nbytes
            self.log.append((method, path, rng, status))

    def reset(self) -> None:
        with self._lock:
            self.counts.clear()
            self.bytes_out.clear()
            self.log.clear()
            self.max_active = self.active

    def requests(self, method: str | None = None) -> list[tuple[str, str, str | None, int]]:
        with self._lock:
            return [r for r in self.log if method is None or r[0] == method]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that gave up (timeout, Ctrl-C) closes its end: not the test's business
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)):
            super().handle_error(request, client_address)


def _serve(server: ThreadingHTTPServer) -> threading.Thread:
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    return t


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                handler.rfile.readline()
                return b"".join(parts)
            parts.append(handler.rfile.read(size))
            handler.rfile.readline()
    n = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(n) if n else b""


# ---------------------------------------------------------------------------- fault proxy
class _Rule:
    def __init__(self, fault: Any, times: int, method: str | None, match: str | None, delay: float):
        self.fault, self.left, self.method, self.match, self.delay = fault, times, method, match, delay


class FaultProxy(_Counting):
    """A counting, fault-injecting HTTP proxy on loopback in front of ``upstream``
    (``"http://127.0.0.1:PORT"``); see the module documentation."""

    def __init__(self, upstream: str):
        super().__init__()
        m = re.match(r"http://([^:/]+):(\d+)", upstream)
        if m is None:
            raise ValueError(f"upstream must be http://host:port, got {upstream!r}")
        self.upstream = (m.group(1), int(m.group(2)))
        self._rules: list[_Rule] = []
        self._server = _Server(("127.0.0.1", 0), _proxy_handler(self))
        self.port = self._server.server_address[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._thread = _serve(self._server)

    def inject(self, fault: Any, times: int = 1, method: str | None = None, match: str | None = None,
               delay: float = 5.0) -> None:
        with self._lock:
            self._rules.append(_Rule(fault, times, method, match, delay))

    def clear_faults(self) -> None:
        with self._lock:
            self._rules.clear()

    def _take_fault(self, method: str, path: str) -> _Rule | None:
        with self._lock:
            for r in self._rules:
                if r.left > 0 and (r.method in (None, method)) and (r.match is None or r.match in path):
                    r.left -= 1
                    return r
        return None

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _error_body(status: int) -> bytes:
    code = {403: "AccessDenied", 404: "NoSuchKey", 500: "InternalError", 503: "SlowDown"}.get(status, "Error")
    return (f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code>'
            f"<Message>injected by the test proxy</Message></Error>").encode()


def _proxy_handler(proxy: FaultProxy) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _handle(self) -> None:
            with proxy.in_flight():
                self._forward()

        def _forward(self) -> None:
            method, path = self.command, self.path
            body = _read_body(self)
            rng = self.headers.get("Range")
            if proxy.latency:
                time.sleep(proxy.latency)
            rule = proxy._take_fault(method, path)
            if rule is not None and rule.fault == "delay":
                time.sleep(rule.delay)
                rule = None
            if rule is not None and rule.fault == "reset":
                proxy.record(method, path, rng, 0, 0)
                self.close_connection = True
                _reset(self.connection)
                return
            if rule is not None and isinstance(rule.fault, int):
                data = b"" if method == "HEAD" else _error_body(rule.fault)
                proxy.record(method, path, rng, rule.fault, len(data))
                self.send_response(rule.fault)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            conn = http.client.HTTPConnection(*proxy.upstream, timeout=60)
            try:
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                conn.request(method, path, body=body if body or method in ("PUT", "POST") else None, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                status, rheaders = resp.status, resp.getheaders()
            finally:
                conn.close()
            truncate = rule is not None and rule.fault == "truncate" and len(data) > 1
            sent = data[: len(data) // 2] if truncate else data
            proxy.record(method, path, rng, status, 0 if method == "HEAD" else len(sent))
            self.send_response(status)
            for k, v in rheaders:
                if k.lower() not in _HOP and k.lower() != "content-length":
                    self.send_header(k, v)
            length = resp.getheader("Content-Length") if method == "HEAD" else str(len(data))
            if length is not None:
                self.send_header("Content-Length", length)
            self.end_headers()
            if method != "HEAD":
                self.wfile.write(sent)
            if truncate:  # end the stream early (a FIN, not a reset): a body shorter than announced
                self.wfile.flush()
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_WR)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

    return Handler


# ---------------------------------------------------------------------------- range HTTP server
class RangeHTTPServer(_Counting):
    """A threaded HTTP server for the files under ``root`` honouring Range requests; ``.url``."""

    def __init__(self, root: str | os.PathLike):
        super().__init__()
        self.root = Path(root)
        self._server = _Server(("127.0.0.1", 0), _file_handler(self))
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = _serve(self._server)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> RangeHTTPServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def parse_range(header: str, size: int) -> tuple[int, int] | None | str:
    """``(start, end)`` (end exclusive) of a single ``bytes=`` range against ``size`` bytes;
    None without a usable header (the whole value); ``"unsatisfiable"`` for a 416."""
    m = _RANGE.match(header.strip())
    if m is None or (m.group(1) == "" and m.group(2) == ""):
        return None
    a, b = m.group(1), m.group(2)
    if a == "":
        n = int(b)
        if n == 0:
            return "unsatisfiable"
        return max(0, size - n), size
    start = int(a)
    end = size if b == "" else min(int(b) + 1, size)
    if start >= size or (b != "" and int(b) < start):
        return "unsatisfiable"
    return start, end


def _file_handler(server: RangeHTTPServer) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _reply(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            rng = self.headers.get("Range")
            server.record(self.command, self.path, rng, status, 0 if self.command == "HEAD" else len(body))
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            if "Content-Length" not in headers:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if server.latency:
                time.sleep(server.latency)
            rel = urllib.request.url2pathname(self.path.split("?", 1)[0]).lstrip("/")
            path = (server.root / rel).resolve()
            if server.root.resolve() not in path.parents or not path.is_file():
                self._reply(404, b"not found", {})
                return
            data = path.read_bytes()
            size = len(data)
            rng = self.headers.get("Range")
            r = parse_range(rng, size) if rng else None
            if r == "unsatisfiable":
                self._reply(416, b"", {"Content-Range": f"bytes */{size}"})
                return
            if r is None:
                self._reply(200, data, {"Accept-Ranges": "bytes", "Content-Length": str(size)})
                return
            a, b = r
            body = data[a:b]
            self._reply(206, body, {"Content-Range": f"bytes {a}-{b - 1}/{size}", "Accept-Ranges": "bytes",
                                    "Content-Length": str(len(body))})

        do_HEAD = do_GET

    return Handler


# ---------------------------------------------------------------------------- moto
class MotoServer:
    """A running moto S3 server (see the module documentation)."""

    def __init__(self, proc: subprocess.Popen, port: int):
        self.proc = proc
        self.port = port
        self.endpoint = f"http://127.0.0.1:{port}"

    def make_bucket(self, name: str | None = None) -> str:
        name = name or f"zb-{uuid.uuid4().hex[:12]}"
        req = urllib.request.Request(f"{self.endpoint}/{name}", method="PUT")
        with urllib.request.urlopen(req, timeout=30) as r:
            r.read()
        return name

    def env(self, endpoint: str | None = None) -> dict[str, str]:
        return {"AWS_ENDPOINT_URL": endpoint or self.endpoint, "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}

    def storage_options(self, endpoint: str | None = None) -> dict[str, Any]:
        return {"endpoint_url": endpoint or self.endpoint, "key": "testing", "secret": "testing",
                "client_kwargs": {"region_name": "us-east-1"}}


def start_moto() -> MotoServer:
    exe = Path(sys.executable).with_name("moto_server")
    if not exe.exists():
        found = shutil.which("moto_server")
        if found is None:
            pytest.skip("moto_server (pip install 'moto[server]') is not installed")
        exe = Path(found)
    port = free_port()
    proc = subprocess.Popen([str(exe), "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port)
    except RuntimeError:
        proc.kill()
        raise
    return MotoServer(proc, port)


def stop_moto(server: MotoServer) -> None:
    server.proc.terminate()
    try:
        server.proc.wait(10)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait(10)


@pytest.fixture(scope="session")
def moto_server():
    server = start_moto()
    try:
        yield server
    finally:
        stop_moto(server)


@pytest.fixture
def s3_bucket(moto_server) -> str:
    return moto_server.make_bucket()


@pytest.fixture
def s3_proxy(moto_server):
    with FaultProxy(moto_server.endpoint) as proxy:
        yield proxy


@pytest.fixture
def http_server(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    with RangeHTTPServer(root) as server:
        yield server


def s3_object_store(endpoint: str, bucket: str, prefix: str = "", *, timeout: str | None = None, **kw: Any) -> Any:
    """A zarrbolt ObjectStore on ``bucket`` at ``endpoint`` (moto or a proxy in front of it),
    made the way URLs are (obstore's own retries off)."""
    from zarrbolt.storage.urls import open_url

    opts: dict[str, Any] = {"endpoint_url": endpoint, "key": "testing", "secret": "testing", "region": "us-east-1"}
    if timeout is not None:
        opts["timeout"] = timeout
    url = f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}"
    store, _ = open_url(url, opts)
    if kw:
        from zarrbolt.storage.object_store import ObjectStore

        store = ObjectStore(store.store, read_only=store.read_only, **kw)
    return store


def child_read(store: Any, queue: Any) -> None:
    """In a child process: ``store.get("k", bytes 0-8)`` put on ``queue`` as ``("ok", bytes)``,
    or ``("StoreError", message)``."""
    from zarrbolt.errors import StoreError
    from zarrbolt.storage import RangeByteRequest

    try:
        queue.put(("ok", store.get("k", RangeByteRequest(0, 8))))
    except StoreError as e:
        queue.put(("StoreError", str(e)))
