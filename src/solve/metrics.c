/* Transfer metrics (MISSION.md), always over ALL target vertices:
 *   m_fj = |y_fj - y_0j|   (motion of the source surface at target vertex j)
 *   e_fj = |skinned target vertex j at frame f - y_fj|
 *   quality = 1 - sum e / sum m,  mean error = mean e / D,  worst = max e / D.
 * The solved surface is produced from the FLOAT local transforms that go into
 * the output clip (FK -> palette -> skin), so the metric measures exactly what
 * a runtime plays back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "solve/metrics.h"
#include "skinsolve/pose.h"

sks_result sks_metrics_skin_target(const sks_model *target, const sks_transform *locals,
                                   sks_mat4 *models_scratch, double *out, sks_error *err) {
  const sks_skeleton *sk = &target->skeleton;
  sks_local_to_model_job job = {sk->parents, locals, sk->joint_count, NULL, models_scratch};
  if (!sks_local_to_model_job_run(&job))
    return sks_error_set(err, SKS_ERR_INVALID, "%s: skeleton hierarchy is not parent-first",
                         target->source_path ? target->source_path : "target");
  size_t o = 0;
  for (size_t pi = 0; pi < target->part_count; ++pi) {
    const sks_mesh_part *part = &target->parts[pi];
    if (part->skin < 0) continue;
    const sks_skin *skin = &target->skins[part->skin];
    for (size_t v = 0; v < part->vertex_count; ++v, ++o) {
      double x[3] = {part->positions[3 * v], part->positions[3 * v + 1], part->positions[3 * v + 2]};
      double acc[3] = {0, 0, 0};
      for (uint32_t i = 0; i < part->influence_count; ++i) {
        float w = part->weights[v * part->influence_count + i];
        if (w == 0.0f) continue;
        uint16_t k = part->joints[v * part->influence_count + i];
        if (k >= skin->joint_count) continue;
        sks_daffine ibm = sks_daff_from_m4(&skin->inverse_bind[k]);
        sks_daffine m = sks_daff_from_m4(&models_scratch[skin->joints[k]]);
        double a[3], b[3];
        sks_daff_point(&ibm, x, a);
        sks_daff_point(&m, a, b);
        for (int c = 0; c < 3; ++c) acc[c] += w * b[c];
      }
      memcpy(&out[3 * o], acc, sizeof acc);
    }
  }
  return SKS_OK;
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
  *quality = acc->sum_m > 0 ? 1.0 - acc->sum_e / acc->sum_m : (acc->sum_e > 0 ? 0.0 : 1.0);
  *mean_pct = acc->count ? acc->sum_e / (double)acc->count / diagonal * 100.0 : 0.0;
  *worst_pct = acc->worst / diagonal * 100.0;
}
