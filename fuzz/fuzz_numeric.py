"""scale_offset and cast_value with random parameters (zarrbolt.codecs.numeric and the C kernels
of csrc/numeric.c): every real source and target data type, offsets and scales of any JSON form
(integers beyond 64 bits, floats, NaN / Infinity strings, hex floats), every rounding and
out_of_range mode, scalar maps; arrays created, written with random values and read back, and
random stored bytes decoded.

Input: consumed with atheris.FuzzedDataProvider.  Oracle: besides typed errors only, a read of
values that were written without error never fails with anything but CodecRangeError (the
decode direction of a lossy cast can be out of range)."""

from __future__ import annotations

import atheris
import numpy as np

import common
import zarrbolt
from zarrbolt.codecs.numeric import OUT_OF_RANGE, ROUNDING_MODES

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64",
          "bool"]
SPECIAL = ["NaN", "Infinity", "-Infinity", "0x7fc00000", "0x3ff0000000000000", "0x1p-3", "1e400", "-0.0"]


def number(fdp: atheris.FuzzedDataProvider):
    kind = fdp.ConsumeIntInRange(0, 4)
    if kind == 0:
        return fdp.ConsumeIntInRange(-300, 300)
    if kind == 1:
        return fdp.ConsumeInt(fdp.ConsumeIntInRange(1, 10))  # up to 80-bit integers
    if kind == 2:
        return fdp.ConsumeRegularFloat()
    if kind == 3:
        return fdp.PickValueInList(SPECIAL)
    return fdp.ConsumeFloat()


def codecs(fdp: atheris.FuzzedDataProvider) -> list:
    out = []
    if fdp.ConsumeBool():
        conf = {}
        if fdp.ConsumeBool():
            conf["offset"] = number(fdp)
        if fdp.ConsumeBool():
            conf["scale"] = number(fdp)
        out.append({"name": "scale_offset", "configuration": conf})
    if fdp.ConsumeBool():
        conf = {"data_type": fdp.PickValueInList(DTYPES), "rounding": fdp.PickValueInList(list(ROUNDING_MODES))}
        if fdp.ConsumeBool():
            conf["out_of_range"] = fdp.PickValueInList(list(OUT_OF_RANGE))
        if fdp.ConsumeBool():
            conf["scalar_map"] = {d: [[number(fdp), number(fdp)] for _ in range(fdp.ConsumeIntInRange(0, 3))]
                                  for d in ("encode", "decode") if fdp.ConsumeBool()}
        out.append({"name": "cast_value", "configuration": conf})
    return out + [{"name": "bytes", "configuration": {"endian": "little"}}]


def one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    dtype = fdp.PickValueInList(DTYPES)
    fill = number(fdp) if fdp.ConsumeBool() else 0
    chain = codecs(fdp)
    n = fdp.ConsumeIntInRange(1, 64)
    store = zarrbolt.MemoryStore()
    arr = zarrbolt.create_array(store, shape=(n,), chunks=(max(1, n // 2),), dtype=dtype, fill_value=fill,
                                codecs=chain)
    raw = fdp.ConsumeBytes(n * np.dtype(dtype).itemsize)
    if fdp.ConsumeBool():  # store random bytes as the chunk: the decode direction on any values
        store.set("c/0", raw)
        common.accept(lambda: arr[...])
        return
    raw = raw + bytes(n * np.dtype(dtype).itemsize - len(raw))
    values = np.frombuffer(raw, dtype=dtype)
    if dtype == "bool":
        values = values.view(np.uint8) % 2 == 1
    try:
        arr[...] = values
    except zarrbolt.errors.ZarrboltError:
        return
    try:
        arr[...]
    except zarrbolt.errors.CodecRangeError:
        pass


if __name__ == "__main__":
    common.main(one_input)
