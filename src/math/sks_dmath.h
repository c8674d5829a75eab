/* Double-precision helpers for the solver: 3-vectors, 3x3 matrices,
 * quaternions, affine 3x4 transforms, and the symmetric 4x4 eigen solver
 * (cyclic Jacobi) behind Horn's quaternion fit. Header-only, static inline. */
#ifndef SKS_DMATH_H
#define SKS_DMATH_H

#include <math.h>
#include <string.h>
#include "skinsolve/common.h"

/* Row-major 3x3: m[r*3 + c]. */
typedef struct sks_dmat3 { double m[9]; } sks_dmat3;
/* Affine: y = L x + t (L row-major 3x3). */
typedef struct sks_daffine { double l[9]; double t[3]; } sks_daffine;
/* Quaternion x y z w. */
typedef struct sks_dquat { double x, y, z, w; } sks_dquat;

static inline void sks_d3_set(double *o, double x, double y, double z) { o[0] = x; o[1] = y; o[2] = z; }
static inline double sks_d3_dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static inline void sks_d3_cross(const double *a, const double *b, double *o) {
  double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
  o[0] = x; o[1] = y; o[2] = z;
}
/* e1, e2 orthonormal and perpendicular to the unit vector n, e1 x e2 = n. */
static inline void sks_d3_plane_basis(const double *n, double *e1, double *e2) {
  double ax[3] = {1, 0, 0};
  if (n[0] > 0.9 || n[0] < -0.9) { ax[0] = 0; ax[1] = 1; }
  sks_d3_cross(n, ax, e1);
  double l = sqrt(sks_d3_dot(e1, e1));
  for (int k = 0; k < 3; ++k) e1[k] /= l;
  sks_d3_cross(n, e1, e2);
}
/* The unit direction a rank-2 3x3 M maps to 0 (rows 3 apart): the largest
 * cross product of two of its rows; 0 when M has rank < 2. */
static inline int sks_dm3_null_dir(const double *M, double *z) {
  double best = 0;
  z[0] = z[1] = z[2] = 0;
  for (int i = 0; i < 3; ++i) {
    double c[3];
    sks_d3_cross(&M[3 * i], &M[3 * ((i + 1) % 3)], c);
    double l = sks_d3_dot(c, c);
    if (l > best) { best = l; z[0] = c[0]; z[1] = c[1]; z[2] = c[2]; }
  }
  if (!(best > 0)) return 0;
  for (int k = 0; k < 3; ++k) z[k] /= sqrt(best);
  return 1;
}
static inline double sks_d3_dist2(const double *a, const double *b) {
  double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return dx * dx + dy * dy + dz * dz;
}

static inline sks_dmat3 sks_dm3_identity(void) {
  sks_dmat3 r = {{1, 0, 0, 0, 1, 0, 0, 0, 1}};
  return r;
}
/* o = a b, row-major 3x3 arrays (o must not alias a or b). */
static inline void sks_dm3_mul_to(const double *a, const double *b, double *o) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) o[i * 3 + j] = a[i * 3] * b[j] + a[i * 3 + 1] * b[3 + j] + a[i * 3 + 2] * b[6 + j];
}
static inline sks_dmat3 sks_dm3_mul(const sks_dmat3 *a, const sks_dmat3 *b) {
  sks_dmat3 r;
  sks_dm3_mul_to(a->m, b->m, r.m);
  return r;
}
static inline sks_dmat3 sks_dm3_transpose(const sks_dmat3 *a) {
  sks_dmat3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[i * 3 + j] = a->m[j * 3 + i];
  return r;
}
static inline void sks_dm3_apply(const double *l, const double *x, double *o) {
  double a = l[0] * x[0] + l[1] * x[1] + l[2] * x[2];
  double b = l[3] * x[0] + l[4] * x[1] + l[5] * x[2];
  double c = l[6] * x[0] + l[7] * x[1] + l[8] * x[2];
  o[0] = a; o[1] = b; o[2] = c;
}
static inline double sks_dm3_det(const double *m) {
  return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
         m[2] * (m[3] * m[7] - m[4] * m[6]);
}
/* Returns 0 if singular. */
static inline int sks_dm3_inverse(const double *m, double *o) {
  double det = sks_dm3_det(m);
  double sc = 0;
  for (int i = 0; i < 9; ++i) sc = fmax(sc, fabs(m[i]));
  if (!(fabs(det) > 1e-300) || !(fabs(det) > 1e-14 * sc * sc * sc) || !isfinite(det)) return 0;
  double id = 1.0 / det, r[9];
  r[0] = (m[4] * m[8] - m[5] * m[7]) * id;
  r[1] = (m[2] * m[7] - m[1] * m[8]) * id;
  r[2] = (m[1] * m[5] - m[2] * m[4]) * id;
  r[3] = (m[5] * m[6] - m[3] * m[8]) * id;
  r[4] = (m[0] * m[8] - m[2] * m[6]) * id;
  r[5] = (m[2] * m[3] - m[0] * m[5]) * id;
  r[6] = (m[3] * m[7] - m[4] * m[6]) * id;
  r[7] = (m[1] * m[6] - m[0] * m[7]) * id;
  r[8] = (m[0] * m[4] - m[1] * m[3]) * id;
  memcpy(o, r, sizeof r);
  return 1;
}

static inline sks_dquat sks_dq_normalize(sks_dquat q) {
  double l = sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
  if (!(l > 0) || !isfinite(l)) { sks_dquat id = {0, 0, 0, 1}; return id; }
  q.x /= l; q.y /= l; q.z /= l; q.w /= l;
  return q;
}
static inline sks_dquat sks_dq_mul(sks_dquat a, sks_dquat b) {
  sks_dquat r = {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                 a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                 a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
                 a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
  return r;
}
/* Row-major rotation matrix of a unit quaternion. */
static inline void sks_dq_to_m3(sks_dquat q, double *m) {
  double xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z, xy = q.x * q.y, xz = q.x * q.z,
         yz = q.y * q.z, wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  m[0] = 1 - 2 * (yy + zz); m[1] = 2 * (xy - wz);     m[2] = 2 * (xz + wy);
  m[3] = 2 * (xy + wz);     m[4] = 1 - 2 * (xx + zz); m[5] = 2 * (yz - wx);
  m[6] = 2 * (xz - wy);     m[7] = 2 * (yz + wx);     m[8] = 1 - 2 * (xx + yy);
}
/* Quaternion of a (near-)orthonormal row-major 3x3 (Shepperd). */
static inline sks_dquat sks_dq_from_m3(const double *m) {
  double tr = m[0] + m[4] + m[8];
  sks_dquat q;
  if (tr > 0) {
    double s = sqrt(tr + 1.0) * 2;
    q.w = 0.25 * s; q.x = (m[7] - m[5]) / s; q.y = (m[2] - m[6]) / s; q.z = (m[3] - m[1]) / s;
  } else if (m[0] > m[4] && m[0] > m[8]) {
    double s = sqrt(1.0 + m[0] - m[4] - m[8]) * 2;
    q.w = (m[7] - m[5]) / s; q.x = 0.25 * s; q.y = (m[1] + m[3]) / s; q.z = (m[2] + m[6]) / s;
  } else if (m[4] > m[8]) {
    double s = sqrt(1.0 + m[4] - m[0] - m[8]) * 2;
    q.w = (m[2] - m[6]) / s; q.x = (m[1] + m[3]) / s; q.y = 0.25 * s; q.z = (m[5] + m[7]) / s;
  } else {
    double s = sqrt(1.0 + m[8] - m[0] - m[4]) * 2;
    q.w = (m[3] - m[1]) / s; q.x = (m[2] + m[6]) / s; q.y = (m[5] + m[7]) / s; q.z = 0.25 * s;
  }
  return sks_dq_normalize(q);
}
/* exp of a rotation vector (axis * angle) as a quaternion. */
static inline sks_dquat sks_dq_from_rotvec(const double *v) {
  double th = sqrt(sks_d3_dot(v, v));
  sks_dquat q;
  if (th < 1e-12) {
    q.x = 0.5 * v[0]; q.y = 0.5 * v[1]; q.z = 0.5 * v[2]; q.w = 1.0;
    return sks_dq_normalize(q);
  }
  double s = sin(0.5 * th) / th;
  q.x = v[0] * s; q.y = v[1] * s; q.z = v[2] * s; q.w = cos(0.5 * th);
  return q;
}

/* The rotation vector (axis * angle, the short way) of the step q1 q0^-1
 * that takes unit quaternion q0 to q1 (0 when under 1e-15): scaled by a
 * and applied to q1 (sks_dq_from_rotvec(a v) q1) it extrapolates a
 * rotation a steps on, applied to q0 it takes a times the step. */
static inline void sks_dq_step_rotvec(sks_dquat q0, sks_dquat q1, double *v) {
  sks_dquat q0c = {-q0.x, -q0.y, -q0.z, q0.w};
  sks_dquat dq = sks_dq_mul(q1, q0c);
  if (dq.w < 0) { dq.x = -dq.x; dq.y = -dq.y; dq.z = -dq.z; dq.w = -dq.w; }
  double sn = sqrt(dq.x * dq.x + dq.y * dq.y + dq.z * dq.z), ang = 2.0 * atan2(sn, dq.w);
  v[0] = v[1] = v[2] = 0;
  if (sn > 1e-15)
    for (int a = 0; a < 3; ++a) v[a] = (&dq.x)[a] / sn * ang;
}

/* Affine helpers. sks_mat4 is column-major float. */
static inline sks_daffine sks_daff_from_m4(const sks_mat4 *m) {
  sks_daffine a;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) a.l[r * 3 + c] = m->m[c * 4 + r];
    a.t[r] = m->m[12 + r];
  }
  return a;
}
static inline sks_mat4 sks_daff_to_m4(const sks_daffine *a) {
  sks_mat4 m;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) m.m[c * 4 + r] = (float)a->l[r * 3 + c];
    m.m[12 + r] = (float)a->t[r];
    m.m[r * 4 + 3] = 0.0f;
  }
  m.m[15] = 1.0f;
  return m;
}
static inline sks_daffine sks_daff_identity(void) {
  sks_daffine a = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 0, 0}};
  return a;
}
static inline sks_daffine sks_daff_mul(const sks_daffine *a, const sks_daffine *b) {
  sks_daffine r;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j)
      r.l[i * 3 + j] = a->l[i * 3] * b->l[j] + a->l[i * 3 + 1] * b->l[3 + j] + a->l[i * 3 + 2] * b->l[6 + j];
    r.t[i] = a->l[i * 3] * b->t[0] + a->l[i * 3 + 1] * b->t[1] + a->l[i * 3 + 2] * b->t[2] + a->t[i];
  }
  return r;
}
static inline void sks_daff_point(const sks_daffine *a, const double *x, double *o) {
  double r0 = a->l[0] * x[0] + a->l[1] * x[1] + a->l[2] * x[2] + a->t[0];
  double r1 = a->l[3] * x[0] + a->l[4] * x[1] + a->l[5] * x[2] + a->t[1];
  double r2 = a->l[6] * x[0] + a->l[7] * x[1] + a->l[8] * x[2] + a->t[2];
  o[0] = r0; o[1] = r1; o[2] = r2;
}
static inline int sks_daff_inverse(const sks_daffine *a, sks_daffine *o) {
  sks_daffine r;
  if (!sks_dm3_inverse(a->l, r.l)) return 0;
  sks_dm3_apply(r.l, a->t, r.t);
  r.t[0] = -r.t[0]; r.t[1] = -r.t[1]; r.t[2] = -r.t[2];
  *o = r;
  return 1;
}
/* T * R * S of a float transform, in double. */
static inline sks_daffine sks_daff_from_transform(const sks_transform *t) {
  sks_dquat q = {t->rotation.x, t->rotation.y, t->rotation.z, t->rotation.w};
  q = sks_dq_normalize(q);
  sks_daffine a;
  sks_dq_to_m3(q, a.l);
  const double s[3] = {t->scale.x, t->scale.y, t->scale.z};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) a.l[r * 3 + c] *= s[c];
  a.t[0] = t->translation.x; a.t[1] = t->translation.y; a.t[2] = t->translation.z;
  return a;
}
/* Affine -> T R S (no shear assumed; a negative determinant goes to scale.x). */
static inline sks_transform sks_daff_to_transform(const sks_daffine *a) {
  sks_transform t;
  double c[3][3];
  double s[3];
  for (int k = 0; k < 3; ++k) {
    for (int r = 0; r < 3; ++r) c[k][r] = a->l[r * 3 + k];
    s[k] = sqrt(sks_d3_dot(c[k], c[k]));
  }
  if (sks_dm3_det(a->l) < 0) s[0] = -s[0];
  t.translation.x = (float)a->t[0]; t.translation.y = (float)a->t[1]; t.translation.z = (float)a->t[2];
  t.scale.x = (float)s[0]; t.scale.y = (float)s[1]; t.scale.z = (float)s[2];
  if (s[0] == 0 || s[1] == 0 || s[2] == 0) {
    t.rotation.x = t.rotation.y = t.rotation.z = 0; t.rotation.w = 1;
    return t;
  }
  double m[9];
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) m[r * 3 + k] = c[k][r] / s[k];
  sks_dquat q = sks_dq_from_m3(m);
  t.rotation.x = (float)q.x; t.rotation.y = (float)q.y; t.rotation.z = (float)q.z; t.rotation.w = (float)q.w;
  return t;
}

/* Eigen-decomposition of a symmetric 4x4 (row-major a[16], destroyed) by
 * cyclic Jacobi rotations: exact to rounding for a 4x4, unlike power
 * iteration, which stalls when the top two eigenvalues are close (seed 003).
 * Eigenvalues -> eval[4]; eigenvectors are the columns of evec (row-major). */
static inline void sks_jacobi4(double *a, double *eval, double *evec) {
  for (int i = 0; i < 16; ++i) evec[i] = (i % 5 == 0) ? 1.0 : 0.0;
  for (int sweep = 0; sweep < 50; ++sweep) {
    double off = 0, diag = 0;
    for (int p = 0; p < 4; ++p) {
      diag += a[p * 5] * a[p * 5];
      for (int q = p + 1; q < 4; ++q) off += a[p * 4 + q] * a[p * 4 + q];
    }
    if (off <= 1e-32 * diag || off == 0.0) break;
    for (int p = 0; p < 3; ++p)
      for (int q = p + 1; q < 4; ++q) {
        double apq = a[p * 4 + q];
        if (apq == 0.0) continue;
        double app = a[p * 5], aqq = a[q * 5];
        double theta = (aqq - app) / (2.0 * apq);
        double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
        double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
        for (int k = 0; k < 4; ++k) { /* columns p, q */
          double akp = a[k * 4 + p], akq = a[k * 4 + q];
          a[k * 4 + p] = c * akp - s * akq;
          a[k * 4 + q] = s * akp + c * akq;
        }
        for (int k = 0; k < 4; ++k) { /* rows p, q */
          double apk = a[p * 4 + k], aqk = a[q * 4 + k];
          a[p * 4 + k] = c * apk - s * aqk;
          a[q * 4 + k] = s * apk + c * aqk;
        }
        for (int k = 0; k < 4; ++k) {
          double vkp = evec[k * 4 + p], vkq = evec[k * 4 + q];
          evec[k * 4 + p] = c * vkp - s * vkq;
          evec[k * 4 + q] = s * vkp + c * vkq;
        }
      }
  }
  for (int i = 0; i < 4; ++i) eval[i] = a[i * 5];
}

/* Solves the n x n system A x = b (row-major A, both overwritten; x into b)
 * by Gaussian elimination with partial pivoting. Returns 0 when a pivot is
 * not above min_pivot in magnitude (singular at that tolerance). For the
 * small systems of the refit's weight step and the alignment's Anderson
 * acceleration. */
static inline int sks_dsolve_small(double *A, double *b, int n, double min_pivot) {
  for (int i = 0; i < n; ++i) {
    int piv = i;
    for (int r = i + 1; r < n; ++r)
      if (fabs(A[r * n + i]) > fabs(A[piv * n + i])) piv = r;
    if (!(fabs(A[piv * n + i]) > min_pivot)) return 0;
    if (piv != i) {
      for (int k = 0; k < n; ++k) { double t = A[i * n + k]; A[i * n + k] = A[piv * n + k]; A[piv * n + k] = t; }
      double t = b[i]; b[i] = b[piv]; b[piv] = t;
    }
    for (int r = i + 1; r < n; ++r) {
      double f = A[r * n + i] / A[i * n + i];
      for (int k = i; k < n; ++k) A[r * n + k] -= f * A[i * n + k];
      b[r] -= f * b[i];
    }
  }
  for (int i = n - 1; i >= 0; --i) {
    double v = b[i];
    for (int k = i + 1; k < n; ++k) v -= A[i * n + k] * b[k];
    b[i] = v / A[i * n + i];
  }
  return 1;
}

#endif
