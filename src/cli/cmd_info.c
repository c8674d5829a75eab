/* skinsolve info: what is in a rigged file — skeleton tree, skins, mesh
 * parts (vertices, influence histogram), clips, bind-pose diagonal D and a
 * summary of `check`'s findings. Text for people, --json for scripts. */
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "cli.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: skinsolve info FILE [--json] [--clips ANIM_FILE...]\n"
          "\n"
          "Prints what a rigged file holds: the skeleton as an indented tree (every\n"
          "node of the scene graph; '*' marks joints bound by a skin), the skins, every\n"
          "mesh part (vertices, triangles, skinned or rigid, histogram of non-zero\n"
          "influences per vertex), the clips (duration, tracks, distinct key times),\n"
          "D = the bind-pose bounding-box diagonal, and a summary of the findings of\n"
          "`skinsolve check`. A file without geometry (an animation-only FBX, a BVH, a\n"
          "skeleton-only Collada) says \"no mesh\" (JSON: skeleton_only, diagonal null);\n"
          "the meshes Assimp makes up to display such a skeleton are not listed.\n"
          "\n"
          "FILE: .gltf / .glb (read natively) or anything Assimp reads (.fbx, .dae, .x, ...).\n"
          "\n"
          "options:\n"
          "  --json       print one JSON object instead of text\n"
          "  --clips ANIM_FILE...  list the clips of these files (every argument up to\n"
          "               the next option; repeatable) instead of FILE's own, applied to\n"
          "               FILE's skeleton by joint name; the joint-match report goes to\n"
          "               stderr\n"
          "  -h, --help   this text\n"
          SKS_CLI_LOAD_OPTIONS_HELP
          "\n"
          "examples:\n"
          "  skinsolve info /usr/share/assimp/models/X/Testwuson.X\n"
          "  skinsolve info Fox.glb --json\n"
          "\n"
          "exit codes: 0 ok (findings do not change it; see `skinsolve check`),\n"
          "            1 the file cannot be read, 2 usage error\n");
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Number of distinct key times over all tracks of a clip. */
static size_t clip_keys(const sks_clip *clip) {
  size_t total = 0;
  for (size_t t = 0; t < clip->track_count; ++t) total += clip->tracks[t].key_count;
  if (total == 0) return 0;
  float *all = malloc(total * sizeof *all);
  if (!all) return 0;
  size_t n = 0;
  for (size_t t = 0; t < clip->track_count; ++t)
    for (size_t k = 0; k < clip->tracks[t].key_count; ++k) all[n++] = clip->tracks[t].times[k];
  qsort(all, n, sizeof *all, cmp_float);
  size_t distinct = 0;
  for (size_t i = 0; i < n; ++i)
    if (i == 0 || all[i] != all[i - 1]) ++distinct;
  free(all);
  return distinct;
}

/* hist[c] = vertices with c non-zero weights (c = 0..8). */
static void influence_histogram(const sks_mesh_part *p, size_t hist[SKS_MAX_INFLUENCES + 1]) {
  memset(hist, 0, (SKS_MAX_INFLUENCES + 1) * sizeof *hist);
  uint32_t k = p->influence_count;
  if (p->skin < 0 || !p->weights || k == 0 || k > SKS_MAX_INFLUENCES) return;
  for (size_t v = 0; v < p->vertex_count; ++v) {
    unsigned c = 0;
    for (uint32_t i = 0; i < k; ++i) c += p->weights[(size_t)k * v + i] != 0.0f;
    hist[c]++;
  }
}

/* skinned[j] = 1 when skeleton joint j is in any skin's joint list. */
static unsigned char *skinned_joints(const sks_model *m) {
  size_t n = m->skeleton.joint_count;
  unsigned char *s = calloc(n ? n : 1, 1);
  if (!s) return NULL;
  for (size_t i = 0; i < m->skin_count; ++i)
    for (size_t j = 0; j < m->skins[i].joint_count; ++j) {
      int32_t sj = m->skins[i].joints[j];
      if (sj >= 0 && (size_t)sj < n) s[sj] = 1;
    }
  return s;
}

static int joint_depth(const sks_skeleton *sk, size_t i) {
  int d = 0;
  for (int32_t p = sk->parents[i]; p >= 0 && (size_t)p < i && d < 1000; p = sk->parents[p]) ++d;
  return d;
}

static const char *name_or(const char *s, const char *fallback) { return s && *s ? s : fallback; }

static void print_text(const char *path, const sks_model *m, const sks_findings *f) {
  const sks_skeleton *sk = &m->skeleton;
  unsigned char *sj = skinned_joints(m);
  size_t bound = 0, roots = 0;
  for (size_t i = 0; i < sk->joint_count; ++i) {
    bound += sj && sj[i];
    roots += sk->parents[i] < 0;
  }
  printf("file      %s\n", path);
  printf("skeleton  %zu joints, %zu bound by skins (*), %zu root(s)\n", sk->joint_count, bound, roots);
  for (size_t i = 0; i < sk->joint_count; ++i) {
    int d = joint_depth(sk, i);
    printf("  %*s%s%s\n", 2 * d, "", (sj && sj[i]) ? "* " : "", name_or(sk->names[i], "?"));
  }
  free(sj);
  printf("skins     %zu\n", m->skin_count);
  for (size_t i = 0; i < m->skin_count; ++i)
    printf("  %zu '%s': %zu joints\n", i, name_or(m->skins[i].name, ""), m->skins[i].joint_count);
  size_t total = 0, skinned = 0;
  for (size_t i = 0; i < m->part_count; ++i) {
    total += m->parts[i].vertex_count;
    if (m->parts[i].skin >= 0) skinned += m->parts[i].vertex_count;
  }
  if (m->part_count == 0)
    printf("parts     0: no mesh (a skeleton-only file%s)\n",
           m->clip_count ? "; its clips can drive a rig with --clips" : "");
  else
    printf("parts     %zu (%zu vertices, %zu skinned)\n", m->part_count, total, skinned);
  for (size_t i = 0; i < m->part_count; ++i) {
    const sks_mesh_part *p = &m->parts[i];
    printf("  %zu '%s': %zu vertices, %zu triangles, ", i, name_or(p->name, ""), p->vertex_count,
           p->index_count / 3);
    if (p->skin < 0) {
      const char *node = (p->node >= 0 && (size_t)p->node < sk->joint_count) ? sk->names[p->node] : "?";
      printf("rigid, follows joint %d '%s'\n", (int)p->node, name_or(node, "?"));
      continue;
    }
    size_t hist[SKS_MAX_INFLUENCES + 1];
    influence_histogram(p, hist);
    printf("skinned (skin %d), %u influence slots; vertices by non-zero influences:", (int)p->skin,
           p->influence_count);
    for (int c = 0; c <= SKS_MAX_INFLUENCES; ++c)
      if (hist[c]) printf(" %d:%zu", c, hist[c]);
    printf("\n");
  }
  printf("clips     %zu\n", m->clip_count);
  for (size_t i = 0; i < m->clip_count; ++i) {
    const sks_clip *c = &m->clips[i];
    printf("  '%s': %.4g s, %zu tracks, %zu keys", name_or(c->name, ""), (double)c->duration,
           c->track_count, clip_keys(c));
    size_t mk = 0;
    for (size_t t = 0; t < c->morph_track_count; ++t) mk += c->morph_tracks[t].key_count;
    if (c->morph_track_count)
      printf(", %zu morph weight track%s (%zu keys)", c->morph_track_count, c->morph_track_count == 1 ? "" : "s", mk);
    printf("\n");
  }
  if (m->part_count == 0) printf("D         no mesh\n");
  else printf("D         %.6g (bind-pose bounding-box diagonal, as bake measures it)\n", sks_bake_diagonal(m));
  printf("findings  %zu errors, %zu warnings%s\n", f->error_count, f->warning_count,
         f->error_count + f->warning_count ? " (details: skinsolve check FILE)" : "");
  for (int k = 0; k < SKS_FINDING_KIND_COUNT; ++k)
    if (f->total_by_kind[k])
      printf("  %-20s %zu\n", sks_finding_kind_name((sks_finding_kind)k), f->total_by_kind[k]);
  for (size_t i = 0; i < f->count && i < 5; ++i)
    printf("  %s: %s\n", f->items[i].severity == SKS_SEVERITY_ERROR ? "error" : "warning",
           f->items[i].message);
  if (f->count > 5) printf("  ... (%zu more)\n", f->error_count + f->warning_count - 5);
  if (m->warning_count) /* the load's own, printed on stderr (sks_cli_load_with) */
    printf("load      %zu warning%s (on stderr)\n", m->warning_count, m->warning_count == 1 ? "" : "s");
}

static int info_main(int argc, char **argv, const char **clip_files, size_t *nclip_files,
                     const char **file_out, int *json_out);

static void print_json(const char *path, const sks_model *m, const sks_findings *f) {
  const sks_skeleton *sk = &m->skeleton;
  unsigned char *sj = skinned_joints(m);
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "file", path);
  cJSON *joints = cJSON_AddArrayToObject(root, "joints");
  for (size_t i = 0; i < sk->joint_count; ++i) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", name_or(sk->names[i], ""));
    cJSON_AddNumberToObject(j, "parent", sk->parents[i]);
    cJSON_AddNumberToObject(j, "depth", joint_depth(sk, i));
    cJSON_AddBoolToObject(j, "skinned", sj && sj[i]);
    cJSON_AddItemToArray(joints, j);
  }
  free(sj);
  cJSON *skins = cJSON_AddArrayToObject(root, "skins");
  for (size_t i = 0; i < m->skin_count; ++i) {
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "name", name_or(m->skins[i].name, ""));
    cJSON_AddNumberToObject(s, "joints", (double)m->skins[i].joint_count);
    cJSON_AddItemToArray(skins, s);
  }
  cJSON *parts = cJSON_AddArrayToObject(root, "parts");
  size_t total = 0;
  for (size_t i = 0; i < m->part_count; ++i) {
    const sks_mesh_part *p = &m->parts[i];
    total += p->vertex_count;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name_or(p->name, ""));
    cJSON_AddNumberToObject(o, "vertices", (double)p->vertex_count);
    cJSON_AddNumberToObject(o, "triangles", (double)(p->index_count / 3));
    cJSON_AddNumberToObject(o, "skin", p->skin);
    cJSON_AddNumberToObject(o, "node", p->node);
    cJSON_AddNumberToObject(o, "material", p->material);
    cJSON_AddNumberToObject(o, "influence_slots", p->influence_count);
    cJSON_AddNumberToObject(o, "uv_sets", p->uvs ? (p->uvs1 ? 2 : 1) : 0);
    cJSON_AddBoolToObject(o, "tangents", p->tangents != NULL);
    cJSON *mt = cJSON_AddArrayToObject(o, "morph_targets"); /* names ("" = unnamed), file order */
    for (size_t t = 0; p->morph_targets && t < p->morph_target_count; ++t)
      cJSON_AddItemToArray(mt, cJSON_CreateString(name_or(p->morph_targets[t].name, "")));
    size_t hist[SKS_MAX_INFLUENCES + 1];
    influence_histogram(p, hist);
    cJSON *h = cJSON_AddArrayToObject(o, "influence_histogram");
    for (int c = 0; c <= SKS_MAX_INFLUENCES; ++c) cJSON_AddItemToArray(h, cJSON_CreateNumber((double)hist[c]));
    cJSON_AddItemToArray(parts, o);
  }
  cJSON *clips = cJSON_AddArrayToObject(root, "clips");
  for (size_t i = 0; i < m->clip_count; ++i) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", name_or(m->clips[i].name, ""));
    cJSON_AddNumberToObject(c, "duration", m->clips[i].duration);
    cJSON_AddNumberToObject(c, "tracks", (double)m->clips[i].track_count);
    cJSON_AddNumberToObject(c, "keys", (double)clip_keys(&m->clips[i]));
    cJSON *mt = cJSON_AddArrayToObject(c, "morph_tracks");
    for (size_t t = 0; t < m->clips[i].morph_track_count; ++t) {
      const sks_morph_track *tr = &m->clips[i].morph_tracks[t];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddNumberToObject(o, "node", tr->node);
      cJSON_AddNumberToObject(o, "weights", (double)tr->weight_count);
      cJSON_AddNumberToObject(o, "keys", (double)tr->key_count);
      cJSON_AddStringToObject(o, "interpolation", tr->interpolation == SKS_INTERP_STEP ? "STEP"
                              : tr->interpolation == SKS_INTERP_CUBICSPLINE ? "CUBICSPLINE" : "LINEAR");
      cJSON_AddItemToArray(mt, o);
    }
    cJSON_AddItemToArray(clips, c);
  }
  cJSON_AddNumberToObject(root, "vertex_count", (double)sks_model_vertex_count(m));
  cJSON_AddNumberToObject(root, "total_vertex_count", (double)total);
  if (m->part_count == 0) cJSON_AddNullToObject(root, "diagonal"); /* no mesh: D undefined */
  else cJSON_AddNumberToObject(root, "diagonal", sks_bake_diagonal(m));
  cJSON_AddBoolToObject(root, "skeleton_only", m->part_count == 0);
  cJSON_AddItemToObject(root, "findings", sks_cli_findings_json(f, 20));
  sks_cli_add_load_warnings(root, m); /* the load's own (stderr too) */
  char *s = cJSON_Print(root);
  if (s) { puts(s); free(s); }
  cJSON_Delete(root);
}

int sks_cmd_info(int argc, char **argv) {
  const char *file = NULL;
  int json = 0;
  const char **clip_files = calloc((size_t)argc + 1, sizeof *clip_files);
  size_t nclip_files = 0;
  if (!clip_files) return sks_cli_fail(SKS_EXIT_INPUT, "out of memory");
  int rc = info_main(argc, argv, clip_files, &nclip_files, &file, &json);
  free(clip_files);
  return rc;
}

static int info_main(int argc, char **argv, const char **clip_files, size_t *nclip_files,
                     const char **file_out, int *json_out) {
  const char *file = NULL;
  int json = 0, r;
  sks_load_options load_opt = {0};
  for (int i = 1; i < argc; ++i) {
    if (sks_cli_is_help(argv[i])) { usage(stdout); return SKS_EXIT_OK; }
    { int lr = sks_cli_load_option(argc, argv, &i, &load_opt); if (lr < 0) return SKS_EXIT_USAGE; if (lr) continue; }
    if ((r = sks_cli_opt_clips(argc, argv, &i, clip_files, nclip_files)) != 0) {
      if (r < 0) return SKS_EXIT_USAGE;
      continue;
    }
    if (strcmp(argv[i], "--json") == 0) json = 1;
    else if (argv[i][0] == '-' && argv[i][1]) {
      usage(stderr);
      return sks_cli_fail(SKS_EXIT_USAGE, "info: unknown option '%s'", argv[i]);
    } else if (!file) file = argv[i];
    else return sks_cli_fail(SKS_EXIT_USAGE, "info: one FILE only ('%s' is extra)", argv[i]);
  }
  if (!file) {
    usage(stderr);
    return sks_cli_fail(SKS_EXIT_USAGE, "info: no FILE given");
  }
  *file_out = file;
  *json_out = json;
  sks_model m;
  int rc = sks_cli_load_with(file, &load_opt, &m);
  if (rc) return rc;
  if ((rc = sks_cli_load_clips(&m, clip_files, *nclip_files, 0, &load_opt)) != 0) {
    sks_model_free(&m);
    return rc;
  }
  sks_findings f;
  sks_error err;
  memset(&err, 0, sizeof err);
  if (sks_check(&m, NULL, &f, &err) != SKS_OK) {
    sks_model_free(&m);
    return sks_cli_fail(SKS_EXIT_INPUT, "%s", err.message);
  }
  if (json) print_json(file, &m, &f);
  else print_text(file, &m, &f);
  sks_findings_free(&f);
  sks_model_free(&m);
  return SKS_EXIT_OK;
}
