/* Forward kinematics in double precision (pose_double.h). */
#include "pose/pose_double.h"

void sks_dfk(const sks_skeleton *sk, const sks_transform *locals, sks_daffine *models) {
  for (size_t j = 0; j < sk->joint_count; ++j) {
    sks_daffine l = sks_daff_from_transform(&locals[j]);
    int32_t p = sk->parents[j];
    models[j] = p >= 0 ? sks_daff_mul(&models[p], &l) : l;
  }
}

