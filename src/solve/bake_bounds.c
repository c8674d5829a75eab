/* Frame-count bounds of a bake (bake_bounds.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "solve/bake_bounds.h"
#include "skinsolve/clip.h"

static const char *file_name(const sks_model *m) {
  if (!m || !m->source_path) return "source";
  const char *s = strrchr(m->source_path, '/');
  return s ? s + 1 : m->source_path;
}

sks_result sks_bake_key_times(const sks_clip *clip, float **times, size_t *count, sks_error *err) {
  if (!clip || !times || !count) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_bake_key_times: NULL argument");
  *times = NULL;
  *count = 0;
  /* sks_clip_key_times over a view whose tracks are the joint tracks and,
   * for their times, the weights tracks */
  size_t n = clip->track_count + clip->morph_track_count;
  sks_track *tracks = calloc(n ? n : 1, sizeof *tracks);
  if (!tracks)
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "clip '%s': out of memory collecting key times",
                         clip->name ? clip->name : "");
  if (clip->track_count) memcpy(tracks, clip->tracks, clip->track_count * sizeof *tracks);
  for (size_t i = 0; i < clip->morph_track_count; ++i) {
    const sks_morph_track *mt = &clip->morph_tracks[i];
    sks_track *t = &tracks[clip->track_count + i];
    t->joint = -1;
    t->times = mt->times;
    t->key_count = mt->weight_count ? mt->key_count : 0;
  }
  sks_clip view = *clip;
  view.tracks = tracks;
  view.track_count = n;
  sks_result r = sks_clip_key_times(&view, times, count, err);
  free(tracks);
  return r;
}

sks_result sks_bake_frame_count(const sks_model *source, const sks_clip *clip, float fps,
                                size_t target_joints, size_t kept_vertices, size_t *frames,
                                sks_error *err) {
  if (frames) *frames = 0;
  if (!clip || !frames) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_bake_frame_count: NULL argument");
  const char *name = clip->name ? clip->name : "";
  double n;
  if (fps > 0) {
    double d = (double)clip->duration;
    if (!isfinite(d) || d < 0)
      return sks_error_set(err, SKS_ERR_INVALID, "%s: clip '%s': duration %g s is not a finite time",
                           file_name(source), name, d);
    /* as bake.c's frame_times: floor(d * fps) + 1 frames, plus the end */
    n = floor(d * (double)fps + 1e-4) + 2;
    if (!(n <= (double)SKS_BAKE_MAX_FRAMES))
      return sks_error_set(err, SKS_ERR_INVALID,
                           "%s: clip '%s': %g s at %g fps is %.3g frames, more than the limit of %u "
                           "(lower --fps or bake fewer clips)",
                           file_name(source), name, d, (double)fps, n, SKS_BAKE_MAX_FRAMES);
  } else {
    n = 1;
    for (size_t t = 0; t < clip->track_count; ++t) n += (double)clip->tracks[t].key_count;
    for (size_t t = 0; t < clip->morph_track_count; ++t)
      if (clip->morph_tracks[t].weight_count) n += (double)clip->morph_tracks[t].key_count;
    if (!(n <= (double)SKS_BAKE_MAX_FRAMES))
      return sks_error_set(err, SKS_ERR_INVALID, "%s: clip '%s': %.3g key times, more than the limit of %u frames",
                           file_name(source), name, n, SKS_BAKE_MAX_FRAMES);
    /* the frames the bake will have: the union of the tracks' key times (a
     * clip of 60 tracks x 400 keys at the same times is 400 frames, not
     * 24,000), joint and weights tracks, as bake.c's frame_times */
    float *times = NULL;
    size_t count = 0;
    sks_result r = sks_bake_key_times(clip, &times, &count, err);
    free(times);
    if (r != SKS_OK) return r;
    n = count ? (double)count : 1.0;
  }
  double elements = n * ((double)target_joints + (double)kept_vertices);
  if (!(elements <= (double)SKS_BAKE_MAX_FRAME_ELEMENTS))
    return sks_error_set(err, SKS_ERR_INVALID,
                         "%s: clip '%s': %.3g frames x (%zu joints + %zu kept vertices) = %.3g, more than "
                         "the limit of %.3g (lower --fps, or leave out --report)",
                         file_name(source), name, n, target_joints, kept_vertices, elements,
                         (double)SKS_BAKE_MAX_FRAME_ELEMENTS);
  *frames = (size_t)n;
  return SKS_OK;
}

sks_result sks_bake_total_bounds(const sks_model *source, size_t clip_count, double total_frames,
                                 size_t target_joints, size_t kept_vertices, size_t vertices, int modes,
                                 sks_error *err) {
  if (!(total_frames <= (double)SKS_BAKE_MAX_FRAMES))
    return sks_error_set(err, SKS_ERR_INVALID,
                         "%s: %zu clips: %.3g frames in all, more than the limit of %u for one bake "
                         "(bake fewer clips with --clip, or lower --fps)",
                         file_name(source), clip_count, total_frames, SKS_BAKE_MAX_FRAMES);
  double elements = total_frames * ((double)target_joints + (double)kept_vertices);
  if (!(elements <= (double)SKS_BAKE_MAX_FRAME_ELEMENTS))
    return sks_error_set(err, SKS_ERR_INVALID,
                         "%s: %zu clips: %.3g frames in all x (%zu joints + %zu kept vertices) = %.3g, more "
                         "than the limit of %.3g for one bake (bake fewer clips, lower --fps, or leave out "
                         "--report)",
                         file_name(source), clip_count, total_frames, target_joints, kept_vertices, elements,
                         (double)SKS_BAKE_MAX_FRAME_ELEMENTS);
  double work = total_frames * (double)vertices * (double)(modes > 1 ? modes : 1);
  if (!(work <= (double)SKS_BAKE_MAX_VERTEX_FRAMES))
    return sks_error_set(err, SKS_ERR_INVALID,
                         "%s: %zu clip%s: %.3g frames in all x %zu vertices (target + source)%s = %.3g vertex-frames, "
                         "more than the limit of %.3g for one bake (~15 s of CPU; lower --fps, or bake fewer clips "
                         "with --clip)",
                         file_name(source), clip_count, clip_count == 1 ? "" : "s", total_frames, vertices,
                         modes > 1 ? " x 2 modes" : "", work, (double)SKS_BAKE_MAX_VERTEX_FRAMES);
  return SKS_OK;
}
