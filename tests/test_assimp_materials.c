/* Materials through the Assimp path keep what Assimp gives (issue 8, item 1):
 * UV transforms (aiUVTransform -> KHR_texture_transform), glTF's alphaMode /
 * alphaCutoff, sampler filters, normal scale / occlusion strength and the
 * KHR_materials_clearcoat / sheen / transmission / volume / ior factors and
 * textures.
 *  - assimp-testmodels' glTF2/textureTransform/TextureTransformTest.gltf and
 *    glTF2/ClearCoat-glTF/ClearCoatTest.gltf are loaded through Assimp
 *    (force_assimp, the isolated child: every field crosses the wire) and
 *    written as GLB; each material of the output must carry the source
 *    JSON's own values (transform offset / rotation / scale, clearcoat
 *    factors, alpha mode, filters, the metallic-roughness texture, normal
 *    scale, occlusion strength), and extensionsUsed must name them;
 *  - every texture slot, the extensions' too (ClearCoatTest's 4 clearcoat
 *    textures; a copy of it with sheen colour on UV set 1, sheen roughness
 *    and volume thickness with transforms, transmission, and a
 *    KHR_materials_specular Assimp 5.2.5 does not read), round-trips: the
 *    output's JSON has each textureInfo with the source's texCoord,
 *    transform and sampler filters, and the output read back natively
 *    samples the source's image bytes with the same texCoord and transform;
 *  - a specular map (3DS) is left out with a warning naming it;
 *  - Collada/kwxport_test_vcolors.dae with a 3ds Max texture placement
 *    (repeatU 2, offsetU 0.25, offsetV 0.1, rotateUV 0.5 on its first
 *    texture) gives the glTF transform Assimp's glTF importer maps back to
 *    that placement, identity placements write no extension;
 *  - the wire format round-trips every new field and refuses out-of-range
 *    ones;
 *  - the Khronos validator reports 0 errors and 0 warnings on each output
 *    beyond the tangent-space messages its source has (ClearCoatTest: 6
 *    generated-tangent-space warnings and 1 no-tangent-space error of its
 *    own; skipped with a message when node or tools/node_modules is absent). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "io/model_wire.h"
#include "sks_test.h"

static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
  if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) { free(buf); buf = NULL; }
  fclose(f);
  if (buf) { buf[len] = 0; *n = (size_t)len; }
  return buf;
}

/* The JSON chunk of a GLB, parsed. */
static cJSON *glb_json(const char *path) {
  size_t n = 0;
  char *d = slurp(path, &n);
  cJSON *doc = NULL;
  if (d && n >= 20 && memcmp(d, "glTF", 4) == 0) {
    uint32_t jl;
    memcpy(&jl, d + 12, 4);
    if (20 + (size_t)jl <= n) doc = cJSON_ParseWithLength(d + 20, jl);
  }
  free(d);
  return doc;
}

static cJSON *gltf_json(const char *path) {
  size_t n = 0;
  char *d = slurp(path, &n);
  cJSON *doc = d ? cJSON_ParseWithLength(d, n) : NULL;
  free(d);
  return doc;
}

static double num(const cJSON *o, const char *k, double def) {
  const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
  return cJSON_IsNumber(v) ? v->valuedouble : def;
}

static void vec(const cJSON *o, const char *k, double *out, int n, double def) {
  const cJSON *a = o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
  for (int i = 0; i < n; ++i) {
    const cJSON *v = cJSON_IsArray(a) ? cJSON_GetArrayItem(a, i) : NULL;
    out[i] = cJSON_IsNumber(v) ? v->valuedouble : def;
  }
}

static const cJSON *ext(const cJSON *o, const char *name) {
  const cJSON *e = o ? cJSON_GetObjectItemCaseSensitive(o, "extensions") : NULL;
  return e ? cJSON_GetObjectItemCaseSensitive(e, name) : NULL;
}

static const cJSON *material_named(const cJSON *doc, const char *name) {
  const cJSON *m;
  cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(doc, "materials")) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(m, "name");
    if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) return m;
  }
  return NULL;
}

static int uses_extension(const cJSON *doc, const char *name) {
  const cJSON *e;
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "extensionsUsed"))
    if (cJSON_IsString(e) && strcmp(e->valuestring, name) == 0) return 1;
  return 0;
}

/* A textureInfo's sampler filter (0 = unset). */
static int filter(const cJSON *doc, const cJSON *info, const char *which) {
  const cJSON *tex = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "textures"), (int)num(info, "index", -1));
  const cJSON *smp = cJSON_GetObjectItemCaseSensitive(tex, "sampler");
  if (!cJSON_IsNumber(smp)) return 0;
  return (int)num(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "samplers"), smp->valueint), which, 0);
}

static const char *str_or(const cJSON *o, const char *k, const char *def) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : def;
}

typedef struct counts { int transforms, clearcoats, masks, blends, filters, textures, ext_textures, uv1; } counts;

/* Every texture slot of the model: where glTF holds its textureInfo (the
 * material, its pbrMetallicRoughness or an extension object of it). */
typedef struct slot_path { sks_texture_slot slot; const char *holder, *key; } slot_path;
static const slot_path k_slots[SKS_TEXTURE_SLOT_COUNT] = {
    {SKS_TEXTURE_BASE_COLOR, "pbrMetallicRoughness", "baseColorTexture"},
    {SKS_TEXTURE_METALLIC_ROUGHNESS, "pbrMetallicRoughness", "metallicRoughnessTexture"},
    {SKS_TEXTURE_NORMAL, NULL, "normalTexture"},
    {SKS_TEXTURE_OCCLUSION, NULL, "occlusionTexture"},
    {SKS_TEXTURE_EMISSIVE, NULL, "emissiveTexture"},
    {SKS_TEXTURE_CLEARCOAT, "KHR_materials_clearcoat", "clearcoatTexture"},
    {SKS_TEXTURE_CLEARCOAT_ROUGHNESS, "KHR_materials_clearcoat", "clearcoatRoughnessTexture"},
    {SKS_TEXTURE_CLEARCOAT_NORMAL, "KHR_materials_clearcoat", "clearcoatNormalTexture"},
    {SKS_TEXTURE_SHEEN_COLOR, "KHR_materials_sheen", "sheenColorTexture"},
    {SKS_TEXTURE_SHEEN_ROUGHNESS, "KHR_materials_sheen", "sheenRoughnessTexture"},
    {SKS_TEXTURE_TRANSMISSION, "KHR_materials_transmission", "transmissionTexture"},
    {SKS_TEXTURE_THICKNESS, "KHR_materials_volume", "thicknessTexture"}};

/* A material's textureInfo of slot k (NULL: none). */
static const cJSON *slot_info(const cJSON *mat, int k) {
  const char *h = k_slots[k].holder;
  const cJSON *holder = !h ? mat : strncmp(h, "KHR_", 4) == 0 ? ext(mat, h) : cJSON_GetObjectItemCaseSensitive(mat, h);
  return holder ? cJSON_GetObjectItemCaseSensitive(holder, k_slots[k].key) : NULL;
}

/* One texture slot of a source material against the output's. */
static void compare_slot(const char *label, const char *mat, const char *slot, const cJSON *src_doc,
                         const cJSON *src_info, const cJSON *out_doc, const cJSON *out_info, counts *c) {
  if (!src_info) {
    CHECK_MSG(!out_info, "%s '%s': %s written but the source has none", label, mat, slot);
    return;
  }
  CHECK_MSG(out_info != NULL, "%s '%s': %s lost", label, mat, slot);
  if (!out_info) return;
  ++c->textures;
  CHECK_MSG(num(src_info, "texCoord", 0) == num(out_info, "texCoord", 0), "%s '%s' %s: texCoord %g, source %g", label,
            mat, slot, num(out_info, "texCoord", 0), num(src_info, "texCoord", 0));
  c->uv1 += num(src_info, "texCoord", 0) == 1;
  const cJSON *st = ext(src_info, "KHR_texture_transform"), *ot = ext(out_info, "KHR_texture_transform");
  double so[2], oo[2], ss[2], os[2];
  vec(st, "offset", so, 2, 0.0);
  vec(ot, "offset", oo, 2, 0.0);
  vec(st, "scale", ss, 2, 1.0);
  vec(ot, "scale", os, 2, 1.0);
  double sr = num(st, "rotation", 0.0), orot = num(ot, "rotation", 0.0);
  int identity = so[0] == 0 && so[1] == 0 && ss[0] == 1 && ss[1] == 1 && sr == 0;
  CHECK_MSG(identity ? ot == NULL : ot != NULL, "%s '%s': %s: KHR_texture_transform %s", label, mat, slot,
            ot ? "written for an identity transform" : "lost");
  if (!identity) ++c->transforms;
  for (int k = 0; k < 2; ++k) {
    CHECK_MSG(fabs(so[k] - oo[k]) < 1e-5, "%s '%s' %s: offset[%d] %.7g, source %.7g", label, mat, slot, k, oo[k], so[k]);
    CHECK_MSG(fabs(ss[k] - os[k]) < 1e-5, "%s '%s' %s: scale[%d] %.7g, source %.7g", label, mat, slot, k, os[k], ss[k]);
  }
  CHECK_MSG(fabs(sr - orot) < 1e-6, "%s '%s' %s: rotation %.7g, source %.7g", label, mat, slot, orot, sr);
  for (int w = 0; w < 2; ++w) {
    const char *which = w ? "minFilter" : "magFilter";
    int sf = filter(src_doc, src_info, which), of = filter(out_doc, out_info, which);
    CHECK_MSG(sf == of, "%s '%s' %s: %s %d, source %d", label, mat, slot, which, of, sf);
    c->filters += sf != 0;
  }
  double sv = num(src_info, "scale", 1.0), ov = num(out_info, "scale", 1.0);
  if (strcmp(slot, "normalTexture") == 0)
    CHECK_MSG(fabs(sv - ov) < 1e-6, "%s '%s': normal scale %g, source %g", label, mat, ov, sv);
  sv = num(src_info, "strength", 1.0), ov = num(out_info, "strength", 1.0);
  if (strcmp(slot, "occlusionTexture") == 0)
    CHECK_MSG(fabs(sv - ov) < 1e-6, "%s '%s': occlusion strength %g, source %g", label, mat, ov, sv);
}


/* Every named material of the source glTF against the output's. */
static counts compare_materials(const char *label, const cJSON *src, const cJSON *out) {
  counts c = {0};
  const cJSON *sm;
  cJSON_ArrayForEach(sm, cJSON_GetObjectItemCaseSensitive(src, "materials")) {
    const char *name = str_or(sm, "name", NULL);
    if (!name) continue;
    const cJSON *om = material_named(out, name);
    CHECK_MSG(om != NULL, "%s: material '%s' missing in the output", label, name);
    if (!om) continue;
    for (int k = 0; k < SKS_TEXTURE_SLOT_COUNT; ++k) {
      int before = c.textures;
      compare_slot(label, name, k_slots[k].key, src, slot_info(sm, k), out, slot_info(om, k), &c);
      if (k >= SKS_TEXTURE_CLEARCOAT) c.ext_textures += c.textures - before;
    }
    const cJSON *scn = slot_info(sm, SKS_TEXTURE_CLEARCOAT_NORMAL), *ocn = slot_info(om, SKS_TEXTURE_CLEARCOAT_NORMAL);
    if (scn && ocn) CHECK_NEAR(num(ocn, "scale", 1.0), num(scn, "scale", 1.0), 1e-6);
    const char *sa = str_or(sm, "alphaMode", "OPAQUE"), *oa = str_or(om, "alphaMode", "OPAQUE");
    CHECK_MSG(strcmp(sa, oa) == 0, "%s '%s': alphaMode %s, source %s", label, name, oa, sa);
    c.masks += strcmp(sa, "MASK") == 0;
    c.blends += strcmp(sa, "BLEND") == 0;
    if (strcmp(sa, "MASK") == 0)
      CHECK_NEAR(num(om, "alphaCutoff", 0.5), num(sm, "alphaCutoff", 0.5), 1e-6);
    const cJSON *sc = ext(sm, "KHR_materials_clearcoat"), *oc = ext(om, "KHR_materials_clearcoat");
    double sf = num(sc, "clearcoatFactor", 0.0);
    /* a clearcoat of factor 0 is no clearcoat (Assimp drops it) */
    CHECK_MSG(sf != 0 ? oc != NULL : oc == NULL, "%s '%s': KHR_materials_clearcoat %s", label, name,
              oc ? "written for factor 0" : "lost");
    if (sf != 0 && oc) {
      ++c.clearcoats;
      CHECK_NEAR(num(oc, "clearcoatFactor", 0.0), sf, 1e-6);
      CHECK_NEAR(num(oc, "clearcoatRoughnessFactor", 0.0), num(sc, "clearcoatRoughnessFactor", 0.0), 1e-6);
    }
    static const char *const absent[] = {"KHR_materials_sheen", "KHR_materials_transmission", "KHR_materials_volume",
                                         "KHR_materials_ior"};
    for (int k = 0; k < 4; ++k)
      if (!ext(sm, absent[k])) CHECK_MSG(!ext(om, absent[k]), "%s '%s': %s invented", label, name, absent[k]);
  }
  return c;
}

static int have_validator = -1;

/* Primitives of a source glTF with a normal map and no TANGENT: the
 * validator warns MESH_PRIMITIVE_GENERATED_TANGENT_SPACE on each (in the
 * source as in any faithful copy). coat_only: those whose only normal map
 * is a clearcoatNormalTexture instead, an error (MESH_PRIMITIVE_NO_TANGENT_SPACE:
 * no normalTexture to generate the tangent space from; Khronos'
 * ClearCoatTest has one, CoatNorm_Coated). */
static int untangented(const cJSON *doc, int coat_only) {
  int n = 0;
  const cJSON *mesh, *prim;
  cJSON_ArrayForEach(mesh, cJSON_GetObjectItemCaseSensitive(doc, "meshes"))
    cJSON_ArrayForEach(prim, cJSON_GetObjectItemCaseSensitive(mesh, "primitives")) {
      const cJSON *mat = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "materials"),
                                            (int)num(prim, "material", -1));
      int normal = cJSON_GetObjectItemCaseSensitive(mat, "normalTexture") != NULL;
      int coat = slot_info(mat, SKS_TEXTURE_CLEARCOAT_NORMAL) != NULL;
      n += mat && (coat_only ? coat && !normal : normal) &&
           !cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(prim, "attributes"), "TANGENT");
    }
  return n;
}

/* 0 errors and 0 warnings from the Khronos validator, except exactly
 * `tangent_warnings` MESH_PRIMITIVE_GENERATED_TANGENT_SPACE and
 * `tangent_errors` MESH_PRIMITIVE_NO_TANGENT_SPACE (the Assimp path
 * generates the tangents a normal map needs: 0 and 0 there). */
static void validate(const char *glb, int tangent_warnings, int tangent_errors) {
  char cmd[4096], out[1024];
  if (have_validator < 0) {
    snprintf(cmd, sizeof cmd, "%s/tools/node_modules/gltf-validator/package.json", SKS_SOURCE_DIR);
    struct stat st;
    have_validator = stat(cmd, &st) == 0 && system("node --version > /dev/null 2>&1") == 0;
    if (!have_validator) printf("validator: node or tools/node_modules/gltf-validator absent — not run\n");
  }
  if (!have_validator) return;
  snprintf(out, sizeof out, "%s/val.json", sks_test_tmpdir());
  snprintf(cmd, sizeof cmd, "node '%s/tools/validate_gltf.mjs' '%s' --json > '%s' 2> /dev/null", SKS_SOURCE_DIR, glb,
           out);
  int rc = system(cmd);
  (void)rc;
  cJSON *rep = gltf_json(out);
  const cJSON *issues = cJSON_GetObjectItemCaseSensitive(rep, "issues");
  double ne = num(issues, "numErrors", -1), nw = num(issues, "numWarnings", -1);
  int tangent = 0, no_tangent = 0;
  const cJSON *msg;
  cJSON_ArrayForEach(msg, cJSON_GetObjectItemCaseSensitive(issues, "messages")) {
    tangent += num(msg, "severity", -1) == 1 && strcmp(str_or(msg, "code", ""), "MESH_PRIMITIVE_GENERATED_TANGENT_SPACE") == 0;
    no_tangent += num(msg, "severity", -1) == 0 && strcmp(str_or(msg, "code", ""), "MESH_PRIMITIVE_NO_TANGENT_SPACE") == 0;
  }
  printf("validator %s: %g errors (%d no-tangent-space), %g warnings (%d generated-tangent-space), as in the source\n",
         strrchr(glb, '/') + 1, ne, no_tangent, nw, tangent);
  CHECK_MSG(ne == no_tangent && no_tangent == tangent_errors && nw == tangent && tangent == tangent_warnings,
            "%s: validator %g errors (%d no tangent space; the source has %d), %g warnings, %d of them generated "
            "tangent space (the source has %d) (%s)", glb, ne, no_tangent, tangent_errors, nw, tangent,
            tangent_warnings, out);
  cJSON_Delete(rep);
}

/* Loads rel through Assimp, writes it, returns the written JSON (or NULL). */
static cJSON *convert(const char *path, const char *out_name, int force_assimp, int tangent_warnings,
                      int tangent_errors) {
  sks_model m;
  sks_error err = {0};
  sks_load_options opt = {.force_assimp = force_assimp};
  CHECK_OK(sks_load(path, &opt, &m, &err), &err);
  if (err.code) return NULL;
  for (size_t i = 0; i < m.warning_count; ++i) printf("  load warning: %s\n", m.warnings[i]);
  char out[1024];
  snprintf(out, sizeof out, "%s/%s", sks_test_tmpdir(), out_name);
  CHECK_OK(sks_write_glb(out, &m, NULL, &err), &err);
  sks_model_free(&m);
  if (err.code) return NULL;
  validate(out, tangent_warnings, tangent_errors);
  return glb_json(out);
}

/* The source glTF's image of a textureInfo, as its file's bytes (NULL: none). */
static char *source_image(const char *dir, const cJSON *doc, const cJSON *info, size_t *n) {
  const cJSON *tex = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "textures"), (int)num(info, "index", -1));
  const cJSON *img = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "images"), (int)num(tex, "source", -1));
  const char *uri = str_or(img, "uri", NULL);
  if (!uri) return NULL;
  char path[2048];
  snprintf(path, sizeof path, "%s/%s", dir, uri);
  return slurp(path, n);
}

/* The written GLB read back natively (sks_load, the glTF reader): every
 * texture slot of each named source material samples the source's image
 * (same bytes), with its texCoord and KHR_texture_transform; a slot the
 * source leaves empty is empty. Returns the slots compared. */
static int compare_native(const char *label, const char *src_dir, const cJSON *src, const char *glb) {
  sks_model m;
  sks_error err = {0};
  CHECK_OK(sks_load(glb, NULL, &m, &err), &err);
  if (err.code) return 0;
  int n = 0;
  const cJSON *sm;
  cJSON_ArrayForEach(sm, cJSON_GetObjectItemCaseSensitive(src, "materials")) {
    const char *name = str_or(sm, "name", NULL);
    const sks_material *mat = NULL;
    for (size_t i = 0; name && i < m.material_count; ++i)
      if (m.materials[i].name && strcmp(m.materials[i].name, name) == 0) mat = &m.materials[i];
    if (!name || !mat) continue;
    for (int k = 0; k < SKS_TEXTURE_SLOT_COUNT; ++k) {
      const cJSON *info = slot_info(sm, k);
      const sks_texture_ref *ref = &mat->textures[k];
      if (!info) {
        CHECK_MSG(ref->image < 0, "%s native '%s': %s samples image %d, the source has none", label, name,
                  k_slots[k].key, ref->image);
        continue;
      }
      size_t sn = 0;
      char *bytes = source_image(src_dir, src, info, &sn);
      CHECK_MSG(bytes != NULL, "%s: source image of '%s' %s unreadable", label, name, k_slots[k].key);
      CHECK_MSG(ref->image >= 0 && (size_t)ref->image < m.image_count, "%s native '%s': %s lost", label, name,
                k_slots[k].key);
      if (bytes && ref->image >= 0 && (size_t)ref->image < m.image_count) {
        const sks_image *im = &m.images[ref->image];
        CHECK_MSG(im->size == sn && memcmp(im->data, bytes, sn) == 0,
                  "%s native '%s': %s samples another image (%zu bytes, source %zu)", label, name, k_slots[k].key,
                  im->size, sn);
        CHECK_MSG(ref->tex_coord == (int)num(info, "texCoord", 0), "%s native '%s': %s texCoord %d, source %g", label,
                  name, k_slots[k].key, ref->tex_coord, num(info, "texCoord", 0));
        const cJSON *st = ext(info, "KHR_texture_transform");
        double o[2], sc[2];
        vec(st, "offset", o, 2, 0.0);
        vec(st, "scale", sc, 2, 1.0);
        double r = num(st, "rotation", 0.0);
        int has = st && (o[0] != 0 || o[1] != 0 || sc[0] != 1 || sc[1] != 1 || r != 0);
        CHECK_MSG(ref->has_transform == has, "%s native '%s': %s has_transform %d, source %d", label, name,
                  k_slots[k].key, ref->has_transform, has);
        if (has && ref->has_transform)
          CHECK_MSG(fabs(ref->offset[0] - o[0]) < 1e-5 && fabs(ref->offset[1] - o[1]) < 1e-5 &&
                        fabs(ref->rotation - r) < 1e-6 && fabs(ref->scale[0] - sc[0]) < 1e-5 &&
                        fabs(ref->scale[1] - sc[1]) < 1e-5,
                    "%s native '%s': %s transform (%g %g, %g, %g %g), source (%g %g, %g, %g %g)", label, name,
                    k_slots[k].key, ref->offset[0], ref->offset[1], ref->rotation, ref->scale[0], ref->scale[1],
                    o[0], o[1], r, sc[0], sc[1]);
        ++n;
      }
      free(bytes);
    }
  }
  sks_model_free(&m);
  return n;
}

/* want_* < 0: any count (a file of the shared data, compared all the same) */
static void test_gltf_through_assimp(const char *rel, int shared, int want_transforms, int want_clearcoats,
                                     int want_ext_textures) {
  const char *path = shared ? sks_test_shared_data(rel) : rel[0] == '/' ? rel : sks_test_assimp_model(rel);
  if (!path) return;
  char src_path[1024];
  snprintf(src_path, sizeof src_path, "%s", path);
  size_t len = strlen(src_path);
  cJSON *src = len > 4 && strcmp(src_path + len - 4, ".glb") == 0 ? glb_json(src_path) : gltf_json(src_path);
  CHECK_MSG(src != NULL, "%s: cannot parse the source JSON", src_path);
  const char *base = strrchr(rel, '/') + 1;
  char out_name[256];
  snprintf(out_name, sizeof out_name, "%.*s.assimp.glb", (int)(strrchr(base, '.') - base), base);
  /* the source's primitives with a normal map and no TANGENT (validator
   * warnings / errors there) get generated tangents: the output is clean */
  const int untan = src ? untangented(src, 0) + untangented(src, 1) : 0;
  if (untan) printf("%s: %d primitives with a normal map and no TANGENT in the source\n", base, untan);
  cJSON *out = convert(src_path, out_name, 1, 0, 0);
  if (out && untan) {
    int with_tangent = 0;
    const cJSON *mesh, *prim;
    cJSON_ArrayForEach(mesh, cJSON_GetObjectItemCaseSensitive(out, "meshes"))
      cJSON_ArrayForEach(prim, cJSON_GetObjectItemCaseSensitive(mesh, "primitives"))
        with_tangent += cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(prim, "attributes"),
                                                         "TANGENT") != NULL;
    CHECK_MSG(with_tangent >= untan, "%s: %d output primitives with TANGENT, the source lacks %d", base,
              with_tangent, untan);
  }
  if (src && out) {
    counts c = compare_materials(base, src, out);
    printf("%s: %d textures compared (%d of extensions, %d on UV set 1), %d transforms, %d clearcoats, %d MASK, "
           "%d BLEND, %d filters\n", base, c.textures, c.ext_textures, c.uv1, c.transforms, c.clearcoats, c.masks,
           c.blends, c.filters);
    CHECK_MSG(want_ext_textures < 0 || c.ext_textures == want_ext_textures,
              "%s: %d extension textures compared, want %d", base, c.ext_textures, want_ext_textures);
    if (!shared) { /* the sources' images are files beside them */
      char dir[1024], glb[1100];
      snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(src_path, '/') - src_path), src_path);
      snprintf(glb, sizeof glb, "%s/%s", sks_test_tmpdir(), out_name);
      int n = compare_native(base, dir, src, glb);
      printf("%s: %d texture slots read back natively with the source's image, texCoord and transform\n", base, n);
      CHECK_MSG(n == c.textures, "%s: %d slots read back natively, %d in the output's JSON", base, n, c.textures);
    }
    CHECK_MSG(want_transforms < 0 || c.transforms == want_transforms, "%s: %d texture transforms compared, want %d",
              base, c.transforms, want_transforms);
    CHECK_MSG(want_clearcoats < 0 || c.clearcoats == want_clearcoats, "%s: %d clearcoats compared, want %d", base,
              c.clearcoats, want_clearcoats);
    CHECK(want_transforms <= 0 || uses_extension(out, "KHR_texture_transform"));
    CHECK(want_clearcoats <= 0 || uses_extension(out, "KHR_materials_clearcoat"));
  }
  cJSON_Delete(src);
  cJSON_Delete(out);
}

static int copy_file(const char *from, const char *to) {
  size_t n = 0;
  char *d = slurp(from, &n);
  FILE *f = d ? fopen(to, "wb") : NULL;
  int ok = f && fwrite(d, 1, n, f) == n;
  if (f) ok &= fclose(f) == 0;
  free(d);
  return ok;
}

static void add_parsed(cJSON *obj, const char *key, const char *json) {
  cJSON *v = cJSON_Parse(json);
  CHECK_MSG(v != NULL, "planted JSON does not parse: %s", json);
  cJSON_AddItemToObject(obj, key, v);
}

/* ClearCoatTest.gltf with the other extensions' textures planted (Assimp's
 * sample models have none): on Simple_Base sheen colour on UV set 1
 * (TEXCOORD_1 added to its primitive, the accessor of TEXCOORD_0) and sheen
 * roughness with a KHR_texture_transform; on Simple_Coating transmission and
 * volume thickness (with a transform and its own sampler: NEAREST /
 * NEAREST_MIPMAP_NEAREST / MIRRORED_REPEAT); on Partial_Base
 * KHR_materials_specular, which Assimp 5.2.5's glTF importer does not read
 * (no AI_MATKEY for it): it must not be invented either. Through Assimp,
 * written and read back natively: 4 clearcoat + 4 planted textures. */
static void test_planted_extensions(void) {
  const char *src = sks_test_assimp_model("glTF2/ClearCoat-glTF/ClearCoatTest.gltf");
  if (!src) return;
  char src_dir[1024], dir[1024], from[1200], to[1200];
  snprintf(src_dir, sizeof src_dir, "%.*s", (int)(strrchr(src, '/') - src), src);
  snprintf(dir, sizeof dir, "%s/planted", sks_test_tmpdir());
  mkdir(dir, 0755);
  static const char *const files[] = {"ClearCoatTest.bin", "PartialCoating.png", "PartialCoating_Alpha.png",
                                      "RoughnessStripes.png", "RibsNormal.png", "PlasticWrap_normals.jpg",
                                      "ClearCoatLabels.png"};
  for (size_t k = 0; k < sizeof files / sizeof files[0]; ++k) {
    snprintf(from, sizeof from, "%s/%s", src_dir, files[k]);
    snprintf(to, sizeof to, "%s/%s", dir, files[k]);
    CHECK_MSG(copy_file(from, to), "cannot copy %s to %s", from, to);
  }
  cJSON *doc = gltf_json(src);
  CHECK(doc != NULL);
  if (!doc) return;
  cJSON *mats = cJSON_GetObjectItemCaseSensitive(doc, "materials");
  cJSON *base = (cJSON *)material_named(doc, "Simple_Base"), *coating = (cJSON *)material_named(doc, "Simple_Coating");
  cJSON *partial = (cJSON *)material_named(doc, "Partial_Base");
  CHECK(base && coating && partial);
  if (!base || !coating || !partial) { cJSON_Delete(doc); return; }
  cJSON *e = cJSON_AddObjectToObject(base, "extensions");
  add_parsed(e, "KHR_materials_sheen",
             "{\"sheenColorFactor\":[0.5,0.25,1],\"sheenRoughnessFactor\":0.5,\"sheenColorTexture\":{\"index\":0,"
             "\"texCoord\":1},\"sheenRoughnessTexture\":{\"index\":2,\"extensions\":{\"KHR_texture_transform\":"
             "{\"offset\":[0.1,0.2],\"scale\":[2,3],\"rotation\":0.4}}}}");
  e = cJSON_AddObjectToObject(coating, "extensions");
  add_parsed(e, "KHR_materials_transmission", "{\"transmissionFactor\":0.75,\"transmissionTexture\":{\"index\":1}}");
  add_parsed(e, "KHR_materials_volume",
             "{\"thicknessFactor\":2,\"thicknessTexture\":{\"index\":10,\"extensions\":{\"KHR_texture_transform\":"
             "{\"offset\":[0.5,0],\"rotation\":-0.25}}},\"attenuationDistance\":0.5,\"attenuationColor\":[1,0.5,0.25]}");
  e = cJSON_AddObjectToObject(partial, "extensions");
  add_parsed(e, "KHR_materials_specular",
             "{\"specularFactor\":0.5,\"specularTexture\":{\"index\":0},\"specularColorFactor\":[1,0.5,0.25],"
             "\"specularColorTexture\":{\"index\":1}}");
  add_parsed(cJSON_GetObjectItemCaseSensitive(doc, "textures"), "", "{\"source\":2,\"sampler\":0}");
  add_parsed(doc, "samplers", "[{\"magFilter\":9728,\"minFilter\":9984,\"wrapS\":33648}]");
  cJSON *used = cJSON_GetObjectItemCaseSensitive(doc, "extensionsUsed");
  static const char *const names[] = {"KHR_materials_sheen", "KHR_materials_transmission", "KHR_materials_volume",
                                      "KHR_materials_specular", "KHR_texture_transform"};
  for (int k = 0; k < 5; ++k) cJSON_AddItemToArray(used, cJSON_CreateString(names[k]));
  /* TEXCOORD_1 on Simple_Base's primitives */
  int base_index = 0, uv1 = 0;
  for (const cJSON *m = mats->child; m && m != base; m = m->next) ++base_index;
  cJSON *mesh, *prim;
  cJSON_ArrayForEach(mesh, cJSON_GetObjectItemCaseSensitive(doc, "meshes"))
    cJSON_ArrayForEach(prim, cJSON_GetObjectItemCaseSensitive(mesh, "primitives")) {
      cJSON *attr = cJSON_GetObjectItemCaseSensitive(prim, "attributes");
      if ((int)num(prim, "material", -1) != base_index || !cJSON_GetObjectItemCaseSensitive(attr, "TEXCOORD_0")) continue;
      cJSON_AddNumberToObject(attr, "TEXCOORD_1", num(attr, "TEXCOORD_0", -1));
      ++uv1;
    }
  CHECK_MSG(uv1 > 0, "ClearCoatTest: no primitive of Simple_Base has TEXCOORD_0");
  char *text = cJSON_Print(doc);
  cJSON_Delete(doc);
  snprintf(to, sizeof to, "%s/planted.gltf", dir);
  FILE *f = fopen(to, "wb");
  CHECK(f && text && fwrite(text, 1, strlen(text), f) == strlen(text));
  if (f) fclose(f);
  free(text);
  test_gltf_through_assimp(to, 0, 2, 6, 8);
  cJSON *out = NULL;
  char glb[1100];
  snprintf(glb, sizeof glb, "%s/planted.assimp.glb", sks_test_tmpdir());
  out = glb_json(glb);
  const cJSON *om = material_named(out, "Partial_Base");
  CHECK_MSG(om && !ext(om, "KHR_materials_specular") && !uses_extension(out, "KHR_materials_specular"),
            "planted.gltf: KHR_materials_specular written (Assimp 5.2.5 gives none of it)");
  cJSON_Delete(out);
}

/* A specular map (3DS/cube_with_specular_texture.3DS: 'TEST.PNG' in
 * aiTextureType_SPECULAR) has no glTF slot: the load says so. */
static void test_specular_warning(void) {
  const char *path = sks_test_assimp_model("3DS/cube_with_specular_texture.3DS");
  if (!path) return;
  sks_model m;
  sks_error err = {0};
  CHECK_OK(sks_load(path, NULL, &m, &err), &err);
  if (err.code) return;
  int said = 0;
  for (size_t i = 0; i < m.warning_count; ++i)
    said += strstr(m.warnings[i], "specular texture 'TEST.PNG' left out") != NULL;
  CHECK_MSG(said == 1, "cube_with_specular_texture.3DS: %d warnings name its specular texture, want 1", said);
  sks_model_free(&m);
}

/* kwxport_test_vcolors.dae's first texture placement edited to a real one. */
static void test_collada_placement(void) {
  const char *dae = sks_test_assimp_model("Collada/kwxport_test_vcolors.dae");
  if (!dae) return;
  char path[1024];
  snprintf(path, sizeof path, "%s", dae);
  size_t n = 0;
  char *text = slurp(path, &n);
  CHECK(text != NULL);
  if (!text) return;
  const char *edits[][2] = {{"<repeatU>1<", "<repeatU>2<"}, {"<offsetU>0<", "<offsetU>0.25<"},
                            {"<offsetV>0<", "<offsetV>0.1<"}, {"<rotateUV>0<", "<rotateUV>0.5<"},
                            {"./../X/", "./"}, {"./../X/", "./"}, {"./../X/", "./"}};
  char *cur = text;
  for (size_t e = 0; e < sizeof edits / sizeof edits[0]; ++e) {
    char *at = strstr(cur, edits[e][0]);
    CHECK_MSG(at != NULL, "kwxport_test_vcolors.dae: '%s' not found", edits[e][0]);
    if (!at) { free(text); return; }
    size_t lo = strlen(edits[e][0]), ln = strlen(edits[e][1]), pre = (size_t)(at - cur);
    char *next = malloc(strlen(cur) + ln + 1);
    memcpy(next, cur, pre);
    memcpy(next + pre, edits[e][1], ln);
    strcpy(next + pre + ln, at + lo);
    if (cur != text) free(cur);
    cur = next;
  }
  char dir[1024], out_dae[1100];
  snprintf(dir, sizeof dir, "%s/dae", sks_test_tmpdir());
  mkdir(dir, 0755);
  snprintf(out_dae, sizeof out_dae, "%s/placed.dae", dir);
  FILE *f = fopen(out_dae, "wb");
  CHECK(f && fwrite(cur, 1, strlen(cur), f) == strlen(cur));
  if (f) fclose(f);
  if (cur != text) free(cur);
  free(text);
  static const char *const tgas[] = {"top.tga", "bottom.tga", "updown.tga"};
  for (int k = 0; k < 3; ++k) {
    char from[64], to[1200];
    snprintf(from, sizeof from, "X/%s", tgas[k]);
    const char *src = sks_test_assimp_model(from);
    if (!src) return;
    snprintf(to, sizeof to, "%s/%s", dir, tgas[k]);
    CHECK_MSG(copy_file(src, to), "cannot copy %s to %s", src, to);
  }
  cJSON *out = convert(out_dae, "placed.glb", 0, 0, 0);
  if (!out) return;
  /* The placement in Assimp's UV space: translation (0.25, 0.1), scaling
   * (2, 1), rotation 0.5 (Assimp takes rotateUV as radians). Assimp's glTF
   * importer maps glTF (o, r, s) to translation (o.x + s.x/2 (1 - cos r +
   * sin r), 1 - s.y - o.y + s.y/2 (sin r + cos r - 1)), rotation -r: here
   * r = -0.5 and o solved from it. */
  double r = -0.5, sx = 2, sy = 1, tx = 0.25, ty = 0.1;
  double want_o[2] = {tx - 0.5 * sx * (1 - cos(r) + sin(r)), 0.5 * sy * (sin(r) + cos(r) - 1) + 1 - sy - ty};
  int placed = 0, identity = 0;
  const cJSON *m;
  cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(out, "materials")) {
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "pbrMetallicRoughness"),
                                                         "baseColorTexture");
    CHECK_MSG(info != NULL, "placed.dae: material '%s' lost its texture", str_or(m, "name", ""));
    const cJSON *t = ext(info, "KHR_texture_transform");
    if (!t) { ++identity; continue; }
    ++placed;
    double o[2], s[2];
    vec(t, "offset", o, 2, 0.0);
    vec(t, "scale", s, 2, 1.0);
    printf("placed.dae '%s': offset %.6f %.6f rotation %.6f scale %g %g (want %.6f %.6f, %g, %g %g)\n",
           str_or(m, "name", ""), o[0], o[1], num(t, "rotation", 0), s[0], s[1], want_o[0], want_o[1], r, sx, sy);
    CHECK_NEAR(o[0], want_o[0], 1e-5);
    CHECK_NEAR(o[1], want_o[1], 1e-5);
    CHECK_NEAR(num(t, "rotation", 0), r, 1e-6);
    CHECK_NEAR(s[0], sx, 1e-6);
    CHECK_NEAR(s[1], sy, 1e-6);
  }
  CHECK_MSG(placed == 1 && identity == 2, "placed.dae: %d transforms, %d identity (want 1 and 2)", placed, identity);
  CHECK(uses_extension(out, "KHR_texture_transform"));
  cJSON_Delete(out);
}

/* Every new field crosses the wire; out-of-range ones are refused. */
static void test_wire(void) {
  sks_model m;
  memset(&m, 0, sizeof m);
  sks_material mat;
  sks_material_init(&mat);
  mat.textures[SKS_TEXTURE_BASE_COLOR] = (sks_texture_ref){.image = -1, .has_transform = 1, .offset = {0.25f, -0.5f},
                                                           .rotation = 0.3f, .scale = {1.5f, 2.0f}};
  mat.alpha_mode = SKS_ALPHA_MASK;
  mat.alpha_cutoff = 0.25f;
  mat.extensions = SKS_MATERIAL_EXTENSION_MASK;
  mat.clearcoat = 1.0f;
  mat.clearcoat_roughness = 0.03f;
  mat.sheen_color[0] = 0.5f;
  mat.sheen_roughness = 0.25f;
  mat.transmission = 0.75f;
  mat.thickness = 2.0f;
  mat.attenuation_distance = 0.5f;
  mat.attenuation_color[2] = 0.5f;
  mat.ior = 1.4f;
  mat.clearcoat_normal_scale = 0.5f;
  mat.textures[SKS_TEXTURE_THICKNESS] = (sks_texture_ref){.image = -1, .tex_coord = 1, .mag_filter = 9728,
                                                          .has_transform = 1, .rotation = -0.25f, .scale = {1, 1}};
  m.materials = &mat;
  m.material_count = 1;
  uint8_t *bytes = NULL;
  size_t size = 0;
  sks_error err = {0};
  CHECK_OK(sks_model_wire_encode(&m, &bytes, &size, &err), &err);
  sks_model back;
  CHECK_OK(sks_model_wire_decode(bytes, size, "wire", &back, &err), &err);
  if (err.code == SKS_OK) {
    CHECK(back.material_count == 1 && memcmp(back.materials[0].textures, mat.textures, sizeof mat.textures) == 0);
    const sks_material *b = &back.materials[0];
    CHECK(b->alpha_mode == mat.alpha_mode && b->alpha_cutoff == mat.alpha_cutoff && b->extensions == mat.extensions &&
          b->clearcoat == mat.clearcoat && b->clearcoat_roughness == mat.clearcoat_roughness &&
          memcmp(b->sheen_color, mat.sheen_color, sizeof mat.sheen_color) == 0 &&
          b->sheen_roughness == mat.sheen_roughness && b->transmission == mat.transmission &&
          b->thickness == mat.thickness && b->attenuation_distance == mat.attenuation_distance &&
          memcmp(b->attenuation_color, mat.attenuation_color, sizeof mat.attenuation_color) == 0 && b->ior == mat.ior &&
          b->clearcoat_normal_scale == mat.clearcoat_normal_scale);
    sks_model_free(&back);
  }
  free(bytes);
  /* each out-of-range value alone makes the stream bad */
  for (int k = 0; k < 9; ++k) {
    sks_material bad = mat;
    switch (k) {
      case 0: bad.textures[0].has_transform = 2; break;
      case 1: bad.textures[0].offset[1] = NAN; break;
      case 2: bad.alpha_mode = 7; break;
      case 3: bad.extensions |= 1u << 9; break;
      case 4: bad.clearcoat = 1.5f; break;
      case 5: bad.ior = 0.5f; break;
      case 7: bad.clearcoat_normal_scale = INFINITY; break;
      case 8: bad.textures[SKS_TEXTURE_SHEEN_ROUGHNESS].tex_coord = 2; break;
      default: bad.attenuation_color[0] = -1.0f; break;
    }
    m.materials = &bad;
    bytes = NULL;
    CHECK_OK(sks_model_wire_encode(&m, &bytes, &size, &err), &err);
    sks_error e2 = {0};
    sks_result r = sks_model_wire_decode(bytes, size, "wire", &back, &e2);
    CHECK_MSG(r == SKS_ERR_PARSE, "wire case %d: decode gave %d, want a parse error", k, (int)r);
    if (r == SKS_OK) sks_model_free(&back);
    free(bytes);
  }
}

/* The native reader and the Assimp path give the same KHR_materials_*
 * bits and factors for each material of a glTF (Assimp drops a clearcoat
 * whose factor is 0: there the native side must say factor 0). Returns the
 * materials with an extension compared. */
static int native_factors_match_assimp(const char *rel) {
  const char *path = sks_test_assimp_model(rel);
  if (!path) return 0;
  sks_model n, a;
  sks_error err = {0};
  sks_load_options opt = {.force_assimp = 1};
  CHECK_OK(sks_load(path, NULL, &n, &err), &err);
  if (err.code) return 0;
  CHECK_OK(sks_load(path, &opt, &a, &err), &err);
  if (err.code) { sks_model_free(&n); return 0; }
  int compared = 0;
  for (size_t i = 0; i < n.material_count; ++i) {
    const sks_material *x = &n.materials[i], *y = NULL;
    for (size_t k = 0; k < a.material_count && !y; ++k)
      if (x->name && a.materials[k].name && strcmp(x->name, a.materials[k].name) == 0) y = &a.materials[k];
    if (!y) continue;
    uint32_t want = y->extensions;
    if ((x->extensions & SKS_MATERIAL_CLEARCOAT) && !(want & SKS_MATERIAL_CLEARCOAT) && x->clearcoat == 0.0f)
      want |= SKS_MATERIAL_CLEARCOAT;
    CHECK_MSG(x->extensions == want, "%s '%s': native extensions 0x%x, Assimp 0x%x", rel, x->name, x->extensions,
              y->extensions);
    if (!x->extensions) continue;
    ++compared;
    if (y->extensions & SKS_MATERIAL_CLEARCOAT)
      CHECK_MSG(x->clearcoat == y->clearcoat && x->clearcoat_roughness == y->clearcoat_roughness,
                "%s '%s': clearcoat %g / %g native, %g / %g Assimp", rel, x->name, x->clearcoat,
                x->clearcoat_roughness, y->clearcoat, y->clearcoat_roughness);
    if (y->extensions & SKS_MATERIAL_SHEEN)
      CHECK_MSG(memcmp(x->sheen_color, y->sheen_color, sizeof x->sheen_color) == 0 &&
                    x->sheen_roughness == y->sheen_roughness, "%s '%s': sheen differs", rel, x->name);
    if (y->extensions & SKS_MATERIAL_TRANSMISSION)
      CHECK_MSG(x->transmission == y->transmission, "%s '%s': transmission differs", rel, x->name);
    if (y->extensions & SKS_MATERIAL_VOLUME)
      CHECK_MSG(x->thickness == y->thickness && x->attenuation_distance == y->attenuation_distance &&
                    memcmp(x->attenuation_color, y->attenuation_color, sizeof x->attenuation_color) == 0,
                "%s '%s': volume differs", rel, x->name);
    if (y->extensions & SKS_MATERIAL_IOR) CHECK_MSG(x->ior == y->ior, "%s '%s': ior differs", rel, x->name);
  }
  sks_model_free(&n);
  sks_model_free(&a);
  return compared;
}

int main(void) {
  test_wire();
  if (!sks_test_assimp_model("glTF2/textureTransform/TextureTransformTest.gltf"))
    sks_test_skip("assimp-testmodels not installed (apt-get install assimp-testmodels)");
  /* TextureTransformTest: 6 materials with a transform (offset U / V / UV,
   * rotation, scale, all); ClearCoatTest: 6 coated materials */
  test_gltf_through_assimp("glTF2/textureTransform/TextureTransformTest.gltf", 0, 6, 0, 0);
  /* ClearCoatTest's 4 clearcoat textures: clearcoatTexture (Partial_Coated),
   * clearcoatRoughnessTexture (RoughVariations_Coated),
   * clearcoatNormalTexture (CoatNorm_Coated, SharedNorm_Coated) */
  test_gltf_through_assimp("glTF2/ClearCoat-glTF/ClearCoatTest.gltf", 0, 0, 6, 4);
  {
    int n = native_factors_match_assimp("glTF2/ClearCoat-glTF/ClearCoatTest.gltf");
    printf("ClearCoatTest.gltf: %d materials' KHR_materials_* factors read natively as Assimp reads them\n", n);
    CHECK_MSG(n >= 6, "%d materials with extensions compared (ClearCoatTest has 6 coated)", n);
  }
  test_planted_extensions();
  /* real rigs of the shared data: their materials survive the Assimp path */
  test_gltf_through_assimp("Fox/Fox.glb", 1, -1, -1, -1);
  test_gltf_through_assimp("RobotExpressive/RobotExpressive.glb", 1, -1, -1, -1);
  test_collada_placement();
  test_specular_warning();
  return sks_test_finish();
}
