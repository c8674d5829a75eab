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
/* An export between left- and right-handed axes: the skinned parts' data
 * mirrored (coordinate `axis` negated), then turned by q, scaled by s and
 * offset by t: positions, normals, tangents (w negated: the handedness of
 * the tangent frame flips), morph deltas; each triangle's winding reversed
 * (its faces keep facing out); inverse binds IBM' = IBM M^-1 (the scene is
 * unchanged, the bind space is the mirror image). */
void sks_variant_mirror_data(sks_model *m, int axis, sks_quat q, float s, sks_vec3 t);
/* The same surface re-welded and re-ordered, as an exporter that splits
 * seams per face corner writes it: every skinned part's vertices shuffled
 * (seeded), every third one duplicated, each triangle corner on either
 * copy. Per-vertex attributes (normals, UVs, tangents, morph deltas) follow. */
void sks_variant_reweld(sks_model *m, unsigned seed);

/* What a bake of one clip (NULL: the first) printed and measured, in the
 * tests' table: label | alignment | quality | mean / worst %D. */
typedef struct sks_variant_numbers {
  double q, mean, worst, scale, angle;
  int ok, same_surface, subset;
  size_t finalists, finalist_registration, finalist_chosen; /* sks_bake_alignment's */
  double trial_quality[SKS_BAKE_FINALISTS];
  double dist;                 /* the alignment's mean distance (residual_pct), % D */
  int over_default_limit;
  int mirrored;                /* the alignment is a mirror (sks_bake_alignment.mirrored) */
  double labels, heads;        /* what the joints' names say (sks_bake_alignment.label_agreement,
                                  head_agreement, */
  double up;                   /* up_deg) */
  double feet;                 /* which way its feet point (sks_bake_alignment.facing_deg) */
  double similarity_pct;       /* the similarity alone's distance (similarity_residual_pct), % D */
  int registered;              /* a registration pose was kept (sks_bake_alignment.registered) */
  size_t limb_rematched;       /* sks_bake_alignment.limb_rematched */
  int finalist_registered[SKS_BAKE_FINALISTS];
} sks_variant_numbers;
sks_variant_numbers sks_variant_bake(const char *label, const sks_model *s, const sks_model *t, const char *clip);
/* A bake's stages' numbers to 9 digits, one line (similarity and
 * registered distances, limbs re-matched, the finalists' trial qualities
 * and which was kept): where two re-exports part (bench_invariance --detail). */
void sks_variant_print_stages(const sks_variant_numbers *n);
/* The invariance the real-files issue asks for: quality within 0.05 point,
 * mean and worst %D within 2 % of the original pair's; and the head's and
 * the feet's directions (up_deg, facing_deg) within 1 deg, unknown on both
 * or neither. */
void sks_variant_same(const char *label, sks_variant_numbers a, sks_variant_numbers b);
/* The pair s -> t baked again with one side's data (side 0: the source's, 1:
 * the target's) turned `deg` degrees about (ax, ay, az), scaled by `scale`
 * and offset by (1, 2, 3) (sks_variant_transform_data), and asserted the same
 * as `base` (sks_variant_same). Returns that bake's numbers. */
sks_variant_numbers sks_variant_same_turned(const char *label, const sks_model *s, const sks_model *t, int side, double ax,
                                            double ay, double az, double deg, float scale, sks_variant_numbers base);

#endif
