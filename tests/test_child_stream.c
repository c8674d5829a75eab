/* The parent's decoding of the isolated Assimp child's pipe
 * (src/io/child_stream.c), fed hand-made hostile streams without a child:
 * counts and lengths at and past the 4096 limits, a NUL in a path, records
 * cut off at every byte, repeats, and records before / inside / after the
 * model wire. For each: the result, the message, and exactly which files
 * reach on_file (the CLI's output guard refuses an output among them). */
#include <stdlib.h>
#include <string.h>

#include "sks_test.h"
#include "io/child_stream.h"
#include "io/model_wire.h"

typedef struct stream {
  uint8_t *b;
  size_t n, cap;
} stream;

static void put(stream *s, const void *p, size_t n) {
  if (s->cap - s->n < n) {
    size_t nc = (s->cap + n) * 2;
    uint8_t *q = realloc(s->b, nc);
    if (!q) abort();
    s->b = q;
    s->cap = nc;
  }
  memcpy(s->b + s->n, p, n);
  s->n += n;
}
static void put_file(stream *s, const void *path, uint32_t len) {
  put(s, "F", 1);
  put(s, &len, 4);
  put(s, path, len);
}
static void put_str(stream *s, const char *path) { put_file(s, path, (uint32_t)strlen(path)); }
static void put_model(stream *s, const uint8_t *wire, uint64_t n) {
  put(s, "M", 1);
  put(s, &n, 8);
  put(s, wire, (size_t)n);
}
static void put_error(stream *s, uint32_t code, const char *msg) {
  uint32_t len = (uint32_t)strlen(msg);
  put(s, "E", 1);
  put(s, &code, 4);
  put(s, &len, 4);
  put(s, msg, len);
}

/* What on_file heard. */
typedef struct heard {
  size_t count;
  char first[64], last[64];
  size_t longest;
  int saw_nul_cut; /* a name shorter than its record: a NUL got through */
} heard;
static void on_file(void *user, const char *path) {
  heard *h = user;
  size_t n = strlen(path);
  if (!h->count) snprintf(h->first, sizeof h->first, "%s", path);
  snprintf(h->last, sizeof h->last, "%s", path);
  if (n > h->longest) h->longest = n;
  if (n == 2 && path[0] == 'a' && path[1] == 'b') h->saw_nul_cut = 1;
  ++h->count;
}

static const sks_child_end exited = {0, 0, 0, 0, 0, 30.0, 256ull << 20};

static sks_result decode(const stream *s, const sks_child_end *end, heard *h, sks_model *m, sks_error *err) {
  memset(h, 0, sizeof *h);
  memset(err, 0, sizeof *err);
  return sks_child_stream_decode(s->b, s->n, end, "in.x", on_file, h, m, err);
}

static uint8_t *wire;
static size_t wire_n;

static void make_wire(void) {
  sks_model m;
  memset(&m, 0, sizeof m);
  sks_test_chain_skeleton(&m, 3, 0.2f);
  sks_error err;
  CHECK_OK(sks_model_wire_encode(&m, &wire, &wire_n, &err), &err);
  sks_model_free(&m);
}

static void test_clean_and_repeats(void) {
  stream s = {0};
  put_str(&s, "a.mtl");
  put_str(&s, "tex.png");
  for (int i = 0; i < 100; ++i) put_str(&s, "a.mtl"); /* repeats: told once */
  put_model(&s, wire, wire_n);
  heard h;
  sks_model m;
  sks_error err;
  CHECK_OK(decode(&s, &exited, &h, &m, &err), &err);
  CHECK(m.skeleton.joint_count == 4);
  CHECK_MSG(h.count == 2 && strcmp(h.first, "a.mtl") == 0 && strcmp(h.last, "tex.png") == 0,
            "%zu files, %s .. %s", h.count, h.first, h.last);
  sks_model_free(&m);
  /* no files at all, just the model */
  s.n = 0;
  put_model(&s, wire, wire_n);
  CHECK_OK(decode(&s, &exited, &h, &m, &err), &err);
  CHECK(h.count == 0);
  sks_model_free(&m);
  free(s.b);
}

/* 4096 records (of 4096 distinct paths of 4096 bytes, alike but for their
 * last bytes: the worst case for finding repeats) are fine; one more
 * record, or one byte more in a path, is refused, and the files before it
 * are still told. */
static void test_limits(void) {
  stream s = {0};
  char *p = malloc(SKS_CHILD_MAX_PATH + 1);
  if (!p) abort();
  memset(p, 'p', SKS_CHILD_MAX_PATH + 1);
  for (uint32_t i = 0; i < SKS_CHILD_MAX_FILES; ++i) {
    snprintf(p + SKS_CHILD_MAX_PATH - 5, 6, "%05u", i);
    put_file(&s, p, SKS_CHILD_MAX_PATH);
  }
  const size_t full = s.n;
  put_model(&s, wire, wire_n);
  heard h;
  sks_model m;
  sks_error err;
  CHECK_OK(decode(&s, &exited, &h, &m, &err), &err);
  CHECK_MSG(h.count == SKS_CHILD_MAX_FILES && h.longest == SKS_CHILD_MAX_PATH, "%zu files, longest %zu", h.count,
            h.longest);
  sks_model_free(&m);

  /* a 4097th record (a repeat counts too: the child sends each file once) */
  s.n = full;
  put_str(&s, "one-more");
  put_model(&s, wire, wire_n);
  sks_result r = decode(&s, &exited, &h, &m, &err);
  CHECK_MSG(r == SKS_ERR_PARSE && strstr(err.message, "in.x: Assimp failed (a malformed file record)"), "%s",
            err.message);
  CHECK(h.count == SKS_CHILD_MAX_FILES && m.skeleton.joint_count == 0);
  s.n = full;
  put_file(&s, p, SKS_CHILD_MAX_PATH); /* the last path again */
  put_model(&s, wire, wire_n);
  CHECK(decode(&s, &exited, &h, &m, &err) == SKS_ERR_PARSE && h.count == SKS_CHILD_MAX_FILES);

  /* a path of 4097 bytes, and of 0 */
  s.n = 0;
  put_str(&s, "before");
  put_file(&s, p, SKS_CHILD_MAX_PATH + 1);
  put_model(&s, wire, wire_n);
  r = decode(&s, &exited, &h, &m, &err);
  CHECK_MSG(r == SKS_ERR_PARSE && strstr(err.message, "malformed file record") && h.count == 1 &&
                strcmp(h.first, "before") == 0 && h.longest == 6,
            "%s; %zu files, longest %zu", err.message, h.count, h.longest);
  s.n = 0;
  put_file(&s, "", 0);
  put_model(&s, wire, wire_n);
  CHECK(decode(&s, &exited, &h, &m, &err) == SKS_ERR_PARSE && h.count == 0);
  /* a length that wraps when 5 is added (2^32 - 1) */
  s.n = 0;
  put_file(&s, "x", 1);
  s.b[1] = s.b[2] = s.b[3] = s.b[4] = 0xff;
  CHECK(decode(&s, &exited, &h, &m, &err) == SKS_ERR_PARSE && strstr(err.message, "malformed file record"));
  free(p);
  free(s.b);
}

/* "ab\0cd": a NUL would cut the name to "ab", another file than the one
 * opened: refused, never told. */
static void test_nul(void) {
  stream s = {0};
  put_str(&s, "first");
  put_file(&s, "ab\0cd", 5);
  put_model(&s, wire, wire_n);
  heard h;
  sks_model m;
  sks_error err;
  sks_result r = decode(&s, &exited, &h, &m, &err);
  CHECK_MSG(r == SKS_ERR_PARSE && strstr(err.message, "malformed file record"), "%s", err.message);
  CHECK_MSG(h.count == 1 && !h.saw_nul_cut, "%zu files, 'ab' told: %d", h.count, h.saw_nul_cut);
  /* in the error message too */
  s.n = 0;
  put_str(&s, "first");
  put(&s, "E", 1);
  uint32_t code = SKS_ERR_PARSE, len = 5;
  put(&s, &code, 4);
  put(&s, &len, 4);
  put(&s, "ab\0cd", 5);
  r = decode(&s, &exited, &h, &m, &err);
  CHECK_MSG(r == SKS_ERR_PARSE && strstr(err.message, "malformed error record") && h.count == 1, "%s",
            err.message);
  free(s.b);
}

/* The stream cut at every byte of a file record and of the model record
 * that follows (the child killed while writing): never a model, the files
 * complete before the cut told, and the ending (here signal 9 at the
 * deadline, or signal 11) gives the message. */
static void test_cut_off(void) {
  stream s = {0};
  put_str(&s, "one.mtl");
  const size_t first = s.n;
  put_str(&s, "two.png");
  const size_t second = s.n;
  put_model(&s, wire, wire_n);
  const size_t total = s.n;
  sks_child_end crashed = exited;
  crashed.signal = 11;
  sks_child_end late = exited;
  late.timed_out = 1;
  late.timeout = 2;
  int bad = 0;
  for (size_t cut = first; cut < total; ++cut) {
    stream c = {s.b, cut, cut};
    heard h;
    sks_model m;
    sks_error err;
    const sks_child_end *e = cut & 1 ? &crashed : &late;
    sks_result r = decode(&c, e, &h, &m, &err);
    size_t want = cut < second ? 1 : 2;
    const char *msg = cut & 1 ? "in.x: Assimp failed (signal 11)" : "in.x: Assimp failed (no result in 2 s)";
    if (r == SKS_OK || h.count != want || !strstr(err.message, msg) || m.skeleton.joint_count) {
      if (!bad++) fprintf(stderr, "cut at %zu of %zu: result %d, %zu files, '%s'\n", cut, total, r, h.count,
                          err.message);
    }
    if (r == SKS_OK) sks_model_free(&m);
  }
  CHECK_MSG(bad == 0, "%d cuts went wrong", bad);
  /* a model record cut off while the child exited normally */
  stream c = {s.b, total - 1, total - 1};
  heard h;
  sks_model m;
  sks_error err;
  CHECK(decode(&c, &exited, &h, &m, &err) == SKS_ERR_PARSE && strstr(err.message, "was cut off") && h.count == 2);
  /* a model record whose size is past the bytes there are (2^64 - 1) */
  uint64_t huge = UINT64_MAX;
  memcpy(s.b + second + 1, &huge, 8);
  CHECK(decode(&s, &exited, &h, &m, &err) == SKS_ERR_PARSE && strstr(err.message, "was cut off") && h.count == 2);
  free(s.b);
}

/* One pipe carries both: 'F' records only come before the result. One
 * after it (or any other byte) is refused and not told; one inside the
 * model's bytes is model data (the wire decoder refuses it). */
static void test_interleaving(void) {
  heard h;
  sks_model m;
  sks_error err;
  stream s = {0};
  put_str(&s, "a.mtl");
  put_model(&s, wire, wire_n);
  put_str(&s, "late.glb");
  sks_result r = decode(&s, &exited, &h, &m, &err);
  CHECK_MSG(r == SKS_ERR_PARSE && strstr(err.message, "a malformed record after its result") && h.count == 1 &&
                strcmp(h.last, "a.mtl") == 0,
            "%s; %zu files", err.message, h.count);
  CHECK(m.skeleton.joint_count == 0);

  s.n = 0;
  put_str(&s, "a.mtl");
  put_error(&s, SKS_ERR_PARSE, "in.x: Assimp cannot import it: bad face");
  put_str(&s, "late.glb");
  r = decode(&s, &exited, &h, &m, &err);
  CHECK_MSG(r == SKS_ERR_PARSE && strstr(err.message, "malformed error record") && h.count == 1, "%s", err.message);

  s.n = 0;
  put_str(&s, "a.mtl");
  put(&s, "O", 1);
  put_str(&s, "late.glb");
  r = decode(&s, &exited, &h, &m, &err);
  CHECK_MSG(r == SKS_ERR_PARSE && strstr(err.message, "after its result") && h.count == 1, "%s", err.message);

  /* F records inside the model record: the model's size covers them */
  s.n = 0;
  put_str(&s, "a.mtl");
  put(&s, "M", 1);
  uint64_t n = wire_n + 13;
  put(&s, &n, 8);
  put(&s, wire, 20);
  put_str(&s, "inside.glb");
  put(&s, wire + 20, wire_n - 20);
  r = decode(&s, &exited, &h, &m, &err);
  CHECK_MSG(r == SKS_ERR_PARSE && h.count == 1 && strcmp(h.last, "a.mtl") == 0, "%s; %zu files", err.message,
            h.count);

  /* an unknown record after the files, the child exiting 0 */
  s.n = 0;
  put_str(&s, "a.mtl");
  put(&s, "X", 1);
  r = decode(&s, &exited, &h, &m, &err);
  CHECK_MSG(r == SKS_ERR_PARSE && strstr(err.message, "in.x: Assimp failed (a malformed record)") && h.count == 1,
            "%s", err.message);
  free(s.b);
}

/* The ordinary endings keep their messages, with the files told. */
static void test_endings(void) {
  heard h;
  sks_model m;
  sks_error err;
  stream s = {0};
  put_str(&s, "a.mtl");
  put_error(&s, SKS_ERR_PARSE, "in.x: Assimp cannot import it: bad face");
  sks_result r = decode(&s, &exited, &h, &m, &err);
  CHECK_MSG(r == SKS_ERR_PARSE && strcmp(err.message, "in.x: Assimp cannot import it: bad face") == 0 && h.count == 1,
            "%s", err.message);
  s.n = 0;
  put_str(&s, "a.mtl");
  put_error(&s, 0, "ok?"); /* an error record saying OK */
  CHECK(decode(&s, &exited, &h, &m, &err) == SKS_ERR_PARSE && strstr(err.message, "malformed error record"));
  s.n = 0;
  put_str(&s, "a.mtl");
  put_error(&s, 99, "what");
  CHECK(decode(&s, &exited, &h, &m, &err) == SKS_ERR_PARSE && strstr(err.message, "malformed error record"));
  s.n = 0;
  put_error(&s, SKS_ERR_IO, ""); /* an error without its message (found by fuzz_stream): the failure must say what */
  CHECK_MSG(decode(&s, &exited, &h, &m, &err) == SKS_ERR_PARSE && strstr(err.message, "malformed error record"), "%s",
            err.message);
  s.n = 0;
  put_str(&s, "a.mtl");
  put(&s, "O", 1);
  r = decode(&s, &exited, &h, &m, &err);
  CHECK_MSG(r == SKS_ERR_OUT_OF_MEMORY && strstr(err.message, "out of memory past 256 MB") && h.count == 1, "%s",
            err.message);
  s.n = 0;
  put_str(&s, "a.mtl");
  sks_child_end e = exited;
  e.signal = 6;
  r = decode(&s, &e, &h, &m, &err);
  CHECK_MSG(r == SKS_ERR_PARSE && strstr(err.message, "in.x: Assimp failed (signal 6)") && h.count == 1, "%s",
            err.message);
  e = exited;
  e.too_big = 1;
  r = decode(&s, &e, &h, &m, &err);
  CHECK_MSG(r == SKS_ERR_PARSE && strstr(err.message, "larger than 256 MB") && h.count == 1, "%s", err.message);
  e = exited;
  e.exit_code = 4;
  r = decode(&s, &e, &h, &m, &err);
  CHECK_MSG(r == SKS_ERR_PARSE && strstr(err.message, "exit status 4, no result") && h.count == 1, "%s",
            err.message);
  /* nothing at all */
  stream none = {0};
  r = decode(&none, &exited, &h, &m, &err);
  CHECK(r == SKS_ERR_PARSE && strstr(err.message, "exit status 0, no result") && h.count == 0);
  free(s.b);
}

int main(void) {
  make_wire();
  test_clean_and_repeats();
  test_limits();
  test_nul();
  test_cut_off();
  test_interleaving();
  test_endings();
  free(wire);
  return sks_test_finish();
}
