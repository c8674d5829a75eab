/* The glTF writer and reader do linear work in the rig size (issue: cJSON
 * arrays are linked lists, indexing / counting them in loops made `control
 * -o` on a 4,096-joint skin take 6-21 s and `repair` of a 1,000,000-node
 * chain > 300 s). Counted, not timed: every cJSON call whose cost grows with
 * an array (GetArrayItem: index + 1 steps, GetArraySize: size steps,
 * DeleteItemFromArray / DetachItemFromArray / ReplaceItemInArray /
 * InsertItemInArray: index + 1) is wrapped at link time (-Wl,--wrap), and
 * cJSON's allocations are counted through its hooks. For chains of N and 8N
 * joints (one skin over all of them, one skinned vertex per joint, a
 * rotation track per joint) the work of write-from-scratch, read, and
 * write-from-source with a replaced clip must grow by less than 12x (linear:
 * 8x; the quadratic writer grew ~60x). */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "math/sks_math.h"

static size_t g_steps, g_allocs;

cJSON *__real_cJSON_GetArrayItem(const cJSON *array, int index);
int __real_cJSON_GetArraySize(const cJSON *array);
void __real_cJSON_DeleteItemFromArray(cJSON *array, int which);
cJSON *__real_cJSON_DetachItemFromArray(cJSON *array, int which);
cJSON_bool __real_cJSON_ReplaceItemInArray(cJSON *array, int which, cJSON *newitem);
cJSON_bool __real_cJSON_InsertItemInArray(cJSON *array, int which, cJSON *newitem);
cJSON *__wrap_cJSON_GetArrayItem(const cJSON *array, int index);
int __wrap_cJSON_GetArraySize(const cJSON *array);
void __wrap_cJSON_DeleteItemFromArray(cJSON *array, int which);
cJSON *__wrap_cJSON_DetachItemFromArray(cJSON *array, int which);
cJSON_bool __wrap_cJSON_ReplaceItemInArray(cJSON *array, int which, cJSON *newitem);
cJSON_bool __wrap_cJSON_InsertItemInArray(cJSON *array, int which, cJSON *newitem);

cJSON *__wrap_cJSON_GetArrayItem(const cJSON *array, int index) {
  g_steps += (size_t)(index > 0 ? index : 0) + 1;
  return __real_cJSON_GetArrayItem(array, index);
}
int __wrap_cJSON_GetArraySize(const cJSON *array) {
  int n = __real_cJSON_GetArraySize(array);
  g_steps += (size_t)n + 1;
  return n;
}
void __wrap_cJSON_DeleteItemFromArray(cJSON *array, int which) {
  g_steps += (size_t)(which > 0 ? which : 0) + 1;
  __real_cJSON_DeleteItemFromArray(array, which);
}
cJSON *__wrap_cJSON_DetachItemFromArray(cJSON *array, int which) {
  g_steps += (size_t)(which > 0 ? which : 0) + 1;
  return __real_cJSON_DetachItemFromArray(array, which);
}
cJSON_bool __wrap_cJSON_ReplaceItemInArray(cJSON *array, int which, cJSON *newitem) {
  g_steps += (size_t)(which > 0 ? which : 0) + 1;
  return __real_cJSON_ReplaceItemInArray(array, which, newitem);
}
cJSON_bool __wrap_cJSON_InsertItemInArray(cJSON *array, int which, cJSON *newitem) {
  g_steps += (size_t)(which > 0 ? which : 0) + 1;
  return __real_cJSON_InsertItemInArray(array, which, newitem);
}

static void *count_malloc(size_t n) { ++g_allocs; return malloc(n); }

static char *dup_s(const char *s) {
  char *d = malloc(strlen(s) + 1);
  strcpy(d, s);
  return d;
}

/* A chain of n joints, each bound by one skin, one skinned vertex per joint
 * (triangles over consecutive vertices), one clip with a rotation track per joint. */
static void make_chain(sks_model *m, size_t n) {
  memset(m, 0, sizeof *m);
  sks_skeleton *sk = &m->skeleton;
  sk->joint_count = n;
  sk->names = calloc(n, sizeof *sk->names);
  sk->parents = malloc(n * sizeof *sk->parents);
  sk->rest = malloc(n * sizeof *sk->rest);
  m->skin_count = 1;
  m->skins = calloc(1, sizeof *m->skins);
  m->skins[0].joint_count = n;
  m->skins[0].joints = malloc(n * sizeof(int32_t));
  m->skins[0].inverse_bind = malloc(n * sizeof(sks_mat4));
  m->part_count = 1;
  m->parts = calloc(1, sizeof *m->parts);
  sks_mesh_part *p = &m->parts[0];
  p->name = dup_s("chain");
  p->material = -1;
  p->skin = 0;
  p->node = 0;
  p->vertex_count = n;
  p->positions = malloc(n * 3 * sizeof(float));
  p->influence_count = 1;
  p->joints = malloc(n * sizeof(uint16_t));
  p->weights = malloc(n * sizeof(float));
  p->index_count = (n - 2) * 3;
  p->indices = malloc(p->index_count * sizeof(uint32_t));
  m->clip_count = 1;
  m->clips = calloc(1, sizeof *m->clips);
  sks_clip *c = &m->clips[0];
  c->name = dup_s("bend");
  c->duration = 1.0f;
  c->track_count = n;
  c->tracks = calloc(n, sizeof *c->tracks);
  for (size_t i = 0; i < n; ++i) {
    char name[32];
    snprintf(name, sizeof name, "j%zu", i);
    sk->names[i] = dup_s(name);
    sk->parents[i] = (int32_t)i - 1;
    sk->rest[i] = sks_transform_identity();
    sk->rest[i].translation.y = i ? 0.01f : 0.0f;
    m->skins[0].joints[i] = (int32_t)i;
    sks_mat4 ibm;
    memset(&ibm, 0, sizeof ibm);
    ibm.m[0] = ibm.m[5] = ibm.m[10] = ibm.m[15] = 1.0f;
    ibm.m[13] = -0.01f * (float)i;
    m->skins[0].inverse_bind[i] = ibm;
    p->positions[3 * i] = (float)(i % 2) * 0.01f;
    p->positions[3 * i + 1] = 0.01f * (float)i;
    p->positions[3 * i + 2] = 0.0f;
    p->joints[i] = (uint16_t)(i % 65536);
    p->weights[i] = 1.0f;
    sks_track *t = &c->tracks[i];
    t->joint = (int32_t)i;
    t->path = SKS_PATH_ROTATION;
    t->interpolation = SKS_INTERP_LINEAR;
    t->key_count = 2;
    t->times = malloc(2 * sizeof(float));
    t->values = malloc(8 * sizeof(float));
    t->times[0] = 0.0f;
    t->times[1] = 1.0f;
    float v[8] = {0, 0, 0, 1, 0, 0, 0.0499792f, 0.99875f};
    memcpy(t->values, v, sizeof v);
  }
  for (size_t i = 0; i + 2 < n; ++i) {
    p->indices[3 * i] = (uint32_t)i;
    p->indices[3 * i + 1] = (uint32_t)i + 1;
    p->indices[3 * i + 2] = (uint32_t)i + 2;
  }
}

typedef struct work { size_t write, read, rewrite; } work;

static work measure(size_t n) {
  work w = {0, 0, 0};
  sks_model m, back;
  sks_error err = {0};
  make_chain(&m, n);
  char path[4096], path2[4096];
  snprintf(path, sizeof path, "%s/chain_%zu.glb", sks_test_tmpdir(), n);
  snprintf(path2, sizeof path2, "%s/chain_%zu_b.glb", sks_test_tmpdir(), n);
  g_steps = g_allocs = 0;
  CHECK_OK(sks_write_glb(path, &m, NULL, &err), &err);
  w.write = g_steps + g_allocs;
  g_steps = g_allocs = 0;
  CHECK_OK(sks_load_gltf(path, &back, &err), &err);
  w.read = g_steps + g_allocs;
  CHECK(back.skeleton.joint_count == n && back.clip_count == 1);
  if (back.clip_count == 1) back.clips[0].tracks[0].values[4] = 0.1f; /* a changed clip: re-written */
  if (back.clip_count == 1) back.clips[0].tracks[0].values[7] = 0.994987f;
  g_steps = g_allocs = 0;
  CHECK_OK(sks_write_glb(path2, &back, NULL, &err), &err);
  w.rewrite = g_steps + g_allocs;
  sks_model_free(&back);
  sks_model_free(&m);
  printf("  N = %6zu joints: write %zu, read %zu, write back %zu (counted steps + cJSON allocations)\n", n,
         w.write, w.read, w.rewrite);
  return w;
}

int main(void) {
  cJSON_Hooks hooks = {count_malloc, free};
  cJSON_InitHooks(&hooks);
  size_t n = 2000;
  work a = measure(n), b = measure(8 * n);
  double rw = (double)b.write / (double)a.write, rr = (double)b.read / (double)a.read,
         rb = (double)b.rewrite / (double)a.rewrite;
  printf("  growth for 8x joints: write %.2fx, read %.2fx, write back %.2fx (linear: 8x)\n", rw, rr, rb);
  CHECK_MSG(a.write > 0 && rw < 12.0, "write grows %.2fx for 8x joints", rw);
  CHECK_MSG(a.read > 0 && rr < 12.0, "read grows %.2fx for 8x joints", rr);
  CHECK_MSG(a.rewrite > 0 && rb < 12.0, "write back grows %.2fx for 8x joints", rb);
  return sks_test_finish();
}
