/* Bake benchmarks. First the parallel bake (sks_bake_options.threads): the
 * whole bake's wall ms serial and on every online CPU (and the serial frame
 * loop's), per clip the chunks it was cut into, solve CPU ms and iterations
 * per frame, and the speed-up measured in the
 * same run (median of `reps` interleaved rounds) for the Fox Walk control,
 * the Fox onto fox_rig_autoweights, the Testwuson control and a ~28k-vertex
 * subdivided Fox control at 120 fps. Then, single thread: solve time per clip
 * for 24 frames x up to 5000 constraints on the Fox and on Testwuson, sweeps
 * per frame, the Fox Walk control time (to mean <= 0.001% D and worst <=
 * 0.01% D), the seed's BCD against the default solver, and the quality table
 * for the Fox onto every rig in fox_targets/ in both modes. Best of `reps`.
 * Between them: rotation-only against free mode per clip (solve ms ratio,
 * iterations per frame) on the Fox onto fox_rig_autoweights, the Fox, godot,
 * RobotExpressive and CesiumMan controls (SKS_BENCH_BAKE=modes: that section only). SKS_BENCH_BAKE=big:
 * only the big-rig bake (big_bench). */
#define _DEFAULT_SOURCE /* getloadavg */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "skinsolve/skinsolve.h"
#include "bench_subdivide.h"
#include "solve/solve_internal.h"

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
      opt.threads = 1;
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

/* ---- the parallel frame loop ---------------------------------------------- */

enum { PAR_MAX_CLIPS = 16, PAR_MAX_REPS = 31 };

static double wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* The serial frame loop runs from its first progress call (frame 0 of the
 * first clip, on the calling thread, as the loop starts) to the last
 * clip_done. On several threads the callbacks of a clip solved beside
 * others come when it is done (in clip order), so there only the whole
 * bake's wall time is measured. */
typedef struct loop_clock {
  double start, end;
} loop_clock;

static void on_progress(void *user, const char *clip, size_t frame, size_t count) {
  loop_clock *c = user;
  (void)clip; (void)frame; (void)count;
  if (c->start == 0) c->start = wall_ms();
}

static void on_clip_done(void *user, const sks_baked_clip *clip) {
  loop_clock *c = user;
  (void)clip;
  c->end = wall_ms();
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void parallel_case(const char *label, const sks_model *src, const sks_model *tgt, const char *clip, float fps,
                          int reps) {
  unsigned cpus = sks_cpu_count(), nthr = cpus > 1 ? cpus : 2;
  if (reps > PAR_MAX_REPS) reps = PAR_MAX_REPS;
  double cpu[3][PAR_MAX_CLIPS][PAR_MAX_REPS], total[3][PAR_MAX_REPS], loop1[PAR_MAX_REPS];
  double sweeps[3][PAR_MAX_CLIPS];
  size_t frames[PAR_MAX_CLIPS], chunks[3][PAR_MAX_CLIPS], resolved[PAR_MAX_CLIPS] = {0}, nclips = 0, V = 0;
  char names[PAR_MAX_CLIPS][64];
  for (int r = 0; r < reps; ++r)
    for (int k = 0; k < 3; ++k) { /* interleaved: serial, parallel, parallel as before (frame chunks only), ... */
      sks_bake_options opt;
      memset(&opt, 0, sizeof opt);
      const char *one[1] = {clip};
      opt.clip_names = clip ? one : NULL;
      opt.clip_name_count = clip ? 1 : 0;
      opt.fps = fps;
      opt.threads = k ? nthr : 1;
      loop_clock lc;
      memset(&lc, 0, sizeof lc);
      opt.progress = on_progress;
      opt.progress_user = &lc;
      opt.clip_done = on_clip_done;
      opt.clip_done_user = &lc;
      sks_bake_result res;
      sks_error err;
      double t0 = wall_ms();
      sks_bake_schedule sc = k == 2 ? SKS_BAKE_SCHEDULE_CHUNKS : SKS_BAKE_SCHEDULE_AUTO;
      if (sks_bake_scheduled(src, tgt, &opt, sc, &res, &err) != SKS_OK) { printf("%s: bake failed: %s\n", label, err.message); return; }
      total[k][r] = wall_ms() - t0;
      if (!k) loop1[r] = lc.end - lc.start;
      nclips = res.clip_count < PAR_MAX_CLIPS ? res.clip_count : PAR_MAX_CLIPS;
      V = res.measured_vertex_count;
      for (size_t i = 0; i < nclips; ++i) {
        cpu[k][i][r] = res.clips[i].solve_ms;
        sweeps[k][i] = res.clips[i].sweeps_per_frame;
        frames[i] = res.clips[i].frame_count;
        chunks[k][i] = res.clips[i].chunk_count;
        if (k == 1 && res.clips[i].chunks_resolved > resolved[i]) resolved[i] = res.clips[i].chunks_resolved;
        snprintf(names[i], sizeof names[i], "%s", res.clips[i].name);
      }
      sks_bake_result_free(&res);
    }
  double load[1] = {0};
  if (getloadavg(load, 1) < 1) load[0] = -1;
  printf("\n%s: %zu vertices; median of %d interleaved rounds, 1 vs %u threads (%u CPU(s) online, load average "
         "%.1f)\n", label, V, reps, nthr, cpus, load[0]);
  printf("  %-24s %6s %8s %9s %12s %12s %11s %11s   (chunks only: chunks, CPU ms)\n", "clip", "frames", "chunks N",
         "resolved", "solve CPU 1", "solve CPU N", "iter/fr 1", "iter/fr N");
  for (size_t i = 0; i < nclips; ++i) /* resolved: the most chunks solved again from the one before (any round) */
    printf("  %-24s %6zu %8zu %9zu %12.1f %12.1f %11.2f %11.2f   (%zu, %.1f)\n", names[i], frames[i], chunks[1][i],
           resolved[i], median(cpu[0][i], reps), median(cpu[1][i], reps), sweeps[0][i], sweeps[1][i], chunks[2][i],
           median(cpu[2][i], reps));
  double ta = median(total[0], reps), tb = median(total[1], reps), tc = median(total[2], reps), la = median(loop1, reps);
  printf("  whole bake wall ms (setup included): 1 thread %.1f (frame loop %.1f); %u threads %.1f = %.2fx; "
         "%u threads with frame chunks only (before) %.1f = %.2fx\n",
         ta, la, nthr, tb, ta / tb, nthr, tc, ta / tc);
}

static void parallel_bench(const char *fox, const char *tw, const char *dir, int reps) {
  printf("parallel frame loop (sks_bake_options.threads); bench_bake %d\n", reps);
  sks_model m, t;
  if (load(fox, &m)) {
    sks_error err;
    parallel_case("Fox Walk control (key times)", &m, &m, "Walk", 0, reps);
    char tp[1200];
    snprintf(tp, sizeof tp, "%s/fox_rig_autoweights.glb", dir);
    if (load(tp, &t)) {
      parallel_case("Fox -> fox_rig_autoweights (key times)", &m, &t, NULL, 0, reps);
      sks_model_free(&t);
    }
    sks_model big;
    if (sks_model_clone(&m, &big, &err) == SKS_OK) {
      subdivide(&big);
      subdivide(&big);
      parallel_case("Fox x16 subdivided control (120 fps)", &big, &big, NULL, 120, reps);
      sks_model_free(&big);
    }
    sks_model_free(&m);
  }
  if (load(tw, &m)) {
    parallel_case("Testwuson.X control (key times)", &m, &m, NULL, 0, reps);
    sks_model_free(&m);
  }
}

/* The big-rig bake of issue 9 (SKS_BENCH_BAKE=big): a subdivided copy of a
 * shared rig (SKS_BENCH_BIG_MODEL, default CesiumMan; SKS_BENCH_BIG_SUBDIV
 * times, default 1: 56,064 vertices) baked onto itself at SKS_BENCH_BIG_FPS
 * (default 750: 1,501 frames), no report, on 1 and on 2 threads: whole sks_bake wall
 * ms (median of reps interleaved rounds), its setup (to the first progress
 * call: surfaces, alignment, correspondence, transfer, problem), the frame
 * loops, the solve's thread CPU ms and the whole bake's CPU ms (every
 * thread: what a loaded machine inflates least). SKS_BENCH_BIG_PRECISE=1: the double
 * measurement path (sks_bake_double_metrics, the reference). SKS_BENCH_BIG_OUT=path also writes
 * the subdivided model (for `skinsolve bake` timed with its load and write). */
typedef struct big_clock {
  double t0, first;
} big_clock;

static void big_progress(void *user, const char *clip, size_t frame, size_t count) {
  big_clock *b = user;
  (void)clip; (void)frame; (void)count;
  if (b->first == 0) b->first = wall_ms() - b->t0;
}

static double cpu_ms(void) { /* the process's CPU time, every thread */
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void big_bench(int reps) {
  const char *path = getenv("SKS_BENCH_BIG_MODEL");
  char cesium[1024];
  snprintf(cesium, sizeof cesium, "%s/CesiumMan/CesiumMan_weights_unnormalised.gltf", SKS_SHARED_DATA);
  if (!path) path = cesium;
  const char *sd = getenv("SKS_BENCH_BIG_SUBDIV"), *fp = getenv("SKS_BENCH_BIG_FPS");
  int subdiv = sd ? atoi(sd) : 1;
  float fps = fp ? (float)atof(fp) : 750;
  int precise = getenv("SKS_BENCH_BIG_PRECISE") ? atoi(getenv("SKS_BENCH_BIG_PRECISE")) : 0;
  sks_model m;
  if (!load(path, &m)) return;
  for (int k = 0; k < subdiv; ++k) subdivide(&m);
  const char *outp = getenv("SKS_BENCH_BIG_OUT");
  if (outp) {
    sks_error err;
    if (sks_write_glb(outp, &m, NULL, &err) != SKS_OK) printf("write failed: %s\n", err.message);
  }
  if (reps > PAR_MAX_REPS) reps = PAR_MAX_REPS;
  double tot[2][PAR_MAX_REPS], setup[2][PAR_MAX_REPS], loop[2][PAR_MAX_REPS], solve[2][PAR_MAX_REPS];
  double cpu[2][PAR_MAX_REPS];
  size_t V = 0, frames = 0;
  double mean = 0, worst = 0, it = 0;
  for (int r = 0; r < reps; ++r)
    for (int k = 0; k < 2; ++k) {
      sks_bake_options opt;
      memset(&opt, 0, sizeof opt);
      opt.fps = fps;
      opt.threads = k ? 2 : 1;
      double c0 = cpu_ms();
      big_clock bc = {wall_ms(), 0};
      opt.progress = big_progress;
      opt.progress_user = &bc;
      sks_bake_result res;
      sks_error err;
      if ((precise ? sks_bake_double_metrics : sks_bake)(&m, &m, &opt, &res, &err) != SKS_OK) { printf("big: bake failed: %s\n", err.message); goto done; }
      tot[k][r] = wall_ms() - bc.t0;
      cpu[k][r] = cpu_ms() - c0;
      setup[k][r] = bc.first;
      loop[k][r] = tot[k][r] - bc.first;
      solve[k][r] = 0;
      V = res.measured_vertex_count;
      frames = 0;
      mean = worst = it = 0;
      for (size_t i = 0; i < res.clip_count; ++i) {
        const sks_baked_clip *c = &res.clips[i];
        solve[k][r] += c->solve_ms;
        frames += c->frame_count;
        it += c->sweeps_per_frame * (double)c->frame_count;
        if (c->mean_error_pct > mean) mean = c->mean_error_pct;
        if (c->worst_error_pct > worst) worst = c->worst_error_pct;
      }
      sks_bake_result_free(&res);
    }
  {
    double load[1] = {0};
    if (getloadavg(load, 1) < 1) load[0] = -1;
    printf("\nbig bake: %s subdivided %dx, control, %zu vertices, %zu frames (fps %g), no report, %s "
           "metrics; median of %d interleaved rounds (load average %.1f)\n", path, subdiv, V, frames, fps,
           precise ? "double (sks_bake_double_metrics)" : "float", reps, load[0]);
    printf("  %-9s %10s %10s %12s %14s %14s\n", "threads", "total ms", "setup ms", "frames ms", "solve CPU ms",
           "bake CPU ms");
    for (int k = 0; k < 2; ++k)
      printf("  %-9d %10.1f %10.1f %12.1f %14.1f %14.1f\n", k ? 2 : 1, median(tot[k], reps), median(setup[k], reps),
             median(loop[k], reps), median(solve[k], reps), median(cpu[k], reps));
    printf("  speed-up 2 / 1 threads: %.2fx; it/frame %.2f; worst clip mean %.2e %%D, worst vertex %.2e %%D\n",
           median(tot[0], reps) / median(tot[1], reps), frames ? it / (double)frames : 0, mean, worst);
  }
done:
  sks_model_free(&m);
}

/* Rotation-only against free mode, single thread, same run: --mode both,
 * per clip the solve CPU ms of each mode (best of reps), their ratio and the
 * iterations per frame. */
static void modes_case(const char *label, const char *spath, const char *tpath, int reps) {
  sks_model s, t;
  if (!load(spath, &s)) return;
  if (!load(tpath, &t)) { sks_model_free(&s); return; }
  sks_bake_options opt;
  memset(&opt, 0, sizeof opt);
  opt.threads = 1;
  opt.mode = SKS_SOLVE_BOTH;
  sks_bake_result r;
  if (bake_best(&s, &t, &opt, reps, &r)) {
    printf("\n%s: rotation-only vs free, solve ms (thread CPU time, best of %d), 1 thread\n", label, reps);
    printf("  %-32s %6s %9s %9s %7s %9s %9s\n", "clip", "frames", "free ms", "rot ms", "rot/free", "it/fr free",
           "it/fr rot");
    double sf = 0, sr = 0, worst = 0;
    for (size_t i = 0; i + 1 < r.clip_count; i += 2) {
      const sks_baked_clip *f = &r.clips[i], *o = &r.clips[i + 1];
      if (f->mode != SKS_SOLVE_FREE || o->mode != SKS_SOLVE_ROTATION_ONLY) continue;
      double q = f->solve_ms > 0 ? o->solve_ms / f->solve_ms : 0;
      if (f->frame_count > 1 && q > worst) worst = q;
      sf += f->solve_ms;
      sr += o->solve_ms;
      printf("  %-32s %6zu %9.2f %9.2f %6.2fx %10.2f %9.2f\n", f->name, f->frame_count, f->solve_ms, o->solve_ms, q,
             f->sweeps_per_frame, o->sweeps_per_frame);
    }
    printf("  %-32s %6s %9.2f %9.2f %6.2fx   (worst clip of more than one frame: %.2fx)\n", "all clips", "", sf, sr,
           sf > 0 ? sr / sf : 0, worst);
    sks_bake_result_free(&r);
  }
  sks_model_free(&s);
  sks_model_free(&t);
}

static void modes_bench(const char *fox, const char *dir, int reps) {
  char p[2200];
  snprintf(p, sizeof p, "%s/fox_rig_autoweights.glb", dir);
  modes_case("Fox -> fox_rig_autoweights", fox, p, reps);
  modes_case("Fox control", fox, fox, reps);
  static const char *const humans[] = {"godot/godot_player.glb", "godot/godot_mannequiny.glb",
                                       "RobotExpressive/RobotExpressive.glb",
                                       "CesiumMan/CesiumMan_weights_unnormalised.gltf"};
  for (size_t i = 0; i < sizeof humans / sizeof humans[0]; ++i) {
    snprintf(p, sizeof p, "%s/%s", SKS_SHARED_DATA, humans[i]);
    char label[256];
    snprintf(label, sizeof label, "%s control", humans[i]);
    modes_case(label, p, p, reps);
  }
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 3;
  if (reps < 1) reps = 1;
  char fox[1024], tw[1024], dir[1024];
  snprintf(fox, sizeof fox, "%s/Fox/Fox.glb", SKS_SHARED_DATA);
  snprintf(tw, sizeof tw, "%s/X/Testwuson.X", SKS_ASSIMP_MODELS);
  snprintf(dir, sizeof dir, "%s/fox_targets", SKS_SHARED_DATA);
  const char *only = getenv("SKS_BENCH_BAKE"); /* "parallel" / "modes": that section only */
  if (only && strcmp(only, "big") == 0) { big_bench(reps); return 0; }
  if (!only || strcmp(only, "modes") != 0) parallel_bench(fox, tw, dir, reps < 5 ? 5 : reps);
  if (only && strcmp(only, "parallel") == 0) return 0;
  modes_bench(fox, dir, reps);
  if (only && strcmp(only, "modes") == 0) return 0;
  printf("\nbench_bake: best of %d runs, single thread\n", reps);

  /* 1. Fox Walk control at its own key times (18 frames): the Dem Bones bar */
  sks_model m;
  if (load(fox, &m)) {
    for (int solver = 0; solver < 2; ++solver) {
      sks_bake_options opt;
      memset(&opt, 0, sizeof opt);
      opt.threads = 1;
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
      opt.threads = 1;
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
