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
  /* Budget on the HTML file in bytes (0: SKS_REPORT_DEFAULT_MAX_BYTES). A
   * browser cannot open a report of hundreds of MB (a 549 MB one rendered
   * blank), so when the data would not fit, the animated views (viewer,
   * per-frame arrays of the data blob) show every k-th frame, the smallest
   * k that fits; the table, plots and every number (quality, mean / worst
   * error, viewer check) stay those of all frames. When even one frame per
   * clip does not fit (a very dense mesh), the viewer's mesh is simplified
   * too (vertex clustering, README "The report"): the finest grid whose page
   * at one frame per clip takes at most half the budget, then the smallest
   * frame step that fits. The page and sks_report_plan_views say so.
   * Refused (SKS_ERR_UNSUPPORTED) when nothing fits. */
  size_t max_bytes;
} sks_report_input;

#define SKS_REPORT_DEFAULT_MAX_BYTES ((size_t)64 << 20)

/* What the report will show within its budget. */
typedef struct sks_report_plan {
  size_t max_bytes;     /* the budget applied */
  size_t frame_step;    /* the views show frames 0, k, 2k, ... (1: every frame) */
  size_t frames;        /* frames of the longest clip */
  size_t frames_shown;  /* of those, shown in the views */
  size_t vertex_count;  /* target vertices in the views (all of them) */
  size_t bytes;         /* upper bound of the file's size at frame_step */
  size_t bytes_all;     /* the same with every frame shown */
  /* Vertex decimation (only when one frame per clip of the full mesh does
   * not fit): vertices_shown < vertex_count, on a grid of cells `cell`
   * wide (bind-space units); else vertices_shown == vertex_count, cell 0. */
  size_t vertices_shown;
  size_t triangles;       /* triangles of the target mesh */
  size_t triangles_shown; /* in the viewer (after clustering) */
  double cell;
} sks_report_plan;

/* The plan sks_report_write_html follows, without writing anything; an error
 * (SKS_ERR_UNSUPPORTED) when no plan fits. */
sks_result sks_report_plan_views(const sks_report_input *input, sks_report_plan *plan, sks_error *err);

sks_result sks_report_write_html(const char *path, const sks_report_input *input, sks_error *err);
/* The same page in memory (caller frees *html), for a caller that writes
 * it together with other outputs (all or nothing). */
sks_result sks_report_html(const sks_report_input *input, char **html, size_t *size, sks_error *err);
/* sks_report_html, and the plan the page follows (*plan as
 * sks_report_plan_views gives it; zeroed on error): what a caller that
 * states the plan and then writes the page needs, planned once. */
sks_result sks_report_html_plan(const sks_report_input *input, char **html, size_t *size,
                                sks_report_plan *plan, sks_error *err);

#ifdef __cplusplus
}
#endif
#endif
