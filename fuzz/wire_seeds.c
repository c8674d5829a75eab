/* Seed maker for fuzz_wire (not a fuzz target): loads each file named on
 * the command line in-process and writes its wire bytes to OUTDIR/N.wire.
 * Usage: wire_seeds OUTDIR FILE... (built and run by scripts/fuzz.sh). */
#include <stdio.h>
#include <stdlib.h>
#include "skinsolve/io.h"
#include "io/model_wire.h"

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: wire_seeds OUTDIR FILE...\n"); return 2; }
  int made = 0;
  for (int i = 2; i < argc; ++i) {
    sks_model m;
    sks_error err;
    sks_load_options o = {.assimp_in_process = 1};
    if (sks_load(argv[i], &o, &m, &err) != SKS_OK) continue;
    uint8_t *b = NULL;
    size_t n = 0;
    if (sks_model_wire_encode(&m, &b, &n, &err) == SKS_OK && n < 400000) {
      char p[4096];
      snprintf(p, sizeof p, "%s/%d.wire", argv[1], i);
      FILE *f = fopen(p, "wb");
      if (f) { fwrite(b, 1, n, f); fclose(f); ++made; }
    }
    free(b);
    sks_model_free(&m);
  }
  printf("%d wire seeds\n", made);
  return 0;
}
