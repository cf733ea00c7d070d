"""Runs under the reference virtualenv (zarr-python 3, tensorstore): writes or reads the cases.

usage: ref_worker.py write SYSTEM ROOT      -> writes every case with SYSTEM under ROOT/<case>
       ref_worker.py read SYSTEM ROOT       -> reads every case under ROOT/<case> with SYSTEM and
                                               prints a JSON {case: "ok" | "error: ..."}
SYSTEM is "zarr" (zarr-python) or "tensorstore".
"""

import json
import os
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as C  # noqa: E402


def _equal(a, b):
    if a.shape != b.shape:
        return f"shape {a.shape} != {b.shape}"
    if a.dtype != b.dtype:
        b = b.astype(a.dtype)
    if a.dtype.kind in "fc":
        # bit-exact, NaNs included
        if a.tobytes() == np.ascontiguousarray(b).tobytes():
            return None
        # tolerate NaN payload canonicalisation only where both are NaN
        an, bn = np.isnan(a), np.isnan(b)
        if np.array_equal(an, bn) and np.array_equal(a[~an], b[~bn]):
            return "values equal but NaN bit patterns differ"
        return "values differ"
    return None if np.array_equal(a, b) else "values differ"


def _write_zarr(path, name, case):
    import zarr

    meta = case["meta"]
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "zarr.json"), "w") as f:
        json.dump(meta, f)
    arr = zarr.open_array(path, mode="r+")
    data = C.case_data(name, meta)
    for sel in C.write_selections(meta):
        arr[sel] = data[sel]


def _ts_spec(path):
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}


def _write_ts(path, name, case):
    import tensorstore as ts

    meta = dict(case["meta"])
    for k in ("zarr_format", "node_type"):
        meta.pop(k)
    attrs = meta.pop("attributes", {})
    spec = _ts_spec(path)
    spec["metadata"] = meta
    if attrs:
        spec["metadata"]["attributes"] = attrs
    arr = ts.open(spec, create=True, delete_existing=True).result()
    data = C.case_data(name, case["meta"])
    for sel in C.write_selections(case["meta"]):
        arr[sel].write(data[sel]).result()


def _read_zarr(path):
    import zarr

    arr = zarr.open_array(path, mode="r")
    return arr[...] if arr.shape else np.asarray(arr[()])


def _read_ts(path):
    import tensorstore as ts

    arr = ts.open(_ts_spec(path), open=True, read=True).result()
    return np.asarray(arr.read().result())


def main():
    op, system, root = sys.argv[1:4]
    only = set(sys.argv[4].split(",")) if len(sys.argv) > 4 and sys.argv[4] else None
    cases = C.make_cases()
    results = {}
    for name, case in cases.items():
        if only and name not in only:
            continue
        path = os.path.join(root, name)
        try:
            if op == "write":
                (_write_zarr if system == "zarr" else _write_ts)(path, name, case)
                results[name] = "ok"
            else:
                if not os.path.exists(os.path.join(path, "zarr.json")):
                    results[name] = "missing"
                    continue
                got = (_read_zarr if system == "zarr" else _read_ts)(path)
                exp = C.expected_array(name, case["meta"], C.fill_bits(case["meta"]))
                err = _equal(exp, np.asarray(got))
                results[name] = "ok" if err is None else f"mismatch: {err}"
        except Exception as e:  # noqa: BLE001 - reported to the test process
            tb = traceback.format_exception_only(type(e), e)[-1].strip()
            results[name] = f"error: {tb[:500]}"
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
