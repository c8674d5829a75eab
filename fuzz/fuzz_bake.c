/* libFuzzer: the bake on two small fuzzed rigs. The input is split at its
 * first 4 bytes (little-endian offset) into a source and a target glTF;
 * when both load and are small (<= 400 vertices, <= 64 joints, <= 24
 * frames per clip) the first clip is baked source -> target. Any error
 * must be clean; the metrics of a success must be numbers (finite error,
 * quality in [-inf, 1] or NaN for a still clip). Built by scripts/fuzz.sh. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "skinsolve/io.h"
#include "skinsolve/solve.h"
#include "solve/bake_bounds.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int small(const sks_model *m) {
  if (sks_model_vertex_count(m) > 400 || m->skeleton.joint_count > 64) return 0;
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 8) return 0;
  uint32_t cut = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 | (uint32_t)data[3] << 24;
  data += 4;
  size -= 4;
  cut = size ? cut % (uint32_t)size : 0;
  sks_model a, b;
  sks_error err;
  if (sks_load_gltf_memory(data, cut, NULL, "source.glb", &a, &err) != SKS_OK) return 0;
  if (sks_load_gltf_memory(data + cut, size - cut, NULL, "target.glb", &b, &err) != SKS_OK) {
    sks_model_free(&a);
    return 0;
  }
  size_t frames = 0;
  if (small(&a) && small(&b) && a.clip_count > 0 &&
      sks_bake_frame_count(&a, &a.clips[0], 0, b.skeleton.joint_count, 0, &frames, &err) == SKS_OK && frames <= 24) {
    const char *names[1] = {a.clips[0].name ? a.clips[0].name : ""};
    sks_bake_options o;
    memset(&o, 0, sizeof o);
    o.clip_names = a.clips[0].name ? names : NULL;
    o.clip_name_count = a.clips[0].name ? 1 : 0;
    o.max_constraints = 200;
    sks_bake_result r;
    if (sks_bake(&a, &b, &o, &r, &err) == SKS_OK) {
      for (size_t c = 0; c < r.clip_count; ++c)
        if (isnan(r.clips[c].mean_error_pct) && !isnan(r.clips[c].quality)) abort();
      sks_bake_result_free(&r);
    }
  }
  sks_model_free(&a);
  sks_model_free(&b);
  return 0;
}
