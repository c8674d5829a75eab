/* Levenberg-Marquardt over all bones at once (the default solver).
 *
 * Parameters per constrained bone: a rotation increment w_b (R_b <- exp(w_b) R_b)
 * and a translation increment du_b, in the centred coordinates of
 * solve_internal.h. With a = R_b pl, the Jacobian of vertex v's skinned
 * position is w_vb [ -[a]x | I ]. J^T J is assembled from per-bone-pair
 * moments (sum wb wc, sum wb wc pb, sum wb wc pc, sum wb wc pb pc^T), so its
 * cost depends on the number of bone pairs, not on the vertex count:
 *   block(b,c) = [ tr(Q) I - Q   [R_b mb]x ; -[R_c mc]x   s I ],  Q = R_c P^T R_b^T
 * The objective and the gradient J^T e = w [a x e ; e] come from the same
 * pair moments plus, per frame, Y_b = sum w pl y^T and ybar_b = sum w y: after
 * one pass over the constraints per frame, an iteration never touches a
 * vertex. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "solve/solve_internal.h"

#define SKS_GN_MAX_BONES 256

/* K unknowns per bone: 6 rigid, 7 similarity, 12 when some bone is affine
 * (every bone then gets a 12-slot block; a rigid bone's unused slots are
 * identity rows). */
static size_t scratch_for(const sks_solve_problem *p, size_t K) {
  size_t B = p->bone_count < SKS_GN_MAX_BONES ? p->bone_count : SKS_GN_MAX_BONES;
  size_t n = K * B;
  return 2 * B * B * K * K + B * B / 4 + 8 + 5 * n + 28 * p->bone_count +
         (K == 12 ? (144 + 12) * p->bone_count : 0);
}

size_t sks_solve_gn_scratch_count(const sks_solve_problem *p) { return scratch_for(p, 7); }

static void skew(const double *a, double *m) {
  m[0] = 0;     m[1] = -a[2]; m[2] = a[1];
  m[3] = a[2];  m[4] = 0;     m[5] = -a[0];
  m[6] = -a[1]; m[7] = a[0];  m[8] = 0;
}

static void cross_of(const double *M, double *v) { /* sum a x b from M = sum a b^T */
  v[0] = M[5] - M[7];
  v[1] = M[6] - M[2];
  v[2] = M[1] - M[3];
}

/* Objective F = sum |cur - y|^2 and gradient g = J^T e from moments only:
 * per frame Y_b = sum w pl y^T, ybar_b = sum w y, yy = sum |y|^2, and the
 * per-pair moments. No pass over the vertices. */
double sks_moments_eval(const sks_solve_problem *p, const double *Y, const double *ybar,
                        double yy, const double *R, const double *u, const int32_t *act,
                        size_t nb, int K, double *g) {
  double F = yy;
  memset(g, 0, K * nb * sizeof(double));
  for (size_t b = 0; b < p->bone_count; ++b) {
    if (act[b] < 0) continue;
    double M[9], c[3];
    sks_dmat3 m = sks_dm3_mul((const sks_dmat3 *)&R[9 * b], (const sks_dmat3 *)&Y[9 * b]);
    memcpy(M, m.m, sizeof M);
    F -= 2.0 * (M[0] + M[4] + M[8] + sks_d3_dot(&u[3 * b], &ybar[3 * b]));
    cross_of(M, c);
    double *gb = &g[K * (size_t)act[b]];
    for (int k = 0; k < 3; ++k) { gb[k] -= c[k]; gb[3 + k] -= ybar[3 * b + k]; }
    if (K == 7) gb[6] -= M[0] + M[4] + M[8];
  }
  for (size_t k = 0; k < p->pair_count; ++k) {
    const sks_pair_moments *pm = &p->pairs[k];
    if (act[pm->b] < 0 || act[pm->c] < 0) continue;
    const double *Rb = &R[9 * pm->b], *Rc = &R[9 * pm->c], *ub = &u[3 * pm->b], *uc = &u[3 * pm->c];
    double T[9], Q[9], Qt[9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        T[i * 3 + j] = Rc[i * 3] * pm->P[j * 3] + Rc[i * 3 + 1] * pm->P[j * 3 + 1] + Rc[i * 3 + 2] * pm->P[j * 3 + 2];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        Q[i * 3 + j] = T[i * 3] * Rb[j * 3] + T[i * 3 + 1] * Rb[j * 3 + 1] + T[i * 3 + 2] * Rb[j * 3 + 2];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) Qt[i * 3 + j] = Q[j * 3 + i];
    double ma[3], mc[3];
    sks_dm3_apply(Rb, pm->mb, ma);
    sks_dm3_apply(Rc, pm->mc, mc);
    double mult = pm->b == pm->c ? 1.0 : 2.0;
    F += mult * (Q[0] + Q[4] + Q[8] + sks_d3_dot(ma, uc) + sks_d3_dot(ub, mc) + pm->s * sks_d3_dot(ub, uc));
    double c1[3], c2[3];
    double *gb = &g[K * (size_t)act[pm->b]];
    cross_of(Qt, c1);
    sks_d3_cross(ma, uc, c2);
    for (int q = 0; q < 3; ++q) { gb[q] += c1[q] + c2[q]; gb[3 + q] += mc[q] + pm->s * uc[q]; }
    if (K == 7) gb[6] += Q[0] + Q[4] + Q[8] + sks_d3_dot(ma, uc);
    if (pm->b != pm->c) {
      double *gc = &g[K * (size_t)act[pm->c]];
      cross_of(Q, c1);
      sks_d3_cross(mc, ub, c2);
      for (int q = 0; q < 3; ++q) { gc[q] += c1[q] + c2[q]; gc[3 + q] += ma[q] + pm->s * ub[q]; }
      if (K == 7) gc[6] += Q[0] + Q[4] + Q[8] + sks_d3_dot(mc, ub);
    }
  }
  return F;
}

double sks_moments_frame(const sks_solve_problem *p, const double *y, double *Y, double *ybar) {
  size_t B = p->bone_count;
  memset(Y, 0, 9 * B * sizeof(double));
  memset(ybar, 0, 3 * B * sizeof(double));
  double yy = 0;
  for (size_t b = 0; b < B; ++b) {
    double *Yb = &Y[9 * b], *yb = &ybar[3 * b];
    for (uint32_t en = p->bstart[b]; en < p->bstart[b + 1]; ++en) {
      const double *yv3 = &y[3 * p->bvertex[en]], *pl = &p->bp[3 * en];
      double w = p->bw[en];
      for (int r = 0; r < 3; ++r) {
        double wp = w * pl[r];
        Yb[r * 3] += wp * yv3[0]; Yb[r * 3 + 1] += wp * yv3[1]; Yb[r * 3 + 2] += wp * yv3[2];
        yb[r] += w * yv3[r];
      }
    }
  }
  for (size_t k = 0; k < 3 * p->inf.vertex_count; ++k) yy += y[k] * y[k];
  return yy;
}

/* J^T J in 6x6 blocks, lower block triangle, bones in REVERSE order (block
 * index nb-1-act[b]): bones are parent-first, so leaves are eliminated first
 * and the block Cholesky of this tree-like pattern creates little fill. */
static void assemble(const sks_solve_problem *p, const double *R, const int32_t *act, size_t nb,
                     int K, double *Hb, uint8_t *nz) {
  const int KK = K * K;
  memset(nz, 0, nb * nb);
  for (size_t k = 0; k < p->pair_count; ++k) {
    const sks_pair_moments *pm = &p->pairs[k];
    if (act[pm->b] < 0 || act[pm->c] < 0) continue;
    const double *Rb = &R[9 * pm->b], *Rc = &R[9 * pm->c];
    /* Q = Rc P^T Rb^T */
    double T[9], Q[9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) /* T = Rc P^T */
        T[i * 3 + j] = Rc[i * 3] * pm->P[j * 3] + Rc[i * 3 + 1] * pm->P[j * 3 + 1] + Rc[i * 3 + 2] * pm->P[j * 3 + 2];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) /* Q = T Rb^T */
        Q[i * 3 + j] = T[i * 3] * Rb[j * 3] + T[i * 3 + 1] * Rb[j * 3 + 1] + T[i * 3 + 2] * Rb[j * 3 + 2];
    double tr = Q[0] + Q[4] + Q[8];
    double ma[3], mc[3], Sa[9], Sc[9];
    sks_dm3_apply(Rb, pm->mb, ma);
    sks_dm3_apply(Rc, pm->mc, mc);
    skew(ma, Sa);
    skew(mc, Sc);
    size_t I = nb - 1 - (size_t)act[pm->b], J = nb - 1 - (size_t)act[pm->c]; /* I >= J */
    double *blk = &Hb[(I * nb + J) * KK];
    if (!nz[I * nb + J]) { memset(blk, 0, KK * sizeof(double)); nz[I * nb + J] = 1; }
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        blk[i * K + j] += (i == j ? tr : 0.0) - Q[i * 3 + j];
        blk[i * K + 3 + j] += Sa[i * 3 + j];
        blk[(3 + i) * K + j] -= Sc[i * 3 + j];
        blk[(3 + i) * K + 3 + j] += i == j ? pm->s : 0.0;
      }
    if (K == 7) { /* scale: J_s = w a */
      double Qt[9], axa[3];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) Qt[i * 3 + j] = Q[j * 3 + i];
      cross_of(Qt, axa); /* sum wb wc a x a' */
      for (int i = 0; i < 3; ++i) {
        blk[i * K + 6] += axa[i];
        blk[(3 + i) * K + 6] += mc[i];
        blk[6 * K + i] -= axa[i];
        blk[6 * K + 3 + i] += ma[i];
      }
      blk[6 * K + 6] += tr;
    }
  }
}

/* ---- the generic path (some bone affine): K = 12 ------------------------- */

/* Per active bone, J_vb = w_vb (E0 + sum_k p_k E_{1+k}) with E_m 3x12
 * (E[m*36 + i*12 + j]). Rigid bone, slots [w 0-2 | du 3-5 | ds 6]: E0 = du
 * identity, E_{1+k} = -[R e_k]x on w (a = R p rotates), R e_k on ds. Affine
 * bone, slots [dL 0-8 row-major | du 9-11]: E0 = du identity, E_{1+k} = e_r
 * on slot r*3+k (d(L p)/dL_rk = p_k e_r). */
static void jac_basis(const sks_solve_problem *p, const double *R, size_t b, double *E) {
  memset(E, 0, 144 * sizeof(double));
  if (p->affine[b]) {
    for (int r = 0; r < 3; ++r) {
      E[r * 12 + 9 + r] = 1;
      for (int k = 0; k < 3; ++k) E[(1 + k) * 36 + r * 12 + r * 3 + k] = 1;
    }
    return;
  }
  for (int r = 0; r < 3; ++r) E[r * 12 + 3 + r] = 1;
  for (int k = 0; k < 3; ++k) {
    double c[3] = {R[9 * b + k], R[9 * b + 3 + k], R[9 * b + 6 + k]}, S[9];
    skew(c, S);
    double *Ek = &E[(1 + k) * 36];
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) Ek[i * 12 + j] = -S[i * 3 + j];
      if (p->similarity) Ek[i * 12 + 6] = c[i];
    }
  }
}

/* F and g = J^T e from moments (as sks_moments_eval) for any linear parts R:
 * G_b = sum_v w_vb e_v [1 p^T] (3x4) from the pair moments, then
 * g_b = sum_m E_m^T G_b[:, m]. */
static double eval_generic(const sks_solve_problem *p, const double *Y, const double *ybar, double yy,
                           const double *R, const double *u, const int32_t *act, size_t nb,
                           double *E, double *G, double *g) {
  double F = yy;
  memset(G, 0, 12 * nb * sizeof(double));
  memset(g, 0, 12 * nb * sizeof(double));
  for (size_t b = 0; b < p->bone_count; ++b) {
    if (act[b] < 0) continue;
    const double *Rb = &R[9 * b], *Yb = &Y[9 * b];
    double tr = 0;
    for (int i = 0; i < 3; ++i)
      for (int l = 0; l < 3; ++l) tr += Rb[i * 3 + l] * Yb[l * 3 + i];
    F -= 2.0 * (tr + sks_d3_dot(&u[3 * b], &ybar[3 * b]));
    double *Gb = &G[12 * (size_t)act[b]];
    for (int r = 0; r < 3; ++r) {
      Gb[r * 4] -= ybar[3 * b + r];
      for (int k = 0; k < 3; ++k) Gb[r * 4 + 1 + k] -= Yb[k * 3 + r];
    }
  }
  for (size_t k = 0; k < p->pair_count; ++k) {
    const sks_pair_moments *pm = &p->pairs[k];
    if (act[pm->b] < 0 || act[pm->c] < 0) continue;
    const double *Rb = &R[9 * pm->b], *Rc = &R[9 * pm->c], *ub = &u[3 * pm->b], *uc = &u[3 * pm->c];
    double ma[3], mc[3], RcPt[9], RbP[9], trQ = 0;
    sks_dm3_apply(Rb, pm->mb, ma);
    sks_dm3_apply(Rc, pm->mc, mc);
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q) {
        double a = 0, c = 0;
        for (int l = 0; l < 3; ++l) {
          a += Rc[r * 3 + l] * pm->P[q * 3 + l];
          c += Rb[r * 3 + l] * pm->P[l * 3 + q];
        }
        RcPt[r * 3 + q] = a;
        RbP[r * 3 + q] = c;
      }
    for (int i = 0; i < 3; ++i)
      for (int l = 0; l < 3; ++l) trQ += Rb[i * 3 + l] * RcPt[i * 3 + l]; /* sum ww (Rb pb).(Rc pc) */
    double mult = pm->b == pm->c ? 1.0 : 2.0;
    F += mult * (trQ + sks_d3_dot(ma, uc) + sks_d3_dot(ub, mc) + pm->s * sks_d3_dot(ub, uc));
    double *Gb = &G[12 * (size_t)act[pm->b]];
    for (int r = 0; r < 3; ++r) {
      Gb[r * 4] += mc[r] + pm->s * uc[r];
      for (int q = 0; q < 3; ++q) Gb[r * 4 + 1 + q] += RcPt[r * 3 + q] + uc[r] * pm->mb[q];
    }
    if (pm->b != pm->c) {
      double *Gc = &G[12 * (size_t)act[pm->c]];
      for (int r = 0; r < 3; ++r) {
        Gc[r * 4] += ma[r] + pm->s * ub[r];
        for (int q = 0; q < 3; ++q) Gc[r * 4 + 1 + q] += RbP[r * 3 + q] + ub[r] * pm->mc[q];
      }
    }
  }
  for (size_t b = 0; b < p->bone_count; ++b) {
    if (act[b] < 0) continue;
    double *Eb = &E[144 * (size_t)act[b]], *gb = &g[12 * (size_t)act[b]];
    const double *Gb = &G[12 * (size_t)act[b]];
    jac_basis(p, R, b, Eb);
    for (int m = 0; m < 4; ++m)
      for (int i = 0; i < 3; ++i) {
        double v = Gb[i * 4 + m];
        if (v == 0) continue;
        const double *row = &Eb[m * 36 + i * 12];
        for (int j = 0; j < 12; ++j) gb[j] += row[j] * v;
      }
  }
  return F;
}

/* J^T J for K = 12 (layout as assemble): block(b,c) = sum_mn M_mn E_m^bT E_n^c,
 * M = [s mc^T; mb P]. Uses the E of the last eval_generic at this R. */
static void assemble_generic(const sks_solve_problem *p, const int32_t *act, size_t nb,
                             const double *E, double *Hb, uint8_t *nz) {
  const int K = 12, KK = 144;
  memset(nz, 0, nb * nb);
  for (size_t k = 0; k < p->pair_count; ++k) {
    const sks_pair_moments *pm = &p->pairs[k];
    if (act[pm->b] < 0 || act[pm->c] < 0) continue;
    const double *Eb = &E[144 * (size_t)act[pm->b]], *Ec = &E[144 * (size_t)act[pm->c]];
    double M[16];
    M[0] = pm->s;
    for (int q = 0; q < 3; ++q) {
      M[1 + q] = pm->mc[q];
      M[(1 + q) * 4] = pm->mb[q];
      for (int r = 0; r < 3; ++r) M[(1 + q) * 4 + 1 + r] = pm->P[q * 3 + r];
    }
    size_t I = nb - 1 - (size_t)act[pm->b], J = nb - 1 - (size_t)act[pm->c];
    double *blk = &Hb[(I * nb + J) * KK];
    if (!nz[I * nb + J]) { memset(blk, 0, KK * sizeof(double)); nz[I * nb + J] = 1; }
    for (int n = 0; n < 4; ++n) {
      double T[36]; /* T_n = sum_m M_mn E_m^b (3x12) */
      memset(T, 0, sizeof T);
      for (int m = 0; m < 4; ++m) {
        double v = M[m * 4 + n];
        if (v == 0) continue;
        for (int q = 0; q < 36; ++q) T[q] += v * Eb[m * 36 + q];
      }
      const double *En = &Ec[n * 36];
      for (int r = 0; r < 3; ++r)
        for (int i = 0; i < K; ++i) {
          double t = T[r * 12 + i];
          if (t == 0) continue;
          for (int j = 0; j < K; ++j) blk[i * K + j] += t * En[r * 12 + j];
        }
    }
  }
  /* a rigid bone's unused slots: identity rows (g = 0 there, so x = 0) */
  for (size_t b = 0; b < p->bone_count; ++b) {
    if (act[b] < 0 || p->affine[b]) continue;
    size_t I = nb - 1 - (size_t)act[b];
    double *blk = &Hb[(I * nb + I) * KK];
    for (int i = p->similarity ? 7 : 6; i < K; ++i) blk[i * K + i] = 1.0;
  }
}

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

/* Solves (H + (lam + 1e-12) diag(H) + floor) x = -g with a block Cholesky
 * that skips zero blocks. H (Hb, nz) is copied into L (Lb, lz) first. */
SKS_GN_INLINE int damped_solve_impl(const double *Hb, const uint8_t *nz, size_t nb, const int K,
                                    const double *g, const int32_t *act, size_t B, double lam,
                                    double floor_, double *Lb, uint8_t *lz, double *y, double *x) {
  const int KK = K * K;
  double inv[12 * SKS_GN_MAX_BONES];
  for (size_t i = 0; i < nb; ++i)
    for (size_t j = 0; j <= i; ++j) {
      lz[i * nb + j] = nz[i * nb + j];
      if (nz[i * nb + j]) memcpy(&Lb[(i * nb + j) * KK], &Hb[(i * nb + j) * KK], KK * sizeof(double));
    }
  for (size_t i = 0; i < nb; ++i) {
    if (!lz[i * nb + i]) return 0;
    double *d = &Lb[(i * nb + i) * KK];
    for (int k = 0; k < K; ++k) d[k * (K + 1)] += (lam + 1e-12) * d[k * (K + 1)] + floor_;
  }
  for (size_t k = 0; k < nb; ++k) {
    double *Lkk = &Lb[(k * nb + k) * KK], *ik = &inv[K * k];
    if (!cholK(Lkk, K, ik)) return 0;
    for (size_t i = k + 1; i < nb; ++i) {
      if (!lz[i * nb + k]) continue;
      double *A = &Lb[(i * nb + k) * KK]; /* A <- A Lkk^-T: rows solve Lkk z = a */
      for (int r = 0; r < K; ++r)
        for (int c = 0; c < K; ++c) {
          double v = A[r * K + c];
          for (int q = 0; q < c; ++q) v -= A[r * K + q] * Lkk[c * K + q];
          A[r * K + c] = v * ik[c];
        }
    }
    for (size_t i = k + 1; i < nb; ++i) { /* Schur update T_ij -= L_ik L_jk^T */
      if (!lz[i * nb + k]) continue;
      const double *Li = &Lb[(i * nb + k) * KK];
      for (size_t j = k + 1; j <= i; ++j) {
        if (!lz[j * nb + k]) continue;
        const double *Lj = &Lb[(j * nb + k) * KK];
        double *T = &Lb[(i * nb + j) * KK];
        if (!lz[i * nb + j]) { memset(T, 0, KK * sizeof(double)); lz[i * nb + j] = 1; }
        for (int r = 0; r < K; ++r)
          for (int c = 0; c < K; ++c) {
            double v = 0;
            for (int q = 0; q < K; ++q) v += Li[r * K + q] * Lj[c * K + q];
            T[r * K + c] -= v;
          }
      }
    }
  }
  /* permuted right-hand side */
  for (size_t b = 0; b < B; ++b)
    if (act[b] >= 0)
      for (int k = 0; k < K; ++k) y[K * (nb - 1 - (size_t)act[b]) + k] = -g[K * (size_t)act[b] + k];
  for (size_t i = 0; i < nb; ++i) { /* forward: L y = b */
    double *yi = &y[K * i];
    for (size_t k = 0; k < i; ++k) {
      if (!lz[i * nb + k]) continue;
      const double *A = &Lb[(i * nb + k) * KK];
      for (int r = 0; r < K; ++r)
        for (int c = 0; c < K; ++c) yi[r] -= A[r * K + c] * y[K * k + c];
    }
    const double *D = &Lb[(i * nb + i) * KK];
    for (int r = 0; r < K; ++r) {
      double v = yi[r];
      for (int c = 0; c < r; ++c) v -= D[r * K + c] * yi[c];
      yi[r] = v * inv[K * i + r];
    }
  }
  for (size_t i = nb; i-- > 0;) { /* backward: L^T x = y */
    double *yi = &y[K * i];
    for (size_t j = i + 1; j < nb; ++j) {
      if (!lz[j * nb + i]) continue;
      const double *A = &Lb[(j * nb + i) * KK];
      for (int r = 0; r < K; ++r)
        for (int c = 0; c < K; ++c) yi[r] -= A[c * K + r] * y[K * j + c];
    }
    const double *D = &Lb[(i * nb + i) * KK];
    for (int r = K - 1; r >= 0; --r) {
      double v = yi[r];
      for (int c = r + 1; c < K; ++c) v -= D[c * K + r] * yi[c];
      yi[r] = v * inv[K * i + r];
    }
  }
  for (size_t b = 0; b < B; ++b)
    if (act[b] >= 0)
      for (int k = 0; k < K; ++k) x[K * (size_t)act[b] + k] = y[K * (nb - 1 - (size_t)act[b]) + k];
  return 1;
}

static int damped_solve(const double *Hb, const uint8_t *nz, size_t nb, int K, const double *g,
                        const int32_t *act, size_t B, double lam, double floor_, double *Lb,
                        uint8_t *lz, double *y, double *x) {
  switch (K) {
  case 6: return damped_solve_impl(Hb, nz, nb, 6, g, act, B, lam, floor_, Lb, lz, y, x);
  case 7: return damped_solve_impl(Hb, nz, nb, 7, g, act, B, lam, floor_, Lb, lz, y, x);
  default: return damped_solve_impl(Hb, nz, nb, 12, g, act, B, lam, floor_, Lb, lz, y, x);
  }
}

int sks_solve_gn(const sks_solve_problem *p, const double *y, sks_solve_state *s,
                 size_t max_iterations, double tol, sks_solve_stats *stats, double *scratch,
                 size_t scratch_count) {
  size_t B = p->bone_count;
  int32_t act[SKS_GN_MAX_BONES];
  if (B > SKS_GN_MAX_BONES) return 0;
  const int generic = p->affine_count > 0 && p->affine && s->stretch;
  const int K = generic ? 12 : (p->similarity ? 7 : 6), KK = K * K;
  double *own = NULL;
  if (generic) { /* larger blocks: the caller's scratch is sized for K <= 7 */
    scratch_count = scratch_for(p, 12);
    own = scratch = malloc(scratch_count * sizeof(double));
    if (!own) return 0;
  } else if (scratch_count < scratch_for(p, 7)) {
    return 0;
  }
  size_t nb = 0;
  for (size_t b = 0; b < B; ++b) act[b] = p->wsum2[b] > 0 ? (int32_t)nb++ : -1;
  size_t n = (size_t)K * nb;
  double *Hb = scratch, *Lb = Hb + B * B * KK, *g = Lb + B * B * KK, *x = g + n, *g2 = x + n,
         *yv = g2 + n;
  double *Rt = yv + n, *ut = Rt + 9 * B, *Y = ut + 3 * B, *ybar = Y + 9 * B;
  double *sct = ybar + 3 * B;
  uint8_t *nz = (uint8_t *)(sct + B), *lz = nz + nb * nb;
  /* generic path: Jacobian bases at the current and the trial state, G */
  double *E = NULL, *E2 = NULL, *G = NULL;
  if (generic) {
    E = sct + B + (B * B / 4 + 8);
    G = E + 144 * B;
    E2 = Lb; /* trial bases reuse L (free between factorisations): 144 B <= B B 144 */
  }
  double d = p->scale > 0 ? p->scale : 1.0;
  /* this frame's moments: the only pass over the constraints */
  double yy = sks_moments_frame(p, y, Y, ybar);
  /* F comes from moments, so it is exact only to ~1e-15 of yy */
  double noise = 1e-13 * yy + 1e-300;
  double F = generic ? eval_generic(p, Y, ybar, yy, s->R, s->u, act, nb, E, G, g)
                     : sks_moments_eval(p, Y, ybar, yy, s->R, s->u, act, nb, K, g);
  sks_lm_control lm = {1e-6, 1e300, tol, d,
                       (double)p->inf.vertex_count * (1e-6 * d) * (1e-6 * d) + noise};
  size_t it = 0;
  int converged = 0;
  while (it < max_iterations && !converged) {
    ++it;
    double maxdiag = 0;
    int solved = 0;
    if (generic) assemble_generic(p, act, nb, E, Hb, nz);
    else assemble(p, s->R, act, nb, K, Hb, nz);
    for (size_t i = 0; i < nb; ++i)
      if (nz[i * nb + i])
        for (int k = 0; k < K; ++k) maxdiag = fmax(maxdiag, Hb[(i * nb + i) * KK + k * (K + 1)]);
    for (int attempt = 0; attempt < SKS_LM_ATTEMPTS && !solved; ++attempt) {
      if (!damped_solve(Hb, nz, nb, K, g, act, B, lm.lam, 1e-30 * maxdiag + 1e-300, Lb, lz, yv, x)) {
        lm.lam = fmax(lm.lam * 10, 1e-9);
        continue;
      }
      /* trial */
      double step = 0;
      for (size_t b = 0; b < B; ++b) {
        if (act[b] < 0) {
          memcpy(&Rt[9 * b], &s->R[9 * b], 9 * sizeof(double));
          memcpy(&ut[3 * b], &s->u[3 * b], 3 * sizeof(double));
          continue;
        }
        const double *xb = &x[K * act[b]];
        if (generic && p->affine[b]) { /* L += dL, u += du */
          double dl2 = 0;
          for (int k = 0; k < 9; ++k) { Rt[9 * b + k] = s->R[9 * b + k] + xb[k]; dl2 += xb[k] * xb[k]; }
          for (int k = 0; k < 3; ++k) ut[3 * b + k] = s->u[3 * b + k] + xb[9 + k];
          double sb = sqrt(dl2 * p->radius2[b]) + sqrt(sks_d3_dot(xb + 9, xb + 9));
          if (sb > step) step = sb;
          continue;
        }
        sks_dquat dq = sks_dq_from_rotvec(xb);
        sks_dquat qn = sks_dq_normalize(sks_dq_mul(dq, s->q[b]));
        double ds = p->similarity ? xb[6] : 0.0;
        ds = ds > 0.5 ? 0.5 : (ds < -0.5 ? -0.5 : ds);
        sct[b] = s->sc[b] * exp(ds);
        sks_dq_to_m3(qn, &Rt[9 * b]);
        for (int k = 0; k < 9; ++k) Rt[9 * b + k] *= sct[b];
        for (int k = 0; k < 3; ++k) ut[3 * b + k] = s->u[3 * b + k] + xb[3 + k];
        double sb = sqrt((sks_d3_dot(xb, xb) + ds * ds) * p->radius2[b]) * s->sc[b] +
                    sqrt(sks_d3_dot(xb + 3, xb + 3));
        if (sb > step) step = sb;
      }
      double Ft = generic ? eval_generic(p, Y, ybar, yy, Rt, ut, act, nb, E2, G, g2)
                          : sks_moments_eval(p, Y, ybar, yy, Rt, ut, act, nb, K, g2);
      if (Ft < F + noise || step < tol * d) {
        double decrease = F - Ft;
        for (size_t b = 0; b < B; ++b) {
          if (act[b] < 0) continue;
          const double *xb = &x[K * act[b]];
          if (generic && p->affine[b]) {
            sks_state_set_linear(s, b, &Rt[9 * b], s->q[b]);
          } else {
            sks_dquat dq = sks_dq_from_rotvec(xb);
            s->q[b] = sks_dq_normalize(sks_dq_mul(dq, s->q[b]));
            s->sc[b] = sct[b];
            sks_state_update_R(s, b);
          }
          memcpy(&s->u[3 * b], &ut[3 * b], 3 * sizeof(double));
        }
        memcpy(g, g2, n * sizeof(double));
        if (generic) memcpy(E, E2, 144 * nb * sizeof(double));
        F = Ft;
        solved = 1;
        converged = sks_lm_accepted(&lm, step, decrease, F);
      } else {
        sks_lm_rejected(&lm);
      }
    }
    if (!solved) break;
  }
  if (stats) {
    stats->iterations = it;
    size_t nv = p->inf.vertex_count;
    stats->final_rms = nv ? sqrt(fmax(F, 0.0) / (double)nv) / d : 0;
  }
  free(own);
  return 1;
}
