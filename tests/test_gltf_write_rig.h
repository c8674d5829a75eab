/* Shared by tests/test_gltf_write*.c: a procedural rig with exact answers,
 * a minimal GLB parser (cJSON) to read accessors back independently of the
 * library's reader, and the glTF validator runner. */
#ifndef TEST_GLTF_WRITE_RIG_H
#define TEST_GLTF_WRITE_RIG_H

#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sks_test.h"
#include "math/sks_math.h"

#if defined(__GNUC__)
#define TGW_UNUSED __attribute__((unused))
#else
#define TGW_UNUSED
#endif

static char *tgw_strdup(const char *s) {
  char *d = malloc(strlen(s) + 1);
  strcpy(d, s);
  return d;
}

static sks_transform tgw_trs(float tx, float ty, float tz, sks_quat r, float s) {
  sks_transform t = {{tx, ty, tz}, r, {s, s, s}};
  return t;
}

/* Joints (parent-first):
 *   0 root (rest rotated -90 deg about X, like Fox's _rootJoint)
 *   1 hip  2 knee  3 ankle  4 toe (leaf)   -- a chain along +Y
 *   5 prop (child of ankle, holds a rigid part; not in the skin)
 *   6 tail (child of hip, leaf)
 * Skin joints in a shuffled order: {3, 1, 2, 6, 4}. Bind pose = straight
 * chain (no local rotations), rest pose = bent, so rest != bind.
 * Part 0: skinned tube (6 influence slots -> JOINTS_1), part 1: skinned cap
 * (2 slots), both on node 0 with skin 0; part 2: rigid box on node 5.
 * Clip "wave": LINEAR, STEP and CUBICSPLINE tracks. */
enum { TGW_JOINTS = 7, TGW_RING = 8, TGW_RINGS = 13 };

static void tgw_bind_locals(sks_transform *b) {
  sks_quat id = sks_q_identity();
  b[0] = tgw_trs(0, 0, 0, sks_q_from_axis_angle(sks_v3(1, 0, 0), -1.5707963f), 1);
  b[1] = tgw_trs(0, 0.2f, 0, id, 1);
  b[2] = tgw_trs(0, 1, 0, id, 1);
  b[3] = tgw_trs(0, 1, 0, id, 1);
  b[4] = tgw_trs(0, 0.5f, 0, id, 1);
  b[5] = tgw_trs(0.3f, 0, 0, id, 1);
  b[6] = tgw_trs(0, 0, -0.5f, id, 1);
}

static TGW_UNUSED void tgw_make_rig(sks_model *m) {
  static const int32_t parents[TGW_JOINTS] = {-1, 0, 1, 2, 3, 3, 1};
  static const char *names[TGW_JOINTS] = {"root", "hip", "knee", "ankle", "toe", "prop", "tail"};
  static const int32_t skin_joints[5] = {3, 1, 2, 6, 4};
  memset(m, 0, sizeof *m);
  m->source_path = tgw_strdup("procedural");
  sks_skeleton *sk = &m->skeleton;
  sk->joint_count = TGW_JOINTS;
  sk->names = calloc(TGW_JOINTS, sizeof(char *));
  sk->parents = malloc(sizeof parents);
  memcpy(sk->parents, parents, sizeof parents);
  sk->rest = malloc(TGW_JOINTS * sizeof(sks_transform));
  sks_transform bind[TGW_JOINTS];
  tgw_bind_locals(bind);
  for (int i = 0; i < TGW_JOINTS; ++i) {
    sk->names[i] = tgw_strdup(names[i]);
    sk->rest[i] = bind[i];
  }
  /* Rest differs from bind: bent knee, turned hip, scaled tail. */
  sk->rest[1].rotation = sks_q_from_axis_angle(sks_v3(0, 0, 1), 0.3f);
  sk->rest[2].rotation = sks_q_from_axis_angle(sks_v3(1, 0, 0), 0.6f);
  sk->rest[6].scale = sks_v3(1.5f, 1.5f, 1.5f);

  sks_mat4 bm[TGW_JOINTS];
  sks_local_to_model_job fk = {parents, bind, TGW_JOINTS, NULL, bm};
  sks_local_to_model_job_run(&fk);

  m->skin_count = 1;
  m->skins = calloc(1, sizeof(sks_skin));
  m->skins[0].name = tgw_strdup("skin");
  m->skins[0].joint_count = 5;
  m->skins[0].joints = malloc(sizeof skin_joints);
  memcpy(m->skins[0].joints, skin_joints, sizeof skin_joints);
  m->skins[0].inverse_bind = malloc(5 * sizeof(sks_mat4));
  for (int j = 0; j < 5; ++j) sks_m4_inverse(&bm[skin_joints[j]], &m->skins[0].inverse_bind[j]);

  m->part_count = 3;
  m->parts = calloc(3, sizeof(sks_mesh_part));
  /* Part 0: tube around the chain, y in root-local from 0.2 to 2.7. */
  sks_mesh_part *p = &m->parts[0];
  p->name = tgw_strdup("tube");
  p->material = 0;
  p->skin = 0;
  p->node = 0;
  p->vertex_count = TGW_RING * TGW_RINGS;
  p->positions = malloc(p->vertex_count * 3 * sizeof(float));
  p->normals = malloc(p->vertex_count * 3 * sizeof(float));
  p->uvs = malloc(p->vertex_count * 2 * sizeof(float));
  p->influence_count = 6;
  p->joints = calloc(p->vertex_count * 6, sizeof(uint16_t));
  p->weights = calloc(p->vertex_count * 6, sizeof(float));
  /* joint heights (root-local y) of skin joints 0..4: ankle, hip, knee, tail, toe */
  static const float jy[5] = {2.2f, 0.2f, 1.2f, 0.2f, 2.7f};
  for (int r = 0; r < TGW_RINGS; ++r)
    for (int k = 0; k < TGW_RING; ++k) {
      size_t v = (size_t)r * TGW_RING + (size_t)k;
      float a = 6.2831853f * (float)k / TGW_RING, y = 0.2f + 2.5f * (float)r / (TGW_RINGS - 1);
      sks_vec3 local = sks_v3(0.2f * cosf(a), y, 0.2f * sinf(a));
      sks_vec3 nl = sks_v3(cosf(a), 0, sinf(a));
      sks_vec3 x = sks_m4_point(&bm[0], local), n = sks_m4_vector(&bm[0], nl);
      memcpy(&p->positions[3 * v], &x, sizeof x);
      memcpy(&p->normals[3 * v], &n, sizeof n);
      p->uvs[2 * v] = (float)k / TGW_RING;
      p->uvs[2 * v + 1] = (float)r / (TGW_RINGS - 1);
      double w[5], sum = 0;
      for (int j = 0; j < 5; ++j) {
        double d = fabs((double)y - jy[j]) + (j == 3 ? 0.4 : 0.0);
        w[j] = 1.0 / pow(d + 0.1, 4);
        sum += w[j];
      }
      /* slots: joints 0..4 then one unused slot (weight 0) */
      float fs = 0;
      for (int j = 0; j < 5; ++j) {
        p->joints[v * 6 + (size_t)j] = (uint16_t)j;
        p->weights[v * 6 + (size_t)j] = (float)(w[j] / sum);
        fs += p->weights[v * 6 + (size_t)j];
      }
      p->weights[v * 6] += 1.0f - fs;
      p->joints[v * 6 + 5] = 3; /* zero weight slot with a nonzero joint */
    }
  p->index_count = (size_t)(TGW_RINGS - 1) * TGW_RING * 6;
  p->indices = malloc(p->index_count * sizeof(uint32_t));
  size_t ii = 0;
  for (int r = 0; r + 1 < TGW_RINGS; ++r)
    for (int k = 0; k < TGW_RING; ++k) {
      uint32_t a = (uint32_t)(r * TGW_RING + k), b = (uint32_t)(r * TGW_RING + (k + 1) % TGW_RING);
      uint32_t c = a + TGW_RING, d = b + TGW_RING;
      p->indices[ii++] = a; p->indices[ii++] = c; p->indices[ii++] = b;
      p->indices[ii++] = b; p->indices[ii++] = c; p->indices[ii++] = d;
    }
  /* Part 1: cap at the toe, 2 influences (toe, ankle), no normals/uvs. */
  p = &m->parts[1];
  p->name = tgw_strdup("cap");
  p->material = 0;
  p->skin = 0;
  p->node = 0;
  p->vertex_count = 4;
  p->positions = malloc(12 * sizeof(float));
  p->influence_count = 2;
  p->joints = malloc(8 * sizeof(uint16_t));
  p->weights = malloc(8 * sizeof(float));
  for (int k = 0; k < 4; ++k) {
    sks_vec3 local = sks_v3(k == 3 ? 0 : 0.2f * cosf(2.0944f * (float)k), k == 3 ? 2.9f : 2.7f,
                            k == 3 ? 0 : 0.2f * sinf(2.0944f * (float)k));
    sks_vec3 x = sks_m4_point(&bm[0], local);
    memcpy(&p->positions[3 * k], &x, sizeof x);
    p->joints[2 * k] = 4; p->weights[2 * k] = k == 3 ? 1.0f : 0.75f;
    p->joints[2 * k + 1] = 0; p->weights[2 * k + 1] = k == 3 ? 0.0f : 0.25f;
  }
  p->index_count = 9;
  p->indices = malloc(9 * sizeof(uint32_t));
  static const uint32_t cap_idx[9] = {0, 1, 3, 1, 2, 3, 2, 0, 3};
  memcpy(p->indices, cap_idx, sizeof cap_idx);
  /* Part 2: rigid quad box on prop (node 5), in the node's local space. */
  p = &m->parts[2];
  p->name = tgw_strdup("prop_box");
  p->material = 1;
  p->skin = -1;
  p->node = 5;
  p->vertex_count = 4;
  p->positions = malloc(12 * sizeof(float));
  p->normals = malloc(12 * sizeof(float));
  p->uvs = malloc(8 * sizeof(float));
  static const float quad[12] = {0, 0, 0, 0.1f, 0, 0, 0.1f, 0.1f, 0, 0, 0.1f, 0};
  memcpy(p->positions, quad, sizeof quad);
  for (int k = 0; k < 4; ++k) {
    p->normals[3 * k] = 0; p->normals[3 * k + 1] = 0; p->normals[3 * k + 2] = 2; /* not unit on purpose */
    p->uvs[2 * k] = quad[3 * k] * 10; p->uvs[2 * k + 1] = quad[3 * k + 1] * 10;
  }
  p->index_count = 6;
  p->indices = malloc(6 * sizeof(uint32_t));
  static const uint32_t quad_idx[6] = {0, 1, 2, 0, 2, 3};
  memcpy(p->indices, quad_idx, sizeof quad_idx);

  m->material_count = 2;
  m->materials = calloc(2, sizeof(sks_material));
  for (int i = 0; i < 2; ++i) { /* no textures; factors 0 as the rig always had */
    sks_material_init(&m->materials[i]);
    m->materials[i].metallic = m->materials[i].roughness = 0.0f;
  }
  m->materials[0].name = tgw_strdup("skin_mat");
  m->materials[0].base_color[0] = 0.8f; m->materials[0].base_color[1] = 0.5f;
  m->materials[0].base_color[2] = 0.3f; m->materials[0].base_color[3] = 1.0f;
  m->materials[1].name = tgw_strdup("prop_mat");
  m->materials[1].base_color[0] = 0.1f; m->materials[1].base_color[1] = 0.2f;
  m->materials[1].base_color[2] = 0.9f; m->materials[1].base_color[3] = 0.5f;

  m->clip_count = 1;
  m->clips = calloc(1, sizeof(sks_clip));
  sks_clip *c = &m->clips[0];
  c->name = tgw_strdup("wave");
  c->duration = 1.0f;
  c->track_count = 5;
  c->tracks = calloc(5, sizeof(sks_track));
  /* hip rotation, LINEAR, 3 keys */
  sks_track *t = &c->tracks[0];
  t->joint = 1; t->path = SKS_PATH_ROTATION; t->interpolation = SKS_INTERP_LINEAR; t->key_count = 3;
  t->times = malloc(3 * sizeof(float)); t->values = malloc(12 * sizeof(float));
  for (int k = 0; k < 3; ++k) {
    t->times[k] = 0.5f * (float)k;
    sks_quat q = sks_q_from_axis_angle(sks_v3(0, 0, 1), 0.4f * (float)k - 0.2f);
    memcpy(&t->values[4 * k], &q, sizeof q);
  }
  /* knee rotation, CUBICSPLINE, 2 keys (in-tangent, value, out-tangent) */
  t = &c->tracks[1];
  t->joint = 2; t->path = SKS_PATH_ROTATION; t->interpolation = SKS_INTERP_CUBICSPLINE; t->key_count = 2;
  t->times = malloc(2 * sizeof(float)); t->values = calloc(24, sizeof(float));
  t->times[0] = 0.0f; t->times[1] = 1.0f;
  for (int k = 0; k < 2; ++k) {
    sks_quat q = sks_q_from_axis_angle(sks_v3(1, 0, 0), 0.8f * (float)k);
    memcpy(&t->values[12 * k + 4], &q, sizeof q);
    t->values[12 * k + 0] = 0.05f; t->values[12 * k + 8] = 0.05f; /* small tangents */
  }
  /* ankle translation, STEP, 2 keys */
  t = &c->tracks[2];
  t->joint = 3; t->path = SKS_PATH_TRANSLATION; t->interpolation = SKS_INTERP_STEP; t->key_count = 2;
  t->times = malloc(2 * sizeof(float)); t->values = malloc(6 * sizeof(float));
  t->times[0] = 0.0f; t->times[1] = 0.5f;
  t->values[0] = 0; t->values[1] = 1; t->values[2] = 0;
  t->values[3] = 0.1f; t->values[4] = 1.1f; t->values[5] = 0;
  /* tail scale, LINEAR, shares hip's times */
  t = &c->tracks[3];
  t->joint = 6; t->path = SKS_PATH_SCALE; t->interpolation = SKS_INTERP_LINEAR; t->key_count = 3;
  t->times = malloc(3 * sizeof(float)); t->values = malloc(9 * sizeof(float));
  for (int k = 0; k < 3; ++k) {
    t->times[k] = 0.5f * (float)k;
    for (int q = 0; q < 3; ++q) t->values[3 * k + q] = 1.0f + 0.25f * (float)k;
  }
  /* root translation, LINEAR */
  t = &c->tracks[4];
  t->joint = 0; t->path = SKS_PATH_TRANSLATION; t->interpolation = SKS_INTERP_LINEAR; t->key_count = 2;
  t->times = malloc(2 * sizeof(float)); t->values = malloc(6 * sizeof(float));
  t->times[0] = 0.0f; t->times[1] = 1.0f;
  t->values[0] = 0; t->values[1] = 0; t->values[2] = 0;
  t->values[3] = 0.5f; t->values[4] = 0; t->values[5] = 0.25f;
}

/* ---- a minimal GLB reader (independent of the library's) ---------------- */

typedef struct tgw_glb {
  cJSON *json;
  unsigned char *file;
  size_t file_size;
  const unsigned char *bin;
  size_t bin_size;
  int aligned; /* header, chunks and every bufferView/accessor 4-byte aligned */
} tgw_glb;

static uint32_t tgw_u32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static TGW_UNUSED int tgw_glb_open(const char *path, tgw_glb *g) {
  memset(g, 0, sizeof *g);
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  g->file = malloc((size_t)n);
  g->file_size = fread(g->file, 1, (size_t)n, f);
  fclose(f);
  if (g->file_size < 20 || tgw_u32(g->file) != 0x46546C67u || tgw_u32(g->file + 8) != g->file_size) return 0;
  uint32_t jlen = tgw_u32(g->file + 12);
  if (tgw_u32(g->file + 16) != 0x4E4F534Au || 20 + (size_t)jlen > g->file_size) return 0;
  g->json = cJSON_ParseWithLength((const char *)g->file + 20, jlen);
  g->aligned = g->file_size % 4 == 0 && jlen % 4 == 0;
  size_t off = 20 + jlen;
  if (off + 8 <= g->file_size) {
    uint32_t blen = tgw_u32(g->file + off);
    if (tgw_u32(g->file + off + 4) != 0x004E4942u || off + 8 + blen > g->file_size) return 0;
    g->bin = g->file + off + 8;
    g->bin_size = blen;
    g->aligned = g->aligned && blen % 4 == 0;
  }
  cJSON *views = cJSON_GetObjectItem(g->json, "bufferViews"), *v;
  cJSON_ArrayForEach(v, views) {
    cJSON *bo = cJSON_GetObjectItem(v, "byteOffset");
    if (bo && (int)bo->valuedouble % 4) g->aligned = 0;
  }
  return g->json != NULL;
}

static TGW_UNUSED void tgw_glb_close(tgw_glb *g) {
  cJSON_Delete(g->json);
  free(g->file);
  memset(g, 0, sizeof *g);
}

static int tgw_int(const cJSON *o, const char *key, int dflt) {
  const cJSON *x = cJSON_GetObjectItem(o, key);
  return cJSON_IsNumber(x) ? x->valueint : dflt;
}

/* Reads accessor `index` as floats (converting integer types). Returns a
 * malloc'd array of count*ncomp floats, or NULL. */
static TGW_UNUSED float *tgw_accessor(const tgw_glb *g, int index, size_t *count, int *ncomp) {
  const cJSON *acc = cJSON_GetArrayItem(cJSON_GetObjectItem(g->json, "accessors"), index);
  if (!acc) return NULL;
  const cJSON *view = cJSON_GetArrayItem(cJSON_GetObjectItem(g->json, "bufferViews"),
                                         tgw_int(acc, "bufferView", -1));
  if (!view) return NULL;
  const char *type = cJSON_GetObjectItem(acc, "type")->valuestring;
  int nc = !strcmp(type, "SCALAR") ? 1 : !strcmp(type, "VEC2") ? 2 : !strcmp(type, "VEC3") ? 3
         : !strcmp(type, "VEC4") ? 4 : !strcmp(type, "MAT4") ? 16 : 0;
  int ct = tgw_int(acc, "componentType", 0);
  size_t n = (size_t)tgw_int(acc, "count", 0);
  size_t off = (size_t)tgw_int(view, "byteOffset", 0) + (size_t)tgw_int(acc, "byteOffset", 0);
  size_t cs = ct == 5126 || ct == 5125 ? 4 : ct == 5123 ? 2 : 1;
  if (tgw_int(view, "byteStride", 0) || off % cs || off + n * (size_t)nc * cs > g->bin_size) return NULL;
  float *out = malloc(n * (size_t)nc * sizeof(float) + 1);
  for (size_t i = 0; i < n * (size_t)nc; ++i) {
    const unsigned char *p = g->bin + off + i * cs;
    if (ct == 5126) memcpy(&out[i], p, 4);
    else if (ct == 5125) out[i] = (float)tgw_u32(p);
    else if (ct == 5123) out[i] = (float)(p[0] | p[1] << 8);
    else out[i] = (float)p[0];
  }
  *count = n;
  *ncomp = nc;
  return out;
}

/* ---- the validator -------------------------------------------------------- */

/* 1 when tools/node_modules has gltf-validator and node runs. */
static TGW_UNUSED int tgw_validator_available(void) {
  char p[4096];
  snprintf(p, sizeof p, "%s/tools/node_modules/gltf-validator/package.json", SKS_SOURCE_DIR);
  return access(p, R_OK) == 0 && system("node --version > /dev/null 2>&1") == 0;
}

/* Runs tools/validate_gltf.mjs on `files` (one or more single-quoted paths,
 * or one plain path); returns its exit code (0 = no errors). */
static TGW_UNUSED int tgw_validate(const char *files) {
  size_t n = strlen(files) + strlen(SKS_SOURCE_DIR) + 64;
  char *cmd = malloc(n);
  if (files[0] == '\'')
    snprintf(cmd, n, "node '%s/tools/validate_gltf.mjs' %s", SKS_SOURCE_DIR, files);
  else
    snprintf(cmd, n, "node '%s/tools/validate_gltf.mjs' '%s'", SKS_SOURCE_DIR, files);
  fflush(stdout);
  fflush(stderr);
  int rc = system(cmd);
  free(cmd);
  return rc == -1 ? -1 : (rc >> 8) & 0xff;
}

#endif

#ifndef TEST_GLTF_WRITE_RIG_LBS
#define TEST_GLTF_WRITE_RIG_LBS
/* Reference LBS of every skinned part at the given locals, written in part
 * order (skinned parts only). Returns a malloc'd array (3 per vertex). */
static TGW_UNUSED float *tgw_skin_at(const sks_model *m, const sks_transform *locals) {
  size_t jc = m->skeleton.joint_count, nv = sks_model_vertex_count(m);
  sks_mat4 *models = malloc((jc ? jc : 1) * sizeof *models);
  float *out = malloc((nv ? nv : 1) * 3 * sizeof(float));
  sks_local_to_model_job fk = {m->skeleton.parents, locals, jc, NULL, models};
  sks_local_to_model_job_run(&fk);
  size_t o = 0;
  for (size_t p = 0; p < m->part_count; ++p) {
    const sks_mesh_part *part = &m->parts[p];
    if (part->skin < 0) continue;
    const sks_skin *skin = &m->skins[part->skin];
    for (size_t v = 0; v < part->vertex_count; ++v, ++o) {
      sks_vec3 x = sks_v3(part->positions[3 * v], part->positions[3 * v + 1], part->positions[3 * v + 2]);
      double acc[3] = {0, 0, 0};
      for (uint32_t i = 0; i < part->influence_count; ++i) {
        float w = part->weights[v * part->influence_count + i];
        if (w == 0.0f) continue;
        uint16_t j = part->joints[v * part->influence_count + i];
        sks_mat4 pal = sks_m4_mul(&models[skin->joints[j]], &skin->inverse_bind[j]);
        sks_vec3 y = sks_m4_point(&pal, x);
        acc[0] += (double)w * y.x; acc[1] += (double)w * y.y; acc[2] += (double)w * y.z;
      }
      for (int c = 0; c < 3; ++c) out[3 * o + (size_t)c] = (float)acc[c];
    }
  }
  free(models);
  return out;
}

/* Bind positions of the skinned parts, in part order. */
static TGW_UNUSED float *tgw_bind_positions(const sks_model *m) {
  size_t nv = sks_model_vertex_count(m), o = 0;
  float *out = malloc((nv ? nv : 1) * 3 * sizeof(float));
  for (size_t p = 0; p < m->part_count; ++p)
    if (m->parts[p].skin >= 0) {
      memcpy(out + 3 * o, m->parts[p].positions, m->parts[p].vertex_count * 3 * sizeof(float));
      o += m->parts[p].vertex_count;
    }
  return out;
}
#endif
