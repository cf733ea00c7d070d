"""A numpy reference for zarrbolt.ome's 2x downsampling (partial windows at odd edges)."""

import itertools

import numpy as np


def windows(a, halve):
    """(values, mask): the 2^h window members of every output element, stacked on axis 0; mask
    False where an odd edge leaves a window member out."""
    oshape = tuple((n + 1) // 2 if h else n for n, h in zip(a.shape, halve))
    vals, masks = [], []
    for offs in itertools.product(*[(0, 1) if h else (0,) for h in halve]):
        sl = tuple(slice(o, None, 2) if h else slice(None) for o, h in zip(offs, halve))
        v = a[sl]
        full = np.zeros(oshape, a.dtype)
        m = np.zeros(oshape, bool)
        idx = tuple(slice(0, n) for n in v.shape)
        full[idx] = v
        m[idx] = True
        vals.append(full)
        masks.append(m)
    return np.stack(vals), np.stack(masks)


def reference(a, halve, method):
    a = np.asarray(a)
    v, m = windows(a, halve)
    if method == "nearest":
        return v[0]
    if method == "mean":
        c = m.sum(0)
        if a.dtype.kind in "iu":
            s = np.where(m, v.astype(np.int64), 0).sum(0)
            return np.rint(s / c).astype(a.dtype)
        s = np.where(m, v.astype(np.float64), 0).sum(0)
        return (s / c).astype(a.dtype)
    if method in ("min", "max"):
        if a.dtype.kind == "f":
            fill = np.inf if method == "min" else -np.inf
        else:
            info = np.iinfo(a.dtype)
            fill = info.max if method == "min" else info.min
        w = np.where(m, v, np.array(fill, dtype=a.dtype))
        return w.min(0) if method == "min" else w.max(0)
    if method == "mode":
        out = np.empty(v.shape[1:], a.dtype)
        for idx in np.ndindex(*v.shape[1:]):
            vals = v[(slice(None),) + idx][m[(slice(None),) + idx]]
            u, counts = np.unique(vals, return_counts=True)
            out[idx] = u[np.argmax(counts)]  # sorted: the first of the most frequent is the smallest
        return out
    raise ValueError(method)
