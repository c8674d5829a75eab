/* Native glTF 2.0 reader: .gltf (external files or data: URIs) and .glb.
 *
 * JSON through cJSON; every byte of binary data is read through a bounds
 * checked accessor view (gl_acc), so a malformed or hostile file gives an
 * error naming the file and the place, never an out-of-bounds read.
 *
 * What becomes what (see rig.h for the model contract):
 *  - skeleton: every node reachable from the scenes (all nodes when the file
 *    has no scene), depth-first pre-order from the scene roots, children in
 *    file order, so parents come before children. Trees holding skin joints
 *    outside the scenes are appended so skins stay complete.
 *  - parts: for each node (file order) with a mesh and in the skeleton, each
 *    primitive with POSITION, in order.
 *  - clips: one per animation; translation/rotation/scale channels whose node
 *    is in the skeleton become tracks, "weights" channels on such a node's
 *    mesh morph tracks (extension paths are ignored).
 */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "skinsolve/io.h"
#include "io/gltf_source.h"
#include "io/gltf_read.h"
#include <meshoptimizer.h>
#include "math/sks_math.h"
#include "resource.h"

enum {
  CT_BYTE = 5120, CT_UBYTE = 5121, CT_SHORT = 5122, CT_USHORT = 5123, CT_UINT = 5125,
  CT_FLOAT = 5126
};
/* Masks of allowed component types. */
#define M_BYTE (1u << 0)
#define M_UBYTE (1u << 1)
#define M_SHORT (1u << 2)
#define M_USHORT (1u << 3)
#define M_UINT (1u << 4)
#define M_FLOAT (1u << 5)

#define GLB_MAGIC 0x46546C67u /* "glTF" */
#define GLB_JSON 0x4E4F534Au  /* "JSON" */
#define GLB_BIN 0x004E4942u   /* "BIN\0" */

/* Largest integer a JSON number may carry here (exact in a double). */
#define GL_MAX_INT 9007199254740992.0
/* Accessors without a bufferView are zeros (plus sparse values); their size is
 * not backed by file bytes, so cap it: all of a file's together (a 1.6 KB file
 * with 4M buffer-less vertices x 8 weight sets took 11-29 s and 1 GB). */
#define GL_MAX_VIRTUAL_BYTES ((size_t)16 << 20)
/* Up to this many JOINTS_n/WEIGHTS_n sets are read (then reduced to 8 influences). */
#define GL_MAX_SETS 8

typedef struct gl_buffer {
  int loaded;
  const uint8_t *data;
  size_t size;      /* the buffer's byteLength (data holds at least that) */
  uint8_t *owned;   /* decoded data URI or external file */
} gl_buffer;

/* A JSON array as a pointer vector (cJSON arrays are linked lists: indexing
 * them in a loop would be quadratic). */
typedef struct gl_vec {
  const cJSON **items;
  size_t count;
} gl_vec;

typedef struct gl_ctx {
  const char *name;     /* file name for messages */
  const char *base_dir; /* resolves external URIs; NULL = none allowed */
  const char *resource_root; /* URIs must stay inside it (NULL: base_dir) */
  sks_error *err;
  sks_result status;    /* last error set by gl_fail */
  size_t budget;        /* bytes of model data the reader may still allocate */
  size_t virtual_used;  /* bytes of all buffer-less accessors read so far (GL_MAX_VIRTUAL_BYTES) */
  uint64_t resource_cap;  /* max_resource_bytes: external files' total */
  uint64_t resource_used; /* bytes of external buffer and image files read so far */
  int resource_over;      /* the total cap refused a file: the load fails */
  cJSON *root;
  int needs_draco;      /* extensionsRequired names KHR_draco_mesh_compression */
  uint8_t **meshopt;    /* n_views: a bufferView's EXT_meshopt_compression data, decoded (NULL: not yet) */
  size_t meshopt_views; /* bufferViews decoded */
  const uint8_t *bin;   /* GLB BIN chunk */
  size_t bin_size;
  int has_bin;
  gl_vec accessors, views, buffers_json, nodes, meshes, skins, materials, animations, scenes;
  gl_vec samplers; /* of the animation being read */
  size_t n_accessors, n_views, n_buffers, n_nodes, n_meshes, n_skins, n_materials,
      n_animations, n_scenes;
  gl_buffer *buffers;
  int32_t *node_parent; /* node -> parent node, -1 = root */
  int32_t *node_joint;  /* node -> skeleton joint, -1 = not in the skeleton */
  int32_t *part_mesh, *part_prim; /* part -> mesh, primitive (for the kept source) */
  int32_t *clip_anim;             /* clip -> the animation it was read from */
  const char *json_text;  /* the JSON (inside the input data) */
  size_t json_len;
  /* sks_load_options.on_file_read: told of each external file before it is
   * opened (its confined real path) */
  void (*on_file_read)(void *user, const char *path);
  void *on_file_read_user;
} gl_ctx;

/* A resolved, bounds-checked accessor: element e, component k lives at
 * data + e * stride + (k / rows) * col_stride + (k % rows) * csize. */
typedef struct gl_acc {
  size_t index;
  size_t count;
  uint32_t comps, rows, cols;
  uint32_t ctype, csize, col_stride, elem_size;
  int normalized;
  const char *type_name;
  const uint8_t *data;  /* NULL: all zeros */
  size_t stride;
  /* sparse override: sp_count indices (into this accessor) and values */
  size_t sp_count;
  const uint8_t *sp_idx;
  uint32_t sp_idx_ctype, sp_idx_size;
  const uint8_t *sp_val;
} gl_acc;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static sks_result gl_fail(gl_ctx *c, sks_result code, const char *fmt, ...) {
  char msg[900];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  c->status = code;
  return sks_error_set(c->err, code, "%s: %s", c->name, msg);
}

/* Allocation of model data, charged against the budget (a small file must
 * not be able to ask for gigabytes by instancing one mesh many times). */
static void *gl_alloc(gl_ctx *c, size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) {
    gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "data size overflows (%zu x %zu bytes)", n, size);
    return NULL;
  }
  size_t bytes = n * size;
  if (bytes > c->budget) {
    gl_fail(c, SKS_ERR_UNSUPPORTED,
            "the file asks for more memory than its size justifies (%zu bytes more); "
            "refusing to allocate", bytes);
    return NULL;
  }
  void *p = calloc(bytes ? bytes : 1, 1);
  if (!p) {
    gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory (%zu bytes)", bytes);
    return NULL;
  }
  c->budget -= bytes;
  return p;
}

static char *gl_strdup(gl_ctx *c, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = gl_alloc(c, n, 1);
  if (d) memcpy(d, s, n);
  return d;
}

/* ---- JSON helpers -------------------------------------------------------- */

static const char *js_type_name(const cJSON *j) {
  if (cJSON_IsNumber(j)) return "a number";
  if (cJSON_IsString(j)) return "a string";
  if (cJSON_IsArray(j)) return "an array";
  if (cJSON_IsObject(j)) return "an object";
  if (cJSON_IsBool(j)) return "a boolean";
  if (cJSON_IsNull(j)) return "null";
  return "invalid";
}

/* Optional array member: absent -> *out NULL, *count 0. */
static sks_result js_array(gl_ctx *c, const cJSON *obj, const char *key, const char *where,
                           const cJSON **out, size_t *count) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
  *out = NULL;
  *count = 0;
  if (!j) return SKS_OK;
  if (!cJSON_IsArray(j))
    return gl_fail(c, SKS_ERR_PARSE, "%s%s\"%s\" must be an array, got %s", where,
                   *where ? ": " : "", key, js_type_name(j));
  *out = j;
  *count = (size_t)cJSON_GetArraySize(j);
  return SKS_OK;
}

/* Optional object member. */
static sks_result js_object(gl_ctx *c, const cJSON *obj, const char *key, const char *where,
                            const cJSON **out) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
  *out = NULL;
  if (!j) return SKS_OK;
  if (!cJSON_IsObject(j))
    return gl_fail(c, SKS_ERR_PARSE, "%s: \"%s\" must be an object, got %s", where, key,
                   js_type_name(j));
  *out = j;
  return SKS_OK;
}

/* Optional string member (absent -> NULL). */
static sks_result js_string(gl_ctx *c, const cJSON *obj, const char *key, const char *where,
                            const char **out) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
  *out = NULL;
  if (!j) return SKS_OK;
  if (!cJSON_IsString(j) || !j->valuestring)
    return gl_fail(c, SKS_ERR_PARSE, "%s: \"%s\" must be a string, got %s", where, key,
                   js_type_name(j));
  *out = j->valuestring;
  return SKS_OK;
}

/* A JSON value that must be a non-negative integer. */
static int js_is_uint(const cJSON *j, double *v) {
  if (!cJSON_IsNumber(j)) return 0;
  double d = j->valuedouble;
  if (!isfinite(d) || d < 0 || d > GL_MAX_INT || d != floor(d)) return 0;
  *v = d;
  return 1;
}

/* Non-negative integer member; absent -> def (or error when required). */
static sks_result js_size(gl_ctx *c, const cJSON *obj, const char *key, const char *where,
                          int required, size_t def, size_t *out) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
  double v;
  *out = def;
  if (!j) {
    if (required) return gl_fail(c, SKS_ERR_PARSE, "%s: \"%s\" is missing", where, key);
    return SKS_OK;
  }
  if (!js_is_uint(j, &v) || v > (double)(SIZE_MAX / 4))
    return gl_fail(c, SKS_ERR_PARSE, "%s: \"%s\" must be a non-negative integer", where, key);
  *out = (size_t)v;
  return SKS_OK;
}

/* Index member referring to one of `limit` things called `what`; absent -> -1. */
static sks_result js_index(gl_ctx *c, const cJSON *obj, const char *key, const char *where,
                           int required, size_t limit, const char *what, long *out) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
  double v;
  *out = -1;
  if (!j) {
    if (required) return gl_fail(c, SKS_ERR_PARSE, "%s: \"%s\" is missing", where, key);
    return SKS_OK;
  }
  if (!js_is_uint(j, &v))
    return gl_fail(c, SKS_ERR_PARSE, "%s: \"%s\" must be an index, got %s", where, key,
                   cJSON_IsNumber(j) ? "a negative or fractional number" : js_type_name(j));
  if (v >= (double)limit)
    return gl_fail(c, SKS_ERR_PARSE, "%s: %s %.0f does not exist (the file has %zu)", where,
                   what, v, limit);
  *out = (long)v;
  return SKS_OK;
}

/* Element i of an index array (e.g. "children", "joints"). */
static sks_result js_index_item(gl_ctx *c, const cJSON *j, size_t i, const char *where,
                                const char *key, size_t limit, const char *what, long *out) {
  double v;
  *out = -1;
  if (!js_is_uint(j, &v))
    return gl_fail(c, SKS_ERR_PARSE, "%s: %s[%zu] must be an index, got %s", where, key, i,
                   js_type_name(j));
  if (v >= (double)limit)
    return gl_fail(c, SKS_ERR_PARSE, "%s: %s[%zu]: %s %.0f does not exist (the file has %zu)",
                   where, key, i, what, v, limit);
  *out = (long)v;
  return SKS_OK;
}

/* Optional fixed-length number array; absent -> out untouched. */
static sks_result js_floats(gl_ctx *c, const cJSON *obj, const char *key, const char *where,
                            size_t n, float *out) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!j) return SKS_OK;
  if (!cJSON_IsArray(j) || (size_t)cJSON_GetArraySize(j) != n)
    return gl_fail(c, SKS_ERR_PARSE, "%s: \"%s\" must be an array of %zu numbers", where, key, n);
  size_t i = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, j) {
    if (!cJSON_IsNumber(e))
      return gl_fail(c, SKS_ERR_PARSE, "%s: \"%s\"[%zu] must be a number, got %s", where, key,
                     i, js_type_name(e));
    out[i++] = (float)e->valuedouble;
  }
  return SKS_OK;
}

/* Item i of a top-level array, which must be an object. */
static sks_result js_item(gl_ctx *c, const gl_vec *v, size_t i, const char *what,
                          const cJSON **out) {
  const cJSON *j = i < v->count ? v->items[i] : NULL;
  *out = j;
  if (!cJSON_IsObject(j))
    return gl_fail(c, SKS_ERR_PARSE, "%s %zu must be an object, got %s", what, i,
                   js_type_name(j));
  return SKS_OK;
}

/* Optional array member as a vector (absent -> empty). */
static sks_result js_vec(gl_ctx *c, const cJSON *obj, const char *key, const char *where,
                         gl_vec *v) {
  const cJSON *arr, *e;
  size_t n, i = 0;
  sks_result r = js_array(c, obj, key, where, &arr, &n);
  free(v->items);
  v->items = NULL;
  v->count = 0;
  if (r || !n) return r;
  if (!(v->items = malloc(n * sizeof *v->items)))
    return gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  cJSON_ArrayForEach(e, arr) v->items[i++] = e;
  v->count = n;
  return SKS_OK;
}

/* ---- buffers ------------------------------------------------------------- */

static int b64_value(unsigned char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
  if (ch >= '0' && ch <= '9') return ch - '0' + 52;
  if (ch == '+' || ch == '-') return 62;
  if (ch == '/' || ch == '_') return 63;
  return -1;
}

/* Decodes base64 (padding optional, whitespace skipped). Returns -1 on a bad
 * character, else the number of bytes written to out (capacity 3*len/4+3). */
static long b64_decode(const char *s, size_t len, uint8_t *out, size_t *bad_at) {
  uint32_t acc = 0;
  int bits = 0;
  size_t n = 0;
  for (size_t i = 0; i < len; ++i) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '=') break;
    if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') continue;
    int v = b64_value(ch);
    if (v < 0) { *bad_at = i; return -1; }
    acc = (acc << 6) | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[n++] = (uint8_t)(acc >> bits);
    }
  }
  return (long)n;
}


/* An external image's own cap (a model's images together: resource_cap). */
#define GL_MAX_IMAGE_BYTES ((size_t)512 << 20)

/* Reads a whole regular file (non-blocking open: a FIFO is refused, never
 * waited on). */
static sks_result read_file(const char *path, uint8_t **data, size_t *size, const char *name,
                            const char *what, sks_error *err) {
  return sks_resource_read(path, SIZE_MAX, (size_t)2 << 30, data, size, name, what, err);
}

/* Tells the caller of an external file about to be read (after its URI
 * passed the confinement), so that it never writes over it. */
static void report_file(const gl_ctx *c, const char *path) {
  if (c->on_file_read) c->on_file_read(c->on_file_read_user, path);
}

/* The error for an external file the total cap (max_resource_bytes) refuses. */
static sks_result resource_cap_fail(gl_ctx *c, const char *what, const char *uri, uint64_t bytes) {
  return gl_fail(c, SKS_ERR_UNSUPPORTED,
                 "%s file '%.200s' (%llu bytes) would bring the external files read for this model to %llu "
                 "bytes, over the %llu-byte total limit (sks_load_options.max_resource_bytes)", what, uri,
                 (unsigned long long)bytes, (unsigned long long)(c->resource_used + bytes),
                 (unsigned long long)c->resource_cap);
}

/* Makes buffer bi's bytes available (lazily: only buffers actually used are
 * loaded, so a missing image-only buffer does not fail the load). */
static sks_result buffer_get(gl_ctx *c, size_t bi, const gl_buffer **out) {
  gl_buffer *b = &c->buffers[bi];
  *out = b;
  if (b->loaded) return SKS_OK;
  char where[64];
  snprintf(where, sizeof where, "buffer %zu", bi);
  const cJSON *bj;
  sks_result r;
  size_t byte_length;
  const char *uri;
  if ((r = js_item(c, &c->buffers_json, bi, "buffer", &bj)) ||
      (r = js_size(c, bj, "byteLength", where, 1, 0, &byte_length)) ||
      (r = js_string(c, bj, "uri", where, &uri)))
    return r;
  if (!uri) {
    if (bi != 0 || !c->has_bin)
      return gl_fail(c, SKS_ERR_PARSE, "buffer %zu has no uri and %s", bi,
                     c->has_bin ? "only buffer 0 may use the GLB BIN chunk"
                                : "the file has no GLB BIN chunk");
    if (byte_length > c->bin_size)
      return gl_fail(c, SKS_ERR_PARSE, "buffer 0: byteLength %zu exceeds the GLB BIN chunk (%zu bytes)",
                     byte_length, c->bin_size);
    b->data = c->bin;
  } else if (strncmp(uri, "data:", 5) == 0) {
    const char *comma = strchr(uri, ',');
    if (!comma || comma - uri < 12 || strncmp(comma - 7, ";base64", 7) != 0)
      return gl_fail(c, SKS_ERR_UNSUPPORTED, "buffer %zu: data URI is not base64", bi);
    size_t len = strlen(comma + 1);
    uint8_t *dec = malloc(len / 4 * 3 + 3);
    if (!dec) return gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "buffer %zu: out of memory", bi);
    size_t bad = 0;
    long n = b64_decode(comma + 1, len, dec, &bad);
    if (n < 0) {
      free(dec);
      return gl_fail(c, SKS_ERR_PARSE, "buffer %zu: data URI has a non-base64 character at %zu",
                     bi, bad);
    }
    b->owned = dec;
    if ((size_t)n < byte_length)
      return gl_fail(c, SKS_ERR_PARSE, "buffer %zu: data URI holds %ld bytes, byteLength says %zu",
                     bi, n, byte_length);
    b->data = dec;
  } else {
    char what[64];
    snprintf(what, sizeof what, "buffer %zu", bi);
    char *path = NULL;
    r = sks_resource_resolve(c->base_dir, c->resource_root, uri, c->name, what, &path, c->err);
    if (r) return c->status = r;
    if (byte_length > c->resource_cap - c->resource_used) {
      free(path);
      c->resource_over = 1;
      return resource_cap_fail(c, what, uri, byte_length);
    }
    uint8_t *data;
    size_t size;
    snprintf(what, sizeof what, "buffer %zu file", bi);
    report_file(c, path);
    r = sks_resource_read(path, byte_length, SIZE_MAX, &data, &size, c->name, what, c->err);
    free(path);
    if (r) return c->status = r;
    b->owned = data;
    c->resource_used += size;
    if (size < byte_length)
      return gl_fail(c, SKS_ERR_PARSE, "buffer %zu: file '%s' has %zu bytes, byteLength says %zu",
                     bi, uri, size, byte_length);
    b->data = data;
    /* External bytes justify model data too. */
    c->budget += (size > SIZE_MAX / 64 ? SIZE_MAX / 64 : size) * 32;
  }
  b->size = byte_length;
  b->loaded = 1;
  return SKS_OK;
}

/* A bufferView's EXT_meshopt_compression (ext) data decoded into a block of
 * the view's byteLength (= count x byteStride, the extension's rule, as is
 * the view's byteStride when given), charged to the budget, once per view: the
 * compressed bytes (ext's buffer, byteOffset, byteLength) through
 * meshoptimizer's decoder of the mode, then its filter in place. Every
 * parameter is checked against the extension's rules first (the decoders
 * assert them). */
static sks_result meshopt_view(gl_ctx *c, size_t vi, const cJSON *ext, size_t view_len, size_t view_stride,
                               const uint8_t **data) {
  char where[96];
  snprintf(where, sizeof where, "bufferView %zu EXT_meshopt_compression", vi);
  if (c->meshopt && c->meshopt[vi]) {
    *data = c->meshopt[vi];
    return SKS_OK;
  }
  if (!cJSON_IsObject(ext)) return gl_fail(c, SKS_ERR_PARSE, "%s must be an object", where);
  sks_result r;
  long bi;
  size_t off, len, stride, count;
  const char *mode, *filter;
  if ((r = js_index(c, ext, "buffer", where, 1, c->n_buffers, "buffer", &bi)) ||
      (r = js_size(c, ext, "byteOffset", where, 0, 0, &off)) ||
      (r = js_size(c, ext, "byteLength", where, 1, 0, &len)) ||
      (r = js_size(c, ext, "byteStride", where, 1, 0, &stride)) ||
      (r = js_size(c, ext, "count", where, 1, 0, &count)) ||
      (r = js_string(c, ext, "mode", where, &mode)) || (r = js_string(c, ext, "filter", where, &filter)))
    return r;
  if (!mode) return gl_fail(c, SKS_ERR_PARSE, "%s: \"mode\" is missing", where);
  int attributes = !strcmp(mode, "ATTRIBUTES"), triangles = !strcmp(mode, "TRIANGLES"),
      indices = !strcmp(mode, "INDICES");
  if (!attributes && !triangles && !indices)
    return gl_fail(c, SKS_ERR_PARSE, "%s: mode '%.40s' is not ATTRIBUTES, TRIANGLES or INDICES", where, mode);
  if (!filter) filter = "NONE";
  int oct = !strcmp(filter, "OCTAHEDRAL"), quat = !strcmp(filter, "QUATERNION"), expo = !strcmp(filter, "EXPONENTIAL");
  if (!oct && !quat && !expo && strcmp(filter, "NONE"))
    return gl_fail(c, SKS_ERR_PARSE, "%s: filter '%.40s' is not NONE, OCTAHEDRAL, QUATERNION or EXPONENTIAL",
                   where, filter);
  if (attributes ? (stride == 0 || stride % 4 || stride > 256) : (stride != 2 && stride != 4))
    return gl_fail(c, SKS_ERR_PARSE, "%s: byteStride %zu is not allowed for mode %s", where, stride, mode);
  if (triangles && count % 3)
    return gl_fail(c, SKS_ERR_PARSE, "%s: TRIANGLES count %zu is not a multiple of 3", where, count);
  if ((oct || quat || expo) && !attributes)
    return gl_fail(c, SKS_ERR_PARSE, "%s: filter %s on mode %s", where, filter, mode);
  if ((oct && stride != 4 && stride != 8) || (quat && stride != 8))
    return gl_fail(c, SKS_ERR_PARSE, "%s: byteStride %zu is not allowed for filter %s", where, stride, filter);
  if (count > SIZE_MAX / stride || count * stride != view_len)
    return gl_fail(c, SKS_ERR_PARSE, "%s: count %zu x byteStride %zu is not the view's byteLength %zu", where,
                   count, stride, view_len);
  if (view_stride && view_stride != stride)
    return gl_fail(c, SKS_ERR_PARSE, "%s: byteStride %zu is not the view's byteStride %zu", where, stride,
                   view_stride);
  const gl_buffer *b;
  if ((r = buffer_get(c, (size_t)bi, &b))) return r;
  if (off > b->size || len > b->size - off)
    return gl_fail(c, SKS_ERR_PARSE, "%s: byteOffset %zu + byteLength %zu exceeds buffer %ld length %zu", where,
                   off, len, bi, b->size);
  if (!c->meshopt && !(c->meshopt = calloc(c->n_views ? c->n_views : 1, sizeof *c->meshopt)))
    return gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  uint8_t *out = gl_alloc(c, view_len ? view_len : 1, 1);
  if (!out) return c->status;
  int rc = attributes ? meshopt_decodeVertexBuffer(out, count, stride, b->data + off, len)
         : triangles  ? meshopt_decodeIndexBuffer(out, count, stride, b->data + off, len)
                      : meshopt_decodeIndexSequence(out, count, stride, b->data + off, len);
  if (rc != 0) {
    free(out);
    return gl_fail(c, SKS_ERR_PARSE, "%s: the compressed data does not decode (meshoptimizer error %d)", where, rc);
  }
  if (oct) meshopt_decodeFilterOct(out, count, stride);
  else if (quat) meshopt_decodeFilterQuat(out, count, stride);
  else if (expo) meshopt_decodeFilterExp(out, count, stride);
  c->meshopt[vi] = out;
  c->meshopt_views++;
  *data = out;
  return SKS_OK;
}

/* Resolves bufferView vi: *data and *length within a loaded buffer (or its
 * EXT_meshopt_compression data, decoded). */
static sks_result view_get(gl_ctx *c, size_t vi, const uint8_t **data, size_t *length,
                           size_t *stride) {
  char where[64];
  snprintf(where, sizeof where, "bufferView %zu", vi);
  const cJSON *vj;
  sks_result r;
  long bi;
  size_t off, len;
  if ((r = js_item(c, &c->views, vi, "bufferView", &vj)) ||
      (r = js_index(c, vj, "buffer", where, 1, c->n_buffers, "buffer", &bi)) ||
      (r = js_size(c, vj, "byteOffset", where, 0, 0, &off)) ||
      (r = js_size(c, vj, "byteLength", where, 1, 0, &len)) ||
      (r = js_size(c, vj, "byteStride", where, 0, 0, stride)))
    return r;
  const cJSON *vext = cJSON_GetObjectItemCaseSensitive(vj, "extensions");
  const cJSON *mo = cJSON_IsObject(vext) ? cJSON_GetObjectItemCaseSensitive(vext, "EXT_meshopt_compression") : NULL;
  if (mo) { /* the view's buffer is the fallback (it may hold no bytes) */
    if ((r = meshopt_view(c, vi, mo, len, *stride, data))) return r;
    *length = len;
    return SKS_OK;
  }
  const gl_buffer *b;
  if ((r = buffer_get(c, (size_t)bi, &b))) return r;
  if (off > b->size || len > b->size - off)
    return gl_fail(c, SKS_ERR_PARSE,
                   "bufferView %zu: byteOffset %zu + byteLength %zu exceeds buffer %ld length %zu",
                   vi, off, len, bi, b->size);
  *data = b->data + off;
  *length = len;
  return SKS_OK;
}

/* ---- accessors ----------------------------------------------------------- */

static uint32_t ct_size(uint32_t ct) {
  switch (ct) {
    case CT_BYTE: case CT_UBYTE: return 1;
    case CT_SHORT: case CT_USHORT: return 2;
    case CT_UINT: case CT_FLOAT: return 4;
    default: return 0;
  }
}
static uint32_t ct_mask(uint32_t ct) {
  switch (ct) {
    case CT_BYTE: return M_BYTE;
    case CT_UBYTE: return M_UBYTE;
    case CT_SHORT: return M_SHORT;
    case CT_USHORT: return M_USHORT;
    case CT_UINT: return M_UINT;
    case CT_FLOAT: return M_FLOAT;
    default: return 0;
  }
}
static const char *ct_name(uint32_t ct) {
  switch (ct) {
    case CT_BYTE: return "byte";
    case CT_UBYTE: return "unsigned byte";
    case CT_SHORT: return "short";
    case CT_USHORT: return "unsigned short";
    case CT_UINT: return "unsigned int";
    case CT_FLOAT: return "float";
    default: return "?";
  }
}

/* Checks that count elements of elem_size bytes, stride apart, starting at
 * byte offset `off`, fit in `len` bytes. */
static int span_fits(size_t off, size_t count, size_t stride, size_t elem_size, size_t len) {
  if (count == 0) return off <= len;
  if (off > len || elem_size > len - off) return 0;
  size_t room = len - off - elem_size; /* bytes left for the other count-1 steps */
  return stride == 0 ? 1 : (count - 1) <= room / stride;
}

static uint32_t rd_u16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static double comp_value(const uint8_t *p, uint32_t ct, int normalized) {
  switch (ct) {
    case CT_BYTE: {
      int8_t v = (int8_t)p[0];
      return normalized ? fmax(v / 127.0, -1.0) : v;
    }
    case CT_UBYTE: return normalized ? p[0] / 255.0 : p[0];
    case CT_SHORT: {
      int16_t v = (int16_t)(uint16_t)rd_u16(p);
      return normalized ? fmax(v / 32767.0, -1.0) : v;
    }
    case CT_USHORT: return normalized ? rd_u16(p) / 65535.0 : rd_u16(p);
    case CT_UINT: return rd_u32(p);
    case CT_FLOAT: {
      uint32_t u = rd_u32(p);
      float f;
      memcpy(&f, &u, sizeof f);
      return f;
    }
    default: return 0;
  }
}

static uint32_t sparse_index(const gl_acc *a, size_t i) {
  const uint8_t *p = a->sp_idx + i * a->sp_idx_size;
  return a->sp_idx_ctype == CT_UBYTE ? p[0] : a->sp_idx_ctype == CT_USHORT ? rd_u16(p) : rd_u32(p);
}

static sks_result acc_resolve(gl_ctx *c, size_t ai, const char *usage, gl_acc *a) {
  char where[160];
  snprintf(where, sizeof where, "accessor %zu (%s)", ai, usage);
  memset(a, 0, sizeof *a);
  a->index = ai;
  const cJSON *aj;
  sks_result r;
  long vi;
  size_t off, count, ct;
  const char *type;
  if ((r = js_item(c, &c->accessors, ai, "accessor", &aj)) ||
      (r = js_index(c, aj, "bufferView", where, 0, c->n_views, "bufferView", &vi)) ||
      (r = js_size(c, aj, "byteOffset", where, 0, 0, &off)) ||
      (r = js_size(c, aj, "componentType", where, 1, 0, &ct)) ||
      (r = js_size(c, aj, "count", where, 1, 0, &count)) ||
      (r = js_string(c, aj, "type", where, &type)))
    return r;
  if (!type) return gl_fail(c, SKS_ERR_PARSE, "%s: \"type\" is missing", where);
  static const struct { const char *name; uint32_t rows, cols; } types[] = {
      {"SCALAR", 1, 1}, {"VEC2", 2, 1}, {"VEC3", 3, 1}, {"VEC4", 4, 1},
      {"MAT2", 2, 2},   {"MAT3", 3, 3}, {"MAT4", 4, 4}};
  size_t t = 0;
  while (t < sizeof types / sizeof types[0] && strcmp(types[t].name, type) != 0) ++t;
  if (t == sizeof types / sizeof types[0])
    return gl_fail(c, SKS_ERR_PARSE, "%s: unknown type \"%s\"", where, type);
  a->type_name = types[t].name;
  a->rows = types[t].rows;
  a->cols = types[t].cols;
  a->comps = a->rows * a->cols;
  a->ctype = (uint32_t)(ct > 0xFFFF ? 0 : ct);
  a->csize = ct_size(a->ctype);
  if (!a->csize) return gl_fail(c, SKS_ERR_PARSE, "%s: unknown componentType %zu", where, ct);
  const cJSON *nj = cJSON_GetObjectItemCaseSensitive(aj, "normalized");
  if (nj && !cJSON_IsBool(nj))
    return gl_fail(c, SKS_ERR_PARSE, "%s: \"normalized\" must be a boolean", where);
  a->normalized = cJSON_IsTrue(nj) && a->ctype != CT_FLOAT && a->ctype != CT_UINT;
  /* Matrix columns start on 4-byte boundaries (spec 3.6.2.4). */
  a->col_stride = a->rows * a->csize;
  if (a->cols > 1) a->col_stride = (a->col_stride + 3u) & ~3u;
  a->elem_size = a->col_stride * a->cols;
  a->count = count;
  if (count == 0) return gl_fail(c, SKS_ERR_PARSE, "%s: count is 0 (must be at least 1)", where);

  if (vi >= 0) {
    const uint8_t *vdata;
    size_t vlen, vstride;
    if ((r = view_get(c, (size_t)vi, &vdata, &vlen, &vstride))) return r;
    if (vstride && vstride < a->elem_size)
      return gl_fail(c, SKS_ERR_PARSE, "%s: bufferView %ld byteStride %zu is smaller than one %s of %s (%u bytes)",
                     where, vi, vstride, a->type_name, ct_name(a->ctype), a->elem_size);
    a->stride = vstride ? vstride : a->elem_size;
    if (!span_fits(off, count, a->stride, a->elem_size, vlen))
      return gl_fail(c, SKS_ERR_PARSE,
                     "%s: byteOffset %zu + %zu x %zu bytes exceeds bufferView %ld length %zu",
                     where, off, count, a->stride, vi, vlen);
    a->data = vdata + off;
  } else {
    if (count > (GL_MAX_VIRTUAL_BYTES - c->virtual_used) / a->elem_size)
      return gl_fail(c, SKS_ERR_UNSUPPORTED,
                     "%s: %zu elements without a bufferView is more than this reader accepts "
                     "(%zu MB for all buffer-less accessors of a file)",
                     where, count, GL_MAX_VIRTUAL_BYTES >> 20);
    c->virtual_used += count * a->elem_size;
    a->stride = a->elem_size;
  }

  const cJSON *sp;
  if ((r = js_object(c, aj, "sparse", where, &sp))) return r;
  if (sp) {
    const cJSON *ij, *vj;
    size_t spc, ioff, voff, ict;
    long ivi, vvi;
    if ((r = js_size(c, sp, "count", where, 1, 0, &spc)) ||
        (r = js_object(c, sp, "indices", where, &ij)) || (r = js_object(c, sp, "values", where, &vj)))
      return r;
    if (!ij || !vj)
      return gl_fail(c, SKS_ERR_PARSE, "%s: sparse needs \"indices\" and \"values\"", where);
    if ((r = js_index(c, ij, "bufferView", where, 1, c->n_views, "bufferView", &ivi)) ||
        (r = js_size(c, ij, "byteOffset", where, 0, 0, &ioff)) ||
        (r = js_size(c, ij, "componentType", where, 1, 0, &ict)) ||
        (r = js_index(c, vj, "bufferView", where, 1, c->n_views, "bufferView", &vvi)) ||
        (r = js_size(c, vj, "byteOffset", where, 0, 0, &voff)))
      return r;
    if (spc > count)
      return gl_fail(c, SKS_ERR_PARSE, "%s: sparse count %zu exceeds count %zu", where, spc, count);
    if (ict != CT_UBYTE && ict != CT_USHORT && ict != CT_UINT)
      return gl_fail(c, SKS_ERR_PARSE, "%s: sparse indices componentType %zu is not an unsigned integer type",
                     where, ict);
    a->sp_idx_ctype = (uint32_t)ict;
    a->sp_idx_size = ct_size((uint32_t)ict);
    const uint8_t *d;
    size_t len, vstride;
    if ((r = view_get(c, (size_t)ivi, &d, &len, &vstride))) return r;
    if (!span_fits(ioff, spc, a->sp_idx_size, a->sp_idx_size, len))
      return gl_fail(c, SKS_ERR_PARSE,
                     "%s: sparse indices byteOffset %zu + %zu x %u bytes exceeds bufferView %ld length %zu",
                     where, ioff, spc, a->sp_idx_size, ivi, len);
    a->sp_idx = d + ioff;
    if ((r = view_get(c, (size_t)vvi, &d, &len, &vstride))) return r;
    if (!span_fits(voff, spc, a->elem_size, a->elem_size, len))
      return gl_fail(c, SKS_ERR_PARSE,
                     "%s: sparse values byteOffset %zu + %zu x %u bytes exceeds bufferView %ld length %zu",
                     where, voff, spc, a->elem_size, vvi, len);
    a->sp_val = d + voff;
    a->sp_count = spc;
    for (size_t i = 0; i < spc; ++i) {
      uint32_t k = sparse_index(a, i);
      if (k >= count)
        return gl_fail(c, SKS_ERR_PARSE, "%s: sparse index %zu is %u, count is %zu", where, i, k,
                       count);
    }
  }
  return SKS_OK;
}

/* Type check: `comps` components per element, component type in `mask`;
 * integer types in `norm_mask` must be normalized. */
static sks_result acc_expect(gl_ctx *c, const gl_acc *a, const char *usage, uint32_t comps,
                             uint32_t mask, uint32_t norm_mask, const char *expected) {
  uint32_t m = ct_mask(a->ctype);
  if (a->comps != comps || !(m & mask) || ((m & norm_mask) && !a->normalized))
    return gl_fail(c, SKS_ERR_PARSE, "accessor %zu (%s): expected %s, got %s of %s%s", a->index,
                   usage, expected, a->type_name, a->normalized ? "normalized " : "",
                   ct_name(a->ctype));
  return SKS_OK;
}

static double acc_value(const gl_acc *a, const uint8_t *elem, uint32_t k) {
  return comp_value(elem + (k / a->rows) * a->col_stride + (k % a->rows) * a->csize, a->ctype,
                    a->normalized);
}

/* Reads all elements as floats (a->comps per element) into out. */
static void acc_read_f(const gl_acc *a, float *out) {
  size_t n = a->comps;
  if (a->data) {
    for (size_t e = 0; e < a->count; ++e) {
      const uint8_t *p = a->data + e * a->stride;
      for (uint32_t k = 0; k < n; ++k) out[e * n + k] = (float)acc_value(a, p, k);
    }
  } else {
    memset(out, 0, a->count * n * sizeof *out);
  }
  for (size_t i = 0; i < a->sp_count; ++i) {
    size_t e = sparse_index(a, i);
    const uint8_t *p = a->sp_val + i * a->elem_size;
    for (uint32_t k = 0; k < n; ++k) out[e * n + k] = (float)acc_value(a, p, k);
  }
}

/* Reads all elements of an unsigned integer accessor into out. */
static void acc_read_u(const gl_acc *a, uint32_t *out) {
  size_t n = a->comps;
  if (a->data) {
    for (size_t e = 0; e < a->count; ++e) {
      const uint8_t *p = a->data + e * a->stride;
      for (uint32_t k = 0; k < n; ++k) out[e * n + k] = (uint32_t)acc_value(a, p, k);
    }
  } else {
    memset(out, 0, a->count * n * sizeof *out);
  }
  for (size_t i = 0; i < a->sp_count; ++i) {
    size_t e = sparse_index(a, i);
    const uint8_t *p = a->sp_val + i * a->elem_size;
    for (uint32_t k = 0; k < n; ++k) out[e * n + k] = (uint32_t)acc_value(a, p, k);
  }
}

/* Resolves + type-checks + reads a float accessor into a new array. */
static sks_result acc_load_f(gl_ctx *c, size_t ai, const char *usage, uint32_t comps,
                             uint32_t mask, uint32_t norm_mask, const char *expected,
                             gl_acc *a, float **out) {
  sks_result r;
  *out = NULL;
  if ((r = acc_resolve(c, ai, usage, a)) ||
      (r = acc_expect(c, a, usage, comps, mask, norm_mask, expected)))
    return r;
  *out = gl_alloc(c, a->count * comps, sizeof(float));
  if (!*out) return c->status;
  acc_read_f(a, *out);
  return SKS_OK;
}

/* ---- nodes and skeleton -------------------------------------------------- */

static sks_result node_rest(gl_ctx *c, const cJSON *nj, size_t ni, sks_transform *t) {
  char where[48];
  snprintf(where, sizeof where, "node %zu", ni);
  sks_result r;
  *t = sks_transform_identity();
  if (cJSON_GetObjectItemCaseSensitive(nj, "matrix")) {
    sks_mat4 m;
    if ((r = js_floats(c, nj, "matrix", where, 16, m.m))) return r;
    *t = sks_m4_decompose(&m);
    return SKS_OK;
  }
  float tr[3] = {0, 0, 0}, q[4] = {0, 0, 0, 1}, s[3] = {1, 1, 1};
  if ((r = js_floats(c, nj, "translation", where, 3, tr)) ||
      (r = js_floats(c, nj, "rotation", where, 4, q)) || (r = js_floats(c, nj, "scale", where, 3, s)))
    return r;
  t->translation = sks_v3(tr[0], tr[1], tr[2]);
  t->rotation = sks_q_normalize(sks_q(q[0], q[1], q[2], q[3]));
  t->scale = sks_v3(s[0], s[1], s[2]);
  return SKS_OK;
}

/* Parents from "children"; rejects out-of-range children, nodes with two
 * parents and cycles (glTF requires a forest). */
static sks_result build_parents(gl_ctx *c) {
  size_t n = c->n_nodes;
  sks_result r;
  for (size_t i = 0; i < n; ++i) c->node_parent[i] = -1;
  for (size_t i = 0; i < n; ++i) {
    const cJSON *nj, *ch;
    size_t cn;
    char where[48];
    snprintf(where, sizeof where, "node %zu", i);
    if ((r = js_item(c, &c->nodes, i, "node", &nj)) ||
        (r = js_array(c, nj, "children", where, &ch, &cn)))
      return r;
    const cJSON *cj;
    size_t k = 0;
    cJSON_ArrayForEach(cj, ch) {
      long child;
      if ((r = js_index_item(c, cj, k++, where, "children", n, "node", &child))) return r;
      if ((size_t)child == i)
        return gl_fail(c, SKS_ERR_PARSE, "node %zu lists itself as a child (recursive nodes)", i);
      if (c->node_parent[child] >= 0)
        return gl_fail(c, SKS_ERR_PARSE, "node %ld has two parents (nodes %d and %zu)", child,
                       c->node_parent[child], i);
      c->node_parent[child] = (int32_t)i;
    }
  }
  /* Cycle check: walk up from every node; state 1 = on the current path. */
  uint8_t *state = calloc(n ? n : 1, 1);
  if (!state) return gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; i < n; ++i) {
    int32_t k = (int32_t)i;
    while (k >= 0 && state[k] == 0) {
      state[k] = 1;
      k = c->node_parent[k];
    }
    if (k >= 0 && state[k] == 1) {
      free(state);
      return gl_fail(c, SKS_ERR_PARSE, "node %d is its own ancestor (recursive nodes)", k);
    }
    for (k = (int32_t)i; k >= 0 && state[k] == 1; k = c->node_parent[k]) state[k] = 2;
  }
  free(state);
  return SKS_OK;
}

/* Appends the tree under `root` to the joint order (pre-order, children in
 * file order). `order` has room for every node; `stack` too. */
static void visit_tree(gl_ctx *c, int32_t root, int32_t *order, size_t *count, int32_t *stack) {
  /* A visited node's whole tree is visited: test before walking up, so a
   * skin listing every node of a long chain stays linear. */
  if (c->node_joint[root] >= 0) return;
  while (c->node_parent[root] >= 0) root = c->node_parent[root];
  if (c->node_joint[root] >= 0) return;
  size_t top = 0;
  stack[top++] = root;
  while (top) {
    int32_t nidx = stack[--top];
    c->node_joint[nidx] = (int32_t)*count;
    order[(*count)++] = nidx;
    /* children were validated by build_parents; pushed reversed so they pop in file order */
    const cJSON *ch = cJSON_GetObjectItemCaseSensitive(c->nodes.items[nidx], "children"), *cj;
    size_t first = top;
    cJSON_ArrayForEach(cj, ch) {
      int32_t child = (int32_t)cj->valuedouble;
      if (c->node_joint[child] < 0) stack[top++] = child;
    }
    for (size_t a = first, b = top; a + 1 < b; ++a, --b) {
      int32_t tmp = stack[a];
      stack[a] = stack[b - 1];
      stack[b - 1] = tmp;
    }
  }
}

static sks_result build_skeleton(gl_ctx *c, sks_model *m) {
  sks_result r;
  size_t n = c->n_nodes;
  if ((r = build_parents(c))) return r;
  int32_t *order = malloc((n ? n : 1) * sizeof *order);
  int32_t *stack = malloc((n ? n : 1) * sizeof *stack);
  if (!order || !stack) {
    free(order);
    free(stack);
    return gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  }
  size_t count = 0;
  if (c->n_scenes > 0) {
    for (size_t s = 0; s < c->n_scenes && !r; ++s) {
      const cJSON *sj, *sn;
      size_t cnt;
      char where[48];
      snprintf(where, sizeof where, "scene %zu", s);
      if ((r = js_item(c, &c->scenes, s, "scene", &sj)) ||
          (r = js_array(c, sj, "nodes", where, &sn, &cnt)))
        break;
      const cJSON *e;
      size_t k = 0;
      cJSON_ArrayForEach(e, sn) {
        long ni;
        if ((r = js_index_item(c, e, k++, where, "nodes", n, "node", &ni))) break;
        visit_tree(c, (int32_t)ni, order, &count, stack);
      }
    }
  } else {
    for (size_t i = 0; i < n; ++i)
      if (c->node_parent[i] < 0) visit_tree(c, (int32_t)i, order, &count, stack);
  }
  /* Skin joints outside the scenes: bring their trees in so skins stay whole. */
  for (size_t s = 0; s < c->n_skins && !r; ++s) {
    const cJSON *sj, *jj;
    size_t cnt;
    char where[48];
    snprintf(where, sizeof where, "skin %zu", s);
    if ((r = js_item(c, &c->skins, s, "skin", &sj)) || (r = js_array(c, sj, "joints", where, &jj, &cnt)))
      break;
    const cJSON *e;
    size_t k = 0;
    cJSON_ArrayForEach(e, jj) {
      long ni;
      if ((r = js_index_item(c, e, k++, where, "joints", n, "node", &ni))) break;
      visit_tree(c, (int32_t)ni, order, &count, stack);
    }
  }
  free(stack);
  if (r) {
    free(order);
    return r;
  }
  sks_skeleton *sk = &m->skeleton;
  sk->names = gl_alloc(c, count, sizeof(char *));
  sk->parents = sk->names ? gl_alloc(c, count, sizeof(int32_t)) : NULL;
  sk->rest = sk->parents ? gl_alloc(c, count, sizeof(sks_transform)) : NULL;
  if (!sk->rest) {
    free(order);
    return c->status;
  }
  sk->joint_count = count;
  for (size_t j = 0; j < count && !r; ++j) {
    int32_t ni = order[j];
    const cJSON *nj = c->nodes.items[ni];
    const char *name;
    char where[48], buf[48];
    snprintf(where, sizeof where, "node %d", ni);
    if ((r = js_string(c, nj, "name", where, &name))) break;
    if (!name) {
      snprintf(buf, sizeof buf, "node_%d", ni);
      name = buf;
    }
    if (!(sk->names[j] = gl_strdup(c, name))) { r = c->status; break; }
    int32_t p = c->node_parent[ni];
    sk->parents[j] = p >= 0 ? c->node_joint[p] : -1;
    r = node_rest(c, nj, (size_t)ni, &sk->rest[j]);
  }
  free(order);
  return r;
}

/* ---- materials, skins ---------------------------------------------------- */

static sks_result gl_note(gl_ctx *c, sks_model *m, const char *tail, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* ext.key as a float in [lo, hi] (absent: def); 0 when present but not
 * such a number. */
static int ext_float(const cJSON *ext, const char *key, float def, double lo, double hi, float *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(ext, key);
  *out = def;
  if (!v) return 1;
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi) return 0;
  *out = (float)v->valuedouble;
  return 1;
}

static int ext_color3(const cJSON *ext, const char *key, float def, float out[3]) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(ext, key);
  out[0] = out[1] = out[2] = def;
  if (!v) return 1;
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 3) return 0;
  for (int k = 0; k < 3; ++k) {
    const cJSON *e = cJSON_GetArrayItem(v, k);
    if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0 && e->valuedouble <= 1)) return 0;
    out[k] = (float)e->valuedouble;
  }
  return 1;
}

/* The KHR_materials_clearcoat / sheen / transmission / volume / ior factors
 * into the model, as the Assimp path gives them (sks_material: an extension
 * object sets its bit; absent factors take the extension's defaults; ior's
 * is 1.5). An extension with a factor out of its range is left out of the
 * model with a warning (the kept document still carries it as written). */
static sks_result read_material_extensions(gl_ctx *c, sks_model *m, const cJSON *ext, size_t i, const char *name,
                                           sks_material *mat) {
  if (!cJSON_IsObject(ext)) return SKS_OK;
  static const char *const names[] = {"KHR_materials_clearcoat", "KHR_materials_sheen", "KHR_materials_transmission",
                                      "KHR_materials_volume", "KHR_materials_ior"};
  for (int k = 0; k < 5; ++k) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(ext, names[k]);
    if (!e) continue;
    int ok = cJSON_IsObject(e);
    float a = 0, b = 0, col[3] = {0, 0, 0};
    switch (k) {
    case 0:
      ok = ok && ext_float(e, "clearcoatFactor", 0, 0, 1, &a) && ext_float(e, "clearcoatRoughnessFactor", 0, 0, 1, &b);
      if (ok) mat->clearcoat = a, mat->clearcoat_roughness = b, mat->extensions |= SKS_MATERIAL_CLEARCOAT;
      break;
    case 1:
      ok = ok && ext_color3(e, "sheenColorFactor", 0, col) && ext_float(e, "sheenRoughnessFactor", 0, 0, 1, &b);
      if (ok) memcpy(mat->sheen_color, col, sizeof col), mat->sheen_roughness = b, mat->extensions |= SKS_MATERIAL_SHEEN;
      break;
    case 2:
      ok = ok && ext_float(e, "transmissionFactor", 0, 0, 1, &a);
      if (ok) mat->transmission = a, mat->extensions |= SKS_MATERIAL_TRANSMISSION;
      break;
    case 3: {
      const cJSON *d = cJSON_GetObjectItemCaseSensitive(e, "attenuationDistance");
      ok = ok && ext_float(e, "thicknessFactor", 0, 0, 3.4e38, &a) && ext_color3(e, "attenuationColor", 1, col) &&
           (!d || (ext_float(e, "attenuationDistance", 0, 0, 3.4e38, &b) && b > 0));
      if (ok) {
        mat->thickness = a, mat->attenuation_distance = b;
        memcpy(mat->attenuation_color, col, sizeof col);
        mat->extensions |= SKS_MATERIAL_VOLUME;
      }
      break;
    }
    default:
      ok = ok && ext_float(e, "ior", 1.5f, 0, 3.4e38, &a) && (a == 0 || a >= 1);
      if (ok) mat->ior = a, mat->extensions |= SKS_MATERIAL_IOR;
      break;
    }
    sks_result r;
    if (!ok && (r = gl_note(c, m, "the model's materials (the file keeps it)",
                            "material %zu '%s': %s is not an object of factors in their ranges", i, name, names[k])))
      return r;
  }
  return SKS_OK;
}

static sks_result read_materials(gl_ctx *c, sks_model *m) {
  sks_result r;
  if (!c->n_materials) return SKS_OK;
  if (!(m->materials = gl_alloc(c, c->n_materials, sizeof(sks_material)))) return c->status;
  m->material_count = c->n_materials;
  for (size_t i = 0; i < c->n_materials; ++i) {
    const cJSON *mj, *pbr;
    const char *name;
    char where[48], buf[48];
    snprintf(where, sizeof where, "material %zu", i);
    sks_material *mat = &m->materials[i];
    sks_material_init(mat); /* glTF's defaults; textures are set by read_images, after keep_source */
    if ((r = js_item(c, &c->materials, i, "material", &mj)) ||
        (r = js_string(c, mj, "name", where, &name)) ||
        (r = js_object(c, mj, "pbrMetallicRoughness", where, &pbr)))
      return r;
    if (pbr && (r = js_floats(c, pbr, "baseColorFactor", where, 4, mat->base_color))) return r;
    const cJSON *mf = pbr ? cJSON_GetObjectItemCaseSensitive(pbr, "metallicFactor") : NULL;
    const cJSON *rf = pbr ? cJSON_GetObjectItemCaseSensitive(pbr, "roughnessFactor") : NULL;
    if (cJSON_IsNumber(mf) && mf->valuedouble >= 0 && mf->valuedouble <= 1) mat->metallic = (float)mf->valuedouble;
    if (cJSON_IsNumber(rf) && rf->valuedouble >= 0 && rf->valuedouble <= 1) mat->roughness = (float)rf->valuedouble;
    mat->double_sided = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(mj, "doubleSided"));
    float ef[3] = {0, 0, 0};
    if ((r = js_floats(c, mj, "emissiveFactor", where, 3, ef))) return r;
    for (int k = 0; k < 3; ++k) mat->emissive[k] = ef[k] >= 0 && ef[k] <= 1 ? ef[k] : 0.0f;
    const cJSON *ext = cJSON_GetObjectItemCaseSensitive(mj, "extensions");
    const cJSON *es = cJSON_IsObject(ext) ? cJSON_GetObjectItemCaseSensitive(ext, "KHR_materials_emissive_strength") : NULL;
    const cJSON *esv = cJSON_IsObject(es) ? cJSON_GetObjectItemCaseSensitive(es, "emissiveStrength") : NULL;
    if (cJSON_IsNumber(esv) && esv->valuedouble >= 0 && esv->valuedouble <= SKS_MAX_EMISSIVE_STRENGTH)
      mat->emissive_strength = (float)esv->valuedouble;
    const cJSON *nt = cJSON_GetObjectItemCaseSensitive(mj, "normalTexture");
    const cJSON *ot = cJSON_GetObjectItemCaseSensitive(mj, "occlusionTexture");
    const cJSON *ns = cJSON_IsObject(nt) ? cJSON_GetObjectItemCaseSensitive(nt, "scale") : NULL;
    const cJSON *os = cJSON_IsObject(ot) ? cJSON_GetObjectItemCaseSensitive(ot, "strength") : NULL;
    if (cJSON_IsNumber(ns) && isfinite(ns->valuedouble) && fabs(ns->valuedouble) <= 1e6)
      mat->normal_scale = (float)ns->valuedouble;
    if (cJSON_IsNumber(os) && os->valuedouble >= 0 && os->valuedouble <= 1)
      mat->occlusion_strength = (float)os->valuedouble;
    const cJSON *cc = cJSON_IsObject(ext) ? cJSON_GetObjectItemCaseSensitive(ext, "KHR_materials_clearcoat") : NULL;
    const cJSON *cn = cJSON_IsObject(cc) ? cJSON_GetObjectItemCaseSensitive(cc, "clearcoatNormalTexture") : NULL;
    const cJSON *cs = cJSON_IsObject(cn) ? cJSON_GetObjectItemCaseSensitive(cn, "scale") : NULL;
    if (cJSON_IsNumber(cs) && isfinite(cs->valuedouble) && fabs(cs->valuedouble) <= 1e6)
      mat->clearcoat_normal_scale = (float)cs->valuedouble;
    if (!name) {
      snprintf(buf, sizeof buf, "material_%zu", i);
      name = buf;
    }
    if (!(mat->name = gl_strdup(c, name))) return c->status;
    if ((r = read_material_extensions(c, m, ext, i, mat->name, mat))) return r;
  }
  return SKS_OK;
}

static sks_result read_skins(gl_ctx *c, sks_model *m) {
  sks_result r;
  if (!c->n_skins) return SKS_OK;
  if (!(m->skins = gl_alloc(c, c->n_skins, sizeof(sks_skin)))) return c->status;
  m->skin_count = c->n_skins;
  for (size_t i = 0; i < c->n_skins; ++i) {
    const cJSON *sj, *jj;
    const char *name;
    size_t cnt;
    long ibm;
    char where[48], buf[48];
    snprintf(where, sizeof where, "skin %zu", i);
    sks_skin *s = &m->skins[i];
    if ((r = js_item(c, &c->skins, i, "skin", &sj)) || (r = js_string(c, sj, "name", where, &name)) ||
        (r = js_array(c, sj, "joints", where, &jj, &cnt)) ||
        (r = js_index(c, sj, "inverseBindMatrices", where, 0, c->n_accessors, "accessor", &ibm)))
      return r;
    if (!name) {
      snprintf(buf, sizeof buf, "skin_%zu", i);
      name = buf;
    }
    if (!(s->name = gl_strdup(c, name))) return c->status;
    if (cnt == 0) return gl_fail(c, SKS_ERR_PARSE, "skin %zu has no joints", i);
    if (cnt > 65536)
      return gl_fail(c, SKS_ERR_UNSUPPORTED, "skin %zu has %zu joints (at most 65536 supported)", i, cnt);
    if (!(s->joints = gl_alloc(c, cnt, sizeof(int32_t))) ||
        !(s->inverse_bind = gl_alloc(c, cnt, sizeof(sks_mat4))))
      return c->status;
    s->joint_count = cnt;
    const cJSON *e;
    size_t k = 0;
    cJSON_ArrayForEach(e, jj) {
      long ni;
      if ((r = js_index_item(c, e, k, where, "joints", c->n_nodes, "node", &ni))) return r;
      s->joints[k] = c->node_joint[ni]; /* build_skeleton pulled every joint in */
      s->inverse_bind[k] = sks_m4_identity(); /* spec: absent = identity */
      ++k;
    }
    if (ibm >= 0) {
      gl_acc a;
      char usage[64];
      snprintf(usage, sizeof usage, "inverseBindMatrices of skin %zu", i);
      if ((r = acc_resolve(c, (size_t)ibm, usage, &a)) ||
          (r = acc_expect(c, &a, usage, 16, M_FLOAT, 0, "MAT4 of float")))
        return r;
      if (a.count < cnt)
        return gl_fail(c, SKS_ERR_PARSE, "skin %zu: inverseBindMatrices accessor %ld has %zu matrices for %zu joints",
                       i, ibm, a.count, cnt);
      float *tmp = malloc(a.count * 16 * sizeof(float));
      if (!tmp) return gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
      acc_read_f(&a, tmp);
      memcpy(s->inverse_bind, tmp, cnt * sizeof(sks_mat4));
      free(tmp);
    }
  }
  return SKS_OK;
}

/* ---- meshes -------------------------------------------------------------- */

/* More than 8 influences: keep the 8 largest weights per vertex, rescaled so
 * the vertex's weight sum is unchanged. Vertices that lose a non-zero weight
 * are counted in the part (for sks_check's too_many_influences). */
static void reduce_influences(size_t nv, uint32_t k_in, const uint16_t *j_in, const float *w_in,
                              uint16_t *j_out, float *w_out, sks_mesh_part *part) {
  for (size_t v = 0; v < nv; ++v) {
    const uint16_t *jv = j_in + v * k_in;
    const float *wv = w_in + v * k_in;
    uint8_t used[GL_MAX_SETS * 4] = {0};
    double total = 0, kept = 0;
    for (uint32_t k = 0; k < k_in; ++k) total += wv[k];
    for (uint32_t s = 0; s < SKS_MAX_INFLUENCES; ++s) {
      int best = -1;
      for (uint32_t k = 0; k < k_in; ++k)
        if (!used[k] && (best < 0 || wv[k] > wv[best])) best = (int)k;
      used[best] = 1;
      j_out[v * SKS_MAX_INFLUENCES + s] = jv[best];
      w_out[v * SKS_MAX_INFLUENCES + s] = wv[best];
      kept += wv[best];
    }
    for (uint32_t k = 0; k < k_in; ++k)
      if (!used[k] && wv[k] != 0.0f) {
        if (part->dropped_influence_vertices++ == 0) part->first_dropped_influence_vertex = v;
        break;
      }
    if (kept > 0 && isfinite(total) && total > 0)
      for (uint32_t s = 0; s < SKS_MAX_INFLUENCES; ++s)
        w_out[v * SKS_MAX_INFLUENCES + s] = (float)(w_out[v * SKS_MAX_INFLUENCES + s] * (total / kept));
  }
}

static sks_result read_skin_sets(gl_ctx *c, const cJSON *attrs, const char *where, size_t nv,
                                 sks_mesh_part *part) {
  sks_result r;
  uint32_t sets = 0;
  long jacc[GL_MAX_SETS], wacc[GL_MAX_SETS];
  for (;; ++sets) {
    char jk[16], wk[16];
    snprintf(jk, sizeof jk, "JOINTS_%u", sets);
    snprintf(wk, sizeof wk, "WEIGHTS_%u", sets);
    long ja, wa;
    if ((r = js_index(c, attrs, jk, where, 0, c->n_accessors, "accessor", &ja)) ||
        (r = js_index(c, attrs, wk, where, 0, c->n_accessors, "accessor", &wa)))
      return r;
    if (ja < 0 && wa < 0) break;
    if (ja < 0 || wa < 0)
      return gl_fail(c, SKS_ERR_PARSE, "%s: has %s without %s", where, ja < 0 ? wk : jk,
                     ja < 0 ? jk : wk);
    if (sets == GL_MAX_SETS)
      return gl_fail(c, SKS_ERR_UNSUPPORTED, "%s: more than %d JOINTS_n/WEIGHTS_n sets", where,
                     GL_MAX_SETS);
    jacc[sets] = ja;
    wacc[sets] = wa;
  }
  uint32_t k_all = sets * 4;
  uint16_t *joints = malloc(nv * k_all * sizeof *joints + 1);
  float *weights = malloc(nv * k_all * sizeof *weights + 1);
  uint32_t *jtmp = malloc(nv * 4 * sizeof *jtmp + 1);
  float *wtmp = malloc(nv * 4 * sizeof *wtmp + 1);
  r = (!joints || !weights || !jtmp || !wtmp) ? gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory")
                                             : SKS_OK;
  for (uint32_t s = 0; s < sets && !r; ++s) {
    gl_acc ja, wa;
    char ju[160], wu[160];
    snprintf(ju, sizeof ju, "JOINTS_%u of %s", s, where);
    snprintf(wu, sizeof wu, "WEIGHTS_%u of %s", s, where);
    if ((r = acc_resolve(c, (size_t)jacc[s], ju, &ja)) ||
        (r = acc_expect(c, &ja, ju, 4, M_UBYTE | M_USHORT, 0, "VEC4 of unsigned byte/short")) ||
        (r = acc_resolve(c, (size_t)wacc[s], wu, &wa)) ||
        (r = acc_expect(c, &wa, wu, 4, M_FLOAT | M_UBYTE | M_USHORT, M_UBYTE | M_USHORT,
                        "VEC4 of float / normalized unsigned byte / normalized unsigned short")))
      break;
    if (ja.normalized) {
      r = gl_fail(c, SKS_ERR_PARSE, "accessor %zu (%s): joint indices must not be normalized",
                  ja.index, ju);
      break;
    }
    if (ja.count != nv || wa.count != nv) {
      r = gl_fail(c, SKS_ERR_PARSE, "%s: JOINTS_%u has %zu and WEIGHTS_%u %zu elements for %zu vertices",
                  where, s, ja.count, s, wa.count, nv);
      break;
    }
    acc_read_u(&ja, jtmp);
    acc_read_f(&wa, wtmp);
    for (size_t v = 0; v < nv; ++v)
      for (uint32_t k = 0; k < 4; ++k) {
        joints[v * k_all + s * 4 + k] = (uint16_t)jtmp[v * 4 + k];
        weights[v * k_all + s * 4 + k] = wtmp[v * 4 + k];
      }
  }
  free(jtmp);
  free(wtmp);
  if (!r) {
    uint32_t k_out = k_all > SKS_MAX_INFLUENCES ? SKS_MAX_INFLUENCES : k_all;
    part->joints = gl_alloc(c, nv * k_out, sizeof(uint16_t));
    part->weights = part->joints ? gl_alloc(c, nv * k_out, sizeof(float)) : NULL;
    if (!part->weights) {
      r = c->status;
    } else {
      part->influence_count = k_out;
      for (size_t v = 0; v < nv; ++v) {
        uint32_t nonzero = 0;
        for (uint32_t k = 0; k < k_all; ++k) nonzero += weights[v * k_all + k] != 0.0f;
        if (nonzero > part->file_max_influences) part->file_max_influences = nonzero;
      }
      if (k_all > SKS_MAX_INFLUENCES) {
        reduce_influences(nv, k_all, joints, weights, part->joints, part->weights, part);
      } else {
        memcpy(part->joints, joints, nv * k_all * sizeof *joints);
        memcpy(part->weights, weights, nv * k_all * sizeof *weights);
      }
    }
  }
  free(joints);
  free(weights);
  return r;
}

static sks_result read_primitive(gl_ctx *c, const cJSON *pj, size_t mi, size_t pi, long skin,
                                 sks_mesh_part *part) {
  char where[64];
  snprintf(where, sizeof where, "mesh %zu primitive %zu", mi, pi);
  sks_result r;
  const cJSON *attrs;
  long pos, nrm, uv, uv1, tan, idx, mat;
  size_t mode;
  if ((r = js_object(c, pj, "attributes", where, &attrs)) ||
      (r = js_index(c, attrs, "POSITION", where, 1, c->n_accessors, "accessor", &pos)) ||
      (r = js_index(c, attrs, "NORMAL", where, 0, c->n_accessors, "accessor", &nrm)) ||
      (r = js_index(c, attrs, "TEXCOORD_0", where, 0, c->n_accessors, "accessor", &uv)) ||
      (r = js_index(c, attrs, "TEXCOORD_1", where, 0, c->n_accessors, "accessor", &uv1)) ||
      (r = js_index(c, attrs, "TANGENT", where, 0, c->n_accessors, "accessor", &tan)) ||
      (r = js_index(c, pj, "indices", where, 0, c->n_accessors, "accessor", &idx)) ||
      (r = js_index(c, pj, "material", where, 0, c->n_materials, "material", &mat)) ||
      (r = js_size(c, pj, "mode", where, 0, 4, &mode)))
    return r;
  if (mode > 6) /* POINTS .. TRIANGLE_FAN: glTF has no other (the validator: VALUE_NOT_IN_LIST) */
    return gl_fail(c, SKS_ERR_PARSE, "%s: mode %zu is not a glTF primitive mode (0 to 6)", where, mode);
  part->material = (int32_t)mat;
  gl_acc a;
  char usage[96];
  snprintf(usage, sizeof usage, "POSITION of %s", where);
  if ((r = acc_load_f(c, (size_t)pos, usage, 3, M_FLOAT | M_BYTE | M_UBYTE | M_SHORT | M_USHORT, 0,
                      "VEC3 of float (or quantized integers)", &a, &part->positions)))
    return r;
  size_t nv = part->vertex_count = a.count;
  if (nrm >= 0) {
    snprintf(usage, sizeof usage, "NORMAL of %s", where);
    if ((r = acc_load_f(c, (size_t)nrm, usage, 3, M_FLOAT | M_BYTE | M_SHORT, 0,
                        "VEC3 of float / byte / short", &a, &part->normals)))
      return r;
    if (a.count != nv)
      return gl_fail(c, SKS_ERR_PARSE, "%s: NORMAL accessor %ld has %zu elements, POSITION %zu", where,
                     nrm, a.count, nv);
  }
  const long uv_acc[2] = {uv, uv1};
  float **uv_out[2] = {&part->uvs, &part->uvs1};
  for (int set = 0; set < 2; ++set) {
    if (uv_acc[set] < 0) continue;
    snprintf(usage, sizeof usage, "TEXCOORD_%d of %s", set, where);
    if ((r = acc_load_f(c, (size_t)uv_acc[set], usage, 2, M_FLOAT | M_BYTE | M_UBYTE | M_SHORT | M_USHORT, 0,
                        "VEC2 of float or integers", &a, uv_out[set])))
      return r;
    if (a.count != nv)
      return gl_fail(c, SKS_ERR_PARSE, "%s: TEXCOORD_%d accessor %ld has %zu elements, POSITION %zu",
                     where, set, uv_acc[set], a.count, nv);
  }
  if (tan >= 0) {
    snprintf(usage, sizeof usage, "TANGENT of %s", where);
    if ((r = acc_load_f(c, (size_t)tan, usage, 4, M_FLOAT | M_BYTE | M_SHORT, 0,
                        "VEC4 of float / byte / short", &a, &part->tangents)))
      return r;
    if (a.count != nv)
      return gl_fail(c, SKS_ERR_PARSE, "%s: TANGENT accessor %ld has %zu elements, POSITION %zu",
                     where, tan, a.count, nv);
  }
  /* A skinned node's primitive without JOINTS_0 stays rigid (follows the node). */
  part->skin = -1;
  if (skin >= 0 && cJSON_GetObjectItemCaseSensitive(attrs, "JOINTS_0")) {
    part->skin = (int32_t)skin;
    if ((r = read_skin_sets(c, attrs, where, nv, part))) return r;
  }
  if (mode != 4) return SKS_OK; /* points / lines / strips / fans: vertices only */
  if (idx >= 0) {
    snprintf(usage, sizeof usage, "indices of %s", where);
    if ((r = acc_resolve(c, (size_t)idx, usage, &a)) ||
        (r = acc_expect(c, &a, usage, 1, M_UBYTE | M_USHORT | M_UINT, 0,
                        "SCALAR of unsigned byte/short/int")))
      return r;
    if (a.normalized)
      return gl_fail(c, SKS_ERR_PARSE, "accessor %zu (%s): indices must not be normalized", a.index,
                     usage);
    uint32_t *all = malloc(a.count * sizeof *all);
    if (!all) return gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
    acc_read_u(&a, all);
    /* A trailing partial triangle cannot be drawn: dropped, as renderers do. */
    size_t n = a.count - a.count % 3;
    if (!(part->indices = gl_alloc(c, n, sizeof(uint32_t)))) {
      free(all);
      return c->status;
    }
    memcpy(part->indices, all, n * sizeof *all);
    free(all);
    part->index_count = n;
    for (size_t i = 0; i < n; ++i)
      if (part->indices[i] >= nv)
        return gl_fail(c, SKS_ERR_PARSE, "%s: index %zu is %u, but there are %zu vertices", where, i,
                       part->indices[i], nv);
  } else {
    size_t n = nv - nv % 3;
    if (!(part->indices = gl_alloc(c, n, sizeof(uint32_t)))) return c->status;
    if (nv > UINT32_MAX) return gl_fail(c, SKS_ERR_UNSUPPORTED, "%s: too many vertices", where);
    part->index_count = n;
    for (size_t i = 0; i < n; ++i) part->indices[i] = (uint32_t)i;
  }
  return SKS_OK;
}

/* Appends "file: message — left out of TAIL" (tail NULL: "file: message")
 * to the model's load warnings. */
static sks_result gl_note(gl_ctx *c, sks_model *m, const char *tail, const char *fmt, ...) {
  char msg[900], line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (tail) snprintf(line, sizeof line, "%s: %s — left out of %s", c->name, msg, tail);
  else snprintf(line, sizeof line, "%s: %s", c->name, msg);
  return sks_model_note(m, line) ? SKS_OK : gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
}
#define gl_warn(c, m, ...) gl_note(c, m, "the model's images", __VA_ARGS__)

/* A primitive's morph targets for a from-scratch write: POSITION / NORMAL /
 * TANGENT deltas (VEC3 of float or integers, as glTF allows), the mesh's
 * default weights and extras.targetNames (strings; others unnamed). At most
 * SKS_MAX_MORPH_TARGETS, the rest left out with a warning. A write from
 * the kept document keeps the file's targets as they are. */
static sks_result read_morph_targets(gl_ctx *c, sks_model *m, const cJSON *mj, const cJSON *pj, size_t mi,
                                     size_t pk, sks_mesh_part *part) {
  const cJSON *targets = cJSON_GetObjectItemCaseSensitive(pj, "targets");
  if (!cJSON_IsArray(targets) || !targets->child) return SKS_OK;
  size_t n = 0;
  const cJSON *tj;
  cJSON_ArrayForEach(tj, targets) ++n;
  sks_result r;
  if (n > SKS_MAX_MORPH_TARGETS) {
    if ((r = gl_note(c, m, "a from-scratch write", "mesh %zu primitive %zu: %zu morph targets, over the limit of %d "
                     "(SKS_MAX_MORPH_TARGETS): targets %d..", mi, pk, n, SKS_MAX_MORPH_TARGETS, SKS_MAX_MORPH_TARGETS)))
      return r;
    n = SKS_MAX_MORPH_TARGETS;
  }
  if (!(part->morph_targets = gl_alloc(c, n, sizeof *part->morph_targets))) return c->status;
  part->morph_target_count = n;
  const cJSON *weights = cJSON_GetObjectItemCaseSensitive(mj, "weights");
  const cJSON *extras = cJSON_GetObjectItemCaseSensitive(mj, "extras");
  const cJSON *names = cJSON_IsObject(extras) ? cJSON_GetObjectItemCaseSensitive(extras, "targetNames") : NULL;
  const cJSON *w = cJSON_IsArray(weights) ? weights->child : NULL; /* walked beside the targets */
  const cJSON *nm = cJSON_IsArray(names) ? names->child : NULL;
  size_t t = 0;
  for (tj = targets->child; tj && t < n; tj = tj->next, ++t) {
    sks_morph_target *mt = &part->morph_targets[t];
    if (cJSON_IsNumber(w) && isfinite(w->valuedouble) && fabs(w->valuedouble) <= 1e6)
      mt->default_weight = (float)w->valuedouble;
    if (cJSON_IsString(nm) && nm->valuestring && *nm->valuestring &&
        !(mt->name = gl_strdup(c, nm->valuestring)))
      return c->status;
    w = w ? w->next : NULL;
    nm = nm ? nm->next : NULL;
    char where[96];
    snprintf(where, sizeof where, "mesh %zu primitive %zu target %zu", mi, pk, t);
    if (!cJSON_IsObject(tj)) return gl_fail(c, SKS_ERR_PARSE, "%s: not an object", where);
    static const char *const attrs[3] = {"POSITION", "NORMAL", "TANGENT"};
    float **dst[3] = {&mt->position_deltas, &mt->normal_deltas, &mt->tangent_deltas};
    for (int q = 0; q < 3; ++q) {
      long ai;
      if ((r = js_index(c, tj, attrs[q], where, 0, c->n_accessors, "accessor", &ai))) return r;
      if (ai < 0) continue;
      char usage[128];
      snprintf(usage, sizeof usage, "%s of %s", attrs[q], where);
      gl_acc a;
      if ((r = acc_load_f(c, (size_t)ai, usage, 3, M_FLOAT | M_BYTE | M_SHORT, 0,
                          "VEC3 of float / byte / short", &a, dst[q])))
        return r;
      if (a.count != part->vertex_count)
        return gl_fail(c, SKS_ERR_PARSE, "%s: %s accessor %ld has %zu elements, POSITION %zu", where, attrs[q], ai,
                       a.count, part->vertex_count);
    }
  }
  return SKS_OK;
}

static sks_result read_meshes(gl_ctx *c, sks_model *m) {
  sks_result r;
  /* Pass 1: validate references and count parts. */
  size_t total = 0;
  for (size_t i = 0; i < c->n_nodes; ++i) {
    const cJSON *nj = c->nodes.items[i], *mj, *prims, *pj;
    char where[48];
    long mi, si;
    size_t np;
    snprintf(where, sizeof where, "node %zu", i);
    if ((r = js_index(c, nj, "mesh", where, 0, c->n_meshes, "mesh", &mi)) ||
        (r = js_index(c, nj, "skin", where, 0, c->n_skins, "skin", &si)))
      return r;
    if (mi < 0 || c->node_joint[i] < 0) continue;
    snprintf(where, sizeof where, "mesh %ld", mi);
    if ((r = js_item(c, &c->meshes, (size_t)mi, "mesh", &mj)) ||
        (r = js_array(c, mj, "primitives", where, &prims, &np)))
      return r;
    size_t k = 0;
    cJSON_ArrayForEach(pj, prims) {
      const cJSON *attrs;
      char pw[64];
      snprintf(pw, sizeof pw, "mesh %ld primitive %zu", mi, k++);
      if (!cJSON_IsObject(pj)) return gl_fail(c, SKS_ERR_PARSE, "%s must be an object", pw);
      if ((r = js_object(c, pj, "attributes", pw, &attrs))) return r;
      /* Primitives without POSITION are skipped (spec: not rendered). */
      if (attrs && cJSON_GetObjectItemCaseSensitive(attrs, "POSITION")) ++total;
    }
  }
  if (!total) return SKS_OK;
  if (!(m->parts = gl_alloc(c, total, sizeof(sks_mesh_part)))) return c->status;
  m->part_count = total;
  c->part_mesh = malloc(total * sizeof *c->part_mesh);
  c->part_prim = malloc(total * sizeof *c->part_prim);
  if (!c->part_mesh || !c->part_prim) return gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; i < total; ++i) {
    m->parts[i].skin = -1;
    m->parts[i].material = -1;
  }
  size_t pidx = 0;
  for (size_t i = 0; i < c->n_nodes; ++i) {
    const cJSON *nj = c->nodes.items[i];
    const cJSON *mj, *prims, *pj;
    const char *mname;
    long mi, si;
    char where[48];
    snprintf(where, sizeof where, "node %zu", i);
    js_index(c, nj, "mesh", where, 0, c->n_meshes, "mesh", &mi);
    js_index(c, nj, "skin", where, 0, c->n_skins, "skin", &si);
    if (mi < 0 || c->node_joint[i] < 0) continue;
    mj = c->meshes.items[mi];
    prims = cJSON_GetObjectItemCaseSensitive(mj, "primitives");
    snprintf(where, sizeof where, "mesh %ld", mi);
    if ((r = js_string(c, mj, "name", where, &mname))) return r;
    int np = cJSON_GetArraySize(prims);
    size_t k = 0;
    cJSON_ArrayForEach(pj, prims) {
      const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(pj, "attributes");
      size_t pk = k++;
      if (!attrs || !cJSON_GetObjectItemCaseSensitive(attrs, "POSITION")) continue;
      c->part_mesh[pidx] = (int32_t)mi;
      c->part_prim[pidx] = (int32_t)pk;
      sks_mesh_part *part = &m->parts[pidx++];
      char name[256];
      if (mname && np == 1) snprintf(name, sizeof name, "%s", mname);
      else if (mname) snprintf(name, sizeof name, "%s_%zu", mname, pk);
      else if (np == 1) snprintf(name, sizeof name, "mesh_%ld", mi);
      else snprintf(name, sizeof name, "mesh_%ld_%zu", mi, pk);
      if (!(part->name = gl_strdup(c, name))) return c->status;
      part->node = c->node_joint[i];
      if ((r = read_primitive(c, pj, (size_t)mi, pk, si, part)) ||
          (r = read_morph_targets(c, m, mj, pj, (size_t)mi, pk, part)))
        return r;
    }
  }
  return SKS_OK;
}


/* ---- animations ---------------------------------------------------------- */

/* A sampler's interpolation and key times (input), and its output accessor
 * index; where names the sampler. */
static sks_result read_sampler_input(gl_ctx *c, const cJSON *sj, const char *where, sks_interpolation *interp_out,
                                     float **times, size_t *key_count, long *out) {
  sks_result r;
  long in;
  const char *interp;
  if ((r = js_index(c, sj, "input", where, 1, c->n_accessors, "accessor", &in)) ||
      (r = js_index(c, sj, "output", where, 1, c->n_accessors, "accessor", out)) ||
      (r = js_string(c, sj, "interpolation", where, &interp)))
    return r;
  if (!interp || strcmp(interp, "LINEAR") == 0) *interp_out = SKS_INTERP_LINEAR;
  else if (strcmp(interp, "STEP") == 0) *interp_out = SKS_INTERP_STEP;
  else if (strcmp(interp, "CUBICSPLINE") == 0) *interp_out = SKS_INTERP_CUBICSPLINE;
  else return gl_fail(c, SKS_ERR_PARSE, "%s: unknown interpolation \"%s\"", where, interp);
  gl_acc a;
  char usage[96];
  snprintf(usage, sizeof usage, "input of %s", where);
  if ((r = acc_load_f(c, (size_t)in, usage, 1, M_FLOAT, 0, "SCALAR of float", &a, times)))
    return r;
  *key_count = a.count;
  const float *t = *times;
  for (size_t k = 0; k < a.count; ++k) {
    if (!isfinite(t[k]))
      return gl_fail(c, SKS_ERR_PARSE, "%s: key time %zu is not finite", where, k);
    if (k && t[k] < t[k - 1])
      return gl_fail(c, SKS_ERR_PARSE, "%s: key times decrease at key %zu (%g after %g)", where, k,
                     (double)t[k], (double)t[k - 1]);
  }
  return SKS_OK;
}

/* The morph target count of node nd's mesh (its first primitive's targets;
 * glTF requires every primitive to have as many), 0 without one. */
static size_t node_morph_count(const gl_ctx *c, size_t nd) {
  const cJSON *mj = cJSON_GetObjectItemCaseSensitive(c->nodes.items[nd], "mesh");
  if (!cJSON_IsNumber(mj) || mj->valuedouble < 0 || mj->valuedouble >= (double)c->n_meshes) return 0;
  const cJSON *prims = cJSON_GetObjectItemCaseSensitive(c->meshes.items[(size_t)mj->valuedouble], "primitives");
  const cJSON *targets = cJSON_IsArray(prims) && prims->child
                             ? cJSON_GetObjectItemCaseSensitive(prims->child, "targets") : NULL;
  return cJSON_IsArray(targets) ? (size_t)cJSON_GetArraySize(targets) : 0;
}

/* A "weights" channel: key count x the mesh's morph target count weights
 * (x 3 for CUBICSPLINE), SCALAR of float or normalized integers. */
static sks_result read_morph_track(gl_ctx *c, const cJSON *sj, size_t ai, long si, long node, size_t targets,
                                   sks_morph_track *t) {
  char where[96];
  snprintf(where, sizeof where, "animation %zu sampler %ld (weights of node %ld)", ai, si, node);
  sks_result r;
  long out;
  if ((r = read_sampler_input(c, sj, where, &t->interpolation, &t->times, &t->key_count, &out))) return r;
  t->weight_count = targets;
  char usage[128];
  snprintf(usage, sizeof usage, "output of %s", where);
  gl_acc a;
  if ((r = acc_resolve(c, (size_t)out, usage, &a)) ||
      (r = acc_expect(c, &a, usage, 1, M_FLOAT | M_BYTE | M_UBYTE | M_SHORT | M_USHORT,
                      M_BYTE | M_UBYTE | M_SHORT | M_USHORT, "SCALAR of float or normalized integers")))
    return r;
  size_t per_key = t->interpolation == SKS_INTERP_CUBICSPLINE ? 3 : 1;
  if (t->key_count > SKS_MAX_MORPH_TRACK_VALUES / targets / per_key)
    return gl_fail(c, SKS_ERR_UNSUPPORTED, "%s: %zu keys x %zu morph targets is over the limit of %u weights",
                   where, t->key_count, targets, SKS_MAX_MORPH_TRACK_VALUES);
  size_t want = t->key_count * targets * per_key;
  if (a.count != want)
    return gl_fail(c, SKS_ERR_PARSE, "%s: output accessor %ld has %zu weights; %zu keys x %zu morph targets%s "
                   "need %zu", where, out, a.count, t->key_count, targets,
                   per_key == 3 ? " x 3 (CUBICSPLINE)" : "", want);
  if (!(t->values = gl_alloc(c, want ? want : 1, sizeof(float)))) return c->status;
  acc_read_f(&a, t->values);
  for (size_t i = 0; i < want; ++i)
    if (!isfinite(t->values[i]))
      return gl_fail(c, SKS_ERR_PARSE, "%s: weight %zu is not finite", where, i);
  return SKS_OK;
}

static sks_result read_track(gl_ctx *c, const cJSON *sj, size_t ai, long si, sks_track *t) {
  char where[64];
  snprintf(where, sizeof where, "animation %zu sampler %ld", ai, si);
  sks_result r;
  long out;
  if ((r = read_sampler_input(c, sj, where, &t->interpolation, &t->times, &t->key_count, &out))) return r;
  gl_acc a;
  char usage[96];
  uint32_t comps = sks_track_components(t->path);
  size_t per_key = t->interpolation == SKS_INTERP_CUBICSPLINE ? 3 : 1;
  snprintf(usage, sizeof usage, "output of %s", where);
  if ((r = acc_resolve(c, (size_t)out, usage, &a))) return r;
  if (t->path == SKS_PATH_ROTATION)
    r = acc_expect(c, &a, usage, 4, M_FLOAT | M_BYTE | M_UBYTE | M_SHORT | M_USHORT,
                   M_BYTE | M_UBYTE | M_SHORT | M_USHORT, "VEC4 of float or normalized integers");
  else
    r = acc_expect(c, &a, usage, 3, M_FLOAT | M_BYTE | M_UBYTE | M_SHORT | M_USHORT, 0,
                   "VEC3 of float (or quantized integers)");
  if (r) return r;
  if (a.count / per_key < t->key_count || a.count % per_key)
    return gl_fail(c, SKS_ERR_PARSE, "%s: output accessor %ld has %zu values for %zu keys%s", where,
                   out, a.count, t->key_count, per_key == 3 ? " (CUBICSPLINE needs 3 per key)" : "");
  float *vals = gl_alloc(c, a.count, comps * sizeof(float));
  if (!vals) return c->status;
  acc_read_f(&a, vals);
  t->values = vals; /* extra values beyond key_count * per_key are ignored */
  return SKS_OK;
}

static sks_result read_animations(gl_ctx *c, sks_model *m) {
  sks_result r;
  if (!c->n_animations) return SKS_OK;
  if (!(m->clips = gl_alloc(c, c->n_animations, sizeof(sks_clip)))) return c->status;
  if (!(c->clip_anim = gl_alloc(c, c->n_animations, sizeof *c->clip_anim))) return c->status;
  for (size_t ai = 0; ai < c->n_animations; ++ai) {
    /* the clip being read counts, so an error frees what it holds */
    sks_clip *clip = &m->clips[m->clip_count++];
    c->clip_anim[m->clip_count - 1] = (int32_t)ai;
    const cJSON *aj, *channels, *ch;
    const char *name;
    size_t nc;
    char where[48], buf[48];
    snprintf(where, sizeof where, "animation %zu", ai);
    if ((r = js_item(c, &c->animations, ai, "animation", &aj)) ||
        (r = js_string(c, aj, "name", where, &name)) ||
        (r = js_vec(c, aj, "samplers", where, &c->samplers)) ||
        (r = js_array(c, aj, "channels", where, &channels, &nc)))
      return r;
    if (!name) {
      snprintf(buf, sizeof buf, "animation_%zu", ai);
      name = buf;
    }
    if (!(clip->name = gl_strdup(c, name))) return c->status;
    /* Pass 1: which channels become tracks (nw: morph weight tracks). */
    size_t nt = 0, nw = 0;
    size_t k = 0;
    cJSON_ArrayForEach(ch, channels) {
      char cw[64];
      const cJSON *tj;
      const char *path;
      long node, si;
      snprintf(cw, sizeof cw, "animation %zu channel %zu", ai, k++);
      if (!cJSON_IsObject(ch)) return gl_fail(c, SKS_ERR_PARSE, "%s must be an object", cw);
      if ((r = js_index(c, ch, "sampler", cw, 1, c->samplers.count, "sampler", &si)) ||
          (r = js_object(c, ch, "target", cw, &tj)))
        return r;
      if (!tj) return gl_fail(c, SKS_ERR_PARSE, "%s: \"target\" is missing", cw);
      if ((r = js_index(c, tj, "node", cw, 0, c->n_nodes, "node", &node)) ||
          (r = js_string(c, tj, "path", cw, &path)))
        return r;
      if (!path) return gl_fail(c, SKS_ERR_PARSE, "%s: target \"path\" is missing", cw);
      if (node >= 0 && c->node_joint[node] >= 0 &&
          (!strcmp(path, "translation") || !strcmp(path, "rotation") || !strcmp(path, "scale")))
        ++nt;
      if (node >= 0 && c->node_joint[node] >= 0 && !strcmp(path, "weights")) ++nw;
    }
    if (nt) {
      if (!(clip->tracks = gl_alloc(c, nt, sizeof(sks_track)))) return c->status;
      clip->track_count = nt;
    }
    if (nw) {
      if (!(clip->morph_tracks = gl_alloc(c, nw, sizeof(sks_morph_track)))) return c->status;
    }
    size_t ti = 0;
    float duration = 0;
    cJSON_ArrayForEach(ch, channels) {
      const cJSON *tj = cJSON_GetObjectItemCaseSensitive(ch, "target");
      const char *path = cJSON_GetObjectItemCaseSensitive(tj, "path")->valuestring;
      const cJSON *nj = cJSON_GetObjectItemCaseSensitive(tj, "node");
      if (!nj) continue;
      int32_t joint = c->node_joint[(size_t)nj->valuedouble];
      sks_track_path tp;
      int weights = 0;
      if (!strcmp(path, "translation")) tp = SKS_PATH_TRANSLATION;
      else if (!strcmp(path, "rotation")) tp = SKS_PATH_ROTATION;
      else if (!strcmp(path, "scale")) tp = SKS_PATH_SCALE;
      else if (!strcmp(path, "weights")) { tp = SKS_PATH_TRANSLATION; weights = 1; }
      else continue;
      if (joint < 0) continue;
      long si = (long)cJSON_GetObjectItemCaseSensitive(ch, "sampler")->valuedouble;
      const cJSON *sj;
      if ((r = js_item(c, &c->samplers, (size_t)si, "sampler", &sj))) return r;
      if (weights) {
        long nd = (long)nj->valuedouble;
        size_t targets = node_morph_count(c, (size_t)nd);
        int dup = 0;
        for (size_t q = 0; q < clip->morph_track_count; ++q) dup |= clip->morph_tracks[q].node == joint;
        if (!targets || dup) {
          if ((r = gl_note(c, m, "the model's clips",
                           "animation %zu '%s': a \"weights\" channel on node %ld, %s", ai, clip->name, nd,
                           dup ? "which an earlier channel of the animation already animates"
                               : "which has no mesh with morph targets")))
            return r;
          continue;
        }
        /* the track being read counts, so an error frees what it holds */
        sks_morph_track *mt = &clip->morph_tracks[clip->morph_track_count++];
        mt->node = joint;
        if ((r = read_morph_track(c, sj, ai, si, nd, targets, mt))) return r;
        if (mt->key_count && mt->times[mt->key_count - 1] > duration) duration = mt->times[mt->key_count - 1];
        continue;
      }
      sks_track *t = &clip->tracks[ti++];
      t->joint = joint;
      t->path = tp;
      if ((r = read_track(c, sj, ai, si, t))) return r;
      if (t->key_count && t->times[t->key_count - 1] > duration)
        duration = t->times[t->key_count - 1];
    }
    clip->duration = duration;
    { /* key times as glTF allows (a negative first key or two keys at one
       * time loaded and baked, and then could not be written) */
      double shift;
      size_t bumped;
      sks_clip_times_for_gltf(clip, &shift, &bumped);
      if (shift > 0 && (r = gl_note(c, m, NULL, "animation %zu '%s': its keys start at %g s, before 0 — moved to start "
                                    "at 0 (glTF key times start at 0)", ai, clip->name, -shift)))
        return r;
      if (bumped && (r = gl_note(c, m, NULL, "animation %zu '%s': %zu key(s) at their sampler's previous key time — "
                                 "moved one float step after it (glTF key times increase strictly)", ai, clip->name,
                                 bumped)))
        return r;
    }
    if (!nt && !clip->morph_track_count) {
      /* Nothing of the model moves: a player shows the rest pose whatever
       * the clip, and glTF cannot write an animation without a channel. */
      if ((r = gl_note(c, m, "the model's clips",
                       "animation %zu '%s' has no translation, rotation, scale or weights channel on a node of "
                       "the model%s", ai, clip->name, nc ? "" : " (no channels)")))
        return r;
      sks_clip_free(clip);
      memset(clip, 0, sizeof *clip);
      --m->clip_count;
    }
  }
  if (!m->clip_count) {
    free(m->clips);
    m->clips = NULL;
  }
  return SKS_OK;
}

/* ---- container ----------------------------------------------------------- */

static sks_result parse_container(gl_ctx *c, const uint8_t *data, size_t size) {
  const char *json = (const char *)data;
  size_t json_len = size;
  int glb = 0;
  if (size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF) { /* UTF-8 BOM */
    json += 3;
    json_len -= 3;
  }
  if (size >= 4 && rd_u32(data) == GLB_MAGIC) {
    glb = 1;
    if (size < 20)
      return gl_fail(c, SKS_ERR_PARSE, "GLB is %zu bytes, too short for a header and a chunk", size);
    uint32_t version = rd_u32(data + 4), length = rd_u32(data + 8);
    if (version != 2)
      return gl_fail(c, SKS_ERR_UNSUPPORTED, "GLB version %u (only glTF 2.0 is supported)", version);
    if (length > size)
      return gl_fail(c, SKS_ERR_PARSE, "GLB header says %u bytes, the file has %zu (truncated?)",
                     length, size);
    size_t pos = 12, chunk = 0;
    json = NULL;
    while (pos < length) {
      if (length - pos < 8)
        return gl_fail(c, SKS_ERR_PARSE, "GLB chunk %zu header at byte %zu is truncated", chunk, pos);
      uint32_t clen = rd_u32(data + pos), ctype = rd_u32(data + pos + 4);
      if (clen > length - pos - 8)
        return gl_fail(c, SKS_ERR_PARSE, "GLB chunk %zu at byte %zu: length %u exceeds the file (%u bytes)",
                       chunk, pos, clen, length);
      const uint8_t *cdata = data + pos + 8;
      if (chunk == 0) {
        if (ctype != GLB_JSON)
          return gl_fail(c, SKS_ERR_PARSE, "GLB first chunk is not JSON (type 0x%08X)", ctype);
        json = (const char *)cdata;
        json_len = clen;
      } else if (chunk == 1 && ctype == GLB_BIN) {
        c->bin = cdata;
        c->bin_size = clen;
        c->has_bin = 1;
      } /* other chunks are ignored (spec) */
      pos += 8 + (size_t)clen;
      ++chunk;
    }
    if (!json) return gl_fail(c, SKS_ERR_PARSE, "GLB has no JSON chunk");
  }
  if (!glb) {
    size_t i = 0;
    while (i < json_len && (json[i] == ' ' || json[i] == '\t' || json[i] == '\r' || json[i] == '\n'))
      ++i;
    if (i == json_len || json[i] != '{')
      return gl_fail(c, SKS_ERR_PARSE, "not a glTF file (no GLB header, no JSON object)");
  }
  const char *at = NULL;
  c->json_text = json;
  c->json_len = json_len;
  c->root = cJSON_ParseWithLengthOpts(json, json_len, &at, 0);
  if (!c->root) {
    long off = (at && at >= json && at <= json + json_len) ? (long)(at - json) : -1;
    return gl_fail(c, SKS_ERR_PARSE, "invalid JSON%s (near byte %ld)",
                   glb ? " in the GLB JSON chunk" : "", off);
  }
  if (!cJSON_IsObject(c->root))
    return gl_fail(c, SKS_ERR_PARSE, "the glTF JSON is %s, not an object", js_type_name(c->root));
  return SKS_OK;
}

static sks_result keep_source(gl_ctx *c, sks_model *m);
static sks_result read_images(gl_ctx *c, sks_model *m);
static const char *base_name(const char *path);

static sks_result read_model(gl_ctx *c, const uint8_t *data, size_t size, sks_model *m) {
  sks_result r;
  if ((r = parse_container(c, data, size))) return r;
  const cJSON *root = c->root, *asset, *req, *e;
  size_t nreq;
  if ((r = js_object(c, root, "asset", "glTF", &asset))) return r;
  if (asset) {
    const char *version;
    if ((r = js_string(c, asset, "version", "asset", &version))) return r;
    if (version && (version[0] != '2' || (version[1] != '\0' && version[1] != '.')))
      return gl_fail(c, SKS_ERR_UNSUPPORTED, "glTF version %s (only 2.x is supported)", version);
  }
  if ((r = js_array(c, root, "extensionsRequired", "", &req, &nreq))) return r;
  cJSON_ArrayForEach(e, req) {
    if (cJSON_IsString(e) && !strcmp(e->valuestring, "KHR_draco_mesh_compression")) c->needs_draco = 1;
    if (cJSON_IsString(e) && !strcmp(e->valuestring, "KHR_draco_mesh_compression"))
      return gl_fail(c, SKS_ERR_UNSUPPORTED, "required extension %s is not supported by the native reader",
                     e->valuestring);
  }
  if ((r = js_vec(c, root, "accessors", "", &c->accessors)) ||
      (r = js_vec(c, root, "bufferViews", "", &c->views)) ||
      (r = js_vec(c, root, "buffers", "", &c->buffers_json)) ||
      (r = js_vec(c, root, "nodes", "", &c->nodes)) ||
      (r = js_vec(c, root, "meshes", "", &c->meshes)) ||
      (r = js_vec(c, root, "skins", "", &c->skins)) ||
      (r = js_vec(c, root, "materials", "", &c->materials)) ||
      (r = js_vec(c, root, "animations", "", &c->animations)) ||
      (r = js_vec(c, root, "scenes", "", &c->scenes)))
    return r;
  c->n_accessors = c->accessors.count;
  c->n_views = c->views.count;
  c->n_buffers = c->buffers_json.count;
  c->n_nodes = c->nodes.count;
  c->n_meshes = c->meshes.count;
  c->n_skins = c->skins.count;
  c->n_materials = c->materials.count;
  c->n_animations = c->animations.count;
  c->n_scenes = c->scenes.count;
  long scene;
  /* "scene" is only a default choice; every scene's nodes are read anyway. */
  if ((r = js_index(c, root, "scene", "glTF", 0, c->n_scenes ? c->n_scenes : SIZE_MAX, "scene",
                    &scene)))
    return r;
  if (c->n_nodes > INT32_MAX / 2)
    return gl_fail(c, SKS_ERR_UNSUPPORTED, "too many nodes (%zu)", c->n_nodes);
  c->buffers = calloc(c->n_buffers ? c->n_buffers : 1, sizeof *c->buffers);
  c->node_parent = malloc((c->n_nodes ? c->n_nodes : 1) * sizeof(int32_t));
  c->node_joint = malloc((c->n_nodes ? c->n_nodes : 1) * sizeof(int32_t));
  if (!c->buffers || !c->node_parent || !c->node_joint)
    return gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; i < c->n_nodes; ++i) c->node_joint[i] = -1;
  if ((r = build_skeleton(c, m)) || (r = read_materials(c, m)) || (r = read_skins(c, m)) ||
      (r = read_meshes(c, m)) || (r = read_animations(c, m)) || (r = keep_source(c, m)) ||
      (r = read_images(c, m)))
    return r;
  if (c->meshopt_views) {
    /* the kept document's views hold compressed bytes: an output is
     * written from the model as read, not from that document */
    sks_gltf_source_free(m->gltf_source);
    m->gltf_source = NULL;
    return gl_note(c, m, NULL,
                   "EXT_meshopt_compression: %zu buffer views decoded (meshoptimizer); an output is written "
                   "from the model as read (glTF extensions and extras the reader keeps otherwise are left out)",
                   c->meshopt_views);
  }
  return SKS_OK;
}

/* ---- the kept source document -------------------------------------------- */

/* Keeps the JSON, every buffer's bytes and external images in m->gltf_source.
 * A buffer or image that cannot be read is kept as NULL (the writer then
 * keeps its uri, or falls back to writing the model from scratch); it does
 * not fail the load, and leaves err as it was. */
static sks_result keep_source(gl_ctx *c, sks_model *m) {
  sks_gltf_source *src = calloc(1, sizeof *src);
  if (!src) return gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  m->gltf_source = src;
  sks_error saved;
  if (c->err) saved = *c->err;
  if (!(src->json = malloc(c->json_len + 1))) return gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  memcpy(src->json, c->json_text, c->json_len);
  src->json[c->json_len] = '\0';
  src->json_len = c->json_len;
  src->buffer_count = c->n_buffers;
  src->buffers = calloc(c->n_buffers ? c->n_buffers : 1, sizeof *src->buffers);
  src->buffer_sizes = calloc(c->n_buffers ? c->n_buffers : 1, sizeof *src->buffer_sizes);
  src->node_count = c->n_nodes;
  src->node_joint = malloc((c->n_nodes ? c->n_nodes : 1) * sizeof *src->node_joint);
  if (!src->buffers || !src->buffer_sizes || !src->node_joint)
    return gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  if (c->n_nodes) memcpy(src->node_joint, c->node_joint, c->n_nodes * sizeof *src->node_joint);
  for (size_t b = 0; b < c->n_buffers; ++b) {
    const gl_buffer *gb;
    if (buffer_get(c, b, &gb) != SKS_OK) {
      if (c->resource_over) return c->status;
      c->status = SKS_OK;
      continue;
    }
    if (!(src->buffers[b] = malloc(gb->size ? gb->size : 1)))
      return gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
    if (gb->size) memcpy(src->buffers[b], gb->data, gb->size);
    src->buffer_sizes[b] = gb->size;
  }
  /* a view no accessor reads is never resolved, so the load does not see
   * one that lies outside its buffer; a write cannot keep the document then
   * (gltf_write.c: from scratch), and a validator calls the file invalid */
  for (size_t v = 0; v < c->n_views; ++v) {
    double off, len;
    char what[96];
    if (!sks_gltf_source_view_outside(src, c->views.items[v], &off, &len, what, sizeof what)) continue;
    sks_result rn = gl_note(c, m, NULL,
                            "bufferView %zu (byteOffset %.17g, byteLength %.17g) %s; nothing the model uses reads it, "
                            "but a write of this model cannot keep the file's document and writes the model from "
                            "scratch",
                            v, off, len, what);
    if (rn != SKS_OK) return rn;
    break; /* one is enough to say */
  }
  gl_vec images = {0};
  if (js_vec(c, c->root, "images", "", &images) == SKS_OK && images.count) {
    src->image_count = images.count;
    src->images = calloc(images.count, sizeof *src->images);
    src->image_sizes = calloc(images.count, sizeof *src->image_sizes);
    if (!src->images || !src->image_sizes) {
      free(images.items);
      return gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < images.count; ++i) {
      const cJSON *uj = cJSON_GetObjectItemCaseSensitive(images.items[i], "uri");
      if (!cJSON_IsString(uj)) continue;
      if (strncmp(uj->valuestring, "data:", 5) == 0) { /* decoded: a GLB carries it in BIN */
        const char *comma = strchr(uj->valuestring, ',');
        if (!comma || comma - uj->valuestring < 12 || strncmp(comma - 7, ";base64", 7) != 0) continue;
        size_t len = strlen(comma + 1), bad = 0;
        uint8_t *dec = malloc(len / 4 * 3 + 3);
        if (!dec) {
          free(images.items);
          return gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
        }
        long n = b64_decode(comma + 1, len, dec, &bad);
        if (n < 0) { free(dec); continue; }
        src->images[i] = dec;
        src->image_sizes[i] = (size_t)n;
        continue;
      }
      if (!c->base_dir) continue;
      char what[48], *path = NULL;
      snprintf(what, sizeof what, "image %zu", i);
      if (sks_resource_resolve(c->base_dir, c->resource_root, uj->valuestring, c->name, what, &path,
                               c->err) != SKS_OK)
        continue;
      uint8_t *data = NULL;
      size_t size = 0;
      uint64_t left = c->resource_cap - c->resource_used;
      size_t limit = left < GL_MAX_IMAGE_BYTES ? (size_t)left : GL_MAX_IMAGE_BYTES;
      report_file(c, path);
      sks_result rr = sks_resource_read(path, SIZE_MAX, limit, &data, &size, c->name, what, c->err);
      free(path);
      if (rr == SKS_OK) {
        src->images[i] = data;
        src->image_sizes[i] = size;
        c->resource_used += size;
      } else if (rr == SKS_ERR_UNSUPPORTED && !data && size > limit && size <= GL_MAX_IMAGE_BYTES) {
        free(images.items);
        c->resource_over = 1;
        return resource_cap_fail(c, what, uj->valuestring, size);
      }
    }
  }
  free(images.items);
  c->status = SKS_OK;
  if (c->err) *c->err = saved;
  if (!sks_gltf_source_snapshot(src, m)) return gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  if (m->part_count) {
    src->part_mesh = c->part_mesh;
    src->part_prim = c->part_prim;
    c->part_mesh = c->part_prim = NULL;
  }
  src->clip_anim = c->clip_anim; /* NULL when the file has no animation */
  c->clip_anim = NULL;
  return SKS_OK;
}

/* ---- the model's images ------------------------------------------------- */

/* glTF image ii's bytes, without reading anything again: a bufferView in a
 * buffer already loaded, or the bytes keep_source read for a data: or file
 * uri. NULL (and *why set) when there are none. */
static const uint8_t *image_bytes(gl_ctx *c, const sks_gltf_source *src, const cJSON *ij, size_t ii,
                                  size_t *size, char *why, size_t why_size) {
  const cJSON *bv = cJSON_GetObjectItemCaseSensitive(ij, "bufferView");
  const cJSON *uj = cJSON_GetObjectItemCaseSensitive(ij, "uri");
  double v;
  if (bv) {
    if (!js_is_uint(bv, &v) || v >= (double)c->n_views) {
      snprintf(why, why_size, "its bufferView is not an index below %zu", c->n_views);
      return NULL;
    }
    sks_error saved;
    if (c->err) saved = *c->err;
    const uint8_t *data;
    size_t stride;
    sks_result r = view_get(c, (size_t)v, &data, size, &stride);
    if (r) {
      snprintf(why, why_size, "%s", c->err ? c->err->message : "its bufferView cannot be read");
      c->status = SKS_OK;
      if (c->err) *c->err = saved;
      return NULL;
    }
    return data;
  }
  if (!cJSON_IsString(uj)) {
    snprintf(why, why_size, "it has neither a bufferView nor a uri");
    return NULL;
  }
  if (ii >= src->image_count || !src->images[ii]) {
    int data = strncmp(uj->valuestring, "data:", 5) == 0;
    snprintf(why, why_size, "uri '%.200s%s' could not be read%s", data ? "data:..." : uj->valuestring,
             !data && strlen(uj->valuestring) > 200 ? "..." : "",
             data ? " (not a base64 data URI)"
             : c->base_dir ? " (outside the model's folder, missing or not a regular file)"
                           : " (no folder to resolve it in)");
    return NULL;
  }
  *size = src->image_sizes[ii];
  return src->images[ii];
}

/* A sampler field: 0 (unset) or one of the glTF enums sks_texture_ref lists. */
static int32_t sampler_field(const cJSON *smp, const char *key, int *bad) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(smp, key);
  double v;
  if (!j) return 0;
  if (!js_is_uint(j, &v) || v > 65535) { *bad = 1; return 0; }
  return (int32_t)v;
}

/* The glTF image a textureInfo samples, with its texture's sampler; SKS_OK
 * and *ii = SIZE_MAX (after a warning) when it cannot be carried. */
static sks_result texture_info(gl_ctx *c, sks_model *m, const cJSON *ti_json, const gl_vec *textures,
                               const gl_vec *images, const gl_vec *samplers, size_t i, const char *mname,
                               const char *slot, sks_texture_ref *ref, size_t *ii) {
  double v;
  *ii = SIZE_MAX;
  const cJSON *tj = cJSON_IsObject(ti_json) ? cJSON_GetObjectItemCaseSensitive(ti_json, "index") : NULL;
  if (!js_is_uint(tj, &v) || v >= (double)textures->count)
    return gl_warn(c, m, "material %zu '%s': %s.index is not a texture index below %zu", i, mname, slot,
                   textures->count);
  size_t ti = (size_t)v;
  const cJSON *tc = cJSON_GetObjectItemCaseSensitive(ti_json, "texCoord");
  double set = 0;
  if (tc && (!js_is_uint(tc, &set) || set > 1))
    return gl_warn(c, m, "material %zu '%s': %s (texture %zu) is sampled with a texCoord other than 0 or 1 "
                   "(the model carries TEXCOORD_0 and TEXCOORD_1 only)", i, mname, slot, ti);
  const cJSON *sj = cJSON_GetObjectItemCaseSensitive(textures->items[ti], "source");
  if (!js_is_uint(sj, &v) || v >= (double)images->count)
    return gl_warn(c, m, "material %zu '%s': %s: texture %zu has no source image below %zu (an extension's "
                   "image type?)", i, mname, slot, ti, images->count);
  *ii = (size_t)v;
  ref->tex_coord = (int32_t)set;
  const cJSON *smj = cJSON_GetObjectItemCaseSensitive(textures->items[ti], "sampler");
  if (smj) {
    if (!js_is_uint(smj, &v) || v >= (double)samplers->count)
      return gl_warn(c, m, "material %zu '%s': %s: texture %zu: sampler is not an index below %zu (default "
                     "sampling used)", i, mname, slot, ti, samplers->count);
    const cJSON *smp = samplers->items[(size_t)v];
    int bad = 0;
    ref->mag_filter = sampler_field(smp, "magFilter", &bad);
    ref->min_filter = sampler_field(smp, "minFilter", &bad);
    ref->wrap_s = sampler_field(smp, "wrapS", &bad);
    ref->wrap_t = sampler_field(smp, "wrapT", &bad);
    ref->image = -1;
    if (bad || !sks_texture_ref_valid(ref)) {
      ref->mag_filter = ref->min_filter = ref->wrap_s = ref->wrap_t = 0;
      return gl_warn(c, m, "material %zu '%s': %s: sampler %zu has a filter or wrap mode glTF does not "
                     "define (default sampling used)", i, mname, slot, (size_t)v);
    }
  }
  return SKS_OK;
}

/* A textureInfo's KHR_texture_transform (offset, rotation, scale; glTF's
 * defaults for what it leaves out) into ref; not finite: none. */
static void texture_transform(const cJSON *info, sks_texture_ref *ref) {
  const cJSON *exts = cJSON_GetObjectItemCaseSensitive(info, "extensions");
  const cJSON *t = cJSON_IsObject(exts) ? cJSON_GetObjectItemCaseSensitive(exts, "KHR_texture_transform") : NULL;
  if (!cJSON_IsObject(t)) return;
  float v[5] = {0.0f, 0.0f, 0.0f, 1.0f, 1.0f}; /* offset, rotation, scale */
  const cJSON *off = cJSON_GetObjectItemCaseSensitive(t, "offset"), *sc = cJSON_GetObjectItemCaseSensitive(t, "scale");
  const cJSON *rot = cJSON_GetObjectItemCaseSensitive(t, "rotation");
  for (int k = 0; k < 2; ++k) {
    const cJSON *o = cJSON_IsArray(off) ? cJSON_GetArrayItem(off, k) : NULL, *q = cJSON_IsArray(sc) ? cJSON_GetArrayItem(sc, k) : NULL;
    if (cJSON_IsNumber(o)) v[k] = (float)o->valuedouble;
    if (cJSON_IsNumber(q)) v[3 + k] = (float)q->valuedouble;
  }
  if (cJSON_IsNumber(rot)) v[2] = (float)rot->valuedouble;
  for (int k = 0; k < 5; ++k)
    if (!isfinite(v[k])) return;
  ref->has_transform = 1;
  ref->offset[0] = v[0], ref->offset[1] = v[1], ref->rotation = v[2], ref->scale[0] = v[3], ref->scale[1] = v[4];
}

/* The model's images (PNG / JPEG, by signature) of every texture slot of
 * each material (base colour, metallic-roughness, normal, occlusion,
 * emissive and the KHR_materials_clearcoat / sheen / transmission / volume
 * textures: textureInfo -> textures[].source, with the texture's sampler;
 * the extensions' factors are read by read_material_extensions),
 * so a model written from scratch keeps its textures. Images are referenced,
 * never decoded; each used image is copied once, charged against the budget.
 * What cannot be carried is a warning, never an error (the kept document
 * still has it for a lossless write). */
static sks_result read_images(gl_ctx *c, sks_model *m) {
  const sks_gltf_source *src = m->gltf_source;
  if (!c->n_materials || !src) return SKS_OK;
  gl_vec textures = {0}, images = {0}, samplers = {0};
  int32_t *map = NULL; /* glTF image -> model image, -1 not yet, -2 left out */
  sks_result r = SKS_OK;
  sks_error saved;
  if (c->err) saved = *c->err;
  if (js_vec(c, c->root, "textures", "", &textures) || js_vec(c, c->root, "images", "", &images) ||
      js_vec(c, c->root, "samplers", "", &samplers)) {
    c->status = SKS_OK;
    if (c->err) *c->err = saved;
    r = gl_warn(c, m, "'textures', 'images' or 'samplers' is not an array of objects: textures");
    goto done;
  }
  if (!textures.count || !images.count) goto done;
  if (images.count > INT32_MAX / 2 ||
      !(map = malloc(images.count * sizeof *map)) ||
      !(m->images = calloc(images.count, sizeof *m->images))) {
    r = gl_fail(c, SKS_ERR_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < images.count; ++i) map[i] = -1;
  static const char *const slot_name[SKS_TEXTURE_SLOT_COUNT] = {
      "baseColorTexture", "metallicRoughnessTexture", "normalTexture", "occlusionTexture", "emissiveTexture",
      "clearcoatTexture", "clearcoatRoughnessTexture", "clearcoatNormalTexture", "sheenColorTexture",
      "sheenRoughnessTexture", "transmissionTexture", "thicknessTexture"};
  /* the extension object holding a slot's textureInfo (NULL: the material or its pbrMetallicRoughness) */
  static const char *const slot_ext[SKS_TEXTURE_SLOT_COUNT] = {
      NULL, NULL, NULL, NULL, NULL, "KHR_materials_clearcoat", "KHR_materials_clearcoat", "KHR_materials_clearcoat",
      "KHR_materials_sheen", "KHR_materials_sheen", "KHR_materials_transmission", "KHR_materials_volume"};
  for (size_t i = 0; i < c->n_materials && !r; ++i) {
    sks_material *mat = &m->materials[i];
    const cJSON *mj = c->materials.items[i];
    const cJSON *pbr = cJSON_GetObjectItemCaseSensitive(mj, "pbrMetallicRoughness");
    const char *mname = mat->name ? mat->name : "";
    for (int slot = 0; slot < SKS_TEXTURE_SLOT_COUNT && !r; ++slot) {
      const cJSON *holder = slot <= SKS_TEXTURE_METALLIC_ROUGHNESS ? (cJSON_IsObject(pbr) ? pbr : NULL) : mj;
      if (slot_ext[slot]) {
        const cJSON *exts = cJSON_GetObjectItemCaseSensitive(mj, "extensions");
        holder = cJSON_IsObject(exts) ? cJSON_GetObjectItemCaseSensitive(exts, slot_ext[slot]) : NULL;
        if (!cJSON_IsObject(holder)) holder = NULL;
      }
      const cJSON *info = holder ? cJSON_GetObjectItemCaseSensitive(holder, slot_name[slot]) : NULL;
      if (!info) continue;
      sks_texture_ref ref = {.image = -1};
      size_t ii;
      if ((r = texture_info(c, m, info, &textures, &images, &samplers, i, mname, slot_name[slot], &ref, &ii)) ||
          ii == SIZE_MAX)
        continue;
      texture_transform(info, &ref);
      if (map[ii] >= 0) {
        ref.image = map[ii];
        mat->textures[slot] = ref;
        continue;
      }
      if (map[ii] == -2) continue; /* warned once */
      map[ii] = -2;
      char why[1024];
      size_t size = 0;
      const uint8_t *bytes = image_bytes(c, src, images.items[ii], ii, &size, why, sizeof why);
      const char *mime = bytes ? sks_image_mime(bytes, size) : NULL;
      if (!bytes) {
        r = gl_warn(c, m, "material %zu '%s': image %zu: %s", i, mname, ii, why);
      } else if (!mime) {
        r = gl_warn(c, m, "material %zu '%s': image %zu is not a PNG or JPEG file (by its signature)", i,
                    mname, ii);
      } else if (size > c->budget) {
        r = gl_warn(c, m, "material %zu '%s': image %zu (%zu bytes) is more than the file's memory budget "
                    "allows", i, mname, ii, size);
      } else {
        sks_image *img = &m->images[m->image_count];
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(images.items[ii], "name"));
        const char *uri = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(images.items[ii], "uri"));
        char buf[48];
        if (!name && uri && strncmp(uri, "data:", 5) != 0) name = base_name(uri);
        if (!name) {
          snprintf(buf, sizeof buf, "embedded_%zu", ii);
          name = buf;
        }
        if (!(img->data = gl_alloc(c, size, 1)) || !(img->name = gl_strdup(c, name)) ||
            !(img->mime_type = gl_strdup(c, mime))) {
          free(img->data);
          free(img->name);
          memset(img, 0, sizeof *img);
          r = c->status;
          break;
        }
        memcpy(img->data, bytes, size);
        img->size = size;
        map[ii] = (int32_t)m->image_count++;
        ref.image = map[ii];
        mat->textures[slot] = ref;
      }
    }
  }
done:
  if (m->images && !m->image_count) {
    free(m->images);
    m->images = NULL;
  }
  free(map);
  free(textures.items);
  free(images.items);
  free(samplers.items);
  return r;
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* A load does not read every external file the JSON names: a failed one
 * stops early, a successful one skips a buffer no accessor uses and an
 * image no texture uses. Those files are still the model's: the caller (an
 * output guard: an output must never be an input) is told of each buffer
 * and image the JSON names, after every load, resolved inside the model's
 * folder as the reader would (a uri the reader refuses or that names no
 * file is skipped). One walk of each array (cJSON_ArrayForEach). After a
 * successful load (src: its kept document), a buffer or image the load
 * read is not told again; after a failed one (src NULL) a file may be told
 * twice, as it may after a read that failed. */
static void tell_named_files(gl_ctx *c, const sks_gltf_source *src) {
  if (!c->on_file_read || !c->base_dir || !cJSON_IsObject(c->root)) return;
  static const char *const arrays[] = {"buffers", "images"};
  for (size_t a = 0; a < 2; ++a) {
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(c->root, arrays[a]), *it;
    if (!cJSON_IsArray(arr)) continue;
    size_t i = 0;
    cJSON_ArrayForEach(it, arr) {
      const char *uri = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "uri"));
      char what[48], *path = NULL;
      const size_t at = i++;
      snprintf(what, sizeof what, "%s %zu", a ? "image" : "buffer", at);
      const int read = a ? src && src->images && at < src->image_count && src->images[at]
                         : c->buffers && at < c->n_buffers && c->buffers[at].loaded && c->buffers[at].owned;
      sks_error scratch; /* the load's own error stays the message */
      if (read || !uri || !uri[0] || strncmp(uri, "data:", 5) == 0 ||
          sks_resource_resolve(c->base_dir, c->resource_root, uri, c->name, what, &path, &scratch) != SKS_OK)
        continue;
      report_file(c, path);
      free(path);
    }
  }
}

static sks_result load_memory(const void *data, size_t size, const char *base_dir,
                              const char *name_for_messages, const sks_load_options *options,
                              sks_model *out, int *needs_draco, sks_error *err) {
  if (!out) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_load_gltf_memory: out is NULL");
  memset(out, 0, sizeof *out);
  const char *label = name_for_messages ? name_for_messages : "<memory>";
  if (!data && size)
    return sks_error_set(err, SKS_ERR_ARGUMENT, "%s: data is NULL", label);
  gl_ctx c;
  memset(&c, 0, sizeof c);
  c.name = base_name(label);
  c.base_dir = base_dir;
  c.err = err;
  c.budget = ((size_t)256 << 20) + (size > SIZE_MAX / 64 ? SIZE_MAX / 64 : size) * 32;
  c.resource_cap = options && options->max_resource_bytes ? options->max_resource_bytes
                                                          : SKS_DEFAULT_MAX_RESOURCE_BYTES;
  if (options) {
    c.on_file_read = options->on_file_read;
    c.on_file_read_user = options->on_file_read_user;
  }
  sks_result r = size ? SKS_OK : gl_fail(&c, SKS_ERR_PARSE, "file is empty");
  if (!r) r = read_model(&c, data, size, out);
  if (needs_draco) *needs_draco = c.needs_draco;
  if (!r && !(out->source_path = gl_strdup(&c, label))) r = c.status;
  tell_named_files(&c, r ? NULL : out->gltf_source);
  for (size_t i = 0; c.buffers && i < c.n_buffers; ++i) free(c.buffers[i].owned);
  for (size_t i = 0; c.meshopt && i < c.n_views; ++i) free(c.meshopt[i]);
  free(c.meshopt);
  free(c.buffers);
  free(c.node_parent);
  free(c.node_joint);
  free(c.part_mesh);
  free(c.part_prim);
  free(c.clip_anim);
  gl_vec *vecs[] = {&c.accessors, &c.views, &c.buffers_json, &c.nodes, &c.meshes, &c.skins,
                    &c.materials, &c.animations, &c.scenes, &c.samplers};
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; ++i) free(vecs[i]->items);
  cJSON_Delete(c.root);
  if (r) sks_model_free(out);
  return r;
}

sks_result sks_load_gltf_memory(const void *data, size_t size, const char *base_dir,
                                const char *name_for_messages, sks_model *out, sks_error *err) {
  return load_memory(data, size, base_dir, name_for_messages, NULL, out, NULL, err);
}

sks_result sks_load_gltf(const char *path, sks_model *out, sks_error *err) {
  return sks_load_gltf_with(path, NULL, out, err);
}

sks_result sks_load_gltf_with(const char *path, const sks_load_options *options, sks_model *out,
                              sks_error *err) {
  return sks_load_gltf_native(path, options, out, NULL, err);
}

sks_result sks_load_gltf_native(const char *path, const sks_load_options *options, sks_model *out,
                                int *needs_draco, sks_error *err) {
  if (needs_draco) *needs_draco = 0;
  if (!out) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_load_gltf: out is NULL");
  memset(out, 0, sizeof *out);
  if (!path) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_load_gltf: path is NULL");
  uint8_t *data;
  size_t size;
  sks_result r = read_file(path, &data, &size, base_name(path), "file", err);
  if (r) return r;
  if (options && options->on_file_read) options->on_file_read(options->on_file_read_user, path);
  const char *slash = strrchr(path, '/');
  char *dir = NULL;
  if (slash) {
    size_t n = (size_t)(slash - path);
    dir = malloc(n + 2);
    if (!dir) {
      free(data);
      return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", base_name(path));
    }
    memcpy(dir, path, n);
    if (n == 0) dir[n++] = '/';
    dir[n] = '\0';
  }
  r = load_memory(data, size, dir ? dir : ".", path, options, out, needs_draco, err);
  free(dir);
  free(data);
  return r;
}
