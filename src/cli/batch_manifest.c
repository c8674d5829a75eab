/* skinsolve batch: the JSON Lines manifest. One bake per line:
 *   {"name": "fox_walk", "source": "Fox.glb", "target": "t.glb", "clips": ["Walk"],
 *    "clip_files": [], "mode": "free", "report": false, "fps": 4, "max_constraints": 5000}
 * name, source and target are required; relative paths are relative to the
 * manifest's folder (records and hashes keep them as written, so a run from
 * another working folder finds its earlier records current); unknown or repeated keys, bad types, duplicate names and
 * names that are not plain file names are errors naming the line. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "batch.h"
#include "common_sha256.h"

const char *batch_mode_name(sks_solve_mode m) {
  return m == SKS_SOLVE_ROTATION_ONLY ? "rotation-only" : m == SKS_SOLVE_BOTH ? "both" : "free";
}

static void job_free(batch_job *j) {
  free(j->name);
  free(j->source);
  free(j->target);
  free(j->source_given);
  free(j->target_given);
  for (size_t i = 0; i < j->clip_count; ++i) free(j->clips[i]);
  free(j->clips);
  for (size_t i = 0; i < j->clip_file_count; ++i) {
    free(j->clip_files[i]);
    if (j->clip_files_given) free(j->clip_files_given[i]);
  }
  free(j->clip_files);
  free(j->clip_files_given);
  memset(j, 0, sizeof *j);
}

void batch_manifest_free(batch_manifest *m) {
  if (!m) return;
  for (size_t i = 0; i < m->job_count; ++i) job_free(&m->jobs[i]);
  free(m->jobs);
  free(m->path);
  memset(m, 0, sizeof *m);
}

static char *resolve(const char *dir, const char *p) {
  if (p[0] == '/' || !dir[0]) return strdup(p);
  size_t n = strlen(dir) + strlen(p) + 2;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s/%s", dir, p);
  return s;
}

/* A name becomes file names: letters, digits, '_', '-', '.', not leading '.',
 * at most 128 characters. */
static int name_ok(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 128 || s[0] == '.') return 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-' || c == '.'))
      return 0;
  }
  return 1;
}

static sks_result string_list(const cJSON *v, const char *key, const char *dir, char ***out,
                              size_t *count, const char *path, size_t line, sks_error *err) {
  if (!cJSON_IsArray(v))
    return sks_error_set(err, SKS_ERR_PARSE, "%s:%zu: \"%s\" must be an array of strings", path,
                         line, key);
  size_t n = (size_t)cJSON_GetArraySize(v);
  *out = calloc(n ? n : 1, sizeof(char *));
  if (!*out) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  const cJSON *e;
  cJSON_ArrayForEach(e, v) {
    if (!cJSON_IsString(e) || !e->valuestring[0])
      return sks_error_set(err, SKS_ERR_PARSE, "%s:%zu: \"%s\" must hold non-empty strings", path,
                           line, key);
    char *s = dir ? resolve(dir, e->valuestring) : strdup(e->valuestring);
    if (!s) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    (*out)[(*count)++] = s;
  }
  return SKS_OK;
}

static const char *const known_keys[] = {"name", "source", "target", "clips", "clip_files",
                                         "mode", "report", "fps", "max_constraints",
                                         "max_residual_pct"};

static sks_result parse_line(const char *text, const char *dir, const char *path, size_t line,
                             batch_job *j, sks_error *err) {
  const char *end = NULL;
  cJSON *o = cJSON_ParseWithOpts(text, &end, 1);
  if (!o) {
    return sks_error_set(err, SKS_ERR_PARSE, "%s:%zu: not valid JSON (near byte %ld of the line)",
                         path, line, end ? (long)(end - text) + 1 : 0L);
  }
  sks_result r = SKS_OK;
  if (!cJSON_IsObject(o)) {
    r = sks_error_set(err, SKS_ERR_PARSE, "%s:%zu: each line must be a JSON object", path, line);
    goto done;
  }
  const cJSON *k;
  cJSON_ArrayForEach(k, o) {
    size_t ki = 0, nk = sizeof known_keys / sizeof known_keys[0];
    while (ki < nk && strcmp(k->string, known_keys[ki]) != 0) ++ki;
    if (ki == nk) {
      r = sks_error_set(err, SKS_ERR_PARSE,
                        "%s:%zu: unknown key \"%s\" (known: name, source, target, clips, "
                        "clip_files, mode, report, fps, max_constraints, max_residual_pct)", path, line, k->string);
      goto done;
    }
    for (const cJSON *p = o->child; p != k; p = p->next)
      if (strcmp(p->string, k->string) == 0) {
        r = sks_error_set(err, SKS_ERR_PARSE, "%s:%zu: key \"%s\" appears twice", path, line,
                          k->string);
        goto done;
      }
  }
  const char *req[3] = {"name", "source", "target"};
  for (int i = 0; i < 3; ++i) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, req[i]);
    if (!cJSON_IsString(v) || !v->valuestring[0]) {
      r = sks_error_set(err, SKS_ERR_PARSE, "%s:%zu: \"%s\" (a non-empty string) is required",
                        path, line, req[i]);
      goto done;
    }
  }
  const char *name = cJSON_GetObjectItemCaseSensitive(o, "name")->valuestring;
  if (!name_ok(name)) {
    r = sks_error_set(err, SKS_ERR_PARSE,
                      "%s:%zu: name \"%s\" must be 1-128 letters, digits, '_', '-' or '.' "
                      "(not starting with '.'): it names the output files", path, line, name);
    goto done;
  }
  j->line = line;
  j->name = strdup(name);
  j->source = resolve(dir, cJSON_GetObjectItemCaseSensitive(o, "source")->valuestring);
  j->target = resolve(dir, cJSON_GetObjectItemCaseSensitive(o, "target")->valuestring);
  j->source_given = strdup(cJSON_GetObjectItemCaseSensitive(o, "source")->valuestring);
  j->target_given = strdup(cJSON_GetObjectItemCaseSensitive(o, "target")->valuestring);
  if (!j->name || !j->source || !j->target || !j->source_given || !j->target_given) {
    r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    goto done;
  }
  const cJSON *v;
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "clips")) &&
      (r = string_list(v, "clips", NULL, &j->clips, &j->clip_count, path, line, err)) != SKS_OK)
    goto done;
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "clip_files"))) {
    size_t n2 = 0;
    if ((r = string_list(v, "clip_files", dir, &j->clip_files, &j->clip_file_count, path, line,
                         err)) != SKS_OK ||
        (r = string_list(v, "clip_files", NULL, &j->clip_files_given, &n2, path, line, err)) != SKS_OK)
      goto done;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "mode"))) {
    const char *s = cJSON_IsString(v) ? v->valuestring : "";
    if (strcmp(s, "free") == 0) j->mode = SKS_SOLVE_FREE;
    else if (strcmp(s, "rotation-only") == 0) j->mode = SKS_SOLVE_ROTATION_ONLY;
    else if (strcmp(s, "both") == 0) j->mode = SKS_SOLVE_BOTH;
    else {
      r = sks_error_set(err, SKS_ERR_PARSE,
                        "%s:%zu: \"mode\" must be \"free\", \"rotation-only\" or \"both\"", path,
                        line);
      goto done;
    }
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "report"))) {
    if (!cJSON_IsBool(v)) {
      r = sks_error_set(err, SKS_ERR_PARSE, "%s:%zu: \"report\" must be true or false", path, line);
      goto done;
    }
    j->report = cJSON_IsTrue(v);
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "fps"))) {
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || v->valuedouble > 10000) {
      r = sks_error_set(err, SKS_ERR_PARSE, "%s:%zu: \"fps\" must be a number in (0, 10000]",
                        path, line);
      goto done;
    }
    j->fps = v->valuedouble;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "max_constraints"))) {
    double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
    if (!(d >= 1) || d > 1e9 || floor(d) != d) {
      r = sks_error_set(err, SKS_ERR_PARSE,
                        "%s:%zu: \"max_constraints\" must be a positive integer", path, line);
      goto done;
    }
    j->max_constraints = (size_t)d;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(o, "max_residual_pct"))) {
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || v->valuedouble > 100) {
      r = sks_error_set(err, SKS_ERR_PARSE,
                        "%s:%zu: \"max_residual_pct\" must be a number in (0, 100]", path, line);
      goto done;
    }
    j->max_residual_pct = v->valuedouble;
  }
  /* The description hash: every field that changes the outputs. */
  {
    sks_sha256 s;
    uint8_t d[32];
    char num[64];
    sks_sha256_init(&s);
#define ADD(str) sks_sha256_update(&s, (str), strlen(str) + 1)
    ADD(j->name); ADD(j->source_given); ADD(j->target_given);
    snprintf(num, sizeof num, "clips %zu", j->clip_count); ADD(num);
    for (size_t i = 0; i < j->clip_count; ++i) ADD(j->clips[i]);
    snprintf(num, sizeof num, "clip_files %zu", j->clip_file_count); ADD(num);
    for (size_t i = 0; i < j->clip_file_count; ++i) ADD(j->clip_files_given[i]);
    ADD(batch_mode_name(j->mode));
    snprintf(num, sizeof num, "report %d fps %.17g max_constraints %zu", j->report, j->fps,
             j->max_constraints);
    ADD(num);
    if (j->max_residual_pct > 0) { /* only when given: earlier jobs keep their hashes */
      snprintf(num, sizeof num, "max_residual_pct %.17g", j->max_residual_pct);
      ADD(num);
    }
#undef ADD
    sks_sha256_final(&s, d);
    sks_sha256_hex(d, j->spec_sha256);
  }
done:
  cJSON_Delete(o);
  return r;
}

static int by_name(const void *a, const void *b) {
  const batch_job *x = *(const batch_job *const *)a, *y = *(const batch_job *const *)b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->line > y->line) - (x->line < y->line);
}

sks_result batch_manifest_read(const char *path, batch_manifest *out, sks_error *err) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) return sks_error_set(err, SKS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  out->path = strdup(path);
  const char *slash = strrchr(path, '/');
  char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup("");
  sks_result r = SKS_OK;
  char *buf = NULL;
  size_t cap = 0, line = 0, jcap = 0;
  ssize_t len;
  if (!dir || !out->path) {
    r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    goto done;
  }
  while ((len = getline(&buf, &cap, f)) >= 0) {
    ++line;
    if ((size_t)len != strlen(buf)) {
      r = sks_error_set(err, SKS_ERR_PARSE, "%s:%zu: NUL byte in the line", path, line);
      goto done;
    }
    const char *p = buf;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') ++p;
    if (!*p) continue; /* blank lines are allowed */
    if (out->job_count == jcap) {
      size_t nc = jcap ? 2 * jcap : 64;
      batch_job *nj = realloc(out->jobs, nc * sizeof *nj);
      if (!nj) { r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path); goto done; }
      memset(nj + jcap, 0, (nc - jcap) * sizeof *nj);
      out->jobs = nj;
      jcap = nc;
    }
    batch_job *j = &out->jobs[out->job_count++];
    if ((r = parse_line(p, dir, path, line, j, err)) != SKS_OK) goto done;
  }
  if (ferror(f)) { r = sks_error_set(err, SKS_ERR_IO, "%s: read failed", path); goto done; }
  if (out->job_count == 0) { r = sks_error_set(err, SKS_ERR_PARSE, "%s: no jobs in the manifest", path); goto done; }
  { /* unique names: sort (name, line) and compare neighbours */
    const batch_job **by = malloc(out->job_count * sizeof *by);
    if (!by) { r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path); goto done; }
    for (size_t i = 0; i < out->job_count; ++i) by[i] = &out->jobs[i];
    qsort(by, out->job_count, sizeof *by, by_name);
    for (size_t i = 1; i < out->job_count; ++i)
      if (strcmp(by[i - 1]->name, by[i]->name) == 0) {
        r = sks_error_set(err, SKS_ERR_PARSE, "%s:%zu: name \"%s\" is already used on line %zu",
                          path, by[i]->line, by[i]->name, by[i - 1]->line);
        break;
      }
    free(by);
  }
done:
  free(buf);
  free(dir);
  fclose(f);
  if (r != SKS_OK) batch_manifest_free(out);
  return r;
}
