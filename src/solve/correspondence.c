/* Correspondence between the target's and the source's rest surfaces:
 * nearest source vertex, or closest point on the source triangles (with the
 * barycentric weights used to blend the three recorded positions). A uniform
 * grid indexes the source; queries search growing shells of cells and stop
 * once no unsearched cell can hold anything closer. */
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

typedef struct grid {
  double lo[3], cs[3];
  int dim[3];
  uint32_t *start; /* cells + 1 */
  uint32_t *items;
} grid;

static void grid_free(grid *g) { free(g->start); free(g->items); }

static int cell_of(const grid *g, double x, int a) {
  int c = (int)floor((x - g->lo[a]) / g->cs[a]);
  return c < 0 ? 0 : (c >= g->dim[a] ? g->dim[a] - 1 : c);
}

/* Items = points (tris NULL) or triangles binned by their bounding boxes. */
static int grid_build(grid *g, const double *pts, size_t npts, const uint32_t *tris, size_t ntri) {
  memset(g, 0, sizeof *g);
  double hi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
  g->lo[0] = g->lo[1] = g->lo[2] = DBL_MAX;
  for (size_t i = 0; i < npts; ++i)
    for (int a = 0; a < 3; ++a) {
      g->lo[a] = fmin(g->lo[a], pts[3 * i + a]);
      hi[a] = fmax(hi[a], pts[3 * i + a]);
    }
  size_t nitems = tris ? ntri : npts;
  double ext[3], maxext = 0;
  for (int a = 0; a < 3; ++a) { ext[a] = hi[a] - g->lo[a]; maxext = fmax(maxext, ext[a]); }
  if (!(maxext > 0)) maxext = 1;
  double vol = 1;
  for (int a = 0; a < 3; ++a) vol *= fmax(ext[a], maxext * 1e-3);
  double cell = cbrt(vol / fmax(1.0, (double)nitems / 2.0));
  size_t cells = 1;
  for (int a = 0; a < 3; ++a) {
    double e = fmax(ext[a], maxext * 1e-3);
    int d = (int)ceil(e / cell);
    d = d < 1 ? 1 : (d > 256 ? 256 : d);
    g->dim[a] = d;
    g->cs[a] = e / d * (1 + 1e-9);
    cells *= (size_t)d;
  }
  g->start = calloc(cells + 1, sizeof(uint32_t));
  if (!g->start) return 0;
  for (int pass = 0; pass < 2; ++pass) {
    uint32_t *fill = NULL;
    if (pass == 1) {
      for (size_t c = 0; c < cells; ++c) g->start[c + 1] += g->start[c];
      g->items = malloc((g->start[cells] ? g->start[cells] : 1) * sizeof(uint32_t));
      fill = malloc(cells * sizeof(uint32_t));
      if (!g->items || !fill) { free(fill); grid_free(g); return 0; }
      memcpy(fill, g->start, cells * sizeof(uint32_t));
    }
    for (size_t it = 0; it < nitems; ++it) {
      int c0[3], c1[3];
      for (int a = 0; a < 3; ++a) {
        double mn, mx;
        if (tris) {
          mn = mx = pts[3 * tris[3 * it] + a];
          for (int k = 1; k < 3; ++k) {
            mn = fmin(mn, pts[3 * tris[3 * it + k] + a]);
            mx = fmax(mx, pts[3 * tris[3 * it + k] + a]);
          }
        } else {
          mn = mx = pts[3 * it + a];
        }
        c0[a] = cell_of(g, mn, a);
        c1[a] = cell_of(g, mx, a);
      }
      for (int z = c0[2]; z <= c1[2]; ++z)
        for (int y = c0[1]; y <= c1[1]; ++y)
          for (int x = c0[0]; x <= c1[0]; ++x) {
            size_t c = ((size_t)z * g->dim[1] + y) * g->dim[0] + x;
            if (pass == 0) g->start[c + 1]++;
            else g->items[fill[c]++] = (uint32_t)it;
          }
    }
    free(fill);
  }
  return 1;
}

/* The target points of one piece: the closest source point of each. stamp:
 * this piece's own (tri_count, zeroed), so pieces run on threads at once. */
typedef struct corr_run {
  const grid *g;
  const double *src, *dst;
  const uint32_t *tris;
  int use_tris;
  size_t dst_count, pieces;
  uint32_t **stamps;      /* one per pool slot */
  sks_correspondence *out;
  double *dist;           /* dst_count: distance of each point */
} corr_run;

static void closest_points(void *user, size_t piece, unsigned thread) {
  const corr_run *cr = user;
  const grid *g = cr->g;
  const double *src = cr->src;
  const uint32_t *tris = cr->tris;
  uint32_t *stamp = cr->use_tris ? cr->stamps[thread] : NULL;
  size_t j0 = cr->dst_count * piece / cr->pieces, j1 = cr->dst_count * (piece + 1) / cr->pieces;
  for (size_t j = j0; j < j1; ++j) {
    const double *q = &cr->dst[3 * j];
    int c[3];
    for (int a = 0; a < 3; ++a) c[a] = cell_of(g, q[a], a);
    double best = DBL_MAX, bb[3] = {1, 0, 0};
    uint32_t bi[3] = {0, 0, 0};
    for (int r = 0;; ++r) {
      /* visit the shell of Chebyshev radius r */
      for (int z = c[2] - r; z <= c[2] + r; ++z) {
        if (z < 0 || z >= g->dim[2]) continue;
        for (int y = c[1] - r; y <= c[1] + r; ++y) {
          if (y < 0 || y >= g->dim[1]) continue;
          for (int x = c[0] - r; x <= c[0] + r; ++x) {
            if (x < 0 || x >= g->dim[0]) continue;
            if (abs(x - c[0]) != r && abs(y - c[1]) != r && abs(z - c[2]) != r) continue;
            size_t cell = ((size_t)z * g->dim[1] + y) * g->dim[0] + x;
            for (uint32_t k = g->start[cell]; k < g->start[cell + 1]; ++k) {
              uint32_t it = g->items[k];
              if (cr->use_tris) {
                if (stamp[it] == j + 1) continue;
                stamp[it] = (uint32_t)(j + 1);
                const uint32_t *t = &tris[3 * it];
                double bc[3];
                double d2 = sks_closest_point_triangle(q, &src[3 * t[0]], &src[3 * t[1]],
                                                       &src[3 * t[2]], bc);
                if (d2 < best) {
                  best = d2;
                  bi[0] = t[0]; bi[1] = t[1]; bi[2] = t[2];
                  bb[0] = bc[0]; bb[1] = bc[1]; bb[2] = bc[2];
                }
              } else {
                double d2 = sks_d3_dist2(q, &src[3 * it]);
                if (d2 < best) { best = d2; bi[0] = bi[1] = bi[2] = it; }
              }
            }
          }
        }
      }
      /* lower bound on the distance to anything outside the searched block */
      double bound = DBL_MAX;
      for (int a = 0; a < 3; ++a) {
        if (c[a] - r > 0) bound = fmin(bound, q[a] - (g->lo[a] + (c[a] - r) * g->cs[a]));
        if (c[a] + r < g->dim[a] - 1) bound = fmin(bound, g->lo[a] + (c[a] + r + 1) * g->cs[a] - q[a]);
      }
      if (bound == DBL_MAX) break; /* everything searched */
      if (best < DBL_MAX && bound > 0 && bound * bound >= best) break;
    }
    memcpy(&cr->out->idx[3 * j], bi, sizeof bi);
    if (!cr->use_tris) { bb[0] = 1; bb[1] = 0; bb[2] = 0; }
    for (int k = 0; k < 3; ++k) cr->out->bary[3 * j + k] = (float)bb[k];
    cr->dist[j] = sqrt(best);
  }
}

int sks_correspondence_build(sks_correspondence *out, sks_correspondence_kind kind,
                             const double *src, size_t src_count, const uint32_t *tris,
                             size_t tri_count, const double *dst, size_t dst_count,
                             double scale, sks_thread_pool *pool) {
  (void)scale;
  memset(out, 0, sizeof *out);
  if (src_count == 0) return 0;
  int use_tris = kind == SKS_CORRESPOND_CLOSEST_POINT && tris && tri_count > 0;
  /* pieces of >= 256 points, at most one per pool thread */
  size_t slots = sks_thread_pool_size(pool), pieces = dst_count / 256;
  if (pieces > slots) pieces = slots;
  if (pieces < 1) pieces = 1;
  out->count = dst_count;
  out->idx = malloc((dst_count ? dst_count : 1) * 3 * sizeof(uint32_t));
  out->bary = malloc((dst_count ? dst_count : 1) * 3 * sizeof(float));
  double *dist = malloc((dst_count ? dst_count : 1) * sizeof(double));
  uint32_t *stamp_store[64] = {0}, **stamps = slots <= 64 ? stamp_store : calloc(slots, sizeof(uint32_t *));
  int ok = out->idx && out->bary && dist && stamps;
  for (size_t k = 0; ok && use_tris && k < slots; ++k) /* any slot may run a piece */
    ok = (stamps[k] = calloc(tri_count, sizeof(uint32_t))) != NULL;
  grid g;
  if (!ok || !grid_build(&g, src, src_count, use_tris ? tris : NULL, tri_count)) {
    for (size_t k = 0; stamps && k < slots; ++k) free(stamps[k]);
    if (stamps != stamp_store) free(stamps);
    free(dist);
    sks_correspondence_free(out);
    return 0;
  }
  corr_run cr = {&g, src, dst, tris, use_tris, dst_count, pieces, stamps, out, dist};
  sks_thread_pool_run(pool, closest_points, &cr, pieces);
  double sum = 0, maxd = 0; /* point order: the same sums for any thread count */
  for (size_t j = 0; j < dst_count; ++j) {
    sum += dist[j];
    if (dist[j] > maxd) maxd = dist[j];
  }
  for (size_t k = 0; k < slots; ++k) free(stamps[k]);
  if (stamps != stamp_store) free(stamps);
  free(dist);
  grid_free(&g);
  out->max_distance = maxd;
  out->mean_distance = dst_count ? sum / (double)dst_count : 0;
  return 1;
}
