/* All-or-nothing outputs (atomic.c): a command that writes several files
 * (bake -o OUT.glb --report OUT.html) stages each one complete and fsynced
 * beside its destination, then replaces every destination, or none. */
#ifndef SKS_IO_ATOMIC_H
#define SKS_IO_ATOMIC_H

#include <stddef.h>
#include "skinsolve/common.h"

typedef struct sks_staged_output {
  char *path; /* destination */
  char *tmp;  /* ".NAME.tmpXXXXXX" beside it: the hidden name the data gets */
  int fd;     /* an unnamed (O_TMPFILE) complete file not linked yet, or -1 */
  int named;  /* tmp exists on disk (ours, to remove on discard) */
} sks_staged_output;

/* Writes data to an unnamed temp file in path's folder (a named hidden one
 * where O_TMPFILE is missing), fsynced; path is not touched. Refuses a path
 * that is a folder or not a regular file. On error nothing is left. */
sks_result sks_stage_output(sks_staged_output *s, const char *path, const void *data, size_t size,
                            sks_error *err);
/* Renames every staged file over its destination, in order, each unnamed
 * one given its hidden name right before its rename. A failure at the first
 * removes every staged file and leaves every destination as it was; one at
 * a later output (or a kill between two renames) leaves the earlier outputs
 * new and the later ones as they were, so a caller writing a set puts last
 * the file that names the others (the bake's report seals its .glb by
 * sha256). The staged outputs are released either way. */
sks_result sks_commit_outputs(sks_staged_output *s, size_t n, sks_error *err);
/* Removes what was staged (never a destination). */
void sks_discard_outputs(sks_staged_output *s, size_t n);

#endif
