/* Fused chunk decode (see zarrbolt/pipeline.h). */
#include "zarrbolt/pipeline.h"

#include <string.h>

#include "zarrbolt/crc32c.h"
#include "zarrbolt/shard_index.h"
#include "zarrbolt/strided.h"

static void byteswap_inplace(uint8_t *p, size_t nbytes, size_t itemsize) {
    size_t n = nbytes / itemsize;
    switch (itemsize) {
    case 2:
        for (size_t i = 0; i < n; i++) {
            uint16_t v;
            memcpy(&v, p + 2 * i, 2);
            v = (uint16_t)((v >> 8) | (v << 8));
            memcpy(p + 2 * i, &v, 2);
        }
        return;
    case 4:
        for (size_t i = 0; i < n; i++) {
            uint32_t v;
            memcpy(&v, p + 4 * i, 4);
            v = ((v & 0xFF000000u) >> 24) | ((v & 0x00FF0000u) >> 8) | ((v & 0x0000FF00u) << 8) | (v << 24);
            memcpy(p + 4 * i, &v, 4);
        }
        return;
    case 8:
        for (size_t i = 0; i < n; i++) {
            uint64_t v;
            memcpy(&v, p + 8 * i, 8);
            v = ((v & 0xFF00000000000000ull) >> 56) | ((v & 0x00FF000000000000ull) >> 40) |
                ((v & 0x0000FF0000000000ull) >> 24) | ((v & 0x000000FF00000000ull) >> 8) |
                ((v & 0x00000000FF000000ull) << 8) | ((v & 0x0000000000FF0000ull) << 24) |
                ((v & 0x000000000000FF00ull) << 40) | (v << 56);
            memcpy(p + 8 * i, &v, 8);
        }
        return;
    default:
        for (size_t i = 0; i < n; i++) {
            uint8_t *e = p + itemsize * i;
            for (size_t a = 0, b = itemsize - 1; a < b; a++, b--) {
                uint8_t t = e[a];
                e[a] = e[b];
                e[b] = t;
            }
        }
    }
}

/* Strides (bytes) of the stored chunk, indexed by decoded dimension. */
static void source_strides(const zb_plan *plan, int64_t *dec_strides) {
    int nd = plan->ndim;
    int64_t enc_shape[ZB_PLAN_MAXDIM], enc_strides[ZB_PLAN_MAXDIM];
    for (int i = 0; i < nd; i++) enc_shape[i] = plan->transposed ? plan->chunk_shape[plan->perm[i]] : plan->chunk_shape[i];
    int64_t s = (int64_t)plan->itemsize;
    for (int i = nd - 1; i >= 0; i--) {
        enc_strides[i] = s;
        s *= enc_shape[i];
    }
    for (int i = 0; i < nd; i++) {
        if (plan->transposed)
            dec_strides[plan->perm[i]] = enc_strides[i];
        else
            dec_strides[i] = enc_strides[i];
    }
}

/* True when the whole chunk lands in one C-contiguous run of the output. */
static int direct_target(const zb_plan *plan, const zb_decode_task *t, const int64_t *out_strides) {
    if (plan->transposed || plan->byteswap || plan->elem.kind != ZB_ELEM_NONE) return 0;
    int64_t expect = (int64_t)plan->itemsize;
    for (int d = plan->ndim - 1; d >= 0; d--) {
        if (t->chunk_start[d] != 0 || t->shape[d] != plan->chunk_shape[d]) return 0;
        if (plan->chunk_shape[d] != 1 && out_strides[d] != expect) return 0;
        expect *= plan->chunk_shape[d];
    }
    return 1;
}

/* Elementwise decode steps over n contiguous stored elements at src into dst. */
static zb_status elem_convert(const zb_elem *e, const uint8_t *src, uint8_t *dst, size_t n) {
    size_t bad = 0;
    switch (e->kind) {
    case ZB_ELEM_CAST: return zb_cast_value(src, e->src_type, dst, e->dst_type, n, &e->opts, &bad);
    case ZB_ELEM_SCALE_OFFSET: return zb_scale_offset_decode(src, dst, e->dst_type, n, e->offset, e->scale, &bad);
    case ZB_ELEM_CAST_SCALE_OFFSET:
        return zb_cast_scale_offset_decode(src, e->src_type, dst, e->dst_type, n, e->offset, e->scale, &e->opts, &bad);
    default: return ZB_EINVAL;
    }
}

/* Copy the region of a decoded chunk (region: its first element, strides in stored-element
 * bytes) into out, through the elementwise steps when the plan has them: the span of stored
 * elements [region, region + span) is converted into conv first (conv_cap bytes), whose layout
 * is the chunk's with the array's item size. */
static zb_status copy_region(const zb_plan *plan, uint8_t *out, const int64_t *out_strides, const uint8_t *region,
                             size_t span, const int64_t *dec_strides, const int64_t *shape, uint8_t *conv,
                             size_t conv_cap, unsigned copy_flags) {
    if (plan->elem.kind == ZB_ELEM_NONE)
        return zb_strided_copy_ex(out, out_strides, region, dec_strides, shape, plan->ndim, plan->itemsize, copy_flags);
    size_t si = plan->itemsize, di = plan->elem.dst_itemsize;
    size_t n = span / si;
    if (span % si != 0 || di == 0 || n > conv_cap / di) return ZB_EINVAL;
    zb_status st = elem_convert(&plan->elem, region, conv, n);
    if (st != ZB_OK) return st;
    int64_t conv_strides[ZB_PLAN_MAXDIM];
    for (int d = 0; d < plan->ndim; d++) conv_strides[d] = dec_strides[d] / (int64_t)si * (int64_t)di;
    return zb_strided_copy_ex(out, out_strides, conv, conv_strides, shape, plan->ndim, di, copy_flags);
}

/* Least number of decoded bytes a prefix decode must leave out to be used. */
#define PREFIX_MIN_SAVED (128 * 1024)

/* Decode only the part of a chunk that holds its bytes [first, last), when the plan can and it
 * saves work: *region = where byte `first` landed in dst, or NULL (nothing done) when the whole
 * chunk is to be decoded instead. */
static zb_status decode_part(const zb_plan *plan, const zb_decode_task *t, size_t first, size_t last, uint8_t *dst,
                             size_t cap, const uint8_t **region) {
    *region = NULL;
    size_t whole = plan->chunk_nbytes;
    if (last - first >= whole) return ZB_OK;
    if (plan->getitem && plan->sizes) {
        size_t nbytes = 0, cbytes = 0, bsize = 0, ts = 0;
        int in_block = 0;
        zb_status st = plan->sizes(t->src, t->n, &nbytes, &cbytes, &bsize, &ts, &in_block);
        if (st != ZB_OK) return st;
        if (nbytes != whole || cbytes != t->n) return ZB_ECORRUPT;
        if (ts == 0 || nbytes % ts != 0 || bsize == 0) return ZB_OK;
        /* worth it only when the region's items leave at least one blosc block out, or (when
         * getitem stops inside a block) at least a quarter of the last block they touch */
        size_t i0 = first / ts, i1 = (last + ts - 1) / ts;
        size_t nblocks = (nbytes + bsize - 1) / bsize;
        size_t b0 = i0 * ts / bsize, b1 = (i1 * ts - 1) / bsize;
        size_t b1_end = (b1 + 1) * bsize < nbytes ? (b1 + 1) * bsize : nbytes;
        if (b1 - b0 + 1 >= nblocks && !(in_block && (b1_end - i1 * ts) * 4 >= bsize)) return ZB_OK;
        size_t got = 0;
        st = plan->getitem(t->src, t->n, (int64_t)i0, (int64_t)(i1 - i0), dst, cap, &got);
        if (st != ZB_OK) return st;
        if (got != (i1 - i0) * ts) return ZB_ECORRUPT;
        *region = dst + (first - i0 * ts);
        return ZB_OK;
    }
    if (plan->prefix && whole - last >= PREFIX_MIN_SAVED) {
        if (cap < whole) return ZB_EINVAL;
        size_t got = 0;
        zb_status st = plan->prefix(t->src, t->n, dst, whole, last, &got);
        if (st != ZB_OK) return st;
        if (got != last && got != whole) return ZB_ECORRUPT;
        *region = dst + first;
    }
    return ZB_OK;
}

static zb_status decode_one(const zb_plan *plan, const zb_decode_task *t, uint8_t *out, const int64_t *out_strides,
                            const int64_t *dec_strides, uint8_t *scratch_a, uint8_t *scratch_b, size_t scratch_cap,
                            unsigned copy_flags) {
    for (int d = 0; d < plan->ndim; d++) {
        if (t->shape[d] < 0 || t->chunk_start[d] < 0 || t->chunk_start[d] + t->shape[d] > plan->chunk_shape[d])
            return ZB_EINVAL;
        if (t->shape[d] == 0) return ZB_OK;
    }
    if ((plan->getitem || plan->prefix) && plan->nsteps == 1) {
        /* The byte span [first, last) of the region inside the stored (C-order, possibly
         * transposed) chunk: all dec_strides are positive. */
        int64_t first = 0, last = 0;
        for (int d = 0; d < plan->ndim; d++) {
            first += t->chunk_start[d] * dec_strides[d];
            last += (t->chunk_start[d] + t->shape[d] - 1) * dec_strides[d];
        }
        last += (int64_t)plan->itemsize;
        const uint8_t *region = NULL;
        zb_status st = decode_part(plan, t, (size_t)first, (size_t)last, scratch_a, scratch_cap, &region);
        if (st != ZB_OK) return st;
        if (region != NULL) {
            if (plan->byteswap) byteswap_inplace((uint8_t *)region, (size_t)(last - first), (size_t)plan->byteswap);
            return copy_region(plan, out + t->out_offset, out_strides, region, (size_t)(last - first), dec_strides,
                               t->shape, scratch_b, scratch_cap, copy_flags);
        }
    }
    const uint8_t *data = t->src;
    size_t n = t->n;
    uint8_t *bufs[2] = {scratch_a, scratch_b};
    int which = 0;
    int direct = direct_target(plan, t, out_strides);
    uint8_t *target = out + t->out_offset;
    zb_status st;
    for (int s = plan->nsteps - 1; s >= 0; s--) {
        const zb_plan_step *step = &plan->steps[s];
        if (step->kind == ZB_STEP_CRC32C) {
            if (n < 4) return ZB_ECORRUPT;
            n -= 4;
            uint32_t crc = 0;
            st = zb_crc32c(&crc, data, n);
            if (st != ZB_OK) return st;
            uint32_t stored = (uint32_t)data[n] | ((uint32_t)data[n + 1] << 8) | ((uint32_t)data[n + 2] << 16) |
                              ((uint32_t)data[n + 3] << 24);
            if (stored != crc) return ZB_ECHECKSUM;
        } else if (step->kind == ZB_STEP_DECOMPRESS && step->fn != NULL) {
            int final = (s == 0); /* the first codec's decoded output is the array itself */
            uint8_t *dst = (final && direct) ? target : bufs[which];
            size_t cap = final ? plan->chunk_nbytes : scratch_cap;
            if (!final && cap > scratch_cap) return ZB_EINVAL;
            size_t outn = 0;
            st = step->fn(data, n, dst, cap, &outn);
            if (st != ZB_OK) return st;
            data = dst;
            n = outn;
            which ^= 1;
        } else {
            return ZB_EINVAL;
        }
    }
    if (n != plan->chunk_nbytes) return ZB_ECORRUPT;
    if (data == target) return ZB_OK;
    if (plan->byteswap) {
        if (data != scratch_a && data != scratch_b) {
            if (scratch_cap < n) return ZB_EINVAL;
            memcpy(scratch_a, data, n);
            data = scratch_a;
        }
        byteswap_inplace((uint8_t *)data, n, (size_t)plan->byteswap);
    }
    const uint8_t *src = data;
    for (int d = 0; d < plan->ndim; d++) src += t->chunk_start[d] * dec_strides[d];
    if (plan->elem.kind == ZB_ELEM_NONE)
        return zb_strided_copy_ex(target, out_strides, src, dec_strides, t->shape, plan->ndim, plan->itemsize, copy_flags);
    /* convert the stored elements from the region's first to its last (dec_strides are all
     * positive: the first element is the lowest address) */
    int64_t span = (int64_t)plan->itemsize;
    for (int d = 0; d < plan->ndim; d++) span += (t->shape[d] - 1) * dec_strides[d];
    uint8_t *conv = (data == scratch_a) ? scratch_b : scratch_a;
    return copy_region(plan, target, out_strides, src, (size_t)span, dec_strides, t->shape, conv, scratch_cap,
                       copy_flags);
}

zb_status zb_plan_decode(const zb_plan *plan, const zb_decode_task *tasks, size_t ntasks, uint8_t *out,
                         const int64_t *out_strides, uint8_t *scratch_a, uint8_t *scratch_b,
                         size_t scratch_cap, unsigned copy_flags, size_t *failed) {
    if (!plan || (!tasks && ntasks) || plan->ndim < 0 || plan->ndim > ZB_PLAN_MAXDIM || plan->itemsize == 0 ||
        plan->nsteps < 0 || plan->nsteps > ZB_PLAN_MAXSTEPS)
        return ZB_EINVAL;
    if (scratch_cap < plan->chunk_nbytes) return ZB_EINVAL;
    int64_t dec_strides[ZB_PLAN_MAXDIM];
    source_strides(plan, dec_strides);
    for (size_t i = 0; i < ntasks; i++) {
        zb_status st = decode_one(plan, &tasks[i], out, out_strides, dec_strides, scratch_a, scratch_b, scratch_cap,
                                  copy_flags);
        if (st != ZB_OK) {
            if (failed) *failed = i;
            return st;
        }
    }
    return ZB_OK;
}

zb_status zb_plan_read_decode(const zb_plan *plan, zb_file_read *files, zb_decode_task *tasks, size_t ntasks,
                              uint8_t *arena, size_t arena_cap, uint8_t *out, const int64_t *out_strides,
                              uint8_t *scratch_a, uint8_t *scratch_b, size_t scratch_cap, unsigned copy_flags,
                              uint8_t *skipped, size_t *failed, int *os_error) {
    if (!plan || (!files && ntasks) || (!tasks && ntasks) || (!skipped && ntasks) || !failed || !os_error)
        return ZB_EINVAL;
    *failed = 0;
    *os_error = 0;
    size_t i = 0;
    while (i < ntasks) {
        size_t done = 0;
        zb_status st = zb_read_files(files + i, ntasks - i, arena, arena_cap, &done, os_error);
        if (st != ZB_OK) {
            *failed = i + done;
            return st;
        }
        for (size_t k = i; k < i + done; k++) {
            if (files[k].size == ZB_FILE_MISSING) {
                skipped[k] = ZB_SKIPPED_MISSING;
                continue;
            }
            skipped[k] = 0;
            tasks[k].src = arena + files[k].offset;
            tasks[k].n = (size_t)files[k].size;
            size_t f = 0;
            st = zb_plan_decode(plan, &tasks[k], 1, out, out_strides, scratch_a, scratch_b, scratch_cap, copy_flags, &f);
            if (st != ZB_OK) {
                *failed = k;
                return st;
            }
        }
        i += done;
        if (i < ntasks && done == 0) { /* larger than the whole arena: left to the caller */
            skipped[i] = ZB_SKIPPED_TOO_LARGE;
            i++;
        }
    }
    return ZB_OK;
}

/* The tasks of one shard (see zb_plan_read_shards).  task_of: nentries int64, all -1 on entry
 * and on return; w: 6 * sh->count int64. */
static zb_status read_shard(const zb_plan *plan, const zb_shard_spec *spec, const zb_shard_read *sh,
                            const int64_t *entries, zb_decode_task *tasks, uint8_t *arena, size_t arena_cap,
                            uint64_t *pairs, int64_t *task_of, int64_t *w, uint8_t *out, const int64_t *out_strides,
                            uint8_t *scratch_a, uint8_t *scratch_b, size_t scratch_cap, unsigned copy_flags,
                            uint8_t *skipped, size_t *failed, int *os_error) {
    const size_t first = sh->first, count = sh->count, n = spec->nentries;
    for (size_t k = 0; k < count; k++) skipped[first + k] = ZB_SKIPPED_RETRY; /* until decoded */
    if (count == 0) return ZB_OK;
    zb_file f;
    int64_t size = 0;
    int r = zb_file_open(sh->path, &f, &size, os_error);
    if (r < 0) {
        *failed = first;
        return ZB_EIO;
    }
    if (r == 0) {
        for (size_t k = 0; k < count; k++) skipped[first + k] = ZB_SKIPPED_MISSING;
        return ZB_OK;
    }
    zb_status st = ZB_OK;
    size_t nmarked = 0; /* task_of entries set so far */
    const uint64_t index_nbytes = 16 * (uint64_t)n + (spec->index_crc ? 4 : 0);
    /* too small for its index, or an index larger than the arena: the caller's way reports or reads it */
    if (size < 0 || (uint64_t)size < index_nbytes || index_nbytes > arena_cap) goto done;
    {
        const uint64_t total = (uint64_t)size;
        int64_t got = zb_file_pread(f, arena, (size_t)index_nbytes, spec->index_at_end ? total - index_nbytes : 0,
                                    os_error);
        if (got < 0) {
            *failed = first;
            st = ZB_EIO;
            goto done;
        }
        if ((uint64_t)got != index_nbytes) goto done; /* shrank while being read */
        int64_t bad = -1;
        st = zb_shard_index_parse_crc(arena, n, spec->index_crc, spec->index_at_end ? 0 : index_nbytes,
                                      spec->index_at_end ? total - index_nbytes : total, pairs, &bad);
        if (st == ZB_ECORRUPT || st == ZB_ECHECKSUM) { /* damaged index: reported by the caller's way */
            st = ZB_OK;
            goto done;
        }
        if (st != ZB_OK) {
            *failed = first;
            goto done;
        }
        int64_t *wanted = w, *order = w + count, *range_of = w + 2 * count, *cscratch = w + 3 * count;
        uint64_t *rbegin = (uint64_t *)(w + 4 * count), *rend = (uint64_t *)(w + 5 * count);
        for (size_t k = 0; k < count; k++) {
            int64_t e = entries[first + k];
            if (e < 0 || (uint64_t)e >= n || task_of[e] >= 0) {
                *failed = first + k;
                st = ZB_EINVAL;
                goto done;
            }
            task_of[e] = (int64_t)(first + k);
            nmarked = k + 1;
            wanted[k] = e;
            if (pairs[2 * e] == ZB_SHARD_EMPTY) skipped[first + k] = ZB_SKIPPED_MISSING;
        }
        size_t nchunks = 0, nranges = 0;
        st = zb_shard_coalesce(pairs, n, wanted, count, spec->max_gap, arena_cap, order, range_of, rbegin, rend,
                               &nchunks, &nranges, cscratch);
        if (st != ZB_OK) {
            *failed = first;
            goto done;
        }
        size_t k = 0;
        for (size_t rr = 0; rr < nranges; rr++) {
            uint64_t b0 = rbegin[rr], len = rend[rr] - b0;
            if (len > arena_cap) { /* one inner chunk larger than the arena */
                for (; k < nchunks && (size_t)range_of[k] == rr; k++) skipped[task_of[order[k]]] = ZB_SKIPPED_TOO_LARGE;
                continue;
            }
            got = zb_file_pread(f, arena, (size_t)len, b0, os_error);
            if (got < 0) {
                *failed = (size_t)task_of[order[k]];
                st = ZB_EIO;
                goto done;
            }
            if ((uint64_t)got != len) goto done; /* shrank: what is not decoded yet is retried */
            for (; k < nchunks && (size_t)range_of[k] == rr; k++) {
                int64_t e = order[k];
                size_t t = (size_t)task_of[e];
                tasks[t].src = arena + (pairs[2 * e] - b0);
                tasks[t].n = (size_t)pairs[2 * e + 1];
                size_t ignored = 0;
                st = zb_plan_decode(plan, &tasks[t], 1, out, out_strides, scratch_a, scratch_b, scratch_cap, copy_flags,
                                    &ignored);
                if (st != ZB_OK) {
                    *failed = t;
                    goto done;
                }
                skipped[t] = 0;
            }
        }
    }
done:
    for (size_t k = 0; k < nmarked; k++) task_of[entries[first + k]] = -1;
    zb_file_close(f);
    return st;
}

zb_status zb_plan_read_shards(const zb_plan *plan, const zb_shard_spec *spec, const zb_shard_read *shards,
                              size_t nshards, const int64_t *entries, zb_decode_task *tasks, size_t ntasks,
                              uint8_t *arena, size_t arena_cap, uint64_t *pairs, int64_t *work, uint8_t *out,
                              const int64_t *out_strides, uint8_t *scratch_a, uint8_t *scratch_b, size_t scratch_cap,
                              unsigned copy_flags, uint8_t *skipped, size_t *failed, int *os_error) {
    if (!plan || !spec || (!shards && nshards) || !failed || !os_error || spec->nentries == 0 ||
        spec->nentries > SIZE_MAX / 32 || (ntasks && (!entries || !tasks || !skipped || !arena || !pairs || !work)))
        return ZB_EINVAL;
    *failed = 0;
    *os_error = 0;
    for (size_t s = 0; s < nshards; s++)
        if (shards[s].path == NULL || shards[s].first > ntasks || shards[s].count > ntasks - shards[s].first)
            return ZB_EINVAL;
    int64_t *task_of = work;
    for (size_t e = 0; e < spec->nentries; e++) task_of[e] = -1;
    for (size_t s = 0; s < nshards; s++) {
        zb_status st = read_shard(plan, spec, &shards[s], entries, tasks, arena, arena_cap, pairs, task_of,
                                  work + spec->nentries, out, out_strides, scratch_a, scratch_b, scratch_cap,
                                  copy_flags, skipped, failed, os_error);
        if (st != ZB_OK) return st;
    }
    return ZB_OK;
}
