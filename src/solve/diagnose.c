/* Per-joint attribution of a bake's residual: which weights hold a rig back.
 * Every target vertex belongs to its dominant joint (largest weight); a
 * joint's share is the part of sum_fj e_fj (MISSION.md's residual) that falls
 * on the vertices it dominates, and its worst vertex is the largest e there. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "skinsolve/solve.h"

void sks_diagnosis_free(sks_diagnosis *d) {
  if (!d) return;
  free(d->joints);
  memset(d, 0, sizeof *d);
}

static int by_share(const void *a, const void *b) {
  const sks_joint_diagnosis *x = a, *y = b;
  if (x->share != y->share) return x->share < y->share ? 1 : -1;
  return (x->joint > y->joint) - (x->joint < y->joint);
}

sks_result sks_diagnose(const sks_model *target, const float *solved, const float *y,
                        size_t frame_count, double diagonal, sks_diagnosis *out, sks_error *err) {
  if (!out) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_diagnose: NULL result");
  memset(out, 0, sizeof *out);
  if (!target || !solved || !y || !(diagonal > 0))
    return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_diagnose: NULL input or zero diagonal");
  size_t V = sks_model_vertex_count(target), J = target->skeleton.joint_count;
  int32_t *dom = malloc((V ? V : 1) * sizeof *dom);
  sks_joint_diagnosis *acc = calloc(J ? J : 1, sizeof *acc);
  double *sum = calloc(J ? J : 1, sizeof *sum);
  if (!dom || !acc || !sum) {
    free(dom); free(acc); free(sum);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "sks_diagnose: out of memory");
  }
  for (size_t j = 0; j < J; ++j) acc[j].worst_error_pct = -1; /* any e >= 0 replaces it */
  size_t v = 0;
  for (size_t pi = 0; pi < target->part_count; ++pi) {
    const sks_mesh_part *p = &target->parts[pi];
    if (p->skin < 0) continue;
    const sks_skin *skin = &target->skins[p->skin];
    for (size_t i = 0; i < p->vertex_count; ++i, ++v) {
      float best = 0;
      dom[v] = -1;
      for (uint32_t k = 0; k < p->influence_count; ++k) {
        float w = p->weights[i * p->influence_count + k];
        uint16_t s = p->joints[i * p->influence_count + k];
        if (w > best && s < skin->joint_count && skin->joints[s] >= 0 &&
            (size_t)skin->joints[s] < J) {
          best = w;
          dom[v] = skin->joints[s];
        }
      }
      if (dom[v] >= 0) acc[dom[v]].vertex_count++;
    }
  }
  double total = 0;
  for (size_t f = 0; f < frame_count; ++f)
    for (v = 0; v < V; ++v) {
      const float *a = &solved[(f * V + v) * 3], *b = &y[(f * V + v) * 3];
      double dx = (double)a[0] - b[0], dy = (double)a[1] - b[1], dz = (double)a[2] - b[2];
      double e = sqrt(dx * dx + dy * dy + dz * dz);
      total += e;
      if (dom[v] < 0) continue;
      sks_joint_diagnosis *d = &acc[dom[v]];
      sum[dom[v]] += e;
      if (e > d->worst_error_pct) { d->worst_error_pct = e; d->worst_vertex = v; d->worst_frame = f; }
    }
  size_t n = 0;
  for (size_t j = 0; j < J; ++j) {
    if (!acc[j].vertex_count) continue;
    sks_joint_diagnosis d = acc[j];
    d.joint = (int32_t)j;
    d.share = total > 0 ? sum[j] / total : 0;
    d.mean_error_pct = frame_count ? sum[j] / ((double)frame_count * (double)d.vertex_count) / diagonal * 100.0 : 0;
    d.worst_error_pct = d.worst_error_pct / diagonal * 100.0;
    acc[n++] = d;
  }
  qsort(acc, n, sizeof *acc, by_share);
  free(dom);
  free(sum);
  out->joints = acc;
  out->joint_count = n;
  out->total_error = total;
  return SKS_OK;
}
