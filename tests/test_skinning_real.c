/* The runtime on real files (assimp-testmodels X/Testwuson.X, shared Fox.glb
 * and RiggedSimple.gltf):
 *  - the bind pose implied by the inverse bind matrices makes every palette
 *    matrix the identity, so skinning at it returns the bind-space positions
 *    (LBS and DQS);
 *  - at sampled clip times, the optimised and parallel kernels agree with the
 *    scalar reference (positions and normals);
 *  - the static pre-transform at a pose equals skinning at that pose. */
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "math/sks_math.h"

static int models_ran = 0;

static double max_abs_diff(const float *a, const float *b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) m = fmax(m, fabs((double)a[i] - (double)b[i]));
  return m;
}

/* Skinned-part positions of the model, concatenated over ALL parts (rigid
 * parts are skipped in comparisons through the mask). */
static void bind_pose_identity(const sks_model *m, const char *name, double diag) {
  const size_t jc = m->skeleton.joint_count;
  sks_mat4 *scratch = malloc(sizeof(sks_mat4) * jc), *models = malloc(sizeof(sks_mat4) * jc);
  sks_transform *locals = malloc(sizeof(sks_transform) * jc);
  const size_t nv = sks_model_total_vertex_count(m);
  float *out = malloc(sizeof(float) * 3 * nv);
  if (!scratch || !models || !locals || !out) { CHECK(0); goto done; }
  for (size_t s = 0; s < m->skin_count; ++s) {
    const sks_skin *skin = &m->skins[s];
    sks_bind_pose_job bj = {&m->skeleton, skin, scratch, locals, 1};
    CHECK_MSG(sks_bind_pose_job_run(&bj), "%s skin %zu", name, s);
    sks_local_to_model_job fk = {m->skeleton.parents, locals, jc, NULL, models};
    CHECK(sks_local_to_model_job_run(&fk));
    double worst = 0;
    for (size_t j = 0; j < skin->joint_count; ++j) {
      sks_mat4 p = sks_m4_mul(&models[skin->joints[j]], &skin->inverse_bind[j]);
      sks_mat4 id = sks_m4_identity();
      for (int e = 0; e < 12; ++e) worst = fmax(worst, fabs(p.m[e] - id.m[e]));
      for (int e = 12; e < 15; ++e) worst = fmax(worst, fabs(p.m[e]) / (diag > 0 ? diag : 1));
    }
    printf("%s skin %zu (%zu joints): bind-pose palette max |P - I| = %.3g\n", name, s, skin->joint_count, worst);
    CHECK_MSG(worst < 1e-3, "%s skin %zu: %g", name, s, worst);
    /* Skinning at the bind pose returns the bind-space positions. */
    for (int method = 0; method < 2; ++method) {
      sks_error err = {0};
      CHECK_OK(sks_skin_model(m, models, method ? SKS_SKIN_DQS : SKS_SKIN_LBS, out, NULL, &err), &err);
      double d = 0;
      size_t off = 0;
      for (size_t pi = 0; pi < m->part_count; ++pi) {
        const sks_mesh_part *p = &m->parts[pi];
        if (p->skin == (int32_t)s) d = fmax(d, max_abs_diff(out + 3 * off, p->positions, 3 * p->vertex_count));
        off += p->vertex_count;
      }
      printf("%s skin %zu: %s at bind pose, max |skinned - bind position| = %.3g (diagonal %.3g)\n", name, s,
             method ? "DQS" : "LBS", d, diag);
      CHECK_MSG(d <= 1e-5 * diag, "%s %s: %g", name, method ? "DQS" : "LBS", d);
    }
  }
done:
  free(scratch); free(models); free(locals); free(out);
}

static void kernels_at_clip_times(const sks_model *m, const char *name, double diag) {
  const size_t jc = m->skeleton.joint_count;
  size_t max_skin = 1;
  for (size_t s = 0; s < m->skin_count; ++s)
    if (m->skins[s].joint_count > max_skin) max_skin = m->skins[s].joint_count;
  sks_transform *locals = malloc(sizeof(sks_transform) * jc);
  sks_mat4 *models = malloc(sizeof(sks_mat4) * jc), *palette = malloc(sizeof(sks_mat4) * max_skin);
  size_t max_v = 1;
  for (size_t pi = 0; pi < m->part_count; ++pi)
    if (m->parts[pi].vertex_count > max_v) max_v = m->parts[pi].vertex_count;
  float *a = malloc(sizeof(float) * 6 * max_v), *b = malloc(sizeof(float) * 6 * max_v);
  if (!locals || !models || !palette || !a || !b) { CHECK(0); goto done; }
  const sks_clip empty = {"rest", 0.0f, 0, NULL, 0, NULL};
  const sks_clip *clip = m->clip_count ? &m->clips[0] : &empty;
  const float fractions[3] = {0.0f, 0.37f, 0.81f};
  double worst_opt = 0, worst_par = 0, worst_dqs_lbs = 0;
  for (int f = 0; f < 3; ++f) {
    sks_sampling_job sj = {clip, m->skeleton.rest, jc, clip->duration * fractions[f], 0, 0, locals};
    CHECK(sks_sampling_job_run(&sj));
    sks_local_to_model_job fk = {m->skeleton.parents, locals, jc, NULL, models};
    CHECK(sks_local_to_model_job_run(&fk));
    for (size_t pi = 0; pi < m->part_count; ++pi) {
      const sks_mesh_part *p = &m->parts[pi];
      if (p->skin < 0 || p->vertex_count == 0) continue;
      sks_palette_job pj = {&m->skins[p->skin], models, jc, palette};
      CHECK(sks_palette_job_run(&pj));
      /* Interleaved outputs: parts without normals leave gaps; zero them. */
      memset(a, 0, sizeof(float) * 6 * p->vertex_count);
      memset(b, 0, sizeof(float) * 6 * p->vertex_count);
      for (int method = 0; method < 2; ++method) {
        sks_skinning_job job;
        memset(&job, 0, sizeof job);
        job.method = method ? SKS_SKIN_DQS : SKS_SKIN_LBS;
        job.vertex_count = p->vertex_count;
        job.influence_count = p->influence_count;
        job.palette = palette;
        job.palette_count = m->skins[p->skin].joint_count;
        job.joints = p->joints;
        job.weights = p->weights;
        job.in_positions = p->positions;
        job.in_normals = p->normals;
        /* interleaved output: position then normal */
        job.out_positions = a; job.out_positions_stride = 6;
        job.out_normals = p->normals ? a + 3 : NULL; job.out_normals_stride = 6;
        CHECK(sks_skinning_job_run_reference(&job));
        job.out_positions = b; job.out_normals = p->normals ? b + 3 : NULL;
        CHECK(sks_skinning_job_run(&job));
        worst_opt = fmax(worst_opt, max_abs_diff(a, b, 6 * p->vertex_count) / (diag > 0 ? diag : 1));
        CHECK(sks_skinning_job_run_parallel(&job, 2));
        worst_par = fmax(worst_par, max_abs_diff(a, b, 6 * p->vertex_count) / (diag > 0 ? diag : 1));
        if (method == 0) {
          memcpy(b, a, sizeof(float) * 6 * p->vertex_count); /* keep LBS for the DQS comparison */
        } else {
          job.out_positions = a; job.out_normals = p->normals ? a + 3 : NULL;
          job.method = SKS_SKIN_LBS;
          CHECK(sks_skinning_job_run(&job));
          job.method = SKS_SKIN_DQS;
          job.out_positions = b; job.out_normals = p->normals ? b + 3 : NULL;
          CHECK(sks_skinning_job_run(&job));
          for (size_t v = 0; v < p->vertex_count; ++v)
            for (int c = 0; c < 3; ++c)
              worst_dqs_lbs = fmax(worst_dqs_lbs, fabs(a[6 * v + c] - b[6 * v + c]) / (diag > 0 ? diag : 1));
        }
      }
    }
  }
  printf("%s clip '%s': max |reference - optimised| / D = %.3g, |reference - parallel| / D = %.3g, "
         "max |DQS - LBS| / D = %.3g\n", name, clip->name ? clip->name : "", worst_opt, worst_par, worst_dqs_lbs);
  CHECK(worst_opt < 1e-5);
  CHECK(worst_par < 1e-5);
  CHECK(worst_dqs_lbs < 0.1); /* same rig and pose: the methods differ only near bending joints */
done:
  free(locals); free(models); free(palette); free(a); free(b);
}

static void pretransform(const sks_model *m, const char *name) {
  const size_t jc = m->skeleton.joint_count;
  sks_transform *locals = malloc(sizeof(sks_transform) * jc);
  sks_mat4 *models = malloc(sizeof(sks_mat4) * (jc + 1));
  const size_t nv = sks_model_total_vertex_count(m);
  float *p0 = malloc(sizeof(float) * 3 * nv), *n0 = malloc(sizeof(float) * 3 * nv);
  float *p1 = malloc(sizeof(float) * 3 * nv), *n1 = malloc(sizeof(float) * 3 * nv);
  sks_model copy;
  memset(&copy, 0, sizeof copy);
  sks_error err = {0};
  if (!locals || !models || !p0 || !n0 || !p1 || !n1) { CHECK(0); goto done; }
  const sks_clip empty = {"rest", 0.0f, 0, NULL, 0, NULL};
  const sks_clip *clip = m->clip_count ? &m->clips[0] : &empty;
  sks_sampling_job sj = {clip, m->skeleton.rest, jc, clip->duration * 0.5f, 0, 0, locals};
  CHECK(sks_sampling_job_run(&sj));
  sks_local_to_model_job fk = {m->skeleton.parents, locals, jc, NULL, models};
  CHECK(sks_local_to_model_job_run(&fk));
  CHECK_OK(sks_skin_model(m, models, SKS_SKIN_LBS, p0, n0, &err), &err);
  CHECK_OK(sks_model_clone(m, &copy, &err), &err);
  CHECK_OK(sks_pretransform_static(&copy, models, &err), &err);
  CHECK(copy.skin_count == 0);
  CHECK(sks_model_total_vertex_count(&copy) == nv);
  sks_local_to_model_job fk2 = {copy.skeleton.parents, copy.skeleton.rest, copy.skeleton.joint_count, NULL, models};
  CHECK(sks_local_to_model_job_run(&fk2));
  CHECK_OK(sks_skin_model(&copy, models, SKS_SKIN_LBS, p1, n1, &err), &err);
  double dp = max_abs_diff(p0, p1, 3 * nv), dn = max_abs_diff(n0, n1, 3 * nv);
  printf("%s: pre-transformed vs skinned at t=%.3f: max |dp| = %.3g, max |dn| = %.3g\n", name,
         (double)(clip->duration * 0.5f), dp, dn);
  CHECK(dp < 1e-5);
  CHECK(dn < 1e-5);
done:
  sks_model_free(&copy);
  free(locals); free(models); free(p0); free(n0); free(p1); free(n1);
}

/* Several files store weight sums of 0.94..1.38; the kernels use weights as
 * given (LBS scales by the sum, DQS does not), so normalise them first, as
 * sks_repair would: these checks are about poses and kernels. */
static void normalise_weights(sks_model *m) {
  for (size_t pi = 0; pi < m->part_count; ++pi) {
    sks_mesh_part *p = &m->parts[pi];
    const size_t k = p->influence_count;
    for (size_t v = 0; v < p->vertex_count; ++v) {
      double sum = 0;
      for (size_t i = 0; i < k; ++i) sum += p->weights[v * k + i];
      for (size_t i = 0; i < k && sum > 0; ++i) p->weights[v * k + i] = (float)(p->weights[v * k + i] / sum);
    }
  }
}

static void run_file(const char *path, const char *name) {
  if (!path) return;
  sks_model m;
  sks_error err = {0};
  sks_load_options opt = {0};
  sks_result r = sks_load(path, &opt, &m, &err);
  CHECK_OK(r, &err);
  if (r != SKS_OK) return;
  ++models_ran;
  normalise_weights(&m);
  const double diag = sks_model_bind_diagonal(&m);
  CHECK(m.skin_count > 0);
  bind_pose_identity(&m, name, diag);
  kernels_at_clip_times(&m, name, diag);
  pretransform(&m, name);
  sks_model_free(&m);
}

int main(void) {
  run_file(sks_test_assimp_model("X/Testwuson.X"), "Testwuson.X");
  run_file(sks_test_assimp_model("X/BCN_Epileptic.X"), "BCN_Epileptic.X");
  run_file(sks_test_assimp_model("X/anim_test.x"), "anim_test.x");
  run_file(sks_test_assimp_model("FBX/animation_with_skeleton.fbx"), "animation_with_skeleton.fbx");
  run_file(sks_test_assimp_model("FBX/huesitos.fbx"), "huesitos.fbx");
  run_file(sks_test_assimp_model("glTF2/simple_skin/simple_skin.gltf"), "simple_skin.gltf");
  run_file(sks_test_shared_data("Fox/Fox.glb"), "Fox.glb");
  run_file(sks_test_shared_data("fox_targets/fox_rig_autoweights.glb"), "fox_rig_autoweights.glb");
  run_file(sks_test_shared_data("RiggedSimple/RiggedSimple.gltf"), "RiggedSimple.gltf");
  if (models_ran == 0) sks_test_skip("no real test models found");
  return sks_test_finish();
}
