/* The isolated Assimp child's stream, decoded by the parent (see
 * child_stream.h). The child may have crashed, been killed mid-record or
 * been taken over by a hostile file: every length is checked against the
 * bytes left and the documented limits before it is used, a path holding a
 * NUL is refused (it would name another file than the one opened), and a
 * record after the terminal one is refused (the child sends none). */
#define _XOPEN_SOURCE 700 /* SIGXCPU */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "skinsolve/io.h"
#include "io/child_stream.h"
#include "io/model_wire.h"

/* Room for SKS_CHILD_MAX_FILES paths at a load factor of 1/2 (a power of 2). */
#define SLOTS (2u * SKS_CHILD_MAX_FILES)

static uint32_t path_hash(const uint8_t *p, uint32_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (uint32_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}

static const char *gb_text(uint64_t bytes, char *buf, size_t n) {
  double gb = (double)bytes / (double)(1ull << 30);
  if (gb >= 1.0) snprintf(buf, n, "%.3g GB", gb);
  else snprintf(buf, n, "%.3g MB", (double)bytes / (double)(1ull << 20));
  return buf;
}

/* The end of the complete, well-formed 'F' records at the start of b;
 * *bad when one breaks the limits (a cut-off record at the end is not bad:
 * the child died or was killed while writing it). */
static size_t files_end(const uint8_t *b, size_t n, int *bad) {
  size_t at = 0, count = 0;
  *bad = 0;
  while (at < n && b[at] == 'F') {
    uint32_t len;
    if (n - at < 5) break;
    memcpy(&len, b + at + 1, 4);
    if (!len || len > SKS_CHILD_MAX_PATH || ++count > SKS_CHILD_MAX_FILES) { *bad = 1; break; }
    if (len > n - at - 5) break;
    if (memchr(b + at + 5, 0, len)) { *bad = 1; break; }
    at += 5 + (size_t)len;
  }
  return at;
}

/* Tells on_file of each distinct path in the first `end` bytes (complete
 * records, at most SKS_CHILD_MAX_FILES of them), in order. */
static void tell_files(const uint8_t *b, size_t end, void (*on_file)(void *, const char *), void *user) {
  uint32_t slot[SLOTS]; /* record offset + 1; 0 = empty */
  memset(slot, 0, sizeof slot);
  char name[SKS_CHILD_MAX_PATH + 1];
  for (size_t at = 0; at < end;) {
    uint32_t len;
    memcpy(&len, b + at + 1, 4);
    const uint8_t *p = b + at + 5;
    uint32_t h = path_hash(p, len) & (SLOTS - 1);
    int seen = 0;
    for (; slot[h]; h = (h + 1) & (SLOTS - 1)) {
      uint32_t lb;
      memcpy(&lb, b + slot[h] - 1 + 1, 4);
      if (lb == len && memcmp(b + slot[h] - 1 + 5, p, len) == 0) { seen = 1; break; }
    }
    if (!seen) {
      slot[h] = (uint32_t)at + 1; /* at < 4096 records of <= 4101 bytes: fits */
      memcpy(name, p, len);
      name[len] = '\0';
      on_file(user, name);
    }
    at += 5 + (size_t)len;
  }
}

/* 1 when the model record at rec (rn >= 9 bytes) is incomplete: a child
 * that died of a signal while writing it is reported by its signal. */
static int model_cut(const uint8_t *rec, size_t rn) {
  uint64_t n;
  memcpy(&n, rec + 1, 8);
  return n > rn - 9;
}

sks_result sks_child_stream_decode(const uint8_t *bytes, size_t size, const sks_child_end *end,
                                   const char *path, void (*on_file)(void *user, const char *path),
                                   void *user, sks_model *out, sks_error *err) {
  if (!out) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_child_stream_decode: out is NULL");
  memset(out, 0, sizeof *out);
  if (!end || (!bytes && size))
    return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_child_stream_decode: no stream");
  if (!path) path = "file";
  const uint8_t *b = bytes ? bytes : (const uint8_t *)"";
  int bad_files;
  const size_t fe = files_end(b, size, &bad_files);
  const uint8_t *rec = b + fe;
  const size_t rn = size - fe;

  sks_result res;
  char gb[32];
  if (bad_files) {
    res = sks_error_set(err, SKS_ERR_PARSE, "%s: Assimp failed (a malformed file record)", path);
  } else if (end->timed_out) {
    res = sks_error_set(err, SKS_ERR_PARSE, "%s: Assimp failed (no result in %g s)", path, end->timeout);
  } else if (end->too_big) {
    res = sks_error_set(err, SKS_ERR_PARSE, "%s: Assimp failed (its model is larger than %s)", path,
                        gb_text(end->max_memory, gb, sizeof gb));
  } else if (end->io_fail) {
    res = sks_error_set(err, SKS_ERR_IO, "%s: reading the Assimp import process failed", path);
  } else if (rn >= 1 && rec[0] == 'O') {
    if (rn != 1)
      res = sks_error_set(err, SKS_ERR_PARSE, "%s: Assimp failed (a malformed record after its result)", path);
    else
      res = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: Assimp failed (out of memory past %s)", path,
                          gb_text(end->max_memory, gb, sizeof gb));
  } else if (rn >= 9 && rec[0] == 'E') {
    uint32_t code, len;
    memcpy(&code, rec + 1, 4);
    memcpy(&len, rec + 5, 4);
    if (len != rn - 9 || len == 0 || len >= sizeof err->message || code == SKS_OK || code > SKS_ERR_NOT_FOUND ||
        memchr(rec + 9, 0, len)) /* an empty message is malformed too: every failure says what */
      res = sks_error_set(err, SKS_ERR_PARSE, "%s: Assimp failed (a malformed error record)", path);
    else
      res = sks_error_set(err, (sks_result)code, "%.*s", (int)len, (const char *)rec + 9);
  } else if (rn >= 9 && rec[0] == 'M' && !(end->signal && model_cut(rec, rn))) {
    uint64_t n;
    memcpy(&n, rec + 1, 8);
    if (n > rn - 9)
      res = sks_error_set(err, SKS_ERR_PARSE, "%s: Assimp failed (its model was cut off: %zu of %llu bytes)",
                          path, rn - 9, (unsigned long long)n);
    else if (n < rn - 9)
      res = sks_error_set(err, SKS_ERR_PARSE, "%s: Assimp failed (a malformed record after its result)", path);
    else
      res = sks_model_wire_decode(rec + 9, (size_t)n, path, out, err);
  } else if (end->signal) {
    if (end->signal == SIGXCPU || end->signal == SIGKILL)
      res = sks_error_set(err, SKS_ERR_PARSE, "%s: Assimp failed (no result in %g s)", path, end->timeout);
    else
      res = sks_error_set(err, SKS_ERR_PARSE, "%s: Assimp failed (signal %d)", path, end->signal);
  } else if (rn && rec[0] != 'F' && rec[0] != 'E' && rec[0] != 'M') {
    res = sks_error_set(err, SKS_ERR_PARSE, "%s: Assimp failed (a malformed record)", path);
  } else {
    res = sks_error_set(err, SKS_ERR_PARSE, "%s: Assimp failed (exit status %d, no result)", path,
                        end->exit_code);
  }
  /* Told of every file the import opened (once each), also when it failed:
   * the caller refuses an output naming one of them either way. */
  if (on_file) tell_files(b, fe, on_file, user);
  if (res != SKS_OK) sks_model_free(out);
  return res;
}
