"""zarrbolt.kernels.crc32c against a pure-Python reference, for every implementation."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrbolt import kernels

POLY = 0x82F63B78
KNOWN_IMPLS = {"portable", "sse42", "sse42_pclmul", "armv8", "avx512_vpclmul"}
IMPLS = kernels.crc32c_implementations()


def _bitwise_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (POLY if c & 1 else 0)
        table.append(c)
    return table


_TABLE = _bitwise_table()


def ref_crc32c(data: bytes, value: int = 0) -> int:
    """Reflected CRC-32C, one byte at a time (table derived bit by bit above)."""
    crc = value ^ 0xFFFFFFFF
    for b in data:
        crc = (crc >> 8) ^ _TABLE[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


def ref_crc32c_bitwise(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (POLY if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def test_reference_matches_bitwise_definition():
    rng = random.Random(1)
    for n in (0, 1, 7, 64, 300):
        data = rng.randbytes(n)
        assert ref_crc32c(data) == ref_crc32c_bitwise(data)


def test_implementations_listed():
    assert IMPLS[0] in KNOWN_IMPLS
    assert "portable" in IMPLS
    assert set(IMPLS) <= KNOWN_IMPLS
    assert len(set(IMPLS)) == len(IMPLS)


# RFC 3720 (iSCSI) appendix B.4 vectors and the usual check value.
VECTORS = [
    (b"", 0x00000000),
    (b"123456789", 0xE3069283),
    (bytes(32), 0x8A9136AA),
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),
]


@pytest.mark.parametrize("impl", [None, "auto", *IMPLS])
@pytest.mark.parametrize(("data", "expected"), VECTORS)
def test_known_vectors(impl, data, expected):
    assert kernels.crc32c(data, impl=impl) == expected


@pytest.mark.parametrize("impl", IMPLS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_random_lengths_and_offsets(impl, data):
    n = data.draw(st.integers(0, 5000), label="n")
    off = data.draw(st.integers(0, 15), label="offset")
    value = data.draw(st.sampled_from([0, 1, 0xFFFFFFFF, 0x12345678]), label="value")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    buf = random.Random(seed).randbytes(n + off)
    view = memoryview(buf)[off:]
    assert kernels.crc32c(view, value, impl=impl) == ref_crc32c(buf[off:], value)


@pytest.mark.parametrize("impl", IMPLS)
def test_every_length_around_block_boundaries(impl):
    # The hardware paths switch between 3x4096-, 3x256-byte and single-stream loops; the
    # AVX-512 path between its 256-byte loop (from 512 bytes), a 64-byte loop and the tail.
    rng = random.Random(7)
    buf = rng.randbytes(3 * 4096 * 2 + 3 * 256 + 64)
    lengths = set(range(0, 40))
    for base in (256, 512, 576, 768, 1024 + 192, 3 * 4096, 2 * 3 * 4096, 3 * 4096 + 768):
        lengths.update(range(base - 9, base + 10))
    for n in sorted(lengths):
        for off in (0, 3):
            chunk = buf[off : off + n]
            assert kernels.crc32c(memoryview(buf)[off : off + n], impl=impl) == ref_crc32c(chunk)


def test_large_buffers_agree_between_implementations():
    rng = np.random.default_rng(3)
    big = rng.integers(0, 256, 5 * 1024 * 1024 + 123, dtype=np.uint8)
    for off, n in ((0, big.size), (5, 3 * 1024 * 1024 + 17), (11, 1024 * 1024)):
        part = big[off : off + n]
        values = {impl: kernels.crc32c(part, impl=impl) for impl in IMPLS}
        assert len(set(values.values())) == 1, values
        assert kernels.crc32c(part) == values["portable"]
    # and one large buffer against the pure-Python reference
    one_mb = big[: 1 << 20].tobytes()
    assert kernels.crc32c(one_mb) == ref_crc32c(one_mb)


@pytest.mark.parametrize("impl", IMPLS)
def test_continuation(impl):
    rng = random.Random(11)
    for _ in range(30):
        a = rng.randbytes(rng.randrange(0, 20000))
        b = rng.randbytes(rng.randrange(0, 20000))
        whole = kernels.crc32c(a + b, impl=impl)
        assert kernels.crc32c(b, value=kernels.crc32c(a, impl=impl), impl=impl) == whole
    assert kernels.crc32c(b"", 0xDEADBEEF, impl=impl) == 0xDEADBEEF
    # numpy integers are accepted as the running value
    assert kernels.crc32c(b"6789", np.uint32(kernels.crc32c(b"12345")), impl=impl) == 0xE3069283


def test_buffer_types():
    raw = bytes(range(256)) * 17
    expected = ref_crc32c(raw)
    arr = np.frombuffer(raw, dtype=np.uint8)
    candidates = [
        raw,
        bytearray(raw),
        memoryview(raw),
        arr,
        arr.view(np.float64),
        arr.view(np.uint16).reshape(17, 128),
        np.asfortranarray(arr.reshape(1, -1)),  # 1 x N: both C- and F-contiguous
    ]
    for obj in candidates:
        assert kernels.crc32c(obj) == expected, type(obj)
    assert kernels.crc32c(np.zeros(0, dtype=np.float32)) == 0
    assert isinstance(kernels.crc32c(raw), int)


def test_errors():
    with pytest.raises(TypeError):
        kernels.crc32c("123456789")
    with pytest.raises(TypeError):
        kernels.crc32c(12345)
    with pytest.raises(TypeError):
        kernels.crc32c(None)
    with pytest.raises(ValueError, match="C-contiguous"):
        kernels.crc32c(np.zeros((4, 4), dtype=np.uint8)[:, ::2])
    with pytest.raises(ValueError, match="C-contiguous"):
        kernels.crc32c(np.zeros((4, 4), dtype=np.uint8, order="F"))
    with pytest.raises(ValueError, match="C-contiguous"):
        kernels.crc32c(memoryview(b"abcdef")[::2])
    with pytest.raises(ValueError):
        kernels.crc32c(b"x", -1)
    with pytest.raises(ValueError):
        kernels.crc32c(b"x", 2**32)
    with pytest.raises(TypeError):
        kernels.crc32c(b"x", 1.0)
    with pytest.raises(TypeError):
        kernels.crc32c(b"x", True)
    with pytest.raises(ValueError, match="unknown implementation"):
        kernels.crc32c(b"x", impl="sse9")
    with pytest.raises(TypeError):
        kernels.crc32c(b"x", impl=1)
    for name in sorted(KNOWN_IMPLS - set(IMPLS)):
        with pytest.raises(ValueError, match="not available"):
            kernels.crc32c(b"x", impl=name)
