/* libFuzzer: the parent's handling of the isolated Assimp child's whole
 * pipe (src/io/child_stream.c): the streamed 'F' file records and the
 * result record (a model wire, an error, out of memory) after them, as a
 * crashed, killed or hostile child could send them. Input: byte 0 picks how
 * the child ended (bit 0 timed out, bit 1 too big, bit 2 read failure, bit
 * 3 died of the signal in byte 1, else exited with the code in byte 1),
 * the rest is the stream. Checked against a plain walk of the format done
 * here: on_file hears exactly the distinct complete paths before the first
 * bad or cut-off record, in order, each 1..4096 bytes without a NUL, at
 * most 4096; only a well-formed stream ending in a model that decodes is a
 * success, and that model survives sks_check. Built by scripts/fuzz.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "skinsolve/rig.h"
#include "io/child_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct expect {
  const uint8_t *b;
  size_t at[SKS_CHILD_MAX_FILES]; /* the distinct paths' records, in order */
  uint32_t len[SKS_CHILD_MAX_FILES];
  size_t count, next;
} expect;

static expect want; /* one input at a time (libFuzzer runs them in one thread) */

static void on_file(void *user, const char *path) {
  expect *e = user;
  size_t n = strlen(path);
  if (n == 0 || n > SKS_CHILD_MAX_PATH) abort();
  if (e->next >= e->count) abort(); /* told a file that is not in the stream, or one twice */
  if (n != e->len[e->next] || memcmp(path, e->b + e->at[e->next] + 5, n) != 0) abort();
  ++e->next;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  sks_child_end end = {data[0] & 1, (data[0] >> 1) & 1, (data[0] >> 2) & 1, 0, 0, 2.0, 256ull << 20};
  if (data[0] & 8) end.signal = data[1] ? data[1] : 11;
  else end.exit_code = data[1];
  const uint8_t *b = data + 2;
  size_t n = size - 2;

  /* the reference walk: distinct complete records before a bad or cut one */
  memset(&want, 0, sizeof want);
  want.b = b;
  size_t at = 0, records = 0;
  int bad = 0;
  while (at < n && b[at] == 'F' && n - at >= 5) {
    uint32_t len;
    memcpy(&len, b + at + 1, 4);
    if (len == 0 || len > SKS_CHILD_MAX_PATH || records == SKS_CHILD_MAX_FILES) { bad = 1; break; }
    if (len > n - at - 5) break;
    if (memchr(b + at + 5, 0, len)) { bad = 1; break; }
    int seen = 0;
    for (size_t k = 0; k < want.count && !seen; ++k)
      seen = want.len[k] == len && memcmp(b + want.at[k] + 5, b + at + 5, len) == 0;
    if (!seen) {
      want.at[want.count] = at;
      want.len[want.count++] = len;
    }
    ++records;
    at += 5 + (size_t)len;
  }

  sks_model m;
  sks_error err;
  err.message[0] = '\0';
  sks_result r = sks_child_stream_decode(b, n, &end, "fuzz.x", on_file, &want, &m, &err);
  if (want.next != want.count) abort(); /* a file opened before the failure was not told */
  if (r == SKS_OK) {
    /* only a well-formed stream: files, then one complete model record, nothing after it */
    uint64_t mn;
    if (bad || end.timed_out || end.too_big || end.io_fail || n - at < 9 || b[at] != 'M') abort();
    memcpy(&mn, b + at + 1, 8);
    if (mn != n - at - 9) abort();
    sks_findings f;
    if (sks_check(&m, NULL, &f, &err) == SKS_OK) sks_findings_free(&f);
    sks_model_free(&m);
  } else {
    if (!err.message[0]) abort(); /* every failure says what */
    if (m.skeleton.joint_count || m.part_count || m.skins || m.parts) abort(); /* and leaves no model */
    if (bad && !strstr(err.message, "malformed file record")) abort();
  }
  return 0;
}
