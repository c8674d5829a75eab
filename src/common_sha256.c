/* SHA-256 as specified in FIPS 180-4 section 6.2 (message schedule of 64
 * words, 64 rounds, big-endian words, padding with 0x80, zeros and the bit
 * length). Test vectors: tests/test_sha256.c. */
#define _POSIX_C_SOURCE 200809L
#include "common_sha256.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const uint32_t K[64] = {
  0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u,
  0xab1c5ed5u, 0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu,
  0x9bdc06a7u, 0xc19bf174u, 0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu,
  0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau, 0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u,
  0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u, 0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu,
  0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u, 0xa2bfe8a1u, 0xa81a664bu,
  0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u, 0x19a4c116u,
  0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
  0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u,
  0xc67178f2u};

static uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32u - n)); }

static void compress(uint32_t h[8], const uint8_t *p) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t)
    w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 | (uint32_t)p[4 * t + 2] << 8 |
           (uint32_t)p[4 * t + 3];
  for (int t = 16; t < 64; ++t) {
    uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int t = 0; t < 64; ++t) {
    uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
  }
  h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

void sks_sha256_init(sks_sha256 *s) {
  static const uint32_t h0[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                                 0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
  memcpy(s->h, h0, sizeof h0);
  s->length = 0;
  s->used = 0;
}

void sks_sha256_update(sks_sha256 *s, const void *data, size_t size) {
  const uint8_t *p = data;
  s->length += size;
  if (s->used) {
    size_t take = 64 - s->used < size ? 64 - s->used : size;
    memcpy(s->block + s->used, p, take);
    s->used += take; p += take; size -= take;
    if (s->used < 64) return;
    compress(s->h, s->block);
    s->used = 0;
  }
  for (; size >= 64; p += 64, size -= 64) compress(s->h, p);
  if (size) { memcpy(s->block, p, size); s->used = size; }
}

void sks_sha256_final(sks_sha256 *s, uint8_t digest[32]) {
  uint64_t bits = s->length * 8u;
  s->block[s->used++] = 0x80;
  if (s->used > 56) {
    memset(s->block + s->used, 0, 64 - s->used);
    compress(s->h, s->block);
    s->used = 0;
  }
  memset(s->block + s->used, 0, 56 - s->used);
  for (int i = 0; i < 8; ++i) s->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
  compress(s->h, s->block);
  for (int i = 0; i < 8; ++i) {
    digest[4 * i] = (uint8_t)(s->h[i] >> 24);
    digest[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
    digest[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
    digest[4 * i + 3] = (uint8_t)s->h[i];
  }
}

void sks_sha256_hex(const uint8_t digest[32], char hex[65]) {
  static const char d[] = "0123456789abcdef";
  for (int i = 0; i < 32; ++i) {
    hex[2 * i] = d[digest[i] >> 4];
    hex[2 * i + 1] = d[digest[i] & 15];
  }
  hex[64] = 0;
}

void sks_sha256_buffer(const void *data, size_t size, char hex[65]) {
  sks_sha256 s;
  uint8_t dg[32];
  sks_sha256_init(&s);
  sks_sha256_update(&s, data, size);
  sks_sha256_final(&s, dg);
  sks_sha256_hex(dg, hex);
}

sks_result sks_sha256_file(const char *path, char hex[65], uint64_t *size_out, sks_error *err) {
  int fd = open(path, O_RDONLY | O_NONBLOCK);
  if (fd < 0) return sks_error_set(err, SKS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return sks_error_set(err, SKS_ERR_IO, "%s: not a regular file", path);
  }
  sks_sha256 s;
  sks_sha256_init(&s);
  uint8_t buf[65536];
  uint64_t total = 0;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(fd);
      return sks_error_set(err, SKS_ERR_IO, "%s: read failed: %s", path, strerror(e));
    }
    if (n == 0) break;
    sks_sha256_update(&s, buf, (size_t)n);
    total += (uint64_t)n;
  }
  close(fd);
  uint8_t dg[32];
  sks_sha256_final(&s, dg);
  sks_sha256_hex(dg, hex);
  if (size_out) *size_out = total;
  return SKS_OK;
}
