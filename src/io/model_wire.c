/* sks_model <-> bytes (see model_wire.h). Layout, all native-endian:
 *   "SKSWIRE7" | str source_path
 *   u64 joints  { str name, i32 parent, f32[10] rest T R S }
 *   u64 skins   { str name, u64 n, i32[n] joints, f32[16 n] inverse binds }
 *   u64 parts   { str name, i32 material skin node, u64 vertices, u32 has
 *                 (1 normals, 2 uvs, 4 tangents, 8 uvs1), u32 influences, f32 positions
 *                 [normals] [uvs] [tangents] [uvs1], u16 joints, f32 weights, u64 indices,
 *                 u32[], u64 dropped vertices, u64 first dropped, u32 file max,
 *                 u64 morph targets (<= SKS_MAX_MORPH_TARGETS) { str name, f32 default
 *                 weight, u32 has (1 positions, 2 normals, 4 tangents), f32[3 v] each } }
 *   u64 materials { str name, f32[4] base colour, f32 metallic, f32 roughness,
 *                   i32 double sided (0/1), f32[3] emissive, f32 normal scale,
 *                   f32 occlusion strength, 12 x { i32 image (-1 = none),
 *                   i32 texCoord, i32 mag, min, wrap s, wrap t, i32 has transform (0/1),
 *                   f32[2] offset, f32 rotation, f32[2] scale } by sks_texture_slot,
 *                   f32 emissive strength, i32 alpha mode, f32 alpha cutoff,
 *                   u32 extensions (sks_material_extension bits), f32 clearcoat,
 *                   clearcoat roughness, f32[3] sheen colour, f32 sheen roughness,
 *                   f32 transmission, thickness, attenuation distance,
 *                   f32[3] attenuation colour, f32 ior, f32 clearcoat normal scale }
 *   u64 images  { str name, str mime type, u64 size, bytes }
 *   u64 warnings { str }
 *   u64 clips   { str name, f32 duration, u64 tracks { i32 joint, u32 path,
 *                 u32 interpolation, u64 keys, f32 times, f32 values },
 *                 u64 morph tracks { i32 node, u32 interpolation, u64 weights,
 *                 u64 keys, f32 times, f32 values (keys x weights, x 3 cubic) } }
 *   "END!"
 * str = u64 length (UINT64_MAX = NULL) + bytes, no NUL inside. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "io/byte_buf.h"
#include "io/model_wire.h"
#include "io/resource.h"

/* The version is in the magic: a parent refuses a child of another build
 * ("no header") instead of misreading its layout. */
#define WIRE_MAGIC "SKSWIRE7"
#define WIRE_END "END!"
#define WIRE_MAX_STRING (1u << 20)

/* ---- encoder ------------------------------------------------------------- */

typedef sks_byte_buf wbuf;

static void put(wbuf *b, const void *data, size_t n) { sks_byte_buf_put(b, data, n, 4096); }
static void put_u64(wbuf *b, uint64_t v) { put(b, &v, sizeof v); }
static void put_u32(wbuf *b, uint32_t v) { put(b, &v, sizeof v); }
static void put_i32(wbuf *b, int32_t v) { put(b, &v, sizeof v); }
static void put_str(wbuf *b, const char *s) {
  if (!s) { put_u64(b, UINT64_MAX); return; }
  size_t n = strlen(s);
  put_u64(b, n);
  put(b, s, n);
}

sks_result sks_model_wire_encode(const sks_model *m, uint8_t **bytes, size_t *size, sks_error *err) {
  if (!m || !bytes || !size) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_model_wire_encode: NULL argument");
  *bytes = NULL;
  *size = 0;
  wbuf b = {0};
  put(&b, WIRE_MAGIC, 8);
  put_str(&b, m->source_path);
  const sks_skeleton *sk = &m->skeleton;
  put_u64(&b, sk->joint_count);
  for (size_t i = 0; i < sk->joint_count; ++i) {
    put_str(&b, sk->names[i] ? sk->names[i] : "");
    put_i32(&b, sk->parents[i]);
    put(&b, &sk->rest[i], sizeof(sks_transform));
  }
  put_u64(&b, m->skin_count);
  for (size_t i = 0; i < m->skin_count; ++i) {
    const sks_skin *s = &m->skins[i];
    put_str(&b, s->name);
    put_u64(&b, s->joint_count);
    put(&b, s->joints, s->joint_count * sizeof(int32_t));
    put(&b, s->inverse_bind, s->joint_count * sizeof(sks_mat4));
  }
  put_u64(&b, m->part_count);
  for (size_t i = 0; i < m->part_count; ++i) {
    const sks_mesh_part *p = &m->parts[i];
    put_str(&b, p->name);
    put_i32(&b, p->material);
    put_i32(&b, p->skin);
    put_i32(&b, p->node);
    put_u64(&b, p->vertex_count);
    put_u32(&b, (p->normals ? 1u : 0u) | (p->uvs ? 2u : 0u) | (p->tangents ? 4u : 0u) | (p->uvs1 ? 8u : 0u));
    put_u32(&b, p->influence_count);
    size_t v = p->vertex_count, k = p->influence_count;
    put(&b, p->positions, v * 3 * sizeof(float));
    if (p->normals) put(&b, p->normals, v * 3 * sizeof(float));
    if (p->uvs) put(&b, p->uvs, v * 2 * sizeof(float));
    if (p->tangents) put(&b, p->tangents, v * 4 * sizeof(float));
    if (p->uvs1) put(&b, p->uvs1, v * 2 * sizeof(float));
    put(&b, p->joints, v * k * sizeof(uint16_t));
    put(&b, p->weights, v * k * sizeof(float));
    put_u64(&b, p->index_count);
    put(&b, p->indices, p->index_count * sizeof(uint32_t));
    put_u64(&b, p->dropped_influence_vertices);
    put_u64(&b, p->first_dropped_influence_vertex);
    put_u32(&b, p->file_max_influences);
    size_t nt = p->morph_targets ? p->morph_target_count : 0;
    put_u64(&b, nt);
    for (size_t t = 0; t < nt; ++t) {
      const sks_morph_target *mt = &p->morph_targets[t];
      put_str(&b, mt->name);
      put(&b, &mt->default_weight, sizeof(float));
      put_u32(&b, (mt->position_deltas ? 1u : 0u) | (mt->normal_deltas ? 2u : 0u) | (mt->tangent_deltas ? 4u : 0u));
      if (mt->position_deltas) put(&b, mt->position_deltas, v * 3 * sizeof(float));
      if (mt->normal_deltas) put(&b, mt->normal_deltas, v * 3 * sizeof(float));
      if (mt->tangent_deltas) put(&b, mt->tangent_deltas, v * 3 * sizeof(float));
    }
  }
  put_u64(&b, m->material_count);
  for (size_t i = 0; i < m->material_count; ++i) {
    put_str(&b, m->materials[i].name);
    put(&b, m->materials[i].base_color, 4 * sizeof(float));
    put(&b, &m->materials[i].metallic, sizeof(float));
    put(&b, &m->materials[i].roughness, sizeof(float));
    put_i32(&b, m->materials[i].double_sided);
    put(&b, m->materials[i].emissive, 3 * sizeof(float));
    put(&b, &m->materials[i].normal_scale, sizeof(float));
    put(&b, &m->materials[i].occlusion_strength, sizeof(float));
    for (int t = 0; t < SKS_TEXTURE_SLOT_COUNT; ++t) {
      const sks_texture_ref *tr = &m->materials[i].textures[t];
      put_i32(&b, tr->image);
      put_i32(&b, tr->tex_coord);
      put_i32(&b, tr->mag_filter);
      put_i32(&b, tr->min_filter);
      put_i32(&b, tr->wrap_s);
      put_i32(&b, tr->wrap_t);
      put_i32(&b, tr->has_transform);
      put(&b, tr->offset, 2 * sizeof(float));
      put(&b, &tr->rotation, sizeof(float));
      put(&b, tr->scale, 2 * sizeof(float));
    }
    const sks_material *mt = &m->materials[i];
    put(&b, &mt->emissive_strength, sizeof(float));
    put_i32(&b, mt->alpha_mode);
    put(&b, &mt->alpha_cutoff, sizeof(float));
    put_u32(&b, mt->extensions);
    put(&b, &mt->clearcoat, sizeof(float));
    put(&b, &mt->clearcoat_roughness, sizeof(float));
    put(&b, mt->sheen_color, 3 * sizeof(float));
    put(&b, &mt->sheen_roughness, sizeof(float));
    put(&b, &mt->transmission, sizeof(float));
    put(&b, &mt->thickness, sizeof(float));
    put(&b, &mt->attenuation_distance, sizeof(float));
    put(&b, mt->attenuation_color, 3 * sizeof(float));
    put(&b, &mt->ior, sizeof(float));
    put(&b, &mt->clearcoat_normal_scale, sizeof(float));
  }
  put_u64(&b, m->image_count);
  for (size_t i = 0; i < m->image_count; ++i) {
    put_str(&b, m->images[i].name);
    put_str(&b, m->images[i].mime_type);
    put_u64(&b, m->images[i].size);
    put(&b, m->images[i].data, m->images[i].size);
  }
  put_u64(&b, m->warning_count);
  for (size_t i = 0; i < m->warning_count; ++i) put_str(&b, m->warnings[i] ? m->warnings[i] : "");
  put_u64(&b, m->clip_count);
  for (size_t c = 0; c < m->clip_count; ++c) {
    const sks_clip *cl = &m->clips[c];
    put_str(&b, cl->name);
    put(&b, &cl->duration, sizeof(float));
    put_u64(&b, cl->track_count);
    for (size_t t = 0; t < cl->track_count; ++t) {
      const sks_track *tr = &cl->tracks[t];
      put_i32(&b, tr->joint);
      put_u32(&b, (uint32_t)tr->path);
      put_u32(&b, (uint32_t)tr->interpolation);
      put_u64(&b, tr->key_count);
      size_t nv = tr->key_count * sks_track_components(tr->path) *
                  (tr->interpolation == SKS_INTERP_CUBICSPLINE ? 3 : 1);
      put(&b, tr->times, tr->key_count * sizeof(float));
      put(&b, tr->values, nv * sizeof(float));
    }
    put_u64(&b, cl->morph_track_count);
    for (size_t t = 0; t < cl->morph_track_count; ++t) {
      const sks_morph_track *tr = &cl->morph_tracks[t];
      put_i32(&b, tr->node);
      put_u32(&b, (uint32_t)tr->interpolation);
      put_u64(&b, tr->weight_count);
      put_u64(&b, tr->key_count);
      put(&b, tr->times, tr->key_count * sizeof(float));
      put(&b, tr->values, sks_morph_track_value_count(tr) * sizeof(float));
    }
  }
  put(&b, WIRE_END, 4);
  if (b.fail) {
    free(b.p);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory serialising the model",
                         m->source_path ? m->source_path : "model");
  }
  *bytes = b.p;
  *size = b.n;
  return SKS_OK;
}

/* ---- decoder ------------------------------------------------------------- */

typedef struct rbuf {
  const uint8_t *start, *p, *end;
  const char *name;
  sks_error *err;
  sks_result r;
} rbuf;

static int bad(rbuf *b, sks_result code, const char *what) {
  if (b->r == SKS_OK)
    b->r = sks_error_set(b->err, code, "%s: the isolated import returned a bad model (%s at byte %td)",
                         b->name, what, b->p - b->start);
  return 0;
}

static int take(rbuf *b, void *dst, size_t n) {
  if (b->r != SKS_OK) return 0;
  if ((size_t)(b->end - b->p) < n) return bad(b, SKS_ERR_PARSE, "truncated");
  if (n) memcpy(dst, b->p, n);
  b->p += n;
  return 1;
}
static uint64_t get_u64(rbuf *b) { uint64_t v = 0; take(b, &v, sizeof v); return v; }
static uint32_t get_u32(rbuf *b) { uint32_t v = 0; take(b, &v, sizeof v); return v; }
static int32_t get_i32(rbuf *b) { int32_t v = 0; take(b, &v, sizeof v); return v; }

/* A count of elements that each take at least min_bytes of what is left:
 * bounds every allocation by the stream's real size. */
static size_t get_count(rbuf *b, size_t min_bytes, const char *what) {
  uint64_t n = get_u64(b);
  if (b->r != SKS_OK) return 0;
  if (min_bytes == 0) min_bytes = 1;
  if (n > (uint64_t)(b->end - b->p) / min_bytes) { bad(b, SKS_ERR_PARSE, what); return 0; }
  return (size_t)n;
}

/* An array of count * elem bytes (count already bounded); NULL if empty. */
static void *get_array(rbuf *b, size_t count, size_t elem, const char *what) {
  if (b->r != SKS_OK || count == 0) return NULL;
  if (count > (size_t)(b->end - b->p) / elem) { bad(b, SKS_ERR_PARSE, what); return NULL; }
  void *d = malloc(count * elem);
  if (!d) { bad(b, SKS_ERR_OUT_OF_MEMORY, "out of memory"); return NULL; }
  take(b, d, count * elem);
  return d;
}

static char *get_str(rbuf *b, int allow_null) {
  uint64_t n = get_u64(b);
  if (b->r != SKS_OK) return NULL;
  if (n == UINT64_MAX && allow_null) return NULL;
  if (n > WIRE_MAX_STRING || n > (uint64_t)(b->end - b->p)) { bad(b, SKS_ERR_PARSE, "string length"); return NULL; }
  if (memchr(b->p, 0, (size_t)n)) { bad(b, SKS_ERR_PARSE, "NUL in a string"); return NULL; }
  char *s = malloc((size_t)n + 1);
  if (!s) { bad(b, SKS_ERR_OUT_OF_MEMORY, "out of memory"); return NULL; }
  take(b, s, (size_t)n);
  s[n] = '\0';
  return s;
}

/* An image's bytes start with the signature of its (PNG / JPEG) mime type. */
static int in01(float v) { return v >= 0.0f && v <= 1.0f; }

int sks_texture_transform_valid(const sks_texture_ref *t) {
  if (t->has_transform == 0) return 1;
  return t->has_transform == 1 && isfinite(t->offset[0]) && isfinite(t->offset[1]) && isfinite(t->rotation) &&
         isfinite(t->scale[0]) && isfinite(t->scale[1]);
}

int sks_material_extensions_valid(const sks_material *m) {
  if (m->alpha_mode < SKS_ALPHA_UNSET || m->alpha_mode > SKS_ALPHA_BLEND || !(m->alpha_cutoff >= 0.0f) ||
      !isfinite(m->alpha_cutoff) || (m->extensions & ~(uint32_t)SKS_MATERIAL_EXTENSION_MASK))
    return 0;
  int ok = isfinite(m->clearcoat_normal_scale);
  if (m->extensions & SKS_MATERIAL_CLEARCOAT) ok &= in01(m->clearcoat) && in01(m->clearcoat_roughness);
  if (m->extensions & SKS_MATERIAL_SHEEN)
    ok &= in01(m->sheen_color[0]) && in01(m->sheen_color[1]) && in01(m->sheen_color[2]) && in01(m->sheen_roughness);
  if (m->extensions & SKS_MATERIAL_TRANSMISSION) ok &= in01(m->transmission);
  if (m->extensions & SKS_MATERIAL_VOLUME)
    ok &= m->thickness >= 0.0f && isfinite(m->thickness) && m->attenuation_distance >= 0.0f &&
          isfinite(m->attenuation_distance) && in01(m->attenuation_color[0]) && in01(m->attenuation_color[1]) &&
          in01(m->attenuation_color[2]);
  if (m->extensions & SKS_MATERIAL_IOR) ok &= isfinite(m->ior) && (m->ior == 0.0f || m->ior >= 1.0f);
  return ok;
}

static int image_bytes_match(const char *mime, const uint8_t *d, size_t n) {
  const char *got = sks_image_mime(d, n);
  return mime && got && strcmp(mime, got) == 0;
}

static void decode(rbuf *b, sks_model *m) {
  char magic[8];
  if (!take(b, magic, 8) || memcmp(magic, WIRE_MAGIC, 8) != 0) { bad(b, SKS_ERR_PARSE, "no header"); return; }
  m->source_path = get_str(b, 1);

  sks_skeleton *sk = &m->skeleton;
  size_t nj = get_count(b, 8 + 4 + sizeof(sks_transform), "joint count");
  if (nj) {
    sk->names = calloc(nj, sizeof(char *));
    sk->parents = calloc(nj, sizeof(int32_t));
    sk->rest = calloc(nj, sizeof(sks_transform));
    if (!sk->names || !sk->parents || !sk->rest) { bad(b, SKS_ERR_OUT_OF_MEMORY, "out of memory"); return; }
    sk->joint_count = nj;
  }
  for (size_t i = 0; i < nj && b->r == SKS_OK; ++i) {
    sk->names[i] = get_str(b, 0);
    sk->parents[i] = get_i32(b);
    take(b, &sk->rest[i], sizeof(sks_transform));
    if (b->r == SKS_OK && (sk->parents[i] < -1 || sk->parents[i] >= (int32_t)i))
      bad(b, SKS_ERR_PARSE, "joint parent not before its child");
  }

  size_t ns = get_count(b, 16, "skin count");
  if (ns) {
    m->skins = calloc(ns, sizeof(sks_skin));
    if (!m->skins) { bad(b, SKS_ERR_OUT_OF_MEMORY, "out of memory"); return; }
    m->skin_count = ns;
  }
  for (size_t i = 0; i < ns && b->r == SKS_OK; ++i) {
    sks_skin *s = &m->skins[i];
    s->name = get_str(b, 1);
    size_t n = get_count(b, sizeof(int32_t) + sizeof(sks_mat4), "skin joint count");
    s->joints = get_array(b, n, sizeof(int32_t), "skin joints");
    s->inverse_bind = get_array(b, n, sizeof(sks_mat4), "inverse binds");
    if (b->r != SKS_OK) break;
    s->joint_count = n;
    for (size_t j = 0; j < n; ++j)
      if (s->joints[j] < 0 || (size_t)s->joints[j] >= nj) { bad(b, SKS_ERR_PARSE, "skin joint out of range"); break; }
  }

  size_t np = get_count(b, 64, "part count");
  if (np) {
    m->parts = calloc(np, sizeof(sks_mesh_part));
    if (!m->parts) { bad(b, SKS_ERR_OUT_OF_MEMORY, "out of memory"); return; }
    m->part_count = np;
  }
  for (size_t i = 0; i < np && b->r == SKS_OK; ++i) {
    sks_mesh_part *p = &m->parts[i];
    p->name = get_str(b, 1);
    p->material = get_i32(b);
    p->skin = get_i32(b);
    p->node = get_i32(b);
    size_t v = get_count(b, 3 * sizeof(float), "vertex count");
    uint32_t has = get_u32(b);
    uint32_t k = get_u32(b);
    if (b->r != SKS_OK) break;
    if (has > 15 || k > SKS_MAX_INFLUENCES) { bad(b, SKS_ERR_PARSE, "part attributes"); break; }
    if (p->material < -1 || p->skin < -1 || (p->skin >= 0 && (size_t)p->skin >= ns) ||
        p->node < 0 || (size_t)p->node >= nj || (p->skin >= 0 && k == 0) || (p->skin < 0 && k != 0)) {
      bad(b, SKS_ERR_PARSE, "part skin / node / influences");
      break;
    }
    p->vertex_count = v;
    p->influence_count = k;
    p->positions = get_array(b, v, 3 * sizeof(float), "positions");
    if (has & 1) p->normals = get_array(b, v, 3 * sizeof(float), "normals");
    if (has & 2) p->uvs = get_array(b, v, 2 * sizeof(float), "uvs");
    if (has & 4) p->tangents = get_array(b, v, 4 * sizeof(float), "tangents");
    if (has & 8) p->uvs1 = get_array(b, v, 2 * sizeof(float), "uvs1");
    if (k) {
      p->joints = get_array(b, v, k * sizeof(uint16_t), "joints");
      p->weights = get_array(b, v, k * sizeof(float), "weights");
    }
    size_t ni = get_count(b, sizeof(uint32_t), "index count");
    p->indices = get_array(b, ni, sizeof(uint32_t), "indices");
    p->dropped_influence_vertices = (size_t)get_u64(b);
    p->first_dropped_influence_vertex = (size_t)get_u64(b);
    p->file_max_influences = get_u32(b);
    /* Morph targets: the count is capped, each target's arrays bounded by
     * the bytes left (get_array), every value finite. */
    size_t nt = get_count(b, 8 + 4 + 4, "morph target count");
    if (b->r != SKS_OK) break;
    if (nt > SKS_MAX_MORPH_TARGETS) { bad(b, SKS_ERR_PARSE, "morph target count over SKS_MAX_MORPH_TARGETS"); break; }
    if (nt) {
      p->morph_targets = calloc(nt, sizeof *p->morph_targets);
      if (!p->morph_targets) { bad(b, SKS_ERR_OUT_OF_MEMORY, "out of memory"); break; }
      p->morph_target_count = nt;
    }
    for (size_t t = 0; t < nt && b->r == SKS_OK; ++t) {
      sks_morph_target *mt = &p->morph_targets[t];
      mt->name = get_str(b, 1);
      take(b, &mt->default_weight, sizeof(float));
      uint32_t mhas = get_u32(b);
      if (b->r != SKS_OK) break;
      if (mhas > 7 || !isfinite(mt->default_weight)) { bad(b, SKS_ERR_PARSE, "morph target attributes / weight"); break; }
      if (mhas & 1) mt->position_deltas = get_array(b, v, 3 * sizeof(float), "morph position deltas");
      if (mhas & 2) mt->normal_deltas = get_array(b, v, 3 * sizeof(float), "morph normal deltas");
      if (mhas & 4) mt->tangent_deltas = get_array(b, v, 3 * sizeof(float), "morph tangent deltas");
      if (b->r != SKS_OK) break;
      const float *arr[3] = {mt->position_deltas, mt->normal_deltas, mt->tangent_deltas};
      for (int q = 0; q < 3; ++q)
        for (size_t x = 0; arr[q] && x < 3 * v; ++x)
          if (!isfinite(arr[q][x])) { bad(b, SKS_ERR_PARSE, "morph delta not finite"); break; }
    }
    if (b->r != SKS_OK) break;
    p->index_count = ni;
    if (ni % 3) { bad(b, SKS_ERR_PARSE, "index count not a multiple of 3"); break; }
    for (size_t x = 0; x < ni; ++x)
      if (p->indices[x] >= v) { bad(b, SKS_ERR_PARSE, "triangle index out of range"); break; }
    if (k && b->r == SKS_OK) {
      size_t jc = m->skins[p->skin].joint_count;
      for (size_t x = 0; x < v * k; ++x)
        if (p->joints[x] >= jc) { bad(b, SKS_ERR_PARSE, "vertex joint out of range"); break; }
    }
    if (b->r == SKS_OK && p->dropped_influence_vertices > v) bad(b, SKS_ERR_PARSE, "dropped influence count");
  }

  size_t nm = get_count(b, 8 + 16 + 16 + 20 + 44 * SKS_TEXTURE_SLOT_COUNT + 4 + 12 + 4 * 14, "material count");
  if (nm) {
    m->materials = calloc(nm, sizeof(sks_material));
    if (!m->materials) { bad(b, SKS_ERR_OUT_OF_MEMORY, "out of memory"); return; }
    m->material_count = nm;
  }
  for (size_t i = 0; i < nm && b->r == SKS_OK; ++i) {
    m->materials[i].name = get_str(b, 1);
    sks_material *mat = &m->materials[i];
    take(b, mat->base_color, 4 * sizeof(float));
    take(b, &mat->metallic, sizeof(float));
    take(b, &mat->roughness, sizeof(float));
    mat->double_sided = get_i32(b);
    take(b, mat->emissive, 3 * sizeof(float));
    take(b, &mat->normal_scale, sizeof(float));
    take(b, &mat->occlusion_strength, sizeof(float));
    int refs_ok = 1;
    for (int t = 0; t < SKS_TEXTURE_SLOT_COUNT; ++t) {
      sks_texture_ref *tr = &mat->textures[t];
      tr->image = get_i32(b);
      tr->tex_coord = get_i32(b);
      tr->mag_filter = get_i32(b);
      tr->min_filter = get_i32(b);
      tr->wrap_s = get_i32(b);
      tr->wrap_t = get_i32(b);
      tr->has_transform = get_i32(b);
      take(b, tr->offset, 2 * sizeof(float));
      take(b, &tr->rotation, sizeof(float));
      take(b, tr->scale, 2 * sizeof(float));
      refs_ok &= sks_texture_ref_valid(tr) && sks_texture_transform_valid(tr);
    }
    take(b, &mat->emissive_strength, sizeof(float));
    mat->alpha_mode = get_i32(b);
    take(b, &mat->alpha_cutoff, sizeof(float));
    mat->extensions = get_u32(b);
    take(b, &mat->clearcoat, sizeof(float));
    take(b, &mat->clearcoat_roughness, sizeof(float));
    take(b, mat->sheen_color, 3 * sizeof(float));
    take(b, &mat->sheen_roughness, sizeof(float));
    take(b, &mat->transmission, sizeof(float));
    take(b, &mat->thickness, sizeof(float));
    take(b, &mat->attenuation_distance, sizeof(float));
    take(b, mat->attenuation_color, 3 * sizeof(float));
    take(b, &mat->ior, sizeof(float));
    take(b, &mat->clearcoat_normal_scale, sizeof(float));
    if (b->r != SKS_OK) break;
    if (!sks_material_extensions_valid(mat)) { bad(b, SKS_ERR_PARSE, "material extension factors"); break; }
    int finite = 1;
    for (int k = 0; k < 4; ++k) finite &= isfinite(mat->base_color[k]);
    for (int k = 0; k < 3; ++k) finite &= mat->emissive[k] >= 0 && mat->emissive[k] <= 1;
    if (!finite || !(mat->metallic >= 0 && mat->metallic <= 1) || !(mat->roughness >= 0 && mat->roughness <= 1) ||
        (mat->double_sided != 0 && mat->double_sided != 1) || !refs_ok || !isfinite(mat->normal_scale) ||
        !(mat->occlusion_strength >= 0 && mat->occlusion_strength <= 1) ||
        !(mat->emissive_strength >= 0 && mat->emissive_strength <= SKS_MAX_EMISSIVE_STRENGTH))
      bad(b, SKS_ERR_PARSE, "material factors");
  }
  for (size_t i = 0; i < np && b->r == SKS_OK; ++i)
    if (m->parts[i].material >= (int32_t)nm) bad(b, SKS_ERR_PARSE, "part material out of range");

  size_t ni = get_count(b, 8 + 8 + 8, "image count");
  if (ni) {
    m->images = calloc(ni, sizeof(sks_image));
    if (!m->images) { bad(b, SKS_ERR_OUT_OF_MEMORY, "out of memory"); return; }
    m->image_count = ni;
  }
  for (size_t i = 0; i < ni && b->r == SKS_OK; ++i) {
    sks_image *img = &m->images[i];
    img->name = get_str(b, 0);
    img->mime_type = get_str(b, 0);
    size_t n = get_count(b, 1, "image size");
    img->data = get_array(b, n, 1, "image bytes");
    if (b->r != SKS_OK) break;
    img->size = n;
    if (!image_bytes_match(img->mime_type, img->data, n)) bad(b, SKS_ERR_PARSE, "image type");
  }
  for (size_t i = 0; i < nm && b->r == SKS_OK; ++i)
    for (int t = 0; t < SKS_TEXTURE_SLOT_COUNT; ++t)
      if (m->materials[i].textures[t].image >= (int32_t)ni) bad(b, SKS_ERR_PARSE, "material image out of range");

  size_t nw = get_count(b, 8, "warning count");
  if (nw) {
    m->warnings = calloc(nw, sizeof(char *));
    if (!m->warnings) { bad(b, SKS_ERR_OUT_OF_MEMORY, "out of memory"); return; }
    m->warning_count = nw;
  }
  for (size_t i = 0; i < nw && b->r == SKS_OK; ++i) m->warnings[i] = get_str(b, 0);

  size_t nc = get_count(b, 8 + 4 + 8, "clip count");
  if (nc) {
    m->clips = calloc(nc, sizeof(sks_clip));
    if (!m->clips) { bad(b, SKS_ERR_OUT_OF_MEMORY, "out of memory"); return; }
    m->clip_count = nc;
  }
  for (size_t c = 0; c < nc && b->r == SKS_OK; ++c) {
    sks_clip *cl = &m->clips[c];
    cl->name = get_str(b, 1);
    take(b, &cl->duration, sizeof(float));
    size_t nt = get_count(b, 4 + 4 + 4 + 8, "track count");
    if (b->r != SKS_OK) break;
    if (nt) {
      cl->tracks = calloc(nt, sizeof(sks_track));
      if (!cl->tracks) { bad(b, SKS_ERR_OUT_OF_MEMORY, "out of memory"); break; }
      cl->track_count = nt;
    }
    for (size_t t = 0; t < nt && b->r == SKS_OK; ++t) {
      sks_track *tr = &cl->tracks[t];
      tr->joint = get_i32(b);
      uint32_t path = get_u32(b), interp = get_u32(b);
      size_t keys = get_count(b, sizeof(float), "key count");
      if (b->r != SKS_OK) break;
      if (tr->joint < 0 || (size_t)tr->joint >= nj || path > SKS_PATH_SCALE || interp > SKS_INTERP_CUBICSPLINE) {
        bad(b, SKS_ERR_PARSE, "track joint / path / interpolation");
        break;
      }
      tr->path = (sks_track_path)path;
      tr->interpolation = (sks_interpolation)interp;
      size_t per_key = sks_track_components(tr->path) * (interp == SKS_INTERP_CUBICSPLINE ? 3u : 1u);
      tr->times = get_array(b, keys, sizeof(float), "key times");
      tr->values = get_array(b, keys, per_key * sizeof(float), "key values");
      if (b->r != SKS_OK) break;
      tr->key_count = keys;
      for (size_t x = 1; x < keys; ++x)
        if (tr->times[x] < tr->times[x - 1]) { bad(b, SKS_ERR_PARSE, "key times not ascending"); break; }
    }
    size_t nmt = b->r == SKS_OK ? get_count(b, 4 + 4 + 8 + 8, "morph track count") : 0;
    if (b->r != SKS_OK) break;
    if (nmt) {
      cl->morph_tracks = calloc(nmt, sizeof(sks_morph_track));
      if (!cl->morph_tracks) { bad(b, SKS_ERR_OUT_OF_MEMORY, "out of memory"); break; }
    }
    for (size_t t = 0; t < nmt && b->r == SKS_OK; ++t) {
      sks_morph_track *tr = &cl->morph_tracks[t];
      int32_t node = get_i32(b);
      uint32_t interp = get_u32(b);
      uint64_t w = get_u64(b);
      size_t keys = get_count(b, sizeof(float), "morph key count");
      if (b->r != SKS_OK) break;
      if (node < 0 || (size_t)node >= nj || interp > SKS_INTERP_CUBICSPLINE || w == 0 ||
          w > SKS_MAX_MORPH_TRACK_VALUES || keys > SKS_MAX_MORPH_TRACK_VALUES / w / 3u) {
        bad(b, SKS_ERR_PARSE, "morph track node / interpolation / weight count");
        break;
      }
      for (size_t q = 0; q < cl->morph_track_count; ++q)
        if (cl->morph_tracks[q].node == node) { bad(b, SKS_ERR_PARSE, "two morph tracks on one node"); break; }
      if (b->r != SKS_OK) break;
      tr->node = node;
      tr->interpolation = (sks_interpolation)interp;
      tr->weight_count = (size_t)w;
      size_t per_key = (size_t)w * (interp == SKS_INTERP_CUBICSPLINE ? 3u : 1u);
      tr->times = get_array(b, keys, sizeof(float), "morph key times");
      tr->values = get_array(b, keys, per_key * sizeof(float), "morph key weights");
      ++cl->morph_track_count; /* owns what it got, freed on an error */
      if (b->r != SKS_OK) break;
      tr->key_count = keys;
      for (size_t x = 0; x < keys; ++x)
        if (!isfinite(tr->times[x]) || (x && tr->times[x] < tr->times[x - 1])) {
          bad(b, SKS_ERR_PARSE, "morph key times not finite and ascending");
          break;
        }
      for (size_t x = 0; b->r == SKS_OK && x < keys * per_key; ++x)
        if (!isfinite(tr->values[x])) { bad(b, SKS_ERR_PARSE, "a morph weight is not finite"); break; }
    }
  }
  char end[4];
  if (take(b, end, 4) && memcmp(end, WIRE_END, 4) != 0) bad(b, SKS_ERR_PARSE, "no end marker");
  if (b->r == SKS_OK && b->p != b->end) bad(b, SKS_ERR_PARSE, "trailing bytes");
}

sks_result sks_model_wire_decode(const void *bytes, size_t size, const char *name, sks_model *out,
                                 sks_error *err) {
  if (!out) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_model_wire_decode: out is NULL");
  memset(out, 0, sizeof *out);
  if (!name) name = "model";
  if (!bytes && size) return sks_error_set(err, SKS_ERR_ARGUMENT, "%s: sks_model_wire_decode: NULL bytes", name);
  static const uint8_t empty[1] = {0};
  const uint8_t *base = bytes ? (const uint8_t *)bytes : empty;
  rbuf b = {base, base, base + size, name, err, SKS_OK};
  decode(&b, out);
  if (b.r != SKS_OK) sks_model_free(out);
  return b.r;
}
