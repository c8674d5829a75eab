/* Skinning for measurement (skin_double.h): double reference and float
 * motion skinning. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "skin/skin_internal.h"
#include "skin/skin_double.h"

sks_result sks_dskin_init(sks_dskin *s, const sks_model *m) {
  memset(s, 0, sizeof *s);
  size_t total = 0;
  for (size_t i = 0; i < m->skin_count; ++i) total += m->skins[i].joint_count;
  s->ibm = malloc((total ? total : 1) * sizeof(sks_daffine));
  s->palette = malloc((total ? total : 1) * sizeof(sks_daffine));
  s->offset = malloc((m->skin_count ? m->skin_count : 1) * sizeof(size_t));
  if (!s->ibm || !s->palette || !s->offset) { sks_dskin_free(s); return SKS_ERR_OUT_OF_MEMORY; }
  size_t o = 0;
  for (size_t i = 0; i < m->skin_count; ++i) {
    s->offset[i] = o;
    for (size_t k = 0; k < m->skins[i].joint_count; ++k)
      s->ibm[o++] = sks_daff_from_m4(&m->skins[i].inverse_bind[k]);
  }
  return SKS_OK;
}

void sks_dskin_free(sks_dskin *s) {
  free(s->ibm); free(s->palette); free(s->offset);
  memset(s, 0, sizeof *s);
}

void sks_dskin_run(sks_dskin *s, const sks_model *m, const sks_daffine *models, double *out) {
  for (size_t i = 0; i < m->skin_count; ++i) {
    const sks_skin *skin = &m->skins[i];
    for (size_t k = 0; k < skin->joint_count; ++k) {
      int32_t j = skin->joints[k];
      s->palette[s->offset[i] + k] =
          (j >= 0 && (size_t)j < m->skeleton.joint_count) ? sks_daff_mul(&models[j], &s->ibm[s->offset[i] + k])
                                                          : s->ibm[s->offset[i] + k];
    }
  }
  size_t o = 0;
  for (size_t pi = 0; pi < m->part_count; ++pi) {
    const sks_mesh_part *part = &m->parts[pi];
    if (part->skin < 0) continue;
    const sks_daffine *pal = &s->palette[s->offset[part->skin]];
    size_t nk = m->skins[part->skin].joint_count;
    uint32_t ic = part->influence_count;
    for (size_t v = 0; v < part->vertex_count; ++v, ++o) {
      double x[3] = {part->positions[3 * v], part->positions[3 * v + 1], part->positions[3 * v + 2]};
      double acc[3] = {0, 0, 0};
      for (uint32_t i = 0; i < ic; ++i) {
        float w = part->weights[v * ic + i];
        uint16_t k = part->joints[v * ic + i];
        if (w == 0.0f || k >= nk) continue;
        double b[3];
        sks_daff_point(&pal[k], x, b);
        acc[0] += w * b[0]; acc[1] += w * b[1]; acc[2] += w * b[2];
      }
      memcpy(&out[3 * o], acc, sizeof acc);
    }
  }
}

/* ---- float motion skinning (sks_fskin) ------------------------------------ */

void sks_fskin_free(sks_fskin *s) {
  if (!s) return;
  free(s->x); free(s->joints); free(s->weights); free(s->over);
  memset(s, 0, sizeof *s);
}

sks_result sks_fskin_init(sks_fskin *s, const double *x, size_t V, const uint32_t *start, const uint32_t *pal,
                          const double *w, size_t P) {
  memset(s, 0, sizeof *s);
  s->V = V;
  s->P = P;
  s->start = start;
  s->pal = pal;
  s->w = w;
  if (P == 0 || P > UINT16_MAX) return SKS_OK; /* usable = 0: the double path */
  /* K: the slot count minimising V*K kernel influences plus the rest in the
   * scalar loop (counted 16x per influence and per vertex: no SIMD, a
   * gathered palette product each; CesiumMan subdivided, 18 % of the
   * vertices on 4 influences, is faster at K = 4 than at 3) */
  size_t hist[SKS_MAX_INFLUENCES + 2] = {0}; /* counts 0..8, then > 8 */
  size_t over8 = 0;
  for (size_t j = 0; j < V; ++j) {
    size_t c = start[j + 1] - start[j];
    if (c > SKS_MAX_INFLUENCES) { hist[SKS_MAX_INFLUENCES + 1]++; over8 += c - SKS_MAX_INFLUENCES; }
    else hist[c]++;
  }
  uint32_t K = 1;
  double best = -1;
  for (uint32_t k = 1; k <= SKS_MAX_INFLUENCES; ++k) {
    double rest = 16.0 * ((double)over8 + (double)hist[SKS_MAX_INFLUENCES + 1] * (SKS_MAX_INFLUENCES - k + 1));
    for (uint32_t c = k + 1; c <= SKS_MAX_INFLUENCES; ++c) rest += 16.0 * (double)hist[c] * (c - k + 1);
    double cost = (double)V * k + rest;
    if (best < 0 || cost < best) { best = cost; K = k; }
  }
  s->K = K;
  size_t no = 0;
  for (size_t j = 0; j < V; ++j) {
    size_t c = start[j + 1] - start[j];
    if (c > K || c == 0) ++no;
  }
  s->x = malloc((V ? V : 1) * 3 * sizeof(float));
  s->joints = calloc((V ? V : 1) * K, sizeof(uint16_t));
  s->weights = calloc((V ? V : 1) * K, sizeof(float));
  s->over = malloc((no ? no : 1) * sizeof(uint32_t));
  if (!s->x || !s->joints || !s->weights || !s->over) { sks_fskin_free(s); return SKS_ERR_OUT_OF_MEMORY; }
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  for (size_t j = 0; j < V; ++j)
    for (int a = 0; a < 3; ++a) {
      double v = x[3 * j + a];
      if (j == 0 || v < lo[a]) lo[a] = v;
      if (j == 0 || v > hi[a]) hi[a] = v;
    }
  for (int a = 0; a < 3; ++a) s->c[a] = isfinite(lo[a] + hi[a]) ? 0.5 * (lo[a] + hi[a]) : 0.0;
  for (size_t j = 0; j < V; ++j) {
    for (int a = 0; a < 3; ++a) s->x[3 * j + a] = (float)(x[3 * j + a] - s->c[a]);
    size_t c = start[j + 1] - start[j];
    if (c > K || c == 0) s->over[s->over_count++] = (uint32_t)j;
    for (size_t i = 0; i < c && i < K; ++i) {
      s->joints[j * K + i] = (uint16_t)pal[start[j] + i];
      s->weights[j * K + i] = (float)w[start[j] + i];
    }
  }
  s->usable = 1;
  return SKS_OK;
}

void sks_fskin_run(const sks_fskin *s, const sks_daffine *M, sks_mat4 *fpal, float *d) {
  if (s->V == 0) return;
  for (size_t e = 0; e < s->P; ++e) { /* M - I about c, rounded once from double */
    float *m = fpal[e].m;
    double mc[3];
    sks_daff_point(&M[e], s->c, mc);
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) m[c * 4 + r] = (float)(M[e].l[r * 3 + c] - (r == c ? 1.0 : 0.0));
      m[12 + r] = (float)(mc[r] - s->c[r]);
    }
    m[3] = m[7] = m[11] = 0.0f;
    m[15] = 1.0f;
  }
  sks_skinning_job job;
  memset(&job, 0, sizeof job);
  job.method = SKS_SKIN_LBS;
  job.vertex_count = s->V;
  job.influence_count = s->K;
  job.palette = fpal;
  job.palette_count = s->P;
  job.joints = s->joints;
  job.weights = s->weights;
  job.in_positions = s->x;
  job.out_positions = d;
  job.isa = SKS_SKIN_ISA_AUTO;
  (void)sks_skinning_job_run_joints_in_range(&job); /* joints < P by construction (init) */
  for (size_t q = 0; q < s->over_count; ++q) {
    size_t j = s->over[q];
    const float *x = &s->x[3 * j];
    if (s->start[j + 1] == s->start[j]) { /* no influence: skinned to the origin, as sks_dskin */
      for (int a = 0; a < 3; ++a) d[3 * j + a] = (float)(-(double)x[a] - s->c[a]);
      continue;
    }
    for (uint32_t i = s->start[j] + s->K; i < s->start[j + 1]; ++i) {
      const float *m = fpal[s->pal[i]].m, wi = (float)s->w[i];
      for (int a = 0; a < 3; ++a) d[3 * j + a] += wi * (m[a] * x[0] + m[4 + a] * x[1] + m[8 + a] * x[2] + m[12 + a]);
    }
  }
}

