/* reweight --coarsen keeps a weighted joint for every skin: a part bound only
 * to a joint coarsening would drop (odd depth) keeps that joint, so the
 * result stays usable (ozz_astro_max.dae part 1 failed with "its skin has no
 * weighted joint"). Procedural chain root -> a -> b -> c, two skins. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "math/sks_math.h"

static void make_part(sks_mesh_part *p, int32_t skin, const uint16_t *joints, size_t nv, float y0) {
  memset(p, 0, sizeof *p);
  p->name = strdup("part");
  p->material = -1;
  p->skin = skin;
  p->node = 0;
  p->vertex_count = nv;
  p->positions = malloc(nv * 3 * sizeof(float));
  p->influence_count = 1;
  p->joints = malloc(nv * sizeof(uint16_t));
  p->weights = malloc(nv * sizeof(float));
  for (size_t v = 0; v < nv; ++v) {
    p->positions[3 * v] = 0.1f * (float)(v % 2);
    p->positions[3 * v + 1] = y0 + 0.5f * (float)v;
    p->positions[3 * v + 2] = 0;
    p->joints[v] = joints[v];
    p->weights[v] = 1.0f;
  }
  p->index_count = 0;
}

static void make_skin(sks_skin *s, const int32_t *joints, size_t n) {
  memset(s, 0, sizeof *s);
  s->name = strdup("skin");
  s->joint_count = n;
  s->joints = malloc(n * sizeof(int32_t));
  s->inverse_bind = malloc(n * sizeof(sks_mat4));
  for (size_t j = 0; j < n; ++j) {
    s->joints[j] = joints[j];
    sks_mat4 bind = sks_m4_identity();
    bind.m[13] = (float)joints[j]; /* joint k sits at y = k (rest chain below) */
    CHECK(sks_m4_inverse(&bind, &s->inverse_bind[j]));
  }
}

int main(void) {
  sks_model m;
  memset(&m, 0, sizeof m);
  m.source_path = strdup("chain.glb");
  const char *names[4] = {"root", "a", "b", "c"};
  m.skeleton.joint_count = 4;
  m.skeleton.names = calloc(4, sizeof(char *));
  m.skeleton.parents = malloc(4 * sizeof(int32_t));
  m.skeleton.rest = malloc(4 * sizeof(sks_transform));
  for (int i = 0; i < 4; ++i) {
    m.skeleton.names[i] = strdup(names[i]);
    m.skeleton.parents[i] = i - 1;
    m.skeleton.rest[i] = sks_transform_identity();
    m.skeleton.rest[i].translation = sks_v3(0, i ? 1.0f : 0.0f, 0);
  }
  m.skin_count = 2;
  m.skins = calloc(2, sizeof(sks_skin));
  const int32_t s0[4] = {0, 1, 2, 3}, s1[1] = {1};
  make_skin(&m.skins[0], s0, 4);
  make_skin(&m.skins[1], s1, 1);
  m.part_count = 2;
  m.parts = calloc(2, sizeof(sks_mesh_part));
  const uint16_t j0[8] = {0, 0, 1, 1, 2, 2, 3, 3}, j1[4] = {0, 0, 0, 0};
  make_part(&m.parts[0], 0, j0, 8, 0.0f);
  make_part(&m.parts[1], 1, j1, 4, 1.0f); /* bound only to 'a' (depth 1: coarsening drops it) */

  sks_error err;
  memset(&err, 0, sizeof err);
  sks_model out;
  sks_reweight_options o = {1, 0};
  CHECK_OK(sks_reweight(&m, &o, &out, &err), &err);
  CHECK(out.skeleton.joint_count == 3); /* b (depth 2) stays, c (depth 3) goes; a is kept for skin 1 */
  CHECK(sks_skeleton_find(&out.skeleton, "a") >= 0);
  CHECK(sks_skeleton_find(&out.skeleton, "c") < 0);
  CHECK(out.skin_count == 2 && out.skins[1].joint_count == 1);
  if (out.skin_count == 2 && out.skins[1].joint_count == 1)
    CHECK(out.skins[1].joints[0] == sks_skeleton_find(&out.skeleton, "a"));
  sks_findings f;
  CHECK_OK(sks_check(&out, NULL, &f, &err), &err);
  CHECK(f.error_count == 0);
  sks_findings_free(&f);
  sks_model_free(&out);

  /* with skin 1 on 'b' instead (kept anyway), 'a' goes as before */
  m.skins[1].joints[0] = 2;
  CHECK_OK(sks_reweight(&m, &o, &out, &err), &err);
  CHECK(out.skeleton.joint_count == 2 && sks_skeleton_find(&out.skeleton, "a") < 0);
  sks_model_free(&out);
  sks_model_free(&m);
  return sks_test_finish();
}
