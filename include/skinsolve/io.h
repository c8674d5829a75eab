/* skinsolve — import and export. */
#ifndef SKINSOLVE_IO_H
#define SKINSOLVE_IO_H

#include "common.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sks_load_options {
  int force_assimp;   /* 1: use Assimp even for .gltf/.glb */
  /* Assimp imports run in a child process (fork) under these limits; a
   * crash, abort, hang or limit becomes "file: Assimp failed (...)". */
  int assimp_in_process;      /* 1: import in this process (trusted files only) */
  uint64_t max_memory_bytes;  /* child's address-space limit; 0 = SKS_DEFAULT_MAX_MEMORY */
  double timeout_seconds;     /* child's CPU and wall-clock limit; 0 = SKS_DEFAULT_TIMEOUT */
  /* glTF: total bytes of the external files (buffer and image uris) read
   * for one model; one more file past it fails the load naming that file.
   * 0 = SKS_DEFAULT_MAX_RESOURCE_BYTES. (Each file also has its own cap:
   * a buffer reads byteLength bytes only, an image at most 512 MiB.) */
  uint64_t max_resource_bytes;
  /* Called for every file a load opened, with the path as opened. Assimp
   * imports: isolated, once per distinct file, when the load returns (a
   * failed, crashed or killed import too: the files it opened before);
   * in-process, as each is opened, so a file may be reported twice (the
   * model file, an .obj's .mtl, external textures, files a Collada or .x
   * names...; relative to the working directory when path is). The native
   * glTF reader: the .gltf / .glb itself (path as given), then each
   * external buffer and image file just before it is read, as its real
   * path once its uri passed the confinement; when the load fails, also
   * every buffer and image uri the JSON names that resolves (inside the
   * model's folder) to an existing file, read or not (a file may then be
   * reported twice). A caller that writes files checks
   * them against these (the CLI refuses an output that is one of them).
   * NULL = not told. */
  void (*on_file_read)(void *user, const char *path);
  void *on_file_read_user;
} sks_load_options;

#define SKS_DEFAULT_MAX_MEMORY (2ull << 30)          /* 2 GiB */
#define SKS_DEFAULT_TIMEOUT 30.0                     /* seconds */
#define SKS_DEFAULT_MAX_RESOURCE_BYTES (4ull << 30)  /* 4 GiB */

/* Loads any supported file. .gltf/.glb are read natively (their
 * EXT_meshopt_compression views decoded; one whose extensionsRequired names
 * KHR_draco_mesh_compression, which the native reader does not decode,
 * through Assimp, with a line in model->warnings saying so); everything
 * else (FBX, Collada, X, ...) goes through Assimp, which opens only the
 * model file and files inside its folder. On error *out is left freeable
 * (and freed/zeroed) and err names the file and the problem. */
sks_result sks_load(const char *path, const sks_load_options *options,
                    sks_model *out, sks_error *err);

/* Native glTF 2.0 reader (.gltf with external or data-URI buffers, .glb).
 * sks_load_gltf_with takes options (max_resource_bytes and on_file_read
 * apply; NULL = defaults); sks_load uses it for .gltf / .glb. */
sks_result sks_load_gltf(const char *path, sks_model *out, sks_error *err);
sks_result sks_load_gltf_with(const char *path, const sks_load_options *options, sks_model *out,
                              sks_error *err);
/* From memory; base_dir resolves external buffer URIs (may be NULL). */
sks_result sks_load_gltf_memory(const void *data, size_t size, const char *base_dir,
                                const char *name_for_messages, sks_model *out,
                                sks_error *err);

/* Assimp import (any format Assimp reads).
 *  - Skeleton: every aiNode, pre-order (FBX pivot nodes "*_$AssimpFbx$_*"
 *    included); a bone with no node of its name becomes a joint under the
 *    mesh's node, posed at its bind pose.
 *  - One part per aiMesh, vertices exactly as Assimp gives them (X and FBX
 *    importers emit one vertex per face corner: X/Testwuson.X stores 3,205
 *    positions, Assimp gives 11,196). UV0 uses glTF's top-left origin.
 *  - FBX skinned parts are stored in scene-root space (Assimp's FBX offsets
 *    include the mesh node's transform); skinning results are unchanged.
 *  - More than 8 influences on a vertex: the 8 largest, renormalised.
 *  - Clips: key times = ticks / ticks-per-second (0 means 25), LINEAR. */
sks_result sks_load_assimp(const char *path, sks_model *out, sks_error *err);

/* sks_load_assimp in a child process (what sks_load uses for every
 * non-glTF file): the child runs under RLIMIT_AS = max_memory_bytes,
 * RLIMIT_CPU and a wall-clock deadline of timeout_seconds, no core dump,
 * and sends the model back through a pipe; the parent decodes the bytes
 * as untrusted (every count and index checked). Errors read
 * "file: Assimp failed (signal 11)", "(out of memory past 2 GB)",
 * "(no result in 30 s)"; the child is always killed and reaped. Under
 * AddressSanitizer the limit is max_memory_bytes above the child's mapped
 * address space (ASan's reserved shadow included). */
sks_result sks_load_assimp_isolated(const char *path, const sks_load_options *options, sks_model *out,
                                    sks_error *err);

/* glTF 2.0 binary writer: mesh parts, skins, materials, clips.
 * Every clip with at least one key becomes an animation, so reading the
 * output back gives as many clips; a clip without any track is left out
 * (glTF requires a channel per animation; sks_load_gltf never returns one).
 * Writes to a temp file beside path and renames it into place. */
typedef struct sks_gltf_write_options {
  int embed_normals;  /* 0 = default (write normals when present) */
} sks_gltf_write_options;
sks_result sks_write_glb(const char *path, const sks_model *model,
                         const sks_gltf_write_options *options, sks_error *err);

/* Atomic write helper: writes size bytes to path via temp + rename. */
sks_result sks_write_file_atomic(const char *path, const void *data, size_t size, sks_error *err);

/* Writes skinned positions (3 floats per vertex) as OBJ (with faces from the
 * model's parts) or raw little-endian float32 .f32, chosen by extension. */
sks_result sks_write_positions(const char *path, const sks_model *model,
                               const float *positions, sks_error *err);

#ifdef __cplusplus
}
#endif
#endif
