/* Skinning job: linear blend skinning (LBS) and dual quaternion skinning (DQS).
 *
 * LBS:  M = sum_i w_i * palette[j_i];  p' = M p;  n' = normalize(M3x3 n).
 *       Normals use the blended 3x3 itself, not its inverse transpose: the
 *       two agree for rigid (rotation + uniform scale) palettes, which is what
 *       animation rigs produce; a palette with non-uniform scale would need
 *       the inverse transpose (not done here, as in most runtimes).
 * DQS:  each palette matrix -> unit dual quaternion (rotation from the 3x3
 *       with its columns normalised, so scale is ignored; translation from
 *       column 3). Quaternions whose real part points away from the first
 *       influence's (dot < 0) are negated (antipodality), the weighted sum is
 *       divided by the norm of its real part, then
 *         p' = r p r* + t,  t = 2 (r.w d.v - d.w r.v + r.v x d.v),
 *         n' = r n r*.
 *
 * run_reference() is the plain per-vertex formula (DQS converts each
 * influence's matrix per vertex). run() uses separate loops per influence
 * count (1..8) and with/without normals (compile-time constants, so each is
 * fully unrolled). LBS blends the 3x4 part of the palette matrices: with SSE2
 * as four column vectors (normals normalised 4 vertices at a time), else as
 * 12 scalars; one influence with SSE2 has its own loop (lbs1_sse2: 4
 * vertices a block, palettes of up to 256 joints through a per-call stack
 * table of each 3x3 by diagonals). DQS converts the palette to dual quaternions once per run into
 * a stack table (palettes of up to SKS_DQ_TABLE joints; larger palettes use
 * the reference loop) and, with SSE2, skins 4 vertices per step in SSE lanes.
 * The kernels are chosen per call (job.isa, AUTO = the best the CPU runs:
 * AVX2 + FMA from skinning_avx2.c when __builtin_cpu_supports says so, else
 * the SSE2 kernels here, else the portable C ones); nothing is cached in
 * global state. For the AVX2 and SSE2 DQS kernels, palettes of up to SKS_FLIP_TABLE
 * joints also get a per-run table of antipodality signs (flip_table; for
 * AVX2 as the offset of the entry or of its negation, stored after the
 * palette in the same stack table). An LBS
 * palette off a 32-byte boundary is read from an aligned per-run copy when
 * it has at most SKS_DQ_TABLE / 2 entries and the job 8 vertices per entry
 * (lbs_palette: the same floats, no split loads).
 * Build with -DSKS_NO_SIMD to drop the SSE2 paths (C paths tested to agree).
 * run_parallel() splits the vertex range over pthreads (thread structs on the
 * stack, at most SKS_MAX_THREADS, at least SKS_MIN_VERTICES_PER_THREAD
 * vertices each). Nothing allocates. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "skinsolve/skin.h"
#include "math/sks_math.h"
#include "skin/skin_internal.h"
#if defined(__SSE2__) && !defined(SKS_NO_SIMD)
#include <emmintrin.h>
#endif

enum { SKS_DQ_TABLE = 1024, SKS_FLIP_TABLE = SKS_FLIP_STRIDE, SKS_MAX_THREADS = 64, SKS_MIN_VERTICES_PER_THREAD = 2048 };

typedef sks_skin_args skin_args;

/* A run's DQS antipodality table (flip_table): signs for the SSE2 kernels,
 * dual quaternion offsets for the AVX2 ones. */
typedef union flip_store {
  float f[SKS_FLIP_TABLE * SKS_FLIP_TABLE];
  uint16_t off[SKS_FLIP_TABLE * SKS_FLIP_TABLE];
} flip_store;
typedef union skin_table skin_table;

static const float unit_weight = 1.0f;

static skin_args resolve(const sks_skinning_job *job) {
  skin_args a;
  a.js = job->joints_stride ? job->joints_stride : job->influence_count;
  /* no weights (one influence): every weight 1, read from one float at stride 0 */
  a.w = job->weights ? job->weights : &unit_weight;
  a.ws = !job->weights ? 0 : job->weights_stride ? job->weights_stride : job->influence_count;
  a.ips = job->in_positions_stride ? job->in_positions_stride : 3;
  a.ins = job->in_normals_stride ? job->in_normals_stride : 3;
  a.ops = job->out_positions_stride ? job->out_positions_stride : 3;
  a.ons = job->out_normals_stride ? job->out_normals_stride : 3;
  a.normalize = !job->skip_normalize;
  a.flip = NULL;
  a.flip_off = NULL;
  return a;
}

/* Byte range [lo, hi) touched by a strided float buffer of n vertices. */
static void span(const void *p, size_t n, size_t stride_floats, size_t width, uintptr_t *lo, uintptr_t *hi) {
  *lo = (uintptr_t)p;
  *hi = *lo + ((n - 1) * stride_floats + width) * sizeof(float);
}

/* Whether two strided 3-float buffers share any float. Interleaved buffers
 * (same stride, disjoint 3-float windows) do not. */
static int overlaps(const void *a, size_t as, const void *b, size_t bs, size_t n) {
  uintptr_t alo, ahi, blo, bhi;
  span(a, n, as, 3, &alo, &ahi);
  span(b, n, bs, 3, &blo, &bhi);
  if (!(alo < bhi && blo < ahi)) return 0;
  if (as != bs || n == 1) return 1;
  uintptr_t diff = alo < blo ? blo - alo : alo - blo;
  if (diff % sizeof(float)) return 1;
  size_t d = (size_t)(diff / sizeof(float)) % as; /* offset of one window inside the other's stride */
  return d < 3 || d + 3 > as;
}

static int cpu_has_avx2_fma(void);

/* 1 if every joint index (k per vertex, stride js) is < pc. Packed indices:
 * their largest with AVX2 (sks_skin_avx2_max_index) when the CPU has it and
 * there are 256 or more, else 8 at a time with SSE2: saturating
 * (j - (pc - 1)) is non-zero iff j >= pc. */
static int joints_in_range(const uint16_t *joints, size_t n, size_t js, uint32_t k, uint16_t pc) {
  if (js == k) {
    const size_t total = n * k;
    if (total >= 256 && cpu_has_avx2_fma()) return sks_skin_avx2_max_index(joints, total) < pc;
    size_t i = 0;
#if defined(__SSE2__) && !defined(SKS_NO_SIMD)
    const __m128i limit = _mm_set1_epi16((short)(uint16_t)(pc - 1));
    __m128i bad = _mm_setzero_si128();
    for (; i + 8 <= total; i += 8)
      bad = _mm_or_si128(bad, _mm_subs_epu16(_mm_loadu_si128((const __m128i *)(const void *)(joints + i)), limit));
    if (_mm_movemask_epi8(_mm_cmpeq_epi16(bad, _mm_setzero_si128())) != 0xFFFF) return 0;
#endif
    uint16_t mx = 0;
    for (; i < total; ++i) mx = joints[i] > mx ? joints[i] : mx;
    return mx < pc;
  }
  for (size_t v = 0; v < n; ++v) {
    const uint16_t *j = joints + v * js;
    for (uint32_t i = 0; i < k; ++i)
      if (j[i] >= pc) return 0;
  }
  return 1;
}

/* Every precondition but the joint indices' range. */
static int validate_shape(const sks_skinning_job *job) {
  if (!job) return 0;
  if (job->method != SKS_SKIN_LBS && job->method != SKS_SKIN_DQS) return 0;
  if (job->influence_count < 1 || job->influence_count > SKS_MAX_INFLUENCES) return 0;
  if (job->isa < SKS_SKIN_ISA_AUTO || job->isa > SKS_SKIN_ISA_AVX2 || !sks_skinning_isa_available(job->isa)) return 0;
  if (job->vertex_count == 0) return 1;
  if (!job->palette || job->palette_count == 0) return 0;
  if (!job->joints || !job->in_positions || !job->out_positions) return 0;
  if (!job->weights && job->influence_count != 1) return 0; /* only one influence may leave them out */
  if ((job->in_normals == NULL) != (job->out_normals == NULL)) return 0;
  const skin_args a = resolve(job);
  if (a.js < job->influence_count || (job->weights && a.ws < job->influence_count)) return 0;
  if (a.ips < 3 || a.ops < 3) return 0;
  if (job->in_normals && (a.ins < 3 || a.ons < 3)) return 0;
  /* Outputs must not overlap inputs or each other (kernels use restrict). */
  const size_t n = job->vertex_count;
  if (overlaps(job->out_positions, a.ops, job->in_positions, a.ips, n)) return 0;
  if (job->in_normals) {
    if (overlaps(job->out_normals, a.ons, job->in_normals, a.ins, n)) return 0;
    if (overlaps(job->out_normals, a.ons, job->in_positions, a.ips, n)) return 0;
    if (overlaps(job->out_positions, a.ops, job->in_normals, a.ins, n)) return 0;
    if (overlaps(job->out_positions, a.ops, job->out_normals, a.ons, n)) return 0;
  }
  return 1;
}

int sks_skinning_job_validate(const sks_skinning_job *job) {
  if (!validate_shape(job)) return 0;
  if (job->vertex_count == 0) return 1;
  /* Every joint index must address the palette. */
  if (job->palette_count > UINT16_MAX) return 1; /* any uint16_t does */
  const skin_args a = resolve(job);
  return joints_in_range(job->joints, job->vertex_count, a.js, job->influence_count, (uint16_t)job->palette_count);
}

/* ---- dual quaternions ---------------------------------------------------- */

static sks_dualquat dq_from_matrix(const sks_mat4 *m) {
  const float *e = m->m;
  sks_vec3 c0 = sks_v3_normalize(sks_v3(e[0], e[1], e[2]));
  sks_vec3 c1 = sks_v3_normalize(sks_v3(e[4], e[5], e[6]));
  sks_vec3 c2 = sks_v3_normalize(sks_v3(e[8], e[9], e[10]));
  sks_quat r = sks_q_from_rotation3(c0.x, c1.x, c2.x, c0.y, c1.y, c2.y, c0.z, c1.z, c2.z);
  const float tx = e[12], ty = e[13], tz = e[14];
  /* d = 0.5 * (t, 0) * r */
  sks_dualquat dq;
  dq.r = r;
  dq.d = sks_q(0.5f * (r.w * tx + ty * r.z - tz * r.y), 0.5f * (r.w * ty + tz * r.x - tx * r.z),
               0.5f * (r.w * tz + tx * r.y - ty * r.x), -0.5f * (tx * r.x + ty * r.y + tz * r.z));
  return dq;
}

/* ---- reference ----------------------------------------------------------- */

static void reference_range(const sks_skinning_job *job, size_t begin, size_t end) {
  const skin_args a = resolve(job);
  const uint32_t k = job->influence_count;
  for (size_t v = begin; v < end; ++v) {
    const uint16_t *jv = job->joints + v * a.js;
    const float *wv = a.w + v * a.ws;
    const float *pin = job->in_positions + v * a.ips;
    const sks_vec3 p = sks_v3(pin[0], pin[1], pin[2]);
    sks_vec3 n = sks_v3(0, 0, 0), po, no = sks_v3(0, 0, 0);
    if (job->in_normals) {
      const float *nin = job->in_normals + v * a.ins;
      n = sks_v3(nin[0], nin[1], nin[2]);
    }
    if (job->method == SKS_SKIN_LBS) {
      sks_mat4 m;
      memset(&m, 0, sizeof m);
      for (uint32_t i = 0; i < k; ++i) {
        const sks_mat4 *pm = &job->palette[jv[i]];
        for (int e = 0; e < 16; ++e) m.m[e] += wv[i] * pm->m[e];
      }
      po = sks_m4_point(&m, p);
      if (job->in_normals) {
        no = sks_m4_vector(&m, n);
        if (!job->skip_normalize) no = sks_v3_normalize(no);
      }
    } else {
      sks_dualquat q0 = dq_from_matrix(&job->palette[jv[0]]);
      sks_quat r = sks_q(0, 0, 0, 0), d = sks_q(0, 0, 0, 0);
      for (uint32_t i = 0; i < k; ++i) {
        sks_dualquat q = i == 0 ? q0 : dq_from_matrix(&job->palette[jv[i]]);
        float w = wv[i];
        if (sks_q_dot(q0.r, q.r) < 0.0f) w = -w;
        r = sks_q(r.x + w * q.r.x, r.y + w * q.r.y, r.z + w * q.r.z, r.w + w * q.r.w);
        d = sks_q(d.x + w * q.d.x, d.y + w * q.d.y, d.z + w * q.d.z, d.w + w * q.d.w);
      }
      const float len = sqrtf(sks_q_dot(r, r));
      const float inv = len > 0.0f ? 1.0f / len : 0.0f;
      r = sks_q(r.x * inv, r.y * inv, r.z * inv, r.w * inv);
      d = sks_q(d.x * inv, d.y * inv, d.z * inv, d.w * inv);
      const sks_vec3 rv = sks_v3(r.x, r.y, r.z), dv = sks_v3(d.x, d.y, d.z);
      sks_vec3 t = sks_v3_scale(sks_v3_add(sks_v3_sub(sks_v3_scale(dv, r.w), sks_v3_scale(rv, d.w)),
                                           sks_v3_cross(rv, dv)), 2.0f);
      po = sks_v3_add(sks_q_rotate(r, p), t);
      if (job->in_normals) {
        no = sks_q_rotate(r, n);
        if (!job->skip_normalize) no = sks_v3_normalize(no);
      }
    }
    float *pout = job->out_positions + v * a.ops;
    pout[0] = po.x; pout[1] = po.y; pout[2] = po.z;
    if (job->in_normals) {
      float *nout = job->out_normals + v * a.ons;
      nout[0] = no.x; nout[1] = no.y; nout[2] = no.z;
    }
  }
}

int sks_skinning_job_run_reference(const sks_skinning_job *job) {
  if (!sks_skinning_job_validate(job)) return 0;
  reference_range(job, 0, job->vertex_count);
  return 1;
}

#if defined(__SSE2__) && !defined(SKS_NO_SIMD)
/* Stores x, y, z of r (not the 4th lane: the buffer may end there). */
static inline void store3(float *o, __m128 r) {
  _mm_storel_pi((__m64 *)(void *)o, r);
  _mm_store_ss(o + 2, _mm_movehl_ps(r, r));
}

/* 4 vectors x, y, z (one register each) to 4 packed (stride 3) ones. */
SKS_INLINE void store3x4(float *p, __m128 x, __m128 y, __m128 z) {
  const __m128 lo = _mm_unpacklo_ps(x, y), hi = _mm_unpackhi_ps(x, y); /* x0 y0 x1 y1, x2 y2 x3 y3 */
  const __m128 p01 = _mm_shuffle_ps(z, lo, _MM_SHUFFLE(3, 2, 1, 0)); /* z0 z1 x1 y1 */
  const __m128 r23 = _mm_shuffle_ps(z, hi, _MM_SHUFFLE(3, 2, 3, 2)); /* z2 z3 x3 y3 */
  _mm_storeu_ps(p, _mm_shuffle_ps(lo, p01, _MM_SHUFFLE(2, 0, 1, 0)));
  _mm_storeu_ps(p + 4, _mm_shuffle_ps(p01, hi, _MM_SHUFFLE(1, 0, 1, 3)));
  _mm_storeu_ps(p + 8, _mm_shuffle_ps(r23, r23, _MM_SHUFFLE(1, 3, 2, 0)));
}

/* 1/sqrt(l2) to ~1e-7 relative (rsqrt estimate + one Newton step); 0 where
 * l2 <= FLT_MIN (zero-length normals stay zero). */
SKS_INLINE __m128 rsqrt_nr_sse2(__m128 l2) {
  const __m128 y = _mm_rsqrt_ps(l2);
  const __m128 hl = _mm_mul_ps(_mm_set1_ps(0.5f), l2);
  const __m128 r = _mm_mul_ps(y, _mm_sub_ps(_mm_set1_ps(1.5f), _mm_mul_ps(hl, _mm_mul_ps(y, y))));
  return _mm_and_ps(r, _mm_cmpgt_ps(l2, _mm_set1_ps(FLT_MIN)));
}

/* One LBS vertex: blends the K palette columns as __m128 (the 4th row is
 * carried along and ignored), stores the position, and returns the
 * un-normalised blended normal (when n != NULL). One influence: the matrix
 * is used as loaded and the weight scales the results (12 multiplies fewer). */
SKS_INLINE __m128 lbs_one(const sks_mat4 *restrict palette, const uint16_t *restrict jv,
                          const float *restrict wv, const float *restrict p, const float *restrict n,
                          float *restrict po, const uint32_t K) {
  const float *m0 = palette[jv[0]].m;
  __m128 w = _mm_set1_ps(wv[0]);
  __m128 c0, c1, c2, c3;
  if (K == 1) {
    c0 = _mm_loadu_ps(m0 + 0); c1 = _mm_loadu_ps(m0 + 4); c2 = _mm_loadu_ps(m0 + 8); c3 = _mm_loadu_ps(m0 + 12);
  } else {
    c0 = _mm_mul_ps(w, _mm_loadu_ps(m0 + 0)); c1 = _mm_mul_ps(w, _mm_loadu_ps(m0 + 4));
    c2 = _mm_mul_ps(w, _mm_loadu_ps(m0 + 8)); c3 = _mm_mul_ps(w, _mm_loadu_ps(m0 + 12));
  }
  for (uint32_t i = 1; i < K; ++i) {
    const float *mi = palette[jv[i]].m;
    w = _mm_set1_ps(wv[i]);
    c0 = _mm_add_ps(c0, _mm_mul_ps(w, _mm_loadu_ps(mi + 0)));
    c1 = _mm_add_ps(c1, _mm_mul_ps(w, _mm_loadu_ps(mi + 4)));
    c2 = _mm_add_ps(c2, _mm_mul_ps(w, _mm_loadu_ps(mi + 8)));
    c3 = _mm_add_ps(c3, _mm_mul_ps(w, _mm_loadu_ps(mi + 12)));
  }
  __m128 r = _mm_add_ps(_mm_add_ps(_mm_mul_ps(c0, _mm_set1_ps(p[0])), _mm_mul_ps(c1, _mm_set1_ps(p[1]))),
                        _mm_add_ps(_mm_mul_ps(c2, _mm_set1_ps(p[2])), c3));
  if (K == 1) r = _mm_mul_ps(r, w);
  store3(po, r);
  if (!n) return _mm_setzero_ps();
  __m128 q = _mm_add_ps(_mm_add_ps(_mm_mul_ps(c0, _mm_set1_ps(n[0])), _mm_mul_ps(c1, _mm_set1_ps(n[1]))),
                        _mm_mul_ps(c2, _mm_set1_ps(n[2])));
  if (K == 1) q = _mm_mul_ps(q, w);
  return q;
}
#endif

/* ---- optimised LBS --------------------------------------------------------
 * K (influences) and N (normals) are compile-time constants at every call
 * site below, so each of the 16 variants is its own fully unrolled loop. */

#if defined(__SSE2__) && !defined(SKS_NO_SIMD)
SKS_INLINE void lbs_kernel_sse2(const sks_skinning_job *job, const skin_args *a, size_t begin, size_t end,
                                const uint32_t K, const int N) {
  const sks_mat4 *restrict palette = job->palette;
  SKS_JOB_ARRAYS(job, a);
  const size_t js = a->js, ws = a->ws, ips = a->ips, ins = a->ins, ops = a->ops, ons = a->ons;
  size_t v = begin;
  if (N) {
    /* Blocks of 4 vertices: normals are normalised 4-wide after a transpose. */
    const __m128 one = _mm_set1_ps(1.0f);
    for (; v + 4 <= end; v += 4) {
      __m128 q0 = lbs_one(palette, joints + v * js, weights + v * ws, pin + v * ips, nin + v * ins, pout + v * ops, K);
      __m128 q1 = lbs_one(palette, joints + (v + 1) * js, weights + (v + 1) * ws, pin + (v + 1) * ips,
                          nin + (v + 1) * ins, pout + (v + 1) * ops, K);
      __m128 q2 = lbs_one(palette, joints + (v + 2) * js, weights + (v + 2) * ws, pin + (v + 2) * ips,
                          nin + (v + 2) * ins, pout + (v + 2) * ops, K);
      __m128 q3 = lbs_one(palette, joints + (v + 3) * js, weights + (v + 3) * ws, pin + (v + 3) * ips,
                          nin + (v + 3) * ins, pout + (v + 3) * ops, K);
      _MM_TRANSPOSE4_PS(q0, q1, q2, q3); /* q0 = x of 4 vertices, q1 = y, q2 = z */
      const __m128 l2 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(q0, q0), _mm_mul_ps(q1, q1)), _mm_mul_ps(q2, q2));
      const __m128 sc = a->normalize ? rsqrt_nr_sse2(l2) : one;
      q0 = _mm_mul_ps(q0, sc); q1 = _mm_mul_ps(q1, sc); q2 = _mm_mul_ps(q2, sc);
      if (ons == 3) { /* packed: 3 stores, no transpose back */
        store3x4(nout + v * 3, q0, q1, q2);
        continue;
      }
      _MM_TRANSPOSE4_PS(q0, q1, q2, q3);
      store3(nout + v * ons, q0);
      store3(nout + (v + 1) * ons, q1);
      store3(nout + (v + 2) * ons, q2);
      store3(nout + (v + 3) * ons, q3);
    }
  }
  for (; v < end; ++v) {
    __m128 q = lbs_one(palette, joints + v * js, weights + v * ws, pin + v * ips, N ? nin + v * ins : NULL,
                       pout + v * ops, K);
    if (N) {
      if (a->normalize) { /* the blocks' arithmetic: results do not depend on where a range starts */
        const __m128 x = _mm_shuffle_ps(q, q, 0x00), y = _mm_shuffle_ps(q, q, 0x55), z = _mm_shuffle_ps(q, q, 0xAA);
        q = _mm_mul_ps(q, rsqrt_nr_sse2(_mm_add_ps(_mm_add_ps(_mm_mul_ps(x, x), _mm_mul_ps(y, y)), _mm_mul_ps(z, z))));
      }
      store3(nout + v * ons, q);
    }
  }
  (void)ins; (void)ons; (void)nin; (void)nout;
}

/* One influence, 4 vertices a block (the scheme of lbs1_loop in
 * skinning_avx2.c, 4 wide and without FMA). Each vertex's coordinates are
 * one 4-float load p = [x y z _]; the weight multiplies every result.
 * TAB (palettes of up to SKS_LBS1_TABLE joints): a stack table holds each
 * matrix's 3x3 by diagonals, d0 = [m00 m11 m22 0], d1 = [m01 m12 m20 0],
 * d2 = [m02 m10 m21 0], and its column 3, so the point is
 * (d0 p + d1 [y z x]) + (d2 [z x y] + c3): 2 shuffles and 3 aligned
 * memory-operand multiplies, not 3 splats of p and 4 unaligned loads of the
 * matrix. Without the table the matrix is used as loaded, c0 x + c1 y + c2 z
 * + c3 with x, y, z splat from p (the same association as lbs_one).
 * Packed positions are stored as one 4-float store per vertex in ascending
 * order, each overwriting the previous vertex's 4th lane (the last one's is
 * vertex v + 4's first float, which a later block or the tail stores again);
 * strided outputs as 2 + 1 floats. Normals: the 4 blended normals
 * transposed to x, y, z of the 4 vertices, weighted and renormalised 4 wide
 * (rsqrt + one Newton step), stored packed as 3 registers (store3x4) or
 * transposed back for strided outputs; with skip_normalize they are
 * weighted and stored like the positions. The tail runs the same arithmetic
 * one vertex at a time (without reading past it): results do not depend on
 * where a range starts (the table choice depends on the palette alone). */
enum { SKS_LBS1_TABLE = 256 };
#define SKS_SHUF(x, imm) _mm_castsi128_ps(_mm_shuffle_epi32(_mm_castps_si128(x), (imm)))

/* The weighted point (w splat) and the unweighted normal of one vertex:
 * t = its 4 table rows (TAB) or m = its matrix. */
SKS_INLINE __m128 lbs1_point_sse2(const __m128 *restrict t, const float *restrict m, const __m128 p, const __m128 w,
                                  const int TAB) {
  __m128 r;
  if (TAB)
    r = _mm_add_ps(_mm_add_ps(_mm_mul_ps(t[0], p), _mm_mul_ps(t[1], SKS_SHUF(p, _MM_SHUFFLE(3, 0, 2, 1)))),
                   _mm_add_ps(_mm_mul_ps(t[2], SKS_SHUF(p, _MM_SHUFFLE(3, 1, 0, 2))), t[3]));
  else
    r = _mm_add_ps(_mm_add_ps(_mm_mul_ps(_mm_loadu_ps(m), SKS_SHUF(p, 0x00)), _mm_mul_ps(_mm_loadu_ps(m + 4), SKS_SHUF(p, 0x55))),
                   _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(m + 8), SKS_SHUF(p, 0xAA)), _mm_loadu_ps(m + 12)));
  return _mm_mul_ps(r, w);
}

SKS_INLINE __m128 lbs1_normal_sse2(const __m128 *restrict t, const float *restrict m, const __m128 n, const int TAB) {
  if (TAB)
    return _mm_add_ps(_mm_add_ps(_mm_mul_ps(t[0], n), _mm_mul_ps(t[1], SKS_SHUF(n, _MM_SHUFFLE(3, 0, 2, 1)))),
                      _mm_mul_ps(t[2], SKS_SHUF(n, _MM_SHUFFLE(3, 1, 0, 2))));
  return _mm_add_ps(_mm_add_ps(_mm_mul_ps(_mm_loadu_ps(m), SKS_SHUF(n, 0x00)), _mm_mul_ps(_mm_loadu_ps(m + 4), SKS_SHUF(n, 0x55))),
                    _mm_mul_ps(_mm_loadu_ps(m + 8), SKS_SHUF(n, 0xAA)));
}

/* x, y, z of one vertex, lane 3 zero, reading 3 floats only. */
SKS_INLINE __m128 load3(const float *p) {
  return _mm_movelh_ps(_mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)(const void *)p), _mm_load_ss(p + 2));
}

SKS_INLINE void lbs1_sse2(const sks_skinning_job *job, const skin_args *a, const __m128 *restrict tab, size_t begin,
                          size_t end, const int N, const int PACKED, const int NORM, const int TAB) {
  const float *restrict pal = job->palette[0].m;
  SKS_JOB_ARRAYS(job, a);
  /* unit: no weights (every weight 1, the one float at stride 0) */
  const int unit = a->ws == 0;
  const size_t js = PACKED ? 1 : a->js, ws = unit ? 0 : PACKED ? 1 : a->ws, ips = PACKED ? 3 : a->ips;
  const size_t ins = PACKED ? 3 : a->ins, ops = PACKED ? 3 : a->ops, ons = PACKED ? 3 : a->ons;
  size_t v = begin;
  /* A block loads 4 floats at each vertex's position and normal and, packed,
   * stores 4 floats per vertex: for the block's last vertex the 4th is
   * vertex v + 4's first float, so a block needs v + 4 < end. */
  for (; v + 4 < end; v += 4) {
    __m128 w[4];
    if (PACKED) {
      const __m128 W4 = unit ? _mm_set1_ps(1.0f) : _mm_loadu_ps(weights + v);
      w[0] = SKS_SHUF(W4, 0x00); w[1] = SKS_SHUF(W4, 0x55); w[2] = SKS_SHUF(W4, 0xAA); w[3] = SKS_SHUF(W4, 0xFF);
    } else {
      SKS_UNROLL
      for (int i = 0; i < 4; ++i) w[i] = _mm_set1_ps(weights[(v + (size_t)i) * ws]);
    }
    __m128 q[4];
    SKS_UNROLL
    for (int i = 0; i < 4; ++i) {
      const size_t u = v + (size_t)i, j = joints[u * js];
      const __m128 *t = TAB ? tab + 4 * j : NULL;
      const float *m = pal + 16 * j;
      const __m128 r = lbs1_point_sse2(t, m, _mm_loadu_ps(pin + u * ips), w[i], TAB);
      if (PACKED) _mm_storeu_ps(pout + 3 * u, r);
      else store3(pout + u * ops, r);
      if (N) q[i] = lbs1_normal_sse2(t, m, _mm_loadu_ps(nin + u * ins), TAB);
    }
    if (!N) continue;
    if (!NORM) {
      SKS_UNROLL
      for (int i = 0; i < 4; ++i) {
        const __m128 r = _mm_mul_ps(q[i], w[i]);
        if (PACKED) _mm_storeu_ps(nout + 3 * (v + (size_t)i), r);
        else store3(nout + (v + (size_t)i) * ons, r);
      }
      continue;
    }
    const __m128 W4 = PACKED ? (unit ? _mm_set1_ps(1.0f) : _mm_loadu_ps(weights + v))
                             : _mm_unpacklo_ps(_mm_unpacklo_ps(w[0], w[2]), _mm_unpacklo_ps(w[1], w[3]));
    _MM_TRANSPOSE4_PS(q[0], q[1], q[2], q[3]); /* q0 = x of the 4 vertices, q1 = y, q2 = z */
    __m128 x = _mm_mul_ps(q[0], W4), y = _mm_mul_ps(q[1], W4), z = _mm_mul_ps(q[2], W4);
    const __m128 s = rsqrt_nr_sse2(_mm_add_ps(_mm_add_ps(_mm_mul_ps(x, x), _mm_mul_ps(y, y)), _mm_mul_ps(z, z)));
    x = _mm_mul_ps(x, s); y = _mm_mul_ps(y, s); z = _mm_mul_ps(z, s);
    if (PACKED) {
      store3x4(nout + 3 * v, x, y, z);
      continue;
    }
    __m128 t3 = _mm_setzero_ps();
    _MM_TRANSPOSE4_PS(x, y, z, t3);
    store3(nout + v * ons, x); store3(nout + (v + 1) * ons, y);
    store3(nout + (v + 2) * ons, z); store3(nout + (v + 3) * ons, t3);
  }
  for (; v < end; ++v) {
    const size_t j = joints[v * js];
    const __m128 *t = TAB ? tab + 4 * j : NULL;
    const float *m = pal + 16 * j;
    store3(pout + v * ops, lbs1_point_sse2(t, m, load3(pin + v * ips), _mm_set1_ps(weights[v * ws]), TAB));
    if (N) {
      __m128 q = _mm_mul_ps(lbs1_normal_sse2(t, m, load3(nin + v * ins), TAB), _mm_set1_ps(weights[v * ws]));
      if (NORM) { /* the blocks' arithmetic */
        const __m128 x = SKS_SHUF(q, 0x00), y = SKS_SHUF(q, 0x55), z = SKS_SHUF(q, 0xAA);
        q = _mm_mul_ps(q, rsqrt_nr_sse2(_mm_add_ps(_mm_add_ps(_mm_mul_ps(x, x), _mm_mul_ps(y, y)), _mm_mul_ps(z, z))));
      }
      store3(nout + v * ons, q);
    }
  }
  (void)ins; (void)ons; (void)nin; (void)nout; (void)pal; (void)tab;
}

SKS_INLINE void lbs1_variant_sse2(const sks_skinning_job *job, const skin_args *a, const __m128 *restrict tab,
                                  size_t begin, size_t end, const int N, const int TAB) {
  const int packed = a->js == 1 && a->ws <= 1 && a->ips == 3 && a->ops == 3 && (!N || (a->ins == 3 && a->ons == 3));
  if (!N) {
    if (packed) lbs1_sse2(job, a, tab, begin, end, 0, 1, 0, TAB);
    else lbs1_sse2(job, a, tab, begin, end, 0, 0, 0, TAB);
  } else if (packed) {
    if (a->normalize) lbs1_sse2(job, a, tab, begin, end, 1, 1, 1, TAB);
    else lbs1_sse2(job, a, tab, begin, end, 1, 1, 0, TAB);
  } else {
    if (a->normalize) lbs1_sse2(job, a, tab, begin, end, 1, 0, 1, TAB);
    else lbs1_sse2(job, a, tab, begin, end, 1, 0, 0, TAB);
  }
}

/* The diagonal table for palettes of up to SKS_LBS1_TABLE joints (built per
 * call: ~20 instructions a joint), else the matrices as loaded. */
SKS_INLINE void lbs1_kernel_sse2(const sks_skinning_job *job, const skin_args *a, size_t begin, size_t end,
                                 const int N) {
  const size_t pc = job->palette_count;
  if (pc > SKS_LBS1_TABLE) {
    lbs1_variant_sse2(job, a, NULL, begin, end, N, 0);
    return;
  }
  __m128 tab[4 * SKS_LBS1_TABLE];
  for (size_t i = 0; i < pc; ++i) {
    const float *m = job->palette[i].m;
    tab[4 * i + 0] = _mm_setr_ps(m[0], m[5], m[10], 0.0f);
    tab[4 * i + 1] = _mm_setr_ps(m[4], m[9], m[2], 0.0f);
    tab[4 * i + 2] = _mm_setr_ps(m[8], m[1], m[6], 0.0f);
    tab[4 * i + 3] = _mm_loadu_ps(m + 12);
  }
  lbs1_variant_sse2(job, a, tab, begin, end, N, 1);
}
#undef SKS_SHUF

/* Each (K, normals) variant its own function (SKS_NOINLINE, skin_internal.h). */
#define SKS_LBS_FN(K, N)                                                                                      \
  SKS_NOINLINE void lbs_sse2_##K##_##N(const sks_skinning_job *job, const skin_args *a, size_t begin, size_t end) { \
    lbs_kernel_sse2(job, a, begin, end, K, N);                                                                \
  }
SKS_NOINLINE void lbs_sse2_1_0(const sks_skinning_job *job, const skin_args *a, size_t begin, size_t end) {
  lbs1_kernel_sse2(job, a, begin, end, 0);
}
SKS_NOINLINE void lbs_sse2_1_1(const sks_skinning_job *job, const skin_args *a, size_t begin, size_t end) {
  lbs1_kernel_sse2(job, a, begin, end, 1);
}
SKS_LBS_FN(2, 0) SKS_LBS_FN(2, 1) SKS_LBS_FN(3, 0) SKS_LBS_FN(3, 1)
SKS_LBS_FN(4, 0) SKS_LBS_FN(4, 1) SKS_LBS_FN(5, 0) SKS_LBS_FN(5, 1) SKS_LBS_FN(6, 0) SKS_LBS_FN(6, 1)
SKS_LBS_FN(7, 0) SKS_LBS_FN(7, 1) SKS_LBS_FN(8, 0) SKS_LBS_FN(8, 1)
#undef SKS_LBS_FN
#define lbs_sse2_fn(job, a, begin, end, K, N) lbs_sse2_##K##_##N(job, a, begin, end)
#endif

SKS_INLINE void lbs_kernel_c(const sks_skinning_job *job, const skin_args *a, size_t begin, size_t end,
                             const uint32_t K, const int N) {
  const sks_mat4 *restrict palette = job->palette;
  SKS_JOB_ARRAYS(job, a);
  const size_t js = a->js, ws = a->ws, ips = a->ips, ins = a->ins, ops = a->ops, ons = a->ons;
  for (size_t v = begin; v < end; ++v) {
    const uint16_t *restrict jv = joints + v * js;
    const float *restrict wv = weights + v * ws;
    const float *restrict p = pin + v * ips;
    /* Portable path: 12 floats (3x4, bottom row dropped). */
    float m[12];
    {
      const float *mi = palette[jv[0]].m;
      const float w0 = wv[0];
      m[0] = w0 * mi[0]; m[1] = w0 * mi[1]; m[2] = w0 * mi[2];
      m[3] = w0 * mi[4]; m[4] = w0 * mi[5]; m[5] = w0 * mi[6];
      m[6] = w0 * mi[8]; m[7] = w0 * mi[9]; m[8] = w0 * mi[10];
      m[9] = w0 * mi[12]; m[10] = w0 * mi[13]; m[11] = w0 * mi[14];
    }
    for (uint32_t i = 1; i < K; ++i) {
      const float *mi = palette[jv[i]].m;
      const float wi = wv[i];
      m[0] += wi * mi[0]; m[1] += wi * mi[1]; m[2] += wi * mi[2];
      m[3] += wi * mi[4]; m[4] += wi * mi[5]; m[5] += wi * mi[6];
      m[6] += wi * mi[8]; m[7] += wi * mi[9]; m[8] += wi * mi[10];
      m[9] += wi * mi[12]; m[10] += wi * mi[13]; m[11] += wi * mi[14];
    }
    const float x = p[0], y = p[1], z = p[2];
    float *po = pout + v * ops;
    po[0] = m[0] * x + m[3] * y + m[6] * z + m[9];
    po[1] = m[1] * x + m[4] * y + m[7] * z + m[10];
    po[2] = m[2] * x + m[5] * y + m[8] * z + m[11];
    if (N) {
      const float *restrict n = nin + v * ins;
      const float nx = m[0] * n[0] + m[3] * n[1] + m[6] * n[2];
      const float ny = m[1] * n[0] + m[4] * n[1] + m[7] * n[2];
      const float nz = m[2] * n[0] + m[5] * n[1] + m[8] * n[2];
      const float l2 = nx * nx + ny * ny + nz * nz;
      const float s = !a->normalize ? 1.0f : l2 > 0.0f ? 1.0f / sqrtf(l2) : 0.0f;
      float *no = nout + v * ons;
      no[0] = nx * s; no[1] = ny * s; no[2] = nz * s;
    }
  }
}

/* ---- optimised DQS (dual quaternions precomputed per palette entry) ------ */

SKS_INLINE void dqs_kernel(const sks_skinning_job *job, const skin_args *a, const sks_dualquat *restrict dq,
                           size_t begin, size_t end, const uint32_t K, const int N) {
  SKS_JOB_ARRAYS(job, a);
  const size_t js = a->js, ws = a->ws, ips = a->ips, ins = a->ins, ops = a->ops, ons = a->ons;
  for (size_t v = begin; v < end; ++v) {
    const uint16_t *restrict jv = joints + v * js;
    const float *restrict wv = weights + v * ws;
    const sks_dualquat *q0 = &dq[jv[0]];
    float w = wv[0];
    float rx = w * q0->r.x, ry = w * q0->r.y, rz = w * q0->r.z, rw = w * q0->r.w;
    float dx = w * q0->d.x, dy = w * q0->d.y, dz = w * q0->d.z, dw = w * q0->d.w;
    for (uint32_t i = 1; i < K; ++i) {
      const sks_dualquat *q = &dq[jv[i]];
      w = wv[i];
      const float dot = q0->r.x * q->r.x + q0->r.y * q->r.y + q0->r.z * q->r.z + q0->r.w * q->r.w;
      if (dot < 0.0f) w = -w;
      rx += w * q->r.x; ry += w * q->r.y; rz += w * q->r.z; rw += w * q->r.w;
      dx += w * q->d.x; dy += w * q->d.y; dz += w * q->d.z; dw += w * q->d.w;
    }
    const float len2 = rx * rx + ry * ry + rz * rz + rw * rw;
    const float inv = len2 > 0.0f ? 1.0f / sqrtf(len2) : 0.0f;
    rx *= inv; ry *= inv; rz *= inv; rw *= inv;
    dx *= inv; dy *= inv; dz *= inv; dw *= inv;
    /* t = 2 (rw dv - dw rv + rv x dv) */
    const float tx = 2.0f * (rw * dx - dw * rx + (ry * dz - rz * dy));
    const float ty = 2.0f * (rw * dy - dw * ry + (rz * dx - rx * dz));
    const float tz = 2.0f * (rw * dz - dw * rz + (rx * dy - ry * dx));
    /* v' = v + 2w (u x v) + 2 u x (u x v) */
    const float *restrict p = pin + v * ips;
    {
      const float x = p[0], y = p[1], z = p[2];
      const float cx = 2.0f * (ry * z - rz * y), cy = 2.0f * (rz * x - rx * z), cz = 2.0f * (rx * y - ry * x);
      float *po = pout + v * ops;
      po[0] = x + rw * cx + (ry * cz - rz * cy) + tx;
      po[1] = y + rw * cy + (rz * cx - rx * cz) + ty;
      po[2] = z + rw * cz + (rx * cy - ry * cx) + tz;
    }
    if (N) {
      const float *restrict n = nin + v * ins;
      const float x = n[0], y = n[1], z = n[2];
      const float cx = 2.0f * (ry * z - rz * y), cy = 2.0f * (rz * x - rx * z), cz = 2.0f * (rx * y - ry * x);
      const float nx = x + rw * cx + (ry * cz - rz * cy);
      const float ny = y + rw * cy + (rz * cx - rx * cz);
      const float nz = z + rw * cz + (rx * cy - ry * cx);
      const float l2 = nx * nx + ny * ny + nz * nz;
      const float s = !a->normalize ? 1.0f : l2 > 0.0f ? 1.0f / sqrtf(l2) : 0.0f;
      float *no = nout + v * ons;
      no[0] = nx * s; no[1] = ny * s; no[2] = nz * s;
    }
  }
}

#if defined(__SSE2__) && !defined(SKS_NO_SIMD)
/* DQS, SSE2 (the kernels for x86-64 CPUs without AVX2 + FMA; no FMA, so
 * every multiply-add is a mul and an add). The same scheme as the AVX2
 * kernel, 4 vertices wide:
 * - each vertex's K dual quaternions are blended as two registers r, d (one
 *   load of each per influence; the antipodality sign is one load from the
 *   flip table for palettes of up to SKS_FLIP_STRIDE, else a 4-lane dot
 *   with the first influence's r);
 * - 4 blended [r, d] are transposed once into 8 SoA registers;
 * - the blended dual quaternion is not normalised: s = 2 / |r|^2 (rcp +
 *   one Newton step) scales the rotation v + s (w c + u x c), c = u x v,
 *   and the translation s (rw dv - dw rv + rv x dv), which share their
 *   cross product (see dqs_block4);
 * - packed (stride 3) positions and normals are 3 loads / stores per 4
 *   vertices; normals are renormalised with rsqrt + one Newton step;
 * - full blocks have no per-lane clamping; the short last block (1-3
 *   vertices) runs the same arithmetic with its missing lanes repeating the
 *   last vertex (read, never written), so results do not depend on where a
 *   range starts. */
#define SKS_SPLAT(v, i) _mm_shuffle_ps((v), (v), _MM_SHUFFLE(i, i, i, i))

/* Blended [r | d] of one vertex. */
SKS_INLINE void dqs_blend4(const float *restrict dqf, const float *restrict flip, const uint16_t *restrict jv,
                           const float *restrict wv, __m128 *r, __m128 *d, const uint32_t K, const int FLIP) {
  const float *q0 = dqf + 8 * (size_t)jv[0];
  const __m128 r0 = _mm_loadu_ps(q0);
  __m128 w = _mm_set1_ps(wv[0]);
  __m128 ar = _mm_mul_ps(w, r0), ad = _mm_mul_ps(w, _mm_loadu_ps(q0 + 4));
  const float *frow = FLIP ? flip + (size_t)jv[0] * SKS_FLIP_STRIDE : NULL;
  SKS_UNROLL
  for (uint32_t i = 1; i < K; ++i) {
    const float *qi = dqf + 8 * (size_t)jv[i];
    const __m128 ri = _mm_loadu_ps(qi);
    if (FLIP) {
      w = _mm_xor_ps(_mm_load_ss(wv + i), _mm_load_ss(frow + jv[i]));
      w = SKS_SPLAT(w, 0);
    } else {
      __m128 dt = _mm_mul_ps(r0, ri);
      dt = _mm_add_ps(dt, _mm_shuffle_ps(dt, dt, 0x4E));
      dt = _mm_add_ps(dt, _mm_shuffle_ps(dt, dt, 0xB1)); /* dot(r0, ri) in every lane */
      w = _mm_xor_ps(_mm_set1_ps(wv[i]), _mm_and_ps(_mm_cmplt_ps(dt, _mm_setzero_ps()), _mm_set1_ps(-0.0f)));
    }
    ar = _mm_add_ps(ar, _mm_mul_ps(w, ri));
    ad = _mm_add_ps(ad, _mm_mul_ps(w, _mm_loadu_ps(qi + 4)));
  }
  *r = ar;
  *d = ad;
}

/* x, y, z of 4 packed (stride 3) vectors: m0 = x0 y0 z0 x1, m1 = y1 z1 x2 y2,
 * m2 = z2 x3 y3 z3. */
SKS_INLINE void load3x4(const float *p, __m128 *x, __m128 *y, __m128 *z) {
  const __m128 m0 = _mm_loadu_ps(p), m1 = _mm_loadu_ps(p + 4), m2 = _mm_loadu_ps(p + 8);
  const __m128 t = _mm_shuffle_ps(m1, m2, _MM_SHUFFLE(1, 0, 3, 2)); /* x2 y2 z2 x3 */
  const __m128 u = _mm_shuffle_ps(m0, m1, _MM_SHUFFLE(1, 0, 2, 1)); /* y0 z0 y1 z1 */
  const __m128 w = _mm_shuffle_ps(m1, m2, _MM_SHUFFLE(3, 2, 3, 2)); /* x2 y2 y3 z3 */
  *x = _mm_shuffle_ps(m0, t, _MM_SHUFFLE(3, 0, 3, 0));
  *y = _mm_shuffle_ps(u, w, _MM_SHUFFLE(2, 1, 2, 0));
  *z = _mm_shuffle_ps(u, m2, _MM_SHUFFLE(3, 0, 3, 1));
}


/* One block of cnt <= 4 vertices from v (cnt is the constant 4 in the main
 * loop, so its loads and stores are the full-width ones). */
SKS_INLINE void dqs_block4(const float *restrict dqf, const float *restrict flip, const uint16_t *restrict joints,
                           const float *restrict weights, const float *restrict pin, const float *restrict nin,
                           float *restrict pout, float *restrict nout, const size_t js, const size_t ws,
                           const size_t ips, const size_t ins, const size_t ops, const size_t ons, const size_t v,
                           const size_t cnt, const uint32_t K, const int N, const int NORM, const int FLIP) {
  __m128 rx, ry, rz, rw, dx, dy, dz, dw;
  {
    __m128 q[8];
    SKS_UNROLL
    for (size_t l = 0; l < 4; ++l) {
      const size_t u = v + (l < cnt ? l : cnt - 1);
      dqs_blend4(dqf, flip, joints + u * js, weights + u * ws, &q[l], &q[4 + l], K, FLIP);
    }
    _MM_TRANSPOSE4_PS(q[0], q[1], q[2], q[3]);
    _MM_TRANSPOSE4_PS(q[4], q[5], q[6], q[7]);
    rx = q[0]; ry = q[1]; rz = q[2]; rw = q[3];
    dx = q[4]; dy = q[5]; dz = q[6]; dw = q[7];
  }
  /* The reference divides r and d by |r|; every product of two of their
   * components then carries 1 / |r|^2: r and d are used as blended and
   * s = 2 / |r|^2 (~1e-7 relative; 0 where |r|^2 <= FLT_MIN, as the
   * reference's 0 inverse) scales the rotation and the translation once. */
  const __m128 len2 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(rx, rx), _mm_mul_ps(ry, ry)),
                                 _mm_add_ps(_mm_mul_ps(rz, rz), _mm_mul_ps(rw, rw)));
  const __m128 e0 = _mm_rcp_ps(len2);
  const __m128 e1 = _mm_mul_ps(e0, _mm_sub_ps(_mm_set1_ps(2.0f), _mm_mul_ps(len2, e0)));
  const __m128 s = _mm_and_ps(_mm_add_ps(e1, e1), _mm_cmpgt_ps(len2, _mm_set1_ps(FLT_MIN)));
  for (int pass = 0; pass < 1 + N; ++pass) {
    const size_t is = pass ? ins : ips, os = pass ? ons : ops;
    const float *src = (pass ? nin : pin) + v * is;
    float *dst = (pass ? nout : pout) + v * os;
    __m128 x, y, z;
    if (cnt == 4 && is == 3) {
      load3x4(src, &x, &y, &z);
    } else {
      const float *e0p = src, *e1p = src + (cnt > 1 ? 1 : 0) * is;
      const float *e2p = src + (cnt > 2 ? 2 : cnt - 1) * is, *e3p = src + (cnt > 3 ? 3 : cnt - 1) * is;
      x = _mm_setr_ps(e0p[0], e1p[0], e2p[0], e3p[0]);
      y = _mm_setr_ps(e0p[1], e1p[1], e2p[1], e3p[1]);
      z = _mm_setr_ps(e0p[2], e1p[2], e2p[2], e3p[2]);
    }
    /* c = u x v; the rotation is v + s (w c + u x c) (see rotate8 in
     * skinning_avx2.c) and the translation s (w d.v - d.w u + u x d.v), so
     * the point is v + s (w g + u x g - d.w u) with g = c + d.v: one cross
     * product fewer than rotating and translating apart. Normals: g = c. */
    __m128 gx = _mm_sub_ps(_mm_mul_ps(ry, z), _mm_mul_ps(rz, y));
    __m128 gy = _mm_sub_ps(_mm_mul_ps(rz, x), _mm_mul_ps(rx, z));
    __m128 gz = _mm_sub_ps(_mm_mul_ps(rx, y), _mm_mul_ps(ry, x));
    if (pass == 0) { gx = _mm_add_ps(gx, dx); gy = _mm_add_ps(gy, dy); gz = _mm_add_ps(gz, dz); }
    __m128 ex = _mm_add_ps(_mm_mul_ps(rw, gx), _mm_sub_ps(_mm_mul_ps(ry, gz), _mm_mul_ps(rz, gy)));
    __m128 ey = _mm_add_ps(_mm_mul_ps(rw, gy), _mm_sub_ps(_mm_mul_ps(rz, gx), _mm_mul_ps(rx, gz)));
    __m128 ez = _mm_add_ps(_mm_mul_ps(rw, gz), _mm_sub_ps(_mm_mul_ps(rx, gy), _mm_mul_ps(ry, gx)));
    if (pass == 0) {
      ex = _mm_sub_ps(ex, _mm_mul_ps(dw, rx)); ey = _mm_sub_ps(ey, _mm_mul_ps(dw, ry));
      ez = _mm_sub_ps(ez, _mm_mul_ps(dw, rz));
    }
    x = _mm_add_ps(x, _mm_mul_ps(s, ex)); y = _mm_add_ps(y, _mm_mul_ps(s, ey)); z = _mm_add_ps(z, _mm_mul_ps(s, ez));
    if (pass == 1 && NORM) {
      const __m128 f = rsqrt_nr_sse2(_mm_add_ps(_mm_add_ps(_mm_mul_ps(x, x), _mm_mul_ps(y, y)), _mm_mul_ps(z, z)));
      x = _mm_mul_ps(x, f); y = _mm_mul_ps(y, f); z = _mm_mul_ps(z, f);
    }
    if (cnt == 4 && os == 3) {
      store3x4(dst, x, y, z);
    } else {
      float X[4], Y[4], Z[4];
      _mm_storeu_ps(X, x); _mm_storeu_ps(Y, y); _mm_storeu_ps(Z, z);
      for (size_t l = 0; l < cnt; ++l) {
        float *o = dst + l * os;
        o[0] = X[l]; o[1] = Y[l]; o[2] = Z[l];
      }
    }
  }
}

SKS_INLINE void dqs_loop4(const sks_skinning_job *job, const skin_args *a, const sks_dualquat *restrict dq,
                          size_t begin, size_t end, const uint32_t K, const int N, const int PACKED, const int NORM,
                          const int FLIP) {
  const float *restrict dqf = &dq[0].r.x;
  const size_t js = PACKED ? K : a->js, ws = PACKED ? K : a->ws, ips = PACKED ? 3 : a->ips;
  const size_t ins = PACKED ? 3 : a->ins, ops = PACKED ? 3 : a->ops, ons = PACKED ? 3 : a->ons;
  /* Local copies: the stores cannot alias them (job and a would be reloaded
   * every block). */
  const float *restrict flip = a->flip;
  const uint16_t *restrict joints = job->joints;
  const float *restrict weights = a->w, *restrict pin = job->in_positions, *restrict nin = job->in_normals;
  float *restrict pout = job->out_positions, *restrict nout = job->out_normals;
  size_t v = begin;
  for (; v + 4 <= end; v += 4)
    dqs_block4(dqf, flip, joints, weights, pin, nin, pout, nout, js, ws, ips, ins, ops, ons, v, 4, K, N, NORM, FLIP);
  if (v < end)
    dqs_block4(dqf, flip, joints, weights, pin, nin, pout, nout, js, ws, ips, ins, ops, ons, v, end - v, K, N, NORM,
               FLIP);
}

/* PACKED: every stride is the tight one (constants, so a block addresses
 * one pointer per array); NORM: renormalise normals; FLIP: a->flip given. */
SKS_INLINE void dqs_kernel4(const sks_skinning_job *job, const skin_args *a, const sks_dualquat *restrict dq,
                            size_t begin, size_t end, const uint32_t K, const int N) {
  const int packed = a->js == K && a->ws == K && a->ips == 3 && a->ops == 3 && (!N || (a->ins == 3 && a->ons == 3));
  const int norm = N && a->normalize;
  if (a->flip) {
    if (packed && norm) dqs_loop4(job, a, dq, begin, end, K, N, 1, 1, 1);
    else if (packed) dqs_loop4(job, a, dq, begin, end, K, N, 1, 0, 1);
    else if (norm) dqs_loop4(job, a, dq, begin, end, K, N, 0, 1, 1);
    else dqs_loop4(job, a, dq, begin, end, K, N, 0, 0, 1);
  } else {
    if (packed && norm) dqs_loop4(job, a, dq, begin, end, K, N, 1, 1, 0);
    else if (packed) dqs_loop4(job, a, dq, begin, end, K, N, 1, 0, 0);
    else if (norm) dqs_loop4(job, a, dq, begin, end, K, N, 0, 1, 0);
    else dqs_loop4(job, a, dq, begin, end, K, N, 0, 0, 0);
  }
}
#undef SKS_SPLAT
#undef SKS_UNROLL
#endif

#define SKS_DISPATCH(KERNEL, ...)                                         \
  switch (job->influence_count * 2 + (job->in_normals != NULL)) {         \
    case 2: KERNEL(__VA_ARGS__, 1, 0); break;                             \
    case 3: KERNEL(__VA_ARGS__, 1, 1); break;                             \
    case 4: KERNEL(__VA_ARGS__, 2, 0); break;                             \
    case 5: KERNEL(__VA_ARGS__, 2, 1); break;                             \
    case 6: KERNEL(__VA_ARGS__, 3, 0); break;                             \
    case 7: KERNEL(__VA_ARGS__, 3, 1); break;                             \
    case 8: KERNEL(__VA_ARGS__, 4, 0); break;                             \
    case 9: KERNEL(__VA_ARGS__, 4, 1); break;                             \
    case 10: KERNEL(__VA_ARGS__, 5, 0); break;                            \
    case 11: KERNEL(__VA_ARGS__, 5, 1); break;                            \
    case 12: KERNEL(__VA_ARGS__, 6, 0); break;                            \
    case 13: KERNEL(__VA_ARGS__, 6, 1); break;                            \
    case 14: KERNEL(__VA_ARGS__, 7, 0); break;                            \
    case 15: KERNEL(__VA_ARGS__, 7, 1); break;                            \
    case 16: KERNEL(__VA_ARGS__, 8, 0); break;                            \
    default: KERNEL(__VA_ARGS__, 8, 1); break;                            \
  }

static int cpu_has_avx2_fma(void) {
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
  return sks_skin_avx2_compiled() && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return 0;
#endif
}

int sks_skinning_isa_available(sks_skinning_isa isa) {
  switch (isa) {
    case SKS_SKIN_ISA_AUTO:
    case SKS_SKIN_ISA_SCALAR: return 1;
    case SKS_SKIN_ISA_SSE2:
#if defined(__SSE2__) && !defined(SKS_NO_SIMD)
      return 1;
#else
      return 0;
#endif
    case SKS_SKIN_ISA_AVX2: return cpu_has_avx2_fma();
  }
  return 0;
}

sks_skinning_isa sks_skinning_isa_resolve(sks_skinning_isa isa) {
  if (isa != SKS_SKIN_ISA_AUTO) return isa;
  if (sks_skinning_isa_available(SKS_SKIN_ISA_AVX2)) return SKS_SKIN_ISA_AVX2;
  if (sks_skinning_isa_available(SKS_SKIN_ISA_SSE2)) return SKS_SKIN_ISA_SSE2;
  return SKS_SKIN_ISA_SCALAR;
}

/* Skins [begin, end) with the kernels of `isa` (resolved, available). dq:
 * the palette as dual quaternions (DQS only), or NULL to fall back to the
 * reference loop. */
static void optimised_range(const sks_skinning_job *job, sks_skinning_isa isa, const sks_dualquat *dq,
                            const flip_store *flip, size_t begin, size_t end) {
  skin_args a = resolve(job);
  if (flip && isa == SKS_SKIN_ISA_AVX2) a.flip_off = flip->off;
  else if (flip) a.flip = flip->f;
  if (job->method == SKS_SKIN_DQS && !dq) {
    reference_range(job, begin, end);
  } else if (isa == SKS_SKIN_ISA_AVX2) {
    sks_skin_avx2_range(job, &a, dq, begin, end);
#if defined(__SSE2__) && !defined(SKS_NO_SIMD)
  } else if (isa == SKS_SKIN_ISA_SSE2) {
    if (job->method == SKS_SKIN_LBS) {
      SKS_DISPATCH(lbs_sse2_fn, job, &a, begin, end)
    } else {
      SKS_DISPATCH(dqs_kernel4, job, &a, dq, begin, end)
    }
#endif
  } else if (job->method == SKS_SKIN_LBS) {
    SKS_DISPATCH(lbs_kernel_c, job, &a, begin, end)
  } else {
    SKS_DISPATCH(dqs_kernel, job, &a, dq, begin, end)
  }
}

/* A run's stack table (32 KiB, on a cache line): the palette as dual
 * quaternions (DQS), or a copy of an LBS palette that is not on a 32-byte
 * boundary. The SIMD kernels load a dual quaternion or half a palette
 * matrix as one 32-byte load (AVX2; 16-byte ones with SSE2): off a 32-byte
 * boundary half of those loads straddle two cache lines. sks_mat4 and
 * sks_dualquat have float alignment and malloc gives 16 bytes, so that
 * happened to one process in two: measured on AMD Zen 4 (100,000
 * vertices, 64 joints) 281-289 against 324-333 Mverts/s for LBS 4
 * influences positions, 158-160 against 188 for 8, DQS 4 positions 241
 * against 253, whole processes in one group or the other by where their
 * palette (or stack) fell. */
typedef union skin_table {
  _Alignas(64) sks_dualquat dq[SKS_DQ_TABLE];
  sks_mat4 pal[SKS_DQ_TABLE / 2];
} skin_table;

/* Fills t with the palette as dual quaternions when DQS and it fits. */
static const sks_dualquat *dq_table(const sks_skinning_job *job, skin_table *t) {
  if (job->method != SKS_SKIN_DQS || job->palette_count > SKS_DQ_TABLE) return NULL;
  for (size_t i = 0; i < job->palette_count; ++i) t->dq[i] = dq_from_matrix(&job->palette[i]);
  return t->dq;
}

/* DQS antipodality signs of every pair of palette entries for the AVX2
 * (sks_skin_args.flip_off; the negated entries go to t->dq[pc, 2 pc)) and
 * SSE2 (.flip) kernels, when the palette is small (<= SKS_FLIP_TABLE: a
 * 16 KiB stack table) and the job has enough vertices to repay the pc^2
 * dots. Same dot and test as the reference, so the same signs. Measured
 * (AMD Zen 4, 100,000 vertices, 64 joints, 4 influences), the AVX2
 * kernels with offsets against a sign load and an xor an influence:
 * positions 280 -> 315, + normals 194 -> 215 Mverts/s. */
static const flip_store *flip_table(const sks_skinning_job *job, sks_skinning_isa isa, skin_table *t,
                                    const sks_dualquat *dq, flip_store *fs) {
  const size_t pc = job->palette_count;
  if (!dq || (isa != SKS_SKIN_ISA_AVX2 && isa != SKS_SKIN_ISA_SSE2) || job->influence_count < 2 || pc > SKS_FLIP_TABLE ||
      job->vertex_count < pc * pc / 4)
    return NULL;
  if (isa == SKS_SKIN_ISA_AVX2) {
    /* byte offsets of entry b or of its negation, stored after the palette */
    for (size_t b = 0; b < pc; ++b) {
      const float *q = &dq[b].r.x;
      float *o = &t->dq[pc + b].r.x;
      for (int k = 0; k < 8; ++k) o[k] = -q[k];
    }
    for (size_t a = 0; a < pc; ++a)
      for (size_t b = 0; b < pc; ++b)
        fs->off[a * SKS_FLIP_STRIDE + b] =
            (uint16_t)((b + (sks_q_dot(dq[a].r, dq[b].r) < 0.0f ? pc : 0)) * sizeof(sks_dualquat));
    return fs;
  }
  for (size_t a = 0; a < pc; ++a)
    for (size_t b = 0; b < pc; ++b) fs->f[a * SKS_FLIP_STRIDE + b] = sks_q_dot(dq[a].r, dq[b].r) < 0.0f ? -0.0f : 0.0f;
  return fs;
}

/* The job the LBS kernels run: job itself, or when its palette is off a
 * 32-byte boundary, fits t (SKS_DQ_TABLE / 2 matrices) and the job has at
 * least 8 vertices per palette entry (a matrix's copy costs about one
 * vertex), *copy: the same job reading the same floats from t. */
static const sks_skinning_job *lbs_palette(const sks_skinning_job *job, sks_skinning_isa isa, skin_table *t,
                                           sks_skinning_job *copy) {
  if (job->method != SKS_SKIN_LBS || isa == SKS_SKIN_ISA_SCALAR || ((uintptr_t)(const void *)job->palette & 31) == 0 ||
      job->palette_count > SKS_DQ_TABLE / 2 || job->vertex_count < 8 * job->palette_count)
    return job;
  memcpy(t->pal, job->palette, job->palette_count * sizeof(sks_mat4));
  *copy = *job;
  copy->palette = t->pal;
  return copy;
}

int sks_skinning_job_run(const sks_skinning_job *job) {
  return sks_skinning_job_validate(job) && sks_skinning_job_run_joints_in_range(job);
}

int sks_skinning_job_run_joints_in_range(const sks_skinning_job *job) {
  if (!validate_shape(job)) return 0;
  if (job->vertex_count == 0) return 1;
  skin_table table;
  flip_store flip;
  const sks_skinning_isa isa = sks_skinning_isa_resolve(job->isa);
  const sks_dualquat *dq = dq_table(job, &table);
  sks_skinning_job copy;
  const sks_skinning_job *run = lbs_palette(job, isa, &table, &copy);
  optimised_range(run, isa, dq, flip_table(job, isa, &table, dq, &flip), 0, job->vertex_count);
  return 1;
}

/* ---- threads --------------------------------------------------------------- */

typedef struct skin_task {
  const sks_skinning_job *job;
  const sks_dualquat *dq;
  const flip_store *flip;
  sks_skinning_isa isa;
  size_t begin, end;
} skin_task;

static void *skin_task_main(void *arg) {
  const skin_task *t = arg;
  optimised_range(t->job, t->isa, t->dq, t->flip, t->begin, t->end);
  return NULL;
}

int sks_skinning_job_run_parallel(const sks_skinning_job *job, unsigned thread_count) {
  if (!sks_skinning_job_validate(job)) return 0;
  const size_t n = job->vertex_count;
  if (n == 0) return 1;
  if (thread_count == 0) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    thread_count = c > 0 ? (unsigned)c : 1u;
  }
  if (thread_count > SKS_MAX_THREADS) thread_count = SKS_MAX_THREADS;
  /* Do not spawn threads for tiny ranges. */
  size_t useful = (n + SKS_MIN_VERTICES_PER_THREAD - 1) / SKS_MIN_VERTICES_PER_THREAD;
  if (useful < thread_count) thread_count = (unsigned)(useful ? useful : 1);

  skin_table table;
  const sks_dualquat *dq = dq_table(job, &table);
  const sks_skinning_isa isa = sks_skinning_isa_resolve(job->isa);
  flip_store flip_storage;
  const flip_store *flip = flip_table(job, isa, &table, dq, &flip_storage);
  sks_skinning_job copy;
  job = lbs_palette(job, isa, &table, &copy);
  if (thread_count <= 1) {
    optimised_range(job, isa, dq, flip, 0, n);
    return 1;
  }
  skin_task tasks[SKS_MAX_THREADS];
  pthread_t threads[SKS_MAX_THREADS];
  int started[SKS_MAX_THREADS];
  for (unsigned t = 0; t < thread_count; ++t) {
    tasks[t].job = job;
    tasks[t].dq = dq;
    tasks[t].isa = isa;
    tasks[t].flip = flip;
    tasks[t].begin = n * t / thread_count;
    tasks[t].end = n * (t + 1) / thread_count;
  }
  /* Threads 1..T-1 run in workers; the caller runs chunk 0 (and any chunk
   * whose thread could not be started). */
  for (unsigned t = 1; t < thread_count; ++t)
    started[t] = pthread_create(&threads[t], NULL, skin_task_main, &tasks[t]) == 0;
  skin_task_main(&tasks[0]);
  for (unsigned t = 1; t < thread_count; ++t) {
    if (started[t]) pthread_join(threads[t], NULL);
    else skin_task_main(&tasks[t]);
  }
  return 1;
}

/* ---- the caller's pool ------------------------------------------------------ */

typedef struct pool_skin {
  skin_task base;      /* job, tables, isa; begin / end unused */
  size_t n, pieces;
} pool_skin;

/* Edge k of `pieces` pieces of n vertices: on a multiple of 16 vertices
 * (16 x 12 bytes = 3 cache lines of a packed position / normal array). */
static size_t piece_edge(size_t n, size_t k, size_t pieces) {
  if (k >= pieces) return n;
  return (n * k / pieces) & ~(size_t)15;
}

static void pool_skin_task(void *user, size_t k, unsigned thread) {
  const pool_skin *s = user;
  (void)thread;
  optimised_range(s->base.job, s->base.isa, s->base.dq, s->base.flip, piece_edge(s->n, k, s->pieces),
                  piece_edge(s->n, k + 1, s->pieces));
}

int sks_skinning_job_run_pool(const sks_skinning_job *job, sks_thread_pool *pool) {
  if (!sks_skinning_job_validate(job)) return 0;
  const size_t n = job->vertex_count;
  if (n == 0) return 1;
  size_t pieces = sks_thread_pool_size(pool);
  size_t useful = (n + SKS_MIN_VERTICES_PER_THREAD - 1) / SKS_MIN_VERTICES_PER_THREAD;
  if (useful < pieces) pieces = useful ? useful : 1;
  skin_table table;
  flip_store flip_storage;
  sks_skinning_job copy;
  pool_skin s;
  s.base.dq = dq_table(job, &table);
  s.base.isa = sks_skinning_isa_resolve(job->isa);
  s.base.flip = flip_table(job, s.base.isa, &table, s.base.dq, &flip_storage);
  s.base.job = job = lbs_palette(job, s.base.isa, &table, &copy);
  s.base.begin = 0;
  s.base.end = n;
  s.n = n;
  s.pieces = pieces;
  if (pieces <= 1) optimised_range(job, s.base.isa, s.base.dq, s.base.flip, 0, n);
  else sks_thread_pool_run(pool, pool_skin_task, &s, pieces);
  return 1;
}
