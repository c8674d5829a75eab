/* Texture images Assimp gives in formats glTF cannot carry (TGA, BMP, ...)
 * are converted to PNG in the import (in the isolated child under sks_load),
 * bounded by the header's dimensions before anything is decoded (issue 8):
 *  - Collada/duck.dae's duckCM.tga: the model's image is a PNG whose pixels
 *    are the TGA's pixels (both decoded by stb), and they survive a GLB
 *    write + read byte for byte;
 *  - a generated OBJ whose material samples a 2x2 BMP (base colour) and a
 *    3x2 TGA (normal map): the PNGs decode to exactly the texels written;
 *  - a TGA whose header claims 60000 x 60000 pixels (emissive slot) is left
 *    out with a warning naming the file and the size, never decoded;
 *  - the converter itself refuses bytes that are no image, and a header over
 *    the limit, with a reason.
 * Also: the glTF reader's total cap on external files (max_resource_bytes). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <assimp/cimport.h>
#include <assimp/scene.h>
#include <stb/stb_image.h>
#include "sks_test.h"
#include "io/byte_buf.h"
#include "io/image_convert.h"

static int write_bytes(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  int ok = fwrite(data, 1, n, f) == n;
  return fclose(f) == 0 && ok;
}

static int is_png(const sks_image *im) {
  return im->data && im->size > 8 && !memcmp(im->data, "\x89PNG\r\n\x1a\n", 8) && im->mime_type &&
         !strcmp(im->mime_type, "image/png");
}

/* 1 when the PNG decodes (RGBA) to exactly want (w x h RGBA texels). */
static int png_is(const sks_image *im, int w, int h, const uint8_t *want) {
  int pw, ph, pc;
  uint8_t *px = stbi_load_from_memory(im->data, (int)im->size, &pw, &ph, &pc, 4);
  int same = px && pw == w && ph == h && !memcmp(px, want, (size_t)w * h * 4);
  stbi_image_free(px);
  return same;
}

static void test_duck(int in_process) {
  const char *dae = sks_test_assimp_model("Collada/duck.dae");
  char tga[4200];
  if (!dae) return;
  snprintf(tga, sizeof tga, "%s", dae);
  strcpy(strrchr(tga, '/') + 1, "duckCM.tga");
  sks_load_options opt = {.assimp_in_process = in_process};
  sks_model m;
  sks_error err = {0};
  CHECK_OK(sks_load(dae, &opt, &m, &err), &err);
  CHECK_MSG(m.image_count == 1 && m.material_count == 1, "%zu images, %zu materials", m.image_count,
            m.material_count);
  for (size_t i = 0; i < m.warning_count; ++i) CHECK_MSG(0, "unexpected warning: %s", m.warnings[i]);
  if (m.image_count == 1 && m.material_count == 1) {
    const sks_image *im = &m.images[0];
    CHECK(is_png(im));
    CHECK_MSG(!strcmp(im->name, "duckCM.png"), "name %s", im->name);
    CHECK(m.materials[0].textures[SKS_TEXTURE_BASE_COLOR].image == 0);
    int tw, th, tc;
    uint8_t *want = stbi_load(tga, &tw, &th, &tc, 4);
    CHECK_MSG(want != NULL, "stb cannot read %s", tga);
    if (want) {
      CHECK_MSG(png_is(im, tw, th, want), "the PNG's pixels are not %s's (%dx%d)", tga, tw, th);
      /* ... and the GLB carries those PNG bytes unchanged */
      char out[4200];
      snprintf(out, sizeof out, "%s/duck_%d.glb", sks_test_tmpdir(), in_process);
      CHECK_OK(sks_write_glb(out, &m, NULL, &err), &err);
      sks_model g;
      CHECK_OK(sks_load_gltf(out, &g, &err), &err);
      CHECK(g.image_count == 1 && g.images[0].size == im->size && !memcmp(g.images[0].data, im->data, im->size));
      CHECK(g.material_count == 1 && g.materials[0].textures[SKS_TEXTURE_BASE_COLOR].image == 0);
      sks_model_free(&g);
    }
    stbi_image_free(want);
  }
  sks_model_free(&m);
}

/* A 2x2 24-bit BMP (rows bottom first, padded to 4 bytes). */
static size_t make_bmp(uint8_t *b, const uint8_t rgba[16]) {
  memset(b, 0, 70);
  b[0] = 'B'; b[1] = 'M';
  b[2] = 70;           /* file size */
  b[10] = 54;          /* pixel data offset */
  b[14] = 40;          /* BITMAPINFOHEADER */
  b[18] = 2; b[22] = 2; /* width, height (positive: bottom-up) */
  b[26] = 1; b[28] = 24;
  b[34] = 16;          /* image size */
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 2; ++x) {
      const uint8_t *p = &rgba[((1 - y) * 2 + x) * 4]; /* file row y is image row 1 - y */
      uint8_t *q = &b[54 + y * 8 + x * 3];
      q[0] = p[2]; q[1] = p[1]; q[2] = p[0];
    }
  return 70;
}

/* An uncompressed 32-bit TGA, w x h, top-left origin; or only a header. */
static size_t make_tga(uint8_t *b, int w, int h, const uint8_t *rgba) {
  memset(b, 0, 18);
  b[2] = 2; /* uncompressed true colour */
  b[12] = (uint8_t)(w & 255); b[13] = (uint8_t)(w >> 8);
  b[14] = (uint8_t)(h & 255); b[15] = (uint8_t)(h >> 8);
  b[16] = 32;
  b[17] = 0x20 | 8; /* top-left origin, 8 alpha bits */
  if (!rgba) {
    memset(b + 18, 0x7f, 64); /* a few bytes of "pixels" */
    return 18 + 64;
  }
  for (int i = 0; i < w * h; ++i) {
    b[18 + 4 * i] = rgba[4 * i + 2];
    b[18 + 4 * i + 1] = rgba[4 * i + 1];
    b[18 + 4 * i + 2] = rgba[4 * i];
    b[18 + 4 * i + 3] = rgba[4 * i + 3];
  }
  return 18 + (size_t)w * h * 4;
}

static void test_generated(int in_process) {
  static const uint8_t bmp_px[16] = {255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 10, 20, 30, 255};
  static const uint8_t tga_px[24] = {128, 128, 255, 255, 1, 2, 3, 4, 200, 100, 50, 25,
                                     0, 0, 0, 0, 255, 255, 255, 255, 9, 8, 7, 6};
  uint8_t buf[256];
  char dir[4200], path[4400];
  snprintf(dir, sizeof dir, "%s", sks_test_tmpdir());
  snprintf(path, sizeof path, "%s/tiny.bmp", dir);
  CHECK(write_bytes(path, buf, make_bmp(buf, bmp_px)));
  snprintf(path, sizeof path, "%s/tiny.tga", dir);
  CHECK(write_bytes(path, buf, make_tga(buf, 3, 2, tga_px)));
  snprintf(path, sizeof path, "%s/huge.tga", dir);
  CHECK(write_bytes(path, buf, make_tga(buf, 60000, 60000, NULL)));
  static const char mtl[] = "newmtl m\nKd 1 1 1\nmap_Kd tiny.bmp\nnorm tiny.tga\nmap_Ke huge.tga\n";
  static const char obj[] = "mtllib tiny.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\n"
                            "usemtl m\nf 1/1 2/2 3/3\n";
  snprintf(path, sizeof path, "%s/tiny.mtl", dir);
  CHECK(write_bytes(path, mtl, sizeof mtl - 1));
  snprintf(path, sizeof path, "%s/tiny.obj", dir);
  CHECK(write_bytes(path, obj, sizeof obj - 1));
  sks_load_options opt = {.assimp_in_process = in_process};
  sks_model m;
  sks_error err = {0};
  CHECK_OK(sks_load(path, &opt, &m, &err), &err);
  const sks_material *mat = NULL;
  for (size_t i = 0; i < m.material_count; ++i)
    if (m.materials[i].name && !strcmp(m.materials[i].name, "m")) mat = &m.materials[i];
  CHECK_MSG(mat != NULL, "no material 'm' (%zu materials)", m.material_count);
  CHECK_MSG(m.image_count == 2, "%zu images", m.image_count);
  if (mat && m.image_count == 2) {
    int32_t bc = mat->textures[SKS_TEXTURE_BASE_COLOR].image, nm = mat->textures[SKS_TEXTURE_NORMAL].image;
    CHECK(bc >= 0 && nm >= 0 && bc != nm);
    CHECK(mat->textures[SKS_TEXTURE_EMISSIVE].image == -1);
    if (bc >= 0 && nm >= 0) {
      CHECK(is_png(&m.images[bc]) && is_png(&m.images[nm]));
      CHECK_MSG(png_is(&m.images[bc], 2, 2, bmp_px), "BMP texels");
      CHECK_MSG(png_is(&m.images[nm], 3, 2, tga_px), "TGA texels");
      CHECK(!strcmp(m.images[bc].name, "tiny.png") && !strcmp(m.images[nm].name, "tiny.png"));
    }
  }
  int warned = 0;
  for (size_t i = 0; i < m.warning_count; ++i)
    warned |= strstr(m.warnings[i], "tiny.obj") && strstr(m.warnings[i], "huge.tga") &&
              strstr(m.warnings[i], "60000 x 60000") && strstr(m.warnings[i], "left out") &&
              strstr(m.warnings[i], "emissive") != NULL;
  CHECK_MSG(warned, "no warning for huge.tga (%zu warnings%s%s)", m.warning_count, m.warning_count ? ": " : "",
            m.warning_count ? m.warnings[0] : "");
  sks_model_free(&m);
}

static void test_converter_refuses(void) {
  uint8_t buf[256], *png = NULL;
  size_t n = 0;
  char why[512];
  size_t len = make_tga(buf, 60000, 60000, NULL);
  CHECK(sks_image_convert_to_png(buf, len, &png, &n, why, sizeof why) == SKS_ERR_UNSUPPORTED && !png);
  CHECK_MSG(strstr(why, "60000 x 60000") && strstr(why, "not decoded"), "%s", why);
  len = make_tga(buf, 9000, 9000, NULL); /* sides fine, 81 Mpixel over 64 */
  CHECK(sks_image_convert_to_png(buf, len, &png, &n, why, sizeof why) == SKS_ERR_UNSUPPORTED && !png);
  static const char junk[] = "this is not an image at all";
  CHECK(sks_image_convert_to_png((const uint8_t *)junk, sizeof junk, &png, &n, why, sizeof why) != SKS_OK && !png);
  CHECK_MSG(strstr(why, "stb_image") != NULL, "%s", why);
  free(png);
}

/* ---- the glTF reader's total cap on external files ---------------------- */

/* many.gltf: one triangle in many.bin (36 bytes) and `images` external image
 * files of 1000 bytes each (a PNG signature and filler: kept, never decoded). */
static void make_many(const char *dir, int images) {
  char path[4400];
  float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  snprintf(path, sizeof path, "%s/many.bin", dir);
  CHECK(write_bytes(path, pos, sizeof pos));
  uint8_t img[1000];
  memset(img, 0x42, sizeof img);
  memcpy(img, "\x89PNG\r\n\x1a\n", 8);
  size_t cap = 4096 + (size_t)images * 64, off = 0;
  char *json = malloc(cap);
  off += (size_t)snprintf(json + off, cap - off,
                          "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0]}],"
                          "\"nodes\":[{\"mesh\":0}],\"meshes\":[{\"primitives\":[{\"attributes\":"
                          "{\"POSITION\":0}}]}],\"accessors\":[{\"bufferView\":0,\"componentType\":5126,"
                          "\"count\":3,\"type\":\"VEC3\",\"min\":[0,0,0],\"max\":[1,1,0]}],"
                          "\"bufferViews\":[{\"buffer\":0,\"byteLength\":36}],"
                          "\"buffers\":[{\"byteLength\":36,\"uri\":\"many.bin\"}],\"images\":[");
  for (int i = 0; i < images; ++i) {
    snprintf(path, sizeof path, "%s/img%03d.png", dir, i);
    CHECK(write_bytes(path, img, sizeof img));
    off += (size_t)snprintf(json + off, cap - off, "%s{\"uri\":\"img%03d.png\"}", i ? "," : "", i);
  }
  off += (size_t)snprintf(json + off, cap - off, "]}");
  snprintf(path, sizeof path, "%s/many.gltf", dir);
  CHECK(write_bytes(path, json, off));
  free(json);
}

static void test_resource_cap(void) {
  char dir[4200], path[4400];
  snprintf(dir, sizeof dir, "%s", sks_test_tmpdir());
  make_many(dir, 40);
  snprintf(path, sizeof path, "%s/many.gltf", dir);
  const uint64_t total = 36 + 40 * 1000;
  sks_model m;
  sks_error err = {0};
  /* default cap: loads, every image kept */
  CHECK_OK(sks_load(path, NULL, &m, &err), &err);
  sks_model_free(&m);
  /* exactly the total: loads */
  sks_load_options opt = {.max_resource_bytes = total};
  CHECK_OK(sks_load(path, &opt, &m, &err), &err);
  sks_model_free(&m);
  /* one byte less: the 40th image is refused, naming the file and the limit */
  opt.max_resource_bytes = total - 1;
  sks_result r = sks_load(path, &opt, &m, &err);
  CHECK(r == SKS_ERR_UNSUPPORTED);
  CHECK_MSG(strstr(err.message, "many.gltf") && strstr(err.message, "image 39") && strstr(err.message, "img039.png") &&
                strstr(err.message, "total limit") && strstr(err.message, "max_resource_bytes"),
            "%s", err.message);
  CHECK(m.part_count == 0 && m.gltf_source == NULL); /* nothing half-loaded */
  /* a cap under the buffer: the buffer is refused */
  opt.max_resource_bytes = 20;
  r = sks_load(path, &opt, &m, &err);
  CHECK(r == SKS_ERR_UNSUPPORTED);
  CHECK_MSG(strstr(err.message, "many.gltf") && strstr(err.message, "buffer 0") && strstr(err.message, "many.bin") &&
                strstr(err.message, "total limit"), "%s", err.message);
}

/* Raw embedded texels (aiTexel BGRA, mHeight != 0: a Half-Life MDL's skin)
 * become a PNG with the same RGBA texels as Assimp gives. */
static void test_raw_texels(void) {
  const char *mdl = sks_test_assimp_model("MDL/MDL (HL1)/alpha_test.mdl");
  if (!mdl) return;
  const struct aiScene *sc = aiImportFile(mdl, 0);
  CHECK_MSG(sc && sc->mNumTextures >= 1 && sc->mTextures[0]->mHeight != 0, "%s: no raw embedded texture", mdl);
  if (!sc || !sc->mNumTextures || !sc->mTextures[0]->mHeight) {
    aiReleaseImport(sc);
    return;
  }
  const struct aiTexture *t = sc->mTextures[0];
  size_t n = (size_t)t->mWidth * t->mHeight;
  uint8_t *want = malloc(n * 4);
  for (size_t k = 0; k < n; ++k) {
    want[4 * k] = t->pcData[k].r; want[4 * k + 1] = t->pcData[k].g;
    want[4 * k + 2] = t->pcData[k].b; want[4 * k + 3] = t->pcData[k].a;
  }
  sks_model m;
  sks_error err = {0};
  CHECK_OK(sks_load(mdl, NULL, &m, &err), &err);
  CHECK_MSG(m.image_count >= 1, "%zu images", m.image_count);
  if (m.image_count >= 1) {
    CHECK(is_png(&m.images[0]));
    CHECK_MSG(png_is(&m.images[0], (int)t->mWidth, (int)t->mHeight, want), "texels of %s's texture 0 (%ux%u)", mdl,
              t->mWidth, t->mHeight);
  }
  sks_model_free(&m);
  free(want);
  aiReleaseImport(sc);
}

/* The buffer the PNG encoder (and the wire encoder) append to: an append
 * that would pass SIZE_MAX fails cleanly and keeps what came before (the
 * PNG sink had no such check before it shared model_wire.c's helper). */
static void test_byte_buf(void) {
  sks_byte_buf b = {0};
  sks_byte_buf_put(&b, "abc", 3, 0);
  CHECK(!b.fail && b.n == 3 && b.cap >= 3 && b.p && !memcmp(b.p, "abc", 3));
  sks_byte_buf_put(&b, "d", SIZE_MAX - 1, 0); /* n + size overflows: never read, never allocated */
  CHECK(b.fail && b.n == 3 && !memcmp(b.p, "abc", 3));
  sks_byte_buf_put(&b, "e", 1, 0);
  CHECK(b.n == 3); /* once failed, nothing more is appended */
  free(b.p);
  sks_byte_buf big = {0};
  char chunk[1000];
  memset(chunk, 7, sizeof chunk);
  for (int i = 0; i < 100; ++i) sks_byte_buf_put(&big, chunk, sizeof chunk, 16);
  CHECK(!big.fail && big.n == 100000 && big.cap >= big.n && big.p[99999] == 7);
  free(big.p);
}

int main(void) {
  test_byte_buf();
  test_raw_texels();
  test_converter_refuses();
  test_resource_cap();
  test_generated(1);
  test_generated(0);
  test_duck(1);
  test_duck(0);
  return sks_test_finish();
}
