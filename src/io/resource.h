/* Files a model refers to (glTF buffer and image URIs): resolved inside the
 * model's folder only, opened only when regular, never read past what is
 * needed. Private to src/io/. */
#ifndef SKS_IO_RESOURCE_H
#define SKS_IO_RESOURCE_H

#include <stddef.h>
#include <stdint.h>
#include "skinsolve/common.h"

/* Resolves a relative URI against base_dir: percent-decodes it, refuses
 * schemes ("file:", "http://", ...), absolute paths, NUL bytes and
 * backslashes, and any path that (after "..", "." and symlinks) leaves root
 * (NULL: base_dir itself). On success *out_path is a malloc'd real path.
 * name / what label the message ("Fox.gltf: buffer 0 uri '...': ..."). */
sks_result sks_resource_resolve(const char *base_dir, const char *root, const char *uri,
                                const char *name, const char *what, char **out_path,
                                sks_error *err);

/* Opens path non-blocking, refuses anything but a regular file, and reads
 * at most max_bytes (SIZE_MAX: the whole file, which must then be under
 * limit bytes: if not, SKS_ERR_UNSUPPORTED with *data NULL and *size the
 * file's size). *size is what was read. */
sks_result sks_resource_read(const char *path, size_t max_bytes, size_t limit, uint8_t **data,
                             size_t *size, const char *name, const char *what, sks_error *err);

/* glTF core image types are recognised by their signature, never by a name
 * or a hint: "image/png", "image/jpeg", or NULL for anything else. */
const char *sks_image_mime(const uint8_t *data, size_t size);

/* Appends a copy of `line` to model->warnings (the load's notes the CLI
 * prints as warnings). 0 on out of memory (the model unchanged). */
struct sks_model;
int sks_model_note(struct sks_model *model, const char *line);

#endif
