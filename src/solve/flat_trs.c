/* Flat affine bones written as TRS keys (bake.c state_to_locals calls it).
 *
 * A flat affine bone (its points in one plane: a card, a decal, a cape
 * strip, a Biped's footstep disk) measures two columns of its 3x3; the
 * solver completes the third from them (solver_gn.c complete_flat_bones), a
 * choice no point sees. But the clip is written as TRS keys, and the
 * written local of the joint, K = parent^-1 * model, is a rotation times an
 * axis scale only for some third columns: another one leaves a shear the
 * keys drop, and the clip as played is off (the flat disk of test_bake
 * under +-25 % 3-axis scale keys: 1.02 %D worst for a control; the card
 * skinned over its chain of bones: 97.17 %, 7.87 %D).
 *
 * So the third column is chosen again, as one that makes K = R diag(s) with
 * the measured columns as they are. For f1, f2 spanning the measured
 * directions of the local (k_i = K f_i known), K^T K = diag(s^2) gives three
 * equations linear in s^2: f1' S f1 = |k1|^2, f2' S f2 = |k2|^2,
 * f1' S f2 = k1 . k2 (M s^2 = r); R takes diag(s) f1, diag(s) f2 onto k1, k2,
 * and the new column is K g = R diag(s) g (g: the plane's normal in the
 * local). When the plane holds one of the local's axes, M is singular and
 * one scale is in neither column: s^2 = x + tau z (z spanning M's null
 * space). What decides tau is the bones below: their locals must be TRS
 * too, which holds for one or two values (the condition is quadratic);
 * tau is scanned over four decades of the s^2 that moves most with it,
 * each local minimum of the children's shear refined by golden sections
 * on either side, and among the minima that reach the least shear the one
 * whose subtree (FLAT_LOOKAHEAD levels down) ends least sheared wins, then
 * the one nearest the joint's rest scale. Nothing below deciding tau: the
 * completion's column norms (or the nearest positive point of the line).
 * For a control every choice is then the true one: the flat disk 2.9e-5 %D,
 * the card chain 1.4e-4 %D worst (test_bake test_flat_part_scale).
 *
 * Work bound: the scans evaluate the children's shear; each frame's
 * evaluations are counted against FLAT_BUDGET x (affine bones + 1), at most
 * FLAT_BUDGET_MAX, and once it is spent the remaining bones keep the
 * completion (deterministic: the count depends on the data only). */
#include <float.h>
#include <math.h>
#include <string.h>
#include "solve/solve_internal.h"

#define FLAT_SCAN 64       /* samples of tau's scan */
#define FLAT_GOLDEN 50     /* golden-section steps per side of a minimum */
#define FLAT_LOOKAHEAD 2   /* levels of the subtree a choice looks down */
#define FLAT_BUDGET 20000 /* shear evaluations per frame and affine bone (the test card uses < 4000) */
#define FLAT_BUDGET_MAX 500000 /* and per frame in all (~0.2 s) */

typedef struct flat_bone {
  double n[3], K[9], g[3], gg, f1[3], f2[3], k1[3], k2[3], M[9], r[3], s0[3];
} flat_bone;

/* The plane, the local's linear part K = W L(a) Q and the equations; 0 when
 * the bone is not flat. */
static int flat_bone_setup(const sks_solve_problem *p, size_t b, const double *W, const double *Q, const sks_daffine *a,
                           flat_bone *fb) {
  const sks_pair_moments *pm = NULL;
  for (size_t k = 0; k < p->pair_count && !pm; ++k)
    if (p->pairs[k].b == b && p->pairs[k].c == b) pm = &p->pairs[k];
  if (!pm || !sks_pair_moments_flat_normal(pm, fb->n)) return 0;
  double WL[9], Qt[9];
  sks_dm3_mul_to(W, a->l, WL);
  sks_dm3_mul_to(WL, Q, fb->K);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) Qt[3 * i + j] = Q[3 * j + i];
  sks_dm3_apply(Qt, fb->n, fb->g); /* L(a) += d n^T changes K by (W d) g^T */
  fb->gg = sks_d3_dot(fb->g, fb->g);
  if (!(fb->gg > 0)) return 0;
  double gu[3] = {fb->g[0] / sqrt(fb->gg), fb->g[1] / sqrt(fb->gg), fb->g[2] / sqrt(fb->gg)};
  sks_d3_plane_basis(gu, fb->f1, fb->f2);
  sks_dm3_apply(fb->K, fb->f1, fb->k1);
  sks_dm3_apply(fb->K, fb->f2, fb->k2);
  fb->r[0] = sks_d3_dot(fb->k1, fb->k1);
  fb->r[1] = sks_d3_dot(fb->k2, fb->k2);
  fb->r[2] = sks_d3_dot(fb->k1, fb->k2);
  for (int i = 0; i < 3; ++i) {
    fb->M[i] = fb->f1[i] * fb->f1[i];
    fb->M[3 + i] = fb->f2[i] * fb->f2[i];
    fb->M[6 + i] = fb->f1[i] * fb->f2[i];
    fb->s0[i] = fb->K[i] * fb->K[i] + fb->K[3 + i] * fb->K[3 + i] + fb->K[6 + i] * fb->K[6 + i];
  }
  return 1;
}

/* Least squares of M x = r, pulled eps x trace toward x0 (eps 0: plain);
 * the normalised residual |M x - r|^2 / |r|^2, -1 when singular. */
static double gram_solve(const double *M, const double *r, const double *x0, double eps, double *x) {
  double N[9], rhs[3], tr = 0, Ni[9];
  for (int i = 0; i < 3; ++i) {
    rhs[i] = 0;
    for (int j = 0; j < 3; ++j) {
      N[3 * i + j] = M[i] * M[j] + M[3 + i] * M[3 + j] + M[6 + i] * M[6 + j];
      rhs[i] += M[3 * j + i] * r[j];
    }
    tr += N[4 * i];
  }
  for (int i = 0; i < 3 && eps > 0; ++i) { N[4 * i] += eps * tr; rhs[i] += eps * tr * x0[i]; }
  if (!sks_dm3_inverse(N, Ni)) return -1;
  sks_dm3_apply(Ni, rhs, x);
  double res = 0, rr = sks_d3_dot(r, r);
  for (int k = 0; k < 3; ++k) {
    double e = M[3 * k] * x[0] + M[3 * k + 1] * x[1] + M[3 * k + 2] * x[2] - r[k];
    res += e * e;
  }
  return rr > 0 ? res / rr : res;
}

/* M's null direction when the plane holds one of the local's axes (the
 * largest cross product of two of its rows, unit): 1, else 0. */
static int flat_null(const flat_bone *fb, double *z) {
  double N[9];
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) N[3 * i + k] = fb->M[i] * fb->M[k] + fb->M[3 + i] * fb->M[3 + k] + fb->M[6 + i] * fb->M[6 + k];
  double tr = N[0] + N[4] + N[8];
  if (sks_dm3_det(N) > 1e-8 * tr * tr * tr / 27) return 0;
  return sks_dm3_null_dir(fb->M, z);
}

/* The least squares point of the line, its component along z put at the
 * current column norms' (M's near-null direction is where the solve
 * amplifies rounding: x came out 59, -321, 0.6); -1 when singular. */
static int line_point(const flat_bone *fb, const double *z, double *x) {
  if (gram_solve(fb->M, fb->r, fb->s0, 1e-12, x) < 0) return 0;
  double dz = (fb->s0[0] - x[0]) * z[0] + (fb->s0[1] - x[1]) * z[1] + (fb->s0[2] - x[2]) * z[2];
  for (int i = 0; i < 3; ++i) x[i] += dz * z[i];
  return 1;
}

/* The interval of tau where x + tau z > 0; 0 when empty. */
static int positive_part(const double *x, const double *z, double *lo, double *hi) {
  *lo = -DBL_MAX;
  *hi = DBL_MAX;
  for (int i = 0; i < 3; ++i) {
    if (z[i] > 1e-12) *lo = fmax(*lo, -x[i] / z[i]);
    else if (z[i] < -1e-12) *hi = fmin(*hi, -x[i] / z[i]);
    else if (!(x[i] > 0)) return 0;
  }
  return *hi > *lo;
}

/* 1 when some positive s^2 fits the flat bone's two columns. */
static int flat_feasible(const flat_bone *fb) {
  double x[3], z[3], lo, hi;
  if (!flat_null(fb, z)) {
    const double zero[3] = {0, 0, 0};
    return gram_solve(fb->M, fb->r, zero, 0, x) >= 0 && x[0] > 0 && x[1] > 0 && x[2] > 0;
  }
  return line_point(fb, z, x) && positive_part(x, z, &lo, &hi);
}

/* The bone's affine with its third column set from s^2 (a_out); 0 when s^2
 * is not positive or a frame is singular. */
static int flat_bone_apply(const sks_solve_problem *p, size_t b, const flat_bone *fb, const double *s2,
                           const double *W, const sks_daffine *a, sks_daffine *a_out) {
  double s[3];
  for (int i = 0; i < 3; ++i) {
    if (!(s2[i] > 0) || !isfinite(s2[i])) return 0;
    s[i] = sqrt(s2[i]);
  }
  /* R: [a1 a2 a1 x a2] -> [k1 k2 k1 x k2], a_i = diag(s) f_i */
  double a1[3] = {s[0] * fb->f1[0], s[1] * fb->f1[1], s[2] * fb->f1[2]};
  double a2[3] = {s[0] * fb->f2[0], s[1] * fb->f2[1], s[2] * fb->f2[2]};
  double a3[3], k3[3], Am[9], Km[9], Ai[9], R[9];
  sks_d3_cross(a1, a2, a3);
  sks_d3_cross(fb->k1, fb->k2, k3);
  for (int i = 0; i < 3; ++i) {
    Am[3 * i] = a1[i]; Am[3 * i + 1] = a2[i]; Am[3 * i + 2] = a3[i];
    Km[3 * i] = fb->k1[i]; Km[3 * i + 1] = fb->k2[i]; Km[3 * i + 2] = k3[i];
  }
  if (!sks_dm3_inverse(Am, Ai)) return 0;
  sks_dm3_mul_to(Km, Ai, R);
  double sg[3] = {s[0] * fb->g[0], s[1] * fb->g[1], s[2] * fb->g[2]}, Kg_new[3], Kg[3], e[3], d[3], Wi[9];
  sks_dm3_apply(R, sg, Kg_new);
  sks_dm3_apply(fb->K, fb->g, Kg);
  for (int i = 0; i < 3; ++i) e[i] = (Kg_new[i] - Kg[i]) / fb->gg; /* e = W d */
  if (!sks_dm3_inverse(W, Wi)) return 0;
  sks_dm3_apply(Wi, e, d);
  /* a(x) = L (x - c) + u: L += d n^T and t -= d (n . c) leave the plane's points where they were */
  double nc = sks_d3_dot(fb->n, &p->centroid[3 * b]);
  *a_out = *a;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) a_out->l[3 * i + j] += d[i] * fb->n[j];
    a_out->t[i] -= d[i] * nc;
  }
  return 1;
}

/* W of joint k's bone when its parent's model is pm: bind space -> the parent's frame. */
static int frame_below(const sks_flat_ctx *c, const sks_daffine *pm, double *W) {
  double Li[9];
  if (!sks_dm3_inverse(pm->l, Li)) return 0;
  sks_dm3_mul_to(Li, c->T->l, W);
  return 1;
}

/* How far the locals of joint j's children (with a bone) are from a
 * rotation times an axis scale when j's model is mj: a flat affine child
 * by its two measured columns (the residual of its equations, +1 when no
 * positive s^2 fits them), another by the off-diagonal of K^T K. */
static double children_shear(sks_flat_ctx *c, size_t j, const sks_daffine *mj) {
  const sks_solve_problem *p = c->p;
  double W[9], sum = 0;
  if (!frame_below(c, mj, W)) return -1;
  for (uint32_t q = c->kid_start[j]; q < c->kid_start[j + 1]; ++q) {
    int32_t b = c->joint_bone[c->kids[q]];
    if (b < 0 || !(p->wsum2[b] > 0)) continue;
    sks_daffine ab = sks_state_rigid(p, c->st, (size_t)b);
    const double *Q = &c->carry[9 * b];
    flat_bone fc;
    if (p->affine && p->affine[b] && flat_bone_setup(p, (size_t)b, W, Q, &ab, &fc)) {
      double x[3];
      const double zero[3] = {0, 0, 0};
      double res = gram_solve(fc.M, fc.r, zero, 1e-12, x);
      if (res > 0) sum += res;
      if (!flat_feasible(&fc)) sum += 1;
      continue;
    }
    double WL[9], K[9], Kt[9], G[9];
    sks_dm3_mul_to(W, ab.l, WL);
    sks_dm3_mul_to(WL, Q, K);
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s) Kt[3 * r + s] = K[3 * s + r];
    sks_dm3_mul_to(Kt, K, G);
    double tr = (G[0] + G[4] + G[8]) / 3;
    if (tr > 0) sum += (G[1] * G[1] + G[2] * G[2] + G[5] * G[5]) / (tr * tr);
  }
  return sum;
}

static double flat_choose(sks_flat_ctx *c, size_t j, const double *W, const sks_daffine *a, int depth, double *xt,
                          flat_bone *fbo, int *ok);

/* The point of the line x + tau z whose s^2[im] is exp(lv). */
static void line_at(const double *x, const double *z, int im, double lv, double *o) {
  double tau = (exp(lv) - x[im]) / z[im];
  for (int i = 0; i < 3; ++i) o[i] = x[i] + tau * z[i];
}

/* The score of s^2 = x for joint j (bone b): its children's shear, plus,
 * depth levels down, the least its flat children reach below them; -1 when
 * x does not apply or the budget is spent. */
static double flat_score(sks_flat_ctx *c, size_t j, size_t b, const flat_bone *fb, const double *x, const double *W,
                         const sks_daffine *a, int depth) {
  if (c->budget == 0) return -1;
  --c->budget;
  sks_daffine ai, cm;
  if (!flat_bone_apply(c->p, b, fb, x, W, a, &ai)) return -1;
  memcpy(cm.l, &c->carry[9 * b], 9 * sizeof(double));
  cm.t[0] = cm.t[1] = cm.t[2] = 0;
  sks_daffine bm = sks_daff_mul(&ai, &cm), mj = sks_daff_mul(c->T, &bm);
  double f = children_shear(c, j, &mj), Wc[9];
  if (f < 0 || depth <= 0 || !frame_below(c, &mj, Wc)) return f;
  for (uint32_t q = c->kid_start[j]; q < c->kid_start[j + 1]; ++q) {
    size_t k = c->kids[q];
    int32_t bk = c->joint_bone[k];
    if (bk < 0 || !(c->p->wsum2[bk] > 0) || !c->p->affine || !c->p->affine[bk]) continue;
    sks_daffine ak = sks_state_rigid(c->p, c->st, (size_t)bk);
    double xk[3];
    flat_bone fk;
    int okk = 0;
    double g = flat_choose(c, k, Wc, &ak, depth - 1, xk, &fk, &okk);
    if (okk && g > 0) f += g;
  }
  return f;
}

/* s^2 of the flat bone of joint j (W: bind space -> the parent's frame, a:
 * its affine) into xt; the score of that choice; *ok = 0 when the bone is
 * not flat or no positive s^2 fits its columns. */
static double flat_choose(sks_flat_ctx *c, size_t j, const double *W, const sks_daffine *a, int depth, double *xt,
                          flat_bone *fbo, int *ok) {
  *ok = 0;
  const size_t b = (size_t)c->joint_bone[j];
  flat_bone fb;
  if (!flat_bone_setup(c->p, b, W, &c->carry[9 * b], a, &fb)) return -1;
  *fbo = fb;
  double x[3], z[3];
  if (!flat_null(&fb, z)) { /* its own columns decide */
    const double zero[3] = {0, 0, 0};
    if (gram_solve(fb.M, fb.r, zero, 0, x) < 0 || !(x[0] > 0 && x[1] > 0 && x[2] > 0)) return -1;
    memcpy(xt, x, sizeof x);
    *ok = 1;
    return depth > 0 ? flat_score(c, j, b, &fb, x, W, a, depth) : 0;
  }
  if (!line_point(&fb, z, x)) return -1;
  int im = 0;
  for (int i = 1; i < 3; ++i)
    if (fabs(z[i]) > fabs(z[im])) im = i;
  const double xm = (fb.s0[0] + fb.s0[1] + fb.s0[2]) / 3;
  if (!(xm > 0)) return -1;
  const sks_vec3 rs = c->rest[j].scale;
  const double ref[3] = {(double)rs.x * rs.x, (double)rs.y * rs.y, (double)rs.z * rs.z};
  const double l0 = log(xm * 1e-2), l1 = log(xm * 1e2), phi = 0.6180339887498949;
  const double lx = log(ref[im] > 0 ? ref[im] : xm), step = (l1 - l0) / (FLAT_SCAN - 1.0);
#define FLAT_AT(lv, o) line_at(x, z, im, (lv), (o))
#define FLAT_F(lv, o) (line_at(x, z, im, (lv), (o)), flat_score(c, j, b, &fb, (o), W, a, 0))
  double fs[FLAT_SCAN], f_lo = DBL_MAX, f_hi = 0, xa[3];
  for (int i = 0; i < FLAT_SCAN; ++i) {
    fs[i] = FLAT_F(l0 + step * i, xa);
    if (fs[i] < 0) continue;
    f_hi = f_hi > fs[i] ? f_hi : fs[i];
    f_lo = f_lo < fs[i] ? f_lo : fs[i];
  }
  memcpy(xt, x, sizeof x); /* nothing below decides tau: the completion's */
  double score = -1;
  if (f_lo < DBL_MAX && f_hi - f_lo > 1e-12 * (1 + f_hi)) {
    double cand_lv[2 * FLAT_SCAN], cand_f[2 * FLAT_SCAN], best_f = DBL_MAX;
    int nc = 0;
    for (int i = 0; i < FLAT_SCAN; ++i) {
      if (fs[i] < 0) continue;
      if ((i > 0 && fs[i - 1] >= 0 && fs[i - 1] < fs[i]) || (i < FLAT_SCAN - 1 && fs[i + 1] >= 0 && fs[i + 1] < fs[i]))
        continue;
      /* a golden section on each side of the sample: two roots can lie
       * within one step of the scan */
      for (int side = 0; side < 2; ++side) {
        double ga = l0 + step * (side ? i : (i > 0 ? i - 1 : 0));
        double gb = l0 + step * (side ? (i < FLAT_SCAN - 1 ? i + 1 : FLAT_SCAN - 1) : i);
        if (!(gb > ga)) continue;
        double c1 = gb - phi * (gb - ga), c2 = ga + phi * (gb - ga);
        double f1 = FLAT_F(c1, xa), f2 = FLAT_F(c2, xa);
        for (int it = 0; it < FLAT_GOLDEN; ++it) {
          if (f1 >= 0 && (f2 < 0 || f1 <= f2)) {
            gb = c2; c2 = c1; f2 = f1; c1 = gb - phi * (gb - ga);
            f1 = FLAT_F(c1, xa);
          } else {
            ga = c1; c1 = c2; f1 = f2; c2 = ga + phi * (gb - ga);
            f2 = FLAT_F(c2, xa);
          }
        }
        cand_lv[nc] = 0.5 * (ga + gb);
        cand_f[nc] = FLAT_F(cand_lv[nc], xa);
        if (cand_f[nc] >= 0 && cand_f[nc] < best_f) best_f = cand_f[nc];
        ++nc;
      }
    }
    double best_total = DBL_MAX, best_d = DBL_MAX, tol = 1e-9 * (f_hi - f_lo);
    for (int k = 0; k < nc; ++k) {
      if (!(cand_f[k] >= 0) || cand_f[k] > best_f + 1e-3 * (f_hi - f_lo)) continue;
      FLAT_AT(cand_lv[k], xa);
      double total = depth > 0 ? flat_score(c, j, b, &fb, xa, W, a, depth) : cand_f[k];
      if (total < 0) continue;
      double dk = fabs(cand_lv[k] - lx);
      /* the subtree decides first, then the rest scale */
      if (total < best_total - tol || (total <= best_total + tol && dk < best_d)) {
        best_total = total;
        best_d = dk;
        memcpy(xt, xa, sizeof xa);
        score = total;
      }
    }
  }
#undef FLAT_F
#undef FLAT_AT
  if (!(xt[0] > 0 && xt[1] > 0 && xt[2] > 0)) {
    /* the completion's column norms off the line's positive part: its
     * point nearest them, 10 % of the part's width inside */
    double lo, hi;
    if (!positive_part(x, z, &lo, &hi)) return -1;
    double w = hi < DBL_MAX && lo > -DBL_MAX ? hi - lo : fmax(lo > -DBL_MAX ? fabs(lo) : 0, hi < DBL_MAX ? fabs(hi) : 0);
    double tau = 0;
    if (tau <= lo) tau = lo + 0.1 * w;
    if (tau >= hi) tau = hi - 0.1 * w;
    for (int i = 0; i < 3; ++i) xt[i] = x[i] + tau * z[i];
    score = -1;
  }
  *ok = 1;
  if (score < 0 && depth > 0) score = flat_score(c, j, b, &fb, xt, W, a, depth);
  return score < 0 ? 0 : score;
}

void sks_flat_ctx_begin(sks_flat_ctx *c) {
  size_t n = 1;
  for (size_t j = 0; j < c->J; ++j) {
    int32_t b = c->joint_bone[j];
    if (b >= 0 && c->p->affine && c->p->affine[b]) ++n;
  }
  c->budget = (uint64_t)FLAT_BUDGET * n < FLAT_BUDGET_MAX ? (uint64_t)FLAT_BUDGET * n : FLAT_BUDGET_MAX;
}

void sks_flat_bone_as_trs(sks_flat_ctx *c, size_t j, const sks_daffine *parent_inv, sks_daffine *a) {
  int32_t b = c->joint_bone[j];
  if (b < 0 || !c->p->affine || !c->p->affine[b] || c->budget == 0) return;
  double W[9], xt[3];
  sks_dm3_mul_to(parent_inv->l, c->T->l, W);
  flat_bone fb;
  int ok = 0;
  flat_choose(c, j, W, a, FLAT_LOOKAHEAD, xt, &fb, &ok);
  sks_daffine out;
  if (ok && flat_bone_apply(c->p, (size_t)b, &fb, xt, W, a, &out)) *a = out;
}
