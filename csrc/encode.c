/* Fused chunk encode (see zarrbolt/encode.h). */
#include "zarrbolt/encode.h"

#include <stdlib.h>
#include <string.h>

#include "zarrbolt/numeric.h"
#include "zarrbolt/decode.h"
#include "zarrbolt/pool.h"
#include "zarrbolt/strided.h"

/* Rows of chunks gathered at once: at most this many bytes and chunks. */
#define ZB_ENC_ROW_BYTES ((size_t)8 << 20)
#define ZB_ENC_ROW_MAX 32

zb_status zb_eplan_check(zb_eplan *plan) {
    if (!plan || plan->ndim < 0 || plan->ndim > ZB_ENC_MAXDIM || plan->itemsize < 1 ||
        plan->itemsize > ZB_ENC_MAXITEM || plan->nsteps < 0 || plan->nsteps > ZB_ENC_MAXSTEPS)
        return ZB_EINVAL;
    const zb_elem *e = &plan->elem;
    if (e->kind < ZB_ELEM_NONE || e->kind > ZB_ELEM_CAST_SCALE_OFFSET) return ZB_EINVAL;
    size_t stored = e->kind == ZB_ELEM_NONE ? plan->itemsize : e->dst_itemsize;
    if (stored < 1 || stored > ZB_ENC_MAXITEM) return ZB_EINVAL;
    size_t n = plan->itemsize;
    int seen[ZB_ENC_MAXDIM] = {0};
    for (int d = 0; d < plan->ndim; d++) {
        int64_t c = plan->chunk_shape[d];
        if (c < 0 || (c && n > SIZE_MAX / 4 / (size_t)c)) return ZB_EINVAL;
        n *= (size_t)c;
        if (plan->transposed) {
            int p = plan->perm[d];
            if (p < 0 || p >= plan->ndim || seen[p]) return ZB_EINVAL;
            seen[p] = 1;
        }
    }
    for (int s = 0; s < plan->nsteps; s++) {
        const zb_step *st = &plan->steps[s];
        if (st->kind == ZB_STEP_TRANSFORM ? st->fn == NULL : (st->kind != ZB_STEP_INPLACE || st->inplace == NULL))
            return ZB_EINVAL;
    }
    if (plan->buf_cap < n || plan->buf_cap / stored < n / plan->itemsize || plan->buf_cap > SIZE_MAX / 4)
        return ZB_EINVAL;
    if (plan->naa < 0 || plan->naa > ZB_PLAN_MAXKERNELS) return ZB_EINVAL;
    for (int k = 0; k < plan->naa; k++) { /* chain order: each kernel's encoded side feeds the next */
        const zb_aa_stage *a = &plan->aa[k];
        if (!a->fn || a->dec_itemsize != stored || a->enc_itemsize < 1 || a->enc_itemsize > ZB_ENC_MAXITEM ||
            plan->buf_cap / a->enc_itemsize < n / plan->itemsize)
            return ZB_EINVAL;
        stored = a->enc_itemsize;
    }
    if (plan->byteswap && (plan->byteswap > stored || stored % plan->byteswap)) return ZB_EINVAL;
    plan->chunk_nbytes = n;
    plan->row_slots = 0;
    if (!plan->transposed && plan->ndim >= 1 && n && n <= ZB_ENC_ROW_BYTES / 2)
        plan->row_slots = ZB_ENC_ROW_BYTES / n < ZB_ENC_ROW_MAX ? ZB_ENC_ROW_BYTES / n : ZB_ENC_ROW_MAX;
    return ZB_OK;
}

size_t zb_eplan_work_bytes(const zb_eplan *plan) { return 3 * plan->buf_cap + plan->row_slots * plan->chunk_nbytes; }

/* buf[0, n) = the fill value repeated (n a multiple of the item size). */
static void fill_pattern(uint8_t *buf, size_t n, const uint8_t *fill, size_t itemsize) {
    if (n == 0) return;
    size_t have = itemsize < n ? itemsize : n;
    memcpy(buf, fill, have);
    while (have < n) { /* doubling copies */
        size_t step = have < n - have ? have : n - have;
        memcpy(buf + have, buf, step);
        have += step;
    }
}

/* 1 when every item of buf[0, n) equals the fill value. */
static int all_fill(const uint8_t *buf, size_t n, const uint8_t *fill, size_t itemsize) {
    if (n == 0) return 1;
    /* the first and last items usually differ: cheap early exits */
    if (memcmp(buf, fill, itemsize) != 0 || memcmp(buf + n - itemsize, fill, itemsize) != 0) return 0;
    uint8_t pat[4096];
    size_t plen = (sizeof pat / itemsize) * itemsize;
    fill_pattern(pat, plen, fill, itemsize);
    for (size_t pos = 0; pos < n; pos += plen) {
        size_t m = n - pos < plen ? n - pos : plen;
        if (memcmp(buf + pos, pat, m) != 0) return 0;
    }
    return 1;
}

/* Strides (bytes) of the stored (transposed) chunk, by array axis. */
static void stored_strides(const zb_eplan *plan, int64_t *dst_strides) {
    int64_t s = (int64_t)plan->itemsize;
    for (int k = plan->ndim - 1; k >= 0; k--) {
        int a = plan->transposed ? plan->perm[k] : k;
        dst_strides[a] = s;
        s *= plan->chunk_shape[a];
    }
}

/* Gather one chunk (the part `shape` inside the array, the rest fill) into dst. */
static zb_status gather(const zb_eplan *plan, const uint8_t *src, const int64_t *src_strides, const int64_t *shape,
                        uint8_t *dst) {
    const int nd = plan->ndim;
    const size_t isz = plan->itemsize, n = plan->chunk_nbytes;
    int64_t dst_strides[ZB_ENC_MAXDIM];
    int full = 1, empty = 0;
    stored_strides(plan, dst_strides);
    for (int d = 0; d < nd; d++) {
        if (shape[d] < 0 || shape[d] > plan->chunk_shape[d]) return ZB_EINVAL;
        if (shape[d] != plan->chunk_shape[d]) full = 0;
        if (shape[d] == 0) empty = 1;
    }
    if (!full) fill_pattern(dst, n, plan->fill, isz);
    if (empty || !n) return ZB_OK;
    if (!src) return ZB_EINVAL;
    return zb_strided_copy_ex(dst, dst_strides, src, src_strides, shape, nd, isz,
                              plan->transposed ? 0u : ZB_COPY_SRC_ORDER);
}

/* Steps 2-3 on a gathered chunk at data (chunk_nbytes bytes, changed in place): data is work
 * itself, or a slot of the row buffer (no room after it). */
static zb_status encode_gathered(const zb_eplan *plan, uint8_t *data, uint8_t *work, const uint8_t **out,
                                 size_t *out_n, int *is_fill) {
    const size_t cap = plan->buf_cap, isz = plan->itemsize;
    uint8_t *bufs[3] = {data, work + cap, work + 2 * cap};
    size_t n = plan->chunk_nbytes;
    *out = NULL;
    *out_n = 0;
    *is_fill = 0;
    /* 2. all fill: nothing to store */
    if (plan->skip_fill && all_fill(data, n, plan->fill, isz)) {
        *is_fill = 1;
        *out = data;
        return ZB_OK;
    }
    /* 3. elementwise steps into the stored type, the bytes codec, then the bytes->bytes steps */
    int cur = 0;
    const zb_elem *e = &plan->elem;
    if (e->kind != ZB_ELEM_NONE) {
        size_t nelem = n / isz, bad = 0;
        zb_status st;
        if (e->kind == ZB_ELEM_CAST)
            st = zb_cast_value(data, e->src_type, bufs[1], e->dst_type, nelem, &e->opts, &bad);
        else if (e->kind == ZB_ELEM_SCALE_OFFSET)
            st = zb_scale_offset_encode(data, bufs[1], e->src_type, nelem, e->offset, e->scale, &bad);
        else
            st = zb_scale_offset_cast_encode(data, e->src_type, bufs[1], e->dst_type, nelem, e->offset, e->scale,
                                             &e->opts, &bad);
        if (st != ZB_OK) return st;
        cur = 1;
        n = nelem * e->dst_itemsize;
    }
    for (int k = 0; k < plan->naa; k++) {
        const zb_aa_stage *a = &plan->aa[k];
        size_t nelem = n / a->dec_itemsize;
        int next = (cur != 0 && a->enc_itemsize == a->dec_itemsize) ? cur : (cur == 1 ? 2 : 1);
        zb_status st = a->fn(a->params, bufs[cur], bufs[next], nelem);
        if (st != ZB_OK) return st;
        cur = next;
        n = nelem * a->enc_itemsize;
    }
    if (plan->byteswap) zb_byteswap_inplace(bufs[cur], n, plan->byteswap);
    for (int i = 0; i < plan->nsteps; i++) {
        const zb_step *step = &plan->steps[i];
        size_t m = 0;
        zb_status st;
        if (step->kind == ZB_STEP_INPLACE) {
            if (cur == 0 && data != work) { /* a row slot: no room after it */
                memcpy(bufs[1], data, n);
                cur = 1;
            }
            st = step->inplace(step->params, bufs[cur], n, cap, &m);
        } else {
            int next = cur == 1 ? 2 : 1;
            st = step->fn(step->params, bufs[cur], n, bufs[next], cap, &m);
            cur = next;
        }
        if (st != ZB_OK) return st;
        if (m > cap) return ZB_ETOOSMALL;
        n = m;
    }
    *out = bufs[cur];
    *out_n = n;
    return ZB_OK;
}

zb_status zb_encode_chunk(const zb_eplan *plan, const uint8_t *src, const int64_t *src_strides,
                          const int64_t *shape, uint8_t *work, const uint8_t **out, size_t *out_n, int *is_fill) {
    if (!plan || !work || !out || !out_n || !is_fill || (plan->ndim && (!shape || !src_strides))) return ZB_EINVAL;
    *out = NULL;
    *out_n = 0;
    *is_fill = 0;
    zb_status st = gather(plan, src, src_strides, shape, work);
    if (st != ZB_OK) return st;
    return encode_gathered(plan, work, work, out, out_n, is_fill);
}

typedef zb_encoder chunk_source; /* see zarrbolt/encode.h */

static void source_init(chunk_source *c, const zb_eplan *plan, const zb_enc_task *tasks, size_t ntasks,
                        const uint8_t *src, const int64_t *src_strides, uint8_t *work) {
    c->plan = plan;
    c->tasks = tasks;
    c->ntasks = ntasks;
    c->src = src;
    c->src_strides = src_strides;
    c->work = work;
    c->row = work + 3 * plan->buf_cap;
    c->row_lo = c->row_hi = 0;
}

static int whole(const zb_eplan *plan, const zb_enc_task *t) {
    for (int d = 0; d < plan->ndim; d++)
        if (t->shape[d] != plan->chunk_shape[d]) return 0;
    return 1;
}

/* Whether a whole chunk at src_strides is laid out in memory as it is stored. */
static int stored_layout(const zb_eplan *plan, const int64_t *src_strides) {
    int64_t st[ZB_ENC_MAXDIM];
    stored_strides(plan, st);
    for (int d = 0; d < plan->ndim; d++)
        if (src_strides[d] != st[d]) return 0;
    return 1;
}

/* *data = task i's gathered chunk (tasks are taken in increasing order). */
static zb_status source_get(chunk_source *c, size_t i, uint8_t **data) {
    const zb_eplan *plan = c->plan;
    if (i >= c->row_lo && i < c->row_hi) {
        *data = c->row + (i - c->row_lo) * plan->chunk_nbytes;
        return ZB_OK;
    }
    /* A whole chunk laid out in the source as it is stored (e.g. chunks stacked one after
     * another) is encoded from the source itself, not gathered.  encode_gathered then only reads
     * it: the byte swap, the one step that would change it in place, is excluded here, and
     * in-place steps work on a copy of a chunk that is not in the work buffer. */
    if (c->src && !plan->byteswap && whole(plan, &c->tasks[i]) && stored_layout(plan, c->src_strides)) {
        *data = (uint8_t *)(uintptr_t)(c->src + c->tasks[i].src_offset);
        return ZB_OK;
    }
    const int nd = plan->ndim;
    size_t r = 1;
    if (plan->row_slots >= 2 && c->src && whole(plan, &c->tasks[i])) {
        int64_t step = plan->chunk_shape[nd - 1] * c->src_strides[nd - 1];
        while (i + r < c->ntasks && r < plan->row_slots && whole(plan, &c->tasks[i + r]) &&
               c->tasks[i + r].src_offset - c->tasks[i + r - 1].src_offset == step)
            r++;
    }
    if (r == 1) {
        *data = c->work;
        return gather(plan, c->src ? c->src + c->tasks[i].src_offset : NULL, c->src_strides, c->tasks[i].shape,
                      c->work);
    }
    /* the row as one copy: the chunks' axes with a slot axis before the last one */
    int64_t shape[ZB_ENC_MAXDIM + 1], sst[ZB_ENC_MAXDIM + 1], dst[ZB_ENC_MAXDIM + 1], cst[ZB_ENC_MAXDIM];
    stored_strides(plan, cst);
    for (int d = 0; d < nd - 1; d++) {
        shape[d] = plan->chunk_shape[d];
        sst[d] = c->src_strides[d];
        dst[d] = cst[d];
    }
    shape[nd - 1] = (int64_t)r;
    sst[nd - 1] = plan->chunk_shape[nd - 1] * c->src_strides[nd - 1];
    dst[nd - 1] = (int64_t)plan->chunk_nbytes;
    shape[nd] = plan->chunk_shape[nd - 1];
    sst[nd] = c->src_strides[nd - 1];
    dst[nd] = cst[nd - 1];
    zb_status st = zb_strided_copy_ex(c->row, dst, c->src + c->tasks[i].src_offset, sst, shape, nd + 1,
                                      plan->itemsize, ZB_COPY_SRC_ORDER);
    if (st != ZB_OK) return st;
    c->row_lo = i;
    c->row_hi = i + r;
    *data = c->row;
    return ZB_OK;
}

zb_status zb_encoder_init(zb_encoder *e, const zb_eplan *plan, const zb_enc_task *tasks, size_t ntasks,
                          const uint8_t *src, const int64_t *src_strides, uint8_t *work) {
    if (!plan || !work || (ntasks && !tasks) || (plan->ndim && ntasks && !src_strides)) return ZB_EINVAL;
    source_init(e, plan, tasks, ntasks, src, src_strides, work);
    return ZB_OK;
}

zb_status zb_encoder_next(zb_encoder *e, size_t i, const uint8_t **out, size_t *out_n, int *is_fill) {
    uint8_t *chunk;
    if (i >= e->ntasks) return ZB_EINVAL;
    zb_status st = source_get(e, i, &chunk);
    if (st != ZB_OK) return st;
    return encode_gathered(e->plan, chunk, e->work, out, out_n, is_fill);
}

/* ------------------------------------------------------------------------ on the native pool */
typedef struct {
    const zb_eplan *plan;
    const zb_enc_task *tasks;
    const uint8_t *src;
    const int64_t *src_strides;
    const size_t *bounds;
    uint8_t *const *work;
    uint8_t *out;          /* the packed output, its batches' starts */
    const size_t *out_lo;  /* and where each chunk went */
    int64_t *where;
} pack_job;

/* The work buffer of worker w: its own, else one allocated once for the call (*state). */
uint8_t *zb_encode_worker_buffer(const zb_eplan *plan, uint8_t *const *work, int w, void **state) {
    if (work && work[w]) return work[w];
    if (*state == NULL) *state = malloc(zb_eplan_work_bytes(plan));
    return (uint8_t *)*state;
}

static void free_state(void *ctx, void *state) {
    (void)ctx;
    free(state);
}

/* Batch k of zb_encode_chunks_par. */
static zb_status pack_batch(void *ctx, size_t k, int w, void **state, zb_batch_error *err) {
    pack_job *j = (pack_job *)ctx;
    size_t lo = j->bounds[k], hi = j->bounds[k + 1];
    size_t pos = j->out_lo[k], end = j->out_lo[k + 1];
    err->failed = lo;
    uint8_t *work = zb_encode_worker_buffer(j->plan, j->work, w, state);
    if (work == NULL) return ZB_ENOMEM;
    zb_encoder enc;
    zb_status st = zb_encoder_init(&enc, j->plan, j->tasks + lo, hi - lo, j->src, j->src_strides, work);
    for (size_t i = lo; st == ZB_OK && i < hi; i++) {
        const uint8_t *data;
        size_t n;
        int is_fill;
        err->failed = i;
        st = zb_encoder_next(&enc, i - lo, &data, &n, &is_fill);
        if (st != ZB_OK) break;
        if (is_fill) {
            j->where[2 * i] = ZB_ENC_SKIPPED_FILL;
            j->where[2 * i + 1] = 0;
        } else if (n > end - pos) {
            j->where[2 * i] = ZB_ENC_SKIPPED_ROOM;
            j->where[2 * i + 1] = 0;
        } else {
            memcpy(j->out + pos, data, n);
            j->where[2 * i] = (int64_t)pos;
            j->where[2 * i + 1] = (int64_t)n;
            pos += n;
        }
    }
    return st;
}

zb_status zb_encode_chunks_par(const zb_eplan *plan, const zb_enc_task *tasks, size_t ntasks, const uint8_t *src,
                               const int64_t *src_strides, const size_t *bounds, size_t nbatches, uint8_t *out,
                               const size_t *out_lo, int64_t *where, uint8_t *const *work, int nworkers,
                               size_t *failed) {
    if (!failed) return ZB_EINVAL;
    *failed = 0;
    if (!plan || (ntasks && (!tasks || !where)) || !out_lo ||
        zb_batch_bounds_check(bounds, nbatches, ntasks, nworkers) != ZB_OK || (!out && out_lo[nbatches]))
        return ZB_EINVAL;
    for (size_t k = 0; k < nbatches; k++)
        if (out_lo[k + 1] < out_lo[k]) return ZB_EINVAL;
    pack_job j = {plan, tasks, src, src_strides, bounds, work, out, out_lo, where};
    zb_batch_error err;
    zb_status st = zb_pool_batches(nbatches, nworkers, pack_batch, free_state, &j, &err);
    *failed = st == ZB_OK ? ntasks : err.failed;
    return st;
}
