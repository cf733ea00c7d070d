"""asv benchmarks of cast_value / scale_offset against numpy's fastest equivalent sequence."""

import numpy as np

from zarrbolt import kernels

N = 4 << 20  # 16 MiB of float32


class CastF32ToU16:
    """float32 -> uint16, nearest-even rounding, clamp: the OME-Zarr quantisation hot path."""

    def setup(self):
        rng = np.random.default_rng(0)
        self.x = rng.uniform(-1000, 70000, N).astype(np.float32)
        self.out = np.empty(N, np.uint16)
        self.tmp = np.empty(N, np.float32)

    def time_zarrbolt(self):
        kernels.cast_value(self.x, np.uint16, out_of_range="clamp", out=self.out)

    def time_numpy_rint_clip_astype(self):
        np.rint(self.x, out=self.tmp)
        np.clip(self.tmp, 0, 65535, out=self.tmp)
        self.out[...] = self.tmp  # astype into the preallocated output


class CastU16ToF32:
    def setup(self):
        self.x = np.random.default_rng(0).integers(0, 65536, N).astype(np.uint16)
        self.out = np.empty(N, np.float32)

    def time_zarrbolt(self):
        kernels.cast_value(self.x, np.float32, out=self.out)

    def time_numpy(self):
        self.out[...] = self.x


class ScaleOffsetF32:
    def setup(self):
        self.x = np.random.default_rng(0).uniform(0, 1000, N).astype(np.float32)
        self.out = np.empty(N, np.float32)

    def time_zarrbolt_encode(self):
        kernels.scale_offset_encode(self.x, np.float32(100), np.float32(4), out=self.out)

    def time_numpy_encode(self):
        np.subtract(self.x, np.float32(100), out=self.out)
        np.multiply(self.out, np.float32(4), out=self.out)


class FusedScaleOffsetCast:
    """float32 -> (x - 100) * 4 -> uint16 nearest-even clamp, and back."""

    def setup(self):
        rng = np.random.default_rng(0)
        self.x = (rng.integers(0, 65536, N) / 4 + 100).astype(np.float32)
        self.enc = np.empty(N, np.uint16)
        self.dec = np.empty(N, np.float32)
        self.tmp = np.empty(N, np.float32)

    def time_zarrbolt_encode(self):
        kernels.scale_offset_cast(self.x, np.float32(100), np.float32(4), np.uint16, out_of_range="clamp", out=self.enc)

    def time_numpy_encode(self):
        np.subtract(self.x, np.float32(100), out=self.tmp)
        np.multiply(self.tmp, np.float32(4), out=self.tmp)
        np.rint(self.tmp, out=self.tmp)
        np.clip(self.tmp, 0, 65535, out=self.tmp)
        self.enc[...] = self.tmp

    def time_zarrbolt_decode(self):
        kernels.cast_scale_offset_decode(self.enc, np.float32, np.float32(100), np.float32(4), out=self.dec)

    def time_numpy_decode(self):
        self.dec[...] = self.enc
        np.divide(self.dec, np.float32(4), out=self.dec)
        np.add(self.dec, np.float32(100), out=self.dec)
