/* check / repair / limit on real rigs: clean files give no errors and repair
 * leaves them unchanged; a defect planted in a real file is reported with
 * the file, part, vertex and joint, and repaired. */
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"

static size_t count_errors(const sks_model *m) {
  sks_findings f;
  sks_error err;
  CHECK_OK(sks_check(m, NULL, &f, &err), &err);
  size_t n = f.error_count;
  for (size_t i = 0; i < f.count && i < 5; ++i) fprintf(stderr, "  finding: %s\n", f.items[i].message);
  sks_findings_free(&f);
  return n;
}

static void test_file(const char *path) {
  if (!path) return;
  sks_model m;
  sks_error err;
  sks_result r = sks_load(path, NULL, &m, &err);
  CHECK_OK(r, &err);
  if (r != SKS_OK) return;
  CHECK_MSG(count_errors(&m) == 0, "%s has error findings", path);

  /* Repair of a clean file changes no weight (beyond float renormalisation). */
  sks_model c;
  CHECK_OK(sks_model_clone(&m, &c, &err), &err);
  sks_repair_report rep;
  CHECK_OK(sks_repair(&c, &rep, &err), &err);
  CHECK(rep.negatives_clamped == 0 && rep.nans_zeroed == 0 && rep.out_of_range_dropped == 0 &&
        rep.zero_weight_vertices == 0);
  double maxd = 0;
  for (size_t p = 0; p < m.part_count; ++p) {
    size_t n = m.parts[p].vertex_count * m.parts[p].influence_count;
    for (size_t i = 0; i < n; ++i) {
      double d = fabs((double)m.parts[p].weights[i] - c.parts[p].weights[i]);
      if (d > maxd) maxd = d;
    }
  }
  CHECK_MSG(maxd < 1e-3, "%s: repair moved a weight by %g", path, maxd);

  /* Plant a defect in the first skinned part: vertex (count/2) all-zero. */
  int32_t sp = -1;
  for (size_t p = 0; p < c.part_count && sp < 0; ++p)
    if (c.parts[p].skin >= 0 && c.parts[p].vertex_count > 0) sp = (int32_t)p;
  CHECK(sp >= 0);
  if (sp >= 0) {
    sks_mesh_part *part = &c.parts[sp];
    size_t v = part->vertex_count / 2;
    for (uint32_t k = 0; k < part->influence_count; ++k) part->weights[v * part->influence_count + k] = 0;
    sks_findings f;
    CHECK_OK(sks_check(&c, NULL, &f, &err), &err);
    CHECK(f.count == 1 && f.error_count == 1);
    if (f.count == 1) {
      const char *base = strrchr(path, '/');
      base = base ? base + 1 : path;
      char want[512];
      snprintf(want, sizeof want, "%s: part %d '%s', vertex %zu: weights sum to 0 \xe2\x80\x94 cannot normalise",
               base, (int)sp, part->name ? part->name : "", v);
      CHECK_MSG(strcmp(f.items[0].message, want) == 0, "got '%s', want '%s'", f.items[0].message, want);
      CHECK(f.items[0].kind == SKS_FINDING_WEIGHT_ZERO && f.items[0].part == sp &&
            f.items[0].vertex == (int64_t)v);
      printf("%s\n", f.items[0].message);
    }
    sks_findings_free(&f);
    CHECK_OK(sks_repair(&c, &rep, &err), &err);
    CHECK(rep.zero_weight_vertices == 1);
    CHECK(count_errors(&c) == 0);
  }
  /* Limit to 2 influences: no vertex keeps more than 2, every sum is 1. */
  CHECK_OK(sks_limit_influences(&c, 2, &err), &err);
  sks_check_options o = {0, 2, 0};
  sks_findings f;
  CHECK_OK(sks_check(&c, &o, &f, &err), &err);
  CHECK_MSG(f.count == 0, "%s after limit: %s", path, f.count ? f.items[0].message : "");
  sks_findings_free(&f);
  for (size_t p = 0; p < c.part_count; ++p)
    if (c.parts[p].skin >= 0) CHECK(c.parts[p].influence_count <= 2);
  sks_model_free(&c);
  sks_model_free(&m);
}

/* The two skinned FBX files of assimp-testmodels store weights that do not
 * sum to 1: Blender exported its vertex groups unnormalised. Measured from
 * the files themselves, independently of Assimp (a 60-line Python reader of
 * the binary FBX summing every Skin deformer's Cluster Indexes/Weights per
 * control point): animation_with_skeleton.fbx, 1058 control points, sums
 * 0.936526 .. 1.376512, all 1058 off 1 by more than 1e-3; huesitos.fbx, 62
 * control points, sums 0.948330 .. 0.999931, 60 off. Assimp 5.2.5 called
 * directly gives the same sums with no vertex listed twice in a bone and no
 * repeated bone name, so the weight_sum findings are the file's, not an
 * import artefact. Here: what we load has exactly the file's sums (per
 * vertex = per corner, 4224 and 256 of them), check reports every vertex
 * off by more than the tolerance, and repair brings all of them to 1. */
static void test_fbx_unnormalised(const char *rel, double want_min, double want_max,
                                  size_t want_off) {
  const char *path = sks_test_assimp_model(rel);
  if (!path) return;
  sks_model m;
  sks_error err;
  sks_result r = sks_load(path, NULL, &m, &err);
  CHECK_OK(r, &err);
  if (r != SKS_OK) return;
  double lo = 1e9, hi = -1e9;
  size_t off = 0;
  for (size_t p = 0; p < m.part_count; ++p) {
    const sks_mesh_part *part = &m.parts[p];
    for (size_t v = 0; part->skin >= 0 && v < part->vertex_count; ++v) {
      double sum = 0;
      for (uint32_t k = 0; k < part->influence_count; ++k) sum += part->weights[v * part->influence_count + k];
      if (sum < lo) lo = sum;
      if (sum > hi) hi = sum;
      if (fabs(sum - 1.0) > 1e-3) ++off;
    }
  }
  printf("%s: loaded weight sums %.6f .. %.6f, %zu vertices off 1 (file: %.6f .. %.6f)\n", rel, lo, hi,
         off, want_min, want_max);
  CHECK_NEAR(lo, want_min, 2e-6);
  CHECK_NEAR(hi, want_max, 2e-6);
  CHECK(off == want_off);
  sks_findings f;
  CHECK_OK(sks_check(&m, NULL, &f, &err), &err);
  CHECK(f.total_by_kind[SKS_FINDING_WEIGHT_SUM] == want_off && f.error_count == want_off);
  sks_findings_free(&f);
  sks_repair_report rep;
  CHECK_OK(sks_repair(&m, &rep, &err), &err);
  CHECK(count_errors(&m) == 0);
  sks_model_free(&m);
}

int main(void) {
  const char *fox = sks_test_shared_data("Fox/Fox.glb");
  const char *wuson = sks_test_assimp_model("X/Testwuson.X");
  if (!fox && !wuson) sks_test_skip("no real rigs found");
  test_file(fox);
  test_file(wuson);
  test_file(sks_test_assimp_model("X/BCN_Epileptic.X"));
  test_fbx_unnormalised("FBX/animation_with_skeleton.fbx", 0.936526, 1.376512, 4224);
  test_fbx_unnormalised("FBX/huesitos.fbx", 0.948330, 0.999931, 240);
  return sks_test_finish();
}
