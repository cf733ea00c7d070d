/* Status codes returned by every zarrbolt C kernel.  Zero is success; the Cython layer maps
 * each negative code to one zarrbolt.errors exception class (src/zarrbolt/_ext/status.pxi). */
#ifndef ZARRBOLT_STATUS_H
#define ZARRBOLT_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum zb_status {
  ZB_OK = 0,
  ZB_EINVAL = -1,       /* invalid argument (caller error: shapes, strides, parameters) */
  ZB_ECORRUPT = -2,     /* encoded data is malformed or inconsistent */
  ZB_ECHECKSUM = -3,    /* a checksum did not match */
  ZB_ETOOSMALL = -4,    /* an output buffer is too small / input truncated */
  ZB_ENOMEM = -5,       /* allocation failed */
  ZB_EUNSUPPORTED = -6, /* valid but not supported by this build */
  ZB_ERANGE = -7,       /* a value is out of range of the target type */
  ZB_EIO = -8           /* an operating-system I/O error (the OS error code is reported separately) */
} zb_status;

/* A static English description of a status code. */
const char *zb_status_message(int status);

#ifdef __cplusplus
}
#endif
#endif
