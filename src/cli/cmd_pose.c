/* skinsolve pose: skin every mesh part of a file at one clip time (or the
 * rest / bind pose) and write the positions as .obj or .f32.
 * Pipeline: sample clip -> local pose -> FK (local to model) -> palette ->
 * LBS/DQS (sks_skin_model) -> sks_write_positions (atomic). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "cli.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: skinsolve pose FILE [--clip NAME] [--time SECONDS] [--loop] [--dqs]\n"
          "                           [--bind] [--clips ANIM_FILE...] -o OUT.obj|OUT.f32\n"
          "\n"
          "Skins every mesh part of FILE and writes the positions. Without --clip the\n"
          "pose is the rest pose stored in the file's nodes; --bind uses instead the\n"
          "bind pose implied by the skins' inverse bind matrices (skinned vertices come\n"
          "back as stored). Positions are in the space of the file's scene root.\n"
          "Morph targets (blend shapes) are applied before skinning: with their weights\n"
          "in the clip at that time where it animates them (glTF \"weights\" channels,\n"
          "FBX blend-shape animation), else the file's default weights (not with --bind).\n"
          "\n"
          "options:\n"
          "  --clip NAME      clip to sample (name as `skinsolve info` lists it, or its\n"
          "                   index when no clip has that name, else the one clip holding\n"
          "                   it as a word: 'Walk' finds 'root|Walk_root')\n"
          "  --time SECONDS   time in the clip (default 0); clamped to [0, duration]\n"
          "  --loop           wrap the time around the clip's duration instead of clamping\n"
          "                   (the printed line says when a time was clamped or wrapped)\n"
          "  --clips ANIM_FILE...  take the clips from these animation files instead\n"
          "                   (every argument up to the next option; repeatable), applied\n"
          "                   to FILE's skeleton by joint name; needs --clip; the joint-match\n"
          "                   report goes to stderr\n"
          "  --dqs            dual quaternion skinning\n"
          "  --lbs            linear blend skinning (the default)\n"
          "  --bind           pose from the inverse bind matrices (not with --clip)\n"
          "  -o, --output OUT where to write; the extension picks the format:\n"
          "                   .obj  Wavefront: one 'o' group per part, v and f lines\n"
          "                   .f32  raw little-endian float32 x,y,z per vertex, all parts\n"
          "                         concatenated in file order (size = 12 x vertices)\n"
          "  -h, --help       this text\n"
          SKS_CLI_LOAD_OPTIONS_HELP
          "\n"
          "The output is written to a temporary file and renamed into place; the input\n"
          "file is never overwritten.\n"
          "\n"
          "examples:\n"
          "  skinsolve pose Fox.glb --clip Walk --time 0.5 -o walk.obj\n"
          "  skinsolve pose Fox.glb --clip Run --time 3.7 --loop --dqs -o run.f32\n"
          "  skinsolve pose Testwuson.X --bind -o bind.obj\n"
          "\n"
          "exit codes: 0 ok, 1 bad input (unreadable file, unknown clip, unusable rig),\n"
          "            2 usage error (also: OUT is the input), 3 OUT could not be written\n");
}

static int known_extension(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(path, '.');
  if (!dot || (slash && dot < slash)) return 0;
  return strcasecmp(dot, ".obj") == 0 || strcasecmp(dot, ".f32") == 0;
}

static int list_clips_error(const char *file, const sks_model *m, const char *name) {
  size_t matches = 0;
  sks_clip_find_loose(m->clips, m->clip_count, name, &matches);
  fprintf(stderr, "skinsolve: %s: %s '%s'; ", file, matches > 1 ? "several clips hold the name" : "no clip named",
          name);
  if (m->clip_count == 0) {
    fprintf(stderr, "the file has no clips (omit --clip for the rest pose)\n");
    return SKS_EXIT_INPUT;
  }
  fprintf(stderr, "available clips:");
  for (size_t i = 0; i < m->clip_count; ++i)
    fprintf(stderr, "%s '%s'", i ? "," : "", m->clips[i].name ? m->clips[i].name : "");
  fprintf(stderr, "\n");
  return SKS_EXIT_INPUT;
}

/* The exact name, else an index, else the one clip holding the name as a
 * word (so "1" stays clip 1, never a clip named "walk_1"). */
static int find_clip(const sks_model *m, const char *name) {
  int32_t c = sks_clip_find(m->clips, m->clip_count, name);
  if (c >= 0) return c;
  char *end = NULL;
  unsigned long idx = strtoul(name, &end, 10);
  if (*name >= '0' && *name <= '9' && end && !*end && idx < m->clip_count) return (int)idx;
  return sks_clip_find_loose(m->clips, m->clip_count, name, NULL);
}

/* Bind pose locals from every skin's inverse binds (a joint in several skins
 * takes the first skin's; joints in no skin keep their rest local). */
static int bind_pose(const sks_model *m, sks_transform *locals, sks_mat4 *scratch) {
  if (m->skin_count == 0) {
    memcpy(locals, m->skeleton.rest, m->skeleton.joint_count * sizeof *locals);
    return 1;
  }
  sks_bind_pose_job job = {&m->skeleton, m->skins, scratch, locals, m->skin_count};
  return sks_bind_pose_job_run(&job);
}

/* Morph targets before skinning: each part's positions become base + sum of
 * weight x delta, the weights sampled from the clip's morph track on the
 * part's node (else the file's default weights). Returns 0, or -1 out of
 * memory. */
static int apply_morphs(sks_model *m, const sks_clip *clip, float time, int loop) {
  size_t most = 0;
  for (size_t p = 0; p < m->part_count; ++p)
    if (m->parts[p].morph_target_count > most) most = m->parts[p].morph_target_count;
  if (!most) return 0;
  float *defaults = malloc(most * sizeof *defaults), *weights = malloc(most * sizeof *weights);
  int rc = defaults && weights ? 0 : -1;
  for (size_t p = 0; rc == 0 && p < m->part_count; ++p) {
    sks_mesh_part *part = &m->parts[p];
    size_t n = part->morph_target_count;
    if (!n || !part->vertex_count) continue;
    for (size_t t = 0; t < n; ++t) defaults[t] = part->morph_targets[t].default_weight;
    sks_morph_sampling_job sj = {clip, part->node, defaults, n, time, loop, weights, 0};
    if (!sks_morph_sampling_job_run(&sj)) { rc = -1; break; }
    int any = 0;
    for (size_t t = 0; t < n; ++t) any |= weights[t] != 0.0f;
    if (!any) continue;
    float *morphed = malloc(3 * part->vertex_count * sizeof *morphed);
    if (!morphed) { rc = -1; break; }
    sks_morph_job mj = {part, weights, morphed, NULL};
    if (!sks_morph_job_run(&mj)) { free(morphed); rc = -1; break; }
    free(part->positions);
    part->positions = morphed;
  }
  free(defaults);
  free(weights);
  return rc;
}

/* Kinds that make skinning unsafe or meaningless: refuse rather than write garbage. */
static int blocking(sks_finding_kind k, int bind) {
  return k == SKS_FINDING_JOINT_RANGE || k == SKS_FINDING_HIERARCHY_CYCLE ||
         k == SKS_FINDING_HIERARCHY_ORDER || k == SKS_FINDING_INDEX_RANGE ||
         k == SKS_FINDING_TOO_MANY_INFLUENCES || (bind && k == SKS_FINDING_BIND_SINGULAR) ||
         k == SKS_FINDING_NONFINITE_TRANSFORM;
}

static int pose_main(int argc, char **argv, const char **clip_files, size_t *nclip_files) {
  sks_load_options load_opt = {0};
  const char *file = NULL, *out = NULL, *clip_name = NULL, *v = NULL;
  float time = 0.0f;
  int have_time = 0, loop = 0, dqs = 0, bind = 0;
  for (int i = 1; i < argc; ++i) {
    int r;
    if (sks_cli_is_help(argv[i])) { usage(stdout); return SKS_EXIT_OK; }
    { int lr = sks_cli_load_option(argc, argv, &i, &load_opt); if (lr < 0) return SKS_EXIT_USAGE; if (lr) continue; }
    if (strcmp(argv[i], "--loop") == 0) { loop = 1; continue; }
    if (strcmp(argv[i], "--dqs") == 0) { dqs = 1; continue; }
    if (strcmp(argv[i], "--lbs") == 0) { dqs = 0; continue; }
    if (strcmp(argv[i], "--bind") == 0) { bind = 1; continue; }
    if ((r = sks_cli_opt_clips(argc, argv, &i, clip_files, nclip_files)) != 0) {
      if (r < 0) return SKS_EXIT_USAGE;
      continue;
    }
    if ((r = sks_cli_opt(argc, argv, &i, "--clip", &clip_name)) != 0) {
      if (r < 0) return SKS_EXIT_USAGE;
      continue;
    }
    if ((r = sks_cli_opt(argc, argv, &i, "--time", &v)) != 0) {
      if (r < 0 || sks_cli_parse_float("--time", v, &time)) return SKS_EXIT_USAGE;
      have_time = 1;
      continue;
    }
    if ((r = sks_cli_opt(argc, argv, &i, "--output", &out)) != 0 ||
        (r = sks_cli_opt(argc, argv, &i, "-o", &out)) != 0) {
      if (r < 0) return SKS_EXIT_USAGE;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1]) {
      usage(stderr);
      return sks_cli_fail(SKS_EXIT_USAGE, "pose: unknown option '%s'", argv[i]);
    }
    if (file) return sks_cli_fail(SKS_EXIT_USAGE, "pose: one FILE only ('%s' is extra)", argv[i]);
    file = argv[i];
  }
  if (!file) { usage(stderr); return sks_cli_fail(SKS_EXIT_USAGE, "pose: no FILE given"); }
  if (!out) return sks_cli_fail(SKS_EXIT_USAGE, "pose: no output given (-o OUT.obj or -o OUT.f32)");
  if (!known_extension(out))
    return sks_cli_fail(SKS_EXIT_USAGE, "%s: unknown output format — use .obj or .f32", out);
  if (bind && clip_name) return sks_cli_fail(SKS_EXIT_USAGE, "pose: --bind and --clip exclude each other");
  if ((have_time || loop) && !clip_name)
    return sks_cli_fail(SKS_EXIT_USAGE, "pose: --time/--loop need --clip (without it the pose is the rest pose)");
  clip_files[*nclip_files] = file; /* every input, for the output check */
  int rc = sks_cli_check_output(out, clip_files, *nclip_files + 1);
  if (rc) return rc;
  if (*nclip_files && !clip_name)
    return sks_cli_fail(SKS_EXIT_USAGE, "pose: --clips needs --clip NAME (which of their clips to pose)");

  sks_model m;
  const char *outs[1] = {out};
  sks_cli_output_guard guard;
  sks_cli_guard_outputs(&guard, &load_opt, outs, 1);
  rc = sks_cli_load_with(file, &load_opt, &m);
  if (rc) { free(sks_cli_guard_message(&guard)); return rc; }
  if ((rc = sks_cli_load_clips(&m, clip_files, *nclip_files, 0, &load_opt)) != 0 ||
      (rc = sks_cli_guard_check(&guard)) != 0) {
    free(sks_cli_guard_message(&guard));
    sks_model_free(&m);
    return rc;
  }
  if (m.part_count == 0) {
    sks_model_free(&m);
    return sks_cli_fail(SKS_EXIT_INPUT, "%s: no mesh (a skeleton-only file): nothing to pose — "
                        "use it with --clips on a rig that has one", file);
  }
  int clip = -1;
  if (clip_name && (clip = find_clip(&m, clip_name)) < 0) {
    rc = list_clips_error(file, &m, clip_name);
    sks_model_free(&m);
    return rc;
  }

  sks_error err;
  memset(&err, 0, sizeof err);
  sks_findings f;
  if (sks_check(&m, NULL, &f, &err) != SKS_OK) {
    sks_model_free(&m);
    return sks_cli_fail(SKS_EXIT_INPUT, "%s", err.message);
  }
  for (int k = 0; k < SKS_FINDING_KIND_COUNT; ++k) {
    if (!f.total_by_kind[k] || !blocking((sks_finding_kind)k, bind)) continue;
    const char *msg = sks_finding_kind_name((sks_finding_kind)k);
    for (size_t i = 0; i < f.count; ++i)
      if ((int)f.items[i].kind == k) { msg = f.items[i].message; break; }
    sks_cli_fail(SKS_EXIT_INPUT, "%s (%zu such problems; cannot pose, see skinsolve check)", msg,
                 f.total_by_kind[k]);
    sks_findings_free(&f);
    sks_model_free(&m);
    return SKS_EXIT_INPUT;
  }
  if (f.error_count)
    fprintf(stderr, "skinsolve: note: %s has %zu skin-data errors (e.g. %s); posing as stored — "
            "see skinsolve check / repair\n", file, f.error_count, f.count ? f.items[0].message : "");
  sks_findings_free(&f);

  size_t n = m.skeleton.joint_count;
  size_t verts = 0;
  for (size_t i = 0; i < m.part_count; ++i) verts += m.parts[i].vertex_count;
  sks_transform *locals = malloc((n ? n : 1) * sizeof *locals);
  sks_mat4 *models = malloc((n ? n : 1) * sizeof *models);
  float *positions = malloc((verts ? verts : 1) * 3 * sizeof *positions);
  rc = SKS_EXIT_OK;
  if (!locals || !models || !positions) {
    rc = sks_cli_fail(SKS_EXIT_INPUT, "%s: out of memory", file);
    goto done;
  }
  if (clip >= 0) {
    sks_sampling_job job = {&m.clips[clip], m.skeleton.rest, n, time, loop, 0, locals};
    if (!sks_sampling_job_run(&job)) {
      rc = sks_cli_fail(SKS_EXIT_INPUT, "%s: clip '%s' cannot be sampled (a track names a joint out of range?)",
                        file, m.clips[clip].name ? m.clips[clip].name : "");
      goto done;
    }
  } else if (bind) {
    if (!bind_pose(&m, locals, models)) {
      rc = sks_cli_fail(SKS_EXIT_INPUT, "%s: cannot compute the bind pose from the inverse bind matrices", file);
      goto done;
    }
  } else if (n) {
    memcpy(locals, m.skeleton.rest, n * sizeof *locals);
  }
  if (!bind && apply_morphs(&m, clip >= 0 ? &m.clips[clip] : NULL, time, loop) != 0) {
    rc = sks_cli_fail(SKS_EXIT_INPUT, "%s: out of memory applying the morph targets", file);
    goto done;
  }
  sks_local_to_model_job fk = {m.skeleton.parents, locals, n, NULL, models};
  if (!sks_local_to_model_job_run(&fk)) {
    rc = sks_cli_fail(SKS_EXIT_INPUT, "%s: the skeleton is not in parent-before-child order", file);
    goto done;
  }
  sks_result r = sks_skin_model(&m, models, dqs ? SKS_SKIN_DQS : SKS_SKIN_LBS, positions, NULL, &err);
  if (r != SKS_OK) {
    rc = sks_cli_fail(SKS_EXIT_INPUT, "%s", err.message);
    goto done;
  }
  for (size_t i = 0; i < 3 * verts; ++i) /* never write NaN with exit 0 */
    if (!isfinite(positions[i])) {
      rc = sks_cli_fail(SKS_EXIT_INPUT, "%s: the posed position of vertex %zu is not finite (NaN or infinite) — "
                        "see skinsolve check", file, i / 3);
      goto done;
    }
  r = sks_write_positions(out, &m, positions, &err);
  if (r != SKS_OK) {
    rc = sks_cli_fail(sks_cli_exit_for_write(r), "%s", err.message);
    goto done;
  }
  if (clip >= 0) {
    /* say which time was posed when it is not the one asked for */
    float d = m.clips[clip].duration, used = time;
    char note[96] = "";
    if (loop && d > 0) {
      used = fmodf(time, d);
      if (used < 0) used += d;
      if (used >= d) used = 0; /* as the sampling job */
      if (used != time) snprintf(note, sizeof note, " (looped to %.4g s of %.4g s)", (double)used, (double)d);
    } else if (time > d || time < 0) {
      used = time < 0 ? 0.0f : d;
      snprintf(note, sizeof note, " (clamped to %.4g s: the clip lasts %.4g s; --loop wraps)", (double)used,
               (double)d);
    }
    printf("%s: %zu vertices, clip '%s' at %.4g s%s (%s)\n", out, verts,
           m.clips[clip].name ? m.clips[clip].name : "", (double)time, note, dqs ? "DQS" : "LBS");
  }
  else
    printf("%s: %zu vertices, %s pose (%s)\n", out, verts, bind ? "bind" : "rest", dqs ? "DQS" : "LBS");
done:
  free(locals);
  free(models);
  free(positions);
  sks_model_free(&m);
  return rc;
}

int sks_cmd_pose(int argc, char **argv) {
  const char **clip_files = calloc((size_t)argc + 2, sizeof *clip_files);
  size_t n = 0;
  if (!clip_files) return sks_cli_fail(SKS_EXIT_INPUT, "out of memory");
  int rc = pose_main(argc, argv, clip_files, &n);
  free(clip_files);
  return rc;
}
