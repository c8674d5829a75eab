/* skinsolve — skinning kernels: linear blend (LBS) and dual quaternion (DQS),
 * plus static pre-transform (seed 002). Runtime skinning is float. */
#ifndef SKINSOLVE_SKIN_H
#define SKINSOLVE_SKIN_H

#include "common.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sks_skinning_method { SKS_SKIN_LBS = 0, SKS_SKIN_DQS } sks_skinning_method;

/* Which kernels run() and run_parallel() use. AUTO (0, the default) picks at
 * run time the best the CPU supports: AVX2 + FMA when it reports both (and
 * the build is x86-64 GCC/Clang), else SSE2 (any x86-64), else portable C
 * (SCALAR: the per-influence-count C loops, not run_reference). Forcing an
 * ISA the CPU lacks makes validate fail. */
typedef enum sks_skinning_isa {
  SKS_SKIN_ISA_AUTO = 0,
  SKS_SKIN_ISA_SCALAR,
  SKS_SKIN_ISA_SSE2,
  SKS_SKIN_ISA_AVX2
} sks_skinning_isa;

/* 1 if `isa` can run on this CPU in this build (AUTO and SCALAR always). */
int sks_skinning_isa_available(sks_skinning_isa isa);
/* The ISA a job with `isa` runs: AUTO resolved as above, others unchanged. */
sks_skinning_isa sks_skinning_isa_resolve(sks_skinning_isa isa);

/* Skins vertex_count vertices with influence_count influences each.
 * Strides are in floats (0 = tightly packed: 3 for positions/normals,
 * influence_count for joints/weights). Normals are optional (both in and out
 * NULL). Weights are used as given (sum to 1 expected; not renormalised).
 * DQS applies the antipodality fix against the first influence's quaternion
 * and expects rigid (rotation + translation) palette matrices; scale in the
 * palette is ignored by DQS. Outputs must not overlap the inputs (validate
 * rejects in-place skinning); positions and normals may share one
 * interleaved output buffer. LBS normals use the blended 3x3 (not its
 * inverse transpose): exact for rotation + uniform scale palettes. */
typedef struct sks_skinning_job {
  sks_skinning_method method;
  size_t vertex_count;
  uint32_t influence_count;       /* 1..SKS_MAX_INFLUENCES */
  /* Any float alignment. The SIMD kernels read a matrix as 32-byte halves:
   * a palette off a 32-byte boundary (malloc gives 16) is copied per run
   * into an aligned stack table when it has at most 512 entries and the job
   * 8 vertices per entry, else read where it is, with split loads (~15 %
   * slower). */
  const sks_mat4 *palette;
  size_t palette_count;
  const uint16_t *joints;  size_t joints_stride;
  /* NULL allowed with influence_count 1: every weight 1 (a rigid-skinned
   * mesh needs no weights array; ozz's SkinningJob reads none for one
   * influence either); the same floats as an array of 1.0, no weight loads */
  const float *weights;    size_t weights_stride;
  const float *in_positions;  size_t in_positions_stride;
  const float *in_normals;    size_t in_normals_stride;   /* optional */
  float *out_positions;       size_t out_positions_stride;
  float *out_normals;         size_t out_normals_stride;  /* optional */
  /* Kernels to use (0 = AUTO). */
  sks_skinning_isa isa;
  /* 0 (default): output normals are renormalised to unit length (to ~1e-6
   * in the SIMD kernels: rsqrt + one Newton step; normals shorter than
   * ~1e-19 come out zero). 1: normals are the blended 3x3 (LBS) or the
   * rotation (DQS) applied as is, which saves the normalisation. */
  int skip_normalize;
} sks_skinning_job;

int sks_skinning_job_validate(const sks_skinning_job *job);
/* Optimised kernels (per-influence-count paths). */
int sks_skinning_job_run(const sks_skinning_job *job);
/* Scalar reference implementation, for tests. */
int sks_skinning_job_run_reference(const sks_skinning_job *job);
/* Splits the vertex range over thread_count threads (0 = all cores),
 * started and joined in this call. */
int sks_skinning_job_run_parallel(const sks_skinning_job *job, unsigned thread_count);
/* The same on the caller's persistent pool (sks_thread_pool_create): no
 * thread start per call, so it pays off on every frame. The vertex range is
 * split into one piece per pool thread (at least 2048 vertices each), piece
 * edges on multiples of 16 vertices (whole 64-byte lines of packed outputs,
 * so no two threads write one cache line). Nothing allocates. */
int sks_skinning_job_run_pool(const sks_skinning_job *job, sks_thread_pool *pool);

/* Convenience: skins every part of a model given skeleton model matrices.
 * Skinned parts via their skin's palette; rigid parts by their node's model
 * matrix. Writes positions (and normals if out_normals != NULL) of all parts
 * concatenated in part order (3 floats per vertex). Allocates a palette
 * internally (this is not a job). Single-threaded. Parts without normals get
 * zero normals when out_normals != NULL. */
sks_result sks_skin_model(const sks_model *model, const sks_mat4 *models,
                          sks_skinning_method method, float *out_positions,
                          float *out_normals, sks_error *err);

/* Total vertex count over ALL parts (skinned + rigid), the size the
 * out arrays of sks_skin_model need / 3. */
size_t sks_model_total_vertex_count(const sks_model *model);

/* Static pre-transform (seed 002): bakes the pose given by `models` into every
 * part's vertices and removes skins, so the model never needs the hierarchy
 * again. Parts become rigid parts of a root node with identity transform. */
sks_result sks_pretransform_static(sks_model *model, const sks_mat4 *models, sks_error *err);

#ifdef __cplusplus
}
#endif
#endif
