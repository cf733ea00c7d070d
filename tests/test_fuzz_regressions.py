"""Inputs the fuzz harnesses (fuzz/, `make fuzz`) found, rebuilt deterministically from valid
encodings, with the behaviour the fix gives.  One test per finding; the docstring names the
harness."""

from __future__ import annotations

import numpy as np
import pytest

from zarrbolt._ext import _blosc1, _blosc2, _deflate, _lz4
from zarrbolt.errors import CorruptChunkError


@pytest.fixture
def fast_paths():
    """Restore zarrbolt's blosc fast paths after a test that switches them."""
    old = _blosc2._set_fast_bitshuffle(True), _blosc2._set_fast_lz4(True)
    yield
    _blosc2._set_fast_bitshuffle(old[0])
    _blosc2._set_fast_lz4(old[1])


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("shuffle", [0, 1, 2])
@pytest.mark.parametrize("cname", ["lz4", "zstd", "blosclz"])
def test_blosc_delta_flag_is_refused(fast_paths, fast, shuffle, cname):
    """fuzz_blosc: header flag 0x08 is c-blosc2's delta filter (BLOSC_DODELTA), which c-blosc 1.x
    (the Zarr blosc format's library) refuses.  zarrbolt decoded such chunks: the bit-shuffle fast
    path ignored the flag (a silent wrong answer) and c-blosc2's getitem disagreed with its own
    decompress across blocks.  They are now corrupt chunks on every route."""
    x = (np.arange(4096) % 300 + 1000).astype(np.uint16)
    good = _blosc1.compress(x.tobytes(), 2, 5, shuffle, cname, 1024)
    assert _blosc2.decompress(good, x.nbytes) == x.tobytes()
    chunk = bytearray(good)
    chunk[2] |= 0x08
    chunk = bytes(chunk)
    _blosc2._set_fast_bitshuffle(fast)
    _blosc2._set_fast_lz4(fast)
    with pytest.raises(CorruptChunkError):
        _blosc2.decompress(chunk, x.nbytes)
    with pytest.raises(CorruptChunkError):
        _blosc2.cbuffer_sizes(chunk)
    for start, n in ((0, 10), (511, 2), (0, 4096)):
        with pytest.raises(CorruptChunkError):
            _blosc2.getitem(chunk, start, n, bytearray(2 * n))


# fuzz_blosc's input: a byte-shuffled LZ4 chunk (typesize 4, one 2700-byte block of 4 streams)
# whose stream 1 has a match of offset 0
LZ4_OFFSET0_CHUNK = bytes.fromhex(
    "020121048c0a00008c0a00007800000014000000150000009f7a62207274726c616f0900ffff845074726c616f15"
    "0000009f616f7a6220728c8d940000ffff8450207274726c150000009f726c616f7a622072740900ffff84507a62"
    "207274150000009f7274726c616f7a62200900ffff8450616f7a6220")


@pytest.mark.parametrize("fast", [True, False])
def test_blosc_lz4_offset_zero_is_refused(fast_paths, fast):
    """fuzz_blosc: LZ4's decoders accept a match of offset 0 (forbidden by the format), which
    leaves the bytes it covers as the output buffer held them: the decode then depended on
    uninitialized memory and zarrbolt's partial decode disagreed with the whole one.  Streams are
    now checked for it on every route (zarrbolt/lz4_check.h)."""
    _blosc2._set_fast_lz4(fast)
    with pytest.raises(CorruptChunkError):
        _blosc2.decompress(LZ4_OFFSET0_CHUNK, 2700)
    with pytest.raises(CorruptChunkError):
        _blosc2.getitem(LZ4_OFFSET0_CHUNK, 7, 522, bytearray(4 * 522))
    good = bytearray(LZ4_OFFSET0_CHUNK)
    good[59:61] = b"\x09\x00"  # the offset of a sibling stream's match: a well-formed chunk
    assert len(_blosc2.decompress(bytes(good), 2700)) == 2700


def test_numcodecs_lz4_offset_zero_is_refused():
    """The same check in numcodecs' lz4 format (zarrbolt._ext._lz4): whole and prefix decodes."""
    enc = bytearray(_lz4.compress(b"abcd" * 1000))
    assert enc[4] >> 4 == 4 and enc[5:9] == b"abcd"  # first sequence: 4 literals, then a match
    assert _lz4.decompress(bytes(enc), 4000) == b"abcd" * 1000
    enc[9:11] = b"\x00\x00"
    with pytest.raises(CorruptChunkError):
        _lz4.decompress(bytes(enc), 4000)
    with pytest.raises(CorruptChunkError):
        _lz4.decompress_prefix(bytes(enc), 4000, 100)


def test_numcodecs_lz4_impossible_size_is_refused_before_allocating():
    """Found reviewing the decoders' allocations after fuzz_chunk_read's zlib finding (below): the
    4-byte header's size was allocated (up to the caller's limit, 2 GiB for variable-length
    chunks) before decoding.  A block decodes to at most 255 bytes per input byte;
    a larger claim is corrupt."""
    enc = bytearray(_lz4.compress(b"x" * 100))
    enc[:4] = (2**31 - 2).to_bytes(4, "little")
    assert _lz4.decoded_size(bytes(enc)) == 2**31 - 2  # what the header claims
    with pytest.raises(CorruptChunkError, match="more than an LZ4 block"):
        _lz4.decompress(bytes(enc), 2**31 - 1)
    with pytest.raises(CorruptChunkError):
        _lz4.decompress_into(bytes(enc), bytearray(1 << 16))
    big = _lz4.compress(bytes(1 << 20))  # a real high-ratio block is still accepted
    assert _lz4.decoded_size(big) == 1 << 20 and _lz4.decompress(big, 1 << 20) == bytes(1 << 20)


def test_zlib_decompress_does_not_reserve_its_limit():
    """fuzz_chunk_read (v2 zlib + vlen-bytes): numcodecs' zlib allocated its whole max_size (2 GiB
    for a variable-length chunk) for every chunk.  It now starts from a guess and grows."""
    import tracemalloc

    enc = _deflate.zlib_compress(b"abc" * 1000)
    tracemalloc.start()
    try:
        assert _deflate.zlib_decompress(enc, 2**31 - 1) == b"abc" * 1000
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20
    big = bytes(range(256)) * 40000  # decodes past the first guess: grown, same result
    assert _deflate.zlib_decompress(_deflate.zlib_compress(big, 9), 2**31 - 1) == big
    with pytest.raises(CorruptChunkError):
        _deflate.zlib_decompress(_deflate.zlib_compress(big, 9), len(big) - 1)


@pytest.mark.parametrize("dtype", [",i2", "i2,(3", "(", "<i2x"])
def test_v2_filter_dtype_numpy_cannot_parse(tmp_path, dtype):
    """fuzz_metadata_v2: a delta filter's ``dtype`` of ``",i2"`` made numpy's dtype parser raise
    SyntaxError (it reads comma strings as Python), which escaped as an untyped exception.  Every
    string numpy cannot parse is now a MetadataError, in the codecs' and the data types' parsers."""
    import json

    import zarrbolt
    from zarrbolt.errors import MetadataError, ZarrboltError

    meta = {"zarr_format": 2, "shape": [40, 24], "chunks": [20, 24], "dtype": "<i2", "fill_value": 0, "order": "C",
            "filters": [{"id": "delta", "dtype": dtype}], "compressor": None}
    (tmp_path / ".zarray").write_text(json.dumps(meta))
    with pytest.raises(MetadataError):
        zarrbolt.open_array(tmp_path, mode="r")
    meta["filters"] = [{"id": "delta", "dtype": "<" + dtype}]
    (tmp_path / ".zarray").write_text(json.dumps(meta))
    with pytest.raises(MetadataError):
        zarrbolt.open_array(tmp_path, mode="r")
    with pytest.raises(ZarrboltError):  # the same strings as an array's data type
        zarrbolt.create_array(tmp_path / "x", shape=(2,), dtype=dtype)
