/* Texture images glTF cannot carry (TGA, BMP, PSD, GIF, PNM, HDR, PIC: what
 * stb_image reads) converted to PNG, so Assimp inputs keep their textures.
 * Decoding image bytes is attack surface: sks_load_assimp calls this, which
 * under sks_load runs in the isolated child (its memory and CPU limits), and
 * only the PNG crosses the wire. Private to src/io/. */
#ifndef SKS_IO_IMAGE_CONVERT_H
#define SKS_IO_IMAGE_CONVERT_H

#include <stddef.h>
#include <stdint.h>
#include "skinsolve/common.h"

/* Bounds on an image to convert, checked on the header's dimensions before
 * anything is decoded: each side at most SKS_MAX_IMAGE_SIDE pixels and
 * width x height at most SKS_MAX_IMAGE_PIXELS (64 Mpixel: 256 MiB of
 * RGBA8, 8192 x 8192). */
#define SKS_MAX_IMAGE_SIDE 16384u
#define SKS_MAX_IMAGE_PIXELS ((size_t)64 << 20)

/* Decodes data (any format stb_image reads) and encodes it as PNG with the
 * same channels (grey, grey + alpha, RGB or RGBA; 16-bit and HDR images are
 * reduced to 8 bits). *png is malloc'ed. On failure returns non-OK and
 * writes the reason to why ("60000 x 60000 pixels, over the ... limit",
 * "not an image stb_image reads: ..."). */
sks_result sks_image_convert_to_png(const uint8_t *data, size_t size, uint8_t **png, size_t *png_size,
                                    char *why, size_t why_size);

/* Encodes width x height 8-bit texels of `comp` channels (1..4), rows top
 * first, as PNG (same bounds as above). */
sks_result sks_image_encode_png(const uint8_t *pixels, uint32_t width, uint32_t height, int comp,
                                uint8_t **png, size_t *png_size, char *why, size_t why_size);

#endif
