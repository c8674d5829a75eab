/* Per-joint attribution of a bake's residual: which weights hold a rig back.
 * Every measured target vertex belongs to its dominant joint (largest played
 * weight; a rigid part's vertices to the joint the part follows); a joint's
 * share is the part of sum_fj e_fj (MISSION.md's residual) that falls on the
 * vertices it dominates, and its worst vertex is the largest e there. The
 * bake accumulates per vertex, frame by frame (sks_diag_frame), and
 * attributes once at the end (sks_diag_finish). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "skinsolve/solve.h"
#include "solve/solve_internal.h"

void sks_diagnosis_free(sks_diagnosis *d) {
  if (!d) return;
  free(d->joints);
  memset(d, 0, sizeof *d);
}

void sks_view_dominant_joints(const sks_skinview *v, size_t count, int32_t *out) {
  for (size_t k = 0; k < count && k < v->V; ++k) {
    int32_t best = -1;
    double best_w = 0;
    for (uint32_t i = v->start[k]; i < v->start[k + 1]; ++i) {
      int32_t j = v->pal_joint[v->pal[i]];
      if (j < 0) continue;
      double w = 0; /* the joint's played weight: all its slots (two skins' entries, duplicates) */
      int seen = 0;
      for (uint32_t q = v->start[k]; q < v->start[k + 1]; ++q)
        if (v->pal_joint[v->pal[q]] == j) {
          if (q < i) { seen = 1; break; }
          w += v->w[q];
        }
      if (seen || !(w > 0)) continue;
      if (w > best_w || (w == best_w && j < best)) { best_w = w; best = j; }
    }
    out[k] = best;
  }
}

void sks_diag_free(sks_diag_acc *a) {
  if (!a) return;
  free(a->dominant); free(a->sum); free(a->worst); free(a->worst_frame);
  memset(a, 0, sizeof *a);
}

sks_result sks_diag_init(sks_diag_acc *a, const sks_skinview *v, size_t V, size_t J, sks_error *err) {
  memset(a, 0, sizeof *a);
  if (V > v->V) return sks_error_set(err, SKS_ERR_ARGUMENT, "diagnosis: %zu vertices asked, %zu measured", V, v->V);
  a->V = V;
  a->J = J;
  a->dominant = malloc((V ? V : 1) * sizeof *a->dominant);
  a->sum = calloc(V ? V : 1, sizeof *a->sum);
  a->worst = calloc(V ? V : 1, sizeof *a->worst);
  a->worst_frame = calloc(V ? V : 1, sizeof *a->worst_frame);
  if (!a->dominant || !a->sum || !a->worst || !a->worst_frame) {
    sks_diag_free(a);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "diagnosis: out of memory for %zu vertices", V);
  }
  sks_view_dominant_joints(v, V, a->dominant);
  for (size_t k = 0; k < V; ++k)
    if (a->dominant[k] >= 0 && (size_t)a->dominant[k] >= J) a->dominant[k] = -1;
  return SKS_OK;
}

void sks_diag_frame(sks_diag_acc *a, const float *e, size_t frame) {
  if (frame == 0) {
    memset(a->sum, 0, a->V * sizeof *a->sum);
    a->frames = 0;
  }
  for (size_t k = 0; k < a->V; ++k) {
    float x = isfinite(e[k]) ? e[k] : INFINITY; /* NaN counts as the worst, never hidden */
    a->sum[k] += x;
    if (frame == 0 || x > a->worst[k]) { a->worst[k] = x; a->worst_frame[k] = frame; }
  }
  a->frames++;
}

/* A chunk's accumulator: sums and worsts only (the dominant joints stay
 * with the clip's). */
sks_result sks_diag_part_init(sks_diag_acc *a, size_t V) {
  memset(a, 0, sizeof *a);
  a->V = V;
  a->sum = calloc(V ? V : 1, sizeof *a->sum);
  a->worst = calloc(V ? V : 1, sizeof *a->worst);
  a->worst_frame = calloc(V ? V : 1, sizeof *a->worst_frame);
  if (!a->sum || !a->worst || !a->worst_frame) {
    sks_diag_free(a);
    return SKS_ERR_OUT_OF_MEMORY;
  }
  return SKS_OK;
}

void sks_diag_reset(sks_diag_acc *a) {
  if (a->sum) memset(a->sum, 0, a->V * sizeof *a->sum);
  a->frames = 0;
}

#if defined(__SSE2__) && !defined(SKS_NO_SIMD)
#include <emmintrin.h>
#endif

void sks_diag_add(sks_diag_acc *a, const float *e, size_t frame) {
  size_t k = 0;
#if defined(__SSE2__) && !defined(SKS_NO_SIMD)
  /* 4 vertices a step (the scalar loop's rule: a non-finite e counts as
   * +inf; a later frame replaces the worst only when strictly larger) */
  if (a->frames > 0) {
    const __m128 inf = _mm_set1_ps(INFINITY), abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
    for (; k + 4 <= a->V; k += 4) {
      __m128 x = _mm_loadu_ps(&e[k]);
      __m128 fin = _mm_cmplt_ps(_mm_and_ps(x, abs_mask), inf); /* false for NaN and +-inf */
      x = _mm_or_ps(_mm_and_ps(fin, x), _mm_andnot_ps(fin, inf));
      _mm_storeu_pd(&a->sum[k], _mm_add_pd(_mm_loadu_pd(&a->sum[k]), _mm_cvtps_pd(x)));
      _mm_storeu_pd(&a->sum[k + 2], _mm_add_pd(_mm_loadu_pd(&a->sum[k + 2]), _mm_cvtps_pd(_mm_movehl_ps(x, x))));
      int gt = _mm_movemask_ps(_mm_cmpgt_ps(x, _mm_loadu_ps(&a->worst[k])));
      if (gt) {
        float xs[4];
        _mm_storeu_ps(xs, x);
        for (int q = 0; q < 4; ++q)
          if (gt >> q & 1) { a->worst[k + (size_t)q] = xs[q]; a->worst_frame[k + (size_t)q] = frame; }
      }
    }
  }
#endif
  for (; k < a->V; ++k) {
    float x = isfinite(e[k]) ? e[k] : INFINITY; /* NaN counts as the worst, never hidden */
    a->sum[k] += x;
    if (a->frames == 0 || x > a->worst[k]) { a->worst[k] = x; a->worst_frame[k] = frame; }
  }
  a->frames++;
}

void sks_diag_merge(sks_diag_acc *a, const sks_diag_acc *part) {
  if (!part->frames) return;
  for (size_t k = 0; k < a->V && k < part->V; ++k) {
    a->sum[k] += part->sum[k];
    /* parts come in frame order: on a tie the earlier frame stays, as in sks_diag_frame */
    if (a->frames == 0 || part->worst[k] > a->worst[k]) { a->worst[k] = part->worst[k]; a->worst_frame[k] = part->worst_frame[k]; }
  }
  a->frames += part->frames;
}

static int by_share(const void *pa, const void *pb) {
  const sks_joint_diagnosis *x = pa, *y = pb;
  if (x->share != y->share) return x->share < y->share ? 1 : -1;
  return (x->joint > y->joint) - (x->joint < y->joint);
}

sks_result sks_diag_finish(const sks_diag_acc *a, double diagonal, sks_diagnosis *out, sks_error *err) {
  memset(out, 0, sizeof *out);
  size_t J = a->J;
  sks_joint_diagnosis *acc = calloc(J ? J : 1, sizeof *acc);
  double *sum = calloc(J ? J : 1, sizeof *sum);
  if (!acc || !sum) {
    free(acc); free(sum);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "diagnosis: out of memory");
  }
  double total = 0, unattributed = 0;
  for (size_t k = 0; k < a->V; ++k) {
    total += a->sum[k];
    int32_t j = a->dominant[k];
    if (j < 0) { unattributed += a->sum[k]; out->unattributed_vertex_count++; continue; }
    sks_joint_diagnosis *d = &acc[j];
    /* worst: the first vertex (lowest index) holding the joint's largest e */
    if (!d->vertex_count || a->worst[k] > d->worst_error_pct) {
      d->worst_error_pct = a->worst[k];
      d->worst_vertex = k;
      d->worst_frame = a->worst_frame[k];
    }
    d->vertex_count++;
    sum[j] += a->sum[k];
  }
  size_t n = 0;
  double F = (double)a->frames;
  for (size_t j = 0; j < J; ++j) {
    if (!acc[j].vertex_count) continue;
    sks_joint_diagnosis d = acc[j];
    d.joint = (int32_t)j;
    d.share = total > 0 ? sum[j] / total : 0;
    d.mean_error_pct = F > 0 ? sum[j] / (F * (double)d.vertex_count) / diagonal * 100.0 : 0;
    d.worst_error_pct = d.worst_error_pct / diagonal * 100.0;
    acc[n++] = d;
  }
  qsort(acc, n, sizeof *acc, by_share);
  free(sum);
  out->joints = acc;
  out->joint_count = n;
  out->total_error = total;
  out->vertex_count = a->V;
  out->unattributed_share = total > 0 ? unattributed / total : 0;
  return SKS_OK;
}

sks_result sks_dominant_joints(const sks_model *model, int32_t *out, size_t count, sks_error *err) {
  if (!model || (!out && count))
    return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_dominant_joints: NULL input");
  sks_skinview v;
  sks_result r = sks_skinview_build(model, model->source_path ? model->source_path : "model", &v, err);
  if (r != SKS_OK) return r;
  if (count > v.V) {
    sks_skinview_free(&v);
    return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_dominant_joints: %zu vertices asked, the model has %zu",
                         count, v.V);
  }
  sks_view_dominant_joints(&v, count, out);
  sks_skinview_free(&v);
  return SKS_OK;
}

sks_result sks_diagnose(const sks_model *target, const float *solved, const float *y,
                        size_t frame_count, double diagonal, sks_diagnosis *out, sks_error *err) {
  if (!out) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_diagnose: NULL result");
  memset(out, 0, sizeof *out);
  if (!target || !solved || !y || !(diagonal > 0))
    return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_diagnose: NULL input or zero diagonal");
  size_t V = sks_model_vertex_count(target);
  sks_skinview v;
  sks_result r = sks_skinview_build(target, target->source_path ? target->source_path : "target", &v, err);
  if (r != SKS_OK) return r;
  if (v.skinned_vertex_count != V) {
    sks_skinview_free(&v);
    return sks_error_set(err, SKS_ERR_INVALID, "sks_diagnose: a part names a skin out of range");
  }
  sks_diag_acc a;
  r = sks_diag_init(&a, &v, V, target->skeleton.joint_count, err);
  sks_skinview_free(&v);
  if (r != SKS_OK) return r;
  float *e = malloc((V ? V : 1) * sizeof *e);
  if (!e) { sks_diag_free(&a); return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "sks_diagnose: out of memory"); }
  for (size_t f = 0; f < frame_count; ++f) {
    for (size_t k = 0; k < V; ++k) {
      const float *p = &solved[(f * V + k) * 3], *q = &y[(f * V + k) * 3];
      double dx = (double)p[0] - q[0], dy = (double)p[1] - q[1], dz = (double)p[2] - q[2];
      e[k] = (float)sqrt(dx * dx + dy * dy + dz * dz);
    }
    sks_diag_frame(&a, e, f);
  }
  r = sks_diag_finish(&a, diagonal, out, err);
  free(e);
  sks_diag_free(&a);
  return r;
}
