/* Skinning throughput: LBS 1/4/8 influences and DQS 4 influences, positions
 * only and positions + normals, on a procedural 100,000-vertex mesh with 64
 * joints: memory-traffic floor, scalar reference, the C / SSE2 / auto (AVX2)
 * kernels on one thread, run_parallel on 2 threads, and the ratios.
 * Then sampling + FK + palette time per frame for the Testwuson rig
 * (assimp-testmodels X/Testwuson.X) when the loader is available.
 *
 * Usage: bench_skinning [model-file]
 * SKS_BENCH_ROUNDS=R (default 9): rounds, every kernel of every case once
 * per round (interleaved). The table gives each kernel's best call over all
 * rounds (the machine may be shared: the best run is the least disturbed);
 * the DQS/LBS ratios, SSE2 and auto kernels, are the median of the R
 * per-round ratios. SKS_BENCH_RATIO=1: only those ratios (the SSE2 and auto
 * kernels of the four 4-influence jobs, interleaved), no rig part. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "skinsolve/skinsolve.h"
#include "math/sks_math.h"

enum { VERTS = 100000, JOINTS = 64, MAXK = 8, MAX_ROUNDS = 101 };

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

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

/* Memory-traffic floor: reads exactly the arrays the job reads (joints,
 * weights when it has them, positions, normals) and writes exactly the ones it writes, with
 * no math (copies, and a fold of joints + weights so they are read). */
static volatile uint32_t sink;
static int floor_kernel(const sks_skinning_job *job) {
  const size_t n = job->vertex_count, k = job->influence_count;
  memcpy(job->out_positions, job->in_positions, sizeof(float) * 3 * n);
  if (job->in_normals) memcpy(job->out_normals, job->in_normals, sizeof(float) * 3 * n);
  /* OR-fold of the joint and weight bytes, 8 at a time (so the floor is
   * bound by memory, not by this loop). */
  uint64_t acc = 0;
  const unsigned char *jb = (const void *)job->joints, *wb = (const void *)job->weights;
  const size_t jn = sizeof(uint16_t) * n * k, wn = job->weights ? sizeof(float) * n * k : 0;
  for (size_t i = 0; i + 8 <= jn; i += 8) { uint64_t x; memcpy(&x, jb + i, 8); acc |= x; }
  for (size_t i = 0; i + 8 <= wn; i += 8) { uint64_t x; memcpy(&x, wb + i, 8); acc |= x; }
  const uint32_t wacc = (uint32_t)(acc >> 32);
  sink = (uint32_t)acc ^ wacc;
  return 1;
}

typedef int (*run_fn)(const sks_skinning_job *);
static int run_par2(const sks_skinning_job *job) { return sks_skinning_job_run_parallel(job, 2); }
/* run_pool on a 2-thread pool the caller keeps (bench_kernels creates it) */
static sks_thread_pool *pool2;
static int run_pool2(const sks_skinning_job *job) { return sks_skinning_job_run_pool(job, pool2); }

/* This thread's CPU seconds: single-threaded kernels are timed with it, so
 * time the scheduler gives to other processes on a shared machine is not
 * counted (the parallel job is timed in wall seconds). */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds of one call: best of `reps` calls. */
static double time_once(run_fn fn, const sks_skinning_job *job, int reps) {
  double best = 1e30;
  const int wall = fn == run_par2 || fn == run_pool2;
  for (int r = 0; r < reps; ++r) {
    double t0 = wall ? now() : cpu_now();
    if (!fn(job)) { fprintf(stderr, "skinning job failed\n"); exit(1); }
    double dt = (wall ? now() : cpu_now()) - t0;
    if (dt < best) best = dt;
  }
  return best;
}

/* The issue-9 table: ozz-animation 0.16 SkinningJob, Mverts/s, measured on
 * this machine type when it was quiet (ozz cannot be installed here, so it
 * is not run). x ozz = auto / ozz; flr/ozz = this run's memory-traffic
 * floor / ozz, the most any kernel could reach over ozz in this run (the
 * issue asks for 2x). Neither corrects for the machine's load: a loaded run
 * lowers auto and the floor alike, never ozz. */
typedef struct bench_case { int dqs, k, normals, skip; double ozz; int wts; } bench_case;
#define C5(a, b, c, d, e) {a, b, c, d, e, 0}
/* The last three: normals with skip_normalize (the job's documented option;
 * ozz's SkinningJob does not renormalise either, so these are the
 * like-for-like rows against ozz; the default renormalises). The DQS/LBS
 * ratios read cases 2, 3, 6, 7. */
static const bench_case CASES[] = {
  C5(0, 1, 0, 0, 774), C5(0, 1, 1, 0, 408), C5(0, 4, 0, 0, 189), C5(0, 4, 1, 0, 152),
  C5(0, 8, 0, 0, 91),  C5(0, 8, 1, 0, 81),  C5(1, 4, 0, 0, 0),   C5(1, 4, 1, 0, 0),
  C5(0, 1, 1, 1, 408), C5(0, 4, 1, 1, 152), C5(0, 8, 1, 1, 81),
  {0, 1, 0, 0, 774, 1},
};
/* One influence: no weights array (the job's weights NULL: every weight
 * 1), as ozz's SkinningJob reads none for one influence (it reads
 * influences - 1 per vertex); the last row gives one (all 1.0) for
 * comparison. */
enum { NCASES = sizeof CASES / sizeof CASES[0] };

static void bench_kernels(int rounds, int ratio_only) {
  float *pos = malloc(sizeof(float) * 3 * VERTS), *nrm = malloc(sizeof(float) * 3 * VERTS);
  float *opos = malloc(sizeof(float) * 3 * VERTS), *onrm = malloc(sizeof(float) * 3 * VERTS);
  uint16_t *joints[MAXK + 1];
  float *weights[MAXK + 1];
  sks_mat4 palette[JOINTS];
  if (!pos || !nrm || !opos || !onrm) { fprintf(stderr, "out of memory\n"); exit(1); }
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
  }
  for (int k = 1; k <= MAXK; ++k) {
    joints[k] = malloc(sizeof(uint16_t) * (size_t)k * VERTS);
    weights[k] = malloc(sizeof(float) * (size_t)k * VERTS);
    if (!joints[k] || !weights[k]) { fprintf(stderr, "out of memory\n"); exit(1); }
    for (int v = 0; v < VERTS; ++v) {
      /* Neighbouring joints, as on a real mesh (cache behaviour of a palette). */
      int base = (int)(frand() * (JOINTS - k));
      float sum = 0;
      for (int i = 0; i < k; ++i) {
        joints[k][k * v + i] = (uint16_t)(base + i);
        weights[k][k * v + i] = 0.1f + frand();
        sum += weights[k][k * v + i];
      }
      for (int i = 0; i < k; ++i) weights[k][k * v + i] /= sum;
    }
  }
  const sks_skinning_isa best_isa = sks_skinning_isa_resolve(SKS_SKIN_ISA_AUTO);
  const int have_sse2 = sks_skinning_isa_available(SKS_SKIN_ISA_SSE2);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  printf("skinning: %d vertices, %d joints, random rigid palette, packed arrays, %ld core(s) online; "
         "auto = %s kernels\n", VERTS, JOINTS, cores,
         best_isa == SKS_SKIN_ISA_AVX2 ? "AVX2+FMA" : best_isa == SKS_SKIN_ISA_SSE2 ? "SSE2" : "C");
  printf("Mverts/s, best call of %d interleaved rounds (machine may be shared: the best is the least disturbed); "
         "one thread in thread CPU time, 2 threads in wall time\n", rounds);
  double t[NCASES][8]; /* floor, reference, scalar C, sse2, auto, auto x2 threads, auto on a 2-thread pool,
                          auto in wall time (the pool's 1-thread reference, same clock) */
  for (int c = 0; c < NCASES; ++c)
    for (int i = 0; i < 8; ++i) t[c][i] = 1e30;
  /* Per round, the best call of the 4-influence LBS / DQS jobs with the SSE2
   * and auto kernels: the DQS/LBS ratios are the median over rounds of each
   * round's ratio (the two jobs of a ratio timed a few ms apart). */
  double ratio_t[MAX_ROUNDS][NCASES][2];
  sks_error perr;
  if (sks_thread_pool_create(2, &pool2, &perr) != SKS_OK) { fprintf(stderr, "%s\n", perr.message); exit(1); }
  for (int round = 0; round < rounds; ++round)
    for (int c = 0; c < NCASES; ++c) {
      const bench_case *bc = &CASES[c];
      if (ratio_only && (bc->k != 4 || bc->skip)) continue;
      sks_skinning_job job;
      memset(&job, 0, sizeof job);
      job.method = bc->dqs ? SKS_SKIN_DQS : SKS_SKIN_LBS;
      job.vertex_count = VERTS;
      job.influence_count = (uint32_t)bc->k;
      job.palette = palette;
      job.palette_count = JOINTS;
      job.joints = joints[bc->k];
      job.weights = bc->k == 1 && !bc->wts ? NULL : weights[bc->k];
      job.in_positions = pos;
      job.out_positions = opos;
      if (bc->normals) { job.in_normals = nrm; job.out_normals = onrm; }
      job.skip_normalize = bc->skip;
      double x;
      if (!ratio_only) {
        x = time_once(floor_kernel, &job, 10); if (x < t[c][0]) t[c][0] = x;
        if (round < 2) { x = time_once(sks_skinning_job_run_reference, &job, 1); if (x < t[c][1]) t[c][1] = x; }
        job.isa = SKS_SKIN_ISA_SCALAR;
        x = time_once(sks_skinning_job_run, &job, 3); if (x < t[c][2]) t[c][2] = x;
      }
      if (have_sse2) {
        job.isa = SKS_SKIN_ISA_SSE2;
        x = time_once(sks_skinning_job_run, &job, 10); if (x < t[c][3]) t[c][3] = x;
        ratio_t[round][c][0] = x;
      }
      job.isa = SKS_SKIN_ISA_AUTO;
      x = time_once(sks_skinning_job_run, &job, 10); if (x < t[c][4]) t[c][4] = x;
      ratio_t[round][c][1] = x;
      if (ratio_only) continue;
      x = time_once(run_par2, &job, 10); if (x < t[c][5]) t[c][5] = x;
      x = time_once(run_pool2, &job, 10); if (x < t[c][6]) t[c][6] = x;
      /* one thread in wall time, right beside the pool: the pool's ratio uses one clock */
      { double b = 1e30; for (int k = 0; k < 10; ++k) { double t0 = now(); sks_skinning_job_run(&job); double d = now() - t0; if (d < b) b = d; }
        if (b < t[c][7]) t[c][7] = b; }
    }
  if (ratio_only)
    for (int c = 0; c < NCASES; ++c)
      if (CASES[c].k == 4 && !CASES[c].skip)
        printf("%s 4 infl %-8s SSE2 %6.1f auto %6.1f Mverts/s (best call)\n", CASES[c].dqs ? "DQS" : "LBS",
               CASES[c].normals ? "pos+nrm" : "pos", VERTS / t[c][3] / 1e6, VERTS / t[c][4] / 1e6);
  for (int c = 0; c < NCASES && !ratio_only; ++c) {
    if (c == 0)
      printf("%-23s %8s %8s %8s %8s %8s %8s %8s | %9s %8s %7s %7s | %6s %6s %6s\n", "case", "floor", "ref", "C", "SSE2",
             "auto", "2 thr", "pool 2", "auto/flr", "auto/ref", "thr x", "pool x", "ozz", "x ozz", "flr/ozz");
    const bench_case *bc = &CASES[c];
    char name[64];
    snprintf(name, sizeof name, "%s %d infl %s", bc->dqs ? "DQS" : "LBS", bc->k,
             bc->wts ? "pos/weights" : bc->skip ? "pos+nrm/skip" : bc->normals ? "pos+nrm" : "pos");
    double mv[8];
    for (int i = 0; i < 8; ++i) mv[i] = t[c][i] < 1e29 ? VERTS / t[c][i] / 1e6 : 0.0;
    printf("%-23s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f | %8.2fx %7.1fx %6.2fx %6.2fx |", name, mv[0], mv[1], mv[2],
           mv[3], mv[4], mv[5], mv[6], mv[4] / mv[0], mv[4] / mv[1], mv[5] / mv[4], mv[6] / mv[7]);
    if (bc->ozz > 0)
      printf(" %6.0f %5.2fx %5.2fx\n", bc->ozz, mv[4] / bc->ozz, mv[0] / bc->ozz);
    else
      printf(" %6s %6s %6s\n", "-", "-", "-");
  }
  /* DQS / LBS time, same influences and outputs: the median over rounds of
   * each round's ratio, and its range. */
  for (int isa = have_sse2 ? 0 : 1; isa < 2; ++isa) {
    printf("DQS/LBS time (4 influences, %s kernels), median [min, max] of %d rounds:",
           isa ? (best_isa == SKS_SKIN_ISA_AVX2 ? "auto = AVX2+FMA" : "auto") : "SSE2", rounds);
    for (int wn = 0; wn < 2; ++wn) {
      double r[MAX_ROUNDS];
      for (int round = 0; round < rounds; ++round) r[round] = ratio_t[round][6 + wn][isa] / ratio_t[round][2 + wn][isa];
      qsort(r, (size_t)rounds, sizeof r[0], cmp_double);
      const double med = rounds % 2 ? r[rounds / 2] : 0.5 * (r[rounds / 2 - 1] + r[rounds / 2]);
      printf(" %s %.2f [%.2f, %.2f]%s", wn ? "pos+nrm" : "positions", med, r[0], r[rounds - 1], wn ? "\n" : ",");
    }
  }
  if (!ratio_only)
    printf("columns: floor = memory-traffic floor (same arrays, no math); ref = run_reference; C / SSE2 / auto = "
         "run() with isa forced; 2 thr = run_parallel(2) (threads started per call); pool 2 = run_pool on a 2-thread "
         "pool kept by the caller; thr x = 2 thr / auto; pool x = pool 2 / auto, both in wall time, same round; LBS 1 rows: no weights array (weights NULL, as ozz reads none for one influence), pos/weights with one; pos+nrm/skip = pos+nrm with "
         "skip_normalize (normals not renormalised, as ozz's); ozz = ozz-animation 0.16 "
         "SkinningJob on this machine type (issue 9, not run here); x ozz = auto / ozz; flr/ozz = floor / ozz, the "
         "ceiling of x ozz in this run (load lowers auto and floor, not the fixed ozz figure)\n");
  sks_thread_pool_destroy(pool2);
  pool2 = NULL;
  free(pos); free(nrm); free(opos); free(onrm);
  for (int k = 1; k <= MAXK; ++k) { free(joints[k]); free(weights[k]); }
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
  const sks_clip empty = {"(rest)", 0.0f, 0, NULL, 0, NULL};
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
  /* SKS_BENCH_ROUNDS: interleaved rounds of every kernel (default 9). */
  const char *r = getenv("SKS_BENCH_ROUNDS");
  int rounds = r ? atoi(r) : 9;
  /* SKS_BENCH_RATIO=1: only the SSE2 and auto kernels of the four
   * 4-influence jobs (the DQS/LBS ratios), interleaved; no rig part. */
  const int ratio_only = getenv("SKS_BENCH_RATIO") != NULL;
  bench_kernels(rounds > 0 ? (rounds > MAX_ROUNDS ? MAX_ROUNDS : rounds) : 9, ratio_only);
  if (ratio_only) return 0;
  const char *path = argc > 1 ? argv[1] : SKS_ASSIMP_MODELS "/X/Testwuson.X";
  if (access(path, R_OK) != 0) path = NULL;
  bench_rig(path);
  return 0;
}
