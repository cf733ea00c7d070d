"""All kernel ratios of issue 3 in one run.  Needs the `crc32c` and `cast-value-rs` packages
(the reference venv: `make refvenv`, then `.venv-ref/bin/pip install .`)."""
import time
import numpy as np
from zarrbolt import kernels
import crc32c as crcpkg
import cast_value_rs as cvrs

def best(f, r=9):
    ts = []
    for _ in range(r):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return min(ts)

rng = np.random.default_rng(0)
data = rng.integers(0, 256, 64 << 20, dtype=np.uint8).tobytes()
a, b = best(lambda: kernels.crc32c(data)), best(lambda: crcpkg.crc32c(data))
print(f"crc32c 64 MiB: zarrbolt {len(data)/a/1e9:.1f} GB/s, crc32c pkg {len(data)/b/1e9:.1f} GB/s, ratio {b/a:.2f}")
for shape in [(64, 64, 64), (256, 512, 512)]:
    x = rng.integers(0, 1000, shape).astype(np.uint16)
    out = np.empty(shape[::-1], np.uint16)
    a = best(lambda: kernels.transpose(x, (2, 1, 0), out=out))
    b = best(lambda: np.ascontiguousarray(x.transpose(2, 1, 0)), r=5 if shape[0] > 64 else 9)
    print(f"transpose {shape} u16 (2,1,0): zarrbolt {a*1e3:.2f} ms, numpy ascontiguousarray {b*1e3:.2f} ms, ratio {b/a:.1f}x")
N = 4 << 20
xf = rng.uniform(-1000, 70000, N).astype(np.float32)
o16 = np.empty(N, np.uint16)
tmp = np.empty(N, np.float32)
a = best(lambda: kernels.cast_value(xf, np.uint16, out_of_range="clamp", out=o16))
def npseq():
    np.rint(xf, out=tmp)
    np.clip(tmp, 0, 65535, out=tmp)
    o16[...] = tmp
b = best(npseq)
b2 = best(lambda: np.clip(np.rint(xf), 0, 65535).astype(np.uint16))
c = best(lambda: cvrs.cast_array(xf, target_dtype="uint16", rounding_mode="nearest-even", out_of_range_mode="clamp"))
print(f"cast f32->u16 nearest-even clamp (16 MiB): zarrbolt {a*1e3:.2f} ms; numpy rint/clip/astype preallocated {b*1e3:.2f} ms ({b/a:.1f}x), "
      f"allocating {b2*1e3:.2f} ms ({b2/a:.1f}x); cast-value-rs {c*1e3:.2f} ms ({c/a:.1f}x)")
idx = np.empty((65536, 2), "<u8")
idx[:, 1] = 100
idx[:, 0] = np.arange(65536) * 100
raw = idx.tobytes() + kernels.crc32c(idx.tobytes()).to_bytes(4, "little")
t = best(lambda: kernels.parse_shard_index(raw, (65536,), shard_nbytes=65536 * 100 + len(raw), allow_overlap=False), r=21)
print(f"shard index 65,536 entries parse+validate(+crc, overlap check): {t*1e3:.3f} ms")
