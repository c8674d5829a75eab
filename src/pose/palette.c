/* Skin-matrix palette: palette[i] = model[skin.joints[i]] * inverse_bind[i].
 * The vertex shader / skinning job blends these per influence. */
#include "skinsolve/pose.h"
#include "math/sks_math.h"

int sks_palette_job_validate(const sks_palette_job *job) {
  if (!job || !job->skin) return 0;
  const sks_skin *skin = job->skin;
  if (skin->joint_count == 0) return 1;
  if (!skin->joints || !skin->inverse_bind || !job->models || !job->palette) return 0;
  for (size_t i = 0; i < skin->joint_count; ++i)
    if (skin->joints[i] < 0 || (size_t)skin->joints[i] >= job->model_count) return 0;
  return 1;
}

int sks_palette_job_run(const sks_palette_job *job) {
  if (!sks_palette_job_validate(job)) return 0;
  const sks_skin *skin = job->skin;
  for (size_t i = 0; i < skin->joint_count; ++i)
    job->palette[i] = sks_m4_mul(&job->models[skin->joints[i]], &skin->inverse_bind[i]);
  return 1;
}
