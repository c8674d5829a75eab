/* glTF 2.0 binary (GLB) writer: skeleton nodes, mesh parts, skins, materials
 * and clips, written so the Khronos glTF-Validator reports 0 errors.
 *
 * Layout choices (why):
 *  - Node i is skeleton joint i (same order, names, rest TRS, children), so a
 *    reader that keeps node order gets the same skeleton back.
 *  - Mesh parts are grouped into one mesh per host node (consecutive parts with
 *    the same node and skin). Rigid parts are hosted by their node (it is
 *    placed as the file's part.node); skinned parts by a root node without a
 *    transform, because glTF ignores the transform of a skinned mesh's node:
 *    an existing joint when it already is such a root, else a new root node.
 *    Hosts are chosen with increasing node indices so a reader that lists
 *    parts in node order gets them back in model part order.
 *  - Weights: the validator sums the nonzero weights of a vertex in float32
 *    (JOINTS_0/1 interleaved) and allows 2e-7 per weight, rejects duplicate
 *    joints among nonzero weights and warns about nonzero joints with zero
 *    weight. We write weights unchanged when they already pass, else
 *    renormalise; unused slots get joint 0, weight 0.
 *  - Every float in the JSON is printed so it parses back to exactly the
 *    float32 value (min/max must match the buffer data exactly).
 *  - One bufferView per accessor, every view 4-byte aligned.
 *  - options->embed_normals: 0 (default) writes normals when a part has
 *    them (normalised: the validator rejects non-unit normals), < 0 omits them.
 *  - Refused (SKS_ERR_INVALID, naming file/part/vertex or clip/track/key):
 *    non-finite data, negative weights, all-zero weights, joints outside the
 *    skin with nonzero weight, key times that are negative or not increasing.
 *    A second track for the same (joint, path) in a clip is dropped (glTF
 *    allows one channel per target). */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "skinsolve/io.h"
#include "math/sks_math.h"

enum {
  GL_UNSIGNED_SHORT = 5123,
  GL_UNSIGNED_INT = 5125,
  GL_FLOAT = 5126,
  GL_ARRAY_BUFFER = 34962,
  GL_ELEMENT_ARRAY_BUFFER = 34963
};

typedef struct gw_state {
  const sks_model *model;
  const char *path;       /* for messages */
  sks_error *err;
  cJSON *accessors, *views;
  uint8_t *bin;
  size_t bin_size, bin_cap;
  int oom;
} gw_state;

/* ---- small helpers ---------------------------------------------------- */

/* A JSON number that parses back (as a double) to exactly the float f. */
static cJSON *num_f(float f) {
  char buf[40];
  double d = (double)f;
  if (!isfinite(d)) d = 0.0; /* callers validate finiteness first */
  if (d == 0.0) return cJSON_CreateRaw(signbit(d) ? "-0.0" : "0");
  for (int prec = 6; prec <= 17; ++prec) {
    snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (strtod(buf, NULL) == d) break;
  }
  return cJSON_CreateRaw(buf);
}

static cJSON *num_array_f(const float *v, size_t n) {
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; a && i < n; ++i) cJSON_AddItemToArray(a, num_f(v[i]));
  return a;
}

static cJSON *num_i(long v) { return cJSON_CreateNumber((double)v); }

static void add_num_i(cJSON *o, const char *key, long v) { cJSON_AddItemToObject(o, key, num_i(v)); }

static const char *part_label(const sks_model *m, size_t p) {
  const char *n = m->parts[p].name;
  return n && *n ? n : "unnamed";
}

static const char *file_label(const gw_state *s) {
  const char *p = s->path;
  const char *slash = p ? strrchr(p, '/') : NULL;
  return slash ? slash + 1 : (p ? p : "(glb)");
}

/* Appends bytes to BIN at a 4-byte aligned offset; returns the offset. */
static size_t bin_append(gw_state *s, const void *data, size_t bytes) {
  size_t off = (s->bin_size + 3u) & ~(size_t)3u;
  size_t need = off + bytes;
  if (need > s->bin_cap) {
    size_t cap = s->bin_cap ? s->bin_cap : 4096;
    while (cap < need) cap *= 2;
    uint8_t *nb = realloc(s->bin, cap);
    if (!nb) { s->oom = 1; return 0; }
    s->bin = nb;
    s->bin_cap = cap;
  }
  if (off > s->bin_size) memset(s->bin + s->bin_size, 0, off - s->bin_size); /* bin may be NULL when empty */
  if (bytes) memcpy(s->bin + off, data, bytes);
  s->bin_size = need;
  return off;
}

/* Adds bufferView + accessor for `count` elements of `type` ("SCALAR",
 * "VEC3", ...). min/max (ncomp floats) optional. Returns the accessor index. */
static int add_accessor(gw_state *s, const void *data, size_t bytes, int component_type,
                        size_t count, const char *type, int target, const float *min,
                        const float *max, int ncomp) {
  size_t off = bin_append(s, data, bytes);
  cJSON *view = cJSON_CreateObject();
  add_num_i(view, "buffer", 0);
  add_num_i(view, "byteOffset", (long)off);
  add_num_i(view, "byteLength", (long)bytes);
  if (target) add_num_i(view, "target", target);
  cJSON_AddItemToArray(s->views, view);
  cJSON *acc = cJSON_CreateObject();
  add_num_i(acc, "bufferView", cJSON_GetArraySize(s->views) - 1);
  add_num_i(acc, "componentType", component_type);
  add_num_i(acc, "count", (long)count);
  cJSON_AddStringToObject(acc, "type", type);
  if (min && max) {
    cJSON_AddItemToObject(acc, "min", num_array_f(min, (size_t)ncomp));
    cJSON_AddItemToObject(acc, "max", num_array_f(max, (size_t)ncomp));
  }
  cJSON_AddItemToArray(s->accessors, acc);
  return cJSON_GetArraySize(s->accessors) - 1;
}

static int add_float_accessor(gw_state *s, const float *data, size_t count, int ncomp,
                              const char *type, int target, int with_minmax) {
  float mn[16], mx[16];
  if (with_minmax) {
    for (int c = 0; c < ncomp; ++c) { mn[c] = INFINITY; mx[c] = -INFINITY; }
    for (size_t i = 0; i < count; ++i)
      for (int c = 0; c < ncomp; ++c) {
        float v = data[i * (size_t)ncomp + (size_t)c];
        if (v < mn[c]) mn[c] = v;
        if (v > mx[c]) mx[c] = v;
      }
  }
  return add_accessor(s, data, count * (size_t)ncomp * sizeof(float), GL_FLOAT, count, type,
                      target, with_minmax && count ? mn : NULL, with_minmax && count ? mx : NULL,
                      ncomp);
}

static int all_finite(const float *v, size_t n, size_t *bad) {
  for (size_t i = 0; i < n; ++i)
    if (!isfinite(v[i])) { *bad = i; return 0; }
  return 1;
}

/* ---- weights ------------------------------------------------------------ */

/* The validator's float32 sum of a vertex's nonzero weights (slots of
 * JOINTS_0 and JOINTS_1 interleaved: 0,4,1,5,2,6,3,7) and its tolerance. */
static int weights_pass_validator(const float *w, int sets) {
  volatile float sum = 0.0f;
  double tol = 0.0;
  for (int c = 0; c < 4; ++c)
    for (int set = 0; set < sets; ++set) {
      float v = w[set * 4 + c];
      if (v != 0.0f) { sum = sum + v; tol += 2e-7; }
    }
  /* Keep a safety margin inside the validator's tolerance. */
  return fabs((double)sum - 1.0) <= tol * 0.5;
}

/* Fills joints/weights (sets*4 slots per vertex) for one part. */
static sks_result pack_influences(gw_state *s, size_t p, int sets, uint16_t *oj, float *ow) {
  const sks_mesh_part *part = &s->model->parts[p];
  const sks_skin *skin = &s->model->skins[part->skin];
  size_t k = part->influence_count, slots = (size_t)sets * 4u;
  for (size_t v = 0; v < part->vertex_count; ++v) {
    uint16_t *j = oj + v * slots;
    float *w = ow + v * slots;
    memset(j, 0, slots * sizeof *j);
    memset(w, 0, slots * sizeof *w);
    size_t used = 0;
    double sum = 0.0;
    for (size_t i = 0; i < k; ++i) {
      float wi = part->weights[v * k + i];
      uint16_t ji = part->joints[v * k + i];
      if (!isfinite(wi) || wi < 0.0f)
        return sks_error_set(s->err, SKS_ERR_INVALID,
                             "%s: part %zu '%s', vertex %zu: weight %g is negative or not a number "
                             "— run 'skinsolve repair' first",
                             file_label(s), p, part_label(s->model, p), v, (double)wi);
      if (wi == 0.0f) continue;
      if (ji >= skin->joint_count)
        return sks_error_set(s->err, SKS_ERR_INVALID,
                             "%s: part %zu '%s', vertex %zu: joint %u is outside skin %d (%zu joints) "
                             "— run 'skinsolve repair' first",
                             file_label(s), p, part_label(s->model, p), v, (unsigned)ji, part->skin,
                             skin->joint_count);
      size_t d = 0;
      while (d < used && j[d] != ji) ++d;
      if (d == used) { j[d] = ji; w[d] = 0.0f; ++used; }
      w[d] += wi; /* duplicate joints are merged (validator error otherwise) */
      sum += wi;
    }
    if (!(sum > 0.0))
      return sks_error_set(s->err, SKS_ERR_INVALID,
                           "%s: part %zu '%s', vertex %zu: weights sum to 0 — cannot normalise "
                           "(run 'skinsolve repair' first)",
                           file_label(s), p, part_label(s->model, p), v);
    if (!weights_pass_validator(w, sets)) {
      size_t big = 0;
      for (size_t i = 0; i < used; ++i) {
        w[i] = (float)(w[i] / sum);
        if (w[i] > w[big]) big = i;
      }
      /* Put the float rounding residue on the largest weight. */
      for (int it = 0; it < 4 && !weights_pass_validator(w, sets); ++it) {
        double t = 0.0;
        for (size_t i = 0; i < used; ++i) t += w[i];
        w[big] = (float)(w[big] + (1.0 - t));
      }
    }
  }
  return SKS_OK;
}

/* ---- the document -------------------------------------------------------- */

typedef struct gw_group {
  size_t first, count;   /* parts [first, first+count) */
  int32_t host;          /* node index holding the mesh */
  int new_node;          /* host is an added node */
} gw_group;

static int is_identity_rest(const sks_transform *t) {
  return t->translation.x == 0 && t->translation.y == 0 && t->translation.z == 0 &&
         t->rotation.x == 0 && t->rotation.y == 0 && t->rotation.z == 0 && t->rotation.w == 1 &&
         t->scale.x == 1 && t->scale.y == 1 && t->scale.z == 1;
}

/* Lowest common ancestor of a skin's joints (or -1). */
static int32_t skin_common_root(const sks_skeleton *sk, const sks_skin *skin) {
  if (!skin->joint_count) return -1;
  int32_t lca = skin->joints[0];
  for (size_t i = 1; i < skin->joint_count && lca >= 0; ++i) {
    int32_t j = skin->joints[i];
    /* raise lca until it is an ancestor-or-self of j */
    for (;;) {
      int32_t a = j;
      while (a >= 0 && a != lca) a = sk->parents[a];
      if (a == lca) break;
      lca = sk->parents[lca];
      if (lca < 0) break;
    }
  }
  return lca;
}

static sks_result check_model(gw_state *s) {
  const sks_model *m = s->model;
  const sks_skeleton *sk = &m->skeleton;
  size_t bad;
  for (size_t i = 0; i < sk->joint_count; ++i) {
    if (sk->parents[i] >= (int32_t)i)
      return sks_error_set(s->err, SKS_ERR_ARGUMENT,
                           "%s: joint %zu: parent %d is not before it (skeleton must be parent-first)",
                           file_label(s), i, sk->parents[i]);
    if (!all_finite(&sk->rest[i].translation.x, 10, &bad))
      return sks_error_set(s->err, SKS_ERR_INVALID, "%s: joint %zu '%s': rest transform is not finite",
                           file_label(s), i, sk->names[i] ? sk->names[i] : "");
  }
  for (size_t k = 0; k < m->skin_count; ++k) {
    const sks_skin *skin = &m->skins[k];
    for (size_t j = 0; j < skin->joint_count; ++j) {
      if (skin->joints[j] < 0 || (size_t)skin->joints[j] >= sk->joint_count)
        return sks_error_set(s->err, SKS_ERR_INVALID, "%s: skin %zu, joint %zu: node %d is not in the skeleton",
                             file_label(s), k, j, skin->joints[j]);
      if (!all_finite(skin->inverse_bind[j].m, 16, &bad))
        return sks_error_set(s->err, SKS_ERR_INVALID, "%s: skin %zu, joint %zu: inverse bind matrix is not finite",
                             file_label(s), k, j);
    }
  }
  for (size_t p = 0; p < m->part_count; ++p) {
    const sks_mesh_part *part = &m->parts[p];
    size_t nv = part->vertex_count;
    if (part->skin >= (int32_t)m->skin_count)
      return sks_error_set(s->err, SKS_ERR_INVALID, "%s: part %zu '%s': skin %d does not exist",
                           file_label(s), p, part_label(m, p), part->skin);
    if (part->skin >= 0 && (part->influence_count == 0 || part->influence_count > SKS_MAX_INFLUENCES ||
                            !part->joints || !part->weights))
      return sks_error_set(s->err, SKS_ERR_INVALID, "%s: part %zu '%s': skinned part without influences",
                           file_label(s), p, part_label(m, p));
    if (nv == 0 || !part->positions)
      return sks_error_set(s->err, SKS_ERR_INVALID, "%s: part %zu '%s': no vertices",
                           file_label(s), p, part_label(m, p));
    if (!all_finite(part->positions, nv * 3, &bad))
      return sks_error_set(s->err, SKS_ERR_INVALID, "%s: part %zu '%s', vertex %zu: position is not finite",
                           file_label(s), p, part_label(m, p), bad / 3);
    if (part->uvs && !all_finite(part->uvs, nv * 2, &bad))
      return sks_error_set(s->err, SKS_ERR_INVALID, "%s: part %zu '%s', vertex %zu: UV is not finite",
                           file_label(s), p, part_label(m, p), bad / 2);
    for (size_t i = 0; i < part->index_count; ++i)
      if (part->indices[i] >= nv)
        return sks_error_set(s->err, SKS_ERR_INVALID, "%s: part %zu '%s', index %zu: vertex %u out of range (%zu vertices)",
                             file_label(s), p, part_label(m, p), i, part->indices[i], nv);
  }
  for (size_t c = 0; c < m->clip_count; ++c) {
    const sks_clip *clip = &m->clips[c];
    for (size_t t = 0; t < clip->track_count; ++t) {
      const sks_track *tr = &clip->tracks[t];
      if (tr->key_count == 0) continue;
      if (tr->joint < 0 || (size_t)tr->joint >= sk->joint_count)
        return sks_error_set(s->err, SKS_ERR_INVALID, "%s: clip '%s', track %zu: joint %d is not in the skeleton",
                             file_label(s), clip->name ? clip->name : "", t, tr->joint);
      for (size_t i = 0; i < tr->key_count; ++i)
        if (!isfinite(tr->times[i]) || tr->times[i] < 0.0f || (i && !(tr->times[i] > tr->times[i - 1])))
          return sks_error_set(s->err, SKS_ERR_INVALID,
                               "%s: clip '%s', track %zu (joint %d), key %zu: time %g is negative, not finite "
                               "or not after the previous key",
                               file_label(s), clip->name ? clip->name : "", t, tr->joint, i, (double)tr->times[i]);
      size_t nvals = tr->key_count * sks_track_components(tr->path) *
                     (tr->interpolation == SKS_INTERP_CUBICSPLINE ? 3u : 1u);
      if (!all_finite(tr->values, nvals, &bad))
        return sks_error_set(s->err, SKS_ERR_INVALID, "%s: clip '%s', track %zu (joint %d): value %zu is not finite",
                             file_label(s), clip->name ? clip->name : "", t, tr->joint, bad);
    }
  }
  return SKS_OK;
}

static cJSON *node_json(const sks_skeleton *sk, size_t i) {
  cJSON *n = cJSON_CreateObject();
  if (sk->names && sk->names[i]) cJSON_AddStringToObject(n, "name", sk->names[i]);
  sks_transform t = sk->rest[i];
  if (t.translation.x != 0 || t.translation.y != 0 || t.translation.z != 0)
    cJSON_AddItemToObject(n, "translation", num_array_f(&t.translation.x, 3));
  sks_quat q = t.rotation;
  float l2 = sks_q_dot(q, q);
  if (fabsf(l2 - 1.0f) > 1e-6f) q = sks_q_normalize(q); /* validator: ROTATION_NON_UNIT */
  if (q.x != 0 || q.y != 0 || q.z != 0 || q.w != 1)
    cJSON_AddItemToObject(n, "rotation", num_array_f(&q.x, 4));
  if (t.scale.x != 1 || t.scale.y != 1 || t.scale.z != 1)
    cJSON_AddItemToObject(n, "scale", num_array_f(&t.scale.x, 3));
  return n;
}

static sks_result write_primitive(gw_state *s, size_t p, int sets, const sks_gltf_write_options *o,
                                  cJSON *prims) {
  const sks_model *m = s->model;
  const sks_mesh_part *part = &m->parts[p];
  size_t nv = part->vertex_count;
  cJSON *prim = cJSON_CreateObject();
  cJSON *attr = cJSON_CreateObject();
  cJSON_AddItemToObject(prim, "attributes", attr);
  cJSON_AddItemToArray(prims, prim);
  add_num_i(attr, "POSITION", add_float_accessor(s, part->positions, nv, 3, "VEC3", GL_ARRAY_BUFFER, 1));

  int want_normals = !(o && o->embed_normals < 0);
  if (part->normals && want_normals) {
    float *n = malloc(nv * 3 * sizeof(float));
    if (!n) { s->oom = 1; return SKS_ERR_OUT_OF_MEMORY; }
    for (size_t v = 0; v < nv; ++v) {
      sks_vec3 x = sks_v3(part->normals[3 * v], part->normals[3 * v + 1], part->normals[3 * v + 2]);
      float l = sks_v3_len(x);
      if (!isfinite(l) || l < 1e-12f) x = sks_v3(0, 0, 1); /* degenerate: any unit vector */
      else if (fabsf(l - 1.0f) > 1e-6f) x = sks_v3_scale(x, 1.0f / l);
      n[3 * v] = x.x; n[3 * v + 1] = x.y; n[3 * v + 2] = x.z;
    }
    add_num_i(attr, "NORMAL", add_float_accessor(s, n, nv, 3, "VEC3", GL_ARRAY_BUFFER, 0));
    free(n);
  }
  if (part->uvs)
    add_num_i(attr, "TEXCOORD_0", add_float_accessor(s, part->uvs, nv, 2, "VEC2", GL_ARRAY_BUFFER, 0));
  if (sets > 0) {
    size_t slots = (size_t)sets * 4u;
    uint16_t *j = malloc(nv * slots * sizeof *j);
    float *w = malloc(nv * slots * sizeof *w);
    uint16_t *js = malloc(nv * 4 * sizeof *js);
    float *ws = malloc(nv * 4 * sizeof *ws);
    if (!j || !w || !js || !ws) {
      free(j); free(w); free(js); free(ws);
      s->oom = 1;
      return SKS_ERR_OUT_OF_MEMORY;
    }
    sks_result r = pack_influences(s, p, sets, j, w);
    for (int set = 0; r == SKS_OK && set < sets; ++set) {
      for (size_t v = 0; v < nv; ++v)
        for (size_t c = 0; c < 4; ++c) {
          js[v * 4 + c] = j[v * slots + (size_t)set * 4 + c];
          ws[v * 4 + c] = w[v * slots + (size_t)set * 4 + c];
        }
      char key[32];
      snprintf(key, sizeof key, "JOINTS_%d", set);
      add_num_i(attr, key, add_accessor(s, js, nv * 4 * sizeof *js, GL_UNSIGNED_SHORT, nv, "VEC4",
                                        GL_ARRAY_BUFFER, NULL, NULL, 0));
      snprintf(key, sizeof key, "WEIGHTS_%d", set);
      add_num_i(attr, key, add_float_accessor(s, ws, nv, 4, "VEC4", GL_ARRAY_BUFFER, 0));
    }
    free(j); free(w); free(js); free(ws);
    if (r != SKS_OK) return r;
  }
  if (part->index_count) {
    if (nv < 65535) { /* 65535 is the primitive-restart value of unsigned short */
      uint16_t *idx = malloc(part->index_count * sizeof *idx);
      if (!idx) { s->oom = 1; return SKS_ERR_OUT_OF_MEMORY; }
      for (size_t i = 0; i < part->index_count; ++i) idx[i] = (uint16_t)part->indices[i];
      add_num_i(prim, "indices", add_accessor(s, idx, part->index_count * sizeof *idx, GL_UNSIGNED_SHORT,
                                              part->index_count, "SCALAR", GL_ELEMENT_ARRAY_BUFFER,
                                              NULL, NULL, 0));
      free(idx);
    } else {
      add_num_i(prim, "indices", add_accessor(s, part->indices, part->index_count * sizeof(uint32_t),
                                              GL_UNSIGNED_INT, part->index_count, "SCALAR",
                                              GL_ELEMENT_ARRAY_BUFFER, NULL, NULL, 0));
    }
  }
  if (part->material >= 0 && (size_t)part->material < m->material_count)
    add_num_i(prim, "material", part->material);
  add_num_i(prim, "mode", 4);
  return SKS_OK;
}

static int same_times(const sks_track *a, const sks_track *b) {
  return a->key_count == b->key_count && memcmp(a->times, b->times, a->key_count * sizeof(float)) == 0;
}

static sks_result write_animations(gw_state *s, cJSON *root) {
  const sks_model *m = s->model;
  cJSON *anims = NULL;
  for (size_t c = 0; c < m->clip_count; ++c) {
    const sks_clip *clip = &m->clips[c];
    cJSON *channels = cJSON_CreateArray(), *samplers = cJSON_CreateArray();
    int *input_of = clip->track_count ? malloc(clip->track_count * sizeof(int)) : NULL;
    if (clip->track_count && !input_of) {
      cJSON_Delete(channels); cJSON_Delete(samplers);
      s->oom = 1;
      return SKS_ERR_OUT_OF_MEMORY;
    }
    for (size_t t = 0; t < clip->track_count; ++t) {
      const sks_track *tr = &clip->tracks[t];
      input_of[t] = -1;
      if (tr->key_count == 0) continue;
      /* One channel per (node, path): a duplicate is a validator error, keep the first. */
      int dup = 0;
      for (size_t u = 0; u < t && !dup; ++u)
        dup = clip->tracks[u].key_count && clip->tracks[u].joint == tr->joint &&
              clip->tracks[u].path == tr->path;
      if (dup) continue;
      int input = -1;
      for (size_t u = 0; u < t && input < 0; ++u)
        if (input_of[u] >= 0 && same_times(&clip->tracks[u], tr)) input = input_of[u];
      if (input < 0) input = add_float_accessor(s, tr->times, tr->key_count, 1, "SCALAR", 0, 1);
      input_of[t] = input;
      uint32_t comps = sks_track_components(tr->path);
      int cubic = tr->interpolation == SKS_INTERP_CUBICSPLINE;
      size_t elems = tr->key_count * (cubic ? 3u : 1u);
      float *vals = malloc(elems * comps * sizeof(float));
      if (!vals) { s->oom = 1; break; }
      memcpy(vals, tr->values, elems * comps * sizeof(float));
      if (tr->path == SKS_PATH_ROTATION)
        for (size_t e = 0; e < elems; ++e) {
          if (cubic && e % 3 != 1) continue; /* tangents are not unit quaternions */
          sks_quat *q = (sks_quat *)(void *)(vals + e * 4);
          float l2 = sks_q_dot(*q, *q);
          if (fabsf(l2 - 1.0f) > 1e-6f) *q = sks_q_normalize(*q);
        }
      int output = add_float_accessor(s, vals, elems, (int)comps, comps == 4 ? "VEC4" : "VEC3", 0, 0);
      free(vals);
      cJSON *smp = cJSON_CreateObject();
      add_num_i(smp, "input", input);
      add_num_i(smp, "output", output);
      cJSON_AddStringToObject(smp, "interpolation",
                              cubic ? "CUBICSPLINE"
                                    : tr->interpolation == SKS_INTERP_STEP ? "STEP" : "LINEAR");
      cJSON_AddItemToArray(samplers, smp);
      cJSON *ch = cJSON_CreateObject();
      add_num_i(ch, "sampler", cJSON_GetArraySize(samplers) - 1);
      cJSON *target = cJSON_CreateObject();
      add_num_i(target, "node", tr->joint);
      cJSON_AddStringToObject(target, "path",
                              tr->path == SKS_PATH_TRANSLATION ? "translation"
                              : tr->path == SKS_PATH_ROTATION  ? "rotation"
                                                               : "scale");
      cJSON_AddItemToObject(ch, "target", target);
      cJSON_AddItemToArray(channels, ch);
    }
    free(input_of);
    if (cJSON_GetArraySize(channels) == 0) { /* glTF requires at least one channel */
      cJSON_Delete(channels); cJSON_Delete(samplers);
      continue;
    }
    cJSON *a = cJSON_CreateObject();
    if (clip->name) cJSON_AddStringToObject(a, "name", clip->name);
    cJSON_AddItemToObject(a, "channels", channels);
    cJSON_AddItemToObject(a, "samplers", samplers);
    if (!anims) anims = cJSON_AddArrayToObject(root, "animations");
    cJSON_AddItemToArray(anims, a);
  }
  return s->oom ? SKS_ERR_OUT_OF_MEMORY : SKS_OK;
}

static sks_result build(gw_state *s, const sks_gltf_write_options *o, cJSON *root) {
  const sks_model *m = s->model;
  const sks_skeleton *sk = &m->skeleton;
  size_t jc = sk->joint_count;
  sks_result r = check_model(s);
  if (r != SKS_OK) return r;

  cJSON *asset = cJSON_AddObjectToObject(root, "asset");
  cJSON_AddStringToObject(asset, "version", "2.0");
  cJSON_AddStringToObject(asset, "generator", "skinsolve " SKS_VERSION_STRING);

  /* Group consecutive parts by (node, skin) and choose hosts. */
  gw_group *groups = m->part_count ? calloc(m->part_count, sizeof *groups) : NULL;
  uint8_t *hosting = jc ? calloc(jc, 1) : NULL;
  if ((m->part_count && !groups) || (jc && !hosting)) {
    free(groups); free(hosting);
    return sks_error_set(s->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", file_label(s));
  }
  size_t ng = 0;
  int32_t last_host = -1, next_new = (int32_t)jc;
  for (size_t p = 0; p < m->part_count;) {
    const sks_mesh_part *a = &m->parts[p];
    size_t q = p + 1;
    while (q < m->part_count && m->parts[q].node == a->node && m->parts[q].skin == a->skin) ++q;
    gw_group *g = &groups[ng++];
    g->first = p;
    g->count = q - p;
    int32_t nd = a->node;
    int usable = nd >= 0 && (size_t)nd < jc && nd > last_host && !hosting[nd];
    if (usable && a->skin >= 0) usable = sk->parents[nd] < 0 && is_identity_rest(&sk->rest[nd]);
    if (usable) { g->host = nd; hosting[nd] = 1; }
    else { g->host = next_new++; g->new_node = 1; }
    last_host = g->host;
    p = q;
  }

  /* Nodes: joints, then added mesh hosts. */
  cJSON *nodes = cJSON_AddArrayToObject(root, "nodes");
  for (size_t i = 0; i < jc; ++i) cJSON_AddItemToArray(nodes, node_json(sk, i));
  for (size_t gi = 0; gi < ng; ++gi) {
    if (!groups[gi].new_node) continue;
    const sks_mesh_part *a = &m->parts[groups[gi].first];
    cJSON *n = cJSON_CreateObject();
    char name[256];
    const char *base = a->name && *a->name ? a->name
                       : (a->node >= 0 && (size_t)a->node < jc) ? sk->names[a->node] : "mesh";
    snprintf(name, sizeof name, "%s%s", base, a->skin >= 0 ? "_skinned" : "_mesh");
    cJSON_AddStringToObject(n, "name", name);
    cJSON_AddItemToArray(nodes, n);
  }
  /* children */
  for (size_t i = 0; i < jc; ++i) {
    if (sk->parents[i] < 0) continue;
    cJSON *parent = cJSON_GetArrayItem(nodes, sk->parents[i]);
    cJSON *ch = cJSON_GetObjectItem(parent, "children");
    if (!ch) ch = cJSON_AddArrayToObject(parent, "children");
    cJSON_AddItemToArray(ch, num_i((long)i));
  }
  for (size_t gi = 0; gi < ng; ++gi) {
    const gw_group *g = &groups[gi];
    const sks_mesh_part *a = &m->parts[g->first];
    if (!g->new_node || a->skin >= 0 || a->node < 0 || (size_t)a->node >= jc) continue;
    /* Rigid part whose node hosts another mesh: an identity child follows it. */
    cJSON *parent = cJSON_GetArrayItem(nodes, a->node);
    cJSON *ch = cJSON_GetObjectItem(parent, "children");
    if (!ch) ch = cJSON_AddArrayToObject(parent, "children");
    cJSON_AddItemToArray(ch, num_i(g->host));
  }

  /* Meshes */
  cJSON *meshes = ng ? cJSON_AddArrayToObject(root, "meshes") : NULL;
  for (size_t gi = 0; gi < ng && r == SKS_OK; ++gi) {
    const gw_group *g = &groups[gi];
    int sets = 0;
    for (size_t p = g->first; p < g->first + g->count; ++p)
      if (m->parts[p].skin >= 0) {
        int need = m->parts[p].influence_count > 4 ? 2 : 1;
        if (need > sets) sets = need; /* same JOINTS_n count in every primitive */
      }
    cJSON *mesh = cJSON_CreateObject();
    const char *mname = m->parts[g->first].name;
    if (mname) cJSON_AddStringToObject(mesh, "name", mname);
    cJSON *prims = cJSON_AddArrayToObject(mesh, "primitives");
    cJSON_AddItemToArray(meshes, mesh);
    for (size_t p = g->first; p < g->first + g->count && r == SKS_OK; ++p)
      r = write_primitive(s, p, sets, o, prims);
    cJSON *host = cJSON_GetArrayItem(nodes, g->host);
    add_num_i(host, "mesh", (long)gi);
    if (m->parts[g->first].skin >= 0) add_num_i(host, "skin", m->parts[g->first].skin);
  }
  if (r != SKS_OK || s->oom) {
    free(groups); free(hosting);
    return r != SKS_OK ? r : sks_error_set(s->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", file_label(s));
  }

  /* Scene: every root (joints and added skinned-mesh hosts). */
  cJSON *roots = cJSON_CreateArray();
  for (size_t i = 0; i < jc; ++i)
    if (sk->parents[i] < 0) cJSON_AddItemToArray(roots, num_i((long)i));
  for (size_t gi = 0; gi < ng; ++gi) {
    const gw_group *g = &groups[gi];
    const sks_mesh_part *a = &m->parts[g->first];
    int attached = a->skin < 0 && a->node >= 0 && (size_t)a->node < jc;
    if (g->new_node && !attached) cJSON_AddItemToArray(roots, num_i(g->host));
  }
  free(groups); free(hosting);
  if (cJSON_GetArraySize(roots) > 0) {
    add_num_i(root, "scene", 0);
    cJSON *scenes = cJSON_AddArrayToObject(root, "scenes");
    cJSON *scene = cJSON_CreateObject();
    cJSON_AddItemToObject(scene, "nodes", roots);
    cJSON_AddItemToArray(scenes, scene);
  } else {
    cJSON_Delete(roots);
  }

  /* Skins */
  if (m->skin_count) {
    cJSON *skins = cJSON_AddArrayToObject(root, "skins");
    for (size_t k = 0; k < m->skin_count; ++k) {
      const sks_skin *skin = &m->skins[k];
      cJSON *sj = cJSON_CreateObject();
      if (skin->name) cJSON_AddStringToObject(sj, "name", skin->name);
      cJSON *joints = cJSON_AddArrayToObject(sj, "joints");
      for (size_t j = 0; j < skin->joint_count; ++j) cJSON_AddItemToArray(joints, num_i(skin->joints[j]));
      if (skin->joint_count) {
        sks_mat4 *ibm = malloc(skin->joint_count * sizeof *ibm);
        if (!ibm) return sks_error_set(s->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", file_label(s));
        memcpy(ibm, skin->inverse_bind, skin->joint_count * sizeof *ibm);
        for (size_t j = 0; j < skin->joint_count; ++j) { /* affine: validator ACCESSOR_INVALID_IBM */
          ibm[j].m[3] = ibm[j].m[7] = ibm[j].m[11] = 0.0f;
          ibm[j].m[15] = 1.0f;
        }
        add_num_i(sj, "inverseBindMatrices",
                  add_float_accessor(s, ibm[0].m, skin->joint_count, 16, "MAT4", 0, 0));
        free(ibm);
      }
      int32_t common = skin_common_root(sk, skin);
      if (common >= 0) add_num_i(sj, "skeleton", common);
      cJSON_AddItemToArray(skins, sj);
    }
  }

  /* Materials */
  if (m->material_count) {
    cJSON *mats = cJSON_AddArrayToObject(root, "materials");
    for (size_t i = 0; i < m->material_count; ++i) {
      const sks_material *mat = &m->materials[i];
      cJSON *mj = cJSON_CreateObject();
      if (mat->name) cJSON_AddStringToObject(mj, "name", mat->name);
      float c[4];
      for (int k = 0; k < 4; ++k) {
        c[k] = mat->base_color[k];
        if (!(c[k] >= 0.0f)) c[k] = 0.0f;
        if (c[k] > 1.0f) c[k] = 1.0f;
      }
      cJSON *pbr = cJSON_AddObjectToObject(mj, "pbrMetallicRoughness");
      cJSON_AddItemToObject(pbr, "baseColorFactor", num_array_f(c, 4));
      cJSON_AddItemToObject(pbr, "metallicFactor", num_i(0));
      cJSON_AddItemToArray(mats, mj);
    }
  }

  r = write_animations(s, root);
  if (r != SKS_OK) return sks_error_set(s->err, r, "%s: out of memory", file_label(s));

  cJSON_AddItemToObject(root, "accessors", s->accessors);
  cJSON_AddItemToObject(root, "bufferViews", s->views);
  s->accessors = s->views = NULL;
  bin_append(s, NULL, 0); /* zero the padding up to a multiple of 4 */
  if (s->bin_size) { /* a buffer must hold at least one byte */
    cJSON *buffers = cJSON_AddArrayToObject(root, "buffers");
    cJSON *buf = cJSON_CreateObject();
    add_num_i(buf, "byteLength", (long)s->bin_size);
    cJSON_AddItemToArray(buffers, buf);
  }
  if (s->oom) return sks_error_set(s->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", file_label(s));
  return SKS_OK;
}

static void put_u32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}

sks_result sks_write_glb(const char *path, const sks_model *model,
                         const sks_gltf_write_options *options, sks_error *err) {
  if (!path || !model)
    return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_write_glb: path and model are required");
  gw_state s;
  memset(&s, 0, sizeof s);
  s.model = model;
  s.path = path;
  s.err = err;
  s.accessors = cJSON_CreateArray();
  s.views = cJSON_CreateArray();
  cJSON *root = cJSON_CreateObject();
  sks_result r = (root && s.accessors && s.views) ? build(&s, options, root)
                                                  : sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  cJSON_Delete(s.accessors);
  cJSON_Delete(s.views);
  char *json = r == SKS_OK ? cJSON_PrintUnformatted(root) : NULL;
  cJSON_Delete(root);
  if (r == SKS_OK && !json) r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  if (r != SKS_OK) { free(s.bin); free(json); return r; }

  size_t jlen = strlen(json), jpad = (jlen + 3u) & ~(size_t)3u;
  size_t blen = s.bin_size; /* already a multiple of 4 */
  size_t total = 12 + 8 + jpad + (blen ? 8 + blen : 0);
  if (total > 0xFFFFFFFFu) {
    free(s.bin); free(json);
    return sks_error_set(err, SKS_ERR_UNSUPPORTED, "%s: model too large for GLB (%zu bytes)", path, total);
  }
  uint8_t *out = malloc(total);
  if (!out) { free(s.bin); free(json); return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path); }
  put_u32(out, 0x46546C67u); /* "glTF" */
  put_u32(out + 4, 2);
  put_u32(out + 8, (uint32_t)total);
  put_u32(out + 12, (uint32_t)jpad);
  put_u32(out + 16, 0x4E4F534Au); /* "JSON" */
  memcpy(out + 20, json, jlen);
  memset(out + 20 + jlen, ' ', jpad - jlen);
  if (blen) {
    uint8_t *b = out + 20 + jpad;
    put_u32(b, (uint32_t)blen);
    put_u32(b + 4, 0x004E4942u); /* "BIN\0" */
    memcpy(b + 8, s.bin, blen);
  }
  free(json);
  free(s.bin);
  r = sks_write_file_atomic(path, out, total, err);
  free(out);
  return r;
}
