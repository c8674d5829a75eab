/* AVX2 + FMA skinning kernels (this file alone is compiled with -mavx2 -mfma;
 * skinning.c calls it only when the CPU reports both, see sks_skinning_isa).
 *
 * LBS, 2-8 influences: each influence's palette matrix is two 8-float
 * loads ([col0|col1], [col2|col3]) blended with one FMA each under a
 * broadcast weight (4 influences' joints and weights as one load each,
 * except with renormalised normals). Packed arrays (stride 3): two vertices
 * a register for the point, [c0 of a | c0 of b] ... (4 cross-half
 * permutes), so c0 x + c1 y + c2 z + c3 is 3 FMAs for the two and the
 * coordinates come in as one load a pair; each vertex leaves as one
 * 16-byte store whose 4th float the next vertex's store overwrites;
 * renormalised normals are squared and rsqrt'ed 4 vertices at a time in
 * that layout. Other strides: one vertex at a time, the coordinates
 * broadcast from memory, stored as 2 + 1 floats (the 4th float after a
 * vertex belongs to the caller); normals 4 at a time, transposed,
 * renormalised with rsqrt + one Newton step (|n| = 1 to ~2e-7), transposed
 * back. One influence has its own loop (lbs1_loop): 8 vertices a block,
 * two per register, the matrix used as loaded and the weight scaling the
 * result (a job without weights, every weight 1: no weight loads and no
 * multiplies, the same floats).
 * DQS: the dual quaternion of each influence is one 8-float register
 * [r | d]; blending is one FMA per influence (antipodality: for palettes
 * of up to 64 a table gives the offset of the entry or of its stored
 * negation, else the sign comes from a 4-lane dot with the first
 * influence's r). 8 blended dual quaternions are transposed once into 8 SoA
 * registers and applied 8 vertices wide without normalising them (one
 * s = 2 / |r|^2 scales rotation and translation, see dqs_block). Packed (stride 3) positions and normals are loaded and stored as 3
 * full registers per 8 vertices; other strides use gathers and scalar stores.
 * Order of operations differs from the reference (FMA): results agree to
 * float rounding, tested against run_reference. */
#include "skin/skin_internal.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <float.h>
#include <immintrin.h>
#include <string.h>

/* x, y, z of r to o[0..2]: two stores (a 3-lane masked store is slower). */
#define SKS_STORE3(o, m, r) (_mm_storel_pi((__m64 *)(void *)(o), (r)), _mm_store_ss((o) + 2, _mm_movehl_ps((r), (r))))
int sks_skin_avx2_compiled(void) { return 1; }

/* ---- LBS ------------------------------------------------------------------ */

/* The K influences' blended matrix: columns 0 | 1 in *A, 2 | 3 in *B. */
SKS_INLINE void lbs_blend(const float *restrict pal, const uint16_t *restrict jv, const float *restrict wv,
                          const uint32_t K, const int GRP, __m256 *pA, __m256 *pB) {
    /* GRP: influences 4 at a time (K >= 4), their 4 joint indices as one
     * 8-byte load and their 4 weights as one 16-byte load splatted within
     * lanes, in place of 4 index loads and 4 broadcasts (the same products
     * in the same order: the same floats); the rest one at a time.
     * Measured on AMD Zen 4 (100,000 vertices, packed), with the
     * overlapping stores: LBS 4 / 8 positions +6 / +9 %, normals with
     * skip_normalize +1.5-4 / +3-9 %; with renormalised normals 3-4 %
     * slower (lbs_loop). */
    __m256 A = _mm256_setzero_ps(), B = _mm256_setzero_ps();
    uint32_t i = 0;
    const uint32_t G = GRP ? K / 4 * 4 : 0; /* influences taken 4 at a time */
    SKS_UNROLL
    for (; i < G; i += 4) {
      uint64_t jj;
      memcpy(&jj, jv + i, sizeof jj);
      const __m128 w4 = _mm_loadu_ps(wv + i);
      const __m256 W = _mm256_set_m128(w4, w4);
      SKS_UNROLL
      for (int l = 0; l < 4; ++l) {
        const float *m = pal + 16 * (size_t)(uint16_t)(jj >> (16 * l));
        const __m256 w = l == 0 ? _mm256_permute_ps(W, 0x00)
                       : l == 1 ? _mm256_permute_ps(W, 0x55)
                       : l == 2 ? _mm256_permute_ps(W, 0xAA) : _mm256_permute_ps(W, 0xFF);
        if (i == 0 && l == 0) {
          A = _mm256_mul_ps(w, _mm256_loadu_ps(m));
          B = _mm256_mul_ps(w, _mm256_loadu_ps(m + 8));
        } else {
          A = _mm256_fmadd_ps(w, _mm256_loadu_ps(m), A);
          B = _mm256_fmadd_ps(w, _mm256_loadu_ps(m + 8), B);
        }
      }
    }
    SKS_UNROLL
    for (; i < K; ++i) {
      const float *m = pal + 16 * (size_t)jv[i];
      const __m256 w = _mm256_broadcast_ss(wv + i);
      if (i == 0) {
        A = _mm256_mul_ps(w, _mm256_loadu_ps(m));
        B = _mm256_mul_ps(w, _mm256_loadu_ps(m + 8));
      } else {
        A = _mm256_fmadd_ps(w, _mm256_loadu_ps(m), A);
        B = _mm256_fmadd_ps(w, _mm256_loadu_ps(m + 8), B);
      }
    }
    *pA = A; *pB = B;
}

/* Blends one vertex's K palette matrices, stores its position (3 floats at
 * po) and returns its (unnormalised) blended normal when N. */
SKS_INLINE __m128 lbs_vertex(const float *restrict pal, const uint16_t *restrict jv, const float *restrict wv,
                             const float *restrict p, const float *restrict n, float *restrict po,
                             const __m128i m3, const uint32_t K, const int N) {
  __m128 c0, c1, c2, c3;
  if (K == 1) {
    const float *m = pal + 16 * (size_t)jv[0];
    c0 = _mm_loadu_ps(m); c1 = _mm_loadu_ps(m + 4); c2 = _mm_loadu_ps(m + 8); c3 = _mm_loadu_ps(m + 12);
  } else {
    __m256 A, B;
    lbs_blend(pal, jv, wv, K, 0, &A, &B);
    c0 = _mm256_castps256_ps128(A); c1 = _mm256_extractf128_ps(A, 1);
    c2 = _mm256_castps256_ps128(B); c3 = _mm256_extractf128_ps(B, 1);
  }
  __m128 r = _mm_fmadd_ps(c0, _mm_broadcast_ss(p),
                          _mm_fmadd_ps(c1, _mm_broadcast_ss(p + 1), _mm_fmadd_ps(c2, _mm_broadcast_ss(p + 2), c3)));
  if (K == 1) r = _mm_mul_ps(r, _mm_broadcast_ss(wv));
  SKS_STORE3(po, m3, r);
  if (!N) return r;
  __m128 q = _mm_fmadd_ps(c0, _mm_broadcast_ss(n),
                          _mm_fmadd_ps(c1, _mm_broadcast_ss(n + 1), _mm_mul_ps(c2, _mm_broadcast_ss(n + 2))));
  if (K == 1) q = _mm_mul_ps(q, _mm_broadcast_ss(wv));
  return q;
}

/* 1/sqrt(l2) to ~1e-7 relative (rsqrt estimate + one Newton step); 0 where
 * l2 <= FLT_MIN (zero-length normals stay zero). */
SKS_INLINE __m128 rsqrt_nr4(__m128 l2) {
  const __m128 y = _mm_rsqrt_ps(l2);
  const __m128 hl = _mm_mul_ps(_mm_set1_ps(0.5f), l2);
  const __m128 r = _mm_mul_ps(y, _mm_fnmadd_ps(hl, _mm_mul_ps(y, y), _mm_set1_ps(1.5f)));
  return _mm_and_ps(r, _mm_cmpgt_ps(l2, _mm_set1_ps(FLT_MIN)));
}
SKS_INLINE __m256 rsqrt_nr8(__m256 l2) {
  const __m256 y = _mm256_rsqrt_ps(l2);
  const __m256 hl = _mm256_mul_ps(_mm256_set1_ps(0.5f), l2);
  const __m256 r = _mm256_mul_ps(y, _mm256_fnmadd_ps(hl, _mm256_mul_ps(y, y), _mm256_set1_ps(1.5f)));
  return _mm256_and_ps(r, _mm256_cmp_ps(l2, _mm256_set1_ps(FLT_MIN), _CMP_GT_OQ));
}

/* x, y, z of 8 packed (stride 3) vectors. */
SKS_INLINE void load3x8(const float *p, __m256 *x, __m256 *y, __m256 *z) {
  const __m256 m03 = _mm256_loadu2_m128(p + 12, p), m14 = _mm256_loadu2_m128(p + 16, p + 4);
  const __m256 m25 = _mm256_loadu2_m128(p + 20, p + 8);
  const __m256 xy = _mm256_shuffle_ps(m14, m25, _MM_SHUFFLE(2, 1, 3, 2));
  const __m256 yz = _mm256_shuffle_ps(m03, m14, _MM_SHUFFLE(1, 0, 2, 1));
  *x = _mm256_shuffle_ps(m03, xy, _MM_SHUFFLE(2, 0, 3, 0));
  *y = _mm256_shuffle_ps(yz, xy, _MM_SHUFFLE(3, 1, 2, 0));
  *z = _mm256_shuffle_ps(yz, m25, _MM_SHUFFLE(3, 0, 3, 1));
}

/* x, y, z of 8 vectors -> the 6 packed 4-float rows, rows 0 / 3 in r03 (lower / upper half), 1 / 4 in r14, 2 / 5 in r25. */
SKS_INLINE void rows3x8(__m256 x, __m256 y, __m256 z, __m256 *r03, __m256 *r14, __m256 *r25) {
  const __m256 rxy = _mm256_shuffle_ps(x, y, _MM_SHUFFLE(2, 0, 2, 0));
  const __m256 ryz = _mm256_shuffle_ps(y, z, _MM_SHUFFLE(3, 1, 3, 1));
  const __m256 rzx = _mm256_shuffle_ps(z, x, _MM_SHUFFLE(3, 1, 2, 0));
  *r03 = _mm256_shuffle_ps(rxy, rzx, _MM_SHUFFLE(2, 0, 2, 0));
  *r14 = _mm256_shuffle_ps(ryz, rxy, _MM_SHUFFLE(3, 1, 2, 0));
  *r25 = _mm256_shuffle_ps(rzx, ryz, _MM_SHUFFLE(3, 1, 3, 1));
}

SKS_INLINE void store3x8(float *p, __m256 x, __m256 y, __m256 z) {
  __m256 r03, r14, r25;
  rows3x8(x, y, z, &r03, &r14, &r25);
  _mm256_storeu_ps(p, _mm256_permute2f128_ps(r03, r14, 0x20));
  _mm256_storeu_ps(p + 8, _mm256_permute2f128_ps(r25, r03, 0x30));
  _mm256_storeu_ps(p + 16, _mm256_permute2f128_ps(r14, r25, 0x31));
}

/* PACKED: every stride is the tight one (known at compile time, so the
 * 4-vertex block addresses one pointer per array instead of spilling 24).
 * NORM: renormalise normals. */
SKS_INLINE void lbs_loop(const sks_skinning_job *job, const sks_skin_args *a, size_t begin, size_t end,
                         const uint32_t K, const int N, const int PACKED, const int NORM) {
  const float *restrict pal = job->palette[0].m;
  SKS_JOB_ARRAYS(job, a);
  const size_t js = PACKED ? K : a->js, ws = PACKED ? K : a->ws, ips = PACKED ? 3 : a->ips;
  const size_t ins = PACKED ? 3 : a->ins, ops = PACKED ? 3 : a->ops, ons = PACKED ? 3 : a->ons;
  const __m128i m3 = _mm_setr_epi32(-1, -1, -1, 0);
  size_t v = begin;
  if (PACKED) {
    /* Two vertices a register from the blended matrices on (see the top of
     * the file): the same products in the same order as lbs_vertex, so the
     * same floats as the strided path and the tail. Measured on AMD Zen 4
     * (100,000 vertices, bench_skinning, alternating processes) against
     * one vertex at a time with 4-row stores: LBS 4 positions 343 -> 368,
     * + normals 191 -> 215, + normals with skip_normalize 263 -> 290;
     * LBS 8 194 -> 204 / 128 -> 128 / 162 -> 171 Mverts/s. Grouped index
     * and weight loads are 3 % (LBS 4) and 4 % (LBS 8) slower with
     * renormalised normals there, so those broadcast per influence. A block
     * reads and writes the float after vertex v + 3 (vertex v + 4's x, which
     * the next block rewrites), so it needs v + 4 < end. */
    const int G2 = !(N && NORM);
    for (; v + 4 < end; v += 4) {
      __m256 Q[2];
      SKS_UNROLL
      for (int l = 0; l < 2; ++l) {
        const size_t u = v + 2 * (size_t)l;
        __m256 Aa, Ba, Ab, Bb;
        lbs_blend(pal, joints + u * K, weights + u * K, K, G2, &Aa, &Ba);
        lbs_blend(pal, joints + (u + 1) * K, weights + (u + 1) * K, K, G2, &Ab, &Bb);
        const __m256 C0 = _mm256_permute2f128_ps(Aa, Ab, 0x20), C1 = _mm256_permute2f128_ps(Aa, Ab, 0x31);
        const __m256 C2 = _mm256_permute2f128_ps(Ba, Bb, 0x20), C3 = _mm256_permute2f128_ps(Ba, Bb, 0x31);
        const __m256 P = _mm256_loadu2_m128(pin + (u + 1) * 3, pin + u * 3);
        const __m256 R = _mm256_fmadd_ps(C0, _mm256_permute_ps(P, 0x00),
                                         _mm256_fmadd_ps(C1, _mm256_permute_ps(P, 0x55),
                                                         _mm256_fmadd_ps(C2, _mm256_permute_ps(P, 0xAA), C3)));
        _mm_storeu_ps(pout + u * 3, _mm256_castps256_ps128(R));
        _mm_storeu_ps(pout + (u + 1) * 3, _mm256_extractf128_ps(R, 1));
        if (!N) continue;
        const __m256 Nn = _mm256_loadu2_m128(nin + (u + 1) * 3, nin + u * 3);
        Q[l] = _mm256_fmadd_ps(C0, _mm256_permute_ps(Nn, 0x00),
                               _mm256_fmadd_ps(C1, _mm256_permute_ps(Nn, 0x55), _mm256_mul_ps(C2, _mm256_permute_ps(Nn, 0xAA))));
        if (NORM) continue;
        _mm_storeu_ps(nout + u * 3, _mm256_castps256_ps128(Q[l]));
        _mm_storeu_ps(nout + (u + 1) * 3, _mm256_extractf128_ps(Q[l], 1));
      }
      if (!N || !NORM) continue;
      /* lanes 0, 1 of each half: x, y, z of normals v, v + 2 | v + 1, v + 3 */
      const __m256 U = _mm256_unpacklo_ps(Q[0], Q[1]), H = _mm256_unpackhi_ps(Q[0], Q[1]);
      const __m256 Y = _mm256_permute_ps(U, 0x4E);
      const __m256 S = rsqrt_nr8(_mm256_fmadd_ps(U, U, _mm256_fmadd_ps(Y, Y, _mm256_mul_ps(H, H))));
      const __m256 N01 = _mm256_mul_ps(Q[0], _mm256_permute_ps(S, 0x00)), N23 = _mm256_mul_ps(Q[1], _mm256_permute_ps(S, 0x55));
      _mm_storeu_ps(nout + v * 3, _mm256_castps256_ps128(N01));
      _mm_storeu_ps(nout + (v + 1) * 3, _mm256_extractf128_ps(N01, 1));
      _mm_storeu_ps(nout + (v + 2) * 3, _mm256_castps256_ps128(N23));
      _mm_storeu_ps(nout + (v + 3) * 3, _mm256_extractf128_ps(N23, 1));
    }
  }
  if (N && !PACKED) {
    for (; v + 4 <= end; v += 4) {
      __m128 q[4];
      SKS_UNROLL
      for (int l = 0; l < 4; ++l) {
        const size_t u = v + (size_t)l;
        q[l] = lbs_vertex(pal, joints + u * js, weights + u * ws, pin + u * ips, nin + u * ins, pout + u * ops, m3, K, 1);
      }
      if (NORM) {
        /* x, y, z of the 4 normals (the 4th lanes are not needed) */
        const __m128 t0 = _mm_unpacklo_ps(q[0], q[1]), t1 = _mm_unpacklo_ps(q[2], q[3]);
        const __m128 t2 = _mm_unpackhi_ps(q[0], q[1]), t3 = _mm_unpackhi_ps(q[2], q[3]);
        __m128 x = _mm_movelh_ps(t0, t1), y = _mm_movehl_ps(t1, t0), z = _mm_movelh_ps(t2, t3);
        const __m128 s = rsqrt_nr4(_mm_fmadd_ps(x, x, _mm_fmadd_ps(y, y, _mm_mul_ps(z, z))));
        q[0] = _mm_mul_ps(x, s); q[1] = _mm_mul_ps(y, s); q[2] = _mm_mul_ps(z, s); q[3] = _mm_setzero_ps();
        _MM_TRANSPOSE4_PS(q[0], q[1], q[2], q[3]);
      }
      SKS_UNROLL
      for (int l = 0; l < 4; ++l) SKS_STORE3(nout + (v + (size_t)l) * ons, m3, q[l]);
    }
  }
  for (; v < end; ++v) {
    __m128 q = lbs_vertex(pal, joints + v * js, weights + v * ws, pin + v * ips, N ? nin + v * ins : NULL,
                          pout + v * ops, m3, K, N);
    if (N) {
      if (NORM) { /* same arithmetic as the 4-vertex blocks: results do not depend on the split */
        const __m128 x = _mm_permute_ps(q, 0x00), y = _mm_permute_ps(q, 0x55), z = _mm_permute_ps(q, 0xAA);
        q = _mm_mul_ps(q, rsqrt_nr4(_mm_fmadd_ps(x, x, _mm_fmadd_ps(y, y, _mm_mul_ps(z, z)))));
      }
      SKS_STORE3(nout + v * ons, m3, q);
    }
  }
}

/* One influence, 8 vertices a block as 4 pairs: lane half 0 of pair i is
 * vertex v + i, half 1 is v + 4 + i, so one 256-bit FMA transforms two
 * vertices (columns and coordinates loaded per half, coordinates splat
 * within each half). Packed positions leave as 3 shuffled 4-float rows per
 * half, each row times its vertices' weights (permuted from the 8 weights
 * [w_v .. w_v+3 | w_v+4 .. w_v+7]), 6 stores per 8 vertices; normals are
 * transposed within the halves to x, y, z of the 8 vertices in order,
 * weighted and renormalised 8 wide and stored as 6 rows. Strided buffers:
 * each pair times its two weights, one store per vertex. Each
 * vertex goes through the same operations as lbs_vertex (K == 1) and the
 * per-vertex tail: results do not depend on where a range starts. */
SKS_INLINE __m256 pair_weight(const float *restrict wv, const size_t v, const size_t ws, const int i) {
  return _mm256_blend_ps(_mm256_broadcast_ss(wv + (v + (size_t)i) * ws), _mm256_broadcast_ss(wv + (v + 4 + (size_t)i) * ws),
                         0xF0);
}

/* store3x8 with 6 half-register stores in place of the 3 cross-half shuffles. */
SKS_INLINE void store3x8_rows(float *p, __m256 x, __m256 y, __m256 z) {
  __m256 r03, r14, r25;
  rows3x8(x, y, z, &r03, &r14, &r25);
  _mm_storeu_ps(p, _mm256_castps256_ps128(r03)); _mm_storeu_ps(p + 4, _mm256_castps256_ps128(r14));
  _mm_storeu_ps(p + 8, _mm256_castps256_ps128(r25)); _mm_storeu_ps(p + 12, _mm256_extractf128_ps(r03, 1));
  _mm_storeu_ps(p + 16, _mm256_extractf128_ps(r14, 1)); _mm_storeu_ps(p + 20, _mm256_extractf128_ps(r25, 1));
}

/* x, y, z of 4 pairs (x y z _ per half) -> x, y, z of their 8 vertices in the pairs' lane order. */
SKS_INLINE void pairs_to_soa(const __m256 *q, __m256 *x, __m256 *y, __m256 *z) {
  const __m256 t0 = _mm256_unpacklo_ps(q[0], q[1]), t1 = _mm256_unpackhi_ps(q[0], q[1]);
  const __m256 t2 = _mm256_unpacklo_ps(q[2], q[3]), t3 = _mm256_unpackhi_ps(q[2], q[3]);
  *x = _mm256_shuffle_ps(t0, t2, 0x44); *y = _mm256_shuffle_ps(t0, t2, 0xEE); *z = _mm256_shuffle_ps(t1, t3, 0x44);
}

SKS_INLINE void soa_to_pairs(__m256 x, __m256 y, __m256 z, __m256 *q) {
  const __m256 a = _mm256_unpacklo_ps(x, y), b = _mm256_unpackhi_ps(x, y);
  const __m256 c = _mm256_unpacklo_ps(z, z), d = _mm256_unpackhi_ps(z, z);
  q[0] = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(3, 0, 1, 0)); q[1] = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(3, 2, 3, 2));
  q[2] = _mm256_shuffle_ps(b, d, _MM_SHUFFLE(3, 0, 1, 0)); q[3] = _mm256_shuffle_ps(b, d, _MM_SHUFFLE(3, 2, 3, 2));
}

/* Stores the 8 vertices of 4 pairs (x y z _ per half) to o. Packed: per
 * half, 4 vertices become 3 rows [x0 y0 z0 x1] [y1 z1 x2 y2] [z2 x3 y3 z3]. */
SKS_INLINE void store_pairs(float *restrict o, const size_t s, const __m256 *r, const __m256 W8, const int PACKED,
                            const int UNIT) {
  if (PACKED) { /* and the rows times their vertices' weights (one multiply per row, not per pair) */
    __m256 t0 = _mm256_blend_ps(r[0], _mm256_permute_ps(r[1], 0x00), 0x88);
    __m256 t1 = _mm256_shuffle_ps(r[1], r[2], _MM_SHUFFLE(1, 0, 2, 1));
    const __m256 u = _mm256_shuffle_ps(r[2], r[3], _MM_SHUFFLE(0, 0, 2, 2));
    __m256 t2 = _mm256_shuffle_ps(u, r[3], _MM_SHUFFLE(2, 1, 2, 0));
    if (!UNIT) {
      t0 = _mm256_mul_ps(t0, _mm256_permutevar_ps(W8, _mm256_setr_epi32(0, 0, 0, 1, 0, 0, 0, 1)));
      t1 = _mm256_mul_ps(t1, _mm256_permutevar_ps(W8, _mm256_setr_epi32(1, 1, 2, 2, 1, 1, 2, 2)));
      t2 = _mm256_mul_ps(t2, _mm256_permutevar_ps(W8, _mm256_setr_epi32(2, 3, 3, 3, 2, 3, 3, 3)));
    }
    _mm_storeu_ps(o, _mm256_castps256_ps128(t0)); _mm_storeu_ps(o + 4, _mm256_castps256_ps128(t1));
    _mm_storeu_ps(o + 8, _mm256_castps256_ps128(t2)); _mm_storeu_ps(o + 12, _mm256_extractf128_ps(t0, 1));
    _mm_storeu_ps(o + 16, _mm256_extractf128_ps(t1, 1)); _mm_storeu_ps(o + 20, _mm256_extractf128_ps(t2, 1));
    return;
  }
  SKS_UNROLL
  for (int i = 0; i < 4; ++i) {
    SKS_STORE3(o + (size_t)i * s, 0, _mm256_castps256_ps128(r[i]));
    SKS_STORE3(o + (size_t)(4 + i) * s, 0, _mm256_extractf128_ps(r[i], 1));
  }
}

SKS_INLINE void lbs1_loop(const sks_skinning_job *job, const sks_skin_args *a, size_t begin, size_t end, const int N,
                          const int PACKED, const int NORM, const int UNIT) {
  const float *restrict pal = job->palette[0].m;
  SKS_JOB_ARRAYS(job, a);
  const size_t js = PACKED ? 1 : a->js, ws = UNIT ? 0 : PACKED ? 1 : a->ws, ips = PACKED ? 3 : a->ips;
  const size_t ins = PACKED ? 3 : a->ins, ops = PACKED ? 3 : a->ops, ons = PACKED ? 3 : a->ons;
  const __m128i m3 = _mm_setr_epi32(-1, -1, -1, 0);
  size_t v = begin;
  /* A block reads the float after each vertex's position and normal (the
   * 4th lane of a half): for the block's last vertex that is vertex v + 8's
   * first float, so a block needs v + 8 < end. */
  for (; v + 8 < end; v += 8) {
    const __m256 W8 = PACKED && !UNIT ? _mm256_loadu_ps(weights + v) : _mm256_setzero_ps();
    __m256 r[4], q[4];
    SKS_UNROLL
    for (int i = 0; i < 4; ++i) {
      const size_t lo = v + (size_t)i, hi = lo + 4;
      const float *ma = pal + 16 * (size_t)joints[lo * js], *mb = pal + 16 * (size_t)joints[hi * js];
      __m256 c0, c1, c2, c3;
      if (!N) {
        /* positions: each column of the two matrices broadcast to both
         * halves by the load itself and the halves taken by a blend, so no
         * shuffle (the loop's bottleneck: the splats and the rows' stores
         * share the two shuffle pipes); the permutes below: LBS 1 influence
         * positions 793-797 -> 966-982 Mverts/s, with a weights array 721-722
         * -> 873-883 (AMD Zen 4, 100,000 vertices, bench_skinning, two
         * builds alternated twice in one session, 2026-12-07). With
         * normals it measured 5-8 % slower (more loads), so they keep the permutes. */
        c0 = _mm256_blend_ps(_mm256_broadcast_ps((const __m128 *)(const void *)ma), _mm256_broadcast_ps((const __m128 *)(const void *)mb), 0xF0);
        c1 = _mm256_blend_ps(_mm256_broadcast_ps((const __m128 *)(const void *)(ma + 4)), _mm256_broadcast_ps((const __m128 *)(const void *)(mb + 4)), 0xF0);
        c2 = _mm256_blend_ps(_mm256_broadcast_ps((const __m128 *)(const void *)(ma + 8)), _mm256_broadcast_ps((const __m128 *)(const void *)(mb + 8)), 0xF0);
        c3 = _mm256_blend_ps(_mm256_broadcast_ps((const __m128 *)(const void *)(ma + 12)), _mm256_broadcast_ps((const __m128 *)(const void *)(mb + 12)), 0xF0);
      } else {
        /* [c0 c1] and [c2 c3] of each as one 32-byte load, paired by 4
         * cross-half permutes: 928 against 828 Mverts/s (positions) for 4
         * 16-byte loads + 4 inserts (AMD Zen 4, 100,000 vertices) */
        const __m256 Aa = _mm256_loadu_ps(ma), Ab = _mm256_loadu_ps(mb), Ba = _mm256_loadu_ps(ma + 8), Bb = _mm256_loadu_ps(mb + 8);
        c0 = _mm256_permute2f128_ps(Aa, Ab, 0x20); c1 = _mm256_permute2f128_ps(Aa, Ab, 0x31);
        c2 = _mm256_permute2f128_ps(Ba, Bb, 0x20); c3 = _mm256_permute2f128_ps(Ba, Bb, 0x31);
      }
      const __m256 p = _mm256_loadu2_m128(pin + hi * ips, pin + lo * ips);
      r[i] = _mm256_fmadd_ps(c0, _mm256_permute_ps(p, 0x00),
                             _mm256_fmadd_ps(c1, _mm256_permute_ps(p, 0x55), _mm256_fmadd_ps(c2, _mm256_permute_ps(p, 0xAA), c3)));
      /* the weight: here, or per packed row (store_pairs) */
      if (!PACKED && !UNIT) r[i] = _mm256_mul_ps(r[i], pair_weight(weights, v, ws, i));
      if (N) {
        const __m256 n = _mm256_loadu2_m128(nin + hi * ins, nin + lo * ins);
        q[i] = _mm256_fmadd_ps(c0, _mm256_permute_ps(n, 0x00),
                               _mm256_fmadd_ps(c1, _mm256_permute_ps(n, 0x55), _mm256_mul_ps(c2, _mm256_permute_ps(n, 0xAA))));
        /* the weight: here, per packed row, or 8 wide once the normals are transposed */
        if (!PACKED && !UNIT) q[i] = _mm256_mul_ps(q[i], pair_weight(weights, v, ws, i));
      }
    }
    store_pairs(pout + v * ops, ops, r, W8, PACKED, UNIT);
    if (!N) continue;
    if (NORM) {
      __m256 x, y, z;
      pairs_to_soa(q, &x, &y, &z);
      if (PACKED && !UNIT) { x = _mm256_mul_ps(x, W8); y = _mm256_mul_ps(y, W8); z = _mm256_mul_ps(z, W8); }
      const __m256 s = rsqrt_nr8(_mm256_fmadd_ps(x, x, _mm256_fmadd_ps(y, y, _mm256_mul_ps(z, z))));
      x = _mm256_mul_ps(x, s); y = _mm256_mul_ps(y, s); z = _mm256_mul_ps(z, s);
      if (PACKED) {
        store3x8_rows(nout + v * 3, x, y, z);
        continue;
      }
      soa_to_pairs(x, y, z, q);
    }
    store_pairs(nout + v * ons, ons, q, W8, PACKED, UNIT);
  }
  for (; v < end; ++v) {
    __m128 q = lbs_vertex(pal, joints + v * js, weights + v * ws, pin + v * ips, N ? nin + v * ins : NULL,
                          pout + v * ops, m3, 1, N);
    if (N) {
      if (NORM) {
        const __m128 x = _mm_permute_ps(q, 0x00), y = _mm_permute_ps(q, 0x55), z = _mm_permute_ps(q, 0xAA);
        q = _mm_mul_ps(q, rsqrt_nr4(_mm_fmadd_ps(x, x, _mm_fmadd_ps(y, y, _mm_mul_ps(z, z)))));
      }
      SKS_STORE3(nout + v * ons, m3, q);
    }
  }
}

SKS_INLINE void lbs_avx2(const sks_skinning_job *job, const sks_skin_args *a, size_t begin, size_t end,
                         const uint32_t K, const int N) {
  const int packed = a->js == K && a->ws == K && a->ips == 3 && a->ops == 3 && (!N || (a->ins == 3 && a->ons == 3));
  if (K == 1) {
    /* unit: no weights (every weight 1, a->ws == 0): no weight loads and
     * no multiplies, the same floats (x 1.0f is exact) */
    const int unit = a->ws == 0;
    const int packed1 = a->js == 1 && (a->ws == 1 || unit) && a->ips == 3 && a->ops == 3 && (!N || (a->ins == 3 && a->ons == 3));
    const int norm = N && a->normalize;
#define SKS_LBS1(P, U) \
    (!N ? lbs1_loop(job, a, begin, end, 0, P, 0, U) : norm ? lbs1_loop(job, a, begin, end, 1, P, 1, U) : lbs1_loop(job, a, begin, end, 1, P, 0, U))
    if (packed1 && unit) SKS_LBS1(1, 1);
    else if (packed1) SKS_LBS1(1, 0);
    else if (unit) SKS_LBS1(0, 1);
    else SKS_LBS1(0, 0);
#undef SKS_LBS1
  } else if (!N) {
    if (packed) lbs_loop(job, a, begin, end, K, 0, 1, 0);
    else lbs_loop(job, a, begin, end, K, 0, 0, 0);
  } else if (packed) {
    if (a->normalize) lbs_loop(job, a, begin, end, K, 1, 1, 1);
    else lbs_loop(job, a, begin, end, K, 1, 1, 0);
  } else {
    if (a->normalize) lbs_loop(job, a, begin, end, K, 1, 0, 1);
    else lbs_loop(job, a, begin, end, K, 1, 0, 0);
  }
}

/* One influence and the positions-only variants are functions of their own
 * (SKS_NOINLINE: ~25 % of LBS 1 influence, positions, was the stack-kept
 * vertex counter; 4 / 8 influences positions +10-20 %). The 2-8 influence
 * normals variants stay inlined here: out of line they measured 5-15 %
 * slower (LBS 4 / 8 influences, positions + normals). */
#define SKS_LBS_FN(K, N)                                                                                         \
  SKS_NOINLINE void lbs_avx2_##K##_##N(const sks_skinning_job *job, const sks_skin_args *a, size_t begin, size_t end) { \
    lbs_avx2(job, a, begin, end, K, N);                                                                          \
  }
#define SKS_LBS_INLINE(K) \
  SKS_INLINE void lbs_avx2_##K##_1(const sks_skinning_job *job, const sks_skin_args *a, size_t begin, size_t end) { \
    lbs_avx2(job, a, begin, end, K, 1);                                                                          \
  }
SKS_LBS_FN(1, 0) SKS_LBS_FN(1, 1) SKS_LBS_FN(2, 0) SKS_LBS_INLINE(2) SKS_LBS_FN(3, 0) SKS_LBS_INLINE(3)
SKS_LBS_FN(4, 0) SKS_LBS_INLINE(4) SKS_LBS_FN(5, 0) SKS_LBS_INLINE(5) SKS_LBS_FN(6, 0) SKS_LBS_INLINE(6)
SKS_LBS_FN(7, 0) SKS_LBS_INLINE(7) SKS_LBS_FN(8, 0) SKS_LBS_INLINE(8)
#undef SKS_LBS_FN
#undef SKS_LBS_INLINE
#define lbs_avx2_fn(job, a, begin, end, K, N) lbs_avx2_##K##_##N(job, a, begin, end)

/* ---- DQS ------------------------------------------------------------------ */

/* Weighted sum of one vertex's K dual quaternions, [r | d] in one register.
 * With a flip table (palettes of up to SKS_FLIP_STRIDE) each influence after
 * the first blends the entry its row gives (itself or its negation: one
 * offset load, no sign); else the sign is a 4-lane dot with the first
 * influence's r. */
SKS_INLINE __m256 dqs_blend(const float *restrict dqf, const uint16_t *restrict off, const uint16_t *restrict jv,
                            const float *restrict wv, const uint32_t K, const int FLIP) {
  const __m256 q0 = _mm256_loadu_ps(dqf + 8 * (size_t)jv[0]);
  __m256 acc = _mm256_mul_ps(_mm256_broadcast_ss(wv), q0);
  if (FLIP) {
    const char *dqb = (const char *)dqf;
    const uint16_t *orow = off + (size_t)jv[0] * SKS_FLIP_STRIDE;
    SKS_UNROLL
    for (uint32_t i = 1; i < K; ++i) {
      const float *q = (const float *)(const void *)(dqb + orow[jv[i]]);
      acc = _mm256_fmadd_ps(_mm256_broadcast_ss(wv + i), _mm256_loadu_ps(q), acc);
    }
    return acc;
  }
  const __m128 r0 = _mm256_castps256_ps128(q0);
  SKS_UNROLL
  for (uint32_t i = 1; i < K; ++i) {
    const __m256 qi = _mm256_loadu_ps(dqf + 8 * (size_t)jv[i]);
    __m128 d = _mm_mul_ps(r0, _mm256_castps256_ps128(qi));
    d = _mm_add_ps(d, _mm_permute_ps(d, 0x4E));
    d = _mm_add_ps(d, _mm_permute_ps(d, 0xB1)); /* dot(r0, ri) in every lane */
    const __m128 fl = _mm_and_ps(_mm_cmplt_ps(d, _mm_setzero_ps()), _mm_set1_ps(-0.0f));
    const __m128 w = _mm_xor_ps(_mm_broadcast_ss(wv + i), fl);
    acc = _mm256_fmadd_ps(_mm256_broadcastss_ps(w), qi, acc);
  }
  return acc;
}

/* x, y, z of 8 vectors at stride s (floats). */
SKS_INLINE void gather3x8(const float *p, size_t s, __m256 *x, __m256 *y, __m256 *z) {
  const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)s));
  *x = _mm256_i32gather_ps(p, idx, 4);
  *y = _mm256_i32gather_ps(p + 1, idx, 4);
  *z = _mm256_i32gather_ps(p + 2, idx, 4);
}

SKS_INLINE void scatter3x8(float *p, size_t s, __m256 x, __m256 y, __m256 z) {
  float X[8], Y[8], Z[8];
  _mm256_storeu_ps(X, x); _mm256_storeu_ps(Y, y); _mm256_storeu_ps(Z, z);
  for (int l = 0; l < 8; ++l) {
    float *o = p + (size_t)l * s;
    o[0] = X[l]; o[1] = Y[l]; o[2] = Z[l];
  }
}

/* v' = v + 2w (u x v) + 2 u x (u x v) = v + 2 (w c + u x c), c = u x v, for a
 * unit r = (u, w). For r of any length the rotation by r / |r| is
 * v + (2 / |r|^2) (w c + u x c) with c, u, w from r as it is: s = 2 / |r|^2,
 * so r is never normalised (and the reciprocal runs beside c). */
SKS_INLINE void rotate8(__m256 rx, __m256 ry, __m256 rz, __m256 rw, __m256 s, __m256 *x, __m256 *y, __m256 *z) {
  const __m256 cx = _mm256_fmsub_ps(ry, *z, _mm256_mul_ps(rz, *y));
  const __m256 cy = _mm256_fmsub_ps(rz, *x, _mm256_mul_ps(rx, *z));
  const __m256 cz = _mm256_fmsub_ps(rx, *y, _mm256_mul_ps(ry, *x));
  const __m256 ex = _mm256_fmadd_ps(rw, cx, _mm256_fmsub_ps(ry, cz, _mm256_mul_ps(rz, cy)));
  const __m256 ey = _mm256_fmadd_ps(rw, cy, _mm256_fmsub_ps(rz, cx, _mm256_mul_ps(rx, cz)));
  const __m256 ez = _mm256_fmadd_ps(rw, cz, _mm256_fmsub_ps(rx, cy, _mm256_mul_ps(ry, cx)));
  *x = _mm256_fmadd_ps(s, ex, *x);
  *y = _mm256_fmadd_ps(s, ey, *y);
  *z = _mm256_fmadd_ps(s, ez, *z);
}

/* One block of cnt <= 8 vertices from v (cnt is the constant 8 in the main
 * loop, so its loads and stores are the packed / gathered full-width ones). A
 * short block's missing vertices repeat the last real one and are neither read
 * (gathered at offset 0) nor written. */
SKS_INLINE void dqs_block(const float *restrict dqf, const uint16_t *restrict off,
                          const uint16_t *restrict joints, const float *restrict weights, const float *restrict pin,
                          const float *restrict nin, float *restrict pout, float *restrict nout, const size_t js,
                          const size_t ws, const size_t ips, const size_t ins, const size_t ops, const size_t ons,
                          const size_t v, const size_t cnt, const uint32_t K, const int N, const int NORM,
                          const int FLIP) {
  __m256 q[8];
  SKS_UNROLL
  for (size_t l = 0; l < 8; ++l) {
    const size_t u = v + (l < cnt ? l : cnt - 1);
    q[l] = dqs_blend(dqf, off, joints + u * js, weights + u * ws, K, FLIP);
  }
  /* 8x8 transpose: [r|d] per vertex -> rx .. dw over 8 vertices. */
  __m256 u[4], w[4];
  SKS_UNROLL
  for (int h = 0; h < 2; ++h) {
    __m256 *o = h ? w : u;
    const __m256 *s = q + 4 * h;
    const __m256 t0 = _mm256_unpacklo_ps(s[0], s[1]), t1 = _mm256_unpackhi_ps(s[0], s[1]);
    const __m256 t2 = _mm256_unpacklo_ps(s[2], s[3]), t3 = _mm256_unpackhi_ps(s[2], s[3]);
    o[0] = _mm256_shuffle_ps(t0, t2, 0x44); o[1] = _mm256_shuffle_ps(t0, t2, 0xEE);
    o[2] = _mm256_shuffle_ps(t1, t3, 0x44); o[3] = _mm256_shuffle_ps(t1, t3, 0xEE);
  }
  const __m256 rx = _mm256_permute2f128_ps(u[0], w[0], 0x20), ry = _mm256_permute2f128_ps(u[1], w[1], 0x20);
  const __m256 rz = _mm256_permute2f128_ps(u[2], w[2], 0x20), rw = _mm256_permute2f128_ps(u[3], w[3], 0x20);
  const __m256 dx = _mm256_permute2f128_ps(u[0], w[0], 0x31), dy = _mm256_permute2f128_ps(u[1], w[1], 0x31);
  const __m256 dz = _mm256_permute2f128_ps(u[2], w[2], 0x31), dw = _mm256_permute2f128_ps(u[3], w[3], 0x31);
  /* Dividing r and d by |r| (the reference's normalisation) scales every
   * product of two of their components by 1 / |r|^2: r and d are used as
   * blended and s = 2 / |r|^2 (reciprocal estimate + one Newton step, ~1e-7
   * relative; 0 where |r|^2 <= FLT_MIN, as the reference's 0 inverse) scales
   * the rotation and the translation (rw dv - dw rv + rv x dv) once. */
  const __m256 len2 = _mm256_fmadd_ps(rx, rx, _mm256_fmadd_ps(ry, ry, _mm256_fmadd_ps(rz, rz, _mm256_mul_ps(rw, rw))));
  const __m256 e0 = _mm256_rcp_ps(len2);
  const __m256 e1 = _mm256_mul_ps(e0, _mm256_fnmadd_ps(len2, e0, _mm256_set1_ps(2.0f)));
  const __m256 s = _mm256_and_ps(_mm256_add_ps(e1, e1), _mm256_cmp_ps(len2, _mm256_set1_ps(FLT_MIN), _CMP_GT_OQ));
  for (int pass = 0; pass < 1 + N; ++pass) {
    const float *src = (pass ? nin : pin) + v * (pass ? ins : ips);
    float *dst = (pass ? nout : pout) + v * (pass ? ons : ops);
    const size_t is = pass ? ins : ips, os = pass ? ons : ops;
    __m256 x, y, z;
    if (cnt == 8 && is == 3) {
      load3x8(src, &x, &y, &z);
    } else if (cnt == 8) {
      gather3x8(src, is, &x, &y, &z);
    } else {
      float X[8], Y[8], Z[8];
      for (size_t l = 0; l < 8; ++l) {
        const float *e = src + (l < cnt ? l : cnt - 1) * is;
        X[l] = e[0]; Y[l] = e[1]; Z[l] = e[2];
      }
      x = _mm256_loadu_ps(X); y = _mm256_loadu_ps(Y); z = _mm256_loadu_ps(Z);
    }
    if (pass == 0) {
      /* The rotation v + s (w c + u x c), c = u x v, and the translation
       * s (w d.v - d.w u + u x d.v) share their cross product: the point is
       * v + s (w g + u x g - d.w u) with g = c + d.v. */
      const __m256 gx = _mm256_add_ps(_mm256_fmsub_ps(ry, z, _mm256_mul_ps(rz, y)), dx);
      const __m256 gy = _mm256_add_ps(_mm256_fmsub_ps(rz, x, _mm256_mul_ps(rx, z)), dy);
      const __m256 gz = _mm256_add_ps(_mm256_fmsub_ps(rx, y, _mm256_mul_ps(ry, x)), dz);
      const __m256 ex = _mm256_fnmadd_ps(dw, rx, _mm256_fmadd_ps(rw, gx, _mm256_fmsub_ps(ry, gz, _mm256_mul_ps(rz, gy))));
      const __m256 ey = _mm256_fnmadd_ps(dw, ry, _mm256_fmadd_ps(rw, gy, _mm256_fmsub_ps(rz, gx, _mm256_mul_ps(rx, gz))));
      const __m256 ez = _mm256_fnmadd_ps(dw, rz, _mm256_fmadd_ps(rw, gz, _mm256_fmsub_ps(rx, gy, _mm256_mul_ps(ry, gx))));
      x = _mm256_fmadd_ps(s, ex, x); y = _mm256_fmadd_ps(s, ey, y); z = _mm256_fmadd_ps(s, ez, z);
    } else {
      rotate8(rx, ry, rz, rw, s, &x, &y, &z);
    }
    if (pass == 1 && NORM) {
      const __m256 f = rsqrt_nr8(_mm256_fmadd_ps(x, x, _mm256_fmadd_ps(y, y, _mm256_mul_ps(z, z))));
      x = _mm256_mul_ps(x, f); y = _mm256_mul_ps(y, f); z = _mm256_mul_ps(z, f);
    }
    if (cnt == 8 && os == 3) {
      store3x8(dst, x, y, z);
    } else if (cnt == 8) {
      scatter3x8(dst, os, x, y, z);
    } else {
      float X[8], Y[8], Z[8];
      _mm256_storeu_ps(X, x); _mm256_storeu_ps(Y, y); _mm256_storeu_ps(Z, z);
      for (size_t l = 0; l < cnt; ++l) {
        float *o = dst + l * os;
        o[0] = X[l]; o[1] = Y[l]; o[2] = Z[l];
      }
    }
  }
}

SKS_INLINE void dqs_loop(const sks_skinning_job *job, const sks_skin_args *a, const sks_dualquat *dq, size_t begin,
                         size_t end, const uint32_t K, const int N, const int PACKED, const int NORM, const int FLIP) {
  const float *restrict dqf = &dq[0].r.x;
  const size_t js = PACKED ? K : a->js, ws = PACKED ? K : a->ws, ips = PACKED ? 3 : a->ips;
  const size_t ins = PACKED ? 3 : a->ins, ops = PACKED ? 3 : a->ops, ons = PACKED ? 3 : a->ons;
  size_t v = begin;
  for (; v + 8 <= end; v += 8)
    dqs_block(dqf, a->flip_off, job->joints, a->w, job->in_positions, job->in_normals,
              job->out_positions, job->out_normals, js, ws, ips, ins, ops, ons, v, 8, K, N, NORM, FLIP);
  if (v < end)
    dqs_block(dqf, a->flip_off, job->joints, a->w, job->in_positions, job->in_normals,
              job->out_positions, job->out_normals, js, ws, ips, ins, ops, ons, v, end - v, K, N, NORM, FLIP);
}

SKS_INLINE void dqs_avx2(const sks_skinning_job *job, const sks_skin_args *a, const sks_dualquat *dq, size_t begin,
                         size_t end, const uint32_t K, const int N) {
  const int packed = a->js == K && a->ws == K && a->ips == 3 && a->ops == 3 && (!N || (a->ins == 3 && a->ons == 3));
  const int norm = N && a->normalize;
  if (a->flip_off) {
    if (packed && norm) dqs_loop(job, a, dq, begin, end, K, N, 1, 1, 1);
    else if (packed) dqs_loop(job, a, dq, begin, end, K, N, 1, 0, 1);
    else if (norm) dqs_loop(job, a, dq, begin, end, K, N, 0, 1, 1);
    else dqs_loop(job, a, dq, begin, end, K, N, 0, 0, 1);
  } else {
    if (packed && norm) dqs_loop(job, a, dq, begin, end, K, N, 1, 1, 0);
    else if (packed) dqs_loop(job, a, dq, begin, end, K, N, 1, 0, 0);
    else if (norm) dqs_loop(job, a, dq, begin, end, K, N, 0, 1, 0);
    else dqs_loop(job, a, dq, begin, end, K, N, 0, 0, 0);
  }
}

/* Each DQS variant a function of its own (SKS_NOINLINE, as the LBS
 * positions variants): inlined into sks_skin_avx2_range, DQS 4 influences
 * ran at 250 (positions) and 183 (+ normals) Mverts/s, out of line 270 and
 * 190 (AMD Zen 4, 100,000 vertices; DQS / LBS time 1.30 -> 1.21). */
#define SKS_DQS_FN(K, N)                                                                                      \
  SKS_NOINLINE void dqs_avx2_##K##_##N(const sks_skinning_job *job, const sks_skin_args *a, const sks_dualquat *dq, \
                                       size_t begin, size_t end) {                                            \
    dqs_avx2(job, a, dq, begin, end, K, N);                                                                   \
  }
SKS_DQS_FN(1, 0) SKS_DQS_FN(1, 1) SKS_DQS_FN(2, 0) SKS_DQS_FN(2, 1) SKS_DQS_FN(3, 0) SKS_DQS_FN(3, 1)
SKS_DQS_FN(4, 0) SKS_DQS_FN(4, 1) SKS_DQS_FN(5, 0) SKS_DQS_FN(5, 1) SKS_DQS_FN(6, 0) SKS_DQS_FN(6, 1)
SKS_DQS_FN(7, 0) SKS_DQS_FN(7, 1) SKS_DQS_FN(8, 0) SKS_DQS_FN(8, 1)
#undef SKS_DQS_FN
#define dqs_avx2_fn(job, a, dq, begin, end, K, N) dqs_avx2_##K##_##N(job, a, dq, begin, end)

#define SKS_DISPATCH_K(KERNEL, ...)                                        \
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

void sks_skin_avx2_range(const sks_skinning_job *job, const sks_skin_args *a, const sks_dualquat *dq, size_t begin,
                         size_t end) {
  if (begin >= end) return;
  if (job->method == SKS_SKIN_LBS) {
    SKS_DISPATCH_K(lbs_avx2_fn, job, a, begin, end)
  } else {
    SKS_DISPATCH_K(dqs_avx2_fn, job, a, dq, begin, end)
  }
}

/* The largest of total packed joint indices, 64 a step in 4 independent
 * running maxima (a step is 4 loads and 4 maxima, its loop on 64 bytes:
 * the SSE2 scan in skinning.c, one dependent OR per 8 indices, cost 6-11 %
 * of a 4-influence run depending on where the linker put its loop). */
uint16_t sks_skin_avx2_max_index(const uint16_t *joints, size_t total) {
  __m256i m0 = _mm256_setzero_si256(), m1 = m0, m2 = m0, m3 = m0;
  size_t i = 0;
  for (; i + 64 <= total; i += 64) {
    m0 = _mm256_max_epu16(m0, _mm256_loadu_si256((const __m256i *)(const void *)(joints + i)));
    m1 = _mm256_max_epu16(m1, _mm256_loadu_si256((const __m256i *)(const void *)(joints + i + 16)));
    m2 = _mm256_max_epu16(m2, _mm256_loadu_si256((const __m256i *)(const void *)(joints + i + 32)));
    m3 = _mm256_max_epu16(m3, _mm256_loadu_si256((const __m256i *)(const void *)(joints + i + 48)));
  }
  m0 = _mm256_max_epu16(_mm256_max_epu16(m0, m1), _mm256_max_epu16(m2, m3));
  __m128i h = _mm_max_epu16(_mm256_castsi256_si128(m0), _mm256_extracti128_si256(m0, 1));
  h = _mm_max_epu16(h, _mm_srli_si128(h, 8));
  h = _mm_max_epu16(h, _mm_srli_si128(h, 4));
  h = _mm_max_epu16(h, _mm_srli_si128(h, 2));
  uint16_t mx = (uint16_t)_mm_extract_epi16(h, 0);
  for (; i < total; ++i) mx = joints[i] > mx ? joints[i] : mx;
  return mx;
}

#else /* no AVX2 + FMA code in this build (non-x86 target or compiler) */

int sks_skin_avx2_compiled(void) { return 0; }

uint16_t sks_skin_avx2_max_index(const uint16_t *joints, size_t total) {
  uint16_t mx = 0;
  for (size_t i = 0; i < total; ++i) mx = joints[i] > mx ? joints[i] : mx;
  return mx;
}

void sks_skin_avx2_range(const sks_skinning_job *job, const sks_skin_args *a, const sks_dualquat *dq, size_t begin,
                         size_t end) {
  (void)job; (void)a; (void)dq; (void)begin; (void)end;
}

#endif
