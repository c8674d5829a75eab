/* Clips from another file on real data: ozz_astro_maya.dae's clip applied to
 * ozz_astro_max.dae (the same astronaut and animation exported from Maya and
 * from 3ds Max: other joint frames, other units) reproduces the Max file's
 * own clip at the first and last key (where the two clips' timings agree),
 * while copying the tracks as they are does not. Errors in % of the posed
 * surface's bounding-box diagonal. */
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"

/* Skinned positions of m posed by clip at time t (all parts). */
static int skin_at(const sks_model *m, const sks_clip *clip, float t, float *out) {
  size_t n = m->skeleton.joint_count;
  sks_transform *locals = malloc(n * sizeof *locals);
  sks_mat4 *models = malloc(n * sizeof *models);
  sks_error err;
  int ok = locals && models;
  if (ok) {
    sks_sampling_job job = {clip, m->skeleton.rest, n, t, 0, 0, locals};
    sks_local_to_model_job fk = {m->skeleton.parents, locals, n, NULL, models};
    ok = sks_sampling_job_run(&job) && sks_local_to_model_job_run(&fk) &&
         sks_skin_model(m, models, SKS_SKIN_LBS, out, NULL, &err) == SKS_OK;
  }
  free(locals);
  free(models);
  return ok;
}

/* mean distance between a and b in % of a's bounding-box diagonal */
static double mean_pct(const float *a, const float *b, size_t nv) {
  double lo[3] = {1e30, 1e30, 1e30}, hi[3] = {-1e30, -1e30, -1e30}, sum = 0;
  for (size_t v = 0; v < nv; ++v)
    for (int k = 0; k < 3; ++k) {
      lo[k] = fmin(lo[k], a[3 * v + k]);
      hi[k] = fmax(hi[k], a[3 * v + k]);
    }
  double D = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                  (hi[2] - lo[2]) * (hi[2] - lo[2]));
  for (size_t v = 0; v < nv; ++v) {
    double dx = a[3 * v] - b[3 * v], dy = a[3 * v + 1] - b[3 * v + 1], dz = a[3 * v + 2] - b[3 * v + 2];
    sum += sqrt(dx * dx + dy * dy + dz * dz);
  }
  return D > 0 && nv ? 100.0 * sum / (double)nv / D : 0;
}

int main(void) {
  const char *pmax = sks_test_shared_data("ozz/ozz_astro_max.dae");
  const char *pmaya = sks_test_shared_data("ozz/ozz_astro_maya.dae");
  if (!pmax || !pmaya) sks_test_skip("ozz_astro_max.dae / ozz_astro_maya.dae missing");
  sks_model max, maya;
  sks_error err;
  memset(&err, 0, sizeof err);
  CHECK_OK(sks_load(pmax, NULL, &max, &err), &err);
  CHECK_OK(sks_load(pmaya, NULL, &maya, &err), &err);
  if (max.clip_count != 1 || maya.clip_count != 1) {
    CHECK(0);
    return sks_test_finish();
  }
  sks_clip *ret = NULL, *copy = NULL;
  size_t nr = 0, nc = 0;
  sks_clip_match_report rep;
  sks_clip_match_options asis = {1, 0};
  CHECK_OK(sks_clips_from_model(&max, &maya, NULL, &ret, &nr, &rep, &err), &err);
  CHECK_OK(sks_clips_from_model(&max, &maya, &asis, &copy, &nc, NULL, &err), &err);
  CHECK(rep.matched_count == 67 && rep.rig_only_count == 1 && rep.anim_only_count == 2);
  CHECK(rep.frames_differ_count == 66 && rep.pose_only_count == 0);
  size_t nv = sks_model_total_vertex_count(&max);
  float *own = malloc(nv * 3 * sizeof(float)), *a = malloc(nv * 3 * sizeof(float));
  float *b = malloc(nv * 3 * sizeof(float));
  /* first key and past the end (both clips clamp to their last key) */
  const float times[2] = {0.0f, 5.0f};
  for (int k = 0; k < 2 && own && a && b && nr == 1 && nc == 1; ++k) {
    CHECK(skin_at(&max, &max.clips[0], times[k], own));
    CHECK(skin_at(&max, &ret[0], times[k], a));
    CHECK(skin_at(&max, &copy[0], times[k], b));
    double e_ret = mean_pct(own, a, nv), e_copy = mean_pct(own, b, nv);
    printf("t = %.1f s: Maya clip on the Max rig vs the Max clip: retargeted %.5f %%D, copied as is %.2f %%D\n",
           (double)times[k], e_ret, e_copy);
    CHECK_MSG(e_ret < 0.01, "retargeted %.5f %%D", e_ret);
    CHECK_MSG(e_copy > 10, "copied as is %.2f %%D", e_copy);
  }
  free(own); free(a); free(b);
  for (size_t i = 0; i < nr; ++i) sks_clip_free(&ret[i]);
  for (size_t i = 0; i < nc; ++i) sks_clip_free(&copy[i]);
  free(ret); free(copy);
  sks_clip_match_report_free(&rep);
  sks_model_free(&max);
  sks_model_free(&maya);
  return sks_test_finish();
}
