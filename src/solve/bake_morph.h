/* Morph targets in a bake (bake_morph.c; README "Morph targets in a bake").
 *
 * Carry by name: a source mesh node with morph targets maps to the target
 * mesh node of the same name (or, with one morph-carrying node on each side,
 * to that one); a target morph target takes the weights of the source's of
 * the same name (unnamed ones: the same index). Each baked clip gets a
 * weights track per mapped target node; the frame loop plays it: the
 * target's morphed bind x + delta_T(f) is what its skinning and the
 * transferred motion y start from, in the solve (sks_bake_morphs_solve_frame)
 * and in the metrics. */
#ifndef SKS_BAKE_MORPH_H
#define SKS_BAKE_MORPH_H

#include "solve/solve_internal.h"

typedef struct sks_bake_morph_map {
  int32_t src_node, tg_node;
  size_t src_count, tg_count; /* morph targets of the node's first morph part, each side */
  int32_t *src_of;            /* tg_count: the source target of the same name, -1: none */
  float *src_defaults;        /* src_count */
  float *tg_defaults;         /* tg_count */
  size_t matched;             /* target targets with a source target */
  size_t weight_offset;       /* into a frame's weights (sks_bake_morphs.weight_total) */
} sks_bake_morph_map;

typedef struct sks_bake_morphs {
  size_t map_count;
  sks_bake_morph_map *maps;
  size_t weight_total;
  /* target view vertices some mapped node's targets move */
  size_t vertex_count;
  uint32_t *vid;              /* vertex_count: skinview vertex */
  uint32_t *dstart;           /* vertex_count + 1: entries of each */
  uint32_t *dweight;          /* per entry: index into a frame's weights */
  double *delta;              /* 3 per entry: the target's delta in bind space */
} sks_bake_morphs;

/* Maps the nodes, lists the target's deltas in tv's vertex order and fills
 * out's morph report for the clips to bake (scale: source bind units ->
 * target's, D: the target's diagonal). Nothing to carry: bm stays empty. */
sks_result sks_bake_morphs_build(sks_bake_morphs *bm, const sks_model *src, const sks_model *tg,
                                 const sks_skinview *tv, const sks_clip *const *clips, size_t nclips,
                                 double scale, double D, sks_bake_result *out, sks_error *err);
/* The baked clip's weights tracks (out->times set): the source clip's keys
 * as they are (fps 0), else its weights sampled at out's frame times. */
sks_result sks_bake_morphs_clip(const sks_bake_morphs *bm, const sks_clip *clip, float fps,
                                sks_baked_clip *out, sks_error *err);
/* The target's morph delta at time t of the baked clip: 3 per bm vertex
 * into delta (weights: weight_total scratch). Returns 0 when nothing moves.
 * Never allocates. */
int sks_bake_morphs_frame(const sks_bake_morphs *bm, const sks_baked_clip *out, float t, float *weights,
                          double *delta);
/* Adds the delta carried by the blended linear part of the palette M over
 * influence lists (start / pal / w, by view vertex): sum_i w_i L(M_i) delta,
 * to yd (double, 3 per view vertex) or, when yd is NULL, to yf (float). */
void sks_bake_morphs_add(const sks_bake_morphs *bm, const double *delta, const uint32_t *start,
                         const uint32_t *pal, const double *w, const sks_daffine *M, double *yd, float *yf);
void sks_bake_morphs_free(sks_bake_morphs *bm);

/* The solve on the morphed bind: the problem's points p = C_b IBM x
 * (bake.c's target setup) become C_b IBM (x + delta_T(f)) at the
 * constraints a carried target moves, so the joints are fitted to
 * y = X (x + delta) on the same rest positions the player skins. */
typedef struct sks_bake_morph_solve {
  size_t count;          /* constraints some carried target moves (0: the solve is never morphed) */
  uint32_t *cid;         /* count: the constraint (problem vertex) */
  uint32_t *mv;          /* count: its bm vertex (index into a frame's delta) */
  uint32_t *lstart;      /* count + 1: into L, by the constraint's influences */
  double *L;             /* 9 per such influence: C_b * linear part of its IBM */
  double *praw;          /* 3 per problem influence: p uncentred (as built) */
  uint32_t *bentry;      /* per problem influence: its entry in the per-bone lists */
  size_t pair_ref_count;
  uint32_t *pair_of;     /* per influence pair (b <= c) of each constraint, in
                            sks_solve_problem_build's order: its pair moment */
} sks_bake_morph_solve;

/* A frame's morphed problem: the arrays that depend on p (base's sizes). */
typedef struct sks_bake_morph_scratch {
  double *p, *bp, *centroid, *radius2;
  sks_pair_moments *pairs;
} sks_bake_morph_scratch;

/* From the problem p built on tv's influences (joint_bone: joint -> bone,
 * carry: 9 per bone, as bake.c's target setup). Nothing moved: ms stays
 * empty. */
sks_result sks_bake_morphs_solve_build(sks_bake_morph_solve *ms, const sks_bake_morphs *bm,
                                       const sks_solve_problem *p, const sks_skinview *tv,
                                       const int32_t *joint_bone, const double *carry, sks_error *err);
void sks_bake_morph_solve_free(sks_bake_morph_solve *ms);
int sks_bake_morph_scratch_alloc(sks_bake_morph_scratch *s, const sks_solve_problem *p);
void sks_bake_morph_scratch_free(sks_bake_morph_scratch *s);
/* The problem on the frame's morphed bind: *mp = *base with s's arrays,
 * recomputed (centroids, radii, per-bone lists, pair moments) from
 * p = C_b IBM (x + delta) (delta: sks_bake_morphs_frame's, 3 per bm
 * vertex); and yc (3 per constraint, y = X x) moved to X (x + delta) by the
 * blended linear part of the transfer palette M over trc's lists (the
 * constraints'). Never allocates. */
void sks_bake_morphs_solve_frame(const sks_bake_morph_solve *ms, const sks_solve_problem *base,
                                 const double *delta, const uint32_t *tstart, const uint32_t *tpal,
                                 const double *tw, const sks_daffine *M, double *yc,
                                 sks_bake_morph_scratch *s, sks_solve_problem *mp);
/* A state's bones re-expressed about other centroids (A p = R (p - c) + u
 * unchanged): u_b += R_b (to_b - from_b). */
void sks_bake_morphs_recentre(const sks_solve_problem *p, const double *from, const double *to,
                              sks_solve_state *st);

#endif
