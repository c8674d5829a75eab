/* sks_load: one entry point for every supported file. .gltf/.glb go to the
 * native glTF reader (unless options ask for Assimp), everything else to
 * Assimp. Checks up front that the path is a readable regular file, so the
 * user gets "cannot open" instead of a format error. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "skinsolve/io.h"
#include "io/assimp_files.h"

/* Case-insensitive "ends with .ext". */
static int has_extension(const char *path, const char *ext) {
  const char *dot = strrchr(path, '.');
  const char *slash = strrchr(path, '/');
  if (!dot || (slash && dot < slash)) return 0;
  return strcasecmp(dot + 1, ext) == 0;
}

sks_result sks_load(const char *path, const sks_load_options *options, sks_model *out,
                    sks_error *err) {
  if (out) memset(out, 0, sizeof *out);
  if (!path || !path[0]) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_load: no file name given");
  if (!out) return sks_error_set(err, SKS_ERR_ARGUMENT, "%s: sks_load: out is NULL", path);

  struct stat st;
  if (stat(path, &st) != 0)
    return sks_error_set(err, SKS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode))
    return sks_error_set(err, SKS_ERR_IO, "%s: cannot open: is a directory", path);
  if (!S_ISREG(st.st_mode))
    return sks_error_set(err, SKS_ERR_IO, "%s: cannot open: not a regular file (a device, FIFO or socket)",
                         path);
  /* non-blocking: the file may have been swapped for a FIFO since stat */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return sks_error_set(err, SKS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  close(fd);
  if (S_ISREG(st.st_mode) && st.st_size == 0)
    return sks_error_set(err, SKS_ERR_PARSE, "%s: the file is empty", path);

  int force_assimp = options && options->force_assimp;
  if (!force_assimp && (has_extension(path, "gltf") || has_extension(path, "glb")))
    return sks_load_gltf_with(path, options, out, err);
  if (options && options->assimp_in_process)
    return sks_load_assimp_recording(path, options->on_file_read, options->on_file_read_user, out, err);
  return sks_load_assimp_isolated(path, options, out, err);
}
