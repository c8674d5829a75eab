/* skinsolve — keyframe clips. */
#ifndef SKINSOLVE_CLIP_H
#define SKINSOLVE_CLIP_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sks_interpolation {
  SKS_INTERP_LINEAR = 0, /* translation/scale lerp; rotation slerp (or nlerp, see sampling job) */
  SKS_INTERP_STEP,
  SKS_INTERP_CUBICSPLINE /* glTF Hermite: values hold in-tangent, value, out-tangent per key */
} sks_interpolation;

typedef enum sks_track_path {
  SKS_PATH_TRANSLATION = 0, /* 3 floats */
  SKS_PATH_ROTATION,        /* 4 floats, x y z w */
  SKS_PATH_SCALE            /* 3 floats */
} sks_track_path;

typedef struct sks_track {
  int32_t joint;                 /* skeleton joint */
  sks_track_path path;
  sks_interpolation interpolation;
  size_t key_count;
  float *times;                  /* key_count seconds, ascending */
  float *values;                 /* key_count * comps, or 3 * key_count * comps for CUBICSPLINE */
} sks_track;

/* Morph target weights over time (glTF's "weights" channel, Assimp's
 * aiMeshMorphAnim): every mesh part hosted by skeleton joint `node` with
 * morph targets takes weight i from here for its target i (targets past
 * weight_count keep their default weight). */
typedef struct sks_morph_track {
  int32_t node;                  /* skeleton joint holding the mesh (sks_mesh_part.node) */
  sks_interpolation interpolation;
  size_t weight_count;           /* weights per key: the mesh's morph target count */
  size_t key_count;
  float *times;                  /* key_count seconds, ascending */
  float *values;                 /* key_count * weight_count, or 3 * key_count * weight_count
                                    for CUBICSPLINE (in-tangents, values, out-tangents per key) */
} sks_morph_track;

/* At most this many keys x weights in one morph track (a bound like every
 * other array the loaders read). */
#define SKS_MAX_MORPH_TRACK_VALUES (64u * 1024u * 1024u)

typedef struct sks_clip {
  char *name;
  float duration;                /* seconds (max key time of every track; >= 0) */
  size_t track_count;
  sks_track *tracks;
  size_t morph_track_count;      /* morph weight tracks, at most one per node */
  sks_morph_track *morph_tracks;
} sks_clip;

void sks_clip_free(sks_clip *clip);

/* Index of the clip with this name, or -1. */
int32_t sks_clip_find(const sks_clip *clips, size_t clip_count, const char *name);

/* The clip a user means by `name`: the clip of exactly that name, else the
 * one clip whose name holds it as a word (ASCII case-insensitive, no letter
 * or digit either side): "Walk" finds "root|Walk_root", the name Blender's
 * FBX export gives the glTF clip Walk of the armature "root". When several
 * hold it ("idle" in "idle_root.001", "fight_idle_root.001"), the one whose
 * name is only the prefix and suffix every clip name shares around it
 * ("idle_root.001"), when exactly one is. -1 when none or several match;
 * *matches (may be NULL) says how many did. */
int32_t sks_clip_find_loose(const sks_clip *clips, size_t clip_count, const char *name, size_t *matches);

/* Floats in a morph track's values: key_count * weight_count (x 3 for
 * CUBICSPLINE). */
size_t sks_morph_track_value_count(const sks_morph_track *track);

/* Number of components of a path (3 or 4). */
uint32_t sks_track_components(sks_track_path path);

/* Sorted union of the key times of a clip's joint tracks (morph weights
 * tracks are left out; the bake's default frame times add theirs:
 * src/solve/bake_bounds.h, sks_bake_key_times).
 * Allocates *times (caller frees with free()). */
sks_result sks_clip_key_times(const sks_clip *clip, float **times, size_t *count, sks_error *err);

/* Makes a clip's key times what glTF allows (time[0] >= 0, strictly
 * increasing): a clip whose keys start before 0 (LightWave's pre-behaviour
 * keys) moves to start at 0, *shift the seconds added (0: none); a key at
 * or before its track's previous key (two keys at one time: a step; or
 * merged by the move's rounding) moves one float step after it, *bumped
 * counts them. The duration follows the move. The importers call it and
 * warn: such clips loaded and baked, and then could not be written. */
void sks_clip_times_for_gltf(sks_clip *clip, double *shift, size_t *bumped);


/* ---- clips from another file (src/clip/retarget.c) ----------------------- */

struct sks_model;

typedef struct sks_clip_match_options {
  int copy_as_is;          /* 1: copy matched tracks unchanged (no rest-pose retarget) */
  float rest_tolerance;    /* a local rest "differs" above this (radians / model units /
                              scale ratio); 0 = 1e-4 */
} sks_clip_match_options;

/* What sks_clips_from_model did. Names are copies (the report owns them). */
typedef struct sks_clip_match_report {
  size_t rig_joint_count, anim_joint_count;
  size_t matched_count;          /* joints with the same name on both sides */
  size_t rig_only_count;         /* rig joints no anim joint is named like: keep their rest */
  char **rig_only;
  size_t anim_only_count;        /* anim joints no rig joint is named like */
  char **anim_only;
  size_t anim_only_keyed_count;  /* of those, joints the clips key: their tracks are dropped */
  size_t rest_differs_count;     /* matched joints whose local rest differs (rotation,
                                    translation or scale) */
  char **rest_differs;
  size_t pose_only_count;        /* of those: another pose on the same joint frames (the
                                    children's offsets agree): rotation keys copied */
  size_t frames_differ_count;    /* matched joints whose joint frame differs from the anim
                                    file's (their keys were retargeted; see below) */
  char **frames_differ;
  double max_rest_angle_deg;     /* largest local rest rotation difference over matched joints */
  double max_rest_offset;        /* largest local rest translation difference (model units) */
  size_t tracks_kept, tracks_dropped;
  int copied_as_is;              /* options->copy_as_is was set */
} sks_clip_match_report;

void sks_clip_match_report_free(sks_clip_match_report *report);

/* Takes every clip of `anim` (typically an animation-only file: FBX / BVH /
 * Collada / glTF) and re-expresses it on `rig`'s skeleton by joint name.
 * A track of anim joint a goes to the rig joint of the same name; tracks of
 * joints the rig lacks are dropped; rig joints the clip does not key keep
 * their rest.
 *
 * Where the rest poses differ, the local-rest difference is used. Each
 * matched joint j gets a frame map F_j (rig joint frame = anim joint frame *
 * F_j), chosen parents first between two readings of the difference, by
 * which one makes the children's rest offsets agree (t_c,rig ~ F_j^-1 t_c,anim,
 * smallest angle; a joint without matched children follows its parent):
 *   same frames, other pose:  F_j = I
 *   other frames, same pose:  F_j = qa0^-1 * F_p * qr0  (the local-rest difference)
 * (qa0/ta0/sa0: anim local rest, qr0/tr0/sr0: rig local rest, F_p: the
 * parent's map, or the parents' global-rest rotation difference when the
 * anim parent has no match). Keys map as
 *   rotation    q' = F_p^-1 * q * F_j
 *   translation t' = tr0 + F_p^-1 (t - ta0)
 *   scale       s' = sr0 * s / sa0 (per axis)
 * so the rig joint's frame follows the anim joint's: its global rotation is
 * the anim joint's times F_j at every time. Equal rests give an exact copy.
 * Morph tracks go to the rig joint named like their mesh node, unchanged
 * (the weights apply to the rig's parts on that node).
 * Each key maps on its own (the maps commute with slerp / lerp), so key
 * times are unchanged.
 * Allocates *out (count *count; free each with sks_clip_free, then free()).
 * report (optional) is filled even when no joint matches (an error); free it
 * with sks_clip_match_report_free. */
sks_result sks_clips_from_model(const struct sks_model *rig, const struct sks_model *anim,
                                const sks_clip_match_options *options, sks_clip **out,
                                size_t *count, sks_clip_match_report *report, sks_error *err);

#ifdef __cplusplus
}
#endif
#endif
