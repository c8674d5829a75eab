/* skinsolve bake — solve a source rig's clips onto a target rig. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bake_common.h"
#include "cli_bake_report.h"
#include "cli.h"

static void bake_usage(FILE *f) {
  fprintf(f,
          "usage: skinsolve bake --source SRC --target TGT [--clip NAME]... [-o OUT.glb]\n"
          "                      [--clips ANIM_FILE...] [--keep-clips|--replace-clips] [--quiet]\n"
          "                      [--mode free|rotation-only|both] [--max-constraints N]\n"
          "                      [--fps F] [--solver default|bcd] [--align auto|none]\n"
          "                      [--max-residual PCT]\n"
          "                      [--json] [--report OUT.html] [--report-max-mb MB] [--threads N]\n"
          "\n"
          "Plays each clip of SRC and solves per frame the transforms of TGT's joints so\n"
          "that TGT's own skinning reproduces SRC's surface MOTION: each TGT vertex is its\n"
          "own bind position moved by SRC's skin deformation at the corresponding point\n"
          "(the shape of SRC is never copied). Both files are taken in their bind spaces\n"
          "and aligned first (units, axis conventions, offsets, armature transforms), so\n"
          "no export convention changes a number. Rigid parts are baked and measured too.\n"
          "Prints clip | mode | frames | quality %% | mean error %%D | worst vertex %%D | solve ms\n"
          "(D = bounding-box diagonal of TGT's bind pose; errors are measured on the clip as\n"
          "written: float keys, weights as played; '!' marks numbers that contradict each\n"
          "other, e.g. a mean error over 5 %%D).\n"
          "\n"
          "  --clip NAME          bake only this clip (repeatable; default: every clip); a\n"
          "                       name no clip has exactly finds the one clip holding it as\n"
          "                       a word ('Walk' finds 'root|Walk_root', Blender's FBX name)\n"
          "  -o OUT.glb           write TGT with one animation per baked clip\n"
          "  --mode M             free (default): rotation + translation per joint;\n"
          "                       rotation-only: local translations fixed to TGT's rest\n"
          "                       offsets (roots free); both: run both, side by side\n"
          "  --max-constraints N  solve on at most N target vertices (default 5000),\n"
          "                       but at least 4 per weighted joint; metrics always\n"
          "                       use all of them\n"
          "  --fps F              resample each clip uniformly (default: its key times)\n"
          "  --solver S           default (Levenberg-Marquardt over all joints) or bcd\n"
          "                       (the seed's block coordinate descent with Horn fits)\n"
          "  --align A            auto (default): find the similarity (scale, rotation,\n"
          "                       offset) between the two bind surfaces, identity when they\n"
          "                       already agree; none: use the files' bind spaces as they are\n"
          "  --max-residual PCT   refuse a pair whose target vertices are on average\n"
          "                       farther than PCT %% of D from the aligned source surface\n"
          "                       (default 8; up to 100): a larger limit bakes two bodies\n"
          "                       that differ more, with a note that they do\n"
          "  --json               print the results as JSON (quality and *_pct in percent,\n"
          "                       per-frame mean/worst errors, sweeps per frame, and per\n"
          "                       clip \"joints\": the residual per dominant joint)\n"
          "  --report OUT.html    write the self-contained HTML report with the viewer\n");
  fprintf(f, SKS_CLI_REPORT_MAX_MB_HELP
          "  --clips ANIM_FILE... bake the clips of these animation files (FBX, BVH,\n"
          "                       Collada, glTF; every argument up to the next option;\n"
          "                       repeatable) instead of SRC's own: they are applied to\n"
          "                       SRC's skeleton by joint name (match report on stderr)\n"
          "  --keep-clips         -o keeps TGT's own clips beside the baked ones (the\n"
          "                       default; a TGT clip whose name a baked clip takes is\n"
          "                       replaced, with a note)\n"
          "  --replace-clips      -o writes only the baked clips\n"
          "  --quiet              no progress and no notes on stderr (errors still)\n"
          "  --threads N          solve the clips on N threads, whole clips at once, a long\n"
          "                       one cut into frame chunks (default 0 = every online CPU;\n"
          "                       1 = serial); the numbers agree to 1e-6 %% D\n"
          "\n"
          "The table header is printed at once and one row per clip as it finishes (on\n"
          "any stdout, flushed), then D, the alignment and the notes; frame progress goes\n"
          "to stderr: a live line on a terminal, else a line at each quarter of a clip.\n"
          "Baked clips keep their names (rotation-only ones of --mode both get\n"
          "_rotation_only).\n"
          SKS_CLI_LOAD_OPTIONS_HELP);
}

static const char *mode_name(sks_solve_mode m) {
  return m == SKS_SOLVE_ROTATION_ONLY ? "rotation-only" : "free";
}

/* "97%" or "n/a" (NaN: nothing to say) */
static const char *pct0(double v, char *buf, size_t n) {
  if (isnan(v)) snprintf(buf, n, "n/a");
  else snprintf(buf, n, "%.0f%%", 100.0 * v);
  return buf;
}

static void print_alignment(const sks_bake_result *r, int align_none) {
  const sks_bake_alignment *a = &r->alignment;
  char names[224] = "", hb[16];
  if (!isnan(a->label_agreement))
    snprintf(names, sizeof names, "; joint names agree %.0f%% (head %s)", 100.0 * a->label_agreement,
             pct0(a->head_agreement, hb, sizeof hb));
  else if (!isnan(a->head_agreement)) /* a rig labelled by its skeleton's shape: a head, no sides */
    snprintf(names, sizeof names, "; the heads agree %.0f%% (sides not labelled on both rigs)",
             100.0 * a->head_agreement);
  if (!isnan(a->up_deg)) {
    size_t l = strlen(names);
    snprintf(names + l, sizeof names - l, "; its head points %.0f deg from the target's", a->up_deg);
  }
  if (!isnan(a->facing_deg)) {
    size_t l = strlen(names);
    if (a->facing_by_knees)
      snprintf(names + l, sizeof names - l, "; by %s it faces %.0f deg from the target's way", sks_bake_facing_by(a),
               a->facing_deg);
    else
      snprintf(names + l, sizeof names - l, "; its feet point %.0f deg from the target's", a->facing_deg);
  }
  if (a->applied)
    printf("alignment: scale %.6g, %s %.2f deg, offset (%.4g, %.4g, %.4g); %s, mean distance "
           "%.3g%% D%s (%.2f s)\n", a->scale,
           a->mirrored ? "MIRRORED (the files' handedness differs), then turned" : "rotation", a->angle_deg,
           a->offset[0], a->offset[1], a->offset[2],
           r->correspondence_identity ? "same mesh (vertex for vertex)"
           : a->same_surface        ? "same surface, other vertices (re-welded / re-ordered): closest points"
           : a->subset              ? "one side's vertices are some of the other's (decimated copy): "
                                      "coinciding vertices"
                                    : "closest points",
           r->correspondence_mean_pct, names, a->seconds);
  else
    printf("alignment: %s; %s, mean distance %.3g%% D%s\n",
           align_none ? "none (--align none: the files' bind spaces as they are)" : "none needed (bind surfaces agree)",
           r->correspondence_identity ? "same mesh (vertex for vertex)" : "closest points",
           r->correspondence_mean_pct, names);
  if (a->finalists) {
    printf("alignment: %zu candidates fit the bind surface about as well; each baked on every clip at 5 fps:",
           a->finalists);
    for (size_t k = 0; k < a->finalists && k < SKS_BAKE_FINALISTS; ++k) {
      char tq[96], nm[112] = "";
      const double lab = a->finalist_label_agreement[k], head = a->finalist_head_agreement[k];
      const double up = a->finalist_up_deg[k];
      if (!isnan(lab)) snprintf(nm, sizeof nm, ", names %.0f%%, head %s", 100.0 * lab, pct0(head, hb, sizeof hb));
      else if (!isnan(head)) snprintf(nm, sizeof nm, ", head %s", pct0(head, hb, sizeof hb));
      if (!isnan(up)) {
        size_t l = strlen(nm);
        snprintf(nm + l, sizeof nm - l, ", head %.0f deg off", up);
      }
      if (!isnan(a->finalist_facing_deg[k])) {
        size_t l = strlen(nm);
        snprintf(nm + l, sizeof nm - l, ", %s %.0f deg off", a->facing_by_knees ? "facing" : "feet",
                 a->finalist_facing_deg[k]);
      }
      if (!isnan(a->trial_quality[k])) snprintf(tq, sizeof tq, "%.2f%%", 100.0 * a->trial_quality[k]);
      else if (sks_bake_finalist_names(a, k) == SKS_NAMES_LIMBS_ON_HEAD)
        snprintf(tq, sizeof tq, "not baked (by the joints' names its limbs land on the head)");
      else if (sks_bake_finalist_names(a, k) == SKS_NAMES_ON_SIDE)
        snprintf(tq, sizeof tq, "not baked (by the joints' names it lies on its side or upside down)");
      else if (sks_bake_finalist_names(a, k) == SKS_NAMES_TURNED)
        snprintf(tq, sizeof tq, "not baked (by the %s it faces the other way)", a->facing_by_knees ? "knees" : "feet");
      else snprintf(tq, sizeof tq, "refused (too far)");
      printf("%s %s (scale %.4g, %.1f deg%s) %s%s%s", k ? ";" : "",
             a->finalist_registered[k] ? "registered" : "similarity alone", a->finalist_scale[k],
             a->finalist_angle_deg[k], nm, tq,
             k == a->finalist_registration ? " [the registration's choice]" : "",
             k == a->finalist_chosen ? " [kept]" : "");
    }
    printf("\n");
  }
  const int doubt = sks_bake_alignment_names(a);
  if (doubt == SKS_NAMES_ON_SIDE)
    printf("alignment: by the joints' names the source's head points %.0f deg from the target's: the\n"
           "           source may be aligned on its side or upside down, its motion then played on other\n"
           "           limbs; check the report's viewer\n", a->up_deg);
  else if (doubt == SKS_NAMES_TURNED)
    printf("alignment: by %s the source faces %.0f deg from the target's way: it may be\n"
           "           aligned turned round, its left limbs' motion then played on the right ones; check\n"
           "           the report's viewer\n", a->facing_by_knees ? sks_bake_facing_by(a) : "the feet's bones",
           a->facing_deg);
  else if (doubt == SKS_NAMES_DISAGREE)
    printf("alignment: by the joints' names only %.0f%% of the target's head / left / right vertices\n"
           "           correspond to the source's same part (head %s): the source may be aligned\n"
           "           turned, on its side or upside down, its motion then played on other limbs (or one\n"
           "           rig names its sides from the viewer); check the report's viewer\n",
           100.0 * a->label_agreement, pct0(a->head_agreement, hb, sizeof hb));
  if (a->over_default_limit)
    printf("alignment: the target's vertices are on average %.3g%% D from the source surface, over the\n"
           "           default limit (%g%%; baked under --max-residual): the two bodies differ that much,\n"
           "           and the motion is transferred between them as it is\n",
           r->correspondence_mean_pct, SKS_BAKE_RESIDUAL_LIMIT_PCT);
  if (r->target_weights_normalised || r->source_weights_normalised)
    printf("weights: %zu target and %zu source vertices did not sum to 1: normalised once, as a "
           "player does; the bake solves, measures and writes them so\n",
           r->target_weights_normalised, r->source_weights_normalised);
  if (r->morphs_carried || r->morphs_not_carried_count) { /* README "Morph targets in a bake" */
    printf("morphs: carried %zu (played in the metrics, written as weights channels)", r->morphs_carried);
    if (r->morphs_not_carried_count) {
      printf("; not carried %zu [", r->morphs_not_carried_count);
      for (size_t i = 0; i < r->morphs_not_carried_count; ++i)
        printf("%s%s", i ? ", " : "", r->morphs_not_carried[i]);
      printf("] (no target morph target of that name: left out of the motion and the errors; "
             "up to %.3g%% D)", r->morphs_not_carried_pct);
    }
    printf("\n");
  }
}

/* After the bake: the rows were printed as each clip finished
 * (sks_cli_bake_on_clip_done); this adds D, alignment and the notes. */
static void print_table(const sks_bake_result *r, const char *src, const char *tgt, int rows_done, int align_none) {
  printf("bake %s -> %s: %zu target vertices (%zu constraints), %zu joints, D = %.6g\n", src, tgt,
         r->measured_vertex_count, r->constraint_count, r->target_joint_count, r->diagonal);
  if (r->rigid_vertex_count)
    printf("rigid parts: %zu of the %zu vertices follow one joint each; baked and measured\n",
           r->rigid_vertex_count, r->measured_vertex_count);
  print_alignment(r, align_none);
  if (!rows_done) printf("%-24s %-13s %6s %10s %14s %16s %9s\n", "clip", "mode", "frames", "quality %",
         "mean error %D", "worst vertex %D", "solve ms");
  for (size_t i = 0; i < r->clip_count && !rows_done; ++i) {
    const sks_baked_clip *c = &r->clips[i];
    char q[32];
    if (isnan(c->quality)) snprintf(q, sizeof q, "n/a");  /* the clip does not move */
    else snprintf(q, sizeof q, "%.4f%s", c->quality * 100.0, c->suspect ? "!" : "");
    printf("%-24s %-13s %6zu %10s %14.6f %16.6f %9.1f\n", c->name, mode_name(c->mode),
           c->frame_count, q, c->mean_error_pct, c->worst_error_pct, c->solve_ms);
  }
  for (size_t i = 0; i < r->clip_count; ++i)
    if (r->clips[i].suspect) {
      printf("!: these numbers contradict each other (mean error > 5%% D, worst > 50%% D or quality\n"
             "   < 0): the target cannot follow this motion, or the pair / its alignment is wrong.\n");
      break;
    }
  for (size_t i = 0; i < r->clip_count; ++i) /* --solver bcd (README "--solver bcd") */
    if (r->clips[i].bcd_polished_frames)
      printf("bcd: '%s' (%s): on %zu of %zu frames the sweeps did not reach their stop (or the clip keys\n"
             "     3-axis scale); the default LM finished from their answer\n", r->clips[i].name, mode_name(r->clips[i].mode),
             r->clips[i].bcd_polished_frames, r->clips[i].frame_count);
  for (size_t i = 0; i < r->clip_count; ++i)
    if (isnan(r->clips[i].quality)) {
      printf("n/a: the clip does not move (mean motion < 0.001%% of D): no motion to transfer,\n"
             "     so quality is undefined; its errors are still measured.\n");
      break;
    }
}

static int print_json(const sks_bake_result *r, const sks_model *target) {
  cJSON *root = cJSON_CreateObject(), *clips = cJSON_AddArrayToObject(root, "clips");
  for (size_t i = 0; i < r->clip_count; ++i) {
    cJSON *o = sks_cli_bake_clip_json(&r->clips[i], target);
    cJSON_AddItemToArray(clips, o);
  }
  cJSON_AddNumberToObject(root, "constraints", (double)r->constraint_count);
  cJSON_AddNumberToObject(root, "target_vertices", (double)r->target_vertex_count);
  cJSON_AddNumberToObject(root, "target_joints", (double)r->target_joint_count);
  cJSON_AddNumberToObject(root, "diagonal", r->diagonal);
  cJSON_AddNumberToObject(root, "measured_vertices", (double)r->measured_vertex_count);
  cJSON_AddNumberToObject(root, "rigid_vertices", (double)r->rigid_vertex_count);
  cJSON_AddNumberToObject(root, "target_weights_normalised", (double)r->target_weights_normalised);
  cJSON_AddNumberToObject(root, "source_weights_normalised", (double)r->source_weights_normalised);
  cJSON *al = cJSON_AddObjectToObject(root, "alignment");
  cJSON_AddBoolToObject(al, "applied", r->alignment.applied);
  cJSON_AddNumberToObject(al, "scale", r->alignment.scale);
  cJSON_AddNumberToObject(al, "angle_deg", r->alignment.angle_deg);
  cJSON *off = cJSON_AddArrayToObject(al, "offset");
  for (int k = 0; k < 3; ++k) cJSON_AddItemToArray(off, cJSON_CreateNumber(r->alignment.offset[k]));
  cJSON_AddBoolToObject(al, "same_mesh", r->correspondence_identity);
  cJSON_AddBoolToObject(al, "same_surface", r->alignment.same_surface);
  cJSON_AddBoolToObject(al, "subset", r->alignment.subset);
  cJSON_AddNumberToObject(al, "mean_distance_pct", r->correspondence_mean_pct);
  cJSON_AddBoolToObject(al, "registered", r->alignment.registered);
  cJSON_AddNumberToObject(al, "similarity_distance_pct", r->alignment.similarity_residual_pct);
  cJSON_AddNumberToObject(al, "limb_rematched", (double)r->alignment.limb_rematched);
  cJSON_AddBoolToObject(al, "over_default_limit", r->alignment.over_default_limit);
  cJSON_AddBoolToObject(al, "mirrored", r->alignment.mirrored);
  cJSON_AddNumberToObject(al, "label_agreement", r->alignment.label_agreement);
  cJSON_AddNumberToObject(al, "head_agreement", r->alignment.head_agreement);
  cJSON_AddNumberToObject(al, "up_deg", r->alignment.up_deg);
  cJSON_AddNumberToObject(al, "facing_deg", r->alignment.facing_deg);
  const char *facing_by = sks_bake_facing_by(&r->alignment);
  if (facing_by) cJSON_AddStringToObject(al, "facing_by", facing_by);
  else cJSON_AddNullToObject(al, "facing_by");
  cJSON *fin = cJSON_AddArrayToObject(al, "finalists");
  for (size_t k = 0; k < r->alignment.finalists && k < SKS_BAKE_FINALISTS; ++k) {
    const sks_bake_alignment *a = &r->alignment;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "registered", a->finalist_registered[k]);
    cJSON_AddNumberToObject(o, "scale", a->finalist_scale[k]);
    cJSON_AddNumberToObject(o, "angle_deg", a->finalist_angle_deg[k]);
    cJSON_AddNumberToObject(o, "trial_quality_pct", 100.0 * a->trial_quality[k]);
    cJSON_AddNumberToObject(o, "label_agreement", a->finalist_label_agreement[k]);
    cJSON_AddNumberToObject(o, "head_agreement", a->finalist_head_agreement[k]);
    cJSON_AddNumberToObject(o, "up_deg", a->finalist_up_deg[k]);
    cJSON_AddNumberToObject(o, "facing_deg", a->finalist_facing_deg[k]);
    cJSON_AddBoolToObject(o, "registration_choice", k == a->finalist_registration);
    cJSON_AddBoolToObject(o, "kept", k == a->finalist_chosen);
    cJSON_AddItemToArray(fin, o);
  }
  cJSON_AddNumberToObject(al, "seconds", r->alignment.seconds);
  cJSON *mo = cJSON_AddObjectToObject(root, "morphs");
  cJSON_AddNumberToObject(mo, "carried", (double)r->morphs_carried);
  cJSON *nc = cJSON_AddArrayToObject(mo, "not_carried");
  for (size_t i = 0; i < r->morphs_not_carried_count; ++i)
    cJSON_AddItemToArray(nc, cJSON_CreateString(r->morphs_not_carried[i]));
  cJSON_AddNumberToObject(mo, "not_carried_max_pct", r->morphs_not_carried_pct);
  char *s = cJSON_Print(root);
  cJSON_Delete(root);
  if (!s) return 0;
  puts(s);
  free(s);
  return 1;
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

int sks_cli_bake_main(const char *cmd, const char *source_path, const char *target_path,
                      int argc, char **argv, int first, int control) {
  const char **clips = calloc((size_t)argc + 1, sizeof(char *));
  if (!clips) return sks_cli_fail(SKS_EXIT_INPUT, "out of memory");
  size_t nclips = 0;
  const char *out_path = NULL, *report_path = NULL;
  sks_bake_options opt;
  memset(&opt, 0, sizeof opt);
  int json = 0, quiet = 0, replace_clips = 0, lr, rb;
  size_t report_max_bytes = 0;
  sks_load_options load_opt = {0};
  const char **clip_files = calloc((size_t)argc + 3, sizeof(char *));
  size_t nclip_files = 0;
  if (!clip_files) { free(clips); return sks_cli_fail(SKS_EXIT_INPUT, "out of memory"); }
  for (int i = first; i < argc; ++i) {
    const char *a = argv[i];
    int has = i + 1 < argc, cr;
    if ((cr = sks_cli_opt_clips(argc, argv, &i, clip_files, &nclip_files)) != 0) {
      if (cr < 0) { free(clips); free(clip_files); return SKS_EXIT_USAGE; }
    } else if (strcmp(a, "--quiet") == 0) quiet = 1;
    else if (strcmp(a, "--keep-clips") == 0) replace_clips = 0;
    else if (strcmp(a, "--replace-clips") == 0) replace_clips = 1;
    else if (strcmp(a, "--clip") == 0 && has) clips[nclips++] = argv[++i];
    else if (strcmp(a, "-o") == 0 && has) out_path = argv[++i];
    else if (strcmp(a, "--report") == 0 && has) report_path = argv[++i];
    else if ((rb = sks_cli_opt_report_max_mb(argc, argv, &i, &report_max_bytes)) != 0) {
      if (rb < 0) { free(clips); free(clip_files); return SKS_EXIT_USAGE; }
    }
    else if (strcmp(a, "--json") == 0) json = 1;
    else if (strcmp(a, "--mode") == 0 && has) {
      const char *m = argv[++i];
      if (strcmp(m, "free") == 0) opt.mode = SKS_SOLVE_FREE;
      else if (strcmp(m, "rotation-only") == 0) opt.mode = SKS_SOLVE_ROTATION_ONLY;
      else if (strcmp(m, "both") == 0) opt.mode = SKS_SOLVE_BOTH;
      else { free(clips); free(clip_files); return sks_cli_fail(SKS_EXIT_USAGE, "%s: --mode must be free, rotation-only or both (got '%s')", cmd, m); }
    } else if (strcmp(a, "--align") == 0 && has) {
      const char *m = argv[++i];
      if (strcmp(m, "auto") == 0) opt.align = SKS_ALIGN_AUTO;
      else if (strcmp(m, "none") == 0) opt.align = SKS_ALIGN_NONE;
      else { free(clips); free(clip_files); return sks_cli_fail(SKS_EXIT_USAGE, "%s: --align must be auto or none (got '%s')", cmd, m); }
    } else if (strcmp(a, "--solver") == 0 && has) {
      const char *m = argv[++i];
      if (strcmp(m, "default") == 0) opt.solver = SKS_SOLVER_DEFAULT;
      else if (strcmp(m, "bcd") == 0) opt.solver = SKS_SOLVER_BCD;
      else { free(clips); free(clip_files); return sks_cli_fail(SKS_EXIT_USAGE, "%s: --solver must be default or bcd (got '%s')", cmd, m); }
    } else if (strcmp(a, "--max-constraints") == 0 && has) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v <= 0) { free(clips); free(clip_files); return sks_cli_fail(SKS_EXIT_USAGE, "%s: --max-constraints needs a positive integer", cmd); }
      opt.max_constraints = (size_t)v;
    } else if (strcmp(a, "--threads") == 0 && has) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 0 || v > 256) { free(clips); free(clip_files); return sks_cli_fail(SKS_EXIT_USAGE, "%s: --threads needs an integer from 0 (every CPU) to 256", cmd); }
      opt.threads = (unsigned)v;
    } else if (strcmp(a, "--max-residual") == 0 && has) {
      char *end;
      double v = strtod(argv[++i], &end);
      if (*end || !(v > 0) || v > 100) {
        free(clips); free(clip_files);
        return sks_cli_fail(SKS_EXIT_USAGE, "%s: --max-residual needs a percentage of D above 0, up to 100 (got '%s')", cmd, argv[i]);
      }
      opt.max_residual_pct = v;
    } else if (strcmp(a, "--fps") == 0 && has) {
      char *end;
      double v = strtod(argv[++i], &end);
      if (*end || !(v > 0) || v > 10000) { free(clips); free(clip_files); return sks_cli_fail(SKS_EXIT_USAGE, "%s: --fps needs a positive number", cmd); }
      opt.fps = (float)v;
    } else if ((lr = sks_cli_load_option(argc, argv, &i, &load_opt)) != 0) {
      if (lr < 0) { free(clips); return SKS_EXIT_USAGE; }
    } else {
      free(clips);
      free(clip_files);
      return sks_cli_fail(SKS_EXIT_USAGE, "%s: unknown or incomplete option '%s' (see skinsolve %s --help)", cmd, a, cmd);
    }
  }
  opt.clip_names = nclips ? clips : NULL;
  opt.clip_name_count = nclips;
  opt.keep_surfaces = report_path != NULL;
  sks_cli_bake_printer ps = {quiet, isatty(2), !json, 0};
  opt.progress = sks_cli_bake_on_progress;
  opt.progress_user = &ps;
  opt.clip_done = sks_cli_bake_on_clip_done;
  opt.clip_done_user = &ps;

  const char *outs[2] = {out_path, report_path};
  sks_cli_output_guard guard; /* the files the Assimp imports read, checked after the loads */
  sks_cli_guard_outputs(&guard, &load_opt, outs, 2);
  {
    clip_files[nclip_files] = source_path; /* every input: SRC, TGT and the clip files */
    clip_files[nclip_files + 1] = target_path;
    int rc = sks_cli_check_outputs(outs, 2, clip_files, nclip_files + 2);
    if (rc) { free(clips); free(clip_files); return rc; }
  }
  sks_error err;
  memset(&err, 0, sizeof err);
  sks_model src, tgt;
  memset(&src, 0, sizeof src);
  memset(&tgt, 0, sizeof tgt);
  if (sks_load(source_path, &load_opt, &src, &err) != SKS_OK) {
    free(clips);
    free(clip_files);
    return sks_cli_guard_load_failed(&guard, err.message); /* an output it read: exit 2 */
  }
  {
    int rc = sks_cli_load_clips(&src, clip_files, nclip_files, quiet, &load_opt);
    free(clip_files);
    clip_files = NULL;
    if (rc) { sks_model_free(&src); free(clips); free(sks_cli_guard_message(&guard)); return rc; }
  }
  if (!control && sks_load(target_path, &load_opt, &tgt, &err) != SKS_OK) {
    sks_model_free(&src);
    free(clips);
    return sks_cli_guard_load_failed(&guard, err.message);
  }
  {
    int rc = sks_cli_guard_check(&guard);
    if (rc) { sks_model_free(&src); sks_model_free(&tgt); free(clips); return rc; }
  }
  const sks_model *target = control ? &src : &tgt;
  for (size_t w = 0; w < src.warning_count; ++w) fprintf(stderr, "warning: %s\n", src.warnings[w]);
  for (size_t w = 0; !control && w < tgt.warning_count; ++w) fprintf(stderr, "warning: %s\n", tgt.warnings[w]);
  sks_bake_result res;
  int code = SKS_EXIT_OK;
  if ((code = sks_cli_bake_precheck(&src, target, source_path, target_path, control)) != 0) goto done_models;
  if (!json) sks_cli_bake_print_header(base_name(source_path), base_name(target_path), target);
  if (sks_bake(&src, target, &opt, &res, &err) != SKS_OK) {
    code = sks_cli_fail(SKS_EXIT_INPUT, "%s", err.message);
    goto done_models;
  }
  for (size_t i = 0; i < res.clip_count; ++i) /* never a silently unconverged answer */
    if (res.clips[i].bcd_unconverged_frames)
      fprintf(stderr, "warning: clip '%s' (%s): --solver bcd did not converge on %zu of %zu frames (sweeps ran out, "
              "LM could not run): their errors are the unconverged answer's; try --solver default\n",
              res.clips[i].name, mode_name(res.clips[i].mode), res.clips[i].bcd_unconverged_frames,
              res.clips[i].frame_count);
  if (json) {
    if (!print_json(&res, target)) code = sks_cli_fail(SKS_EXIT_OUTPUT, "could not format JSON");
  } else {
    print_table(&res, base_name(source_path), base_name(target_path), 1, opt.align == SKS_ALIGN_NONE);
    sks_cli_bake_print_diagnosis(&res, target);
  }
  /* Everything that can fail on the input (applying the clips, the
   * report's budget) is settled before the first output is replaced, so a
   * refused run leaves the outputs of an earlier run as they were. */
  sks_model baked;
  memset(&baked, 0, sizeof baked);
  int have_baked = 0;
  if (out_path && code == SKS_EXIT_OK) {
    if (sks_cli_bake_apply(target, &res, replace_clips, quiet, &baked, &err) != SKS_OK)
      code = sks_cli_fail(SKS_EXIT_INPUT, "%s", err.message);
    else
      have_baked = 1;
  }
  /* one result per mode (the report shows modes side by side); the views
   * share the clips of `res` */
  char title[512];
  snprintf(title, sizeof title, "%s: %s -> %s", cmd, base_name(source_path), base_name(target_path));
  sks_bake_result views[2];
  const sks_bake_result *results[2];
  size_t nviews = 0;
  sks_baked_clip *split = NULL;
  sks_report_input in = {title, &src, target, results, 0, report_max_bytes};
  char *html = NULL; /* the report's page, built (and planned) once */
  size_t html_size = 0;
  if (report_path && code == SKS_EXIT_OK) {
    split = malloc((res.clip_count ? res.clip_count : 1) * sizeof *split);
    if (!split) {
      code = sks_cli_fail(SKS_EXIT_OUTPUT, "out of memory");
    } else {
      size_t o = 0;
      for (int m = 0; m < 2; ++m) {
        sks_bake_result v = res;
        v.clips = split + o;
        v.clip_count = 0;
        for (size_t i = 0; i < res.clip_count; ++i)
          if ((int)res.clips[i].mode == m) split[o++] = res.clips[i], v.clip_count++;
        if (v.clip_count) { views[nviews] = v; results[nviews] = &views[nviews]; ++nviews; }
      }
      in.result_count = nviews;
      code = sks_cli_report_build(report_path, &in, quiet, &html, &html_size);
    }
  }
  /* All or nothing: the report and the .glb are built in memory and staged
   * (complete, fsynced, unnamed), and only then are both named and renamed
   * into place; a failure in either (a full disk, a
   * file size limit) leaves both earlier outputs as they were. */
  if (code == SKS_EXIT_OK && (have_baked || report_path))
    code = sks_cli_write_outputs(have_baked ? out_path : NULL, have_baked ? &baked : NULL, report_path, html,
                                 html_size, json);
  free(html);
  if (have_baked) sks_model_free(&baked);
  free(split);
  sks_bake_result_free(&res);
done_models:
  sks_model_free(&src);
  sks_model_free(&tgt);
  free(clips);
  return code;
}

int sks_cmd_bake(int argc, char **argv) {
  const char *src = NULL, *tgt = NULL;
  /* pull out --source / --target, pass the rest on */
  char **rest = calloc((size_t)argc + 1, sizeof(char *));
  if (!rest) return sks_cli_fail(SKS_EXIT_INPUT, "out of memory");
  int n = 1;
  rest[0] = argv[0];
  for (int i = 1; i < argc; ++i) {
    if (sks_cli_is_help(argv[i])) { bake_usage(stdout); free(rest); return SKS_EXIT_OK; }
    if (strcmp(argv[i], "--source") == 0 && i + 1 < argc) src = argv[++i];
    else if (strcmp(argv[i], "--target") == 0 && i + 1 < argc) tgt = argv[++i];
    else rest[n++] = argv[i];
  }
  if (!src || !tgt) {
    bake_usage(stderr);
    free(rest);
    return sks_cli_fail(SKS_EXIT_USAGE, "bake: --source and --target are required");
  }
  int code = sks_cli_bake_main("bake", src, tgt, n, rest, 1, 0);
  free(rest);
  return code;
}
