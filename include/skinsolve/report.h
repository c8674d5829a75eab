/* skinsolve — the self-contained HTML report with the GPU-skinned viewer. */
#ifndef SKINSOLVE_REPORT_H
#define SKINSOLVE_REPORT_H

#include "common.h"
#include "rig.h"
#include "solve.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sks_report_input {
  const char *title;
  const sks_model *source;
  const sks_model *target;
  /* One result per mode shown (e.g. free and rotation-only); each must have
   * been baked with keep_surfaces = 1. */
  const sks_bake_result *const *results;
  size_t result_count;
} sks_report_input;

sks_result sks_report_write_html(const char *path, const sks_report_input *input, sks_error *err);

#ifdef __cplusplus
}
#endif
#endif
