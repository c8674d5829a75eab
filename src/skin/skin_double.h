/* Private: skinning for measurement. sks_dskin: every skinned-part vertex
 * in double (the reference). sks_fskin: motion (displacement) skinning in
 * float through the runtime LBS kernels, for the bake's recording and
 * metrics. */
#ifndef SKS_SKIN_DOUBLE_H
#define SKS_SKIN_DOUBLE_H

#include "skinsolve/rig.h"
#include "math/sks_math.h"
#include "math/sks_dmath.h"

/* Double-precision skinning of every skinned-part vertex (part order). */
typedef struct sks_dskin {
  sks_daffine *ibm;      /* all skins' inverse bind matrices, concatenated */
  sks_daffine *palette;
  size_t *offset;        /* per skin */
} sks_dskin;
sks_result sks_dskin_init(sks_dskin *s, const sks_model *m);
void sks_dskin_free(sks_dskin *s);
void sks_dskin_run(sks_dskin *s, const sks_model *m, const sks_daffine *models, double *out);
/* Float motion skinning of a surface given as per-vertex influence lists
 * (a skinview's, or a transfer's merged source influences): the
 * displacement from the bind position x,
 *   d_j = sum_i w_i (M_i - I) x_j,
 * through the float LBS kernels of src/skin (sks_skinning_job, AVX2 / SSE2
 * picked at run time) with the palette M - I. Skinning the displacement, not
 * the position, keeps float rounding relative to the motion (~1e-7 of |d|,
 * plus |M - I| times x's rounding), not to the model's size: a frame that
 * barely moves is not scored by rounding noise, and two surfaces skinned
 * from the same x differ by their motions' difference. Positions are taken
 * about their box centre c (the translation (M - I) c + t in double), so a
 * bind space far from its origin adds no rounding: (M - I) x would cancel
 * two large terms (a procedural rig 9 D from its origin: 1e-4 % D). Vertices with more
 * than `K` influences (K picked at init from the counts) take the rest in a
 * scalar loop. `usable` is 0 when the palette needs more than 65,535
 * entries (uint16 joint indices): the caller keeps its double path. */
typedef struct sks_fskin {
  size_t V, P;
  uint32_t K;
  int usable;
  double c[3];           /* the bind positions' box centre */
  float *x;              /* V*3: x - c */
  uint16_t *joints;      /* V*K, 0-padded */
  float *weights;        /* V*K, 0-padded */
  uint32_t *over;        /* vertices with more than K influences */
  size_t over_count;
  const uint32_t *start, *pal; /* the lists (not owned), for the rest of `over` */
  const double *w;
} sks_fskin;
sks_result sks_fskin_init(sks_fskin *s, const double *x, size_t V, const uint32_t *start, const uint32_t *pal,
                          const double *w, size_t P);
void sks_fskin_free(sks_fskin *s);
/* d (V*3) for the bind-space palette M (P entries); fpal: P float matrices,
 * the caller's scratch (threads run frames at once). Never allocates. */
void sks_fskin_run(const sks_fskin *s, const sks_daffine *M, sks_mat4 *fpal, float *d);
#endif
