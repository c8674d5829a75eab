/* Local -> model transforms: one forward loop over parents (parent-first). */
#include "skinsolve/pose.h"
#include "math/sks_math.h"

int sks_local_to_model_job_validate(const sks_local_to_model_job *job) {
  if (!job || !job->parents || !job->locals || !job->models) return job && job->joint_count == 0;
  for (size_t i = 0; i < job->joint_count; ++i)
    if (job->parents[i] >= (int32_t)i || job->parents[i] < -1) return 0; /* parent-first */
  return 1;
}

int sks_local_to_model_job_run(const sks_local_to_model_job *job) {
  if (!sks_local_to_model_job_validate(job)) return 0;
  for (size_t i = 0; i < job->joint_count; ++i) {
    sks_mat4 local = sks_m4_from_transform(&job->locals[i]);
    int32_t p = job->parents[i];
    if (p >= 0) job->models[i] = sks_m4_mul(&job->models[p], &local);
    else if (job->root) job->models[i] = sks_m4_mul(job->root, &local);
    else job->models[i] = local;
  }
  return 1;
}
