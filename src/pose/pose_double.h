/* Private: forward kinematics in double precision (the solver's and the
 * metrics' reference; the runtime job, sks_local_to_model_job, is float). */
#ifndef SKS_POSE_DOUBLE_H
#define SKS_POSE_DOUBLE_H

#include "skinsolve/rig.h"
#include "math/sks_dmath.h"

/* Local -> model in double (parent-first). */
void sks_dfk(const sks_skeleton *sk, const sks_transform *locals, sks_daffine *models);

#endif
