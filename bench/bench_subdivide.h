/* Benchmarks' large rigs: a model with every skinned triangle split in 4
 * (bench_refit, bench_bake). Header-only (static), bench/ only. */
#ifndef SKS_BENCH_SUBDIVIDE_H
#define SKS_BENCH_SUBDIVIDE_H
#include <stdlib.h>
#include "skinsolve/skinsolve.h"

/* Splits every triangle of every skinned part into 4 (a triangle soup:
 * 12 vertices per input triangle); midpoint weights = mean of the two ends'
 * weights per joint, 4 largest kept, renormalised. */
static inline void subdivide(sks_model *m) {
  for (size_t pi = 0; pi < m->part_count; ++pi) {
    sks_mesh_part *p = &m->parts[pi];
    if (p->skin < 0) continue;
    size_t T = p->index_count / 3, K = p->influence_count, nv = T * 12;
    float *pos = malloc(nv * 3 * sizeof(float)), *w = calloc(nv * 4, sizeof(float));
    uint16_t *j = calloc(nv * 4, sizeof(uint16_t));
    uint32_t *idx = malloc(T * 12 * sizeof(uint32_t));
    size_t o = 0;
    for (size_t t = 0; t < T; ++t) {
      uint32_t c[3] = {p->indices[3 * t], p->indices[3 * t + 1], p->indices[3 * t + 2]};
      /* corners 0..2, edge midpoints 01 12 20 */
      uint32_t pa[6] = {c[0], c[1], c[2], c[0], c[1], c[2]}, pb[6] = {c[0], c[1], c[2], c[1], c[2], c[0]};
      static const int tris[4][3] = {{0, 3, 5}, {3, 1, 4}, {5, 4, 2}, {3, 4, 5}};
      for (int q = 0; q < 4; ++q)
        for (int k = 0; k < 3; ++k, ++o) {
          int e = tris[q][k];
          uint32_t a = pa[e], b = pb[e];
          for (int d = 0; d < 3; ++d) pos[3 * o + d] = 0.5f * (p->positions[3 * a + d] + p->positions[3 * b + d]);
          float acc[64] = {0};
          uint16_t js[64];
          int n = 0;
          for (int s = 0; s < 2; ++s)
            for (size_t i = 0; i < K; ++i) {
              uint32_t v = s ? b : a;
              uint16_t jj = p->joints[v * K + i];
              float ww = 0.5f * p->weights[v * K + i];
              int f = 0;
              while (f < n && js[f] != jj) ++f;
              if (f == n) { js[n] = jj; acc[n++] = 0; }
              acc[f] += ww;
            }
          float sum = 0;
          for (int r = 0; r < 4; ++r) {
            int best = -1;
            for (int f = 0; f < n; ++f)
              if (acc[f] > 0 && (best < 0 || acc[f] > acc[best])) best = f;
            if (best < 0) break;
            w[o * 4 + (size_t)r] = acc[best];
            j[o * 4 + (size_t)r] = js[best];
            sum += acc[best];
            acc[best] = 0;
          }
          for (int r = 0; r < 4; ++r) w[o * 4 + (size_t)r] /= sum;
          idx[o] = (uint32_t)o;
        }
    }
    free(p->positions); free(p->weights); free(p->joints); free(p->indices);
    free(p->normals); free(p->uvs);
    p->normals = NULL; p->uvs = NULL;
    p->positions = pos; p->weights = w; p->joints = j; p->indices = idx;
    p->vertex_count = nv; p->index_count = nv; p->influence_count = 4;
  }
}

#endif
