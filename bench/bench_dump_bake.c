/* Dumps one clip's bake as a transforms-only skinning problem for an outside
 * solver (bench/dembones/: the same-machine Dem Bones comparison of issue 9).
 *
 *   bench_dump_bake SRC TGT CLIP OUT.bin [--threads N] [--reps R]
 *
 * Bakes CLIP of SRC onto TGT R times (default 3; default options,
 * keep_surfaces, free mode, threads 1 unless given), keeps the smallest
 * solve_ms (the surfaces are the same bits every time) and writes (atomically; never over a
 * file either load read), little-endian (the host's), in the
 * target's bind space (the space of the kept surfaces):
 *
 *   char[8]  "SKSDB01\0"
 *   u32      V (skinned vertices, part order), B (bones), F (frames), 0
 *   f64      D, solve_ms, sweeps_per_frame, mean |solved - y| / D * 100
 *   f64      u[V*3]           rest (bind-space) positions
 *   u32      start[V+1]       vertex i's influences: start[i] .. start[i+1]-1
 *   u32      bone[nnz]        nnz = start[V]
 *   f64      w[nnz]           weights as played (normalised to sum 1)
 *   f32      y[F*V*3]         clip.target_surface: the recorded surface
 *   f32      solved[F*V*3]    clip.solved_surface: skinsolve's answer
 *   f64      m[F*B*12]        skinsolve's answer as bone matrices (bind space
 *                             -> bind space, rest = identity): per frame and
 *                             bone a 3x3 row-major then a translation
 *
 * A bone is a palette entry of the bake's view of the target (one per skin
 * joint: a skeleton joint bound by two skins with two inverse binds is two
 * bones) that some skinned vertex weighs, in palette order. The weights and
 * positions are the bake's own (sks_skinview_build); the bone matrices are
 * T^-1 G(joint) IBM (sks_skinview_palette) of the solved locals, and the dump
 * checks that skinning u with them reproduces solved_surface.
 *
 * The error printed (and stored) is the mean over the V skinned vertices and
 * the F frames of |solved - y| / D * 100, computed here from the kept
 * surfaces: the definition bench_dembones uses for its side. It can differ a
 * little from the CLI's table, which also counts rigid parts. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "skinsolve/skinsolve.h"
#include "pose/pose_double.h"
#include "solve/solve_internal.h"

/* The output is built in memory and written with sks_write_file_atomic
 * (temp + rename: nothing half-written); it may not be a file either load
 * read (the models themselves, a glTF's buffers and images: on_file_read),
 * so a mistyped OUT never replaces an input. */
typedef struct read_files {
  size_t count;
  dev_t dev[64];
  ino_t ino[64];
  int overflow;
} read_files;

static void on_read(void *user, const char *path) {
  read_files *r = user;
  struct stat st;
  if (stat(path, &st) != 0) return;
  if (r->count == 64) { r->overflow = 1; return; }
  r->dev[r->count] = st.st_dev;
  r->ino[r->count++] = st.st_ino;
}

static int names_input(const read_files *r, const char *out) {
  struct stat st;
  if (stat(out, &st) != 0) return 0; /* does not exist yet */
  for (size_t i = 0; i < r->count; ++i)
    if (r->dev[i] == st.st_dev && r->ino[i] == st.st_ino) return 1;
  return r->overflow; /* more than 64 files read: refuse any existing output */
}

typedef struct out_buf {
  unsigned char *p;
  size_t n;
} out_buf;

static void put(out_buf *b, const void *p, size_t size, size_t n) {
  memcpy(b->p + b->n, p, size * n);
  b->n += size * n;
}

/* The bones: used palette entries of skinned vertices, compacted. */
static size_t map_bones(const sks_skinview *tv, size_t V, uint32_t *bone_of) {
  for (size_t e = 0; e < tv->P; ++e) bone_of[e] = UINT32_MAX;
  for (size_t i = 0; i < V; ++i)
    for (uint32_t q = tv->start[i]; q < tv->start[i + 1]; ++q) bone_of[tv->pal[q]] = 0;
  size_t B = 0;
  for (size_t e = 0; e < tv->P; ++e)
    if (bone_of[e] == 0) bone_of[e] = (uint32_t)B++;
  return B;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s SRC TGT CLIP OUT.bin [--threads N] [--reps R]\n", argv[0]);
    return 2;
  }
  unsigned threads = 1;
  int reps = 3;
  for (int a = 5; a < argc; ++a) {
    if (!strcmp(argv[a], "--threads") && a + 1 < argc) threads = (unsigned)strtoul(argv[++a], NULL, 10);
    else if (!strcmp(argv[a], "--reps") && a + 1 < argc) reps = atoi(argv[++a]);
    else {
      fprintf(stderr, "unknown argument '%s'\n", argv[a]);
      return 2;
    }
  }
  sks_error err;
  sks_model src, tgt;
  memset(&src, 0, sizeof src);
  memset(&tgt, 0, sizeof tgt);
  read_files rf;
  memset(&rf, 0, sizeof rf);
  sks_load_options lo;
  memset(&lo, 0, sizeof lo);
  lo.on_file_read = on_read;
  lo.on_file_read_user = &rf;
  on_read(&rf, argv[1]);
  on_read(&rf, argv[2]);
  if (sks_load(argv[1], &lo, &src, &err) != SKS_OK || sks_load(argv[2], &lo, &tgt, &err) != SKS_OK) {
    fprintf(stderr, "load: %s\n", err.message);
    return 1;
  }
  if (names_input(&rf, argv[4])) {
    fprintf(stderr, "refusing to write %s: a load read it (an input, or a file of one)\n", argv[4]);
    return 2;
  }
  sks_bake_options opt;
  memset(&opt, 0, sizeof opt);
  const char *names[1] = {argv[3]};
  opt.clip_names = names;
  opt.clip_name_count = 1;
  opt.keep_surfaces = 1;
  opt.threads = threads;
  sks_bake_result res;
  double best_ms = 0;
  for (int r = 0; r < (reps > 0 ? reps : 1); ++r) {
    if (r) sks_bake_result_free(&res);
    if (sks_bake(&src, &tgt, &opt, &res, &err) != SKS_OK) {
      fprintf(stderr, "bake: %s\n", err.message);
      return 1;
    }
    if (res.clip_count == 1 && (r == 0 || res.clips[0].solve_ms < best_ms)) best_ms = res.clips[0].solve_ms;
  }
  if (res.clip_count != 1 || !res.clips[0].target_surface || !res.clips[0].solved_surface) {
    fprintf(stderr, "bake: expected one clip with kept surfaces\n");
    return 1;
  }
  const sks_baked_clip *c = &res.clips[0];
  sks_skinview tv;
  if (sks_skinview_build(&tgt, "target", &tv, &err) != SKS_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  size_t V = tv.skinned_vertex_count, F = c->frame_count, J = tgt.skeleton.joint_count;
  if (V != res.target_vertex_count) {
    fprintf(stderr, "vertex counts disagree: view %zu, bake %zu\n", V, res.target_vertex_count);
    return 1;
  }
  if (c->morph_track_count)
    fprintf(stderr, "note: the clip plays %zu morph tracks on the target: u below has no morph deltas\n",
            c->morph_track_count);
  double D = res.diagonal;
  /* skinsolve's error from the kept surfaces */
  double sum = 0;
  for (size_t q = 0; q < F * V; ++q) {
    const float *s = &c->solved_surface[3 * q], *y = &c->target_surface[3 * q];
    double dx = (double)s[0] - y[0], dy = (double)s[1] - y[1], dz = (double)s[2] - y[2];
    sum += sqrt(dx * dx + dy * dy + dz * dz);
  }
  double err_pct = sum / (double)(F * V) / D * 100.0;

  uint32_t *bone_of = malloc((tv.P ? tv.P : 1) * sizeof *bone_of);
  sks_daffine *models = malloc((J ? J : 1) * sizeof *models);
  sks_daffine *pal = malloc((tv.P ? tv.P : 1) * sizeof *pal);
  size_t nnz = tv.start[V];
  uint32_t *bones = malloc((nnz ? nnz : 1) * sizeof *bones);
  if (!bone_of || !models || !pal || !bones) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  size_t B = map_bones(&tv, V, bone_of);
  for (size_t q = 0; q < nnz; ++q) bones[q] = bone_of[tv.pal[q]];
  size_t FB = F * B;
  double *m = malloc((FB ? FB : 1) * 12 * sizeof *m);
  if (!m) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  /* skinsolve's answer as bind-space bone matrices, and the check that LBS
   * of u with them gives solved_surface */
  double worst = 0;
  for (size_t f = 0; f < F; ++f) {
    sks_dfk(&tgt.skeleton, &c->locals[f * c->joint_count], models);
    sks_skinview_palette(&tv, models, pal);
    for (size_t e = 0; e < tv.P; ++e) {
      if (bone_of[e] == UINT32_MAX) continue;
      double *o = &m[(f * B + bone_of[e]) * 12];
      memcpy(o, pal[e].l, 9 * sizeof(double));
      memcpy(o + 9, pal[e].t, 3 * sizeof(double));
    }
    for (size_t i = 0; i < V; ++i) {
      double x[3] = {0, 0, 0};
      for (uint32_t q = tv.start[i]; q < tv.start[i + 1]; ++q) {
        double p[3];
        sks_daff_point(&pal[tv.pal[q]], &tv.pos[3 * i], p);
        for (int a = 0; a < 3; ++a) x[a] += tv.w[q] * p[a];
      }
      const float *s = &c->solved_surface[3 * (f * V + i)];
      double d = sqrt((x[0] - s[0]) * (x[0] - s[0]) + (x[1] - s[1]) * (x[1] - s[1]) + (x[2] - s[2]) * (x[2] - s[2]));
      if (d > worst) worst = d;
    }
  }

  char magic[8] = "SKSDB01";
  uint32_t hdr[4] = {(uint32_t)V, (uint32_t)B, (uint32_t)F, 0};
  double num[4] = {D, best_ms, c->sweeps_per_frame, err_pct};
  out_buf ob = {NULL, 0};
  size_t bytes = 8 + sizeof hdr + sizeof num + 3 * V * sizeof(double) + (V + 1) * sizeof(uint32_t) +
                 nnz * (sizeof(uint32_t) + sizeof(double)) + 2 * F * V * 3 * sizeof(float) + FB * 12 * sizeof(double);
  ob.p = malloc(bytes);
  if (!ob.p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
    return 1;
  }
  put(&ob, magic, 1, 8); put(&ob, hdr, sizeof hdr[0], 4); put(&ob, num, sizeof num[0], 4);
  put(&ob, tv.pos, sizeof(double), 3 * V); put(&ob, tv.start, sizeof(uint32_t), V + 1);
  put(&ob, bones, sizeof(uint32_t), nnz); put(&ob, tv.w, sizeof(double), nnz);
  put(&ob, c->target_surface, sizeof(float), F * V * 3); put(&ob, c->solved_surface, sizeof(float), F * V * 3);
  put(&ob, m, sizeof(double), FB * 12);
  if (sks_write_file_atomic(argv[4], ob.p, ob.n, &err) != SKS_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  free(ob.p);
  printf("%s -> %s, clip '%s': V %zu, B %zu, F %zu, D %.6g, solve %.3f ms (best of %d, threads %u), "
         "%.2f iterations/frame\n", argv[1], argv[2], c->name, V, B, F, D, best_ms, reps > 0 ? reps : 1, threads,
         c->sweeps_per_frame);
  printf("skinsolve mean |solved - y| / D = %.7f %%D (skinned vertices, kept surfaces); "
         "LBS of u with the dumped bones vs solved_surface: max %.3g D\n",
         err_pct, D > 0 ? worst / D : worst);
  free(m); free(bones); free(pal); free(models); free(bone_of);
  sks_skinview_free(&tv);
  sks_bake_result_free(&res);
  sks_model_free(&src);
  sks_model_free(&tgt);
  return 0;
}
