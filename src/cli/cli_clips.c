/* --clips ANIM_FILE...: clips from animation-only files, applied to a rig by
 * joint name (sks_clips_from_model), with the match report on stderr. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"

int sks_cli_opt_clips(int argc, char **argv, int *i, const char **files, size_t *n) {
  if (strcmp(argv[*i], "--clips") != 0) return 0;
  size_t before = *n;
  while (*i + 1 < argc && !(argv[*i + 1][0] == '-' && argv[*i + 1][1])) files[(*n)++] = argv[++*i];
  if (*n == before) {
    sks_cli_fail(SKS_EXIT_USAGE, "--clips needs at least one animation file (see --help)");
    return -1;
  }
  return 1;
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

/* "a, b, c ... (N more)" on stderr. */
static void print_names(char **names, size_t n) {
  const size_t cap = 16;
  for (size_t i = 0; i < n && i < cap; ++i) fprintf(stderr, "%s'%s'", i ? ", " : "", names[i]);
  if (n > cap) fprintf(stderr, " ... (%zu more)", n - cap);
}

static void print_report(const char *anim_file, const char *rig_file, const sks_clip *clips, size_t nc,
                         const sks_clip_match_report *r) {
  const char *a = base_name(anim_file), *g = base_name(rig_file);
  fprintf(stderr, "clips from %s onto %s: %zu clip%s (", a, g, nc, nc == 1 ? "" : "s");
  for (size_t i = 0; i < nc; ++i) fprintf(stderr, "%s'%s'", i ? ", " : "", clips[i].name);
  fprintf(stderr, ")\n");
  fprintf(stderr, "  joints: %zu of %zu (%s) match %zu of %zu (%s) by name\n", r->matched_count,
          r->anim_joint_count, a, r->matched_count, r->rig_joint_count, g);
  fprintf(stderr, "  only in %s: %zu (keep their rest pose)%s", g, r->rig_only_count, r->rig_only_count ? ": " : "");
  print_names(r->rig_only, r->rig_only_count);
  fprintf(stderr, "\n  only in %s: %zu (%zu keyed: their tracks are dropped)%s", a, r->anim_only_count,
          r->anim_only_keyed_count, r->anim_only_count ? ": " : "");
  print_names(r->anim_only, r->anim_only_count);
  fprintf(stderr, "\n  rest pose: %zu matched joints differ (local rest up to %.3g deg, %.3g units apart)",
          r->rest_differs_count, r->max_rest_angle_deg, r->max_rest_offset);
  if (r->copied_as_is) {
    fprintf(stderr, "; tracks copied as they are (asked for)");
  } else {
    fprintf(stderr, ";\n    %zu are taken as another pose on the same joint frames: "
            "rotations copied, translations keep %s's offsets (judged by the children's rest offsets)",
            r->pose_only_count, g);
    fprintf(stderr, ";\n    %zu have other joint frames: keys retargeted by the local-rest difference%s",
            r->frames_differ_count, r->frames_differ_count ? ": " : "");
    print_names(r->frames_differ, r->frames_differ_count);
  }
  fprintf(stderr, "\n  tracks: %zu kept, %zu dropped\n", r->tracks_kept, r->tracks_dropped);
}

int sks_cli_load_clips(sks_model *model, const char *const *files, size_t n, int quiet,
                       const sks_load_options *options) {
  if (!n) return 0;
  sks_clip *all = NULL;
  size_t count = 0;
  int rc = 0;
  for (size_t f = 0; f < n && !rc; ++f) {
    sks_model anim;
    if ((rc = sks_cli_load_with(files[f], options, &anim)) != 0) break;
    sks_clip *clips = NULL;
    size_t nc = 0;
    sks_clip_match_report rep;
    sks_error err;
    memset(&err, 0, sizeof err);
    sks_result r = sks_clips_from_model(model, &anim, NULL, &clips, &nc, &rep, &err);
    if (r != SKS_OK) {
      rc = sks_cli_fail(SKS_EXIT_INPUT, "--clips %s: %s", files[f], err.message);
    } else {
      sks_clip *grown = realloc(all, (count + nc) * sizeof *grown);
      if (!grown) {
        rc = sks_cli_fail(SKS_EXIT_INPUT, "out of memory");
        for (size_t i = 0; i < nc; ++i) sks_clip_free(&clips[i]);
      } else {
        all = grown;
        /* a name already taken (several files, or an unnamed clip) gets the file's name */
        for (size_t i = 0; i < nc && !rc; ++i) {
          sks_clip *c = &clips[i];
          if (!c->name[0] || sks_clip_find(all, count, c->name) >= 0) {
            char buf[512];
            snprintf(buf, sizeof buf, "%s%s%s", base_name(files[f]), c->name[0] ? ":" : "", c->name);
            for (int k = 2; sks_clip_find(all, count, buf) >= 0; ++k)
              snprintf(buf, sizeof buf, "%s%s%s#%d", base_name(files[f]), c->name[0] ? ":" : "", c->name, k);
            char *nn = malloc(strlen(buf) + 1);
            if (!nn) { rc = sks_cli_fail(SKS_EXIT_INPUT, "out of memory"); break; }
            strcpy(nn, buf);
            if (!quiet)
              fprintf(stderr, "note: clip '%s' of %s is named '%s' (the name is taken or empty)\n", c->name,
                      base_name(files[f]), nn);
            free(c->name);
            c->name = nn;
          }
          all[count++] = *c;
          memset(c, 0, sizeof *c);
        }
        for (size_t i = 0; i < nc; ++i) sks_clip_free(&clips[i]);
        if (!quiet && !rc) print_report(files[f], model->source_path ? model->source_path : "the rig",
                                        all + count - nc, nc, &rep);
      }
    }
    free(clips);
    sks_clip_match_report_free(&rep);
    sks_model_free(&anim);
  }
  if (rc) {
    for (size_t i = 0; i < count; ++i) sks_clip_free(&all[i]);
    free(all);
    return rc;
  }
  for (size_t i = 0; i < model->clip_count; ++i) sks_clip_free(&model->clips[i]);
  free(model->clips);
  model->clips = all;
  model->clip_count = count;
  return 0;
}
