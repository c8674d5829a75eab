/* skinsolve — surface-solve bake (seed 003, MISSION.md): record the source's
 * skinned surface, map it to the target's vertices, and solve per frame the
 * target joints' transforms so the target's own skinning reproduces it. */
#ifndef SKINSOLVE_SOLVE_H
#define SKINSOLVE_SOLVE_H

#include "common.h"
#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sks_solve_mode {
  SKS_SOLVE_FREE = 0,          /* rotation + translation per joint */
  SKS_SOLVE_ROTATION_ONLY,     /* local translations fixed to the rig's rest offsets (root free) */
  SKS_SOLVE_BOTH               /* sks_bake options only: each clip in both modes (free, then
                                  rotation-only), side by side in the result */
} sks_solve_mode;

typedef enum sks_solver_kind {
  SKS_SOLVER_DEFAULT = 0,      /* the fastest method that passes the control */
  SKS_SOLVER_BCD               /* the seed's block coordinate descent with Horn fits */
} sks_solver_kind;

typedef enum sks_correspondence_kind {
  SKS_CORRESPOND_AUTO = 0,     /* identical rest vertices -> identity, else closest point */
  SKS_CORRESPOND_NEAREST_VERTEX,
  SKS_CORRESPOND_CLOSEST_POINT
} sks_correspondence_kind;

struct sks_baked_clip; /* below */

typedef enum sks_align_mode {
  SKS_ALIGN_AUTO = 0,          /* find the similarity between the bind surfaces (identity when
                                  they already agree) */
  SKS_ALIGN_NONE               /* take both files' bind spaces as they are */
} sks_align_mode;

typedef void (*sks_progress_fn)(void *user, const char *clip, size_t frame, size_t frame_count);

typedef struct sks_bake_options {
  const char *const *clip_names;  /* NULL / 0 = every clip of the source; each name as
                                     sks_clip_find_loose finds it */
  size_t clip_name_count;
  sks_solve_mode mode;
  size_t max_constraints;         /* 0 = 5000 */
  float fps;                      /* 0 = union of the clip's key times */
  sks_solver_kind solver;
  sks_correspondence_kind correspondence;
  int keep_surfaces;              /* 1: fill per-frame surfaces/errors in the result (report) */
  sks_progress_fn progress;       /* optional */
  void *progress_user;
  sks_align_mode align;           /* 0 = auto */
  /* optional: called as each clip finishes (its metrics filled in), so a
   * caller can report clip by clip; the clip belongs to the result */
  void (*clip_done)(void *user, const struct sks_baked_clip *clip);
  void *clip_done_user;
  /* Threads the clips of a bake are solved on (0 = every online CPU, 1 =
   * serial). Whole clips (and modes) run at once, one per thread, each
   * solved exactly as the serial bake solves it (the same bits); a clip that
   * alone is more than a thread's share of the remaining frames, and has at
   * least 24 frames per thread, is cut instead: its frames split into
   * contiguous chunks, one per thread, each
   * solved from 12 frames before its first (cold, as a clip starts, then warm
   * starts; those frames only warm it up); recording and metrics run in the
   * same chunks. A chunk whose warm-up did not end within 1e-10 D of the
   * chunk before's end state is solved again from that state, after it
   * (sks_baked_clip.chunks_resolved). Per-frame and clip errors agree with
   * the serial bake to 1e-6 % D (test_bake_threads, test_bake); the same
   * count gives the same result bit for bit. Callbacks are called on the
   * calling thread only, clip by clip in clip order, as in the serial bake:
   * progress sees every frame 0..F-1 once, in order, then F, then the
   * clip's clip_done (live, frame k once k frames are finished, for a clip
   * whose clips before are reported; for a clip solved beside others, all
   * of them when it is done). */
  unsigned threads;
  /* The refusal limit (0 = SKS_BAKE_RESIDUAL_LIMIT_PCT, 8): after alignment
   * and correspondence, a pair whose target vertices are on average farther than this (% of the
   * target's bind diagonal D) from the source surface is refused
   * (SKS_ERR_INVALID, the distance in the message). A larger limit bakes
   * such a pair; sks_bake_alignment.over_default_limit then says the two
   * bodies differ beyond the default (CLI --max-residual PCT). */
  double max_residual_pct;
} sks_bake_options;

/* ---- diagnosis: the residual attributed to joints (src/solve/diagnose.c) ---- */

/* Every measured target vertex (skinned parts in part order, then rigid
 * parts in part order: the bake's vertex order) belongs to its dominant
 * joint: the joint with the largest played weight (weights normalised as
 * played, duplicate slots of one joint summed; ties: lowest joint index); a
 * rigid part's vertices belong to the joint the part follows. A joint's share
 * is the part of the clip's residual sum_fj e_fj (MISSION.md) that falls on
 * the vertices it dominates:
 *   share_b = sum_f sum_{j dominated by b} e_fj / sum_fj e_fj,
 * so share_b * (1 - quality) is the quality that joint's region costs. */
typedef struct sks_joint_diagnosis {
  int32_t joint;                  /* skeleton joint */
  size_t vertex_count;            /* vertices it dominates */
  double share;                   /* fraction of the clip's total residual (0..1) */
  double mean_error_pct;          /* mean e over its vertices and frames / D * 100 */
  double worst_error_pct;         /* max e / D * 100 over its vertices and frames */
  size_t worst_vertex;            /* that vertex (the bake's vertex order) */
  size_t worst_frame;             /* and frame */
} sks_joint_diagnosis;

typedef struct sks_diagnosis {
  size_t joint_count;             /* dominating joints only, sorted by share, largest first
                                     (ties: lowest joint index) */
  sks_joint_diagnosis *joints;
  double total_error;             /* sum_fj e_fj (model units) */
  size_t vertex_count;            /* vertices measured */
  size_t unattributed_vertex_count; /* vertices without any played weight (no dominant joint) */
  double unattributed_share;      /* their part of the residual: shares + this sum to 1 */
} sks_diagnosis;

/* The dominant joint (as above) of each of the model's count first measured
 * vertices (the bake's vertex order; -1: no played weight). count may be at
 * most the bake's measured vertex count; sks_model_vertex_count(model) gives
 * the skinned vertices, the report's mesh. */
sks_result sks_dominant_joints(const sks_model *model, int32_t *out, size_t count, sks_error *err);

/* From kept surfaces: solved, y: frame_count * V * 3 floats
 * (sks_baked_clip.solved_surface and .target_surface), V =
 * sks_model_vertex_count(target) (skinned parts). Every bake fills
 * sks_baked_clip.diagnosis itself, over ALL measured vertices. */
sks_result sks_diagnose(const sks_model *target, const float *solved, const float *y,
                        size_t frame_count, double diagonal, sks_diagnosis *out, sks_error *err);
void sks_diagnosis_free(sks_diagnosis *d);

typedef struct sks_baked_clip {
  char *name;
  sks_solve_mode mode;
  size_t frame_count;
  float *times;                   /* frame_count seconds */
  size_t joint_count;             /* target skeleton joints */
  sks_transform *locals;          /* frame_count * joint_count solved local transforms */
  /* Metrics (MISSION.md), over ALL target vertices: */
  double quality;                 /* 1 - sum e / sum m (fraction, not percent); NaN when the
                                     clip does not move (mean m < 1e-5 D): nothing to transfer */
  double mean_error_pct;          /* mean e / D * 100 */
  double worst_error_pct;         /* max e / D * 100 */
  double solve_ms;                /* CPU time of the solver + local conversion, summed over the
                                     threads (not the source recording, not the metrics) */
  double sweeps_per_frame;        /* mean solver iterations per frame (--solver bcd: sweeps,
                                     plus LM iterations on the frames below) */
  float *frame_mean_error_pct;    /* frame_count */
  float *frame_worst_error_pct;   /* frame_count */
  /* With keep_surfaces (else NULL). V = target vertex count (skinned parts, part order). */
  float *target_surface;          /* frame_count * V * 3: y_fj, the source surface at target vertices */
  float *solved_surface;          /* frame_count * V * 3: skinned target with solved transforms */
  float *vertex_error;            /* frame_count * V: e_fj in model units */
  double mean_motion_pct;         /* mean m / D * 100 */
  int suspect;                    /* 1: the numbers contradict each other (mean error > 5 %D,
                                     worst > 50 %D or quality < 0): the pair or its alignment is
                                     wrong; never report such a clip as fine */
  sks_diagnosis diagnosis;        /* the residual per dominant joint, every measured vertex
                                     and frame (freed with the result) */
  size_t chunk_count;             /* the frame chunks solved at once (sks_bake_options.threads) */
  size_t chunks_resolved;         /* of which solved again from the chunk before, after it,
                                     because their lead-in did not arrive at its end state */
  /* Morph weights carried onto the target (README "Morph targets in a bake"):
   * one track per target mesh node whose morph targets are named like the
   * source's the clip animates (target node, target weight order; the source's
   * keys as they were without --fps, else sampled at the frame times). The
   * solve and the metrics play them; sks_bake_apply writes them. */
  size_t morph_track_count;
  sks_morph_track *morph_tracks;
  /* With keep_surfaces, the same three for the rigid parts' vertices (else
   * NULL; NULL too when the target has none): R = sks_bake_result
   * .rigid_vertex_count, rigid parts in part order (the bake's vertex order
   * puts them after the skinned ones), same spaces and units as above. */
  float *rigid_target_surface;    /* frame_count * R * 3 */
  float *rigid_solved_surface;    /* frame_count * R * 3 */
  float *rigid_vertex_error;      /* frame_count * R */
  size_t bcd_polished_frames;     /* --solver bcd: frames finished by the default LM from the
                                     sweeps' answer (the sweeps ran out or gave up before their
                                     stop rule, or the clip keys 3-axis scale; README) */
  size_t bcd_unconverged_frames;  /* of which LM could not run either: the frame keeps the
                                     unconverged sweeps' answer (the CLI warns, naming the clip) */
  size_t retried_frames;          /* frames solved again from per-bone fits because their
                                     residual came out > 10x the previous frame's + 1e-7 D
                                     (a warm start that did not arrive; README "Cold start") */
} sks_baked_clip;

/* The default refusal limit of a pair: mean distance of the target's vertices
 * from the aligned source surface, % of the target's bind diagonal D
 * (sks_bake_options.max_residual_pct). 8: the 42 ordered pairs of seven
 * real human rigs fall at 0-7.4 % (README "Refusal line"); a bending
 * cylinder or a grid of boxes onto a human, or the reverse, at 8.1-34 %. */
#define SKS_BAKE_RESIDUAL_LIMIT_PCT 8.0

/* What the alignment stage found (MISSION.md: A, source bind space -> target
 * bind space). */
/* The most alignment candidates a bake tries on trial (sks_bake_alignment's
 * finalist arrays): 3 registered ones and the similarity alone. */
#define SKS_BAKE_FINALISTS 4
/* A finalist whose joints' names agree on the head this much less than
 * another's is not baked (sks_bake_alignment.finalist_head_agreement). */
#define SKS_BAKE_HEAD_GAP 0.3
/* ... and one whose head points more than acos(SKS_BAKE_UP_COS) (60 deg)
 * from the target's while another's does not
 * (sks_bake_alignment.finalist_up_deg). */
#define SKS_BAKE_UP_COS 0.5
/* ... and, among the rest, one whose feet point back (over 90 deg from the
 * target's across its up: turned a half turn) while another's are within
 * acos(SKS_BAKE_FACE_COS) (60 deg) (sks_bake_alignment.finalist_facing_deg). */
#define SKS_BAKE_FACE_COS 0.5

typedef struct sks_bake_alignment {
  int identity;                   /* 1: the two bind surfaces already agreed (or --align none) */
  int applied;                    /* 1: a similarity was found and used */
  double scale;                   /* uniform scale of A */
  double angle_deg;               /* rotation angle of A (a mirror: see mirrored) */
  double offset[3];               /* translation of A (target bind units) */
  double residual_pct;            /* mean distance target vertex -> aligned source surface, % D */
  size_t hypotheses;              /* rotations tried */
  int registered;                 /* 1: the bind poses differ; the source was posed by its own
                                     rig to match the target's bind surface (pose P) */
  double similarity_residual_pct; /* the mean distance before that registration, % D */
  size_t limb_rematched;          /* target vertices whose closest point lay on another limb of
                                     the source, given the closest point on their own (two bodies) */
  double seconds;                 /* wall time of the stage (similarity, registration, correspondence) */
  int same_surface;               /* 1: the same surface re-welded or re-ordered (every vertex of
                                     either on one of the other's): A fitted to the coinciding
                                     vertices, exact */
  int subset;                     /* 1: one side's vertices are some of the other's (a decimated
                                     copy, or parts dropped): A fitted to the coinciding vertices,
                                     exact, and no registration */
  /* Two bodies whose alignment candidates fit the target's bind surface
   * about as well (registered ones that came within 90 % of the similarity's
   * distance, and the similarity alone while none came within 70 %): each
   * is baked on every clip at 5 fps (a trial), and the registration's own
   * choice stands unless another's pooled quality is 0.2 point higher, or
   * it was refused (README "Alignment finalists"; bake.c pick_by_trial).
   * finalists 0: no such choice (the arrays are then unused). */
  size_t finalists;               /* candidates baked on trial (0, or 2 to SKS_BAKE_FINALISTS) */
  size_t finalist_registration;   /* the one the registration chose (index) */
  size_t finalist_chosen;         /* the one kept (index) */
  double trial_quality[SKS_BAKE_FINALISTS];        /* each one's pooled quality at 5 fps (fraction); NaN if it did
                                     not bake (refused: its vertices too far from the source) */
  int finalist_registered[SKS_BAKE_FINALISTS];     /* 1: posed by the registration; 0: the similarity alone */
  double finalist_scale[SKS_BAKE_FINALISTS];       /* each one's similarity: scale, */
  double finalist_angle_deg[SKS_BAKE_FINALISTS];   /* and rotation angle */
  int over_default_limit;         /* 1: residual_pct is over the default refusal limit (8 % D):
                                     baked only because sks_bake_options.max_residual_pct
                                     allowed it; the two bind surfaces differ that much */
  int mirrored;                   /* 1: A is a mirror (det < 0): the two bind spaces' handedness
                                     differs (an export between left- and right-handed axes);
                                     angle_deg is then the turn about the mirror plane's normal */
  /* What the joints' names say of the correspondence (sks_skeleton_labels):
   * label_agreement: the share of the target's vertices labelled head, left
   * or right whose corresponding source point has the same label (1: every
   * limb on its namesake; ~0: the source turned a half turn, on its side or
   * upside down); head_agreement: the same among those where either is the
   * head (low: a limb on the head, the head on a limb). NaN when the names
   * tell nothing (under 5 % of the vertices so labelled on both sides).
   * A finalist whose head_agreement is SKS_BAKE_HEAD_GAP under another's is
   * not baked (README "Alignment finalists"); sides are reported, not
   * decided on (some rigs name them from the viewer). */
  double label_agreement, head_agreement;
  double finalist_label_agreement[SKS_BAKE_FINALISTS];
  double finalist_head_agreement[SKS_BAKE_FINALISTS];
  /* The angle between the head's directions (the head-labelled vertices'
   * centroid minus all vertices' centroid) of the aligned, registered
   * source and of the target, degrees: ~0 upright on the target, ~90 on
   * its side, ~180 upside down, whatever the bodies' proportions; NaN when
   * either rig names no head. A finalist over 60 deg while another is
   * under is not baked. */
  double up_deg;
  double finalist_up_deg[SKS_BAKE_FINALISTS];
  /* The angle between the ways the feet point (the bones in the bottom
   * 15 % of the body's height, ankle to toes, taken across the target's
   * up) of the aligned, registered source and of the target, degrees: ~0
   * facing the target's way, ~180 turned a half turn about its up. NaN
   * when either's feet and knees tell nothing (no head named, foot bones
   * under 3 % of the height and knees straight: facing_by_knees). Among
   * finalists the names keep, one over 90 deg while another is within 60
   * is not baked; a candidate turned so is also tried turned back (README
   * "The feet's direction"). */
  double facing_deg;
  double finalist_facing_deg[SKS_BAKE_FINALISTS];
  /* Which way a body faces when its feet tell nothing (foot bones under
   * 3 % of the height: no toe joints, or tiny feet such as the Godot player
   * robot's): by its knees, which bend forward (two knees, each 0.5 % of
   * the height or more off its hip-ankle line, the same way; README "The
   * knees' direction"). 1: the source's way came from its knees, 2: the
   * target's, 3: both; 0: both by the feet, or neither told. Set whether
   * or not the bake went on (the finalists' facing came from it too). */
  int facing_by_knees;
} sks_bake_alignment;

typedef struct sks_bake_result {
  size_t clip_count;
  sks_baked_clip *clips;
  size_t constraint_count;
  size_t target_vertex_count;     /* skinned-part vertices (the kept surfaces' V) */
  size_t target_joint_count;
  double diagonal;                /* D of the target bind pose (bind space, every vertex) */
  sks_bake_alignment alignment;
  int correspondence_identity;    /* 1: same mesh, vertex for vertex */
  double correspondence_mean_pct; /* mean target vertex -> source surface distance, % D */
  size_t measured_vertex_count;   /* every target vertex: skinned + rigid parts */
  size_t rigid_vertex_count;      /* of which in rigid parts (baked and measured too) */
  size_t target_weights_normalised; /* vertices whose weights did not sum to 1: the bake */
  size_t source_weights_normalised; /* uses them normalised, and -o writes them so */
  /* Morph targets (blend shapes) the baked clips animate on the source: */
  size_t morphs_carried;          /* played on a target morph target of the same name */
  size_t morphs_not_carried_count;/* with no such target: left out of y and of the errors */
  char **morphs_not_carried;      /* their names, "mesh node/target" */
  double morphs_not_carried_pct;  /* the largest motion one of them makes (max |weight| x
                                     largest vertex delta, in target % D): what was left out */
} sks_bake_result;

/* D as every bake number uses it (MISSION.md, README "Baking"): the
 * bounding-box diagonal of every vertex (rigid parts too) at the bind pose,
 * the box along the scene's axes, in bind-space units. 0 without a mesh. */
double sks_bake_diagonal(const sks_model *model);

sks_result sks_bake(const sks_model *source, const sks_model *target,
                    const sks_bake_options *options, sks_bake_result *out,
                    sks_error *err);
void sks_bake_result_free(sks_bake_result *result);

/* What the joints' names say of an alignment (README "Joint names", "The
 * head's direction"), one place for the bake's rule, the CLI's header and
 * the report's note. */
enum {
  SKS_NAMES_AGREE = 0,         /* nothing against it (or the names tell nothing) */
  SKS_NAMES_LIMBS_ON_HEAD = 1, /* head agreement SKS_BAKE_HEAD_GAP under another finalist's */
  SKS_NAMES_ON_SIDE = 2,       /* its head over acos(SKS_BAKE_UP_COS) off (another's under): on its side,
                                  upside down */
  SKS_NAMES_DISAGREE = 3,      /* under SKS_BAKE_NAMES_DISAGREE of the labelled vertices agree: turned,
                                  or one rig names its sides from the viewer */
  SKS_NAMES_TURNED = 4         /* its feet point back (over 90 deg; another finalist's within
                                  acos(SKS_BAKE_FACE_COS)): turned a half turn about its up */
};
#define SKS_BAKE_NAMES_DISAGREE 0.5
/* Finalist k of a (k < a->finalists): SKS_NAMES_LIMBS_ON_HEAD,
 * SKS_NAMES_ON_SIDE or SKS_NAMES_TURNED when the names or the feet (or
 * knees: facing_by_knees) ruled it out (it was not baked on trial), else
 * SKS_NAMES_AGREE. */
int sks_bake_finalist_names(const sks_bake_alignment *a, size_t k);
/* What told the ways the two bodies face (facing_by_knees), for messages:
 * "the feet", "the knees", "the source's knees and the target's feet" or
 * "the source's feet and the target's knees"; NULL when nothing told
 * (facing_deg and every finalist's NaN). */
const char *sks_bake_facing_by(const sks_bake_alignment *a);
/* The alignment kept: SKS_NAMES_ON_SIDE (its head over acos(SKS_BAKE_UP_COS)
 * off), else SKS_NAMES_TURNED (its feet, or knees, over 90 deg off), else
 * SKS_NAMES_DISAGREE, else SKS_NAMES_AGREE. */
int sks_bake_alignment_names(const sks_bake_alignment *a);

/* Appends the baked clips to a copy of the target as ordinary clips (keyed
 * translation + rotation + scale for every joint, LINEAR), with the weights
 * normalised exactly as the bake used them. */
sks_result sks_bake_apply(const sks_model *target, const sks_bake_result *result,
                          sks_model *out, sks_error *err);

/* Test-rig maker (not an auto-rigger): new weights from distance to bone
 * segments (smooth falloff, top 4, normalised); coarsen merges every second
 * joint of each chain into its parent; rename names joints bone_0..bone_N. */
typedef struct sks_reweight_options {
  int coarsen;
  int rename;
} sks_reweight_options;
sks_result sks_reweight(const sks_model *model, const sks_reweight_options *options,
                        sks_model *out, sks_error *err);

/* ---- weight doctor: re-fit (src/solve/refit.c; the diagnosis is above) ---- */

typedef enum sks_refit_start {
  SKS_REFIT_START_RIGID = 0,      /* per frame, each bone's rigid (Horn) fit to the vertices it
                                     dominates in the original weights (the default) */
  SKS_REFIT_START_BAKE            /* the bake's transforms on the original weights */
} sks_refit_start;

typedef struct sks_refit_options {
  const char *const *clip_names;  /* fitting clips; NULL / 0 = every clip not held out (these
                                     and the held-out names: as sks_clip_find_loose finds them) */
  size_t clip_name_count;
  const char *const *holdout_names; /* never used in the fit; measured before / after */
  size_t holdout_name_count;
  uint32_t max_influences;        /* K, 0 = 4 (1..8) */
  double keep_original;           /* lambda >= 0: adds lambda * F * D^2 * |w - w_original|^2 to
                                     each vertex's objective (0 = none, the default) */
  uint32_t rounds;                /* weight + transform rounds, 0 = 6 */
  size_t max_constraints;         /* for the bakes; 0 = 5000 */
  sks_refit_start start;          /* the transforms of the first weight step */
  sks_progress_fn progress;       /* optional: clip = "refit round", frame = round */
  void *progress_user;
  unsigned threads;               /* the bakes' threads (sks_bake_options.threads; 0 = every CPU) */
} sks_refit_options;

typedef struct sks_refit_clip {
  char *name;
  int held_out;                   /* 1: not used in the fit */
  size_t frame_count;
  double quality_before, quality_after;             /* fractions; NaN = no motion */
  double mean_before_pct, mean_after_pct, worst_before_pct, worst_after_pct;
  sks_diagnosis diagnosis_before, diagnosis_after;  /* per joint */
} sks_refit_clip;

typedef struct sks_refit_result {
  sks_model model;                /* the target with re-fitted weights (owned) */
  size_t clip_count;
  sks_refit_clip *clips;
  size_t rounds;
  double *round_fit_quality;      /* rounds: mean quality of the fitting clips (bake)
                                     after each round's weight step */
  size_t best_round;              /* the weights returned: 1..rounds, or 0 = the original
                                     weights (no round fitted the fitting clips better) */
  size_t vertex_count, group_count; /* skinned vertices; distinct (part, bind position) groups */
  double mean_influences_before, mean_influences_after; /* non-zero influences per vertex */
  uint32_t max_influences_after;
  double seconds;                 /* process CPU time of the whole refit (all bakes included) */
  double diagonal;
} sks_refit_result;

/* Re-fits the target's skin weights (skeleton, bind pose, clips and
 * everything else kept) so its own LBS reproduces the source's surface
 * motion over the fitting clips: a rigid per-bone start, then rounds of an
 * exact per-vertex weight step (<= 2 influences in the first third of the
 * rounds, <= K after) and a transform step (the bake). Quality before /
 * after comes from real bakes over all vertices and frames. */
sks_result sks_refit(const sks_model *source, const sks_model *target,
                     const sks_refit_options *options, sks_refit_result *out, sks_error *err);
void sks_refit_result_free(sks_refit_result *r);

#ifdef __cplusplus
}
#endif
#endif
