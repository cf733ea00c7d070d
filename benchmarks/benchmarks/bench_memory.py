"""Peak memory of a full read and of a read-then-write round trip (issue 22's goals), layouts a-e.

asv's ``peakmem_`` benchmarks record the peak resident memory of the process that runs them
(setup included: opening the array; the round trip's source is read inside the benchmark).
The ``track_`` ones run the operation in a fresh process (``_peak.py``) and report what it added
to the process's resident memory at its peak as a multiple of the goal: at most 1 is within it
(a full read: 1.1 x output + 64 MiB; a round trip: 1.3 x the volume).  The goals are set for the
harness's volumes (128-512 MiB); on asv's 64 MiB volume the fixed per-thread buffers (~40 MiB
with 2 threads) weigh more, and the round trip's value is above 1 for every layout: it is a
tracker (lower is better), the goal itself is checked by ``benchmarks/peak_memory.py``.  Each is measured with the output cache at its default (``"auto"``) and off.
"""

import shutil
import tempfile

import zarrbolt as zb

from ._layouts import LAYOUTS, NAMES, SHAPE, data_root, volume, write_layouts


class PeakMemory:
    params = [NAMES, ["auto", "off"]]
    param_names = ["layout", "output_cache"]
    timeout = 300
    rounds = 1
    repeat = (1, 3, 4.0)

    def setup_cache(self):
        root = data_root("memory")
        write_layouts(root, volume(SHAPE))
        return root

    def setup(self, root, layout, cache):
        self._cfg = zb.config.set(output_cache_bytes=0 if cache == "off" else "auto")
        self._cfg.__enter__()
        self.arr = zb.open_array(f"{root}/{layout}.zarr", mode="r")
        self.out = tempfile.mkdtemp(prefix="zb-asv-mem-")

    def teardown(self, root, layout, cache):
        self._cfg.__exit__(None, None, None)
        shutil.rmtree(self.out, ignore_errors=True)

    def peakmem_full_read(self, root, layout, cache):
        self.arr[...]

    def peakmem_round_trip(self, root, layout, cache):
        data = self.arr[...]
        w = zb.create_array(f"{self.out}/w.zarr", shape=SHAPE, overwrite=True, **LAYOUTS[layout])
        w[...] = data

    def _of_goal(self, root, layout, cache, mode):
        from ._peak import measure

        r = measure(f"{root}/{layout}.zarr", 2, mode, "off" if cache == "off" else "default")
        return float(r["of_goal"])

    def track_full_read_peak_of_goal(self, root, layout, cache):
        """Memory a full read adds at its peak (fresh process) / (1.1 x output + 64 MiB)."""
        return self._of_goal(root, layout, cache, "read")

    track_full_read_peak_of_goal.unit = "x goal"

    def track_round_trip_peak_of_goal(self, root, layout, cache):
        """Memory a read + write of the volume adds at its peak (fresh process) / (1.3 x volume)."""
        return self._of_goal(root, layout, cache, "roundtrip")

    track_round_trip_peak_of_goal.unit = "x goal"
