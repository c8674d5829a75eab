/* Non-glTF texture images -> PNG with Debian's stb (libstb: stb_image decodes,
 * stb_image_write encodes). See image_convert.h. */
#include "io/image_convert.h"
#include "io/byte_buf.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

static void png_sink(void *context, void *data, int size) {
  if (size > 0) sks_byte_buf_put(context, data, (size_t)size, 65536);
}

static int within_bounds(long long w, long long h, char *why, size_t why_size) {
  if (w <= 0 || h <= 0) {
    snprintf(why, why_size, "its header gives %lld x %lld pixels", w, h);
    return 0;
  }
  if (w > SKS_MAX_IMAGE_SIDE || h > SKS_MAX_IMAGE_SIDE || (size_t)w * (size_t)h > SKS_MAX_IMAGE_PIXELS) {
    snprintf(why, why_size,
             "its header gives %lld x %lld pixels, over the conversion limit (%u pixels a side, %zu Mpixel) "
             "— not decoded", w, h, SKS_MAX_IMAGE_SIDE, SKS_MAX_IMAGE_PIXELS >> 20);
    return 0;
  }
  return 1;
}

sks_result sks_image_encode_png(const uint8_t *pixels, uint32_t width, uint32_t height, int comp,
                                uint8_t **png, size_t *png_size, char *why, size_t why_size) {
  *png = NULL;
  *png_size = 0;
  if (!pixels || comp < 1 || comp > 4) {
    snprintf(why, why_size, "no pixels to encode");
    return SKS_ERR_ARGUMENT;
  }
  if (!within_bounds(width, height, why, why_size)) return SKS_ERR_UNSUPPORTED;
  sks_byte_buf b = {0};
  int ok = stbi_write_png_to_func(png_sink, &b, (int)width, (int)height, comp, pixels, (int)width * comp);
  if (!ok || b.fail || !b.n) {
    free(b.p);
    snprintf(why, why_size, "PNG encoding failed (%s)", b.fail ? "out of memory" : "stb_image_write");
    return b.fail ? SKS_ERR_OUT_OF_MEMORY : SKS_ERR_INVALID;
  }
  *png = b.p;
  *png_size = b.n;
  return SKS_OK;
}

sks_result sks_image_convert_to_png(const uint8_t *data, size_t size, uint8_t **png, size_t *png_size,
                                    char *why, size_t why_size) {
  *png = NULL;
  *png_size = 0;
  if (!data || !size || size > INT_MAX) {
    snprintf(why, why_size, "%s", !size ? "it is empty" : "it is over 2 GB");
    return SKS_ERR_UNSUPPORTED;
  }
  int w = 0, h = 0, comp = 0;
  if (!stbi_info_from_memory(data, (int)size, &w, &h, &comp)) {
    snprintf(why, why_size, "not an image format stb_image reads (%s)", stbi_failure_reason());
    return SKS_ERR_UNSUPPORTED;
  }
  if (!within_bounds(w, h, why, why_size)) return SKS_ERR_UNSUPPORTED;
  if (comp < 1 || comp > 4) comp = 4;
  int dw = 0, dh = 0, dc = 0;
  uint8_t *pixels = stbi_load_from_memory(data, (int)size, &dw, &dh, &dc, comp);
  if (!pixels) {
    snprintf(why, why_size, "stb_image could not decode it (%s)", stbi_failure_reason());
    return SKS_ERR_PARSE;
  }
  sks_result r;
  if (dw != w || dh != h) { /* the header said one size, the decoder another */
    snprintf(why, why_size, "decoded %d x %d pixels, its header said %d x %d", dw, dh, w, h);
    r = SKS_ERR_PARSE;
  } else {
    r = sks_image_encode_png(pixels, (uint32_t)w, (uint32_t)h, comp, png, png_size, why, why_size);
  }
  stbi_image_free(pixels);
  return r;
}
