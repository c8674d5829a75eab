#define _POSIX_C_SOURCE 200809L
#include "sks_test.h"
#include "math/sks_math.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sks_test_passed = 0, sks_test_failed = 0;

static const char *find_file(const char *base, const char *rel, const char *what) {
  static char ring[8][4096];
  static int next = 0;
  char *buf = ring[next++ & 7];
  snprintf(buf, 4096, "%s/%s", base, rel);
  if (access(buf, R_OK) != 0) {
    fprintf(stderr, "SKIP part: %s not found at %s (%s)\n", rel, buf, what);
    return NULL;
  }
  return buf;
}

const char *sks_test_assimp_model(const char *rel) {
  const char *base = getenv("SKS_ASSIMP_MODELS");
  return find_file(base ? base : SKS_ASSIMP_MODELS, rel,
                   "install Debian's assimp-testmodels");
}

const char *sks_test_shared_data(const char *rel) {
  const char *base = getenv("SKS_SHARED_DATA");
  return find_file(base ? base : SKS_SHARED_DATA, rel, "../shared/data beside the repo");
}

const char *sks_test_tmpdir(void) {
  static char dir[4096];
  if (!dir[0]) {
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/sks_test_XXXXXX", t ? t : "/tmp");
    if (!mkdtemp(dir)) { perror("mkdtemp"); exit(2); }
  }
  return dir;
}

int sks_test_finish(void) {
  printf("%d passed, %d failed\n", sks_test_passed, sks_test_failed);
  return sks_test_failed ? 1 : 0;
}

void sks_test_skip(const char *why) {
  printf("SKIPPED: %s\n", why);
  exit(77);
}

char *sks_test_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (!d) abort();
  memcpy(d, s, n);
  return d;
}

void sks_test_rest_skin(sks_model *m, size_t nb) {
  const sks_skeleton *sk = &m->skeleton;
  size_t J = sk->joint_count;
  sks_mat4 *models = malloc((J ? J : 1) * sizeof(sks_mat4));
  m->skin_count = 1;
  m->skins = calloc(1, sizeof(sks_skin));
  if (!models || !m->skins) abort();
  sks_local_to_model_job fk = {sk->parents, sk->rest, J, NULL, models};
  sks_local_to_model_job_run(&fk);
  m->skins[0].name = sks_test_strdup("skin");
  m->skins[0].joint_count = nb;
  m->skins[0].joints = malloc((nb ? nb : 1) * sizeof(int32_t));
  m->skins[0].inverse_bind = malloc((nb ? nb : 1) * sizeof(sks_mat4));
  if (!m->skins[0].joints || !m->skins[0].inverse_bind) abort();
  for (size_t b = 0; b < nb && b + 1 < J; ++b) {
    m->skins[0].joints[b] = (int32_t)(b + 1);
    sks_m4_inverse(&models[b + 1], &m->skins[0].inverse_bind[b]);
  }
  free(models);
}

sks_morph_track *sks_test_add_morph_track(sks_clip *c, size_t keys, float span, float start) {
  c->morph_track_count = 1;
  c->morph_tracks = calloc(1, sizeof(sks_morph_track));
  if (!c->morph_tracks) abort();
  sks_morph_track *mt = &c->morph_tracks[0];
  mt->node = 0;
  mt->interpolation = SKS_INTERP_LINEAR;
  mt->weight_count = 2;
  mt->key_count = keys;
  mt->times = malloc((keys ? keys : 1) * sizeof(float));
  mt->values = malloc((keys ? keys : 1) * 2 * sizeof(float));
  if (!mt->times || !mt->values) abort();
  for (size_t k = 0; k < keys; ++k) {
    mt->times[k] = keys > 1 ? c->duration * (float)k / (float)(keys - 1) * span + start : start;
    mt->values[2 * k] = (float)(0.5 + 0.5 * sin(1.3 * (double)k));
    mt->values[2 * k + 1] = (float)(k % 2);
  }
  return mt;
}

sks_mesh_part *sks_test_add_rigid_part(sks_model *m, const char *name, int32_t node, size_t V, size_t I) {
  sks_mesh_part *np = realloc(m->parts, (m->part_count + 1) * sizeof *np);
  if (!np || !V) abort();
  m->parts = np;
  sks_mesh_part *rp = &m->parts[m->part_count++];
  memset(rp, 0, sizeof *rp);
  rp->name = sks_test_strdup(name);
  rp->material = -1;
  rp->skin = -1;
  rp->node = node;
  rp->vertex_count = V;
  rp->positions = calloc(3 * V, sizeof(float));
  rp->index_count = I;
  rp->indices = malloc((I ? I : 1) * sizeof(uint32_t));
  if (!rp->positions || !rp->indices) abort();
  for (size_t k = 0; k < I; ++k) rp->indices[k] = (uint32_t)(k % V);
  return rp;
}

sks_mesh_part *sks_test_add_tube_part(sks_model *m, size_t V) {
  m->part_count = 1;
  m->parts = calloc(1, sizeof(sks_mesh_part));
  if (!m->parts) abort();
  sks_mesh_part *p = &m->parts[0];
  p->name = sks_test_strdup("tube");
  p->material = -1;
  p->skin = 0;
  p->node = 0;
  p->vertex_count = V;
  p->positions = malloc((V ? V : 1) * 3 * sizeof(float));
  p->influence_count = 4;
  p->joints = calloc(V ? V * 4 : 1, sizeof(uint16_t));
  p->weights = calloc(V ? V * 4 : 1, sizeof(float));
  if (!p->name || !p->positions || !p->joints || !p->weights) abort();
  return p;
}

void sks_test_chain_skeleton(sks_model *m, size_t nb, float bend) {
  size_t J = nb + 1;
  sks_skeleton *sk = &m->skeleton;
  sk->joint_count = J;
  sk->names = calloc(J, sizeof(char *));
  sk->parents = malloc(J * sizeof(int32_t));
  sk->rest = malloc(J * sizeof(sks_transform));
  if (!sk->names || !sk->parents || !sk->rest) abort();
  for (size_t j = 0; j < J; ++j) {
    char nm[32];
    snprintf(nm, sizeof nm, j ? "bone_%zu" : "Armature", j - 1);
    sk->names[j] = sks_test_strdup(nm);
    sk->parents[j] = (int32_t)j - 1;
    sk->rest[j] = sks_transform_identity();
    if (j == 0) {
      sk->rest[j].rotation = sks_q_from_axis_angle(sks_v3(1, 0, 0), 1.5707963f);
      sk->rest[j].scale = sks_v3(0.5f, 0.5f, 0.5f);
      sk->rest[j].translation = sks_v3(3, 1, 0);
    } else if (j > 1) {
      sk->rest[j].translation = sks_v3(1, 0, 0);
      if (bend != 0) sk->rest[j].rotation = sks_q_from_axis_angle(sks_v3(0, 0, 1), bend);
    }
  }
}
