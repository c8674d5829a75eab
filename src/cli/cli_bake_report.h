/* bake / control: output while working and -o's clip choice (cli_bake_report.c). */
#ifndef SKS_CLI_BAKE_REPORT_H
#define SKS_CLI_BAKE_REPORT_H

#include "cli.h"
#include "skinsolve/report.h"

typedef struct sks_cli_bake_printer {
  int quiet;          /* no progress, no notes */
  int tty;            /* stderr is a terminal: one live progress line */
  int rows;           /* print a table row per finished clip (not with --json) */
  size_t next_quarter;
} sks_cli_bake_printer;

/* Refuses (SKS_EXIT_INPUT, message printed) a skeleton-only source or
 * target before anything is printed or solved; 0 when both have a mesh. */
int sks_cli_bake_precheck(const sks_model *src, const sks_model *target, const char *src_path,
                          const char *tgt_path, int control);
/* "baking SRC -> TGT: J target joints, V vertices in P parts" and the
 * column header, flushed: printed before the bake starts (D and the
 * alignment follow the rows: they are known after the bake). */
void sks_cli_bake_print_header(const char *src, const char *tgt, const sks_model *target);
void sks_cli_bake_print_row(const sks_baked_clip *clip);
/* One clip record of `bake --json` (also batch's result records): name,
 * frames, quality (null: no motion), errors, mode, sweeps, mean motion,
 * suspect, per-frame mean / worst, and "joints" (the diagnosis, joint names
 * from target). Caller owns it. */
struct cJSON *sks_cli_bake_clip_json(const sks_baked_clip *c, const sks_model *target);
/* The diagnosis as JSON: [{joint, name, vertices, share_pct, mean_error_pct,
 * worst_error_pct, worst_vertex, worst_frame}], largest share first. */
struct cJSON *sks_cli_diagnosis_json(const sks_diagnosis *d, const sks_model *m);
const char *sks_cli_joint_name(const sks_model *m, int32_t j);
/* "NAME 41.0 % of the residual (worst vertex 812, 2.1 %D), ..." for the n
 * largest shares (no newline). */
void sks_cli_print_worst_joints(const sks_diagnosis *d, const sks_model *m, size_t n);
/* The table's footnote: the three worst joints of every clip. */
void sks_cli_bake_print_diagnosis(const sks_bake_result *r, const sks_model *target);
/* sks_bake_options.clip_done / .progress callbacks; user = sks_cli_bake_printer. */
void sks_cli_bake_on_clip_done(void *user, const sks_baked_clip *clip);
void sks_cli_bake_on_progress(void *user, const char *clip, size_t frame, size_t count);
/* sks_bake_apply with the target's own clips kept (replace = 0; one whose
 * name a baked clip takes is replaced, with a note) or dropped (replace = 1).
 * Baked clips keep their names as given. */
sks_result sks_cli_bake_apply(const sks_model *target, const sks_bake_result *res, int replace, int quiet,
                              sks_model *out, sks_error *err);

/* --report-max-mb MB: the report's budget (sks_report_input.max_bytes).
 * 1 when consumed (i advanced), 0 when argv[*i] is another option, -1 on a
 * bad value (message printed). */
int sks_cli_opt_report_max_mb(int argc, char **argv, int *i, size_t *max_bytes);
#define SKS_CLI_REPORT_MAX_MB_HELP \
  "  --report-max-mb MB   budget of the report file (default 64): over it the\n" \
  "                       viewer shows every k-th frame (stated in the report and\n" \
  "                       on stderr; table, plots and numbers keep all frames);\n" \
  "                       when one frame per clip does not fit, a simplified\n" \
  "                       viewer mesh (vertex clustering, stated; numbers keep\n" \
  "                       all vertices); refused when nothing fits\n"
/* Builds the report page in memory before any output is written (planned
 * once: the page follows the plan it states): prints on stderr (unless
 * quiet) when the views are decimated (frames, or the mesh's vertices);
 * SKS_EXIT_OUTPUT (message naming `path` printed) when nothing fits the
 * budget; else 0 and *html (caller frees), *size. */
int sks_cli_report_build(const char *path, const sks_report_input *in, int quiet, char **html, size_t *size);

/* The report page sealed to the .glb written with it: html with
 *   <meta name="skinsolve-glb" content="NAME">
 *   <meta name="skinsolve-glb-sha256" content="HEX">
 * after its <head> (NAME: the .glb's file name, HTML-escaped; HEX: sha256
 * of its bytes), so a reader can tell a report from a .glb of another run
 * (a kill between the two renames). NULL when out of memory. */
char *sks_cli_report_seal(const char *html, size_t html_size, const char *glb_path, const uint8_t *glb,
                          size_t glb_size, size_t *sealed_size);

/* Writes -o (model to out_path, when given) and --report (html, the page
 * sks_cli_report_build made, to report_path, when given) all or nothing (src/io/atomic.h): both are
 * staged complete before either replaces its destination; on any failure
 * (message naming the file printed, SKS_EXIT_OUTPUT) neither is touched.
 * With both, the report is sealed to the .glb (sks_cli_report_seal) and
 * renamed last: a kill between the renames leaves the new .glb beside the
 * previous report (or none), whose seal does not match it.
 * Prints "wrote PATH" per file unless json. */
int sks_cli_write_outputs(const char *out_path, const sks_model *model, const char *report_path,
                          const char *html, size_t html_size, int json);

#endif
