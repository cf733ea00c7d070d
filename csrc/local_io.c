/* File batches of local stores (see zarrbolt/local_io.h). */
#include "zarrbolt/local_io.h"

#include <stdlib.h>
#include <string.h>

#include "zarrbolt/pool.h"
#include "zarrbolt/shard_index.h"

/* ------------------------------------------------------------------------------ chunk files */
/* zb_plan_read_decode with its decoder set up. */
static zb_status read_decode(zb_decoder *d, zb_file_read *files, zb_decode_task *tasks, size_t ntasks,
                             uint8_t *arena, size_t arena_cap, uint8_t *skipped, size_t *failed, int *os_error) {
    size_t i = 0;
    while (i < ntasks) {
        size_t done = 0;
        zb_status st = zb_read_files(files + i, ntasks - i, arena, arena_cap, &done, os_error);
        if (st != ZB_OK) {
            *failed = i + done;
            return st;
        }
        for (size_t k = i; k < i + done; k++) {
            if (files[k].size == ZB_FILE_MISSING || files[k].size == ZB_FILE_LINK) {
                skipped[k] = files[k].size == ZB_FILE_MISSING ? ZB_SKIPPED_MISSING : ZB_SKIPPED_TOO_LARGE;
                continue;
            }
            skipped[k] = 0;
            tasks[k].src = arena + files[k].offset;
            tasks[k].n = (size_t)files[k].size;
            st = zb_decoder_put(d, &tasks[k]); /* its copy may wait, but out of the scratch, not the arena */
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
    zb_status st = zb_decoder_finish(d);
    if (st != ZB_OK) *failed = ntasks ? ntasks - 1 : 0;
    return st;
}

zb_status zb_plan_read_decode(const zb_plan *plan, zb_file_read *files, zb_decode_task *tasks, size_t ntasks,
                              uint8_t *arena, size_t arena_cap, uint8_t *out, const int64_t *out_strides,
                              const zb_scratch *scratch, unsigned copy_flags, uint8_t *skipped, size_t *failed,
                              int *os_error) {
    if ((!files && ntasks) || (!tasks && ntasks) || (!skipped && ntasks) || !failed || !os_error) return ZB_EINVAL;
    zb_decoder d;
    if (zb_decoder_init(&d, plan, scratch, out, out_strides, copy_flags) != ZB_OK) return ZB_EINVAL;
    *failed = 0;
    *os_error = 0;
    return read_decode(&d, files, tasks, ntasks, arena, arena_cap, skipped, failed, os_error);
}

/* ------------------------------------------------------------------------ the parallel reads */
/* What both parallel readers hand to zb_pool_batches. */
typedef struct {
    const zb_plan *plan;
    const size_t *bounds;
    const zb_worker_bufs *bufs;
    uint8_t *out;
    const int64_t *out_strides;
    unsigned copy_flags;
    uint8_t *skipped;
    zb_decode_task *tasks;
    zb_file_read *files;           /* chunk files */
    const zb_shard_spec *spec;     /* shard files */
    const zb_shard_read *shards;
    const int64_t *entries;
    size_t ntasks, most;
} read_job;

/* A worker's own buffers, allocated at its first batch (see zb_batch_fn); the index room when
 * a shard holds its index (see zb_shard_room). */
typedef struct {
    uint8_t *scratch;
    zb_shard_room room;
    int64_t *work;
} worker_state;

static void free_worker_state(void *ctx, void *state) {
    (void)ctx;
    worker_state *s = (worker_state *)state;
    free(s->scratch);
    zb_shard_room_free(&s->room);
    free(s->work);
    free(s);
}

/* Worker w's state and scratch: its own scratch buffer, else one allocated for the call. */
static worker_state *worker_setup(const zb_worker_bufs *b, void **state, zb_scratch *sc) {
    if (*state == NULL) *state = calloc(1, sizeof(worker_state));
    worker_state *s = (worker_state *)*state;
    if (s == NULL) return NULL;
    *sc = b->scratch;
    if (sc->base == NULL) {
        if (s->scratch == NULL) s->scratch = (uint8_t *)malloc(2 * sc->cap * (size_t)sc->nslots);
        sc->base = s->scratch;
    }
    return sc->base ? s : NULL;
}

/* The checks both parallel readers make of their batches and workers' buffers. */
static zb_status check_par(const zb_plan *plan, const size_t *bounds, size_t nbatches, size_t nitems,
                           const zb_worker_bufs *bufs, int nworkers) {
    if (!plan || !bufs || zb_batch_bounds_check(bounds, nbatches, nitems, nworkers) != ZB_OK) return ZB_EINVAL;
    for (int w = 0; w < nworkers; w++) {
        zb_scratch sc = bufs[w].scratch;
        if (!bufs[w].arena || sc.nslots < 1 || sc.cap < plan->chunk_nbytes) return ZB_EINVAL;
        if (!sc.base && sc.cap > SIZE_MAX / 2 / (size_t)sc.nslots) return ZB_EINVAL;
    }
    return ZB_OK;
}

static void job_init(read_job *j, const zb_plan *plan, const size_t *bounds, const zb_worker_bufs *bufs, uint8_t *out,
                     const int64_t *out_strides, unsigned copy_flags, uint8_t *skipped, zb_decode_task *tasks) {
    memset(j, 0, sizeof *j);
    j->plan = plan;
    j->bounds = bounds;
    j->bufs = bufs;
    j->out = out;
    j->out_strides = out_strides;
    j->copy_flags = copy_flags;
    j->skipped = skipped;
    j->tasks = tasks;
}

static zb_status read_batch(void *ctx, size_t k, int w, void **state, zb_batch_error *err) {
    read_job *j = (read_job *)ctx;
    const zb_worker_bufs *b = &j->bufs[w];
    size_t lo = j->bounds[k], hi = j->bounds[k + 1];
    zb_scratch sc;
    err->failed = lo;
    if (worker_setup(b, state, &sc) == NULL) return ZB_ENOMEM;
    zb_status st = zb_plan_read_decode(j->plan, j->files + lo, j->tasks + lo, hi - lo, b->arena, b->arena_cap, j->out,
                                       j->out_strides, &sc, j->copy_flags, j->skipped + lo, &err->failed,
                                       &err->os_error);
    err->failed += lo;
    return st;
}

/* The status of a parallel read (the lowest failing batch's). */
static zb_status run_reads(read_job *j, size_t nbatches, int nworkers, zb_batch_fn fn, size_t *failed,
                           int *os_error) {
    zb_batch_error err;
    zb_status st = zb_pool_batches(nbatches, nworkers, fn, free_worker_state, j, &err);
    *failed = err.failed;
    *os_error = err.os_error;
    return st;
}

zb_status zb_plan_read_decode_par(const zb_plan *plan, zb_file_read *files, zb_decode_task *tasks, size_t ntasks,
                                  const size_t *bounds, size_t nbatches, const zb_worker_bufs *bufs, int nworkers,
                                  uint8_t *out, const int64_t *out_strides, unsigned copy_flags, uint8_t *skipped,
                                  size_t *failed, int *os_error) {
    if (!failed || !os_error || (ntasks && (!files || !tasks || !skipped))) return ZB_EINVAL;
    *failed = 0;
    *os_error = 0;
    if (check_par(plan, bounds, nbatches, ntasks, bufs, nworkers) != ZB_OK) return ZB_EINVAL;
    read_job j;
    job_init(&j, plan, bounds, bufs, out, out_strides, copy_flags, skipped, tasks);
    j.files = files;
    return run_reads(&j, nbatches, nworkers, read_batch, failed, os_error);
}

/* ------------------------------------------------------------------------------ shard files */
/* One shard read in progress (see zb_plan_read_shards); positions p are the read's tasks
 * first + p. */
typedef struct {
    const zb_shard_spec *spec;
    const int64_t *ents;     /* entries + first */
    zb_decode_task *tasks;   /* tasks + first */
    uint8_t *skipped;        /* skipped + first */
    size_t first, count;
    zb_shard_room *room;
    uint64_t *pairs;         /* room->pairs once the shard's index is read */
    uint8_t *arena;
    size_t arena_cap;
    zb_file f;
    zb_decoder *d;
    size_t *failed;
    int *os_error;
} shard_io;

/* The outputs of zb_shard_windows in 6 * m int64 of work. */
typedef struct {
    int64_t *ends, *order, *read_of, *scratch;
    uint64_t *begins, *rends;
    size_t nwindows, norder, nreads;
} windows;

static zb_status plan_windows(windows *w, int64_t *mem, const shard_io *io, size_t lo, size_t m, uint64_t gap) {
    w->ends = mem;
    w->order = mem + m;
    w->read_of = mem + 2 * m;
    w->begins = (uint64_t *)(mem + 3 * m);
    w->rends = (uint64_t *)(mem + 4 * m);
    w->scratch = mem + 5 * m;
    return zb_shard_windows(io->pairs, io->spec->nentries, io->ents + lo, m, io->arena_cap, gap, w->ends,
                            &w->nwindows, w->order, w->read_of, &w->norder, w->begins, w->rends, &w->nreads,
                            w->scratch);
}

enum { SHARD_MISSING, SHARD_LINK, SHARD_RETRY, SHARD_OPEN };

void zb_shard_room_free(zb_shard_room *room) {
    if (room == NULL) return;
    free(room->pairs);
    free(room->seen);
    room->pairs = NULL;
    room->seen = NULL;
    room->nentries = 0;
}

/* The room for an index of n entries (seen all -1): kept from an earlier shard, else allocated
 * now, once a shard file has proved to hold an index that large. */
static zb_status room_for(zb_shard_room *room, size_t n) {
    if (room->nentries == n && room->pairs != NULL && room->seen != NULL) return ZB_OK;
    zb_shard_room_free(room);
    room->pairs = (uint64_t *)malloc(2 * n * sizeof(uint64_t));
    room->seen = (int64_t *)malloc(n * sizeof(int64_t));
    if (room->pairs == NULL || room->seen == NULL) {
        zb_shard_room_free(room);
        return ZB_ENOMEM;
    }
    for (size_t e = 0; e < n; e++) room->seen[e] = -1;
    room->nentries = n;
    return ZB_OK;
}

/* Open the shard and read and validate its index into io->pairs (the room, allocated only now
 * that the file holds an index of that size).  *how: SHARD_MISSING (no file; not open),
 * SHARD_LINK (a symbolic link not followed; not open: the caller's way reads it), SHARD_RETRY
 * (open; too small, an index larger than the arena, damaged or shrinking: the caller's way
 * reports it) or SHARD_OPEN (open, pairs valid).  ZB_EIO: *os_error set (open when *how >
 * SHARD_LINK); ZB_ENOMEM: no room for the index (open). */
static zb_status open_shard(shard_io *io, const char *path, int *how) {
    int64_t size = 0;
    *how = SHARD_MISSING;
    int r = zb_file_open_ex(path, io->spec->nofollow, &io->f, &size, io->os_error);
    if (r == 2) *how = SHARD_LINK;
    if (r <= 0 || r == 2) return r < 0 ? ZB_EIO : ZB_OK;
    *how = SHARD_RETRY;
    const uint64_t index_nbytes = 16 * (uint64_t)io->spec->nentries + (io->spec->index_crc ? 4 : 0);
    /* too small for its index, or an index larger than the arena */
    if (size < 0 || (uint64_t)size < index_nbytes || index_nbytes > io->arena_cap) return ZB_OK;
    const uint64_t total = (uint64_t)size, at = io->spec->index_at_end ? total - index_nbytes : 0;
    int64_t got = zb_file_pread(io->f, io->arena, (size_t)index_nbytes, at, io->os_error);
    if (got < 0) return ZB_EIO;
    if ((uint64_t)got != index_nbytes) return ZB_OK; /* shrank while being read */
    zb_status room = room_for(io->room, io->spec->nentries);
    if (room != ZB_OK) return room;
    io->pairs = io->room->pairs;
    int64_t bad = -1;
    zb_status st = zb_shard_index_parse_crc(io->arena, io->spec->nentries, io->spec->index_crc,
                                            io->spec->index_at_end ? 0 : index_nbytes,
                                            io->spec->index_at_end ? at : total, io->pairs, &bad);
    if (st == ZB_ECORRUPT || st == ZB_ECHECKSUM) return ZB_OK;
    if (st == ZB_OK) *how = SHARD_OPEN;
    return st;
}

/* Check the tasks' entries (in range, each at most once: seen holds nentries -1 on entry and on
 * return), mark empty inner chunks missing and those larger than the arena too large (and empty
 * in pairs, so that no window reads them). */
static zb_status mark_tasks(shard_io *io, int64_t *seen) {
    zb_status st = ZB_OK;
    size_t k, n = io->spec->nentries;
    for (k = 0; k < io->count; k++) {
        int64_t e = io->ents[k];
        if (e < 0 || (uint64_t)e >= n || seen[e] >= 0) {
            *io->failed = io->first + k;
            st = ZB_EINVAL;
            break;
        }
        seen[e] = (int64_t)k;
        if (io->pairs[2 * e] == ZB_SHARD_EMPTY) {
            io->skipped[k] = ZB_SKIPPED_MISSING;
        } else if (io->pairs[2 * e + 1] > io->arena_cap) {
            io->skipped[k] = ZB_SKIPPED_TOO_LARGE;
            io->pairs[2 * e] = io->pairs[2 * e + 1] = ZB_SHARD_EMPTY;
        }
    }
    while (k-- > 0) seen[io->ents[k]] = -1;
    return st;
}

/* Read w's reads of positions w->order[k0, k1) (relative to position lo) into the arena and
 * point their tasks there.  *shrank = 1 when the file ended early (a concurrent writer). */
static zb_status read_window(shard_io *io, const windows *w, size_t k0, size_t k1, size_t lo, int *shrank) {
    size_t pos = 0, i = k0;
    if (k0 >= k1) return ZB_OK;
    for (size_t r = (size_t)w->read_of[k0]; i < k1; r++) {
        uint64_t b0 = w->begins[r], len = w->rends[r] - b0;
        int64_t got = zb_file_pread(io->f, io->arena + pos, (size_t)len, b0, io->os_error);
        if (got < 0) {
            *io->failed = io->first + lo + (size_t)w->order[i];
            return ZB_EIO;
        }
        if ((uint64_t)got != len) {
            *shrank = 1;
            return ZB_OK;
        }
        for (; i < k1 && (size_t)w->read_of[i] == r; i++) {
            size_t p = lo + (size_t)w->order[i];
            int64_t e = io->ents[p];
            io->tasks[p].src = io->arena + pos + (io->pairs[2 * e] - b0);
            io->tasks[p].n = (size_t)io->pairs[2 * e + 1];
        }
        pos += (size_t)len;
    }
    return ZB_OK;
}

/* The windows of an open shard with a valid index: read each (without its gaps when they do
 * not fit the arena), then decode its tasks in task order.  work: 12 * count int64. */
static zb_status read_windows(shard_io *io, int64_t *work) {
    windows all, alone;
    zb_status st = plan_windows(&all, work, io, 0, io->count, io->spec->max_gap);
    for (size_t w = 0, k = 0, lo = 0; st == ZB_OK && w < all.nwindows; w++) {
        size_t hi = (size_t)all.ends[w], k1 = k;
        while (k1 < all.norder && (size_t)all.order[k1] < hi) k1++;
        if (k1 == k) { /* only empty or too large inner chunks */
            lo = hi;
            continue;
        }
        uint64_t total = 0;
        for (size_t r = (size_t)all.read_of[k]; r <= (size_t)all.read_of[k1 - 1]; r++)
            total += all.rends[r] - all.begins[r];
        int shrank = 0;
        if (total <= io->arena_cap) {
            st = read_window(io, &all, k, k1, 0, &shrank);
        } else { /* the gaps do not fit: the chunks alone (at most the arena's bytes) */
            st = plan_windows(&alone, work + 6 * io->count, io, lo, hi - lo, 0);
            if (st == ZB_OK)
                st = read_window(io, &alone, 0, alone.norder, lo, &shrank);
            else
                *io->failed = io->first + lo;
        }
        if (st != ZB_OK || shrank) return st; /* shrank: what is not decoded yet is retried */
        for (size_t p = lo; p < hi; p++) {
            if (io->skipped[p] != ZB_SKIPPED_RETRY) continue;
            st = zb_decoder_put(io->d, &io->tasks[p]);
            if (st != ZB_OK) {
                *io->failed = io->first + p;
                return st;
            }
            io->skipped[p] = 0;
        }
        k = k1;
        lo = hi;
    }
    if (st != ZB_OK) *io->failed = io->first;
    return st;
}

/* The tasks of one shard read; work: ZB_SHARD_WORK(count) int64. */
static zb_status read_shard(shard_io *io, const zb_shard_read *sh, int64_t *work) {
    for (size_t k = 0; k < io->count; k++) io->skipped[k] = ZB_SKIPPED_RETRY; /* until decoded */
    if (io->count == 0) return ZB_OK;
    int how;
    zb_status st = open_shard(io, sh->path, &how);
    if (how == SHARD_LINK) return ZB_OK; /* its tasks stay ZB_SKIPPED_RETRY */
    if (how == SHARD_MISSING) {
        if (st != ZB_OK) *io->failed = io->first;
        for (size_t k = 0; st == ZB_OK && k < io->count; k++) io->skipped[k] = ZB_SKIPPED_MISSING;
        return st;
    }
    if (st != ZB_OK) *io->failed = io->first;
    if (st == ZB_OK && how == SHARD_OPEN) st = mark_tasks(io, io->room->seen);
    if (st == ZB_OK && how == SHARD_OPEN) st = read_windows(io, work);
    zb_file_close(io->f);
    return st;
}

zb_status zb_plan_read_shards(const zb_plan *plan, const zb_shard_spec *spec, const zb_shard_read *shards,
                              size_t nshards, const int64_t *entries, zb_decode_task *tasks, size_t ntasks,
                              uint8_t *arena, size_t arena_cap, zb_shard_room *room, int64_t *work, uint8_t *out,
                              const int64_t *out_strides, const zb_scratch *scratch, unsigned copy_flags,
                              uint8_t *skipped, size_t *failed, int *os_error) {
    if (!spec || (!shards && nshards) || !failed || !os_error || spec->nentries == 0 ||
        spec->nentries > SIZE_MAX / 32 || !room || (ntasks && (!entries || !tasks || !skipped || !arena || !work)))
        return ZB_EINVAL;
    zb_decoder d;
    if (zb_decoder_init(&d, plan, scratch, out, out_strides, copy_flags) != ZB_OK) return ZB_EINVAL;
    *failed = 0;
    *os_error = 0;
    for (size_t s = 0; s < nshards; s++)
        if (shards[s].path == NULL || shards[s].first > ntasks || shards[s].count > ntasks - shards[s].first)
            return ZB_EINVAL;
    shard_io io = {spec, NULL, NULL, NULL, 0, 0, room, NULL, arena, arena_cap, {0}, &d, failed, os_error};
    for (size_t s = 0; s < nshards; s++) {
        io.first = shards[s].first;
        io.count = shards[s].count;
        io.ents = entries + io.first;
        io.tasks = tasks + io.first;
        io.skipped = skipped + io.first;
        zb_status st = read_shard(&io, &shards[s], work);
        if (st != ZB_OK) return st;
    }
    zb_status st = zb_decoder_finish(&d);
    if (st != ZB_OK) *failed = ntasks ? ntasks - 1 : 0;
    return st;
}

static zb_status shards_batch(void *ctx, size_t k, int w, void **state, zb_batch_error *err) {
    read_job *j = (read_job *)ctx;
    const zb_worker_bufs *b = &j->bufs[w];
    size_t s0 = j->bounds[k], s1 = j->bounds[k + 1];
    zb_scratch sc;
    err->failed = s0 < s1 ? j->shards[s0].first : 0;
    worker_state *s = worker_setup(b, state, &sc);
    if (s == NULL) return ZB_ENOMEM;
    if (s->work == NULL) s->work = (int64_t *)malloc(sizeof(int64_t) * ZB_SHARD_WORK(j->most));
    if (s->work == NULL) return ZB_ENOMEM;
    return zb_plan_read_shards(j->plan, j->spec, j->shards + s0, s1 - s0, j->entries, j->tasks, j->ntasks, b->arena,
                               b->arena_cap, &s->room, s->work, j->out, j->out_strides, &sc, j->copy_flags,
                               j->skipped, &err->failed, &err->os_error);
}

zb_status zb_plan_read_shards_par(const zb_plan *plan, const zb_shard_spec *spec, const zb_shard_read *shards,
                                  size_t nshards, const size_t *bounds, size_t nbatches, const int64_t *entries,
                                  zb_decode_task *tasks, size_t ntasks, size_t most, const zb_worker_bufs *bufs,
                                  int nworkers, uint8_t *out, const int64_t *out_strides, unsigned copy_flags,
                                  uint8_t *skipped, size_t *failed, int *os_error) {
    if (!failed || !os_error || !spec || (nshards && !shards)) return ZB_EINVAL;
    *failed = 0;
    *os_error = 0;
    if (check_par(plan, bounds, nbatches, nshards, bufs, nworkers) != ZB_OK || spec->nentries == 0 ||
        spec->nentries > SIZE_MAX / 32 || most > SIZE_MAX / 128)
        return ZB_EINVAL;
    for (size_t s = 0; s < nshards; s++)
        if (shards[s].count > most) return ZB_EINVAL;
    read_job j;
    job_init(&j, plan, bounds, bufs, out, out_strides, copy_flags, skipped, tasks);
    j.spec = spec;
    j.shards = shards;
    j.entries = entries;
    j.ntasks = ntasks;
    j.most = most;
    return run_reads(&j, nbatches, nworkers, shards_batch, failed, os_error);
}

/* ------------------------------------------------------------------------------ chunk writes */
zb_status zb_encode_write(const zb_eplan *plan, const zb_enc_task *tasks, zb_chunk_file *files, size_t ntasks,
                          const uint8_t *src, const int64_t *src_strides, uint8_t *work, int do_fsync,
                          size_t *failed, int *os_error, int *stage) {
    if (!failed || !os_error || !stage) return ZB_EINVAL;
    *failed = 0;
    *os_error = 0;
    *stage = 0;
    if (ntasks && !files) return ZB_EINVAL;
    zb_encoder enc;
    zb_status st = zb_encoder_init(&enc, plan, tasks, ntasks, src, src_strides, work);
    if (st != ZB_OK) return st;
    for (size_t i = 0; i < ntasks; i++) {
        const uint8_t *data;
        size_t n;
        int is_fill;
        *failed = i;
        st = zb_encoder_next(&enc, i, &data, &n, &is_fill);
        if (st != ZB_OK) return st;
        if (is_fill) {
            files[i].result = ZB_ENC_FILL;
            continue;
        }
        st = zb_write_file_atomic(files[i].path, files[i].tmp, data, n, do_fsync, os_error, stage);
        if (st != ZB_OK) return st;
        files[i].result = ZB_ENC_WRITTEN;
    }
    *failed = ntasks;
    return ZB_OK;
}

typedef struct {
    const zb_eplan *plan;
    const zb_enc_task *tasks;
    zb_chunk_file *files;
    const uint8_t *src;
    const int64_t *src_strides;
    const size_t *bounds;
    uint8_t *const *work;
    int do_fsync;
} write_job;

static void free_buffer(void *ctx, void *state) {
    (void)ctx;
    free(state);
}

static zb_status write_batch(void *ctx, size_t k, int w, void **state, zb_batch_error *err) {
    write_job *j = (write_job *)ctx;
    size_t lo = j->bounds[k], hi = j->bounds[k + 1];
    err->failed = lo;
    uint8_t *work = zb_encode_worker_buffer(j->plan, j->work, w, state);
    if (work == NULL) return ZB_ENOMEM;
    zb_status st = zb_encode_write(j->plan, j->tasks + lo, j->files + lo, hi - lo, j->src, j->src_strides, work,
                                   j->do_fsync, &err->failed, &err->os_error, &err->stage);
    err->failed += lo;
    return st;
}

zb_status zb_encode_write_par(const zb_eplan *plan, const zb_enc_task *tasks, zb_chunk_file *files, size_t ntasks,
                              const uint8_t *src, const int64_t *src_strides, const size_t *bounds, size_t nbatches,
                              uint8_t *const *work, int nworkers, int do_fsync, size_t *failed, int *os_error,
                              int *stage) {
    if (!failed || !os_error || !stage) return ZB_EINVAL;
    *failed = 0;
    *os_error = 0;
    *stage = 0;
    if (!plan || (ntasks && (!tasks || !files)) || zb_batch_bounds_check(bounds, nbatches, ntasks, nworkers) != ZB_OK)
        return ZB_EINVAL;
    write_job j = {plan, tasks, files, src, src_strides, bounds, work, do_fsync};
    zb_batch_error err;
    zb_status st = zb_pool_batches(nbatches, nworkers, write_batch, free_buffer, &j, &err);
    *failed = st == ZB_OK ? ntasks : err.failed;
    *os_error = err.os_error;
    *stage = err.stage;
    return st;
}
