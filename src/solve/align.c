/* Alignment A (MISSION.md): the similarity (uniform scale, rotation, offset)
 * taking the source's bind surface onto the target's, whatever units, axis
 * conventions, offsets or vertex orders the two files use, and robust to
 * different meshes of the same kind of creature.
 *
 * Method: both point sets are subsampled (farthest-point, at most
 * ALIGN_SAMPLES) and normalised (centroid, RMS radius). Rotation hypotheses:
 * the 24 rotations taking the source's principal frame onto the target's
 * (axes in any order and either sense). They depend on the two shapes only,
 * never on the files' frames, so whatever rotation, scale or offset an export
 * put into either file's data or scene, the same searches run and the same
 * answer comes out (up to float rounding of the data). Each hypothesis is
 * refined by symmetric, trimmed ICP (nearest points both ways, the worst 10 %
 * of pairs dropped; closed-form similarity by Horn's quaternion + scale),
 * first on a sparse subset (ALIGN_COARSE points a side); the ALIGN_REFINE
 * best distinct rotations (> ALIGN_DISTINCT_DEG apart) are refined to their
 * fixed point on the full samples; the best symmetric mean distance wins and
 * the others are kept as alternatives for the articulated registration
 * (bake.c), which tells two bodies' candidates apart far better than their
 * bind surfaces do. Shortcut: when the files' own frames, or their scenes'
 * (hint), already put the surfaces within 0.2 % D, those are kept. Nearest
 * points come from a k-d tree. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "solve/solve_internal.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#define ALIGN_SAMPLES 2500
#define ALIGN_ITERATIONS 30
#define ALIGN_FINE_ITERATIONS 200
#define ALIGN_DISTINCT_DEG 5.0 /* converged rotations closer than this are one answer */
#define ALIGN_TRIM 0.9
#define ALIGN_FPS_POOL 60000 /* vertices a sample is drawn from at most */
#define ALIGN_COARSE 400 /* points per side in the hypothesis search */
#define ALIGN_REFINE 12  /* distinct rotations refined on the full samples */
#define ALIGN_MAX_HYPS 128

/* Nearest points through a k-d tree of boxes (median splits on the widest
 * axis, <= KD_LEAF points a leaf); a query descends nearer child first and
 * prunes every box farther than the best found, so its cost follows the
 * points near it whatever the spread of the set or how far the query lies. */
#define KD_LEAF 6
#define KD_MAX_DEPTH 64

typedef struct kd_node {
  double lo[3], hi[3];
  uint32_t first, count; /* leaf: items[first, first + count); inner: children first, first + 1 */
} kd_node;

typedef struct grid {
  const double *pts;
  size_t n;
  kd_node *nodes;
  uint32_t *items;
} grid;

static void grid_free(grid *g) { free(g->nodes); free(g->items); g->nodes = NULL; g->items = NULL; }

static int grid_build(grid *g, const double *pts, size_t n) {
  memset(g, 0, sizeof *g);
  g->pts = pts;
  g->n = n;
  if (n > UINT32_MAX / 2) return 0;
  g->items = malloc((n ? n : 1) * sizeof *g->items);
  g->nodes = malloc((2 * n + 1) * sizeof *g->nodes);
  if (!g->items || !g->nodes) { grid_free(g); return 0; }
  for (size_t i = 0; i < n; ++i) g->items[i] = (uint32_t)i;
  size_t stack[3 * (KD_MAX_DEPTH + 2)], sp = 0, count = 1;
  stack[sp++] = 0; stack[sp++] = 0; stack[sp++] = n;
  while (sp) {
    size_t e = stack[--sp], b = stack[--sp], ni = stack[--sp];
    kd_node *nd = &g->nodes[ni];
    for (int a = 0; a < 3; ++a) { nd->lo[a] = DBL_MAX; nd->hi[a] = -DBL_MAX; }
    for (size_t i = b; i < e; ++i)
      for (int a = 0; a < 3; ++a) {
        double v = pts[3 * g->items[i] + a];
        if (v < nd->lo[a]) nd->lo[a] = v;
        if (v > nd->hi[a]) nd->hi[a] = v;
      }
    if (e - b <= KD_LEAF || sp + 6 > sizeof stack / sizeof stack[0]) {
      nd->first = (uint32_t)b;
      nd->count = (uint32_t)(e - b);
      continue;
    }
    int axis = 0;
    for (int a = 1; a < 3; ++a)
      if (nd->hi[a] - nd->lo[a] > nd->hi[axis] - nd->lo[axis]) axis = a;
    size_t m = b + (e - b) / 2;
    sks_select_median(g->items, pts, b, m, e, axis);
    nd->first = (uint32_t)count;
    nd->count = 0;
    stack[sp++] = count; stack[sp++] = b; stack[sp++] = m;
    stack[sp++] = count + 1; stack[sp++] = m; stack[sp++] = e;
    count += 2;
  }
  return 1;
}

static double kd_box_dist2(const kd_node *nd, const double *q) {
  double d2 = 0;
  for (int a = 0; a < 3; ++a) {
    double e = q[a] < nd->lo[a] ? nd->lo[a] - q[a] : (q[a] > nd->hi[a] ? q[a] - nd->hi[a] : 0);
    d2 += e * e;
  }
  return d2;
}

/* Nearest point (index; ties: the lower index) and squared distance. */
static size_t grid_nearest(const grid *g, const double *p, double *d2) {
  double best = DBL_MAX;
  size_t bi = 0;
  if (!g->n) { *d2 = best; return 0; }
  uint32_t stack[2 * KD_MAX_DEPTH + 8];
  double sd[2 * KD_MAX_DEPTH + 8];
  size_t sp = 0;
  stack[sp] = 0;
  sd[sp++] = kd_box_dist2(&g->nodes[0], p);
  while (sp) {
    --sp;
    if (sd[sp] > best) continue;
    const kd_node *nd = &g->nodes[stack[sp]];
    if (nd->count) {
      for (uint32_t k = nd->first; k < nd->first + nd->count; ++k) {
        uint32_t it = g->items[k];
        const double *s = &g->pts[3 * it];
        double dd = (s[0] - p[0]) * (s[0] - p[0]) + (s[1] - p[1]) * (s[1] - p[1]) + (s[2] - p[2]) * (s[2] - p[2]);
        if (dd < best || (dd == best && it < bi)) { best = dd; bi = it; }
      }
      continue;
    }
    uint32_t c0 = nd->first, c1 = nd->first + 1;
    double d0 = kd_box_dist2(&g->nodes[c0], p), e1 = kd_box_dist2(&g->nodes[c1], p);
    if (d0 > e1) { uint32_t t = c0; c0 = c1; c1 = t; double td = d0; d0 = e1; e1 = td; }
    if (e1 <= best) { stack[sp] = c1; sd[sp++] = e1; }
    if (d0 <= best) { stack[sp] = c0; sd[sp++] = d0; }
  }
  *d2 = best;
  return bi;
}

/* Farthest-point sample: the vertex farthest from the centroid, then again
 * and again the vertex farthest from all picked so far (ties: the lower
 * index). It covers the SURFACE evenly whatever the mesh density (a finely
 * modelled face or hand does not outweigh the body), and it depends only on
 * distances: the same points are picked whatever rotation, scale or offset
 * an export put into the vertex data, so the alignment's hypotheses meet
 * the same sample in every frame. Meshes over ALIGN_FPS_POOL vertices are
 * first thinned by index stride (the vertex order is the file's, not the
 * frame's). Its prefix of any length is itself a farthest-point sample. */
static size_t fps_sample(const double *pts, size_t n, double *s) {
  size_t pool = n > ALIGN_FPS_POOL ? ALIGN_FPS_POOL : n;
  double *p = malloc(3 * pool * sizeof(double)), *d2 = malloc(pool * sizeof(double));
  if (!p || !d2) { free(p); free(d2); return 0; }
  for (size_t i = 0; i < pool; ++i) memcpy(&p[3 * i], &pts[3 * (i * n / pool)], 3 * sizeof(double));
  double c[3] = {0, 0, 0};
  for (size_t i = 0; i < pool; ++i)
    for (int a = 0; a < 3; ++a) c[a] += p[3 * i + a] / (double)pool;
  size_t pick = 0;
  double far = -1;
  for (size_t i = 0; i < pool; ++i) {
    double dd = 0;
    for (int a = 0; a < 3; ++a) dd += (p[3 * i + a] - c[a]) * (p[3 * i + a] - c[a]);
    if (dd > far) { far = dd; pick = i; }
    d2[i] = DBL_MAX;
  }
  size_t m = pool < ALIGN_SAMPLES ? pool : ALIGN_SAMPLES;
  for (size_t k = 0; k < m; ++k) {
    memcpy(&s[3 * k], &p[3 * pick], 3 * sizeof(double));
    const double *q = &p[3 * pick];
    size_t next = 0;
    double best = -1;
    for (size_t i = 0; i < pool; ++i) {
      double dd = (p[3 * i] - q[0]) * (p[3 * i] - q[0]) + (p[3 * i + 1] - q[1]) * (p[3 * i + 1] - q[1]) +
                  (p[3 * i + 2] - q[2]) * (p[3 * i + 2] - q[2]);
      if (dd < d2[i]) d2[i] = dd;
      if (d2[i] > best) { best = d2[i]; next = i; }
    }
    if (!(best > 0)) { m = k + 1; break; } /* every distinct position taken */
    pick = next;
  }
  free(p);
  free(d2);
  return m;
}

/* The farthest-point sample, centred and scaled to unit RMS radius. */
static double *sample(const double *pts, size_t n, size_t *out_n, double *centre, double *radius) {
  double *s = malloc((n < ALIGN_SAMPLES ? (n ? n : 1) : ALIGN_SAMPLES) * 3 * sizeof(double));
  if (!s) return NULL;
  size_t m = n ? fps_sample(pts, n, s) : 0;
  if (n && !m) { free(s); return NULL; }
  centre[0] = centre[1] = centre[2] = 0;
  for (size_t i = 0; i < m; ++i)
    for (int a = 0; a < 3; ++a) centre[a] += s[3 * i + a];
  for (int a = 0; a < 3; ++a) centre[a] /= (double)(m ? m : 1);
  double r2 = 0;
  for (size_t i = 0; i < m; ++i)
    for (int a = 0; a < 3; ++a) { s[3 * i + a] -= centre[a]; r2 += s[3 * i + a] * s[3 * i + a]; }
  *radius = sqrt(r2 / (double)(m ? m : 1));
  if (!(*radius > 0)) *radius = 1;
  for (size_t i = 0; i < 3 * m; ++i) s[i] /= *radius;
  *out_n = m;
  return s;
}

/* Symmetric 3x3 eigenvectors by Jacobi rotations (columns of V, eigenvalues descending). */
static void eigen3(const double *Ain, double *V, double *ev) {
  double A[9];
  memcpy(A, Ain, sizeof A);
  for (int i = 0; i < 9; ++i) V[i] = (i % 4 == 0);
  for (int sweep = 0; sweep < 50; ++sweep) {
    double off = A[1] * A[1] + A[2] * A[2] + A[5] * A[5];
    if (off < 1e-30) break;
    for (int p = 0; p < 2; ++p)
      for (int q = p + 1; q < 3; ++q) {
        double apq = A[3 * p + q];
        if (fabs(apq) < 1e-300) continue;
        double th = (A[3 * q + q] - A[3 * p + p]) / (2 * apq);
        double t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
        double c = 1 / sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < 3; ++k) { /* A = J^T A J */
          double akp = A[3 * k + p], akq = A[3 * k + q];
          A[3 * k + p] = c * akp - s * akq;
          A[3 * k + q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; ++k) {
          double apk = A[3 * p + k], aqk = A[3 * q + k];
          A[3 * p + k] = c * apk - s * aqk;
          A[3 * q + k] = s * apk + c * aqk;
        }
        for (int k = 0; k < 3; ++k) {
          double vkp = V[3 * k + p], vkq = V[3 * k + q];
          V[3 * k + p] = c * vkp - s * vkq;
          V[3 * k + q] = s * vkp + c * vkq;
        }
      }
  }
  for (int i = 0; i < 3; ++i) ev[i] = A[4 * i];
  for (int i = 0; i < 2; ++i) /* sort descending */
    for (int j = i + 1; j < 3; ++j)
      if (ev[j] > ev[i]) {
        double t = ev[i]; ev[i] = ev[j]; ev[j] = t;
        for (int k = 0; k < 3; ++k) { t = V[3 * k + i]; V[3 * k + i] = V[3 * k + j]; V[3 * k + j] = t; }
      }
}

static void covariance(const double *s, size_t n, double *C) {
  memset(C, 0, 9 * sizeof(double));
  for (size_t i = 0; i < n; ++i)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) C[3 * r + c] += s[3 * i + r] * s[3 * i + c];
}

typedef struct sim { double s, R[9], t[3]; } sim; /* x -> s R x + t */

static void sim_apply(const sim *m, const double *x, double *o) {
  double r[3];
  sks_dm3_apply(m->R, x, r);
  for (int a = 0; a < 3; ++a) o[a] = m->s * r[a] + m->t[a];
}

static void sim_apply_inv(const sim *m, const double *x, double *o) {
  double d[3] = {x[0] - m->t[0], x[1] - m->t[1], x[2] - m->t[2]};
  for (int a = 0; a < 3; ++a) o[a] = (m->R[a] * d[0] + m->R[3 + a] * d[1] + m->R[6 + a] * d[2]) / m->s;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct icp_ctx {
  const double *S, *D;   /* normalised samples */
  size_t ns, nd;
  grid gs, gd;
  double *pa, *pb, *pd;  /* pairs: source point, target point, distance^2 */
} icp_ctx;

/* Collects nearest pairs both ways for m; returns the trimmed mean distance. */
static double pairs(icp_ctx *c, const sim *m, size_t *np, double *thresh) {
  size_t k = 0;
  for (size_t i = 0; i < c->ns; ++i) {
    double q[3], d2;
    sim_apply(m, &c->S[3 * i], q);
    size_t j = grid_nearest(&c->gd, q, &d2);
    memcpy(&c->pa[3 * k], &c->S[3 * i], 3 * sizeof(double));
    memcpy(&c->pb[3 * k], &c->D[3 * j], 3 * sizeof(double));
    c->pd[k++] = d2;
  }
  for (size_t i = 0; i < c->nd; ++i) {
    double q[3], d2;
    sim_apply_inv(m, &c->D[3 * i], q);
    size_t j = grid_nearest(&c->gs, q, &d2);
    memcpy(&c->pa[3 * k], &c->S[3 * j], 3 * sizeof(double));
    memcpy(&c->pb[3 * k], &c->D[3 * i], 3 * sizeof(double));
    c->pd[k++] = d2 * m->s * m->s; /* in target units */
  }
  *np = k;
  double *tmp = malloc(k * sizeof(double));
  if (!tmp) { *thresh = DBL_MAX; return DBL_MAX; }
  memcpy(tmp, c->pd, k * sizeof(double));
  qsort(tmp, k, sizeof(double), cmp_double);
  size_t keep = (size_t)(ALIGN_TRIM * (double)k);
  if (keep < 1) keep = 1;
  *thresh = tmp[keep - 1];
  double sum = 0;
  for (size_t i = 0; i < keep; ++i) sum += sqrt(tmp[i]);
  free(tmp);
  return sum / (double)keep;
}

/* One closed-form similarity fit to the kept pairs. */
static void fit(icp_ctx *c, size_t np, double thresh, sim *m) {
  double ca[3] = {0, 0, 0}, cb[3] = {0, 0, 0};
  size_t n = 0;
  for (size_t i = 0; i < np; ++i) {
    if (c->pd[i] > thresh) continue;
    for (int a = 0; a < 3; ++a) { ca[a] += c->pa[3 * i + a]; cb[a] += c->pb[3 * i + a]; }
    ++n;
  }
  if (n < 3) return;
  for (int a = 0; a < 3; ++a) { ca[a] /= (double)n; cb[a] /= (double)n; }
  double S[9] = {0}, aa = 0;
  for (size_t i = 0; i < np; ++i) {
    if (c->pd[i] > thresh) continue;
    double p[3], q[3];
    for (int a = 0; a < 3; ++a) { p[a] = c->pa[3 * i + a] - ca[a]; q[a] = c->pb[3 * i + a] - cb[a]; }
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) S[3 * r + k] += p[r] * q[k];
    aa += p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
  }
  sks_dquat near = sks_dq_from_m3(m->R);
  sks_dquat q = sks_horn_rotation(S, near);
  double R[9];
  sks_dq_to_m3(q, R);
  /* scale: sum q . (R p) / sum |p|^2 */
  double num = 0;
  for (size_t i = 0; i < np; ++i) {
    if (c->pd[i] > thresh) continue;
    double p[3], rp[3];
    for (int a = 0; a < 3; ++a) p[a] = c->pa[3 * i + a] - ca[a];
    sks_dm3_apply(R, p, rp);
    for (int a = 0; a < 3; ++a) num += rp[a] * (c->pb[3 * i + a] - cb[a]);
  }
  double s = aa > 0 ? num / aa : 1;
  if (!(s > 0.05) || !(s < 20)) return; /* degenerate: keep the previous estimate */
  memcpy(m->R, R, sizeof R);
  m->s = s;
  double rc[3];
  sks_dm3_apply(R, ca, rc);
  for (int a = 0; a < 3; ++a) m->t[a] = cb[a] - s * rc[a];
}

static double icp_n(icp_ctx *c, sim *m, int iterations, double tol) {
  size_t np;
  double thresh, err = pairs(c, m, &np, &thresh), prev = DBL_MAX;
  int it = 0;
  for (; it < iterations && prev - err > tol; ++it) {
    fit(c, np, thresh, m);
    prev = err;
    err = pairs(c, m, &np, &thresh);
  }
  return err;
}

/* coarse: a few tens of rounds tell the basins apart */
static double icp(icp_ctx *c, sim *m) { return icp_n(c, m, ALIGN_ITERATIONS, 1e-7); }
/* fine: to the fixed point, so starts in one basin end at one answer */
static double icp_fine(icp_ctx *c, sim *m) { return icp_n(c, m, ALIGN_FINE_ITERATIONS, 1e-12); }

/* normalised similarity -> file units: y = cdst + rd * (s R (x - csrc) / rs + t) */
static void sim_to_file(sks_daffine *A, const sim *m, const double *csrc, const double *cdst, double rs,
                        double rd) {
  double k = rd * m->s / rs;
  for (int i = 0; i < 9; ++i) A->l[i] = k * m->R[i];
  double rc[3];
  sks_dm3_apply(A->l, csrc, rc);
  for (int a = 0; a < 3; ++a) A->t[a] = cdst[a] + rd * m->t[a] - rc[a];
}

sks_result sks_align_refine_paired(const double *src, const double *dst, size_t n, double fixed_scale,
                                   sks_daffine *A) {
  /* exact similarity for paired points (Horn + scale), when vertex j of both
   * sets is the same point of the surface */
  double ca[3] = {0, 0, 0}, cb[3] = {0, 0, 0};
  if (n < 3) return SKS_ERR_INVALID;
  for (size_t i = 0; i < n; ++i)
    for (int a = 0; a < 3; ++a) { ca[a] += src[3 * i + a]; cb[a] += dst[3 * i + a]; }
  for (int a = 0; a < 3; ++a) { ca[a] /= (double)n; cb[a] /= (double)n; }
  double S[9] = {0}, aa = 0;
  for (size_t i = 0; i < n; ++i) {
    double p[3], q[3];
    for (int a = 0; a < 3; ++a) { p[a] = src[3 * i + a] - ca[a]; q[a] = dst[3 * i + a] - cb[a]; }
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) S[3 * r + k] += p[r] * q[k];
    aa += p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
  }
  double R0[9];
  double s0 = cbrt(fabs(sks_dm3_det(A->l)));
  for (int i = 0; i < 9; ++i) R0[i] = A->l[i] / (s0 > 0 ? s0 : 1);
  sks_dquat q = sks_horn_rotation(S, sks_dq_from_m3(R0));
  double R[9];
  sks_dq_to_m3(q, R);
  double num = 0;
  for (size_t i = 0; i < n; ++i) {
    double p[3], rp[3];
    for (int a = 0; a < 3; ++a) p[a] = src[3 * i + a] - ca[a];
    sks_dm3_apply(R, p, rp);
    for (int a = 0; a < 3; ++a) num += rp[a] * (dst[3 * i + a] - cb[a]);
  }
  double s = fixed_scale > 0 ? fixed_scale : (aa > 0 ? num / aa : 1);
  if (!(s > 0)) return SKS_ERR_INVALID;
  for (int i = 0; i < 9; ++i) A->l[i] = s * R[i];
  double rc[3];
  sks_dm3_apply(A->l, ca, rc);
  for (int a = 0; a < 3; ++a) A->t[a] = cb[a] - rc[a];
  return SKS_OK;
}

sks_result sks_align_similarity(const double *src, size_t ns, const double *dst, size_t nd,
                                double target_diagonal, const sks_daffine *hint, sks_alignment *out,
                                sks_error *err) {
  memset(out, 0, sizeof *out);
  out->A = sks_daff_identity();
  out->scale = 1;
  if (ns == 0 || nd == 0) return sks_error_set(err, SKS_ERR_INVALID, "alignment: no vertices");
  double csrc[3], cdst[3], rs, rd;
  size_t ms, md;
  icp_ctx c;
  memset(&c, 0, sizeof c);
  double *S = sample(src, ns, &ms, csrc, &rs), *D = sample(dst, nd, &md, cdst, &rd);
  c.pa = malloc((ms + md) * 3 * sizeof(double));
  c.pb = malloc((ms + md) * 3 * sizeof(double));
  c.pd = malloc((ms + md) * sizeof(double));
  sks_result r = SKS_OK;
  if (!S || !D || !c.pa || !c.pb || !c.pd || !grid_build(&c.gs, S, ms) || !grid_build(&c.gd, D, md)) {
    r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "alignment: out of memory");
    goto done;
  }
  c.S = S; c.D = D; c.ns = ms; c.nd = md;
  /* in normalised coordinates: x_n = (x - csrc) / rs, y_n = (y - cdst) / rd */
  double hyps[ALIGN_MAX_HYPS][9];
  size_t nh = 0;
  {
    /* the 24 rotations that take the source's principal frame onto the
     * target's, axes in any order and either sense: they depend on the
     * shapes only, so a rotation an export baked into either file's data
     * starts the same searches */
    double Cs[9], Cd[9], Vs[9], Vd[9], es[3], ed[3];
    covariance(S, ms, Cs);
    covariance(D, md, Cd);
    eigen3(Cs, Vs, es);
    eigen3(Cd, Vd, ed);
    static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int pm = 0; pm < 6; ++pm)
      for (int sgn = 0; sgn < 8; ++sgn) {
        double C[9] = {0}, VC[9], M[9];
        for (int r0 = 0; r0 < 3; ++r0) C[3 * r0 + perms[pm][r0]] = (sgn >> r0) & 1 ? -1 : 1;
        for (int r0 = 0; r0 < 3; ++r0) /* M = Vd C Vs^T */
          for (int c0 = 0; c0 < 3; ++c0) {
            double v = 0;
            for (int k = 0; k < 3; ++k) v += Vd[3 * r0 + k] * C[3 * k + c0];
            VC[3 * r0 + c0] = v;
          }
        for (int r0 = 0; r0 < 3; ++r0)
          for (int c0 = 0; c0 < 3; ++c0) {
            double v = 0;
            for (int k = 0; k < 3; ++k) v += VC[3 * r0 + k] * Vs[3 * c0 + k];
            M[3 * r0 + c0] = v;
          }
        if (sks_dm3_det(M) > 0) memcpy(hyps[nh++], M, sizeof M);
      }
  }
  /* the identity of the files' own frames, mapped into normalised coordinates */
  sim id_sim;
  id_sim.s = rs / rd;
  for (int i = 0; i < 9; ++i) id_sim.R[i] = (i % 4 == 0);
  for (int a = 0; a < 3; ++a) id_sim.t[a] = (csrc[a] - cdst[a]) / rd;
  double best_err = DBL_MAX;
  sim best = id_sim;
  {
    sim m = id_sim;
    size_t np;
    double thresh;
    double e0 = pairs(&c, &m, &np, &thresh) * rd / target_diagonal;
    if (e0 < 0.002) { /* already agree (0.2 % D): keep the files' frames */
      out->identity = 1;
      out->residual = e0;
      out->hypotheses = 1;
      goto done;
    }
  }
  sim found[ALIGN_MAX_HYPS + 8];
  double found_err[ALIGN_MAX_HYPS + 8];
  size_t nf = 0;
  if (hint) {
    /* the scene frames' agreement (both files' joints at rest in their
     * scenes): invisible to anything an export bakes into the vertex data.
     * It starts one more ICP, and its rotation times the 24 conventions
     * more hypotheses (data rotated arbitrarily AND another axis convention) */
    double k = cbrt(fabs(sks_dm3_det(hint->l)));
    if (k > 0 && isfinite(k)) {
      double Mt[9];
      for (int r0 = 0; r0 < 3; ++r0)
        for (int c0 = 0; c0 < 3; ++c0) Mt[3 * r0 + c0] = hint->l[3 * c0 + r0];
      sks_dquat hq = sks_horn_rotation(Mt, (sks_dquat){0, 0, 0, 1});
      sim h;
      sks_dq_to_m3(hq, h.R);
      h.s = rs / rd * k;
      double hc[3];
      sks_daff_point(hint, csrc, hc);
      for (int a = 0; a < 3; ++a) h.t[a] = (hc[a] - cdst[a]) / rd;
      size_t np;
      double thresh;
      double eh = pairs(&c, &h, &np, &thresh) * rd / target_diagonal;
      if (eh < 0.002) { /* the scenes agree: keep their frames */
        best = h;
        best_err = eh * target_diagonal / rd;
        nh = 0;
      }
    }
  }
  {
    /* coarse to fine: every hypothesis converges on a sparse subset of both
     * samples (ALIGN_COARSE points each); only the best few rotations that
     * are > 20 deg apart (the winner and its runners-up) are refined on the
     * full samples. Same answer, a fraction of the nearest-point queries. */
    icp_ctx cc;
    memset(&cc, 0, sizeof cc);
    size_t cs = ms < ALIGN_COARSE ? ms : ALIGN_COARSE, cd = md < ALIGN_COARSE ? md : ALIGN_COARSE;
    double *Sc = malloc(3 * cs * sizeof(double)), *Dc = malloc(3 * cd * sizeof(double));
    cc.pa = malloc((cs + cd) * 3 * sizeof(double));
    cc.pb = malloc((cs + cd) * 3 * sizeof(double));
    cc.pd = malloc((cs + cd) * sizeof(double));
    int ok = Sc && Dc && cc.pa && cc.pb && cc.pd;
    if (ok) {
      /* the farthest-point samples' prefixes: farthest-point samples too */
      memcpy(Sc, S, 3 * cs * sizeof(double));
      memcpy(Dc, D, 3 * cd * sizeof(double));
      ok = grid_build(&cc.gs, Sc, cs) && grid_build(&cc.gd, Dc, cd);
    }
    sim coarse[ALIGN_MAX_HYPS];
    double coarse_err[ALIGN_MAX_HYPS];
    size_t order[ALIGN_MAX_HYPS];
    if (ok) {
      cc.S = Sc; cc.D = Dc; cc.ns = cs; cc.nd = cd;
      for (size_t h = 0; h < nh; ++h) {
        coarse[h].s = 1;
        memcpy(coarse[h].R, hyps[h], sizeof coarse[h].R);
        coarse[h].t[0] = coarse[h].t[1] = coarse[h].t[2] = 0;
        coarse_err[h] = icp(&cc, &coarse[h]);
        order[h] = h;
      }
      for (size_t i = 1; i < nh; ++i) /* stable insertion sort by coarse error */
        for (size_t k = i; k > 0 && coarse_err[order[k]] < coarse_err[order[k - 1]]; --k) {
          size_t t = order[k]; order[k] = order[k - 1]; order[k - 1] = t;
        }
    }
    size_t picked = 0;
    for (size_t i = 0; i < nh && picked < ALIGN_REFINE; ++i) {
      sim m;
      if (ok) {
        m = coarse[order[i]];
        int far = 1; /* a rotation another refined start already reached adds nothing */
        for (size_t k = 0; k < nf && far; ++k) {
          double tr = 0;
          for (int q = 0; q < 9; ++q) tr += found[k].R[q] * m.R[q];
          if ((tr - 1) / 2 > cos(ALIGN_DISTINCT_DEG * M_PI / 180.0)) far = 0;
        }
        if (!far) continue;
      } else { /* out of memory for the coarse stage: refine every hypothesis */
        m.s = 1;
        memcpy(m.R, hyps[i], sizeof m.R);
        m.t[0] = m.t[1] = m.t[2] = 0;
      }
      double e = icp_fine(&c, &m);
      found[nf] = m; found_err[nf++] = e;
      if (ok) ++picked;
      if (e < best_err * (1 - 1e-6)) { best_err = e; best = m; }
    }
    grid_free(&cc.gs);
    grid_free(&cc.gd);
    free(Sc); free(Dc); free(cc.pa); free(cc.pb); free(cc.pd);
  }
  out->hypotheses = nh + 1;
  sim_to_file(&out->A, &best, csrc, cdst, rs, rd);
  out->scale = rd * best.s / rs;
  {
    double tr = best.R[0] + best.R[4] + best.R[8];
    double ca = (tr - 1) / 2;
    out->angle_deg = acos(ca > 1 ? 1 : (ca < -1 ? -1 : ca)) * 180.0 / M_PI;
  }
  memcpy(out->offset, out->A.t, sizeof out->A.t);
  out->residual = best_err * rd / target_diagonal;
  /* runners-up with other rotations (> 20 deg apart), best first: a pose
   * difference can make the wrong one fit the bind surfaces a little better,
   * so the articulated registration gets to choose among them */
  for (int pick = 0; pick < SKS_ALIGN_ALTERNATIVES; ++pick) {
    size_t bi = SIZE_MAX;
    for (size_t i = 0; i < nf; ++i) {
      int far = 1;
      const sim *cands[SKS_ALIGN_ALTERNATIVES + 1] = {&best};
      size_t ncand = 1;
      for (size_t k = 0; k < out->alternative_count; ++k) cands[ncand++] = &found[out->alternative_index[k]];
      for (size_t k = 0; k < ncand && far; ++k) {
        double tr = 0; /* angle between the rotations: trace(Ra^T Rb) */
        for (int q = 0; q < 9; ++q) tr += cands[k]->R[q] * found[i].R[q];
        if ((tr - 1) / 2 > cos(ALIGN_DISTINCT_DEG * M_PI / 180.0)) far = 0;
      }
      if (far && (bi == SIZE_MAX || found_err[i] < found_err[bi])) bi = i;
    }
    if (bi == SIZE_MAX || found_err[bi] > 3 * best_err) break;
    out->alternative_index[out->alternative_count] = bi;
    sim_to_file(&out->alternatives[out->alternative_count], &found[bi], csrc, cdst, rs, rd);
    out->alternative_count++;
  }
done:
  grid_free(&c.gs);
  grid_free(&c.gd);
  free(S); free(D); free(c.pa); free(c.pb); free(c.pd);
  return r;
}

/* Pose-independent scale between two copies of one mesh (vertex i of both
 * is the same point): the median ratio of edge lengths, which bending at the
 * joints leaves alone. 0 when it cannot be told. */
double sks_align_edge_scale(const double *src, const double *dst, const uint32_t *tris, size_t tri_count) {
  size_t n = tri_count * 3, k = 0;
  double *r = malloc((n ? n : 1) * sizeof(double));
  if (!r) return 0;
  for (size_t t = 0; t < tri_count; ++t)
    for (int e = 0; e < 3; ++e) {
      uint32_t a = tris[3 * t + e], b = tris[3 * t + (e + 1) % 3];
      double ls = 0, ld = 0;
      for (int q = 0; q < 3; ++q) {
        ls += (src[3 * a + q] - src[3 * b + q]) * (src[3 * a + q] - src[3 * b + q]);
        ld += (dst[3 * a + q] - dst[3 * b + q]) * (dst[3 * a + q] - dst[3 * b + q]);
      }
      if (ls > 0 && ld > 0) r[k++] = sqrt(ld / ls);
    }
  double m = 0;
  if (k) {
    qsort(r, k, sizeof(double), cmp_double);
    m = r[k / 2];
  }
  free(r);
  return m;
}
