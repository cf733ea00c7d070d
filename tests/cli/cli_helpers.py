"""Shared bits of the command-line tests: small microscopy-like arrays and running the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import zarrbolt as zb
from zarrbolt.cli import main

SRC = str(Path(zb.__file__).resolve().parents[1])
LZ4 = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2,
                                          "blocksize": 0}}


def volume(shape=(40, 64, 64)) -> np.ndarray:
    from zarrbolt.cli.demo import synthetic_volume

    return synthetic_volume(shape)


def make_v3(path, data, *, chunks=(16, 32, 32), shards=None, attrs=None, **kw):
    a = zb.create_array(str(path), shape=data.shape, dtype=data.dtype, chunks=chunks, shards=shards,
                        compressors=[LZ4] if data.dtype.itemsize == 2 else "auto",
                        attributes=attrs or {"scale": [1.0, 0.5, 0.5]}, dimension_names=["z", "y", "x"],
                        overwrite=True, **kw)
    a[...] = data
    return a


def make_v2(path, data, *, chunks=(16, 32, 32), attrs=None):
    a = zb.create_array(str(path), shape=data.shape, dtype=data.dtype, chunks=chunks, zarr_format=2,
                        compressors={"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1},
                        attributes=attrs or {"origin": "v2"}, overwrite=True)
    a[...] = data
    return a


def cli(*args, capsys=None) -> tuple[int, str, str]:
    """Run the CLI in this process; (status, stdout, stderr) when capsys is given."""
    rc = main([str(a) for a in args])
    if capsys is None:
        return rc, "", ""
    out = capsys.readouterr()
    return rc, out.out, out.err


def cli_subprocess(*args, env=None, timeout=120, **kw) -> subprocess.CompletedProcess:
    """``python -m zarrbolt ARGS`` in a child process (this source tree first on its path)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = SRC + os.pathsep + e.get("PYTHONPATH", "")
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "zarrbolt", *map(str, args)], env=e, capture_output=True,
                          text=True, timeout=timeout, check=False, **kw)
