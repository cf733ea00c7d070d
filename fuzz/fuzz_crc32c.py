"""CRC-32C (csrc/crc32c.c): every implementation this CPU has (hardware CRC with and without
PCLMUL folding, portable slicing), all lengths and alignments, continuation; and the ``crc32c``
codec's check-and-strip.

Input: one byte (alignment offset and continuation split), then the data.  Oracles: every
implementation equals a table-driven reference; ``crc(a + b) == crc(b, crc(a))``; the codec
accepts exactly the buffers whose trailing 4 bytes are the CRC of the rest."""

from __future__ import annotations

import common
from zarrbolt import kernels
from zarrbolt.codecs.crc32c import Crc32cCodec
from zarrbolt.errors import ChecksumError, CorruptChunkError

IMPLS = kernels.crc32c_implementations()
_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _TABLE.append(_c)

REF_MAX = 4096  # the reference runs in Python: longer inputs are checked implementation against implementation


def crc_ref(data: bytes, value: int = 0) -> int:
    c = value ^ 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def one_input(data: bytes) -> None:
    if not data:
        return
    ctl, body = data[0], data[1:]
    buf = bytearray(16 + len(body))
    off = ctl & 15  # misaligned starts
    buf[off:off + len(body)] = body
    view = memoryview(buf)[off:off + len(body)]
    results = {impl: kernels.crc32c(view, impl=impl) for impl in IMPLS}
    common.check(len(set(results.values())) == 1, f"implementations disagree: {results}")
    crc = results[IMPLS[0]]
    if len(body) <= REF_MAX:
        common.check(crc == crc_ref(body), "CRC-32C differs from the reference")
    cut = (ctl >> 4) * len(body) // 15
    for impl in IMPLS:
        common.check(kernels.crc32c(body[cut:], kernels.crc32c(body[:cut], impl=impl), impl=impl) == crc,
                     f"{impl}: continuation differs")
    codec = Crc32cCodec()
    try:
        out = codec.decode(body, None, len(body))
    except (ChecksumError, CorruptChunkError):
        common.check(len(body) < 4 or kernels.crc32c(body[:-4]) != int.from_bytes(body[-4:], "little"),
                     "a valid checksum was refused")
        return
    common.check(bytes(out) == body[:-4], "the codec did not strip exactly the checksum")
    common.check(kernels.crc32c(body[:-4]) == int.from_bytes(body[-4:], "little"), "a bad checksum was accepted")


if __name__ == "__main__":
    common.main(one_input)
