/* Re-export variants of a rig, built in tests from real files: what an
 * exporter with other conventions would have written (the real-files
 * issue's invariance tests: tests/test_bake_variants.c, test_bake_humans.c). */
#ifndef SKS_VARIANTS_H
#define SKS_VARIANTS_H

#include "skinsolve/skinsolve.h"

/* Unit quaternion: `deg` degrees about (x, y, z). */
sks_quat sks_variant_axis_angle(double x, double y, double z, double deg);
/* A new non-joint root node with transform x above the skeleton (an
 * armature object's transform); joints, parts and tracks re-indexed. */
void sks_variant_add_parent(sks_model *m, sks_transform x);
/* "Apply transform" on export: skinned vertex data x' = M x, inverse binds
 * IBM' = IBM M^-1, joints unchanged (the scene is the same, the bind space
 * another one). */
void sks_variant_transform_data(sks_model *m, sks_quat q, float s, sks_vec3 t);

#endif
