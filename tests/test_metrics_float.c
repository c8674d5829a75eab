/* The bake's float measurement path (metrics.h: sks_fskin, sks_metrics_frame_f;
 * sks_bake) against the double reference (sks_bake_double_metrics). Tolerance (README, "Transfer metrics"): every
 * frame's mean and worst error, and every clip's, within 1e-5 % D of the
 * double path; quality within 1e-6 (1e-4 percentage point); the joint
 * transforms identical (the solve sees the same double constraints).
 *  1. sks_fskin alone on random influence lists (0 to 12 influences, rotated
 *     and translated palette) against the double blend: displacement within
 *     2e-6 of the motion's scale.
 *     sks_metrics_frame_f against sks_metrics_frame on random displacements,
 *     sks_diag_add against its rule.
 *  2. A procedural sheet rig baked onto a differently weighted copy.
 *  3. Real rigs: the Fox control, the Fox onto fox_rig_autoweights. */
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "math/sks_math.h"
#include "solve/metrics.h"
#include "solve/solve_internal.h"

static unsigned long long rng = 0x2545F4914F6CDD1Dull;
static double rnd(void) {
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

static void fskin_random(void) {
  enum { V = 3001, P = 40 };
  double *x = malloc(V * 3 * sizeof(double)), *w = malloc(V * 12 * sizeof(double));
  uint32_t *start = malloc((V + 1) * sizeof(uint32_t)), *pal = malloc(V * 12 * sizeof(uint32_t));
  sks_daffine M[P];
  sks_mat4 fpal[P];
  float *d = malloc(V * 3 * sizeof(float));
  for (int e = 0; e < P; ++e) { /* rotation by up to 1 rad about a random axis, offset up to 0.2 */
    double ax[3] = {rnd() - 0.5, rnd() - 0.5, rnd() - 0.5}, n = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
    double ang = rnd(), v[3] = {ax[0] / n * ang, ax[1] / n * ang, ax[2] / n * ang};
    sks_dquat q = sks_dq_from_rotvec(v);
    sks_dq_to_m3(q, M[e].l);
    for (int a = 0; a < 3; ++a) M[e].t[a] = 0.4 * (rnd() - 0.5);
  }
  size_t o = 0;
  for (size_t j = 0; j < V; ++j) {
    start[j] = (uint32_t)o;
    for (int a = 0; a < 3; ++a) x[3 * j + a] = 100.0 + 2.0 * (rnd() - 0.5); /* far from the origin */
    size_t c = j % 13; /* 0..12 influences: the kernel's K, the scalar rest, the empty vertex */
    double s = 0;
    for (size_t i = 0; i < c; ++i) { pal[o + i] = (uint32_t)(rnd() * P) % P; w[o + i] = 0.05 + rnd(); s += w[o + i]; }
    for (size_t i = 0; i < c; ++i) w[o + i] /= s;
    o += c;
  }
  start[V] = (uint32_t)o;
  sks_fskin fs;
  CHECK(sks_fskin_init(&fs, x, V, start, pal, w, P) == SKS_OK);
  CHECK(fs.usable && fs.K >= 1 && fs.K <= SKS_MAX_INFLUENCES && fs.over_count > 0);
  sks_fskin_run(&fs, M, fpal, d);
  double worst = 0, scale = 0;
  for (size_t j = 0; j < V; ++j) {
    double ref[3] = {0, 0, 0};
    for (uint32_t i = start[j]; i < start[j + 1]; ++i) {
      double p[3];
      sks_daff_point(&M[pal[i]], &x[3 * j], p);
      for (int a = 0; a < 3; ++a) ref[a] += w[i] * p[a];
    }
    for (int a = 0; a < 3; ++a) { /* displacement from x (sks_dskin: 0 influences skin to the origin) */
      double dr = ref[a] - x[3 * j + a];
      if (fabs(dr) > scale) scale = fabs(dr);
      if (fabs(dr - d[3 * j + a]) > worst) worst = fabs(dr - d[3 * j + a]);
    }
  }
  printf("sks_fskin, %d vertices (0-12 influences, K = %u, %zu in the scalar rest): worst |d - d_double| = %.3g "
         "(motion scale %.3g)\n", V, fs.K, fs.over_count, worst, scale);
  CHECK(worst <= 2e-6 * scale);
  /* the scale of the error follows the motion, not |x| = 173: a palette of
   * identities moves nothing, and nothing is measured */
  for (int e = 0; e < P; ++e) M[e] = sks_daff_identity();
  sks_fskin_run(&fs, M, fpal, d);
  double still = 0;
  for (size_t j = 0; j < V; ++j)
    if (start[j + 1] > start[j])
      for (int a = 0; a < 3; ++a) still = fmax(still, fabs(d[3 * j + a]));
  CHECK_MSG(still <= 1e-5, "identity palette moved a vertex by %.3g", still);
  sks_fskin_free(&fs);
  free(x); free(w); free(start); free(pal); free(d);
}

/* sks_metrics_frame_f (4 vertices a step, then the rest) against
 * sks_metrics_frame on the same displacements, 1003 vertices. */
static void metrics_random(void) {
  enum { V = 1003 };
  static float ds[3 * V], dy[3 * V], dy0[3 * V], ef[V], ed[V];
  static double s[3 * V], y[3 * V], y0[3 * V];
  for (size_t q = 0; q < 3 * V; ++q) {
    dy0[q] = (float)(rnd() - 0.5);
    dy[q] = dy0[q] + (float)(rnd() - 0.5);
    ds[q] = dy[q] + (float)(0.01 * (rnd() - 0.5));
    s[q] = ds[q]; y[q] = dy[q]; y0[q] = dy0[q];
  }
  ds[3 * 777 + 1] += 0.5f; /* the worst vertex, inside a 4-vertex step */
  s[3 * 777 + 1] = ds[3 * 777 + 1];
  sks_metrics_acc a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  float ma, wa, mb, wb;
  sks_metrics_frame_f(&a, ds, dy, dy0, V, 2.0, &ma, &wa, ef);
  sks_metrics_frame(&b, s, y, y0, V, 2.0, &mb, &wb, ed);
  double worst = 0;
  for (size_t j = 0; j < V; ++j) worst = fmax(worst, fabs(ef[j] - ed[j]));
  CHECK(worst <= 1e-6);
  CHECK_NEAR(a.sum_e, b.sum_e, 1e-5 * b.sum_e);
  CHECK_NEAR(a.sum_m, b.sum_m, 1e-5 * b.sum_m);
  CHECK_NEAR(a.worst, b.worst, 1e-6);
  CHECK(a.count == V && b.count == V);
  CHECK_NEAR(ma, mb, 1e-5 * mb);
  CHECK_NEAR(wa, wb, 1e-5 * wb);
  CHECK(wb > 20); /* vertex 777: 0.5 of D = 2 */
}

/* sks_diag_add (4 vertices a step) against its rule written out: sum of e,
 * the largest e and its first frame, a non-finite e counted as +inf. */
static void diag_random(void) {
  enum { V = 1002, F = 7 };
  static float e[F][V], worst[V];
  static double sum[V];
  static size_t wf[V];
  sks_diag_acc a;
  CHECK(sks_diag_part_init(&a, V) == SKS_OK);
  for (size_t f = 0; f < F; ++f)
    for (size_t k = 0; k < V; ++k) {
      e[f][k] = (float)(int)(rnd() * 8); /* ties across frames */
      if (k % 97 == 5 && f == 3) e[f][k] = NAN;
      if (k % 89 == 7 && f == 2) e[f][k] = -INFINITY;
    }
  for (size_t f = 0; f < F; ++f) {
    sks_diag_add(&a, e[f], f);
    for (size_t k = 0; k < V; ++k) {
      float x = isfinite(e[f][k]) ? e[f][k] : INFINITY;
      sum[k] = f ? sum[k] + x : x;
      if (f == 0 || x > worst[k]) { worst[k] = x; wf[k] = f; }
    }
  }
  size_t bad = 0;
  for (size_t k = 0; k < V; ++k) bad += a.sum[k] != sum[k] || a.worst[k] != worst[k] || a.worst_frame[k] != wf[k];
  CHECK_MSG(bad == 0 && a.frames == F, "%zu vertices differ", bad);
  sks_diag_free(&a);
}

/* Bakes s onto t both ways and checks the tolerance; returns the number of
 * frames whose numbers differ at all (the float path ran). */
static size_t compare(const char *label, const sks_model *s, const sks_model *t, float fps) {
  sks_bake_options o[2];
  sks_bake_result r[2];
  sks_error err;
  for (int k = 0; k < 2; ++k) {
    memset(&o[k], 0, sizeof o[k]);
    o[k].fps = fps;
    o[k].threads = 1;
    o[k].keep_surfaces = 1;
    if ((k ? sks_bake_double_metrics : sks_bake)(s, t, &o[k], &r[k], &err) != SKS_OK) {
      CHECK_MSG(0, "%s: %s", label, err.message);
      if (k) sks_bake_result_free(&r[0]);
      return 0;
    }
  }
  size_t differ = 0;
  double dm = 0, dw = 0, dq = 0, ds = 0;
  CHECK(r[0].clip_count == r[1].clip_count);
  for (size_t i = 0; i < r[0].clip_count && i < r[1].clip_count; ++i) {
    const sks_baked_clip *a = &r[0].clips[i], *b = &r[1].clips[i];
    size_t F = a->frame_count, J = a->joint_count;
    CHECK(F == b->frame_count);
    CHECK_MSG(memcmp(a->locals, b->locals, F * J * sizeof(sks_transform)) == 0, "%s '%s': locals differ", label,
              a->name);
    dm = fmax(dm, fabs(a->mean_error_pct - b->mean_error_pct));
    dw = fmax(dw, fabs(a->worst_error_pct - b->worst_error_pct));
    if (isfinite(b->quality)) dq = fmax(dq, fabs(a->quality - b->quality));
    else CHECK(!isfinite(a->quality));
    for (size_t f = 0; f < F; ++f) {
      dm = fmax(dm, fabs(a->frame_mean_error_pct[f] - b->frame_mean_error_pct[f]));
      dw = fmax(dw, fabs(a->frame_worst_error_pct[f] - b->frame_worst_error_pct[f]));
      differ += a->frame_mean_error_pct[f] != b->frame_mean_error_pct[f];
    }
    size_t VS = r[0].target_vertex_count;
    for (size_t q = 0; q < F * VS * 3; ++q)
      ds = fmax(ds, fmax(fabs(a->target_surface[q] - b->target_surface[q]),
                         fabs(a->solved_surface[q] - b->solved_surface[q])));
    printf("  %-34s %-12s mean %.7f / %.7f %%D, worst %.6f / %.6f %%D, quality %.7f / %.7f\n", label, a->name,
           a->mean_error_pct, b->mean_error_pct, a->worst_error_pct, b->worst_error_pct, a->quality, b->quality);
  }
  double D = r[0].diagonal;
  printf("  %-34s float - double: mean %.2e %%D, worst %.2e %%D, quality %.2e, kept surfaces %.2e D; %zu frames "
         "differ\n", label, dm, dw, dq, ds / D, differ);
  CHECK_MSG(dm <= 1e-5, "%s: mean error off by %.3g %%D", label, dm);
  CHECK_MSG(dw <= 1e-5, "%s: worst error off by %.3g %%D", label, dw);
  CHECK_MSG(dq <= 1e-6, "%s: quality off by %.3g", label, dq);
  CHECK_MSG(ds <= 1e-5 * D, "%s: kept surfaces off by %.3g D", label, ds / D);
  sks_bake_result_free(&r[0]);
  sks_bake_result_free(&r[1]);
  return differ;
}

/* A sheet of nx x ny vertices on z = 0 over a chain of nb bones along x
 * (bind = rest, root offset so bind space is far from the origin), each
 * vertex on the 3 nearest bone centres with weights falling off over
 * `spread`; clip: 30 frames of swinging bones and a moving root. */
static void sheet_rig(sks_model *m, size_t nb, float spread) {
  memset(m, 0, sizeof *m);
  m->source_path = sks_test_strdup("procedural-sheet");
  size_t J = nb + 1, nx = 60, ny = 12, V = nx * ny;
  sks_skeleton *sk = &m->skeleton;
  sk->joint_count = J;
  sk->names = calloc(J, sizeof(char *));
  sk->parents = malloc(J * sizeof(int32_t));
  sk->rest = malloc(J * sizeof(sks_transform));
  for (size_t j = 0; j < J; ++j) {
    char nm[32];
    snprintf(nm, sizeof nm, "j%zu", j);
    sk->names[j] = sks_test_strdup(nm);
    sk->parents[j] = (int32_t)j - 1;
    sk->rest[j] = sks_transform_identity();
    sk->rest[j].translation = j ? sks_v3(1, 0, 0) : sks_v3(40, 25, -30);
  }
  m->skin_count = 1;
  m->skins = calloc(1, sizeof(sks_skin));
  m->skins[0].name = sks_test_strdup("skin");
  m->skins[0].joint_count = J;
  m->skins[0].joints = malloc(J * sizeof(int32_t));
  m->skins[0].inverse_bind = malloc(J * sizeof(sks_mat4));
  for (size_t j = 0; j < J; ++j) { /* model matrix: translation (39 + j, 25, -30) */
    m->skins[0].joints[j] = (int32_t)j;
    sks_mat4 ib;
    memset(&ib, 0, sizeof ib);
    ib.m[0] = ib.m[5] = ib.m[10] = ib.m[15] = 1;
    ib.m[12] = -(39.0f + (float)j); ib.m[13] = -25; ib.m[14] = 30;
    m->skins[0].inverse_bind[j] = ib;
  }
  m->part_count = 1;
  m->parts = calloc(1, sizeof(sks_mesh_part));
  sks_mesh_part *p = &m->parts[0];
  p->name = sks_test_strdup("sheet");
  p->material = -1;
  p->skin = 0;
  p->node = 0;
  p->vertex_count = V;
  p->positions = malloc(V * 3 * sizeof(float));
  p->influence_count = 3;
  p->joints = calloc(V * 3, sizeof(uint16_t));
  p->weights = calloc(V * 3, sizeof(float));
  for (size_t v = 0; v < V; ++v) {
    float bx = (float)(v % nx) * (float)nb / (float)(nx - 1), by = (float)(v / nx) / (float)(ny - 1) - 0.5f;
    p->positions[3 * v] = 40 + bx; p->positions[3 * v + 1] = 25 + by; p->positions[3 * v + 2] = -30;
    size_t c = (size_t)bx < nb ? (size_t)bx : nb - 1;
    float sum = 0;
    for (int s = 0; s < 3; ++s) {
      size_t lo = c == 0 ? 0 : (c + 1 >= nb ? nb - 3 : c - 1), b = lo + (size_t)s; /* 3 nearest bones */
      float dd = bx - ((float)b + 0.5f);
      p->joints[3 * v + (size_t)s] = (uint16_t)(b + 1);
      p->weights[3 * v + (size_t)s] = expf(-dd * dd / (spread * spread));
      sum += p->weights[3 * v + (size_t)s];
    }
    for (int s = 0; s < 3; ++s) p->weights[3 * v + (size_t)s] /= sum;
  }
  p->index_count = (nx - 1) * (ny - 1) * 6;
  p->indices = malloc(p->index_count * sizeof(uint32_t));
  size_t o = 0;
  for (size_t y = 0; y + 1 < ny; ++y)
    for (size_t x = 0; x + 1 < nx; ++x) {
      uint32_t a = (uint32_t)(y * nx + x), b = a + 1, c = a + (uint32_t)nx, d = c + 1;
      p->indices[o++] = a; p->indices[o++] = b; p->indices[o++] = c;
      p->indices[o++] = b; p->indices[o++] = d; p->indices[o++] = c;
    }
  m->clip_count = 1;
  m->clips = calloc(1, sizeof(sks_clip));
  sks_clip *c = &m->clips[0];
  c->name = sks_test_strdup("Swing");
  int F = 30;
  c->duration = (float)(F - 1) / 24.0f;
  c->track_count = J;
  c->tracks = calloc(J, sizeof(sks_track));
  for (size_t k = 0; k < J; ++k) {
    sks_track *tr = &c->tracks[k];
    tr->joint = (int32_t)k;
    tr->path = k ? SKS_PATH_ROTATION : SKS_PATH_TRANSLATION;
    tr->interpolation = SKS_INTERP_LINEAR;
    tr->key_count = (size_t)F;
    tr->times = malloc((size_t)F * sizeof(float));
    tr->values = malloc((size_t)F * 4 * sizeof(float));
    for (int f = 0; f < F; ++f) {
      float ph = (float)f / 5.0f + (float)k;
      tr->times[f] = (float)f / 24.0f;
      if (!k) {
        tr->values[3 * f] = 40 + 0.3f * sinf(ph); tr->values[3 * f + 1] = 25; tr->values[3 * f + 2] = -30 + 0.2f * cosf(ph);
      } else {
        sks_quat q = sks_q_from_axis_angle(sks_v3(0.3f, sinf(ph), 1), 0.5f * sinf(ph));
        memcpy(&tr->values[4 * f], &q, sizeof q);
      }
    }
  }
}

int main(void) {
  fskin_random();
  metrics_random();
  diag_random();
  sks_model a, b;
  sheet_rig(&a, 6, 0.6f);
  sheet_rig(&b, 6, 1.4f);
  CHECK(compare("sheet -> wider-weights sheet", &a, &b, 0) > 0);
  CHECK(compare("sheet control", &a, &a, 0) > 0);
  sks_model_free(&a);
  sks_model_free(&b);
  const char *fox = sks_test_shared_data("Fox/Fox.glb"), *auto_w = sks_test_shared_data("fox_targets/fox_rig_autoweights.glb");
  sks_error err;
  if (fox && sks_load(fox, NULL, &a, &err) == SKS_OK) {
    CHECK(compare("Fox control", &a, &a, 0) > 0);
    if (auto_w && sks_load(auto_w, NULL, &b, &err) == SKS_OK) {
      CHECK(compare("Fox -> fox_rig_autoweights", &a, &b, 0) > 0);
      sks_model_free(&b);
    }
    sks_model_free(&a);
  }
  return sks_test_finish();
}
