/* Horn's closed-form absolute orientation (quaternion method).
 * The rotation R maximising sum a_k q_k . (R p_k) is the unit eigenvector of
 * the largest eigenvalue of the symmetric 4x4
 *   N = [ Sxx+Syy+Szz  Syz-Szy      Szx-Sxz      Sxy-Syx
 *         Syz-Szy      Sxx-Syy-Szz  Sxy+Syx      Szx+Sxz
 *         Szx-Sxz      Sxy+Syx     -Sxx+Syy-Szz  Syz+Szy
 *         Sxy-Syx      Szx+Sxz      Syz+Szy     -Sxx-Syy+Szz ]
 * with S = sum a_k p_k q_k^T, eigenvector ordered (w, x, y, z).
 * We use cyclic Jacobi rotations: power iteration stalls when the top two
 * eigenvalues are close (the seed's trap (b)). */
#include <stdlib.h>
#include <string.h>
#include "solve/solve_internal.h"

sks_dquat sks_horn_rotation(const double *S, sks_dquat near) {
  const double xx = S[0], xy = S[1], xz = S[2], yx = S[3], yy = S[4], yz = S[5], zx = S[6],
               zy = S[7], zz = S[8];
  double n[16] = {xx + yy + zz, yz - zy,      zx - xz,       xy - yx,
                  yz - zy,      xx - yy - zz, xy + yx,       zx + xz,
                  zx - xz,      xy + yx,      -xx + yy - zz, yz + zy,
                  xy - yx,      zx + xz,      yz + zy,       -xx - yy + zz};
  double ev[4], V[16];
  sks_jacobi4(n, ev, V);
  int best = 0;
  for (int i = 1; i < 4; ++i)
    if (ev[i] > ev[best]) best = i;
  sks_dquat q = {V[1 * 4 + best], V[2 * 4 + best], V[3 * 4 + best], V[0 * 4 + best]};
  q = sks_dq_normalize(q);
  if (q.x * near.x + q.y * near.y + q.z * near.z + q.w * near.w < 0) {
    q.x = -q.x; q.y = -q.y; q.z = -q.z; q.w = -q.w;
  }
  return q;
}

/* Cold start (frame 0, no previous frame to warm-start from): each bone's
 * rigid Horn fit to the vertices it dominates (weight >= 0.5; all of its
 * vertices when fewer than 3), weights w^2. Started from the bind pose, a
 * pose far from it (ozz_astro_max.dae: frame 0 is 66 %D away) leaves the LM
 * crawling through a narrow valley of the small bones (a 117-vertex toe of
 * radius 0.07 %D) until its flat-valley stop gives up at 0.05 %D; from the
 * per-bone fits every bone starts within its blend error of the answer.
 * Uniform scale and stretch are kept (1 / identity at the start). */
void sks_solve_cold_start(const sks_solve_problem *p, const double *y, sks_solve_state *s) {
  for (size_t b = 0; b < p->bone_count; ++b) {
    uint32_t e0 = p->bstart[b], e1 = p->bstart[b + 1];
    size_t dominated = 0;
    for (uint32_t e = e0; e < e1; ++e) dominated += p->bw[e] >= 0.5;
    double minw = dominated >= 3 ? 0.5 : 0.0, sa = 0, pc[3] = {0, 0, 0}, yc[3] = {0, 0, 0};
    for (uint32_t e = e0; e < e1; ++e) {
      double w = p->bw[e];
      if (w < minw || !(w > 0)) continue;
      const double *pl = &p->bp[3 * e], *yv = &y[3 * p->bvertex[e]];
      double a = w * w;
      sa += a;
      for (int k = 0; k < 3; ++k) { pc[k] += a * pl[k]; yc[k] += a * yv[k]; }
    }
    if (!(sa > 0)) continue;
    for (int k = 0; k < 3; ++k) { pc[k] /= sa; yc[k] /= sa; }
    double S[9] = {0};
    for (uint32_t e = e0; e < e1; ++e) {
      double w = p->bw[e];
      if (w < minw || !(w > 0)) continue;
      const double *pl = &p->bp[3 * e], *yv = &y[3 * p->bvertex[e]];
      double a = w * w, dp[3], dy[3];
      for (int k = 0; k < 3; ++k) { dp[k] = pl[k] - pc[k]; dy[k] = yv[k] - yc[k]; }
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) S[r * 3 + c] += a * dp[r] * dy[c];
    }
    s->q[b] = sks_horn_rotation(S, s->q[b]);
    sks_state_update_R(s, b);
    double rp[3];
    sks_dm3_apply(&s->R[9 * b], pc, rp); /* A p' = R p' + u with p' centred */
    for (int k = 0; k < 3; ++k) s->u[3 * b + k] = yc[k] - rp[k];
  }
}

/* A frame the warm start did not reach: its residual came out more than 10x
 * the previous frame's (a clip sampled at 4 fps: ozz_astro_maya's frame 1
 * stalled at 0.012 %D worst from the previous pose). Solve again from the
 * per-bone fits and keep the better of the two. Never triggers while the
 * residual moves smoothly (every frame of the Fox onto its auto-weights
 * target), so those results and times are untouched. */
void sks_solve_retry_from_fits(const sks_solve_problem *p, const double *y, sks_solve_state *s,
                               const sks_rotonly *ro, size_t max_iterations, double tol,
                               sks_solve_stats *stats, double *scratch, size_t scratch_count) {
  size_t B = p->bone_count;
  sks_solve_state keep;
  keep.q = malloc((B ? B : 1) * sizeof(sks_dquat));
  keep.R = malloc((B ? B : 1) * 9 * sizeof(double));
  keep.u = malloc((B ? B : 1) * 3 * sizeof(double));
  keep.sc = malloc((B ? B : 1) * sizeof(double));
  keep.stretch = s->stretch ? malloc((B ? B : 1) * 9 * sizeof(double)) : NULL;
  if (!keep.q || !keep.R || !keep.u || !keep.sc || (s->stretch && !keep.stretch)) goto done;
  memcpy(keep.q, s->q, B * sizeof(sks_dquat));
  memcpy(keep.R, s->R, 9 * B * sizeof(double));
  memcpy(keep.u, s->u, 3 * B * sizeof(double));
  memcpy(keep.sc, s->sc, B * sizeof(double));
  if (s->stretch) memcpy(keep.stretch, s->stretch, 9 * B * sizeof(double));
  sks_solve_cold_start(p, y, s);
  sks_solve_stats again = {0, 0};
  int ran;
  if (ro) {
    sks_rotonly_project(p, s, ro);
    ran = sks_solve_rotonly_gn(p, y, s, ro, max_iterations, tol, &again);
  } else {
    ran = sks_solve_gn(p, y, s, max_iterations, tol, &again, scratch, scratch_count);
  }
  stats->iterations += again.iterations;
  if (ran && again.final_rms < stats->final_rms) {
    stats->final_rms = again.final_rms;
  } else { /* the first solve stays */
    memcpy(s->q, keep.q, B * sizeof(sks_dquat));
    memcpy(s->R, keep.R, 9 * B * sizeof(double));
    memcpy(s->u, keep.u, 3 * B * sizeof(double));
    memcpy(s->sc, keep.sc, B * sizeof(double));
    if (s->stretch) memcpy(s->stretch, keep.stretch, 9 * B * sizeof(double));
  }
done:
  free(keep.q); free(keep.R); free(keep.u); free(keep.sc); free(keep.stretch);
}
