/* A shard's inner chunks encoded on the pool and written to its file in order, in one job
 * (see zb_encode_stream in zarrbolt/encode.h).
 *
 * Workers take the chunks in order from a shared counter.  Chunk i is encoded into a worker's
 * work buffer, copied into slot i % nslots of a ring (or into memory of its own when larger
 * than a slot) and marked done.  Whoever finds the chunk after the written prefix done takes
 * the writer's role (one at a time, by compare-and-swap) and writes the done chunks that follow
 * the prefix, one after another, then looks again: chunks done while it wrote are written by it
 * or by the worker that finished them.  A worker waits (yielding) before chunk i until chunk
 * i - nslots is written and its slot free again; the worker holding the lowest unwritten chunk
 * never waits, so the job always advances.  No barrier between batches: a worker with nothing
 * left of one part of the shard goes on with the next. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "zarrbolt/encode.h"
#include "zarrbolt/pool.h"

#if defined(_WIN32)
#  ifndef WIN32_LEAN_AND_MEAN
#    define WIN32_LEAN_AND_MEAN
#  endif
#  include <windows.h>
static long a_load(volatile long *p) { return InterlockedCompareExchange(p, 0, 0); }
static void a_store(volatile long *p, long v) { InterlockedExchange(p, v); }
static int a_cas(volatile long *p, long expect, long v) { return InterlockedCompareExchange(p, v, expect) == expect; }
static void yield_cpu(void) { SwitchToThread(); }
#else
#  include <sched.h>
static long a_load(volatile long *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static void a_store(volatile long *p, long v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
static int a_cas(volatile long *p, long expect, long v) {
  return __atomic_compare_exchange_n(p, &expect, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
static void yield_cpu(void) { sched_yield(); }
#endif

typedef struct {
  const zb_eplan *plan;
  const zb_enc_task *tasks;
  size_t ntasks;
  const uint8_t *src;
  const int64_t *src_strides;
  uint8_t *const *work;
  uint8_t *ring;
  size_t slot, nslots;
  zb_file f;
  int64_t *where;        /* out, per chunk: (file offset, size) or (ZB_ENC_SKIPPED_FILL, 0) */
  volatile long *done;   /* per chunk: 1 once encoded (its bytes in sizes / slot / heap) */
  size_t *sizes;         /* per chunk: encoded size, or SIZE_MAX when all fill */
  uint8_t **heap;        /* per chunk: its own memory when larger than a slot */
  long next;             /* the next chunk to take (zb_pool_next) */
  volatile long written; /* chunks [0, written) are in the file */
  volatile long writing; /* 1 while a worker writes */
  volatile long stop;    /* 1 once anything failed */
  uint64_t pos;          /* where the next chunk goes (the writer's) */
} stream_job;

static void free_state(void *ctx, void *state) {
  (void)ctx;
  free(state);
}

/* Write the done chunks after the written prefix while this worker can take the writer's role
 * and finds some. */
static zb_status write_ready(stream_job *j, zb_batch_error *err) {
  while (a_cas(&j->writing, 0, 1)) {
    size_t w0 = (size_t)a_load(&j->written), w1 = w0;
    while (w1 < j->ntasks && a_load(&j->done[w1])) w1++;
    zb_status st = ZB_OK;
    for (size_t i = w0; i < w1; i++) {
      if (j->sizes[i] == SIZE_MAX) {
        j->where[2 * i] = ZB_ENC_SKIPPED_FILL;
        j->where[2 * i + 1] = 0;
        continue;
      }
      const uint8_t *p = j->heap[i] ? j->heap[i] : j->ring + (i % j->nslots) * j->slot;
      if (zb_file_pwrite(j->f, p, j->sizes[i], j->pos, &err->os_error) != 0) {
        err->failed = i;
        st = ZB_EIO;
        break;
      }
      j->where[2 * i] = (int64_t)j->pos;
      j->where[2 * i + 1] = (int64_t)j->sizes[i];
      j->pos += j->sizes[i];
      free(j->heap[i]);
      j->heap[i] = NULL;
    }
    if (st != ZB_OK) {
      a_store(&j->stop, 1);
      a_store(&j->writing, 0);
      return st;
    }
    a_store(&j->written, (long)w1);
    a_store(&j->writing, 0);
    /* a chunk finished while this one wrote may have found the role taken: look again */
    size_t w = (size_t)a_load(&j->written);
    if (w >= j->ntasks || !a_load(&j->done[w])) break;
  }
  return ZB_OK;
}

/* Encode chunk i into its slot (or memory of its own) and mark it done. */
static zb_status encode_one(stream_job *j, size_t i, uint8_t *work) {
  zb_encoder enc;
  const uint8_t *data;
  size_t n;
  int is_fill;
  zb_status st = zb_encoder_init(&enc, j->plan, j->tasks + i, 1, j->src, j->src_strides, work);
  if (st == ZB_OK) st = zb_encoder_next(&enc, 0, &data, &n, &is_fill);
  if (st != ZB_OK) return st;
  if (is_fill) {
    j->sizes[i] = SIZE_MAX;
  } else {
    uint8_t *dst = j->ring + (i % j->nslots) * j->slot;
    if (n > j->slot) {
      dst = j->heap[i] = (uint8_t *)malloc(n ? n : 1);
      if (dst == NULL) return ZB_ENOMEM;
    }
    memcpy(dst, data, n);
    j->sizes[i] = n;
  }
  a_store(&j->done[i], 1);
  return ZB_OK;
}

/* One worker: chunks from the shared counter until none is left or something failed. */
static zb_status stream_worker(void *ctx, size_t k, int w, void **state, zb_batch_error *err) {
  (void)k;
  stream_job *j = (stream_job *)ctx;
  uint8_t *work = zb_encode_worker_buffer(j->plan, j->work, w, state);
  err->failed = 0;
  if (work == NULL) {
    a_store(&j->stop, 1);
    return ZB_ENOMEM;
  }
  while (!a_load(&j->stop)) {
    long i = zb_pool_next(&j->next);
    if (i < 0 || (size_t)i >= j->ntasks) break;
    while ((size_t)i >= (size_t)a_load(&j->written) + j->nslots) { /* its slot is not written yet */
      if (a_load(&j->stop)) return ZB_OK;
      yield_cpu();
    }
    err->failed = (size_t)i;
    zb_status st = encode_one(j, (size_t)i, work);
    if (st == ZB_OK) st = write_ready(j, err);
    if (st != ZB_OK) {
      a_store(&j->stop, 1);
      return st;
    }
  }
  return ZB_OK;
}

zb_status zb_encode_stream(const zb_eplan *plan, const zb_enc_task *tasks, size_t ntasks, const uint8_t *src,
                           const int64_t *src_strides, uint8_t *const *work, int nworkers, uint8_t *ring,
                           size_t ring_bytes, size_t slot, zb_file f, uint64_t base, int64_t *where, uint64_t *end,
                           size_t *failed, int *os_error) {
  if (!failed || !os_error || !end) return ZB_EINVAL;
  *failed = 0;
  *os_error = 0;
  *end = base;
  if (!plan || (ntasks && (!tasks || !where || !ring)) || nworkers < 1 || nworkers > ZB_POOL_MAX || slot == 0 ||
      ring_bytes / slot < 1 || ntasks > (size_t)LONG_MAX / 2)
    return ZB_EINVAL;
  if (ntasks == 0) return ZB_OK;
  stream_job j;
  memset(&j, 0, sizeof j);
  j.plan = plan;
  j.tasks = tasks;
  j.ntasks = ntasks;
  j.src = src;
  j.src_strides = src_strides;
  j.work = work;
  j.ring = ring;
  j.slot = slot;
  j.nslots = ring_bytes / slot;
  j.f = f;
  j.where = where;
  j.pos = base;
  j.done = (volatile long *)calloc(ntasks, sizeof(long));
  j.sizes = (size_t *)calloc(ntasks, sizeof(size_t));
  j.heap = (uint8_t **)calloc(ntasks, sizeof(uint8_t *));
  zb_status st = ZB_ENOMEM;
  if (j.done && j.sizes && j.heap) {
    zb_batch_error err;
    /* one "batch" per worker: each runs the loop over the shared counter */
    st = zb_pool_batches((size_t)nworkers, nworkers, stream_worker, free_state, &j, &err);
    *failed = err.failed;
    *os_error = err.os_error;
    if (st == ZB_OK && (size_t)j.written != ntasks) st = ZB_EINVAL; /* cannot happen: all were written */
  }
  if (j.heap)
    for (size_t i = 0; i < ntasks; i++) free(j.heap[i]);
  free((void *)j.done);
  free(j.sizes);
  free(j.heap);
  *end = j.pos;
  return st;
}
