"""Make the dashboard that ``asv publish`` wrote work offline.

asv's pages load jQuery, flot, bootstrap, blueimp-md5 and stupidtable from public CDNs; a machine
without internet access (CI here, an air-gapped lab) then shows asv's "external dependencies
failed to load" page instead of the graphs.  This script copies those libraries from the
operating system's packages (Debian: ``libjs-jquery libjs-jquery-flot libjs-bootstrap
node-blueimp-md5 libjs-jquery-stupidtable``, installed by ``make bench``) into ``<html>/vendor/``
and points the pages' ``<script>``/``<link>`` tags at the copies.  Debian's flot build carries the
time, selection and categories plugins in its main file, so those tags are dropped; the
orderBars plugin (side-by-side bars in asv's parameter bar charts) has no packaged copy and is
dropped too: such bars are drawn overlapping.  Debian's flot is version 4, whose main file also
carries an axis-label plugin (asv's own copy of the 0.8 one is then dropped, or every axis label
is drawn twice) and draws the legend in SVG (a small style sheet, ``vendor/flot4-legend.css``,
gives it the white background that flot 0.8 drew).

    python benchmarks/localize_dashboard.py benchmarks/html [--js-root /usr/share/javascript]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys

# CDN file name -> path under the JavaScript root (None: not needed, the tag is dropped)
LIBS: dict[str, str | None] = {
    "jquery-3.3.1.min.js": "jquery/jquery.min.js",
    "jquery.flot.min.js": "jquery-flot/jquery.flot.min.js",
    "jquery.flot.time.min.js": None,
    "jquery.flot.selection.min.js": None,
    "jquery.flot.categories.min.js": None,
    "jquery.flot.orderBars.js": None,
    "stupidtable.min.js": "jquery-stupidtable/stupidtable.min.js",
    "md5.min.js": "blueimp-md5/md5.min.js",
    "bootstrap.min.js": "bootstrap/js/bootstrap.min.js",
    "bootstrap.min.css": "bootstrap/css/bootstrap.min.css",
}
# copied beside what needs them (bootstrap's CSS loads ../fonts/*)
EXTRA_DIRS = ["bootstrap/fonts"]
LEGEND_CSS = """/* flot 4 draws the legend as SVG; without a fill its background is black (flot 0.8: white) */
.legendLayer .background { fill: rgba(255, 255, 255, 0.85); stroke: rgba(0, 0, 0, 0.85); stroke-width: 1; }
"""
ASV_AXISLABELS = re.compile(r'<script[^>]*src="jquery\.flot\.axislabels\.js"[^>]*>\s*</script>')
TAG = re.compile(r"<(script|link)\b[^>]*?\b(?:src|href)=\"(https?://[^\"]+)\"[^>]*>(\s*</script>)?", re.S)


class LocalizeError(Exception):
    """A CDN reference this script has no local copy for, or a missing system file."""


def _rewrite(html: str, used: set[str], flot4: bool) -> str:
    def repl(m: re.Match) -> str:
        kind, url = m.group(1), m.group(2)
        name = url.rsplit("/", 1)[-1]
        if name not in LIBS:
            raise LocalizeError(f"no local copy known for {url}: add it to LIBS in {__file__}")
        rel = LIBS[name]
        if rel is None:
            return ""
        used.add(rel)
        if kind == "script":
            return f'<script src="vendor/{rel}" onerror="js_load_failure()"></script>'
        return f'<link rel="stylesheet" href="vendor/{rel}">'

    out = TAG.sub(repl, html)
    if flot4 and "vendor/jquery-flot/" in out and "vendor/flot4-legend.css" not in out:
        out = ASV_AXISLABELS.sub("", out)
        out = out.replace("</head>", '<link rel="stylesheet" href="vendor/flot4-legend.css">\n</head>', 1)
    return out


def _is_flot4(path: str) -> bool:
    """Flot 4 bundles carry the axisLabels plugin (flot 0.8 had none)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return re.search(r"name\s*:\s*[\"']axisLabels[\"']", f.read()) is not None


def localize(html_dir: str, js_root: str = "/usr/share/javascript") -> list[str]:
    """Rewrite every page of ``html_dir``; returns the vendored files (relative to vendor/)."""
    used: set[str] = set()
    flot = os.path.join(js_root, str(LIBS["jquery.flot.min.js"]))
    flot4 = os.path.isfile(flot) and _is_flot4(flot)
    pages = [os.path.join(html_dir, f) for f in os.listdir(html_dir) if f.endswith(".html")]
    new = {}
    for page in pages:
        with open(page, encoding="utf-8") as f:
            new[page] = _rewrite(f.read(), used, flot4)
    vendor = os.path.join(html_dir, "vendor")
    for rel in sorted(used):
        src = os.path.join(js_root, rel)
        if not os.path.isfile(src):
            raise LocalizeError(f"{src} is missing (Debian: apt-get install libjs-jquery libjs-jquery-flot "
                                "libjs-bootstrap node-blueimp-md5 libjs-jquery-stupidtable)")
        os.makedirs(os.path.dirname(os.path.join(vendor, rel)), exist_ok=True)
        shutil.copyfile(os.path.realpath(src), os.path.join(vendor, rel))
    for rel in EXTRA_DIRS:
        src = os.path.join(js_root, rel)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(vendor, rel), dirs_exist_ok=True)
    if flot4:
        with open(os.path.join(vendor, "flot4-legend.css"), "w", encoding="utf-8") as f:
            f.write(LEGEND_CSS)
    for page, text in new.items():  # pages last: a failure above leaves them untouched
        with open(page, "w", encoding="utf-8") as f:
            f.write(text)
    return sorted(used)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("html_dir")
    p.add_argument("--js-root", default="/usr/share/javascript")
    a = p.parse_args(argv)
    try:
        files = localize(a.html_dir, a.js_root)
    except LocalizeError as e:
        print(f"localize_dashboard: {e}", file=sys.stderr)
        return 1
    print(f"localize_dashboard: {len(files)} libraries in {a.html_dir}/vendor/ ({', '.join(files)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
