/* sks_clips_from_model on procedural rigs with known answers:
 *  - other joint frames, same rest shape: the retargeted clip moves every
 *    joint of the rig exactly where the animation file's joints go (and a
 *    plain copy does not);
 *  - same frames, other rest pose: rotation keys are copied;
 *  - equal rests: an exact copy, tracks re-indexed by joint name;
 *  - the match report's counts and names; no match / no clip errors. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "math/sks_math.h"

#define PI 3.14159265358979323846
#define MAXJ 8

typedef struct rig_def {
  size_t n;
  const char *names[MAXJ];
  int32_t parents[MAXJ];
  sks_transform rest[MAXJ];
} rig_def;

static void make_model(const rig_def *d, const char *path, sks_model *m) {
  memset(m, 0, sizeof *m);
  m->source_path = strdup(path);
  m->skeleton.joint_count = d->n;
  m->skeleton.names = calloc(d->n, sizeof(char *));
  m->skeleton.parents = malloc(d->n * sizeof(int32_t));
  m->skeleton.rest = malloc(d->n * sizeof(sks_transform));
  for (size_t i = 0; i < d->n; ++i) {
    m->skeleton.names[i] = strdup(d->names[i]);
    m->skeleton.parents[i] = d->parents[i];
    m->skeleton.rest[i] = d->rest[i];
  }
}

static sks_transform tr(sks_vec3 t, sks_quat q) {
  sks_transform x = sks_transform_identity();
  x.translation = t;
  x.rotation = q;
  return x;
}

static void set_track(sks_track *t, int32_t joint, sks_track_path path, size_t keys, const float *times,
                      const float *values) {
  uint32_t c = sks_track_components(path);
  t->joint = joint;
  t->path = path;
  t->interpolation = SKS_INTERP_LINEAR;
  t->key_count = keys;
  t->times = malloc(keys * sizeof(float));
  t->values = malloc(keys * c * sizeof(float));
  memcpy(t->times, times, keys * sizeof(float));
  memcpy(t->values, values, keys * c * sizeof(float));
}

/* FK of a model posed by clip at time t: global matrices. */
static void pose(const sks_model *m, const sks_clip *clip, float t, sks_mat4 *g) {
  sks_transform locals[MAXJ];
  sks_sampling_job job = {clip, m->skeleton.rest, m->skeleton.joint_count, t, 0, 0, locals};
  CHECK(sks_sampling_job_run(&job));
  sks_local_to_model_job fk = {m->skeleton.parents, locals, m->skeleton.joint_count, NULL, g};
  CHECK(sks_local_to_model_job_run(&fk));
}

static double pos_dist(const sks_mat4 *a, const sks_mat4 *b) {
  double dx = a->m[12] - b->m[12], dy = a->m[13] - b->m[13], dz = a->m[14] - b->m[14];
  return sqrt(dx * dx + dy * dy + dz * dz);
}

static int has_name(char **names, size_t n, const char *name) {
  for (size_t i = 0; i < n; ++i)
    if (strcmp(names[i], name) == 0) return 1;
  return 0;
}

static void free_clips(sks_clip *c, size_t n) {
  for (size_t i = 0; i < n; ++i) sks_clip_free(&c[i]);
  free(c);
}

/* anim: root -> j -> c -> e, plus 'animonly' under root (keyed);
 * rig: the same global rest positions, but j's frame turned 90 deg about Z
 * (so c and e's frames too), joints in another order, plus 'extra'. */
static void other_frames(void) {
  sks_quat X = sks_q_from_axis_angle(sks_v3(0, 0, 1), (float)(PI / 2));
  sks_vec3 up = sks_v3(0, 1, 0), up_in_x = sks_q_rotate(sks_q_conj(X), up);
  rig_def ad = {5, {"root", "j", "c", "e", "animonly"}, {-1, 0, 1, 2, 0},
                {tr(sks_v3(0, 0, 0), sks_q_identity()), tr(up, sks_q_identity()), tr(up, sks_q_identity()),
                 tr(up, sks_q_identity()), tr(sks_v3(1, 0, 0), sks_q_identity())}};
  rig_def rd = {5, {"root", "extra", "j", "c", "e"}, {-1, 0, 0, 2, 3},
                {tr(sks_v3(0, 0, 0), sks_q_identity()), tr(sks_v3(0, 0, 1), sks_q_identity()), tr(up, X),
                 tr(up_in_x, sks_q_identity()), tr(up_in_x, sks_q_identity())}};
  sks_model anim, rig;
  make_model(&ad, "anim.bvh", &anim);
  make_model(&rd, "rig.glb", &rig);
  anim.clip_count = 1;
  anim.clips = calloc(1, sizeof(sks_clip));
  sks_clip *clip = &anim.clips[0];
  clip->name = strdup("swing");
  clip->duration = 2.0f;
  clip->track_count = 4;
  clip->tracks = calloc(4, sizeof(sks_track));
  float t3[3] = {0, 1, 2}, t2[2] = {0, 2};
  float qj[12], qc[8];
  for (int k = 0; k < 3; ++k) {
    sks_quat q = sks_q_from_axis_angle(sks_v3(1, 0, 0), (float)(k * PI / 3));
    qj[4 * k] = q.x; qj[4 * k + 1] = q.y; qj[4 * k + 2] = q.z; qj[4 * k + 3] = q.w;
  }
  sks_quat q0 = sks_q_identity(), q1 = sks_q_from_axis_angle(sks_v3(0.3f, 0.9f, 0.1f), 0.8f);
  q1 = sks_q_normalize(q1);
  float qcv[8] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w};
  memcpy(qc, qcv, sizeof qc);
  float root_t[6] = {0, 0, 0, 1, 0.5f, 0};
  float other_t[6] = {1, 0, 0, 1, 2, 0};
  set_track(&clip->tracks[0], 1, SKS_PATH_ROTATION, 3, t3, qj);
  set_track(&clip->tracks[1], 2, SKS_PATH_ROTATION, 2, t2, qc);
  set_track(&clip->tracks[2], 0, SKS_PATH_TRANSLATION, 2, t2, root_t);
  set_track(&clip->tracks[3], 4, SKS_PATH_TRANSLATION, 2, t2, other_t);

  sks_clip *out = NULL;
  size_t n = 0;
  sks_clip_match_report rep;
  sks_error err;
  memset(&err, 0, sizeof err);
  CHECK_OK(sks_clips_from_model(&rig, &anim, NULL, &out, &n, &rep, &err), &err);
  CHECK(n == 1 && out && strcmp(out[0].name, "swing") == 0);
  CHECK(rep.matched_count == 4);
  CHECK(rep.rig_only_count == 1 && has_name(rep.rig_only, rep.rig_only_count, "extra"));
  CHECK(rep.anim_only_count == 1 && rep.anim_only_keyed_count == 1 &&
        has_name(rep.anim_only, rep.anim_only_count, "animonly"));
  CHECK_MSG(rep.frames_differ_count == 3, "%zu", rep.frames_differ_count);
  CHECK(has_name(rep.frames_differ, rep.frames_differ_count, "j") &&
        has_name(rep.frames_differ, rep.frames_differ_count, "c") &&
        has_name(rep.frames_differ, rep.frames_differ_count, "e"));
  CHECK(rep.rest_differs_count == 3 && rep.pose_only_count == 0);
  CHECK_NEAR(rep.max_rest_angle_deg, 90.0, 1e-3);
  CHECK(rep.tracks_kept == 3 && rep.tracks_dropped == 1);
  CHECK(n == 1 && out[0].track_count == 3 && out[0].duration == 2.0f);

  /* every matched joint goes where the anim joint goes; its frame is the anim
   * joint's frame times X; a plain copy misplaces c and e */
  sks_clip *copy = NULL;
  size_t nc = 0;
  sks_clip_match_options asis = {1, 0};
  CHECK_OK(sks_clips_from_model(&rig, &anim, &asis, &copy, &nc, NULL, &err), &err);
  const int32_t a_of[4] = {0, 1, 2, 3}, r_of[4] = {0, 2, 3, 4};
  double worst = 0, worst_rot = 0, copy_worst = 0;
  const float times[5] = {0, 0.5f, 1.0f, 1.3f, 2.0f};
  for (int k = 0; k < 5 && n == 1 && nc == 1; ++k) {
    sks_mat4 ga[MAXJ], gr[MAXJ], gc[MAXJ];
    pose(&anim, clip, times[k], ga);
    pose(&rig, &out[0], times[k], gr);
    pose(&rig, &copy[0], times[k], gc);
    for (int i = 0; i < 4; ++i) {
      double d = pos_dist(&ga[a_of[i]], &gr[r_of[i]]);
      if (d > worst) worst = d;
      d = pos_dist(&ga[a_of[i]], &gc[r_of[i]]);
      if (d > copy_worst) copy_worst = d;
      if (i >= 1) {
        sks_transform xa = sks_m4_decompose(&ga[a_of[i]]), xr = sks_m4_decompose(&gr[r_of[i]]);
        sks_quat want = sks_q_mul(xa.rotation, X);
        double dot = fabs((double)sks_q_dot(sks_q_normalize(want), sks_q_normalize(xr.rotation)));
        double ang = 2 * acos(dot > 1 ? 1 : dot);
        if (ang > worst_rot) worst_rot = ang;
      }
    }
  }
  CHECK_MSG(worst < 1e-5, "retargeted joints are %.3g units from the anim's", worst);
  CHECK_MSG(worst_rot < 1e-3, "retargeted joint frames are %.3g rad off", worst_rot);
  CHECK_MSG(copy_worst > 0.5, "a plain copy should misplace joints (%.3g)", copy_worst);
  free_clips(copy, nc);
  free_clips(out, n);
  sks_clip_match_report_free(&rep);
  CHECK(rep.rig_only == NULL && rep.matched_count == 0);
  sks_model_free(&anim);
  sks_model_free(&rig);
}

/* Same joint frames, another rest pose of j (an A-pose vs T-pose file): the
 * clip's rotations are the pose, so they are copied; translations keep the
 * rig's offsets plus the clip's motion. */
static void other_pose(void) {
  sks_vec3 up = sks_v3(0, 1, 0);
  sks_quat bend = sks_q_from_axis_angle(sks_v3(0, 0, 1), (float)(PI / 6));
  rig_def ad = {3, {"root", "j", "c"}, {-1, 0, 1},
                {tr(sks_v3(0, 0, 0), sks_q_identity()), tr(up, bend), tr(up, sks_q_identity())}};
  rig_def rd = {3, {"root", "j", "c"}, {-1, 0, 1},
                {tr(sks_v3(0, 0, 0), sks_q_identity()), tr(up, sks_q_identity()), tr(sks_v3(0, 2, 0), sks_q_identity())}};
  sks_model anim, rig;
  make_model(&ad, "a.fbx", &anim);
  make_model(&rd, "r.fbx", &rig);
  anim.clip_count = 1;
  anim.clips = calloc(1, sizeof(sks_clip));
  anim.clips[0].name = strdup("wave");
  anim.clips[0].duration = 1;
  anim.clips[0].track_count = 2;
  anim.clips[0].tracks = calloc(2, sizeof(sks_track));
  float t2[2] = {0, 1};
  sks_quat qa = sks_q_from_axis_angle(sks_v3(1, 0, 0), 0.4f), qb = sks_q_from_axis_angle(sks_v3(0, 1, 0), 1.1f);
  float q[8] = {qa.x, qa.y, qa.z, qa.w, qb.x, qb.y, qb.z, qb.w};
  float t[6] = {0, 1, 0, 0, 1.5f, 0}; /* j's translation keyed: rest (0,1,0) then +0.5 y */
  set_track(&anim.clips[0].tracks[0], 1, SKS_PATH_ROTATION, 2, t2, q);
  set_track(&anim.clips[0].tracks[1], 1, SKS_PATH_TRANSLATION, 2, t2, t);
  sks_clip *out = NULL;
  size_t n = 0;
  sks_clip_match_report rep;
  sks_error err;
  memset(&err, 0, sizeof err);
  CHECK_OK(sks_clips_from_model(&rig, &anim, NULL, &out, &n, &rep, &err), &err);
  CHECK(rep.matched_count == 3 && rep.rig_only_count == 0 && rep.anim_only_count == 0);
  CHECK_MSG(rep.rest_differs_count == 2 && rep.pose_only_count == 2 && rep.frames_differ_count == 0,
            "differs %zu, pose only %zu, frames %zu", rep.rest_differs_count, rep.pose_only_count,
            rep.frames_differ_count);
  for (int k = 0; k < 3 && n == 1; ++k) {
    float time = 0.5f * (float)k;
    sks_transform la[3], lr[3];
    sks_sampling_job ja = {&anim.clips[0], anim.skeleton.rest, 3, time, 0, 0, la};
    sks_sampling_job jr = {&out[0], rig.skeleton.rest, 3, time, 0, 0, lr};
    CHECK(sks_sampling_job_run(&ja) && sks_sampling_job_run(&jr));
    CHECK_NEAR(fabs((double)sks_q_dot(la[1].rotation, lr[1].rotation)), 1.0, 1e-6);
    CHECK_NEAR(lr[1].translation.y, 1.0 + 0.5 * time, 1e-6); /* rig rest 1 + the clip's motion */
    CHECK_NEAR(lr[2].translation.y, 2.0, 0);                 /* untouched: the rig's own offset */
  }
  free_clips(out, n);
  sks_clip_match_report_free(&rep);
  sks_model_free(&anim);
  sks_model_free(&rig);
}

/* Equal rests: exact copy, re-indexed by name; and the errors. */
static void equal_rests_and_errors(void) {
  rig_def ad = {3, {"a", "b", "c"}, {-1, 0, 1},
                {tr(sks_v3(0, 0, 0), sks_q_identity()), tr(sks_v3(0, 1, 0), sks_q_identity()),
                 tr(sks_v3(0, 1, 0), sks_q_identity())}};
  rig_def rd = {4, {"z", "a", "b", "c"}, {-1, 0, 1, 2},
                {tr(sks_v3(0, 0, 0), sks_q_identity()), tr(sks_v3(0, 0, 0), sks_q_identity()),
                 tr(sks_v3(0, 1, 0), sks_q_identity()), tr(sks_v3(0, 1, 0), sks_q_identity())}};
  sks_model anim, rig;
  make_model(&ad, "a.glb", &anim);
  make_model(&rd, "r.glb", &rig);
  sks_clip *out = NULL;
  size_t n = 0;
  sks_error err;
  memset(&err, 0, sizeof err);
  CHECK(sks_clips_from_model(&rig, &anim, NULL, &out, &n, NULL, &err) == SKS_ERR_NOT_FOUND);
  CHECK(strstr(err.message, "a.glb") && strstr(err.message, "no clips"));
  anim.clip_count = 1;
  anim.clips = calloc(1, sizeof(sks_clip));
  anim.clips[0].name = strdup("c1");
  anim.clips[0].duration = 1;
  anim.clips[0].track_count = 1;
  anim.clips[0].tracks = calloc(1, sizeof(sks_track));
  float t2[2] = {0, 1};
  sks_quat qb = sks_q_normalize(sks_q_from_axis_angle(sks_v3(0.2f, 1, 0), 0.7f));
  float q[8] = {0, 0, 0, 1, qb.x, qb.y, qb.z, qb.w};
  set_track(&anim.clips[0].tracks[0], 2, SKS_PATH_ROTATION, 2, t2, q);
  sks_clip_match_report rep;
  CHECK_OK(sks_clips_from_model(&rig, &anim, NULL, &out, &n, &rep, &err), &err);
  CHECK(n == 1 && out[0].track_count == 1 && out[0].tracks[0].joint == 3);
  CHECK(n == 1 && memcmp(out[0].tracks[0].values, q, sizeof q) == 0 &&
        memcmp(out[0].tracks[0].times, t2, sizeof t2) == 0);
  CHECK(rep.rest_differs_count == 0 && rep.frames_differ_count == 0 && rep.rig_only_count == 1);
  free_clips(out, n);
  sks_clip_match_report_free(&rep);
  /* no joint in common */
  for (size_t i = 0; i < rig.skeleton.joint_count; ++i) rig.skeleton.names[i][0] = 'q';
  CHECK(sks_clips_from_model(&rig, &anim, NULL, &out, &n, &rep, &err) == SKS_ERR_INVALID);
  CHECK(strstr(err.message, "a.glb") && strstr(err.message, "r.glb") && strstr(err.message, "no joint"));
  CHECK(out == NULL && n == 0 && rep.matched_count == 0 && rep.anim_only_count == 3);
  sks_clip_match_report_free(&rep);
  sks_model_free(&anim);
  sks_model_free(&rig);
}

int main(void) {
  other_frames();
  other_pose();
  equal_rests_and_errors();
  return sks_test_finish();
}
