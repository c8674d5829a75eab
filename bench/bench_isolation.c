/* Cost of importing in a child process (sks_load_assimp_isolated) against
 * in-process (sks_load_assimp) on the assimp test models: median of 5
 * imports each, ms, and the overhead (isolated - in-process). Prints the
 * table; never asserts (speed is measured, not tested). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "skinsolve/io.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double median_ms(const char *path, int isolated) {
  double t[5];
  for (int i = 0; i < 5; ++i) {
    sks_model m;
    sks_error err;
    sks_load_options o = {.assimp_in_process = !isolated};
    double t0 = now_ms();
    sks_result r = sks_load(path, &o, &m, &err);
    t[i] = now_ms() - t0;
    if (r != SKS_OK) return -1;
    sks_model_free(&m);
  }
  qsort(t, 5, sizeof t[0], cmp_d);
  return t[2];
}

int main(void) {
  static const char *files[] = {"X/test_cube_text.x", "X/anim_test.x", "X/Testwuson.X", "X/BCN_Epileptic.X",
                                "Collada/duck.dae", "Collada/astroBoy_walk.dae", "FBX/box.fbx",
                                "FBX/huesitos.fbx", "MD5/Bob.md5mesh", "BVH/01_01.bvh"};
  printf("%-28s %12s %12s %12s %8s\n", "file", "in-proc ms", "isolated ms", "overhead ms", "ratio");
  for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", SKS_ASSIMP_MODELS, files[i]);
    if (access(path, R_OK) != 0) continue;
    double a = median_ms(path, 0), b = median_ms(path, 1);
    if (a < 0 || b < 0) { printf("%-28s (does not load)\n", files[i]); continue; }
    printf("%-28s %12.2f %12.2f %12.2f %8.2f\n", files[i], a, b, b - a, a > 0 ? b / a : 0.0);
  }
  return 0;
}
