/* See byte_buf.h. */
#include "io/byte_buf.h"

#include <stdlib.h>
#include <string.h>

void sks_byte_buf_put(sks_byte_buf *b, const void *data, size_t n, size_t first_cap) {
  if (b->fail || n == 0) return;
  if (n > SIZE_MAX - b->n) { b->fail = 1; return; }
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : (first_cap ? first_cap : 64);
    while (cap < b->n + n) {
      if (cap > SIZE_MAX / 2) { b->fail = 1; return; }
      cap *= 2;
    }
    uint8_t *q = realloc(b->p, cap);
    if (!q) { b->fail = 1; return; }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, data, n);
  b->n += n;
}
