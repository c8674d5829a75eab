/* Weight hygiene on procedural rigs with one defect each: the exact finding
 * (kind, part, vertex, joint, message), repair (seed 000: 0.7/0.5 ->
 * 0.583/0.417) and influence limiting. */
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "math/sks_math.h"

static char *dup_s(const char *s) {
  char *d = malloc(strlen(s) + 1);
  strcpy(d, s);
  return d;
}

/* 3-joint chain root -> mid -> tip; one skin over all three; two parts:
 * part 0 'body' (4 vertices, 2 influences, 2 triangles) and part 1 'leg'
 * (3 vertices, 4 influences). All weights valid. */
static void make_model(sks_model *m) {
  memset(m, 0, sizeof *m);
  m->source_path = dup_s("/some/dir/Proc.glb");
  sks_skeleton *sk = &m->skeleton;
  sk->joint_count = 3;
  sk->names = calloc(3, sizeof(char *));
  sk->names[0] = dup_s("root");
  sk->names[1] = dup_s("mid");
  sk->names[2] = dup_s("tip");
  sk->parents = malloc(3 * sizeof(int32_t));
  sk->parents[0] = -1; sk->parents[1] = 0; sk->parents[2] = 1;
  sk->rest = malloc(3 * sizeof(sks_transform));
  for (int i = 0; i < 3; ++i) {
    sk->rest[i] = sks_transform_identity();
    sk->rest[i].translation.y = i ? 1.0f : 0.0f;
  }
  m->skin_count = 1;
  m->skins = calloc(1, sizeof(sks_skin));
  m->skins[0].name = dup_s("skin");
  m->skins[0].joint_count = 3;
  m->skins[0].joints = malloc(3 * sizeof(int32_t));
  m->skins[0].inverse_bind = malloc(3 * sizeof(sks_mat4));
  for (int i = 0; i < 3; ++i) {
    m->skins[0].joints[i] = i;
    m->skins[0].inverse_bind[i] = sks_m4_identity();
    m->skins[0].inverse_bind[i].m[13] = -(float)i;
  }
  m->part_count = 2;
  m->parts = calloc(2, sizeof(sks_mesh_part));
  sks_mesh_part *p = &m->parts[0];
  p->name = dup_s("body");
  p->material = -1; p->skin = 0; p->node = 0;
  p->vertex_count = 4;
  p->positions = calloc(12, sizeof(float));
  for (int v = 0; v < 4; ++v) { p->positions[3 * v] = (float)(v & 1); p->positions[3 * v + 1] = (float)(v >> 1); }
  p->influence_count = 2;
  p->joints = calloc(8, sizeof(uint16_t));
  p->weights = calloc(8, sizeof(float));
  for (int v = 0; v < 4; ++v) {
    p->joints[2 * v] = 0; p->joints[2 * v + 1] = 1;
    p->weights[2 * v] = 0.5f; p->weights[2 * v + 1] = 0.5f;
  }
  p->index_count = 6;
  p->indices = malloc(6 * sizeof(uint32_t));
  const uint32_t idx[6] = {0, 1, 2, 1, 3, 2};
  memcpy(p->indices, idx, sizeof idx);

  p = &m->parts[1];
  p->name = dup_s("leg");
  p->material = -1; p->skin = 0; p->node = 2;
  p->vertex_count = 3;
  p->positions = calloc(9, sizeof(float));
  p->influence_count = 4;
  p->joints = calloc(12, sizeof(uint16_t));
  p->weights = calloc(12, sizeof(float));
  for (int v = 0; v < 3; ++v) {
    const uint16_t j[4] = {2, 1, 0, 0};
    const float w[4] = {0.4f, 0.3f, 0.2f, 0.1f};
    memcpy(&p->joints[4 * v], j, sizeof j);
    memcpy(&p->weights[4 * v], w, sizeof w);
  }
  p->index_count = 3;
  p->indices = malloc(3 * sizeof(uint32_t));
  p->indices[0] = 0; p->indices[1] = 1; p->indices[2] = 2;
}

/* Runs check; expects exactly one finding and returns it (or a zeroed one). */
static sks_finding check_one(const sks_model *m, const sks_check_options *o, const char *label) {
  sks_findings f;
  sks_error err;
  sks_finding out;
  memset(&out, 0, sizeof out);
  out.part = out.joint = -99;
  CHECK_OK(sks_check(m, o, &f, &err), &err);
  CHECK_MSG(f.count == 1, "%s: expected 1 finding, got %zu%s%s", label, f.count,
            f.count ? ", first: " : "", f.count ? f.items[0].message : "");
  if (f.count >= 1) out = f.items[0];
  sks_findings_free(&f);
  return out;
}

static void test_clean(void) {
  sks_model m;
  make_model(&m);
  sks_findings f;
  sks_error err;
  CHECK_OK(sks_check(&m, NULL, &f, &err), &err);
  CHECK(f.count == 0);
  CHECK(f.error_count == 0 && f.warning_count == 0);
  sks_findings_free(&f);
  CHECK(f.items == NULL && f.count == 0);
  sks_model_free(&m);
}

static void test_weight_sum_and_repair(void) {
  sks_model m;
  make_model(&m);
  /* Seed 000's example: 0.7 + 0.5 on vertex 2 of part 0. */
  m.parts[0].weights[4] = 0.7f;
  m.parts[0].weights[5] = 0.5f;
  sks_finding f = check_one(&m, NULL, "weight sum");
  CHECK(f.kind == SKS_FINDING_WEIGHT_SUM);
  CHECK(f.severity == SKS_SEVERITY_ERROR);
  CHECK(f.part == 0 && f.vertex == 2 && f.joint == -1);
  CHECK_MSG(strstr(f.message, "Proc.glb: part 0 'body', vertex 2: weights sum to 1.2") == f.message,
            "message: %s", f.message);

  sks_repair_report r;
  sks_error err;
  CHECK_OK(sks_repair(&m, &r, &err), &err);
  CHECK_NEAR(m.parts[0].weights[4], 0.583, 1e-3);
  CHECK_NEAR(m.parts[0].weights[5], 0.417, 1e-3);
  CHECK_NEAR(m.parts[0].weights[4], 0.7 / 1.2, 1e-6);
  CHECK(r.normalized == 1);
  CHECK(r.negatives_clamped == 0 && r.nans_zeroed == 0 && r.zero_weight_vertices == 0);
  /* Untouched vertices stay exactly as they were. */
  CHECK(m.parts[0].weights[0] == 0.5f && m.parts[1].weights[0] == 0.4f);
  sks_findings fs;
  CHECK_OK(sks_check(&m, NULL, &fs, &err), &err);
  CHECK(fs.count == 0);
  sks_findings_free(&fs);
  sks_model_free(&m);
}

static void test_tolerance(void) {
  sks_model m;
  make_model(&m);
  m.parts[0].weights[0] = 0.5005f; /* sum 1.0005: inside default 1e-3 */
  sks_findings f;
  sks_error err;
  CHECK_OK(sks_check(&m, NULL, &f, &err), &err);
  CHECK(f.count == 0);
  sks_findings_free(&f);
  sks_check_options o = {1e-4f, 0, 0};
  sks_finding one = check_one(&m, &o, "tight tolerance");
  CHECK(one.kind == SKS_FINDING_WEIGHT_SUM && one.part == 0 && one.vertex == 0);
  sks_model_free(&m);
}

static void test_negative(void) {
  sks_model m;
  make_model(&m);
  /* part 1 vertex 1 slot 1 (skin joint 1 'mid') = -0.3; others sum to 1.0 without it. */
  m.parts[1].weights[4 * 1 + 1] = -0.3f;
  m.parts[1].weights[4 * 1 + 0] = 0.7f;
  sks_finding f = check_one(&m, NULL, "negative");
  CHECK(f.kind == SKS_FINDING_WEIGHT_NEGATIVE);
  CHECK(f.part == 1 && f.vertex == 1 && f.joint == 1);
  CHECK_MSG(strcmp(f.message, "Proc.glb: part 1 'leg', vertex 1, joint 1 'mid': weight is negative (-0.3)") == 0,
            "message: %s", f.message);
  sks_repair_report r;
  sks_error err;
  CHECK_OK(sks_repair(&m, &r, &err), &err);
  CHECK(r.negatives_clamped == 1);
  CHECK(m.parts[1].weights[5] == 0.0f);
  CHECK_NEAR(m.parts[1].weights[4], 0.7, 1e-6); /* 0.7+0.2+0.1 = 1 already */
  sks_model_free(&m);
}

static void test_nan(void) {
  sks_model m;
  make_model(&m);
  m.parts[0].weights[2 * 3 + 1] = NAN; /* part 0 vertex 3, slot 1 = skin joint 1 */
  sks_finding f = check_one(&m, NULL, "nan");
  CHECK(f.kind == SKS_FINDING_WEIGHT_NAN);
  CHECK(f.part == 0 && f.vertex == 3 && f.joint == 1);
  CHECK(strstr(f.message, "vertex 3, joint 1 'mid': weight is NaN") != NULL);
  sks_repair_report r;
  sks_error err;
  CHECK_OK(sks_repair(&m, &r, &err), &err);
  CHECK(r.nans_zeroed == 1 && r.normalized == 1);
  CHECK(m.parts[0].weights[6] == 1.0f && m.parts[0].weights[7] == 0.0f);
  sks_model_free(&m);
}

static void test_zero(void) {
  sks_model m;
  make_model(&m);
  m.parts[1].weights[4 * 2 + 0] = 0; m.parts[1].weights[4 * 2 + 1] = 0;
  m.parts[1].weights[4 * 2 + 2] = 0; m.parts[1].weights[4 * 2 + 3] = 0;
  sks_finding f = check_one(&m, NULL, "zero");
  CHECK(f.kind == SKS_FINDING_WEIGHT_ZERO);
  CHECK(f.part == 1 && f.vertex == 2 && f.joint == -1);
  CHECK_MSG(strcmp(f.message, "Proc.glb: part 1 'leg', vertex 2: weights sum to 0 \xe2\x80\x94 cannot normalise") == 0,
            "message: %s", f.message);
  sks_repair_report r;
  sks_error err;
  CHECK_OK(sks_repair(&m, &r, &err), &err);
  CHECK(r.zero_weight_vertices == 1);
  /* Bound to the part's node (skeleton joint 2 = skin joint 2). */
  CHECK(m.parts[1].joints[8] == 2 && m.parts[1].weights[8] == 1.0f);
  CHECK(m.parts[1].weights[9] == 0.0f);
  sks_model_free(&m);
}

static void test_joint_range(void) {
  sks_model m;
  make_model(&m);
  m.parts[0].joints[2 * 1 + 1] = 7; /* part 0 vertex 1 slot 1 -> joint 7 of a 3-joint skin */
  sks_finding f = check_one(&m, NULL, "joint range");
  CHECK(f.kind == SKS_FINDING_JOINT_RANGE);
  CHECK(f.part == 0 && f.vertex == 1 && f.joint == 7);
  CHECK(strstr(f.message, "part 0 'body', vertex 1, joint 7 '?': joint index is out of range") != NULL);
  sks_repair_report r;
  sks_error err;
  CHECK_OK(sks_repair(&m, &r, &err), &err);
  CHECK(r.out_of_range_dropped == 1);
  CHECK(m.parts[0].joints[3] == 0 && m.parts[0].weights[3] == 0.0f);
  CHECK(m.parts[0].weights[2] == 1.0f);
  sks_model_free(&m);
}

static void test_bind_singular(void) {
  sks_model m;
  make_model(&m);
  memset(&m.skins[0].inverse_bind[1], 0, sizeof(sks_mat4));
  sks_finding f = check_one(&m, NULL, "singular bind");
  CHECK(f.kind == SKS_FINDING_BIND_SINGULAR && f.severity == SKS_SEVERITY_ERROR);
  CHECK(f.part == -1 && f.vertex == -1 && f.joint == 1);
  CHECK(strstr(f.message, "Proc.glb: skin 0 'skin', joint 1 'mid': inverse bind matrix is not invertible") == f.message);
  m.skins[0].inverse_bind[1] = sks_m4_identity();
  m.skins[0].inverse_bind[2].m[12] = INFINITY;
  f = check_one(&m, NULL, "non-finite bind");
  CHECK(f.kind == SKS_FINDING_BIND_SINGULAR && f.joint == 2);
  CHECK(strstr(f.message, "non-finite") != NULL);
  /* A scaled (still invertible) matrix is fine. */
  m.skins[0].inverse_bind[2] = sks_m4_identity();
  m.skins[0].inverse_bind[2].m[0] = 0.01f;
  m.skins[0].inverse_bind[2].m[5] = 0.01f;
  m.skins[0].inverse_bind[2].m[10] = 0.01f;
  sks_findings fs;
  sks_error err;
  CHECK_OK(sks_check(&m, NULL, &fs, &err), &err);
  CHECK(fs.count == 0);
  sks_findings_free(&fs);
  sks_model_free(&m);
}

static void test_hierarchy(void) {
  sks_model m;
  make_model(&m);
  /* root -> mid -> tip, then make root's parent tip: cycle of 3, and order broken. */
  m.skeleton.parents[0] = 2;
  sks_findings f;
  sks_error err;
  CHECK_OK(sks_check(&m, NULL, &f, &err), &err);
  CHECK(f.total_by_kind[SKS_FINDING_HIERARCHY_CYCLE] == 1);
  CHECK(f.total_by_kind[SKS_FINDING_HIERARCHY_ORDER] == 1);
  int found = 0;
  for (size_t i = 0; i < f.count; ++i) {
    if (f.items[i].kind == SKS_FINDING_HIERARCHY_CYCLE) {
      found = 1;
      CHECK(f.items[i].joint == 0 && f.items[i].part == -1);
      CHECK_MSG(strstr(f.items[i].message, "joint 0 'root': hierarchy cycle of 3 joint(s)") != NULL,
                "message: %s", f.items[i].message);
    } else {
      CHECK(f.items[i].kind == SKS_FINDING_HIERARCHY_ORDER && f.items[i].joint == 0);
    }
  }
  CHECK(found);
  sks_findings_free(&f);
  /* Self-parent. */
  m.skeleton.parents[0] = -1;
  m.skeleton.parents[2] = 2;
  CHECK_OK(sks_check(&m, NULL, &f, &err), &err);
  CHECK(f.total_by_kind[SKS_FINDING_HIERARCHY_CYCLE] == 1);
  CHECK(f.count == 2);
  sks_findings_free(&f);
  /* Order violation without a cycle: tip's parent index after it. */
  m.skeleton.parents[2] = 1;
  m.skeleton.parents[1] = 2; /* mid's parent = tip, tip's parent = mid: cycle of 2 */
  CHECK_OK(sks_check(&m, NULL, &f, &err), &err);
  CHECK(f.total_by_kind[SKS_FINDING_HIERARCHY_CYCLE] == 1);
  sks_findings_free(&f);
  m.skeleton.parents[1] = 0;
  m.skeleton.parents[2] = 5; /* out of range */
  sks_finding one = check_one(&m, NULL, "parent range");
  CHECK(one.kind == SKS_FINDING_HIERARCHY_ORDER && one.joint == 2);
  CHECK(strstr(one.message, "joint 2 'tip': parent index 5 is out of range") != NULL);
  sks_model_free(&m);
}

static void test_nonfinite_position(void) {
  sks_model m;
  make_model(&m);
  m.parts[1].positions[3 * 2 + 1] = NAN;
  sks_finding f = check_one(&m, NULL, "position");
  CHECK(f.kind == SKS_FINDING_NONFINITE_POSITION);
  CHECK(f.part == 1 && f.vertex == 2 && f.joint == -1);
  CHECK(strstr(f.message, "Proc.glb: part 1 'leg', vertex 2: position is not finite") == f.message);
  sks_model_free(&m);
}

static void test_index_range(void) {
  sks_model m;
  make_model(&m);
  m.parts[0].indices[4] = 9;
  sks_finding f = check_one(&m, NULL, "index");
  CHECK(f.kind == SKS_FINDING_INDEX_RANGE && f.part == 0 && f.vertex == 9);
  CHECK(strstr(f.message, "part 0 'body', triangle 1: vertex index 9 is out of range") != NULL);
  m.parts[0].indices[4] = 3;
  m.parts[0].skin = 4;
  f = check_one(&m, NULL, "skin index");
  CHECK(f.kind == SKS_FINDING_INDEX_RANGE && f.part == 0);
  sks_model_free(&m);
}

static void test_too_many_and_limit(void) {
  sks_model m;
  make_model(&m);
  /* Part 1 has 4 non-zero influences per vertex: with a limit of 2, each of
   * its 3 vertices is a warning. */
  sks_check_options o = {0, 2, 0};
  sks_findings f;
  sks_error err;
  CHECK_OK(sks_check(&m, &o, &f, &err), &err);
  CHECK(f.count == 3);
  CHECK(f.total_by_kind[SKS_FINDING_TOO_MANY_INFLUENCES] == 3);
  CHECK(f.warning_count == 3 && f.error_count == 0);
  if (f.count == 3) {
    CHECK(f.items[2].part == 1 && f.items[2].vertex == 2);
    CHECK(f.items[0].severity == SKS_SEVERITY_WARNING);
    CHECK(strstr(f.items[0].message, "4 non-zero influences, more than the limit of 2") != NULL);
  }
  sks_findings_free(&f);

  /* max_items caps the stored list but not the counts. */
  sks_check_options cap = {0, 1, 2};
  CHECK_OK(sks_check(&m, &cap, &f, &err), &err);
  CHECK(f.count == 2);
  CHECK(f.total_by_kind[SKS_FINDING_TOO_MANY_INFLUENCES] == 7);
  sks_findings_free(&f);

  CHECK(sks_limit_influences(&m, 0, &err) == SKS_ERR_ARGUMENT);
  CHECK(sks_limit_influences(&m, 9, &err) == SKS_ERR_ARGUMENT);
  CHECK_OK(sks_limit_influences(&m, 2, &err), &err);
  CHECK(m.parts[0].influence_count == 2); /* already within the limit: untouched */
  CHECK(m.parts[0].weights[0] == 0.5f);
  CHECK(m.parts[1].influence_count == 2);
  /* 0.4 (joint 2), 0.3 (joint 1) -> 4/7, 3/7 */
  for (int v = 0; v < 3; ++v) {
    CHECK(m.parts[1].joints[2 * v] == 2 && m.parts[1].joints[2 * v + 1] == 1);
    CHECK_NEAR(m.parts[1].weights[2 * v], 4.0 / 7.0, 1e-6);
    CHECK_NEAR(m.parts[1].weights[2 * v + 1], 3.0 / 7.0, 1e-6);
  }
  CHECK_OK(sks_check(&m, &o, &f, &err), &err);
  CHECK(f.count == 0);
  sks_findings_free(&f);

  /* Limit to 1: the largest wins, weight 1. */
  CHECK_OK(sks_limit_influences(&m, 1, &err), &err);
  CHECK(m.parts[1].influence_count == 1 && m.parts[1].joints[0] == 2 && m.parts[1].weights[0] == 1.0f);
  CHECK(m.parts[0].influence_count == 1 && m.parts[0].joints[0] == 0 && m.parts[0].weights[0] == 1.0f);
  sks_model_free(&m);
}

static void test_limit_picks_largest_not_first(void) {
  sks_model m;
  make_model(&m);
  /* part 1 vertex 0: weights ascending by slot; the two largest are the last. */
  const float w[4] = {0.1f, 0.2f, 0.3f, 0.4f};
  const uint16_t j[4] = {0, 1, 2, 0};
  memcpy(m.parts[1].weights, w, sizeof w);
  memcpy(m.parts[1].joints, j, sizeof j);
  sks_error err;
  CHECK_OK(sks_limit_influences(&m, 2, &err), &err);
  CHECK(m.parts[1].joints[0] == 0 && m.parts[1].joints[1] == 2);
  CHECK_NEAR(m.parts[1].weights[0], 0.4 / 0.7, 1e-6);
  CHECK_NEAR(m.parts[1].weights[1], 0.3 / 0.7, 1e-6);
  sks_model_free(&m);
}

static void test_rigid_part(void) {
  sks_model m;
  make_model(&m);
  sks_mesh_part *p = &m.parts[1];
  p->skin = -1;
  p->influence_count = 0;
  free(p->joints); p->joints = NULL;
  free(p->weights); p->weights = NULL;
  sks_findings f;
  sks_error err;
  CHECK_OK(sks_check(&m, NULL, &f, &err), &err);
  CHECK(f.count == 0);
  sks_findings_free(&f);
  p->node = 3;
  sks_finding one = check_one(&m, NULL, "rigid node");
  CHECK(one.kind == SKS_FINDING_INDEX_RANGE && one.part == 1 && one.joint == 3);
  sks_repair_report r;
  CHECK_OK(sks_repair(&m, &r, &err), &err); /* rigid parts are left alone */
  sks_model_free(&m);
}

static void test_kind_names(void) {
  CHECK(strcmp(sks_finding_kind_name(SKS_FINDING_WEIGHT_SUM), "weight_sum") == 0);
  CHECK(strcmp(sks_finding_kind_name(SKS_FINDING_NONFINITE_POSITION), "nonfinite_position") == 0);
  for (int k = 0; k < SKS_FINDING_KIND_COUNT; ++k)
    CHECK(strcmp(sks_finding_kind_name((sks_finding_kind)k), "unknown") != 0);
  CHECK(SKS_FINDING_KIND_COUNT <= 16);
}

int main(void) {
  test_clean();
  test_weight_sum_and_repair();
  test_tolerance();
  test_negative();
  test_nan();
  test_zero();
  test_joint_range();
  test_bind_singular();
  test_hierarchy();
  test_nonfinite_position();
  test_index_range();
  test_too_many_and_limit();
  test_limit_picks_largest_not_first();
  test_rigid_part();
  test_kind_names();
  return sks_test_finish();
}
