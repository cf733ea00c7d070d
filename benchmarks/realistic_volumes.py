"""Realistic microscopy volumes for the benchmarks (instead of smooth synthetic data that compresses
5-50x): camera data with shot noise compresses about 2x and puts the weight on the codecs.

- :func:`fluorescence`: cells as Gaussian blobs (sizes and brightnesses vary) over a dim,
  slowly varying background, photon counts drawn from a Poisson distribution (shot noise), a camera
  offset, 12-bit values (0-4095) in uint16.
- :func:`lightsheet`: the same inside the sample (an ellipsoid filling part of the volume) and
  exactly 0 outside it (background-subtracted light-sheet data): large empty regions, whose chunks
  are all fill value.

Both are lazy and deterministic: ``vol[z0:z1, y0:y1, x0:x1]`` renders that region (the volume is
made of 64^3 tiles, each from its own seed, so a region is the same whatever blocks it is read in),
in parallel threads (numpy's Poisson sampler releases the GIL).  ``np.asarray(vol)`` renders all of
it.  ``fill(kind, shape, seed, out)`` writes one into an array slab by slab (the anchors harness's
``synth_volume`` signature).  Nothing here depends on zarrbolt: the harness and the asv suite
(benchmarks/benchmarks/_layouts.py) import it as they are.

    python benchmarks/realistic_volumes.py --shape 64,256,256      # statistics of both volumes
"""

from __future__ import annotations

import argparse
import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

TILE = 64
OFFSET = 100        # camera offset (counts with no light)
MAX_VALUE = 4095    # 12-bit camera
_KINDS = {"fluorescence": 1, "lightsheet": 2}


class Volume:
    """A lazy synthetic volume (uint16, zyx): ``shape``, ``dtype``, ``ndim``, basic slicing."""

    def __init__(self, kind: str, shape: tuple[int, int, int], seed: int = 0, spacing: float = 22.0,
                 threads: int | None = None):
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {sorted(_KINDS)}, got {kind!r}")
        if len(shape) != 3 or min(shape) < 1:
            raise ValueError(f"shape must be three positive sizes (z, y, x), got {shape!r}")
        self.kind, self.shape, self.seed = kind, tuple(int(n) for n in shape), int(seed)
        self.dtype = np.dtype(np.uint16)
        self.ndim = 3
        self.threads = threads or min(8, os.cpu_count() or 1)
        self._cells = self._place_cells(spacing)

    # ------------------------------------------------------------------ the sample
    def _inside(self, z: np.ndarray, y: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The light-sheet sample: an ellipsoid of 0.42/0.40/0.36 of the volume around its centre,
        tilted in z-x so that the empty parts are not axis-aligned slabs."""
        Z, Y, X = self.shape
        zc, yc, xc = (z - Z / 2) / (0.42 * Z), (y - Y / 2) / (0.40 * Y), (x - X / 2) / (0.36 * X)
        zt = 0.9 * zc + 0.3 * xc
        return zt * zt + yc * yc + xc * xc <= 1.0

    def _place_cells(self, spacing: float) -> dict[tuple[int, int, int], np.ndarray]:
        """Cells (z, y, x, sigma, photons) bucketed by the tile holding their centre."""
        rng = np.random.default_rng([self.seed, _KINDS[self.kind], 0])
        n = max(1, int(math.prod(self.shape) / spacing ** 3))
        pos = rng.random((n, 3)) * np.array(self.shape)
        if self.kind == "lightsheet":
            pos = pos[self._inside(pos[:, 0], pos[:, 1], pos[:, 2])]
        n = len(pos)
        sigma = rng.uniform(2.5, 5.5, n)
        photons = rng.lognormal(math.log(900.0), 0.5, n)  # peak photons: a few dim, a few bright cells
        cells = np.column_stack([pos, sigma, photons])
        buckets: dict[tuple[int, int, int], list[np.ndarray]] = {}
        for c in cells:
            buckets.setdefault((int(c[0]) // TILE, int(c[1]) // TILE, int(c[2]) // TILE), []).append(c)
        return {k: np.array(v) for k, v in buckets.items()}

    def _tile(self, t: tuple[int, int, int]) -> np.ndarray:
        lo = [i * TILE for i in t]
        hi = [min(a + TILE, n) for a, n in zip(lo, self.shape)]
        axes = [np.arange(a, b, dtype=np.float64) for a, b in zip(lo, hi)]
        # dim background (autofluorescence) that varies slowly across the volume
        zz, yy, xx = (ax / n for ax, n in zip(axes, self.shape))
        lam = (25.0 + 15.0 * zz[:, None, None] + 10.0 * np.cos(3.0 * yy)[None, :, None]
               + 10.0 * np.sin(2.0 * xx)[None, None, :])
        lam = np.broadcast_to(lam, tuple(b - a for a, b in zip(lo, hi))).copy()
        for dz in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    for c in self._cells.get((t[0] + dz, t[1] + dy, t[2] + dx), ()):
                        # the blob within 3 sigma of its centre, where it meets this tile
                        reach = 3.0 * c[3]
                        win = [(max(a, int(p - reach)), min(b, int(p + reach) + 1)) for (a, b), p in zip(zip(lo, hi), c[:3])]
                        if any(w0 >= w1 for w0, w1 in win):
                            continue
                        g = [np.exp(-((np.arange(w0, w1) - p) ** 2) / (2 * c[3] ** 2)) for (w0, w1), p in zip(win, c[:3])]
                        (z0, z1), (y0, y1), (x0, x1) = ((w0 - a, w1 - a) for (w0, w1), a in zip(win, lo))
                        lam[z0:z1, y0:y1, x0:x1] += c[4] * g[0][:, None, None] * g[1][None, :, None] * g[2][None, None, :]
        rng = np.random.default_rng([self.seed, _KINDS[self.kind], 1, *t])
        counts = rng.poisson(lam)
        out = np.minimum(counts + OFFSET, MAX_VALUE).astype(np.uint16)
        if self.kind == "lightsheet":
            mask = self._inside(axes[0][:, None, None], axes[1][None, :, None], axes[2][None, None, :])
            out[~mask] = 0
        return out

    # ------------------------------------------------------------------ numpy-like reading
    def __getitem__(self, key: Any) -> np.ndarray:
        key = key if isinstance(key, tuple) else (key,)
        if Ellipsis in key:
            i = key.index(Ellipsis)
            key = key[:i] + (slice(None),) * (3 - len(key) + 1) + key[i + 1:]
        key = key + (slice(None),) * (3 - len(key))
        box, drop = [], []
        for axis, (k, n) in enumerate(zip(key, self.shape)):
            if isinstance(k, slice):
                a, b, step = k.indices(n)
                if step != 1:
                    raise IndexError("a synthetic volume is read in boxes (slices of step 1)")
                box.append((a, max(a, b)))
            else:
                i = int(k) + (n if int(k) < 0 else 0)
                if not 0 <= i < n:
                    raise IndexError(f"index {k} out of range for axis {axis} of size {n}")
                box.append((i, i + 1))
                drop.append(axis)
        out = np.empty(tuple(b - a for a, b in box), dtype=self.dtype)
        tiles = [(tz, ty, tx) for tz in range(box[0][0] // TILE, -(-box[0][1] // TILE))
                 for ty in range(box[1][0] // TILE, -(-box[1][1] // TILE))
                 for tx in range(box[2][0] // TILE, -(-box[2][1] // TILE))]

        def place(t: tuple[int, int, int]) -> None:
            data = self._tile(t)
            src, dst = [], []
            for i, (a, b) in zip(t, box):
                lo, hi = max(a, i * TILE), min(b, i * TILE + TILE)
                src.append(slice(lo - i * TILE, hi - i * TILE))
                dst.append(slice(lo - a, hi - a))
            out[tuple(dst)] = data[tuple(src)]

        if out.size:
            with ThreadPoolExecutor(self.threads) as pool:
                list(pool.map(place, tiles))
        return out.reshape(tuple(n for i, n in enumerate(out.shape) if i not in drop))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self[...]
        return out if dtype is None else out.astype(dtype)

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize

    def __repr__(self) -> str:
        return f"<{self.kind} volume {self.shape} uint16 seed={self.seed}>"


def fluorescence(shape: tuple[int, int, int], seed: int = 0) -> Volume:
    """Cells over background with shot noise, 12-bit in uint16 (see the module's docstring)."""
    return Volume("fluorescence", shape, seed)


def lightsheet(shape: tuple[int, int, int], seed: int = 0) -> Volume:
    """Fluorescence inside the sample, exactly 0 outside: large empty regions."""
    return Volume("lightsheet", shape, seed)


VOLUMES = {"fluorescence": fluorescence, "lightsheet": lightsheet}


def fill(kind: str, shape: tuple[int, int, int], seed: int, out: Any, log: Any = print, slab: int = 64) -> Any:
    """Fill ``out`` (a uint16 array of ``shape``, e.g. a ``np.lib.format.open_memmap``) with the
    volume ``kind``, slab by slab along z: the signature of the anchors harness's
    ``synth_volume(shape, seed, out, log)`` with the kind first, so that the harness can offer
    these volumes as datasets beside its own."""
    vol = VOLUMES[kind](shape, seed)
    for z0 in range(0, shape[0], slab):
        out[z0:z0 + slab] = vol[z0:z0 + slab]
    log(f"[gen] {kind} volume {tuple(shape)} seed {seed}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", default="64,256,256")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    shape = tuple(int(s) for s in args.shape.split(","))
    import zlib

    for name, make in VOLUMES.items():
        a = np.asarray(make(shape, args.seed))  # type: ignore[arg-type]
        raw = a.tobytes()
        ratio = len(raw) / len(zlib.compress(raw, 6))
        zero = float(np.mean(a == 0))
        print(f"{name:12s} {shape} min {a.min()} max {a.max()} mean {a.mean():.1f} zeros {zero:.1%} "
              f"zlib-6 ratio {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
