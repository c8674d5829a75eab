/* The self-contained HTML report (issue 4, MISSION.md "Viewer"): quality
 * table, per-clip error plots (inline SVG) and a WebGL viewer that skins
 * every baked target ON THE GPU with the solved palette, over the artist's
 * ground-truth surface drawn as a dark silhouette, coloured by the very
 * per-vertex errors e_fj the metric summed.
 *
 * Everything the page needs is in one file: the viewer (src/report/assets/,
 * embedded at build time) and the data as JSON with base64 binary blobs:
 *   mesh      bind positions/normals (f32), 4 joints (u16, palette index:
 *             skin offset + skin joint), 4 weights (f32), triangles (u32);
 *             the skinned parts' vertices, then the rigid parts' (data
 *             version 3) in bind space on one palette entry per part;
 *   per clip  ground truth y_fj as the residual from one bake's solved
 *             surface (which the GPU reproduces from the palette): 3 signed
 *             bytes, square-root law against the frame's largest residual
 *             component, plus the frame's box centre for the camera;
 *   per bake  palette per frame (f32, 3 rows of model*inverse_bind per joint,
 *             then model(node) * G_rest(node)^-1 * T per rigid part,
 *             computed here from the solved locals by FK), e_fj in percent
 *             of D per vertex per frame (IEEE half float: 11 significant
 *             bits from 6e-5 % D up, so the 0.1%-of-D control check and 20%
 *             outliers both survive), and the per-frame mean/worst arrays the
 *             CLI prints;
 *   morphs    (data version 2) per part a baked clip's weights track
 *             drives: its shown vertices' position deltas (f32), and per
 *             bake and shown frame the weights the metric played (f32); the
 *             viewer skins bind + sum w_k delta_k.
 * A 10k-vertex rig costs 5 bytes per vertex per frame (+2 per extra mode)
 * before base64. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "skinsolve/report.h"
#include "skinsolve/pose.h"
#include "skinsolve/io.h"
#include "math/sks_math.h"
#include "report/assets.h"
#include "solve/solve_internal.h"

/* Colour ramp end (percent of D): blue at 0, red at this or worse. */
#define SKS_REPORT_RAMP_MAX_PCT 3.0
/* Influences per vertex on the GPU: 4 (seeds 000/002), or 8 when any vertex
 * of the target has more than 4 non-zero weights, so the picture is the
 * solver's surface even for 8-influence rigs. */
#define SKS_REPORT_MAX_INFLUENCES 8

/* ---- growable text buffer ----------------------------------------------- */

typedef struct sbuf {
  char *data;
  size_t len, cap;
  int oom;
} sbuf;

static void sb_put(sbuf *b, const void *s, size_t n) {
  if (b->oom) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->len + n + 1) cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) { b->oom = 1; return; }
    b->data = d;
    b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void sb_printf(sbuf *b, const char *fmt, ...) {
  char small[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof small) { sb_put(b, small, (size_t)n); return; }
  char *big = malloc((size_t)n + 1);
  if (!big) { b->oom = 1; return; }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  sb_put(b, big, (size_t)n);
  free(big);
}

/* Text for HTML element content and attribute values. */
static void sb_html(sbuf *b, const char *s) {
  for (; s && *s; ++s) {
    switch (*s) {
      case '<': sb_puts(b, "&lt;"); break;
      case '>': sb_puts(b, "&gt;"); break;
      case '&': sb_puts(b, "&amp;"); break;
      case '"': sb_puts(b, "&quot;"); break;
      case '\'': sb_puts(b, "&#39;"); break;
      default: sb_put(b, s, 1);
    }
  }
}

/* A JSON string that is also safe inside <script> ('<' escaped). */
static void sb_json_str(sbuf *b, const char *s) {
  sb_puts(b, "\"");
  for (; s && *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') { sb_put(b, "\\", 1); sb_put(b, s, 1); }
    else if (c < 0x20 || c == '<' || c == '>' || c == '&') sb_printf(b, "\\u%04x", c);
    else sb_put(b, s, 1);
  }
  sb_puts(b, "\"");
}

static void sb_json_num(sbuf *b, double v, int float_precision) {
  if (!isfinite(v)) sb_puts(b, "null");
  else if (float_precision) sb_printf(b, "%.9g", v);
  else sb_printf(b, "%.17g", v);
}

/* Quoted base64 of little-endian bytes (x86/ARM hosts: memory order). */
static void sb_base64(sbuf *b, const void *data, size_t n) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const unsigned char *p = data;
  sb_puts(b, "\"");
  char chunk[4096];
  size_t k = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16;
    if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
    if (i + 2 < n) v |= p[i + 2];
    chunk[k++] = tab[(v >> 18) & 63];
    chunk[k++] = tab[(v >> 12) & 63];
    chunk[k++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
    chunk[k++] = i + 2 < n ? tab[v & 63] : '=';
    if (k == sizeof chunk) { sb_put(b, chunk, k); k = 0; }
  }
  sb_put(b, chunk, k);
  sb_puts(b, "\"");
}

/* ---- numbers ------------------------------------------------------------ */

/* IEEE 754 binary16, round to nearest even (F. Giesen's float_to_half_fast3_rtne). */
static uint16_t half_from_float(float value) {
  union { uint32_t u; float f; } f, f32infty, f16max, denorm_magic;
  f32infty.u = 255u << 23;
  f16max.u = (127u + 16u) << 23;
  denorm_magic.u = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  f.f = value;
  uint32_t sign = f.u & 0x80000000u;
  uint16_t o;
  f.u ^= sign;
  if (f.u >= f16max.u) {
    o = f.u > f32infty.u ? 0x7e00 : 0x7c00;
  } else if (f.u < (113u << 23)) {
    f.f += denorm_magic.f;
    o = (uint16_t)(f.u - denorm_magic.u);
  } else {
    uint32_t mant_odd = (f.u >> 13) & 1u;
    f.u += 0xc8000fffu; /* ((15 - 127) << 23) + 0xfff, mod 2^32 */
    f.u += mant_odd;
    o = (uint16_t)(f.u >> 13);
  }
  return (uint16_t)(o | (sign >> 16));
}

/* Smallest "nice" number (1, 2, 2.5, 5 x 10^k) >= x. */
static double nice_ceil(double x) {
  if (!(x > 0) || !isfinite(x)) return 1.0;
  double p = pow(10.0, floor(log10(x)));
  static const double steps[] = {1, 2, 2.5, 5, 10};
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; ++i)
    if (steps[i] * p >= x * (1 - 1e-12)) return steps[i] * p;
  return 10 * p;
}

static const char *mode_name(sks_solve_mode m) {
  return m == SKS_SOLVE_ROTATION_ONLY ? "rotation-only" : "free";
}

/* ---- the target mesh as the GPU sees it --------------------------------- */

typedef struct report_mesh {
  size_t vertex_count, index_count, palette_size;
  /* the bake's vertex order (src/solve/skinview.c): the skinned parts'
   * vertices first, then the rigid parts' (part order), each rigid part one
   * palette entry after the skins' (weight 1): the entry is
   * model[rigid_joint] * rigid_ibm (G_rest(node)^-1 * T), the vertices are
   * in bind space (T^-1 * G_rest(node) * the part's positions), so every
   * vertex is in one space for the box, the grid and the GPU */
  size_t skinned_count, rigid_count;    /* vertices */
  size_t rigid_entries, rigid_first;    /* rigid palette entries and the first's index */
  int32_t *rigid_joint;                 /* rigid_entries skeleton joints */
  sks_daffine *rigid_ibm;               /* rigid_entries */
  size_t influences;                    /* 4 or 8 per vertex */
  float *positions, *normals, *weights; /* 3V, 3V, influences * V */
  uint16_t *joints;                     /* influences * V palette indices */
  uint32_t *indices;
  size_t *skin_offset;                  /* per skin: first palette entry */
  size_t truncated;                     /* vertices whose weights beyond the 4 largest were dropped */
  double dropped_weight;                /* largest weight dropped */
  double scene_to_bind[9];              /* linear part of the bake's T^-1 (src/solve/skinview.c):
                                           the kept surfaces and the viewer's palettes are in
                                           the scene, D is in bind units */
} report_mesh;

static void report_mesh_free(report_mesh *m) {
  free(m->rigid_joint); free(m->rigid_ibm);
  free(m->positions); free(m->normals); free(m->weights);
  free(m->joints); free(m->indices); free(m->skin_offset);
  memset(m, 0, sizeof *m);
}

static sks_result report_mesh_fill(const sks_model *t, const char *file, const sks_skinview *view, report_mesh *m,
                                   sks_error *err);

/* A part's triangles into the report mesh's (its first vertex at base). */
static sks_result append_indices(const sks_mesh_part *part, const char *file, size_t p, size_t base,
                                 uint32_t *indices, size_t *ib, sks_error *err) {
  for (size_t i = 0; i < part->index_count; ++i) {
    if (part->indices[i] >= part->vertex_count)
      return sks_error_set(err, SKS_ERR_INVALID, "%s: part %zu, index %zu: vertex %u out of range %zu",
                           file, p, i, (unsigned)part->indices[i], part->vertex_count);
    indices[(*ib)++] = (uint32_t)(base + part->indices[i]);
  }
  return SKS_OK;
}

/* Area-weighted face normals (unnormalised sums) of a part without any:
 * pos and normals at its first vertex, nv vertices. */
static void add_face_normals(const float *pos, const uint32_t *indices, size_t index_count, size_t nv,
                             float *normals) {
  for (size_t i = 0; i + 2 < index_count; i += 3) {
    uint32_t a = indices[i], bb = indices[i + 1], c = indices[i + 2];
    if (a >= nv || bb >= nv || c >= nv) continue;
    const float *pa = pos + 3 * a, *pb = pos + 3 * bb, *pc = pos + 3 * c;
    sks_vec3 n = sks_v3_cross(sks_v3(pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]),
                              sks_v3(pc[0] - pa[0], pc[1] - pa[1], pc[2] - pa[2]));
    const uint32_t tri[3] = {a, bb, c};
    for (int q = 0; q < 3; ++q) {
      float *o = normals + 3 * tri[q];
      o[0] += n.x; o[1] += n.y; o[2] += n.z;
    }
  }
}

static sks_result report_mesh_build(const sks_model *t, report_mesh *m, sks_error *err) {
  const char *file = t->source_path ? t->source_path : "target";
  memset(m, 0, sizeof *m);
  sks_skinview v;
  sks_result vr = sks_skinview_build(t, file, &v, err);
  if (vr != SKS_OK) return vr;
  sks_result rc = report_mesh_fill(t, file, &v, m, err);
  sks_skinview_free(&v);
  return rc;
}

static sks_result report_mesh_fill(const sks_model *t, const char *file, const sks_skinview *view, report_mesh *m,
                                   sks_error *err) {
  memcpy(m->scene_to_bind, view->T_inv.l, sizeof m->scene_to_bind);
  m->skin_offset = calloc(t->skin_count + 1, sizeof(size_t));
  if (!m->skin_offset) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "report: out of memory");
  for (size_t s = 0; s < t->skin_count; ++s) {
    m->skin_offset[s] = m->palette_size;
    m->palette_size += t->skins[s].joint_count;
    for (size_t i = 0; i < t->skins[s].joint_count; ++i)
      if (t->skins[s].joints[i] < 0 || (size_t)t->skins[s].joints[i] >= t->skeleton.joint_count)
        return sks_error_set(err, SKS_ERR_INVALID, "%s: skin %zu, joint %zu: skeleton joint %d out of range",
                             file, s, i, (int)t->skins[s].joints[i]);
  }
  /* the rigid parts the bake solves and measures: the view's palette entries after the skins' */
  m->rigid_first = m->palette_size;
  m->rigid_entries = view->P > m->palette_size ? view->P - m->palette_size : 0;
  m->rigid_joint = malloc((m->rigid_entries ? m->rigid_entries : 1) * sizeof *m->rigid_joint);
  m->rigid_ibm = malloc((m->rigid_entries ? m->rigid_entries : 1) * sizeof *m->rigid_ibm);
  if (!m->rigid_joint || !m->rigid_ibm) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "report: out of memory");
  for (size_t e = 0; e < m->rigid_entries; ++e) {
    m->rigid_joint[e] = view->pal_joint[m->rigid_first + e];
    m->rigid_ibm[e] = view->pal_ibm[m->rigid_first + e];
  }
  m->palette_size += m->rigid_entries;
  if (m->palette_size > 65535)
    return sks_error_set(err, SKS_ERR_UNSUPPORTED, "%s: %zu skin joints and rigid parts: the viewer supports 65535",
                         file, m->palette_size);
  size_t V = view->V, I = 0;
  m->skinned_count = view->skinned_vertex_count;
  m->rigid_count = view->rigid_vertex_count;
  if (m->skinned_count != sks_model_vertex_count(t) || m->skinned_count + m->rigid_count != V)
    return sks_error_set(err, SKS_ERR_INVALID, "%s: a part names a skin out of range", file);
  m->influences = 4;
  for (size_t p = 0; p < t->part_count; ++p) {
    const sks_mesh_part *part = &t->parts[p];
    if (part->skin < 0) {
      if (part->node >= 0 && (size_t)part->node < t->skeleton.joint_count) I += part->index_count;
      continue;
    }
    I += part->index_count;
    for (size_t v = 0; v < part->vertex_count && part->influence_count > 4 && m->influences == 4; ++v) {
      int nonzero = 0;
      for (size_t i = 0; i < part->influence_count; ++i) nonzero += part->weights[v * part->influence_count + i] > 0;
      if (nonzero > 4) m->influences = 8;
    }
  }
  const size_t K = m->influences;
  m->vertex_count = V;
  m->index_count = I;
  m->positions = malloc((V ? V : 1) * 3 * sizeof(float));
  m->normals = calloc((V ? V : 1) * 3, sizeof(float));
  m->weights = calloc((V ? V : 1) * K, sizeof(float));
  m->joints = calloc((V ? V : 1) * K, sizeof(uint16_t));
  m->indices = malloc((I ? I : 1) * sizeof(uint32_t));
  if (!m->positions || !m->normals || !m->weights || !m->joints || !m->indices)
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "report: out of memory for %zu vertices", V);
  size_t base = 0, ib = 0;
  for (size_t p = 0; p < t->part_count; ++p) {
    const sks_mesh_part *part = &t->parts[p];
    if (part->skin < 0) continue;
    if ((size_t)part->skin >= t->skin_count)
      return sks_error_set(err, SKS_ERR_INVALID, "%s: part %zu: skin %d out of range", file, p, (int)part->skin);
    const sks_skin *skin = &t->skins[part->skin];
    size_t nv = part->vertex_count, k = part->influence_count;
    memcpy(m->positions + 3 * base, part->positions, nv * 3 * sizeof(float));
    for (size_t v = 0; v < nv; ++v) {
      /* The K largest influences, largest first. */
      int pick[SKS_REPORT_MAX_INFLUENCES];
      for (size_t s = 0; s < K; ++s) pick[s] = -1;
      for (size_t i = 0; i < k; ++i) {
        float w = part->weights[v * k + i];
        if (!(w > 0)) continue;
        for (size_t s = 0; s < K; ++s) {
          if (pick[s] < 0 || w > part->weights[v * k + (size_t)pick[s]]) {
            for (size_t u = K - 1; u > s; --u) pick[u] = pick[u - 1];
            pick[s] = (int)i;
            break;
          }
        }
      }
      double sum = 0, total = 0;
      for (size_t i = 0; i < k; ++i)
        if (part->weights[v * k + i] > 0) total += part->weights[v * k + i];
      for (size_t s = 0; s < K; ++s)
        if (pick[s] >= 0) sum += part->weights[v * k + (size_t)pick[s]];
      if (total - sum > 1e-6) {
        ++m->truncated;
        if (total - sum > m->dropped_weight) m->dropped_weight = total - sum;
      }
      for (size_t s = 0; s < K; ++s) {
        size_t o = K * (base + v) + s;
        if (pick[s] < 0) continue;
        uint16_t j = part->joints[v * k + (size_t)pick[s]];
        if (j >= skin->joint_count)
          return sks_error_set(err, SKS_ERR_INVALID, "%s: part %zu, vertex %zu: joint %u out of skin range %zu",
                               file, p, v, (unsigned)j, skin->joint_count);
        m->joints[o] = (uint16_t)(m->skin_offset[part->skin] + j);
        /* Weights as played and as the bake solves and measures them
         * (src/solve/skinview.c): the kept ones renormalised to sum 1, so
         * a file's non-normalised weights (RobotExpressive's sum to 1.56 on
         * some vertices) draw and check what the metric measured. */
        double scale = sum > 0 ? 1.0 / sum : 1.0;
        m->weights[o] = (float)(part->weights[v * k + (size_t)pick[s]] * scale);
      }
    }
    if (part->normals) {
      memcpy(m->normals + 3 * base, part->normals, nv * 3 * sizeof(float));
    } else {
      add_face_normals(part->positions, part->indices, part->index_count, nv, m->normals + 3 * base);
    }
    sks_result ir = append_indices(part, file, p, base, m->indices, &ib, err);
    if (ir != SKS_OK) return ir;
    base += nv;
  }
  /* rigid parts: the view's bind positions, normals by the inverse
   * transpose of part data -> bind space, one entry of weight 1 */
  for (size_t p = 0, e = 0; p < t->part_count; ++p) {
    const sks_mesh_part *part = &t->parts[p];
    if (part->skin >= 0 || part->node < 0 || (size_t)part->node >= t->skeleton.joint_count) continue;
    size_t nv = part->vertex_count;
    sks_daffine place = sks_daff_mul(&view->T_inv, &view->rest_models[part->node]);
    double inv[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    if (!sks_dm3_inverse(place.l, inv)) memcpy(inv, place.l, sizeof inv);
    for (size_t v = 0; v < nv; ++v) {
      for (int a = 0; a < 3; ++a) m->positions[3 * (base + v) + (size_t)a] = (float)view->pos[3 * (base + v) + (size_t)a];
      m->joints[K * (base + v)] = (uint16_t)(m->rigid_first + e);
      m->weights[K * (base + v)] = 1.0f;
      if (part->normals) { /* (place^-1)^T n */
        const float *n = part->normals + 3 * v;
        for (int a = 0; a < 3; ++a)
          m->normals[3 * (base + v) + (size_t)a] = (float)(inv[a] * n[0] + inv[3 + a] * n[1] + inv[6 + a] * n[2]);
      }
    }
    if (!part->normals) /* in bind space */
      add_face_normals(m->positions + 3 * base, part->indices, part->index_count, nv, m->normals + 3 * base);
    sks_result ir = append_indices(part, file, p, base, m->indices, &ib, err);
    if (ir != SKS_OK) return ir;
    base += nv;
    ++e;
  }
  for (size_t v = 0; v < V; ++v) {
    float *n = m->normals + 3 * v;
    sks_vec3 u = sks_v3_normalize(sks_v3(n[0], n[1], n[2]));
    if (!isfinite(u.x) || !isfinite(u.y) || !isfinite(u.z)) u = sks_v3(0, 1, 0);
    n[0] = u.x; n[1] = u.y; n[2] = u.z;
  }
  return SKS_OK;
}

/* ---- vertex decimation (a mesh too dense for the report's budget) ------- */

/* Vertex clustering (Rossignac-Borrel) on a grid of cubes `cell` wide from
 * the bind box's low corner: each occupied cell keeps ONE real vertex, the
 * one nearest its vertices' mean (ties: the lowest index), which stands for
 * them; triangles are re-pointed at the kept vertices and those that
 * collapse (two corners in one cell) or repeat (the same three kept
 * vertices) are dropped. A kept vertex keeps its own bind position, normal
 * and skin weights, so the GPU skins it exactly onto the solver's surface;
 * its colour is the LARGEST error among the vertices it stands for (no bad
 * vertex disappears from the heatmap). Deterministic: sorts by cell and
 * index. */
typedef struct report_decimation {
  size_t kept, index_count;
  uint32_t *keep;    /* shown vertex -> mesh vertex (ascending) */
  uint32_t *rep;     /* mesh vertex -> shown vertex */
  uint32_t *indices; /* shown triangles (shown vertex indices) */
  double cell;
} report_decimation;

static void decimation_free(report_decimation *d) {
  free(d->keep); free(d->rep); free(d->indices);
  memset(d, 0, sizeof *d);
}

typedef struct cell_item { uint64_t key; uint32_t v, pad; } cell_item;
static int cmp_cell_item(const void *a, const void *b) {
  const cell_item *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->v < y->v ? -1 : x->v > y->v;
}
typedef struct tri_item { uint32_t k[3], i; } tri_item;
static int cmp_tri_item(const void *a, const void *b) {
  const tri_item *x = a, *y = b;
  for (int q = 0; q < 3; ++q)
    if (x->k[q] != y->k[q]) return x->k[q] < y->k[q] ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

static sks_result report_cluster(const report_mesh *m, double cell, report_decimation *d, sks_error *err) {
  memset(d, 0, sizeof *d);
  size_t V = m->vertex_count, T = m->index_count / 3;
  d->cell = cell;
  double lo[3] = {DBL_MAX, DBL_MAX, DBL_MAX};
  for (size_t v = 0; v < V; ++v)
    for (int a = 0; a < 3; ++a) lo[a] = fmin(lo[a], (double)m->positions[3 * v + (size_t)a]);
  cell_item *it = malloc((V ? V : 1) * sizeof *it);
  uint32_t *leader = malloc((V ? V : 1) * sizeof *leader);
  d->keep = malloc((V ? V : 1) * sizeof *d->keep);
  d->rep = malloc((V ? V : 1) * sizeof *d->rep);
  tri_item *tt = malloc((T ? T : 1) * sizeof *tt);
  d->indices = malloc((T ? T : 1) * 3 * sizeof *d->indices);
  if (!it || !leader || !d->keep || !d->rep || !tt || !d->indices) {
    free(it); free(leader); free(tt); decimation_free(d);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "report: out of memory simplifying %zu vertices", V);
  }
  const double top = (double)((1u << 21) - 1);
  for (size_t v = 0; v < V; ++v) {
    uint64_t key = 0;
    for (int a = 0; a < 3; ++a) {
      double c = floor(((double)m->positions[3 * v + (size_t)a] - lo[a]) / cell);
      if (!(c >= 0)) c = 0;
      if (c > top) c = top;
      key |= (uint64_t)c << (21 * a);
    }
    it[v].key = key;
    it[v].v = (uint32_t)v;
    it[v].pad = 0;
  }
  qsort(it, V, sizeof *it, cmp_cell_item);
  for (size_t b = 0, e; b < V; b = e) {
    double mean[3] = {0, 0, 0};
    for (e = b; e < V && it[e].key == it[b].key; ++e)
      for (int a = 0; a < 3; ++a) mean[a] += m->positions[3 * it[e].v + (size_t)a];
    for (int a = 0; a < 3; ++a) mean[a] /= (double)(e - b);
    uint32_t best = it[b].v;
    double bd = DBL_MAX;
    for (size_t i = b; i < e; ++i) { /* ascending index: the first nearest wins */
      const float *p = m->positions + 3 * it[i].v;
      double dx = p[0] - mean[0], dy = p[1] - mean[1], dz = p[2] - mean[2], dd = dx * dx + dy * dy + dz * dz;
      if (dd < bd) { bd = dd; best = it[i].v; }
    }
    for (size_t i = b; i < e; ++i) leader[it[i].v] = best;
  }
  free(it);
  /* kept vertices in mesh order; rep[] first marks them */
  for (size_t v = 0; v < V; ++v) d->rep[v] = UINT32_MAX;
  for (size_t v = 0; v < V; ++v) d->rep[leader[v]] = 0;
  for (size_t v = 0; v < V; ++v)
    if (d->rep[v] == 0) { d->rep[v] = (uint32_t)d->kept; d->keep[d->kept++] = (uint32_t)v; }
  for (size_t v = 0; v < V; ++v) leader[v] = d->rep[leader[v]];
  memcpy(d->rep, leader, V * sizeof *leader);
  free(leader);
  size_t n = 0;
  for (size_t t = 0; t < T; ++t) {
    uint32_t a = d->rep[m->indices[3 * t]], b = d->rep[m->indices[3 * t + 1]], c = d->rep[m->indices[3 * t + 2]], x;
    if (a == b || b == c || a == c) continue; /* collapsed */
    tt[n].i = (uint32_t)t;
    if (a > b) { x = a; a = b; b = x; }
    if (b > c) { x = b; b = c; c = x; }
    if (a > b) { x = a; a = b; b = x; }
    tt[n].k[0] = a; tt[n].k[1] = b; tt[n].k[2] = c;
    ++n;
  }
  qsort(tt, n, sizeof *tt, cmp_tri_item);
  unsigned char *use = calloc(T ? T : 1, 1);
  if (!use) { free(tt); decimation_free(d); return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "report: out of memory"); }
  for (size_t i = 0; i < n; ++i) /* the first of each repeated set */
    if (i == 0 || memcmp(tt[i].k, tt[i - 1].k, sizeof tt[i].k) != 0) use[tt[i].i] = 1;
  free(tt);
  for (size_t t = 0; t < T; ++t)
    if (use[t])
      for (int q = 0; q < 3; ++q) d->indices[d->index_count++] = d->rep[m->indices[3 * t + (size_t)q]];
  free(use);
  return SKS_OK;
}

/* The shown mesh: the kept vertices' data gathered (skin offsets shared). */
static sks_result report_mesh_gather(const report_mesh *m, const report_decimation *d, report_mesh *out,
                                     sks_error *err) {
  memset(out, 0, sizeof *out);
  size_t n = d->kept, K = m->influences;
  out->vertex_count = n;
  out->index_count = d->index_count;
  out->palette_size = m->palette_size;
  out->influences = K;
  out->truncated = m->truncated;
  out->dropped_weight = m->dropped_weight;
  out->positions = malloc((n ? n : 1) * 3 * sizeof(float));
  out->normals = malloc((n ? n : 1) * 3 * sizeof(float));
  out->weights = malloc((n ? n : 1) * K * sizeof(float));
  out->joints = malloc((n ? n : 1) * K * sizeof(uint16_t));
  out->indices = malloc((d->index_count ? d->index_count : 1) * sizeof(uint32_t));
  if (!out->positions || !out->normals || !out->weights || !out->joints || !out->indices) {
    report_mesh_free(out);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "report: out of memory");
  }
  for (size_t k = 0; k < n; ++k) {
    size_t v = d->keep[k];
    memcpy(out->positions + 3 * k, m->positions + 3 * v, 3 * sizeof(float));
    memcpy(out->normals + 3 * k, m->normals + 3 * v, 3 * sizeof(float));
    memcpy(out->weights + K * k, m->weights + K * v, K * sizeof(float));
    memcpy(out->joints + K * k, m->joints + K * v, K * sizeof(uint16_t));
  }
  memcpy(out->indices, d->indices, d->index_count * sizeof(uint32_t));
  return SKS_OK;
}

/* palette[j] rows 0..2 of models[skin.joints[i]] * inverse_bind[i] (12 floats)
 * at one frame, from that frame's solved locals; then one entry per rigid
 * part, models[node] * rigid_ibm (the part follows its node). */
static int report_palette(const sks_model *t, const report_mesh *m, const sks_transform *locals,
                          sks_mat4 *models, float *pf) {
  sks_local_to_model_job job = {t->skeleton.parents, locals, t->skeleton.joint_count, NULL, models};
  if (!sks_local_to_model_job_run(&job)) return 0;
  for (size_t s = 0; s < t->skin_count; ++s) {
    const sks_skin *skin = &t->skins[s];
    for (size_t i = 0; i < skin->joint_count; ++i) {
      sks_mat4 pm = sks_m4_mul(&models[skin->joints[i]], &skin->inverse_bind[i]);
      float *o = pf + 12 * (m->skin_offset[s] + i);
      for (int r = 0; r < 3; ++r)
        for (int col = 0; col < 4; ++col) o[4 * r + col] = pm.m[col * 4 + r];
    }
  }
  for (size_t e = 0; e < m->rigid_entries; ++e) {
    sks_daffine g = sks_daff_from_m4(&models[m->rigid_joint[e]]), pm = sks_daff_mul(&g, &m->rigid_ibm[e]);
    float *o = pf + 12 * (m->rigid_first + e);
    for (int r = 0; r < 3; ++r) {
      for (int col = 0; col < 3; ++col) o[4 * r + col] = (float)pm.l[3 * r + col];
      o[4 * r + 3] = (float)pm.t[r];
    }
  }
  return 1;
}

/* What the vertex shader computes, on the CPU, at one frame (pos: the bind
 * positions the viewer skins, morph targets applied): the largest
 * distance between it and the solver's surface `ys` (both in the scene; the
 * distance in bind units, as D). Its maximum over ALL
 * frames (fraction of D) is reported in the page so a reader knows the GPU
 * picture is the solved surface. NaN propagates. */
static double report_gpu_check_frame(const report_mesh *m, const float *pos, const float *pf, const float *ys) {
  double worst = 0;
  for (size_t v = 0; v < m->vertex_count; ++v) {
    const float *x = pos + 3 * v;
    double p[3] = {0, 0, 0};
    for (size_t s = 0; s < m->influences; ++s) {
      float w = m->weights[m->influences * v + s];
      if (w == 0) continue;
      const float *row = pf + 12 * m->joints[m->influences * v + s];
      for (int r = 0; r < 3; ++r)
        p[r] += w * (row[4 * r] * x[0] + row[4 * r + 1] * x[1] + row[4 * r + 2] * x[2] + row[4 * r + 3]);
    }
    double e[3] = {p[0] - ys[3 * v], p[1] - ys[3 * v + 1], p[2] - ys[3 * v + 2]}, b[3];
    sks_dm3_apply(m->scene_to_bind, e, b); /* bind units, as D */
    double d = sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
    if (!(d <= worst)) worst = d;
  }
  return worst;
}

/* ---- morph targets the baked clips carry -------------------------------- */

/* A part with morph targets that some baked clip animates (a weights track
 * on its node, sks_baked_clip.morph_tracks): the viewer applies
 * bind + sum_k w_k(f) * delta_k before skinning, with the weights the bake's
 * metric played (README "The report"); a rigid part's deltas are taken to
 * bind space as its positions are (src/solve/bake_morph.c). */
typedef struct report_morph_part {
  size_t part;          /* model part */
  size_t first, count;  /* its vertices in the report mesh (skinned parts, then rigid, part order) */
  double L[9];          /* part data -> bind space (identity for a skinned part) */
  double N[9];          /* the same for normals: (L^-1)^T */
  int normals;          /* 1: some target has normal deltas (and the part normals) */
  size_t targets;       /* part->morph_target_count */
  size_t weight_offset; /* into a frame's weights (every group's, in order) */
} report_morph_part;

typedef struct report_morphs {
  size_t count, weights; /* groups; weights per frame in all */
  report_morph_part *g;
} report_morphs;

static int clip_has_track(const sks_baked_clip *bc, int32_t node) {
  for (size_t i = 0; i < bc->morph_track_count; ++i)
    if (bc->morph_tracks[i].node == node && bc->morph_tracks[i].key_count && bc->morph_tracks[i].weight_count)
      return 1;
  return 0;
}

static sks_result report_morphs_build(const sks_report_input *in, report_morphs *mo, sks_error *err) {
  memset(mo, 0, sizeof *mo);
  const sks_model *t = in->target;
  mo->g = calloc(t->part_count ? t->part_count : 1, sizeof *mo->g);
  if (!mo->g) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "report: out of memory");
  sks_skinview view;
  memset(&view, 0, sizeof view);
  int has_rigid = 0;
  for (size_t p = 0; p < t->part_count; ++p) has_rigid |= t->parts[p].skin < 0 && t->parts[p].morph_target_count;
  if (has_rigid) { /* T^-1 and the rest pose, for rigid parts' deltas */
    sks_result vr = sks_skinview_build(t, t->source_path ? t->source_path : "target", &view, err);
    if (vr != SKS_OK) return vr;
  }
  for (size_t n = 0, base = 0; n < 2 * t->part_count; ++n) { /* skinned parts, then rigid */
    size_t p = n % t->part_count;
    const sks_mesh_part *part = &t->parts[p];
    int rigid = part->skin < 0;
    if (rigid != (n >= t->part_count)) continue;
    if (rigid && (part->node < 0 || (size_t)part->node >= t->skeleton.joint_count)) continue;
    size_t first = base;
    base += part->vertex_count;
    int deltas = 0, animated = 0;
    for (size_t k = 0; k < part->morph_target_count; ++k) deltas |= part->morph_targets[k].position_deltas != NULL;
    for (size_t r = 0; deltas && r < in->result_count && !animated; ++r)
      for (size_t c = 0; c < in->results[r]->clip_count && !animated; ++c)
        animated = clip_has_track(&in->results[r]->clips[c], part->node);
    if (!animated) continue;
    report_morph_part *g = &mo->g[mo->count++];
    g->part = p;
    g->first = first;
    sks_daffine place = sks_daff_identity();
    if (rigid) place = sks_daff_mul(&view.T_inv, &view.rest_models[part->node]);
    memcpy(g->L, place.l, sizeof g->L);
    double inv[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    if (!sks_dm3_inverse(g->L, inv)) memcpy(inv, g->L, sizeof inv);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) g->N[3 * r + c] = inv[3 * c + r];
    for (size_t k = 0; part->normals && k < part->morph_target_count; ++k)
      g->normals |= part->morph_targets[k].normal_deltas != NULL;
    g->count = part->vertex_count;
    g->targets = part->morph_target_count;
    g->weight_offset = mo->weights;
    mo->weights += g->targets;
  }
  sks_skinview_free(&view);
  return SKS_OK;
}

/* The weights the bake's metric played at frame f (solve/bake_morph.c:
 * the baked clip's track sampled at the frame time, clamped at its keys;
 * targets past the track's weights, and nodes without a track, not played). */
static void report_morph_weights(const report_morphs *mo, const sks_model *t, const sks_baked_clip *bc,
                                 size_t f, float *w) {
  sks_clip view;
  memset(&view, 0, sizeof view);
  view.morph_track_count = bc->morph_track_count;
  view.morph_tracks = bc->morph_tracks;
  for (size_t i = 0; i < mo->count; ++i) {
    const report_morph_part *g = &mo->g[i];
    float *o = w + g->weight_offset;
    sks_morph_sampling_job sj = {&view, t->parts[g->part].node, NULL, g->targets, bc->times[f], 0, o, 0};
    if (!sks_morph_sampling_job_run(&sj) || !sj.sampled) memset(o, 0, g->targets * sizeof(float));
  }
}

/* The viewer's bind positions at a frame: out = bind + sum_k w_k delta_k on
 * the morphed parts (summed in double, stored as the float the GPU gets). */
static void report_morph_positions(const report_morphs *mo, const sks_model *t, const report_mesh *m,
                                   const float *w, float *out) {
  for (size_t i = 0; i < mo->count; ++i) {
    const report_morph_part *g = &mo->g[i];
    const sks_mesh_part *part = &t->parts[g->part];
    for (size_t v = 0; v < g->count; ++v) {
      double p[3] = {m->positions[3 * (g->first + v)], m->positions[3 * (g->first + v) + 1],
                     m->positions[3 * (g->first + v) + 2]};
      for (size_t k = 0; k < g->targets; ++k) {
        const float *d = part->morph_targets[k].position_deltas;
        double wk = w[g->weight_offset + k], x[3], b[3];
        if (!d || wk == 0) continue;
        for (int a = 0; a < 3; ++a) x[a] = d[3 * v + (size_t)a];
        sks_dm3_apply(g->L, x, b);
        for (int a = 0; a < 3; ++a) p[a] += wk * b[a];
      }
      for (int a = 0; a < 3; ++a) out[3 * (g->first + v) + (size_t)a] = (float)p[a];
    }
  }
}

/* Vertices of group g the viewer shows (all, or the kept ones) and the first. */
static size_t morph_shown(const report_morph_part *g, const report_decimation *dec, size_t *first) {
  if (!dec) { if (first) *first = g->first; return g->count; }
  size_t lo = 0, n = 0;
  while (lo < dec->kept && dec->keep[lo] < g->first) ++lo;
  for (size_t k = lo; k < dec->kept && dec->keep[k] < g->first + g->count; ++k) ++n;
  if (first) *first = lo;
  return n;
}

/* ---- validation --------------------------------------------------------- */

static sks_result report_validate(const sks_report_input *in, sks_error *err) {
  if (!in || !in->target || !in->results || in->result_count == 0)
    return sks_error_set(err, SKS_ERR_ARGUMENT, "report: needs a target model and at least one bake result");
  const sks_model *t = in->target;
  size_t V = sks_model_vertex_count(t), R = 0, clips = 0;
  for (size_t p = 0; p < t->part_count; ++p) /* rigid parts the bake solves (src/solve/skinview.c) */
    if (t->parts[p].skin < 0 && t->parts[p].node >= 0 && (size_t)t->parts[p].node < t->skeleton.joint_count)
      R += t->parts[p].vertex_count;
  if (V + R == 0)
    return sks_error_set(err, SKS_ERR_ARGUMENT, "report: the target has no vertices that follow its joints to show");
  for (size_t r = 0; r < in->result_count; ++r) clips += in->results[r] ? in->results[r]->clip_count : 0;
  if (clips == 0) return sks_error_set(err, SKS_ERR_ARGUMENT, "report: no baked clips to show");
  for (size_t r = 0; r < in->result_count; ++r) {
    const sks_bake_result *res = in->results[r];
    if (!res) return sks_error_set(err, SKS_ERR_ARGUMENT, "report: result %zu is NULL", r);
    if (res->target_vertex_count != V)
      return sks_error_set(err, SKS_ERR_ARGUMENT,
                           "report: result %zu has %zu target vertices but the target model has %zu",
                           r, res->target_vertex_count, V);
    if (res->rigid_vertex_count != R)
      return sks_error_set(err, SKS_ERR_ARGUMENT,
                           "report: result %zu has %zu rigid-part vertices but the target model has %zu",
                           r, res->rigid_vertex_count, R);
    for (size_t c = 0; c < res->clip_count; ++c) {
      const sks_baked_clip *bc = &res->clips[c];
      if (!bc->target_surface || !bc->solved_surface || !bc->vertex_error || !bc->frame_mean_error_pct ||
          !bc->frame_worst_error_pct ||
          (R && (!bc->rigid_target_surface || !bc->rigid_solved_surface || !bc->rigid_vertex_error)))
        return sks_error_set(err, SKS_ERR_ARGUMENT,
                             "report: clip '%s' (%s) has no per-frame surfaces: bake with keep_surfaces = 1",
                             bc->name ? bc->name : "?", mode_name(bc->mode));
      if (bc->frame_count == 0)
        return sks_error_set(err, SKS_ERR_ARGUMENT, "report: clip '%s' (%s) has no frames",
                             bc->name ? bc->name : "?", mode_name(bc->mode));
      if (!bc->locals || !bc->times)
        return sks_error_set(err, SKS_ERR_ARGUMENT, "report: clip '%s' has no solved locals or times",
                             bc->name ? bc->name : "?");
      if (bc->joint_count != t->skeleton.joint_count)
        return sks_error_set(err, SKS_ERR_ARGUMENT,
                             "report: clip '%s' solved %zu joints but the target skeleton has %zu",
                             bc->name ? bc->name : "?", bc->joint_count, t->skeleton.joint_count);
    }
  }
  return SKS_OK;
}

/* The page's layout: one column (viewer panel, table rows, plot series) per
 * (result, mode) pair in first-seen order, since one result may hold both
 * modes (SKS_SOLVE_BOTH); one row per clip name, first-seen order. */
typedef struct report_column {
  size_t result;
  sks_solve_mode mode;
} report_column;

typedef struct clip_row {
  const char *name;
  const sks_baked_clip **baked; /* one per column, NULL where a column lacks the clip */
} clip_row;

/* ---- HTML pieces -------------------------------------------------------- */

static void table_cell(sbuf *b, double v, int decimals) {
  if (isfinite(v)) sb_printf(b, "<td data-value=\"%.17g\">%.*f</td>", v, decimals, v);
  else sb_puts(b, "<td data-value=\"NaN\">n/a</td>");
}

static void write_table(sbuf *b, size_t ncols, const clip_row *rows, size_t row_count) {
  sb_puts(b, "<table class=\"quality\" id=\"quality-table\">\n<thead><tr><th>clip</th><th>mode</th>"
             "<th>frames</th><th>quality %</th><th>mean error %D</th><th>worst vertex %D</th>"
             "<th>solve ms</th></tr></thead>\n<tbody>\n");
  for (size_t c = 0; c < row_count; ++c) {
    for (size_t r = 0; r < ncols; ++r) {
      const sks_baked_clip *bc = rows[c].baked[r];
      if (!bc) continue;
      sb_printf(b, "<tr data-clip=\"%zu\" data-result=\"%zu\"><td>", c, r);
      sb_html(b, rows[c].name);
      sb_printf(b, "</td><td>%s</td><td>%zu</td>", mode_name(bc->mode), bc->frame_count);
      table_cell(b, bc->quality * 100.0, 3);
      table_cell(b, bc->mean_error_pct, 5);
      table_cell(b, bc->worst_error_pct, 5);
      table_cell(b, bc->solve_ms, 2);
      sb_puts(b, "</tr>\n");
    }
  }
  sb_puts(b, "</tbody>\n</table>\n");
}

/* Mean (solid) and worst (dashed) error per frame, one colour per mode. */
static void write_plot(sbuf *b, size_t ncols, const clip_row *row, size_t clip_index) {
  static const char *colors[] = {"#1764c0", "#c2410c", "#15803d", "#7e22ce"};
  size_t entries = 0;
  for (size_t r = 0; r < ncols; ++r) entries += row->baked[r] ? 2 : 0;
  const double W = 640, L = 58, R = 16, B = 34;
  const double T = 10 + 14 * (double)((entries + 3) / 4); /* legend rows above the plot */
  const double H = T + 172 + B;
  size_t F = 0;
  double ymax = 0;
  for (size_t r = 0; r < ncols; ++r) {
    const sks_baked_clip *bc = row->baked[r];
    if (!bc) continue;
    if (bc->frame_count > F) F = bc->frame_count;
    for (size_t f = 0; f < bc->frame_count; ++f) {
      double w = bc->frame_worst_error_pct[f], mn = bc->frame_mean_error_pct[f];
      if (isfinite(w) && w > ymax) ymax = w;
      if (isfinite(mn) && mn > ymax) ymax = mn;
    }
  }
  ymax = nice_ceil(ymax > 0 ? ymax * 1.05 : 0.01);
  double pw = W - L - R, ph = H - T - B;
  double xs = F > 1 ? pw / (double)(F - 1) : 0;
  sb_printf(b, "<figure class=\"plot\"><svg id=\"plot-%zu\" data-clip=\"%zu\" viewBox=\"0 0 %.0f %.0f\" "
               "role=\"img\" aria-label=\"error per frame, clip ", clip_index, clip_index, W, H);
  sb_html(b, row->name);
  sb_puts(b, "\">\n");
  sb_printf(b, "<rect class=\"plot-bg\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n", L, T, pw, ph);
  for (int k = 0; k <= 4; ++k) {
    double v = ymax * k / 4.0, y = T + ph - ph * k / 4.0;
    sb_printf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                 "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
              L, y, L + pw, y, L - 6, y + 4, v);
  }
  size_t xstep = F > 1 ? (size_t)nice_ceil((double)(F - 1) / 8.0) : 1;
  if (xstep < 1) xstep = 1;
  for (size_t f = 0; f < F; f += xstep)
    sb_printf(b, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%zu</text>\n",
              L + xs * (double)f, T + ph + 16, f);
  sb_printf(b, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">frame</text>\n", L + pw / 2, H - 3);
  sb_printf(b, "<text class=\"axis\" transform=\"translate(13 %.1f) rotate(-90)\" text-anchor=\"middle\">error %% of D</text>\n",
            T + ph / 2);
  if (SKS_REPORT_RAMP_MAX_PCT <= ymax) {
    double y = T + ph - ph * SKS_REPORT_RAMP_MAX_PCT / ymax;
    sb_printf(b, "<line class=\"ramp-max\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", L, y, L + pw, y);
  }
  size_t legend = 0;
  for (size_t r = 0; r < ncols; ++r) {
    const sks_baked_clip *bc = row->baked[r];
    if (!bc) continue;
    const char *col = colors[r % 4];
    for (int series = 0; series < 2; ++series) {
      const float *vals = series == 0 ? bc->frame_mean_error_pct : bc->frame_worst_error_pct;
      sb_printf(b, "<polyline class=\"%s\" data-result=\"%zu\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"",
                series == 0 ? "series-mean" : "series-worst", r, col, series == 0 ? "2" : "1.5",
                series == 0 ? "" : " stroke-dasharray=\"5 3\"");
      for (size_t f = 0; f < bc->frame_count; ++f) {
        double v = vals[f];
        if (!isfinite(v)) continue; /* no point for a frame without a number */
        if (v > ymax) v = ymax;
        sb_printf(b, "%.1f,%.1f ", L + xs * (double)f, T + ph - ph * v / ymax);
      }
      sb_puts(b, "\"/>\n");
      double lx = L + 140 * (double)(legend % 4), ly = 14 + 14 * (double)(legend / 4);
      sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>"
                   "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\">%s %s</text>\n",
                lx, ly - 4, lx + 18, ly - 4, col, series == 0 ? "" : " stroke-dasharray=\"5 3\"", lx + 22, ly,
                mode_name(bc->mode), series == 0 ? "mean" : "worst");
      ++legend;
    }
  }
  sb_printf(b, "<line class=\"cursor\" id=\"plot-cursor-%zu\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
               "data-x0=\"%.3f\" data-dx=\"%.6f\"/>\n",
            clip_index, L, T, L, T + ph, L, xs);
  sb_puts(b, "</svg><figcaption>");
  sb_html(b, row->name);
  sb_puts(b, ": mean (solid) and worst vertex (dashed) error per frame, % of D</figcaption></figure>\n");
}

/* ---- diagnosis: the worst joints and the dominant-joint view ------------ */

/* Rows of each clip's worst-joint list (the JSON keeps every joint). */
#define SKS_REPORT_JOINT_ROWS 8

/* A colour per skeleton joint for the dominant-joint view and the list's
 * swatches: hue by the golden angle (neighbouring indices, often parent and
 * child, far apart), HSL saturation 0.65, lightness 0.55; sRGB bytes. */
static void joint_color(int32_t j, unsigned char rgb[3]) {
  double h = fmod((double)j * 137.50776405, 360.0) / 60.0, s = 0.65, l = 0.55;
  double c = (1 - fabs(2 * l - 1)) * s, x = c * (1 - fabs(fmod(h, 2.0) - 1)), m = l - c / 2;
  double r = 0, g = 0, b = 0;
  int seg = (int)h;
  if (seg == 0) { r = c; g = x; } else if (seg == 1) { r = x; g = c; } else if (seg == 2) { g = c; b = x; }
  else if (seg == 3) { g = x; b = c; } else if (seg == 4) { r = x; b = c; } else { r = c; b = x; }
  rgb[0] = (unsigned char)lround((r + m) * 255);
  rgb[1] = (unsigned char)lround((g + m) * 255);
  rgb[2] = (unsigned char)lround((b + m) * 255);
}

/* ,"dominant": each mesh vertex's dominant joint (int32, -1: none; the same
 * rule as the bake's diagnosis), ,"joint_names", ,"joint_colors" (3 bytes a
 * joint). */
static sks_result write_dominant(sbuf *b, const sks_model *t, size_t V, const report_decimation *dec,
                                 sks_error *err) {
  size_t J = t->skeleton.joint_count;
  int32_t *dom = malloc((V ? V : 1) * sizeof *dom);
  unsigned char *col = malloc((J ? J : 1) * 3);
  if (!dom || !col) {
    free(dom); free(col);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "report: out of memory");
  }
  sks_result r = sks_dominant_joints(t, dom, V, err);
  if (r == SKS_OK) {
    for (size_t j = 0; j < J; ++j) joint_color((int32_t)j, col + 3 * j);
    size_t shown = V;
    if (dec) { /* the kept vertices' own */
      for (size_t k = 0; k < dec->kept; ++k) dom[k] = dom[dec->keep[k]];
      shown = dec->kept;
    }
    sb_puts(b, ",\n\"dominant\":");
    sb_base64(b, dom, shown * sizeof *dom);
    sb_puts(b, ",\n\"joint_colors\":");
    sb_base64(b, col, J * 3);
    sb_puts(b, ",\n\"joint_names\":[");
    for (size_t j = 0; j < J; ++j) {
      if (j) sb_puts(b, ",");
      sb_json_str(b, t->skeleton.names && t->skeleton.names[j] ? t->skeleton.names[j] : "");
    }
    sb_puts(b, "]");
  }
  free(dom);
  free(col);
  return r;
}

/* ,"joints": the clip's diagnosis, every dominating joint, largest share first. */
static void write_joint_diagnosis(sbuf *b, const sks_diagnosis *d) {
  sb_puts(b, ",\n\"joints\":[");
  for (size_t k = 0; k < d->joint_count; ++k) {
    const sks_joint_diagnosis *j = &d->joints[k];
    sb_printf(b, "%s{\"joint\":%d,\"vertices\":%zu,\"share_pct\":", k ? "," : "", (int)j->joint, j->vertex_count);
    sb_json_num(b, j->share * 100.0, 0);
    sb_puts(b, ",\"mean_error_pct\":");
    sb_json_num(b, j->mean_error_pct, 0);
    sb_puts(b, ",\"worst_error_pct\":");
    sb_json_num(b, j->worst_error_pct, 0);
    sb_printf(b, ",\"worst_vertex\":%zu,\"worst_frame\":%zu}", j->worst_vertex, j->worst_frame);
  }
  sb_puts(b, "],\"unattributed_share_pct\":");
  sb_json_num(b, d->unattributed_share * 100.0, 0);
}

/* One list per (clip, mode): the joints holding the largest shares. */
static void write_joint_lists(sbuf *b, const sks_model *t, size_t ncols, const clip_row *rows, size_t row_count) {
  for (size_t c = 0; c < row_count; ++c)
    for (size_t r = 0; r < ncols; ++r) {
      const sks_baked_clip *bc = rows[c].baked[r];
      if (!bc) continue;
      const sks_diagnosis *d = &bc->diagnosis;
      sb_printf(b, "<table class=\"joints\" data-clip=\"%zu\" data-result=\"%zu\">\n<caption>", c, r);
      sb_html(b, rows[c].name);
      sb_printf(b, " (%s): %zu of %zu joints dominate vertices", mode_name(bc->mode), d->joint_count,
                t->skeleton.joint_count);
      if (d->unattributed_vertex_count)
        sb_printf(b, "; %zu vertices without weight hold %.2f %%", d->unattributed_vertex_count,
                  d->unattributed_share * 100.0);
      sb_puts(b, "</caption>\n<thead><tr><th>joint</th><th>vertices</th><th>share of residual %</th>"
                 "<th>mean error %D</th><th>worst error %D</th><th>worst vertex (frame)</th></tr></thead>\n<tbody>\n");
      for (size_t k = 0; k < d->joint_count && k < SKS_REPORT_JOINT_ROWS; ++k) {
        const sks_joint_diagnosis *j = &d->joints[k];
        unsigned char rgb[3];
        joint_color(j->joint, rgb);
        sb_printf(b, "<tr data-joint=\"%d\"><td><span class=\"joint-swatch\" style=\"background:#%02x%02x%02x\"></span>",
                  (int)j->joint, rgb[0], rgb[1], rgb[2]);
        sb_html(b, t->skeleton.names && t->skeleton.names[j->joint] ? t->skeleton.names[j->joint] : "?");
        sb_printf(b, "</td><td>%zu</td>", j->vertex_count);
        table_cell(b, j->share * 100.0, 2);
        table_cell(b, j->mean_error_pct, 5);
        table_cell(b, j->worst_error_pct, 5);
        sb_printf(b, "<td>%zu (%zu)</td></tr>\n", j->worst_vertex, j->worst_frame);
      }
      sb_puts(b, "</tbody>\n</table>\n");
    }
}

/* ---- file --------------------------------------------------------------- */

static const char *asset_text(const char *name) {
  const sks_asset *a = sks_asset_find(name);
  return a ? (const char *)a->data : NULL;
}

/* ---- the data blob ------------------------------------------------------ */

/* One frame of a kept per-vertex array in the report mesh's order: the
 * skinned vertices' (VS of dim floats each), then the rigid parts' (VR). */
static void kept_frame(const float *skinned, const float *rigid, size_t VS, size_t VR, size_t dim, size_t f,
                       float *out) {
  memcpy(out, skinned + f * VS * dim, VS * dim * sizeof(float));
  if (VR) memcpy(out + VS * dim, rigid + f * VR * dim, VR * dim * sizeof(float));
}

/* Frames a view shows at step k: 0, k, 2k, ... < F. */
static size_t shown_frames(size_t F, size_t step) { return (F + step - 1) / step; }

/* m: the whole mesh (the viewer check runs on every vertex); vm, dec: the
 * mesh the viewer shows (vm == m, dec NULL: every vertex). */
static sks_result write_data(sbuf *b, const sks_report_input *in, const report_mesh *m,
                             const report_mesh *vm, const report_decimation *dec,
                             const report_morphs *mo, const report_column *cols, size_t ncols,
                             const clip_row *rows, size_t row_count, double D, size_t step,
                             double *gpu_check_max, sks_error *err) {
  const sks_model *t = in->target;
  size_t V = m->vertex_count, P = m->palette_size, J = t->skeleton.joint_count;
  size_t Vs = vm->vertex_count; /* shown */
  /* version 2: mesh.morphs and each baked clip's morph_weights (1 had neither);
   * 3: the rigid parts' vertices after the skinned ones, one palette entry
   * each after the skins' (2 had no rigid parts) */
  sb_puts(b, "{\"version\":3,\"title\":");
  sb_json_str(b, in->title ? in->title : "skinsolve report");
  sb_puts(b, ",\"source\":");
  sb_json_str(b, in->source && in->source->source_path ? in->source->source_path : "");
  sb_puts(b, ",\"target\":");
  sb_json_str(b, t->source_path ? t->source_path : "");
  sb_puts(b, ",\"diagonal\":");
  sb_json_num(b, D, 0);
  { /* D in the scene's units (the viewer draws the scene: its camera
     * distance), D times T's scale */
    double det = fabs(sks_dm3_det(m->scene_to_bind)), sc = det > 0 && isfinite(det) ? 1.0 / cbrt(det) : 1.0;
    sb_puts(b, ",\"scene_diagonal\":");
    sb_json_num(b, D * sc, 0);
  }
  sb_printf(b, ",\"ramp_max_pct\":%g,\"frame_step\":%zu,\"results\":[", SKS_REPORT_RAMP_MAX_PCT, step);
  for (size_t r = 0; r < ncols; ++r)
    sb_printf(b, "%s{\"mode\":\"%s\",\"result\":%zu,\"constraints\":%zu}", r ? "," : "",
              mode_name(cols[r].mode), cols[r].result, in->results[cols[r].result]->constraint_count);
  sb_printf(b, "],\n\"mesh\":{\"vertex_count\":%zu,\"triangle_count\":%zu,\"palette_size\":%zu,"
               "\"joint_count\":%zu,\"influences\":%zu,\"truncated_influences\":%zu,\"largest_dropped_weight\":%.9g",
            Vs, vm->index_count / 3, P, J, m->influences, m->truncated, m->dropped_weight);
  /* the whole mesh's counts; with decimation the grid cell and the kept
   * vertices' indices in it (vertex k of the view is mesh vertex kept[k]) */
  sb_printf(b, ",\"source_vertex_count\":%zu,\"source_triangle_count\":%zu,\"decimation_cell\":%.17g",
            V, m->index_count / 3, dec ? dec->cell : 0.0);
  /* of the whole mesh: its rigid parts' vertices (mesh vertices skinned_vertex_count..V-1) and
   * their palette entries (rigid_palette_first.., one per part) */
  sb_printf(b, ",\"skinned_vertex_count\":%zu,\"rigid_vertex_count\":%zu,\"rigid_parts\":%zu,"
               "\"rigid_palette_first\":%zu",
            m->skinned_count, m->rigid_count, m->rigid_entries, m->rigid_first);
  if (dec) {
    sb_puts(b, ",\n\"kept_vertices\":");
    sb_base64(b, dec->keep, dec->kept * sizeof(uint32_t));
  }
  sb_puts(b, ",\n\"positions\":");
  sb_base64(b, vm->positions, Vs * 3 * sizeof(float));
  sb_puts(b, ",\n\"normals\":");
  sb_base64(b, vm->normals, Vs * 3 * sizeof(float));
  sb_puts(b, ",\n\"joints\":");
  sb_base64(b, vm->joints, Vs * m->influences * sizeof(uint16_t));
  sb_puts(b, ",\n\"weights\":");
  sb_base64(b, vm->weights, Vs * m->influences * sizeof(float));
  sb_puts(b, ",\n\"indices\":");
  sb_base64(b, vm->indices, vm->index_count * sizeof(uint32_t));
  sks_result drc = write_dominant(b, t, V, dec, err);
  if (drc != SKS_OK) return drc;
  /* the carried morph targets: per part its shown vertices [first, first +
   * count) and position deltas (f32, target-major: delta k of shown vertex
   * i at (k * count + i) * 3), and normal_deltas the same way when the file
   * has them; a frame's weights are the baked clip's
   * morph_weights[frame * weight_count + weight_offset + k] */
  if (mo->count) {
    sb_printf(b, ",\n\"morph_weight_count\":%zu,\"morphs\":[", mo->weights);
    for (size_t i = 0; i < mo->count; ++i) {
      const report_morph_part *g = &mo->g[i];
      const sks_mesh_part *part = &t->parts[g->part];
      size_t first = 0, n = morph_shown(g, dec, &first);
      size_t nd = g->targets * n;
      float *dl = malloc((nd ? nd : 1) * 3 * sizeof(float));
      if (!dl) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "report: out of memory for morph targets");
      for (size_t k = 0; k < g->targets; ++k)
        for (size_t q = 0; q < n; ++q) {
          size_t v = (dec ? dec->keep[first + q] : first + q) - g->first; /* vertex of the part */
          const float *d = part->morph_targets[k].position_deltas;
          double x[3] = {0, 0, 0}, bd[3];
          for (int a = 0; d && a < 3; ++a) x[a] = d[3 * v + (size_t)a];
          sks_dm3_apply(g->L, x, bd); /* in bind space, as the positions */
          for (int a = 0; a < 3; ++a) dl[(k * n + q) * 3 + (size_t)a] = (float)bd[a];
        }
      sb_printf(b, "%s{\"part\":%zu,\"name\":", i ? "," : "", g->part);
      sb_json_str(b, part->name ? part->name : "");
      sb_printf(b, ",\"first\":%zu,\"count\":%zu,\"targets\":%zu,\"weight_offset\":%zu,\"target_names\":[",
                first, n, g->targets, g->weight_offset);
      for (size_t k = 0; k < g->targets; ++k) {
        if (k) sb_puts(b, ",");
        sb_json_str(b, part->morph_targets[k].name ? part->morph_targets[k].name : "");
      }
      sb_puts(b, "],\n\"deltas\":");
      sb_base64(b, dl, g->targets * n * 3 * sizeof(float));
      if (g->normals) {
        /* normal deltas as the page's normals are stored: N dn / |N n|
         * (the normal unit length), so normal + sum_k w_k delta_k is the
         * morphed normal's direction (length for the shader to normalise) */
        for (size_t k = 0; k < g->targets; ++k)
          for (size_t q = 0; q < n; ++q) {
            size_t v = (dec ? dec->keep[first + q] : first + q) - g->first;
            const float *dn = part->morph_targets[k].normal_deltas, *nv = part->normals + 3 * v;
            double x[3] = {nv[0], nv[1], nv[2]}, y[3], dx[3] = {0, 0, 0}, dy[3];
            sks_dm3_apply(g->N, x, y);
            double len = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]), sc = len > 0 && isfinite(len) ? 1.0 / len : 1.0;
            for (int a = 0; dn && a < 3; ++a) dx[a] = dn[3 * v + (size_t)a];
            sks_dm3_apply(g->N, dx, dy);
            for (int a = 0; a < 3; ++a) dl[(k * n + q) * 3 + (size_t)a] = (float)(dy[a] * sc);
          }
        sb_puts(b, ",\n\"normal_deltas\":");
        sb_base64(b, dl, g->targets * n * 3 * sizeof(float));
      }
      sb_puts(b, "}");
      free(dl);
    }
    sb_puts(b, "]");
  }
  sb_puts(b, "},\n\"clips\":[");

  /* Buffers for the SHOWN frames only (bounded by the budget), plus one
   * frame's palette for the viewer check, which runs over every frame. */
  size_t maxF = 0;
  for (size_t c = 0; c < row_count; ++c)
    for (size_t r = 0; r < ncols; ++r)
      if (rows[c].baked[r] && rows[c].baked[r]->frame_count > maxF) maxF = rows[c].baked[r]->frame_count;
  size_t S = shown_frames(maxF, step);
  size_t n_pal = S * P * 12, n_gt = S * Vs;
  float *pal = malloc((n_pal ? n_pal : 1) * sizeof(float));
  float *pal1 = malloc((P ? P : 1) * 12 * sizeof(float));
  float *centers = malloc((S ? S : 1) * 3 * sizeof(float));
  float *scales = malloc((S ? S : 1) * sizeof(float));
  int8_t *residual = malloc((n_gt ? n_gt : 1) * 3);
  uint16_t *eh = malloc((n_gt ? n_gt : 1) * sizeof(uint16_t));
  sks_mat4 *models = malloc((J ? J : 1) * sizeof(sks_mat4));
  float *emax = malloc((Vs ? Vs : 1) * sizeof(float)); /* a frame's largest error per shown vertex */
  size_t W = mo->weights;
  size_t nmw = S * W;
  float *mw = malloc((nmw ? nmw : 1) * sizeof(float)), *mw1 = malloc((W ? W : 1) * sizeof(float));
  float *mpos = malloc((V ? V : 1) * 3 * sizeof(float)); /* the bind the viewer skins, morphed */
  /* one frame of the kept surfaces and errors, skinned and rigid vertices */
  float *fy = malloc((V ? V : 1) * 3 * sizeof(float)), *fs = malloc((V ? V : 1) * 3 * sizeof(float));
  float *fe = malloc((V ? V : 1) * sizeof(float));
  const size_t VS = m->skinned_count, VR = m->rigid_count;
  if (!pal || !pal1 || !centers || !scales || !residual || !eh || !models || !emax || !mw || !mw1 || !mpos || !fy ||
      !fs || !fe) {
    free(pal); free(pal1); free(centers); free(scales); free(residual); free(eh); free(models); free(emax);
    free(mw); free(mw1); free(mpos); free(fy); free(fs); free(fe);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "report: out of memory for %zu frames", S);
  }
  memcpy(mpos, m->positions, V * 3 * sizeof(float));
  sks_result rc = SKS_OK;
  for (size_t c = 0; c < row_count && rc == SKS_OK; ++c) {
    const sks_baked_clip *first = NULL;
    for (size_t r = 0; r < ncols && !first; ++r) first = rows[c].baked[r];
    size_t F = first->frame_count, Fs = shown_frames(F, step);
    sb_puts(b, c ? ",\n{" : "\n{");
    sb_puts(b, "\"name\":");
    sb_json_str(b, rows[c].name);
    /* frame_count / times / the per-frame arrays: the shown frames (frame i
     * of the view is frame i * frame_step of the clip). */
    sb_printf(b, ",\"frame_count\":%zu,\"source_frame_count\":%zu,\"frame_step\":%zu,\"times\":[", Fs, F, step);
    for (size_t i = 0; i < Fs; ++i) {
      if (i) sb_puts(b, ",");
      sb_json_num(b, first->times[i * step], 1);
    }
    sb_puts(b, "]");
    /* Ground truth y_fj = (base bake's solved surface) + residual r, the
     * residual as signed 8-bit with a square-root law against the frame's
     * largest component: fine near zero, ~0.8% of that maximum at the top. */
    size_t base = 0;
    while (!rows[c].baked[base]) ++base;
    const sks_baked_clip *bb = rows[c].baked[base];
    for (size_t i = 0; i < Fs; ++i) {
      size_t f = i * step;
      kept_frame(first->target_surface, first->rigid_target_surface, VS, VR, 3, f, fy);
      kept_frame(bb->solved_surface, bb->rigid_solved_surface, VS, VR, 3, f, fs);
      const float *y = fy, *s = fs;
      float lo[3] = {FLT_MAX, FLT_MAX, FLT_MAX}, hi[3] = {-FLT_MAX, -FLT_MAX, -FLT_MAX};
      double rmax = 0;
      for (size_t q = 0; q < V * 3; ++q) {
        double r = (double)y[q] - (double)s[q];
        if (isfinite(r) && fabs(r) > rmax) rmax = fabs(r);
        int k = (int)(q % 3);
        if (!isfinite(y[q])) continue;
        if (y[q] < lo[k]) lo[k] = y[q];
        if (y[q] > hi[k]) hi[k] = y[q];
      }
      for (int k = 0; k < 3; ++k) centers[3 * i + (size_t)k] = lo[k] <= hi[k] ? 0.5f * (lo[k] + hi[k]) : 0.0f;
      scales[i] = (float)rmax;
      for (size_t k = 0; k < Vs; ++k)
        for (size_t a = 0; a < 3; ++a) {
          size_t q = 3 * (dec ? dec->keep[k] : k) + a;
          double r = (double)y[q] - (double)s[q];
          double u = rmax > 0 && isfinite(r) ? sqrt(fabs(r) / rmax) * 127.0 : 0.0;
          long qq = lround(u > 127 ? 127 : u);
          residual[(i * Vs + k) * 3 + a] = (int8_t)(r < 0 ? -qq : qq);
        }
    }
    sb_printf(b, ",\"gt_base\":%zu", base);
    sb_puts(b, ",\n\"frame_centers\":");
    sb_base64(b, centers, Fs * 3 * sizeof(float));
    sb_puts(b, ",\n\"gt_residual_scale\":");
    sb_base64(b, scales, Fs * sizeof(float));
    sb_puts(b, ",\n\"gt_residual\":");
    sb_base64(b, residual, Fs * Vs * 3);
    sb_puts(b, ",\n\"baked\":[");
    for (size_t r = 0; r < ncols; ++r) {
      const sks_baked_clip *bc = rows[c].baked[r];
      if (r) sb_puts(b, ",");
      if (!bc) { sb_puts(b, "null"); continue; }
      if (bc->frame_count != F) {
        rc = sks_error_set(err, SKS_ERR_ARGUMENT, "report: clip '%s' has %zu frames in one result and %zu in another",
                           rows[c].name, F, bc->frame_count);
        break;
      }
      /* The viewer check and the ramp count over every frame; palettes and
       * errors kept for the shown ones. */
      double check = 0;
      size_t over = 0;
      for (size_t f = 0; f < F && rc == SKS_OK; ++f) {
        float *pf = f % step == 0 ? pal + (f / step) * P * 12 : pal1;
        if (!report_palette(t, m, bc->locals + f * bc->joint_count, models, pf)) {
          rc = sks_error_set(err, SKS_ERR_INVALID, "report: target skeleton is not parent-first");
          break;
        }
        if (W) {
          float *w = f % step == 0 ? mw + (f / step) * W : mw1;
          report_morph_weights(mo, t, bc, f, w);
          report_morph_positions(mo, t, m, w, mpos);
        }
        kept_frame(bc->solved_surface, bc->rigid_solved_surface, VS, VR, 3, f, fs);
        kept_frame(bc->vertex_error, bc->rigid_vertex_error, VS, VR, 1, f, fe);
        double d = report_gpu_check_frame(m, mpos, pf, fs);
        if (!(d <= check)) check = d;
        if (f % step == 0) for (size_t k = 0; k < Vs; ++k) emax[k] = 0;
        for (size_t v = 0; v < V; ++v) {
          float e = fe[v];
          double pct = (D > 0 ? (double)e / D : (double)e) * 100.0;
          if (!(pct >= 0)) pct = INFINITY; /* NaN: show as worst */
          if (f % step == 0) {
            size_t k = dec ? dec->rep[v] : v; /* the largest of those a kept vertex stands for */
            if ((float)pct > emax[k]) emax[k] = (float)pct;
          }
          if (pct >= SKS_REPORT_RAMP_MAX_PCT) ++over;
        }
        if (f % step == 0)
          for (size_t k = 0; k < Vs; ++k) eh[(f / step) * Vs + k] = half_from_float(emax[k]);
      }
      if (rc != SKS_OK) break;
      if (D > 0) check /= D;
      if (!(check <= *gpu_check_max)) *gpu_check_max = check;
      sb_printf(b, "\n{\"result\":%zu,\"mode\":\"%s\",\"quality\":", r, mode_name(bc->mode));
      sb_json_num(b, bc->quality, 0);
      sb_puts(b, ",\"mean_error_pct\":");
      sb_json_num(b, bc->mean_error_pct, 0);
      sb_puts(b, ",\"worst_error_pct\":");
      sb_json_num(b, bc->worst_error_pct, 0);
      sb_puts(b, ",\"solve_ms\":");
      sb_json_num(b, bc->solve_ms, 0);
      sb_puts(b, ",\"sweeps_per_frame\":");
      sb_json_num(b, bc->sweeps_per_frame, 0);
      sb_puts(b, ",\"gpu_check_pct\":");
      sb_json_num(b, check * 100.0, 0);
      sb_printf(b, ",\"vertex_frames_at_ramp_max\":%zu", over);
      sb_puts(b, ",\n\"frame_mean_error_pct\":[");
      for (size_t i = 0; i < Fs; ++i) {
        if (i) sb_puts(b, ",");
        sb_json_num(b, bc->frame_mean_error_pct[i * step], 1);
      }
      sb_puts(b, "],\n\"frame_worst_error_pct\":[");
      for (size_t i = 0; i < Fs; ++i) {
        if (i) sb_puts(b, ",");
        sb_json_num(b, bc->frame_worst_error_pct[i * step], 1);
      }
      sb_puts(b, "],\n\"palettes\":");
      sb_base64(b, pal, Fs * P * 12 * sizeof(float));
      sb_puts(b, ",\n\"vertex_error\":");
      sb_base64(b, eh, Fs * Vs * sizeof(uint16_t));
      if (W) {
        sb_puts(b, ",\n\"morph_weights\":");
        sb_base64(b, mw, Fs * W * sizeof(float));
      }
      write_joint_diagnosis(b, &bc->diagnosis);
      sb_puts(b, "}");
    }
    sb_puts(b, "]}");
  }
  sb_puts(b, "]}");
  free(pal); free(pal1); free(centers); free(scales); free(residual); free(eh); free(models); free(emax);
  free(mw); free(mw1); free(mpos); free(fy); free(fs); free(fe);
  return rc;
}

/* ---- the budget --------------------------------------------------------- */

/* Everything of the page but the data blob and the summary, built once: the
 * plan sizes the blob against what is already there. */
typedef struct report_layout {
  report_mesh mesh;
  report_column *cols;
  clip_row *rows;
  const sks_baked_clip **cells;
  size_t ncols, row_count;
  double D;
  sbuf table, plots, joints;
  report_decimation dec; /* kept == 0: every vertex shown */
  report_morphs morphs;  /* the carried morph targets the viewer applies */
} report_layout;

static void layout_free(report_layout *L) {
  report_mesh_free(&L->mesh);
  decimation_free(&L->dec);
  free(L->morphs.g);
  free(L->cols); free(L->rows); free(L->cells);
  free(L->table.data); free(L->plots.data); free(L->joints.data);
  memset(L, 0, sizeof *L);
}

static sks_result layout_build(const sks_report_input *input, report_layout *L, sks_error *err) {
  memset(L, 0, sizeof *L);
  sks_result rc = report_validate(input, err);
  if (rc != SKS_OK) return rc;
  const sks_model *t = input->target;
  L->D = input->results[0]->diagonal > 0 ? input->results[0]->diagonal : sks_bake_diagonal(t);
  rc = report_mesh_build(t, &L->mesh, err);
  if (rc == SKS_OK) rc = report_morphs_build(input, &L->morphs, err);
  if (rc != SKS_OK) return rc;
  /* Columns (result, mode) and rows (clip names), first-seen order. */
  size_t cap = 0;
  for (size_t r = 0; r < input->result_count; ++r) cap += input->results[r]->clip_count;
  size_t maxcols = input->result_count * 2;
  L->cols = calloc(maxcols, sizeof(report_column));
  L->rows = calloc(cap ? cap : 1, sizeof(clip_row));
  L->cells = calloc((cap ? cap : 1) * maxcols, sizeof(*L->cells));
  if (!L->cols || !L->rows || !L->cells) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "report: out of memory");
  for (size_t r = 0; r < input->result_count; ++r) {
    const sks_bake_result *res = input->results[r];
    for (size_t c = 0; c < res->clip_count; ++c) {
      sks_solve_mode mode = res->clips[c].mode == SKS_SOLVE_ROTATION_ONLY ? SKS_SOLVE_ROTATION_ONLY : SKS_SOLVE_FREE;
      size_t col = 0;
      while (col < L->ncols && !(L->cols[col].result == r && L->cols[col].mode == mode)) ++col;
      if (col == L->ncols) {
        L->cols[col].result = r;
        L->cols[col].mode = mode;
        ++L->ncols;
      }
      const char *name = res->clips[c].name ? res->clips[c].name : "";
      size_t k = 0;
      while (k < L->row_count && strcmp(L->rows[k].name, name) != 0) ++k;
      if (k == L->row_count) {
        L->rows[k].name = name;
        L->rows[k].baked = L->cells + k * maxcols;
        ++L->row_count;
      }
      if (!L->rows[k].baked[col]) L->rows[k].baked[col] = &res->clips[c];
    }
  }
  write_table(&L->table, L->ncols, L->rows, L->row_count);
  write_joint_lists(&L->joints, t, L->ncols, L->rows, L->row_count);
  for (size_t c = 0; c < L->row_count; ++c) write_plot(&L->plots, L->ncols, &L->rows[c], c);
  if (L->table.oom || L->plots.oom || L->joints.oom) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "report: out of memory");
  return SKS_OK;
}

/* A number for a data- attribute and the page: "" / "n/a" when unknown. */
static void sb_num_attr(sbuf *b, const char *name, double v, const char *fmt) {
  sb_printf(b, " data-%s=\"", name);
  if (isfinite(v)) sb_printf(b, fmt, v);
  sb_puts(b, "\"");
}

/* The alignment the bake found (sks_bake_alignment; README "Alignment" and
 * "Joint names"), as the CLI's header says it: a row of the summary, and a
 * note when the joints' names say the source may lie on its side, upside
 * down or turned, so that the viewer is where to look. */
static void report_alignment(sbuf *b, const sks_bake_alignment *a, double distance_pct, int same_mesh) {
  sb_puts(b, "<dl class=\"summary\"><dt>alignment</dt><dd id=\"alignment\"");
  sb_num_attr(b, "scale", a->applied ? a->scale : 1.0, "%.9g");
  sb_num_attr(b, "angle-deg", a->applied ? a->angle_deg : 0.0, "%.6g");
  sb_printf(b, " data-mirrored=\"%d\" data-registered=\"%d\"", a->mirrored, a->registered);
  sb_num_attr(b, "distance-pct", distance_pct, "%.6g");
  sb_num_attr(b, "label-agreement", a->label_agreement, "%.6g");
  sb_num_attr(b, "head-agreement", a->head_agreement, "%.6g");
  sb_num_attr(b, "up-deg", a->up_deg, "%.6g");
  sb_num_attr(b, "facing-deg", a->facing_deg, "%.6g");
  sb_puts(b, ">");
  if (a->applied)
    sb_printf(b, "scale %.6g, %s %.2f deg%s; ", a->scale,
              a->mirrored ? "mirrored (the files' handedness differs), then turned" : "rotation", a->angle_deg,
              a->registered ? ", the source posed by its own rig onto the target's bind surface" : "");
  else
    sb_puts(b, "none applied (the files' bind spaces as they are); ");
  sb_printf(b, "%s, the target's vertices on average %.3g %% of D from the source surface",
            same_mesh ? "the same mesh (vertex for vertex)" : "closest points", distance_pct);
  if (isfinite(a->label_agreement)) {
    sb_printf(b, "; joint names agree %.0f %%", 100.0 * a->label_agreement);
    if (isfinite(a->head_agreement)) sb_printf(b, " (head %.0f %%)", 100.0 * a->head_agreement);
  } else if (isfinite(a->head_agreement)) { /* labels from the skeleton's shape: a head, no sides */
    sb_printf(b, "; the heads agree %.0f %% (sides not labelled on both rigs)", 100.0 * a->head_agreement);
  }
  if (isfinite(a->up_deg)) sb_printf(b, "; its head points %.0f deg from the target's", a->up_deg);
  if (isfinite(a->facing_deg) && a->facing_by_knees)
    sb_printf(b, "; by %s it faces %.0f deg from the target's way", sks_bake_facing_by(a), a->facing_deg);
  else if (isfinite(a->facing_deg))
    sb_printf(b, "; its feet point %.0f deg from the target's", a->facing_deg);
  sb_puts(b, "</dd></dl>\n");
  const int doubt = sks_bake_alignment_names(a);
  if (doubt == SKS_NAMES_ON_SIDE)
    sb_printf(b, "<p class=\"note\" id=\"alignment-note\">By the joints' names the source's head points %.0f deg "
                 "from the target's: the source may be aligned on its side or upside down, its motion then played "
                 "on other limbs. Play a clip in the viewer and check that each limb moves as the source's "
                 "does.</p>\n",
              a->up_deg);
  else if (doubt == SKS_NAMES_TURNED)
    sb_printf(b, "<p class=\"note\" id=\"alignment-note\">By %s the source faces %.0f deg from "
                 "the target's way: it may be aligned turned round, its left limbs' motion then played on the right "
                 "ones. Play a clip in the viewer and check that each limb moves as the source's does.</p>\n",
              a->facing_by_knees ? sks_bake_facing_by(a) : "the feet's bones", a->facing_deg);
  else if (doubt == SKS_NAMES_DISAGREE)
    sb_printf(b, "<p class=\"note\" id=\"alignment-note\">By the joints' names only %.0f %% of the target's head, "
                 "left and right vertices correspond to the source's same part: the source may be aligned turned, "
                 "on its side or upside down, its motion then played on other limbs (or one rig names its sides "
                 "from the viewer). Play a clip in the viewer and check that each limb moves as the source's "
                 "does.</p>\n",
              100.0 * a->label_agreement);
}

/* Bytes of base64 (quoted) of n bytes, and of one JSON number with its comma
 * (the longest "%.17g": "-2.2250738585072014e-308"). */
static double b64_bytes(double n) { return 4.0 * ceil(n / 3.0) + 2.0; }
#define REPORT_JSON_NUM_BYTES 25.0
/* Summary, decimation note, keys and small numbers: generous, checked after. */
#define REPORT_SLACK_BYTES 16384.0

static double str_bytes(const char *s) { return s ? 6.0 * (double)strlen(s) : 0.0; } /* escaped */

/* An upper bound of the file's size when the views show every step-th frame
 * of a mesh of nv vertices and ni triangle indices. */
static double report_bytes(const sks_report_input *in, const report_layout *L, size_t step, size_t nv,
                           size_t ni, const report_decimation *d) {
  const report_mesh *m = &L->mesh;
  double V = (double)nv, P = (double)m->palette_size, K = (double)m->influences;
  int decimated = nv < m->vertex_count;
  const char *tmpl = asset_text("report.html"), *css = asset_text("style.css"), *js = asset_text("viewer.js");
  double total = (double)((tmpl ? strlen(tmpl) : 0) + (css ? strlen(css) : 0) + (js ? strlen(js) : 0) +
                          L->table.len + L->plots.len + L->joints.len) + REPORT_SLACK_BYTES;
  /* the dominant-joint view: a joint per vertex, a colour and a name per joint */
  const sks_skeleton *sk = &in->target->skeleton;
  total += b64_bytes(V * 4) + b64_bytes((double)sk->joint_count * 3) + 64;
  for (size_t j = 0; j < sk->joint_count; ++j) total += 4 + str_bytes(sk->names ? sk->names[j] : NULL);
  const char *src = in->source ? in->source->source_path : NULL, *tgt = in->target->source_path;
  total += 8 * (str_bytes(in->title) + str_bytes(src) + str_bytes(tgt) + 32); /* data, summary, {{title}} */
  total += 128.0 * (double)L->ncols;
  total += 2 * b64_bytes(V * 12) + b64_bytes(V * K * 2) + b64_bytes(V * K * 4) + b64_bytes((double)ni * 4) +
           (decimated ? b64_bytes(V * 4) : 0); /* kept_vertices */
  /* carried morph targets: deltas of the shown vertices, names, per shown
   * frame its weights (f32) */
  const report_morphs *mo = &L->morphs;
  for (size_t i = 0; i < mo->count; ++i) {
    const report_morph_part *g = &mo->g[i];
    const sks_mesh_part *part = &in->target->parts[g->part];
    total += 256 + str_bytes(part->name) +
             (g->normals ? 2 : 1) * b64_bytes((double)g->targets * (double)morph_shown(g, d, NULL) * 12);
    for (size_t k = 0; k < g->targets; ++k) total += 4 + str_bytes(part->morph_targets[k].name);
  }
  for (size_t c = 0; c < L->row_count; ++c) {
    const sks_baked_clip *first = NULL;
    for (size_t r = 0; r < L->ncols && !first; ++r) first = L->rows[c].baked[r];
    double S = (double)shown_frames(first->frame_count, step);
    total += 256 + str_bytes(L->rows[c].name) + S * REPORT_JSON_NUM_BYTES + b64_bytes(S * 12) + b64_bytes(S * 4) +
             b64_bytes(S * V * 3);
    for (size_t r = 0; r < L->ncols; ++r)
      if (L->rows[c].baked[r])
        total += 512 + 2 * S * REPORT_JSON_NUM_BYTES + b64_bytes(S * P * 48) + b64_bytes(S * V * 2) +
                 (mo->weights ? 32 + b64_bytes(S * (double)mo->weights * 4) : 0) +
                 (double)L->rows[c].baked[r]->diagnosis.joint_count * (6 * 24 + 96); /* its "joints" */
  }
  return total;
}

/* "every 4th frame", "every 2nd", "every 21st". */
static const char *ordinal_suffix(size_t n) {
  if (n % 100 >= 11 && n % 100 <= 13) return "th";
  return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

static size_t report_budget(const sks_report_input *in) {
  return in && in->max_bytes ? in->max_bytes : SKS_REPORT_DEFAULT_MAX_BYTES;
}

/* The smallest frame step at which a mesh of nv vertices / ni indices fits
 * `budget` (the size only falls as the step grows); 0 when none does. */
static size_t smallest_step(const sks_report_input *in, const report_layout *L, size_t frames, size_t nv,
                            size_t ni, const report_decimation *d, double budget) {
  size_t lo = 1, hi = frames ? frames : 1;
  if (report_bytes(in, L, hi, nv, ni, d) > budget) return 0;
  while (lo < hi) { /* invariant: hi fits */
    size_t mid = lo + (hi - lo) / 2;
    if (report_bytes(in, L, mid, nv, ni, d) <= budget) hi = mid;
    else lo = mid + 1;
  }
  return hi;
}

/* Does the mesh clustered on a grid of `cell` fit `budget` at one frame per
 * clip? (d filled either way) */
static int cluster_fits(const sks_report_input *in, const report_layout *L, size_t frames, double cell,
                        double budget, report_decimation *d, sks_result *rc, sks_error *err) {
  *rc = report_cluster(&L->mesh, cell, d, err);
  return *rc == SKS_OK && report_bytes(in, L, frames ? frames : 1, d->kept, d->index_count, d) <= budget;
}

/* The plan: the smallest frame step whose file fits the budget; when even
 * one frame per clip does not, the viewer's mesh is clustered (see
 * report_cluster) on the finest grid of the bind box's longest side / r
 * (r = 1 .. 2^20, binary search) whose page at one frame per clip takes at
 * most HALF the budget (the other half for frames), then the smallest frame
 * step that fits; an error when even the coarsest grid does not fit. */
static sks_result report_plan(const sks_report_input *in, report_layout *L, sks_report_plan *plan,
                              sks_error *err) {
  memset(plan, 0, sizeof *plan);
  decimation_free(&L->dec);
  const report_mesh *m = &L->mesh;
  plan->max_bytes = report_budget(in);
  plan->vertex_count = plan->vertices_shown = m->vertex_count;
  plan->triangles = plan->triangles_shown = m->index_count / 3;
  for (size_t c = 0; c < L->row_count; ++c)
    for (size_t r = 0; r < L->ncols; ++r)
      if (L->rows[c].baked[r] && L->rows[c].baked[r]->frame_count > plan->frames)
        plan->frames = L->rows[c].baked[r]->frame_count;
  double budget = (double)plan->max_bytes, all = report_bytes(in, L, 1, m->vertex_count, m->index_count, NULL);
  plan->bytes_all = all < (double)SIZE_MAX ? (size_t)all : SIZE_MAX;
  size_t step = smallest_step(in, L, plan->frames, m->vertex_count, m->index_count, NULL, budget);
  if (step == 0) {
    double at_hi = report_bytes(in, L, plan->frames, m->vertex_count, m->index_count, NULL);
    double ext = 0;
    for (int a = 0; a < 3; ++a) {
      double lo = DBL_MAX, hi = -DBL_MAX;
      for (size_t v = 0; v < m->vertex_count; ++v) {
        lo = fmin(lo, (double)m->positions[3 * v + (size_t)a]);
        hi = fmax(hi, (double)m->positions[3 * v + (size_t)a]);
      }
      if (hi - lo > ext) ext = hi - lo;
    }
    if (!(ext > 0) || !isfinite(ext)) ext = 1;
    sks_result rc = SKS_OK;
    report_decimation d;
    /* the coarsest grid (a cell the size of the box) at half, then at the
     * whole budget */
    int half = cluster_fits(in, L, plan->frames, ext, budget / 2, &d, &rc, err);
    int whole = half || (rc == SKS_OK && report_bytes(in, L, plan->frames, d.kept, d.index_count, &d) <= budget);
    if (rc != SKS_OK) return rc;
    if (!whole) {
      size_t kept = d.kept;
      decimation_free(&d);
      return sks_error_set(err, SKS_ERR_UNSUPPORTED,
                           "report: %zu clip(s) of up to %zu frames x %zu vertices need %.1f MB even with one frame "
                           "shown per clip and the viewer's mesh simplified to %zu vertices (%.1f MB with all), "
                           "over the report budget of %.1f MB (raise --report-max-mb, or bake fewer clips)",
                           L->row_count, plan->frames, plan->vertex_count, at_hi / 1048576.0, kept,
                           all / 1048576.0, budget / 1048576.0);
    }
    size_t lo = 1, hi = (size_t)1 << 20; /* r: cells along the longest side */
    if (half) {
      while (lo < hi) { /* invariant: lo fits half the budget */
        size_t mid = lo + (hi - lo + 1) / 2;
        report_decimation t;
        if (cluster_fits(in, L, plan->frames, ext / (double)mid, budget / 2, &t, &rc, err)) {
          lo = mid;
          decimation_free(&d);
          d = t;
        } else {
          decimation_free(&t);
          if (rc != SKS_OK) { decimation_free(&d); return rc; }
          hi = mid - 1;
        }
      }
    }
    L->dec = d;
    plan->vertices_shown = d.kept;
    plan->triangles_shown = d.index_count / 3;
    plan->cell = d.cell;
    step = smallest_step(in, L, plan->frames, d.kept, d.index_count, &L->dec, budget);
    if (step == 0) step = plan->frames ? plan->frames : 1; /* fits at one frame per clip (whole) */
  }
  plan->frame_step = step;
  plan->frames_shown = shown_frames(plan->frames, step);
  int dec_shown = plan->vertices_shown < m->vertex_count;
  double b = report_bytes(in, L, step, plan->vertices_shown, dec_shown ? L->dec.index_count : m->index_count,
                          dec_shown ? &L->dec : NULL);
  plan->bytes = b < (double)SIZE_MAX ? (size_t)b : SIZE_MAX;
  return SKS_OK;
}

sks_result sks_report_plan_views(const sks_report_input *input, sks_report_plan *plan, sks_error *err) {
  if (!plan) return sks_error_set(err, SKS_ERR_ARGUMENT, "report: no plan to fill");
  memset(plan, 0, sizeof *plan);
  report_layout L;
  sks_result rc = layout_build(input, &L, err);
  if (rc == SKS_OK) rc = report_plan(input, &L, plan, err);
  layout_free(&L);
  return rc;
}

sks_result sks_report_write_html(const char *path, const sks_report_input *input, sks_error *err) {
  if (!path || !*path) return sks_error_set(err, SKS_ERR_ARGUMENT, "report: no output path");
  char *html = NULL;
  size_t size = 0;
  sks_result rc = sks_report_html(input, &html, &size, err);
  if (rc == SKS_OK) rc = sks_write_file_atomic(path, html, size, err);
  free(html);
  return rc;
}

sks_result sks_report_html(const sks_report_input *input, char **html, size_t *size, sks_error *err) {
  return sks_report_html_plan(input, html, size, NULL, err);
}

sks_result sks_report_html_plan(const sks_report_input *input, char **html, size_t *size,
                                sks_report_plan *plan_out, sks_error *err) {
  if (plan_out) memset(plan_out, 0, sizeof *plan_out);
  if (!html || !size) return sks_error_set(err, SKS_ERR_ARGUMENT, "report: no output buffer");
  *html = NULL;
  *size = 0;
  const char *tmpl = asset_text("report.html"), *css = asset_text("style.css"), *js = asset_text("viewer.js");
  if (!tmpl || !css || !js)
    return sks_error_set(err, SKS_ERR_INVALID, "report: viewer assets missing from the library build");
  report_layout L;
  sks_report_plan plan;
  sks_result rc = layout_build(input, &L, err);
  if (rc == SKS_OK) rc = report_plan(input, &L, &plan, err);
  if (rc != SKS_OK) { layout_free(&L); return rc; }
  const sks_model *t = input->target;
  const report_mesh *mesh = &L.mesh;

  sbuf data = {0}, summary = {0}, out = {0};
  double gpu_check = 0;
  const report_decimation *dec = L.dec.kept ? &L.dec : NULL;
  report_mesh shown;
  memset(&shown, 0, sizeof shown);
  if (dec) rc = report_mesh_gather(mesh, dec, &shown, err);
  if (rc == SKS_OK)
    rc = write_data(&data, input, mesh, dec ? &shown : mesh, dec, &L.morphs, L.cols, L.ncols, L.rows, L.row_count, L.D,
                    plan.frame_step, &gpu_check, err);
  report_mesh_free(&shown);

  const char *title = input->title ? input->title : "skinsolve report";
  sb_puts(&summary, "<dl class=\"summary\"><dt>source</dt><dd>");
  sb_html(&summary, input->source && input->source->source_path ? input->source->source_path : "(unnamed)");
  sb_puts(&summary, "</dd><dt>target</dt><dd>");
  sb_html(&summary, t->source_path ? t->source_path : "(unnamed)");
  sb_printf(&summary, "</dd><dt>target vertices</dt><dd id=\"target-vertices\" data-skinned=\"%zu\" "
                      "data-rigid=\"%zu\">%zu (%zu skinned, %zu in %zu rigid parts)</dd>"
                      "<dt>target joints</dt><dd>%zu</dd>"
                      "<dt>constraints</dt><dd>%zu</dd><dt>D (bind-pose diagonal)</dt><dd>%.6g</dd>"
                      "<dt>viewer check</dt><dd id=\"gpu-check\" data-value=\"%.9g\">the vertex shader's palette "
                      "skinning (%zu influences%s%s) reproduces the solver's surface within %.2g %% of D, "
                      "over every vertex and frame</dd></dl>\n",
            mesh->skinned_count, mesh->rigid_count, mesh->vertex_count, mesh->skinned_count, mesh->rigid_count,
            mesh->rigid_entries, t->skeleton.joint_count, input->results[0]->constraint_count, L.D,
            gpu_check * 100.0, mesh->influences, mesh->rigid_entries ? ", rigid parts on their node" : "",
            L.morphs.count ? ", of the bind with the carried morph targets" : "", gpu_check * 100.0);
  report_alignment(&summary, &input->results[0]->alignment, input->results[0]->correspondence_mean_pct,
                   input->results[0]->correspondence_identity);
  if (mesh->truncated)
    sb_printf(&summary, "<p class=\"note\">%zu vertices have more than %zu influences; the viewer keeps the "
                        "%zu largest (renormalised; largest weight dropped %.3g), so those vertices may be drawn "
                        "slightly off the solved surface. The colours are the solver's errors regardless.</p>\n",
              mesh->truncated, mesh->influences, mesh->influences, mesh->dropped_weight);
  if (plan.frame_step > 1)
    sb_printf(&summary, "<p class=\"note\" id=\"frame-step\" data-step=\"%zu\">To keep this file within its "
                        "budget of %.3g MB (--report-max-mb), the viewer shows every %zu%s frame "
                        "(%zu of %zu frames x %zu vertices; all frames would take %.3g MB). The table, the "
                        "plots and every number (quality, mean and worst error, viewer check) are over all "
                        "frames.</p>\n",
              plan.frame_step, (double)plan.max_bytes / 1048576.0, plan.frame_step,
              ordinal_suffix(plan.frame_step), plan.frames_shown, plan.frames, plan.vertex_count,
              (double)plan.bytes_all / 1048576.0);

  if (dec)
    sb_printf(&summary, "<p class=\"note\" id=\"vertex-decimation\" data-vertices=\"%zu\" data-source-vertices=\"%zu\" "
                        "data-cell=\"%.9g\">To keep this file within its budget of %.3g MB (--report-max-mb), the viewer "
                        "shows a simplified mesh: %zu of the %zu vertices and %zu of the %zu triangles (vertex "
                        "clustering on a grid of %.3g %% of D: each cell keeps one real vertex, skinned by its own "
                        "weights and coloured by the largest error of the vertices it stands for). The table, the "
                        "plots and every number (quality, mean and worst error, viewer check) are over all "
                        "vertices and frames.</p>\n",
              plan.vertices_shown, plan.vertex_count, plan.cell, (double)plan.max_bytes / 1048576.0,
              plan.vertices_shown, plan.vertex_count, plan.triangles_shown, plan.triangles,
              L.D > 0 ? plan.cell / L.D * 100.0 : 0.0);
  /* Fill the template: {{name}} markers. */
  for (const char *p = tmpl; rc == SKS_OK && *p;) {
    const char *open = strstr(p, "{{");
    if (!open) { sb_puts(&out, p); break; }
    sb_put(&out, p, (size_t)(open - p));
    const char *close = strstr(open, "}}");
    if (!close) { rc = sks_error_set(err, SKS_ERR_INVALID, "report.html: unterminated {{ marker"); break; }
    size_t n = (size_t)(close - open - 2);
    const char *key = open + 2;
#define KEY_IS(s) (n == strlen(s) && strncmp(key, s, n) == 0)
    if (KEY_IS("title")) sb_html(&out, title);
    else if (KEY_IS("style")) sb_puts(&out, css);
    else if (KEY_IS("script")) sb_puts(&out, js);
    else if (KEY_IS("summary")) sb_put(&out, summary.data, summary.len);
    else if (KEY_IS("table")) sb_put(&out, L.table.data, L.table.len);
    else if (KEY_IS("plots")) sb_put(&out, L.plots.data, L.plots.len);
    else if (KEY_IS("joints")) sb_put(&out, L.joints.data, L.joints.len);
    else if (KEY_IS("data")) sb_put(&out, data.data, data.len);
    else if (KEY_IS("ramp_max")) sb_printf(&out, "%g", SKS_REPORT_RAMP_MAX_PCT);
    else if (KEY_IS("version")) sb_puts(&out, SKS_VERSION_STRING);
    else rc = sks_error_set(err, SKS_ERR_INVALID, "report.html: unknown marker {{%.*s}}", (int)n, key);
#undef KEY_IS
    p = close + 2;
  }
  if (rc == SKS_OK && (out.oom || data.oom || summary.oom))
    rc = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "report: out of memory while writing the page");
  /* The plan is an upper bound; a page over the budget is a bug, never written. */
  if (rc == SKS_OK && out.len > plan.max_bytes)
    rc = sks_error_set(err, SKS_ERR_UNSUPPORTED, "report: the page would be %zu bytes, over its budget of %zu",
                       out.len, plan.max_bytes);
  if (rc == SKS_OK) {
    *html = out.data;
    *size = out.len;
    out.data = NULL;
    if (plan_out) *plan_out = plan;
  }
  free(data.data); free(summary.data); free(out.data);
  layout_free(&L);
  return rc;
}
