/* Transfer metrics (MISSION.md), always over ALL target vertices:
 *   m_fj = |y_fj - y_0j|   (motion of the source surface at target vertex j)
 *   e_fj = |skinned target vertex j at frame f - y_fj|
 *   quality = 1 - sum e / sum m,  mean error = mean e / D,  worst = max e / D.
 * The bake skins both surfaces as displacements from the same bind
 * positions in float SIMD (sks_fskin, src/skin/skin_double.c; rounding
 * relative to the motion, not to the model's size), the palettes in double;
 * sks_dskin / sks_metrics_frame are the double reference
 * (sks_bake_double_metrics). They agree to
 * 1e-5 % D per frame and 1e-6 in quality (test_metrics_float). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "skin/skin_internal.h"
#include "solve/metrics.h"

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

#if defined(__SSE2__) && !defined(SKS_NO_SIMD)
#include <emmintrin.h>
/* 4 vertices' |a - b| from 12 packed floats each (x0 y0 z0 x1 | y1 z1 x2 y2 |
 * z2 x3 y3 z3), regrouped as x / y / z lanes. */
static inline __m128 dist4(const float *a, const float *b) {
  __m128 a0 = _mm_sub_ps(_mm_loadu_ps(a), _mm_loadu_ps(b));
  __m128 a1 = _mm_sub_ps(_mm_loadu_ps(a + 4), _mm_loadu_ps(b + 4));
  __m128 a2 = _mm_sub_ps(_mm_loadu_ps(a + 8), _mm_loadu_ps(b + 8));
  __m128 u = _mm_shuffle_ps(a1, a2, _MM_SHUFFLE(0, 1, 0, 2));                       /* x2 . x3 . */
  __m128 x = _mm_shuffle_ps(a0, u, _MM_SHUFFLE(2, 0, 3, 0));                        /* x0 x1 x2 x3 */
  __m128 y = _mm_shuffle_ps(_mm_shuffle_ps(a0, a1, _MM_SHUFFLE(0, 0, 0, 1)),
                            _mm_shuffle_ps(a1, a2, _MM_SHUFFLE(0, 2, 0, 3)), _MM_SHUFFLE(2, 0, 2, 0));
  __m128 z = _mm_shuffle_ps(_mm_shuffle_ps(a0, a1, _MM_SHUFFLE(0, 1, 0, 2)),
                            _mm_shuffle_ps(a2, a2, _MM_SHUFFLE(0, 3, 0, 0)), _MM_SHUFFLE(2, 0, 2, 0));
  return _mm_sqrt_ps(_mm_add_ps(_mm_add_ps(_mm_mul_ps(x, x), _mm_mul_ps(y, y)), _mm_mul_ps(z, z)));
}
#endif

void sks_metrics_frame_f(sks_metrics_acc *acc, const float *ds, const float *dy, const float *dy0,
                         size_t vertex_count, double diagonal, float *frame_mean, float *frame_worst,
                         float *vertex_error) {
  double se = 0, sm = 0;
  float worst = 0;
  size_t j = 0;
#if defined(__SSE2__) && !defined(SKS_NO_SIMD)
  /* 4 vertices a step, sums in double lanes (no serial chain of double adds) */
  __m128d se2 = _mm_setzero_pd(), sm2 = _mm_setzero_pd();
  __m128 w4 = _mm_setzero_ps();
  for (; j + 4 <= vertex_count; j += 4) {
    __m128 e = dist4(&ds[3 * j], &dy[3 * j]), m = dist4(&dy[3 * j], &dy0[3 * j]);
    if (vertex_error) _mm_storeu_ps(&vertex_error[j], e);
    se2 = _mm_add_pd(se2, _mm_add_pd(_mm_cvtps_pd(e), _mm_cvtps_pd(_mm_movehl_ps(e, e))));
    sm2 = _mm_add_pd(sm2, _mm_add_pd(_mm_cvtps_pd(m), _mm_cvtps_pd(_mm_movehl_ps(m, m))));
    w4 = _mm_max_ps(e, w4); /* a NaN e keeps w4, as the scalar test below */
  }
  double l[2];
  _mm_storeu_pd(l, se2); se = l[0] + l[1];
  _mm_storeu_pd(l, sm2); sm = l[0] + l[1];
  float w[4];
  _mm_storeu_ps(w, w4);
  for (int q = 0; q < 4; ++q) worst = w[q] > worst ? w[q] : worst;
#endif
  for (; j < vertex_count; ++j) {
    float ex = ds[3 * j] - dy[3 * j], ey = ds[3 * j + 1] - dy[3 * j + 1], ez = ds[3 * j + 2] - dy[3 * j + 2];
    float mx = dy[3 * j] - dy0[3 * j], my = dy[3 * j + 1] - dy0[3 * j + 1], mz = dy[3 * j + 2] - dy0[3 * j + 2];
    float e = sqrtf(ex * ex + ey * ey + ez * ez), m = sqrtf(mx * mx + my * my + mz * mz);
    se += e;
    sm += m;
    worst = e > worst ? e : worst;
    if (vertex_error) vertex_error[j] = e;
  }
  acc->sum_e += se;
  acc->sum_m += sm;
  acc->count += vertex_count;
  if (worst > acc->worst) acc->worst = worst;
  if (frame_mean) *frame_mean = vertex_count ? (float)(se / (double)vertex_count / diagonal * 100.0) : 0.0f;
  if (frame_worst) *frame_worst = (float)(worst / diagonal * 100.0);
}
