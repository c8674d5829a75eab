/* What the joints' names say of an alignment (correspondence.c, README
 * "Joint names"): sks_label_up_cos, the cosine between two labelled
 * surfaces' head directions (the head-labelled vertices' centroid minus all
 * vertices'). On a procedural body (a torso box, a head above it, two arms
 * and two legs, each part's points labelled as its joints' names would
 * label them), turned, scaled and offset: the cosine of the angle between
 * its head direction and the original's, whatever the scale and offset (1
 * upright or turned about the up axis, 0 on its side, -1 upside down); no
 * head (or one of a few vertices) tells nothing; a head without sides
 * still gives the direction; a re-welded copy weighted by
 * sks_copy_weights gives the same figure. sks_feet_forward on a
 * procedural skeleton (hips, knees, ankles, toes): the feet's way, turned,
 * scaled and offset with the body; no toe joints, flat feet or a parent
 * cycle tell nothing. And the rules the CLI and the report read
 * (sks_bake_finalist_names, sks_bake_alignment_names). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "solve/solve_internal.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define N 4000

/* a point of part p (0 torso, 1 head, 2 left arm, 3 right arm, 4 left leg,
 * 5 right leg), pseudo-random inside its box; the body faces +z, up +y, its
 * left at +x */
static void body(double *pos, uint8_t *lab) {
  static const double lo[6][3] = {{-0.2, 0.0, -0.1}, {-0.1, 0.6, -0.1}, {0.2, 0.45, -0.05}, {-0.8, 0.45, -0.05},
                                  {0.02, -0.9, -0.06}, {-0.18, -0.9, -0.06}};
  static const double hi[6][3] = {{0.2, 0.6, 0.1}, {0.1, 0.85, 0.12}, {0.8, 0.55, 0.05}, {-0.2, 0.55, 0.05},
                                  {0.18, 0.0, 0.06}, {-0.02, 0.0, 0.06}};
  static const uint8_t want[6] = {SKS_LABEL_NONE, SKS_LABEL_HEAD, SKS_LABEL_LEFT, SKS_LABEL_RIGHT, SKS_LABEL_LEFT,
                                  SKS_LABEL_RIGHT};
  uint32_t s = 12345;
  for (size_t i = 0; i < N; ++i) {
    size_t p = i % 6;
    for (int a = 0; a < 3; ++a) {
      s = s * 1664525u + 1013904223u;
      pos[3 * i + a] = lo[p][a] + (hi[p][a] - lo[p][a]) * (double)(s >> 8) / 16777216.0;
    }
    lab[i] = want[p];
  }
}

/* R about unit axis (x, y, z) by deg degrees (row-major) */
static void axis_angle(double x, double y, double z, double deg, double *R) {
  double n = sqrt(x * x + y * y + z * z), c, s;
  x /= n; y /= n; z /= n;
  c = cos(deg * M_PI / 180.0);
  s = sin(deg * M_PI / 180.0);
  double t = 1 - c;
  double m[9] = {t * x * x + c, t * x * y - s * z, t * x * z + s * y, t * x * y + s * z, t * y * y + c,
                 t * y * z - s * x, t * x * z - s * y, t * y * z + s * x, t * z * z + c};
  memcpy(R, m, sizeof m);
}

static void transform(const double *in, double *out, const double *M, double k, const double *t) {
  for (size_t i = 0; i < N; ++i)
    for (int r = 0; r < 3; ++r)
      out[3 * i + r] = k * (M[3 * r] * in[3 * i] + M[3 * r + 1] * in[3 * i + 1] + M[3 * r + 2] * in[3 * i + 2]) + t[r];
}

int main(void) {
  double *p = malloc(N * 3 * sizeof(double)), *q = malloc(N * 3 * sizeof(double)), *one = malloc(N * sizeof(double));
  uint8_t *lab = malloc(N), *bare = malloc(N);
  CHECK(p && q && lab && bare && one);
  if (!p || !q || !lab || !bare || !one) return sks_test_finish();
  body(p, lab);
  for (size_t i = 0; i < N; ++i) one[i] = 1;
  const double off[3] = {3, -7, 11};

  /* the head's direction: upright 1, on its side 0, upside down -1,
   * turned about the up axis 1, at any scale and offset */
  static const struct { double ax[3], deg, want; } ups[] = {
      {{1, 0, 0}, 0, 1}, {{0, 1, 0}, 137, 1}, {{1, 0, 0}, 90, 0}, {{0, 0, 1}, 90, 0},
      {{1, 0, 0}, 180, -1}, {{0, 0, 1}, 60, 0.5}, {{1, 0, 1}, 180, -1}};
  for (size_t k = 0; k < sizeof ups / sizeof ups[0]; ++k) {
    double R[9];
    axis_angle(ups[k].ax[0], ups[k].ax[1], ups[k].ax[2], ups[k].deg, R);
    transform(p, q, R, 0.01, off);
    /* the centroids' direction, not the box's axis: within a few degrees
     * of the turn's (the head part is not centred over the whole body) */
    double c = sks_label_up_cos(q, N, lab, one, p, N, lab, one);
    CHECK_MSG(fabs(c - ups[k].want) < 0.02, "turn %zu (%.0f deg): up cos %.4f, want %.2f", k, ups[k].deg, c, ups[k].want);
  }

  /* no head: nothing; a head without sides: the same direction */
  for (size_t i = 0; i < N; ++i) bare[i] = lab[i] == SKS_LABEL_HEAD ? SKS_LABEL_NONE : lab[i];
  CHECK(isnan(sks_label_up_cos(p, N, bare, one, p, N, lab, one)));
  CHECK(isnan(sks_label_up_cos(p, N, lab, one, p, N, bare, one)));
  for (size_t i = 0; i < N; ++i) bare[i] = lab[i] == SKS_LABEL_HEAD ? SKS_LABEL_HEAD : SKS_LABEL_NONE;
  CHECK_MSG(fabs(sks_label_up_cos(p, N, bare, one, p, N, lab, one) - 1) < 1e-12, "a head alone gives the up direction");
  /* a head of a few vertices (under 0.5 %) tells nothing */
  for (size_t i = 0; i < N; ++i) bare[i] = i < 12 ? SKS_LABEL_HEAD : SKS_LABEL_NONE;
  CHECK(isnan(sks_label_up_cos(p, N, bare, one, p, N, lab, one)));
  CHECK(isnan(sks_label_up_cos(p, N, NULL, one, p, N, lab, one)));
  CHECK(isnan(sks_label_up_cos(p, N, lab, NULL, p, N, lab, one)));

  /* re-welded: every third vertex of the body turned 90 deg about z
   * listed twice (a seam split per face corner), weighted by
   * sks_copy_weights: the same figure as the body as given; counted as
   * vertices it is not (the copies pull the centroids) */
  {
    const size_t M = N + N / 3;
    double *w = malloc(M * 3 * sizeof(double)), R[9];
    uint8_t *wl = malloc(M);
    double *ones = malloc(M * sizeof(double));
    CHECK(w && wl && ones);
    if (w && wl && ones) {
      axis_angle(0, 0, 1, 90, R);
      transform(p, q, R, 1, off);
      memcpy(w, q, N * 3 * sizeof(double));
      memcpy(wl, lab, N);
      for (size_t i = 0; i < N / 3; ++i) {
        memcpy(&w[3 * (N + i)], &q[3 * (3 * i)], 3 * sizeof(double));
        wl[N + i] = lab[3 * i];
      }
      for (size_t i = 0; i < M; ++i) ones[i] = 1;
      double *cw = sks_copy_weights(w, M);
      CHECK(cw != NULL);
      if (cw) {
        const double as_given = sks_label_up_cos(q, N, lab, one, p, N, lab, one);
        const double welded = sks_label_up_cos(w, M, wl, cw, p, N, lab, one);
        const double counted = sks_label_up_cos(w, M, wl, ones, p, N, lab, one);
        CHECK_MSG(fabs(welded - as_given) < 1e-12, "re-welded: cos %.15f, as given %.15f", welded, as_given);
        CHECK_MSG(fabs(counted - as_given) > 1e-6, "the copies counted as vertices should move it: %.15f / %.15f",
                  counted, as_given);
      }
      free(cw);
    }
    free(w); free(wl); free(ones);
  }

  /* the rules as the CLI and the report read them (sks_bake_finalist_names,
   * sks_bake_alignment_names): limbs on the head (head agreement 0.3 under
   * another's), on its side (over 60 deg while another is under), and the
   * names telling nothing (NaN) rule nothing out */
  {
    sks_bake_alignment a;
    memset(&a, 0, sizeof a);
    a.finalists = 4;
    const double heads[4] = {0.9, 0.1, 0.8, NAN}, offs[4] = {10, 20, 95, NAN};
    for (int k = 0; k < 4; ++k) { a.finalist_head_agreement[k] = heads[k]; a.finalist_up_deg[k] = offs[k]; }
    CHECK(sks_bake_finalist_names(&a, 0) == SKS_NAMES_AGREE);
    CHECK(sks_bake_finalist_names(&a, 1) == SKS_NAMES_LIMBS_ON_HEAD);
    CHECK(sks_bake_finalist_names(&a, 2) == SKS_NAMES_ON_SIDE);
    CHECK(sks_bake_finalist_names(&a, 3) == SKS_NAMES_AGREE);
    CHECK(sks_bake_finalist_names(&a, 4) == SKS_NAMES_AGREE); /* past the finalists */
    a.finalist_up_deg[0] = a.finalist_up_deg[1] = 70; /* none under 60: none ruled out by the direction */
    CHECK(sks_bake_finalist_names(&a, 2) == SKS_NAMES_AGREE);
    a.up_deg = 95;
    a.label_agreement = 1;
    CHECK(sks_bake_alignment_names(&a) == SKS_NAMES_ON_SIDE);
    a.up_deg = 10;
    a.label_agreement = 0.3;
    CHECK(sks_bake_alignment_names(&a) == SKS_NAMES_DISAGREE);
    a.up_deg = a.label_agreement = NAN;
    CHECK(sks_bake_alignment_names(&a) == SKS_NAMES_AGREE);
    /* the feet: among the finalists the names keep, one whose feet point
     * back (over 90 deg) while another's are within 60 */
    a.finalist_up_deg[0] = 10; a.finalist_up_deg[1] = 20; a.finalist_up_deg[2] = 15; a.finalist_up_deg[3] = NAN;
    const double faces[4] = {170, 5, 20, NAN};
    for (int k = 0; k < 4; ++k) a.finalist_facing_deg[k] = faces[k];
    CHECK(sks_bake_finalist_names(&a, 0) == SKS_NAMES_TURNED);
    CHECK(sks_bake_finalist_names(&a, 1) == SKS_NAMES_LIMBS_ON_HEAD); /* the names first */
    CHECK(sks_bake_finalist_names(&a, 2) == SKS_NAMES_AGREE);
    CHECK(sks_bake_finalist_names(&a, 3) == SKS_NAMES_AGREE);
    a.finalist_facing_deg[2] = 75; /* the one the names keep is 75 deg off: none within 60 */
    CHECK(sks_bake_finalist_names(&a, 0) == SKS_NAMES_AGREE);
    a.finalist_facing_deg[2] = NAN; /* only a finalist the names rule out faces right: nothing by the feet */
    CHECK(sks_bake_finalist_names(&a, 0) == SKS_NAMES_AGREE);
    a.up_deg = 10;
    a.label_agreement = 1;
    a.facing_deg = 170;
    CHECK(sks_bake_alignment_names(&a) == SKS_NAMES_TURNED);
    a.facing_deg = 80;
    CHECK(sks_bake_alignment_names(&a) == SKS_NAMES_AGREE);
    a.up_deg = 100;
    a.facing_deg = 170;
    CHECK(sks_bake_alignment_names(&a) == SKS_NAMES_ON_SIDE);
  }

  /* the feet (sks_feet_forward): a skeleton facing +z, up +y: pelvis,
   * per leg hip, knee, ankle (0.1 up), toe (0.12 forward of the ankle, on
   * the floor), a spine and a head; the body's points from the floor to
   * 1.8 */
  {
    enum { J = 11, NV = 64 };
    const int32_t parents[J] = {-1, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9};
    const double jp0[3 * J] = {0, 1.0, 0,  0.1, 0.95, 0,  0.1, 0.5, 0.02,  0.1, 0.1, -0.03,  0.1, 0.0, 0.09,
                               -0.1, 0.95, 0,  -0.1, 0.5, 0.02,  -0.1, 0.1, -0.03,  -0.1, 0.0, 0.09,
                               0, 1.4, 0,  0, 1.7, 0};
    double vp0[3 * NV];
    for (int i = 0; i < NV; ++i) {
      vp0[3 * i] = 0.2 * sin(i);
      vp0[3 * i + 1] = 1.8 * i / (NV - 1);
      vp0[3 * i + 2] = 0.1 * cos(3 * i);
    }
    uint8_t mask[J];
    memset(mask, 1, sizeof mask);
    const double up0[3] = {0, 1, 0};
    double f[3];
    int32_t hips = -2;
    CHECK(sks_feet_forward(jp0, mask, parents, J, vp0, NV, up0, f, &hips));
    CHECK_MSG(fabs(f[2] - 1) < 1e-9 && fabs(f[0]) < 1e-9, "feet: (%g %g %g), want +z", f[0], f[1], f[2]);
    CHECK_MSG(hips == 0, "the joint carrying both feet: %d, want the pelvis (0)", (int)hips);
    /* the pelvis out of the mask: none above the feet's common ancestor */
    mask[0] = 0;
    CHECK(sks_feet_forward(jp0, mask, parents, J, vp0, NV, up0, f, &hips) && hips == -1);
    mask[0] = 1;
    /* one foot alone: its ankle carries it */
    uint8_t one_foot[J];
    memcpy(one_foot, mask, sizeof one_foot);
    one_foot[8] = 0;
    CHECK(sks_feet_forward(jp0, one_foot, parents, J, vp0, NV, up0, f, &hips) && hips == 3);
    /* turned a half turn about up, then about another axis, scaled, offset:
     * the feet turn with it */
    const struct { double ax[3], deg; } turns[] = {{{0, 1, 0}, 180}, {{1, 0.3, -0.2}, 117}, {{0, 0, 1}, 90}};
    /* (and the knees, sks_knees_forward, below: scaled by 0.01 then) */
    for (size_t t = 0; t < 2 * (sizeof turns / sizeof turns[0]); ++t) {
      const size_t tt = t % (sizeof turns / sizeof turns[0]);
      const int knees = t >= sizeof turns / sizeof turns[0];
      double R[9], jp[3 * J], vp[3 * NV], up[3], want[3];
      const double shift[3] = {3, -2, 5}, k = knees ? 0.01 : 40;
      axis_angle(turns[tt].ax[0], turns[tt].ax[1], turns[tt].ax[2], turns[tt].deg, R);
      for (int i = 0; i < J + NV; ++i) {
        const double *x = i < J ? &jp0[3 * i] : &vp0[3 * (i - J)];
        double *y = i < J ? &jp[3 * i] : &vp[3 * (i - J)];
        for (int r = 0; r < 3; ++r) y[r] = k * (R[3 * r] * x[0] + R[3 * r + 1] * x[1] + R[3 * r + 2] * x[2]) + shift[r];
      }
      for (int r = 0; r < 3; ++r) { up[r] = R[3 * r + 1]; want[r] = R[3 * r + 2]; }
      CHECK(knees ? sks_knees_forward(jp, mask, parents, J, vp, NV, up, f, NULL)
                  : sks_feet_forward(jp, mask, parents, J, vp, NV, up, f, NULL));
      CHECK_MSG(fabs(f[0] - want[0]) + fabs(f[1] - want[1]) + fabs(f[2] - want[2]) < 1e-9,
                "turn %zu: %s (%g %g %g), want (%g %g %g)", tt, knees ? "knees" : "feet", f[0], f[1], f[2], want[0],
                want[1], want[2]);
    }
    /* no toe joints (masked out: not in the palette): the ankles alone
     * tell nothing (knee -> ankle lies above the band's top at 0.27) */
    uint8_t no_toes[J];
    memcpy(no_toes, mask, sizeof no_toes);
    no_toes[4] = no_toes[8] = 0;
    CHECK(!sks_feet_forward(jp0, no_toes, parents, J, vp0, NV, up0, f, NULL));
    /* flat feet: toes under the ankles */
    double flat[3 * J];
    memcpy(flat, jp0, sizeof flat);
    flat[3 * 4 + 2] = flat[3 * 8 + 2] = -0.03;
    CHECK(!sks_feet_forward(flat, mask, parents, J, vp0, NV, up0, f, NULL));
    /* a parent cycle ends (the walks to a masked ancestor and to the
     * common ancestor are bounded): the feet still point, no hips */
    const int32_t cyc[J] = {10, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9};
    uint8_t part[J];
    memset(part, 0, sizeof part);
    part[4] = part[3] = part[8] = part[7] = 1;
    CHECK(sks_feet_forward(jp0, part, cyc, J, vp0, NV, up0, f, &hips) && hips == -1);
    /* many feet under a long chain of joints out of the mask: the walks to
     * their masked ancestor (the pelvis) are bounded all told, and past
     * that the feet tell nothing (as a scan they made 2.5e9 steps) */
    {
      const size_t chain = 50000, feet = 50000, JJ = 1 + chain + feet;
      int32_t *pp = malloc(JJ * sizeof *pp);
      uint8_t *mm = malloc(JJ);
      double *jj = malloc(3 * JJ * sizeof *jj);
      CHECK(pp && mm && jj);
      if (pp && mm && jj) {
        for (size_t j = 0; j < JJ; ++j) {
          pp[j] = j == 0 ? -1 : j <= chain ? (int32_t)j - 1 : (int32_t)chain;
          mm[j] = j == 0 || j > chain;
          jj[3 * j] = 0;
          jj[3 * j + 1] = j > chain ? 0.0 : 0.1;
          jj[3 * j + 2] = j > chain ? 0.1 : 0.0;
        }
        CHECK(!sks_feet_forward(jj, mm, pp, JJ, vp0, NV, up0, f, NULL));
      }
      free(pp); free(mm); free(jj);
    }
    /* the knees (sks_knees_forward), for feet that tell nothing: the same
     * skeleton's knees (0.5 up) lie 0.036 ahead of the hip-ankle lines
     * (2 % of the height): +z, the pelvis carries both thighs; the toes
     * take no part (the same answer without them); turned, scaled and
     * offset above */
    CHECK(sks_knees_forward(jp0, mask, parents, J, vp0, NV, up0, f, &hips));
    CHECK_MSG(fabs(f[2] - 1) < 1e-9 && fabs(f[0]) + fabs(f[1]) < 1e-9, "knees: (%g %g %g), want +z", f[0], f[1], f[2]);
    CHECK_MSG(hips == 0, "the joint carrying both thighs: %d, want the pelvis (0)", (int)hips);
    CHECK(sks_knees_forward(jp0, no_toes, parents, J, vp0, NV, up0, f, NULL) && f[2] > 0.999);
    {
      double kp[3 * J];
      /* straight legs (each knee on its hip-ankle line) tell nothing */
      memcpy(kp, jp0, sizeof kp);
      kp[3 * 2 + 2] = kp[3 * 6 + 2] = -0.03 * 0.45 / 0.85;
      CHECK(!sks_knees_forward(kp, mask, parents, J, vp0, NV, up0, f, NULL));
      /* bent 0.4 % of the height: under the 0.5 % that tells */
      kp[3 * 2 + 2] = kp[3 * 6 + 2] = -0.03 * 0.45 / 0.85 + 0.004 * 1.8;
      CHECK(!sks_knees_forward(kp, mask, parents, J, vp0, NV, up0, f, NULL));
      kp[3 * 2 + 2] = kp[3 * 6 + 2] = -0.03 * 0.45 / 0.85 + 0.006 * 1.8;
      CHECK(sks_knees_forward(kp, mask, parents, J, vp0, NV, up0, f, NULL) && f[2] > 0.999);
      /* the two knees bent opposite ways (one forward, one back), or each
       * outward (bow legs: left +x, right -x): nothing */
      memcpy(kp, jp0, sizeof kp);
      kp[3 * 6 + 2] = -0.06;
      CHECK(!sks_knees_forward(kp, mask, parents, J, vp0, NV, up0, f, NULL));
      memcpy(kp, jp0, sizeof kp);
      kp[3 * 2 + 2] = kp[3 * 6 + 2] = -0.03 * 0.45 / 0.85;
      kp[3 * 2] = 0.16;
      kp[3 * 6] = -0.16;
      CHECK(!sks_knees_forward(kp, mask, parents, J, vp0, NV, up0, f, NULL));
      /* one leg (the other's knee out of the mask: its ankle then hangs
       * from the hip, 0.85 under it, not a knee) tells nothing */
      uint8_t one_leg[J];
      memcpy(one_leg, mask, sizeof one_leg);
      one_leg[6] = 0;
      CHECK(!sks_knees_forward(jp0, one_leg, parents, J, vp0, NV, up0, f, NULL));
      /* an arm is no leg: the knees lifted to 0.65 of the height (above the
       * band's 0.6) tell nothing */
      memcpy(kp, jp0, sizeof kp);
      kp[3 * 2 + 1] = kp[3 * 6 + 1] = 0.65 * 1.8 - 0.0;
      kp[3 * 1 + 1] = kp[3 * 5 + 1] = 1.5;
      CHECK(!sks_knees_forward(kp, mask, parents, J, vp0, NV, up0, f, NULL));
      /* a parent cycle or an order not parent-first: nothing, and it ends */
      CHECK(!sks_knees_forward(jp0, mask, cyc, J, vp0, NV, up0, f, &hips) && hips == -1);
    }
    /* a flat surface (no height) tells nothing */
    /* sks_correspondence_labels: the share over head and sides (all) only
     * when both rigs name sides; a rig with a head alone (labelled by its
     * shape) gives the head agreement, and all NaN */
    {
      enum { NL = 40 };
      uint32_t idx[3 * NL];
      float bary[3 * NL];
      double cw1[NL];
      uint8_t sl[NL], tl[NL], hl[NL];
      for (uint32_t k = 0; k < NL; ++k) {
        idx[3 * k] = idx[3 * k + 1] = idx[3 * k + 2] = k;
        bary[3 * k] = 1; bary[3 * k + 1] = bary[3 * k + 2] = 0;
        cw1[k] = 1;
        sl[k] = tl[k] = k < 10 ? SKS_LABEL_HEAD : k < 20 ? SKS_LABEL_LEFT : k < 30 ? SKS_LABEL_RIGHT : SKS_LABEL_NONE;
        hl[k] = k < 10 ? SKS_LABEL_HEAD : SKS_LABEL_NONE;
      }
      sks_correspondence cc;
      memset(&cc, 0, sizeof cc);
      cc.count = NL;
      cc.idx = idx;
      cc.bary = bary;
      sks_label_agreement la = sks_correspondence_labels(&cc, sl, NL, tl, cw1, NL);
      CHECK_MSG(la.all == 1 && la.head == 1, "named both sides: all %g head %g", la.all, la.head);
      for (int k = 10; k < 20; ++k) tl[k] = SKS_LABEL_RIGHT; /* the target's left named right: half the sides disagree */
      la = sks_correspondence_labels(&cc, sl, NL, tl, cw1, NL);
      CHECK_MSG(fabs(la.all - 2.0 / 3.0) < 1e-12 && la.head == 1, "one side swapped: all %g head %g", la.all, la.head);
      la = sks_correspondence_labels(&cc, hl, NL, tl, cw1, NL);
      CHECK_MSG(isnan(la.all) && la.head == 1, "source with a head alone: all %g head %g", la.all, la.head);
      la = sks_correspondence_labels(&cc, sl, NL, hl, cw1, NL);
      CHECK_MSG(isnan(la.all) && la.head == 1, "target with a head alone: all %g head %g", la.all, la.head);
    }
    double still[3 * NV];
    for (int i = 0; i < 3 * NV; ++i) still[i] = (i % 3 == 1) ? 0.5 : vp0[i];
    CHECK(!sks_feet_forward(jp0, mask, parents, J, still, NV, up0, f, NULL));
  }
  free(p); free(q); free(lab); free(bare); free(one);
  return sks_test_finish();
}
