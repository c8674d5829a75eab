/* 3-axis scale freedom for the default solver.
 *
 * A rigid (or uniformly scaled) transform per joint cannot follow a clip
 * that keys NON-UNIFORM scale (godot_mannequiny: thigh / foot / ball joints,
 * up to 3 %): the control run of such a file missed by ~1 %D. The exact
 * model matrix of such a joint is M_parent T R diag(s); its descendants
 * inherit diag(s) through M_parent, where it is a shear in their own axes
 * (a bent knee under a stretched thigh). So the joint and its descendants
 * get a free 3x3 linear part (12 unknowns instead of 6) in the LM solve;
 * every other joint stays rigid / uniform, and a clip without non-uniform
 * scale keys solves exactly as before. Decided per clip from the source's
 * scale keys; target joints are matched to source joints by name (the
 * control: the same joint). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "skinsolve/clip.h"
#include "skinsolve/rig.h"
#include "solve/solve_internal.h"

/* The bake treats scales within 1e-5 of uniform as exporter noise
 * (bake.c denoise_scale); the same threshold here. */
static int nonuniform(const float *v) {
  double mean = ((double)v[0] + v[1] + v[2]) / 3.0;
  if (!(fabs(mean) > 0)) return 0;
  for (int k = 0; k < 3; ++k)
    if (fabs(v[k] / mean - 1.0) >= 1e-5) return 1;
  return 0;
}

static int track_nonuniform(const sks_track *tr) {
  int cubic = tr->interpolation == SKS_INTERP_CUBICSPLINE;
  for (size_t q = 0; q < tr->key_count; ++q)
    if (nonuniform(&tr->values[(cubic ? 3 * q + 1 : q) * 3])) return 1;
  return 0;
}

size_t sks_problem_mark_affine(sks_solve_problem *p, const sks_model *src, const sks_clip *clip,
                               const sks_model *tg, const int32_t *joint_bone) {
  p->affine_count = 0;
  if (!p->affine) return 0;
  memset(p->affine, 0, p->bone_count ? p->bone_count : 1);
  if (!src || !clip || !tg) return 0;
  size_t J = tg->skeleton.joint_count, SJ = src->skeleton.joint_count;
  uint8_t *free_lin = calloc(J ? J : 1, 1);
  if (!free_lin) return 0; /* out of memory: the rigid path, no crash */
  int any = 0;
  for (size_t k = 0; k < clip->track_count; ++k) {
    const sks_track *tr = &clip->tracks[k];
    if (tr->path != SKS_PATH_SCALE || tr->joint < 0 || (size_t)tr->joint >= SJ) continue;
    int rest_nu = nonuniform(&src->skeleton.rest[tr->joint].scale.x);
    if (!rest_nu && !track_nonuniform(tr)) continue;
    const char *name = src->skeleton.names ? src->skeleton.names[tr->joint] : NULL;
    if (src == tg) {
      free_lin[tr->joint] = 1;
      any = 1;
      continue;
    }
    for (size_t j = 0; name && j < J; ++j)
      if (tg->skeleton.names && tg->skeleton.names[j] && strcmp(tg->skeleton.names[j], name) == 0) {
        free_lin[j] = 1;
        any = 1;
      }
  }
  if (any) {
    /* parent-first: descendants inherit the freedom */
    for (size_t j = 0; j < J; ++j) {
      int32_t par = tg->skeleton.parents[j];
      if (par >= 0 && free_lin[par]) free_lin[j] = 1;
    }
    for (size_t j = 0; j < J; ++j) {
      int32_t b = joint_bone[j];
      if (free_lin[j] && b >= 0 && (size_t)b < p->bone_count && !p->affine[b]) {
        p->affine[b] = 1;
        p->affine_count++;
      }
    }
  }
  free(free_lin);
  return p->affine_count;
}

int sks_state_prepare_affine(const sks_solve_problem *p, sks_solve_state *st) {
  if (!p->affine_count || st->stretch) return 1;
  st->stretch = malloc((p->bone_count ? p->bone_count : 1) * 9 * sizeof(double));
  if (!st->stretch) return 0;
  for (size_t b = 0; b < p->bone_count; ++b)
    for (int k = 0; k < 9; ++k) st->stretch[9 * b + k] = k % 4 == 0 ? 1.0 : 0.0;
  return 1;
}

void sks_state_set_linear(sks_solve_state *s, size_t b, const double *L, sks_dquat near) {
  /* polar rotation: maximise tr(R^T L) = tr(R S) with S = L^T (horn.c) */
  double S[9], Rm[9];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) S[r * 3 + c] = L[c * 3 + r];
  s->q[b] = sks_horn_rotation(S, near);
  s->sc[b] = 1.0;
  sks_dq_to_m3(s->q[b], Rm);
  double *st = &s->stretch[9 * b];
  for (int i = 0; i < 3; ++i) /* stretch = R^T L */
    for (int j = 0; j < 3; ++j) st[i * 3 + j] = Rm[i] * L[j] + Rm[3 + i] * L[3 + j] + Rm[6 + i] * L[6 + j];
  memcpy(&s->R[9 * b], L, 9 * sizeof(double));
}
