/* Test-rig maker (not an auto-rigger): a bake target made from a rig.
 *
 *  - Bind pose: the pose implied by the inverse bind matrices (skin joints:
 *    model = inverse(inverse bind); other joints keep their rest local). The
 *    output's rest pose IS that bind pose and its inverse binds are
 *    recomputed from it, so posing the output at rest returns the bind
 *    vertices.
 *  - Weights: each skin joint owns the bone segments from its bind position
 *    to each child's; a leaf owns a short segment continuing its parent's
 *    direction (or a point). Vertex weight w = 1 / (d + eps)^4 with d the
 *    distance to the joint's nearest segment, the 4 largest kept and
 *    normalised. Only joints that carry weight in the source are candidates
 *    (helper nodes such as a root joint with zero weight stay unweighted).
 *  - coarsen: every second weighted joint down each chain (odd depth in the
 *    weighted-joint tree) is removed from the skeleton; its children are
 *    re-parented to its parent with the composed local transform.
 *  - rename: every joint becomes bone_<index>.
 *  - The output has no clips: it is a bake target. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "skinsolve/solve.h"
#include "skinsolve/pose.h"
#include "math/sks_math.h"

#define REWEIGHT_MAX 4

static const char *model_label(const sks_model *m) {
  const char *p = m->source_path;
  const char *slash = p ? strrchr(p, '/') : NULL;
  return slash ? slash + 1 : (p ? p : "model");
}

/* Names the first singular inverse bind matrix (for the error message). */
static void find_singular_bind(const sks_model *m, int32_t *bad_skin, int32_t *bad_joint) {
  sks_mat4 tmp;
  for (size_t k = 0; k < m->skin_count; ++k)
    for (size_t j = 0; j < m->skins[k].joint_count; ++j)
      if (!sks_m4_inverse(&m->skins[k].inverse_bind[j], &tmp)) {
        *bad_skin = (int32_t)k;
        *bad_joint = (int32_t)j;
        return;
      }
}

static sks_vec3 m4_origin(const sks_mat4 *m) { return sks_v3(m->m[12], m->m[13], m->m[14]); }

/* Distance from p to segment [a, b] (a point when a == b). */
static double seg_dist(sks_vec3 p, sks_vec3 a, sks_vec3 b) {
  double ab[3] = {(double)b.x - a.x, (double)b.y - a.y, (double)b.z - a.z};
  double ap[3] = {(double)p.x - a.x, (double)p.y - a.y, (double)p.z - a.z};
  double l2 = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2];
  double t = l2 > 0 ? (ap[0] * ab[0] + ap[1] * ab[1] + ap[2] * ab[2]) / l2 : 0.0;
  if (t < 0) t = 0;
  if (t > 1) t = 1;
  double d[3] = {ap[0] - t * ab[0], ap[1] - t * ab[1], ap[2] - t * ab[2]};
  return sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

typedef struct segment { sks_vec3 a, b; } segment;

sks_result sks_reweight(const sks_model *model, const sks_reweight_options *options,
                        sks_model *out, sks_error *err) {
  sks_reweight_options opt = {0, 0};
  if (options) opt = *options;
  if (!model || !out) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_reweight: model and out are required");
  memset(out, 0, sizeof *out);
  const char *name = model_label(model);
  const sks_skeleton *sk = &model->skeleton;
  size_t jc = sk->joint_count;
  if (sks_model_vertex_count(model) == 0 || jc == 0)
    return sks_error_set(err, SKS_ERR_INVALID, "%s: no skinned mesh part — nothing to reweight", name);
  for (size_t p = 0; p < model->part_count; ++p) {
    const sks_mesh_part *part = &model->parts[p];
    if (part->skin >= (int32_t)model->skin_count)
      return sks_error_set(err, SKS_ERR_INVALID, "%s: part %zu: skin %d does not exist", name, p, part->skin);
  }
  for (size_t i = 0; i < jc; ++i)
    if (sk->parents[i] >= (int32_t)i)
      return sks_error_set(err, SKS_ERR_INVALID, "%s: joint %zu: skeleton is not parent-first", name, i);

  sks_result r = SKS_OK;
  sks_mat4 *models = malloc(jc * sizeof *models);
  uint8_t *weighted = calloc(jc, 1), *keep = malloc(jc), *holds = calloc(jc, 1);
  int32_t *depth = malloc(jc * sizeof *depth), *remap = malloc(jc * sizeof *remap);
  int32_t *new_parent = malloc(jc * sizeof *new_parent);
  segment *segs = NULL;
  size_t *seg_first = NULL;
  if (!models || !weighted || !keep || !holds || !depth || !remap || !new_parent) {
    r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
    goto done;
  }
  /* Bind-pose model matrices of every joint, from all skins (pose stage). */
  {
    sks_transform *bind_locals = malloc(jc * sizeof *bind_locals);
    if (!bind_locals) { r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", name); goto done; }
    sks_bind_pose_job bj = {sk, model->skins, models, bind_locals, model->skin_count};
    int ok = model->skin_count ? sks_bind_pose_job_run(&bj) : 0;
    free(bind_locals);
    if (!ok) {
      int32_t bad_skin = -1, bad_joint = -1;
      find_singular_bind(model, &bad_skin, &bad_joint);
      r = bad_skin >= 0 ? sks_error_set(err, SKS_ERR_INVALID, "%s: skin %d, joint %d: inverse bind matrix is singular",
                                        name, bad_skin, bad_joint)
                        : sks_error_set(err, SKS_ERR_INVALID, "%s: the skins' bind pose cannot be built "
                                        "(joint indices out of range or a singular bind transform)", name);
      goto done;
    }
  }

  /* Joints that carry weight in the source. */
  for (size_t p = 0; p < model->part_count; ++p) {
    const sks_mesh_part *part = &model->parts[p];
    if (part->node >= 0 && (size_t)part->node < jc) holds[part->node] = 1;
    if (part->skin < 0) continue;
    const sks_skin *skin = &model->skins[part->skin];
    size_t k = part->influence_count;
    for (size_t i = 0; i < part->vertex_count * k; ++i) {
      uint16_t j = part->joints[i];
      if (part->weights[i] > 0.0f && j < skin->joint_count && skin->joints[j] >= 0 &&
          (size_t)skin->joints[j] < jc)
        weighted[skin->joints[j]] = 1;
    }
  }

  /* Coarsen: drop weighted joints at odd depth of the weighted-joint tree. */
  size_t new_count = 0;
  for (size_t i = 0; i < jc; ++i) {
    int32_t p = sk->parents[i];
    int32_t wp = p; /* nearest weighted ancestor */
    while (wp >= 0 && !weighted[wp]) wp = sk->parents[wp];
    depth[i] = weighted[i] ? (wp >= 0 ? depth[wp] + 1 : 0) : -1;
    keep[i] = !(opt.coarsen && weighted[i] && (depth[i] & 1) && !holds[i]);
  }
  /* Every skin keeps a weighted joint: where coarsening drops all a skin's
   * weighted joints (a part bound to one joint at odd depth: ozz_astro_max.dae
   * part 1), the one carrying the most weight stays. */
  for (size_t s = 0; opt.coarsen && s < model->skin_count; ++s) {
    const sks_skin *skin = &model->skins[s];
    double *mass = calloc(skin->joint_count ? skin->joint_count : 1, sizeof *mass);
    if (!mass) { r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", name); goto done; }
    for (size_t pi = 0; pi < model->part_count; ++pi) {
      const sks_mesh_part *part = &model->parts[pi];
      if (part->skin != (int32_t)s) continue;
      for (size_t i = 0; i < part->vertex_count * part->influence_count; ++i)
        if (part->weights[i] > 0.0f && part->joints[i] < skin->joint_count) mass[part->joints[i]] += part->weights[i];
    }
    int any = 0;
    size_t best = 0;
    for (size_t j = 0; j < skin->joint_count; ++j) {
      int32_t o = skin->joints[j];
      if (!(mass[j] > 0) || o < 0 || (size_t)o >= jc) continue;
      if (keep[o]) any = 1;
      if (mass[j] > mass[best] || !(mass[best] > 0)) best = j;
    }
    if (!any && mass[best] > 0 && skin->joints[best] >= 0 && (size_t)skin->joints[best] < jc)
      keep[skin->joints[best]] = 1;
    free(mass);
  }
  for (size_t i = 0; i < jc; ++i) {
    int32_t p = sk->parents[i];
    int32_t kp = p;
    while (kp >= 0 && !keep[kp]) kp = sk->parents[kp];
    new_parent[i] = kp;
    remap[i] = keep[i] ? (int32_t)new_count++ : -1;
  }

  /* Build the output: a clone without clips, with the new skeleton. */
  {
    sks_model src = *model;
    src.clip_count = 0;
    src.clips = NULL;
    r = sks_model_clone(&src, out, err);
    if (r != SKS_OK) goto done;
  }
  {
    sks_skeleton ns = {new_count, calloc(new_count, sizeof(char *)), malloc(new_count * sizeof(int32_t)),
                       malloc(new_count * sizeof(sks_transform))};
    if (!ns.names || !ns.parents || !ns.rest) {
      free(ns.names); free(ns.parents); free(ns.rest);
      r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
      goto done;
    }
    for (size_t i = 0; i < jc; ++i) {
      if (!keep[i]) continue;
      int32_t ni = remap[i];
      ns.parents[ni] = new_parent[i] >= 0 ? remap[new_parent[i]] : -1;
      /* rest = bind local: inverse(parent bind model) * bind model */
      sks_mat4 local = models[i];
      if (new_parent[i] >= 0) {
        sks_mat4 inv;
        if (sks_m4_inverse(&models[new_parent[i]], &inv)) local = sks_m4_mul(&inv, &models[i]);
      }
      ns.rest[ni] = sks_m4_decompose(&local);
      char buf[32];
      const char *nm = sk->names[i] ? sk->names[i] : "";
      if (opt.rename) { snprintf(buf, sizeof buf, "bone_%d", ni); nm = buf; }
      ns.names[ni] = malloc(strlen(nm) + 1);
      if (ns.names[ni]) strcpy(ns.names[ni], nm);
      else r = SKS_ERR_OUT_OF_MEMORY;
    }
    sks_skeleton old = out->skeleton;
    out->skeleton = ns;
    for (size_t i = 0; i < old.joint_count; ++i) free(old.names[i]);
    free(old.names); free(old.parents); free(old.rest);
    if (r != SKS_OK) { r = sks_error_set(err, r, "%s: out of memory", name); goto done; }
  }
  for (size_t p = 0; p < out->part_count; ++p)
    if (out->parts[p].node >= 0 && (size_t)out->parts[p].node < jc) out->parts[p].node = remap[out->parts[p].node];

  /* Output bind models (FK of the new rest) give the new inverse binds. */
  sks_mat4 *nmodels = malloc(new_count * sizeof *nmodels);
  if (!nmodels) { r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", name); goto done; }
  {
    sks_local_to_model_job fk = {out->skeleton.parents, out->skeleton.rest, new_count, NULL, nmodels};
    sks_local_to_model_job_run(&fk);
  }
  for (size_t k = 0; k < out->skin_count; ++k) {
    sks_skin *skin = &out->skins[k];
    size_t n = 0;
    for (size_t j = 0; j < skin->joint_count; ++j) {
      int32_t o = skin->joints[j];
      if (o < 0 || (size_t)o >= jc || !keep[o] || !weighted[o]) continue;
      skin->joints[n] = remap[o];
      if (!sks_m4_inverse(&nmodels[remap[o]], &skin->inverse_bind[n])) {
        free(nmodels);
        r = sks_error_set(err, SKS_ERR_INVALID, "%s: joint '%s': bind transform is singular", name, sk->names[o]);
        goto done;
      }
      ++n;
    }
    skin->joint_count = n;
  }

  /* Bone segments per new joint: to each child, or a leaf stub. */
  segs = malloc((new_count * 2 + 1) * sizeof *segs);
  seg_first = calloc(new_count + 1, sizeof *seg_first);
  if (!segs || !seg_first) {
    free(nmodels);
    r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
    goto done;
  }
  {
    /* children lists via counting: segment count per joint = max(1, children) */
    size_t *nchild = calloc(new_count, sizeof *nchild);
    if (!nchild) { free(nmodels); r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", name); goto done; }
    /* Nodes holding a mesh (e.g. an added skinned-mesh root) are not bones. */
    uint8_t *is_bone = malloc(new_count);
    if (!is_bone) { free(nchild); free(nmodels); r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", name); goto done; }
    for (size_t i = 0; i < jc; ++i)
      if (keep[i]) is_bone[remap[i]] = !holds[i];
    for (size_t i = 0; i < new_count; ++i)
      if (out->skeleton.parents[i] >= 0 && is_bone[i]) nchild[out->skeleton.parents[i]]++;
    size_t total = 0;
    for (size_t i = 0; i < new_count; ++i) { seg_first[i] = total; total += nchild[i] ? nchild[i] : 1; }
    seg_first[new_count] = total;
    segment *ns = realloc(segs, (total + 1) * sizeof *segs);
    if (!ns) { free(nchild); free(nmodels); r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", name); goto done; }
    segs = ns;
    memset(nchild, 0, new_count * sizeof *nchild);
    for (size_t i = 0; i < new_count; ++i) {
      int32_t p = out->skeleton.parents[i];
      if (p >= 0 && is_bone[i]) {
        segment *s = &segs[seg_first[p] + nchild[p]++];
        s->a = m4_origin(&nmodels[p]);
        s->b = m4_origin(&nmodels[i]);
      }
    }
    for (size_t i = 0; i < new_count; ++i) {
      if (nchild[i]) continue;
      sks_vec3 a = m4_origin(&nmodels[i]), b = a;
      int32_t p = out->skeleton.parents[i];
      if (p >= 0) b = sks_v3_add(a, sks_v3_scale(sks_v3_sub(a, m4_origin(&nmodels[p])), 0.5f));
      segs[seg_first[i]].a = a;
      segs[seg_first[i]].b = b;
    }
    free(nchild);
    free(is_bone);
  }
  free(nmodels);

  /* New weights per skinned part. */
  double diag = sks_model_bind_diagonal(model);
  double eps = diag > 0 ? 1e-3 * diag : 1e-6;
  for (size_t p = 0; p < out->part_count; ++p) {
    sks_mesh_part *part = &out->parts[p];
    if (part->skin < 0) continue;
    const sks_skin *skin = &out->skins[part->skin];
    if (skin->joint_count == 0) {
      r = sks_error_set(err, SKS_ERR_INVALID, "%s: part %zu: its skin has no weighted joint", name, p);
      goto done;
    }
    uint32_t k = skin->joint_count < REWEIGHT_MAX ? (uint32_t)skin->joint_count : REWEIGHT_MAX;
    uint16_t *nj = malloc(part->vertex_count * k * sizeof *nj);
    float *nw = malloc(part->vertex_count * k * sizeof *nw);
    if (!nj || !nw) {
      free(nj); free(nw);
      r = sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
      goto done;
    }
    for (size_t v = 0; v < part->vertex_count; ++v) {
      sks_vec3 x = sks_v3(part->positions[3 * v], part->positions[3 * v + 1], part->positions[3 * v + 2]);
      double best_w[REWEIGHT_MAX];
      int best_j[REWEIGHT_MAX];
      for (uint32_t i = 0; i < k; ++i) { best_w[i] = -1.0; best_j[i] = 0; }
      for (size_t j = 0; j < skin->joint_count; ++j) {
        int32_t n = skin->joints[j];
        double d = DBL_MAX;
        for (size_t s = seg_first[n]; s < seg_first[n + 1]; ++s) {
          double ds = seg_dist(x, segs[s].a, segs[s].b);
          if (ds < d) d = ds;
        }
        double w = 1.0 / pow(d + eps, 4);
        /* insert into the sorted top-k */
        if (w <= best_w[k - 1]) continue;
        uint32_t at = k - 1;
        while (at > 0 && best_w[at - 1] < w) {
          best_w[at] = best_w[at - 1];
          best_j[at] = best_j[at - 1];
          --at;
        }
        best_w[at] = w;
        best_j[at] = (int)j;
      }
      double sum = 0;
      for (uint32_t i = 0; i < k; ++i) sum += best_w[i];
      float fsum = 0;
      for (uint32_t i = 0; i < k; ++i) {
        nj[v * k + i] = (uint16_t)best_j[i];
        nw[v * k + i] = (float)(best_w[i] / sum);
        fsum += nw[v * k + i];
      }
      nw[v * k] += 1.0f - fsum; /* exact float sum on the largest weight */
    }
    free(part->joints);
    free(part->weights);
    part->joints = nj;
    part->weights = nw;
    part->influence_count = k;
  }

done:
  free(models); free(weighted); free(keep); free(holds); free(depth); free(remap); free(new_parent);
  free(segs); free(seg_first);
  if (r != SKS_OK) sks_model_free(out);
  return r;
}
