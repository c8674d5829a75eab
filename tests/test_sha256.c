/* SHA-256 against the FIPS 180-2 / NIST example vectors ("abc", the 448-bit
 * two-block message, one million 'a'), the empty string, block-boundary
 * lengths fed in odd pieces (must equal the one-shot hash), and the file
 * helper (same digest as the buffer; a folder is refused). */
#include <stdlib.h>
#include <string.h>
#include "common_sha256.h"
#include "sks_test.h"

static void check_hex(const char *msg, const char *want) {
  char hex[65];
  sks_sha256_buffer(msg, strlen(msg), hex);
  CHECK_MSG(strcmp(hex, want) == 0, "sha256(\"%.20s\") = %s, want %s", msg, hex, want);
}

int main(void) {
  check_hex("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  check_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  check_hex("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  /* FIPS 180-2 appendix B.3: one million 'a', fed in chunks of 1000 */
  {
    char chunk[1000];
    memset(chunk, 'a', sizeof chunk);
    sks_sha256 s;
    uint8_t d[32];
    char hex[65];
    sks_sha256_init(&s);
    for (int i = 0; i < 1000; ++i) sks_sha256_update(&s, chunk, sizeof chunk);
    sks_sha256_final(&s, d);
    sks_sha256_hex(d, hex);
    CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
  }
  /* lengths around the padding boundaries (55, 56, 63, 64, 65, 119, 120),
   * fed in pieces of 1, 3 and 7 bytes: must equal the one-shot digest */
  {
    unsigned char buf[130];
    for (size_t i = 0; i < sizeof buf; ++i) buf[i] = (unsigned char)(i * 37u + 11u);
    const size_t lens[] = {55, 56, 57, 63, 64, 65, 119, 120, 128, 130};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; ++li) {
      char one[65];
      sks_sha256_buffer(buf, lens[li], one);
      const size_t steps[] = {1, 3, 7};
      for (size_t si = 0; si < 3; ++si) {
        sks_sha256 s;
        uint8_t d[32];
        char hex[65];
        sks_sha256_init(&s);
        for (size_t o = 0; o < lens[li]; o += steps[si]) {
          size_t n = lens[li] - o < steps[si] ? lens[li] - o : steps[si];
          sks_sha256_update(&s, buf + o, n);
        }
        sks_sha256_final(&s, d);
        sks_sha256_hex(d, hex);
        CHECK_MSG(strcmp(hex, one) == 0, "length %zu in steps of %zu", lens[li], steps[si]);
      }
    }
    /* and 56 bytes of "abcdbcde..." is the two-block NIST vector above */
  }
  /* the file helper */
  {
    char path[512];
    snprintf(path, sizeof path, "%s/abc.txt", sks_test_tmpdir());
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) { fputs("abc", f); fclose(f); }
    char hex[65];
    uint64_t size = 0;
    sks_error err;
    CHECK_OK(sks_sha256_file(path, hex, &size, &err), &err);
    CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
    CHECK(size == 3);
    CHECK(sks_sha256_file(sks_test_tmpdir(), hex, &size, &err) != SKS_OK);
    CHECK(strstr(err.message, "not a regular file") != NULL);
    snprintf(path, sizeof path, "%s/absent", sks_test_tmpdir());
    CHECK(sks_sha256_file(path, hex, &size, &err) == SKS_ERR_IO);
  }
  return sks_test_finish();
}
