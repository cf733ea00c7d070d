"""Shard index parsing and read planning (csrc/shard_index.c): entry validation against the data
region, the index CRC-32C, overlap detection, read coalescing and read windows.

Input: 4 control bytes (CRC present, data region, gap, arena), then the raw index.  Oracles:
accepted entries are the empty pair or inside the data region; overlap detection agrees with a
brute-force check; every planned read covers the wanted entries it serves."""

from __future__ import annotations

import numpy as np

import common
from zarrbolt._ext import _shard
from zarrbolt.kernels import crc32c

EMPTY = (1 << 64) - 1


def _overlap_ref(pairs: np.ndarray) -> bool:
    live = sorted((int(o), int(o) + int(n)) for o, n in pairs if int(o) != EMPTY and int(n) > 0)
    return any(live[i + 1][0] < live[i][1] for i in range(len(live) - 1))


def _check_plan(pairs: np.ndarray, wanted: np.ndarray, max_gap: int) -> None:
    order, range_of, begins, ends = _shard.coalesce(pairs, wanted, max_gap)
    for e, r in zip(order.tolist(), range_of.tolist()):
        o, n = int(pairs[e, 0]), int(pairs[e, 1])
        common.check(int(begins[r]) <= o and o + n <= int(ends[r]), f"entry {e} outside read {r}")


def one_input(data: bytes) -> None:
    if len(data) < 4:
        return
    ctl, raw = data[:4], data[4:]
    has_crc = bool(ctl[0] & 1)
    if ctl[0] & 2 and len(raw) >= 4:  # a correct CRC (so the entries themselves get checked)
        raw = raw[:-4] + crc32c(raw[:-4]).to_bytes(4, "little")
    n = (len(raw) - (4 if has_crc else 0)) // 16
    if n < 0:
        return
    raw = raw[: 16 * n + (4 if has_crc else 0)]
    begin = ctl[1] * 16
    end = begin + ctl[2] * 4099
    pairs = _shard.parse_index(raw, n, has_crc, begin, end)
    for o, nb in pairs.tolist():
        ok = (o == EMPTY and nb == EMPTY) or (begin <= o and nb <= end - o)
        common.check(ok, f"entry ({o}, {nb}) accepted outside [{begin}, {end})")
    again = _shard.validate_pairs(pairs, begin, end)
    common.check(np.array_equal(again, pairs), "validate_pairs changed an accepted index")
    ov = _shard.find_overlap(pairs)
    common.check((ov is not None) == _overlap_ref(pairs), f"find_overlap says {ov}")
    if n == 0:
        return
    wanted = np.array([b % n for b in raw[: min(n, 64)]], dtype=np.int64)
    _check_plan(pairs, wanted, ctl[3] * 64)
    offs, nbs = pairs[:, 0].copy(), pairs[:, 1].copy()
    _shard.shard_windows(offs, nbs, wanted, 1 + ctl[3] * 1024, ctl[3] * 64)


if __name__ == "__main__":
    common.main(one_input)
