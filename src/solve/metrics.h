/* Private: transfer metrics and target skinning from local transforms. */
#ifndef SKS_SOLVE_METRICS_H
#define SKS_SOLVE_METRICS_H

#include "solve/solve_internal.h"

typedef struct sks_metrics_acc {
  double sum_e, sum_m, worst;
  size_t count;
} sks_metrics_acc;

/* Skins every skinned-part vertex of target (part order) from local
 * transforms: float FK, then the palette and the blend in double. */
sks_result sks_metrics_skin_target(const sks_model *target, const sks_transform *locals,
                                   sks_mat4 *models_scratch, double *out, sks_error *err);
void sks_metrics_frame(sks_metrics_acc *acc, const double *solved, const double *y,
                       const double *y0, size_t vertex_count, double diagonal, float *frame_mean,
                       float *frame_worst, float *vertex_error);
void sks_metrics_finish(const sks_metrics_acc *acc, double diagonal, double *quality,
                        double *mean_pct, double *worst_pct);

#endif
