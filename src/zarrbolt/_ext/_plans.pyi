"""The fused decode (``Plan``) and encode (``EncodePlan``) pipelines and the native pool:
compiled module ``_plans.pyx`` (csrc/decode.c, csrc/encode.c, csrc/pool.c)."""

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer, CapsuleType, Self, disjoint_base

_I64 = np.ndarray[Any, np.dtype[np.int64]]
_Step = tuple[str, CapsuleType, bytes]
_Kernel = tuple[CapsuleType, bytes, int, int]

POOL_MAX: int
"""The most threads (the caller's included) one native pool job uses."""
MAXDIM: int
"""The most dimensions a decode plan takes."""
MAXSTEPS: int
"""The most bytes->bytes codecs a decode plan takes."""
MAXKERNELS: int
"""The most array->array kernels a plan takes."""
STEP_PARAMS_MAX: int
"""The largest parameter block of one step, in bytes."""
ENC_WRITTEN: int
"""``write_par`` result: the chunk was encoded and written."""
ENC_FILL: int
"""``write_par`` result: the chunk was all fill value and skipped."""
WRITE_STAGES: dict[int, str]
"""Write stage code -> name (``create``, ``data``, ``rename``) of a file error."""
ENC_MAXDIM: int
ENC_MAXSTEPS: int
ENC_MAXITEM: int
"""Limits of an encode plan: dimensions, bytes->bytes steps, item size in bytes."""
ENC_SKIPPED_FILL: int
"""``encode_chunks`` offset of a chunk that was all fill value (not encoded)."""
ENC_SKIPPED_ROOM: int
"""``encode_chunks`` offset of a chunk larger than its batch had room for."""

def pool_threads() -> int:
    """Native threads the read pool holds (testing aid)."""

def pool_callers_peak(reset: bool = False) -> int:
    """The most native batch runs inside the GIL-free batch runner at once since the last reset
    (testing aid)."""

@disjoint_base
class Plan:
    """A compiled decode chain (``bytes->bytes* -> bytes -> array->array*``) for one chunk shape."""

    @property
    def scratch_cap(self) -> int: ...
    @property
    def out_itemsize(self) -> int: ...
    # Cython's __cinit__: the arguments reach the type's __new__
    def __new__(cls, steps: Sequence[_Step], itemsize: int, byteswap: int, chunk_shape: Sequence[int],
                perm: Sequence[int] | None, scratch_cap: int, partial: tuple[Any, ...] | None = None,
                elem: dict[str, Any] | None = None, kernels: Sequence[_Kernel] = ()) -> Self: ...
    def decode(self, buffers: list[Buffer], starts: npt.NDArray[np.int64], shapes: npt.NDArray[np.int64],
               out_offsets: npt.NDArray[np.int64], out: np.ndarray[Any, Any], stream: bool = False,
               scratch: Buffer | None = None, nslots: int = 1) -> None:
        """Decode ``buffers[i]`` into ``out`` at byte offset ``out_offsets[i]``."""
    def read_decode_par(self, paths: list[bytes], bufs: list[tuple[Buffer, Buffer | None]], bounds: Sequence[int],
                        starts: npt.NDArray[np.int64], shapes: npt.NDArray[np.int64],
                        out_offsets: npt.NDArray[np.int64], out: np.ndarray[Any, Any], stream: bool = False,
                        nslots: int = 1, nofollow: bool = False) -> tuple[list[int], list[int]]:
        """Read whole chunk files and decode them on the native pool: ``(missing, too_large)``."""
    def read_shards_par(self, paths: list[bytes], counts: Sequence[int], entries: npt.NDArray[np.int64],
                        bufs: list[tuple[Buffer, Buffer | None]], bounds: Sequence[int],
                        starts: npt.NDArray[np.int64], shapes: npt.NDArray[np.int64],
                        out_offsets: npt.NDArray[np.int64], out: np.ndarray[Any, Any], nentries: int,
                        index_at_end: bool, index_crc: bool, max_gap: int, stream: bool = False,
                        nslots: int = 1, nofollow: bool = False) -> tuple[list[int], list[int], list[int]]:
        """Read inner chunks from local shard files and decode them: ``(missing, too_large, retry)``."""
    @property
    def chunk_shape(self) -> tuple[int, ...]:
        """The decoded chunk's shape (array order)."""
    def scratch_bytes(self, nslots: int = 1) -> int:
        """Bytes of the ``scratch`` buffer that a call with ``nslots`` slots needs."""

@disjoint_base
class EncodePlan:
    """A compiled ``[elementwise] [permutation] [array kernel]* -> bytes -> (bytes->bytes step)*``
    chain for writing chunks."""

    def __new__(cls, steps: Sequence[_Step], itemsize: int, byteswap: int, chunk_shape: Sequence[int],
                perm: Sequence[int] | None, fill: bytes, skip_fill: bool, buf_cap: int,
                elem: dict[str, Any] | None = None, kernels: Sequence[_Kernel] = ()) -> Self: ...
    @property
    def work_bytes(self) -> int:
        """Bytes of work buffer one thread needs."""
    @property
    def chunk_nbytes(self) -> int:
        """Bytes of one decoded chunk."""
    @property
    def pack_room(self) -> int:
        """Output bytes :meth:`encode_chunks` keeps per chunk."""
    def encode_chunks(self, src: np.ndarray[Any, Any], offsets: npt.NDArray[np.int64], shapes: npt.NDArray[np.int64],
                      bounds: Sequence[int], work: list[Buffer | None],
                      out: npt.NDArray[np.uint8] | None = None) -> tuple[npt.NDArray[np.uint8], _I64]:
        """Encode chunks into memory: ``(out, where)``, ``where[i]`` the ``(offset, size)`` of task ``i``."""
    def encode_stream(self, src: np.ndarray[Any, Any], offsets: npt.NDArray[np.int64], shapes: npt.NDArray[np.int64],
                      work: list[Buffer | None], fd: int, ring: npt.NDArray[np.uint8], base: int = 0,
                      slot: int = 0) -> tuple[_I64, int]:
        """Encode chunks and write them in order to ``fd`` from ``base``: ``(where, end)``."""
    def write_par(self, src: np.ndarray[Any, Any], paths: list[bytes], tmps: list[bytes],
                  offsets: npt.NDArray[np.int64], shapes: npt.NDArray[np.int64], bounds: Sequence[int],
                  work: list[Buffer | None], fsync: bool = False) -> tuple[int, int, int, int, bytes]:
        """Encode and atomically write chunks on the native pool:
        ``(status, failed, os_error, stage, results)``."""

# testing aid: fused element conversion in the scatter copy on (default) or off; the previous setting
def _set_fused_convert(on: bool) -> bool: ...
def _os_error_text(code: int) -> str: ...
