/* Materials through the Assimp path keep what Assimp gives (issue 8, item 1):
 * UV transforms (aiUVTransform -> KHR_texture_transform), glTF's alphaMode /
 * alphaCutoff, sampler filters, normal scale / occlusion strength and the
 * KHR_materials_clearcoat / sheen / transmission / volume / ior factors.
 *  - assimp-testmodels' glTF2/textureTransform/TextureTransformTest.gltf and
 *    glTF2/ClearCoat-glTF/ClearCoatTest.gltf are loaded through Assimp
 *    (force_assimp, the isolated child: every field crosses the wire) and
 *    written as GLB; each material of the output must carry the source
 *    JSON's own values (transform offset / rotation / scale, clearcoat
 *    factors, alpha mode, filters, the metallic-roughness texture, normal
 *    scale, occlusion strength), and extensionsUsed must name them;
 *  - Collada/kwxport_test_vcolors.dae with a 3ds Max texture placement
 *    (repeatU 2, offsetU 0.25, offsetV 0.1, rotateUV 0.5 on its first
 *    texture) gives the glTF transform Assimp's glTF importer maps back to
 *    that placement, identity placements write no extension;
 *  - the wire format round-trips every new field and refuses out-of-range
 *    ones;
 *  - the Khronos validator reports 0 errors and 0 warnings on each output
 *    (skipped with a message when node or tools/node_modules is absent). */
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

typedef struct counts { int transforms, clearcoats, masks, blends, filters, textures; } counts;

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
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(sm, "pbrMetallicRoughness");
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(om, "pbrMetallicRoughness");
    compare_slot(label, name, "baseColorTexture", src, cJSON_GetObjectItemCaseSensitive(sp, "baseColorTexture"), out,
                 cJSON_GetObjectItemCaseSensitive(op, "baseColorTexture"), &c);
    compare_slot(label, name, "metallicRoughnessTexture", src,
                 cJSON_GetObjectItemCaseSensitive(sp, "metallicRoughnessTexture"), out,
                 cJSON_GetObjectItemCaseSensitive(op, "metallicRoughnessTexture"), &c);
    static const char *const slots[] = {"normalTexture", "occlusionTexture", "emissiveTexture"};
    for (int k = 0; k < 3; ++k)
      compare_slot(label, name, slots[k], src, cJSON_GetObjectItemCaseSensitive(sm, slots[k]), out,
                   cJSON_GetObjectItemCaseSensitive(om, slots[k]), &c);
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
 * source as in any faithful copy). */
static int untangented_normal_maps(const cJSON *doc) {
  int n = 0;
  const cJSON *mesh, *prim;
  cJSON_ArrayForEach(mesh, cJSON_GetObjectItemCaseSensitive(doc, "meshes"))
    cJSON_ArrayForEach(prim, cJSON_GetObjectItemCaseSensitive(mesh, "primitives")) {
      const cJSON *mat = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "materials"),
                                            (int)num(prim, "material", -1));
      n += mat && cJSON_GetObjectItemCaseSensitive(mat, "normalTexture") &&
           !cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(prim, "attributes"), "TANGENT");
    }
  return n;
}

/* 0 errors and 0 warnings from the Khronos validator, except exactly
 * `tangent_warnings` MESH_PRIMITIVE_GENERATED_TANGENT_SPACE the source has. */
static void validate(const char *glb, int tangent_warnings) {
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
  int tangent = 0;
  const cJSON *msg;
  cJSON_ArrayForEach(msg, cJSON_GetObjectItemCaseSensitive(issues, "messages"))
    tangent += num(msg, "severity", -1) == 1 && strcmp(str_or(msg, "code", ""), "MESH_PRIMITIVE_GENERATED_TANGENT_SPACE") == 0;
  printf("validator %s: %g errors, %g warnings (%d generated-tangent-space, as in the source)\n", strrchr(glb, '/') + 1,
         ne, nw, tangent);
  CHECK_MSG(ne == 0 && nw == tangent && tangent == tangent_warnings,
            "%s: validator %g errors, %g warnings, %d of them generated tangent space (the source has %d) (%s)", glb,
            ne, nw, tangent, tangent_warnings, out);
  cJSON_Delete(rep);
}

/* Loads rel through Assimp, writes it, returns the written JSON (or NULL). */
static cJSON *convert(const char *path, const char *out_name, int force_assimp, int tangent_warnings) {
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
  validate(out, tangent_warnings);
  return glb_json(out);
}

/* want_* < 0: any count (a file of the shared data, compared all the same) */
static void test_gltf_through_assimp(const char *rel, int shared, int want_transforms, int want_clearcoats) {
  const char *path = shared ? sks_test_shared_data(rel) : sks_test_assimp_model(rel);
  if (!path) return;
  char src_path[1024];
  snprintf(src_path, sizeof src_path, "%s", path);
  size_t len = strlen(src_path);
  cJSON *src = len > 4 && strcmp(src_path + len - 4, ".glb") == 0 ? glb_json(src_path) : gltf_json(src_path);
  CHECK_MSG(src != NULL, "%s: cannot parse the source JSON", src_path);
  const char *base = strrchr(rel, '/') + 1;
  char out_name[256];
  snprintf(out_name, sizeof out_name, "%.*s.assimp.glb", (int)(strrchr(base, '.') - base), base);
  cJSON *out = convert(src_path, out_name, 1, src ? untangented_normal_maps(src) : 0);
  if (src && out) {
    counts c = compare_materials(base, src, out);
    printf("%s: %d textures compared, %d transforms, %d clearcoats, %d MASK, %d BLEND, %d filters\n", base,
           c.textures, c.transforms, c.clearcoats, c.masks, c.blends, c.filters);
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
    size_t tn = 0;
    char *bytes = slurp(src, &tn);
    snprintf(to, sizeof to, "%s/%s", dir, tgas[k]);
    FILE *g = fopen(to, "wb");
    CHECK(bytes && g && fwrite(bytes, 1, tn, g) == tn);
    if (g) fclose(g);
    free(bytes);
  }
  cJSON *out = convert(out_dae, "placed.glb", 0, 0);
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
          memcmp(b->attenuation_color, mat.attenuation_color, sizeof mat.attenuation_color) == 0 && b->ior == mat.ior);
    sks_model_free(&back);
  }
  free(bytes);
  /* each out-of-range value alone makes the stream bad */
  for (int k = 0; k < 7; ++k) {
    sks_material bad = mat;
    switch (k) {
      case 0: bad.textures[0].has_transform = 2; break;
      case 1: bad.textures[0].offset[1] = NAN; break;
      case 2: bad.alpha_mode = 7; break;
      case 3: bad.extensions |= 1u << 9; break;
      case 4: bad.clearcoat = 1.5f; break;
      case 5: bad.ior = 0.5f; break;
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

int main(void) {
  test_wire();
  if (!sks_test_assimp_model("glTF2/textureTransform/TextureTransformTest.gltf"))
    sks_test_skip("assimp-testmodels not installed (apt-get install assimp-testmodels)");
  /* TextureTransformTest: 6 materials with a transform (offset U / V / UV,
   * rotation, scale, all); ClearCoatTest: 6 coated materials */
  test_gltf_through_assimp("glTF2/textureTransform/TextureTransformTest.gltf", 0, 6, 0);
  test_gltf_through_assimp("glTF2/ClearCoat-glTF/ClearCoatTest.gltf", 0, 0, 6);
  /* real rigs of the shared data: their materials survive the Assimp path */
  test_gltf_through_assimp("Fox/Fox.glb", 1, -1, -1);
  test_gltf_through_assimp("RobotExpressive/RobotExpressive.glb", 1, -1, -1);
  test_collada_placement();
  return sks_test_finish();
}
