/* The bake's view of a rig's surface (MISSION.md: everything in the rig's
 * BIND space, the space of its vertex data, where its skinning identity holds):
 *
 *  - every vertex of every part, skinned parts first (part order), then rigid
 *    parts (part order): a rigid part is a skin of one influence on its node,
 *    bound at the rest pose (seed 002), so it is recorded, solved and measured
 *    like any other vertex;
 *  - palette entries (joint, "inverse bind" from bind space to joint space):
 *    a skin's entry k is its inverse bind matrix; a rigid part's is
 *    G_rest(node)^-1 * T;
 *  - T, bind space -> scene space: the rest-pose skin matrix G_rest(j) * IBM
 *    shared by most weighted joints (all of them when rest == bind; a pose
 *    stored in the rest that differs from the bind pose moves a few), i.e. the
 *    transform of the non-joint nodes above the skeleton (armature object,
 *    units, axis conventions) that no solve should have to reproduce; when
 *    no majority agrees (a rest that is a pose throughout: Blender's FBX
 *    export), the top-most skin joint's (the skeleton's root where the rest
 *    puts it);
 *  - weights as played: every vertex's non-zero weights renormalised to sum 1
 *    (counted, so the bake can say so), the same rule sks_bake_apply writes.
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "solve/metrics.h"
#include "solve/solve_internal.h"

void sks_skinview_free(sks_skinview *v) {
  if (!v) return;
  free(v->pos); free(v->pal_joint); free(v->pal_ibm); free(v->start); free(v->pal); free(v->w);
  free(v->tris); free(v->order); free(v->rest_models);
  memset(v, 0, sizeof *v);
}

/* Vertex weights renormalised to sum 1 over their valid influences (a
 * weight on an out-of-range joint counts as zero). Returns the number of
 * vertices changed by more than 1e-6. */
size_t sks_normalize_weights(sks_model *m) {
  size_t changed = 0;
  for (size_t pi = 0; pi < m->part_count; ++pi) {
    sks_mesh_part *part = &m->parts[pi];
    if (part->skin < 0 || (size_t)part->skin >= m->skin_count) continue;
    size_t nk = m->skins[part->skin].joint_count;
    uint32_t ic = part->influence_count;
    for (size_t v = 0; v < part->vertex_count; ++v) {
      float *w = &part->weights[v * ic];
      const uint16_t *k = &part->joints[v * ic];
      double s = 0;
      for (uint32_t i = 0; i < ic; ++i)
        if (w[i] > 0 && isfinite(w[i]) && k[i] < nk) s += w[i];
      if (!(s > 0) || fabs(s - 1.0) <= 1e-6) continue;
      for (uint32_t i = 0; i < ic; ++i)
        w[i] = (w[i] > 0 && isfinite(w[i]) && k[i] < nk) ? (float)(w[i] / s) : 0.0f;
      ++changed;
    }
  }
  return changed;
}

/* max over the 8 corners of the box [lo, hi] of |a x - b x| */
static double corner_distance(const sks_daffine *a, const sks_daffine *b, const double *lo,
                              const double *hi) {
  double worst = 0;
  for (int c = 0; c < 8; ++c) {
    double x[3] = {c & 1 ? hi[0] : lo[0], c & 2 ? hi[1] : lo[1], c & 4 ? hi[2] : lo[2]}, p[3], q[3];
    sks_daff_point(a, x, p);
    sks_daff_point(b, x, q);
    double d = sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
    if (d > worst) worst = d;
  }
  return worst;
}

int sks_skinview_takes(const sks_model *m, const sks_mesh_part *part) {
  return part->skin >= 0 ? (size_t)part->skin < m->skin_count
                         : part->node >= 0 && (size_t)part->node < m->skeleton.joint_count;
}

sks_result sks_skinview_build(const sks_model *m, const char *name, sks_skinview *v, sks_error *err) {
  memset(v, 0, sizeof *v);
  size_t J = m->skeleton.joint_count;
  size_t P = 0, V = 0, ninf = 0, nt = 0;
  for (size_t i = 0; i < m->skin_count; ++i) P += m->skins[i].joint_count;
  for (size_t pi = 0; pi < m->part_count; ++pi) {
    const sks_mesh_part *part = &m->parts[pi];
    int rigid = part->skin < 0;
    if (!sks_skinview_takes(m, part)) continue;
    V += part->vertex_count;
    ninf += rigid ? part->vertex_count : part->vertex_count * part->influence_count;
    nt += part->index_count / 3;
    if (rigid) P++;
  }
  v->V = V;
  v->P = P;
  v->pos = malloc((V ? V : 1) * 3 * sizeof(double));
  v->order = malloc((V ? V : 1) * sizeof(size_t));
  v->pal_joint = malloc((P ? P : 1) * sizeof(int32_t));
  v->pal_ibm = malloc((P ? P : 1) * sizeof(sks_daffine));
  v->start = malloc((V + 1) * sizeof(uint32_t));
  v->pal = malloc((ninf ? ninf : 1) * sizeof(uint32_t));
  v->w = malloc((ninf ? ninf : 1) * sizeof(double));
  v->tris = malloc((nt ? nt : 1) * 3 * sizeof(uint32_t));
  v->rest_models = malloc((J ? J : 1) * sizeof(sks_daffine));
  if (!v->pos || !v->order || !v->pal_joint || !v->pal_ibm || !v->start || !v->pal || !v->w || !v->tris ||
      !v->rest_models) {
    sks_skinview_free(v);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory preparing the surface", name);
  }
  sks_dfk(&m->skeleton, m->skeleton.rest, v->rest_models);
  /* palette: skins first */
  size_t o = 0;
  size_t *skin_off = malloc((m->skin_count ? m->skin_count : 1) * sizeof(size_t));
  if (!skin_off) {
    sks_skinview_free(v);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  }
  for (size_t i = 0; i < m->skin_count; ++i) {
    skin_off[i] = o;
    for (size_t k = 0; k < m->skins[i].joint_count; ++k, ++o) {
      int32_t j = m->skins[i].joints[k];
      v->pal_joint[o] = (j >= 0 && (size_t)j < J) ? j : -1;
      v->pal_ibm[o] = sks_daff_from_m4(&m->skins[i].inverse_bind[k]);
    }
  }
  /* T: the rest skin matrix most weighted palette entries agree on */
  double lo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, hi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
  for (size_t pi = 0; pi < m->part_count; ++pi) {
    const sks_mesh_part *part = &m->parts[pi];
    if (part->skin < 0) continue;
    for (size_t q = 0; q < 3 * part->vertex_count; ++q) {
      double x = part->positions[q];
      if (x < lo[q % 3]) lo[q % 3] = x;
      if (x > hi[q % 3]) hi[q % 3] = x;
    }
  }
  int have_box = lo[0] <= hi[0];
  v->T = sks_daff_identity();
  if (have_box && o > 0) {
    uint8_t *used = calloc(o, 1);
    sks_daffine *K = malloc(o * sizeof(sks_daffine));
    if (!used || !K) {
      free(used); free(K); free(skin_off);
      sks_skinview_free(v);
      return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
    }
    for (size_t pi = 0; pi < m->part_count; ++pi) {
      const sks_mesh_part *part = &m->parts[pi];
      if (part->skin < 0 || (size_t)part->skin >= m->skin_count) continue;
      size_t nk = m->skins[part->skin].joint_count;
      for (size_t q = 0; q < part->vertex_count * part->influence_count; ++q)
        if (part->weights[q] > 0 && part->joints[q] < nk) used[skin_off[part->skin] + part->joints[q]] = 1;
    }
    double diag = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                       (hi[2] - lo[2]) * (hi[2] - lo[2]));
    for (size_t e = 0; e < o; ++e)
      if (used[e] && v->pal_joint[e] >= 0) K[e] = sks_daff_mul(&v->rest_models[v->pal_joint[e]], &v->pal_ibm[e]);
    size_t best = SIZE_MAX, best_count = 0;
    for (size_t e = 0; e < o; ++e) {
      if (!used[e] || v->pal_joint[e] < 0) continue;
      /* tolerance: 1e-4 of the entry's own image of the box */
      double s = cbrt(fabs(sks_dm3_det(K[e].l)));
      double tol = 1e-4 * (diag > 0 ? diag : 1) * (s > 0 ? s : 1);
      size_t count = 0;
      for (size_t f = 0; f < o; ++f)
        if (used[f] && v->pal_joint[f] >= 0 && corner_distance(&K[e], &K[f], lo, hi) <= tol) ++count;
      /* ties: the joint nearest the root (lowest index: parent-first order) */
      if (count > best_count || (count == best_count && best != SIZE_MAX && v->pal_joint[e] < v->pal_joint[best])) {
        best = e;
        best_count = count;
      }
    }
    /* No majority (a rest that is a pose throughout: Blender's FBX export
     * stores the pose of its current frame in every bone): the skeleton's
     * root as the rest places it, i.e. the entry of the top-most skin joint
     * (no ancestor among the skin's joints; weighted or not: a root bone
     * often carries no vertex), the lowest joint index of those. */
    size_t nu = 0;
    for (size_t e = 0; e < o; ++e) nu += used[e] && v->pal_joint[e] >= 0;
    uint8_t *skin_joint = 2 * best_count <= nu ? calloc(J ? J : 1, 1) : NULL;
    if (2 * best_count <= nu && !skin_joint) {
      free(used); free(K); free(skin_off);
      sks_skinview_free(v);
      return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
    }
    if (skin_joint) {
      for (size_t e = 0; e < o; ++e)
        if (v->pal_joint[e] >= 0) skin_joint[v->pal_joint[e]] = 1;
      size_t top = SIZE_MAX;
      for (size_t e = 0; e < o; ++e) {
        int32_t j = v->pal_joint[e];
        if (j < 0) continue;
        int below = 0;
        size_t depth = 0;
        for (int32_t a = m->skeleton.parents[j]; a >= 0 && (size_t)a < J && depth <= J && !below;
             a = m->skeleton.parents[a], ++depth)
          below = skin_joint[a];
        if (!below && (top == SIZE_MAX || j < v->pal_joint[top])) top = e;
      }
      free(skin_joint);
      if (top != SIZE_MAX) {
        K[top] = sks_daff_mul(&v->rest_models[v->pal_joint[top]], &v->pal_ibm[top]);
        best = top;
      }
    }
    if (best != SIZE_MAX && fabs(sks_dm3_det(K[best].l)) > 1e-300) v->T = K[best];
    free(used);
    free(K);
  }
  if (!sks_daff_inverse(&v->T, &v->T_inv)) {
    v->T = sks_daff_identity();
    v->T_inv = v->T;
  }
  /* vertices: skinned parts, then rigid parts */
  size_t vo = 0, io = 0, to = 0, file_base = 0;
  size_t *part_base = malloc((m->part_count ? m->part_count : 1) * sizeof(size_t));
  if (!part_base) {
    free(skin_off);
    sks_skinview_free(v);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  }
  for (size_t pi = 0; pi < m->part_count; ++pi) { part_base[pi] = file_base; file_base += m->parts[pi].vertex_count; }
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t pi = 0; pi < m->part_count; ++pi) {
      const sks_mesh_part *part = &m->parts[pi];
      int rigid = part->skin < 0;
      if (rigid != pass || !sks_skinview_takes(m, part)) continue;
      size_t first = vo;
      size_t rigid_entry = 0;
      sks_daffine place = sks_daff_identity(); /* part data -> bind space */
      if (rigid) {
        rigid_entry = o++;
        sks_daffine g = v->rest_models[part->node], gi;
        place = sks_daff_mul(&v->T_inv, &g);
        if (!sks_daff_inverse(&g, &gi)) gi = sks_daff_identity();
        v->pal_joint[rigid_entry] = part->node;
        v->pal_ibm[rigid_entry] = sks_daff_mul(&gi, &v->T);
        v->rigid_vertex_count += part->vertex_count;
      } else {
        v->skinned_vertex_count += part->vertex_count;
      }
      size_t nk = rigid ? 0 : m->skins[part->skin].joint_count;
      for (size_t k = 0; k < part->vertex_count; ++k, ++vo) {
        double x[3] = {part->positions[3 * k], part->positions[3 * k + 1], part->positions[3 * k + 2]};
        sks_daff_point(&place, x, &v->pos[3 * vo]);
        v->order[vo] = part_base[pi] + k;
        v->start[vo] = (uint32_t)io;
        if (rigid) {
          v->pal[io] = (uint32_t)rigid_entry;
          v->w[io++] = 1.0;
          continue;
        }
        uint32_t ic = part->influence_count;
        double s = 0;
        for (uint32_t i = 0; i < ic; ++i) {
          float w = part->weights[k * ic + i];
          uint16_t kk = part->joints[k * ic + i];
          if (!(w > 0) || kk >= nk) continue;
          if (v->pal_joint[skin_off[part->skin] + kk] < 0) continue;
          s += w;
        }
        if (s > 0 && fabs(s - 1.0) > 1e-6) v->weights_normalised++;
        for (uint32_t i = 0; i < ic; ++i) {
          float w = part->weights[k * ic + i];
          uint16_t kk = part->joints[k * ic + i];
          if (!(w > 0) || kk >= nk) continue;
          if (v->pal_joint[skin_off[part->skin] + kk] < 0) continue;
          v->pal[io] = (uint32_t)(skin_off[part->skin] + kk);
          v->w[io++] = w / s;
        }
      }
      for (size_t i = 0; i + 2 < part->index_count; i += 3) {
        const uint32_t *ix = &part->indices[i];
        if (ix[0] >= part->vertex_count || ix[1] >= part->vertex_count || ix[2] >= part->vertex_count) continue;
        for (int c = 0; c < 3; ++c) v->tris[3 * to + c] = (uint32_t)(first + ix[c]);
        ++to;
      }
    }
  }
  v->start[vo] = (uint32_t)io;
  v->V = vo;
  v->P = o;
  v->tri_count = to;
  free(part_base);
  free(skin_off);
  /* D: the bounding-box diagonal of every vertex at the bind pose, the box
   * taken along the scene's axes (T's rotation) and measured in bind units
   * (T's scale divided out). An axis-aligned box in bind space would change
   * with an export that rotated the vertex data ("apply transform"): this one
   * does not, and equals the plain bind-space box whenever the bind space
   * is the scene's up to scale and offset (every file seen so far). */
  double blo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, bhi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
  double sT = cbrt(fabs(sks_dm3_det(v->T.l)));
  if (!(sT > 0) || !isfinite(sT)) sT = 1;
  for (size_t k = 0; k < vo; ++k) {
    double q[3];
    sks_dm3_apply(v->T.l, &v->pos[3 * k], q);
    for (int a = 0; a < 3; ++a) {
      if (!isfinite(q[a])) continue;
      if (q[a] < blo[a]) blo[a] = q[a];
      if (q[a] > bhi[a]) bhi[a] = q[a];
    }
  }
  v->diagonal = blo[0] <= bhi[0] ? sqrt((bhi[0] - blo[0]) * (bhi[0] - blo[0]) + (bhi[1] - blo[1]) * (bhi[1] - blo[1]) +
                                        (bhi[2] - blo[2]) * (bhi[2] - blo[2])) / sT
                                 : 0.0;
  return SKS_OK;
}

/* Bind-space skin matrices of every palette entry for the scene-space joint
 * models: N_e = T^-1 * G(joint) * IBM_e. */
void sks_skinview_palette(const sks_skinview *v, const sks_daffine *models, sks_daffine *out) {
  for (size_t e = 0; e < v->P; ++e) {
    int32_t j = v->pal_joint[e];
    sks_daffine g = j >= 0 ? sks_daff_mul(&models[j], &v->pal_ibm[e]) : v->pal_ibm[e];
    out[e] = sks_daff_mul(&v->T_inv, &g);
  }
}

double sks_bake_diagonal(const sks_model *model) {
  sks_skinview v;
  sks_error err;
  if (!model || sks_skinview_build(model, "model", &v, &err) != SKS_OK) return 0.0;
  double d = v.diagonal;
  sks_skinview_free(&v);
  return d;
}
