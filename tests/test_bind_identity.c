/* The skinning identity on every real skinned model: pose each skin's joints
 * where its inverse bind matrices say (sks_bind_pose_job), run FK, build the
 * palette and skin through the PUBLIC jobs: every stored vertex must come
 * back to within 1e-5 of the model diagonal D. This checks, end to end, that
 * the importers store bind-space positions, inverse bind matrices in our
 * column-major convention, parent-first skeletons and skin joint indices that
 * point at the right joints.
 *
 * Also printed per model: how far the REST pose (the nodes' stored local
 * transforms) is from the bind pose, in % of D. Most files are not in bind
 * pose at rest; the Fox is (to ~4e-5 % D), so its rest-pose skin must give
 * its vertices back too. */
#include <stdlib.h>
#include <string.h>

#include "sks_test.h"

typedef struct measured {
  double bind_err, rest_err, wmin, wmax;
  size_t vertices;
  int ok;
} measured;

/* Skins part `pi` with joint model matrices `models`; returns max |out - p|. */
static double skin_part_error(const sks_model *m, size_t pi, const sks_mat4 *models, sks_mat4 *palette,
                              float *out, int *ok) {
  const sks_mesh_part *p = &m->parts[pi];
  const sks_skin *skin = &m->skins[p->skin];
  sks_palette_job pj = {skin, models, m->skeleton.joint_count, palette};
  if (!sks_palette_job_run(&pj)) { *ok = 0; return INFINITY; }
  /* The identity needs weights that sum to 1; several files store sums of
   * 0.94..1.38 (printed below). Normalise a copy, as sks_repair would, so
   * this test measures matrices, indices and positions, not the file's
   * weight hygiene. */
  size_t k = p->influence_count, nw = p->vertex_count * k;
  float *w = malloc((nw ? nw : 1) * sizeof *w);
  if (!w) { *ok = 0; return INFINITY; }
  for (size_t v = 0; v < p->vertex_count; ++v) {
    double sum = 0;
    for (size_t i = 0; i < k; ++i) sum += p->weights[v * k + i];
    for (size_t i = 0; i < k; ++i) w[v * k + i] = sum > 0 ? (float)(p->weights[v * k + i] / sum) : 0.0f;
  }
  sks_skinning_job sj;
  memset(&sj, 0, sizeof sj);
  sj.method = SKS_SKIN_LBS;
  sj.vertex_count = p->vertex_count;
  sj.influence_count = p->influence_count;
  sj.palette = palette;
  sj.palette_count = skin->joint_count;
  sj.joints = p->joints;
  sj.weights = w;
  sj.in_positions = p->positions;
  sj.out_positions = out;
  int ran = sks_skinning_job_run(&sj);
  free(w);
  if (!ran) { *ok = 0; return INFINITY; }
  double worst = 0;
  for (size_t v = 0; v < 3 * p->vertex_count; ++v) {
    double d = fabs((double)out[v] - p->positions[v]);
    if (!(d <= worst)) worst = d; /* NaN wins */
  }
  return worst;
}

static measured measure(const sks_model *m) {
  measured r = {0, 0, INFINITY, -INFINITY, 0, 1};
  size_t jc = m->skeleton.joint_count, maxv = 0, maxj = 0;
  for (size_t i = 0; i < m->part_count; ++i)
    if (m->parts[i].skin >= 0 && m->parts[i].vertex_count > maxv) maxv = m->parts[i].vertex_count;
  for (size_t s = 0; s < m->skin_count; ++s)
    if (m->skins[s].joint_count > maxj) maxj = m->skins[s].joint_count;
  sks_transform *locals = malloc(jc * sizeof *locals);
  sks_mat4 *scratch = malloc(jc * sizeof *scratch), *models = malloc(jc * sizeof *models),
           *rest_models = malloc(jc * sizeof *rest_models);
  sks_mat4 *palette = malloc((maxj ? maxj : 1) * sizeof *palette);
  float *out = malloc((maxv ? maxv : 1) * 3 * sizeof *out);
  sks_local_to_model_job rest_fk = {m->skeleton.parents, m->skeleton.rest, jc, NULL, rest_models};
  if (!sks_local_to_model_job_run(&rest_fk)) r.ok = 0;
  for (size_t i = 0; i < m->part_count && r.ok; ++i) {
    const sks_mesh_part *p = &m->parts[i];
    if (p->skin < 0) continue;
    r.vertices += p->vertex_count;
    for (size_t v = 0; v < p->vertex_count; ++v) {
      double sum = 0;
      for (size_t k = 0; k < p->influence_count; ++k) sum += p->weights[v * p->influence_count + k];
      r.wmin = fmin(r.wmin, sum);
      r.wmax = fmax(r.wmax, sum);
    }
    sks_bind_pose_job bj = {&m->skeleton, &m->skins[p->skin], scratch, locals, 1};
    sks_local_to_model_job fk = {m->skeleton.parents, locals, jc, NULL, models};
    if (!sks_bind_pose_job_run(&bj) || !sks_local_to_model_job_run(&fk)) { r.ok = 0; break; }
    double e = skin_part_error(m, i, models, palette, out, &r.ok);
    if (!(e <= r.bind_err)) r.bind_err = e;
    e = skin_part_error(m, i, rest_models, palette, out, &r.ok);
    if (!(e <= r.rest_err)) r.rest_err = e;
  }
  free(locals); free(scratch); free(models); free(rest_models); free(palette); free(out);
  return r;
}

static void check_model(const char *rel, const char *path, int rest_is_bind) {
  if (!path) return;
  sks_model m;
  sks_error err = {0};
  sks_result res = sks_load(path, NULL, &m, &err);
  CHECK_MSG(res == SKS_OK, "%s: %s", rel, err.message);
  if (res != SKS_OK) return;
  double D = sks_model_bind_diagonal(&m);
  CHECK_MSG(D > 0 && isfinite(D), "%s: D = %g", rel, D);
  CHECK_MSG(m.skin_count > 0, "%s: no skin", rel);
  measured r = measure(&m);
  CHECK_MSG(r.ok, "%s: a job refused its inputs", rel);
  CHECK_MSG(r.vertices > 0, "%s: no skinned vertices", rel);
  printf("%-38s joints %3zu skins %zu skinned vertices %6zu weight sums %.4f..%.4f D %-8.4g"
         " bind error %.2e %%D  rest from bind %.3g %%D\n",
         rel, m.skeleton.joint_count, m.skin_count, r.vertices, r.wmin, r.wmax, D,
         100.0 * r.bind_err / D, 100.0 * r.rest_err / D);
  CHECK_MSG(r.bind_err <= 1e-5 * D, "%s: bind pose does not give the vertices back: %g D", rel, r.bind_err / D);
  if (rest_is_bind)
    CHECK_MSG(r.rest_err <= 1e-5 * D, "%s: rest pose should be the bind pose: %g D", rel, r.rest_err / D);
  sks_model_free(&m);
}

int main(void) {
  static const char *assimp_models[] = {
      "X/Testwuson.X", "X/BCN_Epileptic.X", "X/anim_test.x", "FBX/animation_with_skeleton.fbx",
      "FBX/huesitos.fbx", "glTF2/simple_skin/simple_skin.gltf"};
  for (size_t i = 0; i < sizeof assimp_models / sizeof *assimp_models; ++i)
    check_model(assimp_models[i], sks_test_assimp_model(assimp_models[i]), 0);
  check_model("Fox/Fox.glb", sks_test_shared_data("Fox/Fox.glb"), 1);
  check_model("Fox/raw/Fox_blender35_raw.glb", sks_test_shared_data("Fox/raw/Fox_blender35_raw.glb"), 0);
  check_model("RiggedSimple/RiggedSimple.gltf", sks_test_shared_data("RiggedSimple/RiggedSimple.gltf"), 0);
  check_model("fox_targets/fox_rig_autoweights.glb", sks_test_shared_data("fox_targets/fox_rig_autoweights.glb"), 0);
  return sks_test_finish();
}
