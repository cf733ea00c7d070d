"""zarrbolt.kernels.shard_windows (zb_shard_windows, the I/O plan of sharded reads) against a
brute-force model written from its documentation."""

from __future__ import annotations

import numpy as np
import pytest

from zarrbolt import kernels

EMPTY = (1 << 64) - 1


def model(offs, nb, entries, cap, gap):
    """Windows, then each window's non-empty entries in file order, then the reads: plainly."""
    offs, nb = [int(x) for x in offs], [int(x) for x in nb]
    size = [0 if offs[e] == EMPTY else nb[e] for e in entries]
    window_ends, order, read_of, begins, ends = [], [], [], [], []
    w0 = 0
    while w0 < len(entries):
        w1 = w0 + 1
        while w1 < len(entries) and sum(size[w0:w1 + 1]) <= cap:
            w1 += 1
        window_ends.append(w1)
        pos = sorted((p for p in range(w0, w1) if offs[entries[p]] != EMPTY),
                     key=lambda p: (offs[entries[p]], p))
        first = len(begins)
        for p in pos:
            b, e = offs[entries[p]], offs[entries[p]] + nb[entries[p]]
            if len(begins) > first and (b <= ends[-1] or b - ends[-1] <= gap) and (
                    cap == 0 or max(e, ends[-1]) - begins[-1] <= cap):
                ends[-1] = max(ends[-1], e)
            else:
                begins.append(b)
                ends.append(e)
            order.append(p)
            read_of.append(len(begins) - 1)
        w0 = w1
    return window_ends, order, read_of, begins, ends


def check(offs, nb, entries, cap, gap):
    got = kernels.shard_windows(offs, nb, entries, cap, gap)
    assert [g.dtype for g in got] == [np.int64, np.int64, np.int64, np.uint64, np.uint64]
    want = model(offs, nb, list(entries), cap, gap)
    for g, w, name in zip(got, want, ("window_ends", "order", "read_of", "begins", "ends")):
        assert g.tolist() == w, (name, cap, gap)
    return got


def morton_order(shape):
    """Inner chunk numbers (C order) in Morton order of their coordinates, the first axis
    varying fastest (as zarr-python writes shards)."""
    coords = np.indices(shape).reshape(len(shape), -1).T
    bits = max(int(s - 1).bit_length() for s in shape)

    def key(c):
        k = 0
        for b in range(bits):
            for d in range(len(shape)):
                k |= ((int(c[d]) >> b) & 1) << (b * len(shape) + d)
        return k

    return sorted(range(len(coords)), key=lambda i: key(coords[i]))


def layout(file_order, sizes, gaps):
    """offsets of inner chunks stored in file_order with the given gaps before each."""
    offs = np.full(len(sizes), EMPTY, np.uint64)
    pos = 0
    for e, g in zip(file_order, gaps):
        pos += int(g)
        offs[e] = pos
        pos += int(sizes[e])
    return offs


CAPS = (0, 1, 99, 150, 600, 5000, 1 << 40)


@pytest.mark.parametrize("seed", range(16))
def test_random_shards(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 90))
    sizes = rng.integers(0 if seed % 4 == 0 else 1, 300, n).astype(np.uint64)
    gaps = rng.integers(0, 3, n) * rng.integers(0, 200, n)
    offs = layout(rng.permutation(n), sizes, gaps)
    nb = sizes.copy()
    empty = rng.random(n) < [0, 0.2, 0.6, 1.0][seed % 4]
    offs[empty] = EMPTY
    nb[empty] = EMPTY
    entries = rng.permutation(n)[: int(rng.integers(1, n + 1))]
    for cap in CAPS:
        for gap in (0, 40, 1 << 20):
            check(offs, nb, entries, cap, gap)


@pytest.mark.parametrize("shape", [(4, 4, 4), (8, 2), (3, 5, 2)])
def test_morton_ordered_shards(shape):
    n = int(np.prod(shape))
    rng = np.random.default_rng(n)
    sizes = rng.integers(50, 120, n).astype(np.uint64)
    offs = layout(morton_order(shape), sizes, np.zeros(n, np.int64))
    c_order = np.arange(n)
    for cap in CAPS:
        window_ends, order, read_of, begins, ends = check(offs, sizes, c_order, cap, 0)
        if cap >= int(sizes.sum()):  # all fit: one window, one read of the whole data
            assert window_ends.tolist() == [n] and (begins.tolist(), ends.tolist()) == ([0], [int(sizes.sum())])
        if 0 < cap < int(sizes.min()):  # none fits with another: one window and one read per entry
            assert window_ends.tolist() == list(range(1, n + 1)) and len(begins) == n


def test_shared_bytes_and_ties_keep_task_order():
    offs = np.array([0, 0, 10, 10, EMPTY], np.uint64)
    nb = np.array([10, 10, 5, 5, EMPTY], np.uint64)
    _, order, read_of, begins, ends = check(offs, nb, [3, 1, 4, 2, 0], 1 << 20, 0)
    assert order.tolist() == [1, 4, 0, 3] and begins.tolist() == [0] and ends.tolist() == [15]


def test_edge_cases():
    for got in (kernels.shard_windows([], [], [], 100, 0), kernels.shard_windows([5], [3], [], 100, 0)):
        assert [len(x) for x in got] == [0, 0, 0, 0, 0]
    check([EMPTY] * 3, [EMPTY] * 3, [2, 0, 1], 10, 0)  # only empty entries: windows, no reads
    with pytest.raises(IndexError):
        kernels.shard_windows([0], [4], [1], 100, 0)
    with pytest.raises(IndexError):
        kernels.shard_windows([0], [4], [-1], 100, 0)
    with pytest.raises(ValueError):
        kernels.shard_windows([0, 4], [4], [0], 100, 0)
