"""The regression check behind ``make bench-check``: ``asv continuous`` between a base commit and
HEAD, failing when any benchmark got slower by more than ``--factor`` (asv's statistics decide
what is a significant change), with asv's comparison table printed.

``asv continuous`` stops before its table when a benchmark *fails* on either commit (a benchmark
new in HEAD that the base cannot import, say).  The results of both commits are saved by then,
so this script then prints ``asv compare`` of the two and applies the same rule to it: a row
marked worse (``+``) or newly failing (``!``) fails the check.

    python benchmarks/check_regressions.py --base main~1 [--factor 1.1] [-- extra asv args]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


CHECK_CONF = os.path.join(HERE, ".asv-check.conf.json")


def write_check_config() -> str:
    """asv.conf.json with its own results directory (results-check/, not committed): a check of a
    branch never adds its commits to the dashboard's history.  The environments (env/, with
    their built wheels) are shared with ``make bench``."""
    with open(os.path.join(HERE, "asv.conf.json"), encoding="utf-8") as f:
        conf = json.loads("".join(line for line in f if not line.lstrip().startswith("//")))
    conf["results_dir"] = "results-check"
    conf["html_dir"] = "html-check"
    with open(CHECK_CONF, "w", encoding="utf-8") as f:
        json.dump(conf, f, indent=2)
    return CHECK_CONF


def _asv(args: list[str]) -> tuple[int, str]:
    """Run asv with the check configuration, echoing its output; (exit status, output)."""
    cmd = [sys.executable, "-m", "asv", *args[:1], "--config", CHECK_CONF, *args[1:]]
    print("+", " ".join(cmd), flush=True)
    proc = subprocess.Popen(cmd, cwd=HERE, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        print(line, end="", flush=True)
        lines.append(line)
    return proc.wait(), "".join(lines)


def _rev(name: str) -> str:
    out = subprocess.run(["git", "rev-parse", "--verify", f"{name}^{{commit}}"], cwd=HERE, text=True,
                         capture_output=True)
    if out.returncode:
        sys.exit(f"bench-check: {name!r} is not a commit: {out.stderr.strip()}")
    return out.stdout.strip()


def regressions_in_table(table: str) -> list[str]:
    """The rows of an ``asv compare`` table that count as regressions: marked ``+`` (slower by
    more than the factor, significantly) or ``!`` (failing now, working in the base)."""
    rows = []
    for line in table.splitlines():
        text = line.strip()
        if text.startswith("|"):  # markdown table (asv >= 0.6)
            first = text.strip("|").split("|")[0].strip()
        else:  # plain columns
            first = text.split()[0] if text else ""
        if first in ("+", "!"):
            rows.append(line)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", default="main~1", help="the commit HEAD is compared with (default main~1)")
    p.add_argument("--head", default="HEAD")
    p.add_argument("--factor", default="1.1", help="slower by more than this factor fails (default 1.1)")
    p.add_argument("--machine", default="zarrbolt-ci")
    p.add_argument("asv_args", nargs="*", help="more arguments for asv continuous (after --)")
    a = p.parse_args(argv)
    base, head = _rev(a.base), _rev(a.head)
    if base == head:
        sys.exit(f"bench-check: base {a.base} and head {a.head} are the same commit {base[:8]}")
    write_check_config()
    common = ["--factor", a.factor, "--machine", a.machine, "--split"]
    what = f"{a.head} {head[:8]} against {a.base} {base[:8]}, factor {a.factor}"
    rc, out = _asv(["continuous", *common, *a.asv_args, base, head])
    if "PERFORMANCE DECREASED" in out:
        print(f"bench-check: FAILED: benchmarks slower ({what})")
        return 1
    if rc == 0:
        print(f"bench-check: passed ({what})")
        return 0
    if rc != 2:  # no benchmark selected, a commit that does not build, a bad argument
        print(f"bench-check: asv continuous failed (exit status {rc})")
        return rc
    # asv continuous returns 2 when a benchmark failed on either commit, before its table
    rc, out = _asv(["compare", *common, base, head])
    if rc:
        return rc
    bad = regressions_in_table(out)
    print(f"bench-check: {'FAILED' if bad else 'passed'}: {len(bad)} regression(s), some benchmarks failed "
          f"on one of the commits ({what})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
