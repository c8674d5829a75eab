/* Internal interface between the skinning job (skinning.c) and its
 * instruction-set-specific kernels (skinning_avx2.c, compiled with
 * -mavx2 -mfma). Not installed. */
#ifndef SKS_SKIN_INTERNAL_H
#define SKS_SKIN_INTERNAL_H

#include <stddef.h>
#include "skinsolve/skin.h"
#include "math/sks_math.h"

/* Sanitizer builds (CI's ASan and fuzz builds) keep the kernels as plain
 * functions: the forced inlining and unrolling of every DQS variant took
 * clang -O1 with ASan + UBSan + libFuzzer over 12 minutes for skinning.c.
 * The arithmetic is the same; test_skinning compares every kernel to the
 * reference in every build. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define SKS_SANITIZED_BUILD 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(SKS_SANITIZED_BUILD)
#define SKS_SANITIZED_BUILD 1
#endif
#if defined(__GNUC__) && !defined(SKS_SANITIZED_BUILD)
#define SKS_INLINE static inline __attribute__((always_inline))
#else
#define SKS_INLINE static inline
#endif
/* A kernel variant kept out of line: with every (K, normals) variant inlined
 * into one dispatching function, GCC kept the one-vertex loops' counter on
 * the stack (a store and a reload per vertex on the loop's critical path). */
#if defined(__GNUC__)
#define SKS_NOINLINE static __attribute__((noinline))
#else
#define SKS_NOINLINE static
#endif
/* K and the block sizes are compile-time constants: unroll those loops
 * fully (the default build is -O2, which does not unroll). */
#if defined(SKS_SANITIZED_BUILD)
#define SKS_UNROLL
#elif defined(__clang__)
#define SKS_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define SKS_UNROLL _Pragma("GCC unroll 8")
#else
#define SKS_UNROLL
#endif

/* A kernel's view of the job's arrays (restrict: validation refuses
 * overlapping inputs and outputs). */
#define SKS_JOB_ARRAYS(job, a)                               \
  const uint16_t *restrict joints = (job)->joints;           \
  const float *restrict weights = (a)->w;                    \
  const float *restrict pin = (job)->in_positions;           \
  const float *restrict nin = (job)->in_normals;             \
  float *restrict pout = (job)->out_positions;               \
  float *restrict nout = (job)->out_normals

/* Resolved strides (floats / indices per vertex). */
typedef struct sks_skin_args {
  /* the weights: the job's, or (a job without weights: one influence, every
   * weight 1) a single 1.0f read at ws == 0 */
  const float *w;
  size_t js, ws, ips, ins, ops, ons;
  int normalize; /* 1: normals are renormalised (the default) */
  /* DQS antipodality, precomputed for palettes of up to SKS_FLIP_STRIDE
   * joints (or NULL): flip[a * SKS_FLIP_STRIDE + b] is -0.0f where
   * dot(r_a, r_b) < 0 (influence b blends negated against a first influence
   * a), else +0.0f. A constant row stride: the row address is a shift. */
  const float *flip;
  /* The same signs for the AVX2 kernels, as the address of the dual
   * quaternion to blend: flip_off[a * SKS_FLIP_STRIDE + b] is the byte
   * offset, in the run's dual quaternion table, of entry b, or of its
   * negation (stored at b + palette_count) where the sign is -0.0f: one
   * load an influence in place of a sign load and an xor. (-w) q and
   * w (-q) are the same floats. NULL with flip. */
  const uint16_t *flip_off;
} sks_skin_args;

enum { SKS_FLIP_STRIDE = 64 };

/* 1 when skinning_avx2.c was built with AVX2 + FMA code (x86-64 GCC/Clang);
 * whether the CPU can run it is a separate, run-time question. */
int sks_skin_avx2_compiled(void);

/* The largest of total packed joint indices (AVX2; only call when
 * sks_skin_avx2_compiled() and the CPU supports avx2). */
uint16_t sks_skin_avx2_max_index(const uint16_t *joints, size_t total);

/* AVX2 + FMA kernels: skin vertices [begin, end) of a validated job. dq is
 * the palette as dual quaternions (DQS) or NULL (LBS). Only call when
 * sks_skin_avx2_compiled() and the CPU supports avx2 and fma. */
void sks_skin_avx2_range(const sks_skinning_job *job, const sks_skin_args *a, const sks_dualquat *dq,
                         size_t begin, size_t end);

/* sks_skinning_job_run for a caller that built every joint index below
 * palette_count itself (the bake's float surfaces, solve/metrics.c): every
 * other precondition is checked as by sks_skinning_job_validate, the pass
 * over the joint indices is skipped (~3 % of a 4-influence run). */
int sks_skinning_job_run_joints_in_range(const sks_skinning_job *job);

#endif
