"""Write with one implementation, read with another, both ways, for every core feature.

zarr-python 3 and tensorstore write every case in ``cases.py``; zarrbolt must read them
bit-exactly (NaN payloads included).  zarrbolt writes every case; both reference systems must
read it back equal.  Where a reference system itself cannot handle a valid case, the test is an
expected failure naming the reason (a limitation of that system, measured here, not of zarrbolt).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from cases import PARTIAL_SELECTIONS, case_data, expected_array, fill_bits, make_cases, write_selections
from conftest import run_ref

import zarrbolt
from zarrbolt.metadata.dtypes import DataType

CASES = make_cases()
NAMES = sorted(CASES)

# (system, case prefix) -> why the reference system cannot do this valid case.
# Measured with zarr-python 3.4.2 and tensorstore 0.1.86.
REF_LIMITS: dict[tuple[str, str], str] = {
    ("zarr", "shard-transpose-before"): (
        "zarr-python validates the inner chunk shape against the untransposed shard shape, so it "
        "refuses a valid transpose->sharding chain"
    ),
    ("zarr", "fill-hex-f16"): "zarr-python replaces a float16 NaN fill value's payload with the canonical NaN",
    ("tensorstore", "numeric-"): "tensorstore 0.1.86 implements neither scale_offset nor cast_value",
}


def _limit(system: str, name: str) -> str | None:
    for (s, prefix), why in REF_LIMITS.items():
        if s == system and name.startswith(prefix):
            return why
    return None


def _bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def _write_with_zarrbolt(root, name: str) -> None:
    meta = CASES[name]["meta"]
    dt = DataType.parse(meta["data_type"])
    arr = zarrbolt.create_array(
        str(root / name),
        shape=tuple(meta["shape"]),
        dtype=dt,
        chunks=tuple(meta["chunk_grid"]["configuration"]["chunk_shape"]),
        codecs=meta["codecs"],
        fill_value=dt.parse_fill_value(meta["fill_value"]),
        chunk_key_encoding=meta["chunk_key_encoding"],
        dimension_names=meta.get("dimension_names"),
        attributes=meta["attributes"],
    )
    data = case_data(name, meta)
    for sel in write_selections(meta):
        arr[sel] = data[sel]


@pytest.fixture(scope="session")
def written_by(tmp_path_factory):
    cache: dict[str, tuple] = {}

    def get(system: str):
        if system not in cache:
            root = tmp_path_factory.mktemp(f"by-{system}")
            if system == "zarrbolt":
                res = {}
                for name in NAMES:
                    try:
                        _write_with_zarrbolt(root, name)
                        res[name] = "ok"
                    except Exception as e:  # noqa: BLE001 - reported per case below
                        res[name] = f"error: {type(e).__name__}: {e}"
            else:
                res = run_ref("write", system, root)
            cache[system] = (root, res)
        return cache[system]

    return get


@pytest.fixture(scope="session")
def read_by(written_by):
    cache: dict[str, dict] = {}

    def get(system: str):
        if system not in cache:
            root, _ = written_by("zarrbolt")
            cache[system] = run_ref("read", system, root)
        return cache[system]

    return get


@pytest.mark.compat
@pytest.mark.parametrize("system", ["zarr", "tensorstore"])
@pytest.mark.parametrize("name", NAMES)
def test_zarrbolt_reads(written_by, system, name):
    root, res = written_by(system)
    status = res.get(name)
    if status != "ok":
        why = _limit(system, name)
        if why:
            pytest.xfail(f"{system} cannot write this case: {why} ({status})")
        pytest.fail(f"{system} failed to write case {name}: {status}")
    meta = CASES[name]["meta"]
    arr = zarrbolt.open_array(str(root / name), mode="r")
    got = arr[...]
    if arr.ndim == 0:
        got = np.asarray(got)
    exp = expected_array(name, meta, fill_bits(meta))
    assert got.dtype == exp.dtype
    assert _bits_equal(got, exp), f"{name}: data read differs from data {system} wrote"
    if name.startswith("partial-"):  # planes and regions decoded from part of a chunk
        for sel in PARTIAL_SELECTIONS:
            assert _bits_equal(arr[sel], exp[sel]), f"{name}: {sel} differs from data {system} wrote"
    # the fill value itself, bit for bit
    assert np.asarray(arr.fill_value, dtype=exp.dtype).tobytes() == fill_bits(meta).tobytes()
    assert arr.metadata.dimension_names == (tuple(meta["dimension_names"]) if "dimension_names" in meta else None)
    if system == "zarr":
        assert dict(arr.attrs) == meta["attributes"]


@pytest.mark.compat
@pytest.mark.parametrize("system", ["zarr", "tensorstore"])
@pytest.mark.parametrize("name", NAMES)
def test_reference_reads_zarrbolt(written_by, read_by, system, name):
    _, wres = written_by("zarrbolt")
    assert wres[name] == "ok", f"zarrbolt failed to write {name}: {wres[name]}"
    status = read_by(system).get(name)
    if status != "ok":
        why = _limit(system, name)
        if why:
            pytest.xfail(f"{system} cannot read this case: {why} ({status})")
    assert status == "ok", f"{system} reading zarrbolt's {name}: {status}"


@pytest.mark.compat
@pytest.mark.parametrize("name", ["fill-nan-payload-f32", "fill-nan-payload-f64", "fill-hex-f16", "fill-neg-zero"])
def test_fill_value_survives_rewrite_and_resize(written_by, name):
    """zarr-python loses NaN payloads when it rewrites metadata; zarrbolt must not."""
    root, res = written_by("zarr")
    if res.get(name) != "ok":
        pytest.fail(f"zarr-python failed to write {name}: {res.get(name)}")
    import shutil

    work = root.parent / f"rewrite-{name}"
    shutil.copytree(root / name, work)
    arr = zarrbolt.open_array(str(work), mode="r+")
    arr.attrs["touched"] = True
    arr.resize(tuple(s + 3 for s in arr.shape))
    arr.resize(tuple(s - 3 for s in arr.shape))
    doc = json.loads((work / "zarr.json").read_text())
    assert doc["fill_value"] == CASES[name]["meta"]["fill_value"] or (
        fill_bits({**CASES[name]["meta"], "fill_value": doc["fill_value"]}).tobytes()
        == fill_bits(CASES[name]["meta"]).tobytes()
    )
    again = zarrbolt.open_array(str(work), mode="r")
    assert np.asarray(again.fill_value).tobytes() == fill_bits(CASES[name]["meta"]).tobytes()
