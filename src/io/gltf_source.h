/* The glTF document a model was read from, kept in the model (model->gltf_source)
 * so that writing it back keeps everything skinsolve does not model (materials,
 * textures, images, samplers, cameras, lights, extensions, extras, morph
 * targets, the node hierarchy and names) and replaces only what changed.
 * Private to the library (src/io/ and src/rig/model.c). */
#ifndef SKS_IO_GLTF_SOURCE_H
#define SKS_IO_GLTF_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include "skinsolve/rig.h"

typedef struct sks_gltf_source {
  char *json;               /* the original JSON text, NUL-terminated */
  size_t json_len;
  size_t buffer_count;
  uint8_t **buffers;        /* each buffer's byteLength bytes (NULL: could not be read) */
  size_t *buffer_sizes;
  size_t image_count;
  uint8_t **images;         /* bytes of images given by an external uri (else NULL) */
  size_t *image_sizes;
  size_t node_count;
  int32_t *node_joint;      /* glTF node -> skeleton joint (-1: not read) */
  /* Fingerprints of the model as read: the writer replaces what differs. */
  size_t joint_count;
  uint64_t parents_hash;
  uint64_t *joint_name_hash, *joint_rest_hash;        /* joint_count */
  size_t skin_count;
  uint64_t *skin_joints_hash, *skin_ibm_hash;         /* skin_count */
  size_t part_count;
  int32_t *part_mesh, *part_prim;                     /* part -> mesh, primitive */
  size_t *part_vertices;
  uint64_t *part_pos_hash, *part_nrm_hash, *part_uv_hash, *part_infl_hash, *part_idx_hash;
  int32_t *part_material;
  size_t clip_count;
  uint64_t *clip_hash;
  int32_t *clip_anim;   /* clip -> the animation it was read from (NULL: clip i from animation i);
                         * the reader leaves out animations that move nothing of the model */
} sks_gltf_source;

/* FNV-1a over bytes, chained from h (start with SKS_HASH_SEED). */
#define SKS_HASH_SEED 1469598103934665603ull
uint64_t sks_hash_bytes(uint64_t h, const void *data, size_t bytes);

uint64_t sks_hash_joint_rest(const sks_transform *t);
uint64_t sks_hash_parents(const sks_skeleton *sk);
uint64_t sks_hash_string(const char *s);
uint64_t sks_hash_skin_joints(const sks_skin *skin);
uint64_t sks_hash_skin_ibm(const sks_skin *skin);
uint64_t sks_hash_part_positions(const sks_mesh_part *p);
uint64_t sks_hash_part_normals(const sks_mesh_part *p);
uint64_t sks_hash_part_uvs(const sks_mesh_part *p);
uint64_t sks_hash_part_influences(const sks_mesh_part *p);
uint64_t sks_hash_part_indices(const sks_mesh_part *p);
uint64_t sks_hash_clip(const sks_clip *clip);

/* Fills the fingerprints from the model as just read (json, buffers, images,
 * node_joint, part_mesh/part_prim must already be set). 0 on out of memory. */
int sks_gltf_source_snapshot(sks_gltf_source *src, const sks_model *model);

/* Whether a bufferView object of the document lies outside the kept
 * buffers: 1, with why ("lies outside buffer B (S bytes)" or "has no
 * buffer (...)") and its offset and length as read; 0 when inside (an empty
 * view needs no buffer), or when its buffer was not read (that buffer's
 * use has a message of its own). Judged in doubles: a byteLength of 1e300
 * is outside, not "no length"; a missing, negative or NaN offset or
 * length counts 0. The reader warns of such a view (nothing it reads
 * uses it), and the writer then writes the model from scratch. */
struct cJSON;
int sks_gltf_source_view_outside(const sks_gltf_source *src, const struct cJSON *view, double *offset,
                                 double *length, char *why, size_t why_size);

void sks_gltf_source_free(sks_gltf_source *src); /* frees src itself too; NULL ok */
/* Deep copy; NULL on out of memory (or when src is NULL). */
sks_gltf_source *sks_gltf_source_clone(const sks_gltf_source *src);

#endif
