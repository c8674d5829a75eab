/* The GLB writer's encoder, for callers that stage the bytes themselves
 * (the CLI's all-or-nothing -o + --report, io/atomic.h). */
#ifndef SKS_IO_GLTF_WRITE_H
#define SKS_IO_GLTF_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include "skinsolve/io.h"

/* The whole .glb sks_write_glb would write to path (path names it in
 * messages only), in *glb (malloc'd, the caller frees) of *glb_size bytes. */
sks_result sks_glb_encode(const char *path, const sks_model *model, const sks_gltf_write_options *options,
                          uint8_t **glb, size_t *glb_size, sks_error *err);

#endif
