/* Atomic output: write to a temp file in the destination's folder, fsync,
 * then rename over the destination. Readers see either the old file or the
 * complete new one, never a half-written file; on any error nothing is left
 * behind (the temp file is removed and the destination is untouched).
 *
 * SIGKILL: where the file system supports O_TMPFILE (Linux ext4, xfs,
 * btrfs, tmpfs) the data is written to an unnamed file, which the kernel
 * drops if the process dies; only once it is complete and fsynced is it
 * linked as ".NAME.tmpXXXXXX" and renamed over NAME, so a kill leaves at
 * most a complete hidden temp for the microseconds between link and
 * rename. Elsewhere a named mkstemp temp is used, as before. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

  /* O_TMPFILE: unnamed until complete (see above). */
  int unnamed = 1;
  char dirbuf[4096];
  const char *dir_for_tmp = ".";
  if (slash) {
    size_t dl = dir_len ? dir_len : 1;
    if (dl < sizeof dirbuf) {
      memcpy(dirbuf, path, dl);
      dirbuf[dl] = '\0';
      dir_for_tmp = dirbuf;
    }
  }
  int fd = -1;
#ifdef O_TMPFILE
  if (!slash || dir_len < sizeof dirbuf) fd = open(dir_for_tmp, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
#endif
  if (fd < 0) { unnamed = 0; fd = mkstemp(tmp); }
  int have_name = !unnamed; /* a name of ours exists (to remove on error) */
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
  if (!e && unnamed) {
    /* Give the complete file a hidden name beside the output: the same
     * pattern mkstemp would use, unique by retry. */
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    size_t xs = strlen(tmp) - 6;
    int linked = 0;
    for (unsigned attempt = 0; attempt < 64 && !linked; ++attempt) {
      static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      unsigned long v = (unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 12) ^ (attempt * 2654435761ul);
      for (int k = 0; k < 6; ++k) { tmp[xs + (size_t)k] = digits[v % 62]; v /= 62; }
      if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0) linked = 1;
      else if (errno != EEXIST) break;
    }
    if (!linked) e = errno ? errno : EEXIST;
    have_name = linked;
  }
  if (close(fd) != 0 && !e) e = errno;
  if (!e && rename(tmp, path) != 0) e = errno;
  if (e) {
    if (have_name) unlink(tmp);
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
