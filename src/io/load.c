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
#include "io/gltf_read.h"
#include "io/resource.h"

/* Case-insensitive "ends with .ext". */
static int has_extension(const char *path, const char *ext) {
  const char *dot = strrchr(path, '.');
  const char *slash = strrchr(path, '/');
  if (!dot || (slash && dot < slash)) return 0;
  return strcasecmp(dot + 1, ext) == 0;
}

static sks_result load_assimp(const char *path, const sks_load_options *options, sks_model *out,
                              sks_error *err) {
  if (options && options->assimp_in_process)
    return sks_load_assimp_recording(path, options->on_file_read, options->on_file_read_user, out, err);
  return sks_load_assimp_isolated(path, options, out, err);
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
  if (!force_assimp && (has_extension(path, "gltf") || has_extension(path, "glb"))) {
    int draco = 0;
    sks_result r = sks_load_gltf_native(path, options, out, &draco, err);
    if (r != SKS_ERR_UNSUPPORTED || !draco) return r;
    /* Draco-compressed meshes (KHR_draco_mesh_compression): Debian's
     * Assimp decodes them (it links libdraco), so the file is read through
     * it, confined like every Assimp import (files inside the model's
     * folder only), and says so */
    sks_error aerr;
    memset(&aerr, 0, sizeof aerr);
    r = load_assimp(path, options, out, &aerr);
    if (r != SKS_OK) {
      const char *why = aerr.message; /* "path: ..." without the path */
      size_t n = strlen(path);
      if (strncmp(why, path, n) == 0 && why[n] == ':' && why[n + 1] == ' ') why += n + 2;
      return sks_error_set(err, r,
                           "%s: its meshes are Draco-compressed (KHR_draco_mesh_compression), which the native "
                           "glTF reader does not decode, and reading it through Assimp failed: %s",
                           path, why);
    }
    char note[1024];
    snprintf(note, sizeof note,
             "%s: Draco-compressed meshes (KHR_draco_mesh_compression): read through Assimp, which decodes "
             "them; an output is written from what Assimp read (glTF extensions and extras the native reader "
             "keeps are left out)", path);
    if (sks_model_note(out, note)) return SKS_OK;
    sks_model_free(out);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  }
  return load_assimp(path, options, out, err);
}
