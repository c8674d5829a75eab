/* The parent's side of the isolated Assimp import's pipe (assimp_isolate.c):
 * the bytes the child sent, decoded as untrusted data, without a process, so
 * that a unit test (tests/test_child_stream.c) and a libFuzzer target
 * (fuzz/fuzz_stream.c) can feed it hostile streams. The stream is
 *   'F' u32 length, path        — zero or more: a file the import opened
 * then at most one of
 *   'M' u64 size, model bytes   — success (model_wire.c)
 *   'E' u32 code, u32 length, message
 *   'O'                         — out of memory
 * and nothing after it (native byte order). Private to src/io/. */
#ifndef SKS_IO_CHILD_STREAM_H
#define SKS_IO_CHILD_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include "skinsolve/rig.h"

/* A path the child reports: 1 to this many bytes (PATH_MAX), no NUL; at
 * most this many 'F' records per import (the child sends each distinct file
 * once, and stops there). */
#define SKS_CHILD_MAX_PATH 4096u
#define SKS_CHILD_MAX_FILES 4096u

/* How the child's run ended, as the parent saw it. */
typedef struct sks_child_end {
  int timed_out;       /* the parent's deadline passed (the child was killed) */
  int too_big;         /* it sent more than max_memory (killed) */
  int io_fail;         /* reading the pipe failed (killed) */
  int signal;          /* the child died of this signal (0: it exited) */
  int exit_code;       /* its exit status when signal is 0 (-1: unknown) */
  double timeout;      /* seconds, for the messages */
  uint64_t max_memory; /* bytes, for the messages */
} sks_child_end;

/* Decodes the child's `size` bytes: the 'F' records go to on_file(user,
 * path) (NUL-terminated, once per distinct path, in the order sent; those
 * before a malformed or cut-off record only), whatever the result; the
 * terminal record, or the way the child ended, gives the result: SKS_OK and
 * *out the model for a complete 'M' record that decodes, else an error
 * naming `path` ("PATH: Assimp failed (signal 11)", "... (a malformed file
 * record)", ...) and *out zeroed. on_file may be NULL. Work and memory are
 * linear in size (repeats are found through a hash table, not by
 * comparing every pair). */
sks_result sks_child_stream_decode(const uint8_t *bytes, size_t size, const sks_child_end *end,
                                   const char *path, void (*on_file)(void *user, const char *path),
                                   void *user, sks_model *out, sks_error *err);

#endif
