/* Bake benchmarks (single thread): solve time per clip for 24 frames x up to
 * 5000 constraints on the Fox and on Testwuson, sweeps per frame, the Fox
 * Walk control time (to mean <= 0.001% D and worst <= 0.01% D), the seed's
 * BCD against the default solver, and the quality table for the Fox onto
 * every rig in fox_targets/ in both modes. Best of `reps` runs. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "skinsolve/skinsolve.h"

static int load(const char *path, sks_model *m) {
  sks_error err;
  if (sks_load(path, NULL, m, &err) != SKS_OK) {
    printf("skip: %s\n", err.message);
    return 0;
  }
  return 1;
}

/* Bakes and keeps, per clip, the run with the smallest solve time. */
static int bake_best(const sks_model *src, const sks_model *tgt, const sks_bake_options *opt,
                     int reps, sks_bake_result *best) {
  sks_error err;
  memset(best, 0, sizeof *best);
  for (int r = 0; r < reps; ++r) {
    sks_bake_result res;
    if (sks_bake(src, tgt, opt, &res, &err) != SKS_OK) {
      printf("bake failed: %s\n", err.message);
      sks_bake_result_free(best);
      return 0;
    }
    if (r == 0) { *best = res; continue; }
    for (size_t i = 0; i < res.clip_count; ++i)
      if (res.clips[i].solve_ms < best->clips[i].solve_ms) best->clips[i].solve_ms = res.clips[i].solve_ms;
    sks_bake_result_free(&res);
  }
  return 1;
}

static void table(const char *title, const sks_bake_result *r) {
  printf("\n%s\n  %zu target vertices, %zu constraints, %zu joints, D = %.5g\n", title,
         r->target_vertex_count, r->constraint_count, r->target_joint_count, r->diagonal);
  printf("  %-26s %-13s %6s %10s %14s %16s %9s %9s %7s\n", "clip", "mode", "frames", "quality %",
         "mean error %D", "worst vertex %D", "solve ms", "ms/frame", "sweeps");
  for (size_t i = 0; i < r->clip_count; ++i) {
    const sks_baked_clip *c = &r->clips[i];
    printf("  %-26s %-13s %6zu %10.4f %14.7f %16.7f %9.2f %9.3f %7.2f\n", c->name,
           c->mode == SKS_SOLVE_ROTATION_ONLY ? "rotation-only" : "free", c->frame_count,
           c->quality * 100, c->mean_error_pct, c->worst_error_pct, c->solve_ms,
           c->solve_ms / (double)c->frame_count, c->sweeps_per_frame);
  }
}

/* Control run with every clip resampled to 24 frames. */
static void control24(const char *path, const char *label, int reps) {
  sks_model m;
  if (!load(path, &m)) return;
  double *lm_ms = calloc(m.clip_count ? m.clip_count : 1, sizeof(double));
  for (int solver = 0; solver < 2; ++solver)
    for (size_t c = 0; c < m.clip_count; ++c) {
      sks_bake_options opt;
      memset(&opt, 0, sizeof opt);
      const char *names[1] = {m.clips[c].name};
      opt.clip_names = names;
      opt.clip_name_count = 1;
      opt.max_constraints = 5000;
      opt.solver = solver ? SKS_SOLVER_BCD : SKS_SOLVER_DEFAULT;
      opt.fps = m.clips[c].duration > 0 ? 23.0f / m.clips[c].duration : 24.0f;
      sks_bake_result r;
      if (!bake_best(&m, &m, &opt, reps, &r)) continue;
      char title[256];
      snprintf(title, sizeof title, "control %s, clip '%s', 24 frames, solver %s", label,
               m.clips[c].name, solver ? "bcd" : "default (Levenberg-Marquardt)");
      table(title, &r);
      if (lm_ms && r.clip_count == 1) {
        if (!solver) lm_ms[c] = r.clips[0].solve_ms;
        else if (lm_ms[c] > 0)
          printf("  -> default (LM) / bcd solve time, same run: %.2f ms / %.2f ms = %.3f\n", lm_ms[c],
                 r.clips[0].solve_ms, lm_ms[c] / r.clips[0].solve_ms);
      }
      sks_bake_result_free(&r);
    }
  free(lm_ms);
  sks_model_free(&m);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 3;
  if (reps < 1) reps = 1;
  char fox[1024], tw[1024], dir[1024];
  snprintf(fox, sizeof fox, "%s/Fox/Fox.glb", SKS_SHARED_DATA);
  snprintf(tw, sizeof tw, "%s/X/Testwuson.X", SKS_ASSIMP_MODELS);
  snprintf(dir, sizeof dir, "%s/fox_targets", SKS_SHARED_DATA);
  printf("bench_bake: best of %d runs, single thread\n", reps);

  /* 1. Fox Walk control at its own key times (18 frames): the Dem Bones bar */
  sks_model m;
  if (load(fox, &m)) {
    for (int solver = 0; solver < 2; ++solver) {
      sks_bake_options opt;
      memset(&opt, 0, sizeof opt);
      const char *names[1] = {"Walk"};
      opt.clip_names = names;
      opt.clip_name_count = 1;
      opt.solver = solver ? SKS_SOLVER_BCD : SKS_SOLVER_DEFAULT;
      sks_bake_result r;
      if (bake_best(&m, &m, &opt, reps, &r)) {
        const sks_baked_clip *c = &r.clips[0];
        table(solver ? "Fox Walk control (key times), solver bcd" : "Fox Walk control (key times), default solver", &r);
        printf("  -> %s: %.2f ms for %zu frames; mean %.2e %%D (<= 0.001: %s), worst %.2e %%D (<= 0.01: %s)\n",
               solver ? "bcd" : "default", c->solve_ms, c->frame_count, c->mean_error_pct,
               c->mean_error_pct <= 0.001 ? "yes" : "NO", c->worst_error_pct,
               c->worst_error_pct <= 0.01 ? "yes" : "NO");
        sks_bake_result_free(&r);
      }
    }
    sks_model_free(&m);
  }
  /* 2. 24 frames x <= 5000 constraints, Fox and Testwuson, both solvers */
  control24(fox, "Fox.glb", reps);
  control24(tw, "Testwuson.X", reps);
  /* 3. Fox onto every target in fox_targets/, both modes */
  if (load(fox, &m)) {
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
      size_t n = strlen(e->d_name);
      if (n < 5 || strcmp(e->d_name + n - 4, ".glb") != 0) continue;
      char path[2048];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      sks_model t;
      if (!load(path, &t)) continue;
      sks_bake_options opt;
      memset(&opt, 0, sizeof opt);
      opt.mode = SKS_SOLVE_BOTH;
      sks_bake_result r;
      if (bake_best(&m, &t, &opt, 1, &r)) {
        char title[2200];
        snprintf(title, sizeof title, "Fox.glb -> %s (both modes, key times)", e->d_name);
        table(title, &r);
        sks_bake_result_free(&r);
      }
      sks_model_free(&t);
    }
    if (d) closedir(d);
    sks_model_free(&m);
  }
  return 0;
}
