/* The per-bake solve problem: constraint influences centred per bone,
 * per-bone vertex lists (BCD) and per-bone-pair moments (Gauss-Newton). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "solve/solve_internal.h"

void sks_influences_free(sks_influences *in) {
  if (!in) return;
  free(in->start); free(in->bone); free(in->w); free(in->p);
  memset(in, 0, sizeof *in);
}

void sks_solve_problem_free(sks_solve_problem *p) {
  if (!p) return;
  free(p->ids);
  sks_influences_free(&p->inf);
  free(p->centroid); free(p->wsum2); free(p->radius2);
  free(p->bstart); free(p->bvertex); free(p->bw); free(p->bp);
  free(p->pairs);
  free(p->affine);
  sks_gn_pattern_free(&p->gn);
  memset(p, 0, sizeof *p);
}

int sks_solve_problem_build(sks_solve_problem *p, const sks_influences *full, size_t bone_count,
                            const uint32_t *ids, size_t id_count, double scale) {
  memset(p, 0, sizeof *p);
  p->bone_count = bone_count;
  p->scale = scale;
  size_t B = bone_count, n = id_count, ninf = 0;
  for (size_t k = 0; k < n; ++k) ninf += full->start[ids[k] + 1] - full->start[ids[k]];
  p->ids = malloc((n ? n : 1) * sizeof *p->ids);
  p->inf.vertex_count = n;
  p->inf.start = malloc((n + 1) * sizeof(uint32_t));
  p->inf.bone = malloc((ninf ? ninf : 1) * sizeof(uint32_t));
  p->inf.w = malloc((ninf ? ninf : 1) * sizeof(double));
  p->inf.p = malloc((ninf ? ninf : 1) * 3 * sizeof(double));
  p->centroid = calloc(B ? 3 * B : 1, sizeof(double));
  p->wsum2 = calloc(B ? B : 1, sizeof(double));
  p->radius2 = calloc(B ? B : 1, sizeof(double));
  p->bstart = calloc(B + 1, sizeof(uint32_t));
  p->bvertex = malloc((ninf ? ninf : 1) * sizeof(uint32_t));
  p->bw = malloc((ninf ? ninf : 1) * sizeof(double));
  p->bp = malloc((ninf ? ninf : 1) * 3 * sizeof(double));
  p->affine = calloc(B ? B : 1, 1);
  int32_t *pair_index = malloc((B ? B * B : 1) * sizeof(int32_t));
  if (!p->affine || !p->ids || !p->inf.start || !p->inf.bone || !p->inf.w || !p->inf.p || !p->centroid ||
      !p->wsum2 || !p->radius2 || !p->bstart || !p->bvertex || !p->bw || !p->bp || !pair_index) {
    free(pair_index);
    sks_solve_problem_free(p);
    return 0;
  }
  memcpy(p->ids, ids, n * sizeof *ids);
  /* copy + centroids */
  size_t o = 0;
  for (size_t k = 0; k < n; ++k) {
    p->inf.start[k] = (uint32_t)o;
    for (uint32_t i = full->start[ids[k]]; i < full->start[ids[k] + 1]; ++i, ++o) {
      uint32_t b = full->bone[i];
      double w = full->w[i];
      p->inf.bone[o] = b;
      p->inf.w[o] = w;
      memcpy(&p->inf.p[3 * o], &full->p[3 * i], 3 * sizeof(double));
      p->wsum2[b] += w * w;
      for (int a = 0; a < 3; ++a) p->centroid[3 * b + a] += w * w * full->p[3 * i + a];
      p->bstart[b + 1]++;
    }
  }
  p->inf.start[n] = (uint32_t)o;
  for (size_t b = 0; b < B; ++b)
    if (p->wsum2[b] > 0)
      for (int a = 0; a < 3; ++a) p->centroid[3 * b + a] /= p->wsum2[b];
  for (size_t i = 0; i < o; ++i) {
    uint32_t b = p->inf.bone[i];
    for (int a = 0; a < 3; ++a) p->inf.p[3 * i + a] -= p->centroid[3 * b + a];
    double w = p->inf.w[i];
    p->radius2[b] += w * w * sks_d3_dot(&p->inf.p[3 * i], &p->inf.p[3 * i]);
  }
  for (size_t b = 0; b < B; ++b) {
    if (p->wsum2[b] > 0) p->radius2[b] /= p->wsum2[b];
    p->bstart[b + 1] += p->bstart[b];
  }
  /* per-bone lists */
  uint32_t *fill = malloc((B ? B : 1) * sizeof(uint32_t));
  if (!fill) { free(pair_index); sks_solve_problem_free(p); return 0; }
  memcpy(fill, p->bstart, B * sizeof(uint32_t));
  for (size_t k = 0; k < n; ++k)
    for (uint32_t i = p->inf.start[k]; i < p->inf.start[k + 1]; ++i) {
      uint32_t b = p->inf.bone[i], e = fill[b]++;
      p->bvertex[e] = (uint32_t)k;
      p->bw[e] = p->inf.w[i];
      memcpy(&p->bp[3 * e], &p->inf.p[3 * i], 3 * sizeof(double));
    }
  free(fill);
  /* pair moments over ordered influence pairs with bone_i <= bone_k */
  for (size_t i = 0; i < B * B; ++i) pair_index[i] = -1;
  size_t cap = 0;
  for (size_t k = 0; k < n; ++k)
    for (uint32_t i = p->inf.start[k]; i < p->inf.start[k + 1]; ++i)
      for (uint32_t j = p->inf.start[k]; j < p->inf.start[k + 1]; ++j) {
        uint32_t b = p->inf.bone[i], c = p->inf.bone[j];
        if (b > c) continue;
        int32_t pi = pair_index[b * B + c];
        if (pi < 0) {
          if (p->pair_count == cap) {
            size_t nc = cap ? cap * 2 : 64;
            sks_pair_moments *np = realloc(p->pairs, nc * sizeof *np);
            if (!np) { free(pair_index); sks_solve_problem_free(p); return 0; }
            p->pairs = np;
            cap = nc;
          }
          pi = (int32_t)p->pair_count++;
          pair_index[b * B + c] = pi;
          memset(&p->pairs[pi], 0, sizeof p->pairs[pi]);
          p->pairs[pi].b = b;
          p->pairs[pi].c = c;
        }
        sks_pair_moments *pm = &p->pairs[pi];
        double ww = p->inf.w[i] * p->inf.w[j];
        const double *pb = &p->inf.p[3 * i], *pc = &p->inf.p[3 * j];
        pm->s += ww;
        for (int a = 0; a < 3; ++a) {
          pm->mb[a] += ww * pb[a];
          pm->mc[a] += ww * pc[a];
          for (int d = 0; d < 3; ++d) pm->P[a * 3 + d] += ww * pb[a] * pc[d];
        }
      }
  free(pair_index);
  if (!sks_gn_pattern_build(p)) { sks_solve_problem_free(p); return 0; }
  return 1;
}

sks_daffine sks_state_rigid(const sks_solve_problem *p, const sks_solve_state *s, size_t b) {
  sks_daffine a;
  memcpy(a.l, &s->R[9 * b], 9 * sizeof(double));
  double rc[3];
  sks_dm3_apply(a.l, &p->centroid[3 * b], rc);
  for (int k = 0; k < 3; ++k) a.t[k] = s->u[3 * b + k] - rc[k];
  return a;
}

void sks_state_set_rigid(const sks_solve_problem *p, sks_solve_state *s, size_t b,
                         const sks_daffine *a) {
  if (s->stretch) {
    if (p->affine && p->affine[b]) {
      sks_state_set_linear(s, b, a->l, (sks_dquat){0, 0, 0, 1});
      double rc[3];
      sks_dm3_apply(&s->R[9 * b], &p->centroid[3 * b], rc);
      for (int k = 0; k < 3; ++k) s->u[3 * b + k] = a->t[k] + rc[k];
      return;
    }
    memcpy(&s->stretch[9 * b], (const double[9]){1, 0, 0, 0, 1, 0, 0, 0, 1}, 9 * sizeof(double));
  }
  double det = sks_dm3_det(a->l), sc = cbrt(fabs(det)), m[9];
  if (!(sc > 0) || !isfinite(sc)) sc = 1;
  for (int k = 0; k < 9; ++k) m[k] = a->l[k] / sc;
  s->q[b] = sks_dq_from_m3(m);
  s->sc[b] = sc;
  sks_state_update_R(s, b);
  double rc[3];
  sks_dm3_apply(&s->R[9 * b], &p->centroid[3 * b], rc);
  for (int k = 0; k < 3; ++k) s->u[3 * b + k] = a->t[k] + rc[k];
}

void sks_solve_skin(const sks_solve_problem *p, const sks_solve_state *s, double *cur) {
  for (size_t k = 0; k < p->inf.vertex_count; ++k) {
    double acc[3] = {0, 0, 0};
    for (uint32_t i = p->inf.start[k]; i < p->inf.start[k + 1]; ++i) {
      uint32_t b = p->inf.bone[i];
      double x[3];
      sks_dm3_apply(&s->R[9 * b], &p->inf.p[3 * i], x);
      double w = p->inf.w[i];
      for (int a = 0; a < 3; ++a) acc[a] += w * (x[a] + s->u[3 * b + a]);
    }
    memcpy(&cur[3 * k], acc, sizeof acc);
  }
}
