"""asv benchmarks of the C kernels against the best numpy (or pure-Python) alternative.

Each class times zarrbolt's kernel and the alternative on the same input, so a run gives the
ratio on one machine at one moment (``asv compare`` / ``asv run --bench Kernel``)."""

import numpy as np

from zarrbolt import kernels


class Crc32c:
    params = [[4096, 1 << 20, 64 << 20]]
    param_names = ["nbytes"]

    def setup(self, n):
        self.data = np.random.default_rng(0).integers(0, 256, n, dtype=np.uint8).tobytes()

    def time_crc32c(self, n):
        kernels.crc32c(self.data)

    def time_crc32c_portable(self, n):
        kernels.crc32c(self.data, impl="portable")


class Transpose:
    params = [[(64, 64, 64), (128, 256, 256)], ["uint16", "float32"], [(2, 1, 0), (1, 2, 0)]]
    param_names = ["shape", "dtype", "order"]
    timeout = 120

    def setup(self, shape, dtype, order):
        self.a = np.random.default_rng(0).integers(0, 1000, shape).astype(dtype)
        self.out = np.empty(tuple(shape[i] for i in order), dtype=dtype)

    def time_zarrbolt(self, shape, dtype, order):
        kernels.transpose(self.a, order, out=self.out)

    def time_numpy(self, shape, dtype, order):
        np.copyto(self.out, self.a.transpose(order))


class StridedScatter:
    """Scatter a decoded 64^3 chunk into its region of a larger output (the read path)."""

    def setup(self):
        self.chunk = np.random.default_rng(0).integers(0, 1000, (64, 64, 64), dtype=np.uint16)
        self.out = np.zeros((128, 256, 256), dtype=np.uint16)
        self.region = self.out[64:128, 64:128, 128:192]

    def time_zarrbolt(self):
        kernels.strided_copy(self.region, self.chunk)

    def time_numpy(self):
        self.region[...] = self.chunk


class ShardIndex:
    params = [[4096, 65536]]
    param_names = ["entries"]

    def setup(self, n):
        import struct

        pairs = np.stack([np.arange(n, dtype=np.uint64) * 100, np.full(n, 100, dtype=np.uint64)], axis=1)
        raw = pairs.astype("<u8").tobytes()
        self.raw = raw + struct.pack("<I", kernels.crc32c(raw))
        self.shape = (n,)
        self.size = n * 100 + len(self.raw)
        self.offs, self.nbytes = kernels.parse_shard_index(self.raw, self.shape, shard_nbytes=self.size)
        self.wanted = np.arange(0, n, 3)

    def time_parse_and_validate(self, n):
        kernels.parse_shard_index(self.raw, self.shape, shard_nbytes=self.size)

    def time_numpy_parse_and_validate(self, n):
        # the same checks written with numpy (crc via zarrbolt: numpy has none)
        kernels.crc32c(self.raw[:-4])
        p = np.frombuffer(self.raw, dtype="<u8", count=2 * n).reshape(-1, 2)
        off, nb = p[:, 0], p[:, 1]
        empty = (off == 2**64 - 1) & (nb == 2**64 - 1)
        end = off + nb
        bool(((end < off) | (end > self.size)).any() & ~empty.all())

    def time_coalesce(self, n):
        kernels.coalesce_ranges(self.offs, self.nbytes, self.wanted, max_gap=4096)
