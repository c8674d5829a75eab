/* Atomic output: write to a temp file in the destination's folder, fsync,
 * then rename over the destination. Readers see either the old file or the
 * complete new one, never a half-written file; on any error nothing is left
 * behind (the temp file is removed and the destination is untouched). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "skinsolve/io.h"

sks_result sks_write_file_atomic(const char *path, const void *data, size_t size, sks_error *err) {
  if (!path || !*path) return sks_error_set(err, SKS_ERR_ARGUMENT, "no output path given");
  if (!data && size) return sks_error_set(err, SKS_ERR_ARGUMENT, "%s: no data to write", path);
  const char *slash = strrchr(path, '/');
  size_t dir_len = slash ? (size_t)(slash - path) : 0;
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
  char *tmp = malloc(n);
  if (!tmp) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  if (slash)
    snprintf(tmp, n, "%.*s/.%s.tmpXXXXXX", (int)dir_len, path, base); /* dir_len 0: "/" */
  else
    snprintf(tmp, n, ".%s.tmpXXXXXX", base);

  int fd = mkstemp(tmp);
  if (fd < 0) {
    int e = errno;
    sks_result r = sks_error_set(err, SKS_ERR_IO, "%s: cannot create a temporary file beside it: %s",
                                 path, strerror(e));
    free(tmp);
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
  if (close(fd) != 0 && !e) e = errno;
  if (!e && rename(tmp, path) != 0) e = errno;
  if (e) {
    unlink(tmp);
    sks_result r = sks_error_set(err, SKS_ERR_IO, "%s: cannot write: %s", path, strerror(e));
    free(tmp);
    return r;
  }
  free(tmp);
  /* Make the rename durable; failure here does not undo the write. */
  char *dir = strndup(path, slash ? (dir_len ? dir_len : 1) : 0);
  if (dir) {
    int dfd = open(slash ? dir : ".", O_RDONLY);
    if (dfd >= 0) { (void)fsync(dfd); close(dfd); }
    free(dir);
  }
  return SKS_OK;
}
