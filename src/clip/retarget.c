/* Clips from another file: re-express an animation file's clips on a rig's
 * skeleton by joint name, retargeting keys by the local-rest difference
 * where the two files' rest poses differ (formulas in clip.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "skinsolve/clip.h"
#include "skinsolve/rig.h"
#include "math/sks_math.h"

static char *dup_str(const char *s) {
  size_t n = s ? strlen(s) : 0;
  char *d = malloc(n + 1);
  if (d) { if (n) memcpy(d, s, n); d[n] = 0; }
  return d;
}

static void free_names(char **names, size_t n) {
  for (size_t i = 0; i < n && names; ++i) free(names[i]);
  free(names);
}

void sks_clip_match_report_free(sks_clip_match_report *r) {
  if (!r) return;
  free_names(r->rig_only, r->rig_only_count);
  free_names(r->anim_only, r->anim_only_count);
  free_names(r->rest_differs, r->rest_differs_count);
  free_names(r->frames_differ, r->frames_differ_count);
  memset(r, 0, sizeof *r);
}

/* Global rest rotations (rotation part of the parent chain; parents first). */
static void global_rest_rotations(const sks_skeleton *sk, sks_quat *g) {
  for (size_t j = 0; j < sk->joint_count; ++j) {
    sks_quat r = sks_q_normalize(sk->rest[j].rotation);
    int32_t p = sk->parents[j];
    g[j] = (p >= 0 && (size_t)p < j) ? sks_q_normalize(sks_q_mul(g[p], r)) : r;
  }
}

static double quat_angle(sks_quat a, sks_quat b) {
  double d = fabs((double)sks_q_dot(sks_q_normalize(a), sks_q_normalize(b)));
  return 2.0 * acos(d > 1.0 ? 1.0 : d);
}

/* Per matched anim joint: the rig joint and the key maps. */
typedef struct joint_map {
  int32_t rig;          /* -1: not in the rig */
  sks_quat f;           /* F_j: rig joint frame = anim joint frame * F_j */
  sks_quat a, b;        /* rotation: q' = a * q * b (a = F_p^-1, b = F_j) */
  sks_quat cinv;        /* translation: t' = tr0 + cinv (t - ta0) */
  sks_vec3 ta0, tr0;
  sks_vec3 sratio;      /* scale: s' = s * sratio */
  int identity;         /* maps are exact copies */
} joint_map;

/* Angle (radians) between rig offset u and anim offset v seen in the rig
 * frame (F^-1 v); 0 when either is too short to say. */
static double offset_angle(sks_quat f, sks_vec3 v, sks_vec3 u) {
  sks_vec3 w = sks_q_rotate(sks_q_conj(f), v);
  double lw = sks_v3_len(w), lu = sks_v3_len(u);
  if (lw < 1e-6 || lu < 1e-6) return 0;
  double c = sks_v3_dot(w, u) / (lw * lu);
  return acos(c > 1 ? 1 : (c < -1 ? -1 : c));
}

static sks_quat map_q(const joint_map *m, const float *v) {
  return sks_q_mul(sks_q_mul(m->a, sks_q(v[0], v[1], v[2], v[3])), m->b);
}

/* Maps one key's components in place; tangent = 1 for CUBICSPLINE tangents
 * (linear part only). */
static void map_key(const joint_map *m, sks_track_path path, float *v, int tangent) {
  if (path == SKS_PATH_ROTATION) {
    sks_quat q = map_q(m, v);
    if (!tangent) q = sks_q_normalize(q);
    v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;
  } else if (path == SKS_PATH_TRANSLATION) {
    sks_vec3 t = sks_v3(v[0], v[1], v[2]);
    if (!tangent) t = sks_v3_sub(t, m->ta0);
    t = sks_q_rotate(m->cinv, t);
    if (!tangent) t = sks_v3_add(t, m->tr0);
    v[0] = t.x; v[1] = t.y; v[2] = t.z;
  } else {
    v[0] *= m->sratio.x; v[1] *= m->sratio.y; v[2] *= m->sratio.z;
  }
}

static float safe_ratio(float num, float den) {
  return (den != 0.0f && isfinite(num / den)) ? num / den : 1.0f;
}

static sks_result oom(sks_error *err) {
  return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "clips from file: out of memory");
}

static const char *file_of(const sks_model *m, const char *fallback) {
  return m->source_path ? m->source_path : fallback;
}

static sks_result build_maps(const sks_model *rig, const sks_model *anim, const sks_clip_match_options *o,
                             joint_map *maps, unsigned char *keyed, sks_clip_match_report *rep) {
  const sks_skeleton *rs = &rig->skeleton, *as = &anim->skeleton;
  size_t nr = rs->joint_count, na = as->joint_count;
  float tol = o && o->rest_tolerance > 0 ? o->rest_tolerance : 1e-4f;
  int copy = o && o->copy_as_is;
  sks_quat *gr = malloc((nr ? nr : 1) * sizeof *gr), *ga = malloc((na ? na : 1) * sizeof *ga);
  unsigned char *rig_hit = calloc(nr ? nr : 1, 1), *same_frames = calloc(na ? na : 1, 1);
  rep->rig_only = calloc(nr ? nr : 1, sizeof(char *));
  rep->anim_only = calloc(na ? na : 1, sizeof(char *));
  rep->rest_differs = calloc(na ? na : 1, sizeof(char *));
  rep->frames_differ = calloc(na ? na : 1, sizeof(char *));
  sks_result r = SKS_OK;
  if (!gr || !ga || !rig_hit || !same_frames || !rep->rig_only || !rep->anim_only || !rep->rest_differs ||
      !rep->frames_differ) {
    r = SKS_ERR_OUT_OF_MEMORY;
    goto done;
  }
  global_rest_rotations(rs, gr);
  global_rest_rotations(as, ga);
  for (size_t j = 0; j < na; ++j) {
    joint_map *m = &maps[j];
    memset(m, 0, sizeof *m);
    m->rig = sks_skeleton_find(rs, as->names[j]);
    if (m->rig >= 0 && rig_hit[m->rig]) m->rig = -1; /* a duplicate name: first anim joint wins */
    if (m->rig < 0) {
      if (!(rep->anim_only[rep->anim_only_count++] = dup_str(as->names[j]))) { r = SKS_ERR_OUT_OF_MEMORY; goto done; }
      rep->anim_only_keyed_count += keyed[j];
      continue;
    }
    rig_hit[m->rig] = 1;
    rep->matched_count++;
  }
  /* frame maps, parents first */
  for (size_t j = 0; j < na; ++j) {
    joint_map *m = &maps[j];
    if (m->rig < 0) continue;
    const sks_transform *ta = &as->rest[j], *tr = &rs->rest[m->rig];
    int32_t pa = as->parents[j], pr = rs->parents[m->rig];
    sks_quat fp;
    int parent_same = 1;
    if (pa >= 0 && maps[pa].rig >= 0 && maps[pa].rig == pr) {
      fp = maps[pa].f;
      parent_same = same_frames[pa];
    } else {
      sks_quat gpa = pa >= 0 ? ga[pa] : sks_q_identity(), gpr = pr >= 0 ? gr[pr] : sks_q_identity();
      fp = sks_q_normalize(sks_q_mul(sks_q_conj(gpa), gpr));
      parent_same = quat_angle(fp, sks_q_identity()) <= tol;
    }
    sks_quat qa0 = sks_q_normalize(ta->rotation), qr0 = sks_q_normalize(tr->rotation);
    double ang = quat_angle(qa0, qr0);
    double off = sks_v3_len(sks_v3_sub(ta->translation, tr->translation));
    double sc = fabs((double)safe_ratio(tr->scale.x, ta->scale.x) - 1) +
                fabs((double)safe_ratio(tr->scale.y, ta->scale.y) - 1) +
                fabs((double)safe_ratio(tr->scale.z, ta->scale.z) - 1);
    if (ang * 180.0 / 3.14159265358979323846 > rep->max_rest_angle_deg)
      rep->max_rest_angle_deg = ang * 180.0 / 3.14159265358979323846;
    if (off > rep->max_rest_offset) rep->max_rest_offset = off;
    double tlen = sks_v3_len(tr->translation);
    int differs = ang > tol || off > tol * (tlen > 1 ? tlen : 1) || sc > tol;
    if (differs && !(rep->rest_differs[rep->rest_differs_count++] = dup_str(as->names[j]))) {
      r = SKS_ERR_OUT_OF_MEMORY;
      goto done;
    }
    /* the two readings of the rest difference, judged by the children's offsets */
    sks_quat f_pose = sks_q_identity();
    sks_quat f_frames = sks_q_normalize(sks_q_mul(sks_q_mul(sks_q_conj(qa0), fp), qr0));
    double e_pose = 0, e_frames = 0;
    int evidence = 0;
    for (size_t c = j + 1; c < na; ++c) {
      if (as->parents[c] != (int32_t)j || maps[c].rig < 0 || rs->parents[maps[c].rig] != m->rig) continue;
      sks_vec3 v = as->rest[c].translation, u = rs->rest[maps[c].rig].translation;
      if (sks_v3_len(v) < 1e-6f || sks_v3_len(u) < 1e-6f) continue;
      e_pose += offset_angle(f_pose, v, u);
      e_frames += offset_angle(f_frames, v, u);
      evidence++;
    }
    int same;
    if (copy) same = 1;
    /* other frames only when they explain the offsets (mean < 1 degree) and the
     * same frames do not: proportions that differ explain neither, and a
     * differently posed skeleton is the common case */
    else if (evidence) same = !(e_frames / evidence < 0.0175 && e_pose / evidence > 0.0175);
    else same = parent_same;
    same_frames[j] = (unsigned char)same;
    m->f = same ? f_pose : f_frames;
    if (!same && quat_angle(m->f, sks_q_identity()) > tol &&
        !(rep->frames_differ[rep->frames_differ_count++] = dup_str(as->names[j]))) {
      r = SKS_ERR_OUT_OF_MEMORY;
      goto done;
    }
    if (differs && same) rep->pose_only_count++;
    if (copy) fp = sks_q_identity();
    m->a = m->cinv = sks_q_conj(fp);
    m->b = m->f;
    m->ta0 = ta->translation;
    m->tr0 = tr->translation;
    m->sratio = sks_v3(safe_ratio(tr->scale.x, ta->scale.x), safe_ratio(tr->scale.y, ta->scale.y),
                       safe_ratio(tr->scale.z, ta->scale.z));
    m->identity = copy || (!differs && quat_angle(fp, sks_q_identity()) <= tol &&
                           quat_angle(m->f, sks_q_identity()) <= tol);
  }
  for (size_t j = 0; j < nr; ++j)
    if (!rig_hit[j] && !(rep->rig_only[rep->rig_only_count++] = dup_str(rs->names[j]))) {
      r = SKS_ERR_OUT_OF_MEMORY;
      goto done;
    }
done:
  free(gr);
  free(ga);
  free(rig_hit);
  free(same_frames);
  return r;
}

static sks_result map_clip(const sks_clip *in, const joint_map *maps, size_t na, sks_clip *out,
                           sks_clip_match_report *rep) {
  memset(out, 0, sizeof *out);
  out->name = dup_str(in->name ? in->name : "");
  out->duration = in->duration;
  out->tracks = calloc(in->track_count ? in->track_count : 1, sizeof *out->tracks);
  if (!out->name || !out->tracks) return SKS_ERR_OUT_OF_MEMORY;
  for (size_t t = 0; t < in->track_count; ++t) {
    const sks_track *src = &in->tracks[t];
    if (src->joint < 0 || (size_t)src->joint >= na || maps[src->joint].rig < 0) {
      rep->tracks_dropped++;
      continue;
    }
    const joint_map *m = &maps[src->joint];
    sks_track *dst = &out->tracks[out->track_count++];
    *dst = *src;
    dst->joint = m->rig;
    dst->times = NULL;
    dst->values = NULL;
    uint32_t comps = sks_track_components(src->path);
    size_t per = src->interpolation == SKS_INTERP_CUBICSPLINE ? 3u * comps : comps;
    dst->times = malloc((src->key_count ? src->key_count : 1) * sizeof *dst->times);
    dst->values = malloc((src->key_count ? src->key_count : 1) * per * sizeof *dst->values);
    if (!dst->times || !dst->values) return SKS_ERR_OUT_OF_MEMORY;
    if (src->key_count) {
      memcpy(dst->times, src->times, src->key_count * sizeof *dst->times);
      memcpy(dst->values, src->values, src->key_count * per * sizeof *dst->values);
    }
    rep->tracks_kept++;
    if (m->identity) continue;
    for (size_t k = 0; k < src->key_count; ++k) {
      float *v = dst->values + k * per;
      if (src->interpolation == SKS_INTERP_CUBICSPLINE) {
        map_key(m, src->path, v, 1);
        map_key(m, src->path, v + comps, 0);
        map_key(m, src->path, v + 2 * comps, 1);
      } else {
        map_key(m, src->path, v, 0);
      }
    }
  }
  /* morph weights follow the mesh node of the same name, copied as they are */
  if (in->morph_track_count &&
      !(out->morph_tracks = calloc(in->morph_track_count, sizeof *out->morph_tracks)))
    return SKS_ERR_OUT_OF_MEMORY;
  for (size_t t = 0; t < in->morph_track_count; ++t) {
    const sks_morph_track *src = &in->morph_tracks[t];
    if (src->node < 0 || (size_t)src->node >= na || maps[src->node].rig < 0) continue;
    int dup = 0;
    for (size_t q = 0; q < out->morph_track_count; ++q) dup |= out->morph_tracks[q].node == maps[src->node].rig;
    if (dup) continue; /* one track per node */
    sks_morph_track *dst = &out->morph_tracks[out->morph_track_count++];
    *dst = *src;
    dst->node = maps[src->node].rig;
    size_t nv = sks_morph_track_value_count(src);
    dst->times = malloc((src->key_count ? src->key_count : 1) * sizeof *dst->times);
    dst->values = malloc((nv ? nv : 1) * sizeof *dst->values);
    if (!dst->times || !dst->values) return SKS_ERR_OUT_OF_MEMORY;
    if (src->key_count) memcpy(dst->times, src->times, src->key_count * sizeof *dst->times);
    if (nv) memcpy(dst->values, src->values, nv * sizeof *dst->values);
  }
  return SKS_OK;
}

sks_result sks_clips_from_model(const sks_model *rig, const sks_model *anim,
                                const sks_clip_match_options *options, sks_clip **out,
                                size_t *count, sks_clip_match_report *report, sks_error *err) {
  sks_clip_match_report local;
  sks_clip_match_report *rep = report ? report : &local;
  memset(rep, 0, sizeof *rep);
  if (out) *out = NULL;
  if (count) *count = 0;
  if (!rig || !anim || !out || !count)
    return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_clips_from_model: rig, anim, out and count are required");
  const char *rf = file_of(rig, "the rig"), *af = file_of(anim, "the animation file");
  const sks_skeleton *as = &anim->skeleton;
  size_t na = as->joint_count;
  rep->rig_joint_count = rig->skeleton.joint_count;
  rep->anim_joint_count = na;
  rep->copied_as_is = options && options->copy_as_is;
  for (size_t j = 0; j < rig->skeleton.joint_count; ++j)
    if (!rig->skeleton.names[j] || rig->skeleton.parents[j] >= (int32_t)j)
      return sks_error_set(err, SKS_ERR_INVALID, "%s: joint %zu has no name or comes before its parent", rf, j);
  for (size_t j = 0; j < na; ++j)
    if (!as->names[j] || as->parents[j] >= (int32_t)j)
      return sks_error_set(err, SKS_ERR_INVALID, "%s: joint %zu has no name or comes before its parent", af, j);
  if (anim->clip_count == 0) return sks_error_set(err, SKS_ERR_NOT_FOUND, "%s: has no clips", af);

  joint_map *maps = malloc((na ? na : 1) * sizeof *maps);
  unsigned char *keyed = calloc(na ? na : 1, 1);
  sks_clip *clips = calloc(anim->clip_count, sizeof *clips);
  sks_result r = SKS_OK;
  if (!maps || !keyed || !clips) { r = oom(err); goto fail; }
  for (size_t c = 0; c < anim->clip_count; ++c)
    for (size_t t = 0; t < anim->clips[c].track_count; ++t) {
      int32_t j = anim->clips[c].tracks[t].joint;
      if (j >= 0 && (size_t)j < na) keyed[j] = 1;
    }
  if ((r = build_maps(rig, anim, options, maps, keyed, rep)) != SKS_OK) { r = oom(err); goto fail; }
  if (rep->matched_count == 0) {
    r = sks_error_set(err, SKS_ERR_INVALID,
                      "%s: no joint is named like a joint of %s (%zu and %zu joints): its clips cannot be applied",
                      af, rf, na, rig->skeleton.joint_count);
    goto fail;
  }
  for (size_t c = 0; c < anim->clip_count; ++c)
    if (map_clip(&anim->clips[c], maps, na, &clips[c], rep) != SKS_OK) {
      for (size_t k = 0; k <= c; ++k) sks_clip_free(&clips[k]);
      free(clips);
      clips = NULL;
      r = oom(err);
      goto fail;
    }
  *out = clips;
  *count = anim->clip_count;
  free(maps);
  free(keyed);
  if (!report) sks_clip_match_report_free(&local);
  return SKS_OK;
fail:
  free(maps);
  free(keyed);
  free(clips);
  if (!report) sks_clip_match_report_free(&local);
  return r;
}
