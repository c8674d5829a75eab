/* libFuzzer entry for the native glTF reader (not built by CMake).
 *
 * Build and run (from the repository root; needs clang with libFuzzer):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *     fuzz/fuzz_gltf.c src/io/gltf_read.c src/rig/model.c src/common.c \
 *     src/pose/local_to_model.c -lcjson -lm -o fuzz_gltf
 *   mkdir -p corpus && cp ../shared/data/Fox/Fox.glb \
 *     ../shared/data/RiggedSimple/RiggedSimple.gltf corpus/
 *   ./fuzz_gltf -max_len=400000 -rss_limit_mb=2048 corpus
 * Small structural seeds: the unit test writes every glTF it generates to
 * $SKS_GLTF_CORPUS_DIR when set:
 *   SKS_GLTF_CORPUS_DIR=$PWD/small build/test_gltf_read
 *   ./fuzz_gltf -max_len=8192 small
 *
 * base_dir is NULL, so external buffer URIs are refused: the fuzzer only
 * exercises the bytes it generates, never the file system. */
#include <stddef.h>
#include <stdint.h>
#include "skinsolve/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sks_model model;
  sks_error err;
  if (sks_load_gltf_memory(data, size, NULL, "fuzz.glb", &model, &err) == SKS_OK)
    sks_model_free(&model);
  return 0;
}
