/* Helpers shared by the subcommands: option values, numbers, loading with a
 * one-line error, and the never-overwrite-an-input rule. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include <stdint.h>
#include <strings.h>
#include "cli.h"

int sks_cli_opt(int argc, char **argv, int *i, const char *name, const char **value) {
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '=') { *value = a + n + 1; return 1; }
  if (a[n] != 0) return 0;
  if (*i + 1 >= argc) {
    sks_cli_fail(SKS_EXIT_USAGE, "%s needs a value (see --help)", name);
    return -1;
  }
  *value = argv[++*i];
  return 1;
}

int sks_cli_parse_float(const char *option, const char *text, float *out) {
  char *end = NULL;
  errno = 0;
  double d = strtod(text, &end);
  if (!*text || *end || errno || !isfinite(d))
    return sks_cli_fail(SKS_EXIT_USAGE, "%s: '%s' is not a number", option, text);
  *out = (float)d;
  return 0;
}

int sks_cli_parse_uint(const char *option, const char *text, unsigned long max, unsigned long *out) {
  char *end = NULL;
  errno = 0;
  unsigned long v = strtoul(text, &end, 10);
  if (!*text || *end || errno || text[0] == '-' || v > max)
    return sks_cli_fail(SKS_EXIT_USAGE, "%s: '%s' is not a whole number in 0..%lu", option, text, max);
  *out = v;
  return 0;
}

int sks_cli_load_option(int argc, char **argv, int *i, sks_load_options *o) {
  const char *v = NULL;
  int r;
  if ((r = sks_cli_opt(argc, argv, i, "--max-memory", &v)) != 0) {
    if (r < 0) return -1;
    char *end = NULL;
    errno = 0;
    double d = strtod(v, &end);
    double mul = 1;
    if (end && (*end == 'k' || *end == 'K')) { mul = 1024.0; ++end; }
    else if (end && (*end == 'm' || *end == 'M')) { mul = 1024.0 * 1024.0; ++end; }
    else if (end && (*end == 'g' || *end == 'G')) { mul = 1024.0 * 1024.0 * 1024.0; ++end; }
    if (end && (*end == 'b' || *end == 'B')) ++end;
    d *= mul;
    if (!*v || !end || *end || errno || !(d >= 1024.0 * 1024.0) || d > 1e15) {
      sks_cli_fail(SKS_EXIT_USAGE, "--max-memory: '%s' is not a size of at least 1M (bytes, or 512M, 2G)", v);
      return -1;
    }
    o->max_memory_bytes = (uint64_t)d;
    return 1;
  }
  if ((r = sks_cli_opt(argc, argv, i, "--timeout", &v)) != 0) {
    if (r < 0) return -1;
    char *end = NULL;
    errno = 0;
    double d = strtod(v, &end);
    if (!*v || *end || errno || !(d > 0) || d > 1e6) {
      sks_cli_fail(SKS_EXIT_USAGE, "--timeout: '%s' is not a number of seconds in (0, 1e6]", v);
      return -1;
    }
    o->timeout_seconds = d;
    return 1;
  }
  return 0;
}

int sks_cli_load(const char *path, sks_model *out) { return sks_cli_load_with(path, NULL, out); }

int sks_cli_load_with(const char *path, const sks_load_options *options, sks_model *out) {
  struct stat st;
  memset(out, 0, sizeof *out);
  if (stat(path, &st) != 0)
    return sks_cli_fail(SKS_EXIT_INPUT, "%s: cannot open: %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode))
    return sks_cli_fail(SKS_EXIT_INPUT, "%s: is a folder, not a model file", path);
  sks_error err;
  memset(&err, 0, sizeof err);
  sks_result r = sks_load(path, options, out, &err);
  if (r != SKS_OK) {
    sks_model_free(out);
    /* an output the failing load had already read: the usage error wins */
    sks_cli_output_guard *g = sks_cli_guard_of(options);
    if (g && g->hit_output) return sks_cli_guard_check(g);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (err.message[0] && strstr(err.message, base))
      return sks_cli_fail(SKS_EXIT_INPUT, "%s", err.message);
    return sks_cli_fail(SKS_EXIT_INPUT, "%s: %s", path,
                        err.message[0] ? err.message : sks_result_string(r));
  }
  for (size_t i = 0; i < out->warning_count; ++i) fprintf(stderr, "warning: %s\n", out->warnings[i]);
  return 0;
}

int sks_cli_check_output(const char *output, const char *const *inputs, size_t input_count) {
  return sks_cli_check_outputs(&output, 1, inputs, input_count);
}

int sks_cli_check_outputs(const char *const *outputs, size_t output_count,
                          const char *const *inputs, size_t input_count) {
  for (size_t k = 0; k < output_count; ++k) {
    const char *output = outputs[k];
    if (!output) continue;
    if (!*output) return sks_cli_fail(SKS_EXIT_USAGE, "an output file name is empty");
    for (size_t l = 0; l < k; ++l)
      if (outputs[l] && strcmp(outputs[l], output) == 0)
        return sks_cli_fail(SKS_EXIT_USAGE, "refusing to write %s twice (two outputs name it)", output);
    struct stat so, sl;
    if (lstat(output, &sl) != 0) continue; /* does not exist yet: cannot be an input */
    /* stat follows a symlink: a link to an input is caught as the input */
    if (stat(output, &so) != 0) {
      if (S_ISLNK(sl.st_mode))
        return sks_cli_fail(SKS_EXIT_USAGE, "refusing to write %s: it is a dangling symbolic link", output);
      continue;
    }
    if (S_ISDIR(so.st_mode))
      return sks_cli_fail(SKS_EXIT_USAGE, "%s: is a folder; give a file name to write", output);
    for (size_t i = 0; i < input_count; ++i) {
      struct stat si;
      if (inputs[i] && stat(inputs[i], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
        return sks_cli_fail(SKS_EXIT_USAGE,
                            "refusing to write %s: it is the input file %s (choose another output)",
                            output, inputs[i]);
      /* the files a load reads besides the input itself (a glTF's buffers and
       * images, an .obj's .mtl...) are known only once it ran: the guard
       * (sks_cli_guard_outputs) compares them after the loads */
    }
    for (size_t l = 0; l < k; ++l) {
      struct stat sp;
      if (outputs[l] && stat(outputs[l], &sp) == 0 && sp.st_dev == so.st_dev && sp.st_ino == so.st_ino)
        return sks_cli_fail(SKS_EXIT_USAGE, "refusing to write %s twice (%s is the same file)",
                            output, outputs[l]);
    }
    if (!S_ISREG(so.st_mode))
      return sks_cli_fail(SKS_EXIT_USAGE,
                          "refusing to write %s: it is not a regular file (a device, FIFO or socket)",
                          output);
  }
  return 0;
}

static void guard_file_read(void *user, const char *path) {
  sks_cli_output_guard *g = user;
  if (g->also) g->also(g->also_user, path);
  struct stat sf, so;
  if (g->hit_output || stat(path, &sf) != 0) return;
  for (size_t k = 0; k < g->output_count; ++k) {
    const char *out = g->outputs[k];
    /* stat follows a symlink: a link to the file is caught as the file */
    if (!out || stat(out, &so) != 0 || so.st_dev != sf.st_dev || so.st_ino != sf.st_ino) continue;
    g->hit_output = strdup(out);
    g->hit_file = strdup(path);
    if (!g->hit_output) g->hit_output = (char *)"an output"; /* still refused */
    return;
  }
}

void sks_cli_guard_outputs(sks_cli_output_guard *g, sks_load_options *o, const char *const *outputs,
                           size_t output_count) {
  memset(g, 0, sizeof *g);
  g->outputs = outputs;
  g->output_count = output_count;
  o->on_file_read = guard_file_read;
  o->on_file_read_user = g;
}

sks_cli_output_guard *sks_cli_guard_of(const sks_load_options *o) {
  return o && o->on_file_read == guard_file_read ? o->on_file_read_user : NULL;
}

int sks_cli_guard_load_failed(sks_cli_output_guard *g, const char *message) {
  if (g->hit_output) return sks_cli_guard_check(g);
  return sks_cli_fail(SKS_EXIT_INPUT, "%s", message);
}

char *sks_cli_guard_message(sks_cli_output_guard *g) {
  if (!g->hit_output) return NULL;
  const char *f = g->hit_file ? g->hit_file : "one of its files";
  size_t n = strlen(g->hit_output) + strlen(f) + 128;
  char *msg = malloc(n);
  if (msg)
    snprintf(msg, n, "refusing to write %s: an input's import reads or names it (as %s; choose another output)",
             g->hit_output, f);
  if (g->hit_output && strcmp(g->hit_output, "an output") != 0) free(g->hit_output);
  free(g->hit_file);
  g->hit_output = g->hit_file = NULL;
  return msg;
}

int sks_cli_guard_check(sks_cli_output_guard *g) {
  if (!g->hit_output) return 0;
  char *msg = sks_cli_guard_message(g);
  int rc = sks_cli_fail(SKS_EXIT_USAGE, "%s", msg ? msg : "refusing to write an output an input's import reads or names");
  free(msg);
  return rc;
}

int sks_cli_exit_for_write(sks_result r) {
  if (r == SKS_ERR_IO) return SKS_EXIT_OUTPUT;
  if (r == SKS_ERR_ARGUMENT) return SKS_EXIT_USAGE;
  return SKS_EXIT_INPUT;
}

/* Findings as JSON (shared shape with `check --json`). */
void sks_cli_add_load_warnings(cJSON *obj, const sks_model *m) {
  cJSON *lw = cJSON_AddArrayToObject(obj, "load_warnings");
  for (size_t w = 0; lw && w < m->warning_count; ++w) cJSON_AddItemToArray(lw, cJSON_CreateString(m->warnings[w]));
}

cJSON *sks_cli_findings_json(const sks_findings *f, size_t max_items) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "errors", (double)f->error_count);
  cJSON_AddNumberToObject(o, "warnings", (double)f->warning_count);
  cJSON *by = cJSON_AddObjectToObject(o, "by_kind");
  for (int k = 0; k < SKS_FINDING_KIND_COUNT; ++k)
    if (f->total_by_kind[k])
      cJSON_AddNumberToObject(by, sks_finding_kind_name((sks_finding_kind)k), (double)f->total_by_kind[k]);
  cJSON *items = cJSON_AddArrayToObject(o, "items");
  for (size_t i = 0; i < f->count && i < max_items; ++i) {
    const sks_finding *x = &f->items[i];
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "kind", sks_finding_kind_name(x->kind));
    cJSON_AddStringToObject(it, "severity", x->severity == SKS_SEVERITY_ERROR ? "error" : "warning");
    cJSON_AddNumberToObject(it, "part", x->part);
    cJSON_AddNumberToObject(it, "vertex", (double)x->vertex);
    cJSON_AddNumberToObject(it, "joint", x->joint);
    cJSON_AddStringToObject(it, "message", x->message);
    cJSON_AddItemToArray(items, it);
  }
  cJSON_AddBoolToObject(o, "truncated", f->count < f->error_count + f->warning_count || f->count > max_items);
  return o;
}

