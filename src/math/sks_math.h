/* Internal float math: vec3, quat, mat4 (column-major, m[c*4+r]), dual quat.
 * Header-only, static inline; no global state. */
#ifndef SKS_MATH_H
#define SKS_MATH_H

#include <math.h>
#include <string.h>
#include "skinsolve/common.h"

static inline sks_vec3 sks_v3(float x, float y, float z) { sks_vec3 v = {x, y, z}; return v; }
static inline sks_vec3 sks_v3_add(sks_vec3 a, sks_vec3 b) { return sks_v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline sks_vec3 sks_v3_sub(sks_vec3 a, sks_vec3 b) { return sks_v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline sks_vec3 sks_v3_scale(sks_vec3 a, float s) { return sks_v3(a.x * s, a.y * s, a.z * s); }
static inline sks_vec3 sks_v3_mul(sks_vec3 a, sks_vec3 b) { return sks_v3(a.x * b.x, a.y * b.y, a.z * b.z); }
static inline float sks_v3_dot(sks_vec3 a, sks_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline sks_vec3 sks_v3_cross(sks_vec3 a, sks_vec3 b) {
  return sks_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline float sks_v3_len(sks_vec3 a) { return sqrtf(sks_v3_dot(a, a)); }
static inline sks_vec3 sks_v3_lerp(sks_vec3 a, sks_vec3 b, float t) {
  return sks_v3(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t);
}
static inline sks_vec3 sks_v3_normalize(sks_vec3 a) {
  float l = sks_v3_len(a);
  return l > 0.0f ? sks_v3_scale(a, 1.0f / l) : a;
}

static inline sks_quat sks_q(float x, float y, float z, float w) { sks_quat q = {x, y, z, w}; return q; }
static inline sks_quat sks_q_identity(void) { return sks_q(0, 0, 0, 1); }
static inline float sks_q_dot(sks_quat a, sks_quat b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
static inline sks_quat sks_q_normalize(sks_quat q) {
  float l = sqrtf(sks_q_dot(q, q));
  if (!(l > 0.0f)) return sks_q_identity();
  float s = 1.0f / l;
  return sks_q(q.x * s, q.y * s, q.z * s, q.w * s);
}
static inline sks_quat sks_q_mul(sks_quat a, sks_quat b) {
  return sks_q(a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
               a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
               a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
               a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z);
}
static inline sks_quat sks_q_conj(sks_quat q) { return sks_q(-q.x, -q.y, -q.z, q.w); }
static inline sks_vec3 sks_q_rotate(sks_quat q, sks_vec3 v) {
  /* v + 2w(u x v) + 2 u x (u x v) */
  sks_vec3 u = sks_v3(q.x, q.y, q.z);
  sks_vec3 t = sks_v3_scale(sks_v3_cross(u, v), 2.0f);
  return sks_v3_add(sks_v3_add(v, sks_v3_scale(t, q.w)), sks_v3_cross(u, t));
}
static inline sks_quat sks_q_from_axis_angle(sks_vec3 axis, float angle) {
  sks_vec3 a = sks_v3_normalize(axis);
  float s = sinf(angle * 0.5f);
  return sks_q(a.x * s, a.y * s, a.z * s, cosf(angle * 0.5f));
}
static inline sks_quat sks_q_nlerp(sks_quat a, sks_quat b, float t) {
  if (sks_q_dot(a, b) < 0.0f) b = sks_q(-b.x, -b.y, -b.z, -b.w);
  return sks_q_normalize(sks_q(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t,
                               a.z + (b.z - a.z) * t, a.w + (b.w - a.w) * t));
}
static inline sks_quat sks_q_slerp(sks_quat a, sks_quat b, float t) {
  float d = sks_q_dot(a, b);
  if (d < 0.0f) { b = sks_q(-b.x, -b.y, -b.z, -b.w); d = -d; }
  if (d > 0.9995f) return sks_q_nlerp(a, b, t);
  float th = acosf(d), s = sinf(th);
  float wa = sinf((1.0f - t) * th) / s, wb = sinf(t * th) / s;
  return sks_q(a.x * wa + b.x * wb, a.y * wa + b.y * wb, a.z * wa + b.z * wb, a.w * wa + b.w * wb);
}

static inline sks_mat4 sks_m4_identity(void) {
  sks_mat4 m;
  memset(&m, 0, sizeof m);
  m.m[0] = m.m[5] = m.m[10] = m.m[15] = 1.0f;
  return m;
}
static inline sks_mat4 sks_m4_mul(const sks_mat4 *a, const sks_mat4 *b) {
  sks_mat4 r;
  for (int c = 0; c < 4; ++c)
    for (int rr = 0; rr < 4; ++rr)
      r.m[c * 4 + rr] = a->m[0 * 4 + rr] * b->m[c * 4 + 0] + a->m[1 * 4 + rr] * b->m[c * 4 + 1] +
                        a->m[2 * 4 + rr] * b->m[c * 4 + 2] + a->m[3 * 4 + rr] * b->m[c * 4 + 3];
  return r;
}
static inline sks_vec3 sks_m4_point(const sks_mat4 *m, sks_vec3 p) {
  return sks_v3(m->m[0] * p.x + m->m[4] * p.y + m->m[8] * p.z + m->m[12],
                m->m[1] * p.x + m->m[5] * p.y + m->m[9] * p.z + m->m[13],
                m->m[2] * p.x + m->m[6] * p.y + m->m[10] * p.z + m->m[14]);
}
static inline sks_vec3 sks_m4_vector(const sks_mat4 *m, sks_vec3 v) {
  return sks_v3(m->m[0] * v.x + m->m[4] * v.y + m->m[8] * v.z,
                m->m[1] * v.x + m->m[5] * v.y + m->m[9] * v.z,
                m->m[2] * v.x + m->m[6] * v.y + m->m[10] * v.z);
}
/* T * R * S */
static inline sks_mat4 sks_m4_from_transform(const sks_transform *t) {
  sks_quat q = t->rotation;
  float xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
  float xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z, wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  sks_mat4 m;
  m.m[0] = (1 - 2 * (yy + zz)) * t->scale.x; m.m[1] = 2 * (xy + wz) * t->scale.x; m.m[2] = 2 * (xz - wy) * t->scale.x; m.m[3] = 0;
  m.m[4] = 2 * (xy - wz) * t->scale.y; m.m[5] = (1 - 2 * (xx + zz)) * t->scale.y; m.m[6] = 2 * (yz + wx) * t->scale.y; m.m[7] = 0;
  m.m[8] = 2 * (xz + wy) * t->scale.z; m.m[9] = 2 * (yz - wx) * t->scale.z; m.m[10] = (1 - 2 * (xx + yy)) * t->scale.z; m.m[11] = 0;
  m.m[12] = t->translation.x; m.m[13] = t->translation.y; m.m[14] = t->translation.z; m.m[15] = 1;
  return m;
}
/* Rotation of a pure (orthonormal) 3x3 part -> quaternion (Shepperd). */
static inline sks_quat sks_q_from_rotation3(float m00, float m01, float m02, float m10, float m11,
                                            float m12, float m20, float m21, float m22) {
  float tr = m00 + m11 + m22;
  sks_quat q;
  if (tr > 0) {
    float s = sqrtf(tr + 1.0f) * 2;
    q = sks_q((m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s, 0.25f * s);
  } else if (m00 > m11 && m00 > m22) {
    float s = sqrtf(1.0f + m00 - m11 - m22) * 2;
    q = sks_q(0.25f * s, (m01 + m10) / s, (m02 + m20) / s, (m21 - m12) / s);
  } else if (m11 > m22) {
    float s = sqrtf(1.0f + m11 - m00 - m22) * 2;
    q = sks_q((m01 + m10) / s, 0.25f * s, (m12 + m21) / s, (m02 - m20) / s);
  } else {
    float s = sqrtf(1.0f + m22 - m00 - m11) * 2;
    q = sks_q((m02 + m20) / s, (m12 + m21) / s, 0.25f * s, (m10 - m01) / s);
  }
  return sks_q_normalize(q);
}
/* Decompose an affine T*R*S matrix (no shear assumed). Negative determinant
 * goes into scale.x. */
static inline sks_transform sks_m4_decompose(const sks_mat4 *m) {
  sks_transform t;
  sks_vec3 c0 = sks_v3(m->m[0], m->m[1], m->m[2]), c1 = sks_v3(m->m[4], m->m[5], m->m[6]),
           c2 = sks_v3(m->m[8], m->m[9], m->m[10]);
  float sx = sks_v3_len(c0), sy = sks_v3_len(c1), sz = sks_v3_len(c2);
  if (sks_v3_dot(sks_v3_cross(c0, c1), c2) < 0) sx = -sx;
  t.translation = sks_v3(m->m[12], m->m[13], m->m[14]);
  t.scale = sks_v3(sx, sy, sz);
  if (sx == 0 || sy == 0 || sz == 0) { t.rotation = sks_q_identity(); return t; }
  c0 = sks_v3_scale(c0, 1 / sx); c1 = sks_v3_scale(c1, 1 / sy); c2 = sks_v3_scale(c2, 1 / sz);
  t.rotation = sks_q_from_rotation3(c0.x, c1.x, c2.x, c0.y, c1.y, c2.y, c0.z, c1.z, c2.z);
  return t;
}
static inline sks_transform sks_transform_identity(void) {
  sks_transform t = {{0, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}};
  return t;
}
/* General 4x4 inverse (affine or not). Returns 0 if singular. */
static inline int sks_m4_inverse(const sks_mat4 *in, sks_mat4 *out) {
  const float *m = in->m;
  double inv[16];
  inv[0] = (double)m[5] * m[10] * m[15] - (double)m[5] * m[11] * m[14] - (double)m[9] * m[6] * m[15] + (double)m[9] * m[7] * m[14] + (double)m[13] * m[6] * m[11] - (double)m[13] * m[7] * m[10];
  inv[4] = -(double)m[4] * m[10] * m[15] + (double)m[4] * m[11] * m[14] + (double)m[8] * m[6] * m[15] - (double)m[8] * m[7] * m[14] - (double)m[12] * m[6] * m[11] + (double)m[12] * m[7] * m[10];
  inv[8] = (double)m[4] * m[9] * m[15] - (double)m[4] * m[11] * m[13] - (double)m[8] * m[5] * m[15] + (double)m[8] * m[7] * m[13] + (double)m[12] * m[5] * m[11] - (double)m[12] * m[7] * m[9];
  inv[12] = -(double)m[4] * m[9] * m[14] + (double)m[4] * m[10] * m[13] + (double)m[8] * m[5] * m[14] - (double)m[8] * m[6] * m[13] - (double)m[12] * m[5] * m[10] + (double)m[12] * m[6] * m[9];
  inv[1] = -(double)m[1] * m[10] * m[15] + (double)m[1] * m[11] * m[14] + (double)m[9] * m[2] * m[15] - (double)m[9] * m[3] * m[14] - (double)m[13] * m[2] * m[11] + (double)m[13] * m[3] * m[10];
  inv[5] = (double)m[0] * m[10] * m[15] - (double)m[0] * m[11] * m[14] - (double)m[8] * m[2] * m[15] + (double)m[8] * m[3] * m[14] + (double)m[12] * m[2] * m[11] - (double)m[12] * m[3] * m[10];
  inv[9] = -(double)m[0] * m[9] * m[15] + (double)m[0] * m[11] * m[13] + (double)m[8] * m[1] * m[15] - (double)m[8] * m[3] * m[13] - (double)m[12] * m[1] * m[11] + (double)m[12] * m[3] * m[9];
  inv[13] = (double)m[0] * m[9] * m[14] - (double)m[0] * m[10] * m[13] - (double)m[8] * m[1] * m[14] + (double)m[8] * m[2] * m[13] + (double)m[12] * m[1] * m[10] - (double)m[12] * m[2] * m[9];
  inv[2] = (double)m[1] * m[6] * m[15] - (double)m[1] * m[7] * m[14] - (double)m[5] * m[2] * m[15] + (double)m[5] * m[3] * m[14] + (double)m[13] * m[2] * m[7] - (double)m[13] * m[3] * m[6];
  inv[6] = -(double)m[0] * m[6] * m[15] + (double)m[0] * m[7] * m[14] + (double)m[4] * m[2] * m[15] - (double)m[4] * m[3] * m[14] - (double)m[12] * m[2] * m[7] + (double)m[12] * m[3] * m[6];
  inv[10] = (double)m[0] * m[5] * m[15] - (double)m[0] * m[7] * m[13] - (double)m[4] * m[1] * m[15] + (double)m[4] * m[3] * m[13] + (double)m[12] * m[1] * m[7] - (double)m[12] * m[3] * m[5];
  inv[14] = -(double)m[0] * m[5] * m[14] + (double)m[0] * m[6] * m[13] + (double)m[4] * m[1] * m[14] - (double)m[4] * m[2] * m[13] - (double)m[12] * m[1] * m[6] + (double)m[12] * m[2] * m[5];
  inv[3] = -(double)m[1] * m[6] * m[11] + (double)m[1] * m[7] * m[10] + (double)m[5] * m[2] * m[11] - (double)m[5] * m[3] * m[10] - (double)m[9] * m[2] * m[7] + (double)m[9] * m[3] * m[6];
  inv[7] = (double)m[0] * m[6] * m[11] - (double)m[0] * m[7] * m[10] - (double)m[4] * m[2] * m[11] + (double)m[4] * m[3] * m[10] + (double)m[8] * m[2] * m[7] - (double)m[8] * m[3] * m[6];
  inv[11] = -(double)m[0] * m[5] * m[11] + (double)m[0] * m[7] * m[9] + (double)m[4] * m[1] * m[11] - (double)m[4] * m[3] * m[9] - (double)m[8] * m[1] * m[7] + (double)m[8] * m[3] * m[5];
  inv[15] = (double)m[0] * m[5] * m[10] - (double)m[0] * m[6] * m[9] - (double)m[4] * m[1] * m[10] + (double)m[4] * m[2] * m[9] + (double)m[8] * m[1] * m[6] - (double)m[8] * m[2] * m[5];
  double det = (double)m[0] * inv[0] + (double)m[1] * inv[4] + (double)m[2] * inv[8] + (double)m[3] * inv[12];
  double scale = 0;
  for (int i = 0; i < 16; ++i) scale = fmax(scale, fabs((double)m[i]));
  if (!(fabs(det) > 1e-30 * scale * scale * scale * scale) || !isfinite(det)) return 0;
  double id = 1.0 / det;
  for (int i = 0; i < 16; ++i) out->m[i] = (float)(inv[i] * id);
  return 1;
}

/* Unit dual quaternion: real part r (rotation), dual part d = 0.5 * t * r. */
typedef struct sks_dualquat { sks_quat r, d; } sks_dualquat;

#endif
