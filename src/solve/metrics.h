/* Private: transfer metrics and target skinning from local transforms. */
#ifndef SKS_SOLVE_METRICS_H
#define SKS_SOLVE_METRICS_H

#include "solve/solve_internal.h"

typedef struct sks_metrics_acc {
  double sum_e, sum_m, worst;
  size_t count;
} sks_metrics_acc;

/* Double-precision skinning of every skinned-part vertex (part order). */
typedef struct sks_dskin {
  sks_daffine *ibm;      /* all skins' inverse bind matrices, concatenated */
  sks_daffine *palette;
  size_t *offset;        /* per skin */
} sks_dskin;
sks_result sks_dskin_init(sks_dskin *s, const sks_model *m);
void sks_dskin_free(sks_dskin *s);
void sks_dskin_run(sks_dskin *s, const sks_model *m, const sks_daffine *models, double *out);
/* Local -> model in double (parent-first). */
void sks_dfk(const sks_skeleton *sk, const sks_transform *locals, sks_daffine *models);
void sks_metrics_frame(sks_metrics_acc *acc, const double *solved, const double *y,
                       const double *y0, size_t vertex_count, double diagonal, float *frame_mean,
                       float *frame_worst, float *vertex_error);
/* Below this mean motion (fraction of D: 0.001% D, the control's mean-error
 * bound) a clip has no measurable motion and its quality is undefined (NaN). */
#define SKS_METRICS_MIN_MOTION 1e-5
void sks_metrics_finish(const sks_metrics_acc *acc, double diagonal, double *quality,
                        double *mean_pct, double *worst_pct);

#endif
