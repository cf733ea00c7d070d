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
 * a small read, so the pool's threads wait for the next job spinning for a short while
 * (ZB_POOL_SPIN_NS) before they sleep, and so does the caller for the last worker to finish;
 * only after jobs with no more workers than online processors. 
 * A forked child starts with no threads; its first job starts new ones. */
#ifndef ZARRBOLT_POOL_H
#define ZARRBOLT_POOL_H

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_POOL_MAX 256          /* workers per job, the calling thread included */
#define ZB_POOL_SPIN_NS 100000   /* how long an idle thread keeps looking for work before sleeping */

typedef void (*zb_pool_fn)(void *ctx, int worker);

int zb_pool_run(int n, zb_pool_fn fn, void *ctx);

/* Atomic counter for a job's work items: the next one, or >= the total when none is left. */
long zb_pool_next(long *counter);

/* An atomic read of a counter. */
long zb_pool_load(long *counter);

/* Threads the pool holds now (testing aid). */
int zb_pool_threads(void);

#ifdef __cplusplus
}
#endif
#endif
