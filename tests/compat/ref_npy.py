"""Runs under the reference virtualenv, on the arrays ``ROOT/<name>`` that have a
``ROOT/<name>.npy`` beside it:

usage: ref_npy.py read ROOT   -> reads each with zarr-python and tensorstore and prints a JSON
                                 {"<system>:<name>": "ok" | "error: ..." | "mismatch"}
       ref_npy.py write ROOT  -> zarr-python writes <name>.npy into each (created by the caller)
"""

import json
import os
import sys
import traceback

import numpy as np


def _read(system, path):
    if system == "zarr":
        import zarr

        return zarr.open_array(path, mode="r")[...]
    import tensorstore as ts

    arr = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}, open=True, read=True).result()
    return np.asarray(arr.read().result())


def main():
    op, root = sys.argv[1:3]
    if op == "write":
        import zarr

        for name in sorted(os.listdir(root)):
            if name.endswith(".npy"):
                zarr.open_array(os.path.join(root, name[:-4]), mode="r+")[...] = np.load(os.path.join(root, name))
        return
    out = {}
    for name in sorted(os.listdir(root)):
        if not name.endswith(".npy"):
            continue
        arr_name = name[:-4]
        expected = np.load(os.path.join(root, name))
        for system in ("zarr", "tensorstore"):
            try:
                got = _read(system, os.path.join(root, arr_name))
                ok = got.shape == expected.shape and np.array_equal(got, expected)
                out[f"{system}:{arr_name}"] = "ok" if ok else "mismatch"
            except Exception as e:  # noqa: BLE001 - reported to the test process
                out[f"{system}:{arr_name}"] = "error: " + traceback.format_exception_only(type(e), e)[-1].strip()[:400]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
