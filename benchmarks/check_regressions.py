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
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _asv(args: list[str], capture: bool = False) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "asv", *args]
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=HERE, text=True, capture_output=capture)


def _rev(name: str) -> str:
    out = subprocess.run(["git", "rev-parse", "--verify", f"{name}^{{commit}}"], cwd=HERE, text=True,
                         capture_output=True)
    if out.returncode:
        sys.exit(f"bench-check: {name!r} is not a commit: {out.stderr.strip()}")
    return out.stdout.strip()


def regressions_in_table(table: str) -> list[str]:
    """The rows of an ``asv compare`` table that count as regressions: marked ``+`` (slower by
    more than the factor, significantly) or ``!`` (failing now, working in the base)."""
    return [line for line in table.splitlines() if line[:1] in ("+", "!")]


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
    common = ["--factor", a.factor, "--machine", a.machine, "--split"]
    rc = _asv(["continuous", *common, *a.asv_args, base, head]).returncode
    if rc in (0, 1):
        print(f"bench-check: {'FAILED, slower by more than ' + a.factor + 'x' if rc else 'passed'} "
              f"({a.head} {head[:8]} against {a.base} {base[:8]})")
        return rc
    # asv continuous returns 2 when a benchmark failed on either commit, before its table
    out = _asv(["compare", *common, base, head], capture=True)
    print(out.stdout, end="")
    if out.returncode:
        print(out.stderr, file=sys.stderr)
        return out.returncode
    bad = regressions_in_table(out.stdout)
    print(f"bench-check: some benchmarks failed to run on one of the commits; {len(bad)} regression(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
