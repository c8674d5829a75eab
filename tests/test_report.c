/* The HTML report on a procedural two-bone rig with known errors.
 *
 * A tube along X (two joints, smooth weights across the elbow) bends; the
 * "bakes" are the true joint transforms with the elbow angle scaled (known,
 * growing error towards the tip) and a near-exact control (angle x 1.00005).
 * Checks that the page's embedded data IS what the GPU and the colours need:
 * palettes (FK + inverse binds) skin the bind mesh onto the solved surface,
 * the per-vertex errors decode to e / D, the ground truth decodes to y_fj;
 * plus error paths and the size budget (5 clips x 24 frames x 10k vertices).
 *
 * `test_report --write DIR` writes DIR/report_procedural.html (imperfect
 * bakes, two modes) and DIR/report_control.html (control) for the browser test, with
 * the CLI --json shape of their numbers beside them (report_*.json). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "math/sks_math.h"
#include "solve/metrics.h" /* sks_dfk: the rest pose in double, as the bake's view */
#include "sks_variants.h"

#define RINGS 41
#define SEGMENTS 24
#define TUBE_LEN 2.0f
#define RADIUS 0.2f

static char *dup_s(const char *s) {
  char *d = malloc(strlen(s) + 1);
  strcpy(d, s);
  return d;
}

/* Tube of rings x segments vertices along +X, bound to joints 0 (x<1) and 1. */
static void make_rig(sks_model *m, size_t rings, size_t segments) {
  memset(m, 0, sizeof *m);
  m->source_path = dup_s("procedural-two-bone");
  sks_skeleton *sk = &m->skeleton;
  sk->joint_count = 2;
  sk->names = malloc(2 * sizeof(char *));
  sk->names[0] = dup_s("upper");
  sk->names[1] = dup_s("lower");
  sk->parents = malloc(2 * sizeof(int32_t));
  sk->parents[0] = -1;
  sk->parents[1] = 0;
  sk->rest = malloc(2 * sizeof(sks_transform));
  sk->rest[0] = sks_transform_identity();
  sk->rest[1] = sks_transform_identity();
  sk->rest[1].translation = sks_v3(TUBE_LEN / 2, 0, 0);
  m->skin_count = 1;
  m->skins = calloc(1, sizeof(sks_skin));
  m->skins[0].name = dup_s("skin");
  m->skins[0].joint_count = 2;
  m->skins[0].joints = malloc(2 * sizeof(int32_t));
  m->skins[0].joints[0] = 0;
  m->skins[0].joints[1] = 1;
  m->skins[0].inverse_bind = malloc(2 * sizeof(sks_mat4));
  m->skins[0].inverse_bind[0] = sks_m4_identity();
  m->skins[0].inverse_bind[1] = sks_m4_identity();
  m->skins[0].inverse_bind[1].m[12] = -TUBE_LEN / 2;
  m->part_count = 1;
  m->parts = calloc(1, sizeof(sks_mesh_part));
  sks_mesh_part *p = &m->parts[0];
  p->name = dup_s("tube");
  p->material = -1;
  p->skin = 0;
  p->node = 0;
  size_t V = rings * segments;
  p->vertex_count = V;
  p->positions = malloc(V * 3 * sizeof(float));
  p->normals = malloc(V * 3 * sizeof(float));
  p->influence_count = 2;
  p->joints = malloc(V * 2 * sizeof(uint16_t));
  p->weights = malloc(V * 2 * sizeof(float));
  for (size_t r = 0; r < rings; ++r) {
    float x = TUBE_LEN * (float)r / (float)(rings - 1);
    float s = (x - 0.8f) / 0.4f;
    s = s < 0 ? 0 : s > 1 ? 1 : s;
    float w1 = s * s * (3 - 2 * s);
    for (size_t k = 0; k < segments; ++k) {
      float a = 6.2831853f * (float)k / (float)segments;
      size_t v = r * segments + k;
      p->positions[3 * v] = x;
      p->positions[3 * v + 1] = RADIUS * cosf(a);
      p->positions[3 * v + 2] = RADIUS * sinf(a);
      p->normals[3 * v] = 0;
      p->normals[3 * v + 1] = cosf(a);
      p->normals[3 * v + 2] = sinf(a);
      p->joints[2 * v] = 0;
      p->joints[2 * v + 1] = 1;
      p->weights[2 * v] = 1 - w1;
      p->weights[2 * v + 1] = w1;
    }
  }
  p->index_count = (rings - 1) * segments * 6;
  p->indices = malloc(p->index_count * sizeof(uint32_t));
  size_t i = 0;
  for (size_t r = 0; r + 1 < rings; ++r)
    for (size_t k = 0; k < segments; ++k) {
      uint32_t a = (uint32_t)(r * segments + k), b = (uint32_t)(r * segments + (k + 1) % segments);
      uint32_t c = a + (uint32_t)segments, d = b + (uint32_t)segments;
      p->indices[i++] = a; p->indices[i++] = c; p->indices[i++] = b;
      p->indices[i++] = b; p->indices[i++] = c; p->indices[i++] = d;
    }
}

/* The true locals at frame f: root sways and drifts, the elbow bends up to ~60 deg. */
static void true_locals(const sks_model *m, size_t f, size_t F, double phase, sks_transform *out) {
  double u = F > 1 ? (double)f / (double)(F - 1) : 0;
  out[0] = m->skeleton.rest[0];
  out[0].rotation = sks_q_from_axis_angle(sks_v3(0, 1, 0), (float)(0.3 * sin(6.2831853 * u + phase)));
  out[0].translation = sks_v3(0, (float)(0.1 * u), 0);
  out[1] = m->skeleton.rest[1];
  out[1].rotation = sks_q_from_axis_angle(sks_v3(0, 0, 1), (float)(1.05 * sin(3.14159265 * u) + 0.05));
}

/* LBS of every skinned part (any skin, any influence count), part order,
 * with the weights as played and as the bake solves: renormalised to sum 1. */
static void skin_model(const sks_model *m, const sks_transform *locals, float *out) {
  sks_mat4 models[2], pal[2][2];
  sks_local_to_model_job job = {m->skeleton.parents, locals, 2, NULL, models};
  sks_local_to_model_job_run(&job);
  for (size_t s = 0; s < m->skin_count; ++s)
    for (int j = 0; j < 2; ++j) pal[s][j] = sks_m4_mul(&models[m->skins[s].joints[j]], &m->skins[s].inverse_bind[j]);
  size_t o = 0;
  for (size_t pi = 0; pi < m->part_count; ++pi) {
    const sks_mesh_part *p = &m->parts[pi];
    size_t k = p->influence_count;
    for (size_t v = 0; v < p->vertex_count; ++v, ++o) {
      sks_vec3 x = sks_v3(p->positions[3 * v], p->positions[3 * v + 1], p->positions[3 * v + 2]);
      sks_vec3 acc = sks_v3(0, 0, 0);
      float ws = 0;
      for (size_t i = 0; i < k; ++i) ws += p->weights[k * v + i] > 0 ? p->weights[k * v + i] : 0;
      for (size_t i = 0; i < k; ++i)
        acc = sks_v3_add(acc, sks_v3_scale(sks_m4_point(&pal[p->skin][p->joints[k * v + i]], x),
                                           ws > 0 ? p->weights[k * v + i] / ws : 0));
      out[3 * o] = acc.x; out[3 * o + 1] = acc.y; out[3 * o + 2] = acc.z;
    }
  }
}

/* A second part on a second skin (joints listed in the other order) with 6
 * influence slots, weights in scrambled slots: exercises the palette offsets
 * and the largest-4 selection the viewer uploads. */
static void add_fin(sks_model *m) {
  m->skins = realloc(m->skins, 2 * sizeof(sks_skin));
  sks_skin *s = &m->skins[1];
  memset(s, 0, sizeof *s);
  s->name = dup_s("fin_skin");
  s->joint_count = 2;
  s->joints = malloc(2 * sizeof(int32_t));
  s->joints[0] = 1;
  s->joints[1] = 0;
  s->inverse_bind = malloc(2 * sizeof(sks_mat4));
  s->inverse_bind[0] = m->skins[0].inverse_bind[1];
  s->inverse_bind[1] = m->skins[0].inverse_bind[0];
  m->skin_count = 2;
  m->parts = realloc(m->parts, 2 * sizeof(sks_mesh_part));
  sks_mesh_part *p = &m->parts[1];
  memset(p, 0, sizeof *p);
  p->name = dup_s("fin");
  p->material = -1;
  p->skin = 1;
  p->node = 0;
  const size_t V = 3;
  p->vertex_count = V;
  static const float pos[9] = {1.5f, 0.2f, 0.0f, 1.8f, 0.2f, 0.0f, 1.7f, 0.45f, 0.0f};
  p->positions = malloc(sizeof pos);
  memcpy(p->positions, pos, sizeof pos);
  p->influence_count = 6;
  p->joints = malloc(V * 6 * sizeof(uint16_t));
  p->weights = malloc(V * 6 * sizeof(float));
  static const uint16_t js[6] = {1, 0, 1, 0, 0, 1};
  /* Summing to 1.1: files do this; a player, the bake and the page
   * renormalise them to 1. */
  static const float ws[6] = {0.0f, 0.0f, 0.1f, 0.0f, 1.0f, 0.0f};
  for (size_t v = 0; v < V; ++v) {
    memcpy(p->joints + 6 * v, js, sizeof js);
    memcpy(p->weights + 6 * v, ws, sizeof ws);
  }
  p->index_count = 3;
  p->indices = malloc(3 * sizeof(uint32_t));
  p->indices[0] = 0; p->indices[1] = 1; p->indices[2] = 2;
  m->part_count = 2;
}

/* One baked clip: elbow angle scaled by `scale` (1 = exact), metrics as MISSION.md. */
static void make_clip(const sks_model *m, sks_baked_clip *c, const char *name, sks_solve_mode mode,
                      size_t F, double phase, float scale, double D) {
  size_t V = sks_model_vertex_count(m), J = m->skeleton.joint_count;
  memset(c, 0, sizeof *c);
  c->name = dup_s(name);
  c->mode = mode;
  c->frame_count = F;
  c->joint_count = J;
  c->times = malloc(F * sizeof(float));
  c->locals = malloc(F * J * sizeof(sks_transform));
  c->frame_mean_error_pct = malloc(F * sizeof(float));
  c->frame_worst_error_pct = malloc(F * sizeof(float));
  c->target_surface = malloc(F * V * 3 * sizeof(float));
  c->solved_surface = malloc(F * V * 3 * sizeof(float));
  c->vertex_error = malloc(F * V * sizeof(float));
  double sum_e = 0, sum_m = 0, worst = 0;
  sks_transform truth[2];
  float *bind = malloc(V * 3 * sizeof(float));
  skin_model(m, m->skeleton.rest, bind); /* rest = bind here: y_0j */
  for (size_t f = 0; f < F; ++f) {
    c->times[f] = (float)f / 24.0f;
    true_locals(m, f, F, phase, truth);
    skin_model(m, truth, c->target_surface + f * V * 3);
    sks_transform *solved = c->locals + f * J;
    memcpy(solved, truth, J * sizeof(sks_transform));
    if (scale != 1.0f) {
      double u = F > 1 ? (double)f / (double)(F - 1) : 0;
      solved[1].rotation = sks_q_from_axis_angle(sks_v3(0, 0, 1), (float)((1.05 * sin(3.14159265 * u) + 0.05) * scale));
    }
    skin_model(m, solved, c->solved_surface + f * V * 3);
    double fs = 0, fw = 0;
    for (size_t v = 0; v < V; ++v) {
      const float *y = c->target_surface + (f * V + v) * 3, *s = c->solved_surface + (f * V + v) * 3;
      const float *x0 = bind + 3 * v;
      double e = sqrt((double)(s[0] - y[0]) * (s[0] - y[0]) + (double)(s[1] - y[1]) * (s[1] - y[1]) +
                      (double)(s[2] - y[2]) * (s[2] - y[2]));
      double mm = sqrt((double)(x0[0] - y[0]) * (x0[0] - y[0]) + (double)(x0[1] - y[1]) * (x0[1] - y[1]) +
                       (double)(x0[2] - y[2]) * (x0[2] - y[2]));
      c->vertex_error[f * V + v] = (float)e;
      fs += e;
      if (e > fw) fw = e;
      sum_m += mm;
    }
    sum_e += fs;
    if (fw > worst) worst = fw;
    c->frame_mean_error_pct[f] = (float)(fs / (double)V / D * 100.0);
    c->frame_worst_error_pct[f] = (float)(fw / D * 100.0);
  }
  free(bind);
  c->quality = sum_m > 0 ? 1.0 - sum_e / sum_m : 1.0;
  c->mean_error_pct = sum_e / (double)(F * V) / D * 100.0;
  c->worst_error_pct = worst / D * 100.0;
  c->solve_ms = 1.25 * (double)F;
  c->sweeps_per_frame = 3.5;
  sks_error err; /* the bake's diagnosis, from these surfaces */
  CHECK_OK(sks_diagnose(m, c->solved_surface, c->target_surface, F, D, &c->diagnosis, &err), &err);
}

static void make_result(const sks_model *m, sks_bake_result *r, sks_solve_mode mode, float scale,
                        size_t clips, size_t frames, size_t frame_step) {
  /* "Wave ..." carries markup: the page must escape it everywhere. */
  static const char *names[] = {"Bend", "Wave </script><b>&amp;\"'", "Reach", "Curl", "Sway"};
  memset(r, 0, sizeof *r);
  r->diagonal = sks_model_bind_diagonal(m);
  r->target_vertex_count = sks_model_vertex_count(m);
  r->target_joint_count = m->skeleton.joint_count;
  r->constraint_count = r->target_vertex_count;
  /* one rig onto itself, as a control's alignment reads; no joint names */
  r->alignment.identity = 1;
  r->alignment.scale = 1;
  r->alignment.label_agreement = r->alignment.head_agreement = r->alignment.up_deg = r->alignment.facing_deg = NAN;
  r->correspondence_identity = 1;
  r->clip_count = clips;
  r->clips = calloc(clips, sizeof(sks_baked_clip));
  for (size_t c = 0; c < clips; ++c)
    make_clip(m, &r->clips[c], names[c % 5], mode, frames + frame_step * c, 0.7 * (double)c, scale, r->diagonal);
}

/* Local copy of bake-result freeing, so the test does not need the solver. */
static void free_result(sks_bake_result *r) {
  for (size_t c = 0; c < r->clip_count; ++c) {
    sks_baked_clip *k = &r->clips[c];
    free(k->name); free(k->times); free(k->locals); free(k->frame_mean_error_pct);
    free(k->frame_worst_error_pct); free(k->target_surface); free(k->solved_surface); free(k->vertex_error);
    sks_diagnosis_free(&k->diagnosis);
  }
  free(r->clips);
  memset(r, 0, sizeof *r);
}

/* ---- rigid parts (skin -1, following their node) ------------------------ */

/* Vertices the report shows and the bake measures: the skinned parts', then
 * the rigid parts' (part order; a rigid part on a joint out of range is not
 * solved). */
static size_t rigid_count(const sks_model *m) {
  size_t n = 0;
  for (size_t p = 0; p < m->part_count; ++p)
    if (m->parts[p].skin < 0 && m->parts[p].node >= 0 && (size_t)m->parts[p].node < m->skeleton.joint_count)
      n += m->parts[p].vertex_count;
  return n;
}
static size_t all_count(const sks_model *m) { return sks_model_vertex_count(m) + rigid_count(m); }

/* Vertex v of a kept array (sks_baked_clip's skinned one and its rigid_*
 * one) at frame f, in that order. */
static const float *kept_at(const float *skinned, const float *rigid, const sks_model *m, size_t dim, size_t f,
                            size_t v) {
  size_t VS = sks_model_vertex_count(m), VR = rigid_count(m);
  return v < VS ? skinned + (f * VS + v) * dim : rigid + (f * VR + v - VS) * dim;
}
#define SOLVED_AT(c, m, f, v) kept_at((c)->solved_surface, (c)->rigid_solved_surface, m, 3, f, v)
#define TARGET_AT(c, m, f, v) kept_at((c)->target_surface, (c)->rigid_target_surface, m, 3, f, v)
#define ERROR_AT(c, m, f, v) (*kept_at((c)->vertex_error, (c)->rigid_vertex_error, m, 1, f, v))

/* The report's bind positions, every vertex in that order: a skinned part's
 * own, a rigid part's taken to bind space by its node's rest model (the
 * rigs here have the scene = bind space, T = I). */
static void report_bind(const sks_model *m, float *out) {
  size_t J = m->skeleton.joint_count, o = 0;
  sks_daffine *rest = malloc((J ? J : 1) * sizeof(sks_daffine));
  sks_dfk(&m->skeleton, m->skeleton.rest, rest);
  for (int pass = 0; pass < 2; ++pass)
    for (size_t pi = 0; pi < m->part_count; ++pi) {
      const sks_mesh_part *p = &m->parts[pi];
      if ((p->skin < 0) != pass || (pass && (p->node < 0 || (size_t)p->node >= J))) continue;
      for (size_t v = 0; v < p->vertex_count; ++v, ++o) {
        double x[3] = {p->positions[3 * v], p->positions[3 * v + 1], p->positions[3 * v + 2]}, y[3];
        if (pass) sks_daff_point(&rest[p->node], x, y);
        else memcpy(y, x, sizeof y);
        for (int a = 0; a < 3; ++a) out[3 * o + (size_t)a] = (float)y[a];
      }
    }
  free(rest);
}

/* ---- reading the page back --------------------------------------------- */

static char *read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *d = malloc((size_t)n + 1);
  size_t got = fread(d, 1, (size_t)n, f);
  fclose(f);
  d[got] = '\0';
  if (size) *size = got;
  return d;
}

static unsigned char *b64_decode(const char *s, size_t *n) {
  size_t len = strlen(s), o = 0;
  unsigned char *out = malloc(len / 4 * 3 + 3);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < len && s[i] != '='; ++i) {
    const char c = s[i];
    int v = c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 :
            c >= '0' && c <= '9' ? c - '0' + 52 : c == '+' ? 62 : c == '/' ? 63 : -1;
    if (v < 0) continue;
    acc = (acc << 6) | (uint32_t)v;
    bits += 6;
    if (bits >= 8) { bits -= 8; out[o++] = (unsigned char)(acc >> bits); }
  }
  *n = o;
  return out;
}

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 31, mant = h & 1023;
  double s = h & 0x8000 ? -1 : 1;
  if (e == 0) return s * mant * ldexp(1, -24);
  if (e == 31) return mant ? NAN : s * INFINITY;
  return s * (1 + mant / 1024.0) * ldexp(1, e - 15);
}

static cJSON *page_data(const char *html) {
  const char *open = strstr(html, "id=\"sks-data\">");
  if (!open) return NULL;
  open += strlen("id=\"sks-data\">");
  const char *close = strstr(open, "</script>");
  if (!close) return NULL;
  return cJSON_ParseWithLength(open, (size_t)(close - open));
}

static void *blob(const cJSON *obj, const char *key, size_t *n) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsString(s)) { *n = 0; return NULL; }
  return b64_decode(s->valuestring, n);
}

/* The bind positions the viewer skins at shown frame f of baked clip bj:
 * bind + sum_k w_k delta_k from the page's mesh.morphs and the clip's
 * morph_weights (data version 2), as viewer.js does; out = pos elsewhere.
 * Returns the morphed vertices (0: none). */
static size_t page_morphed_bind(const cJSON *mesh, const cJSON *bj, size_t f, const float *pos, size_t n,
                                float *out) {
  memcpy(out, pos, n * 3 * sizeof(float));
  const cJSON *gs = cJSON_GetObjectItem(mesh, "morphs");
  const double wc = cJSON_GetNumberValue(cJSON_GetObjectItem(mesh, "morph_weight_count")); /* NaN when absent */
  size_t W = wc >= 0 && wc < 1e9 ? (size_t)wc : 0, nw = 0, moved = 0;
  float *w = cJSON_GetArraySize(gs) ? blob(bj, "morph_weights", &nw) : NULL;
  CHECK(cJSON_GetArraySize(gs) == 0 || (W && w && nw % (W * 4) == 0 && (f + 1) * W * 4 <= nw));
  for (int i = 0; W && w && (f + 1) * W * 4 <= nw && i < cJSON_GetArraySize(gs); ++i) {
    const cJSON *g = cJSON_GetArrayItem(gs, i);
    size_t first = (size_t)cJSON_GetObjectItem(g, "first")->valuedouble;
    size_t count = (size_t)cJSON_GetObjectItem(g, "count")->valuedouble;
    size_t T = (size_t)cJSON_GetObjectItem(g, "targets")->valuedouble;
    size_t off = (size_t)cJSON_GetObjectItem(g, "weight_offset")->valuedouble, nd = 0;
    float *d = blob(g, "deltas", &nd);
    CHECK(d && nd == T * count * 12 && first + count <= n && off + T <= W);
    for (size_t q = 0; d && nd == T * count * 12 && first + count <= n && q < count; ++q) {
      for (int a = 0; a < 3; ++a) {
        double p = pos[3 * (first + q) + (size_t)a];
        for (size_t k = 0; k < T; ++k) p += (double)w[f * W + off + k] * d[(k * count + q) * 3 + (size_t)a];
        out[3 * (first + q) + (size_t)a] = (float)p;
      }
      moved += memcmp(out + 3 * (first + q), pos + 3 * (first + q), 3 * sizeof(float)) != 0;
    }
    free(d);
  }
  free(w);
  return moved;
}

/* Every check that the data matches the bake it came from. */
static void check_page(const char *path, const sks_model *m, const sks_bake_result *const *res, size_t nres) {
  size_t size = 0;
  char *html = read_all(path, &size);
  CHECK_MSG(html != NULL, "%s not written", path);
  if (!html) return;
  CHECK(strstr(html, "<canvas id=\"view-canvas\"") != NULL);
  CHECK(strstr(html, "<dd id=\"alignment\"") != NULL); /* what the alignment found, as the CLI's header */
  CHECK(strstr(html, "id=\"frame-mean-error\"") != NULL);
  CHECK(strstr(html, "id=\"quality-table\"") != NULL);
  CHECK(strstr(html, "<svg id=\"plot-0\"") != NULL);
  CHECK(strstr(html, "{{") == NULL); /* every template marker filled */
  CHECK(strstr(html, "<b>") == NULL);  /* names are escaped (see make_result) */
  CHECK(strstr(html, "http://") == NULL && strstr(html, "https://") == NULL); /* no network */
  CHECK(strstr(html, "<script src") == NULL && strstr(html, "<link") == NULL);
  cJSON *d = page_data(html);
  CHECK_MSG(d != NULL, "embedded JSON does not parse");
  if (!d) { free(html); return; }
  double D = res[0]->diagonal;
  size_t V = all_count(m); /* skinned and rigid parts */
  const cJSON *mesh = cJSON_GetObjectItem(d, "mesh");
  CHECK(cJSON_GetObjectItem(mesh, "vertex_count")->valuedouble == (double)V);
  CHECK(cJSON_GetObjectItem(mesh, "rigid_vertex_count")->valuedouble == (double)rigid_count(m));
  size_t nj = 0, nw = 0, np = 0;
  uint16_t *joints = blob(mesh, "joints", &nj);
  float *weights = blob(mesh, "weights", &nw);
  float *pos = blob(mesh, "positions", &np);
  size_t K = (size_t)cJSON_GetObjectItem(mesh, "influences")->valuedouble;
  CHECK(K == 4 || K == 8);
  CHECK(nj == V * K * 2 && nw == V * K * 4 && np == V * 3 * 4);
  size_t P = (size_t)cJSON_GetObjectItem(mesh, "palette_size")->valuedouble;
  { /* the dominant-joint view: the bake's rule, vertex for vertex */
    size_t nd = 0, nc = 0;
    int32_t *dom = blob(mesh, "dominant", &nd), *want = malloc((V ? V : 1) * sizeof(int32_t));
    unsigned char *col = blob(mesh, "joint_colors", &nc);
    sks_error err;
    CHECK(nd == V * 4 && nc == m->skeleton.joint_count * 3 && want);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(mesh, "joint_names")) == (int)m->skeleton.joint_count);
    CHECK_OK(sks_dominant_joints(m, want, V, &err), &err);
    size_t same = 0, seen = 0;
    for (size_t v = 0; dom && want && nd == V * 4 && v < V; ++v) same += dom[v] == want[v];
    for (size_t j = 1; col && j < m->skeleton.joint_count; ++j) /* colours differ per joint */
      seen += memcmp(col + 3 * j, col + 3 * (j - 1), 3) != 0;
    CHECK(same == V);
    CHECK(seen + 1 == m->skeleton.joint_count);
    free(dom); free(want); free(col);
  }
  { /* one worst-joints list per baked clip */
    size_t lists = 0, want = 0;
    for (const char *q = html; (q = strstr(q, "<table class=\"joints\"")) != NULL; ++q) ++lists;
    for (size_t r = 0; r < nres; ++r) want += res[r]->clip_count;
    CHECK_MSG(lists == want, "%zu joint lists for %zu baked clips", lists, want);
  }
  const cJSON *clips = cJSON_GetObjectItem(d, "clips");
  CHECK((size_t)cJSON_GetArraySize(clips) == res[0]->clip_count);
  double worst_skin = 0, worst_err = 0, worst_gt = 0, worst_rigid = 0;
  size_t morphed_vertices = 0; /* vertex-frames the carried morph targets moved */
  for (int c = 0; c < cJSON_GetArraySize(clips); ++c) {
    const cJSON *cj = cJSON_GetArrayItem(clips, c);
    /* Over the budget the views hold frames 0, k, 2k, ...: view frame f is
     * clip frame f * k; F counts the shown frames. */
    size_t F = (size_t)cJSON_GetObjectItem(cj, "frame_count")->valuedouble;
    size_t ks = (size_t)cJSON_GetObjectItem(cj, "frame_step")->valuedouble;
    CHECK(ks >= 1);
    if (ks < 1) ks = 1;
    CHECK(cJSON_GetObjectItem(cj, "source_frame_count")->valuedouble == (double)res[0]->clips[c].frame_count);
    CHECK(F == (res[0]->clips[c].frame_count + ks - 1) / ks);
    size_t ns = 0, ng = 0;
    float *scales = blob(cj, "gt_residual_scale", &ns);
    int8_t *gt = blob(cj, "gt_residual", &ng);
    CHECK(ns == F * 4 && ng == F * V * 3);
    size_t base = (size_t)cJSON_GetObjectItem(cj, "gt_base")->valuedouble;
    const sks_baked_clip *ref0 = &res[base]->clips[c];
    /* y = solved + sign(q) (q/127)^2 rmax: within the quantisation step. */
    for (size_t f = 0; f < F && gt && scales; ++f)
      for (size_t i = 0; i < V * 3; ++i) {
        double q = gt[f * V * 3 + i] / 127.0;
        double y = SOLVED_AT(ref0, m, f * ks, i / 3)[i % 3] + (q < 0 ? -1 : 1) * q * q * scales[f];
        double dd = fabs(y - TARGET_AT(ref0, m, f * ks, i / 3)[i % 3]) / D;
        double step = scales[f] / D * (2 * fabs(q) + 1.0 / 127) / 127 / 2 + 1e-7;
        if (dd / step > worst_gt) worst_gt = dd / step;
      }
    const cJSON *baked = cJSON_GetObjectItem(cj, "baked");
    for (size_t r = 0; r < nres; ++r) {
      const cJSON *bj = cJSON_GetArrayItem(baked, (int)r);
      const sks_baked_clip *ref = &res[r]->clips[c];
      /* The numbers are those of ALL frames, whatever the views show. */
      CHECK_NEAR(cJSON_GetObjectItem(bj, "quality")->valuedouble, ref->quality, 1e-15);
      const cJSON *jl = cJSON_GetObjectItem(bj, "joints");
      CHECK(cJSON_GetArraySize(jl) == (int)ref->diagnosis.joint_count);
      for (int k = 0; k < cJSON_GetArraySize(jl) && (size_t)k < ref->diagnosis.joint_count; ++k) {
        const cJSON *o = cJSON_GetArrayItem(jl, k);
        CHECK(cJSON_GetObjectItem(o, "joint")->valuedouble == ref->diagnosis.joints[k].joint);
        CHECK(cJSON_GetObjectItem(o, "share_pct")->valuedouble == ref->diagnosis.joints[k].share * 100.0);
      }
      CHECK_NEAR(cJSON_GetObjectItem(bj, "mean_error_pct")->valuedouble, ref->mean_error_pct, 1e-15);
      CHECK_NEAR(cJSON_GetObjectItem(bj, "worst_error_pct")->valuedouble, ref->worst_error_pct, 1e-15);
      size_t over = 0;
      for (size_t i = 0; i < ref->frame_count * V; ++i) over += ERROR_AT(ref, m, i / V, i % V) / D * 100.0 >= 3.0;
      CHECK(cJSON_GetObjectItem(bj, "vertex_frames_at_ramp_max")->valuedouble == (double)over);
      CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(bj, "frame_mean_error_pct")) == (int)F);
      for (size_t f = 0; f < F; ++f) {
        CHECK((float)cJSON_GetArrayItem(cJSON_GetObjectItem(bj, "frame_mean_error_pct"), (int)f)->valuedouble ==
              ref->frame_mean_error_pct[f * ks]);
        CHECK((float)cJSON_GetArrayItem(cJSON_GetObjectItem(bj, "frame_worst_error_pct"), (int)f)->valuedouble ==
              ref->frame_worst_error_pct[f * ks]);
      }
      size_t npal = 0, ne = 0;
      float *pal = blob(bj, "palettes", &npal);
      uint16_t *eh = blob(bj, "vertex_error", &ne);
      CHECK(npal == F * P * 12 * 4 && ne == F * V * 2);
      float *bind = pos; /* the mesh's, or morphed for the frame */
      float *morphed = malloc(V * 3 * sizeof(float));
      for (size_t f = 0; f < F && pal && eh; ++f) {
        if (pos && np == V * 12) { morphed_vertices += page_morphed_bind(mesh, bj, f, pos, V, morphed); bind = morphed; }
        for (size_t v = 0; v < V; ++v) {
          /* What the vertex shader does. */
          double p[3] = {0, 0, 0};
          for (size_t s = 0; s < K; ++s) {
            const float *row = pal + (f * P + joints[K * v + s]) * 12;
            for (int k = 0; k < 3; ++k)
              p[k] += weights[K * v + s] * (row[4 * k] * bind[3 * v] + row[4 * k + 1] * bind[3 * v + 1] +
                                            row[4 * k + 2] * bind[3 * v + 2] + row[4 * k + 3]);
          }
          const float *s = SOLVED_AT(ref, m, f * ks, v);
          double dd = sqrt((p[0] - s[0]) * (p[0] - s[0]) + (p[1] - s[1]) * (p[1] - s[1]) + (p[2] - s[2]) * (p[2] - s[2])) / D;
          if (dd > worst_skin) worst_skin = dd;
          if (v >= V - rigid_count(m) && dd > worst_rigid) worst_rigid = dd;
          double e = half_to_double(eh[f * V + v]), want = ERROR_AT(ref, m, f * ks, v) / D * 100;
          double rel = fabs(e - want) / (want > 6.2e-5 ? want : 6.2e-5);
          if (rel > worst_err) worst_err = rel;
        }
      }
      free(pal); free(eh); free(morphed);
    }
    free(scales); free(gt);
  }
  CHECK_MSG(worst_skin < 1e-5, "palette skinning vs solved surface: %g D", worst_skin);
  CHECK_MSG(worst_err <= 1.0 / 2048 + 1e-9, "half-float error encoding off by %g (relative)", worst_err);
  CHECK_MSG(worst_gt <= 1.0, "ground truth residual off by %g quantisation steps", worst_gt);
  printf("%s: %zu bytes; palette skinning within %.2g D of the solved surface (%zu vertex-frames morphed; "
         "%zu rigid-part vertices within %.2g D); errors within %.2g relative; ground truth within %.2g steps\n",
         path, size, worst_skin, morphed_vertices, rigid_count(m), worst_rigid, worst_err, worst_gt);
  free(joints); free(weights); free(pos);
  cJSON_Delete(d);
  free(html);
}

/* A page whose viewer shows a clustered mesh (issue 11): every kept vertex is
 * a real one (its bind position, skinned by the palette onto the solver's
 * surface AT THAT VERTEX), coloured by an error at least its own; the
 * numbers are those of all vertices and frames. */
static void check_decimated_page(const char *path, const sks_model *m, const sks_bake_result *const *res,
                                 size_t nres, const sks_report_plan *plan) {
  size_t size = 0;
  char *html = read_all(path, &size);
  CHECK_MSG(html != NULL, "%s not written", path);
  if (!html) return;
  CHECK_MSG(size <= plan->max_bytes, "%zu bytes over the budget of %zu", size, plan->max_bytes);
  char note[160];
  snprintf(note, sizeof note, "id=\"vertex-decimation\" data-vertices=\"%zu\" data-source-vertices=\"%zu\"",
           plan->vertices_shown, plan->vertex_count);
  CHECK_MSG(strstr(html, note) != NULL, "the page does not say it shows %zu of %zu vertices", plan->vertices_shown,
            plan->vertex_count);
  cJSON *d = page_data(html);
  CHECK(d != NULL);
  if (!d) { free(html); return; }
  size_t V = all_count(m), n = plan->vertices_shown;
  double D = res[0]->diagonal;
  const cJSON *mesh = cJSON_GetObjectItem(d, "mesh");
  CHECK(cJSON_GetObjectItem(mesh, "vertex_count")->valuedouble == (double)n && n < V && n > 0);
  CHECK(cJSON_GetObjectItem(mesh, "source_vertex_count")->valuedouble == (double)V);
  CHECK(cJSON_GetObjectItem(mesh, "triangle_count")->valuedouble == (double)plan->triangles_shown);
  size_t nk = 0, np = 0, nj = 0, nw = 0, ni = 0;
  uint32_t *keep = blob(mesh, "kept_vertices", &nk), *idx = blob(mesh, "indices", &ni);
  float *pos = blob(mesh, "positions", &np), *weights = blob(mesh, "weights", &nw);
  uint16_t *joints = blob(mesh, "joints", &nj);
  size_t K = (size_t)cJSON_GetObjectItem(mesh, "influences")->valuedouble;
  size_t P = (size_t)cJSON_GetObjectItem(mesh, "palette_size")->valuedouble;
  CHECK(nk == n * 4 && np == n * 12 && nj == n * K * 2 && nw == n * K * 4 && ni == plan->triangles_shown * 12);
  int ok_keep = keep && nk == n * 4;
  for (size_t k = 0; ok_keep && k < n; ++k) ok_keep = keep[k] < V && (k == 0 || keep[k] > keep[k - 1]);
  CHECK_MSG(ok_keep, "kept vertices not ascending mesh vertices");
  size_t bad_idx = 0;
  for (size_t i = 0; idx && i < ni / 4; ++i) bad_idx += idx[i] >= n;
  CHECK(bad_idx == 0);
  /* a kept vertex's bind position is the mesh's own (skinned parts, then
   * rigid parts in bind space) */
  float *all = malloc(V * 3 * sizeof(float));
  report_bind(m, all);
  size_t off_pos = 0;
  for (size_t k = 0; ok_keep && pos && k < n; ++k)
    for (int a = 0; a < 3; ++a) off_pos += fabs(pos[3 * k + a] - all[3 * keep[k] + a]) > 1e-6 * D;
  CHECK_MSG(off_pos == 0, "%zu kept vertices are not at a mesh vertex's bind position", off_pos);
  /* the documented rule, recomputed: cells of data-cell from the bind box's
   * low corner; one kept vertex per occupied cell; cell_of[v] = its kept k */
  double cell = cJSON_GetObjectItem(mesh, "decimation_cell")->valuedouble, lo[3] = {1e300, 1e300, 1e300};
  CHECK(cell > 0 && cell == plan->cell);
  for (size_t v = 0; v < V; ++v)
    for (int a = 0; a < 3; ++a) lo[a] = fmin(lo[a], all[3 * v + a]);
  long *key = malloc(V * 3 * sizeof(long));
  for (size_t v = 0; v < V; ++v)
    for (int a = 0; a < 3; ++a) key[3 * v + a] = (long)floor((all[3 * v + a] - lo[a]) / cell);
  size_t *cell_of = malloc(V * sizeof(size_t)), orphans = 0, shared = 0;
  for (size_t v = 0; v < V; ++v) {
    size_t hits = 0;
    cell_of[v] = n;
    for (size_t k = 0; ok_keep && k < n; ++k)
      if (memcmp(&key[3 * v], &key[3 * keep[k]], 3 * sizeof(long)) == 0) { cell_of[v] = k; ++hits; }
    orphans += hits == 0;
    shared += hits > 1;
  }
  CHECK_MSG(orphans == 0 && shared == 0, "%zu vertices in no kept vertex's cell, %zu in a cell kept twice", orphans, shared);
  const cJSON *clips = cJSON_GetObjectItem(d, "clips");
  double worst_skin = 0;
  size_t under = 0, over_worst = 0, checked = 0, not_max = 0;
  for (int c = 0; ok_keep && c < cJSON_GetArraySize(clips); ++c) {
    const cJSON *cj = cJSON_GetArrayItem(clips, c);
    size_t F = (size_t)cJSON_GetObjectItem(cj, "frame_count")->valuedouble;
    size_t ks = (size_t)cJSON_GetObjectItem(cj, "frame_step")->valuedouble;
    CHECK(ks == plan->frame_step);
    size_t ng = 0;
    int8_t *gt = blob(cj, "gt_residual", &ng);
    CHECK(ng == F * n * 3);
    free(gt);
    const cJSON *baked = cJSON_GetObjectItem(cj, "baked");
    for (size_t r = 0; r < nres; ++r) {
      const cJSON *bj = cJSON_GetArrayItem(baked, (int)r);
      const sks_baked_clip *ref = &res[r]->clips[c];
      CHECK_NEAR(cJSON_GetObjectItem(bj, "quality")->valuedouble, ref->quality, 1e-15);
      CHECK_NEAR(cJSON_GetObjectItem(bj, "mean_error_pct")->valuedouble, ref->mean_error_pct, 1e-15);
      CHECK_NEAR(cJSON_GetObjectItem(bj, "worst_error_pct")->valuedouble, ref->worst_error_pct, 1e-15);
      size_t over = 0;
      for (size_t i = 0; i < ref->frame_count * V; ++i) over += ERROR_AT(ref, m, i / V, i % V) / D * 100.0 >= 3.0;
      CHECK(cJSON_GetObjectItem(bj, "vertex_frames_at_ramp_max")->valuedouble == (double)over);
      for (size_t f = 0; f < F; ++f)
        CHECK((float)cJSON_GetArrayItem(cJSON_GetObjectItem(bj, "frame_worst_error_pct"), (int)f)->valuedouble ==
              ref->frame_worst_error_pct[f * ks]);
      size_t npal = 0, ne = 0;
      float *pal = blob(bj, "palettes", &npal);
      uint16_t *eh = blob(bj, "vertex_error", &ne);
      CHECK(npal == F * P * 48 && ne == F * n * 2);
      float *bind = malloc(n * 3 * sizeof(float)); /* morphed for the frame */
      for (size_t f = 0; pal && eh && npal == F * P * 48 && ne == F * n * 2 && f < F; ++f) {
        if (pos && np == n * 12) page_morphed_bind(mesh, bj, f, pos, n, bind);
        /* the frame's worst vertex is in some cell: that cell's colour */
        double top = 0, want = ref->frame_worst_error_pct[f * ks];
        for (size_t k = 0; k < n; ++k) top = fmax(top, half_to_double(eh[f * n + k]));
        double *cmax = calloc(n + 1, sizeof(double)); /* the largest error in each kept vertex's cell */
        for (size_t v = 0; v < V; ++v)
          cmax[cell_of[v]] = fmax(cmax[cell_of[v]], ERROR_AT(ref, m, f * ks, v) / D * 100);
        for (size_t k = 0; k < n; ++k) not_max += fabs(half_to_double(eh[f * n + k]) - cmax[k]) > cmax[k] / 1024 + 1e-7;
        free(cmax);
        CHECK_MSG(fabs(top - want) <= want / 1024 + 1e-7, "%s frame %zu: largest colour %g, worst vertex %g %%D",
                  ref->name, f * ks, top, want);
        for (size_t k = 0; k < n; ++k) {
          size_t v = keep[k];
          double p[3] = {0, 0, 0};
          for (size_t q = 0; q < K; ++q) {
            const float *row = pal + (f * P + joints[K * k + q]) * 12;
            for (int a = 0; a < 3; ++a)
              p[a] += weights[K * k + q] * (row[4 * a] * bind[3 * k] + row[4 * a + 1] * bind[3 * k + 1] +
                                            row[4 * a + 2] * bind[3 * k + 2] + row[4 * a + 3]);
          }
          const float *sv = SOLVED_AT(ref, m, f * ks, v);
          double dd = sqrt((p[0] - sv[0]) * (p[0] - sv[0]) + (p[1] - sv[1]) * (p[1] - sv[1]) +
                           (p[2] - sv[2]) * (p[2] - sv[2])) / D;
          if (dd > worst_skin) worst_skin = dd;
          double e = half_to_double(eh[f * n + k]), own = ERROR_AT(ref, m, f * ks, v) / D * 100;
          under += e < own * (1 - 1.0 / 1024) - 1e-7; /* never below its own error */
          over_worst += e > ref->frame_worst_error_pct[f * ks] * (1 + 1.0 / 1024) + 1e-7;
          ++checked;
        }
      }
      free(pal); free(eh); free(bind);
    }
  }
  CHECK_MSG(checked > 0 && worst_skin < 1e-5, "kept vertices skinned %g D off the solved surface", worst_skin);
  CHECK_MSG(under == 0 && over_worst == 0, "%zu colours below the vertex's own error, %zu above the frame's worst",
            under, over_worst);
  CHECK_MSG(not_max == 0, "%zu colours are not the largest error of the kept vertex's cell", not_max);
  free(all); free(key); free(cell_of);
  printf("%s: %zu bytes, %zu of %zu vertices shown, frame step %zu; kept vertices skinned within %.2g D\n",
         path, size, n, V, plan->frame_step, worst_skin);
  free(keep); free(idx); free(pos); free(weights); free(joints);
  cJSON_Delete(d);
  free(html);
}

/* The CLI's --json shape (issue 3/4), for the browser test to compare against. */
static void write_cli_json(const char *path, const sks_bake_result *const *res, size_t nres) {
  cJSON *root = cJSON_CreateObject(), *clips = cJSON_AddArrayToObject(root, "clips");
  for (size_t r = 0; r < nres; ++r)
    for (size_t c = 0; c < res[r]->clip_count; ++c) {
      const sks_baked_clip *k = &res[r]->clips[c];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "name", k->name);
      cJSON_AddStringToObject(o, "mode", k->mode == SKS_SOLVE_ROTATION_ONLY ? "rotation-only" : "free");
      cJSON_AddNumberToObject(o, "frames", (double)k->frame_count);
      cJSON_AddNumberToObject(o, "quality", k->quality * 100);
      cJSON_AddNumberToObject(o, "mean_error_pct", k->mean_error_pct);
      cJSON_AddNumberToObject(o, "worst_error_pct", k->worst_error_pct);
      cJSON *fm = cJSON_AddArrayToObject(o, "frame_mean_error_pct");
      cJSON *fw = cJSON_AddArrayToObject(o, "frame_worst_error_pct");
      for (size_t f = 0; f < k->frame_count; ++f) {
        cJSON_AddItemToArray(fm, cJSON_CreateNumber(k->frame_mean_error_pct[f]));
        cJSON_AddItemToArray(fw, cJSON_CreateNumber(k->frame_worst_error_pct[f]));
      }
      cJSON *js = cJSON_AddArrayToObject(o, "joints"); /* the diagnosis (joint index stands for the name) */
      for (size_t q = 0; q < k->diagnosis.joint_count; ++q) {
        const sks_joint_diagnosis *d = &k->diagnosis.joints[q];
        cJSON *jo = cJSON_CreateObject();
        cJSON_AddNumberToObject(jo, "joint", d->joint);
        cJSON_AddNumberToObject(jo, "vertices", (double)d->vertex_count);
        cJSON_AddNumberToObject(jo, "share_pct", d->share * 100.0);
        cJSON_AddNumberToObject(jo, "worst_error_pct", d->worst_error_pct);
        cJSON_AddNumberToObject(jo, "worst_vertex", (double)d->worst_vertex);
        cJSON_AddItemToArray(js, jo);
      }
      cJSON_AddItemToArray(clips, o);
    }
  cJSON_AddNumberToObject(root, "target_vertices", (double)res[0]->target_vertex_count);
  char *text = cJSON_Print(root);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f) { fputs(text, f); fclose(f); }
  free(text);
  cJSON_Delete(root);
}

/* The viewer check (the summary's data-value, % of D) of a page. */
static double page_gpu_check(const char *html) {
  const char *k = html ? strstr(html, "id=\"gpu-check\" data-value=\"") : NULL;
  return k ? strtod(k + strlen("id=\"gpu-check\" data-value=\""), NULL) : INFINITY;
}

/* The model baked onto itself (control), one thread, surfaces kept. */
static sks_result control_bake(const sks_model *m, sks_bake_result *br, sks_error *err) {
  sks_bake_options o;
  memset(&o, 0, sizeof o);
  o.keep_surfaces = 1;
  o.threads = 1;
  memset(br, 0, sizeof *br);
  return sks_bake(m, m, &o, br, err);
}

/* The model's one clip, 13 LINEAR rotation keys at 24 fps per joint: the
 * root sways about Y, the elbow bends up to 1 rad about Z, a third joint
 * (rigid_report's hand) turns up to 0.8 rad about Y on its rest rotation. */
static sks_clip *add_bend_clip(sks_model *m, const char *name) {
  enum { KEYS = 13 };
  size_t J = m->skeleton.joint_count;
  m->clip_count = 1;
  m->clips = calloc(1, sizeof(sks_clip));
  sks_clip *c = &m->clips[0];
  c->name = dup_s(name);
  c->duration = (float)(KEYS - 1) / 24.0f;
  c->track_count = J;
  c->tracks = calloc(J, sizeof(sks_track));
  for (size_t j = 0; j < J; ++j) {
    sks_track *tr = &c->tracks[j];
    tr->joint = (int32_t)j;
    tr->path = SKS_PATH_ROTATION;
    tr->interpolation = SKS_INTERP_LINEAR;
    tr->key_count = KEYS;
    tr->times = malloc(KEYS * sizeof(float));
    tr->values = malloc(KEYS * 4 * sizeof(float));
    for (size_t f = 0; f < KEYS; ++f) {
      tr->times[f] = (float)f / 24.0f;
      double u = (double)f / (KEYS - 1);
      sks_quat q = j == 0 ? sks_q_from_axis_angle(sks_v3(0, 1, 0), (float)(0.3 * sin(6.2831853 * u)))
                 : j == 1 ? sks_q_from_axis_angle(sks_v3(0, 0, 1), (float)(1.0 * sin(3.14159265 * u)))
                          : sks_q_mul(m->skeleton.rest[j].rotation,
                                      sks_q_from_axis_angle(sks_v3(0, 1, 0), (float)(0.8 * sin(6.2831853 * u))));
      memcpy(&tr->values[4 * f], &q, sizeof q);
    }
  }
  return c;
}

/* Carried morph targets (issue 8): the tube gets two named targets ("Bulge"
 * swells rings 5-15, "Stretch" pushes rings 25-35 along the tube, together
 * ~7 % of D) and a clip "Talk" bending the elbow with a LINEAR weights track
 * keyed between the joint keys; a real bake of the rig onto itself
 * (control) carries both. The page embeds the deltas and each frame's
 * weights; the viewer morphs the bind, then skins: its check (what it draws
 * vs the metric's solved surface) must be as small as without morphs, the
 * shader math redone from the page must land on the solved surface, and
 * so must a page whose viewer mesh is simplified. */
static void morph_report(const char *dir) {
  sks_model m;
  make_rig(&m, RINGS, SEGMENTS);
  sks_mesh_part *p = &m.parts[0];
  size_t V = p->vertex_count;
  p->morph_target_count = 2;
  p->morph_targets = calloc(2, sizeof(sks_morph_target));
  p->morph_targets[0].name = dup_s("Bulge");
  p->morph_targets[1].name = dup_s("Stretch");
  for (int t = 0; t < 2; ++t) p->morph_targets[t].position_deltas = calloc(V * 3, sizeof(float));
  p->morph_targets[0].normal_deltas = calloc(V * 3, sizeof(float)); /* the bulge tilts its normals */
  for (size_t r = 0; r < RINGS; ++r)
    for (size_t k = 0; k < SEGMENTS; ++k) {
      size_t v = r * SEGMENTS + k;
      if (r >= 5 && r <= 15) {
        p->morph_targets[0].position_deltas[3 * v + 1] = 0.6f * p->positions[3 * v + 1];
        p->morph_targets[0].position_deltas[3 * v + 2] = 0.6f * p->positions[3 * v + 2];
        p->morph_targets[0].normal_deltas[3 * v] = r < 10 ? -0.5f : 0.5f;
      }
      if (r >= 25 && r <= 35) p->morph_targets[1].position_deltas[3 * v] = 0.12f;
    }
  enum { MKEYS = 6 };
  sks_clip *c = add_bend_clip(&m, "Talk");
  sks_test_add_morph_track(c, MKEYS, 0.9f, 0.01f); /* between the joint keys */
  sks_bake_result br;
  sks_error err = {0};
  sks_result rc = control_bake(&m, &br, &err);
  CHECK_OK(rc, &err);
  if (rc == SKS_OK) {
    CHECK(br.morphs_carried == 2 && br.clip_count == 1 && br.clips[0].morph_track_count == 1);
    CHECK_MSG(br.clips[0].mean_error_pct < 1e-3, "control mean %g %%D", br.clips[0].mean_error_pct);
    const sks_bake_result *one[1] = {&br};
    sks_report_input in = {"Morph targets carried (control)", &m, &m, one, 1, 0};
    char hp[1100], jp[1100];
    snprintf(hp, sizeof hp, "%s/report_morph.html", dir);
    snprintf(jp, sizeof jp, "%s/report_morph.json", dir);
    CHECK_OK(sks_report_write_html(hp, &in, &err), &err);
    check_page(hp, &m, one, 1); /* morphed bind + palette onto the solved surface */
    write_cli_json(jp, one, 1);
    { /* the solved surface (frames x V x 3 f32) for the browser test's check of viewer.js's morphing */
      char sp[1100];
      snprintf(sp, sizeof sp, "%s/report_morph_solved.f32", dir);
      FILE *sf = fopen(sp, "wb");
      CHECK(sf != NULL);
      if (sf) {
        size_t nf = br.clips[0].frame_count * V * 3;
        CHECK(fwrite(br.clips[0].solved_surface, sizeof(float), nf, sf) == nf);
        fclose(sf);
      }
    }
    char *html = read_all(hp, NULL);
    double chk = page_gpu_check(html);
    cJSON *d = html ? page_data(html) : NULL;
    const cJSON *mesh = d ? cJSON_GetObjectItem(d, "mesh") : NULL, *gs = cJSON_GetObjectItem(mesh, "morphs");
    CHECK(d && cJSON_GetObjectItem(d, "version")->valuedouble == 3);
    CHECK(cJSON_GetArraySize(gs) == 1 && cJSON_GetObjectItem(mesh, "morph_weight_count")->valuedouble == 2);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(gs, 0), "target_names")) == 2);
    { /* normal deltas (unit file normals: as the file gives them; no target: 0) */
      size_t nn = 0, off = 0;
      float *nd = blob(cJSON_GetArrayItem(gs, 0), "normal_deltas", &nn);
      CHECK_MSG(nd && nn == 2 * V * 12, "normal_deltas: %zu bytes for %zu vertices", nn, V);
      for (size_t k = 0; nd && nn == 2 * V * 12 && k < 2; ++k)
        for (size_t i = 0; i < V * 3; ++i) {
          float want = k == 0 ? p->morph_targets[0].normal_deltas[i] : 0.0f;
          off += fabsf(nd[k * V * 3 + i] - want) > 1e-6f;
        }
      CHECK_MSG(off == 0, "%zu normal delta components differ from the file's", off);
      free(nd);
    }
    /* the largest shift the morphs make: what the check showed before */
    double moved = 0;
    for (size_t f = 0; f < br.clips[0].frame_count; ++f) {
      float w[2];
      sks_morph_sampling_job sj = {c, 0, NULL, 2, br.clips[0].times[f], 0, w, 0};
      sks_morph_sampling_job_run(&sj);
      for (size_t v = 0; v < V; ++v) {
        double dd = 0;
        for (int a = 0; a < 3; ++a) {
          double x = w[0] * p->morph_targets[0].position_deltas[3 * v + (size_t)a] +
                     w[1] * p->morph_targets[1].position_deltas[3 * v + (size_t)a];
          dd += x * x;
        }
        moved = fmax(moved, sqrt(dd) / br.diagonal * 100.0);
      }
    }
    printf("morph control: %zu frames, mean %.3g %%D; morphs move up to %.3g %%D; viewer check %.3g %%D\n",
           br.clips[0].frame_count, br.clips[0].mean_error_pct, moved, chk);
    CHECK(moved > 3.0);
    CHECK_MSG(chk < 1e-3, "viewer check %g %%D with carried morph targets (the morphs move %g %%D)", chk, moved);
    cJSON_Delete(d);
    free(html);
    /* a budget that simplifies the viewer's mesh: kept vertices morph with
     * their own deltas and land on the solved surface too */
    sks_report_plan all, plan;
    CHECK_OK(sks_report_plan_views(&in, &all, &err), &err);
    int found = 0;
    for (double b = (double)all.bytes_all; b > 4096 && !found; b *= 0.9) {
      in.max_bytes = (size_t)b;
      if (sks_report_plan_views(&in, &plan, &err) != SKS_OK) break;
      CHECK(plan.bytes <= in.max_bytes);
      found = plan.vertices_shown < plan.vertex_count;
    }
    CHECK_MSG(found, "no budget simplified the morph tube's mesh");
    if (found) {
      snprintf(hp, sizeof hp, "%s/report_morph_decimated.html", dir);
      snprintf(jp, sizeof jp, "%s/report_morph_decimated.json", dir);
      CHECK_OK(sks_report_write_html(hp, &in, &err), &err);
      check_decimated_page(hp, &m, one, 1, &plan);
      write_cli_json(jp, one, 1);
      html = read_all(hp, NULL);
      double chk2 = page_gpu_check(html);
      CHECK_MSG(chk2 < 1e-3, "viewer check %g %%D (simplified mesh)", chk2);
      free(html);
    }
  }
  sks_bake_result_free(&br);
  sks_model_free(&m);
}

/* A rig whose page must be drawn and checked as the bake measured it: the
 * Fox under an armature node that scales it x100 and turns it (the scene is
 * not the bind space; D is in bind units) with every third vertex's
 * weights summing to 1.5 (as played and as the bake solves: renormalised).
 * The viewer check must be the control's ~1e-5 %D; it was 6e3 %D. */
static void scaled_unnormalised_report(const char *dir) {
  const char *fp = sks_test_shared_data("Fox/Fox.glb");
  if (!fp) return;
  sks_model m;
  sks_error err = {0};
  if (sks_load(fp, NULL, &m, &err) != SKS_OK) { CHECK_OK(SKS_ERR_INVALID, &err); return; }
  sks_transform x = sks_transform_identity();
  x.scale = sks_v3(100, 100, 100);
  x.rotation = sks_q_from_axis_angle(sks_v3(1, 0, 0), -1.5707963f);
  x.translation = sks_v3(5, -2, 30);
  sks_variant_add_parent(&m, x);
  size_t changed = 0;
  for (size_t pi = 0; pi < m.part_count; ++pi) {
    sks_mesh_part *part = &m.parts[pi];
    for (size_t v = 0; v < part->vertex_count; v += 3, ++changed)
      for (size_t i = 0; i < part->influence_count; ++i) part->weights[v * part->influence_count + i] *= 1.5f;
  }
  sks_bake_options o;
  memset(&o, 0, sizeof o);
  const char *clip[1] = {"Walk"};
  o.clip_names = clip;
  o.clip_name_count = 1;
  o.keep_surfaces = 1;
  o.threads = 1;
  sks_bake_result br;
  memset(&br, 0, sizeof br);
  sks_result rc = sks_bake(&m, &m, &o, &br, &err);
  CHECK_OK(rc, &err);
  if (rc == SKS_OK) {
    CHECK_MSG(br.target_weights_normalised >= changed && br.clips[0].mean_error_pct < 1e-3,
              "control: %zu weights normalised (changed %zu), mean %g %%D", br.target_weights_normalised, changed,
              br.clips[0].mean_error_pct);
    const sks_bake_result *one[1] = {&br};
    sks_report_input in = {"Fox x100 under an armature, weights summing to 1.5 (control)", &m, &m, one, 1, 0};
    char hp[1100];
    snprintf(hp, sizeof hp, "%s/report_scaled_unnormalised.html", dir);
    CHECK_OK(sks_report_write_html(hp, &in, &err), &err);
    char *html = read_all(hp, NULL);
    double chk = page_gpu_check(html);
    { /* the camera frames the scene: D in scene units, x100 */
      cJSON *d = html ? page_data(html) : NULL;
      double sd = d ? cJSON_GetNumberValue(cJSON_GetObjectItem(d, "scene_diagonal")) : 0;
      CHECK_MSG(fabs(sd / br.diagonal - 100.0) < 1e-4, "scene_diagonal %g for D %g under a x100 armature", sd,
                br.diagonal);
      cJSON_Delete(d);
      snprintf(hp, sizeof hp, "%s/report_scaled_unnormalised.json", dir);
      write_cli_json(hp, one, 1); /* for the browser test: the x100 scene in view */
    }
    printf("Fox x100 under an armature, non-normalised weights: viewer check %.3g %%D (control mean %.3g %%D)\n", chk,
           br.clips[0].mean_error_pct);
    CHECK_MSG(chk < 1e-4, "viewer check %g %%D on a control (x100 scene: a distance in scene units would read 100x)", chk);
    free(html);
    sks_bake_result_free(&br);
  }
  sks_model_free(&m);
}

/* A rigid part (skin -1): a box of half-size h around c, in its node's space. */
static void add_rigid_box(sks_model *m, const char *name, int32_t node, sks_vec3 c, float h) {
  sks_mesh_part *p = sks_test_add_rigid_part(m, name, node, 8, 36);
  for (size_t v = 0; v < 8; ++v) {
    p->positions[3 * v] = c.x + (v & 1 ? h : -h);
    p->positions[3 * v + 1] = c.y + (v & 2 ? h : -h);
    p->positions[3 * v + 2] = c.z + (v & 4 ? h : -h);
  }
  static const uint32_t quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  for (size_t q = 0, i = 0; q < 6; ++q) {
    const uint32_t *k = quads[q];
    p->indices[i++] = k[0]; p->indices[i++] = k[1]; p->indices[i++] = k[2];
    p->indices[i++] = k[0]; p->indices[i++] = k[2]; p->indices[i++] = k[3];
  }
}

/* Rigid parts (issue 8): the tube with a "hand" joint under the elbow at
 * the tip (its rest turned 90 deg about X) holding a box, and a badge box on
 * the upper joint, baked onto itself (control): the page must hold the 16
 * rigid vertices after the tube's, each following its joint's animated
 * model (one palette entry per part), coloured by its own errors; the
 * viewer check covers them, so a rigid vertex off its place fails it. */
static void rigid_report(const char *dir) {
  sks_model m;
  make_rig(&m, RINGS, SEGMENTS);
  sks_skeleton *sk = &m.skeleton;
  sk->joint_count = 3;
  sk->names = realloc(sk->names, 3 * sizeof(char *));
  sk->parents = realloc(sk->parents, 3 * sizeof(int32_t));
  sk->rest = realloc(sk->rest, 3 * sizeof(sks_transform));
  sk->names[2] = dup_s("hand");
  sk->parents[2] = 1;
  sk->rest[2] = sks_transform_identity();
  sk->rest[2].translation = sks_v3(TUBE_LEN / 2, 0, 0);
  sk->rest[2].rotation = sks_q_from_axis_angle(sks_v3(1, 0, 0), 1.5707963f);
  size_t VS = sks_model_vertex_count(&m);
  add_rigid_box(&m, "hand_box", 2, sks_v3(0.15f, 0, 0.1f), 0.12f);
  add_rigid_box(&m, "badge", 0, sks_v3(0.5f, 0.25f, 0), 0.05f);
  { /* the hand box squashes (a morph target in its node's space, normals too) */
    sks_mesh_part *hb = &m.parts[1];
    hb->normals = malloc(8 * 3 * sizeof(float));
    hb->morph_target_count = 1;
    hb->morph_targets = calloc(1, sizeof(sks_morph_target));
    hb->morph_targets[0].name = dup_s("Squash");
    hb->morph_targets[0].position_deltas = calloc(8 * 3, sizeof(float));
    hb->morph_targets[0].normal_deltas = calloc(8 * 3, sizeof(float));
    for (size_t v = 0; v < 8; ++v) {
      for (int a = 0; a < 3; ++a) hb->normals[3 * v + a] = (v >> a & 1 ? 1.0f : -1.0f) * 0.57735027f;
      hb->morph_targets[0].position_deltas[3 * v + 1] = v & 2 ? -0.08f : 0.08f;
      hb->morph_targets[0].normal_deltas[3 * v + 1] = v & 2 ? 0.4f : -0.4f;
    }
  }
  sks_clip *c = add_bend_clip(&m, "Wave");
  c->morph_track_count = 1; /* the squash, on the hand node */
  c->morph_tracks = calloc(1, sizeof(sks_morph_track));
  sks_morph_track *mt = &c->morph_tracks[0];
  mt->node = 2;
  mt->interpolation = SKS_INTERP_LINEAR;
  mt->weight_count = 1;
  mt->key_count = 3;
  mt->times = malloc(3 * sizeof(float));
  mt->values = malloc(3 * sizeof(float));
  for (size_t k = 0; k < 3; ++k) {
    mt->times[k] = c->duration * (float)k / 2;
    mt->values[k] = k == 1 ? 1.0f : 0.0f;
  }
  sks_bake_result br;
  sks_error err = {0};
  sks_result rc = control_bake(&m, &br, &err);
  CHECK_OK(rc, &err);
  if (rc == SKS_OK) {
    const sks_baked_clip *bc = &br.clips[0];
    CHECK_MSG(br.morphs_carried == 1 && bc->morph_track_count == 1, "rigid part's morph: carried %zu",
              br.morphs_carried);
    CHECK(br.rigid_vertex_count == 16 && br.measured_vertex_count == VS + 16 && br.target_vertex_count == VS);
    CHECK(bc->rigid_target_surface && bc->rigid_solved_surface && bc->rigid_vertex_error);
    CHECK_MSG(bc->mean_error_pct < 1e-3, "control mean %g %%D", bc->mean_error_pct);
    /* the hand box moves (with the elbow and its own joint) */
    double moved = 0;
    for (size_t f = 0; bc->rigid_solved_surface && f < bc->frame_count; ++f)
      for (size_t a = 0; a < 3; ++a)
        moved = fmax(moved, fabs(bc->rigid_solved_surface[f * 16 * 3 + a] - bc->rigid_solved_surface[a]));
    CHECK_MSG(moved > 0.2 * br.diagonal, "the hand box moves %g D", moved / br.diagonal);
    const sks_bake_result *one[1] = {&br};
    sks_report_input in = {"Rigid parts (control)", &m, &m, one, 1, 0};
    char hp[1100], jp[1100];
    snprintf(hp, sizeof hp, "%s/report_rigid.html", dir);
    snprintf(jp, sizeof jp, "%s/report_rigid.json", dir);
    CHECK_OK(sks_report_write_html(hp, &in, &err), &err);
    check_page(hp, &m, one, 1); /* rigid vertices: palette entry onto the solved surface */
    write_cli_json(jp, one, 1);
    { /* every vertex's solved surface (frames x (skinned + rigid) x 3 f32) for the browser test */
      char sp[1100];
      snprintf(sp, sizeof sp, "%s/report_rigid_solved.f32", dir);
      FILE *sf = fopen(sp, "wb");
      CHECK(sf != NULL);
      for (size_t f = 0; sf && f < bc->frame_count; ++f) {
        CHECK(fwrite(bc->solved_surface + f * VS * 3, sizeof(float), VS * 3, sf) == VS * 3);
        CHECK(fwrite(bc->rigid_solved_surface + f * 16 * 3, sizeof(float), 16 * 3, sf) == 16 * 3);
      }
      if (sf) fclose(sf);
    }
    char *html = read_all(hp, NULL);
    double chk = page_gpu_check(html);
    cJSON *d = html ? page_data(html) : NULL;
    const cJSON *mesh = d ? cJSON_GetObjectItem(d, "mesh") : NULL;
    CHECK(d && cJSON_GetObjectItem(d, "version")->valuedouble == 3);
    CHECK(mesh && cJSON_GetObjectItem(mesh, "rigid_parts")->valuedouble == 2 &&
          cJSON_GetObjectItem(mesh, "palette_size")->valuedouble == 4 &&
          cJSON_GetObjectItem(mesh, "triangle_count")->valuedouble == (double)(m.parts[0].index_count / 3 + 24));
    CHECK_MSG(html && strstr(html, "data-rigid=\"16\""), "the summary does not count the rigid vertices");
    { /* the rigid part's morph group: after the tube, its deltas and normal
       * deltas in bind space (the hand's rest turns them 90 deg about X) */
      const cJSON *gs = cJSON_GetObjectItem(mesh, "morphs"), *g = cJSON_GetArrayItem(gs, 0);
      CHECK(cJSON_GetArraySize(gs) == 1 && g && cJSON_GetObjectItem(g, "first")->valuedouble == (double)VS &&
            cJSON_GetObjectItem(g, "count")->valuedouble == 8);
      sks_daffine rest[3];
      sks_dfk(&m.skeleton, m.skeleton.rest, rest);
      size_t nd = 0, nn = 0, off = 0;
      float *dd = blob(g, "deltas", &nd), *dn = blob(g, "normal_deltas", &nn);
      const sks_morph_target *mt0 = &m.parts[1].morph_targets[0];
      CHECK(dd && dn && nd == 96 && nn == 96);
      for (size_t v = 0; dd && dn && nd == 96 && nn == 96 && v < 8; ++v) {
        double x[3], y[3], n[3], ln[3], ny[3];
        for (int a = 0; a < 3; ++a) { x[a] = mt0->position_deltas[3 * v + a]; n[a] = m.parts[1].normals[3 * v + a]; }
        sks_dm3_apply(rest[2].l, x, y); /* a rotation: normals turn the same way */
        sks_dm3_apply(rest[2].l, n, ln);
        for (int a = 0; a < 3; ++a) x[a] = mt0->normal_deltas[3 * v + a];
        sks_dm3_apply(rest[2].l, x, ny);
        double len = sqrt(ln[0] * ln[0] + ln[1] * ln[1] + ln[2] * ln[2]);
        for (int a = 0; a < 3; ++a)
          off += fabs(dd[3 * v + a] - y[a]) > 1e-6 || fabs(dn[3 * v + a] - ny[a] / len) > 1e-6;
      }
      CHECK_MSG(off == 0, "%zu rigid morph delta components are not the file's in bind space", off);
      free(dd); free(dn);
    }
    printf("rigid control: %zu + 16 rigid vertices, %zu frames, mean %.3g %%D; the hand box moves %.3g D; "
           "viewer check %.3g %%D\n", VS, bc->frame_count, bc->mean_error_pct, moved / br.diagonal, chk);
    CHECK_MSG(chk < 1e-3, "viewer check %g %%D with rigid parts", chk);
    cJSON_Delete(d);
    free(html);
    /* a rigid vertex off its solved place (as when a part ignores its joint)
     * must show in the viewer check */
    float *r0 = br.clips[0].rigid_solved_surface + (bc->frame_count / 2) * 16 * 3 + 3;
    float saved = *r0;
    *r0 += (float)(0.05 * br.diagonal);
    char *bad = NULL;
    size_t nb = 0;
    CHECK_OK(sks_report_html(&in, &bad, &nb, &err), &err);
    double chk_bad = page_gpu_check(bad);
    CHECK_MSG(chk_bad > 4.9 && chk_bad < 5.1, "a rigid vertex 5 %%D off: viewer check %g %%D", chk_bad);
    free(bad);
    *r0 = saved;
    /* a budget that simplifies the viewer's mesh: kept rigid vertices are
     * real ones in bind space, on the solved surface too */
    sks_report_plan all, plan;
    CHECK_OK(sks_report_plan_views(&in, &all, &err), &err);
    CHECK(all.vertex_count == VS + 16);
    int found = 0;
    for (double b = (double)all.bytes_all; b > 4096 && !found; b *= 0.9) {
      in.max_bytes = (size_t)b;
      if (sks_report_plan_views(&in, &plan, &err) != SKS_OK) break;
      found = plan.vertices_shown < plan.vertex_count;
    }
    CHECK_MSG(found, "no budget simplified the rigid rig's mesh");
    if (found) {
      snprintf(hp, sizeof hp, "%s/report_rigid_decimated.html", dir);
      CHECK_OK(sks_report_write_html(hp, &in, &err), &err);
      check_decimated_page(hp, &m, one, 1, &plan);
      char *h = read_all(hp, NULL);
      cJSON *dd = h ? page_data(h) : NULL;
      size_t nk = 0, rigid_kept = 0;
      uint32_t *kv = dd ? blob(cJSON_GetObjectItem(dd, "mesh"), "kept_vertices", &nk) : NULL;
      for (size_t k = 0; kv && k < nk / 4; ++k) rigid_kept += kv[k] >= VS;
      CHECK_MSG(rigid_kept > 0, "the simplified mesh keeps no rigid vertex (%zu kept)", nk / 4);
      free(kv);
      cJSON_Delete(dd);
      free(h);
    }
    /* a result without the rigid parts' surfaces is refused, naming the fix */
    float *keep = br.clips[0].rigid_vertex_error;
    br.clips[0].rigid_vertex_error = NULL;
    CHECK(sks_report_html(&in, &bad, &nb, &err) == SKS_ERR_ARGUMENT && strstr(err.message, "keep_surfaces"));
    br.clips[0].rigid_vertex_error = keep;
  }
  sks_bake_result_free(&br);
  sks_model_free(&m);
}

static int file_exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

int main(int argc, char **argv) {
  const char *dir = argc > 2 && strcmp(argv[1], "--write") == 0 ? argv[2] : sks_test_tmpdir();
  char path[1024], control_path[1024];
  snprintf(path, sizeof path, "%s/report_procedural.html", dir);
  snprintf(control_path, sizeof control_path, "%s/report_control.html", dir);
  sks_error err = {0};
  sks_model m;
  make_rig(&m, RINGS, SEGMENTS);
  add_fin(&m);

  /* Two modes with known, different errors; then a control. */
  sks_bake_result free_res, rot_res, control;
  make_result(&m, &free_res, SKS_SOLVE_FREE, 0.8f, 2, 16, 4);
  make_result(&m, &rot_res, SKS_SOLVE_ROTATION_ONLY, 0.95f, 2, 16, 4);
  make_result(&m, &control, SKS_SOLVE_FREE, 1.00005f, 2, 16, 4); /* a near-perfect control */
  CHECK(free_res.clips[0].worst_error_pct > 3.0);   /* the tip goes red */
  CHECK(rot_res.clips[0].worst_error_pct < free_res.clips[0].worst_error_pct);
  CHECK(control.clips[0].worst_error_pct > 0 && control.clips[0].worst_error_pct < 0.01);

  const sks_bake_result *both[2] = {&free_res, &rot_res};
  sks_report_input in = {"Procedural two-bone rig: elbow under-bent", &m, &m, both, 2, 0};
  CHECK_OK(sks_report_write_html(path, &in, &err), &err);
  check_page(path, &m, both, 2);
  char json_path[1100];
  snprintf(json_path, sizeof json_path, "%s/report_procedural.json", dir);
  write_cli_json(json_path, both, 2);

  /* One result holding both modes (SKS_SOLVE_BOTH: free, then rotation-only
   * per clip) lays out like two results. */
  {
    sks_bake_result merged = free_res;
    merged.clip_count = 4;
    merged.clips = calloc(4, sizeof(sks_baked_clip));
    for (size_t c = 0; c < 2; ++c) {
      merged.clips[2 * c] = free_res.clips[c];     /* shallow: freed with free_res / rot_res */
      merged.clips[2 * c + 1] = rot_res.clips[c];
    }
    const sks_bake_result *one[1] = {&merged};
    char mp[1100];
    snprintf(mp, sizeof mp, "%s/report_both_modes.html", dir);
    sks_report_input min = {"both modes in one result", &m, &m, one, 1, 0};
    CHECK_OK(sks_report_write_html(mp, &min, &err), &err);
    check_page(mp, &m, both, 2); /* same page data as the two-result report */
    free(merged.clips);
  }

  const sks_bake_result *ctl[1] = {&control};
  sks_report_input cin = {"Procedural two-bone rig: control", &m, &m, ctl, 1, 0};
  CHECK_OK(sks_report_write_html(control_path, &cin, &err), &err);
  check_page(control_path, &m, ctl, 1);
  snprintf(json_path, sizeof json_path, "%s/report_control.json", dir);
  write_cli_json(json_path, ctl, 1);

  /* Over the budget (issue 11): the views show every k-th frame, the
   * smallest k that fits; the numbers stay those of all frames. The budget
   * is a third of what every frame would take, so k is at least 3. */
  {
    sks_bake_result lf, lr;
    make_result(&m, &lf, SKS_SOLVE_FREE, 0.8f, 2, 301, 36);
    make_result(&m, &lr, SKS_SOLVE_ROTATION_ONLY, 0.95f, 2, 301, 36);
    const sks_bake_result *two[2] = {&lf, &lr};
    sks_report_input lin = {"Procedural two-bone rig: over the budget", &m, &m, two, 2, 0};
    sks_report_plan all;
    CHECK_OK(sks_report_plan_views(&lin, &all, &err), &err);
    CHECK(all.frame_step == 1 && all.frames == 337 && all.frames_shown == 337 && all.bytes == all.bytes_all);
    CHECK(all.max_bytes == SKS_REPORT_DEFAULT_MAX_BYTES && all.vertex_count == sks_model_vertex_count(&m));
    lin.max_bytes = all.bytes_all / 3;
    sks_report_plan plan;
    CHECK_OK(sks_report_plan_views(&lin, &plan, &err), &err);
    CHECK_MSG(plan.frame_step >= 3 && plan.bytes <= lin.max_bytes, "step %zu, %zu of %zu bytes", plan.frame_step,
              plan.bytes, lin.max_bytes);
    CHECK(plan.frames_shown == (337 + plan.frame_step - 1) / plan.frame_step);
    char lp[1100], lj[1100];
    snprintf(lp, sizeof lp, "%s/report_decimated.html", dir);
    snprintf(lj, sizeof lj, "%s/report_decimated.json", dir);
    CHECK_OK(sks_report_write_html(lp, &lin, &err), &err);
    check_page(lp, &m, two, 2); /* shown frames k*f, numbers of all frames */
    write_cli_json(lj, two, 2);
    size_t n = 0;
    char *h = read_all(lp, &n);
    CHECK_MSG(n <= lin.max_bytes, "%zu bytes over the budget of %zu", n, lin.max_bytes);
    char note[128];
    snprintf(note, sizeof note, "id=\"frame-step\" data-step=\"%zu\"", plan.frame_step);
    CHECK_MSG(h && strstr(h, note), "the page does not say it shows every %zu-th frame", plan.frame_step);
    /* the page in memory and the plan it followed, planned once (what
     * bake / refit state on stderr and then write): the same plan, the same page */
    {
      char *hp = NULL;
      size_t np = 0;
      sks_report_plan used;
      CHECK_OK(sks_report_html_plan(&lin, &hp, &np, &used, &err), &err);
      CHECK(used.frame_step == plan.frame_step && used.frames_shown == plan.frames_shown &&
            used.bytes == plan.bytes && used.bytes_all == plan.bytes_all &&
            used.vertices_shown == plan.vertices_shown && used.max_bytes == lin.max_bytes);
      CHECK_MSG(hp && h && np == n && memcmp(hp, h, n) == 0, "sks_report_html_plan's page differs from the written one");
      free(hp);
      lin.max_bytes = 4096; /* refused: no page, the plan zeroed */
      hp = NULL;
      CHECK(sks_report_html_plan(&lin, &hp, &np, &used, &err) == SKS_ERR_UNSUPPORTED);
      CHECK(hp == NULL && used.frame_step == 0 && used.max_bytes == 0);
      lin.max_bytes = all.bytes_all / 3;
    }
    /* the table's frames and quality are the all-frames figures */
    char q[96];
    snprintf(q, sizeof q, "<td>%zu</td><td data-value=\"%.17g\">", lf.clips[1].frame_count, lf.clips[1].quality * 100.0);
    CHECK_MSG(h && strstr(h, q), "table lacks the all-frames row %s", q);
    /* Refused when one frame per clip does not fit; an earlier file stays. */
    lin.max_bytes = 4096;
    CHECK(sks_report_plan_views(&lin, &plan, &err) == SKS_ERR_UNSUPPORTED);
    CHECK(sks_report_write_html(lp, &lin, &err) == SKS_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(err.message, "report budget") != NULL, "%s", err.message);
    size_t n2 = 0;
    char *h2 = read_all(lp, &n2);
    CHECK_MSG(h && h2 && n2 == n && memcmp(h, h2, n) == 0, "a refused report changed the earlier file");
    free(h); free(h2);
    free_result(&lf);
    free_result(&lr);
  }

  /* A budget too small for one frame per clip of the whole mesh: the
   * viewer's mesh is clustered (issue 11). Shrinking budgets: first every
   * vertex at growing frame steps, then fewer vertices, then refused. */
  {
    sks_bake_result vf, vr;
    make_result(&m, &vf, SKS_SOLVE_FREE, 0.8f, 2, 40, 8);
    make_result(&m, &vr, SKS_SOLVE_ROTATION_ONLY, 0.95f, 2, 40, 8);
    const sks_bake_result *two[2] = {&vf, &vr};
    sks_report_input vin = {"Procedural two-bone rig: simplified viewer mesh", &m, &m, two, 2, 0};
    sks_report_plan all, plan;
    CHECK_OK(sks_report_plan_views(&vin, &all, &err), &err);
    CHECK(all.vertices_shown == all.vertex_count && all.cell == 0 && all.triangles_shown == all.triangles);
    size_t V = sks_model_vertex_count(&m), last_step = 1, frames_first = 0, found = 0;
    for (double b = (double)all.bytes_all; b > 4096 && !found; b *= 0.93) {
      vin.max_bytes = (size_t)b;
      if (sks_report_plan_views(&vin, &plan, &err) != SKS_OK) break;
      CHECK(plan.bytes <= vin.max_bytes);
      if (plan.vertices_shown == V) {
        CHECK(plan.frame_step >= last_step); /* frames go first */
        last_step = plan.frame_step;
        frames_first += plan.frame_step > 1;
      } else {
        found = 1;
        CHECK(plan.vertices_shown < V && plan.cell > 0 && plan.triangles_shown < plan.triangles);
      }
    }
    CHECK_MSG(found && frames_first > 0, "no budget gave a simplified mesh after frame steps (%zu)", frames_first);
    if (found) {
      char vp[1100], vj[1100];
      snprintf(vp, sizeof vp, "%s/report_vertex_decimated.html", dir);
      snprintf(vj, sizeof vj, "%s/report_vertex_decimated.json", dir);
      CHECK_OK(sks_report_write_html(vp, &vin, &err), &err);
      check_decimated_page(vp, &m, two, 2, &plan);
      write_cli_json(vj, two, 2);
      /* the same input and budget: the same page, byte for byte */
      size_t n1 = 0, n2 = 0;
      char *h1 = read_all(vp, &n1);
      CHECK_OK(sks_report_write_html(vp, &vin, &err), &err);
      char *h2 = read_all(vp, &n2);
      CHECK(h1 && h2 && n1 == n2 && memcmp(h1, h2, n1) == 0);
      free(h1); free(h2);
    }
    free_result(&vf);
    free_result(&vr);
  }

  /* More than 4 non-zero influences: the page switches to 8 on the GPU. */
  {
    char p5[1100];
    snprintf(p5, sizeof p5, "%s/report_8_influences.html", dir);
    float saved_w[6];
    memcpy(saved_w, m.parts[1].weights, sizeof saved_w);
    static const float w5[6] = {0.1f, 0.1f, 0.2f, 0.05f, 0.5f, 0.05f};
    memcpy(m.parts[1].weights, w5, sizeof w5); /* vertex 0 only */
    CHECK_OK(sks_report_write_html(p5, &in, &err), &err);
    size_t n5 = 0;
    char *h5 = read_all(p5, &n5);
    cJSON *d5 = h5 ? page_data(h5) : NULL;
    const cJSON *m5 = d5 ? cJSON_GetObjectItem(d5, "mesh") : NULL;
    CHECK(m5 && cJSON_GetObjectItem(m5, "influences")->valuedouble == 8);
    CHECK(m5 && cJSON_GetObjectItem(m5, "truncated_influences")->valuedouble == 0);
    cJSON_Delete(d5);
    free(h5);
    /* The palette check covers the 8-influence path too. */
    const sks_bake_result *five[2];
    sks_bake_result f5, r5;
    make_result(&m, &f5, SKS_SOLVE_FREE, 0.8f, 1, 8, 0);
    make_result(&m, &r5, SKS_SOLVE_ROTATION_ONLY, 0.9f, 1, 8, 0);
    five[0] = &f5;
    five[1] = &r5;
    sks_report_input in5 = {"8 influences", &m, &m, five, 2, 0};
    CHECK_OK(sks_report_write_html(p5, &in5, &err), &err);
    check_page(p5, &m, five, 2);
    char j5[1100];
    snprintf(j5, sizeof j5, "%s/report_8_influences.json", dir);
    write_cli_json(j5, five, 2);
    free_result(&f5);
    free_result(&r5);
    memcpy(m.parts[1].weights, saved_w, sizeof saved_w);
  }

  /* Errors: nothing written, a message that says what to do. */
  char bad_path[1100];
  snprintf(bad_path, sizeof bad_path, "%s/no_surfaces.html", dir);
  float *saved = free_res.clips[1].vertex_error;
  free_res.clips[1].vertex_error = NULL;
  CHECK(sks_report_write_html(bad_path, &in, &err) == SKS_ERR_ARGUMENT);
  CHECK(strstr(err.message, "keep_surfaces") != NULL);
  CHECK(!file_exists(bad_path));
  free_res.clips[1].vertex_error = saved;
  free_res.target_vertex_count += 1;
  CHECK(sks_report_write_html(bad_path, &in, &err) == SKS_ERR_ARGUMENT);
  CHECK(!file_exists(bad_path));
  free_res.target_vertex_count -= 1;
  CHECK(sks_report_write_html("/nonexistent-dir/x/report.html", &in, &err) == SKS_ERR_IO);
  CHECK(strstr(err.message, "/nonexistent-dir/x/report.html") != NULL);
  size_t saved_clips = free_res.clip_count, saved_rot = rot_res.clip_count;
  free_res.clip_count = rot_res.clip_count = 0;
  CHECK(sks_report_write_html(bad_path, &in, &err) == SKS_ERR_ARGUMENT);
  CHECK(strstr(err.message, "no baked clips") != NULL);
  free_res.clip_count = saved_clips;
  rot_res.clip_count = saved_rot;
  size_t saved_frames = rot_res.clips[0].frame_count;
  rot_res.clips[0].frame_count = 0;
  CHECK(sks_report_write_html(bad_path, &in, &err) == SKS_ERR_ARGUMENT);
  rot_res.clips[0].frame_count = saved_frames;
  rot_res.clips[0].frame_count = saved_frames - 1; /* modes disagree on a clip's frames */
  CHECK(sks_report_write_html(bad_path, &in, &err) == SKS_ERR_ARGUMENT);
  CHECK(strstr(err.message, "frames in one result") != NULL);
  rot_res.clips[0].frame_count = saved_frames;
  CHECK(!file_exists(bad_path));
  sks_report_input empty = {NULL, NULL, &m, NULL, 0, 0};
  CHECK(sks_report_write_html(bad_path, &empty, &err) == SKS_ERR_ARGUMENT);
  free_result(&free_res);
  free_result(&rot_res);
  free_result(&control);
  sks_model_free(&m);

  morph_report(dir);
  rigid_report(dir);
  scaled_unnormalised_report(dir);

  /* Real data through the library: the Fox baked onto the auto-weighted
   * rig (imperfect) and onto itself (control). */
  const char *fox = sks_test_shared_data("Fox/Fox.glb");
  const char *fox_target = sks_test_shared_data("fox_targets/fox_rig_autoweights.glb");
  if (fox && fox_target) {
    sks_model src, tgt;
    CHECK_OK(sks_load(fox, NULL, &src, &err), &err);
    CHECK_OK(sks_load(fox_target, NULL, &tgt, &err), &err);
    static const char *names[2] = {"fox_lib_bake", "fox_lib_control"};
    for (int k = 0; k < 2; ++k) {
      const sks_model *target = k == 0 ? &tgt : &src;
      sks_bake_options o;
      memset(&o, 0, sizeof o);
      o.keep_surfaces = 1;
      sks_bake_result br;
      memset(&br, 0, sizeof br);
      sks_result rc = sks_bake(&src, target, &o, &br, &err);
      CHECK_OK(rc, &err);
      if (rc == SKS_OK) {
        char fp[1100], jp[1100];
        snprintf(fp, sizeof fp, "%s/report_%s.html", dir, names[k]);
        snprintf(jp, sizeof jp, "%s/report_%s.json", dir, names[k]);
        const sks_bake_result *one[1] = {&br};
        sks_report_input fin = {k == 0 ? "Fox onto fox_rig_autoweights (library bake)" : "Fox control (library bake)",
                                &src, target, one, 1, 0};
        CHECK_OK(sks_report_write_html(fp, &fin, &err), &err);
        check_page(fp, target, one, 1);
        /* the alignment row: one mesh, every labelled vertex on its
         * namesake, the head where the target's is; no note */
        size_t hs = 0;
        char *h = read_all(fp, &hs);
        CHECK_MSG(h && strstr(h, "data-label-agreement=\"1\" data-head-agreement=\"1\" data-up-deg=\"") &&
                      strstr(h, "none applied (the files' bind spaces as they are); the same mesh (vertex for vertex)") &&
                      !strstr(h, "id=\"alignment-note\""),
                  "%s: the alignment row", fp);
        free(h);
        write_cli_json(jp, one, 1);
      }
      sks_bake_result_free(&br);
    }
    sks_model_free(&src);
    sks_model_free(&tgt);
  }

  /* Size budget: 5 clips x 24 frames of a 10k-vertex rig, one mode. */
  if (argc <= 2) {
    sks_model big;
    make_rig(&big, 250, 40);
    sks_bake_result br;
    memset(&br, 0, sizeof br);
    make_result(&big, &br, SKS_SOLVE_FREE, 0.9f, 5, 24, 0);
    char big_path[1100];
    snprintf(big_path, sizeof big_path, "%s/report_10k.html", dir);
    const sks_bake_result *one[1] = {&br};
    sks_report_input bin = {"10k budget", &big, &big, one, 1, 0};
    CHECK_OK(sks_report_write_html(big_path, &bin, &err), &err);
    size_t bytes = 0;
    char *html = read_all(big_path, &bytes);
    printf("10k-vertex budget: %.2f MB for 5 clips x 24 frames of %zu vertices, one mode\n",
           (double)bytes / 1e6, sks_model_vertex_count(&big));
    CHECK_MSG(bytes < 10500000, "report too large: %.2f MB", (double)bytes / 1e6);
    free(html);
    free_result(&br);
    sks_model_free(&big);
  }
  return sks_test_finish();
}
