/* Private solver interfaces (src/solve/ only).
 *
 * Notation (MISSION.md): the target's skinned vertex is
 *   v = sum_i w_i * M_{j_i} * IBM_{j_i} * x
 * with M_j the model transform of skeleton joint j. We write M_j = A_j * C_j
 * where C_j is a constant 3x3 "carry" (the scale / shear of the joint's bind
 * model matrix, usually identity) and A_j is RIGID: the unknown. The fixed
 * per-influence point p_i = C_j * IBM_j * x makes every bone's contribution
 * w_i * A_j p_i, so one bone's best A (others fixed) is a weighted Horn fit. */
#ifndef SKS_SOLVE_INTERNAL_H
#define SKS_SOLVE_INTERNAL_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "skinsolve/solve.h"
#include "math/sks_dmath.h"

/* ---- Horn ---------------------------------------------------------------- */

/* Rotation maximising sum a_k q_k . (R p_k) given S[r*3+c] = sum a_k p_r q_c:
 * largest eigenvector of Horn's symmetric 4x4 N(S) by Jacobi rotations.
 * The result is sign-aligned with `near` (any unit quaternion). */
sks_dquat sks_horn_rotation(const double *S, sks_dquat near);

/* ---- the per-frame problem ------------------------------------------------ */

/* Influence lists for a set of vertices (bone = solver bone index). */
typedef struct sks_influences {
  size_t vertex_count;
  uint32_t *start;    /* vertex_count + 1 */
  uint32_t *bone;
  double *w;
  double *p;          /* 3 per influence: C_b * IBM * x (or centred, see problem) */
} sks_influences;
void sks_influences_free(sks_influences *in);

typedef struct sks_pair_moments {
  uint32_t b, c;      /* b <= c */
  double s;           /* sum wb wc */
  double mb[3], mc[3];/* sum wb wc pb, sum wb wc pc */
  double P[9];        /* sum wb wc pb pc^T (row-major) */
} sks_pair_moments;

/* Block sparsity of the default solver's normal equations (solver_gn.c),
 * built once per problem: the bones with constraints (act), their elimination
 * order (minimum degree on the bone-pair graph), the blocks of the Cholesky
 * factor L with their fill, stored column by column (a column's diagonal
 * block first, then its rows in elimination order), each pair moment's
 * block, and the Schur updates of each column. Independent of the block size
 * K, so every clip and mode of a bake shares it. */
typedef struct sks_gn_pattern {
  size_t nb;            /* active bones (wsum2 > 0); 0: none, or too many bones */
  int32_t *act;         /* bone_count: active index, -1 = no constraint */
  uint32_t *pos;        /* nb: active index -> elimination position */
  size_t slot_count;    /* blocks of L */
  uint32_t *col_start;  /* nb + 1: blocks of column k = [col_start[k], col_start[k+1]) */
  uint32_t *row;        /* slot_count: the block's row (elimination position) */
  uint32_t *pair_slot;  /* pair_count: slot of pair k's block (UINT32_MAX: inactive) */
  uint8_t *pair_trans;  /* pair_count: 1 = pos b < pos c (slot (pos c, pos b), the block
                           Jb^T Jc stored as is; solver_gn.c store_block) */
  size_t pair_blocks;   /* slots holding a pair's block (the others are fill) */
  int isa;              /* kernels: SKS_GN_ISA_AUTO (AVX2 + FMA when the CPU has both),
                           SKS_GN_ISA_PORTABLE (SSE2 / C; tests compare the two) */
  uint32_t *upd_start;  /* nb + 1: Schur updates of column k */
  uint32_t *upd;        /* 3 per update: target slot, slot (i,k), slot (j,k) */
} sks_gn_pattern;

typedef struct sks_solve_problem {
  size_t bone_count;
  /* constraints: vertex k of the problem = vertex ids[k] of the full set */
  uint32_t *ids;
  sks_influences inf;        /* p centred per bone: p - centroid[b] */
  double *centroid;          /* 3 per bone (a = w^2 weighted) */
  double *wsum2;             /* per bone: sum w^2 (0 = no constraint) */
  double *radius2;           /* per bone: sum w^2 |p - c|^2 / sum w^2 */
  /* per-bone lists (BCD): entry e of bone b in [bstart[b], bstart[b+1]) */
  uint32_t *bstart, *bvertex;
  double *bw, *bp;           /* bp centred, 3 per entry */
  /* pair moments (Gauss-Newton) */
  size_t pair_count;
  sks_pair_moments *pairs;
  double scale;              /* D */
  int similarity;            /* 1: per-bone uniform scale is solved too (the source
                                animates scale); set per clip by the caller */
  uint8_t *affine;           /* per bone (allocated by build, all 0 = off): 1 = the
                                bone's linear part is a free 3x3 (3-axis scale and
                                the shear its descendants inherit from it); set per
                                clip by sks_problem_mark_affine. Default LM solver
                                only (BCD / rotation-only ignore it). */
  size_t affine_count;       /* bones flagged (0: the rigid / similarity path) */
  sks_gn_pattern gn;         /* built with the problem (sks_gn_pattern_build) */
} sks_solve_problem;

/* Fills p->gn from p's pairs (problem.c calls it); 0 on out of memory. */
int sks_gn_pattern_build(sks_solve_problem *p);
void sks_gn_pattern_free(sks_gn_pattern *g);

void sks_solve_problem_free(sks_solve_problem *p);
/* Builds the problem from full influences restricted to `ids`. */
int sks_solve_problem_build(sks_solve_problem *p, const sks_influences *full, size_t bone_count,
                            const uint32_t *ids, size_t id_count, double scale);

/* Rigid state per bone in centred coordinates: A_b p = R_b (p - c_b) + u_b. */
typedef struct sks_solve_state {
  sks_dquat *q;   /* bone_count: rotation */
  double *R;      /* 9 per bone, row-major: sc * rotation(q) (the linear part) */
  double *u;      /* 3 per bone */
  double *sc;     /* per bone uniform scale: 1 unless the problem is a similarity */
  double *stretch;/* NULL, or 9 per bone (row-major, identity unless the bone is
                     affine): R_b = sc_b * rotation(q_b) * stretch_b, with q_b the
                     polar rotation of an affine bone's linear part */
} sks_solve_state;

/* R_b = sc_b * rotation(q_b) [* stretch_b]. */
static inline void sks_state_update_R(sks_solve_state *s, size_t b) {
  double *R = &s->R[9 * b];
  sks_dq_to_m3(s->q[b], R);
  if (s->stretch) {
    const double *S = &s->stretch[9 * b];
    double m[9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) m[i * 3 + j] = R[i * 3] * S[j] + R[i * 3 + 1] * S[3 + j] + R[i * 3 + 2] * S[6 + j];
    memcpy(R, m, sizeof m);
  }
  for (int k = 0; k < 9; ++k) R[k] *= s->sc[b];
}

/* Splits a linear part L = rotation(q) * stretch (q: polar rotation, by Horn,
 * sign-aligned with `near`; sc = 1). */
void sks_state_set_linear(sks_solve_state *s, size_t b, const double *L, sks_dquat near);

/* 3-axis scale freedom (stretch.c): flags the target bones whose joint, or an
 * ancestor, has a source joint of the same name whose scale keys in `clip`
 * are non-uniform (beyond the 1e-5 float noise the bake ignores). An
 * ancestor's non-uniform scale reaches a descendant as a shear, so the
 * descendants' linear parts are freed too. joint_bone: target joint -> bone
 * or -1. Sets p->affine / p->affine_count; returns affine_count. clip NULL:
 * clears the flags. */
struct sks_model;
struct sks_clip;
size_t sks_problem_mark_affine(sks_solve_problem *p, const struct sks_model *src,
                               const struct sks_clip *clip, const struct sks_model *tg,
                               const int32_t *joint_bone);
/* Allocates st->stretch (identity) when the problem has affine bones and
 * st->stretch is NULL; 0 on out of memory. */
int sks_state_prepare_affine(const sks_solve_problem *p, sks_solve_state *st);

/* The unit normal (n) of a bone whose points lie in one plane, from its own
 * pair moments (pm->b == pm->c): 1 when flat (not 3-D, not a line), else 0
 * (solver_gn.c). */
int sks_pair_moments_flat_normal(const sks_pair_moments *pm, double *n);

/* Flat affine bones written as TRS keys (flat_trs.c): the target's
 * hierarchy and this frame's solved state, and a work budget for the frame
 * (sks_flat_ctx_begin sets it). */
typedef struct sks_flat_ctx {
  const sks_solve_problem *p;
  const sks_solve_state *st;
  size_t J;
  const int32_t *joint_bone;     /* joint -> bone or -1 */
  const double *carry;           /* 9 per bone */
  const sks_daffine *T;          /* target bind space -> scene */
  const uint32_t *kid_start, *kids; /* each joint's children (CSR) */
  const sks_transform *rest;     /* rest locals (their scale: the tie-break) */
  uint64_t budget;               /* shear evaluations left this frame */
} sks_flat_ctx;
void sks_flat_ctx_begin(sks_flat_ctx *c);
/* Joint j's bone, when flat and affine: the column its points do not
 * measure set so that parent^-1 * model is a rotation times an axis scale
 * (a, its affine in bind space, changed in place; parent_inv: the inverse
 * of the parent's model, scene space). */
void sks_flat_bone_as_trs(sks_flat_ctx *c, size_t j, const sks_daffine *parent_inv, sks_daffine *a);

/* A_b as an affine (uncentred). */
sks_daffine sks_state_rigid(const sks_solve_problem *p, const sks_solve_state *s, size_t b);
void sks_state_set_rigid(const sks_solve_problem *p, sks_solve_state *s, size_t b,
                         const sks_daffine *a);

/* Rotation-only constraint description (NULL in free mode). */
typedef struct sks_rotonly {
  size_t joint_count;
  const int32_t *parents;          /* skeleton parents */
  const int32_t *joint_bone;       /* joint -> bone or -1 */
  const int32_t *bone_joint;       /* bone -> joint */
  const sks_daffine *rest_local;   /* joint_count */
  const double *carry;             /* 9 per bone */
  const double *carry_inv;         /* 9 per bone */
  const uint8_t *bone_is_root;     /* 1: translation free (no weighted ancestor) */
  sks_daffine *scratch_models;     /* joint_count */
  const uint32_t *sub_start;       /* bone_count + 1: bones of each bone's subtree */
  const uint32_t *sub_bones;       /* (itself first, then descendants) */
  double *vscratch;                /* 5 per constraint vertex, zeroed */
  uint32_t *touched;               /* 1 per constraint vertex */
  /* sks_solve_rotonly_gn's arrays: sks_solve_rotonly_work_size bytes, the
   * caller's (once per problem and thread); NULL: each call allocates its own */
  void *work;
  size_t work_size;
} sks_rotonly;
/* 0: the solve does not run for this problem (no constrained bone, or more
 * than 900 unknowns). */
size_t sks_solve_rotonly_work_size(const sks_solve_problem *p, const sks_rotonly *ro);

/* Puts a state on the rotation-only manifold (children at their rest offsets). */
void sks_rotonly_project(const sks_solve_problem *p, sks_solve_state *s, const sks_rotonly *ro);

typedef struct sks_solve_stats {
  size_t iterations;
  double final_rms;   /* RMS constraint residual / D after the solve */
} sks_solve_stats;

/* y: 3 per constraint. cur: 3 per constraint scratch (skinned positions).
 * Block coordinate descent, Horn per bone, incremental updates. Returns 1
 * when the sweeps stopped on their rule (RMS change per sweep <= tol * D),
 * 0 when max_sweeps ran out first: on long chains in rotation-only mode a
 * sweep gains a fraction of a percent of what is left (Fox Walk: ~1900
 * sweeps to the float floor), so 0 means the answer may be far from the
 * solution (0.18 %D worst after 200 sweeps there). give_up: return 0 as
 * soon as the sweeps' own rate of progress says the stop is more than twice
 * the sweeps left away (the caller finishes otherwise). */
int sks_solve_bcd(const sks_solve_problem *p, const double *y, sks_solve_state *s, double *cur,
                  const sks_rotonly *ro, size_t max_sweeps, double tol, int give_up,
                  sks_solve_stats *stats);

/* Levenberg-Marquardt over all bones at once, from pair moments: per
 * iteration cost independent of the vertex count. Returns 0 on failure (the
 * caller falls back to BCD). */
int sks_solve_gn(const sks_solve_problem *p, const double *y, sks_solve_state *s,
                 size_t max_iterations, double tol, sks_solve_stats *stats, double *scratch,
                 size_t scratch_count);
size_t sks_solve_gn_scratch_count(const sks_solve_problem *p);

/* Per-frame target moments: Y_b = sum w pl y^T (9 per bone, row-major),
 * ybar_b = sum w y (3 per bone); returns sum |y|^2. One pass over the
 * constraints. */
double sks_moments_frame(const sks_solve_problem *p, const double *y, double *Y, double *ybar);
/* The kernels of solver_gn_kernels.h: pt->isa and the CPU choose; the AVX2 +
 * FMA builds (solver_gn_avx2.c) exist when sks_gn_avx2_compiled(). */
enum { SKS_GN_ISA_AUTO = 0, SKS_GN_ISA_PORTABLE = 1 };
int sks_gn_use_avx2(const sks_gn_pattern *pt);
int sks_gn_avx2_compiled(void);
int sks_gn_damped_solve_avx2(const sks_gn_pattern *pt, const double *Hb, int K, const double *g, double lam,
                             double floor_, double *Lb, double *y, double *x);
double sks_moments_frame_avx2(const sks_solve_problem *p, const double *y, double *Y, double *ybar);
int sks_envelope_solve_avx2(const double *H, const double *dd, const double *g, size_t n, double lam,
                            const uint32_t *perm, const uint32_t *first, double *L, double *x, double *z);
void sks_rotonly_block_adds_avx2(double *Am, const uint32_t *up, size_t count);
/* F = sum |cur - y|^2 for the state (R, u) from the frame and pair moments
 * only (exact to ~1e-15 of sum |y|^2), and per active bone b (K values at
 * K * act[b]): sum w (R pl) x e, sum w e (and, K = 7, the scale term).
 * pc (NULL: not wanted): per pair k, SKS_GN_PAIR_CACHE doubles at
 * SKS_GN_PAIR_CACHE k: Q = Rc P^T Rb^T, Rb mb, Rc mc (the free solver's
 * J^T J at this R reuses them). */
enum { SKS_GN_PAIR_CACHE = 15 };
double sks_moments_eval(const sks_solve_problem *p, const double *Y, const double *ybar,
                        double yy, const double *R, const double *u, const int32_t *act,
                        size_t nb, int K, double *g, double *pc);

/* Rotation-only Levenberg-Marquardt (subtree rotations about joint origins,
 * free root translations). The state must satisfy the rotation-only
 * constraint (sks_rotonly_project). Returns 0 when it cannot run. */
int sks_solve_rotonly_gn(const sks_solve_problem *p, const double *y, sks_solve_state *s,
                         const sks_rotonly *ro, size_t max_iterations, double tol,
                         sks_solve_stats *stats);

/* Levenberg-Marquardt bookkeeping shared by both LM solvers: after an
 * accepted step, the damping relaxes and convergence is judged on absolute
 * progress against D or relative progress of the objective F (after the
 * step). Returns 1 when converged. */
typedef struct sks_lm_control {
  double lam;        /* damping */
  double last_step;  /* the previous accepted step (largest point motion) */
  double tol;        /* step tolerance, fraction of D */
  double d;          /* D */
  double flat;       /* objective change below which the valley is flat */
  double last_decrease; /* the previous accepted step's decrease of F (0: none yet) */
} sks_lm_control;

static inline int sks_lm_accepted(sks_lm_control *c, double step, double decrease, double F) {
  int converged = 0;
  c->lam = c->lam * 0.2 > 1e-12 ? c->lam * 0.2 : 1e-12;
  /* done when the step is below tol * D; when steps shrink only linearly (a
   * non-zero residual), 1000 * tol is already far below anything measurable */
  if (step < c->tol * c->d || (step < 1000 * c->tol * c->d && step > 0.1 * c->last_step)) converged = 1;
  /* converging linearly (non-zero residual: every real target): the step
   * no longer changes the objective by 1e-6 of itself (the RMS error by
   * < 5e-7 of itself) and moves no point by 1e-4 D: measured on the Fox
   * onto fox_rig_autoweights, quality / %D errors equal to 4 decimals with
   * 5.2 instead of 8.0 iterations per frame (Run); a control (F -> 0)
   * ends on the step tests above */
  if (decrease < 1e-6 * F && step < 1e-4 * c->d) converged = 1;
  /* flat valley (non-zero residual): the objective no longer moves in
   * absolute terms (mean square change < (1e-6 D)^2) and steps are small */
  if (decrease < c->flat && step < 1e-5 * c->d) converged = 1;
  /* linear convergence (every real target): with the rate r of the last two
   * decreases, what is left to gain is about decrease r / (1 - r); stop when
   * that is below 1e-6 of F (the RMS error cannot change by 5e-7 of itself)
   * and no point moves by 1e-3 D. Fox onto fox_rig_autoweights Run / Survey
   * / Walk: 3.21 / 2.01 / 2.89 instead of 5.07 / 2.17 / 4.11 iterations per
   * frame, errors equal to 5 digits (README "Benchmarks"). A control (F -> 0 quadratically) never passes it: what is
   * left there is F itself, far above 1e-6 F; it ends on the step tests. */
  if (c->last_decrease > 0 && decrease >= 0 && decrease < 0.5 * c->last_decrease && step < 1e-3 * c->d) {
    double r = decrease / c->last_decrease;
    if (decrease * r / (1.0 - r) < 1e-6 * F) converged = 1;
  }
  c->last_decrease = decrease;
  c->last_step = step;
  return converged;
}

/* A rejected trial step: more damping. From the 1e-12 floor that a run of
 * accepted steps leaves, x8 alone needs 13 rejections to reach useful
 * damping; the solver used to give up after 12 (a cold start far from the
 * bind pose stopped at 0.05 %D): jump to 1e-6 first. Callers allow
 * SKS_LM_ATTEMPTS trials per iteration (1e-6 * 8^29 damps any step). */
#define SKS_LM_ATTEMPTS 30
static inline void sks_lm_rejected(sks_lm_control *c) {
  c->lam = c->lam < 1e-6 ? 1e-6 : c->lam * 8;
}

/* Cold start for frame 0 (horn.c): per-bone rigid Horn fits of the vertices
 * each bone dominates against y (3 per constraint). */
void sks_solve_cold_start(const sks_solve_problem *p, const double *y, sks_solve_state *s);
/* Solves again from the per-bone fits (rotation-only when ro is not NULL,
 * else the default LM) and keeps the better solution; stats->iterations
 * adds up, final_rms is the kept one. For a frame whose residual jumped. */
void sks_solve_retry_from_fits(const sks_solve_problem *p, const double *y, sks_solve_state *s,
                               const sks_rotonly *ro, size_t max_iterations, double tol,
                               sks_solve_stats *stats, double *scratch, size_t scratch_count);

/* Skinned constraint positions for a state. */
void sks_solve_skin(const sks_solve_problem *p, const sks_solve_state *s, double *cur);

/* ---- correspondence -------------------------------------------------------- */

/* For each target point: up to 3 source vertex indices with barycentric
 * weights (nearest vertex: one index, weight 1). */
typedef struct sks_correspondence {
  size_t count;
  uint32_t *idx;      /* 3 per target point */
  float *bary;        /* 3 per target point */
  int identity;
  double max_distance, mean_distance;
  uint64_t tests;    /* point / triangle tests the build made */
  size_t tri_count;  /* distinct source triangles indexed */
  int over_budget;   /* the build gave up: over SKS_CORR_TESTS_PER_QUERY */
} sks_correspondence;
void sks_correspondence_free(sks_correspondence *c);
/* A build's bound on its work: tests per target point on average (plus a
 * fixed allowance), correspondence.c. */
#define SKS_CORR_TESTS_PER_QUERY 512
#define SKS_CORR_TESTS_FREE 1000000u
/* The error of a failed sks_correspondence_build: over its budget (naming
 * file, the mesh whose triangles were queried) or out of memory. */
sks_result sks_correspondence_fail(const sks_correspondence *c, const char *file, sks_error *err);
/* src: source points (3 per vertex), tri: source triangles (3 indices each,
 * may be NULL for nearest vertex). pool: the target points split over its
 * threads (NULL: this thread); the same result, bit for bit, either way. */
int sks_correspondence_build(sks_correspondence *out, sks_correspondence_kind kind,
                             const double *src, size_t src_count, const uint32_t *tris,
                             size_t tri_count, const double *dst, size_t dst_count,
                             double scale, sks_thread_pool *pool);
/* The same search in two steps, for many queries against one surface: the
 * index keeps pointers to pts / tris (they must outlive it). NULL: no
 * points, or out of memory. */
typedef struct sks_surface_index sks_surface_index;
sks_surface_index *sks_surface_index_build(sks_correspondence_kind kind, const double *pts, size_t count,
                                           const uint32_t *tris, size_t tri_count);
int sks_surface_index_query(const sks_surface_index *ix, const double *dst, size_t dst_count,
                            sks_correspondence *out, sks_thread_pool *pool);
void sks_surface_index_free(sks_surface_index *ix);

/* Deterministic quickselect of items[b..e) on centre[3 * item + a] (ties by
 * item index), so that items[b..m) <= items[m..e): the median split of the
 * correspondence's and the alignment's trees. */
void sks_select_median(uint32_t *items, const double *centre, size_t b, size_t m, size_t e, int a);
/* The n points' indices in an order of their positions only (shape_order.c:
 * by a hash of their distance to the surface's centroid; tris (may be
 * NULL, tri_count 0) give its area), whatever order the file lists them
 * in, so that its first m are a sample of the surface that a re-ordered,
 * re-welded, rotated or scaled copy samples the same way; distinct: one
 * index per position (copies dropped). *count: how many; malloc'ed, NULL
 * when out of memory. */
uint32_t *sks_shape_order(const double *pos, size_t n, const uint32_t *tris, size_t tri_count, int distinct,
                          size_t *count);
/* w[j] = 1 / (the number of the n points at point j's position, copies
 * told apart as sks_shape_order's distinct does): weights that count each
 * distinct position once, so a seam an exporter split into copies (or a
 * re-weld) weighs as one point. malloc'ed, NULL when out of memory. */
double *sks_copy_weights(const double *pos, size_t n);
/* The same order, and per point in it (each n long, may be NULL): its key
 * in [0, 1) (ascending: the order; the first fraction t of the keys are a
 * sample of a fraction t of the surface) and the surface area it stands
 * for (a third of each triangle's area to each corner, copies of a
 * position summed when distinct). */
uint32_t *sks_shape_order_keys(const double *pos, size_t n, const uint32_t *tris, size_t tri_count, int distinct,
                               size_t *count, double *keys, double *area);
/* A sample of about `want` of the u points of a shape order (keys[0..u),
 * ascending, from sks_shape_order_keys): how many of its first points it
 * takes (at most 2 want), each one's weight in [0, 1] into w[0..): all of
 * them at 1 when u <= want; else those whose keys lie under the cut
 * want / u, faded out over the last tenth of the cut on either side of it
 * and faded in from key 0 (rounding wraps a key near 1 to near 0), so
 * that a key rounding moves across either end moves a weight by as much,
 * never a whole point in or out. From *whole_from on the weights are 1
 * (up to the fade-out). */
size_t sks_shape_fade(const double *keys, size_t u, size_t want, double *w, size_t *whole_from);

/* Closest point on triangle abc to p; barycentric weights out. Returns squared distance. */
double sks_closest_point_triangle(const double *p, const double *a, const double *b,
                                  const double *c, double *bary);

/* ---- the bake's view of a surface (skinview.c) ------------------------------ */

/* Every vertex of a model in its BIND space (skinned parts first, then rigid
 * parts as one-influence skins on their node), palette entries (joint,
 * bind space -> joint space), normalised weights, and T: bind -> scene. */
typedef struct sks_skinview {
  size_t V, skinned_vertex_count, rigid_vertex_count;
  double *pos;              /* V * 3, bind space */
  size_t *order;            /* V: index in the model's all-parts (.f32) order */
  size_t P;
  int32_t *pal_joint;       /* P: skeleton joint (-1: none) */
  sks_daffine *pal_ibm;     /* P */
  uint32_t *start;          /* V + 1 */
  uint32_t *pal;            /* influences: palette entry */
  double *w;                /* influences: weight (sum 1 per vertex) */
  uint32_t *tris;           /* 3 per triangle, view vertex indices */
  size_t tri_count;
  sks_daffine T, T_inv;     /* bind space -> scene space and back */
  sks_daffine *rest_models; /* joint_count, scene space, rest pose */
  size_t weights_normalised;/* vertices whose weights did not sum to 1 */
  double diagonal;          /* D: bind-space bounding-box diagonal of every vertex */
} sks_skinview;
sks_result sks_skinview_build(const sks_model *m, const char *name, sks_skinview *v, sks_error *err);
/* 1 when the view takes the part: skinned by one of m's skins, or rigid
 * (skin -1) under one of its joints (seed 002). */
int sks_skinview_takes(const sks_model *m, const sks_mesh_part *part);
void sks_skinview_free(sks_skinview *v);
/* out[e] = T^-1 * models[joint e] * IBM_e (bind-space skin matrices). */
void sks_skinview_palette(const sks_skinview *v, const sks_daffine *models, sks_daffine *out);
/* Renormalises every vertex's valid weights to sum 1; returns vertices changed. */
size_t sks_normalize_weights(sks_model *m);

/* Limbs (two bodies): a target vertex whose closest point lies on another
 * limb of the source than its joint's other vertices' (the inner edge of a
 * big boot, nearer the other foot) is re-matched onto the source region its
 * joint follows, however far (no distance limit since 2026-12-05).
 * corr: closest points of tv's vertices on surf (sv's vertices as they were
 * matched: aligned, and posed if registered); ss: sv's skeleton, Jt: tv's
 * joint count. *rematched: the vertices moved. 0: out of memory. */
int sks_correspondence_keep_limbs(sks_correspondence *corr, const sks_skinview *sv, const sks_skeleton *ss,
                                  const double *surf, const sks_skinview *tv, size_t Jt,
                                  sks_thread_pool *pool, size_t *rematched);

/* The same surface re-welded, re-ordered or decimated: every target
 * vertex coincides with a source vertex, and the closest point on the
 * triangles is not always it: two fans 1e-5 D apart, each following other
 * joints, interleave (Testwuson's mouth), and copies of a position may
 * carry different weights (its mid-line: one side's joints or the other's;
 * two layers of one fan). A target vertex within stol (source units) of a
 * source vertex, through A^-1 (A: source -> target), is matched to that
 * vertex; among copies of its position, to the one whose triangles its own
 * are (each of its triangles votes for the copy with a triangle facing its
 * way whose centroid lies nearest its own). *moved: vertices re-matched.
 * 0: out of memory. */
int sks_correspondence_coincident(sks_correspondence *corr, const double *spos, size_t Vs, const uint32_t *stris,
                                   size_t stri_count, const sks_daffine *A, double stol, const double *tpos,
                                   size_t Vt, const uint32_t *ttris, size_t ttri_count, sks_thread_pool *pool,
                                   size_t *moved);

/* ---- the residual per dominant joint (diagnose.c) ---------------------------- */

/* Per-vertex sums over frames of e_fj, for the first V vertices of a
 * skinview; the joint attribution is made once, at the end. */
typedef struct sks_diag_acc {
  size_t V, J, frames;
  int32_t *dominant;        /* V: dominant joint, -1: no played weight */
  double *sum;              /* V: sum_f e_fj */
  float *worst;             /* V: max_f e_fj */
  size_t *worst_frame;      /* V */
} sks_diag_acc;
/* The dominant joint of the view's first count vertices (largest played
 * weight, one joint's slots summed, ties: lowest joint index). */
void sks_view_dominant_joints(const sks_skinview *v, size_t count, int32_t *out);
/* Per view vertex: the body label (sks_skeleton_labels: head, left, right,
 * none) of its dominant joint; malloc'ed, NULL when out of memory
 * (correspondence.c). */
uint8_t *sks_view_labels(const sks_skinview *v, const sks_skeleton *s);
/* Joint j's bind position in a view's bind space (its skin matrix there is
 * the identity at the bind pose, so the joint sits at IBM^-1's origin):
 * jp (3 per joint), mask (1 where it holds: a palette joint), pal (its
 * palette entry or -1); J = the skeleton's joint count. */
void sks_view_joints(const sks_skinview *v, size_t J, double *jp, uint8_t *mask, int32_t *pal);
/* What the joints' names say of a correspondence (correspondence.c; README
 * "Joint names"): among the target vertices labelled head, left or right
 * (tlab, sks_view_labels) whose corresponding source point (its nearest
 * corner, slab) is labelled too, the share where the two labels are the
 * same (all), and the same among those where either is the head (head: a
 * limb on the head or the head on a limb), each weighted by cw (each
 * distinct position once: sks_copy_weights). A body upside down or on its
 * side puts its limbs on the other's head, one turned a half turn its left
 * limbs on the other's right: surfaces can fit about as well either way,
 * names cannot. NaN when the names tell nothing: under 5 % of the target's
 * weight labelled on both sides; all NaN too unless both rigs name sides
 * (a rig labelled by its shape has a head only: topo_labels). */
typedef struct sks_label_agreement { double all, head; } sks_label_agreement;
sks_label_agreement sks_correspondence_labels(const sks_correspondence *corr, const uint8_t *slab, size_t Vs,
                                              const uint8_t *tlab, const double *cw, size_t V);
/* What the joints' names say of an alignment (correspondence.c): the
 * cosine between the head's directions (the head-labelled vertices'
 * centroid minus all vertices', sks_view_labels) of two surfaces in one
 * space (the source aligned, and registered, in the target's): about 1
 * for a body upright on the other, 0 on its side, -1 upside down,
 * whatever the two bodies' proportions (a head twice as large moves the
 * centroid, not the direction). Each vertex weighted by scw / tcw
 * (sks_copy_weights: each distinct position once, so a re-welded file
 * gives the same figure). NaN when either lacks a head (under 0.5 % of
 * its weight) or labels or weights (NULL). */
double sks_label_up_cos(const double *src, size_t ns, const uint8_t *slab, const double *scw, const double *dst,
                        size_t nd, const uint8_t *tlab, const double *tcw);
/* The head's direction of one surface (its head-labelled vertices'
 * centroid minus all vertices', each weighted by w: sks_copy_weights, so
 * each distinct position counts once), unit, into up; 0 when the head
 * holds under 0.5 % of the weight or sits at the centre. */
int sks_label_up_dir(const double *p, size_t n, const uint8_t *lab, const double *w, double *up);
/* Which way a body faces by its feet (correspondence.c): the sum of its
 * bones (joint jpos[j] minus its nearest ancestor in jmask, both in jmask)
 * that lie in the bottom 15 % of the surface's height along up (pos: its
 * n vertices), taken across up, unit, into fwd. A foot's bones run from
 * the ankle to the toes, forward on every biped rig measured (README "The
 * feet's direction"), whatever the sides' names say (the Godot player
 * robot names them from the viewer). 0 when those bones add up to under
 * 3 % of the height (a foot without a toe joint, no feet). *hips (may be
 * NULL): the joint in jmask at or above those bones' deepest common
 * ancestor (the joint that turns both feet), -1 when none. */
int sks_feet_forward(const double *jpos, const uint8_t *jmask, const int32_t *parents, size_t J, const double *pos,
                     size_t n, const double *up, double *fwd, int32_t *hips);
/* Which way a body faces by its knees, for bodies whose feet tell nothing
 * (correspondence.c; the Godot player robot's feet add up to 0.3 % of its
 * height): a knee is a weighted joint between 15 and 60 % of the height
 * (jpos along up, over the n vertices' span) whose nearest weighted
 * ancestor (the thigh's joint) lies 5 % of the height above it and whose
 * one weighted child under 15 % (the ankle) 5 % under it, the thigh-ankle
 * line within 37 deg of up. Knees bend forward: each knee's offset from
 * that line, across up, points the way the body faces. Exactly two knees,
 * each bent 0.5 % of the height or more, the same way (their offsets'
 * dot product positive): their sum, unit, into fwd; else 0 (straight legs,
 * one leg, four legs). *hips (may be NULL): the weighted joint at or above
 * the two thighs' common ancestor, -1 when none. */
int sks_knees_forward(const double *jpos, const uint8_t *jmask, const int32_t *parents, size_t J, const double *pos,
                      size_t n, const double *up, double *fwd, int32_t *hips);
sks_result sks_diag_init(sks_diag_acc *a, const sks_skinview *v, size_t V, size_t J, sks_error *err);
/* e: V errors of frame `frame` (model units); frame 0 starts a new clip.
 * No allocation. */
void sks_diag_frame(sks_diag_acc *a, const float *e, size_t frame);
/* The parallel bake: one accumulator per frame chunk (no dominant joints),
 * reset when its chunk (re)starts, frames added without a reset, then merged
 * into the clip's in chunk (= frame) order. */
sks_result sks_diag_part_init(sks_diag_acc *a, size_t V);
void sks_diag_reset(sks_diag_acc *a);
void sks_diag_add(sks_diag_acc *a, const float *e, size_t frame);
void sks_diag_merge(sks_diag_acc *a, const sks_diag_acc *part);
sks_result sks_diag_finish(const sks_diag_acc *a, double diagonal, sks_diagnosis *out, sks_error *err);
void sks_diag_free(sks_diag_acc *a);

/* ---- alignment (align.c) ------------------------------------------------------ */

/* A trimmed closest-point fit's pair weight at distance d, t the distances'
 * 90th percentile: 1 up to lo t, 0 from hi t, linear between (a hard trim at
 * t, made continuous: a pair crossing the line no longer flips the fit, so
 * the rounds settle instead of wandering between flips). */
static inline double sks_trim_weight(double d, double t, double lo, double hi) {
  if (!(t < DBL_MAX)) return 1;
  double w = (hi * t - d) / ((hi - lo) * t);
  return w >= 1 ? 1 : (w > 0 ? w : 0);
}

#define SKS_ALIGN_ALTERNATIVES 11 /* runners-up the articulated registration tries */
typedef struct sks_alignment {
  sks_daffine A;            /* source bind space -> target bind space (similarity) */
  double scale;             /* uniform scale of A */
  double angle_deg;         /* rotation angle of A */
  double offset[3];         /* translation of A */
  double residual;          /* mean symmetric closest distance of the fine ICP's answer, / target D (the
                               smooth polish after it moves A within its basin and is not re-measured here) */
  int identity;             /* 1: the surfaces already agreed (A = I) */
  size_t hypotheses;        /* rotations tried */
  sks_daffine alternatives[SKS_ALIGN_ALTERNATIVES]; /* runners-up with other rotations, best first */
  size_t alternative_index[SKS_ALIGN_ALTERNATIVES];
  size_t alternative_count;
  int mirrored;             /* 1: A is a mirror (det < 0: the bind spaces' handedness differs) */
} sks_alignment;
/* Rotation angle of an orthogonal Q in degrees; for a mirror (det < 0),
 * the angle it turns about the mirror plane's normal (a plain mirror: 0). */
double sks_align_angle_deg(const double *Q);
/* Similarity taking the source's bind surface onto the target's: rotation
 * hypotheses (the 24 maps between the two principal frames: shape only, so
 * the answer does not depend on the files' frames; and the 24 mirrored
 * ones, kept only when they fit clearly closer, or first when the hint is
 * a mirror), each refined by trimmed
 * similarity ICP on nearest points; the best symmetric fit wins, distinct
 * runners-up are alternatives. Points are bind-space vertex positions (3 per
 * point). hint (may be NULL): where the files' scenes put the source bind
 * space in the target's (T_t^-1 T_s); kept when it already fits. pool (may
 * be NULL): the hypotheses' ICPs run on its threads, with the same answer
 * on any number of threads. */
sks_result sks_align_similarity(const double *src, size_t ns, const uint32_t *src_tris, size_t src_tri_count,
                                const double *dst, size_t nd, const uint32_t *dst_tris, size_t dst_tri_count,
                                double target_diagonal, const sks_daffine *hint, sks_alignment *out,
                                sks_thread_pool *pool, sks_error *err);
/* Exact similarity for paired points (vertex i of src is vertex i of dst);
 * A in: the estimate (its rotation picks the quaternion sign); fixed_scale > 0
 * keeps that scale (rotation and offset only). */
sks_result sks_align_refine_paired(const double *src, const double *dst, size_t n, double fixed_scale,
                                   sks_daffine *A);
/* Median edge-length ratio dst / src of one mesh in two poses (0: unknown). */
double sks_align_edge_scale(const double *src, const double *dst, const uint32_t *tris, size_t tri_count);
/* 1 when the two point sets are the same surface under a similarity (every
 * vertex of either coincides, to 1e-5 D, with one of the other: a mesh
 * re-welded, re-ordered or with duplicated vertices; both_ways 0: every
 * source vertex on a target vertex, the source a decimated copy or a part
 * of the target); A (in: an approximate answer) is then the similarity
 * fitted to the coinciding vertices. 0 (A untouched) otherwise or out of
 * memory. */
int sks_align_same_surface(const double *src, size_t ns, const double *dst, size_t nd, double D, int both_ways,
                           sks_daffine *A);

/* sks_bake with every vertex's recorded motion and played surface skinned
 * in double (the reference the float path is tested against,
 * test_metrics_float; the same joint transforms, slower). */
sks_result sks_bake_double_metrics(const sks_model *source, const sks_model *target,
                                   const sks_bake_options *options, sks_bake_result *out, sks_error *err);

/* How a bake on several threads shares out its clips (bake.c, bake_clips).
 * AUTO (sks_bake): whole clips at once, one per thread (each bit for bit the
 * serial clip), a clip cut into frame chunks only when it is more than a
 * thread's share of the frames and long enough to gain; CHUNKS: every clip
 * cut into min(threads, frames) chunks, one clip after another (the frame
 * chunks on their own, test_bake_threads); CLIPS: whole clips only. */
typedef enum sks_bake_schedule {
  SKS_BAKE_SCHEDULE_AUTO = 0,
  SKS_BAKE_SCHEDULE_CHUNKS = 1,
  SKS_BAKE_SCHEDULE_CLIPS = 2
} sks_bake_schedule;
sks_result sks_bake_scheduled(const sks_model *source, const sks_model *target, const sks_bake_options *options,
                              sks_bake_schedule schedule, sks_bake_result *out, sks_error *err);

/* ---- motion transfer (transfer.c) ---------------------------------------------- */

typedef struct sks_transfer {
  size_t V;                 /* target vertices */
  const double *x;          /* target bind positions (the target view's, not owned) */
  uint32_t *start;          /* V + 1: source palette influences at c(j), merged */
  uint32_t *pal;
  double *w;
  size_t P;                 /* source palette entries */
  sks_daffine A, A_inv;     /* alignment */
  sks_daffine *reg_inv;     /* P: N_P^-1 (registration pose), NULL = bind pose */
  sks_daffine *N, *X;       /* P: scratch */
  double *x_own;            /* a subset's own copy of x (sks_transfer_subset), else NULL */
} sks_transfer;
sks_result sks_transfer_build(sks_transfer *t, const sks_skinview *src, const sks_skinview *tgt,
                              const sks_correspondence *corr, const sks_daffine *A, sks_error *err);
/* N_P: the source's bind-space skin matrices at the registration pose (P entries). */
sks_result sks_transfer_set_registration(sks_transfer *t, const sks_daffine *N_P, sks_error *err);
/* y (3 per target vertex) for the source's scene-space joint models at frame f;
 * with ids, y is 3 per id: only those vertices. scratch: 2 * P (per caller,
 * so threads can record frames at once). */
void sks_transfer_frame(const sks_transfer *t, const sks_skinview *src, const sks_daffine *scene_models,
                        sks_daffine *scratch, const uint32_t *ids, size_t id_count, double *y);
/* The frame's transfer matrices X_e = A N_fe N_Pe^-1 A^-1 (P entries, in
 * scratch + P; y_fj = sum_e w_e(c(j)) X_e x_j): sks_transfer_frame's first
 * step, for the float path (sks_fskin over the transfer's lists). */
const sks_daffine *sks_transfer_palette(const sks_transfer *t, const sks_skinview *src,
                                        const sks_daffine *scene_models, sks_daffine *scratch);
/* y at the source's BIND pose (= x when the registration pose is the bind
 * pose): the reference motion is measured from, so neither a re-bind in
 * another pose nor its offset counts as motion. */
void sks_transfer_bind(sks_transfer *t, double *y);
void sks_transfer_free(sks_transfer *t);
/* The transfer at the vertices ids only (x and lists copied in that order):
 * sks_transfer_frame(sub, ..., NULL, 0, y) gives, bit for bit, what
 * sks_transfer_frame(t, ..., ids, n, y) does, from contiguous arrays (the
 * solve's constraints, recorded every frame; the gathers from all V were
 * most of their cost on a 56k-vertex rig). */
sks_result sks_transfer_subset(const sks_transfer *t, const uint32_t *ids, size_t n, sks_transfer *sub);

#endif
