/* The bake on several threads (sks_bake_options.threads): the frames of a
 * clip split into contiguous chunks, each solved from 12 lead-in frames before
 * its first, started as the serial loop starts a clip. What must hold,
 * against the serial bake (threads = 1):
 *  - per-frame mean and worst errors, and the clip's mean / worst, agree to
 *    1e-6 % D; quality to 1e-8;
 *  - the written keys, played (the solved surface of keep_surfaces: float
 *    keys, float FK, weights as played), agree to SURFACE_TOL_PCT % D per
 *    vertex (see below);
 *  - two runs with the same thread count are bit for bit identical;
 *  - the clip really was cut into min(threads, frames) chunks (chunk_count),
 *    and how many were solved again from the chunk before (a seam whose
 *    lead-in did not arrive at the chunk before's end state) is printed.
 * Fox Walk control, Fox onto fox_rig_autoweights, X/Testwuson.X control
 * (skipped when absent); the thread pool on its own first. Under sanitizers
 * (SKS_SANITIZED=1) frames are taken at 4 fps. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"

/* The played surface carries the keys' float rounding: one float ulp of a
 * rotation moves a vertex half a diagonal from its joint by ~3e-6 % D, and
 * the LM stops (solve_internal.h) of a frame with a residual end within
 * ~1e-4 D steps of the minimum, so two starts may stop some ulps apart
 * (measured: 5e-7 % D with an 8-frame lead-in, 2e-3 % D without). */
#define SURFACE_TOL_PCT 1e-5
#define ERROR_TOL_PCT 1e-6

/* ---- the pool ------------------------------------------------------------- */

typedef struct pool_probe {
  atomic_int runs[1000];
  atomic_int bad_slot;
  unsigned size;
} pool_probe;

static void probe_task(void *user, size_t task, unsigned thread) {
  pool_probe *p = user;
  atomic_fetch_add(&p->runs[task], 1);
  if (thread >= p->size) atomic_store(&p->bad_slot, 1);
}

static void test_pool(void) {
  static const unsigned sizes[] = {1, 2, 3, 8};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    sks_thread_pool *pool = NULL;
    sks_error err;
    CHECK_OK(sks_thread_pool_create(sizes[s], &pool, &err), &err);
    if (!pool) continue;
    CHECK(sks_thread_pool_size(pool) == sizes[s]);
    static pool_probe probe;
    for (int round = 0; round < 50; ++round) { /* workers sleep and wake between runs */
      size_t count = (size_t)(round * 20) % 1000 + 1;
      memset(&probe, 0, sizeof probe);
      probe.size = sks_thread_pool_size(pool);
      sks_thread_pool_run(pool, probe_task, &probe, count);
      int once = 1;
      for (size_t t = 0; t < 1000; ++t) once &= atomic_load(&probe.runs[t]) == (t < count ? 1 : 0);
      CHECK_MSG(once, "pool of %u, run %d: every task exactly once", sizes[s], round);
      CHECK(atomic_load(&probe.bad_slot) == 0);
    }
    sks_thread_pool_destroy(pool);
  }
  sks_thread_pool *pool = NULL;
  sks_error err;
  CHECK_OK(sks_thread_pool_create(0, &pool, &err), &err);
  CHECK(pool && sks_thread_pool_size(pool) == sks_cpu_count());
  sks_thread_pool_destroy(pool);
}

/* ---- serial against chunked ----------------------------------------------- */

static int bake(const sks_model *src, const sks_model *tgt, const char *clip, float fps, unsigned threads,
                sks_bake_result *r) {
  sks_bake_options opt;
  memset(&opt, 0, sizeof opt);
  const char *names[1] = {clip};
  opt.clip_names = clip ? names : NULL;
  opt.clip_name_count = clip ? 1 : 0;
  opt.fps = fps;
  opt.threads = threads;
  opt.keep_surfaces = 1;
  sks_error err;
  sks_result res = sks_bake(src, tgt, &opt, r, &err);
  CHECK_OK(res, &err);
  return res == SKS_OK;
}

static int same_bits(const sks_baked_clip *a, const sks_baked_clip *b, size_t V) {
  size_t F = a->frame_count;
  return F == b->frame_count && !memcmp(a->locals, b->locals, F * a->joint_count * sizeof(sks_transform)) &&
         !memcmp(a->frame_mean_error_pct, b->frame_mean_error_pct, F * sizeof(float)) &&
         !memcmp(a->frame_worst_error_pct, b->frame_worst_error_pct, F * sizeof(float)) &&
         !memcmp(a->solved_surface, b->solved_surface, F * V * 3 * sizeof(float)) &&
         !memcmp(&a->quality, &b->quality, sizeof(double)) &&
         !memcmp(&a->mean_error_pct, &b->mean_error_pct, sizeof(double)) &&
         !memcmp(&a->worst_error_pct, &b->worst_error_pct, sizeof(double));
}

static void compare(const char *label, unsigned threads, const sks_bake_result *s, const sks_bake_result *p) {
  CHECK(s->clip_count == p->clip_count);
  size_t V = s->target_vertex_count;
  double D = s->diagonal;
  for (size_t i = 0; i < s->clip_count && i < p->clip_count; ++i) {
    const sks_baked_clip *a = &s->clips[i], *b = &p->clips[i];
    CHECK(a->frame_count == b->frame_count);
    size_t F = a->frame_count < b->frame_count ? a->frame_count : b->frame_count;
    double dmean = 0, dworst = 0, dsurf = 0;
    for (size_t f = 0; f < F; ++f) {
      dmean = fmax(dmean, fabs((double)a->frame_mean_error_pct[f] - b->frame_mean_error_pct[f]));
      dworst = fmax(dworst, fabs((double)a->frame_worst_error_pct[f] - b->frame_worst_error_pct[f]));
      for (size_t k = 0; k < V; ++k) {
        const float *x = &a->solved_surface[(f * V + k) * 3], *y = &b->solved_surface[(f * V + k) * 3];
        double dx = (double)x[0] - y[0], dy = (double)x[1] - y[1], dz = (double)x[2] - y[2];
        dsurf = fmax(dsurf, sqrt(dx * dx + dy * dy + dz * dz) / D * 100.0);
      }
    }
    size_t want = threads < F ? threads : F;
    CHECK_MSG(b->chunk_count == want && a->chunk_count == 1, "%s '%s': %zu chunks on %u threads (serial: %zu)",
              label, a->name, b->chunk_count, threads, a->chunk_count);
    printf("  %s '%s', %zu frames, %zu chunks (%zu solved again), 1 vs %u threads: per-frame mean %.2e, worst %.2e %%D; clip mean %.2e, "
           "worst %.2e %%D; quality %.2e; played keys %.2e %%D; sweeps/frame %.2f vs %.2f\n",
           label, a->name, F, b->chunk_count, b->chunks_resolved, threads, dmean, dworst, fabs(a->mean_error_pct - b->mean_error_pct),
           fabs(a->worst_error_pct - b->worst_error_pct),
           isnan(a->quality) ? 0.0 : fabs(a->quality - b->quality), dsurf, a->sweeps_per_frame,
           b->sweeps_per_frame);
    CHECK_MSG(dmean <= ERROR_TOL_PCT, "%s '%s' x%u: per-frame mean error differs by %g %%D", label, a->name, threads, dmean);
    CHECK_MSG(dworst <= ERROR_TOL_PCT, "%s '%s' x%u: per-frame worst error differs by %g %%D", label, a->name, threads, dworst);
    CHECK_NEAR(a->mean_error_pct, b->mean_error_pct, ERROR_TOL_PCT);
    CHECK_NEAR(a->worst_error_pct, b->worst_error_pct, ERROR_TOL_PCT);
    if (!isnan(a->quality)) CHECK_NEAR(a->quality, b->quality, 1e-8);
    CHECK_MSG(dsurf <= SURFACE_TOL_PCT, "%s '%s' x%u: played keys differ by %g %%D", label, a->name, threads, dsurf);
  }
}

/* Serial, then 2 and 3 threads (3 > the cores of a small machine: the chunks
 * are what matters, not the cores), 2 again for determinism. */
static void serial_vs_threads(const char *label, const sks_model *src, const sks_model *tgt, const char *clip,
                             float fps) {
  sks_bake_result s, p2, p3, again;
  if (!bake(src, tgt, clip, fps, 1, &s)) return;
  if (bake(src, tgt, clip, fps, 2, &p2)) {
    compare(label, 2, &s, &p2);
    if (bake(src, tgt, clip, fps, 2, &again)) {
      int same = again.clip_count == p2.clip_count;
      for (size_t i = 0; same && i < p2.clip_count; ++i)
        same = same_bits(&p2.clips[i], &again.clips[i], p2.target_vertex_count);
      CHECK_MSG(same, "%s: two runs on 2 threads are not bit-identical", label);
      sks_bake_result_free(&again);
    }
    sks_bake_result_free(&p2);
  }
  if (bake(src, tgt, clip, fps, 3, &p3)) {
    compare(label, 3, &s, &p3);
    sks_bake_result_free(&p3);
  }
  sks_bake_result_free(&s);
}

int main(void) {
  test_pool();
  const char *san = getenv("SKS_SANITIZED");
  float fps = san && san[0] == '1' ? 4.0f : 0.0f; /* 0: key times */
  const char *fox_path = sks_test_shared_data("Fox/Fox.glb");
  sks_model fox;
  sks_error err;
  if (fox_path && sks_load(fox_path, NULL, &fox, &err) == SKS_OK) {
    serial_vs_threads("Fox control", &fox, &fox, "Walk", fps);
    const char *tp = sks_test_shared_data("fox_targets/fox_rig_autoweights.glb");
    sks_model tgt;
    if (tp && sks_load(tp, NULL, &tgt, &err) == SKS_OK) {
      serial_vs_threads("Fox -> fox_rig_autoweights", &fox, &tgt, NULL, fps);
      sks_model_free(&tgt);
    }
    sks_model_free(&fox);
  }
  const char *tw = sks_test_assimp_model("X/Testwuson.X");
  sks_model m;
  if (tw && sks_load(tw, NULL, &m, &err) == SKS_OK) {
    serial_vs_threads("Testwuson control", &m, &m, NULL, fps);
    sks_model_free(&m);
  }
  return sks_test_finish();
}
