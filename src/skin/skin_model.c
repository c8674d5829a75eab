/* Whole-model skinning (every part, skinned or rigid) and the static
 * pre-transform of seed 002 (bake one pose into the vertices, drop skins). */
#include <stdlib.h>
#include <string.h>
#include "skinsolve/skin.h"
#include "skinsolve/pose.h"
#include "math/sks_math.h"

size_t sks_model_total_vertex_count(const sks_model *model) {
  size_t n = 0;
  if (!model) return 0;
  for (size_t i = 0; i < model->part_count; ++i) n += model->parts[i].vertex_count;
  return n;
}

static const char *model_name(const sks_model *model) {
  return model->source_path ? model->source_path : "model";
}

/* Rigid part: positions by model[node]; normals by the inverse transpose of
 * its 3x3 (exact even when the node carries non-uniform scale), renormalised. */
static void rigid_part(const sks_mesh_part *p, const sks_mat4 *m, float *out_pos, float *out_nrm) {
  for (size_t v = 0; v < p->vertex_count; ++v) {
    sks_vec3 x = sks_m4_point(m, sks_v3(p->positions[3 * v], p->positions[3 * v + 1], p->positions[3 * v + 2]));
    out_pos[3 * v] = x.x; out_pos[3 * v + 1] = x.y; out_pos[3 * v + 2] = x.z;
  }
  if (!out_nrm) return;
  if (!p->normals) {
    memset(out_nrm, 0, p->vertex_count * 3 * sizeof(float));
    return;
  }
  sks_mat4 inv, nm;
  if (sks_m4_inverse(m, &inv)) {
    /* transpose of the inverse's 3x3 */
    nm = sks_m4_identity();
    for (int c = 0; c < 3; ++c)
      for (int r = 0; r < 3; ++r) nm.m[c * 4 + r] = inv.m[r * 4 + c];
  } else {
    nm = *m;
  }
  for (size_t v = 0; v < p->vertex_count; ++v) {
    sks_vec3 n = sks_m4_vector(&nm, sks_v3(p->normals[3 * v], p->normals[3 * v + 1], p->normals[3 * v + 2]));
    n = sks_v3_normalize(n);
    out_nrm[3 * v] = n.x; out_nrm[3 * v + 1] = n.y; out_nrm[3 * v + 2] = n.z;
  }
}

/* Skins one part into out_pos / out_nrm (3 floats per vertex). palette has
 * room for the largest skin. */
static sks_result skin_part(const sks_model *model, size_t pi, const sks_mat4 *models,
                            sks_skinning_method method, sks_mat4 *palette, float *out_pos,
                            float *out_nrm, sks_error *err) {
  const sks_mesh_part *p = &model->parts[pi];
  const size_t jc = model->skeleton.joint_count;
  if (p->vertex_count == 0) return SKS_OK;
  if (!p->positions)
    return sks_error_set(err, SKS_ERR_INVALID, "%s: part %zu '%s': no positions", model_name(model), pi,
                         p->name ? p->name : "");
  if (p->skin < 0) {
    if (p->node < 0 || (size_t)p->node >= jc)
      return sks_error_set(err, SKS_ERR_INVALID, "%s: part %zu '%s': rigid part node %d is not a joint (%zu joints)",
                           model_name(model), pi, p->name ? p->name : "", p->node, jc);
    rigid_part(p, &models[p->node], out_pos, out_nrm);
    return SKS_OK;
  }
  if ((size_t)p->skin >= model->skin_count)
    return sks_error_set(err, SKS_ERR_INVALID, "%s: part %zu '%s': skin %d does not exist (%zu skins)",
                         model_name(model), pi, p->name ? p->name : "", p->skin, model->skin_count);
  const sks_skin *skin = &model->skins[p->skin];
  sks_palette_job pj = {skin, models, jc, palette};
  if (!sks_palette_job_run(&pj))
    return sks_error_set(err, SKS_ERR_INVALID, "%s: skin %d '%s': a joint index is outside the skeleton (%zu joints)",
                         model_name(model), p->skin, skin->name ? skin->name : "", jc);
  sks_skinning_job sj;
  memset(&sj, 0, sizeof sj);
  sj.method = method;
  sj.vertex_count = p->vertex_count;
  sj.influence_count = p->influence_count;
  sj.palette = palette;
  sj.palette_count = skin->joint_count;
  sj.joints = p->joints;
  sj.weights = p->weights;
  sj.in_positions = p->positions;
  sj.out_positions = out_pos;
  if (out_nrm && p->normals) {
    sj.in_normals = p->normals;
    sj.out_normals = out_nrm;
  }
  if (!sks_skinning_job_run(&sj))
    return sks_error_set(err, SKS_ERR_INVALID,
                         "%s: part %zu '%s': cannot skin (influence count %u, skin %d with %zu joints): "
                         "a joint index is out of range or a buffer is missing — run `skinsolve check`",
                         model_name(model), pi, p->name ? p->name : "", p->influence_count, p->skin,
                         skin->joint_count);
  if (out_nrm && !p->normals) memset(out_nrm, 0, p->vertex_count * 3 * sizeof(float));
  return SKS_OK;
}

static size_t max_skin_joints(const sks_model *model) {
  size_t m = 0;
  for (size_t i = 0; i < model->skin_count; ++i)
    if (model->skins[i].joint_count > m) m = model->skins[i].joint_count;
  return m;
}

sks_result sks_skin_model(const sks_model *model, const sks_mat4 *models, sks_skinning_method method,
                          float *out_positions, float *out_normals, sks_error *err) {
  if (!model || !models || !out_positions)
    return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_skin_model: NULL model, model matrices or output");
  size_t pal_n = max_skin_joints(model);
  sks_mat4 *palette = pal_n ? malloc(pal_n * sizeof(sks_mat4)) : NULL;
  if (pal_n && !palette)
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory for a %zu-joint palette",
                         model_name(model), pal_n);
  size_t off = 0;
  sks_result r = SKS_OK;
  for (size_t i = 0; i < model->part_count && r == SKS_OK; ++i) {
    r = skin_part(model, i, models, method, palette, out_positions + 3 * off,
                  out_normals ? out_normals + 3 * off : NULL, err);
    off += model->parts[i].vertex_count;
  }
  free(palette);
  return r;
}

sks_result sks_pretransform_static(sks_model *model, const sks_mat4 *models, sks_error *err) {
  if (!model || !models)
    return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_pretransform_static: NULL model or model matrices");
  const size_t np = model->part_count;
  /* Compute every new buffer first, so a failure leaves the model untouched. */
  float **pos = np ? calloc(np, sizeof(float *)) : NULL;
  float **nrm = np ? calloc(np, sizeof(float *)) : NULL;
  size_t pal_n = max_skin_joints(model);
  sks_mat4 *palette = pal_n ? malloc(pal_n * sizeof(sks_mat4)) : NULL;
  const size_t jc = model->skeleton.joint_count;
  char *root_name = malloc(32);
  char **names = malloc((jc + 1) * sizeof(char *));
  int32_t *parents = malloc((jc + 1) * sizeof(int32_t));
  sks_transform *rest = malloc((jc + 1) * sizeof(sks_transform));
  sks_result r = SKS_OK;
  if ((np && (!pos || !nrm)) || (pal_n && !palette) || !root_name || !names || !parents || !rest)
    r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory pre-transforming", model_name(model));
  for (size_t i = 0; r == SKS_OK && i < np; ++i) {
    const sks_mesh_part *p = &model->parts[i];
    if (p->vertex_count == 0) continue;
    pos[i] = malloc(p->vertex_count * 3 * sizeof(float));
    nrm[i] = p->normals ? malloc(p->vertex_count * 3 * sizeof(float)) : NULL;
    if (!pos[i] || (p->normals && !nrm[i])) {
      r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory pre-transforming part %zu",
                        model_name(model), i);
      break;
    }
    r = skin_part(model, i, models, SKS_SKIN_LBS, palette, pos[i], nrm[i], err);
  }
  if (r != SKS_OK) {
    for (size_t i = 0; pos && i < np; ++i) free(pos[i]);
    for (size_t i = 0; nrm && i < np; ++i) free(nrm[i]);
    free(pos); free(nrm); free(palette); free(root_name); free(names); free(parents); free(rest);
    return r;
  }
  /* Append an identity root joint that every part now follows. */
  if (jc) {
    memcpy(names, model->skeleton.names, jc * sizeof(char *));
    memcpy(parents, model->skeleton.parents, jc * sizeof(int32_t));
    memcpy(rest, model->skeleton.rest, jc * sizeof(sks_transform));
  }
  strcpy(root_name, "static_root");
  names[jc] = root_name;
  parents[jc] = -1;
  rest[jc] = sks_transform_identity();
  free(model->skeleton.names);
  free(model->skeleton.parents);
  free(model->skeleton.rest);
  model->skeleton.names = names;
  model->skeleton.parents = parents;
  model->skeleton.rest = rest;
  model->skeleton.joint_count = jc + 1;
  for (size_t i = 0; i < np; ++i) {
    sks_mesh_part *p = &model->parts[i];
    if (pos[i]) { free(p->positions); p->positions = pos[i]; }
    if (nrm[i]) { free(p->normals); p->normals = nrm[i]; }
    free(p->joints); p->joints = NULL;
    free(p->weights); p->weights = NULL;
    p->influence_count = 0;
    p->skin = -1;
    p->node = (int32_t)jc;
  }
  for (size_t i = 0; i < model->skin_count; ++i) {
    free(model->skins[i].name);
    free(model->skins[i].joints);
    free(model->skins[i].inverse_bind);
  }
  free(model->skins);
  model->skins = NULL;
  model->skin_count = 0;
  free(pos); free(nrm); free(palette);
  return SKS_OK;
}
