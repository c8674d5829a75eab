/* bench_refit: skinsolve refit, Fox onto Blender's automatic weights, each
 * clip held out in turn (tests/test_refit runs only Walk), and a ~28k-vertex
 * target (the autoweights rig with every triangle split in 4, twice) for time
 * and memory. Prints the issue-10 table; asserts nothing (speed is measured
 * here, never in tests). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "skinsolve/skinsolve.h"
#include "bench_subdivide.h"

static void run(const sks_model *src, const sks_model *tgt, const char *label, const char *hold) {
  sks_refit_options opt;
  memset(&opt, 0, sizeof opt);
  const char *h[1] = {hold};
  opt.holdout_names = h;
  opt.holdout_name_count = hold ? 1 : 0;
  sks_refit_result r;
  sks_error err;
  if (sks_refit(src, tgt, &opt, &r, &err) != SKS_OK) { fprintf(stderr, "%s\n", err.message); return; }
  for (size_t i = 0; i < r.clip_count; ++i) {
    const sks_refit_clip *c = &r.clips[i];
    printf("| %s | %s | %s | %.2f -> %.2f | %.4f -> %.4f | %.3f -> %.3f | %.1f | %.2f -> %.2f |\n", label,
           hold ? hold : "-", c->name, c->quality_before * 100, c->quality_after * 100, c->mean_before_pct,
           c->mean_after_pct, c->worst_before_pct, c->worst_after_pct, r.seconds,
           r.mean_influences_before, r.mean_influences_after);
  }
  sks_refit_result_free(&r);
}

int main(void) {
  const char *fox = SKS_SHARED_DATA "/Fox/Fox.glb", *tp = SKS_SHARED_DATA "/fox_targets/fox_rig_autoweights.glb";
  sks_model src, tgt;
  sks_error err;
  if (sks_load(fox, NULL, &src, &err) != SKS_OK || sks_load(tp, NULL, &tgt, &err) != SKS_OK) {
    fprintf(stderr, "bench_refit: %s (needs ../shared/data)\n", err.message);
    return 77;
  }
  printf("| target | held out | clip | quality %% before -> after | mean %%D | worst %%D | s | influences |\n");
  printf("|---|---|---|---|---|---|---|---|\n");
  const char *holds[3] = {"Walk", "Run", "Survey"};
  for (int i = 0; i < 3; ++i) run(&src, &tgt, "fox_rig_autoweights", holds[i]);
  sks_model big;
  if (sks_model_clone(&tgt, &big, &err) == SKS_OK) {
    subdivide(&big);
    subdivide(&big);
    printf("subdivided target: %zu vertices\n", sks_model_vertex_count(&big));
    run(&src, &big, "autoweights x16", "Walk");
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak resident memory: %.1f MB\n", (double)ru.ru_maxrss / 1024.0);
    sks_model_free(&big);
  }
  sks_model_free(&src);
  sks_model_free(&tgt);
  return 0;
}
