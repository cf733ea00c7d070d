"""End-to-end asv benchmarks: the anchors-harness workloads on the microscopy layouts a-e.

The layouts and the smaller volume are in ``_layouts.py`` (128x512x512, 64 MiB of uint16; 128 MiB
of float32 for layout e).  The workloads are the harness's: a full-volume read, a 64^3 block at a
random unaligned position, a plane ``arr[z]`` (what viewers do) and ``arr[z:z+1]``, a 64x256x256
region of interest at a random position, and a full write (create + assign).  Every layout is
written once per commit by ``setup_cache``, with that commit's zarrbolt.

``ReadRealistic`` / ``WriteRealistic``: the same on the realistic datasets (a fluorescence-like
volume with shot noise, a light-sheet-like one with large empty regions) in the uint16 layouts."""

import shutil
import tempfile

import numpy as np

import zarrbolt as zb

from ._layouts import (DATASETS, LAYOUTS, NAMES, SHAPE, UINT16_LAYOUTS, data_root, layout_data, realistic_volume,
                       volume, write_layouts)

ROI = (64, 256, 256)


class _Volume:
    params = [NAMES]
    param_names = ["layout"]
    timeout = 300
    # one process, at most 5 samples: a commit's suite stays within minutes on a 2-core machine
    rounds = 1
    repeat = (1, 5, 4.0)

    def setup_cache(self):
        root = data_root("io")
        u16 = volume(SHAPE)
        write_layouts(root, u16)
        np.save(f"{root}/ref.npy", u16)
        return root

    def setup(self, root, layout):
        self.arr = zb.open_array(f"{root}/{layout}.zarr", mode="r")
        self.rng = np.random.default_rng(0)

    def _corner(self, size):
        return tuple(int(self.rng.integers(0, s - c + 1)) for s, c in zip(SHAPE, size))


class Read(_Volume):
    """Warm-cache reads from a local directory store, the default thread count."""

    def time_full(self, root, layout):
        self.arr[...]

    def time_block_64(self, root, layout):
        z, y, x = self._corner((64, 64, 64))
        self.arr[z:z + 64, y:y + 64, x:x + 64]

    def time_plane_z(self, root, layout):
        self.arr[int(self.rng.integers(0, SHAPE[0]))]

    def time_plane_z_slice(self, root, layout):
        z = int(self.rng.integers(0, SHAPE[0]))
        self.arr[z:z + 1]

    def time_roi_64x256x256(self, root, layout):
        z, y, x = self._corner(ROI)
        self.arr[z:z + ROI[0], y:y + ROI[1], x:x + ROI[2]]

    def time_open(self, root, layout):
        zb.open_array(f"{root}/{layout}.zarr", mode="r")

    def peakmem_full(self, root, layout):
        self.arr[...]

    def track_peak_ratio_full(self, root, layout):
        """Peak memory a full read adds, as a multiple of the output size (target <= 1.2)."""
        from ._peak import measure

        return measure(f"{root}/{layout}.zarr", 2)["ratio"]

    track_peak_ratio_full.unit = "x output"


class ReadThreads(_Volume):
    """Full reads of the sharded layouts with 1 and 2 threads: the parallel speedup."""

    params = [["b", "d"], [1, 2]]
    param_names = ["layout", "threads"]

    def setup(self, root, layout, threads):
        if not hasattr(zb.config, "set"):
            raise NotImplementedError("zarrbolt.config.set is missing in this commit")
        self._cfg = zb.config.set(threads=threads)
        self._cfg.__enter__()
        super().setup(root, layout)

    def teardown(self, root, layout, threads):
        self._cfg.__exit__(None, None, None)

    def time_full(self, root, layout, threads):
        self.arr[...]


class Write(_Volume):
    """Full writes (create + assign the whole volume) to a local directory store."""

    def setup(self, root, layout):
        self.data = layout_data(layout, np.load(f"{root}/ref.npy"))
        self.out = tempfile.mkdtemp(prefix="zb-asv-w-")

    def teardown(self, root, layout):
        shutil.rmtree(self.out, ignore_errors=True)

    def _write(self, layout):
        a = zb.create_array(f"{self.out}/w.zarr", shape=SHAPE, overwrite=True, **LAYOUTS[layout])
        a[...] = self.data

    def time_full(self, root, layout):
        self._write(layout)

    def time_full_per_codec_path(self, root, layout):
        """The same write without the fused C encode (each chunk through the Python codec
        chain): the ratio to time_full is what csrc/encode.c saves."""
        with zb.config.set(fused_pipeline=False):
            self._write(layout)

    def peakmem_full(self, root, layout):
        self._write(layout)


class _Realistic:
    """The realistic datasets (benchmarks/realistic_volumes.py) in the uint16 layouts a-d."""

    params = [list(DATASETS), UINT16_LAYOUTS]
    param_names = ["dataset", "layout"]
    timeout = 300
    rounds = 1
    repeat = (1, 5, 4.0)

    def setup_cache(self):
        root = data_root("io-realistic")
        for kind in DATASETS:
            u16 = realistic_volume(kind, SHAPE)
            np.save(f"{root}/{kind}.npy", u16)
            for name in UINT16_LAYOUTS:
                a = zb.create_array(f"{root}/{kind}-{name}.zarr", shape=SHAPE, **LAYOUTS[name])
                a[...] = u16
        return root

    def setup(self, root, dataset, layout):
        self.arr = zb.open_array(f"{root}/{dataset}-{layout}.zarr", mode="r")
        self.rng = np.random.default_rng(0)

    def _corner(self, size):
        return tuple(int(self.rng.integers(0, s - c + 1)) for s, c in zip(SHAPE, size))


class ReadRealistic(_Realistic):
    """Warm-cache reads of the realistic datasets: the weight is on the codecs."""

    def time_full(self, root, dataset, layout):
        self.arr[...]

    def time_block_64(self, root, dataset, layout):
        z, y, x = self._corner((64, 64, 64))
        self.arr[z:z + 64, y:y + 64, x:x + 64]

    def time_plane_z(self, root, dataset, layout):
        self.arr[int(self.rng.integers(0, SHAPE[0]))]

    def track_ratio(self, root, dataset, layout):
        """Compression ratio of the layout on the dataset (bytes / bytes stored)."""
        from zarrbolt.cli.info import stored

        _, nbytes, _ = stored(self.arr)
        return self.arr.nbytes / max(nbytes, 1)

    track_ratio.unit = "x"


class WriteRealistic(_Realistic):
    """Full writes (create + assign) of the realistic datasets."""

    def setup(self, root, dataset, layout):
        self.data = np.load(f"{root}/{dataset}.npy")
        self.out = tempfile.mkdtemp(prefix="zb-asv-wr-")

    def teardown(self, root, dataset, layout):
        shutil.rmtree(self.out, ignore_errors=True)

    def time_full(self, root, dataset, layout):
        a = zb.create_array(f"{self.out}/w.zarr", shape=SHAPE, overwrite=True, **LAYOUTS[layout])
        a[...] = self.data
