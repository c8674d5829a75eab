/* Weight hygiene: check (report), repair (fix in place), limit influences.
 *
 * Every finding names the file, the mesh part (index + name), the vertex and
 * the joint, so a user can find it in a DCC tool:
 *   "Fox.glb: part 0 'fox', vertex 812: weights sum to 0 — cannot normalise".
 * Skin joint indices in findings are indices into the part's skin (as stored
 * in the vertices); the message also gives the skeleton joint's name. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "skinsolve/rig.h"
#include "skinsolve/pose.h"
#include "skinsolve/skin.h"
#include "math/sks_dmath.h"
#include "math/sks_math.h"

const char *sks_finding_kind_name(sks_finding_kind kind) {
  switch (kind) {
    case SKS_FINDING_WEIGHT_SUM: return "weight_sum";
    case SKS_FINDING_WEIGHT_NEGATIVE: return "weight_negative";
    case SKS_FINDING_WEIGHT_NAN: return "weight_nan";
    case SKS_FINDING_WEIGHT_ZERO: return "weight_zero";
    case SKS_FINDING_JOINT_RANGE: return "joint_range";
    case SKS_FINDING_BIND_SINGULAR: return "bind_singular";
    case SKS_FINDING_HIERARCHY_CYCLE: return "hierarchy_cycle";
    case SKS_FINDING_TOO_MANY_INFLUENCES: return "too_many_influences";
    case SKS_FINDING_NONFINITE_POSITION: return "nonfinite_position";
    case SKS_FINDING_HIERARCHY_ORDER: return "hierarchy_order";
    case SKS_FINDING_INDEX_RANGE: return "index_range";
    case SKS_FINDING_NONFINITE_TRANSFORM: return "nonfinite_transform";
    case SKS_FINDING_NONFINITE_KEY: return "nonfinite_key";
    case SKS_FINDING_REST_SINGULAR: return "rest_singular";
    case SKS_FINDING_KIND_COUNT: break;
  }
  return "unknown";
}

/* ---- check -------------------------------------------------------------- */

typedef struct checker {
  const sks_model *model;
  const char *file;      /* basename of the source path */
  sks_findings *out;
  size_t cap;
  int oom;
} checker;

static const char *base_name(const char *path) {
  if (!path || !*path) return "(model)";
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

static const char *joint_name(const sks_model *m, int32_t skeleton_joint) {
  if (skeleton_joint < 0 || (size_t)skeleton_joint >= m->skeleton.joint_count || !m->skeleton.names)
    return "?";
  const char *n = m->skeleton.names[skeleton_joint];
  return n ? n : "?";
}

/* Name of skin joint j of a part's skin (the skeleton joint it maps to). */
static const char *skin_joint_name(const sks_model *m, const sks_skin *skin, uint32_t j) {
  if (!skin || j >= skin->joint_count) return "?";
  return joint_name(m, skin->joints[j]);
}

/* Records a finding. `where` is the place ("part 0 'fox', vertex 812"),
 * fmt the problem. Counts always; stores up to the cap. */
static void add(checker *c, sks_finding_kind kind, sks_severity sev, int32_t part, int64_t vertex,
                int32_t joint, const char *where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 8, 9)))
#endif
    ;
static void add(checker *c, sks_finding_kind kind, sks_severity sev, int32_t part, int64_t vertex,
                int32_t joint, const char *where, const char *fmt, ...) {
  sks_findings *o = c->out;
  o->total_by_kind[kind]++;
  if (sev == SKS_SEVERITY_ERROR) o->error_count++; else o->warning_count++;
  if (o->count >= c->cap || c->oom) return;
  if (o->count % 64 == 0) {
    sks_finding *grown = realloc(o->items, (o->count + 64) * sizeof *grown);
    if (!grown) { c->oom = 1; return; }
    o->items = grown;
  }
  sks_finding *f = &o->items[o->count++];
  memset(f, 0, sizeof *f);
  f->kind = kind;
  f->severity = sev;
  f->part = part;
  f->vertex = vertex;
  f->joint = joint;
  char problem[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(problem, sizeof problem, fmt, ap);
  va_end(ap);
  snprintf(f->message, sizeof f->message, "%s: %s: %s", c->file, where, problem);
}

static void check_hierarchy(checker *c) {
  const sks_skeleton *sk = &c->model->skeleton;
  size_t n = sk->joint_count;
  if (n == 0 || !sk->parents) return;
  char where[160];
  int bad_range = 0;
  for (size_t i = 0; i < n; ++i) {
    int32_t p = sk->parents[i];
    snprintf(where, sizeof where, "joint %zu '%s'", i, joint_name(c->model, (int32_t)i));
    if (p < -1 || (p >= 0 && (size_t)p >= n)) {
      add(c, SKS_FINDING_HIERARCHY_ORDER, SKS_SEVERITY_ERROR, -1, -1, (int32_t)i, where,
          "parent index %d is out of range (%zu joints)", (int)p, n);
      bad_range = 1;
    } else if (p >= (int32_t)i) {
      add(c, SKS_FINDING_HIERARCHY_ORDER, SKS_SEVERITY_ERROR, -1, -1, (int32_t)i, where,
          "parent %d '%s' does not come before its child (parent-before-child order broken)",
          (int)p, joint_name(c->model, p));
    }
  }
  if (bad_range) return; /* cannot walk chains safely */
  /* Cycle detection: walk each chain upwards, stamping joints with the walk
   * id; meeting this walk's own stamp means a cycle. Each cycle is reported
   * once, at the first joint found to repeat. O(n) overall. */
  size_t *stamp = calloc(n, sizeof *stamp);
  unsigned char *reported = calloc(n, 1);
  if (!stamp || !reported) { free(stamp); free(reported); c->oom = 1; return; }
  for (size_t i = 0; i < n; ++i) {
    if (stamp[i]) continue;
    size_t id = i + 1;
    int32_t j = (int32_t)i;
    while (j >= 0 && !stamp[j]) { stamp[j] = id; j = sk->parents[j]; }
    if (j >= 0 && stamp[j] == id && !reported[j]) {
      /* j is on a cycle: mark all its members reported, list the length. */
      size_t len = 0;
      int32_t k = j;
      do { reported[k] = 1; k = sk->parents[k]; ++len; } while (k != j && len <= n);
      snprintf(where, sizeof where, "joint %d '%s'", (int)j, joint_name(c->model, j));
      add(c, SKS_FINDING_HIERARCHY_CYCLE, SKS_SEVERITY_ERROR, -1, -1, j, where,
          "hierarchy cycle of %zu joint(s) — a joint is its own ancestor", len);
    }
  }
  free(stamp);
  free(reported);
}

static int all_finite(const float *x, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!isfinite(x[i])) return 0;
  return 1;
}

/* Rest transforms: what FK multiplies; one NaN poisons every descendant. */
static void check_rest(checker *c) {
  const sks_skeleton *sk = &c->model->skeleton;
  char where[160];
  for (size_t i = 0; sk->rest && i < sk->joint_count; ++i) {
    const sks_transform *t = &sk->rest[i];
    const char *what = !all_finite(&t->translation.x, 3) ? "translation"
                       : !all_finite(&t->rotation.x, 4)  ? "rotation"
                       : !all_finite(&t->scale.x, 3)     ? "scale"
                                                         : NULL;
    if (!what) continue;
    snprintf(where, sizeof where, "joint %zu '%s'", i, joint_name(c->model, (int32_t)i));
    add(c, SKS_FINDING_NONFINITE_TRANSFORM, SKS_SEVERITY_ERROR, -1, -1, (int32_t)i, where,
        "rest %s is not finite (NaN or infinite) — the pose of it and its descendants is undefined", what);
  }
}

/* Clips: one finding per track with a non-finite key time or value. */
static void check_clips(checker *c) {
  const sks_model *m = c->model;
  char where[200];
  for (size_t ci = 0; ci < m->clip_count; ++ci) {
    const sks_clip *cl = &m->clips[ci];
    const char *cn = cl->name ? cl->name : "";
    if (!isfinite(cl->duration)) {
      snprintf(where, sizeof where, "clip %zu '%s'", ci, cn);
      add(c, SKS_FINDING_NONFINITE_KEY, SKS_SEVERITY_ERROR, -1, -1, -1, where,
          "duration is not finite (%g)", (double)cl->duration);
    }
    for (size_t t = 0; t < cl->track_count; ++t) {
      const sks_track *tr = &cl->tracks[t];
      size_t nv = tr->key_count * sks_track_components(tr->path) *
                  (tr->interpolation == SKS_INTERP_CUBICSPLINE ? 3 : 1);
      int times_ok = !tr->times || all_finite(tr->times, tr->key_count);
      int values_ok = !tr->values || all_finite(tr->values, nv);
      if (times_ok && values_ok) continue;
      snprintf(where, sizeof where, "clip %zu '%s', track %zu (joint %d '%s')", ci, cn, t, (int)tr->joint,
               joint_name(m, tr->joint));
      add(c, SKS_FINDING_NONFINITE_KEY, SKS_SEVERITY_ERROR, -1, -1, tr->joint, where,
          "key %s not finite (NaN or infinite)", !times_ok ? "times are" : "values are");
    }
  }
}

static void check_skins(checker *c) {
  const sks_model *m = c->model;
  char where[160];
  for (size_t s = 0; s < m->skin_count; ++s) {
    const sks_skin *skin = &m->skins[s];
    for (size_t j = 0; j < skin->joint_count; ++j) {
      int32_t sj = skin->joints ? skin->joints[j] : -1;
      snprintf(where, sizeof where, "skin %zu '%s', joint %zu '%s'", s,
               skin->name ? skin->name : "", j, joint_name(m, sj));
      if (sj < 0 || (size_t)sj >= m->skeleton.joint_count) {
        add(c, SKS_FINDING_JOINT_RANGE, SKS_SEVERITY_ERROR, -1, -1, (int32_t)j, where,
            "skeleton joint index %d is out of range (%zu joints)", (int)sj,
            m->skeleton.joint_count);
      }
      if (!skin->inverse_bind) continue;
      const sks_mat4 *ib = &skin->inverse_bind[j];
      int finite = 1;
      for (int k = 0; k < 16; ++k) finite &= isfinite(ib->m[k]) != 0;
      sks_mat4 inv;
      if (!finite) {
        add(c, SKS_FINDING_BIND_SINGULAR, SKS_SEVERITY_ERROR, -1, -1, (int32_t)j, where,
            "inverse bind matrix has non-finite entries");
      } else if (!sks_m4_inverse(ib, &inv)) {
        add(c, SKS_FINDING_BIND_SINGULAR, SKS_SEVERITY_ERROR, -1, -1, (int32_t)j, where,
            "inverse bind matrix is not invertible");
      }
    }
  }
}

/* The rest pose as the other commands compute it (issue 11: check flags
 * what they refuse):
 *  - a joint that carries weight must have an invertible rest matrix
 *    (composed from the root, in double, as bake and control set up the
 *    solve: a zero scale on it or an ancestor makes it singular);
 *  - every vertex skinned in the rest pose (float, as pose) must be finite:
 *    finite but huge rest transforms overflow (a scale of 3e38).
 * Skipped when the hierarchy or a rest transform is already in error. */
static void check_rest_pose(checker *c) {
  const sks_model *m = c->model;
  const sks_skeleton *sk = &m->skeleton;
  size_t jc = sk->joint_count;
  if (!jc || !sk->parents || !sk->rest || c->out->total_by_kind[SKS_FINDING_HIERARCHY_CYCLE] ||
      c->out->total_by_kind[SKS_FINDING_HIERARCHY_ORDER] || c->out->total_by_kind[SKS_FINDING_NONFINITE_TRANSFORM] ||
      c->out->total_by_kind[SKS_FINDING_JOINT_RANGE] || c->out->total_by_kind[SKS_FINDING_INDEX_RANGE] ||
      c->out->total_by_kind[SKS_FINDING_NONFINITE_POSITION])
    return;
  for (size_t j = 0; j < jc; ++j)
    if (sk->parents[j] >= (int32_t)j) return; /* parent-before-child is checked above */
  uint8_t *weighted = calloc(jc, 1);
  sks_daffine *g = malloc(jc * sizeof *g);
  sks_mat4 *models = malloc(jc * sizeof *models);
  size_t nv = sks_model_total_vertex_count(m);
  float *pos = malloc((nv ? nv : 1) * 3 * sizeof(float));
  if (!weighted || !g || !models || !pos) {
    free(weighted); free(g); free(models); free(pos);
    c->oom = 1;
    return;
  }
  for (size_t pi = 0; pi < m->part_count; ++pi) {
    const sks_mesh_part *p = &m->parts[pi];
    if (p->skin < 0 || (size_t)p->skin >= m->skin_count || !p->joints || !p->weights) continue;
    const sks_skin *skin = &m->skins[p->skin];
    for (size_t i = 0; i < p->vertex_count * p->influence_count; ++i) {
      uint32_t sj = p->joints[i];
      if (p->weights[i] != 0.0f && sj < skin->joint_count && skin->joints[sj] >= 0 &&
          (size_t)skin->joints[sj] < jc)
        weighted[skin->joints[sj]] = 1;
    }
  }
  char where[200];
  for (size_t j = 0; j < jc; ++j) {
    sks_daffine l = sks_daff_from_transform(&sk->rest[j]);
    g[j] = sk->parents[j] < 0 ? l : sks_daff_mul(&g[sk->parents[j]], &l);
    double inv[9];
    if (weighted[j] && !sks_dm3_inverse(g[j].l, inv)) {
      snprintf(where, sizeof where, "joint %zu '%s'", j, joint_name(m, (int32_t)j));
      add(c, SKS_FINDING_REST_SINGULAR, SKS_SEVERITY_ERROR, -1, -1, (int32_t)j, where,
          "its rest matrix (from the root) is not invertible — a zero scale on it or an ancestor; "
          "bake, control and refit refuse it");
    }
  }
  sks_local_to_model_job fk = {sk->parents, sk->rest, jc, NULL, models};
  sks_error err;
  memset(&err, 0, sizeof err);
  /* NaN weights and bad inverse binds give non-finite positions too: already reported */
  if (nv && !c->out->total_by_kind[SKS_FINDING_WEIGHT_NAN] && !c->out->total_by_kind[SKS_FINDING_BIND_SINGULAR] &&
      sks_local_to_model_job_run(&fk) && sks_skin_model(m, models, SKS_SKIN_LBS, pos, NULL, &err) == SKS_OK) {
    size_t base = 0;
    for (size_t pi = 0; pi < m->part_count; ++pi) {
      const sks_mesh_part *p = &m->parts[pi];
      for (size_t v = 0; v < p->vertex_count; ++v) {
        const float *x = &pos[3 * (base + v)];
        if (isfinite(x[0]) && isfinite(x[1]) && isfinite(x[2])) continue;
        snprintf(where, sizeof where, "part %zu '%s', vertex %zu", pi, p->name ? p->name : "", v);
        add(c, SKS_FINDING_NONFINITE_POSITION, SKS_SEVERITY_ERROR, (int32_t)pi, (int64_t)v, -1, where,
            "skinned in the rest pose it is not finite (the rest transforms overflow a float); "
            "pose, bake and control refuse it");
        break; /* one per part */
      }
      base += p->vertex_count;
    }
  }
  free(weighted); free(g); free(models); free(pos);
}

static void check_part(checker *c, size_t pi, float tol, uint32_t limit) {
  const sks_model *m = c->model;
  const sks_mesh_part *p = &m->parts[pi];
  const char *pname = p->name ? p->name : "";
  char where[200];
  snprintf(where, sizeof where, "part %zu '%s'", pi, pname);

  /* Positions. */
  for (size_t v = 0; p->positions && v < p->vertex_count; ++v) {
    const float *x = &p->positions[3 * v];
    if (!isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2])) {
      snprintf(where, sizeof where, "part %zu '%s', vertex %zu", pi, pname, v);
      add(c, SKS_FINDING_NONFINITE_POSITION, SKS_SEVERITY_ERROR, (int32_t)pi, (int64_t)v, -1,
          where, "position is not finite (%g, %g, %g)", (double)x[0], (double)x[1], (double)x[2]);
    }
  }
  /* Triangle indices. */
  for (size_t i = 0; p->indices && i < p->index_count; ++i) {
    if (p->indices[i] >= p->vertex_count) {
      snprintf(where, sizeof where, "part %zu '%s', triangle %zu", pi, pname, i / 3);
      add(c, SKS_FINDING_INDEX_RANGE, SKS_SEVERITY_ERROR, (int32_t)pi, (int64_t)p->indices[i], -1,
          where, "vertex index %u is out of range (%zu vertices)", p->indices[i], p->vertex_count);
    }
  }
  snprintf(where, sizeof where, "part %zu '%s'", pi, pname);
  if (p->skin < 0) {
    if (p->node < 0 || (size_t)p->node >= m->skeleton.joint_count)
      add(c, SKS_FINDING_INDEX_RANGE, SKS_SEVERITY_ERROR, (int32_t)pi, -1, p->node, where,
          "rigid part follows node %d, which does not exist (%zu joints)", (int)p->node,
          m->skeleton.joint_count);
    return;
  }
  if ((size_t)p->skin >= m->skin_count) {
    add(c, SKS_FINDING_INDEX_RANGE, SKS_SEVERITY_ERROR, (int32_t)pi, -1, -1, where,
        "skin %d does not exist (%zu skins)", (int)p->skin, m->skin_count);
    return;
  }
  const sks_skin *skin = &m->skins[p->skin];
  uint32_t k = p->influence_count;
  if (k == 0 || !p->joints || !p->weights) {
    add(c, SKS_FINDING_WEIGHT_ZERO, SKS_SEVERITY_ERROR, (int32_t)pi, -1, -1, where,
        "skinned part has no joint weights — cannot skin");
    return;
  }
  if (k > SKS_MAX_INFLUENCES) {
    add(c, SKS_FINDING_TOO_MANY_INFLUENCES, SKS_SEVERITY_ERROR, (int32_t)pi, -1, -1, where,
        "%u influence slots per vertex, the skinning kernels take at most %d", k,
        SKS_MAX_INFLUENCES);
    return; /* arrays may not be what the header promises; don't walk them */
  }
  if (p->dropped_influence_vertices > 0) {
    /* The loader kept SKS_MAX_INFLUENCES of them: the file's skinning cannot
     * be reproduced exactly. One finding per part, at the first vertex. */
    snprintf(where, sizeof where, "part %zu '%s', vertex %zu", pi, pname,
             p->first_dropped_influence_vertex);
    add(c, SKS_FINDING_TOO_MANY_INFLUENCES, SKS_SEVERITY_WARNING, (int32_t)pi,
        (int64_t)p->first_dropped_influence_vertex, -1, where,
        "%zu vertex(es) have more influences in the file (up to %u) than the kernel supports "
        "(%d); the smallest were dropped at load",
        p->dropped_influence_vertices, p->file_max_influences, SKS_MAX_INFLUENCES);
  }
  for (size_t v = 0; v < p->vertex_count; ++v) {
    const uint16_t *J = &p->joints[(size_t)k * v];
    const float *W = &p->weights[(size_t)k * v];
    int bad = 0;
    uint32_t nonzero = 0;
    double sum = 0.0;
    /* the place is formatted only for a finding: two snprintf per influence
     * of every vertex were half of a 56k-vertex bake's setup */
#define SKS_INFLUENCE_WHERE()                                                                    \
  snprintf(where, sizeof where, "part %zu '%s', vertex %zu, joint %u '%s'", pi, pname, v, (unsigned)J[i], \
           skin_joint_name(m, skin, J[i]))
    for (uint32_t i = 0; i < k; ++i) {
      float w = W[i];
      if (J[i] >= skin->joint_count || isnan(w) || isinf(w) || w < 0.0f) SKS_INFLUENCE_WHERE();
      if (J[i] >= skin->joint_count) {
        add(c, SKS_FINDING_JOINT_RANGE, SKS_SEVERITY_ERROR, (int32_t)pi, (int64_t)v, J[i], where,
            "joint index is out of range (skin %d has %zu joints; weight %g)", (int)p->skin,
            skin->joint_count, (double)w);
      }
      if (isnan(w) || isinf(w)) {
        add(c, SKS_FINDING_WEIGHT_NAN, SKS_SEVERITY_ERROR, (int32_t)pi, (int64_t)v, J[i], where,
            "weight is %s", isnan(w) ? "NaN" : "infinite");
        bad = 1;
        continue;
      }
      if (w < 0.0f) {
        add(c, SKS_FINDING_WEIGHT_NEGATIVE, SKS_SEVERITY_ERROR, (int32_t)pi, (int64_t)v, J[i],
            where, "weight is negative (%g)", (double)w);
        bad = 1;
        continue;
      }
      if (w > 0.0f) ++nonzero;
      sum += w;
    }
#undef SKS_INFLUENCE_WHERE
    if (nonzero > limit || (!bad && (sum == 0.0 || fabs(sum - 1.0) > tol)))
      snprintf(where, sizeof where, "part %zu '%s', vertex %zu", pi, pname, v);
    if (nonzero > limit) {
      add(c, SKS_FINDING_TOO_MANY_INFLUENCES, SKS_SEVERITY_WARNING, (int32_t)pi, (int64_t)v, -1,
          where, "%u non-zero influences, more than the limit of %u", nonzero, limit);
    }
    if (bad) continue; /* sum is meaningless with NaN / negative weights */
    if (sum == 0.0) {
      add(c, SKS_FINDING_WEIGHT_ZERO, SKS_SEVERITY_ERROR, (int32_t)pi, (int64_t)v, -1, where,
          "weights sum to 0 — cannot normalise");
    } else if (fabs(sum - 1.0) > tol) {
      add(c, SKS_FINDING_WEIGHT_SUM, SKS_SEVERITY_ERROR, (int32_t)pi, (int64_t)v, -1, where,
          "weights sum to %.6g, not 1 (repair normalises)", sum);
    }
  }
}

sks_result sks_check(const sks_model *model, const sks_check_options *options,
                     sks_findings *out, sks_error *err) {
  if (!out) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_check: out is NULL");
  memset(out, 0, sizeof *out);
  if (!model) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_check: model is NULL");
  checker c = {model, base_name(model->source_path), out, 1000, 0};
  float tol = 1e-3f;
  uint32_t limit = SKS_MAX_INFLUENCES;
  if (options) {
    if (options->sum_tolerance > 0.0f) tol = options->sum_tolerance;
    if (options->max_influences > 0) limit = options->max_influences;
    if (options->max_items > 0) c.cap = options->max_items;
  }
  check_hierarchy(&c);
  check_rest(&c);
  check_skins(&c);
  for (size_t i = 0; i < model->part_count; ++i) check_part(&c, i, tol, limit);
  check_rest_pose(&c);
  check_clips(&c);
  if (c.oom) {
    sks_findings_free(out);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory while checking",
                         c.file);
  }
  return SKS_OK;
}

/* Not refused by bake: LBS with weights that do not sum to 1, or with
 * all-zero vertices, is still a well-defined surface the solver can fit. */
static int bake_tolerates(sks_finding_kind k) {
  return k == SKS_FINDING_WEIGHT_SUM || k == SKS_FINDING_WEIGHT_ZERO;
}

sks_result sks_model_validate_for_bake(const sks_model *model, const char *role, sks_error *err) {
  if (!model) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_model_validate_for_bake: model is NULL");
  if (!role) role = "input";
  sks_findings f;
  sks_check_options o = {0, 0, 0};
  sks_result r = sks_check(model, &o, &f, err);
  if (r != SKS_OK) return r;
  size_t blocking = 0;
  int first_kind = -1;
  for (int k = 0; k < SKS_FINDING_KIND_COUNT; ++k) {
    if (bake_tolerates((sks_finding_kind)k)) continue;
    size_t n = f.total_by_kind[k];
    /* warnings of a kind (too_many_influences dropped at load) do not block */
    size_t errors = 0;
    for (size_t i = 0; i < f.count; ++i)
      if ((int)f.items[i].kind == k && f.items[i].severity == SKS_SEVERITY_ERROR) ++errors;
    if (f.count < f.error_count + f.warning_count && n > errors) errors = n; /* capped: assume errors */
    blocking += errors;
    if (errors && first_kind < 0) first_kind = k;
  }
  if (blocking) {
    const char *first = NULL;
    for (size_t i = 0; i < f.count && !first; ++i)
      if (f.items[i].severity == SKS_SEVERITY_ERROR && !bake_tolerates(f.items[i].kind)) first = f.items[i].message;
    char fallback[300];
    if (!first) {
      snprintf(fallback, sizeof fallback, "%s: %s", base_name(model->source_path),
               sks_finding_kind_name((sks_finding_kind)first_kind));
      first = fallback;
    }
    r = sks_error_set(err, SKS_ERR_INVALID,
                      "%s (bake %s: %zu such error(s) in this input, nothing solved; see 'skinsolve check' "
                      "and 'skinsolve repair')",
                      first, role, blocking);
  }
  sks_findings_free(&f);
  return r;
}

void sks_findings_free(sks_findings *findings) {
  if (!findings) return;
  free(findings->items);
  memset(findings, 0, sizeof *findings);
}

/* ---- repair ------------------------------------------------------------- */

/* Index in the skin of skeleton joint `node`, or 0 when it is not in it. */
static uint16_t fallback_joint(const sks_skin *skin, int32_t node) {
  for (size_t j = 0; j < skin->joint_count && j <= UINT16_MAX; ++j)
    if (skin->joints[j] == node) return (uint16_t)j;
  return 0;
}

sks_result sks_repair(sks_model *model, sks_repair_report *report, sks_error *err) {
  sks_repair_report r;
  memset(&r, 0, sizeof r);
  if (!model) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_repair: model is NULL");
  /* Too many slots for the kernels: keep the 8 largest first. */
  for (size_t pi = 0; pi < model->part_count; ++pi) {
    const sks_mesh_part *p = &model->parts[pi];
    if (p->skin >= 0 && p->influence_count > SKS_MAX_INFLUENCES) {
      r.influences_limited += p->vertex_count;
    }
  }
  if (r.influences_limited) {
    sks_result res = sks_limit_influences(model, SKS_MAX_INFLUENCES, err);
    if (res != SKS_OK) return res;
  }
  for (size_t pi = 0; pi < model->part_count; ++pi) {
    sks_mesh_part *p = &model->parts[pi];
    if (p->skin < 0 || (size_t)p->skin >= model->skin_count) continue;
    const sks_skin *skin = &model->skins[p->skin];
    uint32_t k = p->influence_count;
    if (k == 0 || !p->joints || !p->weights || skin->joint_count == 0) continue;
    for (size_t v = 0; v < p->vertex_count; ++v) {
      uint16_t *J = &p->joints[(size_t)k * v];
      float *W = &p->weights[(size_t)k * v];
      double sum = 0.0;
      for (uint32_t i = 0; i < k; ++i) {
        if (J[i] >= skin->joint_count) {
          J[i] = 0; W[i] = 0.0f; ++r.out_of_range_dropped;
        } else if (isnan(W[i]) || isinf(W[i])) {
          W[i] = 0.0f; ++r.nans_zeroed;
        } else if (W[i] < 0.0f) {
          W[i] = 0.0f; ++r.negatives_clamped;
        }
        sum += W[i];
      }
      if (sum == 0.0) {
        /* Nothing to normalise: bind rigidly to the part's own node. */
        for (uint32_t i = 0; i < k; ++i) { J[i] = 0; W[i] = 0.0f; }
        J[0] = fallback_joint(skin, p->node);
        W[0] = 1.0f;
        ++r.zero_weight_vertices;
      } else if (fabs(sum - 1.0) > 1e-7) {
        for (uint32_t i = 0; i < k; ++i) W[i] = (float)(W[i] / sum);
        ++r.normalized;
      }
    }
  }
  if (report) *report = r;
  return SKS_OK;
}

sks_result sks_limit_influences(sks_model *model, uint32_t max_influences, sks_error *err) {
  if (!model) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_limit_influences: model is NULL");
  if (max_influences < 1 || max_influences > SKS_MAX_INFLUENCES)
    return sks_error_set(err, SKS_ERR_ARGUMENT,
                         "influence limit %u is out of range (1..%d)", max_influences,
                         SKS_MAX_INFLUENCES);
  for (size_t pi = 0; pi < model->part_count; ++pi) {
    sks_mesh_part *p = &model->parts[pi];
    uint32_t k = p->influence_count, K = max_influences;
    if (p->skin < 0 || k <= K || !p->joints || !p->weights) continue;
    size_t n = p->vertex_count;
    uint16_t *nj = n ? malloc(n * K * sizeof *nj) : NULL;
    float *nw = n ? malloc(n * K * sizeof *nw) : NULL;
    if (n && (!nj || !nw)) {
      free(nj); free(nw);
      return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory while limiting influences");
    }
    for (size_t v = 0; v < n; ++v) {
      const uint16_t *J = &p->joints[(size_t)k * v];
      const float *W = &p->weights[(size_t)k * v];
      unsigned char taken[256] = {0}; /* k <= 255 slots */
      double sum = 0.0;
      for (uint32_t o = 0; o < K; ++o) {
        /* Largest remaining weight; NaN counts as smallest; ties keep slot order. */
        int best = -1;
        for (uint32_t i = 0; i < k && i < 256; ++i) {
          if (taken[i]) continue;
          if (best < 0) { best = (int)i; continue; }
          float a = W[i], b = W[best];
          if (!isnan(a) && (isnan(b) || a > b)) best = (int)i;
        }
        if (best < 0) { nj[v * K + o] = 0; nw[v * K + o] = 0.0f; continue; }
        taken[best] = 1;
        nj[v * K + o] = J[best];
        nw[v * K + o] = W[best];
        if (isfinite(W[best]) && W[best] > 0.0f) sum += W[best];
      }
      if (sum > 0.0)
        for (uint32_t o = 0; o < K; ++o) {
          float *w = &nw[v * K + o];
          if (isfinite(*w) && *w > 0.0f) *w = (float)(*w / sum);
        }
    }
    free(p->joints);
    free(p->weights);
    p->joints = nj;
    p->weights = nw;
    p->influence_count = K;
  }
  return SKS_OK;
}
