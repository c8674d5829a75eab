/* Native glTF reader: small glTF files written by the test itself (JSON with
 * base64 data URIs, or .glb built in memory) with exact expected answers,
 * plus the real files in ../shared/data and assimp-testmodels. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "io/gltf_source.h"
#include "math/sks_math.h"

/* ---- a tiny glTF builder -------------------------------------------------- */

typedef struct tb {
  uint8_t bin[1 << 16];
  size_t size;
  cJSON *root;
} tb;

static tb B; /* one builder at a time; big, so static */

static cJSON *tb_arr(const char *key) {
  cJSON *a = cJSON_GetObjectItemCaseSensitive(B.root, key);
  return a ? a : cJSON_AddArrayToObject(B.root, key);
}

static void tb_begin(void) {
  if (B.root) cJSON_Delete(B.root);
  memset(B.bin, 0, sizeof B.bin);
  B.size = 0;
  B.root = cJSON_Parse("{\"asset\":{\"version\":\"2.0\"}}");
}

static int tb_count(const char *key) { return cJSON_GetArraySize(tb_arr(key)); }

/* Adds raw bytes as a bufferView (4-byte aligned); returns its index. */
static int tb_view(const void *data, size_t bytes, int stride) {
  size_t off = (B.size + 3) & ~(size_t)3;
  memcpy(B.bin + off, data, bytes);
  B.size = off + bytes;
  cJSON *v = cJSON_CreateObject();
  cJSON_AddNumberToObject(v, "buffer", 0);
  cJSON_AddNumberToObject(v, "byteOffset", (double)off);
  cJSON_AddNumberToObject(v, "byteLength", (double)bytes);
  if (stride) cJSON_AddNumberToObject(v, "byteStride", stride);
  int i = tb_count("bufferViews");
  cJSON_AddItemToArray(tb_arr("bufferViews"), v);
  return i;
}

static int tb_acc(int view, size_t off, int ctype, size_t count, const char *type, int normalized) {
  cJSON *a = cJSON_CreateObject();
  if (view >= 0) cJSON_AddNumberToObject(a, "bufferView", view);
  if (off) cJSON_AddNumberToObject(a, "byteOffset", (double)off);
  cJSON_AddNumberToObject(a, "componentType", ctype);
  cJSON_AddNumberToObject(a, "count", (double)count);
  cJSON_AddStringToObject(a, "type", type);
  if (normalized) cJSON_AddBoolToObject(a, "normalized", 1);
  int i = tb_count("accessors");
  cJSON_AddItemToArray(tb_arr("accessors"), a);
  return i;
}

static size_t type_comps(const char *t) {
  return !strcmp(t, "SCALAR") ? 1 : !strcmp(t, "VEC2") ? 2 : !strcmp(t, "VEC3") ? 3
         : !strcmp(t, "VEC4") ? 4 : 16;
}
static size_t ct_bytes(int ct) { return ct == 5120 || ct == 5121 ? 1 : ct == 5122 || ct == 5123 ? 2 : 4; }

/* Tightly packed data -> view + accessor. */
static int tb_data(const void *data, int ctype, size_t count, const char *type, int normalized) {
  int v = tb_view(data, count * type_comps(type) * ct_bytes(ctype), 0);
  return tb_acc(v, 0, ctype, count, type, normalized);
}

/* Sets root[key] from printf-formatted JSON text. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void tb_set(const char *key, const char *fmt, ...) {
  char text[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  cJSON *j = cJSON_Parse(text);
  if (!j) { fprintf(stderr, "test JSON does not parse: %s\n", text); exit(2); }
  cJSON_DeleteItemFromObjectCaseSensitive(B.root, key);
  cJSON_AddItemToObject(B.root, key, j);
}

static char *b64(const uint8_t *d, size_t n) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *o = malloc(n / 3 * 4 + 8), *p = o;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) | (i + 2 < n ? d[i + 2] : 0);
    *p++ = tab[v >> 18 & 63];
    *p++ = tab[v >> 12 & 63];
    *p++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
    *p++ = i + 2 < n ? tab[v & 63] : '=';
  }
  *p = 0;
  return o;
}

/* JSON text: buffer 0 as a data URI (glb = 0) or as the GLB BIN chunk. */
static char *tb_json(int glb) {
  cJSON_DeleteItemFromObjectCaseSensitive(B.root, "buffers");
  cJSON *bufs = cJSON_AddArrayToObject(B.root, "buffers"), *b = cJSON_CreateObject();
  cJSON_AddNumberToObject(b, "byteLength", (double)B.size);
  if (!glb) {
    char *enc = b64(B.bin, B.size);
    char *uri = malloc(strlen(enc) + 64);
    sprintf(uri, "data:application/octet-stream;base64,%s", enc);
    cJSON_AddStringToObject(b, "uri", uri);
    free(enc);
    free(uri);
  }
  cJSON_AddItemToArray(bufs, b);
  return cJSON_PrintUnformatted(B.root);
}

static void put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}

/* GLB from JSON text and BIN bytes (either may be padded here). */
static uint8_t *make_glb(const char *json, size_t json_len, const uint8_t *bin, size_t bin_len,
                         size_t *size) {
  size_t jl = (json_len + 3) & ~(size_t)3, bl = (bin_len + 3) & ~(size_t)3;
  size_t n = 12 + 8 + jl + (bin ? 8 + bl : 0);
  uint8_t *o = calloc(n, 1);
  put32(o, 0x46546C67u); put32(o + 4, 2); put32(o + 8, (uint32_t)n);
  put32(o + 12, (uint32_t)jl); put32(o + 16, 0x4E4F534Au);
  memcpy(o + 20, json, json_len);
  memset(o + 20 + json_len, ' ', jl - json_len);
  if (bin) {
    put32(o + 20 + jl, (uint32_t)bl); put32(o + 24 + jl, 0x004E4942u);
    memcpy(o + 28 + jl, bin, bin_len);
  }
  *size = n;
  return o;
}

/* SKS_GLTF_CORPUS_DIR=dir: every generated case is also written there
 * (seed corpus for fuzz/fuzz_gltf.c). */
static void save_case(const void *data, size_t n, const char *ext) {
  static int counter = 0;
  const char *dir = getenv("SKS_GLTF_CORPUS_DIR");
  if (!dir) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/case_%03d.%s", dir, counter++, ext);
  FILE *f = fopen(path, "wb");
  if (f) {
    fwrite(data, 1, n, f);
    fclose(f);
  }
}

static sks_result tb_load(int glb, sks_model *m, sks_error *e) {
  char *json = tb_json(glb);
  sks_result r;
  if (glb) {
    size_t n;
    uint8_t *g = make_glb(json, strlen(json), B.bin, B.size, &n);
    save_case(g, n, "glb");
    r = sks_load_gltf_memory(g, n, NULL, "case.glb", m, e);
    free(g);
  } else {
    save_case(json, strlen(json), "gltf");
    r = sks_load_gltf_memory(json, strlen(json), NULL, "case.gltf", m, e);
  }
  free(json);
  return r;
}

/* ---- model comparison ---------------------------------------------------- */

static int mem_eq(const void *a, const void *b, size_t n) {
  if (!n) return 1;
  if (!a || !b) return a == b;
  return memcmp(a, b, n) == 0;
}
static int str_eq(const char *a, const char *b) { return (!a || !b) ? a == b : strcmp(a, b) == 0; }

/* Every array, bit for bit (source_path excepted). */
static int models_identical(const sks_model *a, const sks_model *b) {
  const sks_skeleton *sa = &a->skeleton, *sb = &b->skeleton;
  if (sa->joint_count != sb->joint_count || a->skin_count != b->skin_count ||
      a->part_count != b->part_count || a->material_count != b->material_count ||
      a->clip_count != b->clip_count)
    return 0;
  for (size_t i = 0; i < sa->joint_count; ++i)
    if (!str_eq(sa->names[i], sb->names[i])) return 0;
  if (!mem_eq(sa->parents, sb->parents, sa->joint_count * sizeof(int32_t)) ||
      !mem_eq(sa->rest, sb->rest, sa->joint_count * sizeof(sks_transform)))
    return 0;
  for (size_t i = 0; i < a->skin_count; ++i) {
    const sks_skin *x = &a->skins[i], *y = &b->skins[i];
    if (!str_eq(x->name, y->name) || x->joint_count != y->joint_count ||
        !mem_eq(x->joints, y->joints, x->joint_count * sizeof(int32_t)) ||
        !mem_eq(x->inverse_bind, y->inverse_bind, x->joint_count * sizeof(sks_mat4)))
      return 0;
  }
  for (size_t i = 0; i < a->part_count; ++i) {
    const sks_mesh_part *x = &a->parts[i], *y = &b->parts[i];
    size_t v = x->vertex_count, k = x->influence_count;
    if (!str_eq(x->name, y->name) || x->material != y->material || x->skin != y->skin ||
        x->node != y->node || v != y->vertex_count || k != y->influence_count ||
        x->index_count != y->index_count || !mem_eq(x->positions, y->positions, v * 12) ||
        !mem_eq(x->normals, y->normals, x->normals ? v * 12 : 0) || !x->normals != !y->normals ||
        !mem_eq(x->uvs, y->uvs, x->uvs ? v * 8 : 0) || !x->uvs != !y->uvs ||
        !mem_eq(x->joints, y->joints, v * k * 2) || !mem_eq(x->weights, y->weights, v * k * 4) ||
        !mem_eq(x->indices, y->indices, x->index_count * 4))
      return 0;
  }
  for (size_t i = 0; i < a->material_count; ++i)
    if (!str_eq(a->materials[i].name, b->materials[i].name) ||
        !mem_eq(a->materials[i].base_color, b->materials[i].base_color, 16))
      return 0;
  for (size_t i = 0; i < a->clip_count; ++i) {
    const sks_clip *x = &a->clips[i], *y = &b->clips[i];
    if (!str_eq(x->name, y->name) || x->duration != y->duration || x->track_count != y->track_count)
      return 0;
    for (size_t t = 0; t < x->track_count; ++t) {
      const sks_track *p = &x->tracks[t], *q = &y->tracks[t];
      size_t nv = p->key_count * sks_track_components(p->path) *
                  (p->interpolation == SKS_INTERP_CUBICSPLINE ? 3 : 1);
      if (p->joint != q->joint || p->path != q->path || p->interpolation != q->interpolation ||
          p->key_count != q->key_count || !mem_eq(p->times, q->times, p->key_count * 4) ||
          !mem_eq(p->values, q->values, nv * 4))
        return 0;
    }
  }
  return 1;
}

/* ---- the reference case: everything the reader maps ---------------------- */

static const float kPos[4][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
static const float kNrm[4][3] = {{0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {0, 0, 1}};
static const float kUv[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
static const uint8_t kJoints[4][4] = {{0, 1, 0, 0}, {0, 1, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}};
static const float kWeights[4][4] = {{0.2f, 0.8f, 0, 0}, {0.6f, 0.4f, 0, 0}, {1, 0, 0, 0}, {0.8f, 0.2f, 0, 0}};
static const uint16_t kIdx[6] = {0, 1, 2, 0, 2, 3};

/* Nodes: 0 "child" (child of 1), 1 "root", 2 mesh node; file order puts the
 * child first, so the skeleton must reorder it. */
static void build_reference(int weight_ctype, int joint_ctype) {
  tb_begin();
  int pos = tb_data(kPos, 5126, 4, "VEC3", 0);
  int nrm = tb_data(kNrm, 5126, 4, "VEC3", 0);
  int uv = tb_data(kUv, 5126, 4, "VEC2", 0);
  int jnt;
  if (joint_ctype == 5121) {
    jnt = tb_data(kJoints, 5121, 4, "VEC4", 0);
  } else {
    uint16_t j16[16];
    for (int i = 0; i < 16; ++i) j16[i] = kJoints[i / 4][i % 4];
    jnt = tb_data(j16, 5123, 4, "VEC4", 0);
  }
  int wgt;
  if (weight_ctype == 5126) {
    wgt = tb_data(kWeights, 5126, 4, "VEC4", 0);
  } else if (weight_ctype == 5121) {
    uint8_t w8[16];
    for (int i = 0; i < 16; ++i) w8[i] = (uint8_t)(kWeights[i / 4][i % 4] * 255.0f + 0.5f);
    wgt = tb_data(w8, 5121, 4, "VEC4", 1);
  } else {
    uint16_t w16[16];
    for (int i = 0; i < 16; ++i) w16[i] = (uint16_t)(kWeights[i / 4][i % 4] * 65535.0f + 0.5f);
    wgt = tb_data(w16, 5123, 4, "VEC4", 1);
  }
  int idx = tb_data(kIdx, 5123, 6, "SCALAR", 0);
  /* inverse bind: joint 0 (node 0 "child") translate(0,-1,0); joint 1 identity */
  float ibm[32] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -1, 0, 1,
                   1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  int ib = tb_data(ibm, 5126, 2, "MAT4", 0);
  float times[3] = {0, 0.5f, 2};
  int tin = tb_data(times, 5126, 3, "SCALAR", 0);
  float tr[9] = {0, 1, 0, 0, 2, 0, 0, 3, 0};
  int tout = tb_data(tr, 5126, 3, "VEC3", 0);
  float rot[12] = {0, 0, 0, 1, 0, 0, 0.70710678f, 0.70710678f, 0, 0, 1, 0};
  int rout = tb_data(rot, 5126, 3, "VEC4", 0);
  float sc[27]; /* CUBICSPLINE: in-tangent, value, out-tangent per key */
  for (int i = 0; i < 27; ++i) sc[i] = (float)i * 0.25f;
  int sout = tb_data(sc, 5126, 9, "VEC3", 0);
  tb_set("nodes",
         "[{\"name\":\"child\",\"translation\":[0,1,0]},"
         "{\"name\":\"root\",\"children\":[0],\"rotation\":[0,0,0.70710678,0.70710678],\"scale\":[2,2,2]},"
         "{\"mesh\":0,\"skin\":0}]");
  tb_set("scenes", "[{\"nodes\":[1,2]}]");
  tb_set("scene", "0");
  tb_set("meshes",
         "[{\"name\":\"quad\",\"primitives\":[{\"attributes\":{\"POSITION\":%d,\"NORMAL\":%d,"
         "\"TEXCOORD_0\":%d,\"JOINTS_0\":%d,\"WEIGHTS_0\":%d},\"indices\":%d,\"material\":0}]}]",
         pos, nrm, uv, jnt, wgt, idx);
  tb_set("materials",
         "[{\"name\":\"red\",\"pbrMetallicRoughness\":{\"baseColorFactor\":[1,0,0,0.5]}}]");
  tb_set("skins", "[{\"name\":\"rig\",\"joints\":[0,1],\"inverseBindMatrices\":%d}]", ib);
  tb_set("animations",
         "[{\"samplers\":[{\"input\":%d,\"output\":%d},"
         "{\"input\":%d,\"output\":%d,\"interpolation\":\"STEP\"},"
         "{\"input\":%d,\"output\":%d,\"interpolation\":\"CUBICSPLINE\"}],"
         "\"channels\":[{\"sampler\":0,\"target\":{\"node\":0,\"path\":\"translation\"}},"
         "{\"sampler\":1,\"target\":{\"node\":1,\"path\":\"rotation\"}},"
         "{\"sampler\":2,\"target\":{\"node\":0,\"path\":\"scale\"}},"
         "{\"sampler\":0,\"target\":{\"node\":0,\"path\":\"weights\"}}]}]",
         tin, tout, tin, rout, tin, sout);
}

static void test_reference(void) {
  build_reference(5126, 5121);
  sks_model m;
  sks_error e = {0};
  CHECK_OK(tb_load(0, &m, &e), &e);
  CHECK(m.skeleton.joint_count == 3);
  if (m.skeleton.joint_count == 3) {
    /* pre-order from scene roots [1, 2]: root(1), child(0), mesh node(2) */
    CHECK(!strcmp(m.skeleton.names[0], "root"));
    CHECK(!strcmp(m.skeleton.names[1], "child"));
    CHECK(!strcmp(m.skeleton.names[2], "node_2"));
    CHECK(m.skeleton.parents[0] == -1 && m.skeleton.parents[1] == 0 && m.skeleton.parents[2] == -1);
    CHECK(m.skeleton.rest[1].translation.y == 1.0f);
    CHECK_NEAR(m.skeleton.rest[0].rotation.z, 0.70710678, 1e-7);
    CHECK(m.skeleton.rest[0].scale.x == 2.0f && m.skeleton.rest[2].scale.z == 1.0f);
  }
  CHECK(m.skin_count == 1);
  if (m.skin_count == 1) {
    CHECK(!strcmp(m.skins[0].name, "rig"));
    CHECK(m.skins[0].joint_count == 2);
    CHECK(m.skins[0].joints[0] == 1 && m.skins[0].joints[1] == 0); /* remapped */
    CHECK(m.skins[0].inverse_bind[0].m[13] == -1.0f && m.skins[0].inverse_bind[1].m[13] == 0.0f);
  }
  CHECK(m.material_count == 1);
  if (m.material_count == 1) {
    CHECK(!strcmp(m.materials[0].name, "red"));
    CHECK(m.materials[0].base_color[0] == 1 && m.materials[0].base_color[1] == 0 &&
          m.materials[0].base_color[3] == 0.5f);
  }
  CHECK(m.part_count == 1);
  if (m.part_count == 1) {
    const sks_mesh_part *p = &m.parts[0];
    CHECK(!strcmp(p->name, "quad"));
    CHECK(p->skin == 0 && p->node == 2 && p->material == 0);
    CHECK(p->vertex_count == 4 && p->influence_count == 4 && p->index_count == 6);
    CHECK(mem_eq(p->positions, kPos, sizeof kPos));
    CHECK(p->normals && mem_eq(p->normals, kNrm, sizeof kNrm));
    CHECK(p->uvs && mem_eq(p->uvs, kUv, sizeof kUv));
    CHECK(mem_eq(p->weights, kWeights, sizeof kWeights));
    int jok = 1, iok = 1;
    for (int i = 0; i < 16; ++i) jok &= p->joints[i] == kJoints[i / 4][i % 4];
    for (int i = 0; i < 6; ++i) iok &= p->indices[i] == kIdx[i];
    CHECK(jok);
    CHECK(iok);
  }
  CHECK(m.clip_count == 1);
  if (m.clip_count == 1) {
    const sks_clip *c = &m.clips[0];
    CHECK(!strcmp(c->name, "animation_0"));
    CHECK(c->duration == 2.0f);
    CHECK(c->track_count == 3); /* the "weights" channel is ignored */
    if (c->track_count == 3) {
      CHECK(c->tracks[0].joint == 1 && c->tracks[0].path == SKS_PATH_TRANSLATION &&
            c->tracks[0].interpolation == SKS_INTERP_LINEAR && c->tracks[0].key_count == 3);
      CHECK(c->tracks[0].times[1] == 0.5f && c->tracks[0].values[7] == 3.0f);
      CHECK(c->tracks[1].joint == 0 && c->tracks[1].path == SKS_PATH_ROTATION &&
            c->tracks[1].interpolation == SKS_INTERP_STEP);
      CHECK(c->tracks[1].values[11] == 0.0f && c->tracks[1].values[10] == 1.0f);
      CHECK(c->tracks[2].joint == 1 && c->tracks[2].path == SKS_PATH_SCALE &&
            c->tracks[2].interpolation == SKS_INTERP_CUBICSPLINE && c->tracks[2].key_count == 3);
      /* key 1's value is element 4 of the 9 (in, value, out per key) */
      CHECK(c->tracks[2].values[4 * 3] == 3.0f && c->tracks[2].values[26] == 6.5f);
    }
  }
  /* The same content as .glb is the same model, every array bit for bit. */
  sks_model g;
  CHECK_OK(tb_load(1, &g, &e), &e);
  CHECK(models_identical(&m, &g));
  CHECK(!strcmp(g.source_path, "case.glb") && !strcmp(m.source_path, "case.gltf"));
  sks_model_free(&g);
  sks_model_free(&m);
}

/* Normalized ubyte / ushort weights and ubyte / ushort joints read as the
 * same numbers as float weights. */
static void test_weight_encodings(void) {
  sks_model ref, m;
  sks_error e = {0};
  build_reference(5126, 5121);
  CHECK_OK(tb_load(0, &ref, &e), &e);
  const int wtypes[2] = {5121, 5123}, jtypes[2] = {5121, 5123};
  for (int w = 0; w < 2; ++w)
    for (int j = 0; j < 2; ++j) {
      build_reference(wtypes[w], jtypes[j]);
      CHECK_OK(tb_load(1, &m, &e), &e);
      if (m.part_count == 1 && ref.part_count == 1) {
        CHECK(m.parts[0].influence_count == 4);
        CHECK_MSG(mem_eq(m.parts[0].joints, ref.parts[0].joints, 16 * sizeof(uint16_t)),
                  "joints ctype %d", jtypes[j]);
        double maxd = 0;
        for (int i = 0; i < 16; ++i)
          maxd = fmax(maxd, fabs((double)m.parts[0].weights[i] - ref.parts[0].weights[i]));
        CHECK_MSG(maxd == 0.0, "weights ctype %d differ from float by %g", wtypes[w], maxd);
      }
      sks_model_free(&m);
    }
  /* Unnormalized ubyte weights have no meaning: a clear error. */
  build_reference(5121, 5121);
  cJSON *acc = cJSON_GetArrayItem(tb_arr("accessors"), 4);
  cJSON_DeleteItemFromObjectCaseSensitive(acc, "normalized");
  CHECK(tb_load(0, &m, &e) == SKS_ERR_PARSE);
  CHECK_MSG(strstr(e.message, "case.gltf: accessor 4 (WEIGHTS_0 of mesh 0 primitive 0)") != NULL,
            "%s", e.message);
  /* Normalized joint indices are meaningless too. */
  build_reference(5126, 5121);
  cJSON_AddBoolToObject(cJSON_GetArrayItem(tb_arr("accessors"), 3), "normalized", 1);
  CHECK(tb_load(1, &m, &e) == SKS_ERR_PARSE);
  CHECK_MSG(strstr(e.message, "joint indices must not be normalized") != NULL, "%s", e.message);
  sks_model_free(&ref);
}

/* KHR_mesh_quantization: integer positions, normalized byte normals
 * (signed: max(c / 127, -1)), normalized unsigned byte UVs. Draco: refused. */
static void test_quantized(void) {
  tb_begin();
  const uint16_t qpos[12] = {0, 0, 0, 300, 0, 0, 300, 200, 0, 0, 200, 65535};
  const int8_t qn[12] = {127, 0, 0, -128, 0, 0, 0, -127, 0, 0, 64, 0};
  const uint8_t quv[8] = {0, 255, 51, 0, 0, 0, 255, 255};
  int pos = tb_data(qpos, 5123, 4, "VEC3", 0);
  int8_t qn4[16]; /* VEC3 of bytes padded to a 4-byte stride */
  for (int v = 0; v < 4; ++v) {
    memcpy(qn4 + v * 4, qn + v * 3, 3);
    qn4[v * 4 + 3] = 99;
  }
  int nacc = tb_acc(tb_view(qn4, sizeof qn4, 4), 0, 5120, 4, "VEC3", 1);
  int uv = tb_data(quv, 5121, 4, "VEC2", 1);
  tb_set("extensionsRequired", "[\"KHR_mesh_quantization\"]");
  tb_set("nodes", "[{\"mesh\":0,\"scale\":[0.01,0.01,0.01]}]");
  tb_set("meshes", "[{\"primitives\":[{\"attributes\":{\"POSITION\":%d,\"NORMAL\":%d,\"TEXCOORD_0\":%d}}]}]",
         pos, nacc, uv);
  sks_model m;
  sks_error e = {0};
  CHECK_OK(tb_load(1, &m, &e), &e);
  if (m.part_count == 1) {
    const sks_mesh_part *p = &m.parts[0];
    CHECK(p->positions[3] == 300.0f && p->positions[7] == 200.0f && p->positions[11] == 65535.0f);
    CHECK(p->normals[0] == 1.0f && p->normals[3] == -1.0f && p->normals[4] == 0.0f);
    CHECK(p->normals[7] == -1.0f && p->normals[10] == (float)(64 / 127.0));
    CHECK(p->uvs[1] == 1.0f && p->uvs[2] == 0.2f && p->uvs[7] == 1.0f);
  }
  sks_model_free(&m);
  tb_set("extensionsRequired", "[\"KHR_draco_mesh_compression\"]");
  CHECK(tb_load(0, &m, &e) == SKS_ERR_UNSUPPORTED);
  CHECK_MSG(strstr(e.message, "KHR_draco_mesh_compression") != NULL, "%s", e.message);
}

/* A skin without inverseBindMatrices binds with identity (spec). */
static void test_skin_without_ibm(void) {
  build_reference(5126, 5121);
  cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetArrayItem(tb_arr("skins"), 0),
                                          "inverseBindMatrices");
  sks_model m;
  sks_error e = {0};
  CHECK_OK(tb_load(1, &m, &e), &e);
  if (m.skin_count == 1) {
    sks_mat4 id = sks_m4_identity();
    CHECK(m.skins[0].joint_count == 2);
    CHECK(mem_eq(&m.skins[0].inverse_bind[0], &id, sizeof id));
    CHECK(mem_eq(&m.skins[0].inverse_bind[1], &id, sizeof id));
  }
  sks_model_free(&m);
}

/* Sparse accessors: POSITION with a sparse override, and a sparse accessor
 * without a bufferView (zeros + overrides). */
static void test_sparse(void) {
  for (int with_view = 1; with_view >= 0; --with_view) {
    tb_begin();
    int base = tb_view(kPos, sizeof kPos, 0);
    uint8_t sidx[2] = {1, 3};
    float sval[6] = {5, 6, 7, 8, 9, 10};
    int iv = tb_view(sidx, 2, 0), vv = tb_view(sval, sizeof sval, 0);
    int pos = tb_acc(with_view ? base : -1, 0, 5126, 4, "VEC3", 0);
    char text[256];
    snprintf(text, sizeof text,
             "{\"count\":2,\"indices\":{\"bufferView\":%d,\"componentType\":5121},"
             "\"values\":{\"bufferView\":%d}}", iv, vv);
    cJSON_AddItemToObject(cJSON_GetArrayItem(tb_arr("accessors"), pos), "sparse", cJSON_Parse(text));
    tb_set("nodes", "[{\"mesh\":0}]");
    tb_set("meshes", "[{\"primitives\":[{\"attributes\":{\"POSITION\":%d}}]}]", pos);
    sks_model m;
    sks_error e = {0};
    CHECK_OK(tb_load(0, &m, &e), &e);
    if (m.part_count == 1) {
      const float *p = m.parts[0].positions;
      float b0 = with_view ? 1.0f : 0.0f; /* vertex 2 keeps its base value (1,1,0) or zero */
      CHECK(p[0] == 0 && p[3] == 5 && p[4] == 6 && p[5] == 7 && p[9] == 8 && p[10] == 9 && p[11] == 10);
      CHECK(p[6] == b0 && p[7] == b0 && p[8] == 0);
      /* non-indexed triangles: 4 vertices -> one triangle 0 1 2 */
      CHECK(m.parts[0].index_count == 3 && m.parts[0].indices[2] == 2);
      CHECK(m.parts[0].skin == -1 && m.parts[0].node == 0 && m.parts[0].influence_count == 0);
      CHECK(!strcmp(m.parts[0].name, "mesh_0") && m.parts[0].material == -1);
    }
    sks_model_free(&m);
    /* a sparse index past count is an error */
    uint8_t bad[2] = {1, 4};
    size_t at = (size_t)cJSON_GetNumberValue(
        cJSON_GetObjectItem(cJSON_GetArrayItem(tb_arr("bufferViews"), iv), "byteOffset"));
    memcpy(B.bin + at, bad, 2);
    CHECK(tb_load(1, &m, &e) == SKS_ERR_PARSE);
    CHECK_MSG(strstr(e.message, "sparse index 1 is 4, count is 4") != NULL, "%s", e.message);
  }
}

/* A node matrix decomposes into T, R, S. */
static void test_node_matrix(void) {
  tb_begin();
  sks_transform t = {{1, 2, 3}, {0, 0, 0.70710678f, 0.70710678f}, {2, 3, 4}};
  sks_mat4 mat = sks_m4_from_transform(&t);
  char text[1024];
  int n = snprintf(text, sizeof text, "[{\"matrix\":[");
  for (int i = 0; i < 16; ++i) n += snprintf(text + n, sizeof text - (size_t)n, "%s%.9g", i ? "," : "", mat.m[i]);
  snprintf(text + n, sizeof text - (size_t)n, "]}]");
  tb_set("nodes", "%s", text);
  sks_model m;
  sks_error e = {0};
  CHECK_OK(tb_load(0, &m, &e), &e);
  if (m.skeleton.joint_count == 1) {
    const sks_transform *r = &m.skeleton.rest[0];
    CHECK_NEAR(r->translation.x, 1, 1e-6); CHECK_NEAR(r->translation.y, 2, 1e-6);
    CHECK_NEAR(r->translation.z, 3, 1e-6);
    CHECK_NEAR(r->scale.x, 2, 1e-6); CHECK_NEAR(r->scale.y, 3, 1e-6); CHECK_NEAR(r->scale.z, 4, 1e-6);
    double s = r->rotation.w < 0 ? -1 : 1; /* q and -q are the same rotation */
    CHECK_NEAR(s * r->rotation.x, 0, 1e-6); CHECK_NEAR(s * r->rotation.y, 0, 1e-6);
    CHECK_NEAR(s * r->rotation.z, 0.70710678, 1e-6); CHECK_NEAR(s * r->rotation.w, 0.70710678, 1e-6);
    CHECK(!strcmp(m.skeleton.names[0], "node_0"));
  }
  sks_model_free(&m);
}

/* Interleaved POSITION + NORMAL with byteStride 32 (8 bytes of padding). */
static void test_interleaved(void) {
  tb_begin();
  float inter[4 * 8];
  for (int v = 0; v < 4; ++v) {
    memcpy(inter + v * 8, kPos[v], 12);
    float nn[3] = {0, (float)v, 1};
    memcpy(inter + v * 8 + 3, nn, 12);
    inter[v * 8 + 6] = inter[v * 8 + 7] = -99;
  }
  int view = tb_view(inter, sizeof inter, 32);
  int pos = tb_acc(view, 0, 5126, 4, "VEC3", 0), nrm = tb_acc(view, 12, 5126, 4, "VEC3", 0);
  tb_set("nodes", "[{\"mesh\":0}]");
  tb_set("meshes", "[{\"primitives\":[{\"attributes\":{\"POSITION\":%d,\"NORMAL\":%d},\"mode\":1}]}]",
         pos, nrm);
  sks_model m;
  sks_error e = {0};
  CHECK_OK(tb_load(1, &m, &e), &e);
  if (m.part_count == 1) {
    CHECK(mem_eq(m.parts[0].positions, kPos, sizeof kPos));
    CHECK(m.parts[0].normals[7] == 2.0f && m.parts[0].normals[11] == 1.0f);
    CHECK(m.parts[0].index_count == 0); /* LINES: vertices only */
  }
  sks_model_free(&m);
  /* normal accessor 4 bytes further runs past the view: exact message */
  cJSON_SetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(tb_arr("accessors"), nrm), "byteOffset"), 24);
  CHECK(tb_load(0, &m, &e) == SKS_ERR_PARSE);
  CHECK_MSG(!strcmp(e.message, "case.gltf: accessor 1 (NORMAL of mesh 0 primitive 0): byteOffset 24 + 4 x 32 bytes "
                               "exceeds bufferView 0 length 128"), "%s", e.message);
  /* stride smaller than the element */
  cJSON_SetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(tb_arr("bufferViews"), 0), "byteStride"), 8);
  CHECK(tb_load(0, &m, &e) == SKS_ERR_PARSE);
  CHECK_MSG(strstr(e.message, "byteStride 8 is smaller than one VEC3 of float (12 bytes)") != NULL, "%s", e.message);
}

/* JOINTS_1 / WEIGHTS_1 -> 8 influences per vertex (set 0 then set 1). */
static void test_eight_influences(void) {
  tb_begin();
  uint16_t j0[16], j1[16];
  float w0[16], w1[16];
  for (int i = 0; i < 16; ++i) {
    j0[i] = (uint16_t)(i % 4);
    j1[i] = (uint16_t)(4 + i % 4);
    w0[i] = 0.125f;
    w1[i] = 0.125f;
  }
  w1[3] = 0;
  w0[0] = 0.25f; /* vertex 0: 0.25 + 3 x 0.125 + 3 x 0.125 + 0 = 1 */
  int pos = tb_data(kPos, 5126, 4, "VEC3", 0);
  int a0 = tb_data(j0, 5123, 4, "VEC4", 0), b0 = tb_data(w0, 5126, 4, "VEC4", 0);
  int a1 = tb_data(j1, 5123, 4, "VEC4", 0), b1 = tb_data(w1, 5126, 4, "VEC4", 0);
  tb_set("nodes", "[{\"mesh\":0,\"skin\":0},{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"},"
                  "{\"name\":\"d\"},{\"name\":\"e\"},{\"name\":\"f\"},{\"name\":\"g\"},{\"name\":\"h\"}]");
  tb_set("skins", "[{\"joints\":[1,2,3,4,5,6,7,8]}]");
  tb_set("meshes", "[{\"primitives\":[{\"attributes\":{\"POSITION\":%d,\"JOINTS_0\":%d,"
                   "\"WEIGHTS_0\":%d,\"JOINTS_1\":%d,\"WEIGHTS_1\":%d}}]}]", pos, a0, b0, a1, b1);
  sks_model m;
  sks_error e = {0};
  CHECK_OK(tb_load(0, &m, &e), &e);
  if (m.part_count == 1) {
    const sks_mesh_part *p = &m.parts[0];
    CHECK(p->influence_count == 8);
    CHECK(p->joints[0] == 0 && p->joints[3] == 3 && p->joints[4] == 4 && p->joints[7] == 7);
    CHECK(p->joints[8 + 5] == 5 && p->weights[0] == 0.25f && p->weights[7] == 0.0f &&
          p->weights[8 + 4] == 0.125f);
    CHECK(!strcmp(m.skins[0].name, "skin_0") && m.skins[0].joints[7] == 8);
    /* 8 influences fit: nothing is recorded as lost. */
    CHECK(p->dropped_influence_vertices == 0 && p->file_max_influences == 8);
  }
  sks_model_free(&m);
  /* JOINTS_1 without WEIGHTS_1 */
  cJSON *attrs = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(tb_arr("meshes"), 0), "primitives"), 0), "attributes");
  cJSON_DeleteItemFromObjectCaseSensitive(attrs, "WEIGHTS_1");
  CHECK(tb_load(0, &m, &e) == SKS_ERR_PARSE);
  CHECK_MSG(strstr(e.message, "has JOINTS_1 without WEIGHTS_1") != NULL, "%s", e.message);
}

/* Three sets (12 influences): the 8 largest weights are kept, rescaled so
 * the vertex's sum is unchanged. */
static void test_twelve_influences(void) {
  tb_begin();
  uint16_t j[3][16];
  float w[3][16];
  /* every vertex: joint k has weight (k + 1) / 78 (sum over k = 0..11 is 1) */
  for (int s = 0; s < 3; ++s)
    for (int i = 0; i < 16; ++i) {
      j[s][i] = (uint16_t)(s * 4 + i % 4);
      w[s][i] = (float)(s * 4 + i % 4 + 1) / 78.0f;
    }
  /* ... except vertex 0, whose third set is all zero: 8 non-zero weights, nothing lost. */
  for (int k = 0; k < 4; ++k) w[2][k] = 0.0f;
  int pos = tb_data(kPos, 5126, 4, "VEC3", 0);
  int a[3], b[3];
  for (int s = 0; s < 3; ++s) {
    a[s] = tb_data(j[s], 5123, 4, "VEC4", 0);
    b[s] = tb_data(w[s], 5126, 4, "VEC4", 0);
  }
  char nodes[1024] = "[{\"mesh\":0,\"skin\":0}";
  for (int k = 0; k < 12; ++k) strcat(nodes, ",{}");
  strcat(nodes, "]");
  tb_set("nodes", "%s", nodes);
  tb_set("skins", "[{\"joints\":[1,2,3,4,5,6,7,8,9,10,11,12]}]");
  tb_set("meshes", "[{\"primitives\":[{\"attributes\":{\"POSITION\":%d,\"JOINTS_0\":%d,"
                   "\"WEIGHTS_0\":%d,\"JOINTS_1\":%d,\"WEIGHTS_1\":%d,\"JOINTS_2\":%d,\"WEIGHTS_2\":%d}}]}]",
         pos, a[0], b[0], a[1], b[1], a[2], b[2]);
  sks_model m;
  sks_error e = {0};
  CHECK_OK(tb_load(0, &m, &e), &e);
  if (m.part_count == 1) {
    const sks_mesh_part *p = &m.parts[0];
    CHECK(p->influence_count == 8);
    double sum = 0;
    int ok = 1;
    for (int k = 0; k < 8; ++k) {
      ok &= p->joints[8 + k] == 11 - k; /* vertex 1: largest first */
      sum += p->weights[8 + k];
    }
    CHECK(ok);
    CHECK_NEAR(sum, 1.0, 1e-6);
    /* kept weights keep their ratios: 12/78 : 5/78 */
    CHECK_NEAR(p->weights[8] / p->weights[15], 12.0 / 5.0, 1e-5);
    /* The loss is recorded (vertices 1..3 lost weights; vertex 0 did not)... */
    CHECK(p->dropped_influence_vertices == 3);
    CHECK(p->first_dropped_influence_vertex == 1);
    CHECK(p->file_max_influences == 12);
    /* ... and check reports it: one warning, naming the part and vertex 1. */
    sks_findings f;
    CHECK_OK(sks_check(&m, NULL, &f, &e), &e);
    CHECK(f.total_by_kind[SKS_FINDING_TOO_MANY_INFLUENCES] == 1);
    int seen = 0;
    for (size_t i = 0; i < f.count; ++i) {
      const sks_finding *x = &f.items[i];
      if (x->kind != SKS_FINDING_TOO_MANY_INFLUENCES) continue;
      seen = 1;
      CHECK(x->severity == SKS_SEVERITY_WARNING && x->part == 0 && x->vertex == 1);
      CHECK_MSG(strstr(x->message, "part 0 'mesh_0', vertex 1: 3 vertex(es) have more influences "
                                   "in the file (up to 12) than the kernel supports (8)") != NULL,
                "%s", x->message);
    }
    CHECK(seen);
    sks_findings_free(&f);
  }
  sks_model_free(&m);
}

/* Hierarchy errors and other malformed structure: clean errors naming the place. */
static void test_structure_errors(void) {
  sks_model m;
  sks_error e = {0};
  struct { const char *nodes, *expect; } cases[] = {
      {"[{\"children\":[1]},{\"children\":[0]}]", "recursive nodes"},
      {"[{\"children\":[0]}]", "node 0 lists itself as a child"},
      {"[{\"children\":[2]},{\"children\":[2]},{}]", "node 2 has two parents (nodes 0 and 1)"},
      {"[{\"children\":[5]}]", "node 0: children[0]: node 5 does not exist (the file has 1)"},
      {"[{\"mesh\":3}]", "node 0: mesh 3 does not exist"},
      {"[{\"rotation\":[0,0,1]}]", "node 0: \"rotation\" must be an array of 4 numbers"},
      {"[{\"name\":7}]", "node 0: \"name\" must be a string"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    tb_begin();
    tb_set("nodes", "%s", cases[i].nodes);
    sks_result r = tb_load(0, &m, &e);
    CHECK_MSG(r == SKS_ERR_PARSE && strstr(e.message, cases[i].expect) &&
              !strncmp(e.message, "case.gltf: ", 11), "case %zu: %s", i, e.message);
    CHECK(m.skeleton.joint_count == 0 && m.parts == NULL); /* freed and zeroed */
  }
  /* scene roots: nodes outside the scene are not in the skeleton */
  tb_begin();
  tb_set("nodes", "[{\"name\":\"in\"},{\"name\":\"out\"},{\"name\":\"kid\"}]");
  cJSON_AddItemToObject(cJSON_GetArrayItem(tb_arr("nodes"), 0), "children", cJSON_Parse("[2]"));
  tb_set("scenes", "[{\"nodes\":[2]}]"); /* lists a child: its tree's root is used */
  CHECK_OK(tb_load(0, &m, &e), &e);
  CHECK(m.skeleton.joint_count == 2 && !strcmp(m.skeleton.names[0], "in") &&
        !strcmp(m.skeleton.names[1], "kid") && m.skeleton.parents[1] == 0);
  sks_model_free(&m);
  /* no scenes: all nodes */
  cJSON_DeleteItemFromObject(B.root, "scenes");
  CHECK_OK(tb_load(0, &m, &e), &e);
  CHECK(m.skeleton.joint_count == 3);
  sks_model_free(&m);
  /* index out of range */
  build_reference(5126, 5121);
  uint16_t bad[6] = {0, 1, 2, 0, 2, 4};
  int acc = tb_data(bad, 5123, 6, "SCALAR", 0);
  cJSON_SetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(tb_arr("meshes"), 0), "primitives"), 0), "indices"), acc);
  CHECK(tb_load(1, &m, &e) == SKS_ERR_PARSE);
  CHECK_MSG(!strcmp(e.message, "case.glb: mesh 0 primitive 0: index 5 is 4, but there are 4 vertices"),
            "%s", e.message);
  /* animation key times must not decrease */
  build_reference(5126, 5121);
  float t[3] = {0, 1, 0.5f};
  int tin = tb_data(t, 5126, 3, "SCALAR", 0);
  cJSON *smp = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(tb_arr("animations"), 0), "samplers"), 0);
  cJSON_SetNumberValue(cJSON_GetObjectItem(smp, "input"), tin);
  CHECK(tb_load(0, &m, &e) == SKS_ERR_PARSE);
  CHECK_MSG(strstr(e.message, "animation 0 sampler 0: key times decrease at key 2") != NULL, "%s", e.message);
  /* a first key before 0 and two keys at one time load as glTF allows
   * (moved to start at 0, the second one float step later, with warnings)
   * and write: they used to load, bake, and fail at the write */
  build_reference(5126, 5121);
  float tn[3] = {-0.5f, 0.5f, 0.5f};
  tin = tb_data(tn, 5126, 3, "SCALAR", 0);
  smp = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(tb_arr("animations"), 0), "samplers"), 0);
  cJSON_SetNumberValue(cJSON_GetObjectItem(smp, "input"), tin);
  CHECK_OK(tb_load(0, &m, &e), &e);
  CHECK(m.clip_count == 1);
  int seen = 0;
  for (size_t k = 0; m.clip_count == 1 && k < m.clips[0].track_count; ++k) {
    const sks_track *tk = &m.clips[0].tracks[k];
    if (tk->key_count != 3) continue;
    const float *kt = tk->times;
    if (tk->path == SKS_PATH_TRANSLATION) { /* sampler 0: -0.5, 0.5, 0.5 */
      CHECK_MSG(kt[0] == 0.0f && kt[1] == 1.0f && kt[2] == nextafterf(1.0f, 2.0f), "times %.9g %.9g %.9g", kt[0],
                kt[1], kt[2]);
      seen |= 1;
    } else { /* the other samplers' 0, 0.5, 2, moved with the clip */
      CHECK_MSG(kt[0] == 0.5f && kt[1] == 1.0f && kt[2] == 2.5f, "times %.9g %.9g %.9g", kt[0], kt[1], kt[2]);
      seen |= 2;
    }
  }
  CHECK_MSG(seen == 3, "tracks seen %d", seen);
  if (m.clip_count == 1) CHECK(m.clips[0].duration == 2.5f);
  int moved = 0, stepped = 0;
  for (size_t i = 0; i < m.warning_count; ++i) {
    moved |= strstr(m.warnings[i], "its keys start at -0.5 s, before 0 — moved to start at 0") != NULL;
    stepped |= strstr(m.warnings[i], "1 key(s) at their sampler's previous key time") != NULL;
  }
  CHECK(moved && stepped);
  char outp[1024];
  snprintf(outp, sizeof outp, "%s/times_for_gltf.glb", sks_test_tmpdir());
  CHECK_OK(sks_write_glb(outp, &m, NULL, &e), &e);
  remove(outp);
  sks_model_free(&m);
  /* CUBICSPLINE needs 3 values per key */
  build_reference(5126, 5121);
  smp = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(tb_arr("animations"), 0), "samplers"), 0);
  cJSON_AddStringToObject(smp, "interpolation", "CUBICSPLINE");
  CHECK(tb_load(0, &m, &e) == SKS_ERR_PARSE);
  CHECK_MSG(strstr(e.message, "has 3 values for 3 keys (CUBICSPLINE needs 3 per key)") != NULL, "%s", e.message);
  /* external buffer without a base directory */
  tb_begin();
  tb_set("buffers", "[{\"byteLength\":4,\"uri\":\"x.bin\"}]");
  tb_set("bufferViews", "[{\"buffer\":0,\"byteLength\":4}]");
  tb_set("accessors", "[{\"bufferView\":0,\"componentType\":5126,\"count\":1,\"type\":\"SCALAR\"}]");
  tb_set("nodes", "[{\"mesh\":0}]");
  tb_set("meshes", "[{\"primitives\":[{\"attributes\":{\"POSITION\":0}}]}]");
  char *json = cJSON_PrintUnformatted(B.root);
  CHECK(sks_load_gltf_memory(json, strlen(json), NULL, "ext.gltf", &m, &e) == SKS_ERR_IO);
  CHECK_MSG(strstr(e.message, "ext.gltf: buffer 0 uri 'x.bin': external file but no folder to find it in") != NULL, "%s", e.message);
  free(json);
}

/* A 50,000-node chain listed child-first: iterative, linear-time reordering
 * (no recursion depth, no quadratic list walks). */
static void test_long_chain(void) {
  const int n = 50000;
  char *json = malloc((size_t)n * 32 + 256), *p = json;
  p += sprintf(p, "{\"asset\":{\"version\":\"2.0\"},\"nodes\":[");
  for (int i = 0; i < n; ++i) /* node i is the child of node i + 1: root is the last */
    p += i == 0 ? sprintf(p, "{}") : sprintf(p, ",{\"children\":[%d]}", i - 1);
  p += sprintf(p, "],\"scenes\":[{\"nodes\":[%d]}]}", n - 1);
  sks_model m;
  sks_error e = {0};
  CHECK_OK(sks_load_gltf_memory(json, (size_t)(p - json), NULL, "chain.gltf", &m, &e), &e);
  CHECK(m.skeleton.joint_count == (size_t)n);
  int ok = m.skeleton.joint_count == (size_t)n;
  for (int j = 0; ok && j < n; ++j) {
    char want[32];
    snprintf(want, sizeof want, "node_%d", n - 1 - j);
    ok = m.skeleton.parents[j] == j - 1 && !strcmp(m.skeleton.names[j], want);
  }
  CHECK(ok);
  sks_model_free(&m);
  free(json);
}

/* GLB container: header and chunk lengths are validated. */
static void test_glb_container(void) {
  build_reference(5126, 5121);
  char *json = tb_json(1);
  size_t n;
  uint8_t *g = make_glb(json, strlen(json), B.bin, B.size, &n);
  sks_model m;
  sks_error e = {0};
  CHECK_OK(sks_load_gltf_memory(g, n, NULL, "c.glb", &m, &e), &e);
  sks_model_free(&m);
  uint8_t *h = malloc(n);
  struct { size_t at; uint32_t value; const char *expect; } cases[] = {
      {4, 1, "GLB version 1"},
      {8, (uint32_t)n + 4, "GLB header says"},
      {12, (uint32_t)n, "length"},
      {16, 0x12345678u, "GLB first chunk is not JSON"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    memcpy(h, g, n);
    put32(h + cases[i].at, cases[i].value);
    sks_result r = sks_load_gltf_memory(h, n, NULL, "c.glb", &m, &e);
    CHECK_MSG(r != SKS_OK && strstr(e.message, cases[i].expect), "case %zu: %s", i, e.message);
  }
  /* BIN chunk shorter than buffer 0's byteLength */
  size_t jl = (strlen(json) + 3) & ~(size_t)3;
  memcpy(h, g, n);
  put32(h + 20 + jl, 8);
  put32(h + 8, (uint32_t)(20 + jl + 16));
  CHECK(sks_load_gltf_memory(h, 20 + jl + 16, NULL, "c.glb", &m, &e) == SKS_ERR_PARSE);
  CHECK_MSG(strstr(e.message, "c.glb: buffer 0: byteLength") && strstr(e.message, "exceeds the GLB BIN chunk (8 bytes)"),
            "%s", e.message);
  /* no BIN chunk at all */
  uint8_t *nb = make_glb(json, strlen(json), NULL, 0, &n);
  CHECK(sks_load_gltf_memory(nb, n, NULL, "c.glb", &m, &e) == SKS_ERR_PARSE);
  CHECK_MSG(strstr(e.message, "no GLB BIN chunk") != NULL, "%s", e.message);
  free(nb);
  free(h);
  free(g);
  free(json);
  CHECK(sks_load_gltf_memory("", 0, NULL, "empty.gltf", &m, &e) == SKS_ERR_PARSE);
  CHECK(sks_load_gltf_memory("{\"asset\":", 9, NULL, "cut.gltf", &m, &e) == SKS_ERR_PARSE);
  CHECK_MSG(strstr(e.message, "cut.gltf: invalid JSON") != NULL, "%s", e.message);
}

/* ---- real files ---------------------------------------------------------- */

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *d = malloc((size_t)len + 1);
  *n = fread(d, 1, (size_t)len, f);
  fclose(f);
  return d;
}

static void test_fox(void) {
  const char *path = sks_test_shared_data("Fox/Fox.glb");
  if (!path) return;
  sks_model m;
  sks_error e = {0};
  CHECK_OK(sks_load_gltf(path, &m, &e), &e);
  CHECK(m.skin_count == 1 && m.skins[0].joint_count == 24);
  CHECK(m.skeleton.joint_count == 26); /* 24 joints + mesh node + armature root */
  CHECK(m.part_count == 1 && m.parts[0].vertex_count == 1728 && m.parts[0].influence_count == 4);
  CHECK(sks_model_vertex_count(&m) == 1728);
  for (size_t j = 0; j < m.skeleton.joint_count; ++j)
    CHECK(m.skeleton.parents[j] < (int32_t)j);
  const char *names[3] = {"Survey", "Walk", "Run"};
  const size_t keys[3] = {83, 18, 28};
  for (int c = 0; c < 3; ++c) {
    int32_t ci = sks_clip_find(m.clips, m.clip_count, names[c]);
    CHECK_MSG(ci >= 0, "clip %s", names[c]);
    if (ci < 0) continue;
    const sks_clip *clip = &m.clips[ci];
    int all = clip->track_count > 0;
    for (size_t t = 0; t < clip->track_count; ++t) all &= clip->tracks[t].key_count == keys[c];
    CHECK_MSG(all, "clip %s: every track has %zu keys", names[c], keys[c]);
    CHECK(clip->duration > 0 && clip->tracks[0].times[keys[c] - 1] == clip->duration);
  }
  /* Weights sum to 1 (Fox is clean) and joints index the skin. */
  double worst = 0;
  int range = 1;
  for (size_t v = 0; v < 1728; ++v) {
    double s = 0;
    for (int k = 0; k < 4; ++k) {
      s += m.parts[0].weights[v * 4 + k];
      range &= m.parts[0].joints[v * 4 + k] < 24;
    }
    worst = fmax(worst, fabs(s - 1));
  }
  CHECK(worst < 1e-5);
  CHECK(range);

  /* Same content as .gltf: JSON with the BIN as a data URI, and with the BIN
   * as an external file -> identical models. */
  size_t n;
  uint8_t *glb = slurp(path, &n);
  uint32_t jl = (uint32_t)glb[12] | (uint32_t)glb[13] << 8 | (uint32_t)glb[14] << 16 | (uint32_t)glb[15] << 24;
  const uint8_t *bin = glb + 20 + jl + 8;
  size_t bl = n - 20 - jl - 8;
  cJSON *root = cJSON_ParseWithLength((const char *)glb + 20, jl);
  cJSON *buf0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "buffers"), 0);
  char *enc = b64(bin, bl);
  char *uri = malloc(strlen(enc) + 64);
  sprintf(uri, "data:application/gltf-buffer;base64,%s", enc);
  cJSON_AddStringToObject(buf0, "uri", uri);
  char *text = cJSON_PrintUnformatted(root);
  sks_model g;
  CHECK_OK(sks_load_gltf_memory(text, strlen(text), NULL, "Fox.gltf", &g, &e), &e);
  CHECK(models_identical(&m, &g));
  sks_model_free(&g);
  free(text);
  /* external .bin (with a %20 in its URI) */
  char binpath[4096], gltfpath[4096];
  snprintf(binpath, sizeof binpath, "%s/fox bin.bin", sks_test_tmpdir());
  snprintf(gltfpath, sizeof gltfpath, "%s/fox.gltf", sks_test_tmpdir());
  FILE *f = fopen(binpath, "wb");
  fwrite(bin, 1, bl, f);
  fclose(f);
  cJSON_ReplaceItemInObject(buf0, "uri", cJSON_CreateString("fox%20bin.bin"));
  text = cJSON_PrintUnformatted(root);
  f = fopen(gltfpath, "wb");
  fwrite(text, 1, strlen(text), f);
  fclose(f);
  CHECK_OK(sks_load_gltf(gltfpath, &g, &e), &e);
  CHECK(models_identical(&m, &g));
  CHECK(g.source_path && !strcmp(g.source_path, gltfpath));
  sks_model_free(&g);
  /* the external file shorter than byteLength */
  f = fopen(binpath, "wb");
  fwrite(bin, 1, bl / 2, f);
  fclose(f);
  CHECK(sks_load_gltf(gltfpath, &g, &e) == SKS_ERR_PARSE);
  CHECK_MSG(strstr(e.message, "fox.gltf: buffer 0: file 'fox%20bin.bin' has") != NULL, "%s", e.message);
  remove(binpath);
  remove(gltfpath);
  free(text);
  free(uri);
  free(enc);
  cJSON_Delete(root);
  free(glb);
  sks_model_free(&m);
}

static void test_other_real_files(void) {
  sks_model m;
  sks_error e = {0};
  const char *p = sks_test_shared_data("Fox/raw/Fox_blender35_raw.glb");
  if (p) {
    CHECK_OK(sks_load_gltf(p, &m, &e), &e);
    CHECK(m.skin_count == 2 && m.part_count == 3 && m.clip_count == 3);
    if (m.part_count == 3) {
      CHECK(m.parts[0].skin == 0 && m.parts[1].skin == 1 && m.parts[2].skin == -1);
      CHECK(m.parts[0].vertex_count == 1728 && m.parts[1].vertex_count == 1728);
      CHECK(!strcmp(m.parts[2].name, "Cube") && m.parts[2].index_count == 36);
      CHECK(m.skins[0].joint_count == 24 && m.skins[1].joint_count == 24);
    }
    sks_model_free(&m);
  }
  p = sks_test_shared_data("RiggedSimple/RiggedSimple.gltf");
  if (p) {
    CHECK_OK(sks_load_gltf(p, &m, &e), &e);
    CHECK(m.skin_count == 1 && m.skins[0].joint_count == 2);
    CHECK(m.part_count == 1 && m.parts[0].vertex_count == 96 && m.parts[0].skin == 0);
    CHECK(m.clip_count == 1 && !strcmp(m.clips[0].name, "animation_0"));
    sks_model_free(&m);
  }
  p = sks_test_assimp_model("glTF2/simple_skin/simple_skin.gltf");
  if (p) {
    CHECK_OK(sks_load_gltf(p, &m, &e), &e);
    CHECK(m.skin_count == 1 && m.skins[0].joint_count == 2);
    CHECK(m.part_count == 1 && m.parts[0].vertex_count == 10 && m.parts[0].influence_count == 4);
    CHECK(m.clip_count == 1 && m.clips[0].track_count == 1 && m.clips[0].tracks[0].key_count == 12);
    sks_model_free(&m);
  }
}

/* Skinned surface of a model posed by clip `clip` at `t` (all parts, part
 * order), via the runtime jobs. NULL if the clip is missing. */
static float *skin_at(const sks_model *m, const char *clip, float t) {
  size_t n = m->skeleton.joint_count;
  int32_t ci = clip ? sks_clip_find(m->clips, m->clip_count, clip) : -1;
  if (clip && ci < 0) return NULL;
  sks_transform *loc = malloc((n + 1) * sizeof *loc);
  sks_mat4 *mod = malloc((n + 1) * sizeof *mod);
  float *out = malloc((sks_model_total_vertex_count(m) + 1) * 3 * sizeof(float));
  memcpy(loc, m->skeleton.rest, n * sizeof *loc);
  if (ci >= 0) {
    sks_sampling_job sj = {0};
    sj.clip = &m->clips[ci];
    sj.rest = m->skeleton.rest;
    sj.joint_count = n;
    sj.time = t;
    sj.output = loc;
    CHECK(sks_sampling_job_run(&sj));
  }
  sks_local_to_model_job fk = {0};
  fk.parents = m->skeleton.parents;
  fk.locals = loc;
  fk.joint_count = n;
  fk.models = mod;
  CHECK(sks_local_to_model_job_run(&fk));
  sks_error e = {0};
  CHECK_OK(sks_skin_model(m, mod, SKS_SKIN_LBS, out, NULL, &e), &e);
  free(loc);
  free(mod);
  return out;
}

/* Normalized ubyte / ushort weights skin exactly like float weights. */
static void test_encodings_skin_alike(void) {
  sks_model m[3];
  sks_error e = {0};
  const int wt[3] = {5126, 5121, 5123};
  for (int i = 0; i < 3; ++i) {
    build_reference(wt[i], i == 2 ? 5123 : 5121);
    CHECK_OK(tb_load(i & 1, &m[i], &e), &e);
  }
  float *ref = m[0].part_count ? skin_at(&m[0], "animation_0", 0.7f) : NULL;
  for (int i = 1; i < 3 && ref; ++i) {
    float *p = m[i].part_count ? skin_at(&m[i], "animation_0", 0.7f) : NULL;
    CHECK(p && !memcmp(p, ref, 4 * 3 * sizeof(float)));
    free(p);
  }
  free(ref);
  /* Exact numbers at t = 0: root = scale 2 (STEP key 0 = identity rotation),
   * child = root * T(0,1,0) * S(0.75,1,1.25) (CUBICSPLINE key 0 value).
   * Vertex 1 (1,0,0): 0.6 x child * T(0,-1,0) * p + 0.4 x root * p = (1.7,0,0).
   * Vertex 2 (1,1,0): weight 1 on skin joint 1 = root: (2,2,0). */
  float *p0 = m[1].part_count ? skin_at(&m[1], "animation_0", 0.0f) : NULL;
  if (p0) {
    CHECK_NEAR(p0[3], 1.7, 1e-6); CHECK_NEAR(p0[4], 0, 1e-6); CHECK_NEAR(p0[5], 0, 1e-6);
    CHECK_NEAR(p0[6], 2, 1e-6); CHECK_NEAR(p0[7], 2, 1e-6); CHECK_NEAR(p0[8], 0, 1e-6);
  }
  free(p0);
  for (int i = 0; i < 3; ++i) sks_model_free(&m[i]);
}

/* Independent check of the whole mapping (skeleton order, skin joint remap,
 * inverse binds, clips): the native reader and the Assimp importer skin the
 * same files to the same surface. */
static void test_cross_check_assimp(void) {
  const char *files[4];
  files[0] = sks_test_shared_data("Fox/Fox.glb");
  files[1] = sks_test_shared_data("Fox/raw/Fox_blender35_raw.glb");
  files[2] = sks_test_shared_data("RiggedSimple/RiggedSimple.gltf");
  files[3] = sks_test_assimp_model("glTF2/simple_skin/simple_skin.gltf");
  for (int f = 0; f < 4; ++f) {
    if (!files[f]) continue;
    sks_model a, b;
    sks_error e = {0};
    CHECK_OK(sks_load_gltf(files[f], &a, &e), &e);
    if (sks_load_assimp(files[f], &b, &e) != SKS_OK) {
      printf("  cross-check skipped for %s: %s\n", files[f], e.message);
      sks_model_free(&a);
      continue;
    }
    size_t nv = sks_model_total_vertex_count(&a);
    CHECK(nv == sks_model_total_vertex_count(&b) && a.clip_count == b.clip_count);
    for (size_t c = 0; c < a.clip_count && nv == sks_model_total_vertex_count(&b); ++c) {
      const float times[2] = {0.3f, a.clips[c].duration * 0.77f};
      for (int k = 0; k < 2; ++k) {
        float *pa = skin_at(&a, a.clips[c].name, times[k]), *pb = skin_at(&b, a.clips[c].name, times[k]);
        double md = 0, scale = 1;
        for (size_t i = 0; pa && pb && i < nv * 3; ++i) {
          md = fmax(md, fabs((double)pa[i] - pb[i]));
          scale = fmax(scale, fabs((double)pa[i]));
        }
        CHECK_MSG(pa && pb && md <= 1e-5 * scale, "%s clip %s t=%g: max difference %g (scale %g)",
                  files[f], a.clips[c].name, (double)times[k], md, scale);
        free(pa);
        free(pb);
      }
    }
    sks_model_free(&a);
    sks_model_free(&b);
  }
}

/* Every file of the bad-file folders: a clean error (naming the file) or a
 * clean load. ASan/UBSan builds check "clean". */
static void test_bad_files(void) {
  static const char *files[] = {
      "glTF2/IndexOutOfRange/IndexOutOfRange.gltf", "glTF2/IndexOutOfRange/AllIndicesOutOfRange.gltf",
      "glTF2/IndexOutOfRange/IndexOutOfRange.bin", "glTF2/IndexOutOfRange/AllIndicesOutOfRange.bin",
      "glTF2/wrongTypes/badArray.gltf", "glTF2/wrongTypes/badExtension.gltf",
      "glTF2/wrongTypes/badNumber.gltf", "glTF2/wrongTypes/badObject.gltf",
      "glTF2/wrongTypes/badString.gltf", "glTF2/wrongTypes/badUint.gltf",
      "glTF2/wrongTypes/BoxTextured0.bin", "glTF2/wrongTypes/CesiumLogoFlat.png",
      "glTF2/BoxWithInfinites-glTF-Binary/BoxWithInfinites.glb",
      "glTF2/RecursiveNodes/RecursiveNodes.gltf", "glTF2/MissingBin/BoxTextured.gltf",
      "glTF2/IncorrectVertexArrays/Cube.gltf", "glTF2/IncorrectVertexArrays/Cube.bin",
      "glTF2/SchemaFailures/sceneWrongType.gltf", "glTF2/SchemaFailures/CesiumLogoFlat.png",
  };
  for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
    const char *p = sks_test_assimp_model(files[i]);
    if (!p) continue;
    sks_model m;
    sks_error e = {0};
    sks_result r = sks_load_gltf(p, &m, &e);
    const char *base = strrchr(p, '/') + 1;
    if (r) CHECK_MSG(!strncmp(e.message, base, strlen(base)), "%s: %s", base, e.message);
    else CHECK(m.source_path != NULL);
    printf("  %-60s %s\n", files[i], r ? e.message : "loaded");
    sks_model_free(&m);
  }
  /* The ones that must fail, and how. */
  struct { const char *file, *expect; } must[] = {
      {"glTF2/IndexOutOfRange/IndexOutOfRange.gltf", "mesh 0 primitive 0: index"},
      {"glTF2/RecursiveNodes/RecursiveNodes.gltf", "recursive nodes"},
      {"glTF2/MissingBin/BoxTextured.gltf", "cannot open buffer 0 file"},
      {"glTF2/SchemaFailures/sceneWrongType.gltf", "\"scene\" must be an index"},
  };
  for (size_t i = 0; i < sizeof must / sizeof must[0]; ++i) {
    const char *p = sks_test_assimp_model(must[i].file);
    if (!p) continue;
    sks_model m;
    sks_error e = {0};
    CHECK_MSG(sks_load_gltf(p, &m, &e) != SKS_OK && strstr(e.message, must[i].expect), "%s: %s",
              must[i].file, e.message);
  }
  /* Truncated triangle lists lose only the partial triangle (as renderers do). */
  const char *p = sks_test_assimp_model("glTF2/IncorrectVertexArrays/Cube.gltf");
  if (p) {
    sks_model m;
    sks_error e = {0};
    CHECK_OK(sks_load_gltf(p, &m, &e), &e);
    size_t tri35 = 0;
    for (size_t i = 0; i < m.part_count; ++i)
      if (m.parts[i].vertex_count == 35 && m.parts[i].index_count == 33) ++tri35;
    CHECK(tri35 >= 1);
    sks_model_free(&m);
  }
}

/* Bounded fuzz: truncations, byte flips and digit changes of Fox.glb. */
static uint32_t rng_state = 12345;
static uint32_t rng(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return rng_state >> 8;
}

static void test_fuzz_fox(void) {
  const char *path = sks_test_shared_data("Fox/Fox.glb");
  if (!path) return;
  size_t n;
  uint8_t *orig = slurp(path, &n), *buf = malloc(n);
  uint32_t jl = (uint32_t)orig[12] | (uint32_t)orig[13] << 8 | (uint32_t)orig[14] << 16 | (uint32_t)orig[15] << 24;
  size_t ok = 0, failed = 0;
  sks_model m;
  sks_error e;
  /* truncations: the header region byte by byte, then across the file */
  for (size_t len = 0; len < n; len += len < 64 ? 1 : len < 20 + jl + 64 ? 509 : 7919) {
    memcpy(buf, orig, len);
    sks_result r = sks_load_gltf_memory(buf, len, NULL, "Fox.glb", &m, &e);
    r ? ++failed : ++ok;
    sks_model_free(&m);
  }
  /* truncations with the lengths patched, so the JSON is read and the BIN is short */
  for (size_t cut = 1; cut < n - 28 - jl; cut = cut * 3 + 1) {
    size_t len = n - cut;
    memcpy(buf, orig, len);
    put32(buf + 8, (uint32_t)len);
    put32(buf + 20 + jl, (uint32_t)(len - 28 - jl));
    sks_result r = sks_load_gltf_memory(buf, len, NULL, "Fox.glb", &m, &e);
    CHECK_MSG(r != SKS_OK, "BIN cut by %zu bytes must fail", cut);
    r ? ++failed : ++ok;
  }
  /* random mutations: digits in the JSON (valid JSON, wrong numbers) and raw bytes */
  for (int it = 0; it < 400; ++it) {
    memcpy(buf, orig, n);
    int flips = 1 + (int)(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      if (it % 2 == 0) {
        for (int tries = 0; tries < 100; ++tries) {
          size_t at = 20 + rng() % jl;
          if (buf[at] >= '0' && buf[at] <= '9') {
            buf[at] = (uint8_t)('0' + rng() % 10);
            break;
          }
        }
      } else {
        buf[rng() % (20 + jl + 64)] ^= (uint8_t)(1u << (rng() % 8));
      }
    }
    sks_result r = sks_load_gltf_memory(buf, n, NULL, "Fox.glb", &m, &e);
    if (r) CHECK_MSG(!strncmp(e.message, "Fox.glb: ", 9), "%s", e.message);
    r ? ++failed : ++ok;
    sks_model_free(&m);
  }
  printf("  fuzz: %zu loads ok, %zu clean errors\n", ok, failed);
  CHECK(ok > 0 && failed > 0);
  free(buf);
  free(orig);
}

/* The JSON chunk of the .glb at path (NULL if it cannot be read). */
static cJSON *glb_json(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint8_t h[20];
  cJSON *j = NULL;
  if (fread(h, 1, 20, f) == 20) {
    uint32_t n = (uint32_t)h[12] | (uint32_t)h[13] << 8 | (uint32_t)h[14] << 16 | (uint32_t)h[15] << 24;
    char *text = n < (1u << 24) ? malloc(n + 1) : NULL;
    if (text && fread(text, 1, n, f) == n) {
      text[n] = '\0';
      j = cJSON_Parse(text);
    }
    free(text);
  }
  fclose(f);
  return j;
}

/* An animation that moves nothing of the model (no channels) is no clip:
 * it is left out with a warning naming it, and read -> write -> read gives
 * the same clips. fuzz_write found a file whose animation lost its
 * "channels": 1 clip read, none written, 0 read back. An animation of morph
 * target weights only is a clip (its morph track), and a "weights" channel
 * on a node without morph targets is left out with a warning. */
static void test_clips_that_move_nothing(void) {
  build_reference(5126, 5121);
  float w[3] = {0, 1, 0};
  int wout = tb_data(w, 5126, 3, "SCALAR", 0);
  /* accessor 7: key times (3), 8: translations (3) */
  tb_set("animations",
         "[{\"name\":\"empty\",\"samplers\":[{\"input\":7,\"output\":8}]},"
         "{\"name\":\"morph\",\"samplers\":[{\"input\":7,\"output\":%d}],"
         "\"channels\":[{\"sampler\":0,\"target\":{\"node\":2,\"path\":\"weights\"}}]},"
         "{\"name\":\"walk\",\"samplers\":[{\"input\":7,\"output\":8}],"
         "\"channels\":[{\"sampler\":0,\"target\":{\"node\":0,\"path\":\"translation\"}}]}]",
         wout);
  sks_model m, back;
  sks_error e = {0};
  CHECK_OK(tb_load(0, &m, &e), &e);
  CHECK(m.clip_count == 1);
  if (m.clip_count == 1) CHECK(!strcmp(m.clips[0].name, "walk") && m.clips[0].track_count == 1);
  CHECK(m.warning_count == 3);
  if (m.warning_count == 3) {
    CHECK_MSG(strstr(m.warnings[0], "case.gltf: animation 0 'empty'") && strstr(m.warnings[0], "no channels"),
              "%s", m.warnings[0]);
    CHECK_MSG(strstr(m.warnings[1], "animation 1 'morph'") && strstr(m.warnings[1], "no mesh with morph targets"),
              "%s", m.warnings[1]);
    CHECK_MSG(strstr(m.warnings[2], "animation 1 'morph'") && strstr(m.warnings[2], "left out of the model's clips"),
              "%s", m.warnings[2]);
  }
  char path[600];
  snprintf(path, sizeof path, "%s/clips_move_nothing.glb", sks_test_tmpdir());
  CHECK_OK(sks_write_glb(path, &m, NULL, &e), &e);
  /* the clip is written from its own animation; the morph animation is kept */
  cJSON *j = glb_json(path);
  cJSON *anims = cJSON_GetObjectItem(j, "animations");
  CHECK(cJSON_GetArraySize(anims) == 2);
  cJSON *a0 = cJSON_GetArrayItem(anims, 0), *a1 = cJSON_GetArrayItem(anims, 1);
  CHECK(a0 && cJSON_IsString(cJSON_GetObjectItem(a0, "name")) &&
        !strcmp(cJSON_GetObjectItem(a0, "name")->valuestring, "walk"));
  CHECK(a1 && cJSON_IsString(cJSON_GetObjectItem(a1, "name")) &&
        !strcmp(cJSON_GetObjectItem(a1, "name")->valuestring, "morph"));
  cJSON_Delete(j);
  CHECK_OK(sks_load_gltf(path, &back, &e), &e);
  CHECK(back.clip_count == 1);
  if (back.clip_count == 1)
    CHECK(!strcmp(back.clips[0].name, "walk") && back.clips[0].track_count == 1 &&
          back.clips[0].tracks[0].key_count == 3);
  sks_model_free(&back);
  sks_model_free(&m);

  /* Written without the source document: a clip whose only track holds an
   * unbound node at rest (a "rest pose" clip) is still a clip. */
  float zero[9] = {0};
  int still = tb_data(zero, 5126, 3, "VEC3", 0);
  tb_set("animations",
         "[{\"name\":\"still\",\"samplers\":[{\"input\":7,\"output\":%d}],"
         "\"channels\":[{\"sampler\":0,\"target\":{\"node\":2,\"path\":\"translation\"}}]}]",
         still);
  CHECK_OK(tb_load(0, &m, &e), &e);
  CHECK(m.clip_count == 1 && m.warning_count == 0);
  sks_gltf_source_free(m.gltf_source);
  m.gltf_source = NULL;
  CHECK_OK(sks_write_glb(path, &m, NULL, &e), &e);
  CHECK_OK(sks_load_gltf(path, &back, &e), &e);
  CHECK(back.clip_count == 1);
  if (back.clip_count == 1) CHECK(!strcmp(back.clips[0].name, "still") && back.clips[0].track_count == 1);
  sks_model_free(&back);
  sks_model_free(&m);
}

/* The KHR_materials_* factors read natively (as the Assimp path gives
 * them): explicit values, the extensions' defaults, a factor out of range
 * (that extension left out, one warning, the others kept), and a write
 * from scratch (no kept document) carrying them. */
static void test_material_extensions(void) {
  build_reference(5126, 5121);
  tb_set("materials",
         "[{\"name\":\"all\",\"extensions\":{"
         "\"KHR_materials_clearcoat\":{\"clearcoatFactor\":0.75,\"clearcoatRoughnessFactor\":0.25},"
         "\"KHR_materials_sheen\":{\"sheenColorFactor\":[0.5,0.25,1],\"sheenRoughnessFactor\":0.125},"
         "\"KHR_materials_transmission\":{\"transmissionFactor\":0.5},"
         "\"KHR_materials_volume\":{\"thicknessFactor\":2.5,\"attenuationDistance\":0.75,"
         "\"attenuationColor\":[0.5,1,0.25]},\"KHR_materials_ior\":{\"ior\":1.25}}},"
         "{\"name\":\"defaults\",\"extensions\":{\"KHR_materials_clearcoat\":{},\"KHR_materials_sheen\":{},"
         "\"KHR_materials_transmission\":{},\"KHR_materials_volume\":{},\"KHR_materials_ior\":{}}},"
         "{\"name\":\"bad\",\"extensions\":{\"KHR_materials_clearcoat\":{\"clearcoatFactor\":2},"
         "\"KHR_materials_sheen\":{\"sheenColorFactor\":[0.5,0.5]},\"KHR_materials_transmission\":[],"
         "\"KHR_materials_volume\":{\"attenuationDistance\":0},\"KHR_materials_ior\":{\"ior\":0.5}}},"
         "{\"name\":\"none\"}]");
  sks_model m, back;
  sks_error e = {0};
  CHECK_OK(tb_load(0, &m, &e), &e);
  CHECK_MSG(m.material_count == 4, "%zu materials", m.material_count);
  if (m.material_count != 4) { sks_model_free(&m); return; }
  for (int pass = 0; pass < 2; ++pass) {
    const sks_model *x = pass ? &back : &m;
    const sks_material *a = &x->materials[0], *d = &x->materials[1], *b = &x->materials[2], *n = &x->materials[3];
    const char *w = pass ? "written from scratch and read back" : "read";
    CHECK_MSG(a->extensions == SKS_MATERIAL_EXTENSION_MASK, "%s: 'all' extensions 0x%x", w, a->extensions);
    CHECK_MSG(a->clearcoat == 0.75f && a->clearcoat_roughness == 0.25f, "%s: clearcoat %g %g", w, a->clearcoat,
              a->clearcoat_roughness);
    CHECK_MSG(a->sheen_color[0] == 0.5f && a->sheen_color[1] == 0.25f && a->sheen_color[2] == 1.0f &&
                  a->sheen_roughness == 0.125f, "%s: sheen %g %g %g %g", w, a->sheen_color[0], a->sheen_color[1],
              a->sheen_color[2], a->sheen_roughness);
    CHECK_MSG(a->transmission == 0.5f, "%s: transmission %g", w, a->transmission);
    CHECK_MSG(a->thickness == 2.5f && a->attenuation_distance == 0.75f && a->attenuation_color[0] == 0.5f &&
                  a->attenuation_color[1] == 1.0f && a->attenuation_color[2] == 0.25f,
              "%s: volume %g %g (%g %g %g)", w, a->thickness, a->attenuation_distance, a->attenuation_color[0],
              a->attenuation_color[1], a->attenuation_color[2]);
    CHECK_MSG(a->ior == 1.25f, "%s: ior %g", w, a->ior);
    CHECK_MSG(d->extensions == SKS_MATERIAL_EXTENSION_MASK, "%s: 'defaults' extensions 0x%x", w, d->extensions);
    CHECK_MSG(d->clearcoat == 0 && d->clearcoat_roughness == 0 && d->sheen_color[0] == 0 && d->sheen_roughness == 0 &&
                  d->transmission == 0 && d->thickness == 0 && d->attenuation_distance == 0 &&
                  d->attenuation_color[0] == 1 && d->attenuation_color[1] == 1 && d->attenuation_color[2] == 1 &&
                  d->ior == 1.5f,
              "%s: the extensions' defaults (ior %g, attenuation colour %g)", w, d->ior, d->attenuation_color[0]);
    CHECK_MSG(b->extensions == 0 && b->clearcoat == 0 && b->ior == 0, "%s: 'bad' extensions 0x%x", w, b->extensions);
    CHECK_MSG(n->extensions == 0, "%s: 'none' extensions 0x%x", w, n->extensions);
    if (pass) break;
    /* one warning per refused extension, naming the material and extension */
    int warned = 0;
    for (size_t i = 0; i < m.warning_count; ++i)
      if (strstr(m.warnings[i], "material 2 'bad': KHR_materials_")) ++warned;
    CHECK_MSG(warned == 5, "%d warnings for 'bad' (want 5)", warned);
    char path[4200];
    snprintf(path, sizeof path, "%s/material_ext.glb", sks_test_tmpdir());
    sks_gltf_source_free(m.gltf_source);
    m.gltf_source = NULL;
    CHECK_OK(sks_write_glb(path, &m, NULL, &e), &e);
    CHECK_OK(sks_load_gltf(path, &back, &e), &e);
    if (e.code || back.material_count != 4) {
      CHECK_MSG(0, "read back %zu materials", back.material_count);
      break;
    }
  }
  sks_model_free(&back);
  sks_model_free(&m);
}

int main(void) {
  test_reference();
  test_weight_encodings();
  test_skin_without_ibm();
  test_quantized();
  test_sparse();
  test_node_matrix();
  test_interleaved();
  test_eight_influences();
  test_twelve_influences();
  test_structure_errors();
  test_clips_that_move_nothing();
  test_material_extensions();
  test_glb_container();
  test_long_chain();
  test_fox();
  test_encodings_skin_alike();
  test_cross_check_assimp();
  test_other_real_files();
  test_bad_files();
  test_fuzz_fox();
  cJSON_Delete(B.root);
  return sks_test_finish();
}
