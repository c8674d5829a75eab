/* Skinning throughput: LBS and DQS, positions only and positions + normals,
 * on a procedural 100,000-vertex mesh with 4 influences and 64 joints:
 * scalar reference vs optimised (one thread) vs parallel (all cores).
 * Then sampling + FK + palette time per frame for the Testwuson rig
 * (assimp-testmodels X/Testwuson.X) when the loader is available.
 *
 * Usage: bench_skinning [model-file]
 * Times are the best of many single runs (the machine may be shared: the
 * best run is the least disturbed one). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "skinsolve/skinsolve.h"
#include "math/sks_math.h"

enum { VERTS = 100000, JOINTS = 64, INFL = 4 };

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint32_t rng = 987654321u;
static float frand(void) {
  rng = rng * 1664525u + 1013904223u;
  return (float)(rng >> 8) / 16777216.0f;
}
static float srand1(void) { return 2.0f * frand() - 1.0f; }

typedef int (*run_fn)(const sks_skinning_job *);
static int run_par(const sks_skinning_job *job) { return sks_skinning_job_run_parallel(job, 0); }

/* Best seconds per call over `reps` repetitions of `iters` calls each. */
static double time_job(run_fn fn, const sks_skinning_job *job, int iters, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    double t0 = now();
    for (int i = 0; i < iters; ++i)
      if (!fn(job)) { fprintf(stderr, "skinning job failed\n"); exit(1); }
    double dt = (now() - t0) / iters;
    if (dt < best) best = dt;
  }
  return best;
}

static void bench_kernels(void) {
  float *pos = malloc(sizeof(float) * 3 * VERTS), *nrm = malloc(sizeof(float) * 3 * VERTS);
  float *opos = malloc(sizeof(float) * 3 * VERTS), *onrm = malloc(sizeof(float) * 3 * VERTS);
  uint16_t *joints = malloc(sizeof(uint16_t) * INFL * VERTS);
  float *weights = malloc(sizeof(float) * INFL * VERTS);
  sks_mat4 palette[JOINTS];
  if (!pos || !nrm || !opos || !onrm || !joints || !weights) { fprintf(stderr, "out of memory\n"); exit(1); }
  for (int i = 0; i < JOINTS; ++i) {
    sks_transform t = sks_transform_identity();
    t.rotation = sks_q_normalize(sks_q(srand1(), srand1(), srand1(), srand1()));
    t.translation = sks_v3(srand1(), srand1(), srand1());
    palette[i] = sks_m4_from_transform(&t);
  }
  for (int v = 0; v < VERTS; ++v) {
    sks_vec3 n = sks_v3_normalize(sks_v3(srand1(), srand1(), srand1()));
    pos[3 * v] = srand1(); pos[3 * v + 1] = srand1(); pos[3 * v + 2] = srand1();
    nrm[3 * v] = n.x; nrm[3 * v + 1] = n.y; nrm[3 * v + 2] = n.z;
    /* Neighbouring joints, as on a real mesh (cache behaviour of a palette). */
    int base = (int)(frand() * (JOINTS - INFL));
    float sum = 0;
    for (int i = 0; i < INFL; ++i) {
      joints[INFL * v + i] = (uint16_t)(base + i);
      weights[INFL * v + i] = 0.1f + frand();
      sum += weights[INFL * v + i];
    }
    for (int i = 0; i < INFL; ++i) weights[INFL * v + i] /= sum;
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  printf("skinning: %d vertices, %d influences, %d joints, %ld core(s) online\n", VERTS, INFL, JOINTS, cores);
  printf("%-4s %-16s %14s %14s %14s %9s\n", "", "", "reference", "optimised", "parallel", "opt/ref");
  for (int m = 0; m < 2; ++m)
    for (int withn = 0; withn < 2; ++withn) {
      sks_skinning_job job;
      memset(&job, 0, sizeof job);
      job.method = m ? SKS_SKIN_DQS : SKS_SKIN_LBS;
      job.vertex_count = VERTS;
      job.influence_count = INFL;
      job.palette = palette;
      job.palette_count = JOINTS;
      job.joints = joints;
      job.weights = weights;
      job.in_positions = pos;
      job.out_positions = opos;
      if (withn) { job.in_normals = nrm; job.out_normals = onrm; }
      /* Short repetitions, best kept: on a shared machine the best one is
       * the least disturbed. */
      double tr = time_job(sks_skinning_job_run_reference, &job, 1, 25);
      double to = time_job(sks_skinning_job_run, &job, 1, 100);
      double tp = time_job(run_par, &job, 1, 100);
      printf("%-4s %-16s %11.1f M/s %11.1f M/s %11.1f M/s %8.2fx\n", m ? "DQS" : "LBS",
             withn ? "pos+normals" : "positions", VERTS / tr / 1e6, VERTS / to / 1e6, VERTS / tp / 1e6, tr / to);
    }
  free(pos); free(nrm); free(opos); free(onrm); free(joints); free(weights);
}

/* Set to 1 once src/io/load.c (sks_load) is part of the library. */
#ifndef SKS_BENCH_HAVE_LOADER
#define SKS_BENCH_HAVE_LOADER 1
#endif

#if !SKS_BENCH_HAVE_LOADER
static void bench_rig(const char *path) {
  printf("rig: skipped (sks_load is not in this build yet; %s)\n", path ? path : "no model file");
}
#else
static void bench_rig(const char *path) {
  if (!path) {
    printf("rig: skipped (X/Testwuson.X not found under %s)\n", SKS_ASSIMP_MODELS);
    return;
  }
  sks_model model;
  sks_error err = {0};
  sks_load_options opt = {0};
  if (sks_load(path, &opt, &model, &err) != SKS_OK) {
    printf("rig: skipped (%s)\n", err.message);
    return;
  }
  const size_t jc = model.skeleton.joint_count;
  size_t max_skin = 0;
  for (size_t s = 0; s < model.skin_count; ++s)
    if (model.skins[s].joint_count > max_skin) max_skin = model.skins[s].joint_count;
  sks_transform *locals = malloc(sizeof(sks_transform) * (jc ? jc : 1));
  sks_mat4 *models = malloc(sizeof(sks_mat4) * (jc ? jc : 1));
  sks_mat4 *palette = malloc(sizeof(sks_mat4) * (max_skin ? max_skin : 1));
  if (!locals || !models || !palette) { fprintf(stderr, "out of memory\n"); exit(1); }
  const sks_clip *clip = model.clip_count ? &model.clips[0] : NULL;
  const sks_clip empty = {"(rest)", 0.0f, 0, NULL};
  if (!clip) clip = &empty;
  /* Per stage, best of 15 repetitions of 2000 frames spread over the clip. */
  const int frames = 2000;
  double best[4] = {1e30, 1e30, 1e30, 1e30}; /* slerp sampling, nlerp sampling, FK, palette */
  for (int rep = 0; rep < 15; ++rep) {
    for (int stage = 0; stage < 4; ++stage) {
      double t0 = now();
      for (int f = 0; f < frames; ++f) {
        float t = clip->duration > 0 ? clip->duration * (float)f / (float)frames : 0.0f;
        int ok = 1;
        if (stage < 2) {
          sks_sampling_job sj = {clip, model.skeleton.rest, jc, t, 1, stage, locals};
          ok = sks_sampling_job_run(&sj);
        } else if (stage == 2) {
          sks_local_to_model_job fk = {model.skeleton.parents, locals, jc, NULL, models};
          ok = sks_local_to_model_job_run(&fk);
        } else {
          for (size_t s = 0; s < model.skin_count && ok; ++s) {
            sks_palette_job pj = {&model.skins[s], models, jc, palette};
            ok = sks_palette_job_run(&pj);
          }
        }
        if (!ok) { printf("rig: sampling/FK/palette failed\n"); goto done; }
      }
      double dt = (now() - t0) / frames;
      if (dt < best[stage]) best[stage] = dt;
    }
  }
  {
    size_t tracks = clip->track_count;
    double total = best[0] + best[2] + best[3];
    printf("rig %s: %zu joints, %zu skin(s), clip '%s' (%zu tracks, %.2f s)\n", path, jc, model.skin_count,
           clip->name ? clip->name : "", tracks, (double)clip->duration);
    printf("rig: per frame: sampling %.2f us (nlerp %.2f us), FK %.2f us, palette %.2f us; "
           "sampling + FK + palette %.2f us (%.0f frames/s)\n",
           best[0] * 1e6, best[1] * 1e6, best[2] * 1e6, best[3] * 1e6, total * 1e6, 1.0 / total);
    size_t nv = sks_model_total_vertex_count(&model);
    float *out = malloc(sizeof(float) * 3 * (nv ? nv : 1));
    float *nout = malloc(sizeof(float) * 3 * (nv ? nv : 1));
    if (out && nout) {
      for (int m = 0; m < 2; ++m)
        for (int withn = 0; withn < 2; ++withn) {
          double bt = 1e30;
          for (int rep = 0; rep < 25; ++rep) {
            double t0 = now();
            for (int i = 0; i < 4; ++i)
              if (sks_skin_model(&model, models, m ? SKS_SKIN_DQS : SKS_SKIN_LBS, out, withn ? nout : NULL, &err) !=
                  SKS_OK) {
                printf("rig: sks_skin_model failed: %s\n", err.message);
                rep = 25;
                break;
              }
            double dt = (now() - t0) / 4;
            if (dt < bt) bt = dt;
          }
          printf("rig: sks_skin_model %s %-11s (%zu vertices): %7.1f us per frame (%.1f M vertices/s)\n",
                 m ? "DQS" : "LBS", withn ? "pos+normals" : "positions", nv, bt * 1e6, nv / bt / 1e6);
        }
    }
    free(out);
    free(nout);
  }
done:
  free(locals); free(models); free(palette);
  sks_model_free(&model);
}
#endif

int main(int argc, char **argv) {
  bench_kernels();
  const char *path = argc > 1 ? argv[1] : SKS_ASSIMP_MODELS "/X/Testwuson.X";
  if (access(path, R_OK) != 0) path = NULL;
  bench_rig(path);
  return 0;
}
