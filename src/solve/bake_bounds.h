/* Bounds on the work a bake does for one clip, checked before anything is
 * allocated or solved (a 2 KB glTF whose clip lasts 212,500 s asked for
 * 8.3 GB at --fps 10000; a 3e38 s clip overflowed the float -> size_t
 * frame count). README "Untrusted input" documents the limits. */
#ifndef SKS_BAKE_BOUNDS_H
#define SKS_BAKE_BOUNDS_H

#include "skinsolve/rig.h"

/* At most this many frames per clip, and in all clips of one bake (55 h at
 * 5 fps, 9 h at 30 fps). */
#define SKS_BAKE_MAX_FRAMES 1000000u
/* At most this many frames x (target joints + kept surface vertices) per
 * clip and in all clips of one bake: each element costs 28-40 bytes, so
 * ~2 GB at the limit. */
#define SKS_BAKE_MAX_FRAME_ELEMENTS 50000000ull

/* The bake's frame times without --fps: the sorted union of the key times
 * of the clip's joint tracks AND its morph weights tracks (a weights key
 * between two joint keys, or a clip that animates only weights, gets its own
 * frame, so the written clip and the metrics see the morph's timing); keys
 * closer than 1e-6 s are one frame (as sks_clip_key_times). No key at all:
 * *count = 0. Allocates *times (free()). */
sks_result sks_bake_key_times(const sks_clip *clip, float **times, size_t *count, sks_error *err);

/* The number of frames the bake of clip at fps (0 = sks_bake_key_times,
 * bounded here by the total key count, joint and weights tracks) will have, checked against
 * both limits in double before any conversion; kept_vertices is the target
 * vertex count when per-frame surfaces are kept (report), else 0. Error
 * (SKS_ERR_INVALID) names the source file, the clip and the limit. */
sks_result sks_bake_frame_count(const sks_model *source, const sks_clip *clip, float fps,
                                size_t target_joints, size_t kept_vertices, size_t *frames,
                                sks_error *err);

/* At most this many vertex-frames in one bake: frames (all clips) x
 * (target + source vertices) x modes (2 for SKS_SOLVE_BOTH). Each frame
 * skins the source, solves and measures the target: ~1.6e7 vertex-frames
 * per CPU second here (bench: a 11,600-vertex ribbon), so the limit is
 * ~15 s of CPU, and no small file reaches 60 s at any --fps (10,002 frames
 * x 11,600 vertices at --fps 10000 is refused). */
#define SKS_BAKE_MAX_VERTEX_FRAMES 250000000ull

/* The same limits over ALL the clips of one bake (frames add up in time, and
 * with kept surfaces in memory: 2,000 clips of 10,002 frames each passed
 * the per-clip limits and ran for minutes), and SKS_BAKE_MAX_VERTEX_FRAMES
 * with vertices = target + source vertices, modes = 1 or 2. total_frames =
 * the sum of the clips' frame counts. Error (SKS_ERR_INVALID) names the
 * source file. */
sks_result sks_bake_total_bounds(const sks_model *source, size_t clip_count, double total_frames,
                                 size_t target_joints, size_t kept_vertices, size_t vertices, int modes,
                                 sks_error *err);

#endif
