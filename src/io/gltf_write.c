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
 *    allows one channel per target).
 *  - Every clip with a key becomes an animation (at least one channel), so
 *    reading the output gives the same clips; a clip without any track
 *    cannot be written in glTF and is left out (the glTF reader never
 *    returns one: it leaves out animations that move nothing of the model). */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/gltf_write.h"
#include "io/model_wire.h"
#include "skinsolve/io.h"
#include "math/sks_math.h"
#include "io/gltf_source.h"
#include "io/resource.h"
#include <strings.h>

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
  size_t n_accessors, n_views;  /* counted here: cJSON arrays are linked lists */
  const int32_t *joint_node;    /* joint -> glTF node index written (NULL: identity) */
  /* build() only: material -> its untextured twin for parts without UVs
   * (a texture needs TEXCOORD_0), -1 = none; NULL: materials as they are. */
  const int32_t *plain_material;
  /* build() only: part -> the glTF node holding its mesh (a morph track's
   * "weights" channel targets it); NULL: the part's node via joint_node. */
  int32_t *part_host;
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

/* Whether a texture slot samples one of the model's images. */
static int slot_textured(const sks_model *m, const sks_texture_ref *t) {
  int32_t img = t->image;
  return img >= 0 && (size_t)img < m->image_count && m->images[img].data && m->images[img].size;
}

static uint32_t slot_extension(int slot, const char **key);

/* Whether slot t of the material is written: it samples one of the model's
 * images and is glTF's core material's or an extension's the material has. */
static int slot_written(const sks_model *m, const sks_material *mat, int t) {
  return slot_textured(m, &mat->textures[t]) && !(slot_extension(t, NULL) & ~mat->extensions);
}

/* Whether the material samples one of the model's images in any written slot. */
static int material_textured(const sks_model *m, const sks_material *mat) {
  for (int t = 0; t < SKS_TEXTURE_SLOT_COUNT; ++t)
    if (slot_written(m, mat, t)) return 1;
  return 0;
}

/* Whether a part has the UV sets every textured slot of the material samples
 * (tex_coord 0: uvs; 1: uvs1, written only beside uvs). */
static int part_carries(const sks_model *m, const sks_mesh_part *part, const sks_material *mat) {
  for (int t = 0; t < SKS_TEXTURE_SLOT_COUNT; ++t) {
    const sks_texture_ref *ref = &mat->textures[t];
    if (!slot_written(m, mat, t)) continue;
    if (!part->uvs || (ref->tex_coord == 1 && !part->uvs1)) return 0;
  }
  return 1;
}

/* Adds a bufferView (no target) over bytes appended to BIN; returns its index. */
static long add_view(gw_state *s, const void *data, size_t bytes) {
  size_t off = bin_append(s, data, bytes);
  cJSON *view = cJSON_CreateObject();
  add_num_i(view, "buffer", 0);
  add_num_i(view, "byteOffset", (long)off);
  add_num_i(view, "byteLength", (long)bytes);
  cJSON_AddItemToArray(s->views, view);
  return (long)s->n_views++;
}

/* v clamped to [0, 1]; not a number gives fallback. */
static float clamp01(float v, float fallback) {
  if (!(v == v)) return fallback;
  return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
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
  add_num_i(acc, "bufferView", (long)s->n_views++);
  add_num_i(acc, "componentType", component_type);
  add_num_i(acc, "count", (long)count);
  cJSON_AddStringToObject(acc, "type", type);
  if (min && max) {
    cJSON_AddItemToObject(acc, "min", num_array_f(min, (size_t)ncomp));
    cJSON_AddItemToObject(acc, "max", num_array_f(max, (size_t)ncomp));
  }
  cJSON_AddItemToArray(s->accessors, acc);
  return (int)s->n_accessors++;
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

/* Lowest common ancestor of a skin's joints (or -1), in O(joints + nodes):
 * count the skin's joints under every node (children after parents, so a
 * reverse pass accumulates); the ancestors holding all of them form a chain
 * from a root, and its deepest node (largest index) is the LCA. */
static int32_t skin_common_root(const sks_skeleton *sk, const sks_skin *skin, size_t *scratch) {
  size_t n = sk->joint_count, total = 0;
  if (!skin->joint_count) return -1;
  memset(scratch, 0, n * sizeof *scratch);
  for (size_t i = 0; i < skin->joint_count; ++i)
    if (scratch[skin->joints[i]]++ == 0) ++total;
  for (size_t i = 0; i < n; ++i) scratch[i] = scratch[i] ? 1 : 0;
  for (size_t i = n; i-- > 0;)
    if (sk->parents[i] >= 0) scratch[sk->parents[i]] += scratch[i];
  int32_t lca = -1;
  for (size_t i = 0; i < n; ++i)
    if (scratch[i] == total) lca = (int32_t)i;
  return lca;
}

/* The extensions the materials use (extensionsUsed), one bit each. */
enum {
  USED_EMISSIVE_STRENGTH = 1u << 0, USED_TEXTURE_TRANSFORM = 1u << 1, USED_CLEARCOAT = 1u << 2,
  USED_SHEEN = 1u << 3, USED_TRANSMISSION = 1u << 4, USED_VOLUME = 1u << 5, USED_IOR = 1u << 6
};
static const char *const k_used_names[] = {
  "KHR_materials_emissive_strength", "KHR_texture_transform", "KHR_materials_clearcoat",
  "KHR_materials_sheen", "KHR_materials_transmission", "KHR_materials_volume", "KHR_materials_ior"};

/* KHR_texture_transform on a textureInfo (each property only when it is
 * not the extension's default). */
static void add_texture_transform(cJSON *info, const sks_texture_ref *ref) {
  cJSON *ext = cJSON_GetObjectItemCaseSensitive(info, "extensions");
  if (!ext) ext = cJSON_AddObjectToObject(info, "extensions");
  cJSON *tt = cJSON_AddObjectToObject(ext, "KHR_texture_transform");
  if (ref->offset[0] != 0.0f || ref->offset[1] != 0.0f) cJSON_AddItemToObject(tt, "offset", num_array_f(ref->offset, 2));
  if (ref->rotation != 0.0f) cJSON_AddItemToObject(tt, "rotation", num_f(ref->rotation));
  if (ref->scale[0] != 1.0f || ref->scale[1] != 1.0f) cJSON_AddItemToObject(tt, "scale", num_array_f(ref->scale, 2));
}

/* The material's "extensions" object, created on first use. */
static cJSON *material_ext(cJSON *mj, const char *name) {
  cJSON *ext = cJSON_GetObjectItemCaseSensitive(mj, "extensions");
  if (!ext) ext = cJSON_AddObjectToObject(mj, "extensions");
  return cJSON_AddObjectToObject(ext, name);
}

/* KHR_materials_clearcoat / sheen / transmission / volume / ior from the
 * material's extension bits (a factor at the extension's default is left
 * to it); returns the USED_* bits written. */
/* The extension bit a texture slot belongs to (0: glTF's core material)
 * and its textureInfo's name inside that extension. */
static uint32_t slot_extension(int slot, const char **key) {
  static const struct { uint32_t bit; const char *key; } k[SKS_TEXTURE_SLOT_COUNT] = {
      [SKS_TEXTURE_CLEARCOAT] = {SKS_MATERIAL_CLEARCOAT, "clearcoatTexture"},
      [SKS_TEXTURE_CLEARCOAT_ROUGHNESS] = {SKS_MATERIAL_CLEARCOAT, "clearcoatRoughnessTexture"},
      [SKS_TEXTURE_CLEARCOAT_NORMAL] = {SKS_MATERIAL_CLEARCOAT, "clearcoatNormalTexture"},
      [SKS_TEXTURE_SHEEN_COLOR] = {SKS_MATERIAL_SHEEN, "sheenColorTexture"},
      [SKS_TEXTURE_SHEEN_ROUGHNESS] = {SKS_MATERIAL_SHEEN, "sheenRoughnessTexture"},
      [SKS_TEXTURE_TRANSMISSION] = {SKS_MATERIAL_TRANSMISSION, "transmissionTexture"},
      [SKS_TEXTURE_THICKNESS] = {SKS_MATERIAL_VOLUME, "thicknessTexture"}};
  if (key) *key = k[slot].key;
  return k[slot].bit;
}

/* The extensions' textureInfos of slots first..last (tex_index >= 0) into e. */
static void add_ext_textures(cJSON *e, const long *tex_index, cJSON **info, int first, int last) {
  for (int t = first; t <= last; ++t) {
    const char *key;
    (void)slot_extension(t, &key);
    if (tex_index[t] >= 0) add_num_i(info[t] = cJSON_AddObjectToObject(e, key), "index", tex_index[t]);
  }
}

/* The KHR_materials_* factors of the material's extension bits, with their
 * textures (tex_index[slot] >= 0; info[slot] receives each textureInfo). */
static unsigned add_material_extensions(cJSON *mj, const sks_material *mat, const long *tex_index, cJSON **info) {
  unsigned used = 0;
  if (mat->extensions & SKS_MATERIAL_CLEARCOAT) {
    cJSON *e = material_ext(mj, "KHR_materials_clearcoat");
    cJSON_AddItemToObject(e, "clearcoatFactor", num_f(mat->clearcoat));
    if (mat->clearcoat_roughness != 0.0f) cJSON_AddItemToObject(e, "clearcoatRoughnessFactor", num_f(mat->clearcoat_roughness));
    add_ext_textures(e, tex_index, info, SKS_TEXTURE_CLEARCOAT, SKS_TEXTURE_CLEARCOAT_NORMAL);
    if (info[SKS_TEXTURE_CLEARCOAT_NORMAL] && isfinite(mat->clearcoat_normal_scale) &&
        mat->clearcoat_normal_scale != 1.0f)
      cJSON_AddItemToObject(info[SKS_TEXTURE_CLEARCOAT_NORMAL], "scale", num_f(mat->clearcoat_normal_scale));
    used |= USED_CLEARCOAT;
  }
  if (mat->extensions & SKS_MATERIAL_SHEEN) {
    cJSON *e = material_ext(mj, "KHR_materials_sheen");
    if (mat->sheen_color[0] != 0.0f || mat->sheen_color[1] != 0.0f || mat->sheen_color[2] != 0.0f)
      cJSON_AddItemToObject(e, "sheenColorFactor", num_array_f(mat->sheen_color, 3));
    if (mat->sheen_roughness != 0.0f) cJSON_AddItemToObject(e, "sheenRoughnessFactor", num_f(mat->sheen_roughness));
    add_ext_textures(e, tex_index, info, SKS_TEXTURE_SHEEN_COLOR, SKS_TEXTURE_SHEEN_ROUGHNESS);
    used |= USED_SHEEN;
  }
  if (mat->extensions & SKS_MATERIAL_TRANSMISSION) {
    cJSON *e = material_ext(mj, "KHR_materials_transmission");
    cJSON_AddItemToObject(e, "transmissionFactor", num_f(mat->transmission));
    add_ext_textures(e, tex_index, info, SKS_TEXTURE_TRANSMISSION, SKS_TEXTURE_TRANSMISSION);
    used |= USED_TRANSMISSION;
  }
  if (mat->extensions & SKS_MATERIAL_VOLUME) {
    cJSON *e = material_ext(mj, "KHR_materials_volume");
    if (mat->thickness != 0.0f) cJSON_AddItemToObject(e, "thicknessFactor", num_f(mat->thickness));
    add_ext_textures(e, tex_index, info, SKS_TEXTURE_THICKNESS, SKS_TEXTURE_THICKNESS);
    if (mat->attenuation_distance > 0.0f) cJSON_AddItemToObject(e, "attenuationDistance", num_f(mat->attenuation_distance));
    if (mat->attenuation_color[0] != 1.0f || mat->attenuation_color[1] != 1.0f || mat->attenuation_color[2] != 1.0f)
      cJSON_AddItemToObject(e, "attenuationColor", num_array_f(mat->attenuation_color, 3));
    used |= USED_VOLUME;
  }
  if (mat->extensions & SKS_MATERIAL_IOR) {
    cJSON_AddItemToObject(material_ext(mj, "KHR_materials_ior"), "ior", num_f(mat->ior));
    used |= USED_IOR;
  }
  return used;
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
    if (part->uvs1 && !all_finite(part->uvs1, nv * 2, &bad))
      return sks_error_set(s->err, SKS_ERR_INVALID, "%s: part %zu '%s', vertex %zu: UV of set 1 is not finite",
                           file_label(s), p, part_label(m, p), bad / 2);
    if (part->morph_target_count > SKS_MAX_MORPH_TARGETS || (part->morph_target_count && !part->morph_targets))
      return sks_error_set(s->err, SKS_ERR_INVALID, "%s: part %zu '%s': %zu morph targets (at most %d, "
                           "SKS_MAX_MORPH_TARGETS)", file_label(s), p, part_label(m, p),
                           part->morph_target_count, SKS_MAX_MORPH_TARGETS);
    for (size_t t = 0; t < part->morph_target_count; ++t) {
      const sks_morph_target *mt = &part->morph_targets[t];
      const float *d[3] = {mt->position_deltas, mt->normal_deltas, mt->tangent_deltas};
      for (int q = 0; q < 3; ++q)
        if (d[q] && !all_finite(d[q], nv * 3, &bad))
          return sks_error_set(s->err, SKS_ERR_INVALID, "%s: part %zu '%s', morph target %zu, vertex %zu: "
                               "delta is not finite", file_label(s), p, part_label(m, p), t, bad / 3);
      if (!isfinite(mt->default_weight))
        return sks_error_set(s->err, SKS_ERR_INVALID, "%s: part %zu '%s', morph target %zu: default weight is "
                             "not finite", file_label(s), p, part_label(m, p), t);
    }
    for (size_t i = 0; i < part->index_count; ++i)
      if (part->indices[i] >= nv)
        return sks_error_set(s->err, SKS_ERR_INVALID, "%s: part %zu '%s', index %zu: vertex %u out of range (%zu vertices)",
                             file_label(s), p, part_label(m, p), i, part->indices[i], nv);
  }
  for (size_t i = 0; i < m->material_count; ++i)
    for (int t = 0; t < SKS_TEXTURE_SLOT_COUNT; ++t) {
      const sks_texture_ref *ref = &m->materials[i].textures[t];
      /* an image index past the images is no texture (slot_textured), as before */
      if (slot_textured(m, ref) && !sks_texture_ref_valid(ref))
        return sks_error_set(s->err, SKS_ERR_INVALID,
                             "%s: material %zu '%s', texture slot %d: texCoord %d or a sampler setting is out "
                             "of range (UV sets 0 and 1 and glTF's filter / wrap enums only)",
                             file_label(s), i, m->materials[i].name ? m->materials[i].name : "", t,
                             ref->tex_coord);
      if (slot_textured(m, ref) && !sks_texture_transform_valid(ref))
        return sks_error_set(s->err, SKS_ERR_INVALID,
                             "%s: material %zu '%s', texture slot %d: its UV transform is not finite", file_label(s),
                             i, m->materials[i].name ? m->materials[i].name : "", t);
    }
  for (size_t i = 0; i < m->material_count; ++i)
    if (!sks_material_extensions_valid(&m->materials[i]))
      return sks_error_set(s->err, SKS_ERR_INVALID,
                           "%s: material %zu '%s': alpha mode / cutoff or a KHR_materials_* factor is out of range",
                           file_label(s), i, m->materials[i].name ? m->materials[i].name : "");
  for (size_t i = 0; i < m->image_count; ++i)
    if (!sks_image_mime(m->images[i].data, m->images[i].size))
      return sks_error_set(s->err, SKS_ERR_INVALID, "%s: image %zu '%s': its bytes are not a PNG or JPEG file",
                           file_label(s), i, m->images[i].name ? m->images[i].name : "");
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
    for (size_t t = 0; t < clip->morph_track_count; ++t) {
      const sks_morph_track *tr = &clip->morph_tracks[t];
      if (tr->key_count == 0 || tr->weight_count == 0) continue;
      if (tr->node < 0 || (size_t)tr->node >= sk->joint_count)
        return sks_error_set(s->err, SKS_ERR_INVALID, "%s: clip '%s', morph track %zu: node %d is not in the skeleton",
                             file_label(s), clip->name ? clip->name : "", t, tr->node);
      for (size_t i = 0; i < tr->key_count; ++i)
        if (!isfinite(tr->times[i]) || tr->times[i] < 0.0f || (i && !(tr->times[i] > tr->times[i - 1])))
          return sks_error_set(s->err, SKS_ERR_INVALID,
                               "%s: clip '%s', morph track %zu (node %d), key %zu: time %g is negative, not finite "
                               "or not after the previous key",
                               file_label(s), clip->name ? clip->name : "", t, tr->node, i, (double)tr->times[i]);
      if (!all_finite(tr->values, sks_morph_track_value_count(tr), &bad))
        return sks_error_set(s->err, SKS_ERR_INVALID, "%s: clip '%s', morph track %zu (node %d): weight %zu is not finite",
                             file_label(s), clip->name ? clip->name : "", t, tr->node, bad);
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

enum { W_POS = 1, W_NRM = 2, W_UV = 4, W_INFL = 8, W_IDX = 16, W_MAT = 32, W_ALL = 63 };

/* Writes the `what` attributes (W_*) of part p into prim / its attributes. */
static sks_result write_part_data(gw_state *s, size_t p, int sets, const sks_gltf_write_options *o,
                                  cJSON *prim, cJSON *attr, int what) {
  const sks_model *m = s->model;
  const sks_mesh_part *part = &m->parts[p];
  size_t nv = part->vertex_count;
  if (what & W_POS)
  add_num_i(attr, "POSITION", add_float_accessor(s, part->positions, nv, 3, "VEC3", GL_ARRAY_BUFFER, 1));

  int want_normals = !(o && o->embed_normals < 0);
  if ((what & W_NRM) && part->normals && want_normals) {
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
    if (part->tangents) { /* with the normals only: glTF's TANGENT needs NORMAL */
      float *t = malloc(nv * 4 * sizeof(float));
      if (!t) { s->oom = 1; return SKS_ERR_OUT_OF_MEMORY; }
      for (size_t v = 0; v < nv; ++v) {
        const float *q = &part->tangents[4 * v];
        sks_vec3 x = sks_v3(q[0], q[1], q[2]);
        float l = sks_v3_len(x);
        if (!isfinite(l) || l < 1e-12f) x = sks_v3(1, 0, 0); /* degenerate: any unit vector */
        else if (fabsf(l - 1.0f) > 1e-6f) x = sks_v3_scale(x, 1.0f / l);
        t[4 * v] = x.x; t[4 * v + 1] = x.y; t[4 * v + 2] = x.z;
        t[4 * v + 3] = q[3] < 0 ? -1.0f : 1.0f;
      }
      add_num_i(attr, "TANGENT", add_float_accessor(s, t, nv, 4, "VEC4", GL_ARRAY_BUFFER, 0));
      free(t);
    }
  }
  if ((what & W_UV) && part->uvs)
    add_num_i(attr, "TEXCOORD_0", add_float_accessor(s, part->uvs, nv, 2, "VEC2", GL_ARRAY_BUFFER, 0));
  if ((what & W_INFL) && sets > 0) {
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
  if ((what & W_IDX) && part->index_count) {
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
  if ((what & W_MAT) && part->material >= 0 && (size_t)part->material < m->material_count) {
    int32_t mi = part->material;
    if (s->plain_material && s->plain_material[mi] >= 0 && !part_carries(m, part, &m->materials[mi]))
      mi = s->plain_material[mi];
    add_num_i(prim, "material", mi);
  }
  return SKS_OK;
}

static sks_result write_primitive(gw_state *s, size_t p, int sets, const sks_gltf_write_options *o,
                                  cJSON *prims) {
  cJSON *prim = cJSON_CreateObject();
  cJSON *attr = cJSON_CreateObject();
  cJSON_AddItemToObject(prim, "attributes", attr);
  cJSON_AddItemToArray(prims, prim);
  sks_result r = write_part_data(s, p, sets, o, prim, attr, W_ALL);
  const sks_mesh_part *part = &s->model->parts[p];
  size_t nv = part->vertex_count;
  if (r == SKS_OK && part->uvs && part->uvs1)
    add_num_i(attr, "TEXCOORD_1", add_float_accessor(s, part->uvs1, nv, 2, "VEC2", GL_ARRAY_BUFFER, 0));
  /* Morph targets: NORMAL / TANGENT deltas only where the primitive has the
   * base attribute (write_part_data writes TANGENT with the normals only). */
  int normals = part->normals && !(o && o->embed_normals < 0);
  if (r == SKS_OK && part->morph_target_count) {
    cJSON *targets = cJSON_AddArrayToObject(prim, "targets");
    float *zero = NULL;
    for (size_t t = 0; t < part->morph_target_count; ++t) {
      const sks_morph_target *mt = &part->morph_targets[t];
      cJSON *tj = cJSON_CreateObject();
      cJSON_AddItemToArray(targets, tj);
      const float *pd = mt->position_deltas;
      if (!pd && !(normals && mt->normal_deltas)) { /* a target needs an attribute: a zero POSITION delta */
        if (!zero && !(zero = calloc(nv * 3, sizeof(float)))) { s->oom = 1; return SKS_ERR_OUT_OF_MEMORY; }
        pd = zero;
      }
      if (pd) add_num_i(tj, "POSITION", add_float_accessor(s, pd, nv, 3, "VEC3", GL_ARRAY_BUFFER, 1));
      if (normals && mt->normal_deltas)
        add_num_i(tj, "NORMAL", add_float_accessor(s, mt->normal_deltas, nv, 3, "VEC3", GL_ARRAY_BUFFER, 0));
      if (normals && part->tangents && mt->tangent_deltas)
        add_num_i(tj, "TANGENT", add_float_accessor(s, mt->tangent_deltas, nv, 3, "VEC3", GL_ARRAY_BUFFER, 0));
    }
    free(zero);
  }
  /* a part without triangles (a file's points, lines or strips: the reader
   * keeps their vertices only) is points; "mode" 4 without indices would
   * read back as triangles of its vertices in order */
  add_num_i(prim, "mode", part->index_count || !part->vertex_count ? 4 : 0);
  return r;
}

static int same_times(const sks_track *a, const sks_track *b) {
  return a->key_count == b->key_count && memcmp(a->times, b->times, a->key_count * sizeof(float)) == 0;
}

/* 1 when every key of the track holds the joint's rest value (a channel that
 * changes nothing: not written for nodes no skin binds). */
static int track_at_rest(const sks_track *tr, const sks_transform *rest) {
  uint32_t comps = sks_track_components(tr->path);
  const float *r = tr->path == SKS_PATH_TRANSLATION ? &rest->translation.x
                   : tr->path == SKS_PATH_ROTATION  ? &rest->rotation.x
                                                    : &rest->scale.x;
  int cubic = tr->interpolation == SKS_INTERP_CUBICSPLINE;
  for (size_t k = 0; k < tr->key_count; ++k) {
    for (int e = 0; e < (cubic ? 3 : 1); ++e) {
      const float *v = tr->values + ((size_t)k * (cubic ? 3u : 1u) + (size_t)e) * comps;
      int value = !cubic || e == 1;
      double sign = 1.0;
      if (value && tr->path == SKS_PATH_ROTATION) {
        double d = 0;
        for (uint32_t c = 0; c < 4; ++c) d += (double)v[c] * r[c];
        if (d < 0) sign = -1.0;
      }
      for (uint32_t c = 0; c < comps; ++c) {
        double want = value ? sign * r[c] : 0.0;
        if (fabs((double)v[c] - want) > 1e-6 * (1.0 + fabs(want))) return 0;
      }
    }
  }
  return 1;
}

static uint64_t times_hash(const sks_track *t) {
  uint64_t h = 1469598103934665603ull;
  const uint8_t *p = (const uint8_t *)t->times;
  for (size_t i = 0; i < t->key_count * sizeof(float); ++i) { h ^= p[i]; h *= 1099511628211ull; }
  return h ^ t->key_count;
}

/* One glTF animation for clip c (NULL only when it has no track with a key:
 * glTF needs a channel; the reader never returns such a clip).
 * keyed[3 j + path]: some clip of the model moves (joint j, path): such a
 * channel is written in every clip, as a one-key channel at the rest value
 * where the clip has no track (or a track at rest). Players that keep an
 * unkeyed property at its last value when the clip changes (Blender: its
 * actions; an animated non-joint skeleton root, Testwuson's "Root", becomes
 * the armature object) then play every clip as it is sampled here, where an
 * unkeyed property is at rest. Other channels at rest are not written. */
/* The parts hosted by track tr's node that have morph targets: one
 * "weights" channel per glTF node holding them, with as many weights per key
 * as that mesh has targets (a track with fewer is padded with the defaults,
 * one with more cut). A track of 0 weights is written as one key at the
 * defaults at time 0 (a clip that leaves the weights at their defaults).
 * Returns the new sampler count. */
static size_t morph_channels(gw_state *s, const sks_morph_track *tr, cJSON *channels, cJSON *samplers,
                             size_t n_samplers) {
  const sks_model *m = s->model;
  int input = -1;
  for (size_t p = 0; p < m->part_count && !s->oom; ++p) {
    const sks_mesh_part *part = &m->parts[p];
    if (part->node != tr->node || !part->morph_target_count) continue;
    long host = s->part_host ? s->part_host[p] : (s->joint_node ? s->joint_node[part->node] : part->node);
    int dup = 0;
    for (size_t q = 0; q < p && !dup; ++q) {
      const sks_mesh_part *o = &m->parts[q];
      long oh = s->part_host ? s->part_host[q] : (s->joint_node ? s->joint_node[o->node] : o->node);
      dup = o->node == tr->node && o->morph_target_count && oh == host;
    }
    if (dup) continue;
    const size_t w = part->morph_target_count;
    const int at_rest = tr->weight_count == 0 || tr->key_count == 0;
    const size_t keys = at_rest ? 1 : tr->key_count;
    const size_t per_key = !at_rest && tr->interpolation == SKS_INTERP_CUBICSPLINE ? 3 : 1;
    if (keys * per_key > SIZE_MAX / sizeof(float) / w) { s->oom = 1; break; }
    float *vals = malloc(keys * per_key * w * sizeof(float));
    if (!vals) { s->oom = 1; break; }
    for (size_t e = 0; e < keys * per_key; ++e)
      for (size_t i = 0; i < w; ++i) {
        int tangent = per_key == 3 && e % 3 != 1;
        float def = tangent ? 0.0f : part->morph_targets[i].default_weight;
        vals[e * w + i] = !at_rest && i < tr->weight_count ? tr->values[e * tr->weight_count + i] : def;
      }
    if (input < 0) {
      const float zero = 0.0f;
      input = add_float_accessor(s, at_rest ? &zero : tr->times, keys, 1, "SCALAR", 0, 1);
    }
    int output = add_float_accessor(s, vals, keys * per_key * w, 1, "SCALAR", 0, 0);
    free(vals);
    cJSON *smp = cJSON_CreateObject();
    add_num_i(smp, "input", input);
    add_num_i(smp, "output", output);
    cJSON_AddStringToObject(smp, "interpolation",
                            per_key == 3 ? "CUBICSPLINE"
                            : !at_rest && tr->interpolation == SKS_INTERP_STEP ? "STEP" : "LINEAR");
    cJSON_AddItemToArray(samplers, smp);
    cJSON *ch = cJSON_CreateObject();
    add_num_i(ch, "sampler", (long)n_samplers++);
    cJSON *target = cJSON_CreateObject();
    add_num_i(target, "node", host);
    cJSON_AddStringToObject(target, "path", "weights");
    cJSON_AddItemToObject(ch, "target", target);
    cJSON_AddItemToArray(channels, ch);
  }
  return n_samplers;
}

static cJSON *animation_json(gw_state *s, const sks_clip *clip, const uint8_t *keyed, const uint8_t *morph_keyed) {
  const sks_model *m = s->model;
  size_t nt = clip->track_count, jc = m->skeleton.joint_count;
  cJSON *channels = cJSON_CreateArray(), *samplers = cJSON_CreateArray();
  int *input_of = malloc((nt ? nt : 1) * sizeof(int));
  uint8_t *seen = calloc(jc ? jc : 1, 3);
  size_t cap = 16;
  while (cap < 2 * nt) cap *= 2;
  size_t *table = malloc(cap * sizeof *table); /* track index + 1, 0 = empty */
  if (!channels || !samplers || !input_of || !seen || !table) {
    cJSON_Delete(channels); cJSON_Delete(samplers);
    free(input_of); free(seen); free(table);
    s->oom = 1;
    return NULL;
  }
  memset(table, 0, cap * sizeof *table);
  /* When no clip moves anything (keyed all 0), the clip's first keyed track
   * is written as it is: a clip with a key is never left out. */
  size_t force = SIZE_MAX;
  int any_keyed = !keyed;
  for (size_t j = 0; !any_keyed && j < 3 * jc; ++j) any_keyed = keyed[j] != 0;
  for (size_t t = 0; !any_keyed && t < nt && force == SIZE_MAX; ++t)
    if (clip->tracks[t].key_count) force = t;
  size_t n_samplers = 0;
  for (size_t t = 0; t < nt && !s->oom; ++t) {
    const sks_track *tr = &clip->tracks[t];
    input_of[t] = -1;
    if (tr->key_count == 0) continue;
    /* One channel per (node, path): a duplicate is a validator error, keep the first. */
    uint8_t *flag = &seen[(size_t)tr->joint * 3u + (size_t)tr->path];
    if (*flag) continue;
    *flag = 1;
    uint8_t kv = keyed && t != force ? keyed[(size_t)tr->joint * 3u + (size_t)tr->path] : 1;
    if (!kv) continue;
    if (kv == 2 && track_at_rest(tr, &m->skeleton.rest[tr->joint])) {
      *flag = 2; /* written below as one key at rest */
      continue;
    }
    int input = -1;
    size_t slot = (size_t)(times_hash(tr) & (cap - 1));
    while (table[slot]) {
      size_t u = table[slot] - 1;
      if (same_times(&clip->tracks[u], tr)) { input = input_of[u]; break; }
      slot = (slot + 1) & (cap - 1);
    }
    if (input < 0) {
      input = add_float_accessor(s, tr->times, tr->key_count, 1, "SCALAR", 0, 1);
      table[slot] = t + 1;
    }
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
    add_num_i(ch, "sampler", (long)n_samplers++);
    cJSON *target = cJSON_CreateObject();
    add_num_i(target, "node", s->joint_node ? s->joint_node[tr->joint] : tr->joint);
    cJSON_AddStringToObject(target, "path",
                            tr->path == SKS_PATH_TRANSLATION ? "translation"
                            : tr->path == SKS_PATH_ROTATION  ? "rotation"
                                                             : "scale");
    cJSON_AddItemToObject(ch, "target", target);
    cJSON_AddItemToArray(channels, ch);
  }
  /* morph weights: one "weights" channel per mesh node a track drives */
  for (size_t t = 0; t < clip->morph_track_count && !s->oom; ++t)
    n_samplers = morph_channels(s, &clip->morph_tracks[t], channels, samplers, n_samplers);
  /* nodes whose weights other clips animate: one key at the default weights */
  for (size_t nd = 0; morph_keyed && nd < jc && !s->oom; ++nd) {
    if (!morph_keyed[nd]) continue;
    int has = 0;
    for (size_t t = 0; t < clip->morph_track_count; ++t)
      has |= clip->morph_tracks[t].node == (int32_t)nd && clip->morph_tracks[t].key_count > 0;
    if (has) continue;
    sks_morph_track rest = {(int32_t)nd, SKS_INTERP_LINEAR, 0, 1, NULL, NULL};
    n_samplers = morph_channels(s, &rest, channels, samplers, n_samplers);
  }
  /* channels other clips key: one key at the rest value */
  int rest_input = -1;
  for (size_t j = 0; keyed && j < jc && !s->oom; ++j)
    for (size_t path = 0; path < 3; ++path) {
      if (!keyed[j * 3 + path] || seen[j * 3 + path] == 1) continue;
      const sks_transform *r = &m->skeleton.rest[j];
      float v[4];
      if (path == SKS_PATH_TRANSLATION) memcpy(v, &r->translation.x, 3 * sizeof(float));
      else if (path == SKS_PATH_SCALE) memcpy(v, &r->scale.x, 3 * sizeof(float));
      else {
        sks_quat q = r->rotation;
        if (fabsf(sks_q_dot(q, q) - 1.0f) > 1e-6f) q = sks_q_normalize(q);
        memcpy(v, &q.x, 4 * sizeof(float));
      }
      if (rest_input < 0) {
        const float zero = 0.0f;
        rest_input = add_float_accessor(s, &zero, 1, 1, "SCALAR", 0, 1);
      }
      int comps = path == SKS_PATH_ROTATION ? 4 : 3;
      int output = add_float_accessor(s, v, 1, comps, comps == 4 ? "VEC4" : "VEC3", 0, 0);
      cJSON *smp = cJSON_CreateObject();
      add_num_i(smp, "input", rest_input);
      add_num_i(smp, "output", output);
      cJSON_AddStringToObject(smp, "interpolation", "LINEAR");
      cJSON_AddItemToArray(samplers, smp);
      cJSON *ch = cJSON_CreateObject();
      add_num_i(ch, "sampler", (long)n_samplers++);
      cJSON *target = cJSON_CreateObject();
      add_num_i(target, "node", s->joint_node ? s->joint_node[j] : (long)j);
      cJSON_AddStringToObject(target, "path",
                              path == SKS_PATH_TRANSLATION ? "translation" : path == SKS_PATH_ROTATION ? "rotation" : "scale");
      cJSON_AddItemToObject(ch, "target", target);
      cJSON_AddItemToArray(channels, ch);
    }
  free(input_of); free(seen); free(table);
  if (n_samplers == 0 || s->oom) { /* glTF requires at least one channel */
    cJSON_Delete(channels); cJSON_Delete(samplers);
    return NULL;
  }
  cJSON *a = cJSON_CreateObject();
  if (clip->name) cJSON_AddStringToObject(a, "name", clip->name);
  cJSON_AddItemToObject(a, "channels", channels);
  cJSON_AddItemToObject(a, "samplers", samplers);
  return a;
}

/* keyed[3 j + path] != 0 when some clip has a track on (joint j, path) that
 * a player must apply: 1 = the joint is bound by a skin (its tracks are
 * written as they are), 2 = an unbound node whose track leaves the rest
 * value in some clip (caller frees; see animation_json). */
static uint8_t *keyed_channels(const sks_model *m) {
  size_t jc = m->skeleton.joint_count;
  uint8_t *bound = calloc(jc ? jc : 1, 1), *keyed = calloc(jc ? jc : 1, 3);
  if (!bound || !keyed) { free(bound); free(keyed); return NULL; }
  for (size_t k = 0; k < m->skin_count; ++k)
    for (size_t j = 0; j < m->skins[k].joint_count; ++j) bound[m->skins[k].joints[j]] = 1;
  for (size_t c = 0; c < m->clip_count; ++c)
    for (size_t t = 0; t < m->clips[c].track_count; ++t) {
      const sks_track *tr = &m->clips[c].tracks[t];
      if (!tr->key_count || tr->joint < 0 || (size_t)tr->joint >= jc || (unsigned)tr->path > 2u) continue;
      uint8_t *k = &keyed[(size_t)tr->joint * 3u + (size_t)tr->path];
      if (bound[tr->joint]) *k = 1;
      else if (!*k && !track_at_rest(tr, &m->skeleton.rest[tr->joint])) *k = 2;
    }
  free(bound);
  return keyed;
}

/* morph_keyed[j] != 0 when some clip has a morph track with keys on node j
 * (caller frees; NULL when none or out of memory: *oom says which). */
static uint8_t *morph_keyed_nodes(const sks_model *m, int *oom) {
  size_t jc = m->skeleton.joint_count, any = 0;
  *oom = 0;
  for (size_t c = 0; c < m->clip_count; ++c) any += m->clips[c].morph_track_count;
  if (!any || !jc) return NULL;
  uint8_t *k = calloc(jc, 1);
  if (!k) { *oom = 1; return NULL; }
  for (size_t c = 0; c < m->clip_count; ++c)
    for (size_t t = 0; t < m->clips[c].morph_track_count; ++t) {
      const sks_morph_track *tr = &m->clips[c].morph_tracks[t];
      if (tr->key_count && tr->weight_count && tr->node >= 0 && (size_t)tr->node < jc) k[tr->node] = 1;
    }
  return k;
}

static sks_result write_animations(gw_state *s, cJSON *root) {
  const sks_model *m = s->model;
  cJSON *anims = NULL;
  uint8_t *bound = keyed_channels(m);
  int moom;
  uint8_t *mk = morph_keyed_nodes(m, &moom);
  if (!bound || moom) { free(bound); s->oom = 1; return SKS_ERR_OUT_OF_MEMORY; }
  for (size_t c = 0; c < m->clip_count && !s->oom; ++c) {
    cJSON *a = animation_json(s, &m->clips[c], bound, mk);
    if (!a) continue;
    if (!anims) anims = cJSON_AddArrayToObject(root, "animations");
    cJSON_AddItemToArray(anims, a);
  }
  free(bound);
  free(mk);
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
    /* glTF: every primitive of a mesh has the same number of morph targets */
    while (q < m->part_count && m->parts[q].node == a->node && m->parts[q].skin == a->skin &&
           m->parts[q].morph_target_count == a->morph_target_count)
      ++q;
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
  if (m->part_count && !(s->part_host = malloc(m->part_count * sizeof *s->part_host))) {
    free(groups); free(hosting);
    return sks_error_set(s->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", file_label(s));
  }
  for (size_t gi = 0; gi < ng; ++gi)
    for (size_t p = groups[gi].first; p < groups[gi].first + groups[gi].count; ++p) s->part_host[p] = groups[gi].host;

  /* Nodes: joints, then added mesh hosts. */
  cJSON *nodes = cJSON_AddArrayToObject(root, "nodes");
  size_t n_nodes = (size_t)next_new;
  cJSON **nodev = malloc((n_nodes ? n_nodes : 1) * sizeof *nodev);
  if (!nodev) {
    free(groups); free(hosting);
    return sks_error_set(s->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", file_label(s));
  }
  for (size_t i = 0; i < jc; ++i) cJSON_AddItemToArray(nodes, nodev[i] = node_json(sk, i));
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
    nodev[groups[gi].host] = n;
  }
  /* children */
  for (size_t i = 0; i < jc; ++i) {
    if (sk->parents[i] < 0) continue;
    cJSON *parent = nodev[sk->parents[i]];
    cJSON *ch = cJSON_GetObjectItem(parent, "children");
    if (!ch) ch = cJSON_AddArrayToObject(parent, "children");
    cJSON_AddItemToArray(ch, num_i((long)i));
  }
  for (size_t gi = 0; gi < ng; ++gi) {
    const gw_group *g = &groups[gi];
    const sks_mesh_part *a = &m->parts[g->first];
    if (!g->new_node || a->skin >= 0 || a->node < 0 || (size_t)a->node >= jc) continue;
    /* Rigid part whose node hosts another mesh: an identity child follows it. */
    cJSON *parent = nodev[a->node];
    cJSON *ch = cJSON_GetObjectItem(parent, "children");
    if (!ch) ch = cJSON_AddArrayToObject(parent, "children");
    cJSON_AddItemToArray(ch, num_i(g->host));
  }

  /* A textured material used by a part without UVs gets an untextured twin
   * (after the materials) for those parts: the validator rejects a texture
   * on a primitive without TEXCOORD_0. */
  int32_t *plain = m->material_count ? malloc(m->material_count * sizeof *plain) : NULL;
  size_t n_plain = 0;
  if (m->material_count && !plain) {
    free(groups); free(hosting); free(nodev);
    return sks_error_set(s->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", file_label(s));
  }
  for (size_t i = 0; i < m->material_count; ++i) plain[i] = -1;
  for (size_t p = 0; p < m->part_count; ++p) {
    int32_t mi = m->parts[p].material;
    if (mi < 0 || (size_t)mi >= m->material_count || plain[mi] >= 0 || !material_textured(m, &m->materials[mi]) ||
        part_carries(m, &m->parts[p], &m->materials[mi]))
      continue;
    plain[mi] = (int32_t)(m->material_count + n_plain++);
  }
  s->plain_material = plain;

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
    const sks_mesh_part *first = &m->parts[g->first];
    if (first->morph_target_count) { /* the first primitive's defaults and names stand for the mesh */
      cJSON *weights = cJSON_AddArrayToObject(mesh, "weights");
      cJSON *names = cJSON_CreateArray();
      for (size_t t = 0; t < first->morph_target_count; ++t) {
        const sks_morph_target *mt = &first->morph_targets[t];
        cJSON_AddItemToArray(weights, num_f(mt->default_weight));
        char fallback[32];
        snprintf(fallback, sizeof fallback, "target_%zu", t);
        cJSON_AddItemToArray(names, cJSON_CreateString(mt->name && *mt->name ? mt->name : fallback));
      }
      cJSON_AddItemToObject(cJSON_AddObjectToObject(mesh, "extras"), "targetNames", names);
    }
    cJSON *host = nodev[g->host];
    add_num_i(host, "mesh", (long)gi);
    if (m->parts[g->first].skin >= 0) add_num_i(host, "skin", m->parts[g->first].skin);
  }
  free(nodev);
  if (r != SKS_OK || s->oom) {
    free(groups); free(hosting); free(plain);
    s->plain_material = NULL;
    return r != SKS_OK ? r : sks_error_set(s->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", file_label(s));
  }

  /* Scene: every root (joints and added skinned-mesh hosts). */
  cJSON *roots = cJSON_CreateArray();
  size_t n_roots = 0;
  for (size_t i = 0; i < jc; ++i)
    if (sk->parents[i] < 0) { cJSON_AddItemToArray(roots, num_i((long)i)); ++n_roots; }
  for (size_t gi = 0; gi < ng; ++gi) {
    const gw_group *g = &groups[gi];
    const sks_mesh_part *a = &m->parts[g->first];
    int attached = a->skin < 0 && a->node >= 0 && (size_t)a->node < jc;
    if (g->new_node && !attached) { cJSON_AddItemToArray(roots, num_i(g->host)); ++n_roots; }
  }
  free(groups); free(hosting);
  if (n_roots > 0) {
    add_num_i(root, "scene", 0);
    cJSON *scenes = cJSON_AddArrayToObject(root, "scenes");
    cJSON *scene = cJSON_CreateObject();
    cJSON_AddItemToObject(scene, "nodes", roots);
    cJSON_AddItemToArray(scenes, scene);
  } else {
    cJSON_Delete(roots);
  }

  /* Skins */
  size_t *scratch = m->skin_count ? malloc((jc ? jc : 1) * sizeof *scratch) : NULL;
  if (m->skin_count && !scratch) {
    free(plain);
    s->plain_material = NULL;
    return sks_error_set(s->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", file_label(s));
  }
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
        if (!ibm) {
          free(scratch); free(plain);
          s->plain_material = NULL;
          return sks_error_set(s->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", file_label(s));
        }
        memcpy(ibm, skin->inverse_bind, skin->joint_count * sizeof *ibm);
        for (size_t j = 0; j < skin->joint_count; ++j) { /* affine: validator ACCESSOR_INVALID_IBM */
          ibm[j].m[3] = ibm[j].m[7] = ibm[j].m[11] = 0.0f;
          ibm[j].m[15] = 1.0f;
        }
        add_num_i(sj, "inverseBindMatrices",
                  add_float_accessor(s, ibm[0].m, skin->joint_count, 16, "MAT4", 0, 0));
        free(ibm);
      }
      /* "skeleton" only when the common root is one of the skin's joints:
       * importers (Blender) place the armature at that node, so a non-joint
       * ancestor with a transform would put the rest pose elsewhere. */
      int32_t common = skin_common_root(sk, skin, scratch);
      int is_joint = 0;
      for (size_t j = 0; common >= 0 && j < skin->joint_count && !is_joint; ++j)
        is_joint = skin->joints[j] == common;
      if (is_joint) add_num_i(sj, "skeleton", common);
      cJSON_AddItemToArray(skins, sj);
    }
  }
  free(scratch);

  /* Materials, with their images in the BIN chunk: one glTF texture per
   * (image, sampler settings) used, one sampler per distinct settings. */
  if (m->material_count) {
    cJSON *mats = cJSON_AddArrayToObject(root, "materials");
    size_t cap = m->material_count * SKS_TEXTURE_SLOT_COUNT;
    sks_texture_ref *tex = malloc(cap * sizeof *tex), *smp = malloc(cap * sizeof *smp);
    size_t *tex_smp = malloc(cap * sizeof *tex_smp);
    size_t n_tex = 0, n_smp = 0;
    unsigned used = 0; /* USED_* */
    if (!tex || !smp || !tex_smp) {
      free(tex); free(smp); free(tex_smp); free(plain);
      s->plain_material = NULL;
      return sks_error_set(s->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", file_label(s));
    }
    for (size_t k = 0; k < m->material_count + n_plain; ++k) {
      size_t i = k;
      if (k >= m->material_count) /* the twin of the material whose plain[] is k */
        for (i = 0; i < m->material_count && plain[i] != (int32_t)k; ++i) {}
      const sks_material *mat = &m->materials[i];
      cJSON *mj = cJSON_CreateObject();
      if (mat->name) {
        char nm[300];
        snprintf(nm, sizeof nm, "%s%s", mat->name, k >= m->material_count ? "_untextured" : "");
        cJSON_AddStringToObject(mj, "name", nm);
      }
      float c[4];
      for (int e = 0; e < 4; ++e) c[e] = clamp01(mat->base_color[e], 0.0f);
      cJSON *pbr = cJSON_AddObjectToObject(mj, "pbrMetallicRoughness");
      cJSON_AddItemToObject(pbr, "baseColorFactor", num_array_f(c, 4));
      long tex_index[SKS_TEXTURE_SLOT_COUNT];
      for (int t = 0; t < SKS_TEXTURE_SLOT_COUNT; ++t) {
        const sks_texture_ref *ref = &mat->textures[t];
        tex_index[t] = -1;
        /* an extension's texture only with its extension (else no texture would use it) */
        if (k >= m->material_count || !slot_written(m, mat, t)) continue;
        size_t ti, si;
        for (si = 0; si < n_smp; ++si)
          if (smp[si].mag_filter == ref->mag_filter && smp[si].min_filter == ref->min_filter &&
              smp[si].wrap_s == ref->wrap_s && smp[si].wrap_t == ref->wrap_t)
            break;
        if (si == n_smp) smp[n_smp++] = *ref;
        for (ti = 0; ti < n_tex; ++ti)
          if (tex[ti].image == ref->image && tex_smp[ti] == si) break;
        if (ti == n_tex) { tex[n_tex] = *ref; tex_smp[n_tex++] = si; }
        tex_index[t] = (long)ti;
      }
      cJSON *info[SKS_TEXTURE_SLOT_COUNT] = {0};
      if (tex_index[SKS_TEXTURE_BASE_COLOR] >= 0)
        add_num_i(info[SKS_TEXTURE_BASE_COLOR] = cJSON_AddObjectToObject(pbr, "baseColorTexture"), "index",
                  tex_index[SKS_TEXTURE_BASE_COLOR]);
      cJSON_AddItemToObject(pbr, "metallicFactor", num_f(clamp01(mat->metallic, 0.0f)));
      float rough = clamp01(mat->roughness, 1.0f);
      if (rough != 1.0f) cJSON_AddItemToObject(pbr, "roughnessFactor", num_f(rough));
      if (tex_index[SKS_TEXTURE_METALLIC_ROUGHNESS] >= 0)
        add_num_i(info[SKS_TEXTURE_METALLIC_ROUGHNESS] = cJSON_AddObjectToObject(pbr, "metallicRoughnessTexture"),
                  "index", tex_index[SKS_TEXTURE_METALLIC_ROUGHNESS]);
      if (tex_index[SKS_TEXTURE_NORMAL] >= 0) {
        cJSON *t = info[SKS_TEXTURE_NORMAL] = cJSON_AddObjectToObject(mj, "normalTexture");
        add_num_i(t, "index", tex_index[SKS_TEXTURE_NORMAL]);
        if (isfinite(mat->normal_scale) && mat->normal_scale != 1.0f)
          cJSON_AddItemToObject(t, "scale", num_f(mat->normal_scale));
      }
      if (tex_index[SKS_TEXTURE_OCCLUSION] >= 0) {
        cJSON *t = info[SKS_TEXTURE_OCCLUSION] = cJSON_AddObjectToObject(mj, "occlusionTexture");
        add_num_i(t, "index", tex_index[SKS_TEXTURE_OCCLUSION]);
        float st = clamp01(mat->occlusion_strength, 1.0f);
        if (st != 1.0f) cJSON_AddItemToObject(t, "strength", num_f(st));
      }
      if (tex_index[SKS_TEXTURE_EMISSIVE] >= 0)
        add_num_i(info[SKS_TEXTURE_EMISSIVE] = cJSON_AddObjectToObject(mj, "emissiveTexture"), "index",
                  tex_index[SKS_TEXTURE_EMISSIVE]);
      float em[3];
      int emissive = 0;
      for (int e = 0; e < 3; ++e) emissive |= (em[e] = clamp01(mat->emissive[e], 0.0f)) != 0.0f;
      if (emissive) cJSON_AddItemToObject(mj, "emissiveFactor", num_array_f(em, 3));
      float es = mat->emissive_strength;
      if (emissive && isfinite(es) && es > 1.0f) { /* an emission brighter than 1 */
        cJSON *ext = cJSON_AddObjectToObject(cJSON_AddObjectToObject(mj, "extensions"), "KHR_materials_emissive_strength");
        cJSON_AddItemToObject(ext, "emissiveStrength", num_f(es));
        used |= USED_EMISSIVE_STRENGTH;
      }
      used |= add_material_extensions(mj, mat, tex_index, info);
      for (int t = 0; t < SKS_TEXTURE_SLOT_COUNT; ++t) {
        if (info[t] && mat->textures[t].tex_coord == 1) add_num_i(info[t], "texCoord", 1);
        if (info[t] && mat->textures[t].has_transform) {
          add_texture_transform(info[t], &mat->textures[t]);
          used |= USED_TEXTURE_TRANSFORM;
        }
      }
      /* the file's alphaMode where it gave one (OPAQUE is glTF's default) */
      if (mat->alpha_mode == SKS_ALPHA_BLEND || (mat->alpha_mode == SKS_ALPHA_UNSET && c[3] < 1.0f)) {
        cJSON_AddStringToObject(mj, "alphaMode", "BLEND");
      } else if (mat->alpha_mode == SKS_ALPHA_MASK) {
        cJSON_AddStringToObject(mj, "alphaMode", "MASK");
        if (mat->alpha_cutoff != 0.5f) cJSON_AddItemToObject(mj, "alphaCutoff", num_f(mat->alpha_cutoff));
      }
      if (mat->double_sided) cJSON_AddTrueToObject(mj, "doubleSided");
      cJSON_AddItemToArray(mats, mj);
    }
    if (n_tex) {
      /* only the images some texture uses (the validator flags unused ones) */
      long *image_out = malloc(m->image_count * sizeof *image_out);
      if (!image_out) {
        free(tex); free(smp); free(tex_smp); free(plain);
        s->plain_material = NULL;
        return sks_error_set(s->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", file_label(s));
      }
      for (size_t i = 0; i < m->image_count; ++i) image_out[i] = -1;
      cJSON *images = cJSON_AddArrayToObject(root, "images");
      cJSON *textures = cJSON_AddArrayToObject(root, "textures");
      cJSON *samplers = cJSON_AddArrayToObject(root, "samplers");
      long n_img = 0;
      for (size_t si = 0; si < n_smp; ++si) {
        cJSON *sj = cJSON_CreateObject();
        if (smp[si].mag_filter) add_num_i(sj, "magFilter", smp[si].mag_filter);
        if (smp[si].min_filter) add_num_i(sj, "minFilter", smp[si].min_filter);
        if (smp[si].wrap_s) add_num_i(sj, "wrapS", smp[si].wrap_s);
        if (smp[si].wrap_t) add_num_i(sj, "wrapT", smp[si].wrap_t);
        cJSON_AddItemToArray(samplers, sj);
      }
      for (size_t ti = 0; ti < n_tex; ++ti) {
        size_t ii = (size_t)tex[ti].image;
        if (image_out[ii] < 0) {
          const sks_image *im = &m->images[ii];
          cJSON *ij = cJSON_CreateObject();
          if (im->name) cJSON_AddStringToObject(ij, "name", im->name);
          const char *mime = sks_image_mime(im->data, im->size); /* checked in check_model */
          cJSON_AddStringToObject(ij, "mimeType", mime);
          add_num_i(ij, "bufferView", add_view(s, im->data, im->size));
          cJSON_AddItemToArray(images, ij);
          image_out[ii] = n_img++;
        }
        cJSON *tj = cJSON_CreateObject();
        add_num_i(tj, "sampler", (long)tex_smp[ti]);
        add_num_i(tj, "source", image_out[ii]);
        cJSON_AddItemToArray(textures, tj);
      }
      free(image_out);
    }
    free(tex); free(smp); free(tex_smp);
    if (used) {
      cJSON *eu = cJSON_AddArrayToObject(root, "extensionsUsed");
      for (size_t k = 0; k < sizeof k_used_names / sizeof k_used_names[0]; ++k)
        if (used & (1u << k)) cJSON_AddItemToArray(eu, cJSON_CreateString(k_used_names[k]));
    }
  }

  free(plain);
  s->plain_material = NULL;
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
  /* glTF's top-level arrays hold at least one item: a model with no mesh
   * or joint (a file of materials only) writes no "nodes" or "accessors" */
  for (cJSON *e = root->child, *next; e; e = next) {
    next = e->next;
    if (cJSON_IsArray(e) && !e->child) cJSON_Delete(cJSON_DetachItemViaPointer(root, e));
  }
  if (s->oom) return sks_error_set(s->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", file_label(s));
  return SKS_OK;
}

/* ---- writing back the kept glTF source ---------------------------------- */

/* The array's items as a vector (NULL when absent / empty; *n = count). */
static cJSON **item_vec(cJSON *arr, size_t *n) {
  *n = 0;
  if (!cJSON_IsArray(arr)) return NULL;
  size_t count = 0;
  cJSON *e;
  cJSON_ArrayForEach(e, arr) ++count;
  cJSON **v = malloc((count ? count : 1) * sizeof *v);
  if (!v) return NULL;
  count = 0;
  cJSON_ArrayForEach(e, arr) v[count++] = e;
  *n = count;
  return v;
}

/* cJSON prints a number with 15 significant digits when they parse back
 * within a relative DBL_EPSILON of it, so a value of the file's JSON could
 * come out one bit off ("-6.599351763725281e-06" as "...528e-06"). A
 * number 15 digits do not give back exactly becomes a raw item of the
 * fewest digits (16 or 17) that do, so every number is written as read.
 * Iterative (the kept document may nest as deep as cJSON parses); non-finite
 * numbers are left to cJSON. Returns 0, or -1 out of memory. */
static int exact_numbers(cJSON *root) {
  size_t cap = 64, depth = 0;
  cJSON **stack = malloc(cap * sizeof *stack); /* the next sibling to visit at each level */
  if (!stack) return -1;
  cJSON *it = root;
  while (it) {
    if (cJSON_IsNumber(it) && isfinite(it->valuedouble)) {
      char buf[32];
      snprintf(buf, sizeof buf, "%1.15g", it->valuedouble);
      if (strtod(buf, NULL) != it->valuedouble) {
        snprintf(buf, sizeof buf, "%1.16g", it->valuedouble);
        if (strtod(buf, NULL) != it->valuedouble) snprintf(buf, sizeof buf, "%1.17g", it->valuedouble);
        size_t n = strlen(buf) + 1;
        char *raw = malloc(n);
        if (!raw) { free(stack); return -1; }
        memcpy(raw, buf, n);
        it->type = (it->type & ~0xFF) | cJSON_Raw;
        it->valuestring = raw;
      }
    }
    cJSON *next = it == root ? NULL : it->next;
    if ((cJSON_IsArray(it) || cJSON_IsObject(it)) && it->child) {
      if (depth == cap) {
        cJSON **grown = realloc(stack, 2 * cap * sizeof *stack);
        if (!grown) { free(stack); return -1; }
        stack = grown, cap *= 2;
      }
      stack[depth++] = next;
      it = it->child;
      continue;
    }
    it = next;
    while (!it && depth) it = stack[--depth];
  }
  free(stack);
  return 0;
}

static void obj_set(cJSON *obj, const char *key, cJSON *value) {
  if (cJSON_GetObjectItemCaseSensitive(obj, key)) cJSON_ReplaceItemInObjectCaseSensitive(obj, key, value);
  else cJSON_AddItemToObject(obj, key, value);
}

/* A non-negative integer member (an index, an offset, a length); -1 when
 * absent, not a number, negative, NaN or too large for a long (a kept
 * document is a file's: 1e300 or inf there would make the cast undefined) */
static long obj_index(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < (double)LONG_MAX ? (long)v->valuedouble : -1;
}

/* Whether every bufferView of the kept document lies inside its buffer's
 * kept bytes (sks_gltf_source_view_outside, as the reader's warning judges
 * it). The reader resolves only the views it uses, so a file may load with
 * an unused view that does not (0; also when the text does not parse). */
static int source_views_inside(const sks_gltf_source *src) {
  cJSON *root = cJSON_ParseWithLength(src->json, src->json_len), *v;
  if (!root) return 0;
  int ok = 1;
  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(root, "bufferViews")) {
    double off, len;
    char why[96];
    if (sks_gltf_source_view_outside(src, v, &off, &len, why, sizeof why)) { ok = 0; break; }
  }
  cJSON_Delete(root);
  return ok;
}

/* Whether the kept document can be written back for this model: same
 * skeleton (count and hierarchy), skins, parts and vertex counts as read,
 * every buffer's bytes kept and every bufferView inside them. Otherwise the
 * model is written from scratch (its materials and images included). */
static int source_usable(const sks_model *m, const sks_gltf_source *src) {
  if (!src || !src->json) return 0;
  for (size_t b = 0; b < src->buffer_count; ++b)
    if (!src->buffers[b]) return 0;
  if (m->skeleton.joint_count != src->joint_count || sks_hash_parents(&m->skeleton) != src->parents_hash ||
      m->skin_count != src->skin_count || m->part_count != src->part_count)
    return 0;
  for (size_t p = 0; p < m->part_count; ++p)
    if (m->parts[p].vertex_count != src->part_vertices[p]) return 0;
  return source_views_inside(src);
}

/* Extensions known not to reference accessors or buffer views by index: with
 * only these, accessors / views this write replaced are removed (and the
 * rest renumbered); with any other, they stay (unused, harmless). */
static int extensions_safe(const cJSON *root) {
  static const char *const safe[] = {"KHR_materials_", "KHR_texture_transform", "KHR_lights_punctual",
                                     "KHR_mesh_quantization", "KHR_texture_basisu", "EXT_texture_webp",
                                     "EXT_texture_avif", "KHR_xmp_json_ld", "KHR_texture_"};
  const cJSON *used = cJSON_GetObjectItemCaseSensitive(root, "extensionsUsed"), *e;
  cJSON_ArrayForEach(e, used) {
    if (!cJSON_IsString(e)) return 0;
    int ok = 0;
    for (size_t k = 0; k < sizeof safe / sizeof safe[0] && !ok; ++k)
      ok = strncmp(e->valuestring, safe[k], strlen(safe[k])) == 0;
    if (!ok) return 0;
  }
  return 1;
}

/* Visits every core reference to an accessor (kind 0) or buffer view (kind 1):
 * map == NULL marks used[index] = 1; else the reference becomes map[index]. */
static void visit_ref(cJSON *v, uint8_t *used, const long *map, size_t n) {
  if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble >= (double)n) return;
  size_t i = (size_t)v->valuedouble;
  if (!map) used[i] = 1;
  else cJSON_SetNumberValue(v, (double)map[i]);
}

static void walk_accessor_refs(cJSON *root, uint8_t *used, const long *map, size_t n) {
  cJSON *mesh, *prim, *a, *t, *skin, *anim, *smp;
  cJSON_ArrayForEach(mesh, cJSON_GetObjectItemCaseSensitive(root, "meshes")) {
    cJSON_ArrayForEach(prim, cJSON_GetObjectItemCaseSensitive(mesh, "primitives")) {
      cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(prim, "attributes")) visit_ref(a, used, map, n);
      visit_ref(cJSON_GetObjectItemCaseSensitive(prim, "indices"), used, map, n);
      cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(prim, "targets"))
        cJSON_ArrayForEach(a, t) visit_ref(a, used, map, n);
    }
  }
  cJSON_ArrayForEach(skin, cJSON_GetObjectItemCaseSensitive(root, "skins"))
    visit_ref(cJSON_GetObjectItemCaseSensitive(skin, "inverseBindMatrices"), used, map, n);
  cJSON_ArrayForEach(anim, cJSON_GetObjectItemCaseSensitive(root, "animations")) {
    cJSON_ArrayForEach(smp, cJSON_GetObjectItemCaseSensitive(anim, "samplers")) {
      visit_ref(cJSON_GetObjectItemCaseSensitive(smp, "input"), used, map, n);
      visit_ref(cJSON_GetObjectItemCaseSensitive(smp, "output"), used, map, n);
    }
  }
}

static void walk_view_refs(cJSON *root, uint8_t *used, const long *map, size_t n) {
  cJSON *acc, *img;
  cJSON_ArrayForEach(acc, cJSON_GetObjectItemCaseSensitive(root, "accessors")) {
    visit_ref(cJSON_GetObjectItemCaseSensitive(acc, "bufferView"), used, map, n);
    cJSON *sp = cJSON_GetObjectItemCaseSensitive(acc, "sparse");
    visit_ref(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sp, "indices"), "bufferView"),
              used, map, n);
    visit_ref(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sp, "values"), "bufferView"),
              used, map, n);
  }
  cJSON_ArrayForEach(img, cJSON_GetObjectItemCaseSensitive(root, "images"))
    visit_ref(cJSON_GetObjectItemCaseSensitive(img, "bufferView"), used, map, n);
}

/* Removes the items of arr whose index has drop[i] && !used[i], renumbering
 * the references through walk. drop may be NULL (nothing dropped). */
static int compact(cJSON *root, const char *key, const uint8_t *drop,
                   void (*walk)(cJSON *, uint8_t *, const long *, size_t), uint8_t *removed_out) {
  size_t n;
  cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, key);
  cJSON **v = item_vec(arr, &n);
  if (!v) return n == 0;
  uint8_t *used = calloc(n, 1);
  long *map = malloc(n * sizeof *map);
  if (!used || !map) { free(v); free(used); free(map); return 0; }
  walk(root, used, NULL, n);
  long next = 0;
  for (size_t i = 0; i < n; ++i) {
    int gone = drop && drop[i] && !used[i];
    if (removed_out) removed_out[i] = (uint8_t)gone;
    map[i] = gone ? -1 : next++;
  }
  if ((size_t)next != n) {
    walk(root, NULL, map, n);
    for (size_t i = 0; i < n; ++i)
      if (map[i] < 0) cJSON_Delete(cJSON_DetachItemViaPointer(arr, v[i]));
  }
  free(v); free(used); free(map);
  return 1;
}

static const char *image_mime(const char *uri) {
  static const char *const known[] = {"image/png", "image/jpeg", "image/webp", "image/ktx2"};
  if (!strncmp(uri, "data:", 5)) {
    for (size_t k = 0; k < sizeof known / sizeof known[0]; ++k)
      if (!strncmp(uri + 5, known[k], strlen(known[k])) && uri[5 + strlen(known[k])] == ';') return known[k];
    return NULL;
  }
  const char *dot = strrchr(uri, '.');
  if (!dot) return NULL;
  if (!strcasecmp(dot, ".png")) return "image/png";
  if (!strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg")) return "image/jpeg";
  if (!strcasecmp(dot, ".webp")) return "image/webp";
  if (!strcasecmp(dot, ".ktx2")) return "image/ktx2";
  return NULL;
}

typedef struct gw_view_src {
  int is_new;        /* bytes in s->bin (else in a kept source buffer) */
  long buffer;
  size_t offset, length;
} gw_view_src;

static cJSON *trs_node_fields(cJSON *node, const sks_transform *t) {
  cJSON_DeleteItemFromObjectCaseSensitive(node, "matrix");
  cJSON_DeleteItemFromObjectCaseSensitive(node, "translation");
  cJSON_DeleteItemFromObjectCaseSensitive(node, "rotation");
  cJSON_DeleteItemFromObjectCaseSensitive(node, "scale");
  sks_skeleton one = {1, NULL, NULL, (sks_transform *)(uintptr_t)t};
  cJSON *tmp = node_json(&one, 0), *f;
  while ((f = tmp->child) != NULL) {
    cJSON_DetachItemViaPointer(tmp, f);
    cJSON_AddItemToObject(node, f->string, cJSON_Duplicate(f, 1));
    cJSON_Delete(f);
  }
  cJSON_Delete(tmp);
  return node;
}

/* Builds the output document from the kept source: *out_bin (malloc'd) gets
 * the new BIN chunk. Everything not listed below stays as read. */
static sks_result build_from_source(gw_state *s, const sks_gltf_write_options *o, cJSON **out_root,
                                    uint8_t **out_bin, size_t *out_bin_size) {
  const sks_model *m = s->model;
  const sks_gltf_source *src = m->gltf_source;
  sks_result r = check_model(s);
  if (r != SKS_OK) return r;
  cJSON *root = cJSON_ParseWithLength(src->json, src->json_len);
  if (!root) return sks_error_set(s->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", file_label(s));
  *out_root = root;
  size_t jc = m->skeleton.joint_count;
  int32_t *joint_node = malloc((jc ? jc : 1) * sizeof *joint_node);
  size_t n_nodes = 0, n_meshes = 0, n_skins = 0, n_anims = 0, n_images = 0, n_acc = 0, n_views0 = 0;
  cJSON **nodes = item_vec(cJSON_GetObjectItemCaseSensitive(root, "nodes"), &n_nodes);
  cJSON **meshes = item_vec(cJSON_GetObjectItemCaseSensitive(root, "meshes"), &n_meshes);
  cJSON **skins = item_vec(cJSON_GetObjectItemCaseSensitive(root, "skins"), &n_skins);
  cJSON **anims = item_vec(cJSON_GetObjectItemCaseSensitive(root, "animations"), &n_anims);
  cJSON **images = item_vec(cJSON_GetObjectItemCaseSensitive(root, "images"), &n_images);
  cJSON *accessors = cJSON_GetObjectItemCaseSensitive(root, "accessors");
  cJSON *views = cJSON_GetObjectItemCaseSensitive(root, "bufferViews");
  cJSON **accv = item_vec(accessors, &n_acc);
  cJSON **viewv = item_vec(views, &n_views0);
  free(accv);
  free(viewv);
  uint8_t *drop_acc = calloc(n_acc ? n_acc : 1, 1);
  uint8_t *bound = keyed_channels(m);
  int moom;
  uint8_t *morph_keyed = morph_keyed_nodes(m, &moom);
  if (!joint_node || !drop_acc || !bound || moom || (n_nodes && !nodes) || (n_meshes && !meshes) ||
      (n_skins && !skins) || (n_anims && !anims) || (n_images && !images)) {
    r = sks_error_set(s->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", file_label(s));
    goto done;
  }
  if (!accessors) accessors = cJSON_AddArrayToObject(root, "accessors");
  if (!views) views = cJSON_AddArrayToObject(root, "bufferViews");
  s->accessors = accessors;
  s->views = views;
  s->n_accessors = n_acc;
  s->n_views = n_views0;
  for (size_t j = 0; j < jc; ++j) joint_node[j] = -1;
  for (size_t nd = 0; nd < src->node_count && nd < n_nodes; ++nd)
    if (src->node_joint[nd] >= 0 && (size_t)src->node_joint[nd] < jc) joint_node[src->node_joint[nd]] = (int32_t)nd;
  for (size_t j = 0; j < jc; ++j)
    if (joint_node[j] < 0) {
      r = sks_error_set(s->err, SKS_ERR_INVALID, "%s: joint %zu has no node in the source document", file_label(s), j);
      goto done;
    }
  s->joint_node = joint_node;

  /* asset.generator */
  cJSON *asset = cJSON_GetObjectItemCaseSensitive(root, "asset");
  if (!cJSON_IsObject(asset)) {
    cJSON_DeleteItemFromObjectCaseSensitive(root, "asset");
    asset = cJSON_AddObjectToObject(root, "asset");
    cJSON_AddStringToObject(asset, "version", "2.0");
  }
  obj_set(asset, "generator", cJSON_CreateString("skinsolve " SKS_VERSION_STRING));

  /* Nodes: names and rest transforms that changed. */
  for (size_t j = 0; j < jc; ++j) {
    cJSON *node = nodes[joint_node[j]];
    if (sks_hash_string(m->skeleton.names[j]) != src->joint_name_hash[j])
      obj_set(node, "name", cJSON_CreateString(m->skeleton.names[j] ? m->skeleton.names[j] : ""));
    if (sks_hash_joint_rest(&m->skeleton.rest[j]) != src->joint_rest_hash[j])
      trs_node_fields(node, &m->skeleton.rest[j]);
  }

  /* Skins: joints and inverse bind matrices that changed. */
  for (size_t k = 0; k < m->skin_count && k < n_skins; ++k) {
    const sks_skin *skin = &m->skins[k];
    int joints_changed = sks_hash_skin_joints(skin) != src->skin_joints_hash[k];
    if (joints_changed) {
      cJSON *ja = cJSON_CreateArray();
      for (size_t j = 0; j < skin->joint_count; ++j) cJSON_AddItemToArray(ja, num_i(joint_node[skin->joints[j]]));
      obj_set(skins[k], "joints", ja);
    }
    if ((joints_changed || sks_hash_skin_ibm(skin) != src->skin_ibm_hash[k]) && skin->joint_count) {
      long old = obj_index(skins[k], "inverseBindMatrices");
      if (old >= 0 && (size_t)old < n_acc) drop_acc[old] = 1;
      sks_mat4 *ibm = malloc(skin->joint_count * sizeof *ibm);
      if (!ibm) { s->oom = 1; break; }
      memcpy(ibm, skin->inverse_bind, skin->joint_count * sizeof *ibm);
      for (size_t j = 0; j < skin->joint_count; ++j) {
        ibm[j].m[3] = ibm[j].m[7] = ibm[j].m[11] = 0.0f;
        ibm[j].m[15] = 1.0f;
      }
      obj_set(skins[k], "inverseBindMatrices",
              num_i(add_float_accessor(s, ibm[0].m, skin->joint_count, 16, "MAT4", 0, 0)));
      free(ibm);
    }
  }

  /* Mesh primitives: attributes that changed (a primitive shared by several
   * nodes is written once, from its first part). */
  for (size_t p = 0; p < m->part_count && r == SKS_OK && !s->oom; ++p) {
    const sks_mesh_part *part = &m->parts[p];
    int32_t mi = src->part_mesh[p], pk = src->part_prim[p];
    if (mi < 0 || (size_t)mi >= n_meshes) continue;
    int what = 0;
    if (sks_hash_part_positions(part) != src->part_pos_hash[p]) what |= W_POS;
    if (sks_hash_part_normals(part) != src->part_nrm_hash[p]) what |= W_NRM;
    if (sks_hash_part_uvs(part) != src->part_uv_hash[p]) what |= W_UV;
    if (sks_hash_part_influences(part) != src->part_infl_hash[p]) what |= W_INFL;
    if (sks_hash_part_indices(part) != src->part_idx_hash[p]) what |= W_IDX;
    if (part->material != src->part_material[p]) what |= W_MAT;
    if (!what) continue;
    int first = 1;
    for (size_t q = 0; q < p && first; ++q) first = !(src->part_mesh[q] == mi && src->part_prim[q] == pk);
    if (!first) continue;
    cJSON *prim = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(meshes[mi], "primitives"), pk);
    cJSON *attr = cJSON_GetObjectItemCaseSensitive(prim, "attributes");
    if (!attr) continue;
    const char *drop_keys[4] = {NULL, NULL, NULL, NULL};
    if (what & W_POS) drop_keys[0] = "POSITION";
    if (what & W_NRM) drop_keys[1] = "NORMAL";
    if (what & W_UV) drop_keys[2] = "TEXCOORD_0";
    if ((what & W_NRM) && part->tangents) drop_keys[3] = "TANGENT"; /* rewritten with the normals */
    for (int k = 0; k < 4; ++k) {
      if (!drop_keys[k]) continue;
      long old = obj_index(attr, drop_keys[k]);
      if (old >= 0 && (size_t)old < n_acc) drop_acc[old] = 1;
      cJSON_DeleteItemFromObjectCaseSensitive(attr, drop_keys[k]);
    }
    if (what & W_INFL) {
      for (int set = 0; set < 16; ++set) {
        char key[32];
        for (int kind = 0; kind < 2; ++kind) {
          snprintf(key, sizeof key, kind ? "WEIGHTS_%d" : "JOINTS_%d", set);
          long old = obj_index(attr, key);
          if (old >= 0 && (size_t)old < n_acc) drop_acc[old] = 1;
          cJSON_DeleteItemFromObjectCaseSensitive(attr, key);
        }
      }
    }
    if (what & W_IDX) {
      long old = obj_index(prim, "indices");
      if (old >= 0 && (size_t)old < n_acc) drop_acc[old] = 1;
      cJSON_DeleteItemFromObjectCaseSensitive(prim, "indices");
    }
    if (what & W_MAT) cJSON_DeleteItemFromObjectCaseSensitive(prim, "material");
    int sets = part->skin >= 0 ? (part->influence_count > 4 ? 2 : 1) : 0;
    r = write_part_data(s, p, sets, o, prim, attr, what);
  }
  if (r != SKS_OK) goto done;

  /* Animations: a clip unchanged since it was read keeps its animation as
   * it was (channels on morph weights, extras, ...); others are written. */
  {
    uint8_t *kept = calloc(n_anims ? n_anims : 1, 1);
    cJSON *out = cJSON_CreateArray();
    if (!kept || !out) { free(kept); cJSON_Delete(out); s->oom = 1; goto done; }
    size_t n_out = 0;
    for (size_t c = 0; c < m->clip_count && !s->oom; ++c) {
      uint64_t h = sks_hash_clip(&m->clips[c]);
      long found = -1;
      for (size_t k = 0; k <= src->clip_count && found < 0; ++k) {
        /* first the clip read in the same place, then any clip read */
        size_t i = k == 0 ? c : k - 1;
        if (i >= src->clip_count) continue;
        size_t ai = src->clip_anim ? (size_t)src->clip_anim[i] : i;
        if (ai < n_anims && !kept[ai] && src->clip_hash[i] == h) found = (long)ai;
      }
      cJSON *a;
      if (found >= 0) {
        kept[found] = 1;
        a = cJSON_Duplicate(anims[found], 1);
      } else {
        a = animation_json(s, &m->clips[c], bound, morph_keyed);
      }
      if (a) { cJSON_AddItemToArray(out, a); ++n_out; }
    }
    /* Animations the reader left out (no channel on a node it models, e.g.
     * only morph target weights) stay as they were when they have channels:
     * they are no clip, so reading the output leaves them out again. */
    uint8_t *read = src->clip_anim ? calloc(n_anims ? n_anims : 1, 1) : NULL;
    if (src->clip_anim && !read) s->oom = 1;
    for (size_t k = 0; read && k < src->clip_count; ++k)
      if ((size_t)src->clip_anim[k] < n_anims) read[src->clip_anim[k]] = 1;
    for (size_t i = 0; read && i < n_anims && !s->oom; ++i) {
      const cJSON *chs = cJSON_GetObjectItemCaseSensitive(anims[i], "channels");
      if (read[i] || !cJSON_IsArray(chs) || !chs->child) continue;
      cJSON *a = cJSON_Duplicate(anims[i], 1);
      if (!a) { s->oom = 1; break; }
      kept[i] = 1;
      cJSON_AddItemToArray(out, a);
      ++n_out;
    }
    free(read);
    /* accessors of animations not kept */
    for (size_t i = 0; i < n_anims; ++i) {
      if (kept[i]) continue;
      cJSON *smp;
      cJSON_ArrayForEach(smp, cJSON_GetObjectItemCaseSensitive(anims[i], "samplers")) {
        long in = obj_index(smp, "input"), outp = obj_index(smp, "output");
        if (in >= 0 && (size_t)in < n_acc) drop_acc[in] = 1;
        if (outp >= 0 && (size_t)outp < n_acc) drop_acc[outp] = 1;
      }
    }
    free(kept);
    free(anims);
    anims = NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(root, "animations");
    if (n_out) cJSON_AddItemToObject(root, "animations", out);
    else cJSON_Delete(out);
  }
  if (s->oom) goto done;

  /* External and data-URI images go into the BIN chunk (files were read at
   * load, confined to the model's folder). */
  for (size_t i = 0; i < n_images && i < src->image_count; ++i) {
    const cJSON *uj = cJSON_GetObjectItemCaseSensitive(images[i], "uri");
    if (!src->images[i] || !cJSON_IsString(uj)) continue;
    const char *mime = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(images[i], "mimeType"));
    if (!mime) mime = image_mime(uj->valuestring);
    if (!mime) continue;
    size_t off = bin_append(s, src->images[i], src->image_sizes[i]);
    cJSON *view = cJSON_CreateObject();
    add_num_i(view, "buffer", 0);
    add_num_i(view, "byteOffset", (long)off);
    add_num_i(view, "byteLength", (long)src->image_sizes[i]);
    cJSON_AddItemToArray(views, view);
    obj_set(images[i], "mimeType", cJSON_CreateString(mime));
    cJSON_DeleteItemFromObjectCaseSensitive(images[i], "uri");
    add_num_i(images[i], "bufferView", (long)s->n_views++);
  }
  if (s->oom) goto done;

  /* Remove what this write replaced (when no extension could refer to it). */
  {
    size_t nv_all = s->n_views;
    uint8_t *drop_view = calloc(nv_all ? nv_all : 1, 1);
    uint8_t *acc_gone = calloc(s->n_accessors ? s->n_accessors : 1, 1);
    uint8_t *view_gone = calloc(nv_all ? nv_all : 1, 1);
    int *view_new = malloc((nv_all ? nv_all : 1) * sizeof *view_new);
    if (!drop_view || !acc_gone || !view_gone || !view_new) {
      free(drop_view); free(acc_gone); free(view_gone); free(view_new);
      s->oom = 1;
      goto done;
    }
    int safe = extensions_safe(root);
    if (safe) {
      /* the views of dropped accessors become drop candidates */
      size_t na;
      cJSON **av = item_vec(accessors, &na);
      uint8_t *drop_all = calloc(na ? na : 1, 1);
      if ((na && !av) || !drop_all) s->oom = 1;
      for (size_t a = 0; !s->oom && a < na; ++a) {
        if (a < n_acc) drop_all[a] = drop_acc[a];
        if (!drop_all[a]) continue;
        long vi = obj_index(av[a], "bufferView");
        if (vi >= 0 && (size_t)vi < nv_all) drop_view[vi] = 1;
      }
      if (!s->oom && !compact(root, "accessors", drop_all, walk_accessor_refs, acc_gone)) s->oom = 1;
      free(av);
      free(drop_all);
      if (!s->oom && !compact(root, "bufferViews", drop_view, walk_view_refs, view_gone)) s->oom = 1;
    }
    /* provenance of the views that remain, in order */
    size_t nvv = 0;
    for (size_t v = 0; v < nv_all; ++v)
      if (!view_gone[v]) view_new[nvv++] = v >= n_views0;
    size_t count;
    cJSON **vv = item_vec(views, &count);
    if ((count && !vv) || count != nvv) s->oom = 1;
    gw_view_src *vs = malloc((count ? count : 1) * sizeof *vs);
    if (!vs) s->oom = 1;
    size_t total = 0;
    for (size_t v = 0; !s->oom && v < count; ++v) {
      vs[v].is_new = view_new[v];
      vs[v].buffer = vs[v].is_new ? -1 : obj_index(vv[v], "buffer");
      long off = obj_index(vv[v], "byteOffset"), len = obj_index(vv[v], "byteLength");
      vs[v].offset = off < 0 ? 0 : (size_t)off;
      vs[v].length = len < 0 ? 0 : (size_t)len;
      size_t have = vs[v].is_new ? s->bin_size
                    : (vs[v].buffer >= 0 && (size_t)vs[v].buffer < src->buffer_count) ? src->buffer_sizes[vs[v].buffer]
                                                                                   : 0;
      if (vs[v].offset > have || vs[v].length > have - vs[v].offset) {
        r = sks_error_set(s->err, SKS_ERR_INVALID, "%s: bufferView %zu lies outside its buffer", file_label(s), v);
        break;
      }
      total += vs[v].length + 8;
    }
    uint8_t *bin = (r == SKS_OK && !s->oom) ? malloc(total ? total : 1) : NULL;
    size_t pos = 0;
    if (r == SKS_OK && !s->oom && !bin) s->oom = 1;
    for (size_t v = 0; bin && v < count; ++v) {
      /* keep the view's offset modulo 4, so accessor alignment holds */
      size_t want = vs[v].offset & 3u;
      while ((pos & 3u) != want) bin[pos++] = 0;
      if (vs[v].length) { /* an empty view may sit on an empty (NULL) buffer */
        const uint8_t *base = vs[v].is_new ? s->bin : src->buffers[vs[v].buffer];
        memcpy(bin + pos, base + vs[v].offset, vs[v].length);
      }
      obj_set(vv[v], "buffer", num_i(0));
      /* an explicit "byteOffset": 0 stays (only what must change does) */
      if (pos || cJSON_GetObjectItemCaseSensitive(vv[v], "byteOffset")) obj_set(vv[v], "byteOffset", num_i((long)pos));
      pos += vs[v].length;
    }
    while (bin && (pos & 3u)) bin[pos++] = 0;
    free(vv); free(vs);
    free(drop_view); free(acc_gone); free(view_gone); free(view_new);
    if (r != SKS_OK || s->oom) { free(bin); goto done; }
    cJSON_DeleteItemFromObjectCaseSensitive(root, "buffers");
    if (pos) {
      cJSON *buffers = cJSON_AddArrayToObject(root, "buffers");
      cJSON *buf = cJSON_CreateObject();
      add_num_i(buf, "byteLength", (long)pos);
      cJSON_AddItemToArray(buffers, buf);
    }
    if (count == 0) cJSON_DeleteItemFromObjectCaseSensitive(root, "bufferViews");
    if (s->n_accessors == 0 || !cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "accessors")))
      cJSON_DeleteItemFromObjectCaseSensitive(root, "accessors");
    *out_bin = bin;
    *out_bin_size = pos;
  }

done:
  s->accessors = s->views = NULL; /* owned by root */
  free(joint_node); free(nodes); free(meshes); free(skins); free(anims); free(images);
  free(drop_acc); free(bound); free(morph_keyed);
  s->joint_node = NULL;
  if (r == SKS_OK && s->oom) r = sks_error_set(s->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", file_label(s));
  return r;
}

static void put_u32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}

sks_result sks_glb_encode(const char *path, const sks_model *model, const sks_gltf_write_options *options,
                          uint8_t **glb, size_t *glb_size, sks_error *err) {
  *glb = NULL;
  *glb_size = 0;
  if (!path || !model)
    return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_write_glb: path and model are required");
  gw_state s;
  memset(&s, 0, sizeof s);
  s.model = model;
  s.path = path;
  s.err = err;
  cJSON *root = NULL;
  uint8_t *bin = NULL;
  size_t blen = 0;
  sks_result r;
  if (source_usable(model, model->gltf_source)) {
    r = build_from_source(&s, options, &root, &bin, &blen);
    free(s.bin);
  } else {
    s.accessors = cJSON_CreateArray();
    s.views = cJSON_CreateArray();
    root = cJSON_CreateObject();
    r = (root && s.accessors && s.views) ? build(&s, options, root)
                                         : sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    cJSON_Delete(s.accessors);
    cJSON_Delete(s.views);
    free(s.part_host);
    bin = s.bin;
    blen = s.bin_size; /* a multiple of 4 */
  }
  if (r == SKS_OK && exact_numbers(root) != 0)
    r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  char *json = r == SKS_OK ? cJSON_PrintUnformatted(root) : NULL;
  cJSON_Delete(root);
  if (r == SKS_OK && !json) r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  if (r != SKS_OK) { free(bin); free(json); return r; }

  size_t jlen = strlen(json), jpad = (jlen + 3u) & ~(size_t)3u;
  size_t total = 12 + 8 + jpad + (blen ? 8 + blen : 0);
  if (total > 0xFFFFFFFFu) {
    free(bin); free(json);
    return sks_error_set(err, SKS_ERR_UNSUPPORTED, "%s: model too large for GLB (%zu bytes)", path, total);
  }
  uint8_t *out = malloc(total);
  if (!out) { free(bin); free(json); return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path); }
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
    memcpy(b + 8, bin, blen);
  }
  free(json);
  free(bin);
  *glb = out;
  *glb_size = total;
  return SKS_OK;
}

sks_result sks_write_glb(const char *path, const sks_model *model,
                         const sks_gltf_write_options *options, sks_error *err) {
  uint8_t *out;
  size_t total;
  sks_result r = sks_glb_encode(path, model, options, &out, &total, err);
  if (r != SKS_OK) return r;
  r = sks_write_file_atomic(path, out, total, err);
  free(out);
  return r;
}
