/* Real-files issue on HUMAN rigs (different characters, meshes, skeletons,
 * units and bind poses), read in place from ../shared/data:
 *  - one character exported twice (ozz's astronaut from 3ds Max and from
 *    Maya: 14,643 vs 9,977 vertices, inches vs centimetres, other skeleton
 *    node counts): the alignment finds the unit ratio 2.54 and the bake
 *    follows the motion almost exactly, both ways;
 *  - two different characters (CesiumMan onto Godot's mannequiny), whose
 *    sks_variant_numbers must not change when either file is re-exported with other
 *    units, axes, offsets or an armature transform (quality +-0.05 point,
 *    mean / worst %D +-2 %);
 *  - an A-pose re-bind of a T-pose human (mannequiny's upper arms lowered
 *    40 degrees; same mesh, weights and vertex order, bind == rest == the A
 *    pose): the control onto it holds, and a different character's clip
 *    bakes onto it (the registration pose finds the arms);
 *  - mannequiny re-welded and re-ordered, its data turned and scaled: a
 *    control either way (the similarity fitted to the coinciding vertices).
 * Skips when the data is absent. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "util/sks_test.h"
#include "math/sks_math.h"
#include "sks_variants.h"


#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Re-binds the rig in its rest pose with each joint named in `arms` rotated
 * `deg` degrees towards the body (the direction from the joint to the mean
 * of all joint positions, across the arm): vertex data = the old rig's LBS
 * surface in that pose, inverse binds = the pose's inverse joint globals,
 * rest = the pose. Returns the number of joints lowered. */
static int rebind_arms(sks_model *m, const char *const *arms, size_t narms, double deg) {
  size_t J = m->skeleton.joint_count;
  sks_transform *locals = malloc(J * sizeof *locals);
  sks_mat4 *models = malloc(J * sizeof *models);
  sks_quat *glob = malloc(J * sizeof *glob);
  memcpy(locals, m->skeleton.rest, J * sizeof *locals);
  sks_local_to_model_job fk = {m->skeleton.parents, locals, J, NULL, models};
  sks_local_to_model_job_run(&fk);
  double mean[3] = {0, 0, 0};
  for (size_t j = 0; j < J; ++j)
    for (int a = 0; a < 3; ++a) mean[a] += models[j].m[12 + a] / (double)J;
  for (size_t j = 0; j < J; ++j) { /* parents come first in the skeleton */
    int32_t p = m->skeleton.parents[j];
    glob[j] = p >= 0 ? sks_q_mul(glob[p], locals[j].rotation) : locals[j].rotation;
  }
  int lowered = 0;
  for (size_t j = 0; j < J; ++j) {
    int hit = 0;
    for (size_t k = 0; k < narms; ++k) hit |= !strcasecmp(m->skeleton.names[j], arms[k]);
    if (!hit) continue;
    size_t child = J;
    for (size_t c = 0; c < J && child == J; ++c)
      if (m->skeleton.parents[c] == (int32_t)j) child = c;
    if (child == J) continue;
    double arm[3], down[3], d = 0, n = 0;
    for (int a = 0; a < 3; ++a) {
      arm[a] = models[child].m[12 + a] - models[j].m[12 + a];
      n += arm[a] * arm[a];
    }
    n = sqrt(n);
    for (int a = 0; a < 3; ++a) { arm[a] /= n; down[a] = mean[a] - models[j].m[12 + a]; d += down[a] * arm[a]; }
    for (int a = 0; a < 3; ++a) down[a] -= d * arm[a];
    double ax[3] = {arm[1] * down[2] - arm[2] * down[1], arm[2] * down[0] - arm[0] * down[2],
                    arm[0] * down[1] - arm[1] * down[0]};
    int32_t p = m->skeleton.parents[j];
    sks_quat R = sks_variant_axis_angle(ax[0], ax[1], ax[2], deg);
    sks_quat qp = p >= 0 ? glob[p] : sks_q_identity();
    locals[j].rotation = sks_q_normalize(sks_q_mul(sks_q_mul(sks_q_conj(qp), sks_q_mul(R, qp)), locals[j].rotation));
    ++lowered;
  }
  sks_local_to_model_job_run(&fk);
  sks_error err;
  float *pos = malloc(3 * sks_model_total_vertex_count(m) * sizeof(float));
  sks_skin_model(m, models, SKS_SKIN_LBS, pos, NULL, &err);
  size_t o = 0;
  for (size_t p = 0; p < m->part_count; ++p) {
    memcpy(m->parts[p].positions, &pos[3 * o], 3 * m->parts[p].vertex_count * sizeof(float));
    o += m->parts[p].vertex_count;
  }
  for (size_t si = 0; si < m->skin_count; ++si)
    for (size_t b = 0; b < m->skins[si].joint_count; ++b)
      sks_m4_inverse(&models[m->skins[si].joints[b]], &m->skins[si].inverse_bind[b]);
  memcpy(m->skeleton.rest, locals, J * sizeof *locals);
  free(locals); free(models); free(glob); free(pos);
  return lowered;
}

int main(void) {
  const char *max_path = sks_test_shared_data("ozz/ozz_astro_max.dae");
  const char *maya_path = sks_test_shared_data("ozz/ozz_astro_maya.dae");
  const char *cesium_path = sks_test_shared_data("CesiumMan/CesiumMan_weights_unnormalised.gltf");
  const char *manq_path = sks_test_shared_data("godot/godot_mannequiny.glb");
  if (!max_path || !maya_path || !cesium_path || !manq_path)
    sks_test_skip("ozz astronauts / CesiumMan / mannequiny not found (set SKS_SHARED_DATA)");
  sks_model astro_max, astro_maya, cesium, manq, a, b;
  sks_error err;
  CHECK_OK(sks_load(max_path, NULL, &astro_max, &err), &err);
  CHECK_OK(sks_load(maya_path, NULL, &astro_maya, &err), &err);
  CHECK_OK(sks_load(cesium_path, NULL, &cesium, &err), &err);
  CHECK_OK(sks_load(manq_path, NULL, &manq, &err), &err);
  /* under the sanitizers (SKS_SANITIZED=1, ~10x slower) half of the pairs
   * run: one astronaut direction, the base pair, one parent and the data
   * conventions variant, the A-pose control */
  int full = getenv("SKS_SANITIZED") == NULL;
  printf("%-44s | alignment found                             | quality    | mean / worst\n", "pair");

  /* one character, two exporters: inches (Max) vs centimetres (Maya) */
  sks_variant_numbers mm = sks_variant_bake("astronaut Max -> Maya (other mesh, units)", &astro_max, &astro_maya, NULL);
  CHECK_MSG(mm.ok && fabs(mm.scale - 2.54) < 0.01 && mm.q > 99.9 && mm.mean < 0.01 && mm.worst < 0.5,
            "Max -> Maya: scale %.5f, %.4f %% / %.5f / %.4f %%D", mm.scale, mm.q, mm.mean, mm.worst);
  sks_variant_numbers my = full ? sks_variant_bake("astronaut Maya -> Max", &astro_maya, &astro_max, NULL) : mm;
  if (full) CHECK_MSG(my.ok && fabs(my.scale - 1 / 2.54) < 0.01 / 2.54 && my.q > 99.9 && my.mean < 0.01 && my.worst < 0.5,
            "Maya -> Max: scale %.5f, %.4f %% / %.5f / %.4f %%D", my.scale, my.q, my.mean, my.worst);

  /* two characters; the same pair re-exported with other conventions */
  /* (97.15 % / 6.77 %D while the similarity's ICP stopped wherever its
   * steps fell under its threshold in the flat valley of scale between two
   * bodies, at 0.97; run to the valley's minimum it is 1.07: 96.65 % /
   * 9.95 %D, a body turned a half turn: CesiumMan names no joint, and
   * since its labels come from its skeleton's shape (README "Unnamed
   * rigs, and a finalist turned back") the feet rule that one out, and
   * that one turned back about the target's up is kept: 96.87 % / 7.93 %D,
   * head agreement 0.99, its feet 0.5 deg off; the one of scale 1.25 that faced
   * right, 96.19 %, moved 0.065 point with the data's rounding and 1.39
   * with a mirror) */
  sks_variant_numbers base = sks_variant_bake("CesiumMan -> mannequiny", &cesium, &manq, NULL);
  CHECK_MSG(base.ok && base.q > 96.5 && base.worst < 11 && base.heads > 0.9 && isnan(base.labels) && base.feet < 30 &&
                base.up < 30,
            "CesiumMan -> mannequiny: %.4f %% / %.4f %%D, names %.2f (head %.2f), feet %.1f deg off, head %.1f deg off",
            base.q, base.worst, base.labels, base.heads, base.feet, base.up);
  sks_transform cm = {{0, 0, 0}, {0, 0, 0, 1}, {0.01f, 0.01f, 0.01f}};
  sks_transform zup = {{3, -1, 2}, sks_variant_axis_angle(1, 0, 0, -90), {1, 1, 1}};
  sks_model_clone(&manq, &b, &err); sks_variant_add_parent(&b, cm);
  sks_variant_same("target parent scale 0.01", sks_variant_bake("... target parent scale 0.01 (cm)", &cesium, &b, NULL), base);
  sks_model_free(&b);
  if (full) {
    sks_model_clone(&cesium, &a, &err); sks_variant_add_parent(&a, zup);
    sks_variant_same("source parent Z-up + offset", sks_variant_bake("... source parent Z-up + offset", &a, &manq, NULL), base);
    sks_model_free(&a);
  }
  /* conventions baked into the vertex data (an exporter's "apply transform"
   * to Z-up in cm; a model turned to face -Z, in mm) */
  sks_model_clone(&cesium, &a, &err);
  sks_variant_transform_data(&a, sks_variant_axis_angle(1, 0, 0, -90), 100.0f, (sks_vec3){30, -10, 5});
  sks_model_clone(&manq, &b, &err);
  sks_variant_transform_data(&b, sks_variant_axis_angle(0, 1, 0, 180), 1000.0f, (sks_vec3){0, 1, 0});
  sks_variant_same("data conventions", sks_variant_bake("... src data Z-up x100, tgt data rot180 x1000", &a, &b, NULL), base);
  sks_model_free(&b);
  sks_model_free(&a);
  /* an export between left- and right-handed axes (the data mirrored,
   * winding reversed, the scene unchanged): the similarity is a mirror, the
   * scenes say so (their map's determinant), and the mirrored hypotheses
   * are searched first; a mirror-symmetric body fits a rotated copy of its
   * mirror image too, which would swap its sides */
  {
    sks_model_clone(&manq, &b, &err);
    sks_variant_mirror_data(&b, 1, sks_variant_axis_angle(1, 0, 0, 90), 0.01f, (sks_vec3){0, 1, 0});
    sks_variant_numbers n = sks_variant_bake("... tgt data mirrored (y), Z-up x0.01", &cesium, &b, NULL);
    sks_variant_same("target data mirrored", n, base);
    CHECK_MSG(n.mirrored, "target data mirrored: the alignment should be a mirror");
    sks_model_free(&b);
    if (full) {
      sks_model_clone(&cesium, &a, &err);
      sks_variant_mirror_data(&a, 2, sks_variant_axis_angle(1, 2, 3, 37), 3.0f, (sks_vec3){1, 2, 3});
      n = sks_variant_bake("... src data mirrored (z), rot37 x3", &a, &manq, NULL);
      sks_variant_same("source data mirrored", n, base);
      CHECK_MSG(n.mirrored, "source data mirrored: the alignment should be a mirror");
      sks_model_free(&a);
    }
  }
  /* the same surfaces listed in another vertex order and re-welded (what
   * Blender's exporters write): the alignment's and the registration's
   * samples are drawn by the positions, never the file's order (with an
   * index stride through the vertices, one re-order moved this pair by
   * 4.4 quality points, between two basins of scale 0.92 and 1.25) */
  sks_model_clone(&manq, &b, &err);
  sks_variant_reweld(&b, 2862681365u);
  sks_variant_same("target re-welded, re-ordered", sks_variant_bake("... target re-welded + re-ordered", &cesium, &b, NULL), base);
  sks_model_free(&b);
  if (full) {
    sks_model_clone(&cesium, &a, &err);
    sks_variant_reweld(&a, 2131988640u);
    sks_variant_same("source re-welded, re-ordered", sks_variant_bake("... source re-welded + re-ordered", &a, &manq, NULL), base);
    sks_model_free(&a);
  }
  if (full) {
    /* an arbitrary rotation (no axis convention) with scale and offset baked
     * into the source's data: the alignment's hypotheses come from the shapes'
     * principal frames, not the files' axes, so the same answer comes out */
    sks_variant_same_turned("source data rot37 (1,2,3) x3", &cesium, &manq, 0, 1, 2, 3, 37, 3.0f, base);
    /* the same on the target's side (once a known limit: the similarity's
     * farthest-point sample changed under the rotated data's float rounding,
     * and two bodies' flat basins ended apart) */
    sks_variant_same_turned("target data rot73 (-2,1,.5) x0.1", &cesium, &manq, 1, -2, 1, 0.5, 73, 0.1f, base);
  }

  /* the other direction, mannequiny onto CesiumMan: the registration's
   * pulls are weighed smoothly (no pair flips in or out of the trim), the
   * rotation-only solver's damping is isotropic per joint, and closest-point
   * ties (a seam's welded copies, an edge two triangles share) go to the
   * lowest index whatever the tree's axes: a source turned by a half turn
   * (bit-exact data) gives the same numbers to the rounding, as a target
   * does; a rotation and scale baked into either file's data (float
   * rounding) stay within the 0.05 point and 2 %. Before the tie
   * rule the half turn moved quality 0.014 point and the worst vertex 2.2 %,
   * and source-side rounding up to 2.7 % */
  if (full) {
    sks_variant_numbers mc = sks_variant_bake("mannequiny -> CesiumMan", &manq, &cesium, NULL);
    CHECK_MSG(mc.ok && mc.q > 96.8 && mc.worst < 6, "mannequiny -> CesiumMan: %.4f %% / %.5f / %.4f %%D", mc.q, mc.mean, mc.worst);
    sks_variant_same_turned("mannequiny: tgt data rot235 x66.9", &manq, &cesium, 1, 0.3, -0.8, 0.5, 235, 66.9f, mc);
    sks_variant_same_turned("mannequiny: src data rot343 x0.127", &manq, &cesium, 0, -0.4, 0.2, 0.9, 343, 0.127f, mc);
    sks_model_clone(&manq, &a, &err);
    sks_variant_transform_data(&a, sks_variant_axis_angle(0, 0, 1, 180), 1.0f, (sks_vec3){0, 0, 0});
    sks_variant_numbers mh = sks_variant_bake("... src data half turn about z (exact)", &a, &cesium, NULL);
    /* to the rounding: the solves' floats are not the same bits in the two
     * orientations. The worst vertex was 3e-7 of itself apart, 1.09e-6 once
     * the rotation-only LM took its pair moments from the objective's
     * evaluation (2026-12-05), 1.01e-6 with its Newton-decrement stop
     * (2026-12-06; quality 2.3e-7 point, mean 9.6e-8 of itself): bound 2e-6
     * (it was 1e-6). The tie flips this guards against moved it 2.2 %. */
    CHECK_MSG(mh.ok && fabs(mh.q - mc.q) <= 1e-6 && fabs(mh.mean - mc.mean) <= 1e-6 * mc.mean &&
                  fabs(mh.worst - mc.worst) <= 2e-6 * mc.worst,
              "mannequiny: src data half turn: %.8f %% / %.8f / %.8f %%D vs %.8f / %.8f / %.8f", mh.q, mh.mean, mh.worst,
              mc.q, mc.mean, mc.worst);
    sks_model_free(&a);
  }

  /* CesiumMan onto the Maya astronaut: the boots' inner edges lie nearer
   * CesiumMan's other foot; re-matched onto their own leg's region
   * (correspondence limbs) the worst vertex is 7.8 % D, crossed it was 37.5 */
  if (full) {
    sks_variant_numbers ca = sks_variant_bake("CesiumMan -> astronaut Maya (big boots)", &cesium, &astro_maya, NULL);
    CHECK_MSG(ca.ok && ca.q > 94.5 && ca.worst < 12, "CesiumMan -> astronaut: %.4f %% / %.5f / %.4f %%D", ca.q, ca.mean, ca.worst);
    sks_model_clone(&astro_maya, &b, &err);
    sks_variant_add_parent(&b, zup);
    sks_variant_same("astronaut target parent Z-up", sks_variant_bake("... target parent Z-up + offset", &cesium, &b, NULL), ca);
    sks_model_free(&b);
  }

  /* a second pair of bodies, a low-polygon robot onto the Max astronaut
   * (inches): its registration is asked the same with the target's data
   * turned arbitrarily and the source's scene in other units. The two
   * stand 2.12 and 6.36 units tall in their bind poses (`skinsolve pose
   * --bind`): the similarity is the one that puts the robot on the
   * astronaut's feet and head (an index-stride sample used to find one at
   * 2.09, the robot at 70 % of the height, torso on torso: 96.9 % quality
   * for a registration 3.9 % D apart). The astronaut's head is far larger
   * than the robot's, which costs this pair quality (the head holds half
   * the residual) */
  const char *player_path = sks_test_shared_data("godot/godot_player.glb");
  if (full && player_path) {
    sks_model player;
    CHECK_OK(sks_load(player_path, NULL, &player, &err), &err);
    sks_variant_numbers pb = sks_variant_bake("player robot -> astronaut Max", &player, &astro_max, NULL);
    /* (worst 16.6 % D until 2026-12-07; registered on one vertex a position
     * and from the polished similarity, 20.7 % D at 89.74 %: the worst
     * vertex is the astronaut's head, which the robot's cannot fill. The
     * torso-on-torso fit this guards against is the scale 2.09. With the
     * registration's energy (2026-12-07) two finalists come within 0.5
     * point on trial, scale 2.985 (97.01 %, head agreement 0.74) and 2.415
     * (97.51 %, head agreement 1.00), and the second is kept: 96.86 %,
     * worst 4.99 % D) */
    CHECK_MSG(pb.ok && pb.scale > 2.3 && pb.scale < 3.3 && pb.heads > 0.7 && pb.q > 88 && pb.worst < 10,
              "player -> astronaut: scale %.4f, head agreement %.2f, %.4f %% / %.5f / %.4f %%D", pb.scale, pb.heads, pb.q,
              pb.mean, pb.worst);
    sks_model_clone(&astro_max, &b, &err);
    sks_variant_transform_data(&b, sks_variant_axis_angle(-2, 1, 0.5, 73), 0.1f, (sks_vec3){1, 2, 3});
    sks_model_clone(&player, &a, &err);
    sks_variant_add_parent(&a, cm);
    /* (with the similarity run to its minimum this variant's registration
     * settled 4 rounds before its averaging ended, and a settle dropped
     * the mean: another pose, 89.80 % for 90.14 %; a settle while
     * averaging now counts for the rounds left: 90.1413 %; there is no
     * averaging since the registration's energy, 2026-12-07) */
    sks_variant_same("player: tgt data rot73, src parent x0.01",
                     sks_variant_bake("... tgt data rot73 x0.1, src parent x0.01", &a, &b, NULL), pb);
    sks_model_free(&a); sks_model_free(&b);
    /* player robot -> mannequiny: two similarity candidates of one scale
     * (mirror images through the target's plane of symmetry, 67 degrees
     * apart) register 0.4 % apart, and the similarity stage's ranking of
     * them changed with the target's data turned (95.28 % and worst 26.34
     * %D as given, 95.57 % and 22.30 %D turned): its sample had a hard cut
     * that rounding moved a point across, and its ICP stopped wherever the
     * steps got small. Now within the 0.05 point and 2 % */
    sks_variant_numbers pm = sks_variant_bake("player robot -> mannequiny", &player, &manq, NULL);
    sks_variant_same_turned("player -> mannequiny: tgt data rot285 x2.85", &player, &manq, 1, 1, 2, 3, 285, 2.85f, pm);
    /* the player robot's foot bones are 0.3 % of its height: its knees say
     * which way it faces (README "The knees' direction"). Before, the body
     * kept stood turned a half turn (rotation 177.7 deg, 95.26 %): the
     * sides' names, which the robot gives from the viewer, could not tell */
    CHECK_MSG(pm.ok && pm.feet < 30, "player -> mannequiny: faces %.1f deg off the target's way", pm.feet);
    /* mannequiny -> player robot: the limb guard re-matches 292 vertices
     * of one target joint among the triangles of their limb; searched in
     * one index of the whole source that skipped the other triangles, the
     * search went past the correspondence's work bound with the target's
     * data so turned (bench_invariance's 4th variant, seed 7) and not as
     * given, and those vertices kept the other limb's motion: 70.63 % and
     * worst 17.95 %D against 71.59 % and 15.63 %D. Each limb's triangles
     * now have an index of their own. (71.59 % then, 76.40 % on
     * 2026-12-07 with the same rounds, which did not settle: 73.49 % with
     * the source's data offset; 68.96 % with the registration's energy,
     * 68.98 % offset) */
    sks_variant_numbers mp = sks_variant_bake("mannequiny -> player robot", &manq, &player, NULL);
    CHECK_MSG(mp.ok && mp.q > 67 && mp.feet < 30, "mannequiny -> player: %.4f %%, faces %.1f deg off", mp.q, mp.feet);
    sks_variant_same_turned("mannequiny -> player: tgt data rot285 x2.85", &manq, &player, 1, -0.495071888, -0.283547223,
                            -0.139056623, 285.197225, 2.8532052f, mp);
    /* the source's data only offset by (1, 2, 3), and scaled x0.05 as
     * well: the same similarity, but the registration's rounds never
     * settled and stopped where the data's rounding led them, 73.49 % and
     * 76.30 % against 76.40 % as given (2.9 and 0.105 points off). The
     * rounds descend one energy now (register_pose, 2026-12-07): within
     * 0.02 point */
    sks_variant_same_turned("mannequiny -> player: src data offset", &manq, &player, 0, 0, 0, 1, 0, 1.0f, mp);
    sks_variant_same_turned("mannequiny -> player: src data x0.05", &manq, &player, 0, 0, 0, 1, 0, 0.05f, mp);
    /* the player robot re-welded as the source onto mannequiny: its 1,396
     * vertices (960 positions) became 1,862, past the registration's 1,500
     * constraints, and the registration fit a sample instead of every
     * vertex: 0.46 quality point off. The choice went by the positions
     * (2026-12-06), but each copy of a position was a constraint of its
     * own, so the copies weighed in the fit: 0.147 point off here, and onto
     * CesiumMan another finalist kept, 2.40 points off (98.04 % as given,
     * 95.64 % re-welded). The registration fits one vertex a position now
     * (2026-12-07): a source re-weld changes nothing (measured: the same
     * quality to the printed digit on both) */
    sks_model_clone(&player, &a, &err);
    sks_variant_reweld(&a, 2131988640u);
    sks_variant_numbers pr = sks_variant_bake("player robot -> mannequiny, source re-welded", &a, &manq, NULL);
    CHECK_MSG(pr.ok && fabs(pr.scale / pm.scale - 1) < 1e-4 && fabs(pr.q - pm.q) < 0.005 &&
                  fabs(pr.worst - pm.worst) < 0.02 * pm.worst,
              "player -> mannequiny, source re-welded: scale %.6g / %.6g, %.4f / %.4f %%, worst %.4f / %.4f %%D", pr.scale,
              pm.scale, pr.q, pm.q, pr.worst, pm.worst);
    sks_variant_numbers pc = sks_variant_bake("player robot -> CesiumMan", &player, &cesium, NULL);
    sks_variant_numbers pcr = sks_variant_bake("player robot -> CesiumMan, source re-welded", &a, &cesium, NULL);
    CHECK_MSG(pc.ok && pcr.ok && fabs(pcr.q - pc.q) < 0.005 && fabs(pcr.worst - pc.worst) < 0.02 * pc.worst &&
                  pcr.finalist_chosen == pc.finalist_chosen,
              "player -> CesiumMan, source re-welded: %.4f / %.4f %%, worst %.4f / %.4f %%D, finalist %zu / %zu", pcr.q,
              pc.q, pcr.worst, pc.worst, pcr.finalist_chosen, pc.finalist_chosen);
    sks_model_free(&a);
    sks_model_free(&player);
  } else if (full) {
    printf("skip: godot/godot_player.glb not found, second pair of bodies not run\n");
  }

  /* astronaut Maya -> mannequiny: between these two bodies the similarity
   * lies in a flat valley of scale, where one sample point more or less (a
   * hard cut that a re-export's rounding moved a point across) and an ICP
   * that stopped wherever its steps got small landed 0.3 % apart in scale,
   * and the registration in another pose: the target's data turned 73
   * degrees moved the quality 0.22 point. The sample now fades at its cut
   * and the ICP runs to the valley's minimum (align.c) */
  if (full) {
    sks_variant_numbers am = sks_variant_bake("astronaut Maya -> mannequiny", &astro_maya, &manq, NULL);
    /* (97.28 % until the registration's energy, 2026-12-07: 96.73 %) */
    CHECK_MSG(am.ok && am.q > 96.5, "astronaut Maya -> mannequiny: %.4f %% / %.4f %%D", am.q, am.worst);
    sks_variant_same_turned("Maya -> mannequiny: tgt data rot73 x0.1", &astro_maya, &manq, 1, -2, 1, 0.5, 73, 0.1f, am);
    sks_variant_same_turned("Maya -> mannequiny: src data rot322 x1.11", &astro_maya, &manq, 0, -1, 0.5, 2, 322, 1.11f, am);
  }

  /* RobotExpressive -> mannequiny: two registered candidates 81 degrees
   * apart fit the target's bind surface within 3 % of each other and
   * transfer 95.4 % and 91.6 % of the motion; which one the distances
   * chose went with the data's rounding. Both are finalists, each baked on
   * trial, and the one that transfers the motion is kept, with the source's
   * data turned too. Not invariant in general: over random data variants
   * the spread is 0.064 point (bench_invariance, 2026-12-05), from an exact
   * 40 / 40 tie in the limb vote (mannequiny's left thumb between the
   * robot's Thumb2.L and Palm3.L) that a variant breaks one way or the
   * other; this variant lands on the side of the file as given (95.4357 %
   * both), so the check below holds for it and proves no more */
  const char *robot_path = sks_test_shared_data("RobotExpressive/RobotExpressive.glb");
  if (full && robot_path) {
    sks_model robot;
    CHECK_OK(sks_load(robot_path, NULL, &robot, &err), &err);
    sks_variant_numbers rm = sks_variant_bake("RobotExpressive -> mannequiny", &robot, &manq, NULL);
    CHECK_MSG(rm.ok && rm.q > 95 && rm.finalists >= 2 && rm.trial_quality[rm.finalist_chosen] > 0.95,
              "RobotExpressive -> mannequiny: %.4f %%, %zu finalists, kept %zu (trial %.4f)", rm.q, rm.finalists,
              rm.finalist_chosen, rm.trial_quality[rm.finalist_chosen]);
    for (size_t k = 0; k < rm.finalists && k < SKS_BAKE_FINALISTS; ++k)
      CHECK_MSG(!(rm.trial_quality[k] > rm.trial_quality[rm.finalist_chosen]), "finalist %zu: trial %.4f over the kept %.4f",
                k, rm.trial_quality[k], rm.trial_quality[rm.finalist_chosen]);
    sks_variant_same_turned("RobotExpressive: src data rot322 x1.11", &robot, &manq, 0, -1, 0.5, 2, 322, 1.11f, rm);
    /* astronaut Max onto RobotExpressive: the trial kept the similarity
     * alone at 177.7 deg (93.50 % on trial), upside down by the names: the
     * robot's legs and arms on the astronaut's head (head agreement 0); the
     * registration's choice, 8.2 deg as RobotExpressive onto the Max
     * astronaut finds, agrees 0.70 on the head, 0.87 in all. Since a
     * finalist facing the other way is also tried turned back (README
     * "Unnamed rigs, and a finalist turned back"), that one is kept at
     * 26.5 deg: 86.05 % for 85.23 %, worst 6.4 for 11.3 % D, names 0.94,
     * its head 33.5 deg off (upright: the rule's line is 60), its feet 18 */
    sks_variant_numbers xr = sks_variant_bake("astronaut Max -> RobotExpressive (names)", &astro_max, &robot, NULL);
    CHECK_MSG(xr.ok && xr.heads > 0.5 && xr.labels > 0.75 && (xr.angle < 30 || xr.angle > 330) && xr.up < 45 &&
                  xr.feet < 30,
              "Max -> RobotExpressive: names agree %.2f (head %.2f), %.1f deg, head %.1f deg off", xr.labels, xr.heads,
              xr.angle, xr.up);
    /* mannequiny onto RobotExpressive: every finalist agreed 0 on the head
     * (the robot's head is twice a human's: its vertices' closest source
     * points lie on the shoulders whichever way the body stands), so the
     * head agreement ruled none out, and the trial kept the similarity
     * alone lying on its side: its head 92 deg from the target's (89.53 %,
     * worst 20.3 % D). The head's direction rules it out (README "Joint
     * names"): the body kept stands upright. It stood turned a half turn
     * (names 0.08, 79.25 %) until the feet's direction ruled that one out
     * (README "The feet's direction"): names 1.00, its feet 11 deg off */
    sks_variant_numbers mr = sks_variant_bake("mannequiny -> RobotExpressive (head up)", &manq, &robot, NULL);
    CHECK_MSG(mr.ok && mr.up < 30 && mr.finalists >= 2 && mr.feet < 30 && mr.labels > 0.9,
              "mannequiny -> RobotExpressive: head %.1f deg off, feet %.1f deg off, names %.2f, %zu finalists", mr.up,
              mr.feet, mr.labels, mr.finalists);
    /* CesiumMan onto RobotExpressive re-welded (7,214 vertices -> 7,586):
     * the candidates were ranked by the target vertices' mean distance,
     * where a copy counted twice, and another similarity won (scale 0.0386
     * for 0.0324, 112.5 for 88.8 degrees: 72.88 % against 83.41 %). They
     * are ranked with each distinct position once now: the same alignment
     * and the same distance. (Quality is not compared: the metrics sum over
     * every target vertex, copies included, MISSION.md: 85.88 % here) */
    {
      sks_variant_numbers cr = sks_variant_bake("CesiumMan -> RobotExpressive", &cesium, &robot, NULL);
      /* (its labels from its shape, README "Unnamed rigs, and a finalist
       * turned back"): every finalist the names kept faced the other way
       * (feet 176 deg off, 83.41 %); the one turned back about the
       * target's up is registered and kept, facing the target's way
       * (86.19 %, head agreement 1.00) */
      CHECK_MSG(cr.ok && cr.heads > 0.9 && cr.feet < 30 && cr.up < 30,
                "CesiumMan -> RobotExpressive: head agreement %.2f, feet %.1f deg off, head %.1f deg off", cr.heads,
                cr.feet, cr.up);
      sks_model_clone(&robot, &b, &err);
      sks_variant_reweld(&b, 2862681365u);
      sks_variant_numbers cw = sks_variant_bake("... target re-welded", &cesium, &b, NULL);
      CHECK_MSG(cr.ok && cw.ok && fabs(cw.scale / cr.scale - 1) < 1e-4 && fabs(cw.angle - cr.angle) < 0.01 &&
                    fabs(cw.dist - cr.dist) < 1e-4 * cr.dist && fabs(cw.worst - cr.worst) < 0.02 * cr.worst,
                "CesiumMan -> RobotExpressive re-welded: scale %.6g / %.6g, %.3f / %.3f deg, distance %.6f / %.6f %%D, "
                "worst %.4f / %.4f %%D", cw.scale, cr.scale, cw.angle, cr.angle, cw.dist, cr.dist, cw.worst, cr.worst);
      sks_model_free(&b);
    }
    /* RobotExpressive onto the player robot: the robot's limbs lie far
     * from their own limbs' closest points on the source; re-matched onto
     * their region however far (README "Limbs"): 97.59 %, worst 5.5 % D;
     * with the 5 % D limit of before, 62.59 %, worst 31.3 % D */
    const char *pl_path = sks_test_shared_data("godot/godot_player.glb");
    if (pl_path) {
      sks_model pl;
      CHECK_OK(sks_load(pl_path, NULL, &pl, &err), &err);
      sks_variant_numbers rp = sks_variant_bake("RobotExpressive -> player robot", &robot, &pl, NULL);
      /* (97.59 % until 2026-12-07, with the similarity alone kept on
       * trial; from the polished similarity a registered candidate comes
       * within REGISTER_NEAR of its distance, 3.23 against 4.88 % D, and is
       * kept: 93.05 %, worst 4.9 % D; with the fine stage's distinct
       * answers (2026-12-07, afternoon) another registers closer, 2.08 % D,
       * and is kept: 92.83 %, worst 9.92 % D, 0.8 % under the bar of 10 this
       * check had. What this guards is the limbs' worst vertex, 31.3 % D
       * without the re-match: the bar sits between the two, at 15) */
      CHECK_MSG(rp.ok && rp.q > 90 && rp.worst < 15, "RobotExpressive -> player robot: %.4f %%, worst %.3g %%D", rp.q, rp.worst);
      /* CesiumMan onto it: by the robot's knees the similarity alone faces
       * the other way (179 deg); turned back and registered it faces the
       * robot's way, its head up, and is kept (86.20 % on trial; before
       * the knees told, the turned one was kept: 94.28 %) */
      sks_bake_result r;
      CHECK_OK(sks_bake(&cesium, &pl, NULL, &r, &err), &err);
      CHECK_MSG(r.alignment.facing_by_knees == 2 && r.alignment.facing_deg < 30 && r.alignment.head_agreement > 0.9 &&
                    r.alignment.up_deg < 30,
                "CesiumMan -> player robot: by knees %d, faces %.1f deg off, head %.2f, %.1f deg off",
                r.alignment.facing_by_knees, r.alignment.facing_deg, r.alignment.head_agreement, r.alignment.up_deg);
      CHECK(strcmp(sks_bake_facing_by(&r.alignment), "the source's feet and the target's knees") == 0);
      sks_bake_result_free(&r);
      /* under a 5.5 % line: that one (5.97 % D) and the similarity alone
       * lie farther than the line, so their trials do not bake: their
       * trial quality is NaN ("refused (too far)", JSON null), not 0 */
      sks_bake_options opt;
      memset(&opt, 0, sizeof opt);
      opt.max_residual_pct = 5.5;
      CHECK_OK(sks_bake(&cesium, &pl, &opt, &r, &err), &err);
      size_t refused = 0;
      for (size_t k = 0; k < r.alignment.finalists && k < SKS_BAKE_FINALISTS; ++k) {
        refused += isnan(r.alignment.trial_quality[k]);
        CHECK_MSG(isnan(r.alignment.trial_quality[k]) || r.alignment.trial_quality[k] != 0, "finalist %zu: trial 0", k);
      }
      /* since CesiumMan's labels come from its shape (README "Unnamed
       * rigs, and a finalist turned back") the two registered finalists are upside down by the names
       * (not baked) and the similarity alone is refused: none bakes, the
       * registration's choice stands, and the finalists are still said */
      CHECK_MSG(r.alignment.finalists >= 2 && refused >= 1 &&
                    r.alignment.finalist_chosen == r.alignment.finalist_registration,
                "CesiumMan -> player robot under 5.5 %%: %zu finalists, %zu refused, kept %zu", r.alignment.finalists, refused,
                r.alignment.finalist_chosen);
      sks_bake_result_free(&r);
      sks_model_free(&pl);
    }
    sks_model_free(&robot);
  } else if (full) {
    printf("skip: RobotExpressive/RobotExpressive.glb not found\n");
  }

  /* The refusal line (README "Refusal line"): BCN_Epileptic (assimp's X
   * test model, a human of 3,014 vertices) onto mannequiny lies 3.75 % D
   * from it after alignment (5.39 % before the registration's energy,
   * 2026-12-07): refused under a line of 3 % (asked here through
   * max_residual_pct), baked at the default 8 %, not flagged */
  const char *bcn_path = sks_test_assimp_model("X/BCN_Epileptic.X");
  if (full && bcn_path) {
    sks_model bcn;
    CHECK_OK(sks_load(bcn_path, NULL, &bcn, &err), &err);
    sks_variant_numbers bm = sks_variant_bake("BCN_Epileptic -> mannequiny (3-8 % D apart)", &bcn, &manq, NULL);
    CHECK_MSG(bm.ok && bm.dist > 3.2 && bm.dist < 8 && !bm.over_default_limit && bm.q > 90,
              "BCN_Epileptic -> mannequiny: %.3g %% D apart, %.4f %%", bm.dist, bm.q);
    /* the source exported in other units, its placement scaled with it (a
     * units export): the bars. With the offset (1, 2, 3) kept at
     * x0.01 (the sweep's harsher "scale" variant) the data is re-stored at
     * ~1.2e-5 of the body's size and the pair moves 0.083 point (README
     * "Data re-stored coarsely") */
    {
      sks_model bcn_cm;
      CHECK_OK(sks_model_clone(&bcn, &bcn_cm, &err), &err);
      sks_variant_transform_data(&bcn_cm, sks_variant_axis_angle(0, 0, 1, 0), 0.01f, (sks_vec3){0.01f, 0.02f, 0.03f});
      sks_variant_same("BCN_Epileptic in cm", sks_variant_bake("... source data x0.01, offset x0.01", &bcn_cm, &manq, NULL), bm);
      sks_model_free(&bcn_cm);
    }
    sks_bake_options opt;
    memset(&opt, 0, sizeof opt);
    opt.max_residual_pct = 3;
    sks_bake_result r;
    CHECK(sks_bake(&bcn, &manq, &opt, &r, &err) == SKS_ERR_INVALID);
    CHECK_MSG(strstr(err.message, "(limit 3%;") != NULL, "%s", err.message);
    /* The joints' names among the finalists (README "Alignment
     * finalists"): astronaut Maya onto BCN_Epileptic has three registered
     * candidates; the trial's pooled quality kept a body on its side
     * (165.4 deg: its arms on BCN's head, 92.04 % on trial, mean error
     * 1.918 % D) over the upright one (2.8 deg, 88.72 % on trial, 0.851
     * % D). Its names now rule it out: the head where the head is, and the
     * sides on their sides */
    sks_variant_numbers yb = sks_variant_bake("astronaut Maya -> BCN_Epileptic (names)", &astro_maya, &bcn, NULL);
    CHECK_MSG(yb.ok && yb.heads > 0.75 && yb.labels > 0.75 && (yb.angle < 20 || yb.angle > 340) && yb.mean < 1.2 &&
                  yb.up < 30,
              "Maya -> BCN_Epileptic: names agree %.2f (head %.2f), %.1f deg, mean %.3f %% D, head %.1f deg off",
              yb.labels, yb.heads, yb.angle, yb.mean, yb.up);
    /* RobotExpressive onto BCN_Epileptic: the three screened candidates
     * registered all put the robot's limbs on BCN's head (head agreement 0:
     * 93.49 %, mean error 1.143 % D); the best ranked candidate that does
     * not is registered in the third one's place and kept (head 0.83:
     * 94.36 %, 0.339 % D). That one faced the other way by its feet (names
     * 0.55): the feet's direction keeps one facing the target's way (names
     * 0.82, its feet 5 deg off: 93.00 %, 0.373 % D) */
    if (robot_path) {
      sks_model robot;
      CHECK_OK(sks_load(robot_path, NULL, &robot, &err), &err);
      sks_variant_numbers rb = sks_variant_bake("RobotExpressive -> BCN_Epileptic (names)", &robot, &bcn, NULL);
      CHECK_MSG(rb.ok && rb.heads > 0.75 && rb.mean < 0.6 && rb.up < 30 && rb.feet < 30,
                "RobotExpressive -> BCN_Epileptic: names agree %.2f (head %.2f), mean %.3f %% D, head %.1f deg off, "
                "feet %.1f deg off", rb.labels, rb.heads, rb.mean, rb.up, rb.feet);
      /* the other way: none of the three best screened candidates passes
       * the names (two lie on their side, 88 and 94 deg off), and the trial
       * kept the third (86.50 % on trial, 87.60 % baked); one that stands
       * upright is registered in the third one's place and kept (its head
       * agreement is low, 0.07 on trial: the robot's head, twice a
       * human's, has its closest points on BCN's shoulders) */
      sks_variant_numbers br = sks_variant_bake("BCN_Epileptic -> RobotExpressive (head up)", &bcn, &robot, NULL);
      CHECK_MSG(br.ok && br.up < 30, "BCN_Epileptic -> RobotExpressive: head %.1f deg off", br.up);
      sks_model_free(&robot);
    }
    /* The player robot onto BCN_Epileptic: of the three candidates
     * registered in full, two face back by their feet (179 deg, two
     * nearby minima of the similarity) and one faces BCN's way; the
     * similarity alone, upside down, is the registration's choice. The
     * first upright finalist facing back, turned a half turn, faces the
     * target's way too (96.11 % on trial against 95.58). It used to find
     * no place among the finalists (only one the names rule out could give
     * its place, and that was the registration's choice): as given it was
     * never tried and the pair baked at 95.656 %, while with the target's
     * data x0.05 (one nearby minimum fewer, a place for it) it was kept:
     * 95.952 %. Now a finalist the feet rule out gives its place */
    const char *pl_path2 = sks_test_shared_data("godot/godot_player.glb");
    if (pl_path2) {
      sks_model pl;
      CHECK_OK(sks_load(pl_path2, NULL, &pl, &err), &err);
      sks_variant_numbers pb = sks_variant_bake("player robot -> BCN_Epileptic", &pl, &bcn, NULL);
      CHECK_MSG(pb.ok && pb.up < 30 && pb.feet < 30, "player robot -> BCN_Epileptic: head %.1f, feet %.1f deg off",
                pb.up, pb.feet);
      sks_variant_same_turned("player -> BCN_Epileptic: tgt data x0.05", &pl, &bcn, 1, 0, 0, 1, 0, 0.05f, pb);
      sks_model_free(&pl);
    }
    sks_model_free(&bcn);
  } else if (full) {
    printf("skip: assimp-testmodels X/BCN_Epileptic.X not found\n");
  }

  /* A-pose re-bind of the T-pose mannequiny */
  static const char *const arms[] = {"upperarm.l", "upperarm.r"};
  sks_model apose;
  sks_model_clone(&manq, &apose, &err);
  CHECK(rebind_arms(&apose, arms, 2, 40) == 2);
  sks_variant_numbers ctl = sks_variant_bake("mannequiny -> its A-pose re-bind (control)", &manq, &apose, "run_root.001");
  CHECK_MSG(ctl.ok && ctl.q > 99.99 && ctl.mean < 0.001 && ctl.worst < 0.01, "A-pose control: %.5f %% / %.6f / %.6f %%D",
            ctl.q, ctl.mean, ctl.worst);
  sks_variant_numbers ca = full ? sks_variant_bake("CesiumMan -> mannequiny A-pose re-bind", &cesium, &apose, NULL) : base;
  /* the re-bound rig is another rig (its bind surface is the LBS blend of
   * the A pose), so its sks_variant_numbers need not equal the T-pose's; what must hold
   * is that the arms are found (no refusal, not flagged) and that the
   * quality stays close to the T-pose target's */
  CHECK_MSG(ca.ok && ca.q > base.q - 1 && ca.mean < 1.5 * base.mean, "CesiumMan -> A-pose: %.4f %% / %.5f %%D (T-pose %.4f %% / %.5f)",
            ca.q, ca.mean, base.q, base.mean);
  sks_model_free(&apose);

  /* the same mesh re-welded and re-ordered (Blender's FBX export splits
   * mannequiny's 12,597 vertices into 41,496), its data turned 37 degrees
   * and scaled x3, either side: a control. The ICP's similarity alone is
   * close, not exact (scale 2.9967 for 3: 99.63 %, worst vertex 0.97 %D);
   * fitted to the coinciding vertices it is */
  {
    sks_model rw;
    sks_model_clone(&manq, &rw, &err);
    sks_variant_reweld(&rw, 5);
    sks_variant_transform_data(&rw, sks_variant_axis_angle(1, 2, 3, 37), 3.0f, (sks_vec3){1, 0, 0});
    printf("re-welded mannequiny: %zu of %zu vertices in part 0\n", rw.parts[0].vertex_count, manq.parts[0].vertex_count);
    sks_variant_numbers r1 = sks_variant_bake("mannequiny -> itself re-welded, rot37 x3", &manq, &rw, "idle_root.001");
    CHECK_MSG(r1.ok && r1.same_surface && r1.mean < 0.001 && r1.worst < 0.01,
              "re-welded target: same surface %d, %.5f %% / %.6f / %.6f %%D", r1.same_surface, r1.q, r1.mean, r1.worst);
    sks_variant_numbers r2 = sks_variant_bake("... re-welded -> mannequiny", &rw, &manq, "idle_root.001");
    CHECK_MSG(r2.ok && r2.same_surface && r2.mean < 0.001 && r2.worst < 0.01,
              "re-welded source: same surface %d, %.5f %% / %.6f / %.6f %%D", r2.same_surface, r2.q, r2.mean, r2.worst);
    sks_model_free(&rw);
  }

  sks_model_free(&astro_max); sks_model_free(&astro_maya); sks_model_free(&cesium); sks_model_free(&manq);
  return sks_test_finish();
}
