/* Seed maker for fuzz_wire and fuzz_stream (not a fuzz target): loads each
 * file named on the command line in-process and writes its wire bytes to
 * WIREDIR/N.wire and the whole pipe stream the isolated child would send
 * (an 'F' record per file the import opened, then the 'M' record), behind
 * fuzz_stream's two ending bytes, to STREAMDIR/N.stream; plus a few
 * hand-made streams (an error, out of memory, a crash after a file).
 * Usage: wire_seeds WIREDIR STREAMDIR FILE... (built and run by scripts/fuzz.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "skinsolve/io.h"
#include "io/model_wire.h"

typedef struct files {
  char rec[65536];
  size_t n;
} files;

static void add(files *f, const char *path, size_t len) {
  uint32_t l = (uint32_t)len;
  if (sizeof f->rec - f->n < 5 + len) return;
  f->rec[f->n] = 'F';
  memcpy(f->rec + f->n + 1, &l, 4);
  memcpy(f->rec + f->n + 5, path, len);
  f->n += 5 + len;
}
static void heard(void *user, const char *path) { add(user, path, strlen(path)); }

static int put(const char *dir, const char *name, const void *a, size_t an, const void *b, size_t bn) {
  char p[4096];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "wb");
  if (!f) return 0;
  fwrite(a, 1, an, f);
  if (bn) fwrite(b, 1, bn, f);
  return fclose(f) == 0;
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: wire_seeds WIREDIR STREAMDIR FILE...\n"); return 2; }
  int made = 0, streams = 0;
  static files fl;
  for (int i = 3; i < argc; ++i) {
    sks_model m;
    sks_error err;
    fl.n = 0;
    sks_load_options o = {.assimp_in_process = 1, .on_file_read = heard, .on_file_read_user = &fl};
    if (sks_load(argv[i], &o, &m, &err) != SKS_OK) continue;
    uint8_t *b = NULL;
    size_t n = 0;
    if (sks_model_wire_encode(&m, &b, &n, &err) == SKS_OK && n < 400000) {
      char name[64];
      snprintf(name, sizeof name, "%d.wire", i);
      made += put(argv[1], name, b, n, NULL, 0);
      if (n < 60000) { /* fuzz_stream's max_len is 65536 */
        static uint8_t s[2 + 65536 + 9];
        uint64_t wn = n;
        s[0] = s[1] = 0;
        if (fl.n + 9 + n <= 65536) {
          memcpy(s + 2, fl.rec, fl.n);
          s[2 + fl.n] = 'M';
          memcpy(s + 3 + fl.n, &wn, 8);
          snprintf(name, sizeof name, "%d.stream", i);
          streams += put(argv[2], name, s, 11 + fl.n, b, n);
        }
      }
    }
    free(b);
    sks_model_free(&m);
  }
  /* hand-made endings, each after two files (one of them sent twice) */
  static files hm;
  hm.n = 2; /* the two ending bytes: exited, code 0 */
  hm.rec[0] = hm.rec[1] = 0;
  add(&hm, "/m/a.mtl", 8);
  add(&hm, "/m/tex.png", 10);
  add(&hm, "/m/a.mtl", 8);
  const size_t at = hm.n;
  uint32_t code = 3, len = 16; /* SKS_ERR_PARSE */
  hm.rec[at] = 'E';
  memcpy(hm.rec + at + 1, &code, 4);
  memcpy(hm.rec + at + 5, &len, 4);
  memcpy(hm.rec + at + 9, "in.x: bad face 1", 16);
  streams += put(argv[2], "error.stream", hm.rec, at + 25, NULL, 0);
  hm.rec[at] = 'O';
  streams += put(argv[2], "oom.stream", hm.rec, at + 1, NULL, 0);
  hm.rec[0] = 8; /* died of signal 11 */
  hm.rec[1] = 11;
  streams += put(argv[2], "segv.stream", hm.rec, at, NULL, 0);
  hm.rec[0] = 1; /* timed out, the last record cut off */
  streams += put(argv[2], "timeout.stream", hm.rec, at - 3, NULL, 0);
  printf("%d wire seeds, %d stream seeds\n", made, streams);
  return 0;
}
