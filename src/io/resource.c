/* Confined resolution and bounded reads of the files a model refers to. */
#define _XOPEN_SOURCE 700
#include "resource.h"
#include "skinsolve/rig.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int hex_digit(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

/* 1 when `path` is `root` or inside it (both real paths). */
static int is_inside(const char *root, const char *path) {
  size_t n = strlen(root);
  if (n == 1 && root[0] == '/') return 1;
  return strncmp(root, path, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

sks_result sks_resource_resolve(const char *base_dir, const char *root, const char *uri,
                                const char *name, const char *what, char **out_path,
                                sks_error *err) {
  *out_path = NULL;
  if (!base_dir)
    return sks_error_set(err, SKS_ERR_IO, "%s: %s uri '%s': external file but no folder to find it in",
                         name, what, uri);
  size_t ulen = strlen(uri);
  if (ulen == 0) return sks_error_set(err, SKS_ERR_PARSE, "%s: %s uri is empty", name, what);
  /* a scheme ("file:", "http:", "C:") is never a relative reference */
  for (size_t i = 0; i < ulen; ++i) {
    char ch = uri[i];
    if (ch == ':')
      return sks_error_set(err, SKS_ERR_UNSUPPORTED,
                           "%s: %s uri '%.200s' is not a relative file name (only files beside the "
                           "model are read)", name, what, uri);
    if (ch == '/' || ch == '?' || ch == '#') break;
  }
  char *dec = malloc(ulen + 1);
  if (!dec) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  size_t p = 0;
  for (size_t i = 0; i < ulen; ++i) {
    int h1, h2;
    if (uri[i] == '%' && i + 2 < ulen &&
        (h1 = hex_digit(uri[i + 1])) >= 0 && (h2 = hex_digit(uri[i + 2])) >= 0) {
      dec[p++] = (char)(h1 * 16 + h2);
      i += 2;
    } else {
      dec[p++] = uri[i];
    }
  }
  dec[p] = '\0';
  const char *why = NULL;
  if (strlen(dec) != p) why = "holds a NUL byte";
  else if (dec[0] == '/') why = "is an absolute path";
  else if (strchr(dec, '\\')) why = "holds a backslash";
  /* walk the segments: ".." may not climb above the model's folder */
  long depth = 0;
  for (const char *s = dec; !why && *s;) {
    const char *e = strchr(s, '/');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    if (n == 2 && s[0] == '.' && s[1] == '.') {
      if (--depth < 0) why = "leaves the model's folder";
    } else if (!(n == 0 || (n == 1 && s[0] == '.'))) {
      ++depth;
    }
    s += n + (e ? 1 : 0);
  }
  if (why) {
    sks_result r = sks_error_set(err, SKS_ERR_UNSUPPORTED,
                                 "%s: %s uri '%.200s' %s: refused (only files inside the model's "
                                 "folder are read)", name, what, uri, why);
    free(dec);
    return r;
  }
  size_t blen = strlen(base_dir);
  char *joined = malloc(blen + p + 2);
  if (!joined) { free(dec); return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", name); }
  memcpy(joined, base_dir, blen);
  size_t j = blen;
  if (blen && joined[blen - 1] != '/') joined[j++] = '/';
  memcpy(joined + j, dec, p + 1);
  free(dec);

  char *real_root = realpath(root ? root : base_dir, NULL);
  if (!real_root) {
    int e = errno;
    sks_result r = sks_error_set(err, SKS_ERR_IO, "%s: %s uri '%.200s': cannot resolve the folder '%s': %s",
                                 name, what, uri, root ? root : base_dir, strerror(e));
    free(joined);
    return r;
  }
  char *real = realpath(joined, NULL);
  if (!real) {
    int e = errno;
    sks_result r = sks_error_set(err, SKS_ERR_IO, "%s: cannot open %s file '%s': %s", name, what,
                                 joined, strerror(e));
    free(joined);
    free(real_root);
    return r;
  }
  free(joined);
  if (!is_inside(real_root, real)) {
    sks_result r = sks_error_set(err, SKS_ERR_UNSUPPORTED,
                                 "%s: %s uri '%.200s' leads outside the model's folder (to %s, through "
                                 "a link): refused", name, what, uri, real);
    free(real);
    free(real_root);
    return r;
  }
  free(real_root);
  *out_path = real;
  return SKS_OK;
}

sks_result sks_resource_read(const char *path, size_t max_bytes, size_t limit, uint8_t **data,
                             size_t *size, const char *name, const char *what, sks_error *err) {
  *data = NULL;
  *size = 0;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return sks_error_set(err, SKS_ERR_IO, "%s: cannot open %s '%s': %s", name, what, path,
                         strerror(errno));
  struct stat st;
  int stat_ok = fstat(fd, &st) == 0;
  if (!stat_ok || !S_ISREG(st.st_mode)) {
    int dir = stat_ok && S_ISDIR(st.st_mode);
    close(fd);
    return sks_error_set(err, SKS_ERR_IO, "%s: %s '%s' is %s", name, what, path,
                         dir ? "a folder, not a file (the exporter wrote no file name)" : "not a regular file");
  }
  size_t n = (size_t)st.st_size;
  if (max_bytes == SIZE_MAX && n > limit) {
    close(fd);
    *size = n; /* the caller may say which limit it was */
    return sks_error_set(err, SKS_ERR_UNSUPPORTED, "%s: %s '%s' is %zu bytes, over the %zu-byte limit",
                         name, what, path, n, limit);
  }
  if (n > max_bytes) n = max_bytes;
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf) {
    close(fd);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory reading %s '%s' (%zu bytes)",
                         name, what, path, n);
  }
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  if (got != n) {
    free(buf);
    return sks_error_set(err, SKS_ERR_IO, "%s: could not read %s '%s' (%zu of %zu bytes)", name,
                         what, path, got, n);
  }
  *data = buf;
  *size = n;
  return SKS_OK;
}

const char *sks_image_mime(const uint8_t *d, size_t n) {
  static const uint8_t png[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  if (!d) return NULL;
  if (n >= 8 && memcmp(d, png, 8) == 0) return "image/png";
  if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) return "image/jpeg";
  return NULL;
}

int sks_model_note(struct sks_model *model, const char *line) {
  char **w = realloc(model->warnings, (model->warning_count + 1) * sizeof *w);
  if (!w) return 0;
  model->warnings = w;
  size_t n = strlen(line) + 1;
  char *copy = malloc(n);
  if (!copy) return 0;
  memcpy(copy, line, n);
  w[model->warning_count++] = copy;
  return 1;
}
