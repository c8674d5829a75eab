/* The worked examples of seed 000 (Thai course chapter), computed by the
 * library's own jobs: FK chain, elbow vertex 50/50, knee vertex 0.8/0.2.
 * (The weight-repair example 0.7/0.5 -> 0.583/0.417 is sks_repair's, tested
 * with the rig checks.) */
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "math/sks_math.h"

static sks_transform at(float x, float y, float z) {
  sks_transform t = sks_transform_identity();
  t.translation = sks_v3(x, y, z);
  return t;
}

static sks_mat4 translation(float x, float y, float z) {
  sks_mat4 m = sks_m4_identity();
  m.m[12] = x; m.m[13] = y; m.m[14] = z;
  return m;
}

/* Skins one vertex with two influences through the skinning job. */
static int skin_one_vertex(sks_skinning_method method, int reference, const sks_mat4 *palette,
                           const uint16_t *joints, const float *weights, const float *p, float *out) {
  sks_skinning_job job;
  memset(&job, 0, sizeof job);
  job.method = method;
  job.vertex_count = 1;
  job.influence_count = 2;
  job.palette = palette;
  job.palette_count = 2;
  job.joints = joints;
  job.weights = weights;
  job.in_positions = p;
  job.out_positions = out;
  return reference ? sks_skinning_job_run_reference(&job) : sks_skinning_job_run(&job);
}

/* Exercise 1: Root (0,0,0) -> Thigh (0,-1,0) -> Shin (0,-1,0) -> Foot (0,-0.5,0):
 * Foot world position (0, -2.5, 0). */
static void chain_world_position(void) {
  const int32_t parents[4] = {-1, 0, 1, 2};
  const sks_transform locals[4] = {at(0, 0, 0), at(0, -1, 0), at(0, -1, 0), at(0, -0.5f, 0)};
  sks_mat4 models[4];
  sks_local_to_model_job job = {parents, locals, 4, NULL, models};
  CHECK(sks_local_to_model_job_run(&job));
  CHECK(models[3].m[12] == 0.0f);
  CHECK(models[3].m[13] == -2.5f);
  CHECK(models[3].m[14] == 0.0f);
}

/* Section 6: UpperArm bound at (0,0,0), Forearm (its child) at (0,2,0), vertex
 * V at the elbow (0,2,0) weighted 0.5/0.5. Animate: Forearm swings to
 * (1,2,0), UpperArm stays. LBS gives (0.5, 2, 0). Driven through a clip,
 * sampling, FK, palette and the skinning job (and sks_skin_model). */
static void elbow_vertex(void) {
  char upper[] = "UpperArm", fore[] = "Forearm";
  char *names[2] = {upper, fore};
  int32_t parents[2] = {-1, 0};
  sks_transform rest[2] = {at(0, 0, 0), at(0, 2, 0)};
  int32_t skin_joints[2] = {0, 1};
  sks_mat4 ibm[2] = {translation(0, 0, 0), translation(0, -2, 0)};
  float positions[3] = {0, 2, 0};
  uint16_t joints[2] = {0, 1};
  float weights[2] = {0.5f, 0.5f};

  sks_model model;
  memset(&model, 0, sizeof model);
  model.source_path = "elbow";
  model.skeleton.joint_count = 2;
  model.skeleton.names = names;
  model.skeleton.parents = parents;
  model.skeleton.rest = rest;
  sks_skin skin = {"arm", 2, skin_joints, ibm};
  model.skin_count = 1;
  model.skins = &skin;
  sks_mesh_part part;
  memset(&part, 0, sizeof part);
  part.skin = 0;
  part.node = 0;
  part.material = -1;
  part.vertex_count = 1;
  part.positions = positions;
  part.influence_count = 2;
  part.joints = joints;
  part.weights = weights;
  model.part_count = 1;
  model.parts = &part;

  /* The bind pose recovered from the inverse bind matrices is the rest pose. */
  sks_mat4 scratch[2];
  sks_transform bind[2];
  sks_bind_pose_job bj = {&model.skeleton, &skin, scratch, bind, 1};
  CHECK(sks_bind_pose_job_run(&bj));
  CHECK_NEAR(bind[1].translation.y, 2.0, 1e-6);
  CHECK_NEAR(bind[1].rotation.w, 1.0, 1e-6);

  /* Clip: Forearm translation (0,2,0) at t=0 -> (1,2,0) at t=1. */
  float times[2] = {0, 1};
  float values[6] = {0, 2, 0, 1, 2, 0};
  sks_track track = {1, SKS_PATH_TRANSLATION, SKS_INTERP_LINEAR, 2, times, values};
  sks_clip clip = {"bend", 1.0f, 1, &track, 0, NULL};
  sks_transform locals[2];
  sks_sampling_job sj = {&clip, rest, 2, 1.0f, 0, 0, locals};
  CHECK(sks_sampling_job_run(&sj));
  CHECK(locals[1].translation.x == 1.0f && locals[1].translation.y == 2.0f);
  CHECK(locals[0].translation.x == 0.0f && locals[0].translation.y == 0.0f); /* UpperArm stays */

  sks_mat4 models[2];
  sks_local_to_model_job fk = {parents, locals, 2, NULL, models};
  CHECK(sks_local_to_model_job_run(&fk));
  sks_mat4 palette[2];
  sks_palette_job pj = {&skin, models, 2, palette};
  CHECK(sks_palette_job_run(&pj));

  for (int method = 0; method < 2; ++method) {
    const sks_skinning_method m = method ? SKS_SKIN_DQS : SKS_SKIN_LBS;
    for (int reference = 0; reference < 2; ++reference) {
      float out[3] = {9, 9, 9};
      CHECK(skin_one_vertex(m, reference, palette, joints, weights, positions, out));
      CHECK_NEAR(out[0], 0.5, 1e-6);
      CHECK_NEAR(out[1], 2.0, 1e-6);
      CHECK_NEAR(out[2], 0.0, 1e-6);
    }
  }

  float whole[3] = {0};
  sks_error err = {0};
  CHECK(sks_model_total_vertex_count(&model) == 1);
  CHECK_OK(sks_skin_model(&model, models, SKS_SKIN_LBS, whole, NULL, &err), &err);
  CHECK_NEAR(whole[0], 0.5, 1e-6);
  CHECK_NEAR(whole[1], 2.0, 1e-6);
  CHECK_NEAR(whole[2], 0.0, 1e-6);
}

/* Exercise 2: knee vertex weighted Thigh 0.8 / Shin 0.2; Thigh places it at
 * (0,-1,0.1), Shin at (0,-1,0.6): skinned position (0, -1, 0.2). */
static void knee_vertex(void) {
  const float p[3] = {0, -1, 0};
  sks_mat4 palette[2] = {translation(0, 0, 0.1f), translation(0, 0, 0.6f)};
  const uint16_t joints[2] = {0, 1};
  const float weights[2] = {0.8f, 0.2f};
  float out[3];
  CHECK(skin_one_vertex(SKS_SKIN_LBS, 0, palette, joints, weights, p, out));
  CHECK_NEAR(out[0], 0.0, 1e-6);
  CHECK_NEAR(out[1], -1.0, 1e-6);
  CHECK_NEAR(out[2], 0.2, 1e-6);
}

int main(void) {
  chain_world_position();
  elbow_vertex();
  knee_vertex();
  return sks_test_finish();
}
