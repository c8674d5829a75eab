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

typedef struct sks_clip {
  char *name;
  float duration;                /* seconds (max key time; >= 0) */
  size_t track_count;
  sks_track *tracks;
} sks_clip;

void sks_clip_free(sks_clip *clip);

/* Index of the clip with this name, or -1. */
int32_t sks_clip_find(const sks_clip *clips, size_t clip_count, const char *name);

/* Number of components of a path (3 or 4). */
uint32_t sks_track_components(sks_track_path path);

/* Sorted union of all key times of a clip (the bake's default frame times).
 * Allocates *times (caller frees with free()). */
sks_result sks_clip_key_times(const sks_clip *clip, float **times, size_t *count, sks_error *err);

#ifdef __cplusplus
}
#endif
#endif
