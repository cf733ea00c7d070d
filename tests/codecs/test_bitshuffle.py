"""zarrbolt's bit-unshuffle kernel and the bit-shuffled Blosc decode built on it, against a numpy
reference of the layout and against c-blosc2's own decoder."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrbolt.errors import CodecError
from zarrbolt._ext import _blosc1, _blosc2

ISAS = _blosc2._bitshuffle_isas()


def bitshuffle_ref(raw: np.ndarray, typesize: int) -> bytes:
    """Rows 8*b + j of nelem/8 bytes: bit j of byte b of every element, element 8k+i in bit i
    of byte k (the layout c-blosc writes; checked against c-blosc2 below)."""
    xb = raw.reshape(-1, typesize)
    rows = [np.packbits(((xb[:, b] >> j) & 1).reshape(-1, 8), axis=1, bitorder="little").ravel()
            for b in range(typesize) for j in range(8)]
    return np.concatenate(rows).tobytes() if rows else b""


@pytest.fixture(params=ISAS)
def isa(request):
    old = _blosc2._bitshuffle_set_isa(request.param)
    yield request.param
    _blosc2._bitshuffle_set_isa(old)


@pytest.fixture(params=[True, False], ids=["zarrbolt-unshuffle", "c-blosc2"])
def fast(request):
    old = _blosc2._set_fast_bitshuffle(request.param)
    yield request.param
    _blosc2._set_fast_bitshuffle(old)


@pytest.mark.parametrize("typesize", [1, 2, 3, 4, 8, 16])
@pytest.mark.parametrize("nelem", [0, 8, 16, 56, 64, 72, 512, 520, 4096 + 8 * 7])
def test_kernel_against_reference(typesize, nelem, isa):
    raw = np.random.default_rng(nelem + typesize).integers(0, 256, nelem * typesize, dtype=np.uint8)
    assert _blosc2._bitunshuffle(bitshuffle_ref(raw, typesize), typesize) == raw.tobytes()


def test_kernel_rejects_partial_groups():
    with pytest.raises(ValueError):
        _blosc2._bitunshuffle(bytes(2 * 12), 2)


def test_reference_matches_c_blosc_layout():
    """The reference is the layout c-blosc writes: decoding a bit-shuffled chunk with the flag
    cleared gives exactly the reference's rows."""
    x = (np.arange(4096) % 300 + 1000).astype(np.uint16)
    c = bytearray(_blosc1.compress(x.tobytes(), 2, 5, 2, "zstd", 0))
    assert c[2] & 0x4 and not c[2] & 0x3  # bit-shuffled, compressed (not memcpyed)
    c[2] &= ~0x4
    assert _blosc2.decompress(bytes(c), x.nbytes) == bitshuffle_ref(x.view(np.uint8), 2)


def smooth(rng, n):
    return (np.cumsum(rng.integers(-3, 4, n)) % 251).astype(np.uint8)


@pytest.mark.parametrize("typesize", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("nelem", [8, 1000, 1003, 65536 + 24, 100_000])
@pytest.mark.parametrize("blocksize", [0, 256, 4096, 24 * 1024])
def test_chunks_decode_like_c_blosc2(typesize, nelem, blocksize, fast):
    """Every block size, a partial last block (a multiple of 8 elements or not: 1003 elements
    leave a remainder, which takes c-blosc2's path), every codec."""
    rng = np.random.default_rng(nelem * 31 + typesize)
    raw = smooth(rng, nelem * typesize)
    for cname in ("zstd", "lz4", "blosclz", "zlib"):
        c = _blosc1.compress(raw.tobytes(), typesize, 5, 2, cname, blocksize)
        assert _blosc2.decompress(c, raw.nbytes) == raw.tobytes(), cname
        for _ in range(8):
            s = int(rng.integers(0, nelem))
            n = int(rng.integers(0, nelem - s + 1))
            out = bytearray(n * typesize)
            _blosc2.getitem(c, s, n, out)
            assert bytes(out) == raw[s * typesize:(s + n) * typesize].tobytes(), (cname, s, n)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), typesize=st.sampled_from([1, 2, 4]),
       nelem=st.integers(1, 3000).map(lambda n: n * 8))
def test_both_decoders_agree(seed, typesize, nelem):
    raw = smooth(np.random.default_rng(seed), nelem * typesize)
    c = _blosc1.compress(raw.tobytes(), typesize, 3, 2, "zstd", 0)
    old = _blosc2._set_fast_bitshuffle(False)
    try:
        slow = _blosc2.decompress(c, raw.nbytes)
    finally:
        _blosc2._set_fast_bitshuffle(old)
    assert _blosc2.decompress(c, raw.nbytes) == slow == raw.tobytes()


def test_damaged_bitshuffled_chunks_raise_typed_errors():
    """Flipped and cut bytes in bit-shuffled chunks: a typed error or the same bytes c-blosc2
    gives, never a crash."""
    rnd = random.Random(7)
    raw = smooth(np.random.default_rng(3), 2 * 65536)
    good = _blosc1.compress(raw.tobytes(), 2, 5, 2, "zstd", 16384)
    for trial in range(300):
        bad = bytearray(good)
        if trial % 3 == 0:
            bad = bad[: rnd.randrange(16, len(bad))]
        for _ in range(rnd.randint(1, 4)):
            bad[rnd.randrange(16, len(bad))] ^= 1 << rnd.randrange(8)
        results = []
        for on in (True, False):
            old = _blosc2._set_fast_bitshuffle(on)
            try:
                results.append(_blosc2.decompress(bytes(bad), raw.nbytes))
            except CodecError:
                results.append("error")
            finally:
                _blosc2._set_fast_bitshuffle(old)
        assert results[0] == results[1] or "error" in results


def test_large_chunks_and_scratch_release():
    """Chunks whose scratch exceeds what a thread keeps (4 MiB) decode the same, repeatedly."""
    raw = smooth(np.random.default_rng(5), 2 * 3_000_000)
    c = _blosc1.compress(raw.tobytes(), 2, 1, 2, "lz4", 0)
    for _ in range(3):
        assert _blosc2.decompress(c, raw.nbytes) == raw.tobytes()
        out = bytearray(2 * 1000)
        _blosc2.getitem(c, 2_500_000, 1000, out)
        assert bytes(out) == raw[5_000_000:5_002_000].tobytes()
