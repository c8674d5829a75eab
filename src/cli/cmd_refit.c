/* skinsolve refit — the weight doctor: re-fit a target rig's skin weights
 * from the source's clips, report before / after on fitted and held-out
 * clips with the per-joint diagnosis, write the re-weighted rig. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "cli_bake_report.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: skinsolve refit --source SRC --target TGT [--clip NAME]... [--holdout NAME]...\n"
          "                       -o OUT.glb [--max-influences K] [--keep-original L]\n"
          "                       [--rounds R] [--max-constraints N] [--json] [--report OUT.html]\n"
          "                       [--report-max-mb MB] [--threads N]\n"
          "\n"
          "Re-fits TGT's skin weights so that TGT's own linear blend skinning reproduces\n"
          "SRC's surface motion over the fitting clips; TGT's skeleton, bind pose, clips and\n"
          "everything else are kept. Start: per frame a rigid (Horn) fit of every joint to\n"
          "the vertices it dominates in TGT's weights; then R rounds of (a) an exact\n"
          "per-vertex weight step (w >= 0, sum 1, <= 2 influences in the first third of the\n"
          "rounds then <= K, among the 8 nearest weighted joints; co-located vertices share\n"
          "one solve) and (b) a transform step (the bake). Before / after quality comes from\n"
          "real bakes of TGT and of the result (all vertices, all frames). The weights\n"
          "written are those of the round with the best mean quality on the fitting clips;\n"
          "TGT's own weights compete when valid (<= K influences, summing to 1).\n"
          "Prints clip | fit/held-out | frames | quality before / after %% | mean and worst\n"
          "error %%D before / after, then the joints holding most of the residual.\n"
          "\n"
          "  --clip NAME          fit on this clip (repeatable; default: every clip of SRC\n"
          "                       that is not held out)\n"
          "  --holdout NAME       never used in the fit, reported separately (repeatable)\n"
          "                       (a NAME no clip has exactly finds the one clip holding it\n"
          "                       as a word: 'Walk' finds 'root|Walk_root')\n"
          "  -o OUT.glb           where to write the re-weighted TGT (required)\n"
          "  --max-influences K   influences per vertex, 1..8 (default 4)\n"
          "  --keep-original L    pull toward TGT's weights: adds L * F * D^2 * |w - w0|^2\n"
          "                       to each vertex's objective (F fitting frames; default 0)\n"
          "  --rounds R           weight + transform rounds (default 6)\n"
          "  --max-constraints N  the bakes' constraint budget (default 5000)\n"
          "  --json               print the results as JSON (quality in percent)\n"
          "  --report OUT.html    the bake report of SRC's clips onto the result\n"
          SKS_CLI_REPORT_MAX_MB_HELP
          "  --threads N          threads of each bake (default 0 = every online CPU)\n"
          "Progress goes to stderr.\n\n"
          "exit codes: 0 ok, 1 bad input or failed operation, 2 usage error,\n"
          "            3 output could not be written\n");
}

static void on_progress(void *user, const char *what, size_t n, size_t count) {
  (void)user;
  if (n >= count) fprintf(stderr, "refit: %zu rounds done, measuring\n", count);
  else fprintf(stderr, "refit: %s %zu/%zu\n", what, n + 1, count);
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static void fmt_q(char *b, size_t n, double q) {
  if (isnan(q)) snprintf(b, n, "n/a");
  else snprintf(b, n, "%.4f", q * 100.0);
}


static void print_table(const sks_refit_result *r, const sks_model *tgt, const char *src, const char *tp) {
  printf("refit %s -> %s: %zu vertices (%zu distinct positions), D = %.6g, %.2f s\n", src, tp,
         r->vertex_count, r->group_count, r->diagonal, r->seconds);
  printf("influences per vertex: %.3f before, %.3f after (max %u); weights of %s\n",
         r->mean_influences_before, r->mean_influences_after, r->max_influences_after,
         r->best_round ? "the best round" : "the original rig (no round fitted better)");
  printf("%-20s %-9s %6s %10s %10s %12s %12s %13s %13s\n", "clip", "set", "frames", "before %",
         "after %", "mean %D bef", "mean %D aft", "worst %D bef", "worst %D aft");
  for (size_t i = 0; i < r->clip_count; ++i) {
    const sks_refit_clip *c = &r->clips[i];
    char qb[32], qa[32];
    fmt_q(qb, sizeof qb, c->quality_before);
    fmt_q(qa, sizeof qa, c->quality_after);
    printf("%-20s %-9s %6zu %10s %10s %12.6f %12.6f %13.6f %13.6f\n", c->name,
           c->held_out ? "held-out" : "fit", c->frame_count, qb, qa, c->mean_before_pct,
           c->mean_after_pct, c->worst_before_pct, c->worst_after_pct);
  }
  printf("joints holding the residual (share of sum e on the vertices each dominates; worst vertex):\n");
  for (size_t i = 0; i < r->clip_count; ++i) {
    const sks_refit_clip *c = &r->clips[i];
    for (int ab = 0; ab < 2; ++ab) {
      const sks_diagnosis *d = ab ? &c->diagnosis_after : &c->diagnosis_before;
      printf("  %-18s %-6s ", c->name, ab ? "after" : "before");
      sks_cli_print_worst_joints(d, tgt, 3);
      printf("\n");
    }
  }
}

static cJSON *q_json(double q) { return isnan(q) ? cJSON_CreateNull() : cJSON_CreateNumber(q * 100.0); }


static int print_json(const sks_refit_result *r, const sks_model *tgt) {
  cJSON *root = cJSON_CreateObject(), *clips = cJSON_AddArrayToObject(root, "clips");
  for (size_t i = 0; i < r->clip_count; ++i) {
    const sks_refit_clip *c = &r->clips[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", c->name);
    cJSON_AddBoolToObject(o, "held_out", c->held_out);
    cJSON_AddNumberToObject(o, "frames", (double)c->frame_count);
    cJSON_AddItemToObject(o, "quality_before", q_json(c->quality_before));
    cJSON_AddItemToObject(o, "quality_after", q_json(c->quality_after));
    cJSON_AddNumberToObject(o, "mean_error_before_pct", c->mean_before_pct);
    cJSON_AddNumberToObject(o, "mean_error_after_pct", c->mean_after_pct);
    cJSON_AddNumberToObject(o, "worst_error_before_pct", c->worst_before_pct);
    cJSON_AddNumberToObject(o, "worst_error_after_pct", c->worst_after_pct);
    cJSON_AddItemToObject(o, "joints_before", sks_cli_diagnosis_json(&c->diagnosis_before, tgt));
    cJSON_AddItemToObject(o, "joints_after", sks_cli_diagnosis_json(&c->diagnosis_after, tgt));
    cJSON_AddItemToArray(clips, o);
  }
  cJSON *rq = cJSON_AddArrayToObject(root, "round_fit_quality");
  for (size_t k = 0; k < r->rounds; ++k) cJSON_AddItemToArray(rq, q_json(r->round_fit_quality[k]));
  cJSON_AddNumberToObject(root, "best_round", (double)r->best_round);
  cJSON_AddNumberToObject(root, "vertices", (double)r->vertex_count);
  cJSON_AddNumberToObject(root, "distinct_positions", (double)r->group_count);
  cJSON_AddNumberToObject(root, "influences_before", r->mean_influences_before);
  cJSON_AddNumberToObject(root, "influences_after", r->mean_influences_after);
  cJSON_AddNumberToObject(root, "max_influences_after", r->max_influences_after);
  cJSON_AddNumberToObject(root, "seconds", r->seconds);
  cJSON_AddNumberToObject(root, "diagonal", r->diagonal);
  char *s = cJSON_Print(root);
  cJSON_Delete(root);
  if (!s) return 0;
  puts(s);
  free(s);
  return 1;
}

int sks_cmd_refit(int argc, char **argv) {
  const char *src_path = NULL, *tgt_path = NULL, *out_path = NULL, *report_path = NULL;
  const char **clips = calloc((size_t)argc + 1, sizeof(char *));
  const char **holds = calloc((size_t)argc + 1, sizeof(char *));
  if (!clips || !holds) { free(clips); free(holds); return sks_cli_fail(SKS_EXIT_INPUT, "out of memory"); }
  sks_refit_options opt;
  memset(&opt, 0, sizeof opt);
  int json = 0, code = SKS_EXIT_OK, rb;
  size_t report_max_bytes = 0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    int has = i + 1 < argc;
    unsigned long u;
    if (sks_cli_is_help(a)) { usage(stdout); goto out_args; }
    if (!strcmp(a, "--source") && has) src_path = argv[++i];
    else if (!strcmp(a, "--target") && has) tgt_path = argv[++i];
    else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && has) out_path = argv[++i];
    else if (!strcmp(a, "--report") && has) report_path = argv[++i];
    else if ((rb = sks_cli_opt_report_max_mb(argc, argv, &i, &report_max_bytes)) != 0) {
      if (rb < 0) { code = SKS_EXIT_USAGE; goto out_args; }
    }
    else if (!strcmp(a, "--clip") && has) clips[opt.clip_name_count++] = argv[++i];
    else if (!strcmp(a, "--holdout") && has) holds[opt.holdout_name_count++] = argv[++i];
    else if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--max-influences") && has) {
      if ((code = sks_cli_parse_uint(a, argv[++i], SKS_MAX_INFLUENCES, &u))) goto out_args;
      if (u < 1) { code = sks_cli_fail(SKS_EXIT_USAGE, "refit: --max-influences must be 1..8"); goto out_args; }
      opt.max_influences = (uint32_t)u;
    } else if (!strcmp(a, "--rounds") && has) {
      if ((code = sks_cli_parse_uint(a, argv[++i], 100, &u))) goto out_args;
      if (u < 1) { code = sks_cli_fail(SKS_EXIT_USAGE, "refit: --rounds must be 1..100"); goto out_args; }
      opt.rounds = (uint32_t)u;
    } else if (!strcmp(a, "--max-constraints") && has) {
      if ((code = sks_cli_parse_uint(a, argv[++i], 100000000, &u))) goto out_args;
      if (u < 1) { code = sks_cli_fail(SKS_EXIT_USAGE, "refit: --max-constraints must be positive"); goto out_args; }
      opt.max_constraints = (size_t)u;
    } else if (!strcmp(a, "--threads") && has) {
      if ((code = sks_cli_parse_uint(a, argv[++i], 256, &u))) goto out_args;
      opt.threads = (unsigned)u;
    } else if (!strcmp(a, "--keep-original") && has) {
      float l;
      if ((code = sks_cli_parse_float(a, argv[++i], &l))) goto out_args;
      if (!(l >= 0)) { code = sks_cli_fail(SKS_EXIT_USAGE, "refit: --keep-original must be >= 0"); goto out_args; }
      opt.keep_original = l;
    } else {
      usage(stderr);
      code = sks_cli_fail(SKS_EXIT_USAGE, "refit: unknown or incomplete option '%s'", a);
      goto out_args;
    }
  }
  if (!src_path || !tgt_path || !out_path) {
    usage(stderr);
    code = sks_cli_fail(SKS_EXIT_USAGE, "refit: --source, --target and -o OUT.glb are required");
    goto out_args;
  }
  {
    const char *outs[2] = {out_path, report_path}, *ins[2] = {src_path, tgt_path};
    if ((code = sks_cli_check_outputs(outs, 2, ins, 2))) goto out_args;
  }
  opt.clip_names = clips;
  opt.holdout_names = holds;
  opt.progress = on_progress;
  sks_error err;
  memset(&err, 0, sizeof err);
  sks_model src, tgt;
  memset(&src, 0, sizeof src);
  memset(&tgt, 0, sizeof tgt);
  sks_refit_result res;
  memset(&res, 0, sizeof res);
  const char *outs[2] = {out_path, report_path};
  sks_load_options load_opt;
  memset(&load_opt, 0, sizeof load_opt);
  sks_cli_output_guard guard; /* the files the Assimp imports read */
  sks_cli_guard_outputs(&guard, &load_opt, outs, 2);
  if ((code = sks_cli_load_with(src_path, &load_opt, &src)) || (code = sks_cli_load_with(tgt_path, &load_opt, &tgt)) ||
      (code = sks_cli_guard_check(&guard))) {
    free(sks_cli_guard_message(&guard));
    goto out_models;
  }
  if (sks_refit(&src, &tgt, &opt, &res, &err) != SKS_OK) {
    code = sks_cli_fail(SKS_EXIT_INPUT, "%s", err.message);
    goto out_models;
  }
  if (json) {
    if (!print_json(&res, &tgt)) code = sks_cli_fail(SKS_EXIT_OUTPUT, "could not format JSON");
  } else {
    print_table(&res, &tgt, base_name(src_path), base_name(tgt_path));
  }
  /* The report's bake and budget are settled before -o is replaced, so a
   * refused report leaves an earlier run's outputs as they were. */
  const char **all = NULL;
  sks_bake_result br;
  memset(&br, 0, sizeof br);
  int have_br = 0;
  char title[512];
  snprintf(title, sizeof title, "refit: %s -> %s (re-fitted weights)", base_name(src_path), base_name(tgt_path));
  const sks_bake_result *results[1] = {&br};
  sks_report_input in = {title, &src, &res.model, results, 1, report_max_bytes};
  char *html = NULL; /* the report's page, built (and planned) once */
  size_t html_size = 0;
  if (report_path && code == SKS_EXIT_OK) {
    all = calloc(res.clip_count + 1, sizeof(char *));
    sks_bake_options bo;
    memset(&bo, 0, sizeof bo);
    for (size_t i = 0; all && i < res.clip_count; ++i) all[i] = res.clips[i].name;
    bo.clip_names = all;
    bo.clip_name_count = res.clip_count;
    bo.keep_surfaces = 1;
    bo.max_constraints = opt.max_constraints;
    bo.threads = opt.threads;
    if (!all) code = sks_cli_fail(SKS_EXIT_OUTPUT, "out of memory");
    else if (sks_bake(&src, &res.model, &bo, &br, &err) != SKS_OK) code = sks_cli_fail(SKS_EXIT_INPUT, "%s", err.message);
    else {
      have_br = 1;
      code = sks_cli_report_build(report_path, &in, 0, &html, &html_size);
    }
  }
  /* -o and --report all or nothing (a write error in either keeps both) */
  if (code == SKS_EXIT_OK) code = sks_cli_write_outputs(out_path, &res.model, report_path, html, html_size, json);
  free(html);
  if (have_br) sks_bake_result_free(&br);
  free(all);
out_models:
  sks_refit_result_free(&res);
  sks_model_free(&src);
  sks_model_free(&tgt);
out_args:
  free(clips);
  free(holds);
  return code;
}
