/* libFuzzer: the glTF writer. Whatever the reader accepts is written with
 * sks_write_glb and read back; the second model must have the same parts
 * (vertex and index counts), skins and clips as the first and at least its
 * joints
 * (the writer may refuse a model with a clean error, e.g. non-finite keys).
 * The reader never returns a clip without a track (it leaves out, with a
 * warning, an animation that moves nothing of the model) and the writer
 * writes every clip with a key, so the clip counts must be equal.
 * Built by scripts/fuzz.sh; writes into $TMPDIR. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "skinsolve/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the reader's promise: every clip has a track with a key */
static int clips_playable(const sks_model *m) {
  for (size_t c = 0; c < m->clip_count; ++c) {
    int keys = 0;
    for (size_t t = 0; t < m->clips[c].track_count && !keys; ++t) keys = m->clips[c].tracks[t].key_count > 0;
    if (!keys) return 0;
  }
  return 1;
}

static int same_shape(const sks_model *a, const sks_model *b) {
  /* the writer may add a node (e.g. a scene root for the meshes): joints
   * can grow, everything else is kept */
  if (b->skeleton.joint_count < a->skeleton.joint_count || a->part_count != b->part_count ||
      a->skin_count != b->skin_count || a->clip_count != b->clip_count)
    return 0;
  for (size_t i = 0; i < a->part_count; ++i)
    if (a->parts[i].vertex_count != b->parts[i].vertex_count || a->parts[i].index_count != b->parts[i].index_count)
      return 0;
  for (size_t i = 0; i < a->skin_count; ++i)
    if (a->skins[i].joint_count != b->skins[i].joint_count) return 0;
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sks_model m, back;
  sks_error err;
  if (sks_load_gltf_memory(data, size, NULL, "fuzz.glb", &m, &err) != SKS_OK) return 0;
  if (!clips_playable(&m)) {
    fprintf(stderr, "fuzz_write: the reader returned a clip without a key\n");
    abort();
  }
  char path[512];
  const char *tmp = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/sks_fuzz_write_%ld.glb", tmp && *tmp ? tmp : "/tmp", (long)getpid());
  if (sks_write_glb(path, &m, NULL, &err) == SKS_OK) {
    if (sks_load_gltf(path, &back, &err) != SKS_OK) { /* we cannot read what we wrote */
      fprintf(stderr, "fuzz_write: %s\n", err.message);
      abort();
    }
    if (!clips_playable(&back) || !same_shape(&m, &back)) {
      fprintf(stderr, "fuzz_write: read -> write -> read changed the model (clips %zu -> %zu, parts %zu -> %zu)\n",
              m.clip_count, back.clip_count, m.part_count, back.part_count);
      abort();
    }
    sks_model_free(&back);
    unlink(path);
  }
  sks_model_free(&m);
  return 0;
}
