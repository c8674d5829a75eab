/* bake / control output while working: the table header at once, one row per
 * clip as it finishes (flushed, on any stdout), frame progress on stderr
 * (a live line on a terminal, a line every quarter of a clip otherwise),
 * and how the target's own clips are treated by -o (--keep-clips /
 * --replace-clips). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "cli_bake_report.h"
#include "io/gltf_write.h"
#include "io/atomic.h"
#include "common_sha256.h"

static const char *mode_name(sks_solve_mode m) {
  return m == SKS_SOLVE_ROTATION_ONLY ? "rotation-only" : "free";
}

int sks_cli_bake_precheck(const sks_model *src, const sks_model *target, const char *src_path,
                          const char *tgt_path, int control) {
  if (src->part_count == 0)
    return sks_cli_fail(SKS_EXIT_INPUT,
                        "%s: no mesh (a skeleton-only file): nothing to record; give its clips to a rig "
                        "instead: skinsolve %s --clips %s ...",
                        src_path, control ? "control RIG" : "bake --source RIG --target TGT", src_path);
  if (target->part_count == 0)
    return sks_cli_fail(SKS_EXIT_INPUT,
                        "%s: no mesh (a skeleton-only file): a bake target needs a mesh that follows its joints",
                        tgt_path);
  /* before the table's header: a rig without clips (ozz's arnaud.fbx, whose
   * clips are in locomotions.fbx) has nothing to bake until --clips gives some */
  if (src->clip_count == 0)
    return sks_cli_fail(SKS_EXIT_INPUT,
                        "%s: has no animation clips to bake; take them from an animation file of the same "
                        "skeleton: skinsolve %s --clips ANIM_FILE ...",
                        src_path, control ? "control RIG" : "bake --source RIG --target TGT");
  return 0;
}

void sks_cli_bake_print_header(const char *src, const char *tgt, const sks_model *target) {
  printf("baking %s -> %s: %zu target joints, %zu vertices in %zu parts\n", src, tgt,
         target->skeleton.joint_count, sks_model_total_vertex_count(target), target->part_count);
  printf("%-24s %-13s %6s %10s %14s %16s %9s\n", "clip", "mode", "frames", "quality %",
         "mean error %D", "worst vertex %D", "solve ms");
  fflush(stdout);
}

void sks_cli_bake_print_row(const sks_baked_clip *c) {
  char q[32];
  if (isnan(c->quality)) snprintf(q, sizeof q, "n/a"); /* the clip does not move */
  else snprintf(q, sizeof q, "%.4f%s", c->quality * 100.0, c->suspect ? "!" : "");
  printf("%-24s %-13s %6zu %10s %14.6f %16.6f %9.1f\n", c->name, mode_name(c->mode), c->frame_count, q,
         c->mean_error_pct, c->worst_error_pct, c->solve_ms);
  fflush(stdout);
}

void sks_cli_bake_on_clip_done(void *user, const sks_baked_clip *clip) {
  const sks_cli_bake_printer *p = user;
  if (p->rows) sks_cli_bake_print_row(clip);
}

void sks_cli_bake_on_progress(void *user, const char *clip, size_t frame, size_t count) {
  sks_cli_bake_printer *p = user;
  if (p->quiet) return;
  if (p->tty) {
    if (frame >= count) fprintf(stderr, "\r\033[K");
    else fprintf(stderr, "\r\033[Kbaking '%s': frame %zu/%zu", clip, frame + 1, count);
    fflush(stderr);
    return;
  }
  /* not a terminal (a log): a line at the start and at each quarter */
  if (frame >= count) return;
  if (frame == 0) p->next_quarter = 1;
  if (frame == 0 || frame + 1 >= (count * p->next_quarter) / 4) {
    if (frame) p->next_quarter++;
    fprintf(stderr, "baking '%s': frame %zu/%zu\n", clip, frame + 1, count);
    fflush(stderr);
  }
}

sks_result sks_cli_bake_apply(const sks_model *target, const sks_bake_result *res, int replace, int quiet,
                              sks_model *out, sks_error *err) {
  /* a shallow view of the target whose clip list holds only what -o keeps */
  sks_model view = *target;
  sks_clip *kept = malloc((target->clip_count ? target->clip_count : 1) * sizeof *kept);
  if (!kept) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  size_t nk = 0, replaced = 0;
  for (size_t i = 0; i < target->clip_count && !replace; ++i) {
    const char *name = target->clips[i].name ? target->clips[i].name : "";
    int clash = 0;
    for (size_t k = 0; k < res->clip_count && !clash; ++k) {
      char baked[512];
      snprintf(baked, sizeof baked, "%s%s", res->clips[k].name,
               res->clips[k].mode == SKS_SOLVE_ROTATION_ONLY ? "_rotation_only" : "");
      clash = strcmp(baked, name) == 0;
    }
    if (clash) {
      ++replaced;
      if (!quiet)
        fprintf(stderr, "note: the target's own clip '%s' is replaced by the baked clip of that name\n", name);
      continue;
    }
    kept[nk++] = target->clips[i];
  }
  view.clips = kept;
  view.clip_count = nk;
  sks_result r = sks_bake_apply(&view, res, out, err);
  free(kept);
  if (r == SKS_OK && !quiet) {
    if (replace)
      fprintf(stderr, "note: -o drops the target's own %zu clip%s (--replace-clips)\n", target->clip_count,
              target->clip_count == 1 ? "" : "s");
    else if (nk)
      fprintf(stderr, "note: -o keeps the target's own %zu clip%s beside the baked ones (--keep-clips; "
              "--replace-clips drops them)\n", nk, nk == 1 ? "" : "s");
  }
  (void)replaced;
  return r;
}

const char *sks_cli_joint_name(const sks_model *m, int32_t j) {
  return m && j >= 0 && (size_t)j < m->skeleton.joint_count && m->skeleton.names && m->skeleton.names[j]
             ? m->skeleton.names[j] : "?";
}

void sks_cli_print_worst_joints(const sks_diagnosis *d, const sks_model *m, size_t n) {
  for (size_t k = 0; k < d->joint_count && k < n; ++k) {
    const sks_joint_diagnosis *j = &d->joints[k];
    printf("%s%s %.1f %%%s (worst vertex %zu, %.3g %%D)", k ? ", " : "", sks_cli_joint_name(m, j->joint),
           j->share * 100.0, k ? "" : " of the residual", j->worst_vertex, j->worst_error_pct);
  }
  if (d->joint_count > n) printf(", %zu more", d->joint_count - n);
  if (d->unattributed_vertex_count)
    printf("; %zu vertices without weight: %.1f %%", d->unattributed_vertex_count, d->unattributed_share * 100.0);
}

void sks_cli_bake_print_diagnosis(const sks_bake_result *r, const sks_model *target) {
  if (!r->clip_count) return;
  printf("worst joints (share of the residual sum e on the vertices each joint dominates; README "
         "\"Diagnosis\"):\n");
  for (size_t i = 0; i < r->clip_count; ++i) {
    const sks_baked_clip *c = &r->clips[i];
    printf("  %s (%s): ", c->name, mode_name(c->mode));
    sks_cli_print_worst_joints(&c->diagnosis, target, 3);
    printf("\n");
  }
}

cJSON *sks_cli_diagnosis_json(const sks_diagnosis *d, const sks_model *m) {
  cJSON *a = cJSON_CreateArray();
  for (size_t k = 0; k < d->joint_count; ++k) {
    const sks_joint_diagnosis *j = &d->joints[k];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "joint", j->joint);
    cJSON_AddStringToObject(o, "name", sks_cli_joint_name(m, j->joint));
    cJSON_AddNumberToObject(o, "vertices", (double)j->vertex_count);
    cJSON_AddNumberToObject(o, "share_pct", j->share * 100.0);
    cJSON_AddNumberToObject(o, "mean_error_pct", j->mean_error_pct);
    cJSON_AddNumberToObject(o, "worst_error_pct", j->worst_error_pct);
    cJSON_AddNumberToObject(o, "worst_vertex", (double)j->worst_vertex);
    cJSON_AddNumberToObject(o, "worst_frame", (double)j->worst_frame);
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

cJSON *sks_cli_bake_clip_json(const sks_baked_clip *c, const sks_model *target) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", c->name);
  cJSON_AddNumberToObject(o, "frames", (double)c->frame_count);
  if (isnan(c->quality)) cJSON_AddNullToObject(o, "quality"); /* no motion: undefined */
  else cJSON_AddNumberToObject(o, "quality", c->quality * 100.0);
  cJSON_AddNumberToObject(o, "mean_error_pct", c->mean_error_pct);
  cJSON_AddNumberToObject(o, "worst_error_pct", c->worst_error_pct);
  cJSON_AddNumberToObject(o, "solve_ms", c->solve_ms);
  cJSON_AddStringToObject(o, "mode", c->mode == SKS_SOLVE_ROTATION_ONLY ? "rotation-only" : "free");
  cJSON_AddNumberToObject(o, "sweeps_per_frame", c->sweeps_per_frame);
  cJSON_AddNumberToObject(o, "bcd_polished_frames", (double)c->bcd_polished_frames);
  cJSON_AddNumberToObject(o, "bcd_unconverged_frames", (double)c->bcd_unconverged_frames);
  cJSON_AddNumberToObject(o, "retried_frames", (double)c->retried_frames);
  cJSON_AddNumberToObject(o, "mean_motion_pct", c->mean_motion_pct);
  cJSON_AddBoolToObject(o, "suspect", c->suspect);
  cJSON *fm = cJSON_AddArrayToObject(o, "frame_mean_error_pct");
  cJSON *fw = cJSON_AddArrayToObject(o, "frame_worst_error_pct");
  for (size_t f = 0; f < c->frame_count; ++f) {
    cJSON_AddItemToArray(fm, cJSON_CreateNumber(c->frame_mean_error_pct[f]));
    cJSON_AddItemToArray(fw, cJSON_CreateNumber(c->frame_worst_error_pct[f]));
  }
  cJSON_AddItemToObject(o, "joints", sks_cli_diagnosis_json(&c->diagnosis, target));
  cJSON_AddNumberToObject(o, "unattributed_share_pct", c->diagnosis.unattributed_share * 100.0);
  return o;
}

/* ---- the report's budget ------------------------------------------------ */

int sks_cli_opt_report_max_mb(int argc, char **argv, int *i, size_t *max_bytes) {
  if (strcmp(argv[*i], "--report-max-mb") != 0) return 0;
  if (*i + 1 >= argc) {
    sks_cli_fail(SKS_EXIT_USAGE, "--report-max-mb needs a size in MB");
    return -1;
  }
  char *end;
  const char *text = argv[++*i];
  double mb = strtod(text, &end);
  /* 1 MB .. 1 TB: a page under 1 MB cannot hold the viewer */
  if (*end || !(mb >= 1) || mb > 1048576) {
    sks_cli_fail(SKS_EXIT_USAGE, "--report-max-mb: '%s' is not a size in MB from 1 to 1048576", text);
    return -1;
  }
  *max_bytes = (size_t)(mb * 1048576.0);
  return 1;
}

/* 54660 -> "54,660" */
static const char *grouped(size_t n, char *buf, size_t cap) {
  char digits[32];
  int len = snprintf(digits, sizeof digits, "%zu", n);
  size_t o = 0;
  for (int k = 0; k < len && o + 2 < cap; ++k) {
    if (k && (len - k) % 3 == 0) buf[o++] = ',';
    buf[o++] = digits[k];
  }
  buf[o] = '\0';
  return buf;
}

int sks_cli_report_build(const char *path, const sks_report_input *in, int quiet, char **html, size_t *size) {
  sks_report_plan plan;
  sks_error err;
  memset(&err, 0, sizeof err);
  if (sks_report_html_plan(in, html, size, &plan, &err) != SKS_OK)
    return sks_cli_fail(SKS_EXIT_OUTPUT, "%s: %s", path, err.message);
  if (plan.vertices_shown < plan.vertex_count && !quiet) {
    char a[32], b[32], f[32], every[96] = "every frame";
    size_t k = plan.frame_step;
    if (k > 1)
      snprintf(every, sizeof every, "every %zu%s frame (%zu frames)", k,
               k % 100 >= 11 && k % 100 <= 13 ? "th" : k % 10 == 1 ? "st" : k % 10 == 2 ? "nd" : k % 10 == 3 ? "rd" : "th",
               plan.frames_shown);
    fprintf(stderr,
            "report: %s frames x %s vertices do not fit the %.0f MB budget even at one frame per clip: the "
            "viewer shows a simplified mesh of %s vertices (%zu of %zu triangles; vertex clustering, cell %.3g) "
            "and %s; numbers stay those of all vertices and frames\n",
            grouped(plan.frames, f, sizeof f), grouped(plan.vertex_count, a, sizeof a),
            (double)plan.max_bytes / 1048576.0, grouped(plan.vertices_shown, b, sizeof b), plan.triangles_shown,
            plan.triangles, plan.cell, every);
  } else if (plan.frame_step > 1 && !quiet) {
    char f[32], v[32];
    size_t k = plan.frame_step;
    const char *th = k % 100 >= 11 && k % 100 <= 13 ? "th" : k % 10 == 1 ? "st" : k % 10 == 2 ? "nd" : k % 10 == 3 ? "rd" : "th";
    fprintf(stderr,
            "report: %s frames x %s vertices: showing every %zu%s frame (%zu frames, at most %.1f MB of the "
            "%.0f MB budget; all frames: %.1f MB); numbers stay those of all frames\n",
            grouped(plan.frames, f, sizeof f), grouped(plan.vertex_count, v, sizeof v), k, th, plan.frames_shown,
            (double)plan.bytes / 1048576.0, (double)plan.max_bytes / 1048576.0, (double)plan.bytes_all / 1048576.0);
  }
  return SKS_EXIT_OK;
}

char *sks_cli_report_seal(const char *html, size_t html_size, const char *glb_path, const uint8_t *glb,
                          size_t glb_size, size_t *sealed_size) {
  char hex[65];
  sks_sha256_buffer(glb, glb_size, hex);
  const char *base = strrchr(glb_path, '/');
  base = base ? base + 1 : glb_path;
  size_t bn = strlen(base);
  char *name = malloc(6 * bn + 1); /* every byte escaped at most as &quot; */
  if (!name) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < bn; ++i) {
    const char *e = base[i] == '&' ? "&amp;" : base[i] == '<' ? "&lt;" : base[i] == '>' ? "&gt;"
                  : base[i] == '"' ? "&quot;" : NULL;
    if (e) { memcpy(name + k, e, strlen(e)); k += strlen(e); }
    else name[k++] = base[i];
  }
  name[k] = '\0';
  size_t meta_cap = k + 160;
  char *meta = malloc(meta_cap);
  if (!meta) { free(name); return NULL; }
  int mn = snprintf(meta, meta_cap,
                    "\n<meta name=\"skinsolve-glb\" content=\"%s\">\n<meta name=\"skinsolve-glb-sha256\" content=\"%s\">",
                    name, hex);
  free(name);
  /* after "<head>" (the page's template has one; else at the start) */
  size_t at = 0;
  for (size_t i = 0; i + 6 <= html_size && i < 4096; ++i)
    if (memcmp(html + i, "<head>", 6) == 0) { at = i + 6; break; }
  char *out = mn > 0 ? malloc(html_size + (size_t)mn) : NULL;
  if (out) {
    memcpy(out, html, at);
    memcpy(out + at, meta, (size_t)mn);
    memcpy(out + at + (size_t)mn, html + at, html_size - at);
    *sealed_size = html_size + (size_t)mn;
  }
  free(meta);
  return out;
}

int sks_cli_write_outputs(const char *out_path, const sks_model *model, const char *report_path,
                          const char *html, size_t html_size, int json) {
  sks_staged_output st[2];
  size_t n = 0;
  sks_error err;
  memset(&err, 0, sizeof err);
  if (report_path && !html) return sks_cli_fail(SKS_EXIT_OUTPUT, "%s: the report was not built", report_path);
  uint8_t *glb = NULL;
  size_t glb_size = 0;
  if (out_path && model) {
    /* encoded in memory and staged unnamed like the report: a kill at any
     * point leaves no file behind */
    sks_result wr = sks_glb_encode(out_path, model, NULL, &glb, &glb_size, &err);
    if (wr == SKS_OK) wr = sks_stage_output(&st[n], out_path, glb, glb_size, &err);
    if (wr != SKS_OK) {
      free(glb);
      return sks_cli_fail(sks_cli_exit_for_write(wr), "%s", err.message);
    }
    ++n;
  }
  if (report_path) {
    /* renamed last, and sealed to the .glb staged above */
    char *sealed = NULL;
    size_t sealed_size = 0;
    if (glb && !(sealed = sks_cli_report_seal(html, html_size, out_path, glb, glb_size, &sealed_size))) {
      free(glb);
      sks_discard_outputs(st, n);
      return sks_cli_fail(SKS_EXIT_OUTPUT, "%s: out of memory", report_path);
    }
    sks_result r = sealed ? sks_stage_output(&st[n], report_path, sealed, sealed_size, &err)
                          : sks_stage_output(&st[n], report_path, html, html_size, &err);
    free(sealed);
    if (r != SKS_OK) {
      free(glb);
      sks_discard_outputs(st, n);
      return sks_cli_fail(sks_cli_exit_for_write(r), "%s", err.message);
    }
    ++n;
  }
  free(glb);
  if (sks_commit_outputs(st, n, &err) != SKS_OK) return sks_cli_fail(SKS_EXIT_OUTPUT, "%s", err.message);
  if (!json) {
    if (out_path && model) printf("wrote %s\n", out_path);
    if (report_path) printf("wrote %s\n", report_path);
  }
  return SKS_EXIT_OK;
}
