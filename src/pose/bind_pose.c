/* Bind pose implied by the inverse bind matrices of one or several skins
 * (a joint listed by several skins takes the first one's).
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

static size_t skin_count(const sks_bind_pose_job *job) { return job->skin_count ? job->skin_count : 1; }

int sks_bind_pose_job_validate(const sks_bind_pose_job *job) {
  if (!job || !job->skeleton || !job->skin) return 0;
  const sks_skeleton *sk = job->skeleton;
  if (sk->joint_count == 0) {
    for (size_t k = 0; k < skin_count(job); ++k)
      if (job->skin[k].joint_count) return 0;
    return 1;
  }
  if (!sk->parents || !sk->rest || !job->scratch_models || !job->output) return 0;
  if (job->output == sk->rest) return 0; /* rest is read while output is written */
  for (size_t i = 0; i < sk->joint_count; ++i)
    if (sk->parents[i] < -1 || sk->parents[i] >= (int32_t)i) return 0;
  size_t total = 0;
  for (size_t k = 0; k < skin_count(job); ++k) {
    const sks_skin *sn = &job->skin[k];
    if (sn->joint_count > 0 && (!sn->joints || !sn->inverse_bind)) return 0;
    for (size_t j = 0; j < sn->joint_count; ++j)
      if (sn->joints[j] < 0 || (size_t)sn->joints[j] >= sk->joint_count) return 0;
    total += sn->joint_count;
  }
  return total <= (1u << 24); /* flat skin-joint index must fit a float exactly */
}

int sks_bind_pose_job_run(const sks_bind_pose_job *job) {
  if (!sks_bind_pose_job_validate(job)) return 0;
  const sks_skeleton *sk = job->skeleton;
  const size_t nskins = skin_count(job);
  sks_mat4 *models = job->scratch_models;
  /* Mark skin joints without allocating: the bottom row (m[3]) of the scratch
   * matrix holds the joint's flat index over the skins' joint lists (-1 = in
   * no skin) until its model is written. Marking back to front lets the first
   * occurrence win (first skin, then first slot). */
  for (size_t i = 0; i < sk->joint_count; ++i) models[i].m[3] = -1.0f;
  size_t total = 0;
  for (size_t k = 0; k < nskins; ++k) total += job->skin[k].joint_count;
  for (size_t k = nskins, end = total; k-- > 0;) {
    const sks_skin *sn = &job->skin[k];
    end -= sn->joint_count;
    for (size_t j = sn->joint_count; j-- > 0;) models[sn->joints[j]].m[3] = (float)(end + j);
  }
  int ok = 1;
  for (size_t i = 0; i < sk->joint_count; ++i) {
    int32_t s = (int32_t)models[i].m[3];
    const int32_t p = sk->parents[i];
    const sks_skin *skin = job->skin;
    while (s >= 0 && (size_t)s >= skin->joint_count) { s -= (int32_t)skin->joint_count; ++skin; }
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
