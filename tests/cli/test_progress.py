"""Progress of ``zarrbolt cp`` / ``verify`` / ``pyramid`` as a user sees it: the commands run in a
child process whose stderr is a pseudo-terminal (the ``pty`` module), with and without tqdm, and
with stderr not a terminal (quiet unless ``--progress``).

The copy is of one streaming block (the whole array fits ``--max-memory``): its progress must
still move, piece by piece as the block is read and shard by shard as it is written.  The test
array is 16 MiB, each redraw shown (``ZARRBOLT_PROGRESS_INTERVAL=0``); the issue's 512 MiB check,
with the default redraw interval::

    ZARRBOLT_PTY_PROGRESS_MIB=512 PYTHONPATH=src python -m pytest -q tests/cli/test_progress.py -k pty_cp
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time

import numpy as np
import pytest
from cli_helpers import SRC

import zarrbolt as zb

MIB = int(os.environ.get("ZARRBOLT_PTY_PROGRESS_MIB", "16"))
NO_TQDM = "import sys; sys.modules['tqdm'] = None; from zarrbolt.cli import main; sys.exit(main())"
WITH_CLI = "import sys; from zarrbolt.cli import main; sys.exit(main())"


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env["COLUMNS"] = "120"
    if MIB <= 64:  # a small array copies in a fraction of a second: show every redraw
        env["ZARRBOLT_PROGRESS_INTERVAL"] = "0"
    env.update(extra)
    return env


def run_in_pty(code: str, *args: str, timeout: float = 600) -> tuple[int, str, str]:
    """``python -c code ARGS`` with stderr on a pseudo-terminal: (status, stdout, terminal output)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=slave,
                            stdin=subprocess.DEVNULL, env=_env())
    os.close(slave)
    seen = bytearray()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    out = proc.stdout.read().decode() if proc.stdout else ""
    return proc.wait(timeout=60), out, seen.decode(errors="replace")


def percents(text: str) -> list[int]:
    return [int(m) for m in re.findall(r"(\d{1,3})%", text)]


@pytest.fixture(scope="module")
def v2_volume(tmp_path_factory):
    """A Zarr v2 array of MIB MiB (uint16, 64-deep z slabs of 1024 x ... pixels)."""
    root = tmp_path_factory.mktemp("progress") / "exp_v2.zarr"
    x = 512 if MIB <= 64 else 1024
    z = MIB * (1 << 20) // (2 * x * x)
    a = zb.create_array(str(root), shape=(z, x, x), chunks=(min(z, 16), x // 4, x // 4), dtype="uint16", zarr_format=2,
                        compressors={"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 1})
    rng = np.random.default_rng(1)
    for k in range(0, z, 16):
        a[k:k + 16] = rng.integers(100, 4000, size=(min(16, z - k), x, x), dtype=np.uint16)
    return root, (min(z, 16), x // 2, x // 2)


@pytest.mark.parametrize("code", [WITH_CLI, NO_TQDM], ids=["tqdm", "no-tqdm"])
def test_pty_cp_of_one_block_shows_progress_that_moves(v2_volume, tmp_path, code):
    if code == WITH_CLI:
        pytest.importorskip("tqdm")
    src, shards = v2_volume
    rc, out, term = run_in_pty(code, "cp", str(src), str(tmp_path / "v3.zarr"), "--shards",
                               ",".join(map(str, shards)), "--compressor", "blosc-zstd:3")
    assert rc == 0, term
    values = sorted(set(percents(term)))
    assert len(values) >= 5 and values[-1] == 100 and values[0] < 50, term[-2000:]
    assert "shard(s)/chunk(s) stored" in out
    if code == NO_TQDM:  # the plain line, redrawn in place
        assert "\r/:" in term and "shards " in term and "MB/s" in term


def test_pty_verify_and_pyramid_show_progress(v2_volume, tmp_path):
    src, shards = v2_volume
    rc, out, term = run_in_pty(NO_TQDM, "verify", str(src), str(src))
    assert rc == 0 and "EQUAL" in out, term
    assert len(set(percents(term))) >= 2 and 100 in percents(term)
    rc, out, term = run_in_pty(NO_TQDM, "pyramid", str(src), str(tmp_path / "img.zarr"), "--levels", "2")
    assert rc == 0, term
    assert "pyramid:" in term and len(set(percents(term))) >= 2 and 100 in percents(term)


def test_quiet_when_not_a_terminal_unless_asked(v2_volume, tmp_path):
    src, shards = v2_volume
    args = ["cp", str(src), str(tmp_path / "a.zarr"), "--shards", ",".join(map(str, shards))]
    quiet = subprocess.run([sys.executable, "-c", WITH_CLI, *args], capture_output=True, text=True, env=_env(),
                           timeout=600)
    assert quiet.returncode == 0 and quiet.stderr == ""
    args[2] = str(tmp_path / "b.zarr")
    asked = subprocess.run([sys.executable, "-c", WITH_CLI, *args, "--progress"], capture_output=True, text=True,
                           env=_env(), timeout=600)
    assert asked.returncode == 0, asked.stderr
    lines = asked.stderr.splitlines()
    assert lines and "\r" not in asked.stderr and lines[-1].startswith("/: 100%")
