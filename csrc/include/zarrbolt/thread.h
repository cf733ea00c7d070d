/* Run-once initialisation and per-thread pointer slots on POSIX threads or Windows, as macros
 * that define static functions in the including file (each file keeps its own state):
 *
 *   ZB_ONCE(name, fn)        static void name(void): calls fn() once per process, thread-safely.
 *   ZB_TLS_SLOT(name, dtor)  static void *name_get(void) and static int name_set(void *v): one
 *                            pointer per thread (NULL until set; name_get also returns NULL and
 *                            name_set 0 when the platform has no slot left); dtor(v) runs when a
 *                            thread whose value is not NULL exits.  dtor: void (*)(void *). */
#ifndef ZARRBOLT_THREAD_H
#define ZARRBOLT_THREAD_H

#if defined(_WIN32)
#  ifndef WIN32_LEAN_AND_MEAN
#    define WIN32_LEAN_AND_MEAN
#  endif
#  include <windows.h>

#  define ZB_ONCE(name, fn)                                                                 \
    static INIT_ONCE name##_once_state = INIT_ONCE_STATIC_INIT;                             \
    static BOOL CALLBACK name##_once_cb(PINIT_ONCE o, PVOID p, PVOID *c) {                  \
      (void)o;                                                                              \
      (void)p;                                                                              \
      (void)c;                                                                              \
      fn();                                                                                 \
      return TRUE;                                                                          \
    }                                                                                       \
    static void name(void) { InitOnceExecuteOnce(&name##_once_state, name##_once_cb, NULL, NULL); }

#  define ZB_TLS_SLOT(name, dtor)                                                           \
    static DWORD name##_key = FLS_OUT_OF_INDEXES;                                           \
    static VOID WINAPI name##_dtor(PVOID p) { dtor(p); }                                    \
    static void name##_make(void) { name##_key = FlsAlloc(name##_dtor); }                   \
    ZB_ONCE(name##_init, name##_make)                                                       \
    static void *name##_get(void) {                                                         \
      name##_init();                                                                        \
      return name##_key == FLS_OUT_OF_INDEXES ? NULL : FlsGetValue(name##_key);             \
    }                                                                                       \
    static int name##_set(void *v) {                                                        \
      name##_init();                                                                        \
      return name##_key != FLS_OUT_OF_INDEXES && FlsSetValue(name##_key, v);                \
    }

#else
#  include <pthread.h>

#  define ZB_ONCE(name, fn)                                                                 \
    static pthread_once_t name##_once_state = PTHREAD_ONCE_INIT;                            \
    static void name(void) { pthread_once(&name##_once_state, fn); }

#  define ZB_TLS_SLOT(name, dtor)                                                           \
    static pthread_key_t name##_key;                                                        \
    static int name##_ok;                                                                   \
    static void name##_make(void) { name##_ok = pthread_key_create(&name##_key, dtor) == 0; } \
    ZB_ONCE(name##_init, name##_make)                                                       \
    static void *name##_get(void) {                                                         \
      name##_init();                                                                        \
      return name##_ok ? pthread_getspecific(name##_key) : NULL;                            \
    }                                                                                       \
    static int name##_set(void *v) {                                                        \
      name##_init();                                                                        \
      return name##_ok && pthread_setspecific(name##_key, v) == 0;                          \
    }
#endif

#endif /* ZARRBOLT_THREAD_H */
