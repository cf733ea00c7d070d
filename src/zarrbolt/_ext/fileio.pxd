# C declarations of zarrbolt/fileio.h: whole-file batch reads, positioned reads and atomic
# writes.  Status codes are returned as int.
from libc.stdint cimport int64_t, intptr_t, uint8_t, uint64_t

cdef extern from "zarrbolt/fileio.h" nogil:
    enum:
        ZB_FILE_MISSING
        ZB_FILE_NOT_READ
        ZB_FILE_LINK
        ZB_FILE_CHANGED
        ZB_WRITE_CREATE
        ZB_WRITE_DATA
        ZB_WRITE_RENAME
    ctypedef struct zb_file_read:
        const char *path
        int64_t size
        size_t offset
        int nofollow
    ctypedef struct zb_file:
        intptr_t h
    int zb_read_files(zb_file_read *items, size_t n, uint8_t *buf, size_t cap, size_t *done, int *os_error)
    int zb_file_open(const char *path, zb_file *f, int64_t *size, int *os_error)
    int zb_file_open_ex(const char *path, int nofollow, zb_file *f, int64_t *size, int *os_error)
    int64_t zb_file_pread(zb_file f, uint8_t *dst, size_t n, uint64_t offset, int *os_error)
    void zb_file_close(zb_file f)
    int zb_write_file_atomic(const char *path, const char *tmp, const void *data, size_t n, int do_fsync,
                             int *os_error, int *stage)
