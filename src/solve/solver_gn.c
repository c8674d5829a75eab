/* Levenberg-Marquardt over all bones at once (the default solver).
 *
 * Parameters per constrained bone: a rotation increment w_b (R_b <- exp(w_b) R_b)
 * and a translation increment du_b, in the centred coordinates of
 * solve_internal.h. With a = R_b pl, the Jacobian of vertex v's skinned
 * position is w_vb [ -[a]x | I ]. J^T J is assembled from per-bone-pair
 * moments (sum wb wc, sum wb wc pb, sum wb wc pc, sum wb wc pb pc^T), so its
 * cost depends on the number of bone pairs, not on the vertex count:
 *   block(b,c) = [ tr(Q) I - Q   [R_b mb]x ; -[R_c mc]x   s I ],  Q = R_c P^T R_b^T
 * The objective and the gradient J^T e = w [a x e ; e] come from the same
 * pair moments plus, per frame, Y_b = sum w pl y^T and ybar_b = sum w y: after
 * one pass over the constraints per frame, an iteration never touches a
 * vertex. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "solve/solve_internal.h"
#include "solve/solver_gn_kernels.h"


/* K unknowns per bone: 6 rigid, 7 similarity, 12 when some bone is affine
 * (every bone then gets a 12-slot block; a rigid bone's unused slots are
 * identity rows). */
static size_t scratch_for(const sks_solve_problem *p, size_t K) {
  size_t B = p->bone_count < SKS_GN_MAX_BONES ? p->bone_count : SKS_GN_MAX_BONES;
  size_t n = K * B;
  return 2 * B * B * K * K + B * B / 4 + 8 + 5 * n + 28 * p->bone_count +
         (K == 12 ? (144 + 12) * p->bone_count : 0) + 2 * SKS_GN_PAIR_CACHE * p->pair_count +
         4 * p->bone_count;
}

size_t sks_solve_gn_scratch_count(const sks_solve_problem *p) { return scratch_for(p, 7); }

void sks_gn_pattern_free(sks_gn_pattern *g) {
  free(g->act); free(g->pos); free(g->col_start); free(g->row);
  free(g->pair_slot); free(g->pair_trans); free(g->upd_start); free(g->upd);
  memset(g, 0, sizeof *g);
}

/* The factor's pattern, once per problem. Elimination order: minimum degree
 * on the graph of bone pairs that share a vertex (ties: the highest bone
 * index, i.e. leaves of a parent-first skeleton first), eliminating a bone
 * joins its remaining neighbours (the fill). Fox onto fox_rig_autoweights:
 * 22 bones, 83 blocks, no fill, 146 updates. Bounded by the bone count (<= SKS_GN_MAX_BONES): nb^2
 * bytes of work, at most nb^3 / 6 updates. */
int sks_gn_pattern_build(sks_solve_problem *p) {
  sks_gn_pattern *g = &p->gn;
  memset(g, 0, sizeof *g);
  size_t B = p->bone_count;
  if (B > SKS_GN_MAX_BONES) return 1; /* the solver declines such a problem (act NULL) */
  size_t nb = 0;
  g->act = malloc((B ? B : 1) * sizeof(int32_t));
  if (!g->act) return 0;
  for (size_t b = 0; b < B; ++b) g->act[b] = p->wsum2[b] > 0 ? (int32_t)nb++ : -1;
  g->nb = nb;
  size_t nn = nb ? nb * nb : 1, np = p->pair_count ? p->pair_count : 1;
  uint8_t *adj = calloc(nn, 1), *lpat = calloc(nn, 1), *done = calloc(nb ? nb : 1, 1);
  uint32_t *order = malloc((nb ? nb : 1) * sizeof(uint32_t)), *slot_of = malloc(nn * sizeof(uint32_t));
  g->pos = malloc((nb ? nb : 1) * sizeof(uint32_t));
  g->col_start = malloc((nb + 1) * sizeof(uint32_t));
  g->upd_start = malloc((nb + 1) * sizeof(uint32_t));
  g->pair_slot = malloc(np * sizeof(uint32_t));
  g->pair_trans = calloc(np, 1);
  int ok = adj && lpat && done && order && slot_of && g->pos && g->col_start && g->upd_start &&
           g->pair_slot && g->pair_trans;
  if (ok) {
    for (size_t k = 0; k < p->pair_count; ++k) {
      int32_t a = g->act[p->pairs[k].b], c = g->act[p->pairs[k].c];
      if (a >= 0 && c >= 0 && a != c) adj[(size_t)a * nb + (size_t)c] = adj[(size_t)c * nb + (size_t)a] = 1;
    }
    for (size_t step = 0; step < nb; ++step) {
      size_t best = nb, bestdeg = 0;
      for (size_t v = nb; v-- > 0;) {
        if (done[v]) continue;
        size_t dg = 0;
        for (size_t u = 0; u < nb; ++u) dg += !done[u] && adj[v * nb + u];
        if (best == nb || dg < bestdeg) { best = v; bestdeg = dg; }
      }
      done[best] = 1;
      g->pos[best] = (uint32_t)step;
      order[step] = (uint32_t)best;
      for (size_t u = 0; u < nb; ++u) {
        if (done[u] || !adj[best * nb + u]) continue;
        lpat[best * nb + u] = 1;
        for (size_t w = 0; w < nb; ++w)
          if (w != u && !done[w] && adj[best * nb + w]) adj[u * nb + w] = 1;
      }
    }
    /* slots by columns: the diagonal, then the rows in elimination order */
    size_t slots = 0, upds = 0;
    for (size_t k = 0; k < nb; ++k) {
      size_t v = order[k], m = 0;
      g->col_start[k] = (uint32_t)slots;
      slot_of[k * nb + k] = (uint32_t)slots++;
      for (size_t i = k + 1; i < nb; ++i)
        if (lpat[v * nb + order[i]]) { slot_of[i * nb + k] = (uint32_t)slots++; ++m; }
      upds += m * (m + 1) / 2;
    }
    g->col_start[nb] = (uint32_t)slots;
    g->slot_count = slots;
    g->row = malloc((slots ? slots : 1) * sizeof(uint32_t));
    g->upd = malloc((upds ? 3 * upds : 1) * sizeof(uint32_t));
    ok = g->row && g->upd;
    size_t u = 0;
    for (size_t k = 0; ok && k < nb; ++k) {
      size_t v = order[k];
      g->row[g->col_start[k]] = (uint32_t)k;
      g->upd_start[k] = (uint32_t)u;
      for (size_t i = k + 1; i < nb; ++i) {
        if (!lpat[v * nb + order[i]]) continue;
        g->row[slot_of[i * nb + k]] = (uint32_t)i;
        for (size_t j = k + 1; j <= i; ++j) { /* (i, j) is in the pattern: the fill clique */
          if (!lpat[v * nb + order[j]]) continue;
          g->upd[3 * u] = slot_of[i * nb + j];
          g->upd[3 * u + 1] = slot_of[i * nb + k];
          g->upd[3 * u + 2] = slot_of[j * nb + k];
          ++u;
        }
      }
    }
    if (ok) g->upd_start[nb] = (uint32_t)u;
    for (size_t k = 0; ok && k < p->pair_count; ++k) {
      int32_t a = g->act[p->pairs[k].b], c = g->act[p->pairs[k].c];
      if (a < 0 || c < 0) { g->pair_slot[k] = UINT32_MAX; continue; }
      g->pair_blocks++;
      size_t I = g->pos[a], J = g->pos[c];
      g->pair_trans[k] = I < J;
      g->pair_slot[k] = I >= J ? slot_of[I * nb + J] : slot_of[J * nb + I];
    }
  }
  free(adj); free(lpat); free(done); free(order); free(slot_of);
  if (!ok) sks_gn_pattern_free(g);
  return ok;
}

static void skew(const double *a, double *m) {
  m[0] = 0;     m[1] = -a[2]; m[2] = a[1];
  m[3] = a[2];  m[4] = 0;     m[5] = -a[0];
  m[6] = -a[1]; m[7] = a[0];  m[8] = 0;
}

static void cross_of(const double *M, double *v) { /* sum a x b from M = sum a b^T */
  v[0] = M[5] - M[7];
  v[1] = M[6] - M[2];
  v[2] = M[1] - M[3];
}

/* Objective F = sum |cur - y|^2 and gradient g = J^T e from moments only:
 * per frame Y_b = sum w pl y^T, ybar_b = sum w y, yy = sum |y|^2, and the
 * per-pair moments. No pass over the vertices. */
double sks_moments_eval(const sks_solve_problem *p, const double *Y, const double *ybar,
                        double yy, const double *R, const double *u, const int32_t *act,
                        size_t nb, int K, double *g, double *pc) {
  double F = yy;
  memset(g, 0, K * nb * sizeof(double));
  for (size_t b = 0; b < p->bone_count; ++b) {
    if (act[b] < 0) continue;
    double M[9], c[3];
    sks_dmat3 m = sks_dm3_mul((const sks_dmat3 *)&R[9 * b], (const sks_dmat3 *)&Y[9 * b]);
    memcpy(M, m.m, sizeof M);
    F -= 2.0 * (M[0] + M[4] + M[8] + sks_d3_dot(&u[3 * b], &ybar[3 * b]));
    cross_of(M, c);
    double *gb = &g[K * (size_t)act[b]];
    for (int k = 0; k < 3; ++k) { gb[k] -= c[k]; gb[3 + k] -= ybar[3 * b + k]; }
    if (K == 7) gb[6] -= M[0] + M[4] + M[8];
  }
  for (size_t k = 0; k < p->pair_count; ++k) {
    const sks_pair_moments *pm = &p->pairs[k];
    if (act[pm->b] < 0 || act[pm->c] < 0) continue;
    const double *Rb = &R[9 * pm->b], *Rc = &R[9 * pm->c], *ub = &u[3 * pm->b], *uc = &u[3 * pm->c];
    double T[9], Q[9], Qt[9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        T[i * 3 + j] = Rc[i * 3] * pm->P[j * 3] + Rc[i * 3 + 1] * pm->P[j * 3 + 1] + Rc[i * 3 + 2] * pm->P[j * 3 + 2];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        Q[i * 3 + j] = T[i * 3] * Rb[j * 3] + T[i * 3 + 1] * Rb[j * 3 + 1] + T[i * 3 + 2] * Rb[j * 3 + 2];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) Qt[i * 3 + j] = Q[j * 3 + i];
    double ma[3], mc[3];
    sks_dm3_apply(Rb, pm->mb, ma);
    sks_dm3_apply(Rc, pm->mc, mc);
    if (pc) { /* for the J^T J at this R (assemble) */
      double *o = &pc[SKS_GN_PAIR_CACHE * k];
      memcpy(o, Q, sizeof Q); memcpy(o + 9, ma, sizeof ma); memcpy(o + 12, mc, sizeof mc);
    }
    double mult = pm->b == pm->c ? 1.0 : 2.0;
    F += mult * (Q[0] + Q[4] + Q[8] + sks_d3_dot(ma, uc) + sks_d3_dot(ub, mc) + pm->s * sks_d3_dot(ub, uc));
    double c1[3], c2[3];
    double *gb = &g[K * (size_t)act[pm->b]];
    cross_of(Qt, c1);
    sks_d3_cross(ma, uc, c2);
    for (int q = 0; q < 3; ++q) { gb[q] += c1[q] + c2[q]; gb[3 + q] += mc[q] + pm->s * uc[q]; }
    if (K == 7) gb[6] += Q[0] + Q[4] + Q[8] + sks_d3_dot(ma, uc);
    if (pm->b != pm->c) {
      double *gc = &g[K * (size_t)act[pm->c]];
      cross_of(Q, c1);
      sks_d3_cross(mc, ub, c2);
      for (int q = 0; q < 3; ++q) { gc[q] += c1[q] + c2[q]; gc[3 + q] += ma[q] + pm->s * ub[q]; }
      if (K == 7) gc[6] += Q[0] + Q[4] + Q[8] + sks_d3_dot(mc, ub);
    }
  }
  return F;
}

int sks_gn_use_avx2(const sks_gn_pattern *pt) {
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
  return pt->isa == SKS_GN_ISA_AUTO && sks_gn_avx2_compiled() && __builtin_cpu_supports("avx2") &&
         __builtin_cpu_supports("fma");
#else
  (void)pt;
  return 0;
#endif
}

double sks_moments_frame(const sks_solve_problem *p, const double *y, double *Y, double *ybar) {
  if (sks_gn_use_avx2(&p->gn)) return sks_moments_frame_avx2(p, y, Y, ybar);
  return moments_frame_impl(p, y, Y, ybar);
}

/* J^T J in KxK blocks, in the slots of the factor's pattern (p->gn): slot
 * (I, J), I > J, holds block H_IJ (rows: I's unknowns) transposed, i.e. H_JI
 * row by row, so the factorisation's row updates read contiguous rows
 * (damped_solve_impl); a diagonal slot holds H_II. Pair (b, c)'s block
 * Jb^T Jc is H_(pos b)(pos c): stored as is when pos b < pos c (slot
 * (pos c, pos b)) or b == c, else transposed. Fill blocks are zero. Each
 * slot holds at most one pair (pairs are unique). */
static void store_block(const sks_gn_pattern *pt, size_t k, const double *blk, int K, int diag, double *Hb) {
  double *dst = &Hb[(size_t)pt->pair_slot[k] * (size_t)(K * K)];
  if (diag || pt->pair_trans[k]) { memcpy(dst, blk, (size_t)(K * K) * sizeof(double)); return; }
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < K; ++j) dst[j * K + i] = blk[i * K + j];
}

/* pc: Q = Rc P^T Rb^T, Rb mb and Rc mc of every pair, as sks_moments_eval
 * left them at this R (the same arithmetic, so the same bits). */
static void assemble(const sks_solve_problem *p, const double *pc, int K, double *Hb) {
  const sks_gn_pattern *pt = &p->gn;
  const size_t KK = (size_t)(K * K);
  if (pt->slot_count > pt->pair_blocks) memset(Hb, 0, pt->slot_count * KK * sizeof(double)); /* fill blocks */
  for (size_t k = 0; k < p->pair_count; ++k) {
    const sks_pair_moments *pm = &p->pairs[k];
    if (pt->pair_slot[k] == UINT32_MAX) continue;
    const double *Q = &pc[SKS_GN_PAIR_CACHE * k], *ma = Q + 9, *mc = Q + 12;
    double tr = Q[0] + Q[4] + Q[8];
    double Sa[9], Sc[9];
    skew(ma, Sa);
    skew(mc, Sc);
    /* every entry of the block written straight to its slot (as store_block
     * lays it out: row-major, or transposed), no temporary */
    double *dst = &Hb[(size_t)pt->pair_slot[k] * KK];
    const int trans = pm->b != pm->c && !pt->pair_trans[k];
    const int si = trans ? 1 : K, sj = trans ? K : 1; /* entry (i, j) at i si + j sj */
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        dst[i * si + j * sj] = (i == j ? tr : 0.0) - Q[i * 3 + j];
        dst[i * si + (3 + j) * sj] = Sa[i * 3 + j];
        dst[(3 + i) * si + j * sj] = -Sc[i * 3 + j];
        dst[(3 + i) * si + (3 + j) * sj] = i == j ? pm->s : 0.0;
      }
    if (K == 7) { /* scale: J_s = w a */
      double Qt[9], axa[3];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) Qt[i * 3 + j] = Q[j * 3 + i];
      cross_of(Qt, axa); /* sum wb wc a x a' */
      for (int i = 0; i < 3; ++i) {
        dst[i * si + 6 * sj] = axa[i];
        dst[(3 + i) * si + 6 * sj] = mc[i];
        dst[6 * si + i * sj] = -axa[i];
        dst[6 * si + (3 + i) * sj] = ma[i];
      }
      dst[6 * si + 6 * sj] = tr;
    }
  }
}

/* ---- the generic path (some bone affine): K = 12 ------------------------- */

/* Per active bone, J_vb = w_vb (E0 + sum_k p_k E_{1+k}) with E_m 3x12
 * (E[m*36 + i*12 + j]). Rigid bone, slots [w 0-2 | du 3-5 | ds 6]: E0 = du
 * identity, E_{1+k} = -[R e_k]x on w (a = R p rotates), R e_k on ds. Affine
 * bone, slots [dL 0-8 row-major | du 9-11]: E0 = du identity, E_{1+k} = e_r
 * on slot r*3+k (d(L p)/dL_rk = p_k e_r). */
static void jac_basis(const sks_solve_problem *p, const double *R, size_t b, double *E) {
  memset(E, 0, 144 * sizeof(double));
  if (p->affine[b]) {
    for (int r = 0; r < 3; ++r) {
      E[r * 12 + 9 + r] = 1;
      for (int k = 0; k < 3; ++k) E[(1 + k) * 36 + r * 12 + r * 3 + k] = 1;
    }
    return;
  }
  for (int r = 0; r < 3; ++r) E[r * 12 + 3 + r] = 1;
  for (int k = 0; k < 3; ++k) {
    double c[3] = {R[9 * b + k], R[9 * b + 3 + k], R[9 * b + 6 + k]}, S[9];
    skew(c, S);
    double *Ek = &E[(1 + k) * 36];
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) Ek[i * 12 + j] = -S[i * 3 + j];
      if (p->similarity) Ek[i * 12 + 6] = c[i];
    }
  }
}

/* F and g = J^T e from moments (as sks_moments_eval) for any linear parts R:
 * G_b = sum_v w_vb e_v [1 p^T] (3x4) from the pair moments, then
 * g_b = sum_m E_m^T G_b[:, m]. */
static double eval_generic(const sks_solve_problem *p, const double *Y, const double *ybar, double yy,
                           const double *R, const double *u, const int32_t *act, size_t nb,
                           double *E, double *G, double *g) {
  double F = yy;
  memset(G, 0, 12 * nb * sizeof(double));
  memset(g, 0, 12 * nb * sizeof(double));
  for (size_t b = 0; b < p->bone_count; ++b) {
    if (act[b] < 0) continue;
    const double *Rb = &R[9 * b], *Yb = &Y[9 * b];
    double tr = 0;
    for (int i = 0; i < 3; ++i)
      for (int l = 0; l < 3; ++l) tr += Rb[i * 3 + l] * Yb[l * 3 + i];
    F -= 2.0 * (tr + sks_d3_dot(&u[3 * b], &ybar[3 * b]));
    double *Gb = &G[12 * (size_t)act[b]];
    for (int r = 0; r < 3; ++r) {
      Gb[r * 4] -= ybar[3 * b + r];
      for (int k = 0; k < 3; ++k) Gb[r * 4 + 1 + k] -= Yb[k * 3 + r];
    }
  }
  for (size_t k = 0; k < p->pair_count; ++k) {
    const sks_pair_moments *pm = &p->pairs[k];
    if (act[pm->b] < 0 || act[pm->c] < 0) continue;
    const double *Rb = &R[9 * pm->b], *Rc = &R[9 * pm->c], *ub = &u[3 * pm->b], *uc = &u[3 * pm->c];
    double ma[3], mc[3], RcPt[9], RbP[9], trQ = 0;
    sks_dm3_apply(Rb, pm->mb, ma);
    sks_dm3_apply(Rc, pm->mc, mc);
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q) {
        double a = 0, c = 0;
        for (int l = 0; l < 3; ++l) {
          a += Rc[r * 3 + l] * pm->P[q * 3 + l];
          c += Rb[r * 3 + l] * pm->P[l * 3 + q];
        }
        RcPt[r * 3 + q] = a;
        RbP[r * 3 + q] = c;
      }
    for (int i = 0; i < 3; ++i)
      for (int l = 0; l < 3; ++l) trQ += Rb[i * 3 + l] * RcPt[i * 3 + l]; /* sum ww (Rb pb).(Rc pc) */
    double mult = pm->b == pm->c ? 1.0 : 2.0;
    F += mult * (trQ + sks_d3_dot(ma, uc) + sks_d3_dot(ub, mc) + pm->s * sks_d3_dot(ub, uc));
    double *Gb = &G[12 * (size_t)act[pm->b]];
    for (int r = 0; r < 3; ++r) {
      Gb[r * 4] += mc[r] + pm->s * uc[r];
      for (int q = 0; q < 3; ++q) Gb[r * 4 + 1 + q] += RcPt[r * 3 + q] + uc[r] * pm->mb[q];
    }
    if (pm->b != pm->c) {
      double *Gc = &G[12 * (size_t)act[pm->c]];
      for (int r = 0; r < 3; ++r) {
        Gc[r * 4] += ma[r] + pm->s * ub[r];
        for (int q = 0; q < 3; ++q) Gc[r * 4 + 1 + q] += RbP[r * 3 + q] + ub[r] * pm->mc[q];
      }
    }
  }
  for (size_t b = 0; b < p->bone_count; ++b) {
    if (act[b] < 0) continue;
    double *Eb = &E[144 * (size_t)act[b]], *gb = &g[12 * (size_t)act[b]];
    const double *Gb = &G[12 * (size_t)act[b]];
    jac_basis(p, R, b, Eb);
    for (int m = 0; m < 4; ++m)
      for (int i = 0; i < 3; ++i) {
        double v = Gb[i * 4 + m];
        if (v == 0) continue;
        const double *row = &Eb[m * 36 + i * 12];
        for (int j = 0; j < 12; ++j) gb[j] += row[j] * v;
      }
  }
  return F;
}

/* J^T J for K = 12 (layout as assemble): block(b,c) = sum_mn M_mn E_m^bT E_n^c,
 * M = [s mc^T; mb P]. Uses the E of the last eval_generic at this R. */
static void assemble_generic(const sks_solve_problem *p, const double *E, double *Hb) {
  const int K = 12, KK = 144;
  const sks_gn_pattern *pt = &p->gn;
  const int32_t *act = pt->act;
  memset(Hb, 0, pt->slot_count * KK * sizeof(double));
  for (size_t k = 0; k < p->pair_count; ++k) {
    const sks_pair_moments *pm = &p->pairs[k];
    if (pt->pair_slot[k] == UINT32_MAX) continue;
    const double *Eb = &E[144 * (size_t)act[pm->b]], *Ec = &E[144 * (size_t)act[pm->c]];
    double M[16];
    M[0] = pm->s;
    for (int q = 0; q < 3; ++q) {
      M[1 + q] = pm->mc[q];
      M[(1 + q) * 4] = pm->mb[q];
      for (int r = 0; r < 3; ++r) M[(1 + q) * 4 + 1 + r] = pm->P[q * 3 + r];
    }
    double blk[144] = {0};
    for (int n = 0; n < 4; ++n) {
      double T[36]; /* T_n = sum_m M_mn E_m^b (3x12) */
      memset(T, 0, sizeof T);
      for (int m = 0; m < 4; ++m) {
        double v = M[m * 4 + n];
        if (v == 0) continue;
        for (int q = 0; q < 36; ++q) T[q] += v * Eb[m * 36 + q];
      }
      const double *En = &Ec[n * 36];
      for (int r = 0; r < 3; ++r)
        for (int i = 0; i < K; ++i) {
          double t = T[r * 12 + i];
          if (t == 0) continue;
          for (int j = 0; j < K; ++j) blk[i * K + j] += t * En[r * 12 + j];
        }
    }
    store_block(pt, k, blk, K, pm->b == pm->c, Hb);
  }
  /* a rigid bone's unused slots: identity rows (g = 0 there, so x = 0) */
  for (size_t b = 0; b < p->bone_count; ++b) {
    if (act[b] < 0 || p->affine[b]) continue;
    double *blk = &Hb[(size_t)pt->col_start[pt->pos[act[b]]] * KK];
    for (int i = p->similarity ? 7 : 6; i < K; ++i) blk[i * K + i] = 1.0;
  }
}

static int damped_solve(const sks_gn_pattern *pt, const double *Hb, int K, const double *g, double lam,
                        double floor_, double *Lb, double *y, double *x) {
  if (sks_gn_use_avx2(pt)) return sks_gn_damped_solve_avx2(pt, Hb, K, g, lam, floor_, Lb, y, x);
  switch (K) {
  case 6: return damped_solve_impl(pt, Hb, 6, g, lam, floor_, Lb, y, x);
  case 7: return damped_solve_impl(pt, Hb, 7, g, lam, floor_, Lb, y, x);
  default: return damped_solve_impl(pt, Hb, 12, g, lam, floor_, Lb, y, x);
  }
}

/* Flat: its points in one plane through their centroid (to 1e-10 of their
 * spread), not a line; n that plane's unit normal. */
int sks_pair_moments_flat_normal(const sks_pair_moments *pm, double *n) {
  const double *P = pm->P;
  double tr = P[0] + P[4] + P[8], m = tr / 3;
  if (!(m > 0)) return 0;
  double minors = P[0] * P[4] - P[1] * P[3] + P[0] * P[8] - P[2] * P[6] + P[4] * P[8] - P[5] * P[7];
  if (sks_dm3_det(P) > 1e-10 * m * m * m || minors < 1e-6 * m * m) return 0; /* 3-D, or a line */
  return sks_dm3_null_dir(P, n);
}

/* A flat affine bone (a disk, a card) has no measure of its 3x3's column
 * along the plane's normal n, yet that column places the joint's origin off
 * the plane and makes the written local a rotation and scale, or a shear
 * that a TRS key cannot hold. It is set here as the two measured columns
 * make it: L n = (L a x L b) / sqrt|L a x L b| for a, b orthonormal in the
 * plane (a x b = n), the plane's orientation kept and its mean scale; the
 * clip's writer then picks the one its TRS keys hold (flat_trs.c). The
 * vertices do not move (they have no component along n). A line or a
 * point (two or three unmeasured columns) is left to the damping. */
static void complete_flat_bones(const sks_solve_problem *p, sks_solve_state *s, const int32_t *act) {
  for (size_t k = 0; k < p->pair_count; ++k) {
    const sks_pair_moments *pm = &p->pairs[k];
    size_t b = pm->b;
    if (pm->b != pm->c || act[b] < 0 || !p->affine[b]) continue;
    double n[3], e1[3], e2[3];
    if (!sks_pair_moments_flat_normal(pm, n)) continue;
    sks_d3_plane_basis(n, e1, e2); /* e1 x e2 = n */
    double L[9], La[3], Lb[3], Ln[3], c[3];
    memcpy(L, &s->R[9 * b], sizeof L);
    sks_dm3_apply(L, e1, La);
    sks_dm3_apply(L, e2, Lb);
    sks_dm3_apply(L, n, Ln);
    sks_d3_cross(La, Lb, c);
    double area = sqrt(sks_d3_dot(c, c));
    if (!(area > 0)) continue;
    for (int a = 0; a < 3; ++a) c[a] /= sqrt(area);
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q) L[3 * r + q] += (c[r] - Ln[r]) * n[q];
    sks_state_set_linear(s, b, L, s->q[b]);
  }
}

int sks_solve_gn(const sks_solve_problem *p, const double *y, sks_solve_state *s,
                 size_t max_iterations, double tol, sks_solve_stats *stats, double *scratch,
                 size_t scratch_count) {
  size_t B = p->bone_count;
  const sks_gn_pattern *pt = &p->gn;
  const int32_t *act = pt->act;
  if (B > SKS_GN_MAX_BONES || !act) return 0;
  const int generic = p->affine_count > 0 && p->affine && s->stretch;
  const int K = generic ? 12 : (p->similarity ? 7 : 6), KK = K * K;
  double *own = NULL;
  if (generic) { /* larger blocks: the caller's scratch is sized for K <= 7 */
    scratch_count = scratch_for(p, 12);
    own = scratch = malloc(scratch_count * sizeof(double));
    if (!own) return 0;
  } else if (scratch_count < scratch_for(p, 7)) {
    return 0;
  }
  size_t nb = pt->nb;
  size_t n = (size_t)K * nb;
  double *Hb = scratch, *Lb = Hb + B * B * KK, *g = Lb + B * B * KK, *x = g + n, *g2 = x + n,
         *yv = g2 + n;
  double *Rt = yv + n, *ut = Rt + 9 * B, *Y = ut + 3 * B, *ybar = Y + 9 * B;
  double *sct = ybar + 3 * B;
  /* generic path: Jacobian bases at the current and the trial state, G */
  double *E = NULL, *E2 = NULL, *G = NULL;
  if (generic) {
    E = sct + B + (B * B / 4 + 8);
    G = E + 144 * B;
    E2 = Lb; /* trial bases reuse L (free between factorisations): 144 B <= B B 144 */
  }
  /* the pairs' Q, Rb mb, Rc mc at the current state and at the trial one
   * (the J^T J assembly reuses what the objective's evaluation computed) */
  double *pcur = sct + B + (B * B / 4 + 8) + (generic ? 156 * B : 0);
  double *ptrial = pcur + SKS_GN_PAIR_CACHE * p->pair_count;
  sks_dquat *qt = (sks_dquat *)(void *)(ptrial + SKS_GN_PAIR_CACHE * p->pair_count); /* trial rotations */
  double d = p->scale > 0 ? p->scale : 1.0;
  /* this frame's moments: the only pass over the constraints */
  double yy = sks_moments_frame(p, y, Y, ybar);
  /* F comes from moments, so it is exact only to ~1e-15 of yy */
  double noise = 1e-13 * yy + 1e-300;
  double F = generic ? eval_generic(p, Y, ybar, yy, s->R, s->u, act, nb, E, G, g)
                     : sks_moments_eval(p, Y, ybar, yy, s->R, s->u, act, nb, K, g, pcur);
  sks_lm_control lm = {1e-6, 1e300, tol, d,
                       (double)p->inf.vertex_count * (1e-6 * d) * (1e-6 * d) + noise, 0};
  size_t it = 0;
  int converged = 0;
  while (it < max_iterations && !converged) {
    ++it;
    double maxdiag = 0;
    int solved = 0;
    if (generic) {
      assemble_generic(p, E, Hb);
      /* An affine bone whose points do not span 3-D (a flat part: a disk,
       * a card) leaves a column of its 3x3 that nothing measures: H ~ 0
       * there, and the diag(H) damping turned the rounding in g into steps
       * of any size (ASE/MotionCaptureROM.ase: a flat footstep disk's
       * normal column ran to 1e4 in a frame, every frame hit the iteration
       * limit, control worst 17.7 %D). A floor of 1e-6 of the bone's own
       * moment on its 9 linear entries bounds those steps; a measured
       * entry converges to the same answer (the floor is in H only). What
       * the unmeasured column should be is set after the solve
       * (complete_flat_bones). */
      for (size_t b = 0; b < B; ++b) {
        if (act[b] < 0 || !p->affine[b]) continue;
        double fl = 1e-6 * p->wsum2[b] * p->radius2[b] + 1e-300;
        double *db = &Hb[(size_t)pt->col_start[pt->pos[act[b]]] * KK];
        for (int k = 0; k < 9; ++k) db[k * (K + 1)] += fl;
      }
    } else {
      assemble(p, pcur, K, Hb);
    }
    for (size_t i = 0; i < nb; ++i)
      for (int k = 0; k < K; ++k) maxdiag = fmax(maxdiag, Hb[(size_t)pt->col_start[i] * KK + k * (K + 1)]);
    for (int attempt = 0; attempt < SKS_LM_ATTEMPTS && !solved; ++attempt) {
      if (!damped_solve(pt, Hb, K, g, lm.lam, 1e-30 * maxdiag + 1e-300, Lb, yv, x)) {
        lm.lam = fmax(lm.lam * 10, 1e-9);
        continue;
      }
      /* trial */
      double step = 0;
      for (size_t b = 0; b < B; ++b) {
        if (act[b] < 0) {
          memcpy(&Rt[9 * b], &s->R[9 * b], 9 * sizeof(double));
          memcpy(&ut[3 * b], &s->u[3 * b], 3 * sizeof(double));
          continue;
        }
        const double *xb = &x[K * act[b]];
        if (generic && p->affine[b]) { /* L += dL, u += du */
          double dl2 = 0;
          for (int k = 0; k < 9; ++k) { Rt[9 * b + k] = s->R[9 * b + k] + xb[k]; dl2 += xb[k] * xb[k]; }
          for (int k = 0; k < 3; ++k) ut[3 * b + k] = s->u[3 * b + k] + xb[9 + k];
          double sb = sqrt(dl2 * p->radius2[b]) + sqrt(sks_d3_dot(xb + 9, xb + 9));
          if (sb > step) step = sb;
          continue;
        }
        sks_dquat dq = sks_dq_from_rotvec(xb);
        sks_dquat qn = qt[b] = sks_dq_normalize(sks_dq_mul(dq, s->q[b]));
        double ds = p->similarity ? xb[6] : 0.0;
        ds = ds > 0.5 ? 0.5 : (ds < -0.5 ? -0.5 : ds);
        sct[b] = s->sc[b] * exp(ds);
        sks_dq_to_m3(qn, &Rt[9 * b]);
        for (int k = 0; k < 9; ++k) Rt[9 * b + k] *= sct[b];
        for (int k = 0; k < 3; ++k) ut[3 * b + k] = s->u[3 * b + k] + xb[3 + k];
        double sb = sqrt((sks_d3_dot(xb, xb) + ds * ds) * p->radius2[b]) * s->sc[b] +
                    sqrt(sks_d3_dot(xb + 3, xb + 3));
        if (sb > step) step = sb;
      }
      double Ft = generic ? eval_generic(p, Y, ybar, yy, Rt, ut, act, nb, E2, G, g2)
                          : sks_moments_eval(p, Y, ybar, yy, Rt, ut, act, nb, K, g2, ptrial);
      if (Ft < F + noise || step < tol * d) {
        double decrease = F - Ft;
        for (size_t b = 0; b < B; ++b) {
          if (act[b] < 0) continue;
          if (generic && p->affine[b]) {
            sks_state_set_linear(s, b, &Rt[9 * b], s->q[b]);
          } else { /* the trial's rotation; its R too when nothing else multiplies it */
            s->q[b] = qt[b];
            s->sc[b] = sct[b];
            if (s->stretch) sks_state_update_R(s, b);
            else memcpy(&s->R[9 * b], &Rt[9 * b], 9 * sizeof(double));
          }
          memcpy(&s->u[3 * b], &ut[3 * b], 3 * sizeof(double));
        }
        memcpy(g, g2, n * sizeof(double));
        if (generic) memcpy(E, E2, 144 * nb * sizeof(double));
        double *sw = pcur; pcur = ptrial; ptrial = sw;
        F = Ft;
        solved = 1;
        converged = sks_lm_accepted(&lm, step, decrease, F);
      } else {
        sks_lm_rejected(&lm);
      }
    }
    if (!solved) break;
  }
  if (generic) complete_flat_bones(p, s, act);
  if (stats) {
    stats->iterations = it;
    size_t nv = p->inf.vertex_count;
    stats->final_rms = nv ? sqrt(fmax(F, 0.0) / (double)nv) / d : 0;
  }
  free(own);
  return 1;
}
