/* Correspondence between the target's and the source's rest surfaces:
 * nearest source vertex, or closest point on the source triangles (with the
 * barycentric weights used to blend the three recorded positions). A bounding
 * volume hierarchy (axis-aligned boxes, median splits, <= BVH_LEAF items a
 * leaf) indexes the source; a query descends nearer child first and prunes
 * every box farther than the best found, so its cost follows the surface
 * near the query, not the mesh's density, its bounding volume or how far
 * the query lies (different bodies, far-off parts). The hierarchy holds
 * fewer than 2 nodes per item: its memory is bounded by the input.
 *
 * Work is bounded too. Triangles listed twice (the same three vertices, in
 * any order: double-sided copies) are indexed once: the closest point is the
 * same. But boxes of triangles that span the mesh all overlap every query,
 * and pruning cannot skip them (5,800 such triangles made a bake's
 * registration test every one per query: > 60 s), so a build counts its
 * point / triangle tests and gives up past SKS_CORR_TESTS_PER_QUERY per
 * query on average (real meshes: a few dozen), with over_budget set for a
 * clear error (sks_correspondence_fail). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "solve/solve_internal.h"

void sks_correspondence_free(sks_correspondence *c) {
  if (!c) return;
  free(c->idx);
  free(c->bary);
  memset(c, 0, sizeof *c);
}

/* Ericson, Real-Time Collision Detection 5.1.5. */
double sks_closest_point_triangle(const double *p, const double *a, const double *b,
                                  const double *c, double *bary) {
  double ab[3], ac[3], ap[3], bp[3], cp[3], q[3];
  for (int k = 0; k < 3; ++k) {
    ab[k] = b[k] - a[k]; ac[k] = c[k] - a[k]; ap[k] = p[k] - a[k];
    bp[k] = p[k] - b[k]; cp[k] = p[k] - c[k];
  }
  double d1 = sks_d3_dot(ab, ap), d2 = sks_d3_dot(ac, ap);
  if (d1 <= 0 && d2 <= 0) { bary[0] = 1; bary[1] = 0; bary[2] = 0; goto done; }
  double d3 = sks_d3_dot(ab, bp), d4 = sks_d3_dot(ac, bp);
  if (d3 >= 0 && d4 <= d3) { bary[0] = 0; bary[1] = 1; bary[2] = 0; goto done; }
  double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    double v = d1 / (d1 - d3);
    bary[0] = 1 - v; bary[1] = v; bary[2] = 0; goto done;
  }
  double d5 = sks_d3_dot(ab, cp), d6 = sks_d3_dot(ac, cp);
  if (d6 >= 0 && d5 <= d6) { bary[0] = 0; bary[1] = 0; bary[2] = 1; goto done; }
  double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    double w = d2 / (d2 - d6);
    bary[0] = 1 - w; bary[1] = 0; bary[2] = w; goto done;
  }
  double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
    double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    bary[0] = 0; bary[1] = 1 - w; bary[2] = w; goto done;
  }
  {
    double den = va + vb + vc;
    if (!(fabs(den) > 0)) { bary[0] = 1; bary[1] = 0; bary[2] = 0; goto done; } /* degenerate */
    double v = vb / den, w = vc / den;
    bary[0] = 1 - v - w; bary[1] = v; bary[2] = w;
  }
done:
  for (int k = 0; k < 3; ++k) q[k] = bary[0] * a[k] + bary[1] * b[k] + bary[2] * c[k];
  return sks_d3_dist2(p, q);
}

#define BVH_LEAF 4
#define BVH_MAX_DEPTH 64 /* median splits of < 2^32 items never go deeper */

typedef struct bvh_node {
  double lo[3], hi[3];
  uint32_t first, count; /* leaf: items[first, first + count); inner: children first, first + 1 */
} bvh_node;

typedef struct bvh {
  bvh_node *nodes;
  size_t node_count;
  uint32_t *items;
} bvh;

static void bvh_free(bvh *b) { free(b->nodes); free(b->items); memset(b, 0, sizeof *b); }

/* box of item it (a point, or a triangle's three corners) */
static void item_box(const double *pts, const uint32_t *tris, uint32_t it, double *lo, double *hi) {
  if (!tris) {
    memcpy(lo, &pts[3 * it], 3 * sizeof(double));
    memcpy(hi, &pts[3 * it], 3 * sizeof(double));
    return;
  }
  for (int a = 0; a < 3; ++a) {
    double v0 = pts[3 * tris[3 * it] + a], v1 = pts[3 * tris[3 * it + 1] + a], v2 = pts[3 * tris[3 * it + 2] + a];
    lo[a] = fmin(v0, fmin(v1, v2));
    hi[a] = fmax(v0, fmax(v1, v2));
  }
}

/* Deterministic quickselect on the items' centroid along axis a (key: centre
 * of the item's box, ties by index), so items[b..m) <= items[m..e). */
void sks_select_median(uint32_t *items, const double *centre, size_t b, size_t m, size_t e, int a) {
  while (e - b > 1) {
    size_t mid = b + (e - b) / 2;
    double pv = centre[3 * items[mid] + a];
    uint32_t pi = items[mid];
    size_t i = b, j = e - 1;
    while (i <= j) {
      while (centre[3 * items[i] + a] < pv || (centre[3 * items[i] + a] == pv && items[i] < pi)) ++i;
      while (centre[3 * items[j] + a] > pv || (centre[3 * items[j] + a] == pv && items[j] > pi)) --j;
      if (i <= j) {
        uint32_t t = items[i]; items[i] = items[j]; items[j] = t;
        ++i;
        if (j == 0) break;
        --j;
      }
    }
    if (m <= j) e = j + 1;
    else if (m >= i) b = i;
    else return;
  }
}

static int bvh_build(bvh *h, const double *pts, const uint32_t *tris, size_t n) {
  memset(h, 0, sizeof *h);
  if (n == 0 || n > UINT32_MAX / 2) return n == 0;
  h->items = malloc(n * sizeof *h->items);
  h->nodes = malloc((2 * n) * sizeof *h->nodes);
  double *centre = malloc(3 * n * sizeof(double)), *box = malloc(6 * n * sizeof(double));
  if (!h->items || !h->nodes || !centre || !box) { free(centre); free(box); bvh_free(h); return 0; }
  for (size_t i = 0; i < n; ++i) {
    h->items[i] = (uint32_t)i;
    item_box(pts, tris, (uint32_t)i, &box[6 * i], &box[6 * i + 3]);
    for (int a = 0; a < 3; ++a) centre[3 * i + a] = 0.5 * (box[6 * i + a] + box[6 * i + 3 + a]);
  }
  /* explicit stack of (node, begin, end) */
  size_t stack[3 * (BVH_MAX_DEPTH + 2)], sp = 0;
  h->node_count = 1;
  stack[sp++] = 0; stack[sp++] = 0; stack[sp++] = n;
  while (sp) {
    size_t e = stack[--sp], b = stack[--sp], ni = stack[--sp];
    bvh_node *nd = &h->nodes[ni];
    double clo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, chi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
    for (int a = 0; a < 3; ++a) { nd->lo[a] = DBL_MAX; nd->hi[a] = -DBL_MAX; }
    for (size_t i = b; i < e; ++i) {
      uint32_t it = h->items[i];
      for (int a = 0; a < 3; ++a) {
        nd->lo[a] = fmin(nd->lo[a], box[6 * it + a]);
        nd->hi[a] = fmax(nd->hi[a], box[6 * it + 3 + a]);
        clo[a] = fmin(clo[a], centre[3 * it + a]);
        chi[a] = fmax(chi[a], centre[3 * it + a]);
      }
    }
    if (e - b <= BVH_LEAF || sp + 6 > sizeof stack / sizeof stack[0]) {
      nd->first = (uint32_t)b;
      nd->count = (uint32_t)(e - b);
      continue;
    }
    int axis = 0;
    for (int a = 1; a < 3; ++a)
      if (chi[a] - clo[a] > chi[axis] - clo[axis]) axis = a;
    size_t m = b + (e - b) / 2;
    sks_select_median(h->items, centre, b, m, e, axis);
    size_t l = h->node_count;
    h->node_count += 2;
    nd->first = (uint32_t)l;
    nd->count = 0;
    stack[sp++] = l; stack[sp++] = b; stack[sp++] = m;
    stack[sp++] = l + 1; stack[sp++] = m; stack[sp++] = e;
  }
  free(centre);
  free(box);
  return 1;
}

static double box_dist2(const bvh_node *nd, const double *q) {
  double d2 = 0;
  for (int a = 0; a < 3; ++a) {
    double e = q[a] < nd->lo[a] ? nd->lo[a] - q[a] : (q[a] > nd->hi[a] ? q[a] - nd->hi[a] : 0);
    d2 += e * e;
  }
  return d2;
}

/* The target points of one piece: the closest source point of each, on
 * whichever pool thread runs it (the hierarchy is read-only). A piece stops
 * once its own tests pass the whole build's budget (the total is then over
 * it, whatever the other pieces do: the outcome is the same on any number of
 * threads). */
typedef struct corr_run {
  const bvh *h;
  const double *src, *dst;
  const uint32_t *tris;
  int use_tris;
  size_t dst_count, pieces;
  sks_correspondence *out;
  double *dist; /* dst_count: distance of each point */
  uint64_t budget;
  uint64_t *tests; /* per piece */
} corr_run;

/* Ties: items as near as the one taken (squared distances within CORR_TIE
 * relative: a point on an edge two triangles share, a vertex welded on a
 * seam) go to the lowest index, never to whichever the tree visits first.
 * The tree's shape follows the data's orientation, so without this a file
 * turned by 180 degrees (bit-exact data) got other closest points. */
#define CORR_TIE 1e-9
/* Ties looked at per query before boxes at the best distance are pruned
 * again: a point where thousands of vertices or degenerate triangles
 * coincide (a file's unused vertices parked at the origin) costs a bounded
 * search, never one over all of them (SKS_CORR_TESTS_PER_QUERY). */
#define CORR_TIES_MAX 32
static int corr_better(double d2, uint32_t it, double best, uint32_t bt, unsigned *ties) {
  if (d2 < best * (1 - CORR_TIE)) { *ties = 0; return 1; }
  if (!(d2 <= best * (1 + CORR_TIE))) return 0;
  ++*ties;
  return it < bt;
}
/* A box still worth opening: nearer than the best, or as near while ties
 * are still looked at. */
static int corr_open(double box_d2, double best, unsigned ties) {
  return ties < CORR_TIES_MAX ? box_d2 <= best * (1 + CORR_TIE) : box_d2 < best;
}

static void closest_points(void *user, size_t piece, unsigned thread) {
  (void)thread;
  const corr_run *cr = user;
  const bvh *h = cr->h;
  const double *src = cr->src;
  const uint32_t *tris = cr->tris;
  size_t j0 = cr->dst_count * piece / cr->pieces, j1 = cr->dst_count * (piece + 1) / cr->pieces;
  /* depth-first, nearer child first; at most one pending sibling per level */
  uint32_t stack[2 * BVH_MAX_DEPTH + 8];
  double stack_d2[2 * BVH_MAX_DEPTH + 8];
  uint64_t tests = 0;
  for (size_t j = j0; j < j1 && tests <= cr->budget; ++j) {
    const double *q = &cr->dst[3 * j];
    double best = DBL_MAX, bb[3] = {1, 0, 0};
    uint32_t bi[3] = {0, 0, 0}, bt = UINT32_MAX; /* bt: the item (triangle or vertex) taken */
    unsigned ties = 0;
    size_t sp = 0;
    stack[sp] = 0;
    stack_d2[sp++] = box_dist2(&h->nodes[0], q);
    while (sp) {
      --sp;
      if (!corr_open(stack_d2[sp], best, ties)) continue;
      const bvh_node *nd = &h->nodes[stack[sp]];
      if (nd->count) {
        tests += nd->count;
        for (uint32_t k = nd->first; k < nd->first + nd->count; ++k) {
          uint32_t it = h->items[k];
          if (cr->use_tris) {
            const uint32_t *t = &tris[3 * it];
            double bc[3];
            double d2 = sks_closest_point_triangle(q, &src[3 * t[0]], &src[3 * t[1]], &src[3 * t[2]], bc);
            if (corr_better(d2, it, best, bt, &ties)) {
              best = d2;
              bt = it;
              bi[0] = t[0]; bi[1] = t[1]; bi[2] = t[2];
              bb[0] = bc[0]; bb[1] = bc[1]; bb[2] = bc[2];
            }
          } else {
            double d2 = sks_d3_dist2(q, &src[3 * it]);
            if (corr_better(d2, it, best, bt, &ties)) { best = d2; bt = it; bi[0] = bi[1] = bi[2] = it; }
          }
        }
        continue;
      }
      uint32_t c0 = nd->first, c1 = nd->first + 1;
      double d0 = box_dist2(&h->nodes[c0], q), d1 = box_dist2(&h->nodes[c1], q);
      if (d0 > d1) { uint32_t t = c0; c0 = c1; c1 = t; double td = d0; d0 = d1; d1 = td; }
      /* push the farther first so the nearer is taken next */
      if (corr_open(d1, best, ties)) { stack[sp] = c1; stack_d2[sp++] = d1; }
      if (corr_open(d0, best, ties)) { stack[sp] = c0; stack_d2[sp++] = d0; }
    }
    if (best == DBL_MAX) { bi[0] = bi[1] = bi[2] = UINT32_MAX; best = 0; } /* none nearer than DBL_MAX (NaN) */
    memcpy(&cr->out->idx[3 * j], bi, sizeof bi);
    if (!cr->use_tris) { bb[0] = 1; bb[1] = 0; bb[2] = 0; }
    for (int k = 0; k < 3; ++k) cr->out->bary[3 * j + k] = (float)bb[k];
    cr->dist[j] = sqrt(best);
  }
  cr->tests[piece] = tests;
}

/* Triangles without repeats: the first of each set of three vertex indices
 * (any order), in index order. Returns the kept count; keep[] their
 * indices. */
static int cmp_tri_key(const void *a, const void *b) {
  const uint32_t *x = a, *y = b;
  for (int k = 0; k < 4; ++k)
    if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
  return 0;
}

static uint32_t *unique_triangles(const uint32_t *tris, size_t n, size_t *kept) {
  *kept = 0;
  uint32_t *key = malloc((n ? n : 1) * 4 * sizeof(uint32_t));
  uint32_t *out = malloc((n ? n : 1) * 3 * sizeof(uint32_t));
  unsigned char *drop = calloc(n ? n : 1, 1);
  if (!key || !out || !drop) { free(key); free(out); free(drop); return NULL; }
  for (size_t t = 0; t < n; ++t) {
    uint32_t a = tris[3 * t], b = tris[3 * t + 1], c = tris[3 * t + 2], x;
    if (a > b) { x = a; a = b; b = x; }
    if (b > c) { x = b; b = c; c = x; }
    if (a > b) { x = a; a = b; b = x; }
    key[4 * t] = a; key[4 * t + 1] = b; key[4 * t + 2] = c; key[4 * t + 3] = (uint32_t)t;
  }
  qsort(key, n, 4 * sizeof(uint32_t), cmp_tri_key); /* ties by index: the first copy leads */
  for (size_t i = 1; i < n; ++i)
    if (memcmp(&key[4 * i], &key[4 * (i - 1)], 3 * sizeof(uint32_t)) == 0) drop[key[4 * i + 3]] = 1;
  for (size_t t = 0; t < n; ++t)
    if (!drop[t]) { memcpy(&out[3 * *kept], &tris[3 * t], 3 * sizeof(uint32_t)); ++*kept; }
  free(key);
  free(drop);
  return out;
}

sks_result sks_correspondence_fail(const sks_correspondence *c, const char *file, sks_error *err) {
  if (!c->over_budget)
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory building the correspondence");
  return sks_error_set(err, SKS_ERR_INVALID,
                       "%s: %zu triangles overlap so much that finding closest points on them would test "
                       "over %d of them per point (a few dozen in a real mesh; e.g. thousands of triangles "
                       "spanning the mesh): refused, it would take minutes",
                       file ? file : "surface", c->tri_count, SKS_CORR_TESTS_PER_QUERY);
}

struct sks_surface_index {
  bvh h;
  const double *pts;
  uint32_t *tris; /* without repeats (owned) */
  size_t tri_count;
  int use_tris;
};

sks_surface_index *sks_surface_index_build(sks_correspondence_kind kind, const double *pts, size_t count,
                                           const uint32_t *tris, size_t tri_count) {
  if (count == 0) return NULL;
  sks_surface_index *ix = calloc(1, sizeof *ix);
  if (!ix) return NULL;
  ix->use_tris = kind == SKS_CORRESPOND_CLOSEST_POINT && tris && tri_count > 0;
  ix->pts = pts;
  if (ix->use_tris) {
    ix->tris = unique_triangles(tris, tri_count, &ix->tri_count);
    if (!ix->tris) { free(ix); return NULL; }
  }
  if (!bvh_build(&ix->h, pts, ix->tris, ix->use_tris ? ix->tri_count : count)) {
    free(ix->tris);
    free(ix);
    return NULL;
  }
  return ix;
}

void sks_surface_index_free(sks_surface_index *ix) {
  if (!ix) return;
  bvh_free(&ix->h);
  free(ix->tris);
  free(ix);
}

int sks_surface_index_query(const sks_surface_index *ix, const double *dst, size_t dst_count,
                            sks_correspondence *out, sks_thread_pool *pool) {
  memset(out, 0, sizeof *out);
  if (!ix) return 0;
  /* pieces of >= 256 points, at most one per pool thread */
  size_t slots = sks_thread_pool_size(pool), pieces = dst_count / 256;
  if (pieces > slots) pieces = slots;
  if (pieces < 1) pieces = 1;
  out->count = dst_count;
  out->idx = malloc((dst_count ? dst_count : 1) * 3 * sizeof(uint32_t));
  out->bary = malloc((dst_count ? dst_count : 1) * 3 * sizeof(float));
  double *dist = malloc((dst_count ? dst_count : 1) * sizeof(double));
  uint64_t *tests = calloc(pieces, sizeof(uint64_t));
  if (!out->idx || !out->bary || !dist || !tests) {
    free(dist); free(tests);
    sks_correspondence_free(out);
    return 0;
  }
  uint64_t budget = (uint64_t)SKS_CORR_TESTS_PER_QUERY * (uint64_t)dst_count + SKS_CORR_TESTS_FREE;
  corr_run cr = {&ix->h, ix->pts, dst, ix->tris, ix->use_tris, dst_count, pieces, out, dist, budget, tests};
  sks_thread_pool_run(pool, closest_points, &cr, pieces);
  uint64_t total = 0;
  for (size_t k = 0; k < pieces; ++k) total += tests[k];
  free(tests);
  size_t tri_count = ix->use_tris ? ix->tri_count : 0;
  if (total > budget) {
    free(dist);
    sks_correspondence_free(out);
    out->over_budget = 1;
    out->tests = total;
    out->tri_count = tri_count;
    return 0;
  }
  out->tests = total;
  out->tri_count = tri_count;
  double sum = 0, maxd = 0; /* point order: the same sums for any thread count */
  for (size_t j = 0; j < dst_count; ++j) {
    sum += dist[j];
    if (dist[j] > maxd) maxd = dist[j];
  }
  free(dist);
  out->max_distance = maxd;
  out->mean_distance = dst_count ? sum / (double)dst_count : 0;
  return 1;
}

int sks_correspondence_build(sks_correspondence *out, sks_correspondence_kind kind,
                             const double *src, size_t src_count, const uint32_t *tris,
                             size_t tri_count, const double *dst, size_t dst_count,
                             double scale, sks_thread_pool *pool) {
  (void)scale;
  memset(out, 0, sizeof *out);
  sks_surface_index *ix = sks_surface_index_build(kind, src, src_count, tris, tri_count);
  if (!ix) return 0;
  int ok = sks_surface_index_query(ix, dst, dst_count, out, pool);
  sks_surface_index_free(ix);
  return ok;
}

/* ---- limbs: a correspondence between two bodies keeps to one limb ------- */

/* Dominant joint of each view vertex (-1: no weight). */
static void view_dominant(const sks_skinview *v, int32_t *dom) {
  for (size_t k = 0; k < v->V; ++k) {
    double bw = 0;
    dom[k] = -1;
    for (uint32_t i = v->start[k]; i < v->start[k + 1]; ++i)
      if (v->w[i] > bw && v->pal_joint[v->pal[i]] >= 0) { bw = v->w[i]; dom[k] = v->pal_joint[v->pal[i]]; }
  }
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Closest points between two bodies can cross from one limb to another
 * (the inner edge of a big boot lies nearer the other foot): such a vertex
 * would be given the other limb's motion. Each target joint's vertices
 * follow a region of the source skeleton: the joints their corresponding
 * points follow most (the vote) and, connected to it through the source's
 * bones, the others at least two of them (one, for a joint of under 50
 * vertices) follow. A vertex whose point follows a source joint outside
 * that region takes the closest point among the source triangles of the
 * region and its neighbouring joints, however much farther that lies (a
 * limit of 5 % D farther, before 2026-12-05, kept the wrong limb's motion
 * on the vertices that needed the fix most: RobotExpressive onto the player
 * robot 62.6 %, 97.6 % without it). See solve_internal.h.
 * The region's closest points come from an index built on the region's
 * triangles alone. Before (2026-12-06), one index over the whole source
 * skipped the other triangles as it met them, so its boxes, which follow
 * the data's axes, were opened for triangles it could not take: mannequiny
 * onto the player robot tested ~3,300-3,900 triangles a point for one
 * joint's 292 vertices, past the correspondence's work bound in one
 * orientation of the target's data and not in another, and the bound
 * left those vertices on the wrong limb (quality 71.59 % as given, 70.63 %
 * with the target's data turned and scaled). */
#define LIMB_WORK 64u
#define LIMB_WORK_FREE (1u << 24)
int sks_correspondence_keep_limbs(sks_correspondence *corr, const sks_skinview *sv, const sks_skeleton *ss,
                                  const double *surf, const sks_skinview *tv, size_t Jt,
                                  sks_thread_pool *pool, size_t *rematched) {
  size_t V = tv->V, Vs = sv->V, Js = ss->joint_count;
  *rematched = 0;
  if (corr->identity || !V || !Vs || !Js || !Jt || Js >= INT32_MAX || Jt >= INT32_MAX) return 1;
  int32_t *tdom = malloc(V * sizeof(int32_t)), *sdom = malloc(V * sizeof(int32_t)), *vdom = malloc(Vs * sizeof(int32_t));
  int32_t *wp = malloc(Js * sizeof(int32_t));
  uint32_t *count = calloc(Js, sizeof(uint32_t)), *kstart = calloc(Js + 1, sizeof(uint32_t));
  uint32_t *kids = malloc(Js * sizeof(uint32_t)), *list = malloc(Js * sizeof(uint32_t)), *outl = malloc(V * sizeof(uint32_t));
  uint64_t *key = malloc(V * sizeof(uint64_t));
  uint32_t *tstart = calloc(Jt + 1, sizeof(uint32_t)), *tverts = malloc(V * sizeof(uint32_t));
  uint8_t *comp = calloc(Js, 1), *allowed = calloc(Js, 1), *weighted = calloc(Js, 1);
  double *pts = malloc(V * 3 * sizeof(double));
  /* a region's triangles (or, without triangles, its vertices and their positions) */
  uint32_t *rtris = malloc((sv->tri_count ? sv->tri_count * 3 : Vs ? Vs : 1) * sizeof(uint32_t));
  double *rpts = malloc((sv->tri_count || !Vs ? 1 : Vs) * 3 * sizeof(double));
  int ok = 1;
  if (!tdom || !sdom || !vdom || !wp || !tstart || !tverts || !count || !kstart || !kids || !list || !outl || !key || !comp || !allowed || !weighted || !pts || !rtris || !rpts) {
    ok = 0;
    goto done;
  }
  view_dominant(tv, tdom);
  view_dominant(sv, vdom);
  /* the target's vertices by dominant joint (counting sort) */
  for (size_t j = 0; j < V; ++j)
    if (tdom[j] >= 0 && (size_t)tdom[j] < Jt) tstart[tdom[j] + 1]++;
  for (size_t t = 0; t < Jt; ++t) tstart[t + 1] += tstart[t];
  {
    uint32_t *fill = malloc((Jt ? Jt : 1) * sizeof(uint32_t));
    if (!fill) { ok = 0; goto done; }
    memcpy(fill, tstart, Jt * sizeof(uint32_t));
    for (size_t j = 0; j < V; ++j)
      if (tdom[j] >= 0 && (size_t)tdom[j] < Jt) tverts[fill[tdom[j]]++] = (uint32_t)j;
    free(fill);
  }
  for (size_t i = 0; i < sv->start[Vs]; ++i) {
    int32_t sj = sv->pal_joint[sv->pal[i]];
    if (sj >= 0 && (size_t)sj < Js && sv->w[i] > 0) weighted[sj] = 1;
  }
  /* the source skeleton with its unweighted joints contracted: each
   * weighted joint's nearest weighted ancestor (wp) and children (CSR) */
  for (size_t j = 0; j < Js; ++j) {
    int32_t p = ss->parents[j];
    size_t steps = 0;
    while (p >= 0 && (size_t)p < Js && !weighted[p] && steps++ < Js) p = ss->parents[p];
    wp[j] = p >= 0 && (size_t)p < Js && weighted[p] ? p : -1;
  }
  for (size_t j = 0; j < Js; ++j)
    if (weighted[j] && wp[j] >= 0) kstart[wp[j] + 1]++;
  for (size_t j = 0; j < Js; ++j) kstart[j + 1] += kstart[j];
  {
    uint32_t *fill = list; /* scratch */
    memcpy(fill, kstart, Js * sizeof(uint32_t));
    for (size_t j = 0; j < Js; ++j)
      if (weighted[j] && wp[j] >= 0) kids[fill[wp[j]]++] = (uint32_t)j;
  }
  /* the source joint each target vertex's corresponding point follows most */
  for (size_t j = 0; j < V; ++j) {
    int32_t jj[24];
    double ww[24];
    int n = 0;
    for (int e = 0; e < 3; ++e) {
      uint32_t si = corr->idx[3 * j + e];
      double b = corr->bary[3 * j + e];
      if (si >= Vs || !(b > 0)) continue;
      for (uint32_t i = sv->start[si]; i < sv->start[si + 1]; ++i) {
        int32_t sj = sv->pal_joint[sv->pal[i]];
        if (sj < 0) continue;
        int m = 0;
        while (m < n && jj[m] != sj) ++m;
        if (m == n) { if (n == 24) continue; jj[n] = sj; ww[n++] = 0; }
        ww[m] += b * sv->w[i];
      }
    }
    sdom[j] = -1;
    double bw = 0;
    for (int m = 0; m < n; ++m)
      if (ww[m] > bw) { bw = ww[m]; sdom[j] = jj[m]; }
    key[j] = tdom[j] >= 0 && sdom[j] >= 0 ? ((uint64_t)tdom[j] << 32 | (uint32_t)sdom[j]) : UINT64_MAX;
  }
  qsort(key, V, sizeof(uint64_t), cmp_u64);
  /* triangles scanned and indexed for the regions (LIMB_WORK) */
  uint64_t work = 0, work_max = LIMB_WORK * ((uint64_t)sv->tri_count + V) + LIMB_WORK_FREE;
  for (size_t i0 = 0; i0 < V && key[i0] != UINT64_MAX;) {
    /* target joint t's run of keys [i0, i1): its vertices by source joint */
    uint32_t t = (uint32_t)(key[i0] >> 32);
    size_t i1 = i0, nt = 0, best = 0;
    int32_t vote = -1;
    while (i1 < V && key[i1] != UINT64_MAX && (uint32_t)(key[i1] >> 32) == t) {
      size_t e = i1;
      while (e < V && key[e] == key[i1]) ++e;
      uint32_t sj = (uint32_t)key[i1];
      count[sj] = (uint32_t)(e - i1);
      if (e - i1 > best) { best = e - i1; vote = (int32_t)sj; }
      nt += e - i1;
      i1 = e;
    }
    uint32_t minc = nt >= 50 ? 2 : 1;
    /* the region: joints followed by >= minc vertices, connected to the vote */
    size_t nl = 0;
    list[nl++] = (uint32_t)vote;
    comp[vote] = 1;
    for (size_t q = 0; q < nl; ++q) {
      uint32_t a = list[q];
      int32_t p = wp[a];
      if (p >= 0 && !comp[p] && count[p] >= minc) { comp[p] = 1; list[nl++] = (uint32_t)p; }
      for (uint32_t k = kstart[a]; k < kstart[a + 1]; ++k)
        if (!comp[kids[k]] && count[kids[k]] >= minc) { comp[kids[k]] = 1; list[nl++] = kids[k]; }
    }
    size_t no = 0;
    for (uint32_t k = tstart[t]; k < tstart[t + 1]; ++k) {
      uint32_t j = tverts[k];
      if (sdom[j] >= 0 && !comp[sdom[j]]) outl[no++] = j;
    }
    if (no) {
      for (size_t q = 0; q < nl; ++q) { /* the region and its neighbours */
        uint32_t a = list[q];
        allowed[a] = 1;
        if (wp[a] >= 0) allowed[wp[a]] = 1;
        for (uint32_t k = kstart[a]; k < kstart[a + 1]; ++k) allowed[kids[k]] = 1;
      }
      for (size_t k = 0; k < no; ++k) memcpy(&pts[3 * k], &tv->pos[3 * outl[k]], 3 * sizeof(double));
      /* the triangles the region may take (a vertex of theirs follows an
       * allowed joint), in index order: the ties' rule (lowest index) picks
       * as it would among all of them. Each region scans every triangle
       * and indexes its own: within LIMB_WORK of the whole call (a real
       * rig's few dozen regions; a hostile skeleton of thousands of joints
       * whose regions each take every triangle stops there, its closest
       * points standing, as past the work bound before) */
      size_t nr = 0;
      const int tri = sv->tri_count > 0; /* else nearest vertices: the region's vertices, indexed apart */
      const size_t items = tri ? sv->tri_count : Vs;
      const int afford = work + items <= work_max;
      work += items;
      for (size_t q = 0; afford && tri && q < sv->tri_count; ++q) {
        const uint32_t *tq = &sv->tris[3 * q];
        int in = 0;
        for (int e = 0; e < 3 && !in; ++e) in = tq[e] < Vs && vdom[tq[e]] >= 0 && allowed[vdom[tq[e]]];
        if (in) memcpy(&rtris[3 * nr++], tq, 3 * sizeof(uint32_t));
      }
      for (size_t v = 0; afford && !tri && v < Vs; ++v)
        if (vdom[v] >= 0 && allowed[vdom[v]]) {
          memcpy(&rpts[3 * nr], &surf[3 * v], 3 * sizeof(double));
          rtris[nr++] = (uint32_t)v; /* the region's point nr is source vertex v */
        }
      work += nr;
      sks_correspondence rc;
      memset(&rc, 0, sizeof rc);
      sks_surface_index *rx = !nr ? NULL
                              : tri ? sks_surface_index_build(SKS_CORRESPOND_CLOSEST_POINT, surf, Vs, rtris, nr)
                                    : sks_surface_index_build(SKS_CORRESPOND_NEAREST_VERTEX, rpts, nr, NULL, 0);
      if (nr && !rx) { ok = 0; goto done; }
      int got = rx && sks_surface_index_query(rx, pts, no, &rc, pool);
      sks_surface_index_free(rx);
      for (size_t k = 0; got && k < no; ++k) {
        uint32_t j = outl[k];
        if (rc.idx[3 * k] == UINT32_MAX) continue;
        if (!tri)
          for (int e = 0; e < 3; ++e) rc.idx[3 * k + e] = rtris[rc.idx[3 * k + e]];
        memcpy(&corr->idx[3 * j], &rc.idx[3 * k], 3 * sizeof(uint32_t));
        memcpy(&corr->bary[3 * j], &rc.bary[3 * k], 3 * sizeof(float));
        ++*rematched;
      }
      int over = rc.over_budget;
      sks_correspondence_free(&rc);
      if (nr && !got && !over) { ok = 0; goto done; }
      /* over its work bound: no cheap answer, the closest points stand */
      for (size_t q = 0; q < nl; ++q) {
        uint32_t a = list[q];
        allowed[a] = 0;
        if (wp[a] >= 0) allowed[wp[a]] = 0;
        for (uint32_t k = kstart[a]; k < kstart[a + 1]; ++k) allowed[kids[k]] = 0;
      }
    }
    for (size_t q = 0; q < nl; ++q) comp[list[q]] = 0;
    for (size_t i = i0; i < i1; ++i) count[(uint32_t)key[i]] = 0;
    i0 = i1;
  }
done:
  free(tdom); free(sdom); free(vdom); free(wp); free(tstart); free(tverts); free(count); free(kstart); free(kids); free(list); free(outl); free(key);
  free(comp); free(allowed); free(weighted); free(pts); free(rtris); free(rpts);
  return ok;
}

/* ---- coinciding vertices of one surface (sks_correspondence_coincident) ---- */

typedef struct seam_key {
  double p[3];
  uint32_t v;
} seam_key;

static int same_position(const double *a, const double *b) { return a[0] == b[0] && a[1] == b[1] && a[2] == b[2]; }

static int cmp_seam_key(const void *x, const void *y) {
  const seam_key *a = x, *b = y;
  for (int k = 0; k < 3; ++k)
    if (a->p[k] != b->p[k]) return a->p[k] < b->p[k] ? -1 : 1; /* -0 == 0: one position */
  return (a->v > b->v) - (a->v < b->v);
}

/* Triangles of each vertex (CSR over V + 1). NULL start: out of memory. */
static int vertex_triangles(const uint32_t *tris, size_t tri_count, size_t V, uint32_t **start, uint32_t **list) {
  *start = calloc(V + 1, sizeof(uint32_t));
  *list = malloc((3 * tri_count + 1) * sizeof(uint32_t));
  uint32_t *fill = calloc(V + 1, sizeof(uint32_t));
  if (!*start || !*list || !fill) { free(*start); free(*list); free(fill); *start = *list = NULL; return 0; }
  for (size_t t = 0; t < tri_count; ++t)
    for (int k = 0; k < 3; ++k)
      if (tris[3 * t + k] < V) (*start)[tris[3 * t + k] + 1]++;
  for (size_t v = 0; v < V; ++v) (*start)[v + 1] += (*start)[v];
  for (size_t t = 0; t < tri_count; ++t)
    for (int k = 0; k < 3; ++k) {
      uint32_t v = tris[3 * t + k];
      if (v < V) (*list)[(*start)[v] + fill[v]++] = (uint32_t)t;
    }
  free(fill);
  return 1;
}

/* A triangle's centroid and (unnormalised) normal. */
static void tri_frame(const double *pos, const uint32_t *f, double *c, double *n) {
  double u[3], w[3];
  for (int a = 0; a < 3; ++a) {
    c[a] = (pos[3 * f[0] + a] + pos[3 * f[1] + a] + pos[3 * f[2] + a]) / 3;
    u[a] = pos[3 * f[1] + a] - pos[3 * f[0] + a];
    w[a] = pos[3 * f[2] + a] - pos[3 * f[0] + a];
  }
  sks_d3_cross(u, w, n);
}

/* Bounds on the copies' vote (a hostile file can pile a million vertices
 * and triangles on one position): at most COINCIDENT_COPIES copies of a
 * position are told apart (more: the nearest vertex stands), and at most
 * COINCIDENT_TRIS triangles of a vertex vote or are voted for. */
#define COINCIDENT_COPIES 64
#define COINCIDENT_TRIS 32

int sks_correspondence_coincident(sks_correspondence *corr, const double *spos, size_t Vs, const uint32_t *stris,
                                   size_t stri_count, const sks_daffine *A, double stol, const double *tpos,
                                   size_t Vt, const uint32_t *ttris, size_t ttri_count, sks_thread_pool *pool,
                                   size_t *moved) {
  *moved = 0;
  if (!corr || corr->identity || corr->count != Vt || !Vs) return 1;
  sks_daffine Ainv;
  if (!sks_daff_inverse(A, &Ainv)) return 1;
  seam_key *keys = malloc(Vs * sizeof(seam_key));
  uint32_t *first = malloc(Vs * sizeof(uint32_t)); /* each source vertex's place in keys */
  uint32_t *grp = malloc(Vs * sizeof(uint32_t)); /* each key's first key of its position */
  uint32_t *ss = NULL, *sl = NULL, *ts = NULL, *tl = NULL, *votes = calloc(Vs, sizeof(uint32_t));
  double *q = NULL;
  sks_surface_index *ix = NULL;
  sks_correspondence nv;
  memset(&nv, 0, sizeof nv);
  int ok = keys && first && grp && votes && vertex_triangles(stris, stri_count, Vs, &ss, &sl) &&
           vertex_triangles(ttris, ttri_count, Vt, &ts, &tl);
  if (!ok) goto done;
  for (size_t v = 0; v < Vs; ++v) {
    memcpy(keys[v].p, &spos[3 * v], sizeof keys[v].p);
    keys[v].v = (uint32_t)v;
  }
  qsort(keys, Vs, sizeof(seam_key), cmp_seam_key);
  for (size_t i = 0; i < Vs; ++i) {
    first[keys[i].v] = (uint32_t)i;
    grp[i] = i > 0 && same_position(keys[i - 1].p, keys[i].p) ? grp[i - 1] : (uint32_t)i;
  }
  /* each target vertex's nearest source vertex (not the closest point on
   * the triangles: two fans 1e-5 D apart, each following other joints,
   * interleave, and a rounding away the closest point lands on the other) */
  q = malloc((Vt ? Vt : 1) * 3 * sizeof(double));
  ix = q ? sks_surface_index_build(SKS_CORRESPOND_NEAREST_VERTEX, spos, Vs, NULL, 0) : NULL;
  if (!q || !ix) { ok = 0; goto done; }
  for (size_t j = 0; j < Vt; ++j) sks_daff_point(&Ainv, &tpos[3 * j], &q[3 * j]);
  if (!sks_surface_index_query(ix, q, Vt, &nv, pool)) { ok = nv.over_budget; goto done; }
  for (size_t j = 0; j < Vt; ++j) {
    uint32_t v = nv.idx[3 * j];
    if (v >= Vs || !(sks_d3_dist2(&q[3 * j], &spos[3 * v]) <= stol * stol)) continue;
    size_t g = grp[first[v]], h = g;
    while (h + 1 < Vs && grp[h + 1] == g && h - g < COINCIDENT_COPIES) ++h;
    if (g == h || h - g >= COINCIDENT_COPIES) { /* one vertex there (or too many copies to tell): the nearest */
      if (!(corr->bary[3 * j] == 1 && corr->idx[3 * j] == v)) {
        corr->idx[3 * j] = corr->idx[3 * j + 1] = corr->idx[3 * j + 2] = v;
        corr->bary[3 * j] = 1; corr->bary[3 * j + 1] = 0; corr->bary[3 * j + 2] = 0;
        ++*moved;
      }
      continue;
    }
    /* each of its triangles votes for the copy whose triangle it is: of the
     * copies' triangles that face its way, the one whose centroid lies
     * nearest its own (within stol; two layers of one fan, each following
     * one side's joints, can lie 1e-5 D apart) */
    uint32_t pick = UINT32_MAX, best_votes = 0;
    for (uint32_t a = ts[j]; a < ts[j + 1] && a - ts[j] < COINCIDENT_TRIS; ++a) {
      double tc[3], tn[3], c[3], n[3];
      tri_frame(tpos, &ttris[3 * tl[a]], tc, tn);
      sks_daff_point(&Ainv, tc, c);
      sks_dm3_apply(Ainv.l, tn, n);
      double ln = sqrt(sks_d3_dot(n, n)), bd = stol * stol, bdot = -2;
      if (!(ln > 0)) continue;
      uint32_t who = UINT32_MAX;
      for (size_t i2 = g; i2 <= h; ++i2) {
        uint32_t s2 = keys[i2].v;
        for (uint32_t b = ss[s2]; b < ss[s2 + 1] && b - ss[s2] < COINCIDENT_TRIS; ++b) {
          double sc[3], sn[3];
          tri_frame(spos, &stris[3 * sl[b]], sc, sn);
          double ls = sqrt(sks_d3_dot(sn, sn));
          if (!(ls > 0)) continue;
          double dot = sks_d3_dot(sn, n) / (ls * ln), d2 = sks_d3_dist2(sc, c);
          if (!(dot > 0) || d2 > bd || (d2 == bd && dot <= bdot)) continue;
          bd = d2;
          bdot = dot;
          who = s2;
        }
      }
      if (who != UINT32_MAX) votes[who]++;
    }
    for (size_t i = g; i <= h; ++i) {
      uint32_t s = keys[i].v;
      if (votes[s] > best_votes) { best_votes = votes[s]; pick = s; }
      votes[s] = 0;
    }
    if (pick == UINT32_MAX) pick = v; /* no triangle tells: the nearest */
    if (corr->bary[3 * j] == 1 && corr->idx[3 * j] == pick) continue;
    corr->idx[3 * j] = corr->idx[3 * j + 1] = corr->idx[3 * j + 2] = pick;
    corr->bary[3 * j] = 1; corr->bary[3 * j + 1] = 0; corr->bary[3 * j + 2] = 0;
    ++*moved;
  }
done:
  sks_correspondence_free(&nv);
  sks_surface_index_free(ix);
  free(keys); free(first); free(grp); free(ss); free(sl); free(ts); free(tl); free(votes); free(q);
  return ok;
}

/* ---- labels: what the joints' names say of a correspondence ----------- */

void sks_view_joints(const sks_skinview *v, size_t J, double *jp, uint8_t *mask, int32_t *pal) {
  memset(mask, 0, J ? J : 1);
  for (size_t j = 0; j < J; ++j) pal[j] = -1;
  for (size_t e = 0; e < v->P; ++e) {
    const int32_t j = v->pal_joint[e];
    sks_daffine inv;
    if (j < 0 || (size_t)j >= J || mask[j] || !sks_daff_inverse(&v->pal_ibm[e], &inv)) continue;
    memcpy(&jp[3 * (size_t)j], inv.t, 3 * sizeof(double));
    mask[j] = 1;
    pal[j] = (int32_t)e;
  }
}

/* Per joint of a parent-first skeleton (O(J)): 1 + k when it lies in the
 * subtree of roots[k] (the first of the n that holds it), else 0. */
static void subtree_marks(const int32_t *par, size_t J, const int32_t *roots, int n, uint8_t *m) {
  for (size_t j = 0; j < J; ++j) {
    m[j] = par[j] >= 0 ? m[par[j]] : 0;
    for (int k = 0; k < n; ++k)
      if ((int32_t)j == roots[k]) m[j] = (uint8_t)(1 + k);
  }
}

#define TOPO_PAIR_SLACK 0.15 /* two limbs' distances from their joint may differ this much (fraction) */
#define TOPO_MAX_BRANCHES 16 /* a joint with more branches is no hips or chest (its pairs not tried) */
/* Labels from the skeleton's shape when no joint's name says anything
 * (CesiumMan's node_N; README "Unnamed rigs"): the two largest disjoint
 * pairs of sibling branches (the same number of weighted joints, their
 * weighted joints' centroids as far from their common joint within
 * TOPO_PAIR_SLACK) are the legs and the arms; the pair whose joint has
 * another branch, not the way to the other pair, carries the head there
 * (the one further from the root when both do): those joints are HEAD.
 * No sides: a side told from the geometry turns over when a file's data
 * is mirrored (another handedness), and the agreement printed with it
 * would then move; the head, its direction and the feet do not. 0 when the
 * shape tells nothing (fewer than two such pairs, no head branch, an
 * order not parent-first, out of memory): jl is then left as it was. jl:
 * per joint. O(J) passes. */
static int topo_labels(const sks_skinview *v, const sks_skeleton *s, uint8_t *jl) {
  const size_t J = s->joint_count;
  const int32_t *par = s->parents;
  for (size_t j = 0; j < J; ++j)
    if (par[j] >= (int32_t)j || par[j] < -1) return 0;
  int ok = 0;
  double *jp = malloc((J ? J : 1) * 3 * sizeof(double)), *cs = calloc((J ? J : 1) * 3, sizeof(double));
  uint8_t *mask = malloc(J ? J : 1), *lab = calloc(J ? J : 1, 1), *m = malloc(J ? J : 1), *anc = calloc(J ? J : 1, 1);
  int32_t *pal = malloc((J ? J : 1) * sizeof(int32_t));
  uint32_t *sub = calloc(J ? J : 1, sizeof(uint32_t)), *nbr = calloc(J ? J : 1, sizeof(uint32_t));
  int32_t *nxt = malloc((J ? J : 1) * sizeof(int32_t)), *first = malloc((J ? J : 1) * sizeof(int32_t));
  if (!jp || !cs || !mask || !lab || !m || !anc || !pal || !sub || !nbr || !nxt || !first) goto done;
  for (size_t j = 0; j < J; ++j) first[j] = -1;
  for (size_t j = J; j-- > 0;) { /* nxt: the next sibling (a higher index, the same parent), -1 none */
    nxt[j] = par[j] >= 0 ? first[par[j]] : -1;
    if (par[j] >= 0) first[par[j]] = (int32_t)j;
  }
  sks_view_joints(v, J, jp, mask, pal);
  for (size_t j = J; j-- > 0;) { /* weighted joints per subtree, and their sum */
    if (mask[j]) { sub[j]++; for (int e = 0; e < 3; ++e) cs[3 * j + e] += jp[3 * j + e]; }
    if (par[j] >= 0) { sub[par[j]] += sub[j]; for (int e = 0; e < 3; ++e) cs[3 * (size_t)par[j] + e] += cs[3 * j + e]; }
  }
  for (size_t j = 0; j < J; ++j)
    if (par[j] >= 0 && sub[j] >= 2) nbr[par[j]]++;
  /* the pairs (b1 < b2 siblings), the largest first, then the largest
   * disjoint from it (neither inside the other's limbs) */
  int32_t pr[2][2] = {{-1, -1}, {-1, -1}};
  memset(m, 0, J ? J : 1);
  for (int round = 0; round < 2; ++round) {
    uint32_t best = 1;
    for (size_t b1 = 0; b1 < J; ++b1) {
      const int32_t p = par[b1];
      if (p < 0 || sub[b1] <= best || nbr[p] > TOPO_MAX_BRANCHES || m[b1]) continue;
      if (round == 1 && (m[p] || anc[b1])) continue;
      for (int32_t b2 = nxt[b1]; b2 >= 0; b2 = nxt[b2]) { /* its siblings: under TOPO_MAX_BRANCHES with sub >= 2 */
        if (sub[b2] != sub[b1] || (round == 1 && anc[b2])) continue;
        if (mask[p]) {
          double d1 = 0, d2 = 0;
          for (int e = 0; e < 3; ++e) {
            const double a = cs[3 * b1 + e] / sub[b1] - jp[3 * (size_t)p + e];
            const double b = cs[3 * b2 + e] / sub[b2] - jp[3 * (size_t)p + e];
            d1 += a * a;
            d2 += b * b;
          }
          d1 = sqrt(d1);
          d2 = sqrt(d2);
          if (fabs(d1 - d2) > TOPO_PAIR_SLACK * fmax(d1, d2)) continue;
        }
        best = sub[b1];
        pr[round][0] = (int32_t)b1;
        pr[round][1] = (int32_t)b2;
        break;
      }
    }
    if (pr[round][0] < 0) goto done;
    if (round == 0) { /* the first pair's limbs, and the joints above their joint */
      subtree_marks(par, J, pr[0], 2, m);
      for (int32_t x = par[pr[0][0]]; x >= 0; x = par[x]) anc[x] = 1;
    }
  }
  /* the chest: a pair's joint with a branch that is neither of its limbs
   * nor the way to the other pair's joint */
  const int32_t pj[2] = {par[pr[0][0]], par[pr[1][0]]};
  int has[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    memset(anc, 0, J);
    for (int32_t x = pj[1 - k]; x >= 0; x = par[x]) anc[x] = 1;
    for (size_t c = 0; c < J; ++c)
      if (par[c] == pj[k] && (int32_t)c != pr[k][0] && (int32_t)c != pr[k][1] && sub[c] && !anc[c]) has[k] = 1;
  }
  int chest = has[0] && !has[1] ? 0 : has[1] && !has[0] ? 1 : -1;
  if (has[0] && has[1] && pj[0] != pj[1]) { /* both: the one below the other */
    memset(anc, 0, J);
    for (int32_t x = pj[0]; x >= 0; x = par[x]) anc[x] = 1;
    chest = anc[pj[1]] ? 0 : 1; /* pj[1] above pj[0]: the chest is pj[0] */
    if (!anc[pj[1]]) {
      memset(anc, 0, J);
      for (int32_t x = pj[1]; x >= 0; x = par[x]) anc[x] = 1;
      if (!anc[pj[0]]) chest = -1;
    }
  }
  if (chest < 0) goto done;
  /* the head: every joint of the chest's other branches */
  const int32_t pc = pj[chest];
  memset(anc, 0, J);
  for (int32_t x = pj[1 - chest]; x >= 0; x = par[x]) anc[x] = 1;
  memset(m, 0, J);
  for (size_t j = (size_t)pc + 1; j < J; ++j) {
    if (par[j] == pc) m[j] = (int32_t)j != pr[chest][0] && (int32_t)j != pr[chest][1] && !anc[j];
    else if (par[j] > pc) m[j] = m[par[j]];
    if (m[j]) lab[j] = SKS_LABEL_HEAD;
  }
  ok = 1;
  memcpy(jl, lab, J);
done:
  free(jp); free(cs); free(mask); free(lab); free(m); free(anc); free(pal); free(sub); free(nbr); free(nxt);
  free(first);
  return ok;
}

uint8_t *sks_view_labels(const sks_skinview *v, const sks_skeleton *s) {
  const size_t n = s->joint_count;
  uint8_t *jl = malloc(n ? n : 1), *out = malloc(v->V ? v->V : 1);
  int32_t *dom = malloc((v->V ? v->V : 1) * sizeof *dom);
  sks_error e;
  if (!jl || !out || !dom || sks_skeleton_labels(s, jl, &e) != SKS_OK) { free(jl); free(out); free(dom); return NULL; }
  int named = 0;
  for (size_t j = 0; j < n && !named; ++j) named = jl[j] != SKS_LABEL_NONE;
  if (!named) topo_labels(v, s, jl); /* no name says anything: the skeleton's shape */
  sks_view_dominant_joints(v, v->V, dom);
  for (size_t k = 0; k < v->V; ++k) out[k] = dom[k] >= 0 && (size_t)dom[k] < n ? jl[dom[k]] : SKS_LABEL_NONE;
  free(jl); free(dom);
  return out;
}

#define LABEL_MIN_SHARE 0.05 /* of the target's weight labelled on both sides, or the names tell nothing */
#define LABEL_HEAD_SHARE 0.005
int sks_label_up_dir(const double *p, size_t n, const uint8_t *lab, const double *w, double *up) {
  double h[3] = {0, 0, 0}, all[3] = {0, 0, 0}, uu = 0, wh = 0, wa = 0;
  for (size_t i = 0; i < n; ++i) {
    const double wi = w[i];
    const int head = lab[i] == SKS_LABEL_HEAD;
    wa += wi;
    if (head) wh += wi;
    for (int a = 0; a < 3; ++a) { all[a] += wi * p[3 * i + a]; if (head) h[a] += wi * p[3 * i + a]; }
  }
  if (!(wa > 0) || !(wh > 0) || wh < LABEL_HEAD_SHARE * wa) return 0;
  for (int a = 0; a < 3; ++a) { up[a] = h[a] / wh - all[a] / wa; uu += up[a] * up[a]; }
  if (!(uu > 0) || !isfinite(uu)) return 0;
  for (int a = 0; a < 3; ++a) up[a] /= sqrt(uu);
  return 1;
}

/* The deepest common ancestor of joints a and b of a parent-first skeleton
 * (a parent's index under its child's): the larger index steps up until
 * the two meet, so at most a + b steps; -1 when they share no ancestor or
 * the order is not parent-first. */
static int32_t common_ancestor(const int32_t *parents, int32_t a, int32_t b) {
  while (a != b) {
    if (a < 0 || b < 0) return -1;
    int32_t *x = a > b ? &a : &b;
    const int32_t p = parents[*x];
    if (p >= *x) return -1;
    *x = p;
  }
  return a;
}

#define FEET_BAND 0.15 /* of the body's height: the joints of the feet */
#define FEET_MIN 0.03  /* of the height: shorter feet tell no facing */
#define FEET_HIPS_BONES 64 /* the bones whose common ancestor gives the hips (feet have a few) */
int sks_feet_forward(const double *jpos, const uint8_t *jmask, const int32_t *parents, size_t J, const double *pos,
                     size_t n, const double *up, double *fwd, int32_t *hips) {
  double lo = DBL_MAX, hi = -DBL_MAX;
  int32_t top = -1; /* the bones' deepest common ancestor so far */
  size_t bones = 0;
  fwd[0] = fwd[1] = fwd[2] = 0;
  if (hips) *hips = -1;
  for (size_t i = 0; i < n; ++i) {
    const double h = pos[3 * i] * up[0] + pos[3 * i + 1] * up[1] + pos[3 * i + 2] * up[2];
    if (h < lo) lo = h;
    if (h > hi) hi = h;
  }
  if (!(hi > lo) || !isfinite(hi - lo)) return 0;
  const double band = lo + FEET_BAND * (hi - lo);
  size_t budget = 8 * J + 64; /* the walks to masked ancestors, all told (each at most J, a cycle's;
                                 a long unmasked chain above many feet would make them J^2):
                                 spent, the feet tell nothing */
  for (size_t j = 0; j < J; ++j) {
    if (!jmask[j]) continue;
    const double *b = &jpos[3 * j];
    if (b[0] * up[0] + b[1] * up[1] + b[2] * up[2] >= band) continue;
    int32_t p = parents[j];
    for (size_t hops = 0; p >= 0 && (size_t)p < J && !jmask[p] && hops < J; ++hops, p = parents[p])
      if (budget-- == 0) return 0;
    if (p < 0 || (size_t)p >= J || !jmask[p]) continue;
    const double *a = &jpos[3 * (size_t)p];
    if (a[0] * up[0] + a[1] * up[1] + a[2] * up[2] >= band) continue;
    double d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const double h = d[0] * up[0] + d[1] * up[1] + d[2] * up[2];
    for (int e = 0; e < 3; ++e) fwd[e] += d[e] - h * up[e];
    if (bones++ < FEET_HIPS_BONES) top = bones == 1 ? p : common_ancestor(parents, top, p);
  }
  const double len = sqrt(fwd[0] * fwd[0] + fwd[1] * fwd[1] + fwd[2] * fwd[2]);
  if (!(len >= FEET_MIN * (hi - lo)) || !isfinite(len)) return 0;
  for (int e = 0; e < 3; ++e) fwd[e] /= len;
  /* the joint that carries both feet (the hips): the nearest in jmask at or
   * above the bones' common ancestor */
  for (size_t hops = 0; hips && top >= 0 && (size_t)top < J && hops <= J; ++hops) {
    if (jmask[top]) { *hips = top; break; }
    top = parents[top];
  }
  return 1;
}

#define KNEE_LO 0.15   /* of the height: a knee lies above this ... */
#define KNEE_HI 0.6    /* ... and under this */
#define KNEE_ANKLE 0.15 /* its ankle (a weighted joint below it) under this */
#define KNEE_SPAN 0.05 /* the thigh's joint this far above the knee, the ankle this far under it */
#define KNEE_MIN 0.005 /* of the height: a knee bent less tells nothing */
#define KNEE_VERTICAL 0.8 /* the thigh-to-ankle line's cosine with up, at least (a leg, not an arm) */
int sks_knees_forward(const double *jpos, const uint8_t *jmask, const int32_t *parents, size_t J, const double *pos,
                      size_t n, const double *up, double *fwd, int32_t *hips) {
  double lo = DBL_MAX, hi = -DBL_MAX;
  fwd[0] = fwd[1] = fwd[2] = 0;
  if (hips) *hips = -1;
  for (size_t j = 0; j < J; ++j) /* parent-first, or nothing is walked */
    if (parents[j] >= (int32_t)j || parents[j] < -1) return 0;
  for (size_t i = 0; i < n; ++i) {
    const double h = pos[3 * i] * up[0] + pos[3 * i + 1] * up[1] + pos[3 * i + 2] * up[2];
    if (h < lo) lo = h;
    if (h > hi) hi = h;
  }
  const double H = hi - lo;
  if (!(H > 0) || !isfinite(H)) return 0;
  int32_t *anc = malloc((J ? J : 1) * sizeof(int32_t)), *ankle = malloc((J ? J : 1) * sizeof(int32_t));
  if (!anc || !ankle) { free(anc); free(ankle); return 0; }
  /* anc: each joint's nearest weighted ancestor (parent-first: one pass) */
  for (size_t j = 0; j < J; ++j) {
    const int32_t p = parents[j];
    anc[j] = p < 0 ? -1 : (jmask[p] ? p : anc[p]);
    ankle[j] = -1;
  }
  /* ankle[k]: the one weighted joint under KNEE_ANKLE whose nearest
   * weighted ancestor is k (-2 when more than one: no leg) */
#define KNEE_H(q) ((q)[0] * up[0] + (q)[1] * up[1] + (q)[2] * up[2] - lo)
  for (size_t j = 0; j < J; ++j) {
    const int32_t k = anc[j];
    if (!jmask[j] || k < 0 || KNEE_H(&jpos[3 * j]) >= KNEE_ANKLE * H) continue;
    ankle[k] = ankle[k] == -1 ? (int32_t)j : -2;
  }
  double sum[3] = {0, 0, 0}, one[2][3];
  size_t knees = 0;
  int32_t top = -1;
  int agree = 1;
  for (size_t k = 0; k < J; ++k) {
    if (!jmask[k] || ankle[k] < 0 || anc[k] < 0) continue;
    const double *K = &jpos[3 * k], *A = &jpos[3 * (size_t)anc[k]], *C = &jpos[3 * (size_t)ankle[k]];
    const double hk = KNEE_H(K);
    if (hk <= KNEE_LO * H || hk >= KNEE_HI * H || KNEE_H(A) < hk + KNEE_SPAN * H || KNEE_H(C) > hk - KNEE_SPAN * H) continue;
    double d[3], o[3], dd = 0, od = 0, du = 0;
    for (int e = 0; e < 3; ++e) { d[e] = C[e] - A[e]; dd += d[e] * d[e]; du += d[e] * up[e]; }
    if (!(dd > 0) || fabs(du) < KNEE_VERTICAL * sqrt(dd)) continue;
    for (int e = 0; e < 3; ++e) od += (K[e] - A[e]) * d[e];
    double oh = 0;
    for (int e = 0; e < 3; ++e) { o[e] = K[e] - A[e] - od / dd * d[e]; oh += o[e] * up[e]; }
    double on = 0;
    for (int e = 0; e < 3; ++e) { o[e] -= oh * up[e]; on += o[e] * o[e]; }
    if (!(sqrt(on) >= KNEE_MIN * H)) { agree = 0; continue; } /* a straight leg: the knees tell nothing */
    for (int e = 0; e < 3; ++e) sum[e] += o[e];
    /* every knee bent the same way (a body's two legs; four legs that do
     * not agree tell nothing) */
    if (knees < 2) memcpy(one[knees], o, sizeof o);
    if (knees >= 1) {
      double c = 0;
      for (int e = 0; e < 3; ++e) c += o[e] * one[0][e];
      if (!(c > 0)) agree = 0;
    }
    top = knees++ == 0 ? anc[k] : common_ancestor(parents, top, anc[k]);
  }
#undef KNEE_H
  free(anc); free(ankle);
  const double len = sqrt(sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]);
  if (knees != 2 || !agree || !(len >= 2 * KNEE_MIN * H) || !isfinite(len)) return 0;
  for (int e = 0; e < 3; ++e) fwd[e] = sum[e] / len;
  for (size_t hops = 0; hips && top >= 0 && (size_t)top < J && hops <= J; ++hops) {
    if (jmask[top]) { *hips = top; break; }
    top = parents[top];
  }
  return 1;
}

double sks_label_up_cos(const double *src, size_t ns, const uint8_t *slab, const double *scw, const double *dst,
                        size_t nd, const uint8_t *tlab, const double *tcw) {
  double us[3], ut[3];
  if (!slab || !tlab || !scw || !tcw || !sks_label_up_dir(src, ns, slab, scw, us) || !sks_label_up_dir(dst, nd, tlab, tcw, ut))
    return NAN;
  return us[0] * ut[0] + us[1] * ut[1] + us[2] * ut[2];
}

sks_label_agreement sks_correspondence_labels(const sks_correspondence *corr, const uint8_t *slab, size_t Vs,
                                              const uint8_t *tlab, const double *cw, size_t V) {
  sks_label_agreement ls = {NAN, NAN};
  if (!slab || !tlab || !cw || corr->count != V) return ls;
  double agree = 0, both = 0, all = 0, hagree = 0, hboth = 0;
  for (size_t j = 0; j < V; ++j) {
    all += cw[j];
    const uint32_t *ix = &corr->idx[3 * j];
    const float *b = &corr->bary[3 * j];
    uint32_t sj = b[1] > b[0] ? (b[2] > b[1] ? ix[2] : ix[1]) : (b[2] > b[0] ? ix[2] : ix[0]);
    if (sj >= Vs) continue;
    const uint8_t tl = tlab[j], sl = slab[sj];
    if (tl == SKS_LABEL_NONE || sl == SKS_LABEL_NONE) continue;
    both += cw[j];
    if (tl == sl) agree += cw[j];
    if (tl == SKS_LABEL_HEAD || sl == SKS_LABEL_HEAD) {
      hboth += cw[j];
      if (tl == sl) hagree += cw[j];
    }
  }
  /* the share over head and sides only when both rigs name sides: a rig
   * labelled by its shape (topo_labels) has a head and no sides, and its
   * head alone is the head agreement */
  int sided_s = 0, sided_t = 0;
  for (size_t k = 0; k < Vs && !sided_s; ++k) sided_s = slab[k] == SKS_LABEL_LEFT || slab[k] == SKS_LABEL_RIGHT;
  for (size_t k = 0; k < V && !sided_t; ++k) sided_t = tlab[k] == SKS_LABEL_LEFT || tlab[k] == SKS_LABEL_RIGHT;
  if (sided_s && sided_t && both > 0 && both >= LABEL_MIN_SHARE * all) ls.all = agree / both;
  if (hboth > 0 && hboth >= LABEL_MIN_SHARE * all) ls.head = hagree / hboth;
  return ls;
}
