/* sks_refit: the weight doctor's cure. Re-fits a target rig's skin weights
 * so that its own LBS reproduces the source's surface motion (issue 10):
 *
 *   y_fj   what to reproduce: per frame f the surface at target vertex j in the
 *          target's bind space, from ONE call (record_motion: the bake's record
 *          stage, sks_bake with keep_surfaces -> target_surface);
 *   start  per frame a rigid fit (Horn) of every bone to the vertices it
 *          dominates in the original weights: baked transforms compensate for
 *          blurry weights and the weight fit would lock onto them;
 *   round  (a) weight step, transforms fixed: per group of co-located
 *          vertices (same part, same bind position: one solve, identical
 *          weights) minimise sum_f |sum_c w_c M_fc x - y_f|^2 (+ the optional
 *          pull lambda F D^2 |w - w0|^2) over w >= 0, sum w = 1, by trying
 *          every support of <= k joints among 8 candidates (exact: the optimum
 *          is the best feasible equality-constrained solution of some support);
 *          k = 2 in the first third of the rounds, K after;
 *          (b) transform step, weights fixed: the bake itself.
 * Quality before / after: real bakes of the original and re-fitted target
 * over all vertices and frames, fitting and held-out clips alike. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "math/sks_math.h"
#include "solve/metrics.h"
#include "solve/solve_internal.h"

#define REFIT_CANDIDATES 8

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: stable on a shared machine */
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *model_name(const sks_model *m) {
  if (m && m->source_path) {
    const char *s = strrchr(m->source_path, '/');
    return s ? s + 1 : m->source_path;
  }
  return "target";
}

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

void sks_refit_result_free(sks_refit_result *r) {
  if (!r) return;
  sks_model_free(&r->model);
  for (size_t i = 0; i < r->clip_count; ++i) {
    free(r->clips[i].name);
    sks_diagnosis_free(&r->clips[i].diagnosis_before);
    sks_diagnosis_free(&r->clips[i].diagnosis_after);
  }
  free(r->clips);
  free(r->round_fit_quality);
  memset(r, 0, sizeof *r);
}

/* What to reproduce. Today the bake records the source surface on the
 * target's vertices through the correspondence; when the bake transfers
 * motion (MISSION.md's y_fj) this call follows it unchanged. The result's
 * clips are in `names` order, each with target_surface / solved_surface. */
static sks_result record_motion(const sks_model *src, const sks_model *tg, const char *const *names,
                                size_t n, size_t max_constraints, unsigned threads,
                                sks_bake_result *out, sks_error *err) {
  sks_bake_options bo;
  memset(&bo, 0, sizeof bo);
  bo.clip_names = names;
  bo.clip_name_count = n;
  bo.max_constraints = max_constraints;
  bo.threads = threads;
  bo.keep_surfaces = 1;
  return sks_bake(src, tg, &bo, out, err);
}

/* ---- vertex groups and candidates ------------------------------------------ */

typedef struct vkey { uint32_t part, v; float x, y, z; } vkey;

static int cmp_vkey(const void *a, const void *b) {
  const vkey *p = a, *q = b;
  if (p->part != q->part) return p->part < q->part ? -1 : 1;
  if (p->x != q->x) return p->x < q->x ? -1 : 1;
  if (p->y != q->y) return p->y < q->y ? -1 : 1;
  if (p->z != q->z) return p->z < q->z ? -1 : 1;
  return (p->v > q->v) - (p->v < q->v);
}

typedef struct refit_ctx {
  const sks_model *tg;
  size_t V, G, S, slots;       /* vertices, groups, skins, total skin slots */
  size_t *part_base;           /* global index of each part's first vertex */
  size_t *slot_base;           /* per skin: offset into the slot arrays */
  uint32_t *vpart;             /* per vertex */
  uint32_t *gstart, *gvert;    /* group g: vertices gvert[gstart[g] .. gstart[g+1]) */
  uint32_t *gpart;             /* per group */
  double *gx;                  /* 3 per group: bind position */
  uint16_t *cand;              /* REFIT_CANDIDATES per group: skin slots */
  uint8_t *ncand;
  double *w0;                  /* REFIT_CANDIDATES per group: original weights */
  size_t F;                    /* fitting frames (all fitting clips) */
  float *y;                    /* F * G * 3: mean y over a group's copies */
  sks_daffine *T;              /* F * slots: skin matrices M = model_j * IBM */
} refit_ctx;

static void ctx_free(refit_ctx *c) {
  free(c->part_base); free(c->slot_base); free(c->vpart); free(c->gstart); free(c->gvert);
  free(c->gpart); free(c->gx); free(c->cand); free(c->ncand); free(c->w0); free(c->y); free(c->T);
  memset(c, 0, sizeof *c);
}

static double seg_dist2(const double *p, const double *a, const double *b) {
  double ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, ap[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
  double l2 = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2], t = 0;
  if (l2 > 0) t = (ap[0] * ab[0] + ap[1] * ab[1] + ap[2] * ab[2]) / l2;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  double d[3] = {ap[0] - t * ab[0], ap[1] - t * ab[1], ap[2] - t * ab[2]};
  return d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
}

static sks_result build_groups(refit_ctx *c, const sks_model *tg, sks_error *err) {
  const char *name = model_name(tg);
  size_t J = tg->skeleton.joint_count;
  c->tg = tg;
  c->V = sks_model_vertex_count(tg);
  c->S = tg->skin_count;
  c->part_base = calloc(tg->part_count + 1, sizeof(size_t));
  c->slot_base = calloc(c->S + 1, sizeof(size_t));
  c->vpart = malloc((c->V ? c->V : 1) * sizeof(uint32_t));
  vkey *keys = malloc((c->V ? c->V : 1) * sizeof(vkey));
  uint8_t *weighted = calloc(J ? J : 1, 1);
  if (!c->part_base || !c->slot_base || !c->vpart || !keys || !weighted) {
    free(keys); free(weighted);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory preparing the refit", name);
  }
  for (size_t s = 0; s < c->S; ++s) c->slot_base[s + 1] = c->slot_base[s] + tg->skins[s].joint_count;
  c->slots = c->slot_base[c->S];
  size_t v = 0;
  for (size_t pi = 0; pi < tg->part_count; ++pi) {
    const sks_mesh_part *p = &tg->parts[pi];
    c->part_base[pi] = v;
    if (p->skin < 0) continue;
    const sks_skin *skin = &tg->skins[p->skin];
    for (size_t i = 0; i < p->vertex_count; ++i, ++v) {
      c->vpart[v] = (uint32_t)pi;
      keys[v].part = (uint32_t)pi;
      keys[v].v = (uint32_t)v;
      keys[v].x = p->positions[3 * i];
      keys[v].y = p->positions[3 * i + 1];
      keys[v].z = p->positions[3 * i + 2];
      for (uint32_t k = 0; k < p->influence_count; ++k) {
        uint16_t s = p->joints[i * p->influence_count + k];
        if (p->weights[i * p->influence_count + k] > 0 && s < skin->joint_count &&
            skin->joints[s] >= 0 && (size_t)skin->joints[s] < J)
          weighted[skin->joints[s]] = 1;
      }
    }
  }
  c->part_base[tg->part_count] = v;
  qsort(keys, c->V, sizeof *keys, cmp_vkey);
  size_t G = 0;
  for (size_t i = 0; i < c->V; ++i)
    if (i == 0 || cmp_vkey(&(vkey){keys[i].part, 0, keys[i].x, keys[i].y, keys[i].z},
                           &(vkey){keys[i - 1].part, 0, keys[i - 1].x, keys[i - 1].y, keys[i - 1].z}) != 0)
      ++G;
  c->G = G;
  c->gstart = malloc((G + 1) * sizeof(uint32_t));
  c->gvert = malloc((c->V ? c->V : 1) * sizeof(uint32_t));
  c->gpart = malloc((G ? G : 1) * sizeof(uint32_t));
  c->gx = malloc((G ? G : 1) * 3 * sizeof(double));
  c->cand = calloc((G ? G : 1) * REFIT_CANDIDATES, sizeof(uint16_t));
  c->ncand = calloc(G ? G : 1, 1);
  c->w0 = calloc((G ? G : 1) * REFIT_CANDIDATES, sizeof(double));
  if (!c->gstart || !c->gvert || !c->gpart || !c->gx || !c->cand || !c->ncand || !c->w0) {
    free(keys); free(weighted);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory preparing the refit", name);
  }
  size_t g = 0;
  for (size_t i = 0; i < c->V; ++i) {
    if (i == 0 || keys[i].part != keys[i - 1].part || keys[i].x != keys[i - 1].x ||
        keys[i].y != keys[i - 1].y || keys[i].z != keys[i - 1].z) {
      c->gstart[g] = (uint32_t)i;
      c->gpart[g] = keys[i].part;
      c->gx[3 * g] = keys[i].x; c->gx[3 * g + 1] = keys[i].y; c->gx[3 * g + 2] = keys[i].z;
      ++g;
    }
    c->gvert[i] = keys[i].v;
  }
  c->gstart[G] = (uint32_t)c->V;
  free(keys);
  /* candidates: the group's original influences (first copy, by weight),
   * then the nearest weighted joints of the part's skin by distance to their
   * bone segments (head to each child head in the skin; a leaf: its head) */
  for (g = 0; g < G; ++g) {
    const sks_mesh_part *p = &tg->parts[c->gpart[g]];
    const sks_skin *skin = &tg->skins[p->skin];
    size_t i = c->gvert[c->gstart[g]] - c->part_base[c->gpart[g]];
    uint16_t *cd = &c->cand[g * REFIT_CANDIDATES];
    double *w0 = &c->w0[g * REFIT_CANDIDATES];
    size_t n = 0;
    for (uint32_t k = 0; k < p->influence_count; ++k) {
      uint16_t s = p->joints[i * p->influence_count + k];
      float w = p->weights[i * p->influence_count + k];
      if (!(w > 0) || s >= skin->joint_count || skin->joints[s] < 0 || (size_t)skin->joints[s] >= J) continue;
      size_t q = 0;
      while (q < n && cd[q] != s) ++q;
      if (q < n) { w0[q] += w; continue; }
      if (n == REFIT_CANDIDATES) continue;
      cd[n] = s; w0[n] = w; ++n;
    }
    /* original weights summed to 1 for the pull (the file's may not) */
    double ws = 0;
    for (size_t q = 0; q < n; ++q) ws += w0[q];
    for (size_t q = 0; q < n && ws > 0; ++q) w0[q] /= ws;
    while (n < REFIT_CANDIDATES) {
      double best = INFINITY;
      int bs = -1;
      for (size_t s = 0; s < skin->joint_count; ++s) {
        int32_t j = skin->joints[s];
        if (j < 0 || (size_t)j >= J || !weighted[j]) continue;
        size_t q = 0;
        while (q < n && cd[q] != s) ++q;
        if (q < n) continue;
        sks_mat4 bind;
        if (!sks_m4_inverse(&skin->inverse_bind[s], &bind)) continue;
        double head[3] = {bind.m[12], bind.m[13], bind.m[14]}, d = INFINITY;
        int child = 0;
        for (size_t s2 = 0; s2 < skin->joint_count; ++s2) {
          int32_t j2 = skin->joints[s2];
          sks_mat4 b2;
          if (j2 < 0 || (size_t)j2 >= J || tg->skeleton.parents[j2] != j) continue;
          if (!sks_m4_inverse(&skin->inverse_bind[s2], &b2)) continue;
          double tail[3] = {b2.m[12], b2.m[13], b2.m[14]};
          d = fmin(d, seg_dist2(&c->gx[3 * g], head, tail));
          child = 1;
        }
        if (!child) d = seg_dist2(&c->gx[3 * g], head, head);
        if (d < best) { best = d; bs = (int)s; }
      }
      if (bs < 0) break;
      cd[n++] = (uint16_t)bs;
    }
    c->ncand[g] = (uint8_t)n;
  }
  free(weighted);
  return SKS_OK;
}

/* ---- transforms ---------------------------------------------------------------- */

/* The rigid start: per frame and joint, Horn's fit of bind positions x to y
 * over the vertices the joint dominates in the original weights (fallback:
 * those where its weight is at least half its largest; a joint with none
 * follows its nearest fitted ancestor). */
static sks_result rigid_start(refit_ctx *c, const float *yv, sks_error *err) {
  const sks_model *tg = c->tg;
  size_t J = tg->skeleton.joint_count, V = c->V;
  int32_t *dom = malloc((V ? V : 1) * sizeof(int32_t));
  float *domw = malloc((V ? V : 1) * sizeof(float));
  float *wmax = calloc(J ? J : 1, sizeof(float));
  size_t *count = calloc(J ? J : 1, sizeof(size_t));
  double *acc = malloc((J ? J : 1) * 16 * sizeof(double)); /* n, sx(3), sy(3), sxy(9) */
  sks_daffine *M = malloc((J ? J : 1) * sizeof(sks_daffine));
  uint8_t *has = malloc(J ? J : 1);
  if (!dom || !domw || !wmax || !count || !acc || !M || !has) {
    free(dom); free(domw); free(wmax); free(count); free(acc); free(M); free(has);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory (refit start)");
  }
  /* per vertex: the joint it follows in the start (dominant, or fallback) */
  for (size_t v = 0; v < V; ++v) {
    const sks_mesh_part *p = &tg->parts[c->vpart[v]];
    const sks_skin *skin = &tg->skins[p->skin];
    size_t i = v - c->part_base[c->vpart[v]];
    dom[v] = -1;
    domw[v] = 0;
    for (uint32_t k = 0; k < p->influence_count; ++k) {
      uint16_t s = p->joints[i * p->influence_count + k];
      float w = p->weights[i * p->influence_count + k];
      if (!(w > 0) || s >= skin->joint_count || skin->joints[s] < 0 || (size_t)skin->joints[s] >= J) continue;
      int32_t j = skin->joints[s];
      if (w > wmax[j]) wmax[j] = w;
      if (w > domw[v]) { domw[v] = w; dom[v] = j; }
    }
    if (dom[v] >= 0) count[dom[v]]++;
  }
  for (size_t f = 0; f < c->F; ++f) {
    memset(acc, 0, J * 16 * sizeof(double));
    for (int pass = 0; pass < 2; ++pass) /* 0: dominated, 1: fallback for joints with < 3 */
      for (size_t v = 0; v < V; ++v) {
        const sks_mesh_part *p = &tg->parts[c->vpart[v]];
        const sks_skin *skin = &tg->skins[p->skin];
        size_t i = v - c->part_base[c->vpart[v]];
        for (uint32_t k = 0; k < p->influence_count; ++k) {
          uint16_t s = p->joints[i * p->influence_count + k];
          float w = p->weights[i * p->influence_count + k];
          if (!(w > 0) || s >= skin->joint_count || skin->joints[s] < 0 || (size_t)skin->joints[s] >= J) continue;
          int32_t j = skin->joints[s];
          int use = pass == 0 ? dom[v] == j : (count[j] < 3 && dom[v] != j && w >= 0.5f * wmax[j]);
          if (!use) continue;
          double x[3] = {p->positions[3 * i], p->positions[3 * i + 1], p->positions[3 * i + 2]};
          const float *y = &yv[(f * V + v) * 3];
          double *a = &acc[16 * j];
          a[0] += 1;
          for (int r = 0; r < 3; ++r) { a[1 + r] += x[r]; a[4 + r] += y[r]; }
          for (int r = 0; r < 3; ++r)
            for (int q = 0; q < 3; ++q) a[7 + 3 * r + q] += x[r] * (double)y[q];
        }
      }
    for (size_t j = 0; j < J; ++j) {
      const double *a = &acc[16 * j];
      has[j] = a[0] > 0;
      if (!has[j]) continue;
      double cx[3], cy[3], S[9];
      for (int r = 0; r < 3; ++r) { cx[r] = a[1 + r] / a[0]; cy[r] = a[4 + r] / a[0]; }
      for (int r = 0; r < 3; ++r)
        for (int q = 0; q < 3; ++q) S[3 * r + q] = a[7 + 3 * r + q] - a[0] * cx[r] * cy[q];
      sks_dquat id = {0, 0, 0, 1};
      sks_dquat q = sks_horn_rotation(S, id);
      sks_dq_to_m3(q, M[j].l);
      double rc[3];
      sks_dm3_apply(M[j].l, cx, rc);
      for (int r = 0; r < 3; ++r) M[j].t[r] = cy[r] - rc[r];
    }
    for (size_t j = 0; j < J; ++j) /* parent-first: an unfitted joint follows its parent */
      if (!has[j]) {
        int32_t par = tg->skeleton.parents[j];
        M[j] = par >= 0 ? M[par] : sks_daff_identity();
        has[j] = par >= 0 ? has[par] : 0;
      }
    for (size_t s = 0; s < c->S; ++s)
      for (size_t k = 0; k < tg->skins[s].joint_count; ++k) {
        int32_t j = tg->skins[s].joints[k];
        c->T[f * c->slots + c->slot_base[s] + k] = j >= 0 && (size_t)j < J ? M[j] : sks_daff_identity();
      }
  }
  free(dom); free(domw); free(wmax); free(count); free(acc); free(M); free(has);
  return SKS_OK;
}

/* Transforms from baked local joint transforms: M = model_j * IBM. */
static sks_result transforms_from_bake(refit_ctx *c, const sks_bake_result *br, size_t nfit,
                                       sks_error *err) {
  const sks_model *tg = c->tg;
  size_t J = tg->skeleton.joint_count, f = 0;
  sks_daffine *models = malloc((J ? J : 1) * sizeof(sks_daffine));
  if (!models) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory (refit transforms)");
  for (size_t ci = 0; ci < nfit; ++ci) {
    const sks_baked_clip *bc = &br->clips[ci];
    for (size_t k = 0; k < bc->frame_count; ++k, ++f) {
      sks_dfk(&tg->skeleton, &bc->locals[k * J], models);
      for (size_t s = 0; s < c->S; ++s)
        for (size_t q = 0; q < tg->skins[s].joint_count; ++q) {
          int32_t j = tg->skins[s].joints[q];
          sks_daffine ibm = sks_daff_from_m4(&tg->skins[s].inverse_bind[q]);
          c->T[f * c->slots + c->slot_base[s] + q] =
              j >= 0 && (size_t)j < J ? sks_daff_mul(&models[j], &ibm) : sks_daff_identity();
        }
    }
  }
  free(models);
  return SKS_OK;
}

/* ---- the weight step ------------------------------------------------------------- */

/* min w^T A w - 2 b^T w subject to sum w = 1 on n unknowns: the KKT system
 * [A 1; 1^T 0] [w; nu] = [b; 1] by Gaussian elimination with partial
 * pivoting. Returns 0 when singular. */
static int kkt_solve(const double *A, const double *b, int n, double *w) {
  double m[9 * 9], x[9];
  int N = n + 1;
  for (int r = 0; r < n; ++r) {
    for (int q = 0; q < n; ++q) m[r * N + q] = A[r * n + q];
    m[r * N + n] = 1;
    x[r] = b[r];
  }
  for (int q = 0; q < n; ++q) m[n * N + q] = 1;
  m[n * N + n] = 0;
  x[n] = 1;
  double scale = 0;
  for (int r = 0; r < n; ++r) scale = fmax(scale, fabs(A[r * n + r]));
  if (!sks_dsolve_small(m, x, N, 1e-14 * (scale > 1 ? scale : 1))) return 0;
  for (int r = 0; r < n; ++r) w[r] = x[r];
  return 1;
}

/* Best weights of group g over supports of <= kmax candidates; out: weights
 * per candidate (0 off the support). */
static void weight_step_group(const refit_ctx *c, size_t g, uint32_t kmax, double reg, double *out) {
  int n = c->ncand[g];
  const uint16_t *cd = &c->cand[g * REFIT_CANDIDATES];
  size_t base = c->slot_base[c->tg->parts[c->gpart[g]].skin];
  const double *x = &c->gx[3 * g];
  double G[REFIT_CANDIDATES * REFIT_CANDIDATES] = {0}, h[REFIT_CANDIDATES] = {0};
  for (size_t f = 0; f < c->F; ++f) {
    double p[REFIT_CANDIDATES][3];
    const float *y = &c->y[(f * c->G + g) * 3];
    for (int a = 0; a < n; ++a) {
      sks_daff_point(&c->T[f * c->slots + base + cd[a]], x, p[a]);
      h[a] += p[a][0] * y[0] + p[a][1] * y[1] + p[a][2] * y[2];
    }
    for (int a = 0; a < n; ++a)
      for (int b = a; b < n; ++b) G[a * n + b] += p[a][0] * p[b][0] + p[a][1] * p[b][1] + p[a][2] * p[b][2];
  }
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < a; ++b) G[a * n + b] = G[b * n + a];
  /* pull toward the original weights (always a whisper: it breaks ties where
   * the clips do not determine the weights, e.g. a vertex that never moves) */
  const double *w0 = &c->w0[g * REFIT_CANDIDATES];
  for (int a = 0; a < n; ++a) { G[a * n + a] += reg; h[a] += reg * w0[a]; }
  double best = INFINITY;
  for (int a = 0; a < n; ++a) out[a] = 0;
  for (unsigned mask = 1; mask < (1u << n); ++mask) {
    int idx[REFIT_CANDIDATES], k = 0;
    for (int a = 0; a < n; ++a)
      if (mask & (1u << a)) idx[k++] = a;
    if ((uint32_t)k > kmax) continue;
    double A[REFIT_CANDIDATES * REFIT_CANDIDATES], b[REFIT_CANDIDATES], w[REFIT_CANDIDATES];
    for (int r = 0; r < k; ++r) {
      b[r] = h[idx[r]];
      for (int q = 0; q < k; ++q) A[r * k + q] = G[idx[r] * n + idx[q]];
    }
    if (k == 1) w[0] = 1;
    else if (!kkt_solve(A, b, k, w)) continue;
    int ok = 1;
    for (int r = 0; r < k; ++r) ok &= w[r] >= 0;
    if (!ok) continue;
    double obj = 0;
    for (int r = 0; r < k; ++r) {
      double aw = 0;
      for (int q = 0; q < k; ++q) aw += A[r * k + q] * w[q];
      obj += w[r] * aw - 2 * b[r] * w[r];
    }
    if (obj < best) {
      best = obj;
      for (int a = 0; a < n; ++a) out[a] = 0;
      for (int r = 0; r < k; ++r) out[idx[r]] = w[r];
    }
  }
}

/* Writes a group's weights into every copy: slots by weight (largest first),
 * float, the largest absorbing the rounding so the sum is 1. */
static void store_weights(const refit_ctx *c, sks_model *m, size_t g, const double *w, uint32_t K) {
  int n = c->ncand[g];
  const uint16_t *cd = &c->cand[g * REFIT_CANDIDATES];
  int order[REFIT_CANDIDATES], k = 0;
  for (int a = 0; a < n; ++a)
    if (w[a] > 0) order[k++] = a;
  for (int i = 1; i < k; ++i) /* insertion sort by weight, then slot */
    for (int j = i; j > 0 && (w[order[j]] > w[order[j - 1]] ||
                              (w[order[j]] == w[order[j - 1]] && cd[order[j]] < cd[order[j - 1]])); --j) {
      int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
    }
  if ((uint32_t)k > K) k = (int)K;
  float wf[REFIT_CANDIDATES], sum = 0;
  for (int i = 0; i < k; ++i) { wf[i] = (float)w[order[i]]; sum += wf[i]; }
  if (k > 0) wf[0] += 1.0f - sum;
  sks_mesh_part *p = &m->parts[c->gpart[g]];
  for (uint32_t e = c->gstart[g]; e < c->gstart[g + 1]; ++e) {
    size_t i = c->gvert[e] - c->part_base[c->gpart[g]];
    for (uint32_t s = 0; s < K; ++s) {
      p->joints[i * K + s] = (int)s < k ? cd[order[s]] : 0;
      p->weights[i * K + s] = (int)s < k ? wf[s] : 0.0f;
    }
  }
}

static double mean_influences(const sks_model *m) {
  size_t n = 0, v = 0;
  for (size_t pi = 0; pi < m->part_count; ++pi) {
    const sks_mesh_part *p = &m->parts[pi];
    if (p->skin < 0) continue;
    for (size_t i = 0; i < p->vertex_count * p->influence_count; ++i) n += p->weights[i] > 0;
    v += p->vertex_count;
  }
  return v ? (double)n / (double)v : 0;
}

static double mean_quality(const sks_bake_result *br, size_t n) {
  double s = 0;
  size_t k = 0;
  for (size_t i = 0; i < n && i < br->clip_count; ++i)
    if (!isnan(br->clips[i].quality)) { s += br->clips[i].quality; ++k; }
  return k ? s / (double)k : NAN;
}

/* ---- the refit ------------------------------------------------------------------- */

static int name_in(const char *s, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!strcmp(s, list[i])) return 1;
  return 0;
}

sks_result sks_refit(const sks_model *source, const sks_model *target,
                     const sks_refit_options *options, sks_refit_result *out, sks_error *err) {
  static const sks_refit_options defaults;
  const sks_refit_options *opt = options ? options : &defaults;
  if (!out) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_refit: NULL result");
  memset(out, 0, sizeof *out);
  if (!source || !target) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_refit: NULL model");
  double t0 = now_s();
  uint32_t K = opt->max_influences ? opt->max_influences : 4;
  size_t R = opt->rounds ? opt->rounds : 6;
  if (K > SKS_MAX_INFLUENCES)
    return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_refit: max_influences %u is above %d",
                         (unsigned)K, SKS_MAX_INFLUENCES);
  if (!(opt->keep_original >= 0) || !isfinite(opt->keep_original))
    return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_refit: keep_original must be >= 0");
  const char *sname = source->source_path ? source->source_path : "source";
  if (target->skin_count == 0 || sks_model_vertex_count(target) == 0) /* bake takes rigid-only rigs; refit has no weights */
    return sks_error_set(err, SKS_ERR_INVALID,
                         "%s: no skinned mesh part — no weights to refit (only rigid parts that follow one joint each, or no mesh)",
                         target->source_path ? target->source_path : "target");
  /* the names as bake finds them (sks_clip_find_loose: 'walk' is the clip
   * 'root|Walk_root'), resolved to the source's own clip names */
  size_t ncn = opt->clip_name_count, nhn = opt->holdout_name_count;
  const char **cn = malloc((ncn + nhn + 1) * sizeof(char *)), **hn = cn ? cn + ncn : NULL;
  if (!cn) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; i < ncn + nhn; ++i) {
    const char *want = i < ncn ? opt->clip_names[i] : opt->holdout_names[i - ncn];
    size_t matches = 0;
    int32_t k = want ? sks_clip_find_loose(source->clips, source->clip_count, want, &matches) : -1;
    if (k < 0 || !source->clips[k].name) {
      sks_result r = sks_error_set(err, SKS_ERR_NOT_FOUND, "%s: %s '%s' to %s", sname,
                                   matches > 1 ? "several clips hold the name" : "no clip named",
                                   want ? want : "", i < ncn ? "fit" : "hold out");
      free(cn);
      return r;
    }
    cn[i] = source->clips[k].name;
  }
  for (size_t i = 0; i < nhn; ++i)
    if (name_in(hn[i], cn, ncn)) {
      sks_result r = sks_error_set(err, SKS_ERR_ARGUMENT,
                                   "clip '%s' is both fitted (--clip) and held out (--holdout)", hn[i]);
      free(cn);
      return r;
    }
  /* evaluation list: fitting clips first, then held-out ones */
  size_t nfit = 0, nall = 0;
  const char **names = malloc((source->clip_count + ncn + nhn + 1) * sizeof(char *));
  if (!names) { free(cn); return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory"); }
  if (ncn) {
    for (size_t i = 0; i < ncn; ++i)
      if (!name_in(cn[i], names, nfit)) names[nfit++] = cn[i];
  } else {
    for (size_t i = 0; i < source->clip_count; ++i) {
      const char *n = source->clips[i].name ? source->clips[i].name : "";
      if (!name_in(n, hn, nhn) && !name_in(n, names, nfit))
        names[nfit++] = n;
    }
  }
  nall = nfit;
  for (size_t i = 0; i < nhn; ++i)
    if (!name_in(hn[i], names, nall)) names[nall++] = hn[i];
  free(cn); /* names point into the source's clips */
  if (nfit == 0) {
    free(names);
    return sks_error_set(err, SKS_ERR_ARGUMENT, "%s: no clip left to fit (every clip is held out)", sname);
  }
  refit_ctx c;
  memset(&c, 0, sizeof c);
  sks_bake_result before, cur;
  memset(&before, 0, sizeof before);
  memset(&cur, 0, sizeof cur);
  double *wbuf = NULL;
  sks_result r = record_motion(source, target, names, nall, opt->max_constraints, opt->threads, &before, err);
  if (r != SKS_OK) goto done;
  r = build_groups(&c, target, err);
  if (r != SKS_OK) goto done;
  double D = before.diagonal;
  if (before.target_vertex_count != c.V) {
    r = sks_error_set(err, SKS_ERR_INVALID, "%s: bake saw %zu vertices, refit %zu", model_name(target),
                      before.target_vertex_count, c.V);
    goto done;
  }
  for (size_t i = 0; i < nfit; ++i) c.F += before.clips[i].frame_count;
  c.y = malloc((c.F ? c.F : 1) * (c.G ? c.G : 1) * 3 * sizeof(float));
  c.T = malloc((c.F ? c.F : 1) * (c.slots ? c.slots : 1) * sizeof(sks_daffine));
  float *yv = malloc((c.F ? c.F : 1) * (c.V ? c.V : 1) * 3 * sizeof(float)); /* per vertex */
  wbuf = malloc((c.G ? c.G : 1) * REFIT_CANDIDATES * sizeof(double));
  if (!c.y || !c.T || !yv || !wbuf) {
    free(yv);
    r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory (refit: %zu frames x %zu vertices)", c.F, c.V);
    goto done;
  }
  {
    size_t f = 0;
    for (size_t i = 0; i < nfit; ++i)
      for (size_t k = 0; k < before.clips[i].frame_count; ++k, ++f) {
        memcpy(&yv[f * c.V * 3], &before.clips[i].target_surface[k * c.V * 3], c.V * 3 * sizeof(float));
        for (size_t g = 0; g < c.G; ++g) {
          double s[3] = {0, 0, 0};
          uint32_t n = c.gstart[g + 1] - c.gstart[g];
          for (uint32_t e = c.gstart[g]; e < c.gstart[g + 1]; ++e)
            for (int a = 0; a < 3; ++a) s[a] += yv[(f * c.V + c.gvert[e]) * 3 + a];
          for (int a = 0; a < 3; ++a) c.y[(f * c.G + g) * 3 + a] = (float)(s[a] / n);
        }
      }
  }
  r = rigid_start(&c, yv, err);
  free(yv);
  if (r == SKS_OK && opt->start == SKS_REFIT_START_BAKE) r = transforms_from_bake(&c, &before, nfit, err);
  if (r != SKS_OK) goto done;
  /* the output: a copy of the target, every skinned part with K slots */
  r = sks_model_clone(target, &out->model, err);
  if (r != SKS_OK) goto done;
  for (size_t pi = 0; pi < out->model.part_count; ++pi) {
    sks_mesh_part *p = &out->model.parts[pi];
    if (p->skin < 0) continue;
    uint16_t *nj = calloc(p->vertex_count * K + 1, sizeof(uint16_t));
    float *nw = calloc(p->vertex_count * K + 1, sizeof(float));
    if (!nj || !nw) {
      free(nj); free(nw);
      r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory");
      goto done;
    }
    free(p->joints); free(p->weights);
    p->joints = nj; p->weights = nw;
    p->influence_count = K;
    p->dropped_influence_vertices = 0;
    p->first_dropped_influence_vertex = 0;
    p->file_max_influences = 0;
  }
  out->round_fit_quality = calloc(R, sizeof(double));
  if (!out->round_fit_quality) { r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory"); goto done; }
  out->rounds = R;
  double reg = (1e-12 + opt->keep_original) * (double)c.F * D * D;
  size_t early = (R + 2) / 3; /* first third of the rounds: <= 2 influences */
  /* the best weights so far by mean fitting quality; the original weights
   * compete too when they fit in K influences, so a refit never returns
   * weights that fit the fitting clips worse than the rig it was given */
  double best_q = -INFINITY;
  int best_is_original = 0;
  {
    /* only valid weights compete: <= K influences, none negative, joints in
     * the skin, summing to 1 (a file's unnormalised weights do not) */
    int valid = 1;
    for (size_t pi = 0; pi < target->part_count && valid; ++pi) {
      const sks_mesh_part *p = &target->parts[pi];
      if (p->skin < 0) continue;
      for (size_t v = 0; v < p->vertex_count && valid; ++v) {
        uint32_t n = 0;
        double sum = 0;
        for (uint32_t k = 0; k < p->influence_count; ++k) {
          float w = p->weights[v * p->influence_count + k];
          n += w > 0;
          sum += w;
          if (w < 0 || (w > 0 && p->joints[v * p->influence_count + k] >= target->skins[p->skin].joint_count))
            valid = 0;
        }
        if (n > K || fabs(sum - 1.0) > 1e-5) valid = 0;
      }
    }
    double q0 = mean_quality(&before, nfit);
    if (valid && !isnan(q0)) { best_q = q0; best_is_original = 1; }
  }
  size_t wslots = 0;
  for (size_t pi = 0; pi < out->model.part_count; ++pi)
    if (out->model.parts[pi].skin >= 0) wslots += out->model.parts[pi].vertex_count * K;
  float *best_w = malloc((wslots ? wslots : 1) * sizeof(float));
  uint16_t *best_j = malloc((wslots ? wslots : 1) * sizeof(uint16_t));
  if (!best_w || !best_j) {
    free(best_w); free(best_j);
    r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  for (size_t round = 0; round < R; ++round) {
    if (opt->progress) opt->progress(opt->progress_user, "refit round", round, R);
    uint32_t kmax = round < early && K > 2 ? 2 : K;
    for (size_t g = 0; g < c.G; ++g) {
      weight_step_group(&c, g, kmax, reg, &wbuf[g * REFIT_CANDIDATES]);
      store_weights(&c, &out->model, g, &wbuf[g * REFIT_CANDIDATES], K);
    }
    /* transform step: the bake of the fitting clips on the new weights */
    sks_bake_result_free(&cur);
    sks_bake_options bo;
    memset(&bo, 0, sizeof bo);
    bo.clip_names = names;
    bo.clip_name_count = nfit;
    bo.max_constraints = opt->max_constraints;
    bo.threads = opt->threads;
    r = sks_bake(source, &out->model, &bo, &cur, err);
    if (r != SKS_OK) { free(best_w); free(best_j); goto done; }
    out->round_fit_quality[round] = mean_quality(&cur, nfit);
    /* (a clip without motion has NaN quality: the first round is then kept) */
    if (out->round_fit_quality[round] > best_q || (best_q == -INFINITY && !best_is_original && round == 0)) {
      best_q = out->round_fit_quality[round];
      best_is_original = 0;
      size_t o = 0;
      for (size_t pi = 0; pi < out->model.part_count; ++pi) {
        const sks_mesh_part *p = &out->model.parts[pi];
        if (p->skin < 0) continue;
        memcpy(&best_w[o], p->weights, p->vertex_count * K * sizeof(float));
        memcpy(&best_j[o], p->joints, p->vertex_count * K * sizeof(uint16_t));
        o += p->vertex_count * K;
      }
      out->best_round = round + 1;
    }
    if (round + 1 < R) {
      r = transforms_from_bake(&c, &cur, nfit, err);
      if (r != SKS_OK) { free(best_w); free(best_j); goto done; }
    }
  }
  /* the chosen weights: the best round, or the original ones (re-packed in K slots) */
  {
    size_t o = 0;
    for (size_t pi = 0; pi < out->model.part_count; ++pi) {
      sks_mesh_part *p = &out->model.parts[pi];
      if (p->skin < 0) continue;
      const sks_mesh_part *q = &target->parts[pi];
      for (size_t v = 0; v < p->vertex_count; ++v) {
        if (!best_is_original) {
          memcpy(&p->weights[v * K], &best_w[o + v * K], K * sizeof(float));
          memcpy(&p->joints[v * K], &best_j[o + v * K], K * sizeof(uint16_t));
          continue;
        }
        uint32_t n = 0;
        memset(&p->weights[v * K], 0, K * sizeof(float));
        memset(&p->joints[v * K], 0, K * sizeof(uint16_t));
        for (uint32_t k = 0; k < q->influence_count && n < K; ++k) {
          float w = q->weights[v * q->influence_count + k];
          if (!(w > 0)) continue;
          p->weights[v * K + n] = w;
          p->joints[v * K + n] = q->joints[v * q->influence_count + k];
          ++n;
        }
      }
      o += p->vertex_count * K;
    }
    if (best_is_original) out->best_round = 0;
  }
  free(best_w);
  free(best_j);
  if (opt->progress) opt->progress(opt->progress_user, "refit round", R, R);
  /* the measurement: a real bake of every clip on the chosen weights */
  sks_bake_result_free(&cur);
  r = record_motion(source, &out->model, names, nall, opt->max_constraints, opt->threads, &cur, err);
  if (r != SKS_OK) goto done;
  out->clips = calloc(nall, sizeof(sks_refit_clip));
  if (!out->clips) { r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory"); goto done; }
  out->clip_count = nall;
  for (size_t i = 0; i < nall; ++i) {
    sks_refit_clip *rc = &out->clips[i];
    sks_baked_clip *b = &before.clips[i], *a = &cur.clips[i];
    rc->name = dupstr(names[i]);
    if (!rc->name) { r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory"); goto done; }
    rc->held_out = i >= nfit;
    rc->frame_count = b->frame_count;
    rc->quality_before = b->quality; rc->quality_after = a->quality;
    rc->mean_before_pct = b->mean_error_pct; rc->mean_after_pct = a->mean_error_pct;
    rc->worst_before_pct = b->worst_error_pct; rc->worst_after_pct = a->worst_error_pct;
    /* the bakes' own diagnosis (every measured vertex), taken over */
    rc->diagnosis_before = b->diagnosis;
    rc->diagnosis_after = a->diagnosis;
    memset(&b->diagnosis, 0, sizeof b->diagnosis);
    memset(&a->diagnosis, 0, sizeof a->diagnosis);
  }
  out->vertex_count = c.V;
  out->group_count = c.G;
  out->mean_influences_before = mean_influences(target);
  out->mean_influences_after = mean_influences(&out->model);
  for (size_t pi = 0; pi < out->model.part_count; ++pi) {
    const sks_mesh_part *p = &out->model.parts[pi];
    if (p->skin < 0) continue;
    for (size_t v = 0; v < p->vertex_count; ++v) {
      uint32_t n = 0;
      for (uint32_t k = 0; k < p->influence_count; ++k) n += p->weights[v * p->influence_count + k] > 0;
      if (n > out->max_influences_after) out->max_influences_after = n;
    }
  }
  out->diagonal = D;
  out->seconds = now_s() - t0;
done:
  free(names);
  free(wbuf);
  ctx_free(&c);
  sks_bake_result_free(&before);
  sks_bake_result_free(&cur);
  if (r != SKS_OK) sks_refit_result_free(out);
  return r;
}
