/* Bind pose implied by a skin's inverse bind matrices.
 *
 * Skin joints: model = inverse(inverse_bind). Every other joint keeps its rest
 * local, so its model follows its parent (a non-skin joint between two skin
 * joints is placed by its skin parent's bind model and its own rest local).
 * Locals of skin joints are then recovered as inverse(parent model) * model and
 * decomposed into T*R*S; non-skin joints output their rest local unchanged.
 * A bind model with shear (non-uniform scale under a rotation, e.g. a mesh
 * node's scale baked into the inverse binds) has no exact T*R*S local; the
 * decomposition then keeps the column lengths and an approximate rotation
 * (the skinning identity holds only approximately for such files). */
#include "skinsolve/pose.h"
#include "math/sks_math.h"

int sks_bind_pose_job_validate(const sks_bind_pose_job *job) {
  if (!job || !job->skeleton || !job->skin) return 0;
  const sks_skeleton *sk = job->skeleton;
  const sks_skin *skin = job->skin;
  if (sk->joint_count == 0) return skin->joint_count == 0;
  if (!sk->parents || !sk->rest || !job->scratch_models || !job->output) return 0;
  if (job->output == sk->rest) return 0; /* rest is read while output is written */
  for (size_t i = 0; i < sk->joint_count; ++i)
    if (sk->parents[i] < -1 || sk->parents[i] >= (int32_t)i) return 0;
  if (skin->joint_count > 0 && (!skin->joints || !skin->inverse_bind)) return 0;
  if (skin->joint_count > (1u << 24)) return 0; /* skin index must fit a float exactly */
  for (size_t j = 0; j < skin->joint_count; ++j)
    if (skin->joints[j] < 0 || (size_t)skin->joints[j] >= sk->joint_count) return 0;
  return 1;
}

int sks_bind_pose_job_run(const sks_bind_pose_job *job) {
  if (!sks_bind_pose_job_validate(job)) return 0;
  const sks_skeleton *sk = job->skeleton;
  const sks_skin *skin = job->skin;
  sks_mat4 *models = job->scratch_models;
  /* Mark skin joints without allocating: the bottom row (m[3]) of the scratch
   * matrix holds the skin index (-1 = not in the skin) until the joint's
   * model is written. The first occurrence wins for duplicated joints. */
  for (size_t i = 0; i < sk->joint_count; ++i) models[i].m[3] = -1.0f;
  for (size_t j = skin->joint_count; j-- > 0;) models[skin->joints[j]].m[3] = (float)j;
  int ok = 1;
  for (size_t i = 0; i < sk->joint_count; ++i) {
    const int32_t s = (int32_t)models[i].m[3];
    const int32_t p = sk->parents[i];
    if (s < 0) {
      sks_mat4 local = sks_m4_from_transform(&sk->rest[i]);
      models[i] = p >= 0 ? sks_m4_mul(&models[p], &local) : local;
      job->output[i] = sk->rest[i];
      continue;
    }
    sks_mat4 model;
    if (!sks_m4_inverse(&skin->inverse_bind[s], &model)) {
      /* Singular inverse bind matrix: fall back to the rest local. */
      sks_mat4 local = sks_m4_from_transform(&sk->rest[i]);
      models[i] = p >= 0 ? sks_m4_mul(&models[p], &local) : local;
      job->output[i] = sk->rest[i];
      ok = 0;
      continue;
    }
    models[i] = model;
    if (p < 0) {
      job->output[i] = sks_m4_decompose(&model);
      continue;
    }
    sks_mat4 parent_inv;
    if (!sks_m4_inverse(&models[p], &parent_inv)) {
      job->output[i] = sk->rest[i];
      ok = 0;
      continue;
    }
    sks_mat4 local = sks_m4_mul(&parent_inv, &model);
    job->output[i] = sks_m4_decompose(&local);
  }
  return ok;
}
