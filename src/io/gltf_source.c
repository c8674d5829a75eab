/* The kept glTF source document: fingerprints, free, clone (see gltf_source.h). */
#include "io/gltf_source.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

uint64_t sks_hash_bytes(uint64_t h, const void *data, size_t bytes) {
  const uint8_t *p = data;
  for (size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  /* the length too, so "" and absent differ from other prefixes */
  for (size_t k = 0; k < sizeof bytes; ++k) {
    h ^= (uint8_t)(bytes >> (8 * k));
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t sks_hash_joint_rest(const sks_transform *t) {
  return sks_hash_bytes(SKS_HASH_SEED, t, sizeof *t);
}

uint64_t sks_hash_parents(const sks_skeleton *sk) {
  return sks_hash_bytes(SKS_HASH_SEED, sk->parents, sk->joint_count * sizeof(int32_t));
}

uint64_t sks_hash_string(const char *s) {
  return s ? sks_hash_bytes(SKS_HASH_SEED, s, strlen(s)) : 0;
}

uint64_t sks_hash_skin_joints(const sks_skin *skin) {
  return sks_hash_bytes(SKS_HASH_SEED, skin->joints, skin->joint_count * sizeof(int32_t));
}

uint64_t sks_hash_skin_ibm(const sks_skin *skin) {
  return sks_hash_bytes(SKS_HASH_SEED, skin->inverse_bind, skin->joint_count * sizeof(sks_mat4));
}

static uint64_t hash_opt(const float *v, size_t n) {
  return v ? sks_hash_bytes(SKS_HASH_SEED, v, n * sizeof(float)) : 0;
}

uint64_t sks_hash_part_positions(const sks_mesh_part *p) { return hash_opt(p->positions, p->vertex_count * 3); }
uint64_t sks_hash_part_normals(const sks_mesh_part *p) { return hash_opt(p->normals, p->vertex_count * 3); }
uint64_t sks_hash_part_uvs(const sks_mesh_part *p) { return hash_opt(p->uvs, p->vertex_count * 2); }

uint64_t sks_hash_part_influences(const sks_mesh_part *p) {
  uint64_t h = sks_hash_bytes(SKS_HASH_SEED, &p->skin, sizeof p->skin);
  h = sks_hash_bytes(h, &p->influence_count, sizeof p->influence_count);
  size_t n = (size_t)p->influence_count * p->vertex_count;
  if (p->joints) h = sks_hash_bytes(h, p->joints, n * sizeof(uint16_t));
  if (p->weights) h = sks_hash_bytes(h, p->weights, n * sizeof(float));
  return h;
}

uint64_t sks_hash_part_indices(const sks_mesh_part *p) {
  return p->indices ? sks_hash_bytes(SKS_HASH_SEED, p->indices, p->index_count * sizeof(uint32_t)) : 0;
}

uint64_t sks_hash_clip(const sks_clip *clip) {
  uint64_t h = sks_hash_bytes(SKS_HASH_SEED, clip->name ? clip->name : "", clip->name ? strlen(clip->name) : 0);
  h = sks_hash_bytes(h, &clip->track_count, sizeof clip->track_count);
  for (size_t t = 0; t < clip->track_count; ++t) {
    const sks_track *tr = &clip->tracks[t];
    int32_t head[3] = {tr->joint, (int32_t)tr->path, (int32_t)tr->interpolation};
    h = sks_hash_bytes(h, head, sizeof head);
    size_t nv = tr->key_count * sks_track_components(tr->path) *
                (tr->interpolation == SKS_INTERP_CUBICSPLINE ? 3u : 1u);
    if (tr->times) h = sks_hash_bytes(h, tr->times, tr->key_count * sizeof(float));
    if (tr->values) h = sks_hash_bytes(h, tr->values, nv * sizeof(float));
  }
  if (clip->morph_track_count) { /* a clip without morph tracks hashes as before */
    h = sks_hash_bytes(h, &clip->morph_track_count, sizeof clip->morph_track_count);
    for (size_t t = 0; t < clip->morph_track_count; ++t) {
      const sks_morph_track *tr = &clip->morph_tracks[t];
      int32_t head[2] = {tr->node, (int32_t)tr->interpolation};
      h = sks_hash_bytes(h, head, sizeof head);
      h = sks_hash_bytes(h, &tr->weight_count, sizeof tr->weight_count);
      if (tr->times) h = sks_hash_bytes(h, tr->times, tr->key_count * sizeof(float));
      if (tr->values) h = sks_hash_bytes(h, tr->values, sks_morph_track_value_count(tr) * sizeof(float));
    }
  }
  return h;
}

#define ALLOC(ptr, n) ((ptr) = calloc((n) ? (n) : 1, sizeof *(ptr)), (ptr) != NULL)

int sks_gltf_source_snapshot(sks_gltf_source *src, const sks_model *m) {
  const sks_skeleton *sk = &m->skeleton;
  src->joint_count = sk->joint_count;
  src->parents_hash = sks_hash_parents(sk);
  if (!ALLOC(src->joint_name_hash, sk->joint_count) || !ALLOC(src->joint_rest_hash, sk->joint_count))
    return 0;
  for (size_t j = 0; j < sk->joint_count; ++j) {
    src->joint_name_hash[j] = sks_hash_string(sk->names[j]);
    src->joint_rest_hash[j] = sks_hash_joint_rest(&sk->rest[j]);
  }
  src->skin_count = m->skin_count;
  if (!ALLOC(src->skin_joints_hash, m->skin_count) || !ALLOC(src->skin_ibm_hash, m->skin_count)) return 0;
  for (size_t k = 0; k < m->skin_count; ++k) {
    src->skin_joints_hash[k] = sks_hash_skin_joints(&m->skins[k]);
    src->skin_ibm_hash[k] = sks_hash_skin_ibm(&m->skins[k]);
  }
  size_t np = m->part_count;
  src->part_count = np;
  if (!ALLOC(src->part_vertices, np) || !ALLOC(src->part_pos_hash, np) || !ALLOC(src->part_nrm_hash, np) ||
      !ALLOC(src->part_uv_hash, np) || !ALLOC(src->part_infl_hash, np) || !ALLOC(src->part_idx_hash, np) ||
      !ALLOC(src->part_material, np))
    return 0;
  for (size_t p = 0; p < np; ++p) {
    const sks_mesh_part *part = &m->parts[p];
    src->part_vertices[p] = part->vertex_count;
    src->part_pos_hash[p] = sks_hash_part_positions(part);
    src->part_nrm_hash[p] = sks_hash_part_normals(part);
    src->part_uv_hash[p] = sks_hash_part_uvs(part);
    src->part_infl_hash[p] = sks_hash_part_influences(part);
    src->part_idx_hash[p] = sks_hash_part_indices(part);
    src->part_material[p] = part->material;
  }
  src->clip_count = m->clip_count;
  if (!ALLOC(src->clip_hash, m->clip_count)) return 0;
  for (size_t c = 0; c < m->clip_count; ++c) src->clip_hash[c] = sks_hash_clip(&m->clips[c]);
  return 1;
}

void sks_gltf_source_free(sks_gltf_source *src) {
  if (!src) return;
  free(src->json);
  for (size_t i = 0; src->buffers && i < src->buffer_count; ++i) free(src->buffers[i]);
  free(src->buffers);
  free(src->buffer_sizes);
  for (size_t i = 0; src->images && i < src->image_count; ++i) free(src->images[i]);
  free(src->images);
  free(src->image_sizes);
  free(src->node_joint);
  free(src->joint_name_hash); free(src->joint_rest_hash);
  free(src->skin_joints_hash); free(src->skin_ibm_hash);
  free(src->part_mesh); free(src->part_prim); free(src->part_vertices);
  free(src->part_pos_hash); free(src->part_nrm_hash); free(src->part_uv_hash);
  free(src->part_infl_hash); free(src->part_idx_hash); free(src->part_material);
  free(src->clip_hash);
  free(src->clip_anim);
  free(src);
}

static void *dup(const void *p, size_t bytes, int *fail) {
  if (!p) return NULL;
  void *d = malloc(bytes ? bytes : 1);
  if (!d) { *fail = 1; return NULL; }
  if (bytes) memcpy(d, p, bytes);
  return d;
}

sks_gltf_source *sks_gltf_source_clone(const sks_gltf_source *s) {
  if (!s) return NULL;
  sks_gltf_source *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  int fail = 0;
  *d = *s;
  d->json = dup(s->json, s->json_len + 1, &fail);
  d->buffers = NULL; d->images = NULL;
  d->buffers = s->buffers ? calloc(s->buffer_count ? s->buffer_count : 1, sizeof *d->buffers) : NULL;
  if (s->buffers && !d->buffers) fail = 1;
  for (size_t i = 0; !fail && d->buffers && i < s->buffer_count; ++i)
    d->buffers[i] = dup(s->buffers[i], s->buffer_sizes[i], &fail);
  d->buffer_sizes = dup(s->buffer_sizes, s->buffer_count * sizeof(size_t), &fail);
  d->images = s->images ? calloc(s->image_count ? s->image_count : 1, sizeof *d->images) : NULL;
  if (s->images && !d->images) fail = 1;
  for (size_t i = 0; !fail && d->images && i < s->image_count; ++i)
    d->images[i] = dup(s->images[i], s->image_sizes[i], &fail);
  d->image_sizes = dup(s->image_sizes, s->image_count * sizeof(size_t), &fail);
  d->node_joint = dup(s->node_joint, s->node_count * sizeof(int32_t), &fail);
  size_t jc = s->joint_count, kc = s->skin_count, pc = s->part_count;
  d->joint_name_hash = dup(s->joint_name_hash, jc * sizeof(uint64_t), &fail);
  d->joint_rest_hash = dup(s->joint_rest_hash, jc * sizeof(uint64_t), &fail);
  d->skin_joints_hash = dup(s->skin_joints_hash, kc * sizeof(uint64_t), &fail);
  d->skin_ibm_hash = dup(s->skin_ibm_hash, kc * sizeof(uint64_t), &fail);
  d->part_mesh = dup(s->part_mesh, pc * sizeof(int32_t), &fail);
  d->part_prim = dup(s->part_prim, pc * sizeof(int32_t), &fail);
  d->part_vertices = dup(s->part_vertices, pc * sizeof(size_t), &fail);
  d->part_pos_hash = dup(s->part_pos_hash, pc * sizeof(uint64_t), &fail);
  d->part_nrm_hash = dup(s->part_nrm_hash, pc * sizeof(uint64_t), &fail);
  d->part_uv_hash = dup(s->part_uv_hash, pc * sizeof(uint64_t), &fail);
  d->part_infl_hash = dup(s->part_infl_hash, pc * sizeof(uint64_t), &fail);
  d->part_idx_hash = dup(s->part_idx_hash, pc * sizeof(uint64_t), &fail);
  d->part_material = dup(s->part_material, pc * sizeof(int32_t), &fail);
  d->clip_hash = dup(s->clip_hash, s->clip_count * sizeof(uint64_t), &fail);
  d->clip_anim = s->clip_anim ? dup(s->clip_anim, s->clip_count * sizeof(int32_t), &fail) : NULL;
  if (fail) {
    /* every pointer field was re-assigned above (a copy or NULL): nothing aliases s */
    sks_gltf_source_free(d);
    return NULL;
  }
  return d;
}

int sks_gltf_source_view_outside(const sks_gltf_source *src, const cJSON *view, double *offset, double *length,
                                 char *why, size_t why_size) {
  const cJSON *bj = cJSON_GetObjectItemCaseSensitive(view, "buffer");
  const cJSON *oj = cJSON_GetObjectItemCaseSensitive(view, "byteOffset");
  const cJSON *lj = cJSON_GetObjectItemCaseSensitive(view, "byteLength");
  const int index_ok = cJSON_IsNumber(bj) && bj->valuedouble >= 0 && bj->valuedouble < (double)src->buffer_count;
  const size_t b = index_ok ? (size_t)bj->valuedouble : 0;
  if (index_ok && !src->buffers[b]) return 0;
  const double have = index_ok ? (double)src->buffer_sizes[b] : 0;
  double off = cJSON_IsNumber(oj) ? oj->valuedouble : 0, len = cJSON_IsNumber(lj) ? lj->valuedouble : 0;
  if (!(off >= 0)) off = 0;
  if (!(len >= 0)) len = 0;
  *offset = off;
  *length = len;
  if (off <= have && len <= have - off) return 0;
  if (index_ok) snprintf(why, why_size, "lies outside buffer %zu (%zu bytes)", b, src->buffer_sizes[b]);
  else snprintf(why, why_size, "has no buffer (\"buffer\" is not an index below %zu)", src->buffer_count);
  return 1;
}
