/* Chunk-grid arithmetic of box selections (see zarrbolt/grid.h). */
#include "zarrbolt/grid.h"

static zb_status check_box(int nd, const int64_t *lo, const int64_t *hi, const int64_t *chunk) {
    if (nd < 1 || nd > ZB_GRID_MAXDIM || !lo || !hi || !chunk) return ZB_EINVAL;
    for (int d = 0; d < nd; d++)
        if (chunk[d] < 1 || lo[d] < 0 || hi[d] < lo[d]) return ZB_EINVAL;
    return ZB_OK;
}

zb_status zb_box_count(int nd, const int64_t *lo, const int64_t *hi, const int64_t *chunk, size_t *n) {
    if (!n || check_box(nd, lo, hi, chunk) != ZB_OK) return ZB_EINVAL;
    size_t total = 1;
    for (int d = 0; d < nd; d++) {
        if (hi[d] == lo[d]) {
            *n = 0;
            return ZB_OK;
        }
        uint64_t k = (uint64_t)((hi[d] - 1) / chunk[d] - lo[d] / chunk[d] + 1);
        if (k > SIZE_MAX / total) return ZB_EINVAL;
        total *= (size_t)k;
    }
    *n = total;
    return ZB_OK;
}

zb_status zb_box_tasks(int nd, const int64_t *lo, const int64_t *hi, const int64_t *chunk, size_t n,
                       int64_t *coords, int64_t *starts, int64_t *shapes, int64_t *out_starts) {
    size_t want;
    if (zb_box_count(nd, lo, hi, chunk, &want) != ZB_OK || want != n) return ZB_EINVAL;
    if (n == 0) return ZB_OK;
    if (!coords || !starts || !shapes || !out_starts) return ZB_EINVAL;
    int64_t c[ZB_GRID_MAXDIM], c0[ZB_GRID_MAXDIM], c1[ZB_GRID_MAXDIM];
    for (int d = 0; d < nd; d++) {
        c0[d] = lo[d] / chunk[d];
        c1[d] = (hi[d] - 1) / chunk[d];
        c[d] = c0[d];
    }
    for (size_t t = 0; t < n; t++) {
        for (int d = 0; d < nd; d++) {
            int64_t begin = c[d] * chunk[d], a = lo[d] > begin ? lo[d] : begin;
            int64_t b = hi[d] < begin + chunk[d] ? hi[d] : begin + chunk[d];
            size_t i = t * (size_t)nd + (size_t)d;
            coords[i] = c[d];
            starts[i] = a - begin;
            shapes[i] = b - a;
            out_starts[i] = a - lo[d];
        }
        for (int d = nd - 1; d >= 0; d--) { /* the next chunk in C order */
            if (++c[d] <= c1[d]) break;
            c[d] = c0[d];
        }
    }
    return ZB_OK;
}

zb_status zb_shard_of_tasks(int nd, size_t n, const int64_t *coords, const int64_t *cps, int64_t *flat,
                            int64_t *shard, int *one) {
    if (nd < 1 || nd > ZB_GRID_MAXDIM || !cps || !one || (n && (!coords || !flat || !shard))) return ZB_EINVAL;
    for (int d = 0; d < nd; d++)
        if (cps[d] < 1) return ZB_EINVAL;
    *one = 1;
    for (size_t t = 0; t < n; t++) {
        int64_t f = 0;
        for (int d = 0; d < nd; d++) {
            size_t i = t * (size_t)nd + (size_t)d;
            if (coords[i] < 0) return ZB_EINVAL;
            int64_t s = coords[i] / cps[d];
            shard[i] = s;
            f = f * cps[d] + (coords[i] - s * cps[d]);
            if (t && s != shard[(size_t)d]) *one = 0;
        }
        flat[t] = f;
    }
    return ZB_OK;
}
