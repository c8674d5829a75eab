/* The model: ownership, lookup, counts, bind-pose diagonal. */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "skinsolve/rig.h"
#include "skinsolve/pose.h"
#include "math/sks_math.h"
#include "io/gltf_source.h"

void sks_clip_free(sks_clip *clip) {
  if (!clip) return;
  for (size_t i = 0; i < clip->track_count; ++i) {
    free(clip->tracks[i].times);
    free(clip->tracks[i].values);
  }
  free(clip->tracks);
  for (size_t i = 0; i < clip->morph_track_count; ++i) {
    free(clip->morph_tracks[i].times);
    free(clip->morph_tracks[i].values);
  }
  free(clip->morph_tracks);
  free(clip->name);
  memset(clip, 0, sizeof *clip);
}

void sks_model_free(sks_model *model) {
  if (!model) return;
  sks_skeleton *sk = &model->skeleton;
  if (sk->names)
    for (size_t i = 0; i < sk->joint_count; ++i) free(sk->names[i]);
  free(sk->names);
  free(sk->parents);
  free(sk->rest);
  for (size_t i = 0; i < model->skin_count; ++i) {
    free(model->skins[i].name);
    free(model->skins[i].joints);
    free(model->skins[i].inverse_bind);
  }
  free(model->skins);
  for (size_t i = 0; i < model->part_count; ++i) {
    sks_mesh_part *p = &model->parts[i];
    free(p->name); free(p->positions); free(p->normals); free(p->uvs); free(p->tangents); free(p->uvs1);
    free(p->joints); free(p->weights); free(p->indices);
    for (size_t t = 0; p->morph_targets && t < p->morph_target_count; ++t) {
      sks_morph_target *mt = &p->morph_targets[t];
      free(mt->name); free(mt->position_deltas); free(mt->normal_deltas); free(mt->tangent_deltas);
    }
    free(p->morph_targets);
  }
  free(model->parts);
  for (size_t i = 0; i < model->material_count; ++i) free(model->materials[i].name);
  free(model->materials);
  for (size_t i = 0; i < model->image_count; ++i) {
    free(model->images[i].name); free(model->images[i].mime_type); free(model->images[i].data);
  }
  free(model->images);
  for (size_t i = 0; i < model->warning_count; ++i) free(model->warnings[i]);
  free(model->warnings);
  for (size_t i = 0; i < model->clip_count; ++i) sks_clip_free(&model->clips[i]);
  free(model->clips);
  free(model->source_path);
  sks_gltf_source_free(model->gltf_source);
  memset(model, 0, sizeof *model);
}

static char *dup_str(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static void *dup_mem(const void *p, size_t bytes, int *fail) {
  if (!p || bytes == 0) return NULL;
  void *d = malloc(bytes);
  if (!d) { *fail = 1; return NULL; }
  memcpy(d, p, bytes);
  return d;
}

sks_result sks_model_clone(const sks_model *src, sks_model *dst, sks_error *err) {
  int fail = 0;
  memset(dst, 0, sizeof *dst);
  dst->source_path = dup_str(src->source_path);
  if (src->gltf_source && !(dst->gltf_source = sks_gltf_source_clone(src->gltf_source))) fail = 1;
  const sks_skeleton *s = &src->skeleton;
  dst->skeleton.joint_count = s->joint_count;
  dst->skeleton.names = s->joint_count ? calloc(s->joint_count, sizeof(char *)) : NULL;
  if (s->joint_count && !dst->skeleton.names) fail = 1;
  for (size_t i = 0; !fail && i < s->joint_count; ++i) {
    dst->skeleton.names[i] = dup_str(s->names[i] ? s->names[i] : "");
    if (!dst->skeleton.names[i]) fail = 1;
  }
  dst->skeleton.parents = dup_mem(s->parents, s->joint_count * sizeof(int32_t), &fail);
  dst->skeleton.rest = dup_mem(s->rest, s->joint_count * sizeof(sks_transform), &fail);

  if (src->skin_count) {
    dst->skins = calloc(src->skin_count, sizeof(sks_skin));
    if (!dst->skins) fail = 1; else dst->skin_count = src->skin_count;
  }
  for (size_t i = 0; !fail && i < src->skin_count; ++i) {
    const sks_skin *a = &src->skins[i];
    sks_skin *b = &dst->skins[i];
    b->name = dup_str(a->name);
    b->joint_count = a->joint_count;
    b->joints = dup_mem(a->joints, a->joint_count * sizeof(int32_t), &fail);
    b->inverse_bind = dup_mem(a->inverse_bind, a->joint_count * sizeof(sks_mat4), &fail);
  }
  if (src->part_count) {
    dst->parts = calloc(src->part_count, sizeof(sks_mesh_part));
    if (!dst->parts) fail = 1; else dst->part_count = src->part_count;
  }
  for (size_t i = 0; !fail && i < src->part_count; ++i) {
    const sks_mesh_part *a = &src->parts[i];
    sks_mesh_part *b = &dst->parts[i];
    *b = *a;
    b->name = dup_str(a->name);
    size_t v = a->vertex_count, k = a->influence_count;
    b->positions = dup_mem(a->positions, v * 3 * sizeof(float), &fail);
    b->normals = dup_mem(a->normals, v * 3 * sizeof(float), &fail);
    b->uvs = dup_mem(a->uvs, v * 2 * sizeof(float), &fail);
    b->tangents = dup_mem(a->tangents, v * 4 * sizeof(float), &fail);
    b->uvs1 = dup_mem(a->uvs1, v * 2 * sizeof(float), &fail);
    b->morph_targets = NULL;
    b->morph_target_count = 0;
    if (a->morph_target_count && a->morph_targets) {
      b->morph_targets = calloc(a->morph_target_count, sizeof *b->morph_targets);
      if (!b->morph_targets) fail = 1; else b->morph_target_count = a->morph_target_count;
    }
    for (size_t t = 0; b->morph_targets && t < b->morph_target_count; ++t) {
      const sks_morph_target *x = &a->morph_targets[t];
      sks_morph_target *y = &b->morph_targets[t];
      y->name = dup_str(x->name);
      if (x->name && !y->name) fail = 1;
      y->default_weight = x->default_weight;
      y->position_deltas = dup_mem(x->position_deltas, v * 3 * sizeof(float), &fail);
      y->normal_deltas = dup_mem(x->normal_deltas, v * 3 * sizeof(float), &fail);
      y->tangent_deltas = dup_mem(x->tangent_deltas, v * 3 * sizeof(float), &fail);
    }
    b->joints = dup_mem(a->joints, v * k * sizeof(uint16_t), &fail);
    b->weights = dup_mem(a->weights, v * k * sizeof(float), &fail);
    b->indices = dup_mem(a->indices, a->index_count * sizeof(uint32_t), &fail);
  }
  if (src->material_count) {
    dst->materials = calloc(src->material_count, sizeof(sks_material));
    if (!dst->materials) fail = 1; else dst->material_count = src->material_count;
  }
  for (size_t i = 0; !fail && i < src->material_count; ++i) {
    dst->materials[i] = src->materials[i];
    dst->materials[i].name = dup_str(src->materials[i].name);
    if (src->materials[i].name && !dst->materials[i].name) fail = 1;
  }
  if (src->image_count) {
    dst->images = calloc(src->image_count, sizeof(sks_image));
    if (!dst->images) fail = 1; else dst->image_count = src->image_count;
  }
  for (size_t i = 0; !fail && i < src->image_count; ++i) {
    const sks_image *a = &src->images[i];
    sks_image *b = &dst->images[i];
    b->name = dup_str(a->name);
    b->mime_type = dup_str(a->mime_type);
    b->size = a->size;
    b->data = dup_mem(a->data, a->size, &fail);
    if ((a->name && !b->name) || (a->mime_type && !b->mime_type)) fail = 1;
  }
  if (src->warning_count) {
    dst->warnings = calloc(src->warning_count, sizeof(char *));
    if (!dst->warnings) fail = 1; else dst->warning_count = src->warning_count;
  }
  for (size_t i = 0; !fail && i < src->warning_count; ++i)
    if (!(dst->warnings[i] = dup_str(src->warnings[i] ? src->warnings[i] : ""))) fail = 1;
  if (src->clip_count) {
    dst->clips = calloc(src->clip_count, sizeof(sks_clip));
    if (!dst->clips) fail = 1; else dst->clip_count = src->clip_count;
  }
  for (size_t i = 0; !fail && i < src->clip_count; ++i) {
    const sks_clip *a = &src->clips[i];
    sks_clip *b = &dst->clips[i];
    b->name = dup_str(a->name);
    b->duration = a->duration;
    if (a->track_count) {
      b->tracks = calloc(a->track_count, sizeof(sks_track));
      if (!b->tracks) { fail = 1; break; }
      b->track_count = a->track_count;
    }
    for (size_t t = 0; !fail && t < a->track_count; ++t) {
      const sks_track *ta = &a->tracks[t];
      sks_track *tb = &b->tracks[t];
      *tb = *ta;
      size_t comps = sks_track_components(ta->path);
      size_t nv = ta->key_count * comps * (ta->interpolation == SKS_INTERP_CUBICSPLINE ? 3 : 1);
      tb->times = dup_mem(ta->times, ta->key_count * sizeof(float), &fail);
      tb->values = dup_mem(ta->values, nv * sizeof(float), &fail);
    }
    if (!fail && a->morph_track_count) {
      b->morph_tracks = calloc(a->morph_track_count, sizeof(sks_morph_track));
      if (!b->morph_tracks) { fail = 1; break; }
      b->morph_track_count = a->morph_track_count;
    }
    for (size_t t = 0; !fail && t < a->morph_track_count; ++t) {
      const sks_morph_track *ta = &a->morph_tracks[t];
      sks_morph_track *tb = &b->morph_tracks[t];
      *tb = *ta;
      tb->times = dup_mem(ta->times, ta->key_count * sizeof(float), &fail);
      tb->values = dup_mem(ta->values, sks_morph_track_value_count(ta) * sizeof(float), &fail);
    }
  }
  if (fail) {
    sks_model_free(dst);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory while copying a model");
  }
  return SKS_OK;
}

int32_t sks_skeleton_find(const sks_skeleton *skeleton, const char *name) {
  if (!skeleton || !name) return -1;
  for (size_t i = 0; i < skeleton->joint_count; ++i)
    if (skeleton->names[i] && strcmp(skeleton->names[i], name) == 0) return (int32_t)i;
  return -1;
}

int32_t sks_clip_find(const sks_clip *clips, size_t clip_count, const char *name) {
  if (!clips || !name) return -1;
  for (size_t i = 0; i < clip_count; ++i)
    if (clips[i].name && strcmp(clips[i].name, name) == 0) return (int32_t)i;
  return -1;
}

/* Whether `name` occurs in `s` as a word (ASCII case-insensitive, no letter
 * or digit on either side) with nothing before it but s's first `pre`
 * characters and nothing after it but its last `suf` (SIZE_MAX, SIZE_MAX:
 * anywhere in s). */
static int word_between(const char *s, const char *name, size_t pre, size_t suf) {
  size_t n = strlen(name), m = strlen(s);
  if (n == 0 || n > m) return 0;
  for (size_t i = 0; i <= pre && i + n <= m; ++i) {
    if (m - i - n > suf) continue;
    if (i > 0 && isalnum((unsigned char)s[i - 1])) continue;
    if (i + n < m && isalnum((unsigned char)s[i + n])) continue;
    size_t k = 0;
    while (k < n && tolower((unsigned char)s[i + k]) == tolower((unsigned char)name[k])) ++k;
    if (k == n) return 1;
  }
  return 0;
}

int32_t sks_clip_find_loose(const sks_clip *clips, size_t clip_count, const char *name, size_t *matches) {
  if (matches) *matches = 0;
  int32_t exact = sks_clip_find(clips, clip_count, name);
  if (exact >= 0 || !clips || !name) {
    if (matches && exact >= 0) *matches = 1;
    return exact;
  }
  /* the prefix and suffix every named clip shares ("root|", "_root.001":
   * what an exporter adds to every clip name) */
  size_t pre = SIZE_MAX, suf = SIZE_MAX;
  const char *first = NULL;
  for (size_t i = 0; i < clip_count; ++i) {
    const char *s = clips[i].name;
    if (!s) continue;
    if (!first) { first = s; pre = suf = strlen(s); continue; }
    size_t a = strlen(first), b = strlen(s), k = 0;
    while (k < pre && k < b && first[k] == s[k]) ++k;
    pre = k;
    for (k = 0; k < suf && k < b && first[a - 1 - k] == s[b - 1 - k]; ++k) {}
    suf = k;
  }
  int32_t found = -1, framed = -1;
  size_t count = 0, framed_count = 0;
  for (size_t i = 0; i < clip_count; ++i) {
    if (!clips[i].name || !word_between(clips[i].name, name, SIZE_MAX, SIZE_MAX)) continue;
    found = (int32_t)i;
    ++count;
    if (word_between(clips[i].name, name, pre, suf)) { framed = (int32_t)i; ++framed_count; }
  }
  /* several hold the name ("idle" in "idle_root.001", "fight_idle_root.001"
   * and "idle_to_fight_root.001"): the one whose name is the shared prefix,
   * the name and the shared suffix, when exactly one is */
  if (count > 1 && framed_count == 1) {
    if (matches) *matches = 1;
    return framed;
  }
  if (matches) *matches = count;
  return count == 1 ? found : -1;
}

uint32_t sks_track_components(sks_track_path path) { return path == SKS_PATH_ROTATION ? 4u : 3u; }

size_t sks_model_vertex_count(const sks_model *model) {
  size_t n = 0;
  for (size_t i = 0; i < model->part_count; ++i)
    if (model->parts[i].skin >= 0) n += model->parts[i].vertex_count;
  return n;
}

double sks_model_bind_diagonal(const sks_model *model) {
  double lo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, hi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
  size_t jc = model->skeleton.joint_count;
  sks_mat4 *models = jc ? malloc(jc * sizeof(sks_mat4)) : NULL;
  if (models) {
    sks_local_to_model_job job = {model->skeleton.parents, model->skeleton.rest, jc, NULL, models};
    if (!sks_local_to_model_job_run(&job)) { free(models); models = NULL; }
  }
  int any = 0;
  for (size_t i = 0; i < model->part_count; ++i) {
    const sks_mesh_part *p = &model->parts[i];
    int rigid = p->skin < 0;
    if (rigid && (!models || p->node < 0 || (size_t)p->node >= jc)) continue;
    for (size_t v = 0; v < p->vertex_count; ++v) {
      sks_vec3 x = sks_v3(p->positions[3 * v], p->positions[3 * v + 1], p->positions[3 * v + 2]);
      if (rigid) x = sks_m4_point(&models[p->node], x);
      const float c[3] = {x.x, x.y, x.z};
      for (int k = 0; k < 3; ++k) {
        if (!isfinite(c[k])) continue;
        if (c[k] < lo[k]) lo[k] = c[k];
        if (c[k] > hi[k]) hi[k] = c[k];
        any = 1;
      }
    }
  }
  free(models);
  if (!any) return 0.0;
  double dx = hi[0] - lo[0], dy = hi[1] - lo[1], dz = hi[2] - lo[2];
  return sqrt(dx * dx + dy * dy + dz * dz);
}

void sks_material_init(sks_material *mat) {
  memset(mat, 0, sizeof *mat);
  for (int k = 0; k < 4; ++k) mat->base_color[k] = 1.0f;
  mat->metallic = mat->roughness = 1.0f;
  mat->normal_scale = mat->occlusion_strength = mat->emissive_strength = mat->clearcoat_normal_scale = 1.0f;
  for (int t = 0; t < SKS_TEXTURE_SLOT_COUNT; ++t) mat->textures[t].image = -1;
}

int sks_texture_ref_valid(const sks_texture_ref *t) {
  int mag = t->mag_filter, min = t->min_filter, ws = t->wrap_s, wt = t->wrap_t;
  int wrap_ok = (ws == 0 || ws == 33071 || ws == 33648 || ws == 10497) &&
                (wt == 0 || wt == 33071 || wt == 33648 || wt == 10497);
  return t->image >= -1 && (t->tex_coord == 0 || t->tex_coord == 1) && (mag == 0 || mag == 9728 || mag == 9729) &&
         (min == 0 || min == 9728 || min == 9729 || (min >= 9984 && min <= 9987)) && wrap_ok;
}
