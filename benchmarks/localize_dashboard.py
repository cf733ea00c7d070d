"""Make the dashboard that ``asv publish`` wrote work offline.

asv's pages load jQuery, flot, bootstrap, blueimp-md5 and stupidtable from public CDNs; a machine
without internet access (CI here, an air-gapped lab) then shows asv's "external dependencies
failed to load" page instead of the graphs.  This script copies those libraries from the
operating system's packages (Debian: ``libjs-jquery libjs-jquery-flot libjs-bootstrap
node-blueimp-md5 libjs-jquery-stupidtable``, installed by ``make bench``) into ``<html>/vendor/``
and points the pages' ``<script>``/``<link>`` tags at the copies.  Debian's flot build carries the
time, selection and categories plugins in its main file, so those tags are dropped; the
orderBars plugin (side-by-side bars in asv's parameter bar charts) has no packaged copy and is
dropped too: such bars are drawn overlapping.

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
TAG = re.compile(r"<(script|link)\b[^>]*?\b(?:src|href)=\"(https?://[^\"]+)\"[^>]*>(\s*</script>)?", re.S)


class LocalizeError(Exception):
    """A CDN reference this script has no local copy for, or a missing system file."""


def _rewrite(html: str, used: set[str]) -> str:
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

    return TAG.sub(repl, html)


def localize(html_dir: str, js_root: str = "/usr/share/javascript") -> list[str]:
    """Rewrite every page of ``html_dir``; returns the vendored files (relative to vendor/)."""
    used: set[str] = set()
    pages = [os.path.join(html_dir, f) for f in os.listdir(html_dir) if f.endswith(".html")]
    new = {}
    for page in pages:
        with open(page, encoding="utf-8") as f:
            new[page] = _rewrite(f.read(), used)
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
