/* The native glTF reader's entry for sks_load (src/io/load.c). Private to
 * src/io/. */
#ifndef SKS_IO_GLTF_READ_H
#define SKS_IO_GLTF_READ_H

#include "skinsolve/io.h"

/* sks_load_gltf_with, and *needs_draco (may be NULL) = 1 when the file's
 * extensionsRequired names KHR_draco_mesh_compression (the native reader
 * then fails with SKS_ERR_UNSUPPORTED; sks_load reads it through Assimp). */
sks_result sks_load_gltf_native(const char *path, const sks_load_options *options, sks_model *out,
                                int *needs_draco, sks_error *err);

#endif
