/* Re-export variants (see sks_variants.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "sks_test.h"
#include "sks_variants.h"
#include "math/sks_math.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

sks_quat sks_variant_axis_angle(double x, double y, double z, double deg) {
  double n = sqrt(x * x + y * y + z * z), h = deg * M_PI / 360.0;
  sks_quat q = {(float)(x / n * sin(h)), (float)(y / n * sin(h)), (float)(z / n * sin(h)), (float)cos(h)};
  return q;
}

/* Puts a new non-joint root node with transform x above the skeleton. */
void sks_variant_add_parent(sks_model *m, sks_transform x) {
  size_t J = m->skeleton.joint_count;
  char **names = malloc((J + 1) * sizeof *names);
  int32_t *parents = malloc((J + 1) * sizeof *parents);
  sks_transform *rest = malloc((J + 1) * sizeof *rest);
  names[0] = malloc(16);
  strcpy(names[0], "Armature");
  parents[0] = -1;
  rest[0] = x;
  for (size_t j = 0; j < J; ++j) {
    names[j + 1] = m->skeleton.names[j];
    parents[j + 1] = m->skeleton.parents[j] + 1; /* roots (-1) -> 0 */
    rest[j + 1] = m->skeleton.rest[j];
  }
  free(m->skeleton.names); free(m->skeleton.parents); free(m->skeleton.rest);
  m->skeleton.names = names; m->skeleton.parents = parents; m->skeleton.rest = rest;
  m->skeleton.joint_count = J + 1;
  for (size_t s = 0; s < m->skin_count; ++s)
    for (size_t k = 0; k < m->skins[s].joint_count; ++k) m->skins[s].joints[k]++;
  for (size_t p = 0; p < m->part_count; ++p) m->parts[p].node++;
  for (size_t c = 0; c < m->clip_count; ++c)
    for (size_t t = 0; t < m->clips[c].track_count; ++t) m->clips[c].tracks[t].joint++;
}

/* d[0..2] = the linear part of M times d */
static void apply_direction(const sks_mat4 *M, float *d) {
  sks_vec3 r = sks_m4_vector(M, (sks_vec3){d[0], d[1], d[2]});
  d[0] = r.x; d[1] = r.y; d[2] = r.z;
}

/* An export that applied a transform to the mesh data ("apply transform"):
 * vertex data x' = M x, inverse binds IBM' = IBM M^-1; the joints stay, so
 * the scene is unchanged but the bind space is another one. */
void sks_variant_transform_data(sks_model *m, sks_quat q, float s, sks_vec3 t) {
  sks_transform x = {t, q, {s, s, s}};
  sks_mat4 M = sks_m4_from_transform(&x), Mi;
  sks_m4_inverse(&M, &Mi);
  sks_transform xr = {{0, 0, 0}, q, {1, 1, 1}};
  sks_mat4 R = sks_m4_from_transform(&xr); /* directions: turned */
  for (size_t pi = 0; pi < m->part_count; ++pi) {
    sks_mesh_part *p = &m->parts[pi];
    if (p->skin < 0) continue;
    for (size_t v = 0; v < p->vertex_count; ++v) {
      float *c = &p->positions[3 * v];
      sks_vec3 r = sks_m4_point(&M, (sks_vec3){c[0], c[1], c[2]});
      c[0] = r.x; c[1] = r.y; c[2] = r.z;
      /* as the export writes them: normals and tangents turned, morph
       * position deltas turned and scaled (a morph moves the data it
       * belongs to) */
      if (p->normals) apply_direction(&R, &p->normals[3 * v]);
      if (p->tangents) apply_direction(&R, &p->tangents[4 * v]);
      for (size_t k = 0; k < p->morph_target_count; ++k) {
        sks_morph_target *mt = &p->morph_targets[k];
        if (mt->position_deltas) apply_direction(&M, &mt->position_deltas[3 * v]);
        if (mt->normal_deltas) apply_direction(&R, &mt->normal_deltas[3 * v]);
      }
    }
  }
  for (size_t si = 0; si < m->skin_count; ++si)
    for (size_t b = 0; b < m->skins[si].joint_count; ++b)
      m->skins[si].inverse_bind[b] = sks_m4_mul(&m->skins[si].inverse_bind[b], &Mi);
}

void sks_variant_mirror_data(sks_model *m, int axis, sks_quat q, float s, sks_vec3 t) {
  sks_transform x = {t, q, {s, s, s}};
  sks_mat4 T = sks_m4_from_transform(&x), F = sks_m4_identity(), M, Mi;
  F.m[5 * axis] = -1; /* column-major diagonal */
  M = sks_m4_mul(&T, &F);
  sks_m4_inverse(&M, &Mi);
  sks_transform xr = {{0, 0, 0}, q, {1, 1, 1}};
  sks_mat4 RF = sks_m4_from_transform(&xr); /* directions: mirrored, turned */
  RF = sks_m4_mul(&RF, &F);
  for (size_t pi = 0; pi < m->part_count; ++pi) {
    sks_mesh_part *p = &m->parts[pi];
    if (p->skin < 0) continue;
    for (size_t v = 0; v < p->vertex_count; ++v) {
      float *c = &p->positions[3 * v];
      sks_vec3 r = sks_m4_point(&M, (sks_vec3){c[0], c[1], c[2]});
      c[0] = r.x; c[1] = r.y; c[2] = r.z;
      if (p->normals) apply_direction(&RF, &p->normals[3 * v]);
      if (p->tangents) { apply_direction(&RF, &p->tangents[4 * v]); p->tangents[4 * v + 3] *= -1; }
      for (size_t k = 0; k < p->morph_target_count; ++k) {
        sks_morph_target *mt = &p->morph_targets[k];
        if (mt->position_deltas) apply_direction(&M, &mt->position_deltas[3 * v]);
        if (mt->normal_deltas) apply_direction(&RF, &mt->normal_deltas[3 * v]);
      }
    }
    for (size_t k = 0; k + 2 < p->index_count; k += 3) {
      uint32_t i1 = p->indices[k + 1];
      p->indices[k + 1] = p->indices[k + 2];
      p->indices[k + 2] = i1;
    }
  }
  for (size_t si = 0; si < m->skin_count; ++si)
    for (size_t b = 0; b < m->skins[si].joint_count; ++b)
      m->skins[si].inverse_bind[b] = sks_m4_mul(&m->skins[si].inverse_bind[b], &Mi);
}

/* a[perm[i]] for i < nn, each element `comp` floats (NULL stays NULL) */
static float *gather_f(const float *a, const size_t *perm, size_t nn, size_t comp) {
  if (!a) return NULL;
  float *o = malloc((nn ? nn : 1) * comp * sizeof(float));
  for (size_t i = 0; o && i < nn; ++i) memcpy(&o[comp * i], &a[comp * perm[i]], comp * sizeof(float));
  return o;
}

void sks_variant_reweld(sks_model *m, unsigned seed) {
  uint64_t st = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (size_t pi = 0; pi < m->part_count; ++pi) {
    sks_mesh_part *p = &m->parts[pi];
    if (p->skin < 0 || p->vertex_count < 3) continue;
    size_t n = p->vertex_count, nn = n + (n + 2) / 3, ic = p->influence_count;
    size_t *perm = malloc(nn * sizeof *perm), *first = malloc(n * sizeof *first), *second = malloc(n * sizeof *second);
    for (size_t i = 0; i < n; ++i) perm[i] = i;
    for (size_t i = n; i < nn; ++i) perm[i] = 3 * (i - n); /* the copies */
    for (size_t i = nn - 1; i > 0; --i) {
      st = st * 6364136223846793005ull + 1442695040888963407ull;
      size_t j = (size_t)((st >> 33) % (i + 1)), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    for (size_t i = 0; i < n; ++i) first[i] = second[i] = SIZE_MAX;
    for (size_t i = 0; i < nn; ++i) {
      if (first[perm[i]] == SIZE_MAX) first[perm[i]] = i;
      else second[perm[i]] = i;
    }
    /* each vertex's corners alternate between its copies (the copy of a
     * vertex with one corner is left unused; an alternation by corner
     * index left copies of many-cornered vertices unused too) */
    uint8_t *turn = calloc(n ? n : 1, 1);
    for (size_t k = 0; k < p->index_count; ++k) {
      size_t v = p->indices[k];
      p->indices[k] = (uint32_t)(second[v] != SIZE_MAX && turn[v] ? second[v] : first[v]);
      turn[v] ^= 1;
    }
    free(turn);
    float *pos = gather_f(p->positions, perm, nn, 3), *w = gather_f(p->weights, perm, nn, ic);
    uint16_t *jn = malloc((nn ? nn : 1) * (ic ? ic : 1) * sizeof(uint16_t));
    for (size_t i = 0; i < nn; ++i) memcpy(&jn[ic * i], &p->joints[ic * perm[i]], ic * sizeof(uint16_t));
    float *nrm = gather_f(p->normals, perm, nn, 3), *uv = gather_f(p->uvs, perm, nn, 2);
    float *uv1 = gather_f(p->uvs1, perm, nn, 2), *tan = gather_f(p->tangents, perm, nn, 4);
    for (size_t t = 0; t < p->morph_target_count; ++t) {
      sks_morph_target *mt = &p->morph_targets[t];
      float *pd = gather_f(mt->position_deltas, perm, nn, 3), *nd = gather_f(mt->normal_deltas, perm, nn, 3);
      free(mt->position_deltas); free(mt->normal_deltas);
      mt->position_deltas = pd;
      mt->normal_deltas = nd;
    }
    free(p->positions); free(p->weights); free(p->joints); free(p->normals); free(p->uvs); free(p->uvs1);
    free(p->tangents);
    p->positions = pos; p->weights = w; p->joints = jn; p->normals = nrm; p->uvs = uv; p->uvs1 = uv1;
    p->tangents = tan;
    p->vertex_count = nn;
    free(perm); free(first); free(second);
  }
}

void sks_variant_print_stages(const sks_variant_numbers *n) {
  printf("    stages: similarity %.9g %%D, %s %.9g %%D, limbs re-matched %zu, %zu finalists", n->similarity_pct,
         n->registered ? "registered" : "kept", n->dist, n->limb_rematched, n->finalists);
  for (size_t k = 0; k < n->finalists && k < SKS_BAKE_FINALISTS; ++k)
    printf("%s %zu%s: trial %.9g%s", k ? ";" : ":", k, n->finalist_registered[k] ? " (registered)" : " (similarity)",
           n->trial_quality[k] * 100, k == n->finalist_chosen ? " kept" : (k == n->finalist_registration ? " registration's" : ""));
  printf("\n");
}

sks_variant_numbers sks_variant_bake(const char *label, const sks_model *s, const sks_model *t, const char *clip) {
  sks_bake_options opt;
  memset(&opt, 0, sizeof opt);
  const char *clips[] = {clip};
  if (clip) {
    opt.clip_names = clips;
    opt.clip_name_count = 1;
  }
  sks_bake_result r;
  sks_error err;
  sks_variant_numbers n;
  memset(&n, 0, sizeof n);
  if (sks_bake(s, t, &opt, &r, &err) != SKS_OK) {
    CHECK_MSG(0, "%s: %s", label, err.message);
    return n;
  }
  n.q = r.clips[0].quality * 100;
  n.mean = r.clips[0].mean_error_pct;
  n.worst = r.clips[0].worst_error_pct;
  n.scale = r.alignment.scale;
  n.angle = r.alignment.angle_deg;
  n.same_surface = r.alignment.same_surface;
  n.subset = r.alignment.subset;
  n.finalists = r.alignment.finalists;
  n.finalist_registration = r.alignment.finalist_registration;
  n.finalist_chosen = r.alignment.finalist_chosen;
  memcpy(n.trial_quality, r.alignment.trial_quality, sizeof n.trial_quality);
  n.dist = r.alignment.residual_pct;
  n.similarity_pct = r.alignment.similarity_residual_pct;
  n.registered = r.alignment.registered;
  n.limb_rematched = r.alignment.limb_rematched;
  for (size_t k = 0; k < SKS_BAKE_FINALISTS; ++k) n.finalist_registered[k] = r.alignment.finalist_registered[k];
  n.over_default_limit = r.alignment.over_default_limit;
  n.mirrored = r.alignment.mirrored;
  n.labels = r.alignment.label_agreement;
  n.heads = r.alignment.head_agreement;
  n.up = r.alignment.up_deg;
  n.feet = r.alignment.facing_deg;
  n.ok = 1;
  const sks_bake_alignment *a = &r.alignment;
  printf("%-44s | %s scale %-9.5g %s %6.2f deg%s offset (%9.4g %9.4g %9.4g) dist %.3g%%D | %8.4f %% | %.5f / %.4f %%D\n",
         label, a->applied ? "A:" : "I:", a->scale, a->mirrored ? "MIR" : "rot", a->angle_deg, a->registered ? " +P" : "   ", a->offset[0],
         a->offset[1], a->offset[2], r.correspondence_mean_pct, n.q, n.mean, n.worst);
  CHECK_MSG(!r.clips[0].suspect, "%s: flagged suspect", label);
  sks_bake_result_free(&r);
  return n;
}

sks_variant_numbers sks_variant_same_turned(const char *label, const sks_model *s, const sks_model *t, int side, double ax,
                                            double ay, double az, double deg, float scale, sks_variant_numbers base) {
  sks_model m;
  sks_error err;
  sks_variant_numbers n;
  memset(&n, 0, sizeof n);
  if (sks_model_clone(side ? t : s, &m, &err) != SKS_OK) {
    CHECK_MSG(0, "%s: %s", label, err.message);
    return n;
  }
  sks_variant_transform_data(&m, sks_variant_axis_angle(ax, ay, az, deg), scale, (sks_vec3){1, 2, 3});
  char what[160];
  snprintf(what, sizeof what, "... %s data rot%g about (%g,%g,%g) x%g", side ? "tgt" : "src", deg, ax, ay, az, (double)scale);
  n = sks_variant_bake(what, side ? s : &m, side ? &m : t, NULL);
  sks_variant_same(label, n, base);
  sks_model_free(&m);
  return n;
}

void sks_variant_same(const char *label, sks_variant_numbers a, sks_variant_numbers b) {
  if (!a.ok || !b.ok) return;
  /* the head's and the feet's directions off the target's: angles between
   * two bodies in one space, which no unit, axis or offset moves */
  CHECK_MSG(isnan(a.up) == isnan(b.up) && (isnan(a.up) || fabs(a.up - b.up) <= 1), "%s: head %.3f vs %.3f deg off", label,
            a.up, b.up);
  CHECK_MSG(isnan(a.feet) == isnan(b.feet) && (isnan(a.feet) || fabs(a.feet - b.feet) <= 1),
            "%s: feet %.3f vs %.3f deg off", label, a.feet, b.feet);
  CHECK_MSG(fabs(a.q - b.q) <= 0.05, "%s: quality %.4f vs %.4f", label, a.q, b.q);
  CHECK_MSG(fabs(a.mean - b.mean) <= 0.02 * b.mean + 1e-6, "%s: mean %.6f vs %.6f %%D", label, a.mean, b.mean);
  CHECK_MSG(fabs(a.worst - b.worst) <= 0.02 * b.worst + 1e-6, "%s: worst %.6f vs %.6f %%D", label, a.worst, b.worst);
}
