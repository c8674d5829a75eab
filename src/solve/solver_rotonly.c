/* Rotation-only Levenberg-Marquardt. Unknowns: a world-frame rotation
 * increment w_b per constrained joint, applied to b's whole subtree about b's
 * origin o_b (children keep their rest offsets), plus a translation t_r for
 * each root joint (no constrained ancestor). An influence point x of bone c
 * moves by  sum_{b ancestor-or-self of c} w_b x (x - o_b)  + t_root(c), so
 * vertex v's Jacobian block for joint b is -[s_vb]x with
 * s_vb = sum_{i in v, bone(i) in subtree(b)} w_i (x_i - o_b), and W_vr I for a
 * root translation (W_vr = sum of those weights). Dense normal equations:
 * the parameter count is 3 per joint (+3 per root). J^T J is assembled from
 * the free solver's per-bone-pair moments (sum w1 w2, sum w1 w2 p1,
 * sum w1 w2 p2, sum w1 w2 p1 p2^T): each ordered pair of influence bones adds
 * to the blocks of their ancestors-or-self, so the cost per iteration is
 * pairs x depth^2, not vertices x (ancestors per vertex)^2. The per-bone
 * gradient sums come from the same moments plus the frame's
 * Y_b = sum w pl y^T (sks_moments_eval, shared with the free solver),
 * pushed up the tree; only the step test evaluates the objective exactly
 * (one pass over the influences per trial). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "solve/solve_internal.h"
#include "solve/solver_gn_kernels.h"

/* dense_solve: the rotation-only LM's envelope Cholesky, envelope_solve_impl
 * in solver_gn_kernels.h (also built with AVX2 + FMA, solver_gn_avx2.c). */
static int dense_solve(const sks_solve_problem *p, const double *H, const double *dd, const double *g, size_t n,
                       double lam, const uint32_t *perm, const uint32_t *first, double *L, double *x, double *z) {
  if (sks_gn_use_avx2(&p->gn)) return sks_envelope_solve_avx2(H, dd, g, n, lam, perm, first, L, x, z);
  return envelope_solve_impl(H, dd, g, n, lam, perm, first, L, x, z);
}

/* first[i] for dense_solve: the first position (in perm order) of any block
 * coupled with row i's block, at block granularity. Blocks a, b couple in H
 * exactly where the summed pair moments' s = sum w1 w2 (Am[.][15]) is
 * nonzero: the J^T J assembly skips the others, and the second-order term
 * only adds ancestor-descendant blocks, which always couple (a descendant's
 * own pair has s = sum w^2 > 0). sw: Am after the tree sums. */
static void envelope_of(const double *Am, const uint8_t *mark, size_t nA, const uint32_t *abone, const int32_t *ridx,
                        const int32_t *tidx, const uint32_t *ipos, uint32_t *first) {
  for (size_t ka = 0; ka < nA; ++ka) {
    uint32_t a = abone[ka], f = ipos[ridx[a]];
    for (size_t kb = 0; kb < nA; ++kb) {
      if (!mark[ka * nA + kb] || Am[(ka * nA + kb) * 16 + 15] == 0) continue;
      uint32_t b = abone[kb], pb = ipos[ridx[b]];
      if (tidx[b] >= 0 && ipos[tidx[b]] < pb) pb = ipos[tidx[b]];
      if (pb < f) f = pb;
    }
    for (int r = 0; r < 3; ++r) {
      first[ipos[ridx[a] + r]] = f;
      if (tidx[a] >= 0) first[ipos[tidx[a] + r]] = f;
    }
  }
  /* a block's own rows: first <= i always (f <= the block's first position) */
}

/* Applies the increments parent-first: rotate (and for roots translate) each
 * joint's subtree about its current origin. A bone's R (a function of its
 * q alone) is recomputed once, when its origin is next needed or at the
 * end, not once per rotated ancestor: the same bits. dirty: B scratch. */
static void apply_step(const sks_solve_problem *p, const sks_rotonly *ro, const int32_t *ridx,
                       const int32_t *tidx, const double *dx, const sks_solve_state *from,
                       sks_solve_state *to, uint8_t *dirty) {
  size_t B = p->bone_count;
  memcpy(to->q, from->q, B * sizeof(sks_dquat));
  memcpy(to->R, from->R, 9 * B * sizeof(double));
  memcpy(to->u, from->u, 3 * B * sizeof(double));
  memcpy(to->sc, from->sc, B * sizeof(double));
  memset(dirty, 0, B);
  for (size_t b = 0; b < B; ++b) {
    if (ridx[b] < 0) continue;
    if (dirty[b]) { sks_state_update_R(to, b); dirty[b] = 0; }
    sks_daffine A = sks_state_rigid(p, to, b);
    double o[3] = {A.t[0], A.t[1], A.t[2]}, t[3] = {0, 0, 0};
    if (tidx[b] >= 0) memcpy(t, &dx[tidx[b]], sizeof t);
    sks_dquat dq = sks_dq_from_rotvec(&dx[ridx[b]]);
    double dR[9];
    sks_dq_to_m3(dq, dR);
    for (uint32_t k = ro->sub_start[b]; k < ro->sub_start[b + 1]; ++k) {
      uint32_t c = ro->sub_bones[k];
      double d[3], r[3];
      for (int a = 0; a < 3; ++a) d[a] = to->u[3 * c + a] - o[a];
      sks_dm3_apply(dR, d, r);
      for (int a = 0; a < 3; ++a) to->u[3 * c + a] = r[a] + o[a] + t[a];
      to->q[c] = sks_dq_normalize(sks_dq_mul(dq, to->q[c]));
      dirty[c] = 1;
    }
  }
  for (size_t c = 0; c < B; ++c)
    if (dirty[c]) sks_state_update_R(to, c);
}

/* The second-order term of the Hessian, sum_v e_v . d2 x_v / dw_a dw_b, added
 * to H (J^T J). Gauss-Newton leaves it out, which is harmless when the
 * residual e is small or the parameters are local (the free solver rotates a
 * bone about its own centroid); here a joint rotates its whole subtree about
 * its pivot o_a, so the term grows with the subtree's extent and, on a rig
 * that cannot follow its source (a Mixamo-style control in rotation-only:
 * 0.1-0.5 %D mean residual), the steps zigzag: 10-30 LM iterations per frame
 * with rejected trials. With the increments applied parent-first (apply_step),
 * for an influence point x (weight w) of a bone in the subtree of b, d = x -
 * o_b:  (b, b): w [ (d e^T + e d^T) / 2 - (e.d) I ],  (a, b), a a strict
 * ancestor of b: w [ e d^T - (e.d) I ] (rows: a), and (b, a) its transpose;
 * joints on different branches and the root translations have none. Per
 * bone c, G_c = sum w e x^T (from the pairs' world moments of the J^T J
 * assembly) and E_c = sum w e (ec); sum w e d^T = G_c - E_c o_b^T. Only the
 * entries dense_solve reads are written (H's envelope copy, see its call):
 * row r, column c with ipos[r] >= ipos[c]. */
static void second_order(const sks_solve_problem *p, const double *ec, const double *piv, const int32_t *ridx,
                         const uint32_t *anc_start, const uint32_t *anc, const double *Gm, const uint32_t *ipos,
                         double *H, size_t n) {
  size_t B = p->bone_count;
  /* Gm: filled by the J^T J assembly (from the pairs' world moments) */
  for (size_t c = 0; c < B; ++c) {
    if (ridx[c] < 0) continue;
    const double *G = &Gm[9 * c], *E = &ec[6 * c + 3];
    for (uint32_t qb = anc_start[c]; qb < anc_start[c + 1]; ++qb) {
      uint32_t b = anc[qb];
      const size_t pb = ipos[ridx[b]];
      double M[9], tr;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) M[i * 3 + j] = G[i * 3 + j] - E[i] * piv[3 * b + j]; /* sum w e d_b^T */
      tr = M[0] + M[4] + M[8];
      /* (b, b): a block's 3 unknowns are consecutive in perm, so its
       * permuted lower triangle is i >= j */
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j <= i; ++j)
          H[(pb + i) * n + pb + j] += 0.5 * (M[i * 3 + j] + M[j * 3 + i]) - (i == j ? tr : 0.0);
      for (uint32_t qa = anc_start[c]; qa < qb; ++qa) { /* strict ancestors of b (the path above it) */
        const size_t pa = ipos[ridx[anc[qa]]];
        /* (a, b) or its transpose (b, a), whichever is in the lower triangle */
        const size_t rs = pa >= pb ? n : 1, cs = pa >= pb ? 1 : n;
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            H[(pa + i) * rs + (pb + j) * cs] += M[i * 3 + j] - (i == j ? tr : 0.0);
      }
    }
  }
}

/* The tree sums' recorded adds (block_adds_impl in solver_gn_kernels.h, also
 * built with AVX2, solver_gn_avx2.c: the same bits). */
static void block_adds(const sks_solve_problem *p, double *Am, const uint32_t *up, size_t count) {
  if (sks_gn_use_avx2(&p->gn)) sks_rotonly_block_adds_avx2(Am, up, count);
  else block_adds_impl(Am, up, count);
}

/* The solve's arrays, carved from one block (16-byte aligned pieces): with
 * base NULL, only the size. n unknowns, nA constrained bones, nsub subtree
 * entries. */
typedef struct rotonly_work {
  int32_t *ridx, *tidx, *root_of, *apar, *act;
  uint32_t *anc_start, *anc, *fill, *abone, *perm, *ipos, *first;
  /* the pair moments' block pattern (fixed for a problem: the pairs' s),
   * recorded at the first iteration and replayed by the others (at most nA^2
   * blocks each, block indices ka nA + kb): gm_start / gm_blk the unsummed
   * nonzero blocks per column, up the (src, dst) adds of the tree sums
   * (columns, then rows), hb the summed nonzero blocks the H assembly reads,
   * zb the blocks any of those write (zeroed per iteration), mark: zb's */
  uint32_t *gm_start, *gm_blk, *up, *hb, *zb;
  uint8_t *mark, *dirty;
  double *H, *L, *Hs, *g, *Gm, *Am, *ec, *piv, *Y, *z;
  /* per pair, Q = Rc P^T Rb^T, Rb mb and Rc mc as sks_moments_eval left
   * them at the state's R (pc) and at the trial's (pct): the J^T J
   * assembly's pair moments, not computed a second time */
  double *pc, *pct;
  sks_solve_state tr;
} rotonly_work;

/* The pivots (joint origins) of state s into piv, and the gradient g (n):
 * per bone c, C_c = sum w (R_c pl) x e and E_c = sum w e (ec, from the
 * moments); g_rot(a) = sum_{c in subtree(a)} C_c + (u_c - o_a) x E_c and
 * g_trans(r) = sum_{c in subtree(r)} E_c. */
static void gradient(const sks_solve_problem *p, const sks_solve_state *s, const double *ec, const int32_t *ridx,
                     const int32_t *tidx, const uint32_t *anc_start, const uint32_t *anc, double *piv, double *g,
                     size_t n) {
  const size_t B = p->bone_count;
  memset(g, 0, n * sizeof(double));
  for (size_t b = 0; b < B; ++b) {
    double rc[3];
    sks_dm3_apply(&s->R[9 * b], &p->centroid[3 * b], rc);
    for (int a = 0; a < 3; ++a) piv[3 * b + a] = s->u[3 * b + a] - rc[a];
  }
  for (size_t c = 0; c < B; ++c) {
    if (ridx[c] < 0) continue;
    const double *C = &ec[6 * c], *E = &ec[6 * c + 3];
    for (uint32_t q = anc_start[c]; q < anc_start[c + 1]; ++q) {
      uint32_t a = anc[q];
      double dc[3], cr[3];
      for (int r = 0; r < 3; ++r) dc[r] = s->u[3 * c + r] - piv[3 * a + r];
      sks_d3_cross(dc, E, cr);
      for (int r = 0; r < 3; ++r) g[ridx[a] + r] += C[r] + cr[r];
      if (tidx[a] >= 0) for (int r = 0; r < 3; ++r) g[tidx[a] + r] += E[r];
    }
  }
}

/* The trial state becomes the state. */
static void take_trial(sks_solve_state *s, const sks_solve_state *tr, size_t B) {
  memcpy(s->q, tr->q, B * sizeof(sks_dquat));
  memcpy(s->R, tr->R, 9 * B * sizeof(double));
  memcpy(s->u, tr->u, 3 * B * sizeof(double));
  memcpy(s->sc, tr->sc, B * sizeof(double));
}

/* The largest point motion of increments dx (the LM's step measure). */
static double step_size(const sks_solve_problem *p, const int32_t *ridx, const int32_t *tidx, const double *dx) {
  double step = 0;
  for (size_t b = 0; b < p->bone_count; ++b) {
    if (ridx[b] < 0) continue;
    double sb = sqrt(sks_d3_dot(&dx[ridx[b]], &dx[ridx[b]]) * (p->radius2[b] + 0.0)) +
                (tidx[b] >= 0 ? sqrt(sks_d3_dot(&dx[tidx[b]], &dx[tidx[b]])) : 0.0);
    if (sb > step) step = sb;
  }
  return step;
}

static void *take(char *base, size_t *off, size_t bytes) {
  size_t o = (*off + 15) & ~(size_t)15;
  *off = o + (bytes ? bytes : 1);
  return base ? base + o : NULL;
}

static size_t rotonly_layout(char *base, size_t B, size_t n, size_t nA, size_t nsub, size_t npairs, rotonly_work *w) {
  size_t off = 0, B1 = B ? B : 1;
  w->pc = take(base, &off, npairs * SKS_GN_PAIR_CACHE * sizeof(double));
  w->pct = take(base, &off, npairs * SKS_GN_PAIR_CACHE * sizeof(double));
  w->ridx = take(base, &off, B1 * 2 * sizeof(int32_t));
  w->tidx = w->ridx ? w->ridx + B : NULL;
  w->anc_start = take(base, &off, (B + 1) * sizeof(uint32_t));
  w->anc = take(base, &off, nsub * sizeof(uint32_t));
  w->fill = take(base, &off, B1 * sizeof(uint32_t));
  w->root_of = take(base, &off, B1 * sizeof(int32_t));
  w->H = take(base, &off, n * n * sizeof(double));
  w->L = take(base, &off, n * n * sizeof(double));
  w->Hs = take(base, &off, n * n * sizeof(double));
  w->g = take(base, &off, n * 3 * sizeof(double));
  w->z = take(base, &off, n * sizeof(double));
  w->perm = take(base, &off, n * sizeof(uint32_t));
  w->ipos = take(base, &off, n * sizeof(uint32_t));
  w->first = take(base, &off, n * sizeof(uint32_t));
  w->Gm = take(base, &off, B1 * 9 * sizeof(double));
  w->abone = take(base, &off, nA * sizeof(uint32_t));
  w->apar = take(base, &off, nA * sizeof(int32_t));
  w->Am = take(base, &off, nA * nA * 16 * sizeof(double));
  w->gm_start = take(base, &off, (nA + 1) * sizeof(uint32_t));
  w->gm_blk = take(base, &off, nA * nA * sizeof(uint32_t));
  w->up = take(base, &off, 4 * nA * nA * sizeof(uint32_t));
  w->hb = take(base, &off, nA * nA * sizeof(uint32_t));
  w->zb = take(base, &off, nA * nA * sizeof(uint32_t));
  w->mark = take(base, &off, nA * nA);
  w->dirty = take(base, &off, B1);
  w->ec = take(base, &off, B1 * 12 * sizeof(double));
  w->piv = take(base, &off, B1 * 3 * sizeof(double));
  w->Y = take(base, &off, B1 * 12 * sizeof(double));
  w->act = take(base, &off, B1 * sizeof(int32_t));
  w->tr.q = take(base, &off, B1 * sizeof(sks_dquat));
  w->tr.R = take(base, &off, B1 * 9 * sizeof(double));
  w->tr.u = take(base, &off, B1 * 3 * sizeof(double));
  w->tr.sc = take(base, &off, B1 * sizeof(double));
  w->tr.stretch = NULL;
  return off + 16;
}

/* Unknowns (3 per constrained bone, 3 more per constrained root) and
 * constrained bones. */
static size_t rotonly_unknowns(const sks_solve_problem *p, const sks_rotonly *ro, size_t *nA) {
  size_t n = 0;
  *nA = 0;
  for (size_t b = 0; b < p->bone_count; ++b)
    if (p->wsum2[b] > 0) { n += ro->bone_is_root[b] ? 6 : 3; ++*nA; }
  return n;
}

size_t sks_solve_rotonly_work_size(const sks_solve_problem *p, const sks_rotonly *ro) {
  size_t nA, n = rotonly_unknowns(p, ro, &nA);
  rotonly_work w;
  if (n == 0 || n > 900) return 0; /* the solve does not run */
  return rotonly_layout(NULL, p->bone_count, n, nA, ro->sub_start[p->bone_count], p->pair_count, &w);
}

int sks_solve_rotonly_gn(const sks_solve_problem *p, const double *y, sks_solve_state *s,
                         const sks_rotonly *ro, size_t max_iterations, double tol,
                         sks_solve_stats *stats) {
  size_t B = p->bone_count, V = p->inf.vertex_count;
  size_t nA, n = rotonly_unknowns(p, ro, &nA), nsub = ro->sub_start[B];
  if (n == 0 || n > 900) return 0;
  rotonly_work w;
  size_t need = rotonly_layout(NULL, B, n, nA, nsub, p->pair_count, &w);
  /* the caller's workspace (the bake's frame loop: never allocates); a
   * caller without one gets a block of its own */
  char *own = NULL, *base = ro->work && ro->work_size >= need ? ro->work : (own = malloc(need));
  if (!base) return 0;
  base += (16 - (uintptr_t)base % 16) % 16; /* need includes 16 bytes of slack for this */
  rotonly_layout(base, B, n, nA, nsub, p->pair_count, &w);
  double *pc = w.pc, *pct = w.pct;
  int32_t *ridx = w.ridx, *tidx = w.tidx, *root_of = w.root_of, *apar = w.apar, *act = w.act;
  uint32_t *anc_start = w.anc_start, *anc = w.anc, *fill = w.fill, *abone = w.abone, *perm = w.perm, *ipos = w.ipos;
  uint32_t *gm_start = w.gm_start, *gm_blk = w.gm_blk, *up = w.up, *hb = w.hb, *zb = w.zb;
  uint8_t *mark = w.mark;
  size_t nup = 0, nhb = 0, nzb = 0; /* the lists' lengths (the first iteration's) */
  double *H = w.H, *L = w.L, *Hs = w.Hs, *g = w.g, *dx = g + n, *dd = dx + n, *Gm = w.Gm, *Am = w.Am;
  /* per bone: [sum w (R pl) x e, sum w e] of the state and of the trial */
  double *ec = w.ec, *ec2 = ec + 6 * B, *piv = w.piv, *Y = w.Y, *ybar = Y + 9 * B;
  sks_solve_state tr = w.tr;
  n = 0;
  for (size_t b = 0; b < B; ++b) ridx[b] = p->wsum2[b] > 0 ? (int32_t)(n += 3) - 3 : -1;
  for (size_t b = 0; b < B; ++b) tidx[b] = (ridx[b] >= 0 && ro->bone_is_root[b]) ? (int32_t)(n += 3) - 3 : -1;
  { /* the factor's order (dense_solve): rotations children first, then the root translations */
    size_t q = 0;
    for (size_t b = B; b-- > 0;) {
      if (ridx[b] >= 0) for (int r = 0; r < 3; ++r) perm[q++] = (uint32_t)(ridx[b] + r);
      if (tidx[b] >= 0) for (int r = 0; r < 3; ++r) perm[q++] = (uint32_t)(tidx[b] + r);
    }
    for (size_t i = 0; i < n; ++i) ipos[perm[i]] = (uint32_t)i;
  }
  /* ancestors-or-self (constrained) of each bone, from the subtree lists;
   * per bone: G_c = sum w e x^T over its influences (x: the influence's
   * current position), for the second-order term; active bones (ascending
   * = parent-first), each one's nearest active ancestor, and the per-(bone,
   * bone) world moments (16 each: X, alpha, beta, s); nA <= 300 (n <= 900) */
  memset(anc_start, 0, (B + 1) * sizeof(uint32_t));
  memset(fill, 0, (B ? B : 1) * sizeof(uint32_t));
  memset(Gm, 0, (B ? B : 1) * 9 * sizeof(double));
  int ok = 1;
  size_t it = 0;
  double F = 0;
  if (ok) {
    for (size_t b = 0; b < B; ++b)
      for (uint32_t k = ro->sub_start[b]; k < ro->sub_start[b + 1]; ++k) anc_start[ro->sub_bones[k] + 1]++;
    for (size_t b = 0; b < B; ++b) anc_start[b + 1] += anc_start[b];
    for (size_t b = 0; b < B; ++b) root_of[b] = -1;
    for (size_t b = 0; b < B; ++b) /* b ascending = parent-first: roots come first */
      for (uint32_t k = ro->sub_start[b]; k < ro->sub_start[b + 1]; ++k) {
        uint32_t c = ro->sub_bones[k];
        anc[anc_start[c] + fill[c]++] = (uint32_t)b;
        if (ro->bone_is_root[b]) root_of[c] = (int32_t)b;
      }
    for (size_t b = 0, k = 0; b < B; ++b) {
      if (ridx[b] < 0) continue;
      abone[k] = (uint32_t)b;
      apar[k] = -1;
      for (uint32_t q = anc_start[b + 1]; q-- > anc_start[b];) /* ancestors ascending, b itself last */
        if (anc[q] != b && ridx[anc[q]] >= 0) { apar[k] = ridx[anc[q]] / 3; break; }
      ++k;
    }
    double d = p->scale > 0 ? p->scale : 1.0;
    /* per-bone gradient sums from the frame moments (one pass over the
     * constraints per frame) and the pair moments; the objective exactly */
    for (size_t b = 0; b < B; ++b) act[b] = ridx[b] >= 0 ? (int32_t)b : -1;
    double yy = sks_moments_frame(p, y, Y, ybar);
    /* F from the moments too (exact to ~1e-15 of yy, like the free LM): a
     * pass over the vertices per trial was a fifth of the solve */
    F = sks_moments_eval(p, Y, ybar, yy, s->R, s->u, act, B, 6, ec, pc);
    double noise = 1e-13 * yy + 1e-300;
    sks_lm_control lm = {1e-6, 1e300, tol, d, (double)V * (1e-6 * d) * (1e-6 * d) + noise, 0};
    int converged = 0, have_g = 0; /* have_g: g and piv are the state's already */
    while (it < max_iterations && !converged) {
      ++it;
      if (!have_g) gradient(p, s, ec, ridx, tidx, anc_start, anc, piv, g, n);
      have_g = 0;
      /* J^T J from the per-bone-pair moments (no pass over the vertices).
       * Block (a, b) sums, over the ordered influence-bone pairs (c1, c2)
       * with c1 in a's subtree and c2 in b's, G = sum w1 w2 (x1 - o_a)(x2 -
       * o_b)^T = X - o_a beta^T - alpha o_b^T + s o_a o_b^T with the pair's
       * world moments X = sum w1 w2 x1 x2^T, alpha = sum w1 w2 x1, beta =
       * sum w1 w2 x2, s = sum w1 w2: those are summed per (c1, c2) once, then
       * up the tree (columns, then rows), nb^2 work instead of pairs x
       * depth^2 3x3 blocks (the rotation-only solve's hot loop). */
      /* the first iteration zeroes a block when it first touches it (mark;
       * an untouched block is never read): the whole nA^2 table (128 bytes
       * a pair of constrained joints: 62 KB for the Fox's auto-weights
       * rig, nA = 22) was written every frame */
      if (it == 1) {
        memset(mark, 0, nA * nA);
      } else {
        for (size_t q = 0; q < nzb; ++q) memset(&Am[(size_t)zb[q] * 16], 0, 16 * sizeof(double));
      }
      for (size_t k = 0; k < p->pair_count; ++k) {
        const sks_pair_moments *pm = &p->pairs[k];
        if (ridx[pm->b] < 0 || ridx[pm->c] < 0) continue;
        /* (b, c) once; (c, b) is its transpose: X^T, alpha and beta swapped */
        const uint32_t c1 = pm->b, c2 = pm->c;
        const double *u1 = &s->u[3 * c1], *u2 = &s->u[3 * c2];
        /* R1 P R2^T = Q^T, R1 mb, R2 mc: as sks_moments_eval computed them
         * for this state (its pair cache) */
        const double *Q = &pc[SKS_GN_PAIR_CACHE * k], *m1 = Q + 9, *m2 = Q + 12;
        double X[9], al[3], be[3];
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            X[i * 3 + j] = Q[j * 3 + i] + u1[i] * m2[j] + m1[i] * u2[j] + pm->s * u1[i] * u2[j];
        for (int i = 0; i < 3; ++i) { al[i] = m1[i] + pm->s * u1[i]; be[i] = m2[i] + pm->s * u2[i]; }
        const size_t b12 = (size_t)(ridx[c1] / 3) * nA + (size_t)(ridx[c2] / 3);
        const size_t b21 = (size_t)(ridx[c2] / 3) * nA + (size_t)(ridx[c1] / 3);
        if (it == 1 && !mark[b12]) { memset(&Am[b12 * 16], 0, 16 * sizeof(double)); mark[b12] = 1; }
        if (it == 1 && !mark[b21]) { memset(&Am[b21 * 16], 0, 16 * sizeof(double)); mark[b21] = 1; }
        double *A = &Am[b12 * 16];
        for (int e = 0; e < 9; ++e) A[e] += X[e];
        for (int i = 0; i < 3; ++i) { A[9 + i] += al[i]; A[12 + i] += be[i]; }
        A[15] += pm->s;
        if (c1 != c2) {
          A = &Am[b21 * 16];
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) A[i * 3 + j] += X[j * 3 + i];
          for (int i = 0; i < 3; ++i) { A[9 + i] += be[i]; A[12 + i] += al[i]; }
          A[15] += pm->s;
        }
      }
      /* per bone c, G_c = sum w e x^T (the second-order term's) from the
       * unsummed X: sum_c1 X(c1, c) - sum w y x^T */
      if (it == 1) { /* the unsummed pattern, per column */
        size_t q = 0;
        for (size_t kc = 0; kc < nA; ++kc) {
          gm_start[kc] = (uint32_t)q;
          for (size_t k1 = 0; k1 < nA; ++k1)
            if (mark[k1 * nA + kc] && Am[(k1 * nA + kc) * 16 + 15] != 0) gm_blk[q++] = (uint32_t)(k1 * nA + kc);
        }
        gm_start[nA] = (uint32_t)q;
      }
      for (size_t kc = 0; kc < nA; ++kc) {
        size_t c = abone[kc];
        const double *R = &s->R[9 * c], *Yc = &Y[9 * c], *u = &s->u[3 * c], *yb = &ybar[3 * c];
        double *G = &Gm[9 * c];
        for (int i = 0; i < 3; ++i) /* sum w y (R p + u)^T = Y^T R^T + ybar u^T */
          for (int j = 0; j < 3; ++j) {
            double v = 0;
            for (int q = 0; q < 3; ++q) v += Yc[q * 3 + i] * R[j * 3 + q];
            G[i * 3 + j] = -(v + yb[i] * u[j]);
          }
        for (uint32_t q = gm_start[kc]; q < gm_start[kc + 1]; ++q) {
          const double *A = &Am[(size_t)gm_blk[q] * 16];
          for (int e = 0; e < 9; ++e) G[e] += A[e];
        }
      }
      if (it == 1) { /* the tree sums, recording their adds */
        for (size_t k2 = nA; k2-- > 0;) /* columns: c2 up to its ancestors (children first) */
          if (apar[k2] >= 0)
            for (size_t k1 = 0; k1 < nA; ++k1) {
              const size_t sb = k1 * nA + k2, db = k1 * nA + (size_t)apar[k2];
              if (!mark[sb] || Am[sb * 16 + 15] == 0) continue; /* no pair (s = sum w1 w2 > 0 for any) */
              if (!mark[db]) memset(&Am[db * 16], 0, 16 * sizeof(double));
              block_add16(&Am[db * 16], &Am[sb * 16]);
              up[nup++] = (uint32_t)sb;
              up[nup++] = (uint32_t)db;
              mark[db] = 1;
            }
        for (size_t k1 = nA; k1-- > 0;) /* rows */
          if (apar[k1] >= 0)
            for (size_t k2 = 0; k2 < nA; ++k2) {
              const size_t sb = k1 * nA + k2, db = (size_t)apar[k1] * nA + k2;
              if (!mark[sb] || Am[sb * 16 + 15] == 0) continue;
              if (!mark[db]) memset(&Am[db * 16], 0, 16 * sizeof(double));
              block_add16(&Am[db * 16], &Am[sb * 16]);
              up[nup++] = (uint32_t)sb;
              up[nup++] = (uint32_t)db;
              mark[db] = 1;
            }
        envelope_of(Am, mark, nA, abone, ridx, tidx, ipos, w.first); /* the pattern is the pairs' */
        for (size_t ka = 0; ka < nA; ++ka) /* the blocks the H assembly writes from */
          for (size_t kb = 0; kb < nA; ++kb) {
            const size_t k = ka * nA + kb;
            if (mark[k]) zb[nzb++] = (uint32_t)k;
            if (!mark[k] || Am[k * 16 + 15] == 0) continue;
            int ia = ridx[abone[ka]], tb = tidx[abone[kb]];
            if (ipos[ia] >= ipos[ridx[abone[kb]]] || tb >= 0) hb[nhb++] = (uint32_t)k;
          }
      } else {
        block_adds(p, Am, up, nup / 2);
      }
      for (size_t i = 0; i < n; ++i) /* zero H's envelope (what dense_solve reads and the assembly writes) */
        memset(&H[i * n + w.first[i]], 0, (i + 1 - w.first[i]) * sizeof(double));
      for (size_t q = 0; q < nhb; ++q) {
        const size_t ka = hb[q] / nA, kb = hb[q] % nA;
        const double *A = &Am[(size_t)hb[q] * 16], *al = A + 9, *be = A + 12;
        const double sw = A[15];
        size_t a = abone[ka], b = abone[kb];
        /* positions (perm order) of a's and b's rotations and translations */
        const size_t pa = ipos[ridx[a]], pb = ipos[ridx[b]];
        const size_t pta = tidx[a] >= 0 ? ipos[tidx[a]] : 0, ptb = tidx[b] >= 0 ? ipos[tidx[b]] : 0;
        const int ta = tidx[a], tb = tidx[b];
        const double *oa = &piv[3 * a], *ob = &piv[3 * b];
        /* rot a - rot b: sum (sa.sb) I - sb sa^T = tr(G) I - G^T; only
         * where the factor reads it (the permuted lower triangle: rows
         * at or after the column; the block (b, a) is its transpose) */
        if (pa >= pb) {
          double G[9];
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
              G[i * 3 + j] = A[i * 3 + j] - oa[i] * be[j] - al[i] * ob[j] + sw * oa[i] * ob[j];
          double trG = G[0] + G[4] + G[8];
          for (int r = 0; r < 3; ++r)
            for (int cc = 0; cc < 3; ++cc)
              H[(pa + r) * n + pb + cc] += (r == cc ? trG : 0.0) - G[cc * 3 + r];
        }
        /* rot a - trans b: [va]x, va = sum w1 w2 (x1 - o_a); trans a - trans b: s I */
        if (tb >= 0) {
          double va[3] = {al[0] - sw * oa[0], al[1] - sw * oa[1], al[2] - sw * oa[2]};
          double Sk[9] = {0, -va[2], va[1], va[2], 0, -va[0], -va[1], va[0], 0};
          /* the lower (permuted) one of the two transposed blocks */
          if (pa >= ptb)
            for (int r = 0; r < 3; ++r)
              for (int cc = 0; cc < 3; ++cc) H[(pa + r) * n + ptb + cc] += Sk[r * 3 + cc];
          else
            for (int r = 0; r < 3; ++r)
              for (int cc = 0; cc < 3; ++cc) H[(ptb + cc) * n + pa + r] += Sk[r * 3 + cc];
          if (ta >= 0 && pta >= ptb)
            for (int r = 0; r < 3; ++r) H[(pta + r) * n + ptb + r] += sw;
        }
      }
      /* isotropic per 3 unknowns (a joint's rotation, a root's
       * translation): the mean of the block's diagonal. Each entry alone
       * (Marquardt's scaling) depends on the axes of the bind space, so a
       * file whose vertex data an export rotated took another path to
       * another point of a flat minimum (a registration's) */
#define SKS_HD(i) H[(size_t)ipos[(i)] * (n + 1)] /* H's diagonal entry of unknown i */
      for (size_t i = 0; i + 2 < n; i += 3) dd[i] = dd[i + 1] = dd[i + 2] = (SKS_HD(i) + SKS_HD(i + 1) + SKS_HD(i + 2)) / 3;
      for (size_t i = n - n % 3; i < n; ++i) dd[i] = SKS_HD(i);
#undef SKS_HD
      for (size_t i = 0; i < n; ++i) /* H's envelope (what dense_solve reads), then the second-order term */
        memcpy(&Hs[i * n + w.first[i]], &H[i * n + w.first[i]], (i + 1 - w.first[i]) * sizeof(double));
      second_order(p, ec, piv, ridx, anc_start, anc, Gm, ipos, Hs, n);
      /* the Newton step (Hs) first; when Hs is not positive definite at this
       * damping (far from the minimum) or its step is rejected, the
       * Gauss-Newton matrix for the rest of the iteration */
      int solved = 0, newton = 1;
      for (int attempt = 0; attempt < SKS_LM_ATTEMPTS && !solved; ++attempt) {
        if (!dense_solve(p, newton ? Hs : H, dd, g, n, lm.lam, perm, w.first, L, dx, w.z)) {
          if (newton) { newton = 0; continue; }
          lm.lam = fmax(lm.lam * 10, 1e-9);
          continue;
        }
        double step = step_size(p, ridx, tidx, dx);
        apply_step(p, ro, ridx, tidx, dx, s, &tr, w.dirty);
        double Ft = sks_moments_eval(p, Y, ybar, yy, tr.R, tr.u, act, B, 6, ec2, pct);
        if (Ft < F + noise || step < tol * d) {
          double decrease = F - Ft;
          take_trial(s, &tr, B);
          F = Ft;
          memcpy(ec, ec2, 6 * B * sizeof(double));
          { double *t = pc; pc = pct; pct = t; } /* the trial's pair moments are the state's now */
          solved = 1;
          converged = sks_lm_accepted(&lm, step, decrease, F);
          /* after a Newton step: what the next one would gain, from the
           * gradient at the new state and the factor just used (the Newton
           * decrement g^T Hs^-1 g; on the Fox's Walk it gave the next
           * iteration's decrease within 3 % near the end, 30 % two
           * iterations before it). Under 1e-6 of F (the RMS error
           * cannot change by 5e-7 of itself), moving no point 1e-4 D: done,
           * without the iteration that would only confirm it (the bounds of
           * sks_lm_accepted's tests). A control (F -> 0) never passes: what
           * is left there is about F itself. */
          if (!converged && newton) {
            /* into g: the attempts are over, and the next iteration starts from it */
            gradient(p, s, ec, ridx, tidx, anc_start, anc, piv, g, n);
            have_g = 1;
            /* the factor's 1 / L_ii into dd (rebuilt next iteration) */
            for (size_t i = 0; i < n; ++i) dd[i] = 1.0 / L[i * n + i];
            const double dec = envelope_forward(L, dd, w.first, perm, n, g, w.z);
            envelope_back(L, dd, w.first, perm, n, w.z, dx);
            const double next = step_size(p, ridx, tidx, dx);
            if (dec < 1e-6 * F) converged = next < 1e-4 * d;
            /* Quadratic convergence (a control, F -> 0): that next step
             * is known without the iteration that would compute it anew.
             * The factor is of the state one step back, so the step misses
             * the exact Newton step by ~C |last step| |next| with C ~ |next|
             * / |last|^2 (quadratic convergence): |next|^2 / |last|. Taken
             * as it is when that is under 1e-9 D (a hundredth of a
             * control's float rounding) and |next| under 1e-5 D, it ends
             * the solve, when it does not raise F. The Fox control,
             * rotation-only (a frame's steps 0.013 -> 0.0027 -> 2.9e-4 ->
             * 1.7e-6 D, the last iteration confirming what the factor gave):
             * Run / Walk / Survey 4.25 / 4.72 / 2.33 -> 3.64 / 4.22 / 1.92
             * iterations a frame; its rotation-only solve time 8.06-8.78 ->
             * 7.48-8.05 ms (bench_bake modes, 3 runs interleaved with the
             * build before). */
            else if (next < 1e-5 * d && next * next < 1e-9 * d * step) {
              apply_step(p, ro, ridx, tidx, dx, s, &tr, w.dirty);
              double Fp = sks_moments_eval(p, Y, ybar, yy, tr.R, tr.u, act, B, 6, ec2, pct);
              if (Fp < F + noise) {
                take_trial(s, &tr, B);
                F = Fp;
                converged = 1;
              }
            }
          }
        } else if (newton) {
          newton = 0; /* the same damping, Gauss-Newton */
        } else {
          sks_lm_rejected(&lm);
        }
      }
      if (!solved) break;
    }
  }
  if (stats) {
    stats->iterations = it;
    /* F from the moments can round below 0 at a control's solution: 0, not
     * NaN (a NaN residual failed every later comparison: the retry test,
     * the seams' match, the free steps' test) */
    stats->final_rms = V ? sqrt(fmax(F, 0.0) / (double)V) / (p->scale > 0 ? p->scale : 1.0) : 0;
  }
  free(own);
  return ok;
}
