/* Assimp in a child process. Assimp 5.2 crashes (double free, NULL
 * dereferences), aborts on its own assertions, allocates gigabytes for
 * kilobyte files and loops on some: none of that may reach the caller. The
 * child (fork, no exec) gets no core dump, an address-space limit of
 * max_memory above what it inherited, a CPU limit, stdin/stdout/stderr on
 * /dev/null, and dies with its parent; it runs sks_load_assimp and writes
 * records into a pipe:
 *   'F' u32 length, path                       — per distinct file, written
 *                                                as the import opens it
 * then one of
 *   'M' u64 size, model bytes (model_wire.c)   — success
 *   'E' u32 code, u32 length, message          — a clean import error
 *   'O'                                        — ran out of memory
 * (or nothing: it died of a signal or was killed). The parent reads with a
 * wall-clock deadline, bounded by the memory limit, kills and reaps the
 * child whatever happened, and decodes everything as untrusted bytes
 * (child_stream.c, fuzzed by fuzz/fuzz_stream.c); the complete 'F' records
 * it got are reported through on_file_read whether the import succeeded or
 * not, before the load returns. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "skinsolve/io.h"

/* A sanitizer build runs Assimp 3-10x slower: its default deadline scales so
 * a loaded CI machine does not turn a normal import into "no result in 30 s"
 * (seen: Testwuson.X under ASan with two batch workers). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SKS_SANITIZER_SLOWDOWN 6.0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SKS_SANITIZER_SLOWDOWN 6.0
#endif
#endif
#ifndef SKS_SANITIZER_SLOWDOWN
#define SKS_SANITIZER_SLOWDOWN 1.0
#endif
#include "io/model_wire.h"
#include "io/assimp_files.h"
#include "io/child_stream.h"


#if defined(__SANITIZE_ADDRESS__)
#define SKS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SKS_ASAN 1
#endif
#endif
#ifndef SKS_ASAN
#define SKS_ASAN 0
#endif
#if SKS_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

static int write_all(int fd, const void *data, size_t n) {
  const char *p = data;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return 0;
    p += w;
    n -= (size_t)w;
  }
  return 1;
}

/* Address space the process has mapped now (bytes), 0 if unknown. */
static uint64_t current_vm_bytes(void) {
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[64];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  uint64_t pages = 0;
  for (const char *p = buf; *p >= '0' && *p <= '9'; ++p) pages = pages * 10 + (uint64_t)(*p - '0');
  long ps = sysconf(_SC_PAGESIZE);
  return pages * (uint64_t)(ps > 0 ? ps : 4096);
}

/* Child-only state for the fatal-signal handler (the child is single-purpose
 * and exits right after; nothing here is shared with the parent). */
static int child_fd = -1;
static uint64_t child_limit, child_margin;
static const char *child_path;

/* An abort or crash right after an allocation failed (errno ENOMEM, or the
 * address space nearly full) is reported as out of memory; anything else
 * dies of its signal, which the parent reports. Async-signal-safe only. */
static void child_fatal(int sig) {
  int e = errno;
  int oom = e == ENOMEM;
  if (!oom && child_limit) {
    uint64_t vm = current_vm_bytes();
    oom = vm > child_limit - child_margin;
  }
  if (oom && child_fd >= 0) {
    char c = 'O';
    (void)!write(child_fd, &c, 1);
    _exit(3);
  }
  /* SA_RESETHAND | SA_NODEFER: the default action is back and the signal
   * is not blocked, so this kills the child with sig. */
  raise(sig);
  _exit(128 + sig);
}

/* The files the child's import read: each distinct one is written to the
 * pipe as an 'F' record the moment Assimp opens it, so a crash, abort,
 * timeout or memory limit later in the import still leaves the parent the
 * list of the files opened before (the CLI refuses an output naming one).
 * Paths already sent are kept to send each once; at most
 * SKS_CHILD_MAX_FILES distinct files (the parent refuses more). */
typedef struct child_files {
  int fd;
  uint8_t *rec; /* the records sent so far */
  size_t n, cap, count;
  int failed; /* a path could not be sent: the list would not be exact */
} child_files;

static void child_file_read(void *user, const char *path) {
  child_files *c = user;
  size_t len = strlen(path);
  if (!len || len > SKS_CHILD_MAX_PATH) { c->failed = 1; return; }
  for (size_t at = 0; at < c->n;) { /* once each */
    uint32_t l;
    memcpy(&l, c->rec + at + 1, 4);
    if (l == len && memcmp(c->rec + at + 5, path, len) == 0) return;
    at += 5 + l;
  }
  if (c->count >= SKS_CHILD_MAX_FILES) { c->failed = 1; return; }
  uint8_t head[5];
  uint32_t l = (uint32_t)len;
  head[0] = 'F';
  memcpy(head + 1, &l, 4);
  /* sent before the import goes on; kept to send it once (if memory is
   * short it is sent anyway: the parent drops repeats too) */
  if (!write_all(c->fd, head, 5) || !write_all(c->fd, path, len)) _exit(4);
  ++c->count;
  if (c->cap - c->n < 5 + len) {
    size_t nc = c->cap * 2 + 5 + len + 256;
    uint8_t *q = realloc(c->rec, nc);
    if (!q) return;
    c->rec = q;
    c->cap = nc;
  }
  memcpy(c->rec + c->n, head, 5);
  memcpy(c->rec + c->n + 5, path, len);
  c->n += 5 + len;
}

#if SKS_ASAN
/* ASan dies instead of returning NULL when an allocation fails (operator
 * new always does): an out-of-memory report, or one near the limit, is the
 * memory limit; any other report (a memory error in Assimp) is sent as the
 * import's error, "Assimp failed (AddressSanitizer: double-free)". */
static void child_asan_death(void) {
  const char *what = __asan_get_report_description();
  int oom = what && (strstr(what, "out-of-memory") || strstr(what, "allocation-size-too-big") ||
                     strstr(what, "out of memory"));
  if (!oom && child_limit) oom = current_vm_bytes() > child_limit - child_margin;
  if (child_fd < 0) return;
  if (oom) {
    char c = 'O';
    (void)!write(child_fd, &c, 1);
    _exit(3);
  }
  if (what && what[0]) {
    char msg[512];
    int n = snprintf(msg, sizeof msg, "%s: Assimp failed (AddressSanitizer: %s)", child_path ? child_path : "file",
                     what);
    if (n < 0) return;
    uint32_t len = (uint32_t)((size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    uint32_t code = (uint32_t)SKS_ERR_PARSE;
    char tag = 'E';
    if (write_all(child_fd, &tag, 1) && write_all(child_fd, &code, 4) && write_all(child_fd, &len, 4) &&
        write_all(child_fd, msg, len))
      _exit(3);
  }
}
#endif

static void child_run(const char *path, int fd, uint64_t max_memory, double timeout) {
#if defined(__linux__)
  prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
  int dn = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (dn >= 0) { dup2(dn, 0); dup2(dn, 1); dup2(dn, 2); }
  struct rlimit rl = {0, 0};
  setrlimit(RLIMIT_CORE, &rl);
  rlim_t cpu = (rlim_t)ceil(timeout);
  rl.rlim_cur = cpu;
  rl.rlim_max = cpu + 1;
  setrlimit(RLIMIT_CPU, &rl);
  /* The limit is max_memory above what the child has mapped now: under
   * ASan that includes its terabytes of reserved shadow, so the same delta
   * holds (an allocation past it makes ASan die: child_asan_death). */
  uint64_t base = current_vm_bytes();
  if (base) {
    child_limit = base + max_memory;
    child_margin = SKS_ASAN ? max_memory / 16 : child_limit / 16;
    rl.rlim_cur = rl.rlim_max = (rlim_t)child_limit;
    setrlimit(RLIMIT_AS, &rl);
  }
  child_fd = fd;
  child_path = path;
#if SKS_ASAN
  __sanitizer_set_death_callback(child_asan_death);
#endif
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = child_fatal;
  sa.sa_flags = SA_RESETHAND | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGABRT, &sa, NULL);
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
  sigaction(SIGFPE, &sa, NULL);

  sks_model m;
  sks_error err;
  memset(&err, 0, sizeof err);
  child_files files = {fd, NULL, 0, 0, 0, 0};
  sks_result r = sks_load_assimp_recording(path, child_file_read, &files, &m, &err);
  if (r == SKS_OK && files.failed)
    r = sks_error_set(&err, SKS_ERR_IO, "%s: Assimp import: cannot keep the list of the files it read", path);
  uint8_t *bytes = NULL;
  size_t size = 0;
  if (r == SKS_OK) r = sks_model_wire_encode(&m, &bytes, &size, &err);
  if (r == SKS_OK) {
    char tag = 'M';
    uint64_t n = size;
    if (!write_all(fd, &tag, 1) || !write_all(fd, &n, sizeof n) || !write_all(fd, bytes, size))
      _exit(4);
    _exit(0);
  }
  int oom = r == SKS_ERR_OUT_OF_MEMORY || strstr(err.message, "bad_alloc") || strstr(err.message, "out of memory");
  if (oom) {
    char c = 'O';
    (void)!write(fd, &c, 1);
    _exit(3);
  }
  char tag = 'E';
  uint32_t code = (uint32_t)r, len = (uint32_t)strnlen(err.message, sizeof err.message - 1);
  if (!write_all(fd, &tag, 1) || !write_all(fd, &code, 4) || !write_all(fd, &len, 4) ||
      !write_all(fd, err.message, len))
    _exit(4);
  _exit(0);
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

sks_result sks_load_assimp_isolated(const char *path, const sks_load_options *options, sks_model *out,
                                    sks_error *err) {
  if (!out) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_load_assimp_isolated: out is NULL");
  memset(out, 0, sizeof *out);
  if (!path) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_load_assimp_isolated: path is NULL");
  uint64_t max_memory = options && options->max_memory_bytes ? options->max_memory_bytes : SKS_DEFAULT_MAX_MEMORY;
  double timeout = options && options->timeout_seconds > 0 && isfinite(options->timeout_seconds)
                       ? options->timeout_seconds
                       : SKS_DEFAULT_TIMEOUT * SKS_SANITIZER_SLOWDOWN;
  if (timeout > 1e6) timeout = 1e6;

  int pfd[2];
  if (pipe2(pfd, O_CLOEXEC) != 0)
    return sks_error_set(err, SKS_ERR_IO, "%s: cannot start the Assimp import process: pipe: %s", path,
                         strerror(errno));
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(pfd[0]);
    close(pfd[1]);
    return sks_error_set(err, SKS_ERR_IO, "%s: cannot start the Assimp import process: fork: %s", path,
                         strerror(e));
  }
  if (pid == 0) {
    close(pfd[0]);
    child_run(path, pfd[1], max_memory, timeout);
    _exit(5);
  }
  close(pfd[1]);

  /* Read everything the child sends, up to the memory limit, until EOF or
   * the deadline. */
  uint8_t *buf = NULL;
  size_t n = 0, cap = 0;
  int timed_out = 0, too_big = 0, io_fail = 0;
  const double deadline = now_seconds() + timeout;
  for (;;) {
    double left = deadline - now_seconds();
    if (left <= 0) { timed_out = 1; break; }
    struct pollfd p = {pfd[0], POLLIN, 0};
    int pr = poll(&p, 1, left > 1e5 ? 100000000 : (int)ceil(left * 1000.0));
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) { io_fail = 1; break; }
    if (pr == 0) continue;
    if (n == cap) {
      if (cap >= max_memory + 64) { too_big = 1; break; }
      size_t nc = cap ? 2 * cap : 65536;
      uint8_t *q = realloc(buf, nc);
      if (!q) { io_fail = 1; break; }
      buf = q;
      cap = nc;
    }
    ssize_t r = read(pfd[0], buf + n, cap - n);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r < 0) { io_fail = 1; break; }
    if (r == 0) break;
    n += (size_t)r;
  }
  /* Whatever happened, the child goes: killing one that already exited is
   * harmless (it is a zombie until reaped). */
  if (timed_out || too_big || io_fail) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  /* Past the deadline, what the child wrote before it was killed (a file
   * it opened at the last moment) is still in the pipe: taken without
   * waiting, into the room the buffer has. */
  if (timed_out && !cap && (buf = malloc(65536)) != NULL) cap = 65536;
  if (timed_out && fcntl(pfd[0], F_SETFL, O_NONBLOCK) == 0) {
    while (n < cap) {
      ssize_t r = read(pfd[0], buf + n, cap - n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      n += (size_t)r;
    }
  }
  close(pfd[0]);

  /* Decoded as untrusted bytes (child_stream.c): the 'F' records reach
   * on_file_read whatever happened after them. */
  sks_child_end end = {timed_out, too_big, io_fail, WIFSIGNALED(status) ? WTERMSIG(status) : 0,
                       WIFEXITED(status) ? WEXITSTATUS(status) : -1, timeout, max_memory};
  sks_result res = sks_child_stream_decode(buf, n, &end, path, options ? options->on_file_read : NULL,
                                           options ? options->on_file_read_user : NULL, out, err);
  free(buf);
  return res;
}
