/* Atomic output: write to a temp file in the destination's folder, fsync,
 * then rename over the destination. Readers see either the old file or the
 * complete new one, never a half-written file; on any error nothing is left
 * behind (the temp file is removed and the destination is untouched).
 *
 * Several outputs of one command (bake -o --report) are all-or-nothing
 * (atomic.h): each is staged complete and fsynced first; only when every
 * one is staged are they renamed over their destinations, so a write error
 * in any of them (a full disk, a file size limit) leaves every earlier
 * output as it was.
 *
 * SIGKILL: where the file system supports O_TMPFILE (Linux ext4, xfs,
 * btrfs, tmpfs) the data is written to an unnamed file, which the kernel
 * drops if the process dies; only once every output is complete and
 * fsynced is it linked: straight as NAME when NAME does not exist (no temp
 * name ever), else as ".NAME.tmpXXXXXX" renamed over NAME right away (the
 * two system calls back to back), so a kill leaves at most a complete
 * hidden temp for the instant between that link and rename. Elsewhere a
 * named mkstemp temp is used, as before. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "skinsolve/io.h"
#include "io/atomic.h"

static void staged_release(sks_staged_output *s) {
  if (s->fd >= 0) close(s->fd);
  free(s->path);
  free(s->tmp);
  memset(s, 0, sizeof *s);
  s->fd = -1;
}

/* path is a file name we may replace; s->path / s->tmp ("DIR/.NAME.tmpXXXXXX") set. */
static sks_result staged_init(sks_staged_output *s, const char *path, sks_error *err) {
  memset(s, 0, sizeof *s);
  s->fd = -1;
  if (!path || !*path) return sks_error_set(err, SKS_ERR_ARGUMENT, "no output path given");
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  if (!*base) return sks_error_set(err, SKS_ERR_ARGUMENT, "%s: output path names a folder", path);
  struct stat dst;
  if (stat(path, &dst) == 0 && S_ISDIR(dst.st_mode))
    return sks_error_set(err, SKS_ERR_IO, "%s: is a folder; give a file name to write", path);
  if (stat(path, &dst) == 0 && !S_ISREG(dst.st_mode))
    return sks_error_set(err, SKS_ERR_ARGUMENT,
                         "%s: refusing to replace it: it is not a regular file (a device, FIFO or "
                         "socket)", path);
  size_t n = strlen(path) + 32;
  s->path = strdup(path);
  s->tmp = malloc(n);
  if (!s->path || !s->tmp) { staged_release(s); return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path); }
  size_t dir_len = slash ? (size_t)(slash - path) : 0;
  if (slash)
    snprintf(s->tmp, n, "%.*s/.%s.tmpXXXXXX", (int)dir_len, path, base); /* dir_len 0: "/" */
  else
    snprintf(s->tmp, n, ".%s.tmpXXXXXX", base);
  return SKS_OK;
}

/* The folder of path ("." when none; "/" for "/x"), in buf. */
static const char *dir_of(const char *path, char *buf, size_t cap) {
  const char *slash = strrchr(path, '/');
  if (!slash) return ".";
  size_t dl = slash > path ? (size_t)(slash - path) : 1;
  if (dl >= cap) return NULL;
  memcpy(buf, path, dl);
  buf[dl] = '\0';
  return buf;
}

/* Fills the XXXXXX of s->tmp with a fresh suffix (pid, clock, attempt). */
static void fresh_suffix(char *tmp, unsigned attempt) {
  static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  size_t xs = strlen(tmp) - 6;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  unsigned long v = (unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 12) ^ (attempt * 2654435761ul);
  for (int k = 0; k < 6; ++k) { tmp[xs + (size_t)k] = digits[v % 62]; v /= 62; }
}

sks_result sks_stage_output(sks_staged_output *s, const char *path, const void *data, size_t size,
                            sks_error *err) {
  if (!data && size) { memset(s, 0, sizeof *s); s->fd = -1; return sks_error_set(err, SKS_ERR_ARGUMENT, "%s: no data to write", path); }
  sks_result r = staged_init(s, path, err);
  if (r != SKS_OK) return r;
  char dirbuf[4096];
  const char *dir = dir_of(path, dirbuf, sizeof dirbuf);
  int fd = -1;
#ifdef O_TMPFILE
  if (dir) fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600); /* unnamed until committed */
#endif
  if (fd < 0) { fd = mkstemp(s->tmp); s->named = fd >= 0; }
  if (fd < 0) {
    int e = errno;
    r = sks_error_set(err, SKS_ERR_IO, "%s: cannot create a temporary file beside it: %s", path, strerror(e));
    staged_release(s);
    return r;
  }
  /* Keep the mode of a file we replace; new files get rw-r--r--. */
  struct stat st;
  mode_t mode = (stat(path, &st) == 0) ? (st.st_mode & 07777) : 0644;
  const char *p = data;
  size_t left = size;
  int e = 0;
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      e = errno;
      break;
    }
    p += w;
    left -= (size_t)w;
  }
  if (!e && fchmod(fd, mode) != 0) e = errno;
  if (!e && fsync(fd) != 0) e = errno;
  if (s->named) {
    if (close(fd) != 0 && !e) e = errno;
    fd = -1;
  }
  s->fd = fd;
  if (e) {
    sks_discard_outputs(s, 1);
    return sks_error_set(err, SKS_ERR_IO, "%s: cannot write: %s", path, strerror(e));
  }
  return SKS_OK;
}

/* Gives an unnamed staged file its hidden name (unique by retry). The fd
 * stays open (closed by staged_release, after the rename: nothing between
 * the link and the rename but the rename). */
static int link_unnamed(sks_staged_output *s) {
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", s->fd);
  int e = EEXIST;
  for (unsigned attempt = 0; attempt < 64; ++attempt) {
    fresh_suffix(s->tmp, attempt);
    if (linkat(AT_FDCWD, proc, AT_FDCWD, s->tmp, AT_SYMLINK_FOLLOW) == 0) {
      s->named = 1;
      e = 0;
      break;
    }
    e = errno;
    if (e != EEXIST) break;
  }
  return e;
}

/* A destination that does not exist yet: the unnamed file is linked there
 * directly, so no temp name ever exists (1; 0: it exists, or no link). */
static int link_new(sks_staged_output *s) {
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", s->fd);
  return linkat(AT_FDCWD, proc, AT_FDCWD, s->path, AT_SYMLINK_FOLLOW) == 0;
}

void sks_discard_outputs(sks_staged_output *s, size_t n) {
  for (size_t i = 0; s && i < n; ++i) {
    if (s[i].named && s[i].tmp) unlink(s[i].tmp);
    staged_release(&s[i]);
  }
}

sks_result sks_commit_outputs(sks_staged_output *s, size_t n, sks_error *err) {
  for (size_t i = 0; i < n; ++i)
    if (s[i].fd < 0 && !s[i].named) { /* a path-staged writer did not write */
      sks_result r = sks_error_set(err, SKS_ERR_IO, "%s: cannot write: %s", s[i].path ? s[i].path : "output",
                                   strerror(ENOENT));
      sks_discard_outputs(s, n);
      return r;
    }
  /* Each unnamed file gets its hidden name right before its rename over the
   * destination (same folder: no data moves), so a kill between two outputs'
   * renames leaves no named temp file behind (only the instant between one
   * file's link and rename can). */
  sks_result r = SKS_OK;
  for (size_t i = 0; i < n; ++i) {
    /* Test hook (tests/test_sigkill.sh), read only here: stop between two
     * renames, where a kill leaves the first output new and the rest old. */
    if (i == 1 && r == SKS_OK) {
      const char *pause = getenv("SKS_TEST_PAUSE_BETWEEN_RENAMES");
      if (pause && pause[0] == '1') raise(SIGSTOP);
    }
    int e = 0, direct = r == SKS_OK && s[i].fd >= 0 && !s[i].named && link_new(&s[i]);
    if (r == SKS_OK && !direct && s[i].fd >= 0 && (e = link_unnamed(&s[i])) != 0)
      r = sks_error_set(err, SKS_ERR_IO, "%s: cannot write: %s", s[i].path, strerror(e));
    if (r == SKS_OK && !direct && rename(s[i].tmp, s[i].path) != 0) {
      e = errno;
      r = sks_error_set(err, SKS_ERR_IO, "%s: cannot write: %s", s[i].path, strerror(e));
    }
    if (r != SKS_OK) { sks_discard_outputs(&s[i], 1); continue; }
    /* Make the rename durable; failure here does not undo the write. */
    char dirbuf[4096];
    const char *dir = dir_of(s[i].path, dirbuf, sizeof dirbuf);
    int dfd = dir ? open(dir, O_RDONLY | O_CLOEXEC) : -1;
    if (dfd >= 0) { (void)fsync(dfd); close(dfd); }
    staged_release(&s[i]);
  }
  return r;
}

sks_result sks_write_file_atomic(const char *path, const void *data, size_t size, sks_error *err) {
  sks_staged_output s;
  sks_result r = sks_stage_output(&s, path, data, size, err);
  if (r != SKS_OK) return r;
  return sks_commit_outputs(&s, 1, err);
}
