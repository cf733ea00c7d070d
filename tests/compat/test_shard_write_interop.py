"""Shards that zarrbolt writes in part (both ``shard_update`` modes) and edge shards: zarr-python
and tensorstore read them back equal; zarrbolt updates shards that zarr-python wrote."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrbolt

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from ref_env import ref_env  # noqa: E402

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BLOSC = {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 2,
                                            "blocksize": 0}}
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}


def sharding(inner, loc="end", transpose=False):
    codecs = ([{"name": "transpose", "configuration": {"order": [2, 1, 0]}}] if transpose else []) + [LE, inner]
    return [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [8, 8, 8], "codecs": codecs, "index_codecs": [LE, {"name": "crc32c"}],
        "index_location": loc}}]


def vol(shape, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 40, size=shape) + np.arange(shape[-1]) % 5).astype(np.uint16)


def _ref(ref_python, op, root):
    proc = subprocess.run([ref_python, str(HERE / "ref_npy.py"), op, str(root)], capture_output=True, text=True, check=False,
                          timeout=600, env=ref_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout) if op == "read" else None


def _updates(a, model, seed):
    """Partial writes: whole inner chunks, slabs, steps, integer indices, back to the fill value,
    and a growing stack (resize + write)."""
    rng = np.random.default_rng(seed)
    for sel in [(slice(8, 16), slice(0, 8), slice(8, 16)), (slice(3, 5),), (slice(1, 30, 4), 7),
                (slice(20, 23), slice(2, 19), slice(5, 30)), (slice(0, 8), slice(0, 8), slice(0, 8))] * 3:
        v = rng.integers(0, 500, size=model[sel].shape).astype(np.uint16)
        a[sel] = v
        model[sel] = v
    a[0:8, 0:8, 0:8] = 0  # all fill: the inner chunk becomes empty
    model[0:8, 0:8, 0:8] = 0
    z = model.shape[0]
    for _ in range(3):
        planes = rng.integers(0, 500, size=(5,) + model.shape[1:]).astype(np.uint16)
        a.resize((z + 5,) + model.shape[1:])
        a[z:z + 5] = planes
        model = np.concatenate([model, planes])
        z += 5
    return model


@pytest.mark.compat
def test_references_read_shards_zarrbolt_wrote_in_part(tmp_path, ref_python):
    root = tmp_path / "arrays"
    root.mkdir()
    for mode in ("rewrite", "append"):
        for inner, loc, tr in ((BLOSC, "end", False), (ZSTD, "end", True), (BLOSC, "start", False)):
            name = f"{mode}-{inner['name']}-{loc}{'-t' if tr else ''}"
            model = vol((27, 20, 35))  # every shard (16, 16, 32) of the edge overhangs the array
            with zarrbolt.config.set(shard_update=mode):
                a = zarrbolt.create_array(str(root / name), shape=model.shape, dtype="uint16", chunks=(16, 16, 32),
                                          codecs=sharding(inner, loc, tr))
                a[...] = model
                model = _updates(a, model, len(name))
            np.testing.assert_array_equal(zarrbolt.open_array(str(root / name))[...], model)
            np.save(root / f"{name}.npy", model)
    got = _ref(ref_python, "read", root)
    assert got and all(v == "ok" for v in got.values()), got


@pytest.mark.compat
def test_zarrbolt_updates_shards_zarr_python_wrote(tmp_path, ref_python):
    root = tmp_path / "arrays"
    root.mkdir()
    models = {}
    for mode in ("rewrite", "append"):
        name = f"zp-{mode}"
        model = vol((27, 20, 35), 3)
        zarrbolt.create_array(str(root / name), shape=model.shape, dtype="uint16", chunks=(16, 16, 32),
                              codecs=sharding(BLOSC))
        np.save(root / f"{name}.npy", model)
        models[name] = (mode, model)
    _ref(ref_python, "write", root)  # zarr-python writes the data
    for name, (mode, model) in models.items():
        np.testing.assert_array_equal(zarrbolt.open_array(str(root / name))[...], model)
        with zarrbolt.config.set(shard_update=mode):
            model = _updates(zarrbolt.open_array(str(root / name), mode="r+"), model, 5)
        np.save(root / f"{name}.npy", model)
    got = _ref(ref_python, "read", root)
    assert got and all(v == "ok" for v in got.values()), got
