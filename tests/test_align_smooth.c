/* The similarity stage (sks_align_similarity, src/solve/align.c) between two
 * different bodies, mannequiny onto RobotExpressive: its answers (the best
 * fit and its runners-up, which the registration chooses among) must be
 * the same similarities, up to the re-export, when the source's data is
 * re-exported turned, scaled and offset and stored again as floats. Between
 * two bodies the fine ICP's nearest points make a rough landscape (a local
 * minimum every few tenths of a percent of scale, within 0.7 % of one
 * distance over 3 % of scale either way): the data's rounding landed one
 * runner-up 0.5 % apart in scale (README "A smooth last stage of the
 * similarity"). The smooth stage that now polishes each chosen answer
 * (README "The similarity polished") has a fixed point that moves
 * with the data by about as much as the data moved: here each answer must
 * agree to 1e-4 of its scale and 0.01 deg (on main before it: 4 of these
 * checks failed, answers up to 1.0e-3 of scale and 0.06 deg apart). Also: the best fit found again on the data as given (the same
 * bits: the search does not depend on thread count or a previous run).
 * And mannequiny onto the player robot with the source's data only scaled
 * (x0.05, x0.06, x0.07, x100, and offset): the answer the bake keeps is
 * among the answers every time (the fine stage's budget counts distinct
 * answers; README "Distinct answers"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "sks_variants.h"
#include "solve/solve_internal.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define COMPARED 8 /* runners-up compared (past them, near ties in distance reorder the list's tail) */

static double sim_scale(const sks_daffine *A) { return cbrt(fabs(sks_dm3_det(A->l))); }

/* The angle (deg) between the rotations of two similarities (scale taken out). */
static double rot_apart_deg(const sks_daffine *A, const sks_daffine *B) {
  double sa = sim_scale(A), sb = sim_scale(B), tr = 0;
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) tr += A->l[3 * r + k] / sa * (B->l[3 * r + k] / sb);
  double c = (tr - 1) / 2;
  return acos(c > 1 ? 1 : (c < -1 ? -1 : c)) * 180.0 / M_PI;
}

/* B composed with the re-export x -> s R x + t, in the frame of the data as
 * given: B(s R x + t). */
static sks_daffine through(const sks_daffine *B, const double *R, double s, const double *t) {
  sks_daffine o;
  for (int r = 0; r < 3; ++r) {
    for (int k = 0; k < 3; ++k) {
      double v = 0;
      for (int q = 0; q < 3; ++q) v += B->l[3 * r + q] * R[3 * q + k];
      o.l[3 * r + k] = s * v;
    }
    double v = B->t[r];
    for (int q = 0; q < 3; ++q) v += B->l[3 * r + q] * t[q];
    o.t[r] = v;
  }
  return o;
}

/* Whether a (as given) and b (re-exported, composed back) are the same similarity. */
static int same_sim(const sks_daffine *a, const sks_daffine *b, double *ds, double *dr) {
  *ds = fabs(sim_scale(b) / sim_scale(a) - 1);
  *dr = rot_apart_deg(a, b);
  return *ds < 1e-4 && *dr < 0.01;
}

static void check_variant(const char *what, const sks_skinview *sv, const sks_skinview *tv, const sks_alignment *a0,
                          double ax, double ay, double az, double deg, double s, const double *t) {
  sks_quat q = sks_variant_axis_angle((float)ax, (float)ay, (float)az, (float)deg);
  double R[9];
  {
    double x = q.x, y = q.y, z = q.z, w = q.w;
    double M[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                   2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                   2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)};
    memcpy(R, M, sizeof M);
  }
  size_t n = sv->V;
  double *p = malloc(3 * n * sizeof(double));
  CHECK(p != NULL);
  if (!p) return;
  for (size_t i = 0; i < n; ++i) /* stored again as floats, as a file would */
    for (int r = 0; r < 3; ++r) {
      double v = t[r];
      for (int k = 0; k < 3; ++k) v += s * R[3 * r + k] * sv->pos[3 * i + k];
      p[3 * i + r] = (double)(float)v;
    }
  sks_alignment a1;
  sks_error err;
  memset(&err, 0, sizeof err);
  CHECK_OK(sks_align_similarity(p, n, sv->tris, sv->tri_count, tv->pos, tv->V, tv->tris, tv->tri_count, tv->diagonal,
                                NULL, &a1, NULL, &err),
           &err);
  double ds, dr;
  sks_daffine b = through(&a1.A, R, s, t);
  CHECK_MSG(same_sim(&a0->A, &b, &ds, &dr), "%s: best fit %.3g of its scale, %.4f deg apart", what, ds, dr);
  size_t cmp = a0->alternative_count < COMPARED ? a0->alternative_count : COMPARED;
  CHECK_MSG(cmp >= 4, "%s: %zu runners-up", what, a0->alternative_count);
  for (size_t k = 0; k < cmp; ++k) {
    double best_ds = INFINITY, best_dr = INFINITY;
    int found = 0;
    for (size_t j = 0; j < a1.alternative_count && !found; ++j) {
      sks_daffine bj = through(&a1.alternatives[j], R, s, t);
      found = same_sim(&a0->alternatives[k], &bj, &ds, &dr);
      if (ds + dr / 100 < best_ds + best_dr / 100) { best_ds = ds; best_dr = dr; }
    }
    CHECK_MSG(found, "%s: runner-up %zu (scale %.6g) has no match re-exported (nearest %.3g of its scale, %.4f deg)",
              what, k, sim_scale(&a0->alternatives[k]), best_ds, best_dr);
  }
  printf("%-44s best scale %.9g (as given %.9g), %zu runners-up compared\n", what,
         sim_scale(&a1.A) * s, sim_scale(&a0->A), cmp);
  free(p);
}

/* Rotation angle (deg) of a similarity (scale taken out). */
static double rot_deg(const sks_daffine *A) {
  const sks_daffine I = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 0, 0}};
  return rot_apart_deg(A, &I);
}

/* The answers of a0 (the best fit and its runners-up) looked for among a1's
 * (a1 on the source's data scaled by s and offset by (1, 2, 3), stored
 * again as floats, as bench_invariance's --variant source 0 0 1 0 s): a
 * rotation within 5 deg (ALIGN_DISTINCT_DEG: one answer) and a scale within
 * 5 %. Asserted for `keep` (the answer the bake keeps), printed for the
 * others: a runner-up may land in another minimum of the rough landscape
 * (fine ICP from the same start) or drop off the list's tail. */
static void check_answer_kept(const char *what, const sks_model *src, const sks_skinview *tv, const sks_alignment *a0,
                              size_t keep, double s) {
  sks_model m;
  sks_skinview sv;
  sks_error err;
  memset(&err, 0, sizeof err);
  CHECK_OK(sks_model_clone(src, &m, &err), &err);
  sks_variant_transform_data(&m, sks_variant_axis_angle(0, 0, 1, 0), (float)s, (sks_vec3){1, 2, 3});
  CHECK_OK(sks_skinview_build(&m, "source", &sv, &err), &err);
  sks_alignment a1;
  CHECK_OK(sks_align_similarity(sv.pos, sv.V, sv.tris, sv.tri_count, tv->pos, tv->V, tv->tris, tv->tri_count,
                                tv->diagonal, NULL, &a1, NULL, &err),
           &err);
  const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, t0[3] = {1, 2, 3};
  size_t missing = 0;
  for (size_t k = 0; k <= a0->alternative_count; ++k) {
    const sks_daffine *ak = k ? &a0->alternatives[k - 1] : &a0->A;
    int found = 0;
    double nds = INFINITY, ndr = INFINITY;
    for (size_t j = 0; j <= a1.alternative_count && !found; ++j) {
      sks_daffine bj = through(j ? &a1.alternatives[j - 1] : &a1.A, I, s, t0);
      double ds = fabs(sim_scale(&bj) / sim_scale(ak) - 1), dr = rot_apart_deg(ak, &bj);
      found = ds < 0.05 && dr < 5;
      if (dr < ndr) { ndr = dr; nds = ds; }
    }
    if (!found) ++missing;
    if (k == keep)
      CHECK_MSG(found, "%s: the answer at %.2f deg (scale %.6g) not found with the data x%g (nearest: %.2f deg, %.3g of its scale)",
                what, rot_deg(ak), sim_scale(ak), s, ndr, nds);
  }
  printf("%-44s %zu answers as given, %zu with the data x%g + offset, %zu not among them\n", what,
         a0->alternative_count + 1, a1.alternative_count + 1, s, missing);
  sks_skinview_free(&sv);
  sks_model_free(&m);
}

int main(void) {
  const char *src_path = sks_test_shared_data("godot/godot_mannequiny.glb");
  const char *tgt_path = sks_test_shared_data("RobotExpressive/RobotExpressive.glb");
  if (!src_path || !tgt_path) {
    sks_test_skip("godot/godot_mannequiny.glb or RobotExpressive/RobotExpressive.glb not found (set SKS_SHARED_DATA)");
  }
  sks_error err;
  memset(&err, 0, sizeof err);
  sks_model src, tgt;
  CHECK_OK(sks_load(src_path, NULL, &src, &err), &err);
  CHECK_OK(sks_load(tgt_path, NULL, &tgt, &err), &err);
  sks_skinview sv, tv;
  CHECK_OK(sks_skinview_build(&src, "source", &sv, &err), &err);
  CHECK_OK(sks_skinview_build(&tgt, "target", &tv, &err), &err);
  sks_alignment a0, a0b;
  CHECK_OK(sks_align_similarity(sv.pos, sv.V, sv.tris, sv.tri_count, tv.pos, tv.V, tv.tris, tv.tri_count, tv.diagonal,
                                NULL, &a0, NULL, &err),
           &err);
  CHECK_MSG(!a0.identity && a0.alternative_count >= 4, "as given: identity %d, %zu runners-up", a0.identity,
            a0.alternative_count);
  CHECK_OK(sks_align_similarity(sv.pos, sv.V, sv.tris, sv.tri_count, tv.pos, tv.V, tv.tris, tv.tri_count, tv.diagonal,
                                NULL, &a0b, NULL, &err),
           &err);
  CHECK_MSG(memcmp(&a0.A, &a0b.A, sizeof a0.A) == 0 && a0.alternative_count == a0b.alternative_count,
            "as given twice: not the same bits");
  printf("as given: scale %.9g, %.2f deg, residual %.4f %% D, %zu runners-up\n", a0.scale, a0.angle_deg,
         a0.residual * 100, a0.alternative_count);
  /* the turn of tests/test_bake_humans.c's source variant of this pair
   * (0.5 % of scale apart before the smooth stage), and centimetres with
   * an offset */
  const double t1[3] = {0.4, -1.3, 2.2}, t2[3] = {30, -10, 5};
  check_variant("source data rot125 (0.3,-0.35,-0.33) x0.967", &sv, &tv, &a0, 0.3, -0.35, -0.33, 125, 0.967, t1);
  check_variant("source data x100 + offset", &sv, &tv, &a0, 0, 0, 1, 0, 100, t2);
  /* mannequiny onto the player robot: the source's data only scaled. The
   * fine stage refines ALIGN_REFINE distinct answers; when starts that
   * reached one answer each counted, which starts collapsed moved with the
   * rounding: with the data x0.05 three of the twelve places went to one
   * answer (121.9 deg), and the 11.6 deg answer the bake keeps (76.40 %)
   * was never refined (54.12 %); x0.06 and x0.07 lost it too (71.41 %,
   * 70.90 %). Built against the code before, these checks fail 3 of 4. */
  const char *pl_path = sks_test_shared_data("godot/godot_player.glb");
  if (pl_path) {
    sks_model pl;
    sks_skinview pv;
    CHECK_OK(sks_load(pl_path, NULL, &pl, &err), &err);
    CHECK_OK(sks_skinview_build(&pl, "target", &pv, &err), &err);
    sks_alignment p0;
    CHECK_OK(sks_align_similarity(sv.pos, sv.V, sv.tris, sv.tri_count, pv.pos, pv.V, pv.tris, pv.tri_count, pv.diagonal,
                                  NULL, &p0, NULL, &err),
             &err);
    /* the answer the bake keeps: the one nearest the files' own frames
     * (both upright glTF characters facing +Z; 11.6 deg) */
    size_t keep = 0;
    for (size_t k = 1; k <= p0.alternative_count; ++k)
      if (rot_deg(&p0.alternatives[k - 1]) < rot_deg(keep ? &p0.alternatives[keep - 1] : &p0.A)) keep = k;
    const double keep_deg = rot_deg(keep ? &p0.alternatives[keep - 1] : &p0.A);
    CHECK_MSG(keep_deg < 20, "as given: no answer within 20 deg of the files' frames (nearest %.2f deg)", keep_deg);
    printf("mannequiny onto the player robot: %zu answers, the one kept at %.2f deg is answer %zu\n",
           p0.alternative_count + 1, keep_deg, keep);
    const double scales[4] = {0.05, 0.06, 0.07, 100};
    for (int k = 0; k < 4; ++k) check_answer_kept("mannequiny onto the player robot", &src, &pv, &p0, keep, scales[k]);
    sks_skinview_free(&pv);
    sks_model_free(&pl);
  } else {
    printf("godot/godot_player.glb not found: the scaled-data answers not checked\n");
  }
  sks_skinview_free(&sv);
  sks_skinview_free(&tv);
  sks_model_free(&src);
  sks_model_free(&tgt);
  return sks_test_finish();
}
