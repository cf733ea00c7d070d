/* A small pool of native threads for the read pipeline: one call runs a job on several threads
 * with the GIL released once, and no Python code between the pieces of work.
 *
 *   zb_pool_run(n, fn, ctx)  runs fn(ctx, w) for w = 0 .. n-1 at the same time: w = 0 on the
 *                            calling thread, the others on the pool's threads (started when first
 *                            needed and kept for later calls), and returns when all have returned.
 *
 * A job's workers take their work from a counter they share, so that any subset of them finishes
 * the job: when the pool is already running a job (a call from another thread, or from inside a
 * worker), or a thread cannot be started, fewer workers run, down to fn(ctx, 0) alone on the
 * calling thread.  The return value is the number of workers that ran.
 *
 * Waking a sleeping thread costs tens of microseconds on virtual machines, more than the work of
 * a small read, so the pool's threads wait for the next job spinning for a short while before
 * they sleep (ZB_POOL_SPIN_NS; ZB_POOL_SPIN_BUSY_NS while jobs come back to back, as small reads
 * in a loop do), and so does the caller for the last worker to finish (ZB_POOL_SPIN_NS); only
 * after jobs with no more workers than online processors.
 * A forked child starts with no threads; its first job starts new ones. */
#ifndef ZARRBOLT_POOL_H
#define ZARRBOLT_POOL_H

#include <stddef.h>

#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_POOL_MAX 256          /* workers per job, the calling thread included */
#ifndef ZB_POOL_SPIN_NS
#define ZB_POOL_SPIN_NS 100000   /* how long an idle thread keeps looking for work before sleeping */
#endif
#ifndef ZB_POOL_SPIN_BUSY_NS
#define ZB_POOL_SPIN_BUSY_NS 1000000 /* the same after a job that came within this of the one before */
#endif

typedef void (*zb_pool_fn)(void *ctx, int worker);

int zb_pool_run(int n, zb_pool_fn fn, void *ctx);

/* Atomic counter for a job's work items: the next one, or >= the total when none is left. */
long zb_pool_next(long *counter);

/* An atomic read of a counter. */
long zb_pool_load(long *counter);

/* Threads the pool holds now (testing aid). */
int zb_pool_threads(void);

/* The most calls of zb_pool_batches that ran at the same time (from different threads) since the
 * last reset; reset != 0 starts counting again from the calls running now (testing aid: that
 * independent reads from several threads are inside the GIL-free batch runner at once). */
long zb_pool_callers_peak(int reset);

/* ------------------------------------------------------------------ the one batch runner
 * Batches on the pool, lowest failing batch wins: the decode, encode and file plans hand
 * their work to zb_pool_batches as nbatches batches that up to nworkers workers take in
 * increasing order.  A failing batch stops its worker, and no batch starts after a failure is
 * seen; batches taken before it still run.  Since batches are taken in increasing order, every
 * batch below the lowest failing one ran to the end, so the error reported, the lowest failing
 * batch's, is the one a run of the batches in order on one thread would report.
 *
 * What a batch reports when it fails (the first member `st` is set by the runner). */
typedef struct {
    zb_status st;     /* ZB_OK when no batch failed */
    size_t failed;    /* the failing task (the batch function's numbering, usually the call's input) */
    int os_error;     /* errno / GetLastError() of a file error */
    int stage;        /* where a file write failed (ZB_WRITE_*) */
} zb_batch_error;

/* Run batch `batch` on worker `worker` (0 .. nworkers-1: the calling thread is worker 0).
 * *state is the worker's own pointer, NULL at its first batch: a batch function may allocate
 * per-worker buffers there once, which zb_pool_batches hands to free_state after the worker's
 * last batch.  On failure it returns the status and fills err->failed (and os_error / stage). */
typedef zb_status (*zb_batch_fn)(void *ctx, size_t batch, int worker, void **state, zb_batch_error *err);
typedef void (*zb_state_free_fn)(void *ctx, void *state);

/* Run batches 0 .. nbatches-1 of fn on up to nworkers workers (at most ZB_POOL_MAX) with the
 * rule above; free_state may be NULL.  Returns the lowest failing batch's status (ZB_OK when
 * none failed; ZB_EINVAL for nworkers < 1), its report in *err (err->st the same status). */
zb_status zb_pool_batches(size_t nbatches, int nworkers, zb_batch_fn fn, zb_state_free_fn free_state, void *ctx,
                          zb_batch_error *err);

/* The batch bounds every batched call takes: batch b is items [bounds[b], bounds[b + 1]) for
 * b < nbatches; ZB_OK when bounds[0] = 0, they never fall, bounds[nbatches] = nitems, and
 * 1 <= nworkers <= ZB_POOL_MAX; else ZB_EINVAL. */
zb_status zb_batch_bounds_check(const size_t *bounds, size_t nbatches, size_t nitems, int nworkers);

#ifdef __cplusplus
}
#endif
#endif
