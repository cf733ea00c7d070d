"""Interpreter exits after S3 writes through obstore, N times: ``zarrbolt cp`` of a small array
into moto_server (on loopback) in a fresh process per run; counts runs that did not exit 0 (an
abort at exit is status -6).  ``--no-drain`` unregisters zarrbolt's exit drain
(``zarrbolt.storage._async.drain_at_exit``) to show what it prevents.

    PYTHONPATH=src python tools/exit_abort_loop.py [--runs 100] [--no-drain]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRIVER = """import atexit, sys
from zarrbolt.cli import main
rc = main(sys.argv[2:])
if sys.argv[1] == "no-drain":
    from zarrbolt.storage import _async
    atexit.unregister(_async.drain_at_exit)
sys.exit(rc)
"""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--no-drain", action="store_true")
    args = p.parse_args()
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "src")]
    from remote_helpers import start_moto, stop_moto

    import zarrbolt as zb

    moto = start_moto()
    try:
        d = tempfile.mkdtemp(prefix="zb-exit-")
        src = os.path.join(d, "a.zarr")
        a = zb.create_array(src, shape=(32, 64, 64), dtype="uint16", chunks=(8, 16, 16))
        a[...] = 7
        bucket = moto.make_bucket()
        env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), **moto.env())
        mode = "no-drain" if args.no_drain else "drain"
        bad = []
        for i in range(args.runs):
            r = subprocess.run([sys.executable, "-c", DRIVER, mode, "cp", src, f"s3://{bucket}/r{i}.zarr",
                                "--shards", "16,64,64"], env=env, capture_output=True, text=True, check=False)
            if r.returncode != 0:
                bad.append((i, r.returncode, r.stderr[-200:]))
        print(f"{mode}: {args.runs} runs, {len(bad)} did not exit 0")
        for b in bad[:5]:
            print("  ", b)
        return 1 if bad and not args.no_drain else 0
    finally:
        stop_moto(moto)


if __name__ == "__main__":
    sys.exit(main())
