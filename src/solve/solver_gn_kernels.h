/* The Levenberg-Marquardt solvers' hot kernels (solver_gn.c, solver_rotonly.c), one
 * source compiled twice: in solver_gn.c for any x86-64 (SSE2) or other
 * target, and in solver_gn_avx2.c with -mavx2 -mfma, picked at run time
 * (sks_gn_use_avx2). Include after solve_internal.h. */
#ifndef SKS_SOLVE_GN_KERNELS_H
#define SKS_SOLVE_GN_KERNELS_H
#include <math.h>
#include <string.h>
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#define SKS_GN_MAX_BONES 256

/* The factorisation below runs once per LM trial and dominated the solve
 * (56-76 % of a bake): its block kernels are compiled once per block size
 * (K = 6 rigid, 7 similarity, 12 affine) so the KxK loops unroll, and the
 * triangular solves multiply by inverse pivots instead of dividing. (An
 * axpy-ordered Schur update on transposed copies measured 40 % slower.) */
#if defined(__GNUC__)
#define SKS_GN_INLINE static inline __attribute__((always_inline))
#else
#define SKS_GN_INLINE static inline
#endif
/* the loops over a row's K doubles: unrolled, so the row stays in registers */
#if defined(__clang__)
#define SKS_GN_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define SKS_GN_UNROLL _Pragma("GCC unroll 12")
#else
#define SKS_GN_UNROLL
#endif

/* Dense KxK Cholesky in place (lower); inv[k] = 1 / L_kk. */
SKS_GN_INLINE int cholK(double *a, const int K, double *inv) {
  for (int j = 0; j < K; ++j) {
    double s = a[j * K + j];
    for (int k = 0; k < j; ++k) s -= a[j * K + k] * a[j * K + k];
    if (!(s > 0)) return 0;
    double d = sqrt(s), id = 1.0 / d;
    a[j * K + j] = d;
    inv[j] = id;
    for (int i = j + 1; i < K; ++i) {
      double v = a[i * K + j];
      for (int k = 0; k < j; ++k) v -= a[i * K + k] * a[j * K + k];
      a[i * K + j] = v * id;
    }
    for (int k = j + 1; k < K; ++k) a[j * K + k] = 0;
  }
  return 1;
}

/* d[0..K) -= sum_{q < nq} x[q xs] Y[q K .. q K + K): the factorisation's
 * one kernel (Schur updates, triangular solves of the off-diagonal blocks,
 * forward substitution), a row of K doubles held in registers (K is a
 * compile-time 6, 7 or 12 after inlining): AVX2 + FMA in solver_gn_avx2.c
 * (4 + 2 lanes for K = 6, fused multiply-subtract), SSE2 pairs otherwise. */
SKS_GN_INLINE void row_axpy(double *d, const double *Y, const double *x, const size_t xs, const int nq, const int K) {
#if defined(__AVX2__) && defined(__FMA__)
  __m256d acc[3];
  const int P4 = K / 4, R2 = (K % 4) >= 2, R1 = K & 1, o2 = 4 * P4, o1 = K - 1;
  SKS_GN_UNROLL
  for (int e = 0; e < P4; ++e) acc[e] = _mm256_loadu_pd(d + 4 * e);
  __m128d acc2 = R2 ? _mm_loadu_pd(d + o2) : _mm_setzero_pd();
  double tail = R1 ? d[o1] : 0.0;
  for (int q = 0; q < nq; ++q) {
    const double xq = x[(size_t)q * xs];
    const __m256d s = _mm256_set1_pd(xq);
    const double *yr = Y + (size_t)q * (size_t)K;
    SKS_GN_UNROLL
    for (int e = 0; e < P4; ++e) acc[e] = _mm256_fnmadd_pd(s, _mm256_loadu_pd(yr + 4 * e), acc[e]);
    if (R2) acc2 = _mm_fnmadd_pd(_mm256_castpd256_pd128(s), _mm_loadu_pd(yr + o2), acc2);
    if (R1) tail = fma(-xq, yr[o1], tail);
  }
  SKS_GN_UNROLL
  for (int e = 0; e < P4; ++e) _mm256_storeu_pd(d + 4 * e, acc[e]);
  if (R2) _mm_storeu_pd(d + o2, acc2);
  if (R1) d[o1] = tail;
#elif defined(__SSE2__)
  __m128d acc[6];
  const int P = K / 2;
  SKS_GN_UNROLL
  for (int e = 0; e < P; ++e) acc[e] = _mm_loadu_pd(d + 2 * e);
  double tail = K & 1 ? d[K - 1] : 0.0;
  for (int q = 0; q < nq; ++q) {
    const double xq = x[(size_t)q * xs];
    const __m128d s = _mm_set1_pd(xq);
    const double *yr = Y + (size_t)q * (size_t)K;
    SKS_GN_UNROLL
    for (int e = 0; e < P; ++e) acc[e] = _mm_sub_pd(acc[e], _mm_mul_pd(s, _mm_loadu_pd(yr + 2 * e)));
    if (K & 1) tail -= xq * yr[K - 1];
  }
  SKS_GN_UNROLL
  for (int e = 0; e < P; ++e) _mm_storeu_pd(d + 2 * e, acc[e]);
  if (K & 1) d[K - 1] = tail;
#else
  double acc[12];
  SKS_GN_UNROLL
  for (int e = 0; e < K; ++e) acc[e] = d[e];
  for (int q = 0; q < nq; ++q) {
    const double xq = x[(size_t)q * xs], *yr = Y + (size_t)q * (size_t)K;
    SKS_GN_UNROLL
    for (int e = 0; e < K; ++e) acc[e] -= xq * yr[e];
  }
  SKS_GN_UNROLL
  for (int e = 0; e < K; ++e) d[e] = acc[e];
#endif
}

#if defined(__AVX2__) && defined(__FMA__)
/* Rows a0 .. a0 + NR of block_update, all NR rows in registers at once (NR
 * independent FMA chains per lane group instead of one): X = Xb + a0. */
SKS_GN_INLINE void rows_update(double *D, const double *X, const double *Y, const int K, const int NR) {
  const int P4 = K / 4, R2 = (K % 4) >= 2, R1 = K & 1, o2 = 4 * P4, o1 = K - 1;
  __m256d acc[6][3];
  __m128d acc2[6];
  double tail[6];
  SKS_GN_UNROLL
  for (int r = 0; r < NR; ++r) {
    SKS_GN_UNROLL
    for (int e = 0; e < P4; ++e) acc[r][e] = _mm256_loadu_pd(D + r * K + 4 * e);
    acc2[r] = R2 ? _mm_loadu_pd(D + r * K + o2) : _mm_setzero_pd();
    tail[r] = R1 ? D[r * K + o1] : 0.0;
  }
  for (int q = 0; q < K; ++q) {
    const double *yr = Y + (size_t)q * (size_t)K, *xr = X + (size_t)q * (size_t)K;
    __m256d yv[3];
    SKS_GN_UNROLL
    for (int e = 0; e < P4; ++e) yv[e] = _mm256_loadu_pd(yr + 4 * e);
    const __m128d y2 = R2 ? _mm_loadu_pd(yr + o2) : _mm_setzero_pd();
    SKS_GN_UNROLL
    for (int r = 0; r < NR; ++r) {
      const __m256d s = _mm256_broadcast_sd(xr + r);
      SKS_GN_UNROLL
      for (int e = 0; e < P4; ++e) acc[r][e] = _mm256_fnmadd_pd(s, yv[e], acc[r][e]);
      if (R2) acc2[r] = _mm_fnmadd_pd(_mm256_castpd256_pd128(s), y2, acc2[r]);
      if (R1) tail[r] = fma(-xr[r], yr[o1], tail[r]);
    }
  }
  SKS_GN_UNROLL
  for (int r = 0; r < NR; ++r) {
    SKS_GN_UNROLL
    for (int e = 0; e < P4; ++e) _mm256_storeu_pd(D + r * K + 4 * e, acc[r][e]);
    if (R2) _mm_storeu_pd(D + r * K + o2, acc2[r]);
    if (R1) D[r * K + o1] = tail[r];
  }
}
#endif

/* D[a][:] -= sum_q X[q][a] Y[q][:] for a < K (K x K, row-major): a Schur
 * update on transposed blocks (damped_solve_impl). AVX2: rows in groups
 * held in registers (6 for K = 6, 3 + 3 + 1 for 7, 4 x 3 for 12); else
 * one row_axpy per row. */
SKS_GN_INLINE void block_update(double *D, const double *X, const double *Y, const int K) {
#if defined(__AVX2__) && defined(__FMA__)
  if (K == 6) {
    rows_update(D, X, Y, 6, 6);
  } else if (K == 7) {
    rows_update(D, X, Y, 7, 3); rows_update(D + 21, X + 3, Y, 7, 3); rows_update(D + 42, X + 6, Y, 7, 1);
  } else {
    for (int a0 = 0; a0 < K; a0 += 4) rows_update(D + a0 * K, X + a0, Y, K, 4);
  }
#else
  for (int a = 0; a < K; ++a) row_axpy(D + (size_t)a * (size_t)K, Y, X + a, (size_t)K, K, K);
#endif
}

/* Solves (H + (lam + 1e-12) diag(H) + floor) x = -g by the block Cholesky of
 * the pattern (p->gn): the slots are copied into L (one memcpy, fill
 * included), then each column is factorised, its blocks scaled and its
 * precomputed Schur updates applied; no zero block is visited. Diagonal
 * blocks are row-major lower triangles; an off-diagonal block L_ik is kept
 * transposed (AT = L_ik^T, as store_block leaves H), so every step is a
 * row update over K contiguous doubles (row_axpy):
 *   AT <- Lkk^-1 AT              (L_ik = H_ik Lkk^-T)
 *   D_ij^T -= L_jk L_ik^T        (row a of D: -= sum_q Lj[a][q] row q of Li^T;
 *                                 the diagonal i == j alike, D symmetric)
 *   y_i -= L_ik y_k, y_k -= L_ik^T y_i  (forward, backward). */
SKS_GN_INLINE int damped_solve_impl(const sks_gn_pattern *pt, const double *Hb, const int K,
                                    const double *g, double lam, double floor_, double *Lb,
                                    double *y, double *x) {
  const size_t KK = (size_t)(K * K), nb = pt->nb;
  double inv[12 * SKS_GN_MAX_BONES];
  memcpy(Lb, Hb, pt->slot_count * KK * sizeof(double));
  for (size_t i = 0; i < nb; ++i) {
    double *d = &Lb[pt->col_start[i] * KK];
    for (int k = 0; k < K; ++k) d[k * (K + 1)] += (lam + 1e-12) * d[k * (K + 1)] + floor_;
  }
  for (size_t k = 0; k < nb; ++k) {
    double *Lkk = &Lb[pt->col_start[k] * KK], *ik = &inv[K * k];
    if (!cholK(Lkk, K, ik)) return 0;
    for (uint32_t sl = pt->col_start[k] + 1; sl < pt->col_start[k + 1]; ++sl) {
      double *AT = &Lb[sl * KK]; /* row c: (row c - sum_{q<c} Lkk[c][q] row q) / Lkk[c][c] */
      for (int c = 0; c < K; ++c) {
        double *row = AT + (size_t)c * (size_t)K;
        row_axpy(row, AT, Lkk + (size_t)c * (size_t)K, 1, c, K);
        SKS_GN_UNROLL
        for (int e = 0; e < K; ++e) row[e] *= ik[c];
      }
    }
    for (uint32_t u = pt->upd_start[k]; u < pt->upd_start[k + 1]; ++u) {
      double *D = &Lb[pt->upd[3 * u] * KK];
      const double *LiT = &Lb[pt->upd[3 * u + 1] * KK], *LjT = &Lb[pt->upd[3 * u + 2] * KK];
      block_update(D, LjT, LiT, K);
    }
  }
  /* permuted right-hand side */
  for (size_t a = 0; a < nb; ++a)
    for (int k = 0; k < K; ++k) y[K * (size_t)pt->pos[a] + k] = -g[K * a + k];
  for (size_t k = 0; k < nb; ++k) { /* forward, by columns: L y = b */
    double *yk = &y[K * k];
    const double *D = &Lb[pt->col_start[k] * KK];
    for (int r = 0; r < K; ++r) {
      double v = yk[r];
      for (int c = 0; c < r; ++c) v -= D[r * K + c] * yk[c];
      yk[r] = v * inv[K * k + r];
    }
    for (uint32_t sl = pt->col_start[k] + 1; sl < pt->col_start[k + 1]; ++sl)
      row_axpy(&y[K * (size_t)pt->row[sl]], &Lb[sl * KK], yk, 1, K, K);
  }
  for (size_t k = nb; k-- > 0;) { /* backward: L^T x = y */
    double *yk = &y[K * k];
    for (uint32_t sl = pt->col_start[k] + 1; sl < pt->col_start[k + 1]; ++sl) {
      const double *AT = &Lb[sl * KK], *yi = &y[K * (size_t)pt->row[sl]];
      SKS_GN_UNROLL
      for (int r = 0; r < K; ++r) {
        double v = 0;
        SKS_GN_UNROLL
        for (int c = 0; c < K; ++c) v += AT[r * K + c] * yi[c];
        yk[r] -= v;
      }
    }
    const double *D = &Lb[pt->col_start[k] * KK];
    for (int r = K - 1; r >= 0; --r) {
      double v = yk[r];
      for (int c = r + 1; c < K; ++c) v -= D[c * K + r] * yk[c];
      yk[r] = v * inv[K * k + r];
    }
  }
  for (size_t a = 0; a < nb; ++a)
    for (int k = 0; k < K; ++k) x[K * a + k] = y[K * (size_t)pt->pos[a] + k];
  return 1;
}

/* sum_{k0 <= k < k1} a[k] b[k]: AVX2 + FMA 8 lanes a step; otherwise four
 * partial sums (a single chain of dependent adds was the rotation-only
 * solver's hot loop). */
SKS_GN_INLINE double dot_range(const double *a, const double *b, size_t k, const size_t k1) {
#if defined(__AVX2__) && defined(__FMA__)
  __m256d s0 = _mm256_setzero_pd(), s1 = s0;
  for (; k + 8 <= k1; k += 8) {
    s0 = _mm256_fmadd_pd(_mm256_loadu_pd(a + k), _mm256_loadu_pd(b + k), s0);
    s1 = _mm256_fmadd_pd(_mm256_loadu_pd(a + k + 4), _mm256_loadu_pd(b + k + 4), s1);
  }
  if (k + 4 <= k1) { s0 = _mm256_fmadd_pd(_mm256_loadu_pd(a + k), _mm256_loadu_pd(b + k), s0); k += 4; }
  s0 = _mm256_add_pd(s0, s1);
  __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s0), _mm256_extractf128_pd(s0, 1));
  double s = _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
  for (; k < k1; ++k) s = fma(a[k], b[k], s);
  return s;
#else
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (; k + 4 <= k1; k += 4) {
    s0 += a[k] * b[k]; s1 += a[k + 1] * b[k + 1];
    s2 += a[k + 2] * b[k + 2]; s3 += a[k + 3] * b[k + 3];
  }
  for (; k < k1; ++k) s0 += a[k] * b[k];
  return (s0 + s1) + (s2 + s3);
#endif
}

/* dot_range(a0, b, k, k1), dot_range(a1, ...), dot_range(a2, ...) into
 * o[0..3): the same operations in the same order per row (the same bits),
 * interleaved so the rows share b's loads and their chains overlap. */
SKS_GN_INLINE void dot3_range(const double *a0, const double *a1, const double *a2, const double *b, size_t k,
                              const size_t k1, double *o) {
#if defined(__AVX2__) && defined(__FMA__)
  __m256d s00 = _mm256_setzero_pd(), s01 = s00, s10 = s00, s11 = s00, s20 = s00, s21 = s00;
  for (; k + 8 <= k1; k += 8) {
    const __m256d b0 = _mm256_loadu_pd(b + k), b1 = _mm256_loadu_pd(b + k + 4);
    s00 = _mm256_fmadd_pd(_mm256_loadu_pd(a0 + k), b0, s00);
    s10 = _mm256_fmadd_pd(_mm256_loadu_pd(a1 + k), b0, s10);
    s20 = _mm256_fmadd_pd(_mm256_loadu_pd(a2 + k), b0, s20);
    s01 = _mm256_fmadd_pd(_mm256_loadu_pd(a0 + k + 4), b1, s01);
    s11 = _mm256_fmadd_pd(_mm256_loadu_pd(a1 + k + 4), b1, s11);
    s21 = _mm256_fmadd_pd(_mm256_loadu_pd(a2 + k + 4), b1, s21);
  }
  if (k + 4 <= k1) {
    const __m256d b0 = _mm256_loadu_pd(b + k);
    s00 = _mm256_fmadd_pd(_mm256_loadu_pd(a0 + k), b0, s00);
    s10 = _mm256_fmadd_pd(_mm256_loadu_pd(a1 + k), b0, s10);
    s20 = _mm256_fmadd_pd(_mm256_loadu_pd(a2 + k), b0, s20);
    k += 4;
  }
  s00 = _mm256_add_pd(s00, s01);
  s10 = _mm256_add_pd(s10, s11);
  s20 = _mm256_add_pd(s20, s21);
  __m128d h0 = _mm_add_pd(_mm256_castpd256_pd128(s00), _mm256_extractf128_pd(s00, 1));
  __m128d h1 = _mm_add_pd(_mm256_castpd256_pd128(s10), _mm256_extractf128_pd(s10, 1));
  __m128d h2 = _mm_add_pd(_mm256_castpd256_pd128(s20), _mm256_extractf128_pd(s20, 1));
  double t0 = _mm_cvtsd_f64(_mm_add_sd(h0, _mm_unpackhi_pd(h0, h0)));
  double t1 = _mm_cvtsd_f64(_mm_add_sd(h1, _mm_unpackhi_pd(h1, h1)));
  double t2 = _mm_cvtsd_f64(_mm_add_sd(h2, _mm_unpackhi_pd(h2, h2)));
  for (; k < k1; ++k) {
    t0 = fma(a0[k], b[k], t0);
    t1 = fma(a1[k], b[k], t1);
    t2 = fma(a2[k], b[k], t2);
  }
  o[0] = t0; o[1] = t1; o[2] = t2;
#else
  double s[3][4] = {{0}};
  const double *a[3] = {a0, a1, a2};
  for (; k + 4 <= k1; k += 4)
    for (int r = 0; r < 3; ++r) {
      s[r][0] += a[r][k] * b[k]; s[r][1] += a[r][k + 1] * b[k + 1];
      s[r][2] += a[r][k + 2] * b[k + 2]; s[r][3] += a[r][k + 3] * b[k + 3];
    }
  for (; k < k1; ++k)
    for (int r = 0; r < 3; ++r) s[r][0] += a[r][k] * b[k];
  for (int r = 0; r < 3; ++r) o[r] = (s[r][0] + s[r][1]) + (s[r][2] + s[r][3]);
#endif
}

/* z[k] += c a[k] for k0 <= k < k1. */
SKS_GN_INLINE void axpy_range(double *z, const double *a, const double c, size_t k, const size_t k1) {
#if defined(__AVX2__) && defined(__FMA__)
  const __m256d cv = _mm256_set1_pd(c);
  for (; k + 4 <= k1; k += 4) _mm256_storeu_pd(z + k, _mm256_fmadd_pd(cv, _mm256_loadu_pd(a + k), _mm256_loadu_pd(z + k)));
  for (; k < k1; ++k) z[k] = fma(c, a[k], z[k]);
#else
  for (; k < k1; ++k) z[k] += c * a[k];
#endif
}

/* The envelope factor's triangular solves (envelope_solve_impl; L and
 * inv = 1 / L_ii as it leaves them): envelope_forward solves L z = -g
 * (permuted) and returns |z|^2 = g^T (L L^T)^-1 g (the Newton decrement
 * when L L^T is the Hessian); envelope_back solves L^T y = z (y in z) and
 * puts x = y back in unknown order: x = -(L L^T)^-1 g. */
SKS_GN_INLINE double envelope_forward(const double *L, const double *inv, const uint32_t *first, const uint32_t *perm,
                                      size_t n, const double *g, double *z) {
  double zz = 0;
  for (size_t i = 0; i < n; ++i) {
    const double *li = &L[i * n];
    z[i] = (-g[perm[i]] - dot_range(li, z, first[i], i)) * inv[i];
    zz += z[i] * z[i];
  }
  return zz;
}

SKS_GN_INLINE void envelope_back(const double *L, const double *inv, const uint32_t *first, const uint32_t *perm,
                                 size_t n, double *z, double *x) {
  for (size_t i = n; i-- > 0;) { /* row by row of L */
    const double *li = &L[i * n];
    double yi = z[i] * inv[i];
    z[i] = yi;
    axpy_range(z, li, -yi, first[i], i);
  }
  for (size_t i = 0; i < n; ++i) x[perm[i]] = z[i];
}

/* dd: the damping's scale per unknown (diag of J^T J: H's own diagonal may be
 * lowered by the second-order term). The factor is of H permuted by perm
 * (position -> unknown: children before parents, each root's translation
 * right after its rotation), which the caller stores permuted: H[i n + j]
 * is the entry of unknowns perm[i], perm[j] (dd, g, x: per unknown), so the
 * envelope's rows copy as runs. An envelope Cholesky: row i of L is zero left
 * of first[i], the first structural nonzero of row i of the permuted H
 * (envelope_of, once per solve), so only the envelope is copied and every
 * dot product starts there. In parent-first order the root's row and
 * column are full and its elimination filled the whole factor; children
 * first, a joint couples with its own subtree (contiguous before it in a
 * depth-first skeleton) and the few bones it shares vertices with, and a
 * root's translation with its own tree only (with every translation last,
 * a rig of many trees, RobotExpressive's 14, had 3x the envelope).
 * mannequiny (rotation-only control, n = 159 unknowns) factors in a
 * fraction of the dense work. z: n scratch. */
SKS_GN_INLINE int envelope_solve_impl(const double *H, const double *dd, const double *g, size_t n, double lam,
                                      const uint32_t *perm, const uint32_t *first, double *L, double *x, double *z) {
  double inv[900]; /* 1 / L_ii; n <= 900 (sks_solve_rotonly_gn) */
  double maxd = 0;
  for (size_t i = 0; i < n; ++i) maxd = fmax(maxd, dd[i]);
  for (size_t i = 0; i < n; ++i) /* the lower triangle's envelope (H is stored permuted) */
    memcpy(&L[i * n + first[i]], &H[i * n + first[i]], (i + 1 - first[i]) * sizeof(double));
  for (size_t i = 0; i < n; ++i) {
    double *li = &L[i * n];
    size_t fi = first[i];
    size_t j0 = fi;
    if (i % 3 == 0 && i + 2 < n && first[i + 1] == fi && first[i + 2] == fi) {
      /* rows i..i+2 (a joint's block: one first) left of column i
       * together, each entry as the loop below computes it */
      double *l1 = li + n, *l2 = l1 + n, d[3];
      for (size_t j = fi; j < i; ++j) {
        dot3_range(li, l1, l2, &L[j * n], fi > first[j] ? fi : first[j], j, d);
        li[j] = (li[j] - d[0]) * inv[j];
        l1[j] = (l1[j] - d[1]) * inv[j];
        l2[j] = (l2[j] - d[2]) * inv[j];
      }
      j0 = i;
    } else if (i % 3 != 0 && i >= 1 && first[i - (i % 3)] == fi && i - (i % 3) + 2 < n &&
               first[i - (i % 3) + 1] == fi && first[i - (i % 3) + 2] == fi) {
      j0 = i - (i % 3); /* columns left of its block: done with the block's first row */
    }
    for (size_t j = j0; j <= i; ++j) {
      double s = li[j];
      if (i == j) s += (lam + 1e-12) * dd[perm[i]] + 1e-30 * maxd + 1e-300;
      /* L[i][k] = 0 for k < first[i], L[j][k] for k < first[j] */
      s -= dot_range(li, &L[j * n], fi > first[j] ? fi : first[j], j);
      if (i == j) {
        if (!(s > 0)) return 0;
        li[i] = sqrt(s);
        inv[i] = 1.0 / li[i];
      } else {
        li[j] = s * inv[j]; /* a multiply: the division was a tenth of the solve */
      }
    }
  }
  envelope_forward(L, inv, first, perm, n, g, z);
  envelope_back(L, inv, first, perm, n, z, x);
  return 1;
}

/* dst += src, 16 doubles (a rotation-only pair-moment block; never the same
 * block): 4 AVX2 adds, or SSE2 pairs. Plain adds: the same bits either way. */
SKS_GN_INLINE void block_add16(double *restrict dst, const double *restrict src) {
#if defined(__AVX2__) && defined(__FMA__)
  for (int e = 0; e < 16; e += 4) _mm256_storeu_pd(dst + e, _mm256_add_pd(_mm256_loadu_pd(dst + e), _mm256_loadu_pd(src + e)));
#else
  for (int e = 0; e < 16; ++e) dst[e] += src[e];
#endif
}

/* The rotation-only tree sums' recorded adds, in their order: block
 * up[2q] into block up[2q + 1] of Am (16 doubles each). */
SKS_GN_INLINE void block_adds_impl(double *Am, const uint32_t *up, size_t count) {
  for (size_t q = 0; q < count; ++q) block_add16(&Am[(size_t)up[2 * q + 1] * 16], &Am[(size_t)up[2 * q] * 16]);
}

/* Per frame, per bone b: Y_b = sum w pl y^T, ybar_b = sum w y over b's
 * constraint entries, and yy = sum |y|^2 (sks_moments_frame). */
SKS_GN_INLINE double moments_frame_impl(const sks_solve_problem *p, const double *y, double *Y, double *ybar) {
  size_t B = p->bone_count;
  for (size_t b = 0; b < B; ++b) {
#if defined(__AVX2__) && defined(__FMA__)
    /* rows [pl_k w y | 0] for k = 0..2 and [w y | 0], two sets of
     * accumulators (even / odd entries: half the FMA chain) */
    __m256d A0 = _mm256_setzero_pd(), A1 = A0, A2 = A0, T = A0, C0 = A0, C1 = A0, C2 = A0, U = A0;
    uint32_t en = p->bstart[b], e1 = p->bstart[b + 1];
    for (; en + 2 <= e1; en += 2) {
      const double *ya = &y[3 * (size_t)p->bvertex[en]], *yb = &y[3 * (size_t)p->bvertex[en + 1]];
      const double *pa = &p->bp[3 * (size_t)en];
      const __m256d Ya = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(ya)), _mm_load_sd(ya + 2), 1);
      const __m256d Yb = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(yb)), _mm_load_sd(yb + 2), 1);
      const __m256d wa = _mm256_mul_pd(_mm256_broadcast_sd(&p->bw[en]), Ya);
      const __m256d wb = _mm256_mul_pd(_mm256_broadcast_sd(&p->bw[en + 1]), Yb);
      A0 = _mm256_fmadd_pd(_mm256_broadcast_sd(pa), wa, A0);
      A1 = _mm256_fmadd_pd(_mm256_broadcast_sd(pa + 1), wa, A1);
      A2 = _mm256_fmadd_pd(_mm256_broadcast_sd(pa + 2), wa, A2);
      T = _mm256_add_pd(T, wa);
      C0 = _mm256_fmadd_pd(_mm256_broadcast_sd(pa + 3), wb, C0);
      C1 = _mm256_fmadd_pd(_mm256_broadcast_sd(pa + 4), wb, C1);
      C2 = _mm256_fmadd_pd(_mm256_broadcast_sd(pa + 5), wb, C2);
      U = _mm256_add_pd(U, wb);
    }
    if (en < e1) {
      const double *ya = &y[3 * (size_t)p->bvertex[en]], *pa = &p->bp[3 * (size_t)en];
      const __m256d Ya = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(ya)), _mm_load_sd(ya + 2), 1);
      const __m256d wa = _mm256_mul_pd(_mm256_broadcast_sd(&p->bw[en]), Ya);
      A0 = _mm256_fmadd_pd(_mm256_broadcast_sd(pa), wa, A0);
      A1 = _mm256_fmadd_pd(_mm256_broadcast_sd(pa + 1), wa, A1);
      A2 = _mm256_fmadd_pd(_mm256_broadcast_sd(pa + 2), wa, A2);
      T = _mm256_add_pd(T, wa);
    }
    double r[16];
    _mm256_storeu_pd(r, _mm256_add_pd(A0, C0)); _mm256_storeu_pd(r + 4, _mm256_add_pd(A1, C1));
    _mm256_storeu_pd(r + 8, _mm256_add_pd(A2, C2)); _mm256_storeu_pd(r + 12, _mm256_add_pd(T, U));
    double *Yb = &Y[9 * b], *yb = &ybar[3 * b];
    for (int k = 0; k < 3; ++k) { Yb[k] = r[k]; Yb[3 + k] = r[4 + k]; Yb[6 + k] = r[8 + k]; yb[k] = r[12 + k]; }
#else
    /* local sums: Y and ybar may alias y, so sums kept in them went through
     * memory at every entry (15 % of a bake) */
    double s00 = 0, s01 = 0, s02 = 0, s10 = 0, s11 = 0, s12 = 0, s20 = 0, s21 = 0, s22 = 0;
    double t0 = 0, t1 = 0, t2 = 0;
    for (uint32_t en = p->bstart[b]; en < p->bstart[b + 1]; ++en) {
      const double *yv3 = &y[3 * (size_t)p->bvertex[en]], *pl = &p->bp[3 * (size_t)en];
      double w = p->bw[en], y0 = yv3[0], y1 = yv3[1], y2 = yv3[2];
      double p0 = w * pl[0], p1 = w * pl[1], p2 = w * pl[2];
      s00 += p0 * y0; s01 += p0 * y1; s02 += p0 * y2;
      s10 += p1 * y0; s11 += p1 * y1; s12 += p1 * y2;
      s20 += p2 * y0; s21 += p2 * y1; s22 += p2 * y2;
      t0 += w * y0; t1 += w * y1; t2 += w * y2;
    }
    double *Yb = &Y[9 * b], *yb = &ybar[3 * b];
    Yb[0] = s00; Yb[1] = s01; Yb[2] = s02; Yb[3] = s10; Yb[4] = s11; Yb[5] = s12;
    Yb[6] = s20; Yb[7] = s21; Yb[8] = s22;
    yb[0] = t0; yb[1] = t1; yb[2] = t2;
#endif
  }
  /* sum |y|^2 in 4 partial sums (one chain of 3 V dependent adds was a
   * quarter of this function) */
  const size_t n = 3 * p->inf.vertex_count;
  double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    a0 += y[k] * y[k]; a1 += y[k + 1] * y[k + 1]; a2 += y[k + 2] * y[k + 2]; a3 += y[k + 3] * y[k + 3];
  }
  for (; k < n; ++k) a0 += y[k] * y[k];
  return (a0 + a1) + (a2 + a3);
}

#endif
