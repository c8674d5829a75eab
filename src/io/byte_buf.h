/* A growable byte buffer: what the wire encoder and the PNG sink append to.
 * Appending never overflows (a size past SIZE_MAX, or a capacity that
 * cannot double, sets fail) and, once failed, does nothing; the owner
 * frees p. Private to the library. */
#ifndef SKS_IO_BYTE_BUF_H
#define SKS_IO_BYTE_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct sks_byte_buf {
  uint8_t *p;
  size_t n, cap;
  int fail; /* out of memory or a size overflow: p holds what came before */
} sks_byte_buf;

/* Appends n bytes (first_cap: the capacity of the first allocation). */
void sks_byte_buf_put(sks_byte_buf *b, const void *data, size_t n, size_t first_cap);

#endif
