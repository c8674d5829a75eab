/* skinsolve — runtime pose jobs (ozz-animation style): a struct of inputs and
 * outputs (pointers + counts), a validate function stating every
 * precondition, and a run function that validates and never allocates. */
#ifndef SKINSOLVE_POSE_H
#define SKINSOLVE_POSE_H

#include "common.h"
#include "clip.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sample a clip at `time` into local joint transforms.
 * Joints without a track for a path keep `rest` (the skeleton's rest local).
 * time is clamped to [0, duration], or wrapped when loop != 0. */
typedef struct sks_sampling_job {
  const sks_clip *clip;
  const sks_transform *rest;   /* joint_count rest locals (defaults) */
  size_t joint_count;
  float time;
  int loop;
  int nlerp;                   /* 1: rotations LINEAR by nlerp instead of slerp */
  sks_transform *output;       /* joint_count */
} sks_sampling_job;
int sks_sampling_job_validate(const sks_sampling_job *job);
int sks_sampling_job_run(const sks_sampling_job *job);

/* Morph target weights of the parts a node holds, at `time` of a clip:
 * output[i] = the clip's morph track on `node` sampled at time (interpolated
 * as glTF defines for "weights": LINEAR lerp, STEP, CUBICSPLINE Hermite),
 * or defaults[i] where the clip has no track on the node or the track has
 * fewer weights. Time is clamped or wrapped as sks_sampling_job does. */
typedef struct sks_morph_sampling_job {
  const sks_clip *clip;        /* NULL: the defaults */
  int32_t node;
  const float *defaults;       /* weight_count, or NULL = 0 */
  size_t weight_count;
  float time;
  int loop;
  float *output;               /* weight_count */
  int sampled;                 /* out: 1 when a track of the clip gave the weights */
} sks_morph_sampling_job;
int sks_morph_sampling_job_validate(const sks_morph_sampling_job *job);
int sks_morph_sampling_job_run(sks_morph_sampling_job *job);

/* Applies a part's morph targets: positions_out = part positions + sum_i
 * weights[i] * position_deltas_i (normals likewise when normals_out is set
 * and the part has normals; not renormalised). Targets whose weight is 0 or
 * that lack deltas cost nothing. Never allocates. */
typedef struct sks_morph_job {
  const sks_mesh_part *part;
  const float *weights;        /* part->morph_target_count */
  float *positions_out;        /* 3 * vertex_count */
  float *normals_out;          /* 3 * vertex_count, or NULL */
} sks_morph_job;
int sks_morph_job_validate(const sks_morph_job *job);
int sks_morph_job_run(const sks_morph_job *job);

/* output = lerp(a, b, weight) per joint (rotations by shortest-path nlerp). */
typedef struct sks_blending_job {
  const sks_transform *a;
  const sks_transform *b;
  float weight;                /* 0 = a, 1 = b */
  size_t joint_count;
  sks_transform *output;
} sks_blending_job;
int sks_blending_job_validate(const sks_blending_job *job);
int sks_blending_job_run(const sks_blending_job *job);

/* Local -> model: one forward loop over parents (parent-first order). */
typedef struct sks_local_to_model_job {
  const int32_t *parents;      /* joint_count */
  const sks_transform *locals; /* joint_count */
  size_t joint_count;
  const sks_mat4 *root;        /* optional matrix applied above roots, NULL = identity */
  sks_mat4 *models;            /* joint_count */
} sks_local_to_model_job;
int sks_local_to_model_job_validate(const sks_local_to_model_job *job);
int sks_local_to_model_job_run(const sks_local_to_model_job *job);

/* Skin palette: palette[i] = models[skin->joints[i]] * skin->inverse_bind[i]. */
typedef struct sks_palette_job {
  const sks_skin *skin;
  const sks_mat4 *models;      /* skeleton joint_count model matrices */
  size_t model_count;
  sks_mat4 *palette;           /* skin->joint_count */
} sks_palette_job;
int sks_palette_job_validate(const sks_palette_job *job);
int sks_palette_job_run(const sks_palette_job *job);

/* Local transforms for the bind pose implied by inverse bind matrices: skin
 * joints get model = inverse(inverse_bind), the others keep their rest local,
 * then locals are recovered parent-first. With several skins (skin_count > 1,
 * `skin` pointing at the first), a joint listed by more than one takes the
 * FIRST skin's inverse bind. On return scratch_models holds the bind-pose
 * model matrices of every joint. */
typedef struct sks_bind_pose_job {
  const sks_skeleton *skeleton;
  const sks_skin *skin;        /* first skin */
  sks_mat4 *scratch_models;    /* joint_count; out: bind-pose model matrices */
  sks_transform *output;       /* joint_count locals */
  size_t skin_count;           /* skins starting at `skin`; 0 = 1 */
} sks_bind_pose_job;
int sks_bind_pose_job_validate(const sks_bind_pose_job *job);
int sks_bind_pose_job_run(const sks_bind_pose_job *job);

/* Two-bone IK (e.g. hip-knee-ankle): rotates the two parent joints in model
 * space so the end joint reaches target (or the nearest reachable point),
 * bending in the plane containing pole. Updates locals of start and mid. */
typedef struct sks_two_bone_ik_job {
  const int32_t *parents;
  sks_transform *locals;       /* joint_count, modified */
  size_t joint_count;
  int32_t start, mid, end;     /* chain: start -> mid -> end */
  sks_vec3 target;             /* model space */
  sks_vec3 pole;               /* model space, bend direction hint */
  sks_mat4 *scratch_models;    /* joint_count */
  int reached;                 /* out: 1 if end reached target within 1e-4 */
} sks_two_bone_ik_job;
int sks_two_bone_ik_job_validate(const sks_two_bone_ik_job *job);
int sks_two_bone_ik_job_run(sks_two_bone_ik_job *job);

#ifdef __cplusplus
}
#endif
#endif
