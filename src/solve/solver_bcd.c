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
                     sks_dquat qn, const double *un, double sn) {
  double Rn[9];
  sks_dq_to_m3(qn, Rn);
  for (int k = 0; k < 9; ++k) Rn[k] *= sn;
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
  s->sc[b] = sn;
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
    double lam = prox_weight(p, b), S0[9], R0[9];
    memcpy(S0, S, sizeof S0);
    sks_dq_to_m3(s->q[b], R0);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) S[r * 3 + c] += lam * R0[c * 3 + r]; /* + lam R^T */
    sks_dquat qn = sks_horn_rotation(S, s->q[b]);
    double un[3] = {swr[0] / p->wsum2[b], swr[1] / p->wsum2[b], swr[2] / p->wsum2[b]};
    double sn = s->sc[b];
    if (p->similarity && p->radius2[b] > 0) { /* Horn's scale: tr(R S) / sum w^2 |pl|^2 */
      double Rn[9], tr = 0;
      sks_dq_to_m3(qn, Rn);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) tr += Rn[i * 3 + j] * S0[j * 3 + i];
      double cand = tr / (p->wsum2[b] * p->radius2[b]);
      if (cand > 1e-3 && cand < 1e3) sn = cand;
    }
    change += commit(p, cur, s, b, qn, un, sn);
  }
  return change;
}

/* Rotation-only: the unknowns are each constrained joint's rotation (plus the
 * translation of root joints); children keep their rest local translations,
 * so rotating joint b moves its whole subtree rigidly about b's origin o.
 * Exact block step for joint b: with P_v = sum_{i in subtree} w_i (x_i - o),
 * W_v = sum_{i in subtree} w_i, and T_v = y_v - (cur_v - sum w_i x_i) - W_v o,
 * minimise sum_v |dR P_v + W_v dt - T_v|^2: Horn with weights W_v^2, points
 * P_v / W_v, targets T_v / W_v (dt = 0 and no centring for non-roots). */
static double sweep_rotonly(const sks_solve_problem *p, const double *y, sks_solve_state *s,
                            double *cur, const sks_rotonly *ro) {
  double change = 0;
  double *P = ro->vscratch; /* 5 per constraint vertex: P (3), W, mark */
  uint32_t *touched = ro->touched;
  for (size_t b = 0; b < p->bone_count; ++b) {
    if (!(p->wsum2[b] > 0)) continue;
    int root = ro->bone_is_root[b];
    double o[3];
    sks_daffine A = sks_state_rigid(p, s, b);
    memcpy(o, A.t, sizeof o);
    size_t nt = 0;
    for (uint32_t k = ro->sub_start[b]; k < ro->sub_start[b + 1]; ++k) {
      uint32_t c = ro->sub_bones[k];
      const double *R = &s->R[9 * c], *u = &s->u[3 * c];
      for (uint32_t e = p->bstart[c]; e < p->bstart[c + 1]; ++e) {
        uint32_t v = p->bvertex[e];
        double *pv = &P[5 * v];
        if (pv[4] == 0.0) { pv[4] = 1.0; touched[nt++] = v; }
        double w = p->bw[e], x[3];
        sks_dm3_apply(R, &p->bp[3 * e], x);
        for (int a = 0; a < 3; ++a) pv[a] += w * (x[a] + u[a] - o[a]);
        pv[3] += w;
      }
    }
    /* Horn accumulation over touched vertices */
    double sa = 0, sp[3] = {0, 0, 0}, sq[3] = {0, 0, 0}, S[9] = {0};
    for (size_t k = 0; k < nt; ++k) {
      uint32_t v = touched[k];
      double *pv = &P[5 * v];
      double W = pv[3];
      if (!(W > 0)) continue;
      double T[3];
      /* cur_v - sum w_i x_i = cur_v - (P_v + W o) */
      for (int a = 0; a < 3; ++a) T[a] = y[3 * v + a] - (cur[3 * v + a] - pv[a] - W * o[a]) - W * o[a];
      /* weights W^2, points P/W, targets T/W: a p q^T = P T^T */
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) S[r * 3 + c] += pv[r] * T[c];
      sa += W * W;
      for (int a = 0; a < 3; ++a) { sp[a] += W * pv[a]; sq[a] += W * T[a]; }
    }
    double dt[3] = {0, 0, 0};
    if (root && sa > 0) { /* centre: S -= sa pbar qbar^T */
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) S[r * 3 + c] -= sp[r] * sq[c] / sa;
    }
    double lam = 1e-9 * (S[0] + S[4] + S[8] > 0 ? (fabs(S[0]) + fabs(S[4]) + fabs(S[8])) : 1.0) + 1e-300;
    S[0] += lam; S[4] += lam; S[8] += lam;
    sks_dquat id = {0, 0, 0, 1};
    sks_dquat dq = sks_horn_rotation(S, id);
    double dR[9];
    sks_dq_to_m3(dq, dR);
    if (root && sa > 0) { /* dt = qbar - dR pbar */
      double pb[3] = {sp[0] / sa, sp[1] / sa, sp[2] / sa}, rp[3];
      sks_dm3_apply(dR, pb, rp);
      for (int a = 0; a < 3; ++a) dt[a] = sq[a] / sa - rp[a];
    }
    /* apply to every bone of the subtree and to cur */
    for (uint32_t k = ro->sub_start[b]; k < ro->sub_start[b + 1]; ++k) {
      uint32_t c = ro->sub_bones[k];
      double un[3], d[3];
      for (int a = 0; a < 3; ++a) d[a] = s->u[3 * c + a] - o[a];
      sks_dm3_apply(dR, d, un);
      for (int a = 0; a < 3; ++a) un[a] += o[a] + dt[a];
      sks_dquat qn = sks_dq_normalize(sks_dq_mul(dq, s->q[c]));
      if (p->wsum2[c] > 0) change += commit(p, cur, s, c, qn, un, s->sc[c]);
      else { s->q[c] = qn; sks_state_update_R(s, c); memcpy(&s->u[3 * c], un, sizeof un); }
    }
    for (size_t k = 0; k < nt; ++k) memset(&P[5 * touched[k]], 0, 5 * sizeof(double));
  }
  return change;
}

/* Makes a state satisfy the rotation-only constraint: parent-first, each
 * non-root constrained joint's origin is put at its parent's model applied
 * to its rest local translation (rotations kept). */
void sks_rotonly_project(const sks_solve_problem *p, sks_solve_state *s, const sks_rotonly *ro) {
  sks_daffine *models = ro->scratch_models;
  for (size_t j = 0; j < ro->joint_count; ++j) {
    int32_t par = ro->parents[j], b = ro->joint_bone[j];
    sks_daffine parent = par >= 0 ? models[par] : sks_daff_identity();
    if (b < 0 || !(p->wsum2[b] > 0)) {
      models[j] = sks_daff_mul(&parent, &ro->rest_local[j]);
      continue;
    }
    sks_daffine a = sks_state_rigid(p, s, (size_t)b), cm;
    if (!ro->bone_is_root[b]) {
      sks_daff_point(&parent, ro->rest_local[j].t, a.t);
      sks_state_set_rigid(p, s, (size_t)b, &a);
    }
    memcpy(cm.l, &ro->carry[9 * b], 9 * sizeof(double));
    cm.t[0] = cm.t[1] = cm.t[2] = 0;
    models[j] = sks_daff_mul(&a, &cm);
  }
}

int sks_solve_bcd(const sks_solve_problem *p, const double *y, sks_solve_state *s, double *cur,
                  const sks_rotonly *ro, size_t max_sweeps, double tol, int give_up,
                  sks_solve_stats *stats) {
  size_t n = p->inf.vertex_count;
  double d = p->scale > 0 ? p->scale : 1.0;
  double thr = tol * d;
  thr = thr * thr * (double)(n ? n : 1);
  sks_solve_skin(p, s, cur);
  size_t it = 0;
  int converged = 0;
  double hist[8] = {0}; /* the last 8 sweeps' changes (give_up) */
  while (it < max_sweeps) {
    double change = ro ? sweep_rotonly(p, y, s, cur, ro) : sweep_free(p, y, s, cur);
    ++it;
    if ((it & 15) == 0) sks_solve_skin(p, s, cur); /* drop accumulated rounding */
    if (!(change > thr)) { converged = 1; break; }
    /* give_up: sweeps converge linearly, the change shrinking by a rate r
     * per sweep (r over the last 8); at that rate the stop is
     * log(thr / change) / log(r) sweeps away. More than twice the sweeps
     * left: stop now and say so (return 0), not after max_sweeps. */
    double old = hist[it & 7];
    hist[it & 7] = change;
    if (give_up && it >= 16 && old > 0) {
      double r = pow(change / old, 1.0 / 8.0);
      double need = r < 1 ? log(thr / change) / log(r) : INFINITY;
      if (need > 2.0 * (double)(max_sweeps - it)) break;
    }
  }
  if (stats) {
    stats->iterations = it;
    double e = 0;
    for (size_t k = 0; k < 3 * n; ++k) e += (cur[k] - y[k]) * (cur[k] - y[k]);
    stats->final_rms = n ? sqrt(e / (double)n) / d : 0;
  }
  return converged;
}
