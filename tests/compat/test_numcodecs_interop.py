"""numcodecs.zlib / numcodecs.lz4 / numcodecs.delta with zarr-python 3, both ways.

zarr-python (reference virtualenv, ``ZARRBOLT_REF_PYTHON``) writes every case of
``numcodecs_cases.py`` (metadata as it writes it, and two arrays made with its own API); zarrbolt
must read them bit-exactly, whole and in parts, and keep their codec JSON.  zarrbolt writes every
metadata case; zarr-python must read them back equal.  Cases: several dtypes, delta with and
without astype (narrower, wider, float), big-endian bytes, transpose before delta, sharded and
not, edge chunks, an unwritten chunk that reads as the fill value.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrbolt
from zarrbolt.metadata.dtypes import DataType

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from numcodecs_cases import expected_array, make_cases, case_data  # noqa: E402
from cases import write_selections  # noqa: E402
from ref_env import ref_env  # noqa: E402

CASES = make_cases()
NAMES = sorted(CASES)
META_NAMES = sorted(n for n in CASES if "api" not in CASES[n])


def _worker(py: str, op: str, root: Path) -> dict[str, str]:
    proc = subprocess.run([py, str(HERE / "numcodecs_cases.py"), op, str(root)], capture_output=True, text=True, timeout=900,
                          env=ref_env())
    if proc.returncode != 0:
        raise RuntimeError(f"numcodecs worker failed ({op}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def by_zarr(ref_python, tmp_path_factory):
    root = tmp_path_factory.mktemp("numcodecs-by-zarr")
    return root, _worker(ref_python, "write", root)


@pytest.fixture(scope="module")
def by_zarrbolt(tmp_path_factory):
    root = tmp_path_factory.mktemp("numcodecs-by-zarrbolt")
    res = {}
    for name in META_NAMES:
        meta = CASES[name]["meta"]
        dt = DataType.parse(meta["data_type"])
        try:
            arr = zarrbolt.create_array(
                str(root / name), shape=tuple(meta["shape"]), dtype=dt,
                chunks=tuple(meta["chunk_grid"]["configuration"]["chunk_shape"]), codecs=meta["codecs"],
                fill_value=dt.parse_fill_value(meta["fill_value"]))
            data = case_data(name, meta)
            for sel in write_selections(meta):
                arr[sel] = data[sel]
            res[name] = "ok"
        except Exception as e:  # noqa: BLE001 - reported per case
            res[name] = f"error: {type(e).__name__}: {e}"
    return root, res


@pytest.fixture(scope="module")
def read_by_zarr(ref_python, by_zarrbolt):
    root, _ = by_zarrbolt
    return _worker(ref_python, "read", root)


def _sels(shape):
    """Whole array, a plane and a few regions across chunk (and shard) edges."""
    out = [(...,), (shape[0] // 2,), (slice(3, shape[0] - 2),)]
    if len(shape) >= 2:
        out += [(slice(5, 21), slice(2, shape[1] - 1)), (slice(None), shape[1] - 1)]
    return out


@pytest.mark.compat
@pytest.mark.parametrize("name", NAMES)
def test_zarrbolt_reads_zarr_python(by_zarr, name):
    root, res = by_zarr
    assert res[name] == "ok", f"zarr-python failed to write {name}: {res[name]}"
    exp = expected_array(name, CASES[name]["meta"])
    for fused in (True, False):
        with zarrbolt.config.set(fused_pipeline=fused):
            arr = zarrbolt.open_array(str(root / name), mode="r")
            assert arr.dtype == exp.dtype and arr.shape == exp.shape
            for sel in _sels(exp.shape):
                assert arr[sel].tobytes() == exp[sel].tobytes(), f"{name} {sel} (fused={fused})"
    written = json.loads((root / name / "zarr.json").read_text())["codecs"]
    assert arr.metadata.to_json()["codecs"] == written  # the codec JSON round-trips


@pytest.mark.compat
@pytest.mark.parametrize("name", META_NAMES)
def test_zarr_python_reads_zarrbolt(by_zarrbolt, read_by_zarr, name):
    _, res = by_zarrbolt
    assert res[name] == "ok", f"zarrbolt failed to write {name}: {res[name]}"
    assert read_by_zarr[name] == "ok", f"zarr-python reading zarrbolt's {name}: {read_by_zarr[name]}"


@pytest.mark.compat
def test_zarrbolt_writes_what_it_reads(by_zarrbolt):
    root, res = by_zarrbolt
    for name in META_NAMES:
        if res[name] != "ok":
            continue
        exp = expected_array(name, CASES[name]["meta"])
        assert np.asarray(zarrbolt.open_array(str(root / name), mode="r")[...]).tobytes() == exp.tobytes(), name
