/* Private: transfer metrics and target skinning from local transforms. */
#ifndef SKS_SOLVE_METRICS_H
#define SKS_SOLVE_METRICS_H

#include "solve/solve_internal.h"
#include "pose/pose_double.h"
#include "skin/skin_double.h"

typedef struct sks_metrics_acc {
  double sum_e, sum_m, worst;
  size_t count;
} sks_metrics_acc;

void sks_metrics_frame(sks_metrics_acc *acc, const double *solved, const double *y,
                       const double *y0, size_t vertex_count, double diagonal, float *frame_mean,
                       float *frame_worst, float *vertex_error);
/* Below this mean motion (fraction of D: 0.001% D, the control's mean-error
 * bound) a clip has no measurable motion and its quality is undefined (NaN). */
#define SKS_METRICS_MIN_MOTION 1e-5
/* sks_metrics_frame on displacements from the same bind positions: e =
 * |ds - dy|, m = |dy - dy0| in float per vertex, summed in double. */
void sks_metrics_frame_f(sks_metrics_acc *acc, const float *ds, const float *dy, const float *dy0,
                         size_t vertex_count, double diagonal, float *frame_mean, float *frame_worst,
                         float *vertex_error);
void sks_metrics_finish(const sks_metrics_acc *acc, double diagonal, double *quality,
                        double *mean_pct, double *worst_pct);

#endif
