/* Assimp import (FBX, Collada, X, MD5, SMD, 3DS, ... and glTF on request)
 * through Assimp's C API. Assimp types never leave this file.
 *
 * Mapping (the data-model conventions every stage relies on):
 *  - Skeleton = every aiNode, depth-first pre-order (so parents come first),
 *    rest local = decomposed aiNode.mTransformation. FBX pivot nodes
 *    ("<name>_$AssimpFbx$_Translation" ...) are ordinary nodes: clips target
 *    them by name, so they stay.
 *  - One mesh part per aiMesh in scene order; part.node = the first node (in
 *    skeleton order) whose mMeshes lists it. Vertices exactly as Assimp gives
 *    them: no SortByPType (which would split meshes). Assimp's .x reader
 *    splits every face corner: text .x files are mapped back to the file's
 *    vertices in the file's order (x_map_scene); binary / compressed .x get
 *    JoinIdenticalVertices (the file's count in most files, not its order).
 *    aiProcess_Triangulate only rewrites faces (measured: vertex counts are
 *    identical with and without it on every rigged test model); polygons that
 *    remain anyway are fan-triangulated here, points and lines are dropped
 *    from the index list.
 *  - One skin per mesh with bones: joints = the nodes named like the bones
 *    (repeated names: the one in the mesh's own subtree), inverse bind =
 *    aiBone.mOffsetMatrix. A bone whose name matches no node (X/anim_test.x:
 *    joint3, joint4) gets a joint of its own, a child of the mesh's node
 *    resting at the bind pose its offset describes, so skinning still works.
 *  - FBX only: Assimp's FBX offsets include the mesh node's global matrix G;
 *    such parts are moved to scene-root space (see rebase_to_scene_root).
 *  - Influences from the bones' weight lists; more than SKS_MAX_INFLUENCES on
 *    one vertex keeps the largest ones, rescaled to the vertex's weight sum,
 *    and the loss is recorded in the part (dropped_influence_vertices ...)
 *    for sks_check's too_many_influences finding.
 *  - Clips: one per aiAnimation (empty name -> "animation_<i>"), LINEAR keys,
 *    times = ticks / ticks-per-second; ticks per second 0 means 25 (what
 *    Assimp itself assumes, aiAnimation docs). Quaternions (w,x,y,z) -> xyzw.
 *  - UVs are stored with glTF's top-left origin (aiProcess_FlipUVs), the
 *    convention of the native glTF reader and writer.
 *  - Matrices: aiMatrix4x4 is row-major (a1..a4 = first row, translation in
 *    a4 b4 c4); ours are column-major m[c*4 + r]. */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700 /* realpath */
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <assimp/cfileio.h>
#include <assimp/cimport.h>
#include <assimp/GltfMaterial.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include "skinsolve/io.h"
#include "math/sks_math.h"
#include "io/resource.h"
#include "io/image_convert.h"
#include "io/assimp_files.h"

/* A scene-graph cycle or a pathological file must not hang or exhaust us. */
#define SKS_ASSIMP_MAX_NODES (1u << 20)
#define SKS_ASSIMP_DEFAULT_TPS 25.0

/* ---- conversions ------------------------------------------------------- */

static sks_mat4 mat_from_ai(const struct aiMatrix4x4 *a) {
  sks_mat4 m;
  m.m[0] = (float)a->a1; m.m[4] = (float)a->a2; m.m[8] = (float)a->a3;  m.m[12] = (float)a->a4;
  m.m[1] = (float)a->b1; m.m[5] = (float)a->b2; m.m[9] = (float)a->b3;  m.m[13] = (float)a->b4;
  m.m[2] = (float)a->c1; m.m[6] = (float)a->c2; m.m[10] = (float)a->c3; m.m[14] = (float)a->c4;
  m.m[3] = (float)a->d1; m.m[7] = (float)a->d2; m.m[11] = (float)a->d3; m.m[15] = (float)a->d4;
  return m;
}

static char *dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (!d) return NULL;
  if (n) memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

static char *dup_ai_string(const struct aiString *s) {
  size_t n = s->length;
  if (n >= MAXLEN) n = MAXLEN - 1;
  const char *nul = memchr(s->data, '\0', n);
  return dup_n(s->data, nul ? (size_t)(nul - s->data) : n);
}

static char *dup_fmt_index(const char *prefix, size_t i) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s%zu", prefix, i);
  return dup_n(buf, strlen(buf));
}

/* Equality of an aiString with a C string (names may contain no NUL). */
static int ai_name_equals(const struct aiString *s, const char *name) {
  size_t n = s->length < MAXLEN ? s->length : MAXLEN - 1;
  return strlen(name) == n && memcmp(s->data, name, n) == 0;
}

/* ---- import state ------------------------------------------------------ */

typedef struct name_entry { const char *name; size_t index; } name_entry;

typedef struct importer {
  const char *path;
  const struct aiScene *scene;
  sks_model *model;
  sks_error *err;
  const struct aiNode **nodes;  /* skeleton order, joint_count of them are nodes */
  sks_mat4 *globals;            /* node_count rest global matrices (unrounded by TRS) */
  struct name_entry *by_name;   /* nodes sorted by (name, index) */
  int32_t *depth;               /* node_count depths (root 0) */
  size_t node_count;
  size_t joint_capacity;        /* skeleton arrays capacity (extra joints grow it) */
  int offsets_include_mesh_node; /* FBX: see rebase_to_scene_root */
  /* Text .x only (see x_map_scene), else NULL: per aiMesh, corner -> part
   * vertex, part vertex -> its first corner, and the part's vertex count. */
  uint32_t **xmap, **xrep;
  size_t *xcount;
  /* told of every file read (sks_load_assimp_recording), may be NULL */
  void (*on_file)(void *user, const char *path);
  void *on_file_user;
  int gltf_source;       /* the file is glTF (file_is_gltf) */
  int warned_morph_interp; /* its morph interpolation warning was given */
} importer;

static void x_unmap(importer *im) {
  unsigned nm = im->scene ? im->scene->mNumMeshes : 0;
  for (unsigned i = 0; i < nm && im->xmap; ++i) free(im->xmap[i]);
  for (unsigned i = 0; i < nm && im->xrep; ++i) free(im->xrep[i]);
  free(im->xmap); free(im->xrep); free(im->xcount);
  im->xmap = im->xrep = NULL;
  im->xcount = NULL;
}

static sks_result oom(importer *im) {
  return sks_error_set(im->err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory while importing", im->path);
}

static sks_result grow_skeleton(importer *im, size_t need) {
  sks_skeleton *sk = &im->model->skeleton;
  if (need <= im->joint_capacity) return SKS_OK;
  size_t cap = im->joint_capacity ? im->joint_capacity * 2 : 16;
  while (cap < need) cap *= 2;
  char **names = realloc(sk->names, cap * sizeof *names);
  if (!names) return oom(im);
  sk->names = names;
  int32_t *parents = realloc(sk->parents, cap * sizeof *parents);
  if (!parents) return oom(im);
  sk->parents = parents;
  sks_transform *rest = realloc(sk->rest, cap * sizeof *rest);
  if (!rest) return oom(im);
  sk->rest = rest;
  im->joint_capacity = cap;
  return SKS_OK;
}

static int cmp_node_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)*(const struct aiNode *const *)a, y = (uintptr_t)*(const struct aiNode *const *)b;
  return x < y ? -1 : x > y;
}

/* Every aiNode, depth-first pre-order, with an explicit stack (deep files must
 * not overflow ours). Assimp hands us a tree; a node met twice means a cycle. */
static sks_result build_skeleton(importer *im) {
  const struct aiNode *root = im->scene->mRootNode;
  if (!root) return sks_error_set(im->err, SKS_ERR_PARSE, "%s: the scene has no root node", im->path);

  size_t cap = 64, sp = 0;
  const struct aiNode **stack_nodes = malloc(cap * sizeof *stack_nodes);
  int32_t *stack_parent = malloc(cap * sizeof *stack_parent);
  size_t node_cap = 64;
  im->nodes = malloc(node_cap * sizeof *im->nodes);
  if (!stack_nodes || !stack_parent || !im->nodes) {
    free(stack_nodes); free(stack_parent);
    return oom(im);
  }
  sks_result r = SKS_OK;
  stack_nodes[sp] = root; stack_parent[sp] = -1; ++sp;
  sks_skeleton *sk = &im->model->skeleton;
  while (sp > 0 && r == SKS_OK) {
    --sp;
    const struct aiNode *n = stack_nodes[sp];
    int32_t parent = stack_parent[sp];
    if (im->node_count >= SKS_ASSIMP_MAX_NODES) {
      r = sks_error_set(im->err, SKS_ERR_PARSE,
                        "%s: more than %u scene nodes (a cycle in the node graph?)", im->path,
                        SKS_ASSIMP_MAX_NODES);
      break;
    }
    if (im->node_count == node_cap) {
      node_cap *= 2;
      const struct aiNode **nn = realloc((void *)im->nodes, node_cap * sizeof *nn);
      if (!nn) { r = oom(im); break; }
      im->nodes = nn;
    }
    if ((r = grow_skeleton(im, im->node_count + 1)) != SKS_OK) break;
    size_t idx = im->node_count;
    im->nodes[idx] = n;
    char *name = n->mName.length ? dup_ai_string(&n->mName) : dup_fmt_index("node_", idx);
    if (!name) { r = oom(im); break; }
    sk->names[idx] = name;
    sk->parents[idx] = parent;
    sks_mat4 local = mat_from_ai(&n->mTransformation);
    sk->rest[idx] = sks_m4_decompose(&local);
    im->node_count = sk->joint_count = idx + 1;

    if (n->mNumChildren && !n->mChildren) continue;
    if (sp + n->mNumChildren > cap) {
      size_t nc = cap;
      while (nc < sp + n->mNumChildren) nc *= 2;
      const struct aiNode **a = realloc((void *)stack_nodes, nc * sizeof *a);
      if (!a) { r = oom(im); break; }
      stack_nodes = a;
      int32_t *b = realloc(stack_parent, nc * sizeof *b);
      if (!b) { r = oom(im); break; }
      stack_parent = b;
      cap = nc;
    }
    /* Push children reversed so the first child is visited first. */
    for (unsigned c = n->mNumChildren; c-- > 0;) {
      if (!n->mChildren[c]) continue;
      stack_nodes[sp] = n->mChildren[c];
      stack_parent[sp] = (int32_t)idx;
      ++sp;
    }
  }
  free(stack_nodes);
  free(stack_parent);
  if (r != SKS_OK) return r;

  /* A node reached twice (only possible in a broken graph) is a cycle. */
  const struct aiNode **sorted = malloc(im->node_count * sizeof *sorted);
  if (!sorted) return oom(im);
  memcpy(sorted, im->nodes, im->node_count * sizeof *sorted);
  qsort(sorted, im->node_count, sizeof *sorted, cmp_node_ptr);
  int dup = 0;
  for (size_t i = 1; i < im->node_count; ++i)
    if (sorted[i] == sorted[i - 1]) dup = 1;
  free(sorted);
  if (dup)
    return sks_error_set(im->err, SKS_ERR_PARSE, "%s: the node graph has a cycle", im->path);
  return SKS_OK;
}

static sks_result compute_globals(importer *im) {
  im->globals = malloc((im->node_count ? im->node_count : 1) * sizeof *im->globals);
  if (!im->globals) return oom(im);
  const int32_t *parents = im->model->skeleton.parents;
  for (size_t i = 0; i < im->node_count; ++i) {
    sks_mat4 local = mat_from_ai(&im->nodes[i]->mTransformation);
    im->globals[i] = parents[i] >= 0 ? sks_m4_mul(&im->globals[parents[i]], &local) : local;
  }
  return SKS_OK;
}

/* ---- names -> nodes ----------------------------------------------------- */
/* Names are not unique in real files (Fox_blender35_raw.glb holds two
 * armatures with the same bone names; FBX files repeat names), so bones and
 * channels are resolved with a sorted index and a tie-break, not "first". */

static int cmp_by_name(const void *a, const void *b) {
  const name_entry *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->index < y->index ? -1 : x->index > y->index);
}

static sks_result build_name_index(importer *im) {
  size_t n = im->node_count;
  im->by_name = malloc((n ? n : 1) * sizeof *im->by_name);
  im->depth = malloc((n ? n : 1) * sizeof *im->depth);
  if (!im->by_name || !im->depth) return oom(im);
  const sks_skeleton *sk = &im->model->skeleton;
  for (size_t i = 0; i < n; ++i) {
    im->by_name[i].name = sk->names[i];
    im->by_name[i].index = i;
    im->depth[i] = sk->parents[i] >= 0 ? im->depth[sk->parents[i]] + 1 : 0;
  }
  qsort(im->by_name, n, sizeof *im->by_name, cmp_by_name);
  return SKS_OK;
}

/* Nodes named `name`: by_name[*first .. *first + *count), in pre-order. */
static void name_range(const importer *im, const char *name, size_t *first, size_t *count) {
  size_t lo = 0, hi = im->node_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(im->by_name[mid].name, name) < 0) lo = mid + 1; else hi = mid;
  }
  size_t end = lo;
  while (end < im->node_count && strcmp(im->by_name[end].name, name) == 0) ++end;
  *first = lo;
  *count = end - lo;
}

static int32_t lca_depth(const importer *im, int32_t a, int32_t b) {
  const int32_t *parents = im->model->skeleton.parents;
  while (a >= 0 && b >= 0 && a != b) {
    if (im->depth[a] >= im->depth[b]) a = parents[a]; else b = parents[b];
  }
  return a >= 0 && a == b ? im->depth[a] : -1;
}

/* The node a bone of the mesh held by `mesh_node` means: among nodes of that
 * name, the one sharing the deepest common ancestor with the mesh (its own
 * armature); ties go to the first in pre-order, as Assimp's FindNode. Falls
 * back to joints added for node-less bones; -1 if none. */
static int32_t resolve_bone(const importer *im, const char *name, int32_t mesh_node) {
  size_t first, count;
  name_range(im, name, &first, &count);
  if (count == 0) {
    const sks_skeleton *sk = &im->model->skeleton;
    for (size_t i = im->node_count; i < sk->joint_count; ++i)
      if (strcmp(sk->names[i], name) == 0) return (int32_t)i;
    return -1;
  }
  int32_t best = (int32_t)im->by_name[first].index;
  if (count == 1 || mesh_node < 0) return best;
  int32_t best_depth = lca_depth(im, best, mesh_node);
  for (size_t k = 1; k < count; ++k) {
    int32_t c = (int32_t)im->by_name[first + k].index, d = lca_depth(im, c, mesh_node);
    if (d > best_depth) { best = c; best_depth = d; }
  }
  return best;
}

/* Joint for a bone with no node of its name (X/anim_test.x: joint3, joint4):
 * a child of the mesh's node, resting at the bind pose its offset describes.
 * Its bind WORLD matrix is inverse(offset) where offsets map from the scene
 * root (X, Collada, glTF...), G * inverse(offset) where they include the mesh
 * node's global G (FBX); the rest local is inverse(G) * that, so at rest its
 * palette entry is the identity, like a bone in bind pose. */
static sks_result add_bone_joint(importer *im, const char *name, int32_t parent,
                                 const sks_mat4 *offset, int32_t *out_joint) {
  sks_skeleton *sk = &im->model->skeleton;
  sks_result r = grow_skeleton(im, sk->joint_count + 1);
  if (r != SKS_OK) return r;
  size_t idx = sk->joint_count;
  sk->names[idx] = dup_n(name, strlen(name));
  if (!sk->names[idx]) return oom(im);
  sk->parents[idx] = parent;
  sk->rest[idx] = sks_transform_identity();
  sks_mat4 bind, ginv, local;
  if (sks_m4_inverse(offset, &bind)) {
    if (im->offsets_include_mesh_node || parent < 0 || (size_t)parent >= im->node_count) {
      local = bind; /* G * inverse(offset) relative to G, or no parent */
    } else if (sks_m4_inverse(&im->globals[parent], &ginv)) {
      local = sks_m4_mul(&ginv, &bind);
    } else {
      local = bind;
    }
    sk->rest[idx] = sks_m4_decompose(&local);
  }
  sk->joint_count = idx + 1;
  *out_joint = (int32_t)idx;
  return SKS_OK;
}

/* ---- materials --------------------------------------------------------- */

/* Appends "file: message" to the model's load warnings (what was left out). */
static sks_result add_warning(importer *im, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static sks_result add_warning(importer *im, const char *fmt, ...) {
  sks_model *m = im->model;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return sks_model_note(m, buf) ? SKS_OK : oom(im);
}

#define SKS_MAX_TEXTURE_BYTES ((size_t)256 << 20)

/* The embedded texture a material path names: "*N" (index), or an
 * aiTexture whose mFilename has the same file name (FBX embeds by name). */
static int embedded_texture_index(const struct aiScene *s, const char *tex) {
  if (!s->mTextures || !s->mNumTextures) return -1;
  if (tex[0] == '*') {
    char *end = NULL;
    long k = strtol(tex + 1, &end, 10);
    return end && end != tex + 1 && *end == '\0' && k >= 0 && (unsigned long)k < s->mNumTextures ? (int)k : -1;
  }
  const char *base = tex;
  for (const char *c = tex; *c; ++c)
    if (*c == '/' || *c == '\\') base = c + 1;
  for (unsigned i = 0; i < s->mNumTextures; ++i) {
    const struct aiTexture *t = s->mTextures[i];
    if (!t) continue;
    char *fn = dup_ai_string(&t->mFilename);
    if (!fn) return -1;
    const char *fb = fn;
    for (const char *c = fn; *c; ++c)
      if (*c == '/' || *c == '\\') fb = c + 1;
    int same = *base && strcmp(fb, base) == 0;
    free(fn);
    if (same) return (int)i;
  }
  return -1;
}

/* Index of an image already taken under this key ("*N" or a real path), or -1. */
static int32_t find_image_key(char *const *keys, size_t n, const char *key) {
  for (size_t i = 0; i < n; ++i)
    if (strcmp(keys[i], key) == 0) return (int32_t)i;
  return -1;
}

/* Takes ownership of data / key; returns the new image's index or -1 (OOM). */
static int32_t add_image(importer *im, char ***keys, char *key, const char *name, const char *mime,
                         uint8_t *data, size_t size) {
  sks_model *m = im->model;
  sks_image *imgs = realloc(m->images, (m->image_count + 1) * sizeof *imgs);
  char **k = imgs ? realloc(*keys, (m->image_count + 1) * sizeof *k) : NULL;
  if (imgs) m->images = imgs;
  if (k) *keys = k;
  if (!imgs || !k) { free(data); free(key); return -1; }
  sks_image *img = &m->images[m->image_count];
  memset(img, 0, sizeof *img);
  img->name = dup_n(name, strlen(name));
  img->mime_type = dup_n(mime, strlen(mime));
  img->data = data;
  img->size = size;
  k[m->image_count] = key;
  ++m->image_count; /* freed with the model from here on */
  return img->name && img->mime_type ? (int32_t)(m->image_count - 1) : -1;
}

/* glTF wrap mode of an Assimp map mode (decal: clamp, as it shows no repeat). */
static int32_t wrap_mode(enum aiTextureMapMode mode) {
  switch (mode) {
    case aiTextureMapMode_Clamp: case aiTextureMapMode_Decal: return 33071; /* CLAMP_TO_EDGE */
    case aiTextureMapMode_Mirror: return 33648;                              /* MIRRORED_REPEAT */
    default: return 10497;                                                   /* REPEAT */
  }
}

/* "dir/duckCM.tga" -> "duckCM.png" (a converted image's name). */
static char *png_name(const char *name) {
  const char *dot = strrchr(name, '.');
  size_t n = dot && dot != name ? (size_t)(dot - name) : strlen(name);
  char *out = malloc(n + 5);
  if (!out) return NULL;
  memcpy(out, name, n);
  memcpy(out + n, ".png", 5);
  return out;
}

/* The image bytes to keep for a texture: PNG / JPEG as they are, anything
 * stb_image reads converted to PNG (bounded, see image_convert.h). Takes
 * ownership of *data; on success *data / *size / *mime are the kept bytes
 * and *converted says whether they were re-encoded. SKS_OK with *data NULL
 * and why set: left out. */
static sks_result keep_image_bytes(importer *im, uint8_t **data, size_t *size, const char **mime, int *converted,
                                   char *why, size_t why_size) {
  *converted = 0;
  if ((*mime = sks_image_mime(*data, *size))) return SKS_OK;
  uint8_t *png = NULL;
  size_t png_size = 0;
  sks_result r = sks_image_convert_to_png(*data, *size, &png, &png_size, why, why_size);
  free(*data);
  *data = NULL;
  *size = 0;
  if (r == SKS_ERR_OUT_OF_MEMORY) return oom(im);
  if (r != SKS_OK) return SKS_OK;
  *data = png;
  *size = png_size;
  *mime = "image/png";
  *converted = 1;
  return SKS_OK;
}

/* A sampler filter Assimp's glTF importer gave for a texture (the glTF
 * enum), or 0 (unset) when the file gave none or another value. */
static int32_t texture_filter(const struct aiMaterial *mat, const char *key, enum aiTextureType type, unsigned index,
                              int mag) {
  int v = 0;
  unsigned n = 1;
  if (aiGetMaterialIntegerArray(mat, key, (unsigned)type, index, &v, &n) != aiReturn_SUCCESS || n != 1) return 0;
  if (v == 9728 || v == 9729) return v; /* NEAREST, LINEAR */
  return !mag && v >= 9984 && v <= 9987 ? v : 0;
}

static int path_is_fbx(const char *path) {
  size_t n = strlen(path);
  return n >= 4 && path[n - 4] == '.' && (path[n - 3] | 32) == 'f' && (path[n - 2] | 32) == 'b' &&
         (path[n - 1] | 32) == 'x';
}

/* The texture's aiUVTransform (AI_MATKEY_UVTRANSFORM) as KHR_texture_transform.
 * Assimp's transform lives in its own UV space (origin bottom-left,
 * rotation counter-clockwise about (0.5, 0.5)); its glTF importer maps
 * glTF's (offset o, rotation r, scale s) to scaling s, rotation -r and
 * translation (o.x + s.x/2 (1 - cos r + sin r), 1 - s.y - o.y + s.y/2
 * (sin r + cos r - 1)), and aiProcess_FlipUVs (which this import uses)
 * then negates translation.y and the rotation. This undoes both, so a glTF
 * read by Assimp is written back with its own values, and a Collada / FBX
 * transform (Assimp's space) gets the glTF one that maps the same texels.
 * FBX is the exception: Assimp passes the file's texture Translation /
 * Scaling / Rotation through as they are, and FBX's are the inverse of a
 * UV mapping in scale and rotation (Blender's FBX exporter writes a Mapping
 * node of scale 2 as Scaling 0.5 and negates its rotation; its importer
 * reads them back so). An FBX transform is therefore read as that mapping
 * (location T, scale 1/S, rotation -R, rotating about the UV origin) and
 * converted to glTF as Blender's glTF exporter converts a Mapping node
 * (offset (T.x - s.y sin r, 1 - T.y - s.y cos r), rotation r, scale s).
 * An identity transform (or none) writes no extension. 0 = no transform,
 * 1 = set, -1 = not finite or a zero FBX scaling. */
static int texture_transform(const struct aiMaterial *mat, enum aiTextureType type, unsigned index, int fbx,
                             sks_texture_ref *ref) {
  struct aiUVTransform tr;
  unsigned n = sizeof tr / sizeof(ai_real);
  memset(&tr, 0, sizeof tr);
  if (aiGetMaterialFloatArray(mat, _AI_MATKEY_UVTRANSFORM_BASE, (unsigned)type, index, (ai_real *)&tr, &n) !=
          aiReturn_SUCCESS || n != sizeof tr / sizeof(ai_real))
    return 0;
  /* before FlipUVs: translation.y and rotation negated back */
  double tx = tr.mTranslation.x, ty = -(double)tr.mTranslation.y, sx = tr.mScaling.x, sy = tr.mScaling.y;
  double r = (double)tr.mRotation; /* glTF's rotation: minus Assimp's unflipped one */
  if (!isfinite(tx) || !isfinite(ty) || !isfinite(sx) || !isfinite(sy) || !isfinite(r)) return -1;
  if (tx == 0 && ty == 0 && sx == 1 && sy == 1 && r == 0) return 0;
  if (fbx) {
    if (sx == 0 || sy == 0) return -1;
    double ms[2] = {1.0 / sx, 1.0 / sy}, mr = r; /* the Blender mapping (r is minus the file's rotation) */
    ref->has_transform = 1;
    ref->offset[0] = (float)(tx - ms[1] * sin(mr));
    ref->offset[1] = (float)(1.0 - ty - ms[1] * cos(mr));
    ref->rotation = (float)mr;
    ref->scale[0] = (float)ms[0];
    ref->scale[1] = (float)ms[1];
    return 1;
  }
  double c = cos(r), sn = sin(r);
  ref->has_transform = 1;
  ref->offset[0] = (float)(tx - 0.5 * sx * (1.0 - c + sn));
  ref->offset[1] = (float)(0.5 * sy * (sn + c - 1.0) + 1.0 - sy - ty);
  ref->rotation = (float)r;
  ref->scale[0] = (float)sx;
  ref->scale[1] = (float)sy;
  return 1;
}

/* One texture slot of a material (texture `index` of the first Assimp type
 * that has one) as an image of the model, or a warning saying why it was
 * left out. External files are resolved with the glTF reader's
 * confinement: inside the model's folder, regular files, bounded reads.
 * Windows separators are read as '/'. */
static sks_result import_texture(importer *im, unsigned mi, sks_material *out, sks_texture_slot slot,
                                 const enum aiTextureType *types, size_t n_types, unsigned index,
                                 const char *slot_name, const char *base_dir, char ***keys) {
  const struct aiScene *s = im->scene;
  const struct aiMaterial *mat = s->mMaterials[mi];
  struct aiString ap;
  memset(&ap, 0, sizeof ap);
  unsigned uv = 0;
  enum aiTextureMapMode modes[2] = {aiTextureMapMode_Wrap, aiTextureMapMode_Wrap};
  size_t t = 0;
  for (; t < n_types; ++t)
    if (aiGetMaterialTexture(mat, types[t], index, &ap, NULL, &uv, NULL, NULL, modes, NULL) == aiReturn_SUCCESS) break;
  if (t == n_types) return SKS_OK;
  char *tex = dup_ai_string(&ap);
  if (!tex) return oom(im);
  sks_result r = SKS_OK;
  const char *label = out->name ? out->name : "";
  /* filters only where the file gave them (glTF through Assimp); unset
   * lets the viewer choose, as glTF allows */
  sks_texture_ref ref = {.image = -1,
                         .mag_filter = texture_filter(mat, _AI_MATKEY_GLTF_MAPPINGFILTER_MAG_BASE, types[t], index, 1),
                         .min_filter = texture_filter(mat, _AI_MATKEY_GLTF_MAPPINGFILTER_MIN_BASE, types[t], index, 0),
                         .wrap_s = wrap_mode(modes[0]), .wrap_t = wrap_mode(modes[1])};
  if (texture_transform(mat, types[t], index, path_is_fbx(im->path), &ref) < 0 &&
      (r = add_warning(im, "%s: material %u '%s': %s texture '%s' has a UV transform that is not finite (or an FBX "
                           "scaling of 0) — written "
                           "without it", im->path, mi, label, slot_name, tex)) != SKS_OK) {
    free(tex);
    return r;
  }
  ai_real factor;
  if ((slot == SKS_TEXTURE_NORMAL || slot == SKS_TEXTURE_CLEARCOAT_NORMAL) &&
      aiGetMaterialFloatArray(mat, _AI_MATKEY_GLTF_SCALE_BASE, (unsigned)types[t], index, &factor, NULL) ==
          aiReturn_SUCCESS && isfinite(factor))
    *(slot == SKS_TEXTURE_NORMAL ? &out->normal_scale : &out->clearcoat_normal_scale) = (float)factor;
  if (slot == SKS_TEXTURE_OCCLUSION &&
      aiGetMaterialFloatArray(mat, _AI_MATKEY_GLTF_STRENGTH_BASE, (unsigned)types[t], index, &factor, NULL) ==
          aiReturn_SUCCESS && factor >= 0 && factor <= 1)
    out->occlusion_strength = (float)factor;
  /* Assimp's UV index is only meaningful where a mesh with this material
   * has that many UV sets (Collada exporters name one set "CHANNEL1"): set 1
   * is sks_mesh_part.uvs1 (glTF TEXCOORD_1), a texture is left out only when
   * it picks a set past the two the model keeps. */
  int has_set = 0;
  for (unsigned k = 0; uv != 0 && uv < AI_MAX_NUMBER_OF_TEXTURECOORDS && k < s->mNumMeshes; ++k)
    has_set |= s->mMeshes[k] && s->mMeshes[k]->mMaterialIndex == mi && s->mMeshes[k]->mTextureCoords[uv];
  if (uv >= AI_MAX_NUMBER_OF_TEXTURECOORDS || (has_set && uv > 1)) {
    r = add_warning(im, "%s: material %u '%s': %s texture '%s' uses UV set %u (the model carries UV sets 0 and 1) "
                        "— left out", im->path, mi, label, slot_name, tex, uv);
    free(tex);
    return r;
  }
  if (has_set && uv == 1) ref.tex_coord = 1;
  int emb = embedded_texture_index(s, tex);
  char key[32], why[512] = "";
  uint8_t *data = NULL;
  size_t size = 0;
  char *img_key = NULL, *img_name = NULL; /* owned until add_image */
  if (emb >= 0) {
    snprintf(key, sizeof key, "*%d", emb);
    int32_t have = find_image_key(*keys, im->model->image_count, key);
    if (have >= 0) {
      ref.image = have;
      out->textures[slot] = ref;
      free(tex);
      return SKS_OK;
    }
    const struct aiTexture *at = s->mTextures[emb];
    const uint8_t *bytes = (const uint8_t *)at->pcData;
    if (!bytes) {
      snprintf(why, sizeof why, "it has no data");
    } else if (at->mHeight != 0) { /* raw aiTexel (BGRA) texels */
      if ((size_t)at->mWidth * at->mHeight > SKS_MAX_IMAGE_PIXELS || at->mWidth > SKS_MAX_IMAGE_SIDE ||
          at->mHeight > SKS_MAX_IMAGE_SIDE) {
        snprintf(why, sizeof why, "%u x %u texels, over the conversion limit", at->mWidth, at->mHeight);
      } else {
        size_t n = (size_t)at->mWidth * at->mHeight;
        uint8_t *rgba = malloc(n * 4);
        if (!rgba) { free(tex); return oom(im); }
        for (size_t k = 0; k < n; ++k) {
          const struct aiTexel *tx = &at->pcData[k];
          rgba[4 * k] = tx->r; rgba[4 * k + 1] = tx->g; rgba[4 * k + 2] = tx->b; rgba[4 * k + 3] = tx->a;
        }
        sks_result e = sks_image_encode_png(rgba, at->mWidth, at->mHeight, 4, &data, &size, why, sizeof why);
        free(rgba);
        if (e == SKS_ERR_OUT_OF_MEMORY) { free(tex); return oom(im); }
      }
    } else if (!(data = malloc(at->mWidth ? at->mWidth : 1))) {
      free(tex);
      return oom(im);
    } else {
      memcpy(data, bytes, at->mWidth);
      size = at->mWidth;
    }
    char nm[48];
    snprintf(nm, sizeof nm, "embedded_%d", emb);
    img_key = dup_n(key, strlen(key));
    img_name = dup_n(nm, strlen(nm));
  } else if (tex[0] == '*') {
    r = add_warning(im, "%s: material %u '%s': %s texture '%s' names no embedded texture — left out", im->path, mi,
                    label, slot_name, tex);
    free(tex);
    return r;
  } else {
    for (char *c = tex; *c; ++c)
      if (*c == '\\') *c = '/';
    char what[64];
    snprintf(what, sizeof what, "material %u texture", mi);
    sks_error e;
    memset(&e, 0, sizeof e);
    if (sks_resource_resolve(base_dir, NULL, tex, im->path, what, &img_key, &e) != SKS_OK) {
      r = add_warning(im, "%s — left out", e.message);
      free(tex);
      return r;
    }
    int32_t have = find_image_key(*keys, im->model->image_count, img_key);
    if (have >= 0) {
      ref.image = have;
      out->textures[slot] = ref;
      free(img_key);
      free(tex);
      return SKS_OK;
    }
    if (sks_resource_read(img_key, SIZE_MAX, SKS_MAX_TEXTURE_BYTES, &data, &size, im->path, what, &e) != SKS_OK) {
      r = add_warning(im, "%s — left out", e.message);
      free(img_key);
      free(tex);
      return r;
    }
    if (im->on_file) im->on_file(im->on_file_user, img_key);
    const char *base = strrchr(img_key, '/');
    base = base ? base + 1 : img_key;
    img_name = dup_n(base, strlen(base));
  }
  if (!img_key || !img_name) {
    free(data); free(img_key); free(img_name); free(tex);
    return oom(im);
  }
  const char *mime = NULL;
  int converted = 0;
  if (data && (r = keep_image_bytes(im, &data, &size, &mime, &converted, why, sizeof why))) {
    free(img_key); free(img_name); free(tex);
    return r;
  }
  if (!data) {
    r = add_warning(im, "%s: material %u '%s': %s texture '%s' is not PNG or JPEG and could not be converted: %s "
                        "— left out", im->path, mi, label, slot_name, tex, why);
    free(img_key); free(img_name); free(tex);
    return r;
  }
  if (converted) {
    char *pn = png_name(img_name);
    free(img_name);
    if (!(img_name = pn)) { free(data); free(img_key); free(tex); return oom(im); }
  }
  int32_t idx = add_image(im, keys, img_key, img_name, mime, data, size);
  free(img_name);
  free(tex);
  if (idx < 0) return oom(im);
  ref.image = idx;
  out->textures[slot] = ref;
  return SKS_OK;
}

/* Every texture slot glTF's material has that Assimp gives. A metallic-
 * roughness texture is taken only from a PBR material (Assimp's glTF
 * importer: AI_MATKEY_GLTF_PBRMETALLICROUGHNESS_METALLICROUGHNESS_TEXTURE,
 * the packed image as glTF has it); other importers give metalness and
 * roughness as separate maps, and glTF packs them in one image's B and G
 * channels. */
static sks_result import_textures(importer *im, unsigned mi, sks_material *out, const char *base_dir,
                                  char ***keys) {
  static const enum aiTextureType packed[] = {aiTextureType_UNKNOWN};
  int shading = 0;
  const struct aiMaterial *mat = im->scene->mMaterials[mi];
  if (aiGetMaterialIntegerArray(mat, AI_MATKEY_SHADING_MODEL, &shading, NULL) == aiReturn_SUCCESS &&
      shading == aiShadingMode_PBR_BRDF) {
    sks_result rm = import_texture(im, mi, out, SKS_TEXTURE_METALLIC_ROUGHNESS, packed, 1, 0, "metallic-roughness",
                                   base_dir, keys);
    if (rm != SKS_OK) return rm;
  }
  static const enum aiTextureType base[] = {aiTextureType_BASE_COLOR, aiTextureType_DIFFUSE};
  static const enum aiTextureType normal[] = {aiTextureType_NORMALS, aiTextureType_NORMAL_CAMERA};
  static const enum aiTextureType occlusion[] = {aiTextureType_AMBIENT_OCCLUSION, aiTextureType_LIGHTMAP};
  static const enum aiTextureType emissive[] = {aiTextureType_EMISSION_COLOR, aiTextureType_EMISSIVE};
  sks_result r;
  if ((r = import_texture(im, mi, out, SKS_TEXTURE_BASE_COLOR, base, 2, 0, "base colour", base_dir, keys)) ||
      (r = import_texture(im, mi, out, SKS_TEXTURE_NORMAL, normal, 2, 0, "normal", base_dir, keys)) ||
      (r = import_texture(im, mi, out, SKS_TEXTURE_OCCLUSION, occlusion, 2, 0, "occlusion", base_dir, keys)) ||
      (r = import_texture(im, mi, out, SKS_TEXTURE_EMISSIVE, emissive, 2, 0, "emissive", base_dir, keys)))
    return r;
  /* The KHR_materials_* textures where Assimp 5.2.5's glTF importer puts
   * them (material.h's AI_MATKEY_*_TEXTURE: clearcoat, roughness, normal =
   * CLEARCOAT 0, 1, 2; sheen colour, roughness = SHEEN 0, 1; transmission,
   * volume thickness = TRANSMISSION 0, 1), each only with its extension's
   * factors (import_material_extras: an extension left out takes its
   * textures with it). */
  static const struct {
    sks_texture_slot slot;
    enum aiTextureType type;
    unsigned index;
    uint32_t bit;
    const char *name;
  } ext[] = {{SKS_TEXTURE_CLEARCOAT, aiTextureType_CLEARCOAT, 0, SKS_MATERIAL_CLEARCOAT, "clearcoat"},
             {SKS_TEXTURE_CLEARCOAT_ROUGHNESS, aiTextureType_CLEARCOAT, 1, SKS_MATERIAL_CLEARCOAT, "clearcoat roughness"},
             {SKS_TEXTURE_CLEARCOAT_NORMAL, aiTextureType_CLEARCOAT, 2, SKS_MATERIAL_CLEARCOAT, "clearcoat normal"},
             {SKS_TEXTURE_SHEEN_COLOR, aiTextureType_SHEEN, 0, SKS_MATERIAL_SHEEN, "sheen colour"},
             {SKS_TEXTURE_SHEEN_ROUGHNESS, aiTextureType_SHEEN, 1, SKS_MATERIAL_SHEEN, "sheen roughness"},
             {SKS_TEXTURE_TRANSMISSION, aiTextureType_TRANSMISSION, 0, SKS_MATERIAL_TRANSMISSION, "transmission"},
             {SKS_TEXTURE_THICKNESS, aiTextureType_TRANSMISSION, 1, SKS_MATERIAL_VOLUME, "thickness"}};
  for (size_t k = 0; k < sizeof ext / sizeof ext[0]; ++k)
    if ((out->extensions & ext[k].bit) &&
        (r = import_texture(im, mi, out, ext[k].slot, &ext[k].type, 1, ext[k].index, ext[k].name, base_dir, keys)))
      return r;
  /* A specular map (Phong's specular colour / level: FBX, 3DS, Collada,
   * OBJ; a glTF's KHR_materials_pbrSpecularGlossiness specularGlossiness
   * texture) has no slot of that meaning in glTF's metallic-roughness
   * material: KHR_materials_specular's textures scale the dielectric F0
   * (0.04), not a highlight colour, and Assimp 5.2.5 reads no
   * KHR_materials_specular to take it from. Said, not guessed. */
  struct aiString sp;
  memset(&sp, 0, sizeof sp);
  if (aiGetMaterialTexture(mat, aiTextureType_SPECULAR, 0, &sp, NULL, NULL, NULL, NULL, NULL, NULL) == aiReturn_SUCCESS) {
    char *tex = dup_ai_string(&sp);
    if (!tex) return oom(im);
    r = add_warning(im, "%s: material %u '%s': specular texture '%s' left out (glTF's metallic-roughness material "
                        "has no specular map)", im->path, mi, out->name ? out->name : "", tex);
    free(tex);
  }
  return r;
}

/* Blinn-Phong exponent -> glTF perceptual roughness: the Beckmann slope
 * alpha = sqrt(2 / (n + 2)) (Walter et al. 2007), glTF's alpha = roughness^2. */
static float roughness_from_shininess(double n) {
  if (!(n > 0)) return 1.0f;
  double r = pow(2.0 / (n + 2.0), 0.25);
  return (float)(r > 1.0 ? 1.0 : r);
}

/* key, type, index as the AI_MATKEY_* macros give them */
static int ai_float(const struct aiMaterial *mat, const char *key, unsigned type, unsigned idx, float *out) {
  ai_real v;
  unsigned n = 1;
  if (aiGetMaterialFloatArray(mat, key, type, idx, &v, &n) != aiReturn_SUCCESS || n != 1) return 0;
  *out = (float)v;
  return 1;
}

static int ai_color3(const struct aiMaterial *mat, const char *key, unsigned type, unsigned idx, float out[3]) {
  struct aiColor4D c;
  if (aiGetMaterialColor(mat, key, type, idx, &c) != aiReturn_SUCCESS) return 0;
  out[0] = (float)c.r; out[1] = (float)c.g; out[2] = (float)c.b;
  return 1;
}

static int unit3(const float v[3]) {
  return v[0] >= 0 && v[0] <= 1 && v[1] >= 0 && v[1] <= 1 && v[2] >= 0 && v[2] <= 1;
}

/* What Assimp 5.2.5 gives beyond the core factors, only where the file has
 * it: glTF's alphaMode / alphaCutoff (AI_MATKEY_GLTF_ALPHAMODE, _ALPHACUTOFF)
 * and the KHR_materials_clearcoat / sheen / transmission / volume / ior
 * factors its glTF importer reads (their textures: import_textures). The
 * index of refraction is taken from PBR materials only: Phong-style
 * importers (Collada, OBJ) give AI_MATKEY_REFRACTI for their own shading
 * model, often as a default. A value outside the extension's range leaves
 * that extension out with a warning. */
static sks_result import_material_extras(importer *im, unsigned mi, const struct aiMaterial *mat, sks_material *out) {
  const char *label = out->name ? out->name : "";
  struct aiString str;
  memset(&str, 0, sizeof str);
  if (aiGetMaterialString(mat, AI_MATKEY_GLTF_ALPHAMODE, &str) == aiReturn_SUCCESS) {
    if (ai_name_equals(&str, "OPAQUE")) out->alpha_mode = SKS_ALPHA_OPAQUE;
    else if (ai_name_equals(&str, "MASK")) out->alpha_mode = SKS_ALPHA_MASK;
    else if (ai_name_equals(&str, "BLEND")) out->alpha_mode = SKS_ALPHA_BLEND;
  }
  float cut;
  if (out->alpha_mode == SKS_ALPHA_MASK && ai_float(mat, AI_MATKEY_GLTF_ALPHACUTOFF, &cut) && isfinite(cut) && cut >= 0)
    out->alpha_cutoff = cut;
  else if (out->alpha_mode == SKS_ALPHA_MASK)
    out->alpha_cutoff = 0.5f; /* glTF's default cutoff: the file said MASK without one */
  const char *bad = NULL;
  float f;
  if (ai_float(mat, AI_MATKEY_CLEARCOAT_FACTOR, &f)) {
    out->clearcoat = f;
    (void)ai_float(mat, AI_MATKEY_CLEARCOAT_ROUGHNESS_FACTOR, &out->clearcoat_roughness);
    if (f >= 0 && f <= 1 && out->clearcoat_roughness >= 0 && out->clearcoat_roughness <= 1)
      out->extensions |= SKS_MATERIAL_CLEARCOAT;
    else
      bad = "KHR_materials_clearcoat", out->clearcoat = out->clearcoat_roughness = 0;
  }
  if (ai_color3(mat, AI_MATKEY_SHEEN_COLOR_FACTOR, out->sheen_color)) {
    (void)ai_float(mat, AI_MATKEY_SHEEN_ROUGHNESS_FACTOR, &out->sheen_roughness);
    if (unit3(out->sheen_color) && out->sheen_roughness >= 0 && out->sheen_roughness <= 1) {
      out->extensions |= SKS_MATERIAL_SHEEN;
    } else {
      bad = "KHR_materials_sheen";
      memset(out->sheen_color, 0, sizeof out->sheen_color);
      out->sheen_roughness = 0;
    }
  }
  if (ai_float(mat, AI_MATKEY_TRANSMISSION_FACTOR, &f)) {
    if (f >= 0 && f <= 1) out->transmission = f, out->extensions |= SKS_MATERIAL_TRANSMISSION;
    else bad = "KHR_materials_transmission";
  }
  if (ai_float(mat, AI_MATKEY_VOLUME_THICKNESS_FACTOR, &f)) {
    float dist = 0, col[3] = {1, 1, 1};
    /* Assimp keeps glTF's "infinite" default as it read it: only a finite
     * positive distance is one */
    if (ai_float(mat, AI_MATKEY_VOLUME_ATTENUATION_DISTANCE, &dist) && !(isfinite(dist) && dist > 0)) dist = 0;
    (void)ai_color3(mat, AI_MATKEY_VOLUME_ATTENUATION_COLOR, col);
    if (f >= 0 && isfinite(f) && unit3(col)) {
      out->thickness = f;
      out->attenuation_distance = dist;
      memcpy(out->attenuation_color, col, sizeof col);
      out->extensions |= SKS_MATERIAL_VOLUME;
    } else {
      bad = "KHR_materials_volume";
    }
  }
  int shading = 0;
  if (aiGetMaterialIntegerArray(mat, AI_MATKEY_SHADING_MODEL, &shading, NULL) == aiReturn_SUCCESS &&
      shading == aiShadingMode_PBR_BRDF && ai_float(mat, AI_MATKEY_REFRACTI, &f)) {
    if (isfinite(f) && (f == 0 || f >= 1)) out->ior = f, out->extensions |= SKS_MATERIAL_IOR;
    else bad = "KHR_materials_ior";
  }
  if (bad)
    return add_warning(im, "%s: material %u '%s': %s factors out of range — left out", im->path, mi, label, bad);
  return SKS_OK;
}

static sks_result import_materials(importer *im) {
  const struct aiScene *s = im->scene;
  sks_model *m = im->model;
  if (!s->mNumMaterials || !s->mMaterials) return SKS_OK;
  m->materials = calloc(s->mNumMaterials, sizeof *m->materials);
  if (!m->materials) return oom(im);
  m->material_count = s->mNumMaterials;
  const char *slash = strrchr(im->path, '/');
  char *base_dir = slash ? dup_n(im->path, slash == im->path ? 1 : (size_t)(slash - im->path)) : dup_n(".", 1);
  char **keys = NULL;
  if (!base_dir) return oom(im);
  sks_result r = SKS_OK;
  for (unsigned i = 0; i < s->mNumMaterials && r == SKS_OK; ++i) {
    sks_material *out = &m->materials[i];
    const struct aiMaterial *mat = s->mMaterials[i];
    sks_material_init(out);
    out->metallic = 0.0f; /* Phong-style materials describe dielectrics */
    struct aiString name;
    memset(&name, 0, sizeof name);
    if (mat && aiGetMaterialString(mat, AI_MATKEY_NAME, &name) == aiReturn_SUCCESS && name.length)
      out->name = dup_ai_string(&name);
    else
      out->name = dup_fmt_index("material_", i);
    if (!out->name) { r = oom(im); break; }
    if (!mat) continue;
    struct aiColor4D c;
    if (aiGetMaterialColor(mat, AI_MATKEY_BASE_COLOR, &c) == aiReturn_SUCCESS ||
        aiGetMaterialColor(mat, AI_MATKEY_COLOR_DIFFUSE, &c) == aiReturn_SUCCESS) {
      out->base_color[0] = (float)c.r; out->base_color[1] = (float)c.g;
      out->base_color[2] = (float)c.b; out->base_color[3] = (float)c.a;
    }
    ai_real v;
    if (aiGetMaterialFloatArray(mat, AI_MATKEY_OPACITY, &v, NULL) == aiReturn_SUCCESS && v >= 0 && v < 1)
      out->base_color[3] = (float)v;
    if (aiGetMaterialFloatArray(mat, AI_MATKEY_METALLIC_FACTOR, &v, NULL) == aiReturn_SUCCESS && v >= 0 && v <= 1)
      out->metallic = (float)v;
    if (aiGetMaterialFloatArray(mat, AI_MATKEY_ROUGHNESS_FACTOR, &v, NULL) == aiReturn_SUCCESS && v >= 0 && v <= 1)
      out->roughness = (float)v;
    else if (aiGetMaterialFloatArray(mat, AI_MATKEY_SHININESS, &v, NULL) == aiReturn_SUCCESS && isfinite(v))
      out->roughness = roughness_from_shininess((double)v);
    int two = 0;
    if (aiGetMaterialIntegerArray(mat, AI_MATKEY_TWOSIDED, &two, NULL) == aiReturn_SUCCESS)
      out->double_sided = two != 0;
    if (aiGetMaterialColor(mat, AI_MATKEY_COLOR_EMISSIVE, &c) == aiReturn_SUCCESS) {
      float e[3] = {(float)c.r, (float)c.g, (float)c.b};
      /* brighter than 1 (FBX: EmissiveColor * EmissiveFactor, an HDR
       * Collada emission): the colour scaled into 0..1 and the scale as
       * KHR_materials_emissive_strength */
      float peak = 0.0f;
      for (int k = 0; k < 3; ++k) if (isfinite(e[k]) && e[k] > peak) peak = e[k];
      if (peak > 1.0f && peak <= SKS_MAX_EMISSIVE_STRENGTH) {
        for (int k = 0; k < 3; ++k) e[k] = isfinite(e[k]) ? e[k] / peak : 0.0f;
        out->emissive_strength = peak;
      }
      for (int k = 0; k < 3; ++k) out->emissive[k] = e[k] > 0 ? (e[k] < 1 ? e[k] : 1.0f) : 0.0f;
    }
    if ((r = import_material_extras(im, i, mat, out)) != SKS_OK) break;
    r = import_textures(im, i, out, base_dir, &keys);
  }
  for (size_t k = 0; keys && k < m->image_count; ++k) free(keys[k]);
  free(keys);
  free(base_dir);
  return r;
}

/* ---- meshes, skins ----------------------------------------------------- */

typedef struct influence { float weight; uint32_t joint; } influence;

/* For every mesh, the first node in skeleton order whose mMeshes lists it
 * (-1 if none): one pass over the nodes. */
static int32_t *map_mesh_nodes(const importer *im) {
  unsigned nm = im->scene->mNumMeshes;
  int32_t *map = malloc((nm ? nm : 1) * sizeof *map);
  if (!map) return NULL;
  for (unsigned i = 0; i < nm; ++i) map[i] = -1;
  for (size_t i = im->node_count; i-- > 0;) { /* backwards: the first node wins */
    const struct aiNode *n = im->nodes[i];
    if (!n->mMeshes) continue;
    for (unsigned k = 0; k < n->mNumMeshes; ++k)
      if (n->mMeshes[k] < nm) map[n->mMeshes[k]] = (int32_t)i;
  }
  return map;
}

static sks_result import_indices(importer *im, unsigned mi, const struct aiMesh *mesh,
                                 sks_mesh_part *part) {
  size_t tris = 0;
  if (mesh->mNumFaces && !mesh->mFaces)
    return sks_error_set(im->err, SKS_ERR_PARSE, "%s: mesh %u: faces missing", im->path, mi);
  for (unsigned f = 0; f < mesh->mNumFaces; ++f)
    if (mesh->mFaces[f].mNumIndices >= 3) tris += mesh->mFaces[f].mNumIndices - 2;
  if (!tris) return SKS_OK;
  if (tris > SIZE_MAX / 3 / sizeof(uint32_t)) return oom(im);
  part->indices = malloc(tris * 3 * sizeof(uint32_t));
  if (!part->indices) return oom(im);
  size_t k = 0;
  for (unsigned f = 0; f < mesh->mNumFaces; ++f) {
    const struct aiFace *face = &mesh->mFaces[f];
    if (face->mNumIndices < 3) continue; /* points, lines */
    if (!face->mIndices)
      return sks_error_set(im->err, SKS_ERR_PARSE, "%s: mesh %u, face %u: indices missing",
                           im->path, mi, f);
    for (unsigned c = 0; c < face->mNumIndices; ++c)
      if (face->mIndices[c] >= mesh->mNumVertices)
        return sks_error_set(im->err, SKS_ERR_PARSE,
                             "%s: mesh %u, face %u: vertex index %u out of range (%u vertices)",
                             im->path, mi, f, face->mIndices[c], mesh->mNumVertices);
    const uint32_t *xmap = im->xmap ? im->xmap[mi] : NULL; /* text .x: corner -> vertex */
    for (unsigned c = 1; c + 1 < face->mNumIndices; ++c) { /* fan */
      unsigned a = face->mIndices[0], b = face->mIndices[c], d = face->mIndices[c + 1];
      part->indices[k++] = xmap ? xmap[a] : a;
      part->indices[k++] = xmap ? xmap[b] : b;
      part->indices[k++] = xmap ? xmap[d] : d;
    }
  }
  part->index_count = k;
  return SKS_OK;
}

static sks_result import_skin(importer *im, unsigned mi, const struct aiMesh *mesh,
                              sks_mesh_part *part) {
  sks_model *m = im->model;
  const size_t nv = part->vertex_count, ncorners = mesh->mNumVertices;
  /* Text .x: weights are listed per corner; vertex v takes its first corner's. */
  const uint32_t *xmap = im->xmap ? im->xmap[mi] : NULL, *xrep = im->xrep ? im->xrep[mi] : NULL;
  const unsigned nb = mesh->mNumBones;
  if (!mesh->mBones)
    return sks_error_set(im->err, SKS_ERR_PARSE, "%s: mesh %u: bones missing", im->path, mi);
  if (nb > 65535)
    return sks_error_set(im->err, SKS_ERR_UNSUPPORTED,
                         "%s: mesh %u: %u bones (at most 65535 per skin)", im->path, mi, nb);

  sks_skin *grown = realloc(m->skins, (m->skin_count + 1) * sizeof *grown);
  if (!grown) return oom(im);
  m->skins = grown;
  sks_skin *skin = &m->skins[m->skin_count];
  memset(skin, 0, sizeof *skin);
  part->skin = (int32_t)m->skin_count;
  ++m->skin_count;
  skin->name = mesh->mName.length ? dup_ai_string(&mesh->mName) : dup_fmt_index("skin_", mi);
  skin->joints = malloc(nb * sizeof *skin->joints);
  skin->inverse_bind = malloc(nb * sizeof *skin->inverse_bind);
  if (!skin->name || !skin->joints || !skin->inverse_bind) return oom(im);
  skin->joint_count = nb;

  /* Count influences per vertex first (validating vertex ids). */
  uint32_t *counts = calloc(nv ? nv : 1, sizeof *counts);
  if (!counts) return oom(im);
  sks_result r = SKS_OK;
  for (unsigned b = 0; b < nb && r == SKS_OK; ++b) {
    const struct aiBone *bone = mesh->mBones[b];
    if (!bone) {
      r = sks_error_set(im->err, SKS_ERR_PARSE, "%s: mesh %u, bone %u missing", im->path, mi, b);
      break;
    }
    skin->inverse_bind[b] = mat_from_ai(&bone->mOffsetMatrix);
    char *name = dup_ai_string(&bone->mName);
    if (!name) { r = oom(im); break; }
    int32_t j = resolve_bone(im, name, part->node);
    if (j < 0) r = add_bone_joint(im, name, part->node, &skin->inverse_bind[b], &j);
    free(name);
    skin->joints[b] = j;
    if (bone->mNumWeights && !bone->mWeights) {
      r = sks_error_set(im->err, SKS_ERR_PARSE, "%s: mesh %u, bone %u: weights missing",
                        im->path, mi, b);
      break;
    }
    for (unsigned w = 0; w < bone->mNumWeights && r == SKS_OK; ++w) {
      unsigned v = bone->mWeights[w].mVertexId;
      if (v >= ncorners)
        r = sks_error_set(im->err, SKS_ERR_PARSE,
                          "%s: mesh %u, bone %u '%s': vertex %u out of range (%zu vertices)",
                          im->path, mi, b, m->skeleton.names[j], v, ncorners);
      else if (!xmap)
        ++counts[v];
      else if (xrep[xmap[v]] == v)
        ++counts[xmap[v]];
    }
  }
  if (r != SKS_OK) { free(counts); return r; }

  uint32_t maxc = 0;
  for (size_t v = 0; v < nv; ++v) if (counts[v] > maxc) maxc = counts[v];
  /* Gather all influences per vertex (CSR), then keep the largest K. */
  size_t *start = malloc((nv + 1) * sizeof *start);
  size_t total = 0;
  if (start) {
    for (size_t v = 0; v < nv; ++v) { start[v] = total; total += counts[v]; }
    start[nv] = total;
  }
  influence *all = malloc((total ? total : 1) * sizeof *all);
  uint32_t k = maxc < 1 ? 1 : (maxc > SKS_MAX_INFLUENCES ? SKS_MAX_INFLUENCES : maxc);
  part->influence_count = k;
  size_t slots = nv ? nv * k : 1;
  part->joints = calloc(slots, sizeof *part->joints);
  part->weights = calloc(slots, sizeof *part->weights);
  if (!start || !all || !part->joints || !part->weights) {
    free(counts); free(start); free(all);
    return oom(im);
  }
  memset(counts, 0, nv * sizeof *counts);
  for (unsigned b = 0; b < nb; ++b) {
    const struct aiBone *bone = mesh->mBones[b];
    for (unsigned w = 0; w < bone->mNumWeights; ++w) {
      unsigned v = bone->mWeights[w].mVertexId;
      if (xmap) {
        if (xrep[xmap[v]] != v) continue; /* not the vertex's first corner */
        v = xmap[v];
      }
      influence *in = &all[start[v] + counts[v]++];
      in->weight = (float)bone->mWeights[w].mWeight;
      in->joint = b;
    }
  }
  for (size_t v = 0; v < nv; ++v) {
    influence *in = &all[start[v]];
    uint32_t c = counts[v], nonzero = 0;
    for (uint32_t a = 0; a < c; ++a) nonzero += in[a].weight != 0.0f;
    if (nonzero > part->file_max_influences) part->file_max_influences = nonzero;
    if (c > k) {
      /* Keep the k largest (stable: ties keep bone order), rescaled so the
       * vertex's weight sum stays the file's (check still sees a bad sum). */
      for (uint32_t a = 1; a < c; ++a) {
        influence x = in[a];
        uint32_t b = a;
        while (b > 0 && in[b - 1].weight < x.weight) { in[b] = in[b - 1]; --b; }
        in[b] = x;
      }
      double wsum = 0, kept = 0;
      int lost = 0;
      for (uint32_t a = 0; a < c; ++a) {
        wsum += in[a].weight;
        if (a < k) kept += in[a].weight; else lost |= in[a].weight != 0.0f;
      }
      if (lost) {
        /* Recorded so sks_check can say the file had more than we keep. */
        if (part->dropped_influence_vertices++ == 0) part->first_dropped_influence_vertex = v;
        if (kept > 0 && isfinite(wsum) && wsum > 0)
          for (uint32_t a = 0; a < k; ++a) in[a].weight = (float)(in[a].weight * (wsum / kept));
      }
      c = k;
    }
    for (uint32_t a = 0; a < c; ++a) {
      part->joints[v * k + a] = (uint16_t)in[a].joint;
      part->weights[v * k + a] = in[a].weight;
    }
  }
  free(counts); free(start); free(all);
  return SKS_OK;
}

/* ginv^T n: a normal under the matrix whose inverse is ginv (not normalised). */
static sks_vec3 normal_by(const sks_mat4 *ginv, float nx, float ny, float nz) {
  return sks_v3(ginv->m[0] * nx + ginv->m[1] * ny + ginv->m[2] * nz, ginv->m[4] * nx + ginv->m[5] * ny + ginv->m[6] * nz,
                ginv->m[8] * nx + ginv->m[9] * ny + ginv->m[10] * nz);
}

/* Determinant of the upper-left 3x3 (negative: the matrix mirrors). */
static float det3(const sks_mat4 *g) {
  const float *m = g->m;
  return m[0] * (m[5] * m[10] - m[9] * m[6]) - m[4] * (m[1] * m[10] - m[9] * m[2]) + m[8] * (m[1] * m[6] - m[5] * m[2]);
}

/* Assimp's FBX importer folds the mesh node's global transform G into the
 * offset matrices (FBXConverter: offset = inverse(bone bind world) * G): the
 * bind pose they imply is then inverse(G) * bone world, which has shear when
 * G scales non-uniformly (FBX/animation_with_skeleton.fbx: 0.28 % of D off
 * with T*R*S joints), and the vertices sit in G's frame. Other importers
 * (X, Collada, glTF, MD5...) give offsets that map from the scene root, as
 * glTF's inverse bind matrices do (measured: Testwuson, BCN_Epileptic are in
 * bind pose at rest only WITHOUT G). For FBX we move the part's bind space to
 * the scene root, which is exact for every pose: p' = G p,
 * inverse_bind' = offset * inverse(G), so model * inverse_bind' * p' ==
 * model * offset * p. inverse(inverse_bind') is then the bone's bind world
 * matrix (huesitos.fbx: rest == bind to 1.5e-5 % D, 6.6e3 % D before). */
static void rebase_to_scene_root(importer *im, sks_mesh_part *p) {
  if (p->node < 0 || (size_t)p->node >= im->node_count) return;
  const sks_mat4 *g = &im->globals[p->node];
  sks_mat4 id = sks_m4_identity(), ginv;
  int identity = 1;
  for (int i = 0; i < 16; ++i) if (g->m[i] != id.m[i]) identity = 0;
  if (identity || !sks_m4_inverse(g, &ginv)) return;
  /* Morph deltas first (a normal delta needs the base normal before it
   * moves): positions and tangents are directions under g; a normal delta
   * is the difference of the two transformed, normalised normals. */
  for (size_t t = 0; t < p->morph_target_count; ++t) {
    sks_morph_target *mt = &p->morph_targets[t];
    for (size_t v = 0; v < p->vertex_count; ++v) {
      float *d[2] = {mt->position_deltas, mt->tangent_deltas};
      for (int q = 0; q < 2; ++q) {
        if (!d[q]) continue;
        sks_vec3 x = sks_m4_vector(g, sks_v3(d[q][3 * v], d[q][3 * v + 1], d[q][3 * v + 2]));
        d[q][3 * v] = x.x; d[q][3 * v + 1] = x.y; d[q][3 * v + 2] = x.z;
      }
      if (mt->normal_deltas && p->normals) {
        float *dn = &mt->normal_deltas[3 * v];
        const float *n0 = &p->normals[3 * v];
        sks_vec3 a = sks_v3_normalize(normal_by(&ginv, n0[0], n0[1], n0[2]));
        sks_vec3 b = sks_v3_normalize(normal_by(&ginv, n0[0] + dn[0], n0[1] + dn[1], n0[2] + dn[2]));
        dn[0] = b.x - a.x; dn[1] = b.y - a.y; dn[2] = b.z - a.z;
      }
    }
  }
  if (p->tangents) { /* directions under g; a mirroring g flips the handedness */
    float w = det3(g) < 0.0f ? -1.0f : 1.0f;
    for (size_t v = 0; v < p->vertex_count; ++v) {
      float *q = &p->tangents[4 * v];
      sks_vec3 x = sks_v3_normalize(sks_m4_vector(g, sks_v3(q[0], q[1], q[2])));
      q[0] = x.x; q[1] = x.y; q[2] = x.z; q[3] *= w;
    }
  }
  for (size_t v = 0; v < p->vertex_count; ++v) {
    sks_vec3 x = sks_m4_point(g, sks_v3(p->positions[3 * v], p->positions[3 * v + 1], p->positions[3 * v + 2]));
    p->positions[3 * v] = x.x; p->positions[3 * v + 1] = x.y; p->positions[3 * v + 2] = x.z;
  }
  if (p->normals) {
    /* Normals go by the inverse transpose: n' = normalize(ginv^T n). */
    for (size_t v = 0; v < p->vertex_count; ++v) {
      sks_vec3 n = sks_v3_normalize(normal_by(&ginv, p->normals[3 * v], p->normals[3 * v + 1], p->normals[3 * v + 2]));
      p->normals[3 * v] = n.x; p->normals[3 * v + 1] = n.y; p->normals[3 * v + 2] = n.z;
    }
  }
  sks_skin *skin = &im->model->skins[p->skin];
  for (size_t j = 0; j < skin->joint_count; ++j) skin->inverse_bind[j] = sks_m4_mul(&skin->inverse_bind[j], &ginv);
}

static int scene_is_from_fbx(const struct aiScene *s);

static int vec_finite(const struct aiVector3D *v) { return isfinite(v->x) && isfinite(v->y) && isfinite(v->z); }

/* The file's tangents as glTF's TANGENT: xyz the tangent, w = +1 or -1 the
 * handedness, sign(dot(cross(n, t), b)) with Assimp's bitangent b (glTF
 * derives the bitangent as cross(n, t) * w). Kept only with the normals and
 * when every tangent is finite and non-zero, else left out with a warning
 * (a part either has a tangent space or not). */
static sks_result import_tangents(importer *im, unsigned i, const struct aiMesh *mesh, sks_mesh_part *p,
                                  const uint32_t *xrep) {
  if (!mesh->mTangents || !p->normals) return SKS_OK;
  size_t nv = p->vertex_count;
  for (size_t v = 0; v < nv; ++v) {
    size_t c = xrep ? xrep[v] : v;
    const struct aiVector3D *t = &mesh->mTangents[c];
    if (!vec_finite(t) || (double)t->x * t->x + (double)t->y * t->y + (double)t->z * t->z < 1e-24)
      return add_warning(im, "%s: mesh %u '%s', vertex %zu: tangent (%g, %g, %g) is not a direction — the "
                             "part's tangents are left out", im->path, i, p->name, v, (double)t->x,
                         (double)t->y, (double)t->z);
  }
  p->tangents = malloc(nv * 4 * sizeof(float));
  if (!p->tangents) return oom(im);
  for (size_t v = 0; v < nv; ++v) {
    size_t c = xrep ? xrep[v] : v;
    const struct aiVector3D *t = &mesh->mTangents[c];
    sks_vec3 n = sks_v3(p->normals[3 * v], p->normals[3 * v + 1], p->normals[3 * v + 2]);
    sks_vec3 tv = sks_v3((float)t->x, (float)t->y, (float)t->z);
    float w = 1.0f;
    if (mesh->mBitangents && vec_finite(&mesh->mBitangents[c])) {
      const struct aiVector3D *b = &mesh->mBitangents[c];
      sks_vec3 nt = sks_v3_cross(n, tv);
      if (nt.x * (float)b->x + nt.y * (float)b->y + nt.z * (float)b->z < 0.0f) w = -1.0f;
    }
    p->tangents[4 * v] = tv.x; p->tangents[4 * v + 1] = tv.y; p->tangents[4 * v + 2] = tv.z;
    p->tangents[4 * v + 3] = w;
  }
  return SKS_OK;
}

/* Assimp's anim meshes as morph targets. Assimp gives each target's
 * attributes whole (aiCreateAnimMesh copies the base, FBX blend shapes and
 * glTF targets are added to it), so a delta is target - base. At most
 * SKS_MAX_MORPH_TARGETS; a target with another vertex count or a
 * non-finite value is left out with a warning. */
static sks_result import_morph_targets(importer *im, unsigned i, const struct aiMesh *mesh, sks_mesh_part *p,
                                       const uint32_t *xrep) {
  unsigned n = mesh->mNumAnimMeshes;
  if (!n || !mesh->mAnimMeshes) return SKS_OK;
  sks_result r = SKS_OK;
  if (n > SKS_MAX_MORPH_TARGETS) {
    r = add_warning(im, "%s: mesh %u '%s': %u morph targets, over the limit of %d (SKS_MAX_MORPH_TARGETS) — "
                        "targets %d.. left out", im->path, i, p->name, n, SKS_MAX_MORPH_TARGETS,
                    SKS_MAX_MORPH_TARGETS);
    if (r != SKS_OK) return r;
    n = SKS_MAX_MORPH_TARGETS;
  }
  size_t nv = p->vertex_count;
  const int from_fbx = scene_is_from_fbx(im->scene);
  p->morph_targets = calloc(n, sizeof *p->morph_targets);
  if (!p->morph_targets) return oom(im);
  for (unsigned k = 0; k < n && r == SKS_OK; ++k) {
    const struct aiAnimMesh *am = mesh->mAnimMeshes[k];
    if (!am || am->mNumVertices != mesh->mNumVertices || !am->mVertices) {
      r = add_warning(im, "%s: mesh %u '%s': morph target %u has %u vertices (the mesh %u) or no positions — "
                          "left out", im->path, i, p->name, k, am ? am->mNumVertices : 0u, mesh->mNumVertices);
      continue;
    }
    sks_morph_target *mt = &p->morph_targets[p->morph_target_count];
    /* Assimp's FBX reader puts the in-between weight of the shape in its
     * channel into mWeight (1 for a channel's only shape), not the channel's
     * DeformPercent, which it does not give: FBX targets start at 0 (the
     * base mesh, the rest every other path sees). */
    mt->default_weight = !from_fbx && isfinite(am->mWeight) ? (float)am->mWeight : 0.0f;
    if (am->mName.length && !(mt->name = dup_ai_string(&am->mName))) return oom(im);
    int ok = 1;
    float *pd = mt->position_deltas = malloc(nv * 3 * sizeof(float));
    if (!pd) return oom(im);
    for (size_t v = 0; v < nv && ok; ++v) {
      size_t c = xrep ? xrep[v] : v;
      pd[3 * v] = (float)(am->mVertices[c].x - mesh->mVertices[c].x);
      pd[3 * v + 1] = (float)(am->mVertices[c].y - mesh->mVertices[c].y);
      pd[3 * v + 2] = (float)(am->mVertices[c].z - mesh->mVertices[c].z);
      ok = isfinite(pd[3 * v]) && isfinite(pd[3 * v + 1]) && isfinite(pd[3 * v + 2]);
    }
    const struct aiVector3D *src[2] = {am->mNormals, am->mTangents};
    const struct aiVector3D *base[2] = {p->normals ? mesh->mNormals : NULL, p->tangents ? mesh->mTangents : NULL};
    float **dst[2] = {&mt->normal_deltas, &mt->tangent_deltas};
    for (int q = 0; q < 2 && ok; ++q) {
      if (!src[q] || !base[q]) continue;
      float *d = *dst[q] = malloc(nv * 3 * sizeof(float));
      if (!d) return oom(im);
      for (size_t v = 0; v < nv && ok; ++v) {
        size_t c = xrep ? xrep[v] : v;
        d[3 * v] = (float)(src[q][c].x - base[q][c].x);
        d[3 * v + 1] = (float)(src[q][c].y - base[q][c].y);
        d[3 * v + 2] = (float)(src[q][c].z - base[q][c].z);
        ok = isfinite(d[3 * v]) && isfinite(d[3 * v + 1]) && isfinite(d[3 * v + 2]);
      }
    }
    if (!ok) {
      free(mt->name); free(mt->position_deltas); free(mt->normal_deltas); free(mt->tangent_deltas);
      memset(mt, 0, sizeof *mt);
      r = add_warning(im, "%s: mesh %u '%s': morph target %u has a non-finite value — left out", im->path, i,
                      p->name, k);
      continue;
    }
    ++p->morph_target_count;
  }
  if (r == SKS_OK && !p->morph_target_count) { free(p->morph_targets); p->morph_targets = NULL; }
  return r;
}

static sks_result import_mesh(importer *im, unsigned i, size_t part_index, int32_t node) {
  const struct aiScene *s = im->scene;
  sks_model *m = im->model;
  sks_mesh_part *p = &m->parts[part_index];
  p->skin = -1;
  p->material = -1;
  const struct aiMesh *mesh = s->mMeshes[i];
  if (!mesh) return sks_error_set(im->err, SKS_ERR_PARSE, "%s: mesh %u missing", im->path, i);
  p->name = mesh->mName.length ? dup_ai_string(&mesh->mName) : dup_fmt_index("mesh_", i);
  if (!p->name) return oom(im);
  if (mesh->mMaterialIndex < m->material_count) p->material = (int32_t)mesh->mMaterialIndex;
  p->node = node >= 0 ? node : 0; /* unreferenced mesh: follows the root */

  /* Text .x: the file's vertices (xrep[v] = the corner that carries vertex v). */
  const uint32_t *xrep = im->xrep ? im->xrep[i] : NULL;
  size_t nv = xrep ? im->xcount[i] : mesh->mNumVertices;
  if (nv && !mesh->mVertices)
    return sks_error_set(im->err, SKS_ERR_PARSE, "%s: mesh %u: positions missing", im->path, i);
  p->vertex_count = nv;
  if (nv) {
    p->positions = malloc(nv * 3 * sizeof(float));
    if (!p->positions) return oom(im);
    for (size_t v = 0; v < nv; ++v) {
      size_t c = xrep ? xrep[v] : v;
      p->positions[3 * v] = (float)mesh->mVertices[c].x;
      p->positions[3 * v + 1] = (float)mesh->mVertices[c].y;
      p->positions[3 * v + 2] = (float)mesh->mVertices[c].z;
    }
    if (mesh->mNormals) {
      p->normals = malloc(nv * 3 * sizeof(float));
      if (!p->normals) return oom(im);
      for (size_t v = 0; v < nv; ++v) {
        size_t c = xrep ? xrep[v] : v;
        p->normals[3 * v] = (float)mesh->mNormals[c].x;
        p->normals[3 * v + 1] = (float)mesh->mNormals[c].y;
        p->normals[3 * v + 2] = (float)mesh->mNormals[c].z;
      }
    }
    /* UV sets 0 and 1 (glTF TEXCOORD_0 / _1; set 1 only beside set 0) */
    float **uv_out[2] = {&p->uvs, &p->uvs1};
    for (int set = 0; set < 2 && mesh->mTextureCoords[set]; ++set) {
      float *uv = *uv_out[set] = malloc(nv * 2 * sizeof(float));
      if (!uv) return oom(im);
      for (size_t v = 0; v < nv; ++v) {
        size_t c = xrep ? xrep[v] : v;
        uv[2 * v] = (float)mesh->mTextureCoords[set][c].x;
        uv[2 * v + 1] = (float)mesh->mTextureCoords[set][c].y;
      }
    }
  }
  sks_result r = import_indices(im, i, mesh, p);
  if (r == SKS_OK && nv) r = import_tangents(im, i, mesh, p, xrep);
  if (r == SKS_OK && nv) r = import_morph_targets(im, i, mesh, p, xrep);
  if (r != SKS_OK) return r;
  if (mesh->mNumBones) {
    if ((r = import_skin(im, i, mesh, p)) != SKS_OK) return r;
    if (im->offsets_include_mesh_node) rebase_to_scene_root(im, p);
  }
  return SKS_OK;
}

/* A mesh Assimp made up to display a skeleton (SkeletonMeshBuilder: the BVH
 * reader always, the Collada / MD5 readers when the file has no geometry).
 * It has no name, the material "SkeletonMaterial", one bone per node and no
 * UVs (measured: BVH/01_01.bvh 492 vertices, 34 bones; Collada/lights.dae,
 * cameras.dae; the files' own meshes all have names or other materials). It
 * is not the artist's geometry, so it is not a mesh part. */
static int mesh_is_generated_skeleton(const struct aiScene *s, const struct aiMesh *mesh) {
  if (!mesh || mesh->mName.length || !mesh->mNumBones || mesh->mTextureCoords[0]) return 0;
  if (!s->mMaterials || mesh->mMaterialIndex >= s->mNumMaterials) return 0;
  struct aiString name;
  if (aiGetMaterialString(s->mMaterials[mesh->mMaterialIndex], AI_MATKEY_NAME, &name) != aiReturn_SUCCESS)
    return 0;
  return ai_name_equals(&name, "SkeletonMaterial");
}

static sks_result import_meshes(importer *im) {
  const struct aiScene *s = im->scene;
  sks_model *m = im->model;
  if (!s->mNumMeshes) return SKS_OK;
  if (!s->mMeshes) return sks_error_set(im->err, SKS_ERR_PARSE, "%s: meshes missing", im->path);
  size_t real = 0;
  for (unsigned i = 0; i < s->mNumMeshes; ++i) real += !mesh_is_generated_skeleton(s, s->mMeshes[i]);
  if (!real) return SKS_OK; /* skeleton only: no parts (usable as a clip source) */
  m->parts = calloc(real, sizeof *m->parts);
  if (!m->parts) return oom(im);
  m->part_count = real;
  int32_t *mesh_node = map_mesh_nodes(im);
  if (!mesh_node) return oom(im);
  sks_result r = SKS_OK;
  size_t k = 0;
  for (unsigned i = 0; i < s->mNumMeshes && r == SKS_OK; ++i)
    if (!mesh_is_generated_skeleton(s, s->mMeshes[i])) r = import_mesh(im, i, k++, mesh_node[i]);
  free(mesh_node);
  return r;
}

/* ---- clips ------------------------------------------------------------- */

/* Key times must ascend for sampling; Assimp normally sorts them, but broken
 * files may not: sort (stable) together with the values when needed. */
static void sort_track(sks_track *t, uint32_t comps) {
  int sorted = 1;
  for (size_t i = 1; i < t->key_count; ++i)
    if (t->times[i] < t->times[i - 1]) { sorted = 0; break; }
  if (sorted) return;
  for (size_t i = 1; i < t->key_count; ++i) {
    float tv = t->times[i], vv[4];
    memcpy(vv, &t->values[i * comps], comps * sizeof(float));
    size_t j = i;
    while (j > 0 && t->times[j - 1] > tv) {
      t->times[j] = t->times[j - 1];
      memcpy(&t->values[j * comps], &t->values[(j - 1) * comps], comps * sizeof(float));
      --j;
    }
    t->times[j] = tv;
    memcpy(&t->values[j * comps], vv, comps * sizeof(float));
  }
}

/* The part an aiMeshMorphAnim drives: its name (up to a '*', which some
 * importers append with an index) names the node holding the mesh or the
 * mesh itself; only parts with morph targets count. -1: none. */
static int32_t morph_anim_part(const importer *im, const struct aiString *name) {
  const sks_model *m = im->model;
  size_t len = name->length < sizeof name->data ? name->length : sizeof name->data - 1;
  const char *star = memchr(name->data, '*', len);
  if (star) len = (size_t)(star - name->data);
  for (int pass = 0; pass < 2; ++pass)
    for (size_t p = 0; p < m->part_count; ++p) {
      const sks_mesh_part *part = &m->parts[p];
      if (!part->morph_target_count) continue;
      const char *n = pass == 0 ? (part->node >= 0 && (size_t)part->node < m->skeleton.joint_count
                                       ? m->skeleton.names[part->node] : NULL)
                                : part->name;
      if (n && strlen(n) == len && memcmp(n, name->data, len) == 0) return (int32_t)p;
    }
  return -1;
}

/* Assimp's morph mesh animation (FBX blend-shape channels, glTF weights):
 * keys of (target index, weight) pairs become one dense morph track per
 * node, weights of targets a key does not list 0. Channels that name no
 * part with morph targets, a second channel on the same node, and keys out
 * of time order are left out with a warning. */
static sks_result import_morph_clip(importer *im, const struct aiAnimation *anim, unsigned a, sks_clip *clip,
                                    double tps, float *duration) {
  unsigned nc = anim->mNumMorphMeshChannels;
  if (!nc) return SKS_OK;
  if (!anim->mMorphMeshChannels)
    return sks_error_set(im->err, SKS_ERR_PARSE, "%s: animation %u: morph channels missing", im->path, a);
  if (!(clip->morph_tracks = calloc(nc, sizeof *clip->morph_tracks))) return oom(im);
  sks_result r = SKS_OK;
  for (unsigned c = 0; c < nc && r == SKS_OK; ++c) {
    const struct aiMeshMorphAnim *ch = anim->mMorphMeshChannels[c];
    if (!ch || !ch->mNumKeys) continue;
    if (!ch->mKeys) return sks_error_set(im->err, SKS_ERR_PARSE, "%s: animation %u: morph channel %u has no keys",
                                         im->path, a, c);
    int32_t p = morph_anim_part(im, &ch->mName);
    const sks_mesh_part *part = p >= 0 ? &im->model->parts[p] : NULL;
    int dup = 0;
    for (size_t q = 0; part && q < clip->morph_track_count; ++q) dup |= clip->morph_tracks[q].node == part->node;
    if (!part || dup) {
      r = add_warning(im, "%s: animation %u '%s': morph channel %u ('%s') %s — left out", im->path, a, clip->name, c,
                      ch->mName.data, dup ? "drives a mesh an earlier channel already drives"
                                          : "names no mesh with morph targets");
      continue;
    }
    size_t w = part->morph_target_count, nk = ch->mNumKeys;
    if (nk > SKS_MAX_MORPH_TRACK_VALUES / w) {
      r = add_warning(im, "%s: animation %u '%s': morph channel %u: %zu keys x %zu targets, over the limit of %u "
                          "weights — left out", im->path, a, clip->name, c, nk, w, SKS_MAX_MORPH_TRACK_VALUES);
      continue;
    }
    sks_morph_track *t = &clip->morph_tracks[clip->morph_track_count];
    t->node = part->node;
    t->interpolation = SKS_INTERP_LINEAR;
    t->weight_count = w;
    t->times = malloc(nk * sizeof(float));
    t->values = calloc(nk * w, sizeof(float));
    if (!t->times || !t->values) { free(t->times); free(t->values); memset(t, 0, sizeof *t); return oom(im); }
    t->key_count = nk;
    ++clip->morph_track_count;
    /* aiMeshMorphKey has no interpolation: a glTF's STEP weights would play
     * as LINEAR and CUBICSPLINE ones arrive as tangents and values mixed */
    if (im->gltf_source && !im->warned_morph_interp) {
      im->warned_morph_interp = 1;
      r = add_warning(im, "%s: morph weight interpolation is not given by Assimp: read as LINEAR (the native glTF "
                          "reader keeps it: it reads .gltf / .glb files that are not Draco-compressed)", im->path);
      if (r != SKS_OK) return r;
    }
    const char *bad = NULL;
    for (size_t k = 0; k < nk && !bad; ++k) {
      const struct aiMeshMorphKey *key = &ch->mKeys[k];
      t->times[k] = (float)(key->mTime / tps);
      if (!isfinite(t->times[k])) bad = "a key time is not finite";
      else if (k && t->times[k] < t->times[k - 1]) bad = "its key times decrease";
      if (key->mNumValuesAndWeights && (!key->mValues || !key->mWeights)) bad = "a key has no values";
      for (unsigned v = 0; !bad && v < key->mNumValuesAndWeights; ++v) {
        if (!isfinite(key->mWeights[v])) bad = "a weight is not finite";
        else if (key->mValues[v] < w) t->values[k * w + key->mValues[v]] = (float)key->mWeights[v];
      }
    }
    if (bad) {
      --clip->morph_track_count;
      free(t->times); free(t->values); memset(t, 0, sizeof *t);
      r = add_warning(im, "%s: animation %u '%s': morph channel %u ('%s'): %s — left out", im->path, a, clip->name, c,
                      ch->mName.data, bad);
      continue;
    }
    if (t->times[nk - 1] > *duration) *duration = t->times[nk - 1];
  }
  return r;
}

/* Key times as glTF allows (sks_clip_times_for_gltf), with a warning when
 * they had to move (LWS/move_y_pre_ofrep_post_osc.lws starts at -2.4 s, with
 * two keys at one time: `control -o` failed after the bake). */
static sks_result clip_times(importer *im, unsigned a, sks_clip *clip) {
  double shift;
  size_t bumped;
  sks_clip_times_for_gltf(clip, &shift, &bumped);
  sks_result r = SKS_OK;
  if (shift > 0)
    r = add_warning(im, "%s: animation %u '%s': its keys start at %g s, before 0 — moved to start at 0 (glTF clips "
                    "and players start at 0)", im->path, a, clip->name, -shift);
  if (r == SKS_OK && bumped)
    r = add_warning(im, "%s: animation %u '%s': %zu key(s) at their track's previous key time — moved one float step "
                    "after it (glTF key times increase strictly)", im->path, a, clip->name, bumped);
  return r;
}

static sks_result import_clips(importer *im) {
  const struct aiScene *s = im->scene;
  sks_model *m = im->model;
  if (!s->mNumAnimations) return SKS_OK;
  if (!s->mAnimations) return sks_error_set(im->err, SKS_ERR_PARSE, "%s: animations missing", im->path);
  m->clips = calloc(s->mNumAnimations, sizeof *m->clips);
  if (!m->clips) return oom(im);
  m->clip_count = s->mNumAnimations;
  for (unsigned a = 0; a < s->mNumAnimations; ++a) {
    const struct aiAnimation *anim = s->mAnimations[a];
    sks_clip *clip = &m->clips[a];
    if (!anim) return sks_error_set(im->err, SKS_ERR_PARSE, "%s: animation %u missing", im->path, a);
    clip->name = anim->mName.length ? dup_ai_string(&anim->mName) : dup_fmt_index("animation_", a);
    if (!clip->name) return oom(im);
    double tps = anim->mTicksPerSecond;
    if (!(tps > 0) || !isfinite(tps)) tps = SKS_ASSIMP_DEFAULT_TPS;
    if (anim->mNumChannels && !anim->mChannels)
      return sks_error_set(im->err, SKS_ERR_PARSE, "%s: animation %u: channels missing", im->path, a);
    size_t max_tracks = (size_t)anim->mNumChannels * 3;
    if (max_tracks) {
      clip->tracks = calloc(max_tracks, sizeof *clip->tracks);
      if (!clip->tracks) return oom(im);
    }
    float duration = 0.0f;
    for (unsigned c = 0; c < anim->mNumChannels; ++c) {
      const struct aiNodeAnim *ch = anim->mChannels[c];
      if (!ch) continue;
      /* The k-th channel naming a repeated node name animates the k-th node
       * of that name (Assimp's glTF importer emits one channel per node, in
       * node order); a unique name is simply that node. */
      char *cname = dup_ai_string(&ch->mNodeName);
      if (!cname) return oom(im);
      size_t first, count;
      name_range(im, cname, &first, &count);
      int32_t joint = -1;
      if (count == 1) {
        joint = (int32_t)im->by_name[first].index;
      } else if (count > 1) {
        size_t k = 0;
        for (unsigned e = 0; e < c; ++e)
          if (anim->mChannels[e] && ai_name_equals(&anim->mChannels[e]->mNodeName, cname)) ++k;
        joint = (int32_t)im->by_name[first + (k < count ? k : 0)].index;
      } else {
        for (size_t i = im->node_count; i < m->skeleton.joint_count && joint < 0; ++i)
          if (strcmp(m->skeleton.names[i], cname) == 0) joint = (int32_t)i;
      }
      free(cname);
      if (joint < 0) continue; /* animates a node the scene does not have */
      for (int path = 0; path < 3; ++path) {
        unsigned n = path == 0 ? ch->mNumPositionKeys : path == 1 ? ch->mNumRotationKeys : ch->mNumScalingKeys;
        const void *keys = path == 0 ? (const void *)ch->mPositionKeys
                         : path == 1 ? (const void *)ch->mRotationKeys : (const void *)ch->mScalingKeys;
        if (!n || !keys) continue;
        sks_track *t = &clip->tracks[clip->track_count];
        t->joint = joint;
        t->path = path == 0 ? SKS_PATH_TRANSLATION : path == 1 ? SKS_PATH_ROTATION : SKS_PATH_SCALE;
        t->interpolation = SKS_INTERP_LINEAR;
        uint32_t comps = sks_track_components(t->path);
        t->times = malloc(n * sizeof(float));
        t->values = malloc((size_t)n * comps * sizeof(float));
        if (!t->times || !t->values) { free(t->times); free(t->values); t->times = NULL; t->values = NULL; return oom(im); }
        t->key_count = n;
        ++clip->track_count;
        for (unsigned k = 0; k < n; ++k) {
          if (path == 1) {
            const struct aiQuatKey *q = &ch->mRotationKeys[k];
            t->times[k] = (float)(q->mTime / tps);
            t->values[4 * k] = (float)q->mValue.x;
            t->values[4 * k + 1] = (float)q->mValue.y;
            t->values[4 * k + 2] = (float)q->mValue.z;
            t->values[4 * k + 3] = (float)q->mValue.w;
          } else {
            const struct aiVectorKey *vk = path == 0 ? &ch->mPositionKeys[k] : &ch->mScalingKeys[k];
            t->times[k] = (float)(vk->mTime / tps);
            t->values[3 * k] = (float)vk->mValue.x;
            t->values[3 * k + 1] = (float)vk->mValue.y;
            t->values[3 * k + 2] = (float)vk->mValue.z;
          }
        }
        sort_track(t, comps);
        float last = t->times[n - 1];
        if (isfinite(last) && last > duration) duration = last;
      }
    }
    sks_result r = import_morph_clip(im, anim, a, clip, tps, &duration);
    if (r != SKS_OK) return r;
    clip->duration = duration;
    if ((r = clip_times(im, a, clip)) != SKS_OK) return r;
  }
  return SKS_OK;
}

/* Assimp stamps every scene with the importer that made it. */
static int scene_is_from_fbx(const struct aiScene *s) {
  const struct aiMetadata *md = s->mMetaData;
  if (!md || !md->mKeys || !md->mValues) return 0;
  for (unsigned i = 0; i < md->mNumProperties; ++i)
    if (ai_name_equals(&md->mKeys[i], "SourceAsset_Format") && md->mValues[i].mType == AI_AISTRING &&
        md->mValues[i].mData)
      return strstr(((const struct aiString *)md->mValues[i].mData)->data, "FBX") != NULL;
  return 0;
}

/* glTF read through Assimp (force_assimp, or under another extension:
 * Assimp's glTF importers also claim files by their content): .gltf / .glb,
 * a GLB's "glTF" magic, or JSON (no other Assimp importer reads JSON). */
static int file_is_gltf(const char *path) {
  size_t n = strlen(path);
  if ((n >= 5 && strcasecmp(path + n - 5, ".gltf") == 0) || (n >= 4 && strcasecmp(path + n - 4, ".glb") == 0))
    return 1;
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  unsigned char head[64];
  size_t got = fread(head, 1, sizeof head, f);
  fclose(f);
  if (got >= 4 && memcmp(head, "glTF", 4) == 0) return 1;
  size_t i = got >= 3 && memcmp(head, "\xef\xbb\xbf", 3) == 0 ? 3 : 0; /* UTF-8 BOM */
  while (i < got && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n')) ++i;
  return i < got && head[i] == '{';
}

/* DirectX .x files start with "xof " (text, binary and compressed alike). */
static int file_is_directx(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  char magic[4] = {0};
  size_t n = fread(magic, 1, 4, f);
  fclose(f);
  return n == 4 && memcmp(magic, "xof ", 4) == 0;
}

/* ---- DirectX .x: the file's own vertices --------------------------------- */
/* Assimp's .x reader emits one vertex per face corner (Testwuson: 3,732
 * triangles -> 11,196 vertices; the file stores 3,205) and does not say which
 * file vertex a corner came from. aiProcess_JoinIdenticalVertices merges
 * corners equal in every attribute, which gives neither the file's order
 * (first use by the faces) nor always its count (anim_test.x: 485 instead of
 * the file's 1,720, whose duplicated vertices are identical). So for text .x
 * files we read each Mesh's face lists (and MeshMaterialList: Assimp makes
 * one aiMesh per mesh and material) ourselves, match every aiMesh's corners
 * to one (mesh, material) of the file by their positions, and build the part
 * from the file vertices its faces use, in the file's order: corner c of the
 * aiMesh becomes part vertex xmap[c]; part vertex v takes its attributes and
 * weights from corner xrep[v] (its first corner). Anything unexpected (binary
 * or compressed .x, a mesh no file mesh matches) falls back to the join. */

typedef struct x_mesh {
  size_t vertex_count;
  float *positions;     /* 3 * vertex_count, as written (left-handed) */
  size_t face_count;
  size_t *face_start;   /* face_count + 1 offsets into corners */
  uint32_t *corners;    /* file vertex index of every face corner, face order */
  uint32_t *face_material; /* face_count, or NULL = all material 0 */
  uint32_t material_count; /* >= 1 */
  uint32_t used_mask;   /* materials already matched to an aiMesh (first 32) */
} x_mesh;

typedef struct x_file { size_t mesh_count; x_mesh *meshes; } x_file;

static void x_file_free(x_file *xf) {
  for (size_t i = 0; i < xf->mesh_count; ++i) {
    free(xf->meshes[i].positions); free(xf->meshes[i].face_start);
    free(xf->meshes[i].corners); free(xf->meshes[i].face_material);
  }
  free(xf->meshes);
  memset(xf, 0, sizeof *xf);
}

typedef struct x_lexer { const char *p, *end; char tok[128]; } x_lexer;

/* Next token: "{", "}", or a run of other characters; separators are
 * whitespace , ; and comments (# or //) run to the end of the line. 0 at end. */
static int x_next(x_lexer *lx) {
  for (;;) {
    while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\r' || *lx->p == '\n' ||
                               *lx->p == ',' || *lx->p == ';'))
      ++lx->p;
    if (lx->p >= lx->end) return 0;
    if (*lx->p == '#' || (*lx->p == '/' && lx->p + 1 < lx->end && lx->p[1] == '/')) {
      while (lx->p < lx->end && *lx->p != '\n') ++lx->p;
      continue;
    }
    break;
  }
  size_t n = 0;
  if (*lx->p == '{' || *lx->p == '}') {
    lx->tok[n++] = *lx->p++;
  } else {
    /* memchr, not strchr: strchr finds a NUL byte in the set (its
     * terminator), which gave an empty token without advancing: a text .x
     * with one NUL byte looped forever. Every byte here now advances. */
    while (lx->p < lx->end && !memchr(" \t\r\n,;{}#", (unsigned char)*lx->p, 9)) {
      if (n + 1 < sizeof lx->tok) lx->tok[n++] = *lx->p;
      ++lx->p;
    }
  }
  lx->tok[n] = '\0';
  return 1;
}

static int x_uint(x_lexer *lx, size_t limit, size_t *out) {
  if (!x_next(lx)) return 0;
  char *e;
  unsigned long long v = strtoull(lx->tok, &e, 10);
  if (e == lx->tok || *e || v > limit) return 0;
  *out = (size_t)v;
  return 1;
}

/* Body of a Mesh after its "{": vertices, faces, then child objects up to
 * the matching "}" (only MeshMaterialList is read). 0 = not understood. */
static int x_parse_mesh(x_lexer *lx, x_mesh *xm, size_t size_cap) {
  size_t nv, nf;
  if (!x_uint(lx, size_cap, &nv)) return 0;
  xm->vertex_count = nv;
  xm->positions = malloc((nv ? nv : 1) * 3 * sizeof(float));
  if (!xm->positions) return 0;
  for (size_t i = 0; i < 3 * nv; ++i) {
    if (!x_next(lx)) return 0;
    char *e;
    xm->positions[i] = strtof(lx->tok, &e);
    if (e == lx->tok || *e) return 0;
  }
  if (!x_uint(lx, size_cap, &nf)) return 0;
  xm->face_count = nf;
  xm->face_start = malloc((nf + 1) * sizeof *xm->face_start);
  size_t cap = 3 * nf + 4, used = 0;
  xm->corners = malloc(cap * sizeof *xm->corners);
  if (!xm->face_start || !xm->corners) return 0;
  for (size_t f = 0; f < nf; ++f) {
    size_t n;
    if (!x_uint(lx, size_cap, &n)) return 0;
    xm->face_start[f] = used;
    if (used + n > cap) {
      while (used + n > cap) cap *= 2;
      uint32_t *c = realloc(xm->corners, cap * sizeof *c);
      if (!c) return 0;
      xm->corners = c;
    }
    for (size_t k = 0; k < n; ++k) {
      size_t v;
      if (!x_uint(lx, nv ? nv - 1 : 0, &v)) return 0;
      xm->corners[used++] = (uint32_t)v;
    }
  }
  xm->face_start[nf] = used;
  xm->material_count = 1;
  int depth = 1;
  while (depth > 0) {
    if (!x_next(lx)) return 0;
    if (lx->tok[0] == '{') { ++depth; continue; }
    if (lx->tok[0] == '}') { --depth; continue; }
    if (depth == 1 && strcmp(lx->tok, "MeshMaterialList") == 0 && !xm->face_material) {
      if (!x_next(lx)) return 0;
      if (lx->tok[0] != '{' && (!x_next(lx) || lx->tok[0] != '{')) return 0;
      ++depth;
      size_t nm, ni;
      if (!x_uint(lx, 1u << 20, &nm) || !x_uint(lx, size_cap, &ni)) return 0;
      if (ni != nf && ni != 1) return 0; /* Assimp refuses other counts too */
      xm->face_material = malloc((nf ? nf : 1) * sizeof *xm->face_material);
      if (!xm->face_material) return 0;
      for (size_t f = 0; f < ni; ++f) {
        size_t b;
        if (!x_uint(lx, 1u << 20, &b)) return 0;
        xm->face_material[f] = (uint32_t)b;
      }
      for (size_t f = ni; f < nf; ++f) xm->face_material[f] = xm->face_material[0];
      xm->material_count = nm ? (uint32_t)nm : 1;
    }
  }
  return 1;
}

/* Reads every Mesh of a text .x file; 0 if the file is not one we understand. */
static int x_read(const char *path, x_file *xf) {
  memset(xf, 0, sizeof *xf);
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  char *buf = NULL;
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  if (size >= 16 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size)) != NULL &&
      fread(buf, 1, (size_t)size, f) != (size_t)size) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (!buf) return 0;
  int ok = memcmp(buf, "xof ", 4) == 0 && memcmp(buf + 8, "txt ", 4) == 0;
  x_lexer lx = {buf + 16, buf + size, ""};
  char prev[128] = "";
  size_t cap = 0;
  while (ok && x_next(&lx)) {
    if (strcmp(lx.tok, "Mesh") == 0 && strcmp(prev, "template") != 0) {
      if (!x_next(&lx)) { ok = 0; break; }
      if (lx.tok[0] != '{' && (!x_next(&lx) || lx.tok[0] != '{')) { ok = 0; break; }
      if (xf->mesh_count == cap) {
        cap = cap ? 2 * cap : 4;
        x_mesh *g = realloc(xf->meshes, cap * sizeof *g);
        if (!g) { ok = 0; break; }
        xf->meshes = g;
      }
      x_mesh *xm = &xf->meshes[xf->mesh_count++];
      memset(xm, 0, sizeof *xm);
      ok = x_parse_mesh(&lx, xm, (size_t)size);
      prev[0] = '\0';
      continue;
    }
    snprintf(prev, sizeof prev, "%s", lx.tok);
  }
  free(buf);
  if (!ok) x_file_free(xf);
  return ok;
}

/* Matches aiMesh `mesh` to an unused (file mesh, material) whose corners, in
 * face order, sit where the aiMesh's vertices are (z negated: Assimp turns
 * the left-handed file right-handed). Fills xmap / xrep / *count. */
static int x_match(x_file *xf, const struct aiMesh *mesh, uint32_t **xmap, uint32_t **xrep,
                   size_t *count) {
  const size_t nc = mesh->mNumVertices;
  for (size_t mi = 0; mi < xf->mesh_count; ++mi) {
    x_mesh *xm = &xf->meshes[mi];
    for (uint32_t b = 0; b < xm->material_count && b < 32; ++b) {
      if (xm->used_mask & (1u << b)) continue;
      size_t k = 0;
      int ok = 1;
      for (size_t f = 0; f < xm->face_count && ok; ++f) {
        if (xm->face_material && xm->face_material[f] != b) continue;
        for (size_t c = xm->face_start[f]; c < xm->face_start[f + 1] && ok; ++c, ++k) {
          if (k >= nc) { ok = 0; break; }
          const float *x = &xm->positions[3 * xm->corners[c]];
          const struct aiVector3D *a = &mesh->mVertices[k];
          float tol = 1e-5f * (1.0f + fabsf(x[0]) + fabsf(x[1]) + fabsf(x[2]));
          if (fabsf((float)a->x - x[0]) > tol || fabsf((float)a->y - x[1]) > tol ||
              fabsf((float)a->z + x[2]) > tol)
            ok = 0;
        }
      }
      if (!ok || k != nc) continue;
      /* Part vertices: the file vertices used, ascending (the file's order). */
      uint32_t *slot = malloc((xm->vertex_count ? xm->vertex_count : 1) * sizeof *slot);
      uint32_t *map = malloc((nc ? nc : 1) * sizeof *map);
      uint32_t *rep = malloc((nc ? nc : 1) * sizeof *rep);
      if (!slot || !map || !rep) { free(slot); free(map); free(rep); return 0; }
      for (size_t v = 0; v < xm->vertex_count; ++v) slot[v] = UINT32_MAX;
      k = 0;
      for (size_t f = 0; f < xm->face_count; ++f) {
        if (xm->face_material && xm->face_material[f] != b) continue;
        for (size_t c = xm->face_start[f]; c < xm->face_start[f + 1]; ++c, ++k)
          if (slot[xm->corners[c]] == UINT32_MAX) slot[xm->corners[c]] = (uint32_t)k; /* first corner */
      }
      size_t n = 0;
      for (size_t v = 0; v < xm->vertex_count; ++v)
        if (slot[v] != UINT32_MAX) { rep[n] = slot[v]; slot[v] = (uint32_t)n++; }
      k = 0;
      for (size_t f = 0; f < xm->face_count; ++f) {
        if (xm->face_material && xm->face_material[f] != b) continue;
        for (size_t c = xm->face_start[f]; c < xm->face_start[f + 1]; ++c, ++k) map[k] = slot[xm->corners[c]];
      }
      free(slot);
      xm->used_mask |= 1u << b;
      *xmap = map;
      *xrep = rep;
      *count = n;
      return 1;
    }
  }
  return 0;
}

/* Maps every aiMesh of a text .x scene to the file's vertices; 0 (nothing
 * kept) if one cannot be mapped. */
static int x_map_scene(importer *im) {
  x_file xf;
  if (!x_read(im->path, &xf)) return 0;
  unsigned nm = im->scene->mNumMeshes;
  int ok = nm > 0 && im->scene->mMeshes;
  if (ok) {
    im->xmap = calloc(nm, sizeof *im->xmap);
    im->xrep = calloc(nm, sizeof *im->xrep);
    im->xcount = calloc(nm, sizeof *im->xcount);
    ok = im->xmap && im->xrep && im->xcount;
  }
  for (unsigned i = 0; ok && i < nm; ++i) {
    const struct aiMesh *mesh = im->scene->mMeshes[i];
    ok = mesh && mesh->mVertices && x_match(&xf, mesh, &im->xmap[i], &im->xrep[i], &im->xcount[i]);
  }
  x_file_free(&xf);
  if (!ok) x_unmap(im);
  return ok;
}

/* ---- preflight ---------------------------------------------------------- */

/* Assimp 5.2's OFF and PLY readers believe the header's element counts and
 * allocate (and touch) that much before noticing the file is short:
 * assimp-testmodels' invalid/OutOfMemory.off makes it take ~16 GB and half a
 * minute. Every vertex/face takes at least one byte, so a count larger than
 * the file cannot be real. */
static sks_result check_count(const char *path, const char *what, unsigned long long count, long size,
                              sks_error *err) {
  if (count > (unsigned long long)size)
    return sks_error_set(err, SKS_ERR_PARSE, "%s: header declares %llu %s but the file has only %ld bytes",
                         path, count, what, size);
  return SKS_OK;
}

static sks_result preflight_counts(const char *path, sks_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return SKS_OK; /* Assimp reports it */
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  fclose(f);
  if (size < 0) return SKS_OK;

  if (strncmp(buf, "ply", 3) == 0 && (buf[3] == '\n' || buf[3] == '\r')) {
    /* "element <name> <count>" lines until end_header. */
    const char *p = buf;
    while ((p = strstr(p, "element ")) != NULL) {
      const char *end_header = strstr(buf, "end_header");
      if (end_header && p > end_header) break;
      p += 8;
      while (*p == ' ') ++p;
      const char *name = p;
      while (*p && *p != ' ' && *p != '\n') ++p;
      char *e;
      unsigned long long count = strtoull(p, &e, 10);
      if (e == p) continue;
      char what[64];
      snprintf(what, sizeof what, "'%.*s' elements", (int)(p - name < 40 ? p - name : 40), name);
      sks_result r = check_count(path, what, count, size, err);
      if (r != SKS_OK) return r;
      p = e;
    }
    return SKS_OK;
  }

  /* OFF: keyword [ST][C][N][4][n]OFF, then (after comments) the counts. */
  const char *p = buf;
  while (*p == 'S' || *p == 'T' || *p == 'C' || *p == 'N' || *p == '4' || *p == 'n') ++p;
  if (strncmp(p, "OFF", 3) != 0) return SKS_OK;
  p += 3;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') ++p;
    if (*p != '#') break;
    while (*p && *p != '\n') ++p;
  }
  for (int k = 0; k < 2; ++k) {
    char *end;
    unsigned long long count = strtoull(p, &end, 10);
    if (end == p) return SKS_OK;
    sks_result r = check_count(path, k == 0 ? "vertices" : "faces", count, size, err);
    if (r != SKS_OK) return r;
    p = end;
  }
  return SKS_OK;
}

/* ---- Assimp's file system: regular files only, read-only, recorded ------ */
/* Assimp opens the model and every file it names (an .obj's .mtl, ...)
 * through this, so the caller learns exactly which files were read (the CLI
 * refuses to write over any of them), and a FIFO or device named by a file
 * is refused instead of blocking the import. */
typedef struct file_log {
  void (*fn)(void *user, const char *path);
  void *user;
  const char *root;  /* real path of the model's folder: Assimp opens nothing outside it */
  const char *model; /* real path of the model file */
  char refused[256]; /* the first path refused for lying outside root ("" = none) */
} file_log;

/* 1 when the real path `p` is `root` or inside it. */
static int path_inside(const char *root, const char *p) {
  size_t n = strlen(root);
  if (n == 1 && root[0] == '/') return 1;
  return strncmp(root, p, n) == 0 && (p[n] == '/' || p[n] == '\0');
}

static size_t fio_read(struct aiFile *f, char *buf, size_t size, size_t count) {
  return size && count ? fread(buf, size, count, (FILE *)(void *)f->UserData) : 0;
}
static size_t fio_write(struct aiFile *f, const char *buf, size_t size, size_t count) {
  (void)f; (void)buf; (void)size; (void)count;
  return 0; /* opened read-only: an importer never writes */
}
static size_t fio_tell(struct aiFile *f) {
  off_t t = ftello((FILE *)(void *)f->UserData);
  return t < 0 ? 0 : (size_t)t;
}
static size_t fio_size(struct aiFile *f) {
  struct stat st;
  if (fstat(fileno((FILE *)(void *)f->UserData), &st) != 0 || st.st_size < 0) return 0;
  return (size_t)st.st_size;
}
static enum aiReturn fio_seek(struct aiFile *f, size_t offset, enum aiOrigin origin) {
  int whence = origin == aiOrigin_CUR ? SEEK_CUR : origin == aiOrigin_END ? SEEK_END : SEEK_SET;
  /* Assimp passes a negative relative offset as a wrapped size_t */
  return fseeko((FILE *)(void *)f->UserData, (off_t)(int64_t)offset, whence) == 0 ? aiReturn_SUCCESS
                                                                                  : aiReturn_FAILURE;
}
static void fio_flush(struct aiFile *f) { (void)f; }

static struct aiFile *fio_open(struct aiFileIO *io, const char *path, const char *mode) {
  if (!path || !mode || strpbrk(mode, "wa+")) return NULL;
  file_log *log = (file_log *)(void *)io->UserData;
  /* confined like the native glTF reader's uris: the model file and files
   * inside its folder (after "..", "." and symlinks), nothing else (a glTF
   * read through Assimp names its buffers by uri, an .obj its .mtl) */
  if (log && log->root) {
    char *real = realpath(path, NULL);
    int exists = real != NULL;
    int ok = exists && (path_inside(log->root, real) || (log->model && strcmp(real, log->model) == 0));
    free(real);
    if (!ok) {
      if (exists && !log->refused[0]) snprintf(log->refused, sizeof log->refused, "%s", path);
      return NULL;
    }
  }
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return NULL;
  if (log && log->root) {
    /* the file actually opened (a link swapped in after the check above
     * would lead out): its real path through /proc, where there is one */
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    char *now = realpath(link, NULL);
    int out = now && !path_inside(log->root, now) && !(log->model && strcmp(now, log->model) == 0);
    free(now);
    if (out) {
      if (!log->refused[0]) snprintf(log->refused, sizeof log->refused, "%s", path);
      close(fd);
      return NULL;
    }
  }
  struct stat st;
  FILE *fp = NULL;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !(fp = fdopen(fd, "rb"))) {
    close(fd);
    return NULL;
  }
  struct aiFile *f = calloc(1, sizeof *f);
  if (!f) {
    fclose(fp);
    return NULL;
  }
  f->ReadProc = fio_read;
  f->WriteProc = fio_write;
  f->TellProc = fio_tell;
  f->FileSizeProc = fio_size;
  f->SeekProc = fio_seek;
  f->FlushProc = fio_flush;
  f->UserData = (aiUserData)(void *)fp;
  if (log && log->fn) log->fn(log->user, path);
  return f;
}
static void fio_close(struct aiFileIO *io, struct aiFile *f) {
  (void)io;
  if (!f) return;
  fclose((FILE *)(void *)f->UserData);
  free(f);
}

/* ---- entry ------------------------------------------------------------- */

sks_result sks_load_assimp(const char *path, sks_model *out, sks_error *err) {
  return sks_load_assimp_recording(path, NULL, NULL, out, err);
}

sks_result sks_load_assimp_recording(const char *path, void (*on_file)(void *user, const char *path), void *user,
                                     sks_model *out, sks_error *err) {
  if (!out) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_load_assimp: out is NULL");
  memset(out, 0, sizeof *out);
  if (!path) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_load_assimp: path is NULL");

  /* Triangulate rewrites faces only; ValidateDataStructure turns broken
   * scenes into an error instead of a crash later; FlipUVs gives glTF's UV
   * origin. Nothing that merges, splits or reorders vertices. */
  sks_result pre = preflight_counts(path, err);
  if (pre != SKS_OK) return pre;

  unsigned flags = aiProcess_Triangulate | aiProcess_ValidateDataStructure | aiProcess_FlipUVs;
  /* Assimp's DirectX .x reader emits one vertex per face corner. Text .x
   * files are mapped back to the file's own vertices, in its order
   * (x_map_scene: Testwuson 3,205, BCN_Epileptic 1,170 + 1,196 + 648,
   * anim_test 1,720); other .x files get the corners identical in every
   * attribute joined (the file's count in most files, Assimp's first-use
   * order). Other readers keep the file's vertices. */
  const int directx = file_is_directx(path);
  /* No log stream is attached: Assimp's default logger stays the null logger. */
  /* the folder of the path as given (a symlinked model reads beside the
   * link, as the native glTF reader does), as a real path */
  char *model_real = realpath(path, NULL), *root = NULL;
  {
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    root = dir ? realpath(dir, NULL) : NULL;
    free(dir);
  }
  if (!model_real || !root) {
    int e = errno;
    free(model_real); free(root);
    return sks_error_set(err, SKS_ERR_IO, "%s: cannot open: %s", path, strerror(e));
  }
  file_log log = {on_file, user, root, model_real, {0}};
  struct aiFileIO fio = {fio_open, fio_close, (aiUserData)(void *)&log};
  const struct aiScene *scene = aiImportFileEx(path, flags, &fio);
  importer im;
  memset(&im, 0, sizeof im);
  im.path = path;
  im.scene = scene;
  im.on_file = on_file;
  im.on_file_user = user;
  im.gltf_source = file_is_gltf(path);
  if (scene && directx && !x_map_scene(&im)) {
    aiReleaseImport(scene);
    im.scene = scene = aiImportFileEx(path, flags | aiProcess_JoinIdenticalVertices, &fio);
  }
  free(model_real);
  free(root);
  log.root = log.model = NULL;
  if (!scene) {
    const char *why = aiGetErrorString();
    if (log.refused[0])
      return sks_error_set(err, SKS_ERR_UNSUPPORTED,
                           "%s: Assimp cannot import it: %s (it names '%s', which lies outside the model's "
                           "folder: refused, only files inside it are read)", path,
                           why && why[0] ? why : "unknown error", log.refused);
    return sks_error_set(err, SKS_ERR_PARSE, "%s: Assimp cannot import it: %s", path,
                         why && why[0] ? why : "unknown error");
  }
  im.model = out;
  im.err = err;
  im.offsets_include_mesh_node = scene_is_from_fbx(scene);

  /* AI_SCENE_FLAGS_INCOMPLETE (e.g. an animation-only file with no mesh) is
   * not an error: the model simply has no parts. */
  sks_result r = SKS_OK;
  out->source_path = dup_n(path, strlen(path));
  if (!out->source_path) r = oom(&im);
  if (r == SKS_OK && log.refused[0]) /* the import went on without it (an .obj's .mtl) */
    r = add_warning(&im, "%s: '%s' lies outside the model's folder: not read (only files inside it are)", path,
                    log.refused);
  if (r == SKS_OK) r = build_skeleton(&im);
  if (r == SKS_OK) r = compute_globals(&im);
  if (r == SKS_OK) r = build_name_index(&im);
  if (r == SKS_OK) r = import_materials(&im);
  if (r == SKS_OK) r = import_meshes(&im);
  /* a normal map with no tangents in the file: glTF needs TANGENT (the
   * validator's MESH_PRIMITIVE_GENERATED_TANGENT_SPACE / NO_TANGENT_SPACE) */
  if (r == SKS_OK) r = sks_model_generate_needed_tangents(out, NULL, err);
  if (r == SKS_OK) r = import_clips(&im);
  x_unmap(&im);
  free((void *)im.nodes);
  free(im.globals);
  free(im.by_name);
  free(im.depth);
  aiReleaseImport(scene);
  if (r != SKS_OK) sks_model_free(out);
  return r;
}
