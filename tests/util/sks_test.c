#define _POSIX_C_SOURCE 200809L
#include "sks_test.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sks_test_passed = 0, sks_test_failed = 0;

static const char *find_file(const char *base, const char *rel, const char *what) {
  static char ring[8][4096];
  static int next = 0;
  char *buf = ring[next++ & 7];
  snprintf(buf, 4096, "%s/%s", base, rel);
  if (access(buf, R_OK) != 0) {
    fprintf(stderr, "SKIP part: %s not found at %s (%s)\n", rel, buf, what);
    return NULL;
  }
  return buf;
}

const char *sks_test_assimp_model(const char *rel) {
  const char *base = getenv("SKS_ASSIMP_MODELS");
  return find_file(base ? base : SKS_ASSIMP_MODELS, rel,
                   "install Debian's assimp-testmodels");
}

const char *sks_test_shared_data(const char *rel) {
  const char *base = getenv("SKS_SHARED_DATA");
  return find_file(base ? base : SKS_SHARED_DATA, rel, "../shared/data beside the repo");
}

const char *sks_test_tmpdir(void) {
  static char dir[4096];
  if (!dir[0]) {
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/sks_test_XXXXXX", t ? t : "/tmp");
    if (!mkdtemp(dir)) { perror("mkdtemp"); exit(2); }
  }
  return dir;
}

int sks_test_finish(void) {
  printf("%d passed, %d failed\n", sks_test_passed, sks_test_failed);
  return sks_test_failed ? 1 : 0;
}

void sks_test_skip(const char *why) {
  printf("SKIPPED: %s\n", why);
  exit(77);
}

char *sks_test_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (!d) abort();
  memcpy(d, s, n);
  return d;
}
