/* libFuzzer: the parent's handling of the isolated Assimp child's output.
 * Random bytes go to sks_model_wire_decode (as if a compromised or crashed
 * child had sent them); whatever decodes must re-encode to the same bytes
 * and be a model every consumer can walk (checked by sks_check, which
 * touches every array). Built by scripts/fuzz.sh. */
#include <stdlib.h>
#include <string.h>
#include "skinsolve/rig.h"
#include "io/model_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sks_model m;
  sks_error err;
  if (sks_model_wire_decode(data, size, "fuzz.x", &m, &err) != SKS_OK) return 0;
  uint8_t *again = NULL;
  size_t n = 0;
  if (sks_model_wire_encode(&m, &again, &n, &err) == SKS_OK) {
    if (n != size || memcmp(again, data, size) != 0) abort(); /* decode o encode must be the identity */
    free(again);
  }
  sks_findings f;
  if (sks_check(&m, NULL, &f, &err) == SKS_OK) sks_findings_free(&f);
  sks_model_free(&m);
  return 0;
}
