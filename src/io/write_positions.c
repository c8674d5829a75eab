/* Skinned positions out: Wavefront OBJ or raw float32 (the .obj/.f32
 * contract, README):
 *  - .f32: little-endian float32 x, y, z per vertex, every part (skinned and
 *    rigid) concatenated in part order, nothing else: size = 12 * vertices.
 *  - .obj: one "o <part name>" group per part with its "v" lines, then its
 *    triangles as "f" lines with 1-based indices into the whole file (each
 *    part's indices offset by the vertices written before it). Coordinates
 *    are printed with 9 significant digits, so they read back as the same
 *    float32 values.
 * Both are written through sks_write_file_atomic. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "skinsolve/io.h"

typedef struct sbuf {
  char *data;
  size_t len, cap;
  int oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void sb_printf(sbuf *b, const char *fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->cap - b->len;
    int n = vsnprintf(b->data ? b->data + b->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0) { b->oom = 1; return; }
    if ((size_t)n < room) { b->len += (size_t)n; return; }
    size_t cap = b->cap ? b->cap * 2 : 1 << 16;
    while (cap - b->len <= (size_t)n) cap *= 2;
    char *grown = realloc(b->data, cap);
    if (!grown) { b->oom = 1; return; }
    b->data = grown;
    b->cap = cap;
  }
}

static const char *extension(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(path, '.');
  if (!dot || (slash && dot < slash)) return "";
  return dot;
}

static size_t total_vertices(const sks_model *model) {
  size_t n = 0;
  for (size_t i = 0; i < model->part_count; ++i) n += model->parts[i].vertex_count;
  return n;
}

static sks_result write_f32(const char *path, const float *positions, size_t count, sks_error *err) {
  size_t bytes = count * 3 * sizeof(float);
  const uint16_t probe = 1;
  int little = *(const unsigned char *)&probe == 1;
  if (little) return sks_write_file_atomic(path, positions, bytes, err);
  unsigned char *swapped = malloc(bytes ? bytes : 1);
  if (!swapped) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  const unsigned char *src = (const unsigned char *)positions;
  for (size_t i = 0; i < bytes; i += 4) {
    swapped[i] = src[i + 3]; swapped[i + 1] = src[i + 2];
    swapped[i + 2] = src[i + 1]; swapped[i + 3] = src[i];
  }
  sks_result r = sks_write_file_atomic(path, swapped, bytes, err);
  free(swapped);
  return r;
}

/* OBJ object names end at whitespace; replace it so names survive. */
static void object_name(char *out, size_t cap, const sks_mesh_part *p, size_t index) {
  const char *name = p->name && *p->name ? p->name : NULL;
  if (!name) { snprintf(out, cap, "part_%zu", index); return; }
  size_t i = 0;
  for (; name[i] && i + 1 < cap; ++i) {
    unsigned char c = (unsigned char)name[i];
    out[i] = (isspace(c) || c < 32) ? '_' : (char)c;
  }
  out[i] = 0;
}

static sks_result write_obj(const char *path, const sks_model *model, const float *positions,
                            sks_error *err) {
  sbuf b = {0};
  const char *src = model->source_path ? model->source_path : "(model)";
  sb_printf(&b, "# skinsolve %s: %zu vertices, %zu parts, from %s\n", SKS_VERSION_STRING,
            total_vertices(model), model->part_count, src);
  size_t base = 0;
  for (size_t pi = 0; pi < model->part_count; ++pi) {
    const sks_mesh_part *p = &model->parts[pi];
    char name[256];
    object_name(name, sizeof name, p, pi);
    sb_printf(&b, "o %s\n", name);
    const float *x = positions + 3 * base;
    for (size_t v = 0; v < p->vertex_count; ++v)
      sb_printf(&b, "v %.9g %.9g %.9g\n", (double)x[3 * v], (double)x[3 * v + 1],
                (double)x[3 * v + 2]);
    for (size_t t = 0; p->indices && t + 3 <= p->index_count; t += 3) {
      const uint32_t *f = &p->indices[t];
      if (f[0] >= p->vertex_count || f[1] >= p->vertex_count || f[2] >= p->vertex_count) {
        free(b.data);
        return sks_error_set(err, SKS_ERR_INVALID,
                             "%s: part %zu '%s', triangle %zu: vertex index out of range "
                             "(%zu vertices) — cannot write %s",
                             src, pi, p->name ? p->name : "", t / 3, p->vertex_count, path);
      }
      sb_printf(&b, "f %zu %zu %zu\n", base + f[0] + 1, base + f[1] + 1, base + f[2] + 1);
    }
    base += p->vertex_count;
  }
  if (b.oom) {
    free(b.data);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  }
  sks_result r = sks_write_file_atomic(path, b.data, b.len, err);
  free(b.data);
  return r;
}

sks_result sks_write_positions(const char *path, const sks_model *model, const float *positions,
                               sks_error *err) {
  if (!path || !model) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_write_positions: NULL argument");
  size_t n = total_vertices(model);
  if (!positions && n)
    return sks_error_set(err, SKS_ERR_ARGUMENT, "%s: no positions given", path);
  const char *ext = extension(path);
  if (strcasecmp(ext, ".f32") == 0) return write_f32(path, positions, n, err);
  if (strcasecmp(ext, ".obj") == 0) return write_obj(path, model, positions, err);
  return sks_error_set(err, SKS_ERR_ARGUMENT,
                       "%s: unknown output format '%s' — use .obj (Wavefront) or .f32 (raw float32 x,y,z)",
                       path, *ext ? ext : "(no extension)");
}
