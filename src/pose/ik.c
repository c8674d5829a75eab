/* Two-bone IK (start -> mid -> end, e.g. hip -> knee -> ankle).
 *
 * With a = start, l1 = |mid - start|, l2 = |end - mid| and d = |target - a|
 * (clamped to [|l1 - l2|, l1 + l2]), the law of cosines gives the angle at
 * the start joint between the target direction and the upper bone:
 *   cos(alpha) = (l1^2 + d^2 - l2^2) / (2 l1 d).
 * The wanted mid position lies in the plane spanned by the target direction
 * and the pole (its component perpendicular to the target direction):
 *   mid' = a + dir * l1 cos(alpha) + bend * l1 sin(alpha).
 * Start is rotated (shortest arc) to put mid at mid', then mid is rotated to
 * put end on the target. Model-space rotations become local ones through the
 * parent's model rotation (exact for parents without non-uniform scale). */
#include "skinsolve/pose.h"
#include "math/sks_math.h"

static int is_ancestor(const int32_t *parents, int32_t anc, int32_t j) {
  for (int32_t p = parents[j]; p >= 0; p = parents[p])
    if (p == anc) return 1;
  return 0;
}

int sks_two_bone_ik_job_validate(const sks_two_bone_ik_job *job) {
  if (!job || !job->parents || !job->locals || !job->scratch_models) return 0;
  const size_t n = job->joint_count;
  for (size_t i = 0; i < n; ++i)
    if (job->parents[i] < -1 || job->parents[i] >= (int32_t)i) return 0;
  if (job->start < 0 || job->mid < 0 || job->end < 0) return 0;
  if ((size_t)job->start >= n || (size_t)job->mid >= n || (size_t)job->end >= n) return 0;
  if (!is_ancestor(job->parents, job->start, job->mid) || !is_ancestor(job->parents, job->mid, job->end))
    return 0;
  if (!isfinite(job->target.x) || !isfinite(job->target.y) || !isfinite(job->target.z)) return 0;
  if (!isfinite(job->pole.x) || !isfinite(job->pole.y) || !isfinite(job->pole.z)) return 0;
  return 1;
}

static void forward(const sks_two_bone_ik_job *job) {
  sks_local_to_model_job fk = {job->parents, job->locals, job->joint_count, NULL, job->scratch_models};
  sks_local_to_model_job_run(&fk);
}

static sks_vec3 position(const sks_mat4 *m) { return sks_v3(m->m[12], m->m[13], m->m[14]); }

/* Shortest-arc rotation taking direction u to direction v. */
static sks_quat from_to(sks_vec3 u, sks_vec3 v) {
  u = sks_v3_normalize(u);
  v = sks_v3_normalize(v);
  float d = sks_v3_dot(u, v);
  if (d < -0.999999f) { /* opposite: any axis perpendicular to u */
    sks_vec3 axis = sks_v3_cross(sks_v3(1, 0, 0), u);
    if (sks_v3_len(axis) < 1e-6f) axis = sks_v3_cross(sks_v3(0, 1, 0), u);
    return sks_q_from_axis_angle(axis, 3.14159265358979f);
  }
  sks_vec3 c = sks_v3_cross(u, v);
  return sks_q_normalize(sks_q(c.x, c.y, c.z, 1.0f + d));
}

/* Applies model-space rotation q (about the joint's own origin) to joint j. */
static void rotate_joint(sks_two_bone_ik_job *job, int32_t j, sks_quat q) {
  int32_t p = job->parents[j];
  sks_quat qp = sks_q_identity();
  if (p >= 0) qp = sks_m4_decompose(&job->scratch_models[p]).rotation;
  sks_quat local_delta = sks_q_mul(sks_q_conj(qp), sks_q_mul(q, qp));
  job->locals[j].rotation = sks_q_normalize(sks_q_mul(local_delta, job->locals[j].rotation));
}

int sks_two_bone_ik_job_run(sks_two_bone_ik_job *job) {
  if (!sks_two_bone_ik_job_validate(job)) return 0;
  job->reached = 0;
  forward(job);
  const sks_mat4 *m = job->scratch_models;
  sks_vec3 a = position(&m[job->start]), b = position(&m[job->mid]), c = position(&m[job->end]);
  const float l1 = sks_v3_len(sks_v3_sub(b, a)), l2 = sks_v3_len(sks_v3_sub(c, b));
  if (!(l1 > 0.0f) || !(l2 > 0.0f)) return 0; /* degenerate chain: nothing to bend */

  sks_vec3 to_target = sks_v3_sub(job->target, a);
  float d = sks_v3_len(to_target);
  sks_vec3 dir = d > 1e-8f ? sks_v3_scale(to_target, 1.0f / d) : sks_v3_normalize(sks_v3_sub(c, a));
  float dmin = fabsf(l1 - l2), dmax = l1 + l2;
  if (d < dmin) d = dmin;
  if (d > dmax) d = dmax;

  /* Bend direction: pole (else current mid) made perpendicular to dir. */
  sks_vec3 bend = sks_v3_sub(job->pole, a);
  bend = sks_v3_sub(bend, sks_v3_scale(dir, sks_v3_dot(bend, dir)));
  if (sks_v3_len(bend) < 1e-6f) {
    bend = sks_v3_sub(b, a);
    bend = sks_v3_sub(bend, sks_v3_scale(dir, sks_v3_dot(bend, dir)));
  }
  if (sks_v3_len(bend) < 1e-6f) { /* straight chain along dir: any perpendicular */
    bend = sks_v3_cross(dir, sks_v3(0, 0, 1));
    if (sks_v3_len(bend) < 1e-6f) bend = sks_v3_cross(dir, sks_v3(1, 0, 0));
  }
  bend = sks_v3_normalize(bend);

  float cos_a = d > 0.0f ? (l1 * l1 + d * d - l2 * l2) / (2.0f * l1 * d) : 1.0f;
  if (cos_a > 1.0f) cos_a = 1.0f;
  if (cos_a < -1.0f) cos_a = -1.0f;
  const float sin_a = sqrtf(1.0f - cos_a * cos_a);
  sks_vec3 mid_goal = sks_v3_add(a, sks_v3_add(sks_v3_scale(dir, l1 * cos_a), sks_v3_scale(bend, l1 * sin_a)));
  sks_vec3 end_goal = sks_v3_add(a, sks_v3_scale(dir, d));

  rotate_joint(job, job->start, from_to(sks_v3_sub(b, a), sks_v3_sub(mid_goal, a)));
  forward(job);
  b = position(&m[job->mid]);
  c = position(&m[job->end]);
  rotate_joint(job, job->mid, from_to(sks_v3_sub(c, b), sks_v3_sub(end_goal, b)));
  forward(job);
  c = position(&m[job->end]);
  job->reached = sks_v3_len(sks_v3_sub(c, job->target)) <= 1e-4f;
  return 1;
}
