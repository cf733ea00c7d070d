/* Native thread pool (see zarrbolt/pool.h).
 *
 * One job at a time: the thread running it holds g_busy.  It publishes the job (function,
 * context, number of workers) under g_mu, bumps the generation g_gen and wakes the pool's
 * threads; thread i (1-based) takes part when i < n, then counts g_pending down; the caller runs
 * worker 0 and waits for g_pending to reach 0.  Waiting threads first spin on g_gen / g_pending
 * (reads only), then sleep on a condition variable: the caller for up to ZB_POOL_SPIN_NS, a pool
 * thread for up to ZB_POOL_SPIN_BUSY_NS when its last job came soon after the one before (reads
 * back to back), else ZB_POOL_SPIN_NS. */
#include "zarrbolt/pool.h"

#include <stdint.h>
#include <stdlib.h>

#if defined(_WIN32)
#  ifndef WIN32_LEAN_AND_MEAN
#    define WIN32_LEAN_AND_MEAN
#  endif
#  include <windows.h>
typedef SRWLOCK zb_mutex;
typedef CONDITION_VARIABLE zb_cond;
#  define MUTEX_INIT SRWLOCK_INIT
#  define COND_INIT CONDITION_VARIABLE_INIT
static void mu_lock(zb_mutex *m) { AcquireSRWLockExclusive(m); }
static void mu_unlock(zb_mutex *m) { ReleaseSRWLockExclusive(m); }
static int mu_trylock(zb_mutex *m) { return TryAcquireSRWLockExclusive(m) != 0; }
static void cond_wait(zb_cond *c, zb_mutex *m) { SleepConditionVariableSRW(c, m, INFINITE, 0); }
static void cond_broadcast(zb_cond *c) { WakeAllConditionVariable(c); }
static long atomic_load_long(volatile long *p) { return InterlockedCompareExchange(p, 0, 0); }
static void atomic_store_long(volatile long *p, long v) { InterlockedExchange(p, v); }
static long atomic_add_long(volatile long *p, long v) { return InterlockedExchangeAdd(p, v) + v; }
static int atomic_cas_long(volatile long *p, long expect, long v) {
  return InterlockedCompareExchange(p, v, expect) == expect;
}
static void cpu_relax(void) { YieldProcessor(); }
static uint64_t now_ns(void) {
  static LARGE_INTEGER freq;
  LARGE_INTEGER t;
  if (freq.QuadPart == 0) QueryPerformanceFrequency(&freq);
  QueryPerformanceCounter(&t);
  return (uint64_t)((double)t.QuadPart * 1e9 / (double)freq.QuadPart);
}
#else
#  include <pthread.h>
#  include <time.h>
#  include <unistd.h>
typedef pthread_mutex_t zb_mutex;
typedef pthread_cond_t zb_cond;
#  define MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
#  define COND_INIT PTHREAD_COND_INITIALIZER
static void mu_lock(zb_mutex *m) { pthread_mutex_lock(m); }
static void mu_unlock(zb_mutex *m) { pthread_mutex_unlock(m); }
static int mu_trylock(zb_mutex *m) { return pthread_mutex_trylock(m) == 0; }
static void cond_wait(zb_cond *c, zb_mutex *m) { pthread_cond_wait(c, m); }
static void cond_broadcast(zb_cond *c) { pthread_cond_broadcast(c); }
static long atomic_load_long(volatile long *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static void atomic_store_long(volatile long *p, long v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static long atomic_add_long(volatile long *p, long v) { return __atomic_add_fetch(p, v, __ATOMIC_ACQ_REL); }
static int atomic_cas_long(volatile long *p, long expect, long v) {
  return __atomic_compare_exchange_n(p, &expect, v, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
static void cpu_relax(void) {
#  if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#  elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#  endif
}
static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

static zb_mutex g_mu = MUTEX_INIT;   /* job fields, g_gen writes, the condition variables */
static zb_mutex g_busy = MUTEX_INIT; /* held by the thread running a job */
static zb_cond g_wake = COND_INIT;   /* a new job was published */
static zb_cond g_done = COND_INIT;   /* the last worker of a job finished */
static volatile long g_gen;          /* job generation */
static volatile long g_pending;      /* pool threads of the current job still working */
static int g_nthreads;               /* pool threads started (changed under g_busy) */
static zb_pool_fn g_fn;
static void *g_ctx;
static int g_n;

long zb_pool_next(long *counter) { return atomic_add_long((volatile long *)counter, 1) - 1; }

long zb_pool_load(long *counter) { return atomic_load_long((volatile long *)counter); }

int zb_pool_threads(void) { return g_nthreads; }

/* Whether waiting threads spin: only while the last job had no more workers than the machine
 * has processors (more spinning threads than processors would take time from the working ones). */
static volatile long g_spin;

static int g_ncpu; /* online processors, read once (sysconf reads a file on Linux) */

static int online_cpus(void) {
  if (g_ncpu > 0) return g_ncpu; /* a racy first read only computes it twice */
#if defined(_WIN32)
  SYSTEM_INFO si;
  GetSystemInfo(&si);
  long n = (long)si.dwNumberOfProcessors;
#else
  long n = sysconf(_SC_NPROCESSORS_ONLN);
#endif
  g_ncpu = n < 1 ? 1 : (int)n;
  return g_ncpu;
}

/* Spin until *p differs from v, for at most limit_ns (when spinning is on). */
static void spin_while(volatile long *p, long v, uint64_t limit_ns) {
  if (!atomic_load_long(&g_spin)) return;
  uint64_t t0 = now_ns();
  for (unsigned k = 1; atomic_load_long(p) == v; k++) {
    cpu_relax();
    if ((k & 63) == 0 && now_ns() - t0 > limit_ns) return;
  }
}

typedef struct {
  int id;
  long seen; /* the generation before the first job this thread may take */
} helper_start;

static void helper_loop(int id, long seen) {
  int spin = 1; /* not after a job this thread had no part in: others are working then */
  uint64_t limit = ZB_POOL_SPIN_NS, last_end = 0;
  for (;;) {
    if (spin) spin_while(&g_gen, seen, limit);
    mu_lock(&g_mu);
    while (atomic_load_long(&g_gen) == seen) cond_wait(&g_wake, &g_mu);
    seen = atomic_load_long(&g_gen);
    zb_pool_fn fn = g_fn;
    void *ctx = g_ctx;
    int n = g_n;
    mu_unlock(&g_mu);
    spin = id < n;
    if (!spin) continue; /* not part of this job */
    /* a job that came soon after this thread's last one: the next may come as soon */
    limit = last_end && now_ns() - last_end <= ZB_POOL_SPIN_BUSY_NS ? ZB_POOL_SPIN_BUSY_NS : ZB_POOL_SPIN_NS;
    fn(ctx, id);
    last_end = now_ns();
    if (atomic_add_long(&g_pending, -1) == 0) {
      mu_lock(&g_mu);
      cond_broadcast(&g_done);
      mu_unlock(&g_mu);
    }
  }
}

#if defined(_WIN32)
static DWORD WINAPI helper_main(LPVOID arg) {
  helper_start s = *(helper_start *)arg;
  free(arg);
  helper_loop(s.id, s.seen);
  return 0;
}
static int start_thread(int id, long seen) {
  helper_start *s = (helper_start *)malloc(sizeof *s);
  if (s == NULL) return 0;
  s->id = id;
  s->seen = seen;
  HANDLE h = CreateThread(NULL, 0, helper_main, s, 0, NULL);
  if (h == NULL) {
    free(s);
    return 0;
  }
  CloseHandle(h);
  return 1;
}
static void pool_init(void) {}
#else
static void *helper_main(void *arg) {
  helper_start s = *(helper_start *)arg;
  free(arg);
  helper_loop(s.id, s.seen);
  return NULL;
}
static int start_thread(int id, long seen) {
  helper_start *s = (helper_start *)malloc(sizeof *s);
  if (s == NULL) return 0;
  s->id = id;
  s->seen = seen;
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) {
    free(s);
    return 0;
  }
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, (size_t)4 << 20);
  pthread_t t;
  int r = pthread_create(&t, &attr, helper_main, s);
  pthread_attr_destroy(&attr);
  if (r != 0) {
    free(s);
    return 0;
  }
  return 1;
}
/* The child of a fork has none of the parent's threads, and the locks may have been held by
 * threads that do not exist there. */
static void after_fork_child(void) {
  pthread_mutex_init(&g_mu, NULL);
  pthread_mutex_init(&g_busy, NULL);
  pthread_cond_init(&g_wake, NULL);
  pthread_cond_init(&g_done, NULL);
  g_nthreads = 0;
  g_pending = 0;
}
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static void register_fork(void) { pthread_atfork(NULL, NULL, after_fork_child); }
static void pool_init(void) { pthread_once(&g_once, register_fork); }
#endif

int zb_pool_run(int n, zb_pool_fn fn, void *ctx) {
  if (n > ZB_POOL_MAX) n = ZB_POOL_MAX;
  if (n <= 1 || !mu_trylock(&g_busy)) {
    fn(ctx, 0);
    return 1;
  }
  pool_init();
  long gen = atomic_load_long(&g_gen); /* only the holder of g_busy changes it */
  while (g_nthreads < n - 1 && start_thread(g_nthreads + 1, gen)) g_nthreads++;
  if (n - 1 > g_nthreads) n = g_nthreads + 1;
  if (n > 1) {
    mu_lock(&g_mu);
    g_fn = fn;
    g_ctx = ctx;
    g_n = n;
    atomic_store_long(&g_spin, n <= online_cpus());
    atomic_store_long(&g_pending, n - 1);
    atomic_store_long(&g_gen, gen + 1);
    cond_broadcast(&g_wake);
    mu_unlock(&g_mu);
  }
  fn(ctx, 0);
  if (n > 1) {
    for (long left; (left = atomic_load_long(&g_pending)) != 0;) {
      spin_while(&g_pending, left, ZB_POOL_SPIN_NS); /* until a worker finishes (or the spin ends) */
      if (atomic_load_long(&g_pending) == left) break;
    }
    mu_lock(&g_mu);
    while (atomic_load_long(&g_pending) != 0) cond_wait(&g_done, &g_mu);
    mu_unlock(&g_mu);
  }
  mu_unlock(&g_busy);
  return n;
}

/* ------------------------------------------------------------------ the one batch runner */
typedef struct {
  zb_batch_fn fn;
  zb_state_free_fn free_state;
  void *ctx;
  size_t nbatches;
  long next; /* the next batch to take (zb_pool_next) */
  long stop; /* nonzero once a batch failed */
  /* per worker: the batch it failed on (nbatches: none) and its report; each worker stops at
   * its first failure, so the lowest failing batch is the least of these */
  size_t failed_batch[ZB_POOL_MAX];
  zb_batch_error err[ZB_POOL_MAX];
} batch_job;

static void batch_worker(void *arg, int w) {
  batch_job *j = (batch_job *)arg;
  void *state = NULL;
  while (!zb_pool_load(&j->stop)) {
    long k = zb_pool_next(&j->next);
    if (k < 0 || (size_t)k >= j->nbatches) break;
    zb_batch_error e = {ZB_OK, 0, 0, 0};
    zb_status st = j->fn(j->ctx, (size_t)k, w, &state, &e);
    if (st != ZB_OK) {
      e.st = st;
      j->err[w] = e;
      j->failed_batch[w] = (size_t)k;
      zb_pool_next(&j->stop);
      break;
    }
  }
  if (state != NULL && j->free_state != NULL) j->free_state(j->ctx, state);
}

/* Calls of zb_pool_batches running now, and the most seen at once (zb_pool_callers_peak). */
static volatile long g_callers;
static volatile long g_callers_peak;

long zb_pool_callers_peak(int reset) {
  long peak = atomic_load_long(&g_callers_peak);
  if (reset) atomic_store_long(&g_callers_peak, atomic_load_long(&g_callers));
  return peak;
}

static zb_status pool_batches(size_t nbatches, int nworkers, zb_batch_fn fn, zb_state_free_fn free_state, void *ctx,
                              zb_batch_error *err);

zb_status zb_pool_batches(size_t nbatches, int nworkers, zb_batch_fn fn, zb_state_free_fn free_state, void *ctx,
                          zb_batch_error *err) {
  long now = atomic_add_long(&g_callers, 1);
  for (long peak = atomic_load_long(&g_callers_peak); peak < now && !atomic_cas_long(&g_callers_peak, peak, now);)
    peak = atomic_load_long(&g_callers_peak);
  zb_status st = pool_batches(nbatches, nworkers, fn, free_state, ctx, err);
  atomic_add_long(&g_callers, -1);
  return st;
}

static zb_status pool_batches(size_t nbatches, int nworkers, zb_batch_fn fn, zb_state_free_fn free_state, void *ctx,
                              zb_batch_error *err) {
  zb_batch_error none = {ZB_OK, 0, 0, 0};
  if (err) *err = none;
  if (nworkers < 1 || !fn || !err) return ZB_EINVAL;
  if (nbatches == 0) return ZB_OK;
  if (nworkers > ZB_POOL_MAX) nworkers = ZB_POOL_MAX;
  if ((size_t)nworkers > nbatches) nworkers = (int)nbatches;
  batch_job *j = (batch_job *)malloc(sizeof *j);
  if (j == NULL) return ZB_ENOMEM;
  j->fn = fn;
  j->free_state = free_state;
  j->ctx = ctx;
  j->nbatches = nbatches;
  j->next = 0;
  j->stop = 0;
  for (int w = 0; w < nworkers; w++) j->failed_batch[w] = nbatches;
  zb_pool_run(nworkers, batch_worker, j);
  size_t low = nbatches;
  for (int w = 0; w < nworkers; w++) {
    if (j->failed_batch[w] < low) {
      low = j->failed_batch[w];
      *err = j->err[w];
    }
  }
  free(j);
  return err->st;
}

zb_status zb_batch_bounds_check(const size_t *bounds, size_t nbatches, size_t nitems, int nworkers) {
  if (!bounds || nworkers < 1 || nworkers > ZB_POOL_MAX || bounds[0] != 0 || bounds[nbatches] != nitems)
    return ZB_EINVAL;
  for (size_t k = 0; k < nbatches; k++)
    if (bounds[k + 1] < bounds[k]) return ZB_EINVAL;
  return ZB_OK;
}
