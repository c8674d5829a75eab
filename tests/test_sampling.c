/* Clip sampling: exact keys, LINEAR (slerp / nlerp), STEP, CUBICSPLINE
 * (glTF Hermite), loop and clamp, rest defaults, blending, key-time union. */
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "math/sks_math.h"

#define PI 3.14159265358979323846

static sks_transform rest3[3];

static void init_rest(void) {
  for (int i = 0; i < 3; ++i) {
    rest3[i] = sks_transform_identity();
    rest3[i].translation = sks_v3((float)i, 10.0f + (float)i, 0.5f);
    rest3[i].scale = sks_v3(2, 2, 2);
  }
}

static int sample(const sks_clip *clip, float t, int loop, int nlerp, sks_transform out[3]) {
  sks_sampling_job job = {clip, rest3, 3, t, loop, nlerp, out};
  return sks_sampling_job_run(&job);
}

static double z_angle(sks_quat q) { return 2.0 * atan2((double)q.z, (double)q.w); }

static void linear_translation(void) {
  float times[3] = {0.0f, 1.0f, 2.0f};
  float values[9] = {0.1f, 0.2f, 0.3f, 1.7f, -2.9f, 3.3f, 5.0f, 5.0f, 5.0f};
  sks_track tr = {1, SKS_PATH_TRANSLATION, SKS_INTERP_LINEAR, 3, times, values};
  sks_clip clip = {"t", 2.0f, 1, &tr, 0, NULL};
  sks_transform out[3];
  /* A key time returns that key exactly. */
  CHECK(sample(&clip, 1.0f, 0, 0, out));
  CHECK(out[1].translation.x == 1.7f && out[1].translation.y == -2.9f && out[1].translation.z == 3.3f);
  CHECK(sample(&clip, 0.0f, 0, 0, out));
  CHECK(out[1].translation.x == 0.1f && out[1].translation.y == 0.2f && out[1].translation.z == 0.3f);
  CHECK(sample(&clip, 2.0f, 0, 0, out));
  CHECK(out[1].translation.x == 5.0f);
  /* Halfway between keys 1 and 2. */
  CHECK(sample(&clip, 1.5f, 0, 0, out));
  CHECK_NEAR(out[1].translation.x, 3.35, 1e-6);
  CHECK_NEAR(out[1].translation.y, 1.05, 1e-6);
  CHECK_NEAR(out[1].translation.z, 4.15, 1e-6);
  /* Joints and paths without a track keep rest. */
  CHECK(out[0].translation.x == 0.0f && out[0].translation.y == 10.0f);
  CHECK(out[2].translation.x == 2.0f && out[2].scale.x == 2.0f);
  CHECK(out[1].scale.y == 2.0f && out[1].rotation.w == 1.0f);
  /* Clamp: before 0 -> first key, after duration -> last key. */
  CHECK(sample(&clip, -3.0f, 0, 0, out));
  CHECK(out[1].translation.x == 0.1f);
  CHECK(sample(&clip, 7.5f, 0, 0, out));
  CHECK(out[1].translation.x == 5.0f);
  /* Loop: 2.5 wraps to 0.5, -0.5 wraps to 1.5. */
  CHECK(sample(&clip, 2.5f, 1, 0, out));
  CHECK_NEAR(out[1].translation.x, 0.9, 1e-6);
  CHECK(sample(&clip, -0.5f, 1, 0, out));
  CHECK_NEAR(out[1].translation.x, 3.35, 1e-6);
  CHECK(sample(&clip, 5.0f, 1, 0, out)); /* 5 mod 2 = 1: exactly key 1 */
  CHECK(out[1].translation.x == 1.7f);
}

static void linear_rotation(void) {
  const float s45 = (float)sin(PI / 4), c45 = (float)cos(PI / 4);
  float times[2] = {0.0f, 1.0f};
  float values[8] = {0, 0, 0, 1, 0, 0, s45, c45}; /* identity -> 90 deg about Z */
  sks_track tr = {0, SKS_PATH_ROTATION, SKS_INTERP_LINEAR, 2, times, values};
  sks_clip clip = {"r", 1.0f, 1, &tr, 0, NULL};
  sks_transform out[3];
  CHECK(sample(&clip, 0.5f, 0, 0, out));
  CHECK_NEAR(z_angle(out[0].rotation), PI / 4, 1e-6); /* slerp midpoint: 45 deg */
  CHECK_NEAR(out[0].rotation.z, sin(PI / 8), 1e-6);
  CHECK_NEAR(out[0].rotation.w, cos(PI / 8), 1e-6);
  CHECK(sample(&clip, 0.25f, 0, 0, out));
  CHECK_NEAR(z_angle(out[0].rotation), PI / 8, 1e-6); /* slerp: constant angular speed */
  CHECK(sample(&clip, 0.25f, 0, 1, out));
  /* nlerp: normalize(0.75 q0 + 0.25 q1), a slightly smaller angle */
  double nl = 2.0 * atan2(0.25 * sin(PI / 4), 0.75 + 0.25 * cos(PI / 4));
  CHECK_NEAR(z_angle(out[0].rotation), nl, 1e-6);
  CHECK(fabs(nl - PI / 8) > 1e-2);
  CHECK_NEAR(sks_q_dot(out[0].rotation, out[0].rotation), 1.0, 1e-6);
  /* Shortest path: key 1 stored as -q still interpolates through 45 deg. */
  float neg[8] = {0, 0, 0, 1, 0, 0, -s45, -c45};
  tr.values = neg;
  CHECK(sample(&clip, 0.5f, 0, 0, out));
  CHECK_NEAR(fabs(z_angle(out[0].rotation)), PI / 4, 1e-6);
}

static void step(void) {
  float times[2] = {0.0f, 1.0f};
  float values[6] = {1, 1, 1, 3, 3, 3};
  sks_track tr = {2, SKS_PATH_SCALE, SKS_INTERP_STEP, 2, times, values};
  sks_clip clip = {"s", 1.0f, 1, &tr, 0, NULL};
  sks_transform out[3];
  CHECK(sample(&clip, 0.999f, 0, 0, out));
  CHECK(out[2].scale.x == 1.0f && out[2].scale.z == 1.0f);
  CHECK(sample(&clip, 1.0f, 0, 0, out));
  CHECK(out[2].scale.x == 3.0f);
  CHECK(sample(&clip, 0.0f, 0, 0, out));
  CHECK(out[2].scale.y == 1.0f);
}

static void cubic(void) {
  /* Translation x: keys t=0 (v=0, out-tangent 1) and t=2 (in-tangent 0.5, v=1).
   * At t=1 (s=0.5, td=2): h00=0.5, h10=0.125*2, h01=0.5, h11=-0.125*2
   *   p = 0.25*1 + 0.5*1 - 0.25*0.5 = 0.625. */
  float times[2] = {0.0f, 2.0f};
  float values[18] = {
      9, 9, 9, 0, 4, 0, 1, 0, 0,   /* key 0: in-tangent (unused), value, out-tangent */
      0.5f, 0, 0, 1, 4, 0, 7, 7, 7 /* key 1: in-tangent, value, out-tangent (unused) */
  };
  sks_track tr = {1, SKS_PATH_TRANSLATION, SKS_INTERP_CUBICSPLINE, 2, times, values};
  sks_clip clip = {"c", 2.0f, 1, &tr, 0, NULL};
  sks_transform out[3];
  CHECK(sample(&clip, 0.0f, 0, 0, out));
  CHECK(out[1].translation.x == 0.0f && out[1].translation.y == 4.0f);
  CHECK(sample(&clip, 2.0f, 0, 0, out));
  CHECK(out[1].translation.x == 1.0f && out[1].translation.y == 4.0f);
  CHECK(sample(&clip, 1.0f, 0, 0, out));
  CHECK_NEAR(out[1].translation.x, 0.625, 1e-6);
  CHECK_NEAR(out[1].translation.y, 4.0, 1e-6); /* zero tangents, equal values */
  /* At s=0.25: h00=27/32, h10=9/64*2, h01=5/32, h11=-3/64*2 -> 9/32 + 5/32 - 3/64 */
  CHECK(sample(&clip, 0.5f, 0, 0, out));
  CHECK_NEAR(out[1].translation.x, 9.0 / 32 + 5.0 / 32 - 3.0 / 64, 1e-6);

  /* Rotation spline result is normalised. */
  const float s = (float)sin(PI / 4), c = (float)cos(PI / 4);
  float rv[24] = {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0.3f, 0,
                  0, 0, 0.3f, 0, 0, 0, s, c, 0, 0, 0, 0};
  sks_track rt = {0, SKS_PATH_ROTATION, SKS_INTERP_CUBICSPLINE, 2, times, rv};
  sks_clip rclip = {"cr", 2.0f, 1, &rt, 0, NULL};
  CHECK(sample(&rclip, 0.7f, 0, 0, out));
  CHECK_NEAR(sks_q_dot(out[0].rotation, out[0].rotation), 1.0, 1e-6);
  CHECK(sample(&rclip, 2.0f, 0, 0, out));
  CHECK(out[0].rotation.z == s && out[0].rotation.w == c);
}

static void validation(void) {
  float times[1] = {0};
  float values[3] = {1, 2, 3};
  sks_track tr = {3, SKS_PATH_TRANSLATION, SKS_INTERP_LINEAR, 1, times, values}; /* joint 3 of 3 */
  sks_clip clip = {"bad", 0.0f, 1, &tr, 0, NULL};
  sks_transform out[3];
  sks_sampling_job job = {&clip, rest3, 3, 0.0f, 0, 0, out};
  CHECK(!sks_sampling_job_validate(&job));
  CHECK(!sks_sampling_job_run(&job));
  tr.joint = 2;
  CHECK(sks_sampling_job_validate(&job));
  job.output = NULL;
  CHECK(!sks_sampling_job_validate(&job));
  job.output = out;
  job.time = NAN;
  CHECK(!sks_sampling_job_validate(&job));
  /* A single key holds at every time. */
  job.time = 0.3f;
  CHECK(sks_sampling_job_run(&job));
  CHECK(out[2].translation.x == 1.0f && out[2].translation.z == 3.0f);
}

static void blending(void) {
  sks_transform a[2], b[2], o[2];
  a[0] = sks_transform_identity(); b[0] = sks_transform_identity();
  b[0].translation = sks_v3(2, 0, -4);
  b[0].scale = sks_v3(3, 1, 1);
  b[0].rotation = sks_q(0, 0, 0, -1); /* same rotation, other hemisphere */
  a[1] = sks_transform_identity(); b[1] = sks_transform_identity();
  b[1].rotation = sks_q_from_axis_angle(sks_v3(0, 1, 0), (float)(PI / 2));
  sks_blending_job job = {a, b, 0.5f, 2, o};
  CHECK(sks_blending_job_run(&job));
  CHECK_NEAR(o[0].translation.x, 1.0, 1e-6);
  CHECK_NEAR(o[0].translation.z, -2.0, 1e-6);
  CHECK_NEAR(o[0].scale.x, 2.0, 1e-6);
  CHECK_NEAR(fabs(o[0].rotation.w), 1.0, 1e-6); /* shortest path: stays identity */
  CHECK_NEAR(2.0 * atan2(o[1].rotation.y, o[1].rotation.w), PI / 4, 1e-6);
  job.weight = 1.0f;
  CHECK(sks_blending_job_run(&job));
  CHECK_NEAR(o[1].rotation.y, b[1].rotation.y, 1e-6);
  job.output = NULL;
  CHECK(!sks_blending_job_validate(&job));
}

static void key_times(void) {
  float t0[3] = {0.0f, 0.5f, 1.0f}, t1[3] = {0.5000001f, 1.0f, 2.0f}, t2[2] = {0.25f, 0.0f};
  float v[12] = {0};
  sks_track tr[3] = {{0, SKS_PATH_TRANSLATION, SKS_INTERP_LINEAR, 3, t0, v},
                     {1, SKS_PATH_SCALE, SKS_INTERP_LINEAR, 3, t1, v},
                     {2, SKS_PATH_ROTATION, SKS_INTERP_STEP, 2, t2, v}};
  sks_clip clip = {"k", 2.0f, 3, tr, 0, NULL};
  float *times = NULL;
  size_t n = 0;
  sks_error err = {0};
  CHECK_OK(sks_clip_key_times(&clip, &times, &n, &err), &err);
  CHECK(n == 5);
  if (n == 5) {
    CHECK(times[0] == 0.0f && times[1] == 0.25f && times[2] == 0.5f && times[3] == 1.0f && times[4] == 2.0f);
  }
  free(times);
  sks_clip empty = {"e", 0.0f, 0, NULL, 0, NULL};
  CHECK_OK(sks_clip_key_times(&empty, &times, &n, &err), &err);
  CHECK(n == 0 && times == NULL);
}

/* sks_clip_times_for_gltf: a clip keyed before 0 moves to start at 0, keys
 * at one time move one float step apart, the duration follows; a
 * non-finite key time is left for the writer to refuse, never made valid. */
static void times_for_gltf(void) {
  float v[12] = {0};
  float t1[3] = {-0.5f, 0.5f, 0.5f}, t2[2] = {0.0f, 2.0f};
  sks_track tr[2] = {{0, SKS_PATH_TRANSLATION, SKS_INTERP_LINEAR, 3, t1, v},
                     {1, SKS_PATH_TRANSLATION, SKS_INTERP_LINEAR, 2, t2, v}};
  sks_clip clip = {"g", 2.0f, 2, tr, 0, NULL};
  double shift = 0;
  size_t bumped = 0;
  sks_clip_times_for_gltf(&clip, &shift, &bumped);
  CHECK(shift == 0.5 && bumped == 1);
  CHECK(t1[0] == 0.0f && t1[1] == 1.0f && t1[2] == nextafterf(1.0f, INFINITY));
  CHECK(t2[0] == 0.5f && t2[1] == 2.5f && clip.duration == 2.5f);
  /* already valid: nothing moves, the duration stays */
  sks_clip_times_for_gltf(&clip, &shift, &bumped);
  CHECK(shift == 0 && bumped == 0 && clip.duration == 2.5f && t1[0] == 0.0f);
  /* NaN in the middle, and a key after it at the same time as before it */
  float t3[4] = {0.0f, 1.0f, NAN, 1.0f};
  sks_track tn = {0, SKS_PATH_TRANSLATION, SKS_INTERP_LINEAR, 4, t3, v};
  sks_clip nan_clip = {"n", 1.0f, 1, &tn, 0, NULL};
  sks_clip_times_for_gltf(&nan_clip, &shift, &bumped);
  CHECK_MSG(isnan(t3[2]) && t3[3] == 1.0f && bumped == 0, "a NaN key time was changed: %g %g (%zu bumped)",
            (double)t3[2], (double)t3[3], bumped);
  /* -inf first: no shift (t0 would be infinite), the key stays */
  float t4[2] = {-INFINITY, 1.0f};
  sks_track ti = {0, SKS_PATH_TRANSLATION, SKS_INTERP_LINEAR, 2, t4, v};
  sks_clip inf_clip = {"i", 1.0f, 1, &ti, 0, NULL};
  sks_clip_times_for_gltf(&inf_clip, &shift, &bumped);
  CHECK(shift == 0 && bumped == 0 && isinf(t4[0]) && t4[1] == 1.0f);
}

/* Every key of every track, sampled at its own time, comes back bit for bit
 * -- rotations included, where a slerp at s = 0 followed by a normalise
 * would move the last bits of a stored (not exactly unit) quaternion. */
static size_t keys_exact(const sks_clip *clip, const sks_transform *rest, size_t joints,
                         size_t *mismatch) {
  sks_transform *out = malloc((joints ? joints : 1) * sizeof *out);
  size_t checked = 0;
  if (!out) return 0;
  for (size_t ti = 0; ti < clip->track_count; ++ti) {
    const sks_track *tr = &clip->tracks[ti];
    const uint32_t comps = sks_track_components(tr->path);
    const size_t stride = tr->interpolation == SKS_INTERP_CUBICSPLINE ? 3u * comps : comps;
    const size_t voff = tr->interpolation == SKS_INTERP_CUBICSPLINE ? comps : 0;
    for (size_t k = 0; k < tr->key_count; ++k) {
      /* A later key at the same time wins the search; compare with the key found. */
      if (k + 1 < tr->key_count && tr->times[k + 1] == tr->times[k]) continue;
      sks_sampling_job job = {clip, rest, joints, tr->times[k], 0, 0, out};
      if (!sks_sampling_job_run(&job)) { ++*mismatch; continue; }
      const sks_transform *o = &out[tr->joint];
      const float *got = tr->path == SKS_PATH_TRANSLATION ? &o->translation.x
                         : tr->path == SKS_PATH_ROTATION  ? &o->rotation.x
                                                          : &o->scale.x;
      if (memcmp(got, tr->values + k * stride + voff, comps * sizeof(float)) != 0) ++*mismatch;
      ++checked;
    }
  }
  free(out);
  return checked;
}

static void exact_keys(void) {
  /* Procedural: 7 rotation keys at times 0.1 k, stored 1e-4 off unit length
   * (as files store them after rounding, only more), plus Fox's real clips
   * when present (89 of its 9288 keys move without the exact-key path). */
  float times[7], values[28];
  for (int k = 0; k < 7; ++k) {
    double ang = 0.3 + 0.41 * k, ax[3] = {0.3, -0.5 + 0.1 * k, 0.8};
    double len = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
    times[k] = 0.1f * (float)k;
    for (int c = 0; c < 3; ++c) values[4 * k + c] = (float)(1.0001 * sin(ang / 2) * ax[c] / len);
    values[4 * k + 3] = (float)(1.0001 * cos(ang / 2));
  }
  sks_track tr = {2, SKS_PATH_ROTATION, SKS_INTERP_LINEAR, 7, times, values};
  sks_clip clip = {"q", 0.6f, 1, &tr, 0, NULL};
  size_t bad = 0, n = keys_exact(&clip, rest3, 3, &bad);
  CHECK(n == 7);
  CHECK_MSG(bad == 0, "%zu of %zu procedural rotation keys not returned exactly", bad, n);

  const char *fox = sks_test_shared_data("Fox/Fox.glb");
  if (!fox) return;
  sks_model m;
  sks_error err = {0};
  CHECK_OK(sks_load(fox, NULL, &m, &err), &err);
  if (err.code) return;
  size_t total = 0;
  bad = 0;
  for (size_t c = 0; c < m.clip_count; ++c)
    total += keys_exact(&m.clips[c], m.skeleton.rest, m.skeleton.joint_count, &bad);
  printf("Fox.glb: %zu keys sampled at their own time, %zu not returned exactly\n", total, bad);
  CHECK(total > 1000);
  CHECK(bad == 0);
  sks_model_free(&m);
}

/* sks_clip_find_loose: the exact name first, else the one clip holding it
 * as a word (Blender's FBX names a glTF clip Walk of armature "root"
 * "root|Walk_root"). */
static void clip_names(void) {
  sks_clip c[6];
  memset(c, 0, sizeof c);
  char *names[6] = {"root|Walk_root", "root|Run_root", "WalkJump", "Walking", "Idle", "idle_to_fight"};
  for (int i = 0; i < 6; ++i) c[i].name = names[i];
  size_t n = 9;
  CHECK(sks_clip_find_loose(c, 6, "root|Run_root", &n) == 1 && n == 1);
  CHECK(sks_clip_find_loose(c, 6, "Walk", &n) == 0 && n == 1);     /* not WalkJump / Walking: letters follow */
  CHECK(sks_clip_find_loose(c, 6, "run", &n) == 1 && n == 1);      /* case-insensitive */
  CHECK(sks_clip_find_loose(c, 6, "Idle", &n) == 4 && n == 1);     /* exact beats idle_to_fight */
  CHECK(sks_clip_find_loose(c, 6, "idle", &n) == 4 && n == 1);     /* the whole name Idle beats idle_to_fight */
  CHECK(sks_clip_find_loose(c, 6, "root", &n) == -1 && n == 2);
  CHECK(sks_clip_find_loose(c, 6, "fight", &n) == 5 && n == 1);
  CHECK(sks_clip_find_loose(c, 6, "Jump", &n) == -1 && n == 0);    /* inside a word */
  CHECK(sks_clip_find_loose(c, 6, "", &n) == -1 && n == 0);
  CHECK(sks_clip_find_loose(c, 6, "root|Walk_root_x", NULL) == -1);
  CHECK(sks_clip_find_loose(NULL, 0, "Walk", &n) == -1 && n == 0);
  CHECK(sks_clip_find(c, 6, "Walk") == -1); /* the exact lookup stays exact */

  /* several hold the name as a word: the one that is only the name between
   * the prefix and suffix every clip shares (Godot's "_root.001", Blender's
   * "root|" ... "_root"), else ambiguous */
  sks_clip g[4];
  memset(g, 0, sizeof g);
  char *gn[4] = {"idle_root.001", "fight_idle_root.001", "idle_to_fight_root.001", "run_root.001"};
  for (int i = 0; i < 4; ++i) g[i].name = gn[i];
  CHECK(sks_clip_find_loose(g, 4, "idle", &n) == 0 && n == 1);
  CHECK(sks_clip_find_loose(g, 4, "Idle", &n) == 0 && n == 1);
  CHECK(sks_clip_find_loose(g, 4, "IDLE_root.001", &n) == 0 && n == 1);
  CHECK(sks_clip_find_loose(g, 4, "fight", &n) == -1 && n == 2);  /* neither is only "fight" */
  CHECK(sks_clip_find_loose(g, 4, "fight_idle", &n) == 1 && n == 1);
  CHECK(sks_clip_find_loose(g, 4, "root", &n) == -1 && n == 4);
  CHECK(sks_clip_find_loose(g, 3, "run", &n) == -1 && n == 0);
  char *bn[4] = {"root|Walk_root", "root|idle_to_fight_root", "root|Idle_root", "root|Run_root"};
  for (int i = 0; i < 4; ++i) g[i].name = bn[i];
  CHECK(sks_clip_find_loose(g, 4, "idle", &n) == 2 && n == 1);
  CHECK(sks_clip_find_loose(g, 4, "dle", &n) == -1 && n == 0);    /* inside a word: not a match */
  CHECK(sks_clip_find_loose(g, 4, "to_fight", &n) == 1 && n == 1);
  g[1].name = NULL; /* an unnamed clip shares nothing and matches nothing */
  CHECK(sks_clip_find_loose(g, 4, "idle", &n) == 2 && n == 1);
}

int main(void) {
  times_for_gltf();
  clip_names();
  init_rest();
  exact_keys();
  linear_translation();
  linear_rotation();
  step();
  cubic();
  validation();
  blending();
  key_times();
  return sks_test_finish();
}
