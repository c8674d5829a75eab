/* Transfer metrics (MISSION.md), always over ALL target vertices:
 *   m_fj = |y_fj - y_0j|   (motion of the source surface at target vertex j)
 *   e_fj = |skinned target vertex j at frame f - y_fj|
 *   quality = 1 - sum e / sum m,  mean error = mean e / D,  worst = max e / D.
 * Both surfaces are skinned in double (FK, palette, blend), so a clip that
 * barely moves is not scored by float rounding noise; the float clip written
 * out reproduces the solved surface to ~1e-7 D (tests check 1e-5 D). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "solve/metrics.h"

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

void sks_dfk(const sks_skeleton *sk, const sks_transform *locals, sks_daffine *models) {
  for (size_t j = 0; j < sk->joint_count; ++j) {
    sks_daffine l = sks_daff_from_transform(&locals[j]);
    int32_t p = sk->parents[j];
    models[j] = p >= 0 ? sks_daff_mul(&models[p], &l) : l;
  }
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

void sks_metrics_frame(sks_metrics_acc *acc, const double *solved, const double *y,
                       const double *y0, size_t vertex_count, double diagonal, float *frame_mean,
                       float *frame_worst, float *vertex_error) {
  double se = 0, worst = 0;
  for (size_t j = 0; j < vertex_count; ++j) {
    double e = sqrt(sks_d3_dist2(&solved[3 * j], &y[3 * j]));
    double m = sqrt(sks_d3_dist2(&y[3 * j], &y0[3 * j]));
    se += e;
    acc->sum_m += m;
    if (e > worst) worst = e;
    if (vertex_error) vertex_error[j] = (float)e;
  }
  acc->sum_e += se;
  acc->count += vertex_count;
  if (worst > acc->worst) acc->worst = worst;
  if (frame_mean) *frame_mean = vertex_count ? (float)(se / (double)vertex_count / diagonal * 100.0) : 0.0f;
  if (frame_worst) *frame_worst = (float)(worst / diagonal * 100.0);
}

void sks_metrics_finish(const sks_metrics_acc *acc, double diagonal, double *quality,
                        double *mean_pct, double *worst_pct) {
  /* quality = 1 - sum e / sum m is a ratio of two tiny numbers when the clip
   * does not move (X/Testwuson.X's one-frame Wuson_Bind: float noise of
   * ~5e-7 D): it then says nothing, so it is undefined (NaN, shown "n/a")
   * when the mean motion is below SKS_METRICS_MIN_MOTION of D. */
  double mean_m = acc->count ? acc->sum_m / (double)acc->count : 0.0;
  *quality = mean_m > SKS_METRICS_MIN_MOTION * diagonal ? 1.0 - acc->sum_e / acc->sum_m : NAN;
  *mean_pct = acc->count ? acc->sum_e / (double)acc->count / diagonal * 100.0 : 0.0;
  *worst_pct = acc->worst / diagonal * 100.0;
}
