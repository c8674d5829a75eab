#include <stdarg.h>
#include <stdio.h>
#include "skinsolve/common.h"

sks_result sks_error_set(sks_error *err, sks_result code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    err->code = code;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return code;
}

const char *sks_result_string(sks_result r) {
  switch (r) {
    case SKS_OK: return "ok";
    case SKS_ERR_ARGUMENT: return "invalid argument";
    case SKS_ERR_IO: return "input/output error";
    case SKS_ERR_PARSE: return "malformed file";
    case SKS_ERR_UNSUPPORTED: return "unsupported feature";
    case SKS_ERR_INVALID: return "unusable data";
    case SKS_ERR_OUT_OF_MEMORY: return "out of memory";
    case SKS_ERR_NOT_FOUND: return "not found";
  }
  return "unknown error";
}
