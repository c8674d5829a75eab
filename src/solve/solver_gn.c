/* Levenberg-Marquardt over all bones at once (the default solver).
 *
 * Parameters per constrained bone: a rotation increment w_b (R_b <- exp(w_b) R_b)
 * and a translation increment du_b, in the centred coordinates of
 * solve_internal.h. With a = R_b pl, the Jacobian of vertex v's skinned
 * position is w_vb [ -[a]x | I ]. J^T J is assembled from per-bone-pair
 * moments (sum wb wc, sum wb wc pb, sum wb wc pc, sum wb wc pb pc^T), so its
 * cost depends on the number of bone pairs, not on the vertex count:
 *   block(b,c) = [ tr(Q) I - Q   [R_b mb]x ; -[R_c mc]x   s I ],  Q = R_c P^T R_b^T
 * The residual, the objective and the gradient J^T e = w [a x e ; e] come
 * from one exact pass over the influences. */
#include <math.h>
#include <string.h>
#include "solve/solve_internal.h"

size_t sks_solve_gn_scratch_count(const sks_solve_problem *p) {
  size_t n = 6 * p->bone_count;
  return n * n + 3 * n + 16 * p->bone_count + 3 * p->inf.vertex_count;
}

static void skew(const double *a, double *m) {
  m[0] = 0;     m[1] = -a[2]; m[2] = a[1];
  m[3] = a[2];  m[4] = 0;     m[5] = -a[0];
  m[6] = -a[1]; m[7] = a[0];  m[8] = 0;
}

/* e = cur - y, returns F = sum |e|^2 and fills g (6 per active bone). */
static double residual_pass(const sks_solve_problem *p, const double *y, const double *R,
                            const double *u, const int32_t *act, double *g, double *e) {
  size_t n = p->inf.vertex_count;
  double F = 0;
  for (size_t k = 0; k < n; ++k) {
    double acc[3] = {0, 0, 0};
    for (uint32_t i = p->inf.start[k]; i < p->inf.start[k + 1]; ++i) {
      uint32_t b = p->inf.bone[i];
      double x[3];
      sks_dm3_apply(&R[9 * b], &p->inf.p[3 * i], x);
      double w = p->inf.w[i];
      for (int a = 0; a < 3; ++a) acc[a] += w * (x[a] + u[3 * b + a]);
    }
    for (int a = 0; a < 3; ++a) {
      e[3 * k + a] = acc[a] - y[3 * k + a];
      F += e[3 * k + a] * e[3 * k + a];
    }
  }
  if (g) {
    size_t nb = 0;
    for (size_t b = 0; b < p->bone_count; ++b) nb += act[b] >= 0;
    memset(g, 0, 6 * nb * sizeof(double));
    for (size_t b = 0; b < p->bone_count; ++b) {
      if (act[b] < 0) continue;
      double *gb = &g[6 * act[b]];
      const double *Rb = &R[9 * b];
      for (uint32_t en = p->bstart[b]; en < p->bstart[b + 1]; ++en) {
        const double *ev = &e[3 * p->bvertex[en]];
        double w = p->bw[en], a[3], c[3];
        sks_dm3_apply(Rb, &p->bp[3 * en], a);
        sks_d3_cross(a, ev, c);
        for (int q = 0; q < 3; ++q) {
          gb[q] += w * c[q];
          gb[3 + q] += w * ev[q];
        }
      }
    }
  }
  return F;
}

static void assemble(const sks_solve_problem *p, const double *R, const int32_t *act, size_t n,
                     double *H) {
  memset(H, 0, n * n * sizeof(double));
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
    double blk[36];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        blk[i * 6 + j] = (i == j ? tr : 0.0) - Q[i * 3 + j];
        blk[i * 6 + 3 + j] = Sa[i * 3 + j];
        blk[(3 + i) * 6 + j] = -Sc[i * 3 + j];
        blk[(3 + i) * 6 + 3 + j] = i == j ? pm->s : 0.0;
      }
    size_t ib = 6 * (size_t)act[pm->b], ic = 6 * (size_t)act[pm->c];
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j) {
        H[(ib + i) * n + ic + j] += blk[i * 6 + j];
        if (pm->b != pm->c) H[(ic + j) * n + ib + i] += blk[i * 6 + j];
      }
  }
}

/* Solves (H + lam diag) x = -g by Cholesky into L (n*n). 0 if not PD. */
static int damped_solve(const double *H, const double *g, size_t n, double lam, double floor_,
                        double *L, double *x) {
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j <= i; ++j) {
      double s = H[i * n + j];
      if (i == j) s += lam * H[i * n + i] + floor_;
      for (size_t k = 0; k < j; ++k) s -= L[i * n + k] * L[j * n + k];
      if (i == j) {
        if (!(s > 0)) return 0;
        L[i * n + i] = sqrt(s);
      } else {
        L[i * n + j] = s / L[j * n + j];
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    double s = -g[i];
    for (size_t k = 0; k < i; ++k) s -= L[i * n + k] * x[k];
    x[i] = s / L[i * n + i];
  }
  for (size_t i = n; i-- > 0;) {
    double s = x[i];
    for (size_t k = i + 1; k < n; ++k) s -= L[k * n + i] * x[k];
    x[i] = s / L[i * n + i];
  }
  return 1;
}

int sks_solve_gn(const sks_solve_problem *p, const double *y, sks_solve_state *s,
                 size_t max_iterations, double tol, sks_solve_stats *stats, double *scratch,
                 size_t scratch_count) {
  size_t B = p->bone_count;
  if (scratch_count < sks_solve_gn_scratch_count(p)) return 0;
  int32_t act[4096];
  if (B > 4096) return 0;
  size_t nb = 0;
  for (size_t b = 0; b < B; ++b) act[b] = p->wsum2[b] > 0 ? (int32_t)nb++ : -1;
  size_t n = 6 * nb;
  double *H = scratch, *L = H, *g = H + n * n, *x = g + n, *g2 = x + n;
  double *Rt = g2 + n, *ut = Rt + 9 * B, *e = ut + 3 * B;
  /* L overwrites H in place (Cholesky reads each H entry before writing
   * it), so H is re-assembled before every factorisation. */
  double d = p->scale > 0 ? p->scale : 1.0;
  double F = residual_pass(p, y, s->R, s->u, act, g, e);
  double lam = 1e-6;
  size_t it = 0;
  int converged = 0;
  double Fstop = (1e-9 * d) * (1e-9 * d) * (double)(p->inf.vertex_count ? p->inf.vertex_count : 1);
  while (it < max_iterations && !converged) {
    ++it;
    if (F <= Fstop) { converged = 1; break; }
    double maxdiag = 0;
    int solved = 0;
    for (int attempt = 0; attempt < 12 && !solved; ++attempt) {
      assemble(p, s->R, act, n, H);
      for (size_t i = 0; i < n; ++i) maxdiag = fmax(maxdiag, H[i * n + i]);
      if (!damped_solve(H, g, n, lam, 1e-12 * maxdiag + 1e-300, L, x)) { lam *= 10; continue; }
      /* trial */
      double step = 0;
      for (size_t b = 0; b < B; ++b) {
        if (act[b] < 0) {
          memcpy(&Rt[9 * b], &s->R[9 * b], 9 * sizeof(double));
          memcpy(&ut[3 * b], &s->u[3 * b], 3 * sizeof(double));
          continue;
        }
        const double *xb = &x[6 * act[b]];
        sks_dquat dq = sks_dq_from_rotvec(xb);
        sks_dquat qn = sks_dq_normalize(sks_dq_mul(dq, s->q[b]));
        sks_dq_to_m3(qn, &Rt[9 * b]);
        for (int k = 0; k < 3; ++k) ut[3 * b + k] = s->u[3 * b + k] + xb[3 + k];
        double sb = sqrt(sks_d3_dot(xb, xb) * p->radius2[b]) + sqrt(sks_d3_dot(xb + 3, xb + 3));
        if (sb > step) step = sb;
      }
      double Ft = residual_pass(p, y, Rt, ut, act, g2, e);
      if (Ft < F || step < tol * d) {
        for (size_t b = 0; b < B; ++b) {
          if (act[b] < 0) continue;
          const double *xb = &x[6 * act[b]];
          sks_dquat dq = sks_dq_from_rotvec(xb);
          s->q[b] = sks_dq_normalize(sks_dq_mul(dq, s->q[b]));
          sks_dq_to_m3(s->q[b], &s->R[9 * b]);
          memcpy(&s->u[3 * b], &ut[3 * b], 3 * sizeof(double));
        }
        memcpy(g, g2, n * sizeof(double));
        F = Ft;
        lam = fmax(lam * 0.2, 1e-12);
        solved = 1;
        if (step < tol * d) converged = 1;
      } else {
        lam *= 8;
        if (step < tol * d) { converged = 1; solved = 1; }
      }
    }
    if (!solved) break;
  }
  if (stats) {
    stats->iterations = it;
    size_t nv = p->inf.vertex_count;
    stats->final_rms = nv ? sqrt(F / (double)nv) / d : 0;
  }
  return 1;
}
