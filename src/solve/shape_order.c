/* An order of a point set that depends on its positions only, never on the
 * order a file lists them in. The subsamples of the alignment and of the
 * articulated registration are prefixes of it, so a re-export that
 * re-orders or re-welds the vertices (Blender's FBX exporter does both)
 * samples the same surface the same way.
 *
 * Each point's key: h = frac(SHAPE_HASH * r^2 / mean r^2), r its distance
 * to the surface's centroid, both moments over the surface's area
 * (surface_moments). The first m points in order of h are those of the
 * SHAPE_HASH thin shells' inner parts: every distance from the centre, in
 * proportion to the vertices there. Rotating, scaling or offsetting the
 * data (re-stored as floats) moves r^2 / mean r^2 by ~1e-6, h by ~1e-4:
 * the points within that of the cut, about one, change. (A hash that
 * scattered picks more finely, SHAPE_HASH in the thousands, turned a
 * float re-export's rounding into a different sample; ranking by the
 * distance and striding through the ranks swapped hundreds of picks
 * between the two sides of a mirror-symmetric body, whose distances tie
 * pairwise; a farthest-point sample was chaotic: one near tie changed every
 * later pick.) Exact ties (the two sides of an exactly symmetric mesh) go
 * by the index, which no transform of the data changes. */
#define SHAPE_HASH 64.0
#define SHAPE_FADE 0.1 /* sks_shape_fade: the fade's half width, a fraction of the cut */

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "solve/solve_internal.h"

typedef struct ranked {
  double key, p[3], area;
  uint32_t i;
} ranked;

/* a total order (NaN last), so the sorts stay well defined on any data */
static int dcmp(double a, double b) {
  int na = a != a, nb = b != b;
  if (na || nb) return na - nb;
  return (a > b) - (a < b);
}

static double tri_area(const double *a, const double *b, const double *d) {
  double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {d[0] - a[0], d[1] - a[1], d[2] - a[2]}, x[3];
  sks_d3_cross(u, v, x);
  return 0.5 * sqrt(sks_d3_dot(x, x));
}

static int cmp_pos(const ranked *a, const ranked *b) {
  for (int k = 0; k < 3; ++k) {
    int c = dcmp(a->p[k], b->p[k]);
    if (c) return c;
  }
  return (a->i > b->i) - (a->i < b->i);
}

/* The surface's centroid and mean squared distance from it, by area: sums
 * over the triangles, so copies of a position (a seam split per face
 * corner), vertices that nearly coincide, and the order of the vertices all
 * leave them as they are, and rounding moves them by rounding (a mean over
 * the distinct positions jumped when a re-export's rounding merged two
 * vertices one unit in the last place apart). Without triangles (or with
 * no area): over the points. Returns the mean squared distance. */
static double surface_moments(const double *pos, size_t n, const uint32_t *tris, size_t tri_count, double *c) {
  double A = 0, s[3] = {0, 0, 0};
  for (size_t t = 0; t < tri_count; ++t) {
    const uint32_t *f = &tris[3 * t];
    if (f[0] >= n || f[1] >= n || f[2] >= n) continue;
    const double *a = &pos[3 * f[0]], *b = &pos[3 * f[1]], *d = &pos[3 * f[2]];
    double w = tri_area(a, b, d);
    if (!(w > 0) || !isfinite(w)) continue;
    A += w;
    for (int k = 0; k < 3; ++k) s[k] += w * (a[k] + b[k] + d[k]) / 3;
  }
  if (A > 0) {
    for (int k = 0; k < 3; ++k) c[k] = s[k] / A;
    double m = 0;
    for (size_t t = 0; t < tri_count; ++t) {
      const uint32_t *f = &tris[3 * t];
      if (f[0] >= n || f[1] >= n || f[2] >= n) continue;
      double p[3][3];
      for (int e = 0; e < 3; ++e)
        for (int k = 0; k < 3; ++k) p[e][k] = pos[3 * f[e] + k] - c[k];
      double w = tri_area(p[0], p[1], p[2]);
      if (!(w > 0) || !isfinite(w)) continue;
      /* the mean of |x|^2 over a triangle: (sum |p_e|^2 + sum p_e . p_f) / 6 */
      double q = 0;
      for (int k = 0; k < 3; ++k)
        q += p[0][k] * p[0][k] + p[1][k] * p[1][k] + p[2][k] * p[2][k] + p[0][k] * p[1][k] + p[1][k] * p[2][k] +
             p[2][k] * p[0][k];
      m += w * q / 6;
    }
    return m / A;
  }
  c[0] = c[1] = c[2] = 0;
  for (size_t v = 0; v < n; ++v)
    for (int k = 0; k < 3; ++k) c[k] += pos[3 * v + k];
  for (int k = 0; k < 3; ++k) c[k] /= (double)(n ? n : 1);
  double m = 0;
  for (size_t v = 0; v < n; ++v) m += sks_d3_dist2(&pos[3 * v], c);
  return m / (double)(n ? n : 1);
}

static int cmp_position(const void *x, const void *y) { return cmp_pos(x, y); }

static int cmp_ranked(const void *x, const void *y) {
  const ranked *a = x, *b = y;
  int c = dcmp(a->key, b->key);
  return c ? c : (a->i > b->i) - (a->i < b->i);
}

uint32_t *sks_shape_order_keys(const double *pos, size_t n, const uint32_t *tris, size_t tri_count, int distinct,
                               size_t *count, double *keys, double *area) {
  *count = 0;
  ranked *r = malloc((n ? n : 1) * sizeof(ranked));
  uint32_t *out = malloc((n ? n : 1) * sizeof(uint32_t));
  if (!r || !out) { free(r); free(out); return NULL; }
  double c[3], ms = surface_moments(pos, n, tris, tri_count, c);
  for (size_t v = 0; v < n; ++v) {
    memcpy(r[v].p, &pos[3 * v], sizeof r[v].p);
    r[v].i = (uint32_t)v;
    r[v].area = 0;
  }
  if (area) /* a third of each triangle's area to each of its corners (before the sort: r[v] is vertex v) */
    for (size_t t = 0; t < tri_count; ++t) {
      const uint32_t *f = &tris[3 * t];
      if (f[0] >= n || f[1] >= n || f[2] >= n) continue;
      double w = tri_area(&pos[3 * f[0]], &pos[3 * f[1]], &pos[3 * f[2]]);
      if (!(w > 0) || !isfinite(w)) continue;
      for (int e = 0; e < 3; ++e) r[f[e]].area += w / 3;
    }
  size_t m = n;
  if (distinct) { /* copies of a position: the lowest index stays, with the copies' area */
    qsort(r, n, sizeof(ranked), cmp_position);
    m = 0;
    for (size_t v = 0; v < n; ++v)
      if (!v || memcmp(r[v].p, r[v - 1].p, sizeof r[v].p)) r[m++] = r[v];
      else r[m - 1].area += r[v].area;
  }
  for (size_t v = 0; v < m; ++v) {
    double x = ms > 0 ? SHAPE_HASH * sks_d3_dist2(r[v].p, c) / ms : 0;
    r[v].key = x - floor(x);
  }
  qsort(r, m, sizeof(ranked), cmp_ranked);
  for (size_t v = 0; v < m; ++v) {
    out[v] = r[v].i;
    if (keys) keys[v] = r[v].key;
    if (area) area[v] = r[v].area;
  }
  free(r);
  *count = m;
  return out;
}

double *sks_copy_weights(const double *pos, size_t n) {
  ranked *r = malloc((n ? n : 1) * sizeof(ranked));
  double *w = malloc((n ? n : 1) * sizeof(double));
  if (!r || !w) { free(r); free(w); return NULL; }
  for (size_t v = 0; v < n; ++v) {
    memcpy(r[v].p, &pos[3 * v], sizeof r[v].p);
    r[v].i = (uint32_t)v;
  }
  qsort(r, n, sizeof(ranked), cmp_position);
  for (size_t a = 0, b; a < n; a = b) { /* the copies of a position: as sks_shape_order_keys tells them */
    for (b = a + 1; b < n && !memcmp(r[b].p, r[a].p, sizeof r[a].p); ++b) {}
    for (size_t k = a; k < b; ++k) w[r[k].i] = 1.0 / (double)(b - a);
  }
  free(r);
  return w;
}

uint32_t *sks_shape_order(const double *pos, size_t n, const uint32_t *tris, size_t tri_count, int distinct,
                          size_t *count) {
  return sks_shape_order_keys(pos, n, tris, tri_count, distinct, count, NULL, NULL);
}

size_t sks_shape_fade(const double *keys, size_t u, size_t want, double *w, size_t *whole_from) {
  *whole_from = 0;
  if (u <= want) {
    for (size_t i = 0; i < u; ++i) w[i] = 1;
    return u;
  }
  double cut = (double)want / (double)u, fade = SHAPE_FADE * cut;
  size_t m = 0;
  while (m < u && m < 2 * want && keys[m] < cut + fade) ++m;
  for (size_t i = 0; i < m; ++i) {
    double f = (cut + fade - keys[i]) / (2 * fade), g = keys[i] / (2 * fade);
    if (g < 1) *whole_from = i + 1;
    w[i] = (f < 0 ? 0 : (f > 1 ? 1 : f)) * (g < 0 ? 0 : (g > 1 ? 1 : g));
  }
  if (*whole_from > m) *whole_from = m;
  return m;
}
