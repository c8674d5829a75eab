/* The Assimp import with a record of every file it opens (assimp_import.c),
 * for the isolated child (assimp_isolate.c), which sends each file to the
 * parent as it is opened (so a failing import still tells of them), and
 * for the in-process load. Private to src/io/. */
#ifndef SKS_IO_ASSIMP_FILES_H
#define SKS_IO_ASSIMP_FILES_H

#include "skinsolve/io.h"

/* sks_load_assimp, calling on_file(user, path) for every file it opened:
 * those Assimp opened through its IO system (the model, an .obj's .mtl,
 * files a Collada or .x names; a file opened twice is reported twice) and
 * the external textures it read, each at the moment it is opened (before
 * the import can fail on it). Assimp reads only regular files here
 * (non-blocking: a FIFO is refused, never waited on) and never writes.
 * on_file may be NULL. */
sks_result sks_load_assimp_recording(const char *path, void (*on_file)(void *user, const char *path), void *user,
                                     sks_model *out, sks_error *err);

#endif
