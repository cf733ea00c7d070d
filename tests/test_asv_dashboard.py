"""The asv regression dashboard (``make bench``; docs/benchmarks.md).

The committed results (benchmarks/results/) are published with ``asv publish`` into a temporary
directory, made offline-capable by benchmarks/localize_dashboard.py, served by a real HTTP server
on loopback and opened in headless Chromium: a benchmark's graph page must draw its series
(coloured pixels in flot's canvas, read back through a same-origin probe page), with axis tick
labels, for results of several commits of ``main``."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
MACHINE = "zarrbolt-ci"
GRAPH = "bench_io.Read.time_full"


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM = _chromium()


def _browser_env(home: Path) -> dict[str, str]:
    """The environment for Chromium: the suite's, without the sanitizer runtimes that
    ``make asan-test``/``tsan-test`` preload into Python (Chromium under them spins)."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS")}
    env["HOME"] = str(home)
    return env

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium not installed (`make browser`: apt-get install chromium)")

# Loads the dashboard in an iframe (same origin, so its canvas can be read), waits for flot's
# canvas of the main graph, then writes what it found into its own DOM for --dump-dom.
PROBE = """<!DOCTYPE html><html><body>
<iframe id="f" src="index.html#%(graph)s?show-legend=false" width="1400" height="1000"></iframe>
<pre id="probe-result">pending</pre>
<script>
var tries = 0;
function probe() {
  var doc = document.getElementById("f").contentDocument;
  var c = doc && doc.querySelector("#main-graph canvas.flot-base");
  if (!c || c.width === 0) { if (++tries < 200) { setTimeout(probe, 100); } return; }
  var px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data, coloured = 0;
  for (var i = 0; i < px.length; i += 4) {
    var r = px[i], g = px[i + 1], b = px[i + 2];
    if (px[i + 3] > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 60) coloured++;
  }
  var labels = [];
  doc.querySelectorAll("#main-graph .flot-tick-label").forEach(function (e) { labels.push(e.textContent); });
  document.getElementById("probe-result").textContent = JSON.stringify({
    title: doc.title, canvas: [c.width, c.height], coloured: coloured, tick_labels: labels,
    error_page: doc.location.pathname.indexOf("error.html") >= 0});
}
setTimeout(probe, 300);
</script></body></html>
"""


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _results() -> list[Path]:
    return sorted((BENCH / "results" / MACHINE).glob("*-virtualenv-*.json"))


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    out = tmp_path_factory.mktemp("asv-html")
    pub = subprocess.run([sys.executable, "-m", "asv", "publish", "--no-pull", "--html-dir", str(out)], cwd=BENCH,
                         capture_output=True, text=True, timeout=600)
    assert pub.returncode == 0, pub.stdout + pub.stderr
    loc = subprocess.run([sys.executable, str(BENCH / "localize_dashboard.py"), str(out)], capture_output=True,
                         text=True, timeout=120)
    assert loc.returncode == 0, loc.stdout + loc.stderr
    (out / "probe.html").write_text(PROBE % {"graph": GRAPH})
    srv = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(out)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield out, f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def _dump_dom(url: str, tmp_path: Path) -> str:
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--no-first-run", f"--user-data-dir={tmp_path / 'chromium-profile'}", "--virtual-time-budget=20000",
           "--dump-dom", url]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=_browser_env(tmp_path))
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout


def test_committed_results_cover_several_commits_of_main():
    files = _results()
    assert len(files) >= 2, f"benchmarks/results/{MACHINE}/ holds results of {len(files)} commit(s)"
    hashes = [f.name.split("-")[0] for f in files]
    main = subprocess.run(["git", "rev-list", "--first-parent", "main"], cwd=ROOT, capture_output=True, text=True)
    if main.returncode == 0:  # a clone with a main branch: the measured commits are on it
        on_main = [h for h in hashes if any(c.startswith(h) for c in main.stdout.split())]
        assert len(on_main) >= 2, (hashes, "not on main's first-parent history")
    for f in files:
        r = json.loads(f.read_text())
        assert r["params"]["machine"] == MACHINE
        assert any(v is not None for v in r["results"].values()), f"{f.name} has no result"


def test_published_index_lists_the_suite(dashboard):
    out, _ = dashboard
    index = json.loads((out / "index.json").read_text())
    names = set(index["benchmarks"])
    for prefix in ("bench_io.Read.", "bench_io.Write.", "bench_codecs.Chain.", "bench_kernels.", "bench_numeric."):
        assert any(n.startswith(prefix) for n in names), (prefix, sorted(names)[:20])
    assert len(index["revision_to_hash"]) >= 2
    graph = next(p for p in (out / "graphs").rglob(f"{GRAPH}.json") if "summary" not in p.parts)
    series = json.loads(graph.read_text())  # [[revision, [value per layout]], ...]
    points = [p for p in series if p[1] is not None and any(v is not None for v in p[1])]
    assert len(points) >= 2, series  # a line, not a single point


def test_published_pages_load_nothing_from_the_internet(dashboard):
    out, _ = dashboard
    for page in out.glob("*.html"):
        text = page.read_text()
        assert not re.search(r'<(script|link)[^>]+(src|href)="https?://', text), page.name
    assert (out / "vendor" / "jquery-flot" / "jquery.flot.min.js").stat().st_size > 10_000


@needs_chromium
def test_graph_page_renders_in_headless_chromium(dashboard, tmp_path):
    _, url = dashboard
    dom = _dump_dom(f"{url}/index.html#{GRAPH}", tmp_path)
    assert "failed to load" not in dom, "asv's error page: a JavaScript library did not load"
    assert re.search(r'<div id="main-graph"', dom)
    assert re.search(r'<canvas class="flot-base"', dom), "no flot canvas in the graph page"
    ticks = re.findall(r'class="flot-tick-label[^"]*"[^>]*>([^<]+)<', dom)
    assert len(ticks) >= 3, ticks
    for layout in ("a", "b", "c", "d", "e"):  # the parameter selector of the graph page
        assert re.search(rf">\s*{layout}\s*<", dom), layout


@needs_chromium
def test_graph_canvas_draws_the_series(dashboard, tmp_path):
    _, url = dashboard
    dom = _dump_dom(f"{url}/probe.html", tmp_path)
    m = re.search(r'<pre id="probe-result">(.*?)</pre>', dom, re.S)
    assert m and m.group(1) != "pending", "the graph's canvas never appeared"
    res = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert not res["error_page"], res
    assert res["canvas"][0] > 100 and res["canvas"][1] > 100, res
    # the series lines and points are coloured (the legend is off); axes, grid and text are grey
    # or black.  Five layouts' points on one commit colour ~150 pixels; lines between commits more
    assert res["coloured"] > 1000, res
    assert len(res["tick_labels"]) >= 3, res


# the two tables `asv compare --split` prints (markdown), as asv 0.6 writes them
COMPARE = """Benchmarks that have improved:

| Change   | Before [f62b8131] <main~1>   | After [59f6761c] <h-bench>   |   Ratio | Benchmark (Parameter)                      |
|----------|------------------------------|------------------------------|---------|--------------------------------------------|
| -        | 792±0μs                      | 526±0μs                      |    0.66 | bench_kernels.StridedScatter.time_numpy    |

Benchmarks that have got worse:

| Change   | Before [f62b8131] <main~1>   | After [59f6761c] <h-bench>   | Ratio   | Benchmark (Parameter)            |
|----------|------------------------------|------------------------------|---------|----------------------------------|
| !        | 6.36±0μs                     | failed                       | n/a     | bench_zz_tmp.time_fail_on_head   |
| +        | 11.3±0ms                     | 20.1±0ms                     | 1.77    | bench_zz_tmp.time_slower_on_head |
"""


def test_regression_rows_of_an_asv_compare_table():
    sys.path.insert(0, str(BENCH))
    try:
        from check_regressions import regressions_in_table
    finally:
        sys.path.remove(str(BENCH))
    rows = regressions_in_table(COMPARE)
    assert [r.split("|")[-2].strip() for r in rows] == ["bench_zz_tmp.time_fail_on_head",
                                                        "bench_zz_tmp.time_slower_on_head"]
    plain = "       before           after         ratio\n+      11.3±0ms        20.1±0ms     1.77  x.time_y\n"
    assert len(regressions_in_table(plain)) == 1
    assert regressions_in_table(COMPARE.split("worse")[0]) == []
