#include "zarrbolt/status.h"

const char *zb_status_message(int status) {
  switch (status) {
    case ZB_OK: return "success";
    case ZB_EINVAL: return "invalid argument";
    case ZB_ECORRUPT: return "corrupt encoded data";
    case ZB_ECHECKSUM: return "checksum mismatch";
    case ZB_ETOOSMALL: return "buffer too small or input truncated";
    case ZB_ENOMEM: return "out of memory";
    case ZB_EUNSUPPORTED: return "unsupported";
    case ZB_ERANGE: return "value out of range of the target type";
    case ZB_EIO: return "I/O error";
    default: return "unknown error";
  }
}
