/* SHA-256 (FIPS 180-4), written for skinsolve: the batch result records name
 * their input files by content hash. Internal header (not installed). */
#ifndef SKS_COMMON_SHA256_H
#define SKS_COMMON_SHA256_H

#include <stddef.h>
#include <stdint.h>
#include "skinsolve/common.h"

typedef struct sks_sha256 {
  uint32_t h[8];
  uint64_t length;        /* bytes hashed so far */
  uint8_t block[64];
  size_t used;            /* bytes in block */
} sks_sha256;

void sks_sha256_init(sks_sha256 *s);
void sks_sha256_update(sks_sha256 *s, const void *data, size_t size);
/* Writes the 32-byte digest; the state must be re-initialised to be reused. */
void sks_sha256_final(sks_sha256 *s, uint8_t digest[32]);
/* Lower-case hex of a digest: 64 characters + NUL. */
void sks_sha256_hex(const uint8_t digest[32], char hex[65]);
/* One-shot helpers. */
void sks_sha256_buffer(const void *data, size_t size, char hex[65]);
/* Hashes a regular file (a FIFO or device is refused, never waited on);
 * *size_out (optional) gets its byte count. */
sks_result sks_sha256_file(const char *path, char hex[65], uint64_t *size_out, sks_error *err);

#endif
