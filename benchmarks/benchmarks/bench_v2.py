"""asv benchmarks of Zarr v2 arrays: full reads, a plane and full writes of a 64x1024x1024 uint16
array (128 MiB, the synthetic volume of ``zarrbolt.__main__``) stored as v2 with blosc-lz4 or
zstd, in C and F order, beside the same array stored as v3 with the equivalent chain (a v2 array
runs the v3 chain ``[transpose] + bytes + compressor`` through the same fused C plans, so the two
should take the same time).  zarr-python's own reads of the v2 array are timed where it is
installed (the reference venv)."""

import shutil
import tempfile

import numpy as np

import zarrbolt as zb
from zarrbolt.__main__ import synthetic_volume

SHAPE = (64, 1024, 1024)
CHUNKS = (16, 256, 256)
COMPRESSORS = {
    "blosc-lz4": ({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1},
                  {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2}}),
    "zstd": ({"id": "zstd", "level": 1}, {"name": "zstd", "configuration": {"level": 1, "checksum": False}}),
}


class V2Array:
    params = [list(COMPRESSORS), ["C", "F"]]
    param_names = ["compressor", "order"]
    timeout = 300

    def setup(self, compressor, order):
        self.dir = tempfile.mkdtemp(prefix="zb-bench-v2-")
        self.data = synthetic_volume(SHAPE)
        v2conf, v3conf = COMPRESSORS[compressor]
        self.v2 = f"{self.dir}/v2"
        zb.create_array(self.v2, data=self.data, chunks=CHUNKS, zarr_format=2, order=order, compressor=v2conf)
        codecs = ([{"name": "transpose", "configuration": {"order": [2, 1, 0]}}] if order == "F" else []) + [
            {"name": "bytes", "configuration": {"endian": "little"}}, v3conf]
        self.v3 = f"{self.dir}/v3"
        zb.create_array(self.v3, data=self.data, chunks=CHUNKS, codecs=codecs)

    def teardown(self, compressor, order):
        shutil.rmtree(self.dir, ignore_errors=True)

    def time_read_v2(self, compressor, order):
        zb.open_array(self.v2, mode="r")[...]

    def time_read_v3_same_chain(self, compressor, order):
        zb.open_array(self.v3, mode="r")[...]

    def time_read_plane_v2(self, compressor, order):
        zb.open_array(self.v2, mode="r")[31]

    def time_write_v2(self, compressor, order):
        zb.open_array(self.v2, mode="r+")[...] = self.data

    def time_read_v2_zarr_python(self, compressor, order):
        try:
            import zarr
        except ImportError:
            raise NotImplementedError("zarr-python is not installed") from None
        with zarr.config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}):
            zarr.open_array(self.v2, mode="r")[...]

    def track_same_pixels(self, compressor, order):
        return int(np.array_equal(zb.open_array(self.v2, mode="r")[...], self.data))
