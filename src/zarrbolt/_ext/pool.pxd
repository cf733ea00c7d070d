# C declarations of zarrbolt/pool.h: the native thread pool and the one batch runner
# (zb_pool_batches: batches on the pool, lowest failing batch wins).  Status codes are
# returned as int.
cdef extern from "zarrbolt/pool.h" nogil:
    enum:
        ZB_POOL_MAX
        ZB_POOL_SPIN_NS
    ctypedef void (*zb_pool_fn)(void *ctx, int worker)
    int zb_pool_run(int n, zb_pool_fn fn, void *ctx)
    long zb_pool_next(long *counter)
    long zb_pool_load(long *counter)
    int zb_pool_threads()
    long zb_pool_callers_peak(int reset)
    ctypedef struct zb_batch_error:
        int st
        size_t failed
        int os_error
        int stage
    ctypedef int (*zb_batch_fn)(void *ctx, size_t batch, int worker, void **state, zb_batch_error *err)
    ctypedef void (*zb_state_free_fn)(void *ctx, void *state)
    int zb_pool_batches(size_t nbatches, int nworkers, zb_batch_fn fn, zb_state_free_fn free_state, void *ctx,
                        zb_batch_error *err)
    int zb_batch_bounds_check(const size_t *bounds, size_t nbatches, size_t nitems, int nworkers)
