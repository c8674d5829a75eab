/* Labels from the skeleton's shape (correspondence.c topo_labels, README
 * "Unnamed rigs"): a procedural human skeleton whose joints are named
 * node_N (no name says anything), its right limbs listed before its left
 * ones, each joint dominating a few vertices around it. sks_view_labels
 * gives the neck and head HEAD and nothing else (no sides: told from the
 * geometry they would turn over with a mirrored file), whatever the body's
 * turn, scale and offset, mirrored, with flat feet; one pair of limbs, no
 * head branch or an order that is not parent-first give nothing; a single
 * named joint keeps the names' labels (no shape); a
 * rope of 200,000 joints gets none, in passes over the joints. And
 * CesiumMan's node_N joints, read from the shared data when present. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "skinsolve/io.h"
#include "solve/solve_internal.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

enum { J = 20, PER = 8 };
/* facing +z, up +y, its left at +x; joint 0 (the root) carries no weight */
static const int32_t parents0[J] = {-1, 0, 1, 2, 3, 4, 1, 6, 7, 8, 1, 10, 11, 12, 13, 11, 15, 16, 11, 18};
static const double joints0[3 * J] = {
    0, 0, 0,         0, 1.0, 0,                                                           /* root, hips */
    -0.1, 0.95, 0,   -0.1, 0.5, 0.02,  -0.1, 0.1, -0.03,  -0.1, 0.0, 0.09,                /* right leg 2-5 */
    0.1, 0.95, 0,    0.1, 0.5, 0.02,   0.1, 0.1, -0.03,   0.1, 0.0, 0.09,                 /* left leg 6-9 */
    0, 1.2, 0,       0, 1.4, 0,                                                           /* spine, chest */
    -0.15, 1.45, 0,  -0.45, 1.45, 0,   -0.75, 1.45, 0,                                    /* right arm 12-14 */
    0.15, 1.45, 0,   0.45, 1.45, 0,    0.75, 1.45, 0,                                     /* left arm 15-17 */
    0, 1.55, 0,      0, 1.7, 0};                                                          /* neck, head */
static uint8_t want0(int j) { return j >= 18 ? SKS_LABEL_HEAD : SKS_LABEL_NONE; }

typedef struct body {
  sks_skinview v;
  sks_skeleton s;
  char *names[J];
  int32_t parents[J];
  int32_t pal_joint[J];
  sks_daffine ibm[J];
  double pos[3 * J * PER];
  uint32_t start[J * PER + 1], pal[J * PER];
  double w[J * PER];
} body;

/* The body with every point x -> k R x + t (R row-major); parents and
 * joint positions as given. */
static void make(body *b, const int32_t *parents, const double *joints, const double *R, double k, const double *t) {
  memset(b, 0, sizeof *b);
  static char buf[J][16];
  for (int j = 0; j < J; ++j) {
    snprintf(buf[j], sizeof buf[j], "node_%d", j);
    b->names[j] = buf[j];
    b->parents[j] = parents[j];
  }
  b->s.joint_count = J;
  b->s.names = b->names;
  b->s.parents = b->parents;
  size_t n = 0, P = 0;
  int32_t entry[J];
  for (int j = 1; j < J; ++j) { /* palette: every joint but the root */
    double p[3];
    for (int r = 0; r < 3; ++r)
      p[r] = k * (R[3 * r] * joints[3 * j] + R[3 * r + 1] * joints[3 * j + 1] + R[3 * r + 2] * joints[3 * j + 2]) + t[r];
    b->pal_joint[P] = j;
    b->ibm[P] = sks_daff_identity();
    for (int r = 0; r < 3; ++r) b->ibm[P].t[r] = -p[r];
    entry[j] = (int32_t)P++;
  }
  for (int j = 1; j < J; ++j)
    for (int q = 0; q < PER; ++q, ++n) {
      const double o[3] = {(q & 1) ? 0.02 : -0.02, (q & 2) ? 0.02 : -0.02, (q & 4) ? 0.02 : -0.02};
      for (int r = 0; r < 3; ++r) {
        double x = 0;
        for (int c = 0; c < 3; ++c) x += R[3 * r + c] * (joints[3 * j + c] + o[c]);
        b->pos[3 * n + r] = k * x + t[r];
      }
      b->start[n] = (uint32_t)n;
      b->pal[n] = (uint32_t)entry[j];
      b->w[n] = 1;
    }
  b->start[n] = (uint32_t)n;
  b->v.V = n;
  b->v.pos = b->pos;
  b->v.P = P;
  b->v.pal_joint = b->pal_joint;
  b->v.pal_ibm = b->ibm;
  b->v.start = b->start;
  b->v.pal = b->pal;
  b->v.w = b->w;
}

/* Per vertex (PER per joint 1..J-1): the label of its joint, checked
 * against want0(joint). */
static int check(const char *what, const body *b) {
  uint8_t *l = sks_view_labels(&b->v, &b->s);
  if (!l) { CHECK_MSG(0, "%s: out of memory", what); return 0; }
  int bad = 0;
  for (size_t i = 0; i < b->v.V; ++i) {
    const int j = (int)(i / PER) + 1;
    const uint8_t w = want0(j);
    if (l[i] != w && bad++ < 3) printf("%s: joint %d labelled %d, want %d\n", what, j, l[i], w);
  }
  CHECK_MSG(bad == 0, "%s: %d vertices mislabelled", what, bad);
  free(l);
  return bad == 0;
}

static void axis_angle(double x, double y, double z, double deg, double *R) {
  double n = sqrt(x * x + y * y + z * z), c = cos(deg * M_PI / 180.0), s = sin(deg * M_PI / 180.0), t;
  x /= n; y /= n; z /= n;
  t = 1 - c;
  const double m[9] = {t * x * x + c, t * x * y - s * z, t * x * z + s * y, t * x * y + s * z, t * y * y + c,
                       t * y * z - s * x, t * x * z - s * y, t * y * z + s * x, t * z * z + c};
  memcpy(R, m, sizeof m);
}

int main(void) {
  static body b;
  const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, zero[3] = {0, 0, 0};
  make(&b, parents0, joints0, I, 1, zero);
  check("as built", &b);
  /* turned (a half turn about up among them), scaled, offset: the same */
  const struct { double ax[3], deg, k; } turns[] = {{{0, 1, 0}, 180, 1}, {{1, 0, 0}, 90, 100}, {{1, -2, 0.5}, 137, 0.01}};
  for (size_t i = 0; i < sizeof turns / sizeof turns[0]; ++i) {
    double R[9];
    const double t[3] = {5, -3, 2};
    char what[64];
    axis_angle(turns[i].ax[0], turns[i].ax[1], turns[i].ax[2], turns[i].deg, R);
    make(&b, parents0, joints0, R, turns[i].k, t);
    snprintf(what, sizeof what, "turned %.0f deg, x%g", turns[i].deg, turns[i].k);
    check(what, &b);
  }
  /* mirrored (x -> -x): the same labels */
  const double M[9] = {-1, 0, 0, 0, 1, 0, 0, 0, 1};
  make(&b, parents0, joints0, M, 1, zero);
  check("mirrored", &b);
  /* flat feet (the toes under the ankles): the same */
  double flat[3 * J];
  memcpy(flat, joints0, sizeof flat);
  flat[3 * 5 + 2] = flat[3 * 9 + 2] = -0.03;
  make(&b, parents0, flat, I, 1, zero);
  check("flat feet", &b);
  /* one pair of limbs (the arms hang from the neck's parent as one
   * chain): nothing */
  {
    int32_t par[J];
    memcpy(par, parents0, sizeof par);
    par[15] = 14; /* the left arm under the right hand: no arm pair */
    make(&b, par, joints0, I, 1, zero);
    uint8_t *l = sks_view_labels(&b.v, &b.s);
    CHECK(l != NULL);
    int any = 0;
    for (size_t i = 0; l && i < b.v.V; ++i) any |= l[i] != SKS_LABEL_NONE;
    CHECK_MSG(!any, "one pair of limbs: labels given");
    free(l);
    /* not parent-first: nothing */
    memcpy(par, parents0, sizeof par);
    par[1] = 5;
    make(&b, par, joints0, I, 1, zero);
    l = sks_view_labels(&b.v, &b.s);
    any = 0;
    for (size_t i = 0; l && i < b.v.V; ++i) any |= l[i] != SKS_LABEL_NONE;
    CHECK_MSG(l && !any, "not parent-first: labels given");
    free(l);
  }
  /* a single named joint: the names' labels, not the shape's */
  make(&b, parents0, joints0, I, 1, zero);
  b.names[19] = "Head";
  {
    uint8_t *l = sks_view_labels(&b.v, &b.s);
    CHECK(l != NULL);
    int sided = 0;
    for (size_t i = 0; l && i < b.v.V; ++i) sided |= l[i] == SKS_LABEL_LEFT || l[i] == SKS_LABEL_RIGHT;
    CHECK_MSG(l && l[(19 - 1) * PER] == SKS_LABEL_HEAD && !sided, "one name: the names' labels only");
    free(l);
  }

  /* a chain of 200,000 weighted joints (a rope; no two siblings): no
   * labels, in passes over the joints (a scan of every later joint for
   * each one's siblings took ~2e10 steps here) */
  {
    const size_t n = 200000;
    sks_skeleton s;
    sks_skinview v;
    memset(&s, 0, sizeof s);
    memset(&v, 0, sizeof v);
    int32_t *par = malloc(n * sizeof *par), *pj = malloc(n * sizeof *pj);
    char **nm = malloc(n * sizeof *nm);
    sks_daffine *ibm = malloc(n * sizeof *ibm);
    double *pos = malloc(3 * n * sizeof *pos), *w = malloc(n * sizeof *w);
    uint32_t *st = malloc((n + 1) * sizeof *st), *pl = malloc(n * sizeof *pl);
    CHECK(par && pj && nm && ibm && pos && w && st && pl);
    if (par && pj && nm && ibm && pos && w && st && pl) {
      for (size_t j = 0; j < n; ++j) {
        par[j] = (int32_t)j - 1;
        nm[j] = "bone";
        pj[j] = (int32_t)j;
        ibm[j] = sks_daff_identity();
        ibm[j].t[1] = -(double)j * 0.01;
        pos[3 * j] = pos[3 * j + 2] = 0;
        pos[3 * j + 1] = (double)j * 0.01;
        st[j] = (uint32_t)j;
        pl[j] = (uint32_t)j;
        w[j] = 1;
      }
      st[n] = (uint32_t)n;
      s.joint_count = n;
      s.names = nm;
      s.parents = par;
      v.V = n; v.pos = pos; v.P = n; v.pal_joint = pj; v.pal_ibm = ibm; v.start = st; v.pal = pl; v.w = w;
      uint8_t *l = sks_view_labels(&v, &s);
      int any = 0;
      for (size_t i = 0; l && i < n; ++i) any |= l[i] != SKS_LABEL_NONE;
      CHECK_MSG(l && !any, "a rope of %zu joints: labels given", n);
      free(l);
    }
    free(par); free(pj); free(nm); free(ibm); free(pos); free(w); free(st); free(pl);
  }

  /* CesiumMan (node_0 .. node_21): its legs node_3 / node_7, its arms
   * node_13 / node_16, its neck and head node_19 / node_20 (README
   * "Unnamed rigs"): the neck's and head's vertices HEAD, no others */
  const char *cm = sks_test_shared_data("CesiumMan/CesiumMan_weights_unnormalised.gltf");
  if (cm) {
    sks_model m;
    sks_error err;
    sks_skinview v;
    CHECK_OK(sks_load(cm, NULL, &m, &err), &err);
    CHECK_OK(sks_skinview_build(&m, "CesiumMan", &v, &err), &err);
    uint8_t *l = sks_view_labels(&v, &m.skeleton);
    int32_t *dom = malloc(v.V * sizeof *dom);
    CHECK(l && dom);
    if (l && dom) {
      sks_view_dominant_joints(&v, v.V, dom);
      size_t count[4] = {0, 0, 0, 0}, wrong = 0;
      for (size_t i = 0; i < v.V; ++i) {
        if (dom[i] < 0) continue;
        const char *nm = m.skeleton.names[dom[i]];
        int n = -1;
        sscanf(nm, "node_%d", &n);
        const uint8_t w = (n >= 19 && n <= 20) ? SKS_LABEL_HEAD : SKS_LABEL_NONE;
        count[l[i]]++;
        if (l[i] != w) ++wrong;
      }
      printf("CesiumMan: %zu none, %zu head vertices\n", count[0], count[1]);
      CHECK_MSG(wrong == 0 && count[1] == 2179, "CesiumMan: %zu vertices mislabelled, %zu head", wrong, count[1]);
    }
    free(l); free(dom);
    sks_skinview_free(&v);
    sks_model_free(&m);
  } else {
    printf("skip (part): CesiumMan/CesiumMan_weights_unnormalised.gltf not found\n");
  }
  return sks_test_finish();
}
