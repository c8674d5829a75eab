/* Motion transfer (MISSION.md): the motion to reproduce at target vertex j,
 * frame f, is the target's own bind position x_j moved by the source's local
 * deformation at the corresponding point c(j), between the registration
 * pose P and frame f, all in the target's bind space:
 *
 *   y_fj = sum_b w_b(c(j)) * A N_fb N_Pb^-1 A^-1 * x_j
 *
 * with N the source's bind-space skin matrices (T_s^-1 G IBM), A the
 * alignment (source bind space -> target bind space) and w_b(c(j)) the
 * source weights interpolated at c(j) (barycentric over the triangle the
 * closest point lies on; merged per palette entry). At P, y = x; for the same
 * mesh with P = bind it is the source's skinned vertex. The shape of the
 * source never enters: only its motion. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "solve/solve_internal.h"

void sks_transfer_free(sks_transfer *t) {
  if (!t) return;
  free(t->start); free(t->pal); free(t->w); free(t->reg_inv); free(t->X); free(t->N); free(t->x_own);
  memset(t, 0, sizeof *t);
}

sks_result sks_transfer_build(sks_transfer *t, const sks_skinview *src, const sks_skinview *tgt,
                              const sks_correspondence *corr, const sks_daffine *A, sks_error *err) {
  memset(t, 0, sizeof *t);
  size_t V = tgt->V;
  t->V = V;
  t->x = tgt->pos;
  t->A = *A;
  if (!sks_daff_inverse(A, &t->A_inv))
    return sks_error_set(err, SKS_ERR_INVALID, "alignment is singular");
  t->P = src->P;
  t->start = malloc((V + 1) * sizeof(uint32_t));
  size_t cap = 0;
  for (size_t j = 0; j < V; ++j)
    for (int k = 0; k < 3; ++k) {
      uint32_t s = corr->idx[3 * j + k];
      if (corr->bary[3 * j + k] != 0.0f || k == 0) cap += src->start[s + 1] - src->start[s];
    }
  t->pal = malloc((cap ? cap : 1) * sizeof(uint32_t));
  t->w = malloc((cap ? cap : 1) * sizeof(double));
  t->X = malloc((t->P ? t->P : 1) * sizeof(sks_daffine));
  t->N = malloc((t->P ? t->P : 1) * sizeof(sks_daffine));
  if (!t->start || !t->pal || !t->w || !t->X || !t->N) {
    sks_transfer_free(t);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory preparing the motion transfer");
  }
  size_t o = 0;
  for (size_t j = 0; j < V; ++j) {
    t->start[j] = (uint32_t)o;
    double bsum = 0;
    for (int k = 0; k < 3; ++k) bsum += corr->bary[3 * j + k];
    for (int k = 0; k < 3; ++k) {
      double b = bsum > 0 ? corr->bary[3 * j + k] / bsum : (k == 0 ? 1.0 : 0.0);
      if (b == 0.0) continue;
      uint32_t s = corr->idx[3 * j + k];
      for (uint32_t i = src->start[s]; i < src->start[s + 1]; ++i) {
        uint32_t e = src->pal[i];
        size_t q = t->start[j];
        for (; q < o; ++q)
          if (t->pal[q] == e) break;
        if (q == o) { t->pal[o] = e; t->w[o] = 0; ++o; }
        t->w[q] += b * src->w[i];
      }
    }
  }
  t->start[V] = (uint32_t)o;
  return SKS_OK;
}

sks_result sks_transfer_set_registration(sks_transfer *t, const sks_daffine *N_P, sks_error *err) {
  if (!t->reg_inv) t->reg_inv = malloc((t->P ? t->P : 1) * sizeof(sks_daffine));
  if (!t->reg_inv) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  for (size_t e = 0; e < t->P; ++e)
    if (!sks_daff_inverse(&N_P[e], &t->reg_inv[e])) t->reg_inv[e] = sks_daff_identity();
  return SKS_OK;
}

const sks_daffine *sks_transfer_palette(const sks_transfer *t, const sks_skinview *src,
                                        const sks_daffine *scene_models, sks_daffine *scratch) {
  sks_daffine *N = scratch, *X = scratch + t->P;
  sks_skinview_palette(src, scene_models, N);
  for (size_t e = 0; e < t->P; ++e) {
    sks_daffine m = t->reg_inv ? sks_daff_mul(&N[e], &t->reg_inv[e]) : N[e];
    sks_daffine am = sks_daff_mul(&t->A, &m);
    X[e] = sks_daff_mul(&am, &t->A_inv);
  }
  return X;
}

void sks_transfer_frame(const sks_transfer *t, const sks_skinview *src, const sks_daffine *scene_models,
                        sks_daffine *scratch, const uint32_t *ids, size_t id_count, double *y) {
  const sks_daffine *X = sks_transfer_palette(t, src, scene_models, scratch);
  size_t n = ids ? id_count : t->V;
  for (size_t k = 0; k < n; ++k) {
    size_t j = ids ? ids[k] : k;
    const double *x = &t->x[3 * j];
    double acc[3] = {0, 0, 0};
    for (uint32_t i = t->start[j]; i < t->start[j + 1]; ++i) {
      const sks_daffine *Xe = &X[t->pal[i]];
      double w = t->w[i], p[3];
      sks_daff_point(Xe, x, p);
      acc[0] += w * p[0]; acc[1] += w * p[1]; acc[2] += w * p[2];
    }
    memcpy(&y[3 * k], acc, sizeof acc);
  }
}

void sks_transfer_bind(sks_transfer *t, double *y) {
  for (size_t e = 0; e < t->P; ++e) {
    sks_daffine m = t->reg_inv ? t->reg_inv[e] : sks_daff_identity();
    sks_daffine am = sks_daff_mul(&t->A, &m);
    t->X[e] = sks_daff_mul(&am, &t->A_inv);
  }
  for (size_t j = 0; j < t->V; ++j) {
    const double *x = &t->x[3 * j];
    double acc[3] = {0, 0, 0};
    for (uint32_t i = t->start[j]; i < t->start[j + 1]; ++i) {
      double p[3];
      sks_daff_point(&t->X[t->pal[i]], x, p);
      for (int a = 0; a < 3; ++a) acc[a] += t->w[i] * p[a];
    }
    memcpy(&y[3 * j], acc, sizeof acc);
  }
}

sks_result sks_transfer_subset(const sks_transfer *t, const uint32_t *ids, size_t n, sks_transfer *sub) {
  memset(sub, 0, sizeof *sub);
  size_t cap = 0;
  for (size_t k = 0; k < n; ++k) cap += t->start[ids[k] + 1] - t->start[ids[k]];
  sub->V = n;
  sub->P = t->P;
  sub->A = t->A;
  sub->A_inv = t->A_inv;
  sub->x_own = malloc((n ? n : 1) * 3 * sizeof(double));
  sub->start = malloc((n + 1) * sizeof(uint32_t));
  sub->pal = malloc((cap ? cap : 1) * sizeof(uint32_t));
  sub->w = malloc((cap ? cap : 1) * sizeof(double));
  if (t->reg_inv) sub->reg_inv = malloc((t->P ? t->P : 1) * sizeof(sks_daffine));
  if (!sub->x_own || !sub->start || !sub->pal || !sub->w || (t->reg_inv && !sub->reg_inv)) {
    sks_transfer_free(sub);
    return SKS_ERR_OUT_OF_MEMORY;
  }
  if (t->reg_inv) memcpy(sub->reg_inv, t->reg_inv, t->P * sizeof(sks_daffine));
  size_t o = 0;
  for (size_t k = 0; k < n; ++k) {
    size_t j = ids[k];
    memcpy(&sub->x_own[3 * k], &t->x[3 * j], 3 * sizeof(double));
    sub->start[k] = (uint32_t)o;
    for (uint32_t i = t->start[j]; i < t->start[j + 1]; ++i, ++o) {
      sub->pal[o] = t->pal[i];
      sub->w[o] = t->w[i];
    }
  }
  sub->start[n] = (uint32_t)o;
  sub->x = sub->x_own;
  return SKS_OK;
}
