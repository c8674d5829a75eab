/* The seed's solver: block coordinate descent over bones. Each bone, with
 * all others held fixed, gets its closed-form weighted rigid fit (Horn):
 *   r_j = y_j - sum_{c != b} w_jc A_c p_jc,  minimise sum_j w_jb^2 |A_b p_jb - r_j / w_jb|^2
 * The skinned positions are updated incrementally after each bone, and the
 * sweeps stop on ABSOLUTE progress against D (RMS position change per sweep
 * < tol * D), not relative progress (the seed's trap (c)). */
#include <math.h>
#include <string.h>
#include "solve/solve_internal.h"

/* Proximal weight pulling a fit toward the bone's current rotation: keeps
 * degenerate bones (one point, collinear points) from spinning, and vanishes
 * at the fixed point so it never biases the converged answer. */
static double prox_weight(const sks_solve_problem *p, size_t b) {
  double d = p->scale > 0 ? p->scale : 1.0;
  return 1e-9 * p->wsum2[b] * (p->radius2[b] + 1e-6 * d * d);
}

/* Accumulates, for bone b, sum w r and S = sum w pl r^T. */
static void accumulate(const sks_solve_problem *p, const double *y, const double *cur,
                       const sks_solve_state *s, size_t b, double *swr, double *S) {
  const double *R = &s->R[9 * b], *u = &s->u[3 * b];
  memset(S, 0, 9 * sizeof(double));
  swr[0] = swr[1] = swr[2] = 0;
  for (uint32_t e = p->bstart[b]; e < p->bstart[b + 1]; ++e) {
    uint32_t v = p->bvertex[e];
    double w = p->bw[e];
    const double *pl = &p->bp[3 * e];
    double x[3];
    sks_dm3_apply(R, pl, x);
    double r[3];
    for (int a = 0; a < 3; ++a) r[a] = y[3 * v + a] - cur[3 * v + a] + w * (x[a] + u[a]);
    for (int a = 0; a < 3; ++a) {
      swr[a] += w * r[a];
      double wp = w * pl[a];
      S[a * 3 + 0] += wp * r[0];
      S[a * 3 + 1] += wp * r[1];
      S[a * 3 + 2] += wp * r[2];
    }
  }
}

/* Applies the new (R, u) of bone b to cur; returns sum |delta|^2. */
static double commit(const sks_solve_problem *p, double *cur, sks_solve_state *s, size_t b,
                     sks_dquat qn, const double *un) {
  double Rn[9];
  sks_dq_to_m3(qn, Rn);
  double dR[9], du[3];
  for (int k = 0; k < 9; ++k) dR[k] = Rn[k] - s->R[9 * b + k];
  for (int k = 0; k < 3; ++k) du[k] = un[k] - s->u[3 * b + k];
  double change = 0;
  for (uint32_t e = p->bstart[b]; e < p->bstart[b + 1]; ++e) {
    uint32_t v = p->bvertex[e];
    double w = p->bw[e], x[3];
    sks_dm3_apply(dR, &p->bp[3 * e], x);
    for (int a = 0; a < 3; ++a) {
      double d = w * (x[a] + du[a]);
      cur[3 * v + a] += d;
      change += d * d;
    }
  }
  s->q[b] = qn;
  memcpy(&s->R[9 * b], Rn, sizeof Rn);
  memcpy(&s->u[3 * b], un, 3 * sizeof(double));
  return change;
}

static double sweep_free(const sks_solve_problem *p, const double *y, sks_solve_state *s,
                         double *cur) {
  double change = 0;
  for (size_t b = 0; b < p->bone_count; ++b) {
    if (!(p->wsum2[b] > 0)) continue;
    double swr[3], S[9];
    accumulate(p, y, cur, s, b, swr, S);
    double lam = prox_weight(p, b);
    const double *R = &s->R[9 * b];
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) S[r * 3 + c] += lam * R[c * 3 + r]; /* + lam R^T */
    sks_dquat qn = sks_horn_rotation(S, s->q[b]);
    double un[3] = {swr[0] / p->wsum2[b], swr[1] / p->wsum2[b], swr[2] / p->wsum2[b]};
    change += commit(p, cur, s, b, qn, un);
  }
  return change;
}

/* Rotation-only: joints parent-first; each weighted joint's origin is its
 * parent's model applied to the rest local translation (roots free); the
 * rotation is a Horn fit about that fixed pivot. */
static double sweep_rotonly(const sks_solve_problem *p, const double *y, sks_solve_state *s,
                            double *cur, const sks_rotonly *ro) {
  double change = 0;
  sks_daffine *models = ro->scratch_models;
  for (size_t j = 0; j < ro->joint_count; ++j) {
    int32_t par = ro->parents[j];
    int32_t b = ro->joint_bone[j];
    sks_daffine parent = par >= 0 ? models[par] : sks_daff_identity();
    if (b < 0 || (!ro->bone_is_root[b] && !(p->wsum2[b] > 0)) ||
        (ro->bone_is_root[b] && !(p->wsum2[b] > 0))) {
      models[j] = sks_daff_mul(&parent, &ro->rest_local[j]);
      if (b >= 0) { /* unconstrained weighted joint: follows its parent */
        sks_daffine a = models[j], cinv;
        memcpy(cinv.l, &ro->carry_inv[9 * b], 9 * sizeof(double));
        cinv.t[0] = cinv.t[1] = cinv.t[2] = 0;
        a = sks_daff_mul(&models[j], &cinv);
        sks_state_set_rigid(p, s, (size_t)b, &a);
      }
      continue;
    }
    double swr[3], S[9];
    accumulate(p, y, cur, s, (size_t)b, swr, S);
    const double *c = &p->centroid[3 * b];
    double un[3];
    if (!ro->bone_is_root[b]) {
      double o[3];
      sks_daff_point(&parent, ro->rest_local[j].t, o);
      for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) S[r * 3 + k] += c[r] * (swr[k] - p->wsum2[b] * o[k]);
      double lam = prox_weight(p, (size_t)b);
      const double *R = &s->R[9 * b];
      for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) S[r * 3 + k] += lam * R[k * 3 + r];
      sks_dquat qn = sks_horn_rotation(S, s->q[b]);
      double Rn[9], rc[3];
      sks_dq_to_m3(qn, Rn);
      sks_dm3_apply(Rn, c, rc);
      for (int k = 0; k < 3; ++k) un[k] = rc[k] + o[k];
      change += commit(p, cur, s, (size_t)b, qn, un);
    } else {
      double lam = prox_weight(p, (size_t)b);
      const double *R = &s->R[9 * b];
      for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) S[r * 3 + k] += lam * R[k * 3 + r];
      sks_dquat qn = sks_horn_rotation(S, s->q[b]);
      for (int k = 0; k < 3; ++k) un[k] = swr[k] / p->wsum2[b];
      change += commit(p, cur, s, (size_t)b, qn, un);
    }
    sks_daffine a = sks_state_rigid(p, s, (size_t)b), cm;
    memcpy(cm.l, &ro->carry[9 * b], 9 * sizeof(double));
    cm.t[0] = cm.t[1] = cm.t[2] = 0;
    models[j] = sks_daff_mul(&a, &cm);
  }
  return change;
}

void sks_solve_bcd(const sks_solve_problem *p, const double *y, sks_solve_state *s, double *cur,
                   const sks_rotonly *ro, size_t max_sweeps, double tol, sks_solve_stats *stats) {
  size_t n = p->inf.vertex_count;
  double d = p->scale > 0 ? p->scale : 1.0;
  double thr = tol * d;
  thr = thr * thr * (double)(n ? n : 1);
  sks_solve_skin(p, s, cur);
  size_t it = 0;
  while (it < max_sweeps) {
    double change = ro ? sweep_rotonly(p, y, s, cur, ro) : sweep_free(p, y, s, cur);
    ++it;
    if ((it & 15) == 0) sks_solve_skin(p, s, cur); /* drop accumulated rounding */
    if (!(change > thr)) break;
  }
  if (stats) {
    stats->iterations = it;
    double e = 0;
    for (size_t k = 0; k < 3 * n; ++k) e += (cur[k] - y[k]) * (cur[k] - y[k]);
    stats->final_rms = n ? sqrt(e / (double)n) / d : 0;
  }
}
