"""Inputs the fuzz harnesses (fuzz/, `make fuzz`) found, rebuilt deterministically from valid
encodings, with the behaviour the fix gives.  One test per finding; the docstring names the
harness."""

from __future__ import annotations

import numpy as np
import pytest

from zarrbolt._ext import _blosc1, _blosc2


@pytest.fixture
def fast_paths():
    """Restore zarrbolt's blosc fast paths after a test that switches them."""
    old = _blosc2._set_fast_bitshuffle(True), _blosc2._set_fast_lz4(True)
    yield
    _blosc2._set_fast_bitshuffle(old[0])
    _blosc2._set_fast_lz4(old[1])


def _decode_both_ways(chunk: bytes, nbytes: int) -> tuple[bytes, bytes]:
    _blosc2._set_fast_bitshuffle(True)
    _blosc2._set_fast_lz4(True)
    fast = _blosc2.decompress(chunk, nbytes)
    _blosc2._set_fast_bitshuffle(False)
    _blosc2._set_fast_lz4(False)
    plain = _blosc2.decompress(chunk, nbytes)
    return fast, plain


@pytest.mark.parametrize("shuffle", [0, 1, 2])
@pytest.mark.parametrize("cname", ["lz4", "zstd", "blosclz"])
def test_blosc_delta_flag_decodes_like_c_blosc2(fast_paths, shuffle, cname):
    """fuzz_blosc: header flag 0x08 is c-blosc2's delta filter (BLOSC_DODELTA).  The bit-shuffle
    fast path cleared only the bit-shuffle flag and unshuffled after c-blosc2 had undone the delta
    on still-shuffled bytes: a silent wrong answer.  Such chunks now take c-blosc2's route, whole
    and by items."""
    x = (np.arange(4096) % 300 + 1000).astype(np.uint16)
    chunk = bytearray(_blosc1.compress(x.tobytes(), 2, 5, shuffle, cname, 1024))
    chunk[2] |= 0x08
    chunk = bytes(chunk)
    fast, plain = _decode_both_ways(chunk, x.nbytes)
    assert fast == plain
    _blosc2._set_fast_bitshuffle(True)
    _blosc2._set_fast_lz4(True)
    for start, n in ((0, 10), (100, 10), (511, 2), (1000, 1000), (0, 4096)):
        out = bytearray(2 * n)
        assert _blosc2.getitem(chunk, start, n, out) == 2 * n
        assert bytes(out) == plain[2 * start:2 * (start + n)], (start, n)
