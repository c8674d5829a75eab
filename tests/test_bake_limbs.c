/* Two bodies whose closest points cross from one limb to the other: the
 * target's right leg wears a boot whose inner edge reaches past the middle,
 * nearer the source's LEFT leg than its right. Every part of both rigs is
 * rigid on one joint and the legs swing in opposite directions, so the
 * exact answer is known: a target vertex given the right leg's motion is
 * followed exactly by the target's right leg (error 0); one given the left
 * leg's motion is off by the distance between the two legs' swings. The
 * bake must re-match the boot's inner edge onto the right leg
 * (alignment.limb_rematched) and reproduce the walk to ~0. The same with
 * the boot on the left leg (the mirror), and with the legs' joints under an
 * unweighted helper joint (the region crosses joints no vertex follows). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "math/sks_math.h"

#define RINGS 21 /* rings per leg, bottom to top */
#define SEG 8    /* points around a ring: 4 corners and 4 mid-sides */

typedef struct builder {
  float *pos;
  uint16_t *joints;
  float *weights;
  uint32_t *idx;
  size_t v, i;
} builder;

/* A box tube from y0 to y1 around (cx, cz), half widths hx / hz, every
 * vertex on skin joint `joint`; boot >= 0: below y = 0.2 the side facing
 * +x (boot = 1) or -x (boot = 0) reaches out to x = reach. */
static void add_tube(builder *b, float cx, float cz, float hx, float hz, float y0, float y1, uint16_t joint,
                     int boot, float reach) {
  static const float ux[SEG] = {-1, 0, 1, 1, 1, 0, -1, -1}, uz[SEG] = {-1, -1, -1, 0, 1, 1, 1, 0};
  size_t first = b->v;
  for (size_t r = 0; r < RINGS; ++r) {
    float y = y0 + (y1 - y0) * (float)r / (float)(RINGS - 1);
    for (size_t s = 0; s < SEG; ++s) {
      float x = cx + hx * ux[s], z = cz + hz * uz[s];
      if (boot >= 0 && y < 0.2f && ux[s] == (boot ? 1.0f : -1.0f)) x = reach;
      float *p = &b->pos[3 * b->v];
      p[0] = x; p[1] = y; p[2] = z;
      b->joints[4 * b->v] = joint;
      b->weights[4 * b->v] = 1.0f;
      ++b->v;
    }
  }
  for (size_t r = 0; r + 1 < RINGS; ++r)
    for (size_t s = 0; s < SEG; ++s) {
      uint32_t a = (uint32_t)(first + r * SEG + s), c = (uint32_t)(first + r * SEG + (s + 1) % SEG);
      uint32_t d = a + SEG, e = c + SEG;
      uint32_t t[6] = {a, c, d, c, e, d};
      memcpy(&b->idx[b->i], t, sizeof t);
      b->i += 6;
    }
}

/* joints: hips (root, at y = 1), [helper (unweighted, at the hips)], leg_L
 * (x = +0.15), leg_R (x = -0.15); skin joints hips, leg_L, leg_R. Parts:
 * torso tube (hips), two leg tubes. boot: -1 none, 0 on the right leg
 * (reaching +x), 1 on the left leg (reaching -x). Clip "Walk": the legs
 * swing +-35 degrees about x, opposite to each other. */
static void build_biped(sks_model *m, int boot, int helper, float reach) {
  memset(m, 0, sizeof *m);
  m->source_path = sks_test_strdup(boot < 0 ? "procedural-biped" : "procedural-biped-boot");
  size_t J = helper ? 4 : 3;
  int32_t jl = helper ? 2 : 1, jr = jl + 1;
  sks_skeleton *sk = &m->skeleton;
  sk->joint_count = J;
  sk->names = calloc(J, sizeof(char *));
  sk->parents = malloc(J * sizeof(int32_t));
  sk->rest = malloc(J * sizeof(sks_transform));
  for (size_t j = 0; j < J; ++j) sk->rest[j] = sks_transform_identity();
  sk->names[0] = sks_test_strdup("hips");
  sk->parents[0] = -1;
  sk->rest[0].translation = sks_v3(0, 1, 0);
  if (helper) {
    sk->names[1] = sks_test_strdup("helper");
    sk->parents[1] = 0;
  }
  sk->names[jl] = sks_test_strdup("leg_L");
  sk->names[jr] = sks_test_strdup("leg_R");
  sk->parents[jl] = sk->parents[jr] = helper ? 1 : 0;
  sk->rest[jl].translation = sks_v3(0.15f, 0, 0);
  sk->rest[jr].translation = sks_v3(-0.15f, 0, 0);
  sks_mat4 *models = malloc(J * sizeof(sks_mat4));
  sks_local_to_model_job fk = {sk->parents, sk->rest, J, NULL, models};
  sks_local_to_model_job_run(&fk);
  m->skin_count = 1;
  m->skins = calloc(1, sizeof(sks_skin));
  sks_skin *skin = &m->skins[0];
  skin->name = sks_test_strdup("skin");
  skin->joint_count = 3;
  skin->joints = malloc(3 * sizeof(int32_t));
  skin->inverse_bind = malloc(3 * sizeof(sks_mat4));
  int32_t sj[3] = {0, jl, jr};
  for (size_t k = 0; k < 3; ++k) {
    skin->joints[k] = sj[k];
    sks_m4_inverse(&models[sj[k]], &skin->inverse_bind[k]);
  }
  free(models);
  m->part_count = 1;
  m->parts = calloc(1, sizeof(sks_mesh_part));
  sks_mesh_part *p = &m->parts[0];
  p->name = sks_test_strdup("body");
  p->material = -1;
  p->skin = 0;
  p->node = 0;
  size_t V = 3 * RINGS * SEG;
  p->vertex_count = V;
  p->influence_count = 4;
  p->index_count = 3 * (RINGS - 1) * SEG * 6;
  builder b = {malloc(V * 3 * sizeof(float)), calloc(V * 4, sizeof(uint16_t)), calloc(V * 4, sizeof(float)),
               malloc(p->index_count * sizeof(uint32_t)), 0, 0};
  add_tube(&b, 0, 0, 0.25f, 0.1f, 1.05f, 1.6f, 0, -1, 0);
  add_tube(&b, 0.15f, 0, 0.06f, 0.06f, 0, 0.98f, 1, boot == 1 ? 0 : -1, -reach);
  add_tube(&b, -0.15f, 0, 0.06f, 0.06f, 0, 0.98f, 2, boot == 0 ? 1 : -1, reach);
  p->positions = b.pos;
  p->joints = b.joints;
  p->weights = b.weights;
  p->indices = b.idx;
  /* the walk: the legs swing opposite to each other */
  int frames = 13;
  m->clip_count = 1;
  m->clips = calloc(1, sizeof(sks_clip));
  sks_clip *c = &m->clips[0];
  c->name = sks_test_strdup("Walk");
  c->duration = (float)(frames - 1) / 24.0f;
  c->track_count = 2;
  c->tracks = calloc(2, sizeof(sks_track));
  for (int t = 0; t < 2; ++t) {
    sks_track *tr = &c->tracks[t];
    tr->joint = t ? jr : jl;
    tr->path = SKS_PATH_ROTATION;
    tr->interpolation = SKS_INTERP_LINEAR;
    tr->key_count = (size_t)frames;
    tr->times = malloc((size_t)frames * sizeof(float));
    tr->values = malloc((size_t)frames * 4 * sizeof(float));
    for (int f = 0; f < frames; ++f) {
      tr->times[f] = (float)f / 24.0f;
      float a = 0.61f * sinf(6.2831853f * (float)f / (float)(frames - 1)) * (t ? -1.0f : 1.0f);
      sks_quat q = sks_q_from_axis_angle(sks_v3(1, 0, 0), a);
      memcpy(&tr->values[4 * f], &q, sizeof q);
    }
  }
}

static void check_pair(const char *label, int boot, int helper, float reach, int points) {
  sks_model src, tgt;
  build_biped(&src, -1, helper, 0);
  /* points: the source without triangles (nearest vertices, not closest
   * points on triangles: the re-match indexes the region's vertices) */
  for (size_t p = 0; points && p < src.part_count; ++p) src.parts[p].index_count = 0;
  build_biped(&tgt, boot, helper, reach);
  sks_bake_options opt;
  memset(&opt, 0, sizeof opt);
  sks_bake_result r;
  sks_error err;
  CHECK_OK(sks_bake(&src, &tgt, &opt, &r, &err), &err);
  if (r.clip_count == 1) {
    const sks_baked_clip *bc = &r.clips[0];
    printf("%-40s rematched %zu, registered %d, quality %.5f %%, mean %.6f / worst %.6f %%D\n", label,
           r.alignment.limb_rematched, r.alignment.registered, 100 * bc->quality, bc->mean_error_pct,
           bc->worst_error_pct);
    /* the boot's inner edge: the lowest rings' 3 inner points, with its
     * bottom ring's neighbours: at least a handful re-matched */
    CHECK_MSG(r.alignment.limb_rematched >= 6, "%s: %zu re-matched", label, r.alignment.limb_rematched);
    /* crossed, a boot vertex would be off by up to the legs' separation
     * (tens of % D); re-matched, each leg follows exactly */
    CHECK_MSG(bc->worst_error_pct < 0.01 && bc->mean_error_pct < 0.001, "%s: mean %.6f worst %.6f %%D", label,
              bc->mean_error_pct, bc->worst_error_pct);
  }
  sks_bake_result_free(&r);
  sks_model_free(&src);
  sks_model_free(&tgt);
}

int main(void) {
  check_pair("boot on the right leg", 0, 0, 0.03f, 0);
  check_pair("boot on the left leg (mirror)", 1, 0, 0.03f, 0);
  check_pair("right boot, legs under a helper joint", 0, 1, 0.03f, 0);
  check_pair("boot on the right leg, source without triangles", 0, 0, 0.03f, 1);
  /* a boot reaching 1 cm from the other leg (x = 0.08; its inner face at
   * 0.09): its own leg's surface lies 0.16 farther than the other's, ~9 %
   * D; re-matched however far (until 2026-12-05 only within 5 % D: these
   * vertices kept the other leg's motion) */
  check_pair("boot reaching the other leg", 0, 0, 0.08f, 0);
  check_pair("... mirrored", 1, 0, 0.08f, 0);
  /* the same rig onto itself (no boot): identity correspondence, nothing
   * re-matched */
  sks_model a, b;
  build_biped(&a, -1, 0, 0);
  build_biped(&b, -1, 0, 0);
  sks_bake_options opt;
  memset(&opt, 0, sizeof opt);
  sks_bake_result r;
  sks_error err;
  CHECK_OK(sks_bake(&a, &b, &opt, &r, &err), &err);
  CHECK(r.alignment.limb_rematched == 0 && r.correspondence_identity);
  sks_bake_result_free(&r);
  sks_model_free(&a);
  sks_model_free(&b);
  return sks_test_finish();
}
