/* skinsolve — the rig: skeleton, skins, mesh parts, the model that owns them,
 * and weight hygiene (check / repair / limit). */
#ifndef SKINSOLVE_RIG_H
#define SKINSOLVE_RIG_H

#include "common.h"
#include "clip.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Joints in parent-before-child order (parents[i] < i, -1 for roots).
 * Every node of the file's scene graph is a joint, skinned or not, so rigid
 * parts and non-skinned nodes can be walked like any other joint. */
typedef struct sks_skeleton {
  size_t joint_count;
  char **names;         /* joint_count strings (never NULL once loaded) */
  int32_t *parents;     /* joint_count; -1 = root */
  sks_transform *rest;  /* joint_count; rest local transform stored in the file */
} sks_skeleton;

/* A skin binds a set of skeleton joints with their inverse bind matrices.
 * A mesh part's per-vertex joint indices index THIS list (as in glTF). */
typedef struct sks_skin {
  char *name;
  size_t joint_count;
  int32_t *joints;          /* joint_count skeleton joint indices */
  sks_mat4 *inverse_bind;   /* joint_count inverse bind matrices */
} sks_skin;

/* A morph target (glTF's mesh.primitives[].targets[i], Assimp's aiAnimMesh):
 * per-vertex deltas added to the part's base attributes before skinning,
 * scaled by the target's weight (base + sum_i w_i * delta_i). */
typedef struct sks_morph_target {
  char *name;               /* glTF mesh.extras.targetNames[i]; NULL = unnamed */
  float default_weight;     /* glTF mesh.weights[i]: the weight without animation */
  float *position_deltas;   /* 3 * vertex_count, or NULL */
  float *normal_deltas;     /* 3 * vertex_count, or NULL (written only with the normals) */
  float *tangent_deltas;    /* 3 * vertex_count (xyz of the tangent), or NULL */
} sks_morph_target;

/* At most this many morph targets per part: the loaders keep the first
 * SKS_MAX_MORPH_TARGETS and warn about the rest (a hostile file cannot make
 * the import allocate targets * vertices without bound). */
#define SKS_MAX_MORPH_TARGETS 256

/* The seeds' MeshPart: smallest render unit, one material.
 *  - skinned part: skin >= 0, influence_count in 1..8, joints/weights filled;
 *    positions are in bind space (the skin's space): the skinned position is
 *    sum_i w_i * (model[skin.joints[j_i]] * inverse_bind[j_i]) * p.
 *  - rigid part: skin = -1, node = the skeleton joint it follows; positions are
 *    in that node's local space; influence_count = 0.
 * Vertex count and order are exactly as in the file (glTF: accessor order). */
typedef struct sks_mesh_part {
  char *name;
  int32_t material;          /* index into model materials, -1 = none */
  int32_t skin;              /* index into model skins, -1 = rigid */
  int32_t node;              /* skeleton joint holding the mesh (rigid parts follow it) */
  size_t vertex_count;
  float *positions;          /* 3 * vertex_count */
  float *normals;            /* 3 * vertex_count, or NULL */
  float *uvs;                /* 2 * vertex_count, or NULL (UV0) */
  uint32_t influence_count;  /* influence slots per vertex, 0..SKS_MAX_INFLUENCES */
  uint16_t *joints;          /* influence_count * vertex_count, skin joint indices */
  float *weights;            /* influence_count * vertex_count */
  size_t index_count;        /* triangle list, 3 per triangle */
  uint32_t *indices;
  /* Influences lost at load (all zero unless the file gave some vertex more
   * non-zero influences than SKS_MAX_INFLUENCES; the loaders then keep the
   * largest): how many vertices lost some, the first of them, and the most
   * non-zero influences one vertex had in the file. sks_check reports them
   * as too_many_influences warnings. */
  size_t dropped_influence_vertices;
  size_t first_dropped_influence_vertex;
  uint32_t file_max_influences;
  /* 4 * vertex_count tangents (glTF TANGENT: unit xyz in the positions'
   * space, w = +1 or -1 the bitangent's handedness), or NULL. Read from and
   * written to glTF beside the normals (a normal map needs them). */
  float *tangents;
  /* 2 * vertex_count UVs of the second set (glTF TEXCOORD_1: a texture
   * whose tex_coord is 1 samples them), or NULL. */
  float *uvs1;
  /* Morph targets (blend shapes), in the file's order, at most
   * SKS_MAX_MORPH_TARGETS. Vertex order is the part's. */
  size_t morph_target_count;
  sks_morph_target *morph_targets;
} sks_mesh_part;

/* A texture image as the file's bytes (glTF core images: PNG or JPEG). */
typedef struct sks_image {
  char *name;        /* the file's name for it (file name, or "embedded_<i>") */
  char *mime_type;   /* "image/png" or "image/jpeg" */
  size_t size;
  uint8_t *data;
} sks_image;

/* A material's use of an image: glTF's textureInfo with its texture's
 * sampler. The model carries two UV sets (sks_mesh_part.uvs and .uvs1), so
 * tex_coord is 0 or 1 (a texture on another set is left out by the loaders
 * with a warning, and the writer refuses any other value). */
typedef struct sks_texture_ref {
  int32_t image;       /* index into model images, -1 = none */
  int32_t tex_coord;   /* UV set sampled: 0 (uvs) or 1 (uvs1) */
  int32_t mag_filter;  /* glTF sampler enums: 9728 NEAREST, 9729 LINEAR; 0 = unset */
  int32_t min_filter;  /* 9728, 9729, 9984..9987 (the *_MIPMAP_* filters); 0 = unset */
  int32_t wrap_s;      /* 33071 CLAMP_TO_EDGE, 33648 MIRRORED_REPEAT, 10497 REPEAT; 0 = REPEAT */
  int32_t wrap_t;
  /* KHR_texture_transform in glTF's convention (uv' = T(offset) R(rotation)
   * S(scale) uv; rotation in radians, counter-clockwise about the UV
   * origin). has_transform 0: none (the other fields are then ignored);
   * 1: written as the extension on this textureInfo. */
  int32_t has_transform;
  float offset[2];
  float rotation;
  float scale[2];
} sks_texture_ref;

/* The texture slots of glTF's core material and of the KHR_materials_*
 * extensions the model carries. */
typedef enum sks_texture_slot {
  SKS_TEXTURE_BASE_COLOR,          /* pbrMetallicRoughness.baseColorTexture */
  SKS_TEXTURE_METALLIC_ROUGHNESS,  /* pbrMetallicRoughness.metallicRoughnessTexture (B metal, G rough) */
  SKS_TEXTURE_NORMAL,              /* normalTexture (tangent space), scaled by normal_scale */
  SKS_TEXTURE_OCCLUSION,           /* occlusionTexture (R), by occlusion_strength */
  SKS_TEXTURE_EMISSIVE,            /* emissiveTexture (sRGB), times emissive */
  /* The KHR_materials_* extensions' own textures, written inside their
   * extension (only where its bit of sks_material.extensions is set). */
  SKS_TEXTURE_CLEARCOAT,           /* KHR_materials_clearcoat clearcoatTexture (R), times clearcoat */
  SKS_TEXTURE_CLEARCOAT_ROUGHNESS, /* clearcoatRoughnessTexture (G), times clearcoat_roughness */
  SKS_TEXTURE_CLEARCOAT_NORMAL,    /* clearcoatNormalTexture, scaled by clearcoat_normal_scale */
  SKS_TEXTURE_SHEEN_COLOR,         /* KHR_materials_sheen sheenColorTexture (sRGB RGB), times sheen_color */
  SKS_TEXTURE_SHEEN_ROUGHNESS,     /* sheenRoughnessTexture (A), times sheen_roughness */
  SKS_TEXTURE_TRANSMISSION,        /* KHR_materials_transmission transmissionTexture (R) */
  SKS_TEXTURE_THICKNESS,           /* KHR_materials_volume thicknessTexture (G), times thickness */
  SKS_TEXTURE_SLOT_COUNT
} sks_texture_slot;

/* glTF's metallic-roughness material (the subset the writers carry when a
 * model is written from scratch; glTF inputs keep their whole document). */
typedef struct sks_material {
  char *name;
  float base_color[4];       /* linear RGBA factor */
  float metallic;            /* 0..1 */
  float roughness;           /* 0..1, perceptual (glTF's roughnessFactor) */
  int32_t double_sided;      /* 1: no back-face culling */
  float emissive[3];         /* linear RGB emissiveFactor, 0..1 (glTF's default 0) */
  float normal_scale;        /* normalTexture.scale (glTF's default 1) */
  float occlusion_strength;  /* occlusionTexture.strength, 0..1 (default 1) */
  sks_texture_ref textures[SKS_TEXTURE_SLOT_COUNT]; /* by sks_texture_slot; image -1 = none */
  /* KHR_materials_emissive_strength: the emitted colour is emissive *
   * emissive_strength, so an emission brighter than 1 keeps its colour in
   * 0..1 (1 = the extension's default; values <= 1 write no extension). */
  float emissive_strength;
  /* glTF's alphaMode as the file gave it: SKS_ALPHA_UNSET (the writers then
   * use BLEND when base_color[3] < 1, else OPAQUE), or one of the others;
   * alpha_cutoff is alphaCutoff, written with SKS_ALPHA_MASK only. */
  int32_t alpha_mode;
  float alpha_cutoff;
  /* KHR_materials_* factors the file gave: bits of sks_material_extension;
   * the fields of a bit that is not set are 0 and not written. */
  uint32_t extensions;
  float clearcoat;              /* KHR_materials_clearcoat clearcoatFactor, 0..1 */
  float clearcoat_roughness;    /* clearcoatRoughnessFactor, 0..1 */
  float sheen_color[3];         /* KHR_materials_sheen sheenColorFactor, 0..1 */
  float sheen_roughness;        /* sheenRoughnessFactor, 0..1 */
  float transmission;           /* KHR_materials_transmission transmissionFactor, 0..1 */
  float thickness;              /* KHR_materials_volume thicknessFactor, >= 0 */
  float attenuation_distance;   /* attenuationDistance, > 0; 0 = not given (infinite) */
  float attenuation_color[3];   /* attenuationColor, 0..1 */
  float ior;                    /* KHR_materials_ior ior: 0 or >= 1 */
  float clearcoat_normal_scale; /* clearcoatNormalTexture.scale (default 1), finite */
} sks_material;

/* sks_material.alpha_mode */
enum { SKS_ALPHA_UNSET = 0, SKS_ALPHA_OPAQUE = 1, SKS_ALPHA_MASK = 2, SKS_ALPHA_BLEND = 3 };

/* Bits of sks_material.extensions. */
typedef enum sks_material_extension {
  SKS_MATERIAL_CLEARCOAT = 1u << 0,
  SKS_MATERIAL_SHEEN = 1u << 1,
  SKS_MATERIAL_TRANSMISSION = 1u << 2,
  SKS_MATERIAL_VOLUME = 1u << 3,
  SKS_MATERIAL_IOR = 1u << 4,
  SKS_MATERIAL_EXTENSION_MASK = 0x1fu
} sks_material_extension;

/* The largest emissive_strength the loaders and the wire accept. */
#define SKS_MAX_EMISSIVE_STRENGTH 1e6f

/* glTF's defaults: white, metallic 1, roughness 1, emissive 0 (strength 1),
 * normal scale 1, occlusion strength 1, clearcoat normal scale 1, no texture in any slot (image -1, tex_coord 0,
 * sampler fields 0). Name and double_sided are zeroed. */
void sks_material_init(sks_material *mat);

/* 1 when image >= -1, tex_coord is 0 or 1 and every sampler field is 0 or one of
 * the glTF enums listed above for it. */
int sks_texture_ref_valid(const sks_texture_ref *ref);

typedef struct sks_model {
  char *source_path;         /* the file it came from (for messages) */
  sks_skeleton skeleton;
  size_t skin_count;
  sks_skin *skins;
  size_t part_count;
  sks_mesh_part *parts;
  size_t material_count;
  sks_material *materials;
  size_t image_count;
  sks_image *images;
  size_t clip_count;
  sks_clip *clips;
  /* glTF files: the document as read (opaque, owned; freed and copied with
   * the model), so sks_write_glb keeps everything not modelled here and
   * replaces only what changed. NULL for other formats. */
  struct sks_gltf_source *gltf_source;
  /* What the loader left out and why, one line each naming the file
   * ("duck.dae: material 0 'blinn3': texture 'duckCM.tga' is not PNG or
   * JPEG — left out"); the CLI prints them as warnings. */
  size_t warning_count;
  char **warnings;
} sks_model;

/* Frees everything a model owns and zeroes it. Safe on zeroed / partial models. */
void sks_model_free(sks_model *model);

/* Deep copy. */
sks_result sks_model_clone(const sks_model *src, sks_model *dst, sks_error *err);

/* Index of the joint with this name, or -1. */
int32_t sks_skeleton_find(const sks_skeleton *skeleton, const char *name);

/* Body labels of the joints by their names (src/rig/labels.c), written to
 * labels[joint_count]:
 *  - SKS_LABEL_LEFT / SKS_LABEL_RIGHT: the name carries a side token ("l",
 *    "left", "r", "right": 'hand.L', 'upperarm_l', 'L_wrist',
 *    'mixamorig:LeftArm', 'Bip01 L Thigh', 'lShldr') AND the skeleton holds
 *    its mirror twin (the same name with the other side), so a lone
 *    'B_Root_Pelvis_L' is no side;
 *  - SKS_LABEL_HEAD: a token "head" ('Head', 'mixamorig:HeadTop_End'), and
 *    every joint below it (an eye or a jaw is head, whatever its side); a
 *    token "neck", and the joints below it that have no side of their own
 *    (a clavicle under the neck, as in a 3ds Max Biped, keeps its side),
 *    or all of them when no "head" joint lies below the neck (the neck is
 *    then the head: BCN_Epileptic's eyes are its children);
 *  - else the nearest labelled ancestor's (a finger has its hand's side),
 *    or SKS_LABEL_NONE (root, spine, pelvis).
 * The bake reads them to tell apart alignments that a body's symmetry
 * leaves open (README "Alignment finalists"). */
enum { SKS_LABEL_NONE = 0, SKS_LABEL_HEAD = 1, SKS_LABEL_LEFT = 2, SKS_LABEL_RIGHT = 3 };
sks_result sks_skeleton_labels(const sks_skeleton *skeleton, uint8_t *labels, sks_error *err);

/* Total number of vertices over skinned parts (the surface the solver and
 * the .f32 export see, in part order). */
size_t sks_model_vertex_count(const sks_model *model);

/* Axis-aligned bounding-box diagonal of the model's bind pose (skinned parts:
 * bind-space positions; rigid parts: placed by the rest pose). MISSION.md's D. */
double sks_model_bind_diagonal(const sks_model *model);

/* ---- weight hygiene ---------------------------------------------------- */

typedef enum sks_finding_kind {
  SKS_FINDING_WEIGHT_SUM,        /* weights do not sum to 1 */
  SKS_FINDING_WEIGHT_NEGATIVE,
  SKS_FINDING_WEIGHT_NAN,
  SKS_FINDING_WEIGHT_ZERO,       /* all weights zero: cannot normalise */
  SKS_FINDING_JOINT_RANGE,       /* joint index >= skin joint count */
  SKS_FINDING_BIND_SINGULAR,     /* inverse bind matrix not invertible */
  SKS_FINDING_HIERARCHY_CYCLE,
  SKS_FINDING_TOO_MANY_INFLUENCES,
  SKS_FINDING_NONFINITE_POSITION,
  SKS_FINDING_HIERARCHY_ORDER,   /* parent index out of range or not before its child */
  SKS_FINDING_INDEX_RANGE,       /* triangle index >= part vertex count, or bad skin/node index */
  SKS_FINDING_NONFINITE_TRANSFORM, /* a joint's rest translation / rotation / scale is NaN or infinite */
  SKS_FINDING_NONFINITE_KEY,     /* a clip's key time or value (or duration) is NaN or infinite */
  SKS_FINDING_REST_SINGULAR,     /* a weighted joint's rest matrix (from the root) is not invertible */
  SKS_FINDING_KIND_COUNT
} sks_finding_kind;

/* Stable lower_snake_case name of a kind ("weight_sum", ...), for output. */
const char *sks_finding_kind_name(sks_finding_kind kind);

typedef enum sks_severity { SKS_SEVERITY_WARNING, SKS_SEVERITY_ERROR } sks_severity;

typedef struct sks_finding {
  sks_finding_kind kind;
  sks_severity severity;
  int32_t part;     /* mesh part or -1 */
  int64_t vertex;   /* vertex or -1 */
  int32_t joint;    /* skin joint / skeleton joint or -1 */
  char message[256];/* "Fox.glb: part 0 'fox', vertex 812: weights sum to 0 — cannot normalise" */
} sks_finding;

typedef struct sks_findings {
  size_t count;
  sks_finding *items;
  size_t total_by_kind[16]; /* counts even when items were capped */
  size_t error_count;       /* all error-severity findings, even when capped */
  size_t warning_count;
} sks_findings;

typedef struct sks_check_options {
  float sum_tolerance;         /* 0 = 1e-3 */
  uint32_t max_influences;     /* kernel limit, 0 = SKS_MAX_INFLUENCES */
  size_t max_items;            /* cap on stored findings, 0 = 1000 */
} sks_check_options;

sks_result sks_check(const sks_model *model, const sks_check_options *options,
                     sks_findings *out, sks_error *err);

/* What bake needs of a model (target or source), checked before any solve:
 * no error-severity finding of sks_check (weights, joints, binds, hierarchy,
 * non-finite positions / rest transforms / keys). On failure returns
 * SKS_ERR_INVALID with the first finding's message (it names the file),
 * the count, and role ("target" / "source") saying which input it is. */
sks_result sks_model_validate_for_bake(const sks_model *model, const char *role, sks_error *err);
void sks_findings_free(sks_findings *findings);

typedef struct sks_repair_report {
  size_t normalized, negatives_clamped, nans_zeroed, out_of_range_dropped,
      zero_weight_vertices, influences_limited;
} sks_repair_report;

/* Fixes what can be fixed in place: NaN/negative weights -> 0, out-of-range
 * joints dropped, weights renormalised to sum 1 (0.7/0.5 -> 0.583/0.417).
 * All-zero vertices are bound to their part's node joint if it is in the
 * skin, else skin joint 0, and counted. */
sks_result sks_repair(sks_model *model, sks_repair_report *report, sks_error *err);

/* Keeps the max_influences largest weights per vertex and renormalises. */
sks_result sks_limit_influences(sks_model *model, uint32_t max_influences, sks_error *err);

/* glTF TANGENT for a part from its positions, normals, indices and the UV
 * set uv_set (0: uvs, 1: uvs1): per triangle the direction of +u in the
 * triangle's plane (Lengyel), summed per vertex (larger triangles weigh
 * more), made orthogonal to the normal and unit length; w = +1 or -1 the
 * handedness in glTF's convention (bitangent = cross(normal, tangent) * w
 * points along -v of glTF's top-left UV origin, as MikkTSpace with
 * three.js' negateSign gives). A vertex no triangle with a UV area reaches
 * gets a unit vector orthogonal to its normal, w = 1. SKS_ERR_ARGUMENT
 * when the part has no normals, no such UV set or already has tangents. */
sks_result sks_mesh_part_generate_tangents(sks_mesh_part *part, int uv_set, sks_error *err);

/* Generates tangents (above) for every part whose material samples a
 * normal map (normalTexture or KHR_materials_clearcoat's
 * clearcoatNormalTexture) and that has none, from the UV set that map
 * samples; a part without normals or that UV set is left as it is. *count
 * (may be NULL): the parts given tangents. */
sks_result sks_model_generate_needed_tangents(sks_model *model, size_t *count, sks_error *err);

#ifdef __cplusplus
}
#endif
#endif
