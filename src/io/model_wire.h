/* A model as bytes: how the isolated Assimp child (assimp_isolate.c) hands
 * its converted sks_model back to the parent. The decoder treats the bytes
 * as untrusted: every count is checked against the bytes left before
 * anything is allocated (so no allocation exceeds a small multiple of the
 * input size), every index against what it indexes, every enum against its
 * range; a bad stream gives SKS_ERR_PARSE naming the place, never a model
 * that breaks a consumer's assumptions. Native byte order (both ends are
 * the same program on the same machine). */
#ifndef SKS_MODEL_WIRE_H
#define SKS_MODEL_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include "skinsolve/rig.h"

/* Serialises model into a malloc'ed buffer (*bytes, *size; caller frees). */
sks_result sks_model_wire_encode(const sks_model *model, uint8_t **bytes, size_t *size, sks_error *err);

/* Rebuilds a model from bytes. name_for_messages names the file in errors.
 * On error *out is freed and zeroed. */
sks_result sks_model_wire_decode(const void *bytes, size_t size, const char *name_for_messages,
                                 sks_model *out, sks_error *err);

/* 1 when a texture ref's KHR_texture_transform fields are usable: has_transform
 * 0, or 1 with finite offset, rotation and scale. */
int sks_texture_transform_valid(const sks_texture_ref *ref);

/* 1 when a material's alpha_mode / alpha_cutoff and the KHR_materials_*
 * factors of its extension bits are in the ranges rig.h gives (no unknown
 * bit). The wire decoder and the glTF writer check with it. */
int sks_material_extensions_valid(const sks_material *mat);

#endif
