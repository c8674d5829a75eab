/* sks_shape_order (src/solve/shape_order.c), the order every sample of the
 * alignment and the registration is a prefix of: on a procedural body
 * (a bumpy, nearly mirror-symmetric closed surface with a seam of copied
 * vertices), its first m distinct points must be
 *  - the same points whatever order the vertices are listed in, and with
 *    copies of positions added (a re-welded export);
 *  - the same but for a few points when the data is turned, scaled and
 *    offset and stored again as floats (the rounding of a re-export);
 *  - the same bits under an exact half turn;
 *  - spread over every distance from the centre (a prefix of a plain
 *    ranking by distance would be a ball).
 * An index stride fails the first check, a finely scattering hash the
 * second, a ranking by distance the last. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "solve/solve_internal.h"

#define NU 48 /* around; the seam at u = 0 is a copy of the column at u = 2 pi */
#define NV 40 /* pole to pole */
#define M 500 /* the prefix compared */

typedef struct body {
  size_t n, tri_count;
  double *pos;
  uint32_t *tris;
  uint32_t *origin; /* the body's vertex each vertex is (copies share one) */
} body;

static void body_free(body *b) { free(b->pos); free(b->tris); free(b->origin); }

/* a bumpy ellipsoid, x = left-right (nearly mirror-symmetric), y up */
static body make_body(void) {
  body b;
  b.n = (size_t)(NU + 1) * NV;
  b.pos = malloc(b.n * 3 * sizeof(double));
  b.origin = malloc(b.n * sizeof(uint32_t));
  b.tri_count = (size_t)NU * (NV - 1) * 2;
  b.tris = malloc(b.tri_count * 3 * sizeof(uint32_t));
  for (int v = 0; v < NV; ++v)
    for (int u = 0; u <= NU; ++u) {
      double th = 3.14159265358979 * (v + 0.5) / NV, ph = 2 * 3.14159265358979 * (u % NU) / NU;
      double r = 1 + 0.15 * sin(3 * th) * cos(2 * ph) + 0.05 * cos(5 * th);
      size_t k = (size_t)v * (NU + 1) + (size_t)u;
      b.pos[3 * k] = 0.45 * r * sin(th) * sin(ph);
      b.pos[3 * k + 1] = 0.9 * r * cos(th);
      b.pos[3 * k + 2] = 0.25 * r * sin(th) * cos(ph) + 0.02 * cos(th);
      b.origin[k] = (uint32_t)((size_t)v * NU + (size_t)(u % NU)); /* the seam column is a copy */
    }
  size_t t = 0;
  for (int v = 0; v + 1 < NV; ++v)
    for (int u = 0; u < NU; ++u) {
      uint32_t a = (uint32_t)(v * (NU + 1) + u), c = a + 1, d = a + NU + 1, e = d + 1;
      uint32_t f[6] = {a, d, c, c, d, e};
      memcpy(&b.tris[3 * t], f, sizeof f);
      t += 2;
    }
  return b;
}

/* the body's vertices (origin ids) of the first m of its order */
static void prefix_origins(const body *b, size_t m, uint8_t *mark) {
  size_t count = 0;
  uint32_t *ord = sks_shape_order(b->pos, b->n, b->tris, b->tri_count, 1, &count);
  CHECK(ord != NULL && count >= m);
  memset(mark, 0, (size_t)NU * NV);
  for (size_t k = 0; ord && k < m && k < count; ++k) mark[b->origin[ord[k]]] = 1;
  free(ord);
}

static size_t differ(const uint8_t *a, const uint8_t *b) {
  size_t d = 0;
  for (size_t k = 0; k < (size_t)NU * NV; ++k) d += a[k] != b[k];
  return d / 2;
}

int main(void) {
  body b = make_body();
  size_t distinct = (size_t)NU * NV;
  uint8_t *base = malloc(distinct), *other = malloc(distinct);
  prefix_origins(&b, M, base);
  {
    size_t count = 0;
    uint32_t *ord = sks_shape_order(b.pos, b.n, b.tris, b.tri_count, 1, &count);
    CHECK_MSG(count == distinct, "distinct: %zu positions, expected %zu (the seam's copies dropped)", count, distinct);
    /* the prefix spans the distances: its farthest point is near the
     * farthest overall, its nearest near the nearest */
    double c[3] = {0, 0, 0}, rmin = 1e300, rmax = 0, pmin = 1e300, pmax = 0;
    for (size_t k = 0; k < b.n; ++k)
      for (int a = 0; a < 3; ++a) c[a] += b.pos[3 * k + a] / (double)b.n;
    for (size_t k = 0; k < count; ++k) {
      double r = sqrt(sks_d3_dist2(&b.pos[3 * ord[k]], c));
      if (r < rmin) rmin = r;
      if (r > rmax) rmax = r;
      if (k < M && r < pmin) pmin = r;
      if (k < M && r > pmax) pmax = r;
    }
    CHECK_MSG(pmax > rmin + 0.9 * (rmax - rmin) && pmin < rmin + 0.1 * (rmax - rmin),
              "the first %d span r %.3f..%.3f of %.3f..%.3f", M, pmin, pmax, rmin, rmax);
    free(ord);
  }

  /* another vertex order, and every third vertex copied (a re-weld):
   * the same points */
  {
    body p;
    size_t n2 = b.n + b.n / 3;
    p.n = n2;
    p.tri_count = b.tri_count;
    p.pos = malloc(n2 * 3 * sizeof(double));
    p.origin = malloc(n2 * sizeof(uint32_t));
    p.tris = malloc(b.tri_count * 3 * sizeof(uint32_t));
    uint32_t *perm = malloc(b.n * sizeof(uint32_t)); /* old vertex -> new */
    for (size_t k = 0; k < b.n; ++k) perm[k] = (uint32_t)k;
    unsigned s = 12345;
    for (size_t k = b.n - 1; k > 0; --k) {
      s = s * 1103515245u + 12345u;
      size_t j = (s >> 8) % (k + 1);
      uint32_t t = perm[k]; perm[k] = perm[j]; perm[j] = t;
    }
    for (size_t k = 0; k < b.n; ++k) {
      memcpy(&p.pos[3 * perm[k]], &b.pos[3 * k], 3 * sizeof(double));
      p.origin[perm[k]] = b.origin[k];
    }
    for (size_t k = 0; k < b.n / 3; ++k) { /* copies, each used by one triangle corner */
      memcpy(&p.pos[3 * (b.n + k)], &b.pos[3 * (3 * k)], 3 * sizeof(double));
      p.origin[b.n + k] = b.origin[3 * k];
    }
    for (size_t t = 0; t < 3 * b.tri_count; ++t) p.tris[t] = perm[b.tris[t]];
    for (size_t t = 0; t < b.tri_count; ++t)
      for (int e = 0; e < 3; ++e)
        if (b.tris[3 * t + e] % 3 == 0 && b.tris[3 * t + e] / 3 < b.n / 3 && (t + (size_t)e) % 2 == 0)
          p.tris[3 * t + e] = (uint32_t)(b.n + b.tris[3 * t + e] / 3);
    prefix_origins(&p, M, other);
    size_t d = differ(base, other);
    CHECK_MSG(d <= 2, "re-ordered and re-welded: %zu of the first %d points differ", d, M);
    free(perm);
    body_free(&p);
  }

  /* turned 37 deg about (1, 2, 3), scaled by 0.127 and offset by (1, 2, 3),
   * stored as floats: the same but for points at the cut */
  {
    body r = b;
    r.pos = malloc(b.n * 3 * sizeof(double));
    double ax[3] = {1, 2, 3}, l = sqrt(14.0), ang = 37 * 3.14159265358979 / 180;
    for (int a = 0; a < 3; ++a) ax[a] /= l;
    double co = cos(ang), si = sin(ang);
    for (size_t k = 0; k < b.n; ++k) {
      const double *x = &b.pos[3 * k];
      double dot = ax[0] * x[0] + ax[1] * x[1] + ax[2] * x[2];
      double cr[3] = {ax[1] * x[2] - ax[2] * x[1], ax[2] * x[0] - ax[0] * x[2], ax[0] * x[1] - ax[1] * x[0]};
      for (int a = 0; a < 3; ++a)
        r.pos[3 * k + a] = (double)(float)(0.127 * (x[a] * co + cr[a] * si + ax[a] * dot * (1 - co)) + (a + 1));
    }
    prefix_origins(&r, M, other);
    size_t d = differ(base, other);
    CHECK_MSG(d <= 4, "turned, scaled, offset, as floats: %zu of the first %d points differ", d, M);
    free(r.pos);
  }

  /* an exact half turn about y: the same order, bit for bit */
  {
    double *h = malloc(b.n * 3 * sizeof(double));
    for (size_t k = 0; k < b.n; ++k) {
      h[3 * k] = -b.pos[3 * k];
      h[3 * k + 1] = b.pos[3 * k + 1];
      h[3 * k + 2] = -b.pos[3 * k + 2];
    }
    size_t c1 = 0, c2 = 0;
    uint32_t *o1 = sks_shape_order(b.pos, b.n, b.tris, b.tri_count, 1, &c1);
    uint32_t *o2 = sks_shape_order(h, b.n, b.tris, b.tri_count, 1, &c2);
    CHECK(o1 && o2 && c1 == c2 && !memcmp(o1, o2, c1 * sizeof(uint32_t)));
    free(o1); free(o2); free(h);
  }

  /* no triangles: moments over the points; bad indices skipped */
  {
    size_t c = 0;
    uint32_t bad[3] = {0, 1, (uint32_t)b.n};
    uint32_t *o = sks_shape_order(b.pos, b.n, bad, 1, 0, &c);
    CHECK(o && c == b.n);
    free(o);
    o = sks_shape_order(b.pos, 0, NULL, 0, 1, &c);
    CHECK(o && c == 0);
    free(o);
  }
  /* keys and areas (sks_shape_order_keys): the keys ascending in [0, 1),
   * the areas summing to the surface's (the seam's copies summed into one
   * position) */
  {
    size_t c = 0;
    double *keys = malloc(b.n * sizeof(double)), *area = malloc(b.n * sizeof(double));
    uint32_t *o = sks_shape_order_keys(b.pos, b.n, b.tris, b.tri_count, 1, &c, keys, area);
    CHECK(o && c == distinct);
    double total = 0, sum = 0;
    int sorted = 1;
    for (size_t t = 0; t < b.tri_count; ++t) {
      const double *x = &b.pos[3 * b.tris[3 * t]], *y = &b.pos[3 * b.tris[3 * t + 1]], *z = &b.pos[3 * b.tris[3 * t + 2]];
      double u[3] = {y[0] - x[0], y[1] - x[1], y[2] - x[2]}, v[3] = {z[0] - x[0], z[1] - x[1], z[2] - x[2]};
      double cr[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
      total += 0.5 * sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]);
    }
    for (size_t k = 0; o && k < c; ++k) {
      sum += area[k];
      if (!(keys[k] >= 0 && keys[k] < 1) || (k && keys[k] < keys[k - 1])) sorted = 0;
    }
    CHECK_MSG(sorted, "keys ascending in [0, 1)");
    CHECK_MSG(fabs(sum - total) <= 1e-12 * total, "areas sum to %.15g, the surface %.15g", sum, total);
    free(o); free(keys); free(area);
  }

  /* the faded sample (sks_shape_fade): all at weight 1 when the points
   * are few enough; else about `want` of them, and a key that moves
   * across the cut, or wraps from near 1 to near 0, moves a weight by
   * about as much: never a whole point in or out (a hard cut there
   * changed the alignment of two bodies by 0.2 quality point) */
  {
    enum { U = 1000, WANT = 250 };
    double keys[U], w[U], w2[U];
    size_t whole = 0, whole2 = 0;
    for (size_t k = 0; k < U; ++k) keys[k] = ((double)k + 0.5) / U;
    CHECK(sks_shape_fade(keys, 200, WANT, w, &whole) == 200 && w[0] == 1 && w[199] == 1 && whole == 0);
    size_t m = sks_shape_fade(keys, U, WANT, w, &whole);
    double sum = 0;
    int in01 = 1;
    for (size_t k = 0; k < m; ++k) { sum += w[k]; in01 &= w[k] >= 0 && w[k] <= 1; }
    CHECK_MSG(in01 && m <= 2 * WANT && sum > 0.8 * WANT && sum < 1.0 * WANT,
              "fade: %zu points, weights sum %.3f (want %d)", m, sum, WANT);
    CHECK_MSG(whole > 0 && whole < m && w[whole] == 1 && w[0] < 0.02, "fade in: unfaded from %zu", whole);
    /* a key at the cut (0.25 + 0.025, where the fade ends) nudged across it */
    size_t at = 274; /* key 0.2745 */
    double cut_end = 0.25 + 0.025;
    keys[at] = cut_end - 1e-12;
    size_t m1 = sks_shape_fade(keys, U, WANT, w, &whole);
    keys[at] = cut_end + 1e-12;
    size_t m2 = sks_shape_fade(keys, U, WANT, w2, &whole2);
    double moved = 0;
    for (size_t k = 0; k < (m1 > m2 ? m1 : m2); ++k) moved += fabs((k < m1 ? w[k] : 0) - (k < m2 ? w2[k] : 0));
    CHECK_MSG(moved < 1e-9, "a key nudged 2e-12 across the cut moved the weights by %.3g", moved);
    /* the wrap: a key near 0 weighs near nothing */
    keys[0] = 1e-9;
    sks_shape_fade(keys, U, WANT, w, &whole);
    CHECK_MSG(w[0] < 1e-6, "a key wrapped to 1e-9 weighs %.3g", w[0]);
  }

  free(base); free(other);
  body_free(&b);
  return sks_test_finish();
}
