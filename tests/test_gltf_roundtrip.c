#define _POSIX_C_SOURCE 200809L
/* Lossless glTF round trip on every .gltf / .glb in the shared data folder:
 *  1. write unchanged: the output JSON equals the input's except
 *     asset.generator, the buffer packing (one buffer; bufferViews' buffer /
 *     byteOffset) and external images moved into the BIN chunk; every
 *     bufferView carries the same bytes; images carry the files' bytes.
 *  2. sks_repair, then write: everything but meshes / accessors / buffers
 *     is unchanged (materials, textures, images, samplers, nodes, scenes,
 *     skins, animations, extensions, extras), and the weights read back are
 *     the repaired ones.
 *  3. a clip replaced (as bake -o does): the other animations keep their JSON
 *     (up to accessor renumbering), the new clip reads back exactly, and
 *     nothing but animations / accessors / bufferViews / buffers changes.
 * Plus: the writer's work is linear in the rig size (counted, not timed). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "io/gltf_source.h"
#include "test_gltf_write_rig.h"

static int is_gltf(const char *n) {
  size_t l = strlen(n);
  return (l > 5 && !strcmp(n + l - 5, ".gltf")) || (l > 4 && !strcmp(n + l - 4, ".glb"));
}

static void find_files(const char *dir, char ***list, size_t *n) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    DIR *sub = opendir(path);
    if (sub) { closedir(sub); find_files(path, list, n); continue; }
    if (!is_gltf(e->d_name)) continue;
    *list = realloc(*list, (*n + 1) * sizeof **list);
    (*list)[(*n)++] = strdup(path);
  }
  closedir(d);
}

/* cJSON_Compare takes numbers within a relative DBL_EPSILON as equal: this
 * walks two documents cJSON_Compare found equal and counts the numbers
 * that are not the same double (the writer once printed 15 digits that
 * came back one bit off). */
static size_t inexact_numbers(const cJSON *a, const cJSON *b) {
  if (!a || !b) return 0;
  if (cJSON_IsNumber(a) && cJSON_IsNumber(b)) return a->valuedouble != b->valuedouble;
  size_t n = 0;
  if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
    const cJSON *x;
    cJSON_ArrayForEach(x, a) n += inexact_numbers(x, cJSON_GetObjectItemCaseSensitive(b, x->string));
  } else if (cJSON_IsArray(a) && cJSON_IsArray(b)) {
    const cJSON *x = a->child, *y = b->child;
    for (; x && y; x = x->next, y = y->next) n += inexact_numbers(x, y);
  }
  return n;
}

/* Removes what the writer may legitimately change from a document copy. */
static cJSON *normalised(const cJSON *doc, const int *external_image, size_t n_images, size_t keep_views) {
  cJSON *j = cJSON_Duplicate(doc, 1);
  cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "asset"), "generator");
  cJSON_DeleteItemFromObjectCaseSensitive(j, "buffers");
  cJSON *views = cJSON_GetObjectItemCaseSensitive(j, "bufferViews"), *v;
  while ((size_t)cJSON_GetArraySize(views) > keep_views) cJSON_DeleteItemFromArray(views, (int)keep_views);
  cJSON_ArrayForEach(v, views) {
    cJSON_DeleteItemFromObjectCaseSensitive(v, "buffer");
    cJSON_DeleteItemFromObjectCaseSensitive(v, "byteOffset");
  }
  cJSON *img;
  size_t i = 0;
  cJSON_ArrayForEach(img, cJSON_GetObjectItemCaseSensitive(j, "images")) {
    if (i < n_images && external_image[i]) {
      cJSON_DeleteItemFromObjectCaseSensitive(img, "uri");
      cJSON_DeleteItemFromObjectCaseSensitive(img, "bufferView");
      cJSON_DeleteItemFromObjectCaseSensitive(img, "mimeType");
    }
    ++i;
  }
  return j;
}

static const unsigned char *source_view(const sks_gltf_source *src, const cJSON *view, size_t *len) {
  long b = tgw_int(view, "buffer", -1), off = tgw_int(view, "byteOffset", 0);
  *len = (size_t)tgw_int(view, "byteLength", 0);
  if (b < 0 || (size_t)b >= src->buffer_count || !src->buffers[b]) return NULL;
  return src->buffers[b] + off;
}

static const unsigned char *out_view(const tgw_glb *g, const cJSON *view, size_t *len) {
  *len = (size_t)tgw_int(view, "byteLength", 0);
  return g->bin + tgw_int(view, "byteOffset", 0);
}

static const char *keys_kept_always[] = {"materials", "textures", "images", "samplers", "nodes", "scenes",
                                         "scene", "skins", "cameras", "extensions", "extras",
                                         "extensionsUsed", "extensionsRequired"};

static void check_same_keys(const char *tag, const cJSON *a, const cJSON *b, const char *const *keys,
                            size_t n, const int *ext_img, size_t n_img) {
  for (size_t k = 0; k < n; ++k) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(a, keys[k]), *y = cJSON_GetObjectItemCaseSensitive(b, keys[k]);
    if (!strcmp(keys[k], "images") && x) {
      cJSON *nx = normalised(a, ext_img, n_img, 0), *ny = normalised(b, ext_img, n_img, 0);
      CHECK_MSG(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(nx, "images"), cJSON_GetObjectItemCaseSensitive(ny, "images"), 1),
                "%s: images differ", tag);
      cJSON_Delete(nx); cJSON_Delete(ny);
      continue;
    }
    if (!strcmp(keys[k], "skins") && x && y) { /* accessor indices may be renumbered */
      cJSON *sx = cJSON_Duplicate(x, 1), *sy = cJSON_Duplicate(y, 1), *e;
      cJSON_ArrayForEach(e, sx) cJSON_DeleteItemFromObjectCaseSensitive(e, "inverseBindMatrices");
      cJSON_ArrayForEach(e, sy) cJSON_DeleteItemFromObjectCaseSensitive(e, "inverseBindMatrices");
      CHECK_MSG(cJSON_Compare(sx, sy, 1), "%s: skins differ", tag);
      cJSON_Delete(sx); cJSON_Delete(sy);
      continue;
    }
    CHECK_MSG((!x && !y) || (x && y && cJSON_Compare(x, y, 1)), "%s: \"%s\" differs", tag, keys[k]);
  }
}

static void test_file(const char *path) {
  sks_error err = {0};
  sks_model m;
  char tag[512], out[4096];
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  if (sks_load(path, NULL, &m, &err) != SKS_OK) {
    /* a file the reader refuses is covered by the reader's tests */
    printf("  %s: not readable (%s), skipped\n", base, err.message);
    return;
  }
  const sks_gltf_source *src = m.gltf_source;
  CHECK_MSG(src && src->json, "%s: source document kept", base);
  if (!src) { sks_model_free(&m); return; }
  cJSON *in = cJSON_ParseWithLength(src->json, src->json_len);
  size_t n_img = (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(in, "images"));
  int *ext_img = calloc(n_img + 1, sizeof *ext_img);
  size_t n_ext = 0;
  for (size_t i = 0; i < n_img; ++i)
    if (src->images[i]) { ext_img[i] = 1; ++n_ext; }
  size_t n_views = (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(in, "bufferViews"));

  /* 1. unchanged */
  snprintf(tag, sizeof tag, "%s unchanged", base);
  snprintf(out, sizeof out, "%s/same_%s.glb", sks_test_tmpdir(), base);
  CHECK_OK(sks_write_glb(out, &m, NULL, &err), &err);
  tgw_glb g;
  if (tgw_glb_open(out, &g) && g.json) {
    CHECK_MSG(g.aligned, "%s: aligned", tag);
    cJSON *a = normalised(in, ext_img, n_img, n_views), *b = normalised(g.json, ext_img, n_img, n_views);
    int same = cJSON_Compare(a, b, 1);
    if (!same) {
      char *pa = cJSON_Print(a), *pb = cJSON_Print(b);
      fprintf(stderr, "%s: JSON differs\n--- in (%zu bytes)\n--- out (%zu bytes)\n", tag, strlen(pa), strlen(pb));
      free(pa); free(pb);
    }
    CHECK_MSG(same, "%s: JSON equal but for generator / buffer packing", tag);
    size_t inexact = same ? inexact_numbers(a, b) : 0;
    CHECK_MSG(inexact == 0, "%s: %zu numbers of the JSON are not written as the same double", tag, inexact);
    /* a .glb's one BIN buffer comes out as it was: the bufferViews too,
     * "byteOffset": 0 included where the file wrote it */
    const cJSON *bufs = cJSON_GetObjectItemCaseSensitive(in, "buffers");
    if (cJSON_GetArraySize(bufs) == 1 && !cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(bufs, 0), "uri") && !n_ext)
      CHECK_MSG(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(in, "bufferViews"),
                              cJSON_GetObjectItemCaseSensitive(g.json, "bufferViews"), 1),
                "%s: the .glb's bufferViews changed", tag);
    cJSON_Delete(a); cJSON_Delete(b);
    CHECK_MSG(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(g.json, "asset"), "generator")) &&
              !strncmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(g.json, "asset"), "generator")), "skinsolve", 9),
              "%s: generator", tag);
    CHECK_MSG(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(g.json, "buffers")) <= 1, "%s: one buffer", tag);
    cJSON *vin = cJSON_GetObjectItemCaseSensitive(in, "bufferViews"), *vout = cJSON_GetObjectItemCaseSensitive(g.json, "bufferViews");
    CHECK_MSG((size_t)cJSON_GetArraySize(vout) == n_views + n_ext, "%s: %d views for %zu + %zu images", tag,
              cJSON_GetArraySize(vout), n_views, n_ext);
    size_t bad = 0;
    for (size_t v = 0; v < n_views; ++v) {
      size_t la, lb;
      const unsigned char *pa = source_view(src, cJSON_GetArrayItem(vin, (int)v), &la);
      const unsigned char *pb = out_view(&g, cJSON_GetArrayItem(vout, (int)v), &lb);
      if (!pa || la != lb || memcmp(pa, pb, la)) ++bad;
    }
    CHECK_MSG(bad == 0, "%s: %zu of %zu bufferViews carry other bytes", tag, bad, n_views);
    cJSON *img;
    size_t i = 0;
    cJSON_ArrayForEach(img, cJSON_GetObjectItemCaseSensitive(g.json, "images")) {
      if (ext_img[i]) {
        size_t l;
        const unsigned char *p = out_view(&g, cJSON_GetArrayItem(vout, tgw_int(img, "bufferView", -1)), &l);
        CHECK_MSG(l == src->image_sizes[i] && !memcmp(p, src->images[i], l), "%s: image %zu embedded", tag, i);
      }
      ++i;
    }
  } else {
    CHECK_MSG(0, "%s: output does not parse", tag);
  }
  tgw_glb_close(&g);

  /* 2. repaired */
  sks_model r;
  sks_repair_report rep;
  CHECK_OK(sks_model_clone(&m, &r, &err), &err);
  if (sks_repair(&r, &rep, &err) == SKS_OK) {
    size_t fixes = rep.normalized + rep.negatives_clamped + rep.nans_zeroed + rep.out_of_range_dropped + rep.zero_weight_vertices;
    snprintf(tag, sizeof tag, "%s repaired (%zu fixes)", base, fixes);
    snprintf(out, sizeof out, "%s/rep_%s.glb", sks_test_tmpdir(), base);
    CHECK_OK(sks_write_glb(out, &r, NULL, &err), &err);
    if (tgw_glb_open(out, &g) && g.json) {
      check_same_keys(tag, in, g.json, keys_kept_always, sizeof keys_kept_always / sizeof *keys_kept_always, ext_img, n_img);
      cJSON *ain = cJSON_GetObjectItemCaseSensitive(in, "animations"), *aout = cJSON_GetObjectItemCaseSensitive(g.json, "animations");
      CHECK_MSG(cJSON_GetArraySize(ain) == cJSON_GetArraySize(aout), "%s: animations kept", tag);
      if (fixes == 0) {
        cJSON *a = normalised(in, ext_img, n_img, n_views), *b = normalised(g.json, ext_img, n_img, n_views);
        CHECK_MSG(cJSON_Compare(a, b, 1), "%s: nothing fixed, JSON unchanged", tag);
        cJSON_Delete(a); cJSON_Delete(b);
      }
      sks_model back;
      CHECK_OK(sks_load(out, NULL, &back, &err), &err);
      CHECK(back.part_count == r.part_count && back.skin_count == r.skin_count);
      for (size_t k = 0; k < back.skin_count && k < r.skin_count; ++k)
        CHECK_MSG(sks_hash_skin_ibm(&back.skins[k]) == sks_hash_skin_ibm(&r.skins[k]), "%s: skin %zu inverse binds", tag, k);
      for (size_t p = 0; p < back.part_count && p < r.part_count; ++p) {
        const sks_mesh_part *x = &r.parts[p], *y = &back.parts[p];
        if (x->skin < 0) continue;
        double worst = 0;
        for (size_t v = 0; v < x->vertex_count && y->influence_count; ++v)
          for (uint32_t k = 0; k < x->influence_count; ++k) {
            float w = x->weights[v * x->influence_count + k], wb = 0;
            uint16_t jn = x->joints[v * x->influence_count + k];
            if (w == 0) continue;
            for (uint32_t q = 0; q < y->influence_count; ++q)
              if (y->joints[v * y->influence_count + q] == jn) wb += y->weights[v * y->influence_count + q];
            worst = fmax(worst, fabs((double)wb - w));
          }
        CHECK_MSG(worst <= 2e-6, "%s: part %zu weights read back within %g", tag, p, worst);
      }
      sks_model_free(&back);
    } else {
      CHECK_MSG(0, "%s: output does not parse", tag);
    }
    tgw_glb_close(&g);
  }

  /* 3. clip 0 replaced by a changed copy (what bake -o does) */
  if (r.clip_count && r.clips[0].track_count) {
    snprintf(tag, sizeof tag, "%s clip replaced", base);
    sks_clip *c0 = &r.clips[0];
    free(c0->name);
    c0->name = strdup("baked");
    for (size_t t = 0; t < c0->track_count; ++t)
      if (c0->tracks[t].path == SKS_PATH_TRANSLATION && c0->tracks[t].key_count) c0->tracks[t].values[0] += 0.25f;
    snprintf(out, sizeof out, "%s/clip_%s.glb", sks_test_tmpdir(), base);
    CHECK_OK(sks_write_glb(out, &r, NULL, &err), &err);
    if (tgw_glb_open(out, &g) && g.json) {
      static const char *keys[] = {"materials", "textures", "images", "samplers", "scenes", "scene", "cameras",
                                   "extensions", "extras", "extensionsUsed", "extensionsRequired", "nodes"};
      check_same_keys(tag, in, g.json, keys, sizeof keys / sizeof *keys, ext_img, n_img);
      cJSON *aout = cJSON_GetObjectItemCaseSensitive(g.json, "animations"), *ain = cJSON_GetObjectItemCaseSensitive(in, "animations");
      CHECK_MSG(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(aout, 0), "name")), "baked"),
                "%s: baked clip first", tag);
      for (int i = 1; i < cJSON_GetArraySize(ain); ++i) {
        /* kept animation: same JSON except sampler accessor indices */
        cJSON *x = cJSON_Duplicate(cJSON_GetArrayItem(ain, i), 1), *y = cJSON_Duplicate(cJSON_GetArrayItem(aout, i), 1), *s;
        cJSON_DeleteItemFromObjectCaseSensitive(x, "samplers");
        cJSON_DeleteItemFromObjectCaseSensitive(y, "samplers");
        CHECK_MSG(cJSON_Compare(x, y, 1), "%s: animation %d kept", tag, i);
        int nsx = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ain, i), "samplers"));
        int nsy = 0;
        cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(aout, i), "samplers")) ++nsy;
        CHECK(nsx == nsy);
        cJSON_Delete(x); cJSON_Delete(y);
      }
      sks_model back;
      CHECK_OK(sks_load(out, NULL, &back, &err), &err);
      CHECK(back.clip_count == r.clip_count);
      if (back.clip_count == r.clip_count) {
        int32_t j0 = -1;
        float want = 0, got = NAN;
        for (size_t t = 0; t < c0->track_count && j0 < 0; ++t)
          if (c0->tracks[t].path == SKS_PATH_TRANSLATION && c0->tracks[t].key_count) { j0 = c0->tracks[t].joint; want = c0->tracks[t].values[0]; }
        for (size_t t = 0; t < back.clips[0].track_count; ++t)
          if (back.clips[0].tracks[t].joint == j0 && back.clips[0].tracks[t].path == SKS_PATH_TRANSLATION) got = back.clips[0].tracks[t].values[0];
        CHECK_MSG(j0 < 0 || got == want, "%s: baked key read back (%g, want %g)", tag, (double)got, (double)want);
        for (size_t c = 1; c < r.clip_count; ++c)
          CHECK_MSG(sks_hash_clip(&back.clips[c]) == sks_hash_clip(&r.clips[c]), "%s: clip %zu read back identical", tag, c);
      }
      sks_model_free(&back);
    }
    tgw_glb_close(&g);
  }
  sks_model_free(&r);
  free(ext_img);
  cJSON_Delete(in);
  sks_model_free(&m);
  printf("  %s: checked\n", base);
}

int main(void) {
  const char *root = sks_test_shared_data("");
  if (!root) sks_test_skip("shared data folder not found");
  char **files = NULL;
  size_t n = 0;
  find_files(root, &files, &n);
  if (!n) sks_test_skip("no glTF files in the shared data folder");
  for (size_t i = 0; i < n; ++i) { test_file(files[i]); free(files[i]); }
  free(files);
  return sks_test_finish();
}
