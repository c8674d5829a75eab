/* Morph targets in a bake: carried by name onto the target, played in the
 * frame loop's metrics (bake_morph.h; README "Morph targets in a bake"). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "skinsolve/pose.h"
#include "solve/bake_morph.h"

void sks_bake_morphs_free(sks_bake_morphs *bm) {
  if (!bm) return;
  for (size_t i = 0; i < bm->map_count; ++i) {
    free(bm->maps[i].src_of); free(bm->maps[i].src_defaults); free(bm->maps[i].tg_defaults);
  }
  free(bm->maps); free(bm->vid); free(bm->dstart); free(bm->dweight); free(bm->delta);
  memset(bm, 0, sizeof *bm);
}

/* The first part on `node` with morph targets (the primitives of one glTF
 * mesh share their targets), or NULL. */
static const sks_mesh_part *morph_part(const sks_model *m, int32_t node) {
  for (size_t p = 0; p < m->part_count; ++p)
    if (m->parts[p].node == node && m->parts[p].morph_target_count) return &m->parts[p];
  return NULL;
}

/* Distinct nodes holding a part with morph targets, in part order. */
static size_t morph_nodes(const sks_model *m, int32_t *nodes) {
  size_t n = 0;
  for (size_t p = 0; p < m->part_count; ++p) {
    const sks_mesh_part *part = &m->parts[p];
    if (!part->morph_target_count || part->node < 0 || (size_t)part->node >= m->skeleton.joint_count) continue;
    size_t q = 0;
    while (q < n && nodes[q] != part->node) ++q;
    if (q == n) nodes[n++] = part->node;
  }
  return n;
}

static const sks_morph_track *clip_track(const sks_clip *clip, int32_t node) {
  for (size_t t = 0; t < clip->morph_track_count; ++t)
    if (clip->morph_tracks[t].node == node && clip->morph_tracks[t].key_count && clip->morph_tracks[t].weight_count)
      return &clip->morph_tracks[t];
  return NULL;
}

static int same_target(const sks_morph_target *a, size_t ia, const sks_morph_target *b, size_t ib) {
  if (a->name && b->name) return strcmp(a->name, b->name) == 0;
  return !a->name && !b->name && ia == ib;
}

static sks_result oom(sks_bake_morphs *bm, sks_error *err) {
  sks_bake_morphs_free(bm);
  return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory carrying the morph targets");
}

/* The largest |weight| source target i takes in the clips (values, not tangents). */
static double max_weight(const sks_clip *const *clips, size_t nclips, int32_t node, size_t i, float def) {
  double w = fabs((double)def);
  for (size_t c = 0; c < nclips; ++c) {
    const sks_morph_track *tr = clip_track(clips[c], node);
    if (!tr || i >= tr->weight_count) continue;
    int cubic = tr->interpolation == SKS_INTERP_CUBICSPLINE;
    for (size_t k = 0; k < tr->key_count; ++k) {
      double v = fabs((double)tr->values[((cubic ? 3 * k + 1 : k) * tr->weight_count) + i]);
      if (v > w) w = v;
    }
  }
  return w;
}

static double max_delta(const sks_model *m, int32_t node, size_t i) {
  double d = 0;
  for (size_t p = 0; p < m->part_count; ++p) {
    const sks_mesh_part *part = &m->parts[p];
    if (part->node != node || i >= part->morph_target_count || !part->morph_targets[i].position_deltas) continue;
    const float *x = part->morph_targets[i].position_deltas;
    for (size_t v = 0; v < part->vertex_count; ++v) {
      double l = sqrt((double)x[3 * v] * x[3 * v] + (double)x[3 * v + 1] * x[3 * v + 1] + (double)x[3 * v + 2] * x[3 * v + 2]);
      if (l > d) d = l;
    }
  }
  return d;
}

/* The source's animated targets that no target target plays: named in the
 * result, with the largest motion one of them makes. */
static sks_result report(const sks_model *src, const sks_clip *const *clips, size_t nclips, const int32_t *snodes,
                         size_t ns, const sks_bake_morphs *bm, double scale, double D, sks_bake_result *out,
                         sks_error *err) {
  size_t cap = 0;
  for (size_t a = 0; a < ns; ++a) cap += morph_part(src, snodes[a])->morph_target_count;
  out->morphs_not_carried = calloc(cap ? cap : 1, sizeof(char *));
  if (!out->morphs_not_carried) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  for (size_t a = 0; a < ns; ++a) {
    int32_t sn = snodes[a];
    int animated = 0;
    for (size_t c = 0; c < nclips && !animated; ++c) animated = clip_track(clips[c], sn) != NULL;
    if (!animated) continue;
    const sks_mesh_part *sp = morph_part(src, sn);
    const sks_bake_morph_map *mp = NULL;
    for (size_t q = 0; q < bm->map_count; ++q)
      if (bm->maps[q].src_node == sn) mp = &bm->maps[q];
    for (size_t i = 0; i < sp->morph_target_count; ++i) {
      int carried = 0;
      for (size_t k = 0; mp && k < mp->tg_count && !carried; ++k) carried = mp->src_of[k] == (int32_t)i;
      if (carried) { out->morphs_carried++; continue; }
      char name[300];
      const char *nn = src->skeleton.names[sn] ? src->skeleton.names[sn] : "?";
      if (sp->morph_targets[i].name) snprintf(name, sizeof name, "%.140s/%.140s", nn, sp->morph_targets[i].name);
      else snprintf(name, sizeof name, "%.140s/#%zu", nn, i);
      size_t len = strlen(name) + 1;
      char *s = malloc(len);
      if (!s) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory");
      memcpy(s, name, len);
      out->morphs_not_carried[out->morphs_not_carried_count++] = s;
      double pct = max_weight(clips, nclips, sn, i, sp->morph_targets[i].default_weight) * max_delta(src, sn, i) *
                   scale / D * 100.0;
      if (pct > out->morphs_not_carried_pct) out->morphs_not_carried_pct = pct;
    }
  }
  return SKS_OK;
}

sks_result sks_bake_morphs_build(sks_bake_morphs *bm, const sks_model *src, const sks_model *tg,
                                 const sks_skinview *tv, const sks_clip *const *clips, size_t nclips,
                                 double scale, double D, sks_bake_result *out, sks_error *err) {
  memset(bm, 0, sizeof *bm);
  int32_t *snodes = malloc((src->part_count ? src->part_count : 1) * sizeof(int32_t));
  int32_t *tnodes = malloc((tg->part_count ? tg->part_count : 1) * sizeof(int32_t));
  if (!snodes || !tnodes) { free(snodes); free(tnodes); return oom(bm, err); }
  size_t ns = morph_nodes(src, snodes), nt = morph_nodes(tg, tnodes);
  bm->maps = calloc(ns ? ns : 1, sizeof(sks_bake_morph_map));
  if (!bm->maps) { free(snodes); free(tnodes); return oom(bm, err); }
  /* nodes: the same name, or the one morph node of each side */
  for (size_t a = 0; a < ns; ++a) {
    int32_t sn = snodes[a], tn = -1;
    int animated = 0;
    for (size_t c = 0; c < nclips && !animated; ++c) animated = clip_track(clips[c], sn) != NULL;
    if (!animated) continue;
    for (size_t b = 0; b < nt && tn < 0; ++b)
      if (src->skeleton.names[sn] && tg->skeleton.names[tnodes[b]] &&
          !strcmp(src->skeleton.names[sn], tg->skeleton.names[tnodes[b]]))
        tn = tnodes[b];
    if (tn < 0 && ns == 1 && nt == 1) tn = tnodes[0];
    if (tn < 0) continue;
    const sks_mesh_part *sp = morph_part(src, sn), *tp = morph_part(tg, tn);
    sks_bake_morph_map *mp = &bm->maps[bm->map_count];
    mp->src_node = sn;
    mp->tg_node = tn;
    mp->src_count = sp->morph_target_count;
    mp->tg_count = tp->morph_target_count;
    mp->src_of = malloc(mp->tg_count * sizeof(int32_t));
    mp->src_defaults = malloc(mp->src_count * sizeof(float));
    mp->tg_defaults = malloc(mp->tg_count * sizeof(float));
    bm->map_count++; /* freed with bm */
    if (!mp->src_of || !mp->src_defaults || !mp->tg_defaults) { free(snodes); free(tnodes); return oom(bm, err); }
    for (size_t i = 0; i < mp->src_count; ++i) mp->src_defaults[i] = sp->morph_targets[i].default_weight;
    for (size_t k = 0; k < mp->tg_count; ++k) {
      mp->tg_defaults[k] = tp->morph_targets[k].default_weight;
      mp->src_of[k] = -1;
      for (size_t i = 0; i < mp->src_count && mp->src_of[k] < 0; ++i)
        if (same_target(&tp->morph_targets[k], k, &sp->morph_targets[i], i)) mp->src_of[k] = (int32_t)i;
      if (mp->src_of[k] >= 0) mp->matched++;
    }
    if (!mp->matched) { /* nothing to play: the node is not carried */
      free(mp->src_of); free(mp->src_defaults); free(mp->tg_defaults);
      memset(mp, 0, sizeof *mp);
      bm->map_count--;
      continue;
    }
    mp->weight_offset = bm->weight_total;
    bm->weight_total += mp->tg_count;
  }
  sks_result r = report(src, clips, nclips, snodes, ns, bm, scale, D, out, err);
  free(snodes);
  free(tnodes);
  if (r != SKS_OK) { sks_bake_morphs_free(bm); return r; }
  if (!bm->map_count) return SKS_OK;
  /* the target's deltas, in tv's vertex order and bind space */
  size_t total = 0;
  for (size_t p = 0; p < tg->part_count; ++p) total += tg->parts[p].vertex_count;
  uint32_t *view_of = malloc((total ? total : 1) * sizeof(uint32_t));
  size_t *part_base = malloc((tg->part_count ? tg->part_count : 1) * sizeof(size_t));
  uint32_t *count = calloc(tv->V + 1, sizeof(uint32_t));
  if (!view_of || !part_base || !count) { free(view_of); free(part_base); free(count); return oom(bm, err); }
  for (size_t q = 0; q < total; ++q) view_of[q] = UINT32_MAX;
  for (size_t k = 0; k < tv->V; ++k) view_of[tv->order[k]] = (uint32_t)k;
  for (size_t p = 0, o = 0; p < tg->part_count; ++p) { part_base[p] = o; o += tg->parts[p].vertex_count; }
  size_t entries = 0;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass) {
      bm->vertex_count = 0;
      for (size_t k = 0; k < tv->V; ++k) bm->vertex_count += count[k] > 0;
      bm->vid = malloc((bm->vertex_count ? bm->vertex_count : 1) * sizeof(uint32_t));
      bm->dstart = malloc((bm->vertex_count + 1) * sizeof(uint32_t));
      bm->dweight = malloc((entries ? entries : 1) * sizeof(uint32_t));
      bm->delta = malloc((entries ? entries : 1) * 3 * sizeof(double));
      if (!bm->vid || !bm->dstart || !bm->dweight || !bm->delta) {
        free(view_of); free(part_base); free(count);
        return oom(bm, err);
      }
      /* count[k] becomes the write position of view vertex k's entries */
      uint32_t o = 0;
      for (size_t k = 0, i = 0; k < tv->V; ++k) {
        if (!count[k]) continue;
        bm->vid[i] = (uint32_t)k;
        bm->dstart[i++] = o;
        uint32_t n = count[k];
        count[k] = o;
        o += n;
      }
      bm->dstart[bm->vertex_count] = o;
    }
    for (size_t q = 0; q < bm->map_count; ++q) {
      const sks_bake_morph_map *mp = &bm->maps[q];
      for (size_t p = 0; p < tg->part_count; ++p) {
        const sks_mesh_part *part = &tg->parts[p];
        if (part->node != mp->tg_node || !part->morph_target_count) continue;
        double L[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}; /* part data -> bind space (skinview.c) */
        if (part->skin < 0) {
          sks_daffine place = sks_daff_mul(&tv->T_inv, &tv->rest_models[part->node]);
          memcpy(L, place.l, sizeof L);
        }
        size_t nk = part->morph_target_count < mp->tg_count ? part->morph_target_count : mp->tg_count;
        for (size_t t = 0; t < nk; ++t) {
          const float *d = part->morph_targets[t].position_deltas;
          if (!d) continue;
          for (size_t v = 0; v < part->vertex_count; ++v) {
            uint32_t k = view_of[part_base[p] + v];
            if (k == UINT32_MAX || (d[3 * v] == 0 && d[3 * v + 1] == 0 && d[3 * v + 2] == 0)) continue;
            if (!pass) { count[k]++; entries++; continue; }
            uint32_t e = count[k]++;
            double x[3] = {d[3 * v], d[3 * v + 1], d[3 * v + 2]};
            bm->dweight[e] = (uint32_t)(mp->weight_offset + t);
            sks_dm3_apply(L, x, &bm->delta[3 * e]);
          }
        }
      }
    }
  }
  free(view_of); free(part_base); free(count);
  return SKS_OK;
}

sks_result sks_bake_morphs_clip(const sks_bake_morphs *bm, const sks_clip *clip, float fps,
                                sks_baked_clip *out, sks_error *err) {
  size_t n = 0;
  for (size_t q = 0; q < bm->map_count; ++q) n += clip_track(clip, bm->maps[q].src_node) != NULL;
  if (!n) return SKS_OK;
  out->morph_tracks = calloc(n, sizeof(sks_morph_track));
  if (!out->morph_tracks) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  float *sw = NULL;
  if (fps > 0) {
    size_t most = 1;
    for (size_t q = 0; q < bm->map_count; ++q) if (bm->maps[q].src_count > most) most = bm->maps[q].src_count;
    if (!(sw = malloc(most * sizeof(float)))) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  }
  for (size_t q = 0; q < bm->map_count; ++q) {
    const sks_bake_morph_map *mp = &bm->maps[q];
    const sks_morph_track *st = clip_track(clip, mp->src_node);
    if (!st) continue;
    /* as they were (the bake keeps the source's key times), else at the frame times */
    int copy = !(fps > 0);
    if (!copy && (double)out->frame_count * (double)mp->tg_count > (double)SKS_MAX_MORPH_TRACK_VALUES) {
      free(sw);
      return sks_error_set(err, SKS_ERR_INVALID,
                           "clip '%s': %zu frames x %zu morph weights is more than a weights track may hold "
                           "(%u values; lower --fps)", out->name, out->frame_count, mp->tg_count,
                           (unsigned)SKS_MAX_MORPH_TRACK_VALUES);
    }
    sks_morph_track *tt = &out->morph_tracks[out->morph_track_count++];
    tt->node = mp->tg_node;
    tt->weight_count = mp->tg_count;
    tt->interpolation = copy ? st->interpolation : SKS_INTERP_LINEAR;
    tt->key_count = copy ? st->key_count : out->frame_count;
    size_t per = copy && st->interpolation == SKS_INTERP_CUBICSPLINE ? 3 : 1;
    tt->times = malloc(tt->key_count * sizeof(float));
    tt->values = malloc(tt->key_count * per * tt->weight_count * sizeof(float));
    if (!tt->times || !tt->values) { free(sw); return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory"); }
    for (size_t k = 0; k < tt->key_count; ++k) {
      tt->times[k] = copy ? st->times[k] : out->times[k];
      if (!copy) {
        sks_morph_sampling_job sj = {clip, mp->src_node, mp->src_defaults, mp->src_count, out->times[k], 0, sw, 0};
        sks_morph_sampling_job_run(&sj);
      }
      for (size_t e = 0; e < per; ++e) {
        int tangent = per == 3 && e != 1;
        float *v = &tt->values[(k * per + e) * tt->weight_count];
        for (size_t i = 0; i < tt->weight_count; ++i) {
          int32_t s = mp->src_of[i];
          if (s < 0) v[i] = tangent ? 0.0f : mp->tg_defaults[i];
          else if (!copy) v[i] = sw[s];
          else if ((size_t)s < st->weight_count) v[i] = st->values[(k * per + e) * st->weight_count + (size_t)s];
          else v[i] = tangent ? 0.0f : mp->src_defaults[s];
        }
      }
    }
  }
  free(sw);
  return SKS_OK;
}

int sks_bake_morphs_frame(const sks_bake_morphs *bm, const sks_baked_clip *out, float t, float *weights,
                          double *delta) {
  if (!bm->vertex_count || !out->morph_track_count) return 0;
  sks_clip view;
  memset(&view, 0, sizeof view); /* duration 0: the tracks clamp at their own keys */
  view.morph_track_count = out->morph_track_count;
  view.morph_tracks = out->morph_tracks;
  int any = 0;
  for (size_t q = 0; q < bm->map_count; ++q) {
    const sks_bake_morph_map *mp = &bm->maps[q];
    float *w = &weights[mp->weight_offset];
    sks_morph_sampling_job sj = {&view, mp->tg_node, mp->tg_defaults, mp->tg_count, t, 0, w, 0};
    sks_morph_sampling_job_run(&sj);
    if (!sj.sampled) memset(w, 0, mp->tg_count * sizeof(float)); /* no track: the bake leaves the node alone */
    for (size_t k = 0; k < mp->tg_count; ++k) any |= w[k] != 0.0f;
  }
  if (!any) return 0;
  for (size_t i = 0; i < bm->vertex_count; ++i) {
    double d[3] = {0, 0, 0};
    for (uint32_t e = bm->dstart[i]; e < bm->dstart[i + 1]; ++e) {
      double wt = weights[bm->dweight[e]];
      for (int a = 0; a < 3; ++a) d[a] += wt * bm->delta[3 * e + a];
    }
    memcpy(&delta[3 * i], d, sizeof d);
  }
  return 1;
}

void sks_bake_morphs_add(const sks_bake_morphs *bm, const double *delta, const uint32_t *start,
                         const uint32_t *pal, const double *w, const sks_daffine *M, double *yd, float *yf) {
  for (size_t i = 0; i < bm->vertex_count; ++i) {
    uint32_t k = bm->vid[i];
    double L[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, o[3];
    for (uint32_t q = start[k]; q < start[k + 1]; ++q)
      for (int a = 0; a < 9; ++a) L[a] += w[q] * M[pal[q]].l[a];
    sks_dm3_apply(L, &delta[3 * i], o);
    for (int a = 0; a < 3; ++a) {
      if (yd) yd[3 * k + a] += o[a];
      else yf[3 * k + a] += (float)o[a];
    }
  }
}

/* ---- the solve on the morphed bind ------------------------------------------ */

void sks_bake_morph_solve_free(sks_bake_morph_solve *ms) {
  if (!ms) return;
  free(ms->cid); free(ms->mv); free(ms->lstart); free(ms->L); free(ms->praw); free(ms->bentry);
  free(ms->pair_of);
  memset(ms, 0, sizeof *ms);
}

sks_result sks_bake_morphs_solve_build(sks_bake_morph_solve *ms, const sks_bake_morphs *bm,
                                       const sks_solve_problem *p, const sks_skinview *tv,
                                       const int32_t *joint_bone, const double *carry, sks_error *err) {
  memset(ms, 0, sizeof *ms);
  size_t n = p->inf.vertex_count, B = p->bone_count, ninf = p->inf.start[n];
  if (!bm->vertex_count || !n) return SKS_OK;
  /* the constraints a carried target moves (bm->vid is sorted by view vertex) */
  int32_t *mv_of = malloc((tv->V ? tv->V : 1) * sizeof(int32_t));
  if (!mv_of) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory carrying the morph targets");
  for (size_t k = 0; k < tv->V; ++k) mv_of[k] = -1;
  for (size_t i = 0; i < bm->vertex_count; ++i) mv_of[bm->vid[i]] = (int32_t)i;
  size_t count = 0, nl = 0, refs = 0;
  for (size_t k = 0; k < n; ++k) {
    uint32_t ni = p->inf.start[k + 1] - p->inf.start[k];
    refs += (size_t)ni * ni; /* bound: every (i, j) with b <= c */
    if (mv_of[p->ids[k]] >= 0) { ++count; nl += ni; }
  }
  if (!count) { free(mv_of); return SKS_OK; }
  ms->count = count;
  ms->cid = malloc(count * sizeof(uint32_t));
  ms->mv = malloc(count * sizeof(uint32_t));
  ms->lstart = malloc((count + 1) * sizeof(uint32_t));
  ms->L = malloc((nl ? nl : 1) * 9 * sizeof(double));
  ms->praw = malloc((ninf ? ninf : 1) * 3 * sizeof(double));
  ms->bentry = malloc((ninf ? ninf : 1) * sizeof(uint32_t));
  ms->pair_of = malloc((refs ? refs : 1) * sizeof(uint32_t));
  uint32_t *fill = malloc((B ? B : 1) * sizeof(uint32_t));
  int32_t *pair_index = malloc((B ? B * B : 1) * sizeof(int32_t));
  if (!ms->cid || !ms->mv || !ms->lstart || !ms->L || !ms->praw || !ms->bentry || !ms->pair_of || !fill ||
      !pair_index) {
    free(mv_of); free(fill); free(pair_index);
    sks_bake_morph_solve_free(ms);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory carrying the morph targets");
  }
  /* p uncentred; each influence's per-bone entry (sks_solve_problem_build's fill order) */
  memcpy(fill, p->bstart, B * sizeof(uint32_t));
  for (size_t k = 0; k < n; ++k)
    for (uint32_t i = p->inf.start[k]; i < p->inf.start[k + 1]; ++i) {
      uint32_t b = p->inf.bone[i];
      for (int a = 0; a < 3; ++a) ms->praw[3 * i + a] = p->inf.p[3 * i + a] + p->centroid[3 * b + a];
      ms->bentry[i] = fill[b]++;
    }
  /* each influence pair's moment, in the build's order */
  for (size_t q = 0; q < B * B; ++q) pair_index[q] = -1;
  for (size_t q = 0; q < p->pair_count; ++q) pair_index[p->pairs[q].b * B + p->pairs[q].c] = (int32_t)q;
  size_t o = 0;
  int ok = 1;
  for (size_t k = 0; k < n && ok; ++k)
    for (uint32_t i = p->inf.start[k]; i < p->inf.start[k + 1]; ++i)
      for (uint32_t j = p->inf.start[k]; j < p->inf.start[k + 1]; ++j) {
        uint32_t b = p->inf.bone[i], c = p->inf.bone[j];
        if (b > c) continue;
        int32_t pi = pair_index[b * B + c];
        if (pi < 0 || o >= refs) { ok = 0; break; }
        ms->pair_of[o++] = (uint32_t)pi;
      }
  ms->pair_ref_count = o;
  /* L = C_b * linear(IBM_e) per influence of the moved constraints, in the
   * target setup's order (its influences skip joint-less and zero weights) */
  size_t a = 0, l = 0;
  for (size_t k = 0; k < n && ok; ++k) {
    uint32_t v = p->ids[k];
    if (mv_of[v] < 0) continue;
    ms->cid[a] = (uint32_t)k;
    ms->mv[a] = (uint32_t)mv_of[v];
    ms->lstart[a++] = (uint32_t)l;
    uint32_t o2 = p->inf.start[k];
    for (uint32_t i = tv->start[v]; i < tv->start[v + 1]; ++i) {
      uint32_t e = tv->pal[i];
      int32_t jj = tv->pal_joint[e];
      if (jj < 0 || tv->w[i] == 0.0) continue;
      int32_t b = joint_bone[jj];
      if (o2 >= p->inf.start[k + 1] || b < 0 || p->inf.bone[o2] != (uint32_t)b) { ok = 0; break; }
      double m[9];
      for (int r = 0; r < 3; ++r)
        for (int cc = 0; cc < 3; ++cc)
          m[r * 3 + cc] = carry[9 * b + r * 3] * tv->pal_ibm[e].l[cc] + carry[9 * b + r * 3 + 1] * tv->pal_ibm[e].l[3 + cc] +
                          carry[9 * b + r * 3 + 2] * tv->pal_ibm[e].l[6 + cc];
      memcpy(&ms->L[9 * l++], m, sizeof m);
      ++o2;
    }
    if (o2 != p->inf.start[k + 1]) ok = 0;
  }
  ms->lstart[a] = (uint32_t)l;
  free(mv_of); free(fill); free(pair_index);
  if (!ok) {
    sks_bake_morph_solve_free(ms);
    return sks_error_set(err, SKS_ERR_INVALID, "morph targets: the solve's influences do not match the target's (internal)");
  }
  return SKS_OK;
}

void sks_bake_morph_scratch_free(sks_bake_morph_scratch *s) {
  if (!s) return;
  free(s->p); free(s->bp); free(s->centroid); free(s->radius2); free(s->pairs);
  memset(s, 0, sizeof *s);
}

int sks_bake_morph_scratch_alloc(sks_bake_morph_scratch *s, const sks_solve_problem *p) {
  size_t ninf = p->inf.start[p->inf.vertex_count], B = p->bone_count;
  s->p = malloc((ninf ? ninf : 1) * 3 * sizeof(double));
  s->bp = malloc((ninf ? ninf : 1) * 3 * sizeof(double));
  s->centroid = malloc((B ? B : 1) * 3 * sizeof(double));
  s->radius2 = malloc((B ? B : 1) * sizeof(double));
  s->pairs = malloc((p->pair_count ? p->pair_count : 1) * sizeof(sks_pair_moments));
  if (s->p && s->bp && s->centroid && s->radius2 && s->pairs) return 1;
  sks_bake_morph_scratch_free(s);
  return 0;
}

void sks_bake_morphs_solve_frame(const sks_bake_morph_solve *ms, const sks_solve_problem *base,
                                 const double *delta, const uint32_t *tstart, const uint32_t *tpal,
                                 const double *tw, const sks_daffine *M, double *yc,
                                 sks_bake_morph_scratch *s, sks_solve_problem *mp) {
  size_t n = base->inf.vertex_count, B = base->bone_count, ninf = base->inf.start[n];
  const sks_influences *in = &base->inf;
  /* p = C_b IBM (x + delta): the unmorphed p plus L delta; y = X x + L(X) delta */
  memcpy(s->p, ms->praw, ninf * 3 * sizeof(double));
  for (size_t a = 0; a < ms->count; ++a) {
    uint32_t k = ms->cid[a];
    const double *d = &delta[3 * ms->mv[a]];
    for (uint32_t i = in->start[k], l = ms->lstart[a]; i < in->start[k + 1]; ++i, ++l) {
      double o[3];
      sks_dm3_apply(&ms->L[9 * l], d, o);
      for (int q = 0; q < 3; ++q) s->p[3 * i + q] += o[q];
    }
    double X[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, o[3];
    for (uint32_t q = tstart[k]; q < tstart[k + 1]; ++q)
      for (int e = 0; e < 9; ++e) X[e] += tw[q] * M[tpal[q]].l[e];
    sks_dm3_apply(X, d, o);
    for (int q = 0; q < 3; ++q) yc[3 * k + q] += o[q];
  }
  /* centroids, centred p and radii as sks_solve_problem_build makes them */
  memset(s->centroid, 0, B * 3 * sizeof(double));
  memset(s->radius2, 0, B * sizeof(double));
  for (size_t i = 0; i < ninf; ++i) {
    uint32_t b = in->bone[i];
    double ww = in->w[i] * in->w[i];
    for (int q = 0; q < 3; ++q) s->centroid[3 * b + q] += ww * s->p[3 * i + q];
  }
  for (size_t b = 0; b < B; ++b)
    if (base->wsum2[b] > 0)
      for (int q = 0; q < 3; ++q) s->centroid[3 * b + q] /= base->wsum2[b];
  for (size_t i = 0; i < ninf; ++i) {
    uint32_t b = in->bone[i];
    for (int q = 0; q < 3; ++q) s->p[3 * i + q] -= s->centroid[3 * b + q];
    s->radius2[b] += in->w[i] * in->w[i] * sks_d3_dot(&s->p[3 * i], &s->p[3 * i]);
    memcpy(&s->bp[3 * ms->bentry[i]], &s->p[3 * i], 3 * sizeof(double));
  }
  for (size_t b = 0; b < B; ++b)
    if (base->wsum2[b] > 0) s->radius2[b] /= base->wsum2[b];
  /* pair moments (the weights, so s, are unchanged) */
  for (size_t q = 0; q < base->pair_count; ++q) {
    s->pairs[q] = base->pairs[q];
    memset(s->pairs[q].mb, 0, sizeof s->pairs[q].mb);
    memset(s->pairs[q].mc, 0, sizeof s->pairs[q].mc);
    memset(s->pairs[q].P, 0, sizeof s->pairs[q].P);
  }
  size_t r = 0;
  for (size_t k = 0; k < n; ++k)
    for (uint32_t i = in->start[k]; i < in->start[k + 1]; ++i)
      for (uint32_t j = in->start[k]; j < in->start[k + 1]; ++j) {
        if (in->bone[i] > in->bone[j]) continue;
        sks_pair_moments *pm = &s->pairs[ms->pair_of[r++]];
        double ww = in->w[i] * in->w[j];
        const double *pb = &s->p[3 * i], *pc = &s->p[3 * j];
        for (int a = 0; a < 3; ++a) {
          pm->mb[a] += ww * pb[a];
          pm->mc[a] += ww * pc[a];
          for (int d = 0; d < 3; ++d) pm->P[a * 3 + d] += ww * pb[a] * pc[d];
        }
      }
  *mp = *base;
  mp->inf.p = s->p;
  mp->bp = s->bp;
  mp->centroid = s->centroid;
  mp->radius2 = s->radius2;
  mp->pairs = s->pairs;
}

void sks_bake_morphs_recentre(const sks_solve_problem *p, const double *from, const double *to,
                              sks_solve_state *st) {
  for (size_t b = 0; b < p->bone_count; ++b) {
    if (!(p->wsum2[b] > 0)) continue;
    double d[3] = {to[3 * b] - from[3 * b], to[3 * b + 1] - from[3 * b + 1], to[3 * b + 2] - from[3 * b + 2]}, o[3];
    sks_dm3_apply(&st->R[9 * b], d, o);
    for (int a = 0; a < 3; ++a) st->u[3 * b + a] += o[a];
  }
}
