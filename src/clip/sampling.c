/* Clip sampling (keyframe tracks -> local joint transforms), pose blending,
 * and the sorted union of a clip's key times.
 *
 * Interpolation follows the glTF 2.0 spec (Appendix C):
 *  - STEP: the value of the key at or before t.
 *  - LINEAR: lerp for translation/scale; rotation by slerp (shortest path) or,
 *    on request, nlerp.
 *  - CUBICSPLINE: each key stores (in-tangent a, value v, out-tangent b). With
 *    td = t[k+1] - t[k] and s in [0,1]:
 *      p(s) = (2s^3 - 3s^2 + 1) v_k + td (s^3 - 2s^2 + s) b_k
 *           + (-2s^3 + 3s^2) v_k+1 + td (s^3 - s^2) a_k+1
 *    rotations are normalised afterwards.
 * A time exactly on a key returns that key's stored value bit for bit. */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "skinsolve/pose.h"
#include "math/sks_math.h"

static int track_valid(const sks_track *t, size_t joint_count) {
  if (t->joint < 0 || (size_t)t->joint >= joint_count) return 0;
  if (t->path != SKS_PATH_TRANSLATION && t->path != SKS_PATH_ROTATION && t->path != SKS_PATH_SCALE)
    return 0;
  if (t->interpolation != SKS_INTERP_LINEAR && t->interpolation != SKS_INTERP_STEP &&
      t->interpolation != SKS_INTERP_CUBICSPLINE)
    return 0;
  if (t->key_count > 0 && (!t->times || !t->values)) return 0;
  return 1;
}

int sks_sampling_job_validate(const sks_sampling_job *job) {
  if (!job || !job->clip) return 0;
  if (job->joint_count > 0 && (!job->rest || !job->output)) return 0;
  if (!isfinite(job->time)) return 0;
  const sks_clip *clip = job->clip;
  if (clip->track_count > 0 && !clip->tracks) return 0;
  for (size_t i = 0; i < clip->track_count; ++i)
    if (!track_valid(&clip->tracks[i], job->joint_count)) return 0;
  return 1;
}

/* Index k of the last key with times[k] <= t (0 if t < times[0]). */
static size_t find_key(const float *times, size_t n, float t) {
  size_t lo = 0, hi = n; /* invariant: answer in [lo, hi) */
  if (t < times[0]) return 0;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (times[mid] <= t) lo = mid;
    else hi = mid;
  }
  return lo;
}

/* The value at t of keys (times[n], values with comps floats per value, 3
 * values per key for CUBICSPLINE) into out[count] (count <= comps: the
 * first components). rotation: comps is 4, a quaternion (slerp or nlerp,
 * normalised after the Hermite). Joint tracks and morph weights share it. */
static void sample_keys(const float *times, const float *values, size_t n, sks_interpolation interp,
                        size_t comps, size_t count, int rotation, int nlerp, float t, float *out) {
  const int cubic = interp == SKS_INTERP_CUBICSPLINE;
  /* Stride between keys in values[], and the offset of the value itself. */
  const size_t kstride = cubic ? 3u * comps : comps, voff = cubic ? comps : 0;
  size_t k = find_key(times, n, t);
  const float *vk = values + k * kstride + voff;
  if (n == 1 || t <= times[0] || k + 1 >= n || interp == SKS_INTERP_STEP || t == times[k]) {
    memcpy(out, vk, count * sizeof(float));
    return;
  }
  const float t0 = times[k], t1 = times[k + 1];
  const float td = t1 - t0;
  const float s = td > 0.0f ? (t - t0) / td : 0.0f;
  const float *vk1 = values + (k + 1) * kstride + voff;
  if (cubic) {
    const float *bk = values + k * kstride + 2 * comps; /* out-tangent of k */
    const float *ak1 = values + (k + 1) * kstride;     /* in-tangent of k+1 */
    const float s2 = s * s, s3 = s2 * s;
    const float h00 = 2 * s3 - 3 * s2 + 1, h10 = (s3 - 2 * s2 + s) * td;
    const float h01 = -2 * s3 + 3 * s2, h11 = (s3 - s2) * td;
    for (size_t c = 0; c < count; ++c) out[c] = h00 * vk[c] + h10 * bk[c] + h01 * vk1[c] + h11 * ak1[c];
    if (rotation) {
      sks_quat q = sks_q_normalize(sks_q(out[0], out[1], out[2], out[3]));
      out[0] = q.x; out[1] = q.y; out[2] = q.z; out[3] = q.w;
    }
    return;
  }
  if (rotation) {
    sks_quat a = sks_q(vk[0], vk[1], vk[2], vk[3]), b = sks_q(vk1[0], vk1[1], vk1[2], vk1[3]);
    sks_quat q = nlerp ? sks_q_nlerp(a, b, s) : sks_q_normalize(sks_q_slerp(a, b, s));
    out[0] = q.x; out[1] = q.y; out[2] = q.z; out[3] = q.w;
    return;
  }
  for (size_t c = 0; c < count; ++c) out[c] = vk[c] + (vk1[c] - vk[c]) * s;
}

/* Writes the track's value at t into out[comps]. */
static void sample_track(const sks_track *tr, float t, int nlerp, float *out) {
  const uint32_t comps = sks_track_components(tr->path);
  sample_keys(tr->times, tr->values, tr->key_count, tr->interpolation, comps, comps, tr->path == SKS_PATH_ROTATION,
              nlerp, t, out);
}

/* Clip-local time: clamped to [0, duration] or wrapped into [0, duration). */
static float clip_time_of(const sks_clip *clip, float t, int loop) {
  float d = clip->duration;
  if (!(d > 0.0f)) return t < 0.0f ? 0.0f : t; /* still lets a 0-length clip hit its keys */
  if (loop) {
    float w = fmodf(t, d);
    if (w < 0.0f) w += d;
    if (w >= d) w = 0.0f;
    return w;
  }
  return t < 0.0f ? 0.0f : (t > d ? d : t);
}

int sks_sampling_job_run(const sks_sampling_job *job) {
  if (!sks_sampling_job_validate(job)) return 0;
  if (job->output != job->rest)
    memcpy(job->output, job->rest, job->joint_count * sizeof(sks_transform));
  const float t = clip_time_of(job->clip, job->time, job->loop);
  const sks_clip *clip = job->clip;
  for (size_t i = 0; i < clip->track_count; ++i) {
    const sks_track *tr = &clip->tracks[i];
    if (tr->key_count == 0) continue;
    sks_transform *o = &job->output[tr->joint];
    float v[4];
    sample_track(tr, t, job->nlerp, v);
    switch (tr->path) {
      case SKS_PATH_TRANSLATION: o->translation = sks_v3(v[0], v[1], v[2]); break;
      case SKS_PATH_ROTATION: o->rotation = sks_q(v[0], v[1], v[2], v[3]); break;
      case SKS_PATH_SCALE: o->scale = sks_v3(v[0], v[1], v[2]); break;
    }
  }
  return 1;
}

size_t sks_morph_track_value_count(const sks_morph_track *track) {
  if (!track) return 0;
  return track->key_count * track->weight_count * (track->interpolation == SKS_INTERP_CUBICSPLINE ? 3u : 1u);
}

static int morph_track_valid(const sks_morph_track *t) {
  if (t->interpolation != SKS_INTERP_LINEAR && t->interpolation != SKS_INTERP_STEP &&
      t->interpolation != SKS_INTERP_CUBICSPLINE)
    return 0;
  return t->key_count == 0 || t->weight_count == 0 || (t->times && t->values);
}

int sks_morph_sampling_job_validate(const sks_morph_sampling_job *job) {
  if (!job || (job->weight_count > 0 && !job->output) || !isfinite(job->time)) return 0;
  if (job->clip && job->clip->morph_track_count > 0 && !job->clip->morph_tracks) return 0;
  for (size_t i = 0; job->clip && i < job->clip->morph_track_count; ++i)
    if (!morph_track_valid(&job->clip->morph_tracks[i])) return 0;
  return 1;
}

/* The weights of track tr at t into out[0..n) (n <= tr->weight_count): glTF's
 * "weights" are scalars per target, interpolated component-wise. */
static void sample_morph_track(const sks_morph_track *tr, float t, size_t n, float *out) {
  sample_keys(tr->times, tr->values, tr->key_count, tr->interpolation, tr->weight_count, n, 0, 0, t, out);
}

int sks_morph_sampling_job_run(sks_morph_sampling_job *job) {
  if (!sks_morph_sampling_job_validate(job)) return 0;
  job->sampled = 0;
  for (size_t i = 0; i < job->weight_count; ++i) job->output[i] = job->defaults ? job->defaults[i] : 0.0f;
  const sks_clip *clip = job->clip;
  if (!clip) return 1;
  for (size_t i = 0; i < clip->morph_track_count; ++i) {
    const sks_morph_track *tr = &clip->morph_tracks[i];
    if (tr->node != job->node || tr->key_count == 0 || tr->weight_count == 0) continue;
    size_t n = tr->weight_count < job->weight_count ? tr->weight_count : job->weight_count;
    sample_morph_track(tr, clip_time_of(clip, job->time, job->loop), n, job->output);
    job->sampled = 1;
    break; /* one track per node */
  }
  return 1;
}

int sks_morph_job_validate(const sks_morph_job *job) {
  if (!job || !job->part) return 0;
  const sks_mesh_part *p = job->part;
  if (p->vertex_count && (!p->positions || !job->positions_out)) return 0;
  if (p->morph_target_count && (!p->morph_targets || !job->weights)) return 0;
  return 1;
}

int sks_morph_job_run(const sks_morph_job *job) {
  if (!sks_morph_job_validate(job)) return 0;
  const sks_mesh_part *p = job->part;
  const size_t n3 = 3 * p->vertex_count;
  float *nrm = p->normals ? job->normals_out : NULL;
  if (job->positions_out != p->positions) memcpy(job->positions_out, p->positions, n3 * sizeof(float));
  if (nrm && nrm != p->normals) memcpy(nrm, p->normals, n3 * sizeof(float));
  for (size_t t = 0; t < p->morph_target_count; ++t) {
    const float w = job->weights[t];
    const sks_morph_target *mt = &p->morph_targets[t];
    if (w == 0.0f) continue;
    if (mt->position_deltas)
      for (size_t i = 0; i < n3; ++i) job->positions_out[i] += w * mt->position_deltas[i];
    if (nrm && mt->normal_deltas)
      for (size_t i = 0; i < n3; ++i) nrm[i] += w * mt->normal_deltas[i];
  }
  return 1;
}

int sks_blending_job_validate(const sks_blending_job *job) {
  if (!job) return 0;
  if (job->joint_count > 0 && (!job->a || !job->b || !job->output)) return 0;
  return isfinite(job->weight) != 0;
}

int sks_blending_job_run(const sks_blending_job *job) {
  if (!sks_blending_job_validate(job)) return 0;
  const float w = job->weight;
  for (size_t i = 0; i < job->joint_count; ++i) {
    const sks_transform a = job->a[i], b = job->b[i];
    sks_transform *o = &job->output[i];
    o->translation = sks_v3_lerp(a.translation, b.translation, w);
    o->scale = sks_v3_lerp(a.scale, b.scale, w);
    o->rotation = sks_q_nlerp(a.rotation, b.rotation, w);
  }
  return 1;
}

static int cmp_float(const void *pa, const void *pb) {
  float a = *(const float *)pa, b = *(const float *)pb;
  return (a > b) - (a < b);
}

sks_result sks_clip_key_times(const sks_clip *clip, float **times, size_t *count, sks_error *err) {
  if (!clip || !times || !count)
    return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_clip_key_times: NULL argument");
  *times = NULL;
  *count = 0;
  size_t total = 0;
  for (size_t i = 0; i < clip->track_count; ++i) total += clip->tracks[i].key_count;
  if (total == 0) return SKS_OK;
  float *all = malloc(total * sizeof(float));
  if (!all)
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "clip '%s': out of memory collecting %zu key times",
                         clip->name ? clip->name : "", total);
  size_t n = 0;
  for (size_t i = 0; i < clip->track_count; ++i) {
    const sks_track *tr = &clip->tracks[i];
    for (size_t k = 0; k < tr->key_count; ++k)
      if (isfinite(tr->times[k])) all[n++] = tr->times[k];
  }

  qsort(all, n, sizeof(float), cmp_float);
  size_t m = 0;
  for (size_t i = 0; i < n; ++i)
    if (m == 0 || all[i] - all[m - 1] > 1e-6f) all[m++] = all[i];
  if (m == 0) { free(all); return SKS_OK; }
  float *shrunk = realloc(all, m * sizeof(float));
  *times = shrunk ? shrunk : all;
  *count = m;
  return SKS_OK;
}

/* times - t0 (t0 <= 0; exact in double, then rounded), each one float
 * step after the previous at least; returns how many had to move. A
 * non-finite time, or one after a non-finite time, stays as it is: the
 * writer and the checks refuse it by name (bumping would have turned a
 * NaN key into a valid time under a warning about equal times). */
static size_t times_from(float *times, size_t n, double t0) {
  size_t bumped = 0;
  for (size_t k = 0; k < n; ++k) {
    float t = t0 < 0 ? (float)((double)times[k] - t0) : times[k];
    if (k && isfinite(t) && isfinite(times[k - 1]) && !(t > times[k - 1])) {
      t = nextafterf(times[k - 1], INFINITY);
      ++bumped;
    }
    times[k] = t;
  }
  return bumped;
}

void sks_clip_times_for_gltf(sks_clip *clip, double *shift, size_t *bumped) {
  double t0 = 0;
  for (size_t t = 0; t < clip->track_count; ++t)
    if (clip->tracks[t].key_count && clip->tracks[t].times[0] < t0) t0 = clip->tracks[t].times[0];
  for (size_t t = 0; t < clip->morph_track_count; ++t)
    if (clip->morph_tracks[t].key_count && clip->morph_tracks[t].times[0] < t0) t0 = clip->morph_tracks[t].times[0];
  if (!isfinite(t0)) t0 = 0; /* a non-finite key stays for the writer to refuse */
  size_t nb = 0;
  float d = 0.0f; /* the last key, as the importers measure the duration */
  for (size_t t = 0; t < clip->track_count; ++t) {
    sks_track *tr = &clip->tracks[t];
    nb += times_from(tr->times, tr->key_count, t0);
    if (tr->key_count) d = fmaxf(d, tr->times[tr->key_count - 1]);
  }
  for (size_t t = 0; t < clip->morph_track_count; ++t) {
    sks_morph_track *tr = &clip->morph_tracks[t];
    nb += times_from(tr->times, tr->key_count, t0);
    if (tr->key_count) d = fmaxf(d, tr->times[tr->key_count - 1]);
  }
  if (t0 < 0 || nb) clip->duration = d;
  *shift = -t0;
  *bumped = nb;
}
