/* Tangents for normal maps: a glTF TANGENT attribute for parts whose file
 * has none (a converted FBX / Collada / X whose material has a normal map;
 * the Khronos validator otherwise reports the tangent space as missing). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "skinsolve/rig.h"

/* A unit vector orthogonal to the unit n. */
static void any_orthogonal(const double n[3], double t[3]) {
  const double a[3] = {fabs(n[0]) < 0.9 ? 1.0 : 0.0, fabs(n[0]) < 0.9 ? 0.0 : 1.0, 0.0};
  const double d = a[0] * n[0] + a[1] * n[1] + a[2] * n[2];
  double l = 0;
  for (int k = 0; k < 3; ++k) t[k] = a[k] - d * n[k], l += t[k] * t[k];
  l = sqrt(l);
  for (int k = 0; k < 3; ++k) t[k] /= l;
}

sks_result sks_mesh_part_generate_tangents(sks_mesh_part *part, int uv_set, sks_error *err) {
  if (!part) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_mesh_part_generate_tangents: part is NULL");
  const char *name = part->name ? part->name : "";
  const float *uv = uv_set == 0 ? part->uvs : uv_set == 1 ? part->uvs1 : NULL;
  if (!part->normals || !uv || part->tangents || !part->positions)
    return sks_error_set(err, SKS_ERR_ARGUMENT,
                         "part '%s': tangents need positions, normals and UV set %d, and none given (%s)", name,
                         uv_set, part->tangents ? "it has tangents" : "something is missing");
  const size_t nv = part->vertex_count;
  if (nv == 0) return SKS_OK;
  double *acc = calloc(6 * nv, sizeof *acc); /* per vertex: sum of +u directions, sum of +v directions */
  float *out = malloc(4 * nv * sizeof *out);
  if (!acc || !out) {
    free(acc);
    free(out);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "part '%s': out of memory for tangents", name);
  }
  const float *P = part->positions;
  for (size_t t = 0; t + 2 < part->index_count; t += 3) {
    const uint32_t i0 = part->indices[t], i1 = part->indices[t + 1], i2 = part->indices[t + 2];
    if (i0 >= nv || i1 >= nv || i2 >= nv) continue;
    double e1[3], e2[3];
    for (int k = 0; k < 3; ++k) {
      e1[k] = (double)P[3 * i1 + k] - P[3 * i0 + k];
      e2[k] = (double)P[3 * i2 + k] - P[3 * i0 + k];
    }
    const double du1 = (double)uv[2 * i1] - uv[2 * i0], dv1 = (double)uv[2 * i1 + 1] - uv[2 * i0 + 1];
    const double du2 = (double)uv[2 * i2] - uv[2 * i0], dv2 = (double)uv[2 * i2 + 1] - uv[2 * i0 + 1];
    const double r = du1 * dv2 - du2 * dv1;
    if (!(fabs(r) > 1e-30) || !isfinite(r)) continue; /* no UV area: no direction */
    /* s, t times the triangle's UV-area sign only: |r| scales them by the
     * triangle's area over its UV area, so bigger triangles weigh more */
    const double sg = r > 0 ? 1.0 : -1.0;
    double sdir[3], tdir[3];
    for (int k = 0; k < 3; ++k) {
      sdir[k] = sg * (e1[k] * dv2 - e2[k] * dv1);
      tdir[k] = sg * (e2[k] * du1 - e1[k] * du2);
    }
    const uint32_t id[3] = {i0, i1, i2};
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) {
        acc[6 * id[c] + k] += sdir[k];
        acc[6 * id[c] + 3 + k] += tdir[k];
      }
  }
  for (size_t v = 0; v < nv; ++v) {
    double n[3] = {part->normals[3 * v], part->normals[3 * v + 1], part->normals[3 * v + 2]};
    double ln = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (!(ln > 1e-20) || !isfinite(ln)) n[0] = 0, n[1] = 0, n[2] = 1, ln = 1;
    for (int k = 0; k < 3; ++k) n[k] /= ln;
    const double *s = &acc[6 * v], *b = &acc[6 * v + 3];
    const double d = s[0] * n[0] + s[1] * n[1] + s[2] * n[2];
    double t[3], lt = 0;
    for (int k = 0; k < 3; ++k) t[k] = s[k] - d * n[k], lt += t[k] * t[k];
    lt = sqrt(lt);
    double w = 1.0;
    if (lt > 1e-12 * (1.0 + fabs(d)) && isfinite(lt)) {
      for (int k = 0; k < 3; ++k) t[k] /= lt;
      const double c[3] = {n[1] * t[2] - n[2] * t[1], n[2] * t[0] - n[0] * t[2], n[0] * t[1] - n[1] * t[0]};
      /* b sums +v directions of glTF's top-left UVs; glTF's bitangent
       * cross(n, t) * w points along -v there */
      w = c[0] * b[0] + c[1] * b[1] + c[2] * b[2] > 0 ? -1.0 : 1.0;
    } else {
      any_orthogonal(n, t);
    }
    for (int k = 0; k < 3; ++k) out[4 * v + k] = (float)t[k];
    out[4 * v + 3] = (float)w;
  }
  free(acc);
  part->tangents = out;
  return SKS_OK;
}

sks_result sks_model_generate_needed_tangents(sks_model *model, size_t *count, sks_error *err) {
  if (count) *count = 0;
  if (!model) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_model_generate_needed_tangents: model is NULL");
  for (size_t p = 0; p < model->part_count; ++p) {
    sks_mesh_part *part = &model->parts[p];
    if (part->tangents || !part->normals || part->material < 0 || (size_t)part->material >= model->material_count)
      continue;
    const sks_material *mat = &model->materials[part->material];
    const sks_texture_ref *map = NULL;
    if (mat->textures[SKS_TEXTURE_NORMAL].image >= 0) map = &mat->textures[SKS_TEXTURE_NORMAL];
    else if (mat->textures[SKS_TEXTURE_CLEARCOAT_NORMAL].image >= 0) map = &mat->textures[SKS_TEXTURE_CLEARCOAT_NORMAL];
    if (!map) continue;
    const int set = map->tex_coord == 1 ? 1 : 0;
    if (!(set ? part->uvs1 : part->uvs)) continue;
    sks_result r = sks_mesh_part_generate_tangents(part, set, err);
    if (r) return r;
    if (count) ++*count;
  }
  return SKS_OK;
}
