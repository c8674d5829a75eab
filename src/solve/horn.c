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
