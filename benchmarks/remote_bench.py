"""Remote reads: zarrbolt against zarr-python (obstore ``ObjectStore``) and tensorstore (s3 driver)
on a real S3 API server (moto_server on loopback) behind a proxy that adds a fixed latency to
every request.

    PYTHONPATH=src .venv-ref/bin/python benchmarks/remote_bench.py [--latency 10 50] [--repeats 3]

zarr-python writes two uint16 volumes (128 x 256 x 512, blosc zstd + bitshuffle): ``sharded``
(32^3 inner chunks in 64 x 128 x 256 shards) and ``chunked`` (64^3 chunks).  Each system then
reads, in a fresh process per (system, latency), the workloads

- ``roi``: a 40 x 100 x 150 region off the chunk grid,
- ``plane``: one z plane (256 x 512),
- ``block``: one aligned 64^3 block,
- ``full``: the whole volume,

taking the best of ``--repeats`` runs (the first read of each workload is a warm-up: metadata
and, for zarrbolt, shard indexes cached, as in a real session).  Every result is checked against
the data.  The proxy counts GET requests and bytes per workload (from the last run).  Prints one
table; ``--json`` writes the numbers.

On a small machine the S3 server and the proxy share the CPU with the client; compare systems
within one run, not across machines.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPE = (128, 256, 512)
WORKLOADS = {
    "roi": (slice(20, 60), slice(70, 170), slice(200, 350)),
    "plane": (77, slice(None), slice(None)),
    "block": (slice(64, 128), slice(128, 192), slice(256, 320)),
    "full": (slice(None),) * 3,
}
CREDS = dict(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_REGION="us-east-1",
             AWS_DEFAULT_REGION="us-east-1", AWS_ALLOW_HTTP="true")


def volume() -> np.ndarray:
    rng = np.random.default_rng(3)
    return (rng.integers(0, 64, SHAPE) + np.arange(SHAPE[2])[None, None, :] * 7).astype("uint16")


# ---------------------------------------------------------------------------- the latency proxy
PROXY = r'''
import http.client, json, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
listen, upstream, latency = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]) / 1000
stats, lock = {}, threading.Lock()
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def go(self):
        if self.path.startswith("/__stats"):
            body = json.dumps(stats).encode()
            if self.command == "POST":
                with lock: stats.clear()
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
            self.wfile.write(body); return
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        time.sleep(latency)
        c = http.client.HTTPConnection("127.0.0.1", upstream, timeout=120)
        c.request(self.command, self.path, body=body,
                  headers={k: v for k, v in self.headers.items() if k.lower() not in ("connection", "keep-alive")})
        r = c.getresponse(); data = r.read()
        with lock:
            s = stats.setdefault(self.command, [0, 0]); s[0] += 1; s[1] += len(data)
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"): self.send_header(k, v)
        self.send_header("Content-Length", str(len(data))); self.end_headers()
        if self.command != "HEAD": self.wfile.write(data)
        c.close()
    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = go
ThreadingHTTPServer(("127.0.0.1", listen), H).serve_forever()
'''


def free_port() -> int:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait(port: int) -> None:
    import socket

    for _ in range(400):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


def proxy_stats(port: int, reset: bool = False) -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/__stats", method="POST" if reset else "GET")
    return json.loads(urllib.request.urlopen(req).read() or b"{}")


# ---------------------------------------------------------------------------- one system (a child)
def opener(system: str, kind: str, endpoint: str):
    if system == "zarrbolt":
        import zarrbolt

        a = zarrbolt.open_array(f"s3://bench/{kind}.zarr", mode="r")
        return lambda sel: a[sel]
    if system == "zarr-python":
        import obstore.store
        import zarr

        st = zarr.storage.ObjectStore(obstore.store.S3Store(
            "bench", endpoint=endpoint, access_key_id="testing", secret_access_key="testing", region="us-east-1",
            client_options={"allow_http": True}), read_only=True)
        a = zarr.open_array(st, path=f"{kind}.zarr", mode="r")
        return lambda sel: a[sel]
    import tensorstore as ts

    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "s3", "bucket": "bench", "path": f"{kind}.zarr/",
                                                "endpoint": endpoint, "aws_region": "us-east-1"}}).result()
    return lambda sel: t[sel].read().result()


def child(system: str, kind: str, endpoint: str, proxy_port: int, repeats: int) -> None:
    read = opener(system, kind, endpoint)
    data = volume()
    out = {}
    for name, sel in WORKLOADS.items():
        np.testing.assert_array_equal(np.asarray(read(sel)), data[sel])  # warm-up and check
        best = float("inf")
        for _ in range(repeats):
            proxy_stats(proxy_port, reset=True)
            t0 = time.perf_counter()
            read(sel)
            best = min(best, time.perf_counter() - t0)
        get = proxy_stats(proxy_port).get("GET", [0, 0])
        out[name] = {"s": best, "gets": get[0], "bytes": get[1]}
    print(json.dumps(out))


# ---------------------------------------------------------------------------- the driver
def write_volumes(endpoint: str) -> None:
    import s3fs
    import zarr

    fs = s3fs.S3FileSystem(key="testing", secret="testing",
                           client_kwargs={"endpoint_url": endpoint, "region_name": "us-east-1"})
    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/bench", method="PUT")).read()  # the bucket
    data = volume()
    blosc = zarr.codecs.BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle", typesize=2)
    for kind, kw in (("sharded", dict(chunks=(32, 32, 32), shards=(64, 128, 256))), ("chunked", dict(chunks=(64, 64, 64)))):
        a = zarr.create_array(zarr.storage.FsspecStore(fs, path=f"bench/{kind}.zarr"), shape=SHAPE, dtype="uint16",
                              compressors=[blosc], fill_value=0, **kw)
        a[...] = data


def systems() -> list[str]:
    import importlib.util

    have = ["zarrbolt"]
    if importlib.util.find_spec("zarr") and importlib.util.find_spec("obstore"):
        have.append("zarr-python")
    if importlib.util.find_spec("tensorstore"):
        have.append("tensorstore")
    return have


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", type=float, nargs="+", default=[10.0, 50.0], help="ms added per request")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    moto = os.path.join(os.path.dirname(sys.executable), "moto_server")
    pm = free_port()
    procs = [subprocess.Popen([moto, "-H", "127.0.0.1", "-p", str(pm)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)]
    results: dict = {}
    try:
        wait(pm)
        write_volumes(f"http://127.0.0.1:{pm}")
        for lat in args.latency:
            pl = free_port()
            procs.append(subprocess.Popen([sys.executable, "-c", PROXY, str(pl), str(pm), str(lat)]))
            wait(pl)
            endpoint = f"http://127.0.0.1:{pl}"
            env = dict(os.environ, **CREDS, AWS_ENDPOINT_URL=endpoint, AWS_ENDPOINT=endpoint)
            for kind in ("sharded", "chunked"):
                for system in systems():
                    r = subprocess.run([sys.executable, __file__, "--child", system, kind, endpoint, str(pl),
                                        str(args.repeats)], capture_output=True, text=True, env=env, timeout=1200)
                    if r.returncode != 0:
                        tail = r.stderr.strip().splitlines()[-1:] or ["failed"]
                        print(f"{system} {kind} @{lat:g} ms: {tail[0][:160]}", file=sys.stderr)
                        continue
                    results[f"{kind}/{lat:g}/{system}"] = json.loads(r.stdout.strip().splitlines()[-1])
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=10)
    print(f"{'volume':8} {'latency':>7} {'workload':8} " + " ".join(f"{s:>22}" for s in systems()))
    for lat in args.latency:
        for kind in ("sharded", "chunked"):
            for name in WORKLOADS:
                cells = []
                for s in systems():
                    v = results.get(f"{kind}/{lat:g}/{s}", {}).get(name)
                    cells.append(f"{v['s'] * 1e3:8.1f} ms {v['gets']:4d} GET" if v else f"{'-':>22}")
                print(f"{kind:8} {lat:5g}ms {name:8} " + " ".join(f"{c:>22}" for c in cells))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
