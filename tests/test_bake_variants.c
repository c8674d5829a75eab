/* Invariance of every bake number (real-files issue, part 3): the Fox onto
 * Blender's automatic-weights rig, clip Walk, re-exported with other
 * conventions on either side must give the original pair's quality within
 * 0.05 point and its mean / worst %D errors within 2 %:
 *  - a non-joint parent node above the skeleton (an armature object's
 *    transform): scale 0.01 (cm vs m) on the target, 100 on the source,
 *    Z-up rotation, an arbitrary rotation + scale + offset on both;
 *  - units baked into the data (vertex data, rest and key translations and
 *    inverse binds in cm);
 *  - a different mesh of the same creature: a decimated copy of the target
 *    (every other triangle, re-indexed, weights carried over), where the
 *    control is exact (a perfect solution exists) under any convention.
 * The variants are built here from ../shared/data; skips when absent. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util/sks_test.h"
#include "math/sks_math.h"
#include "solve/solve_internal.h"
#include "sks_variants.h"


#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* The same rig exported in other units: every length times k. */
static void bake_units(sks_model *m, float k) {
  for (size_t p = 0; p < m->part_count; ++p)
    for (size_t i = 0; i < 3 * m->parts[p].vertex_count; ++i) m->parts[p].positions[i] *= k;
  for (size_t j = 0; j < m->skeleton.joint_count; ++j) {
    m->skeleton.rest[j].translation.x *= k;
    m->skeleton.rest[j].translation.y *= k;
    m->skeleton.rest[j].translation.z *= k;
  }
  for (size_t s = 0; s < m->skin_count; ++s)
    for (size_t b = 0; b < m->skins[s].joint_count; ++b)
      for (int r = 0; r < 3; ++r) m->skins[s].inverse_bind[b].m[12 + r] *= k;
  for (size_t c = 0; c < m->clip_count; ++c)
    for (size_t t = 0; t < m->clips[c].track_count; ++t) {
      sks_track *tr = &m->clips[c].tracks[t];
      if (tr->path != SKS_PATH_TRANSLATION) continue;
      size_t n = tr->key_count * 3 * (tr->interpolation == SKS_INTERP_CUBICSPLINE ? 3 : 1);
      for (size_t i = 0; i < n; ++i) tr->values[i] *= k;
    }
}

/* The same rig re-bound in another pose: the target's vertex data become its
 * surface posed by `clip` at time t (bent legs, head, tail), its inverse binds
 * the inverse joint globals of that pose, and its rest pose that pose: same
 * mesh, weights and vertex order, bind == rest == the new pose. */
static void rebind(sks_model *m, const sks_clip *clip, float t) {
  size_t J = m->skeleton.joint_count;
  sks_transform *locals = malloc(J * sizeof *locals);
  sks_mat4 *models = malloc(J * sizeof *models);
  float *pos = malloc(3 * sks_model_total_vertex_count(m) * sizeof(float));
  sks_sampling_job sj = {clip, m->skeleton.rest, J, t, 0, 0, locals};
  sks_sampling_job_run(&sj);
  sks_local_to_model_job fk = {m->skeleton.parents, locals, J, NULL, models};
  sks_local_to_model_job_run(&fk);
  sks_error err;
  sks_skin_model(m, models, SKS_SKIN_LBS, pos, NULL, &err);
  size_t o = 0;
  for (size_t p = 0; p < m->part_count; ++p) { /* rigid parts: in their node's space, which follows it */
    if (m->parts[p].skin >= 0) memcpy(m->parts[p].positions, &pos[3 * o], 3 * m->parts[p].vertex_count * sizeof(float));
    o += m->parts[p].vertex_count;
  }
  for (size_t si = 0; si < m->skin_count; ++si)
    for (size_t b = 0; b < m->skins[si].joint_count; ++b)
      sks_m4_inverse(&models[m->skins[si].joints[b]], &m->skins[si].inverse_bind[b]);
  memcpy(m->skeleton.rest, locals, J * sizeof *locals);
  free(locals); free(models); free(pos);
}

/* The rest pose a pose throughout, the bind untouched, as Blender's FBX
 * export writes a rig (every bone's transform is the pose of its current
 * frame; the inverse binds and the vertex data stay the bind pose): every
 * skin joint below the top-most one takes its local of `clip` at t. */
static void rest_is_pose(sks_model *m, const sks_clip *clip, float t) {
  size_t J = m->skeleton.joint_count;
  sks_transform *locals = malloc(J * sizeof *locals);
  uint8_t *skin_joint = calloc(J, 1);
  sks_sampling_job sj = {clip, m->skeleton.rest, J, t, 0, 0, locals};
  sks_sampling_job_run(&sj);
  for (size_t si = 0; si < m->skin_count; ++si)
    for (size_t b = 0; b < m->skins[si].joint_count; ++b) skin_joint[m->skins[si].joints[b]] = 1;
  size_t moved = 0;
  for (size_t j = 0; j < J; ++j) {
    if (!skin_joint[j]) continue;
    int below = 0;
    for (int32_t a = m->skeleton.parents[j]; a >= 0 && !below; a = m->skeleton.parents[a]) below = skin_joint[a];
    if (below) { m->skeleton.rest[j] = locals[j]; ++moved; }
  }
  printf("rest = pose: %zu of %zu joints moved\n", moved, J);
  free(locals); free(skin_joint);
}

/* Keeps every other triangle of every part and drops unused vertices. */
static void decimate(sks_model *m) {
  for (size_t p = 0; p < m->part_count; ++p) {
    sks_mesh_part *part = &m->parts[p];
    size_t V = part->vertex_count, ic = part->influence_count, nt = part->index_count / 3;
    int64_t *map = malloc(V * sizeof *map);
    for (size_t v = 0; v < V; ++v) map[v] = -1;
    size_t nv = 0, ni = 0;
    for (size_t t = 0; t < nt; t += 2)
      for (int k = 0; k < 3; ++k) {
        uint32_t v = part->indices[3 * t + k];
        if (map[v] < 0) map[v] = (int64_t)nv++;
        part->indices[ni++] = (uint32_t)map[v];
      }
    for (size_t v = 0; v < V; ++v) {
      if (map[v] < 0) continue;
      size_t d = (size_t)map[v];
      memmove(&part->positions[3 * d], &part->positions[3 * v], 3 * sizeof(float));
      if (part->normals) memmove(&part->normals[3 * d], &part->normals[3 * v], 3 * sizeof(float));
      if (part->uvs) memmove(&part->uvs[2 * d], &part->uvs[2 * v], 2 * sizeof(float));
      if (ic) {
        memmove(&part->joints[ic * d], &part->joints[ic * v], ic * sizeof(uint16_t));
        memmove(&part->weights[ic * d], &part->weights[ic * v], ic * sizeof(float));
      }
    }
    part->vertex_count = nv;
    part->index_count = ni;
    free(map);
  }
}

int main(void) {
  const char *fox_path = sks_test_shared_data("Fox/Fox.glb");
  const char *tgt_path = sks_test_shared_data("fox_targets/fox_rig_autoweights.glb");
  if (!fox_path || !tgt_path) sks_test_skip("Fox / fox_rig_autoweights not found (set SKS_SHARED_DATA)");
  sks_model fox, tgt, a, b;
  sks_error err;
  CHECK_OK(sks_load(fox_path, NULL, &fox, &err), &err);
  CHECK_OK(sks_load(tgt_path, NULL, &tgt, &err), &err);
  printf("%-34s | alignment found                                                     | quality   | mean / worst\n", "pair (clip Walk)");
  sks_variant_numbers base = sks_variant_bake("Fox -> autoweights", &fox, &tgt, "Walk");
  CHECK(base.ok && base.q > 90 && base.q < 99);

  sks_transform cm = {{0, 0, 0}, {0, 0, 0, 1}, {0.01f, 0.01f, 0.01f}};
  sks_transform x100 = {{0, 0, 0}, {0, 0, 0, 1}, {100, 100, 100}};
  sks_transform zup = {{0, 0, 0}, sks_variant_axis_angle(1, 0, 0, -90), {1, 1, 1}};
  sks_transform odd_s = {{5, -3, 12}, sks_variant_axis_angle(1, 2, 3, 37), {2, 2, 2}};
  sks_transform odd_t = {{-100, 0, 40}, sks_variant_axis_angle(1, 0, 0, 90), {0.5f, 0.5f, 0.5f}};

  sks_model_clone(&tgt, &b, &err); sks_variant_add_parent(&b, cm);
  sks_variant_same("target parent scale 0.01", sks_variant_bake("target parent scale 0.01", &fox, &b, "Walk"), base);
  sks_model_free(&b);

  sks_model_clone(&fox, &a, &err); sks_variant_add_parent(&a, x100);
  sks_variant_same("source parent scale 100", sks_variant_bake("source parent scale 100", &a, &tgt, "Walk"), base);
  sks_model_free(&a);

  sks_model_clone(&fox, &a, &err); sks_variant_add_parent(&a, zup);
  sks_variant_same("source Z-up", sks_variant_bake("source parent Z-up", &a, &tgt, "Walk"), base);
  sks_model_free(&a);

  sks_model_clone(&fox, &a, &err); sks_variant_add_parent(&a, odd_s);
  sks_model_clone(&tgt, &b, &err); sks_variant_add_parent(&b, odd_t);
  sks_variant_same("both parents", sks_variant_bake("both: x2 rot37 offset / x0.5 Y-up", &a, &b, "Walk"), base);
  sks_model_free(&b);
  sks_model_free(&a);

  sks_model_clone(&tgt, &b, &err); bake_units(&b, 100);
  sks_variant_same("target in cm", sks_variant_bake("target units x100 in the data", &fox, &b, "Walk"), base);
  sks_model_free(&b);

  sks_model_clone(&fox, &a, &err); bake_units(&a, 0.01f);
  sks_model_clone(&tgt, &b, &err); bake_units(&b, 100);
  sks_variant_same("both in other units", sks_variant_bake("source x0.01 data, target x100 data", &a, &b, "Walk"), base);
  sks_model_free(&b);
  sks_model_free(&a);

  /* units baked in + rotated data (the mesh itself stored Z-up) */
  sks_model_clone(&fox, &a, &err); bake_units(&a, 0.01f); sks_variant_add_parent(&a, zup);
  sks_variant_same("source cm data + Z-up parent", sks_variant_bake("source x0.01 data + Z-up parent", &a, &tgt, "Walk"), base);
  sks_model_free(&a);

  /* the transform applied to the mesh data: the bind spaces differ by a similarity */
  sks_model_clone(&tgt, &b, &err);
  sks_variant_transform_data(&b, sks_variant_axis_angle(1, 0, 0, 90), 1.0f, (sks_vec3){0, 0, 0});
  sks_variant_same("target data Z-up", sks_variant_bake("target data rotated (Z-up)", &fox, &b, "Walk"), base);
  {
    /* what the joints' names say of an alignment (README "The head's
     * direction"): that target taken as it is (--align none, under a
     * limit of 100 % D) lies on its side, its head turned 90 deg about x
     * (the Fox's head direction is across x); aligned, it stands as the
     * source does */
    const char *walk = "Walk";
    sks_bake_options o;
    memset(&o, 0, sizeof o);
    o.clip_names = &walk;
    o.clip_name_count = 1;
    o.fps = 4;
    o.align = SKS_ALIGN_NONE;
    o.max_residual_pct = 100;
    sks_bake_result r;
    if (sks_bake(&fox, &b, &o, &r, &err) == SKS_OK) {
      CHECK_MSG(fabs(r.alignment.up_deg - 90) < 1, "Fox onto its target turned, unaligned: head %.2f deg off",
                r.alignment.up_deg);
      sks_bake_result_free(&r);
    } else {
      CHECK_MSG(0, "Fox onto its target turned, unaligned: %s", err.message);
    }
    o.align = SKS_ALIGN_AUTO;
    CHECK_OK(sks_bake(&fox, &b, &o, &r, &err), &err);
    CHECK_MSG(r.alignment.up_deg < 1, "Fox onto its target turned, aligned: head %.2f deg off", r.alignment.up_deg);
    /* re-welded (either side): the same figure (each distinct position
     * once, sks_copy_weights) */
    const double up0 = r.alignment.up_deg;
    sks_bake_result_free(&r);
    for (int side = 0; side < 2; ++side) {
      sks_model w;
      CHECK_OK(sks_model_clone(side ? &fox : &b, &w, &err), &err);
      sks_variant_reweld(&w, 31 + (unsigned)side);
      CHECK_OK(sks_bake(side ? &w : &fox, side ? &b : &w, &o, &r, &err), &err);
      CHECK_MSG(fabs(r.alignment.up_deg - up0) < 1e-6, "%s re-welded: head %.9f deg off, as given %.9f",
                side ? "source" : "target", r.alignment.up_deg, up0);
      sks_bake_result_free(&r);
      sks_model_free(&w);
    }
  }
  sks_model_free(&b);
  sks_model_clone(&fox, &a, &err);
  sks_variant_transform_data(&a, sks_variant_axis_angle(1, 2, 3, 37), 2.0f, (sks_vec3){30, -10, 5});
  sks_model_clone(&tgt, &b, &err);
  sks_variant_transform_data(&b, sks_variant_axis_angle(0, 1, 0, 180), 0.01f, (sks_vec3){0, 1, 0});
  sks_variant_same("both data transformed", sks_variant_bake("source data x2 rot37, target x0.01 rot180", &a, &b, "Walk"), base);
  sks_model_free(&b);
  sks_model_free(&a);

  /* an export between left- and right-handed axes: the data (and inverse
   * binds) mirrored, winding reversed, the scene unchanged: the bind spaces
   * are mirror images, A a mirror (det < 0). The Fox is mirror-symmetric,
   * so a rotation fitted its mirror image too (the surface alone cannot
   * tell): before, 51.73 % / 2.30 %D for the target mirrored, and its
   * control 43.48 %. */
  {
    sks_model_clone(&tgt, &b, &err);
    sks_variant_mirror_data(&b, 0, sks_variant_axis_angle(0, 0, 1, 0), 1.0f, (sks_vec3){0, 0, 0});
    sks_variant_numbers n = sks_variant_bake("target data mirrored (x)", &fox, &b, "Walk");
    sks_variant_same("target data mirrored", n, base);
    CHECK_MSG(n.mirrored, "target data mirrored: the alignment should be a mirror");
    sks_model_free(&b);
    sks_model_clone(&fox, &a, &err);
    sks_variant_mirror_data(&a, 2, sks_variant_axis_angle(1, 2, 3, 37), 3.0f, (sks_vec3){1, 2, 3});
    sks_model_clone(&tgt, &b, &err);
    sks_variant_mirror_data(&b, 1, sks_variant_axis_angle(1, 0, 0, 90), 0.01f, (sks_vec3){0, 1, 0});
    n = sks_variant_bake("source mirrored z x3 rot37, target mirrored y Z-up x0.01", &a, &b, "Walk");
    sks_variant_same("both mirrored", n, base);
    CHECK_MSG(!n.mirrored, "both mirrored: the two mirrors cancel (a rotation)");
    sks_model_free(&b);
    sks_variant_numbers ctl = sks_variant_bake("Fox -> itself, source mirrored z (control)", &a, &fox, "Walk");
    CHECK_MSG(ctl.ok && ctl.mirrored && ctl.q > 99.99 && ctl.mean <= 0.001 && ctl.worst <= 0.01,
              "mirrored control: %.5f %% / %.6f / %.6f %%D (mirror %d)", ctl.q, ctl.mean, ctl.worst, ctl.mirrored);
    sks_model_free(&a);
  }

  /* re-bound in another pose (the Fox's Run at 0.3 s: legs and tail
   * bent): the registration pose P finds it, and motion is measured from the
   * source's bind pose, so neither the pose nor its offset counts as motion */
  {
    int32_t survey = sks_clip_find(fox.clips, fox.clip_count, "Run");
    CHECK(survey >= 0);
    sks_model_clone(&tgt, &b, &err);
    if (survey >= 0) rebind(&b, &fox.clips[survey], 0.3f);
    /* the Fox re-bound with its OWN weights: the registration pose is exact,
     * so the control holds as if nothing had changed */
    sks_model self;
    sks_model_clone(&fox, &self, &err);
    if (survey >= 0) rebind(&self, &fox.clips[survey], 0.3f);
    sks_variant_numbers sc = sks_variant_bake("Fox -> Fox re-bound (Run @ 0.3 s)", &fox, &self, "Walk");
    CHECK_MSG(sc.ok && sc.q > 99.99 && sc.mean < 0.001 && sc.worst < 0.01, "re-bound control: %.5f %% / %.6f / %.6f %%D", sc.q, sc.mean, sc.worst);
    sks_variant_transform_data(&self, sks_variant_axis_angle(0, 1, 0, 90), 0.01f, (sks_vec3){1, 0, 0});
    sks_variant_numbers sc2 = sks_variant_bake("... + data x0.01 rot90", &fox, &self, "Walk");
    CHECK_MSG(sc2.ok && sc2.q > 99.99 && sc2.mean < 0.001 && sc2.worst < 0.01, "re-bound control, other axes/units: %.5f %% / %.6f / %.6f %%D", sc2.q, sc2.mean, sc2.worst);
    sks_model_free(&self);
    /* the auto-weights target re-bound: its rig and the Fox's deform the
     * bent pose differently, so the registration pose is only the closest
     * the Fox's rig gets (0.23 %D): quality is close to the original pair's
     * (89.0 vs 93.2 %), far better than with no registration (63 %), but NOT
     * within the 0.05-point invariance (known limit, stated in the README) */
    sks_variant_numbers rb = sks_variant_bake("target re-bound (Run @ 0.3 s)", &fox, &b, "Walk");
    CHECK_MSG(rb.ok && rb.q > 85 && rb.mean < 2 * base.mean, "re-bound autoweights: %.4f %% / %.5f %%D", rb.q, rb.mean);
    sks_variant_transform_data(&b, sks_variant_axis_angle(0, 1, 0, 90), 0.01f, (sks_vec3){1, 0, 0});
    sks_variant_same("re-bound + other units/axes", sks_variant_bake("re-bound + data x0.01 rot90", &fox, &b, "Walk"), rb);
    sks_model_free(&b);
  }

  /* the rest a pose throughout (no two joints' rest skin matrices agree),
   * the bind kept, on either side: the bind space's place in the scene comes
   * from the top-most skin joint (before: from whichever joint won a vote of
   * one, so the source's recorded motion carried a rigid offset the solve
   * followed: errors unchanged, motion and quality not; a Blender FBX
   * re-export of the Fox scored 97.0 % for 93.19 %) */
  {
    int32_t run = sks_clip_find(fox.clips, fox.clip_count, "Run");
    CHECK(run >= 0);
    if (run >= 0) {
      sks_model_clone(&fox, &a, &err);
      rest_is_pose(&a, &fox.clips[run], 0.3f);
      sks_variant_same("source rest = a pose", sks_variant_bake("source rest = Run @ 0.3 s, bind kept", &a, &tgt, "Walk"), base);
      sks_variant_add_parent(&a, odd_s);
      sks_variant_same("source rest = a pose + parent", sks_variant_bake("... + parent x2 rot37 offset", &a, &tgt, "Walk"), base);
      sks_model_free(&a);
      sks_model_clone(&tgt, &b, &err);
      rest_is_pose(&b, &fox.clips[run], 0.3f);
      sks_variant_same("target rest = a pose", sks_variant_bake("target rest = Run @ 0.3 s, bind kept", &fox, &b, "Walk"), base);
      sks_model_free(&b);
    }
  }

  /* a different mesh: decimated copy of the Fox with its own weights: the
   * motion transfer asks for exactly what its own rig can do */
  sks_model dec;
  sks_model_clone(&fox, &dec, &err); decimate(&dec);
  printf("decimated Fox: %zu of %zu vertices\n", sks_model_vertex_count(&dec), sks_model_vertex_count(&fox));
  sks_variant_numbers ctl = sks_variant_bake("Fox -> decimated Fox (control)", &fox, &dec, "Walk");
  CHECK_MSG(ctl.ok && ctl.q > 99.99 && ctl.mean < 0.001, "decimated control: %.5f %% / %.6f %%D", ctl.q, ctl.mean);
  sks_model_clone(&dec, &b, &err); sks_variant_add_parent(&b, odd_t); bake_units(&b, 3);
  sks_variant_numbers ctl2 = sks_variant_bake("Fox -> decimated, x3 data, Y-up", &fox, &b, "Walk");
  CHECK_MSG(ctl2.ok && ctl2.q > 99.99 && ctl2.mean < 0.001, "decimated control, other conventions: %.5f %% / %.6f %%D", ctl2.q, ctl2.mean);
  sks_model_free(&b);
  /* decimated target with the auto weights under another convention, vs the same with none */
  sks_model dtg;
  sks_model_clone(&tgt, &dtg, &err); decimate(&dtg);
  sks_variant_numbers d0 = sks_variant_bake("Fox -> decimated autoweights", &fox, &dtg, "Walk");
  sks_model_clone(&dtg, &b, &err); sks_variant_add_parent(&b, cm);
  sks_model_clone(&fox, &a, &err); sks_variant_add_parent(&a, odd_s);
  sks_variant_same("decimated, both conventions", sks_variant_bake("same, target x0.01, source odd", &a, &b, "Walk"), d0);
  sks_model_free(&a);
  sks_model_free(&b);
  /* different vertex sets AND another bind space: found by the ICP alignment */
  sks_model_clone(&dtg, &b, &err);
  sks_variant_transform_data(&b, sks_variant_axis_angle(1, 2, 3, 37), 2.0f, (sks_vec3){30, -10, 5});
  sks_variant_numbers d1 = sks_variant_bake("decimated, data x2 rot37 offset", &fox, &b, "Walk");
  sks_variant_same("decimated, data transformed (ICP)", d1, d0);
  sks_model_free(&b);
  sks_model_free(&dtg);
  sks_model_free(&dec);

  /* --align none keeps the old behaviour: a pair in other units is refused */
  {
    sks_model_clone(&tgt, &b, &err); bake_units(&b, 100);
    sks_bake_options opt;
    memset(&opt, 0, sizeof opt);
    opt.align = SKS_ALIGN_NONE;
    const char *clip[] = {"Walk"};
    opt.clip_names = clip;
    opt.clip_name_count = 1;
    sks_bake_result r;
    CHECK(sks_bake(&fox, &b, &opt, &r, &err) == SKS_ERR_INVALID);
    CHECK_MSG(strstr(err.message, "do not match") != NULL, "%s", err.message);
    sks_model_free(&b);
    /* the refusal limit (max_residual_pct): the target's data moved by 40 %
     * of its diagonal, not aligned, is refused at the default 8 % with its
     * mean distance in the message; a limit above that distance bakes it,
     * flagged over_default_limit with the same distance; one below it is
     * refused naming that limit; out-of-range limits are argument errors */
    sks_bake_result r0;
    CHECK(sks_bake(&fox, &tgt, &opt, &r0, &err) == SKS_OK);
    const double D = r0.diagonal;
    CHECK_MSG(!r0.alignment.over_default_limit && r0.alignment.residual_pct < 8, "as given: %.3g %%D", r0.alignment.residual_pct);
    sks_bake_result_free(&r0);
    sks_model_clone(&tgt, &b, &err);
    const float o = (float)(0.4 * D / sqrt(3.0));
    sks_variant_transform_data(&b, sks_variant_axis_angle(0, 0, 1, 0), 1.0f, (sks_vec3){o, o, o});
    CHECK(sks_bake(&fox, &b, &opt, &r, &err) == SKS_ERR_INVALID);
    double dist = -1, lim = -1;
    const char *at = strstr(err.message, "on average ");
    CHECK_MSG(at && sscanf(at, "on average %lf%% of its diagonal from the source surface (limit %lf%%", &dist, &lim) == 2 &&
              dist > 8 && dist < 40 && lim == 8 && strstr(err.message, "--max-residual"), "%s", err.message);
    opt.max_residual_pct = dist + 0.5;
    CHECK_MSG(sks_bake(&fox, &b, &opt, &r, &err) == SKS_OK, "%s", err.message);
    CHECK_MSG(r.alignment.over_default_limit && fabs(r.alignment.residual_pct - dist) < 0.01 * dist &&
              r.clip_count == 1 && isfinite(r.clips[0].mean_error_pct),
              "limit %.3g: over %d, residual %.4g vs %.4g", opt.max_residual_pct, r.alignment.over_default_limit,
              r.alignment.residual_pct, dist);
    printf("target moved 40 %% D, --align none: %.3g %%D from the source, refused at 8 %%, baked at %.3g %%: "
           "quality %.2f %%, mean %.3g %%D\n", dist, opt.max_residual_pct, 100 * r.clips[0].quality, r.clips[0].mean_error_pct);
    sks_bake_result_free(&r);
    opt.max_residual_pct = dist - 0.5;
    CHECK(sks_bake(&fox, &b, &opt, &r, &err) == SKS_ERR_INVALID);
    char want[64];
    snprintf(want, sizeof want, "(limit %.3g%%;", dist - 0.5);
    CHECK_MSG(strstr(err.message, want) != NULL, "wanted '%s' in: %s", want, err.message);
    const double badlim[] = {-1, 100.5, NAN};
    for (int k = 0; k < 3; ++k) {
      opt.max_residual_pct = badlim[k];
      CHECK_MSG(sks_bake(&fox, &b, &opt, &r, &err) == SKS_ERR_ARGUMENT, "limit %g accepted", badlim[k]);
    }
    sks_model_free(&b);
  }
  sks_model_free(&fox);
  sks_model_free(&tgt);

  /* other rigs re-bound in a pose of their first clip (30 % in), onto
   * themselves: the vertex-for-vertex registration reproduces the pose, so
   * each is a control. Before: every bone's rotation about its joint only
   * (CesiumMan's and the robot's clips key translations: 0.45 %D off, worst
   * 30 / 3.5 %D), no 3-axis scale (mannequiny's thighs: 0.27 %D worst), and
   * no registration at all within 0.3 %D of the bind (animation_with_
   * skeleton.fbx: 98.2 %). Weights normalised first: the bake plays them so. */
  static const struct { const char *rel; int assimp; } rebound[] = {
      {"CesiumMan/CesiumMan_weights_unnormalised.gltf", 0}, {"godot/godot_mannequiny.glb", 0},
      {"RobotExpressive/RobotExpressive.glb", 0}, {"FBX/animation_with_skeleton.fbx", 1}};
  for (size_t i = 0; i < sizeof rebound / sizeof rebound[0]; ++i) {
    const char *path = rebound[i].assimp ? sks_test_assimp_model(rebound[i].rel) : sks_test_shared_data(rebound[i].rel);
    sks_model rm;
    if (!path || sks_load(path, NULL, &rm, &err) != SKS_OK) continue;
    sks_normalize_weights(&rm);
    sks_model_clone(&rm, &b, &err);
    rebind(&b, &rm.clips[0], 0.3f * rm.clips[0].duration);
    char label[96];
    snprintf(label, sizeof label, "%s re-bound (clip 0 @ 30 %%)", rebound[i].rel);
    sks_variant_numbers n = sks_variant_bake(label, &rm, &b, rm.clips[0].name);
    CHECK_MSG(n.ok && n.q > 99.99 && n.mean <= 0.001 && n.worst <= 0.01, "%s: a control: %.5f %% / %.6f / %.6f %%D",
              label, n.q, n.mean, n.worst);
    sks_model_free(&b);
    sks_model_free(&rm);
  }

  /* decimated copies as targets (every other triangle, unused vertices
   * dropped): their vertices are some of the original's, so the similarity
   * is fitted to those (sks_align_same_surface one way) and the seams'
   * copies go by their side: controls. Before: godot_mannequiny's ICP
   * between the two samples settled 1e-4 D off (worst 0.99 %D), Testwuson's
   * mid-line copies took either weights (0.38 %D). */
  static const struct { const char *rel; int assimp; const char *clip; } decimated[] = {
      {"godot/godot_mannequiny.glb", 0, NULL}, {"X/Testwuson.X", 1, "Wuson_Walk"}};
  for (size_t i = 0; i < sizeof decimated / sizeof decimated[0]; ++i) {
    const char *path =
        decimated[i].assimp ? sks_test_assimp_model(decimated[i].rel) : sks_test_shared_data(decimated[i].rel);
    sks_model dm;
    if (!path || sks_load(path, NULL, &dm, &err) != SKS_OK) continue;
    sks_model_clone(&dm, &b, &err);
    decimate(&b);
    sks_variant_transform_data(&b, sks_variant_axis_angle(1, 2, 3, 37), 3.0f, (sks_vec3){1, 2, 3});
    char label[96];
    snprintf(label, sizeof label, "%s -> decimated, x3 rot37", decimated[i].rel);
    sks_variant_numbers n = sks_variant_bake(label, &dm, &b, decimated[i].clip ? decimated[i].clip : dm.clips[0].name);
    CHECK_MSG(n.ok && n.q > 99.99 && n.mean <= 0.001 && n.worst <= 0.01, "%s: a control: %.5f %% / %.6f / %.6f %%D",
              label, n.q, n.mean, n.worst);
    CHECK_MSG(n.ok && n.subset && !n.same_surface, "%s: the alignment says subset (%d) and not same surface (%d)",
              label, n.subset, n.same_surface);
    sks_model_free(&b);
    sks_model_free(&dm);
  }

  /* the same surface re-welded, with seam copies that differ in weights:
   * Testwuson's mid-line holds 9 pairs of copies of one position whose
   * weights differ by 0.05 (one side's joint, the other's). The closest
   * point of a re-welded vertex landed on either copy (worst 0.42 %D for a
   * control); each copy now goes by the side its triangles lie on
   * (correspondence.c sks_correspondence_coincident) */
  const char *wuson_path = sks_test_assimp_model("X/Testwuson.X");
  sks_model wu;
  if (wuson_path && sks_load(wuson_path, NULL, &wu, &err) == SKS_OK) {
    for (int side = 0; side < 2; ++side)
      for (unsigned seed = 1; seed <= 2; ++seed) {
        sks_model_clone(&wu, &b, &err);
        sks_variant_reweld(&b, 977 * seed);
        char label[64];
        snprintf(label, sizeof label, "Testwuson %s re-welded (seed %u)", side ? "source" : "target", 977 * seed);
        sks_variant_numbers n = side ? sks_variant_bake(label, &b, &wu, "Wuson_Walk") : sks_variant_bake(label, &wu, &b, "Wuson_Walk");
        CHECK_MSG(n.ok && n.same_surface && n.q > 99.99 && n.mean <= 0.001 && n.worst <= 0.01,
                  "%s: a control: %.5f %% / %.6f / %.6f %%D", label, n.q, n.mean, n.worst);
        sks_model_free(&b);
      }
    sks_model_free(&wu);
  }
  return sks_test_finish();
}
