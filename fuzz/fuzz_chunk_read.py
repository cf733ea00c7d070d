"""Whole reads of stored chunks through the array API: the fused C read pipeline of local files
(csrc/decode.c, local_io.c, stage.c: chunk reads, decode steps, partial decodes, shard indexes
and inner-chunk reads) and the in-memory store's path, for every codec chain in
chunk_configs.CONFIGS (blosc, gzip, zstd, crc32c, transpose, sharding with both index locations,
vlen, scale_offset + cast_value, v2 delta / fletcher32 / zlib / lz4, numcodecs checksums).

Input: config byte, 4 region bytes, then the stored bytes of the array's first chunk (or shard).
Oracles: the same bytes read from a LocalStore and from a MemoryStore give the same array
whenever both reads succeed; a region equals the same region of a whole read."""

from __future__ import annotations

import atexit
import shutil
import tempfile

import numpy as np

import common
import zarrbolt
from chunk_configs import CONFIGS, create

NAMES = sorted(CONFIGS)
_tmp = tempfile.mkdtemp(prefix="zb-fuzz-", dir="/dev/shm" if shutil.os.path.isdir("/dev/shm") else None)
atexit.register(shutil.rmtree, _tmp, True)
STORES = {}
for _name in NAMES:
    _mem, _local = zarrbolt.MemoryStore(), zarrbolt.LocalStore(f"{_tmp}/{_name}")
    _, _key = create(_mem, _name)
    create(_local, _name)
    STORES[_name] = (_key, _mem, _local)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == "f":
        return np.array_equal(a, b, equal_nan=True)
    return bool(np.all(a == b))


def _read(store, key: str, chunk: bytes, sel: bytes, name: str) -> np.ndarray | None:
    """The whole array after storing ``chunk`` at ``key`` (None: a typed error), and a region."""
    store.set(key, chunk)
    arr = zarrbolt.open_array(store, mode="r")
    whole = common.accept(lambda: arr[...])
    s0 = slice(sel[0] % arr.shape[0], sel[0] % arr.shape[0] + 1 + sel[1] % arr.shape[0])
    s1 = slice(sel[2] % arr.shape[1], sel[2] % arr.shape[1] + 1 + sel[3] % arr.shape[1])
    part = common.accept(lambda: arr[s0, s1])
    if whole is not None and part is not None:
        common.check(_same(part, whole[s0, s1]), f"{name}: region differs from the whole read")
    return whole


def one_input(data: bytes) -> None:
    if len(data) < 5:
        return
    name = NAMES[data[0] % len(NAMES)]
    key, mem, local = STORES[name]
    chunk = data[5:]
    results = [_read(store, key, chunk, data[1:5], name) for store in (local, mem)]
    if results[0] is not None and results[1] is not None:
        common.check(_same(results[0], results[1]), f"{name}: LocalStore and MemoryStore reads differ")


if __name__ == "__main__":
    common.main(one_input)
