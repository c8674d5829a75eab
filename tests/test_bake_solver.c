/* Solver internals: Jacobi 4x4, Horn fit, closest point / grid correspondence
 * against brute force and independent of the data's orientation (ties), and BCD + Levenberg-Marquardt recovering random poses
 * of a procedural chain rig exactly (known answer). */
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "solve/solve_internal.h"
#include "solve/solver_gn_kernels.h"

static unsigned long long rng = 88172645463325252ull;
static double rnd(void) { /* xorshift, [0,1) */
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}
static double rnds(void) { return 2 * rnd() - 1; }

static sks_dquat random_quat(double max_angle) {
  double axis[3] = {rnds(), rnds(), rnds()};
  double l = sqrt(sks_d3_dot(axis, axis));
  double ang = max_angle * rnd();
  double v[3] = {axis[0] / l * ang, axis[1] / l * ang, axis[2] / l * ang};
  return sks_dq_from_rotvec(v);
}

static void test_jacobi(void) {
  for (int trial = 0; trial < 50; ++trial) {
    double a[16], a0[16], ev[4], V[16];
    for (int i = 0; i < 4; ++i)
      for (int j = i; j < 4; ++j) a[i * 4 + j] = a[j * 4 + i] = rnds() * 10;
    if (trial == 0) /* nearly repeated top eigenvalues (power iteration's weak spot) */
      for (int i = 0; i < 16; ++i) a[i] = (i % 5 == 0) ? (i == 0 ? 1.0 : (i == 5 ? 1.0 - 1e-12 : 0.2)) : 0.0;
    memcpy(a0, a, sizeof a);
    sks_jacobi4(a, ev, V);
    double worst = 0;
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < 4; ++i) {
        double s = 0;
        for (int j = 0; j < 4; ++j) s += a0[i * 4 + j] * V[j * 4 + k];
        worst = fmax(worst, fabs(s - ev[k] * V[i * 4 + k]));
      }
    CHECK_MSG(worst < 1e-12, "trial %d: |Av - lv| = %g", trial, worst);
  }
}

static void test_horn(void) {
  for (int trial = 0; trial < 20; ++trial) {
    sks_dquat q = random_quat(3.1);
    double R[9];
    sks_dq_to_m3(q, R);
    int n = trial == 0 ? 3 : 20;
    double S[9] = {0};
    for (int k = 0; k < n; ++k) {
      double p[3] = {rnds(), rnds(), rnds()}, y[3];
      sks_dm3_apply(R, p, y);
      double a = 0.1 + rnd();
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) S[r * 3 + c] += a * p[r] * y[c];
    }
    sks_dquat id = {0, 0, 0, 1};
    sks_dquat h = sks_horn_rotation(S, id);
    double d = fabs(h.x * q.x + h.y * q.y + h.z * q.z + h.w * q.w);
    CHECK_NEAR(d, 1.0, 1e-13);
  }
}

static void test_correspondence(void) {
  /* random triangles soup and points: grid result == brute force; on pools
   * of 2 and 3 threads (2000 points: pieces of >= 256) the same, bit for bit */
  size_t nv = 300, nt = 100, nq = 2000;
  double *src = malloc(nv * 3 * sizeof(double)), *q = malloc(nq * 3 * sizeof(double));
  uint32_t *tris = malloc(nt * 3 * sizeof(uint32_t));
  for (size_t i = 0; i < 3 * nv; ++i) src[i] = rnds() * (i % 3 == 0 ? 5 : 1);
  for (size_t i = 0; i < 3 * nt; ++i) tris[i] = (uint32_t)(rnd() * nv) % (uint32_t)nv;
  for (size_t i = 0; i < 3 * nq; ++i) q[i] = rnds() * (i % 3 == 0 ? 6 : 1.5);
  for (int kind = 0; kind < 2; ++kind) {
    sks_correspondence c;
    CHECK(sks_correspondence_build(&c, kind ? SKS_CORRESPOND_CLOSEST_POINT : SKS_CORRESPOND_NEAREST_VERTEX,
                                   src, nv, tris, nt, q, nq, 10.0, NULL));
    for (unsigned threads = 2; threads <= 3; ++threads) {
      sks_thread_pool *pool = NULL;
      sks_error err;
      CHECK_OK(sks_thread_pool_create(threads, &pool, &err), &err);
      sks_correspondence cp;
      CHECK(sks_correspondence_build(&cp, kind ? SKS_CORRESPOND_CLOSEST_POINT : SKS_CORRESPOND_NEAREST_VERTEX,
                                     src, nv, tris, nt, q, nq, 10.0, pool));
      CHECK_MSG(cp.count == c.count && !memcmp(cp.idx, c.idx, nq * 3 * sizeof(uint32_t)) &&
                    !memcmp(cp.bary, c.bary, nq * 3 * sizeof(float)) &&
                    !memcmp(&cp.mean_distance, &c.mean_distance, sizeof(double)) &&
                    !memcmp(&cp.max_distance, &c.max_distance, sizeof(double)),
                "kind %d: correspondence on %u threads differs from one thread", kind, threads);
      sks_correspondence_free(&cp);
      sks_thread_pool_destroy(pool);
    }
    int bad = 0;
    for (size_t j = 0; j < nq; ++j) {
      double best = 1e300, got[3] = {0, 0, 0};
      if (kind) {
        for (size_t t = 0; t < nt; ++t) {
          double b[3];
          double d = sks_closest_point_triangle(&q[3 * j], &src[3 * tris[3 * t]], &src[3 * tris[3 * t + 1]],
                                                &src[3 * tris[3 * t + 2]], b);
          if (d < best) best = d;
        }
      } else {
        for (size_t v = 0; v < nv; ++v) best = fmin(best, sks_d3_dist2(&q[3 * j], &src[3 * v]));
      }
      for (int k = 0; k < 3; ++k)
        for (int a = 0; a < 3; ++a) got[a] += c.bary[3 * j + k] * src[3 * c.idx[3 * j + k] + a];
      double dg = sks_d3_dist2(got, &q[3 * j]);
      if (fabs(sqrt(dg) - sqrt(best)) > 1e-5) ++bad;
    }
    CHECK_MSG(bad == 0, "kind %d: %d queries differ from brute force", kind, bad);
    sks_correspondence_free(&c);
  }
  free(src); free(q); free(tris);
}

/* Ties go to the lowest index, whatever the tree visits first: a grid of
 * quads (two triangles each, sharing their diagonal) with a seam (its middle
 * column of vertices duplicated at the same positions, the triangles right
 * of it using the copies), queried at every vertex and above every edge's
 * midpoint, gives the same vertex / triangle for the mesh as given and
 * turned about random axes (mesh and queries together: the ties stay exact
 * for the quarter and half turns, within rounding for the others). The
 * tree's splits follow the axes, so before the tie rule a file turned by
 * 180 degrees got other closest points at the seam, and the registration
 * of two bodies another pose. */
static void test_correspondence_ties(void) {
  enum { G = 24, S = G / 2 };
  size_t nv = (size_t)(G + 1) * (G + 1) + (G + 1), nt = 2 * G * G, nq = 0;
  double *pts = malloc(nv * 3 * sizeof(double)), *rp = malloc(nv * 3 * sizeof(double));
  uint32_t *tris = malloc(nt * 3 * sizeof(uint32_t));
  double *q = malloc((nv + 3 * nt) * 3 * sizeof(double)), *rq = malloc((nv + 3 * nt) * 3 * sizeof(double));
  for (int i = 0; i <= G; ++i)
    for (int j = 0; j <= G; ++j) {
      double *v = &pts[3 * (size_t)(i * (G + 1) + j)];
      v[0] = i * 0.25 - 3; v[1] = j * 0.25 - 3; v[2] = 0.1 * sin(0.7 * i) * cos(0.4 * j);
    }
  for (int j = 0; j <= G; ++j) /* the seam's copies */
    memcpy(&pts[3 * (size_t)((G + 1) * (G + 1) + j)], &pts[3 * (size_t)(S * (G + 1) + j)], 3 * sizeof(double));
  size_t t = 0;
  for (int i = 0; i < G; ++i)
    for (int j = 0; j < G; ++j) {
      uint32_t a = (uint32_t)(i * (G + 1) + j), b = a + 1, c = a + G + 1, d = c + 1;
      if (i == S) { a = (uint32_t)((G + 1) * (G + 1) + j); b = a + 1; } /* right of the seam: the copies */
      uint32_t tr[6] = {a, c, d, a, d, b};
      memcpy(&tris[3 * t], tr, sizeof tr);
      t += 2;
    }
  for (size_t v = 0; v < nv; ++v, ++nq) memcpy(&q[3 * nq], &pts[3 * v], 3 * sizeof(double));
  for (size_t k = 0; k < nt; ++k)
    for (int e = 0; e < 3; ++e, ++nq)
      for (int a = 0; a < 3; ++a)
        q[3 * nq + a] = 0.5 * (pts[3 * tris[3 * k + (size_t)e] + a] + pts[3 * tris[3 * k + (size_t)(e + 1) % 3] + a]) +
                        (a == 2 ? 0.05 : 0);
  for (int kind = 0; kind < 2; ++kind) {
    sks_correspondence c0;
    sks_correspondence_kind kd = kind ? SKS_CORRESPOND_CLOSEST_POINT : SKS_CORRESPOND_NEAREST_VERTEX;
    CHECK(sks_correspondence_build(&c0, kd, pts, nv, tris, nt, q, nq, 10.0, NULL));
    int seam_low = 1; /* on the seam the original (lower) vertex is taken */
    for (int j = 0; j <= G && !kind; ++j) seam_low &= c0.idx[3 * (size_t)((G + 1) * (G + 1) + j)] == (uint32_t)(S * (G + 1) + j);
    CHECK_MSG(seam_low, "nearest vertex: a seam copy does not resolve to the lower index");
    for (int turn = 0; turn < 8; ++turn) {
      double R[9];
      if (turn < 3) { /* exact: half turns about z, x and a quarter turn about y */
        double H[3][9] = {{-1, 0, 0, 0, -1, 0, 0, 0, 1}, {1, 0, 0, 0, -1, 0, 0, 0, -1}, {0, 0, 1, 0, 1, 0, -1, 0, 0}};
        memcpy(R, H[turn], sizeof R);
      } else {
        sks_dq_to_m3(random_quat(3.1), R);
      }
      for (size_t v = 0; v < nv; ++v) sks_dm3_apply(R, &pts[3 * v], &rp[3 * v]);
      for (size_t k = 0; k < nq; ++k) sks_dm3_apply(R, &q[3 * k], &rq[3 * k]);
      sks_correspondence c;
      CHECK(sks_correspondence_build(&c, kd, rp, nv, tris, nt, rq, nq, 10.0, NULL));
      size_t differ = 0;
      for (size_t k = 0; k < nq; ++k) differ += memcmp(&c.idx[3 * k], &c0.idx[3 * k], 3 * sizeof(uint32_t)) != 0;
      CHECK_MSG(differ == 0, "kind %d, turn %d: %zu of %zu queries take another %s", kind, turn, differ, nq,
                kind ? "triangle" : "vertex");
      sks_correspondence_free(&c);
    }
    sks_correspondence_free(&c0);
  }
  free(pts); free(rp); free(tris); free(q); free(rq);

  /* many items at one point (a file's unused vertices parked at the origin,
   * degenerate triangles there): the tie rule looks at a bounded number of
   * them, so queries there stay within the per-query work bound */
  enum { C = 6000 };
  double *cp = malloc(2 * C * 3 * sizeof(double)), *cq = malloc(C * 3 * sizeof(double));
  uint32_t *ct = malloc(C * 3 * sizeof(uint32_t));
  for (size_t i = 0; i < 2 * C; ++i)
    for (int a = 0; a < 3; ++a) cp[3 * i + (size_t)a] = i < C ? 0.25 : rnds(); /* C coincident, C scattered */
  for (size_t i = 0; i < C; ++i) {
    for (int a = 0; a < 3; ++a) cq[3 * i + (size_t)a] = 0.25 + (i % 2 ? 1e-3 * (a + 1) : 0);
    ct[3 * i] = (uint32_t)i; ct[3 * i + 1] = (uint32_t)((i + 1) % C); ct[3 * i + 2] = (uint32_t)((i + 2) % C);
  }
  for (int kind = 0; kind < 2; ++kind) {
    sks_correspondence c;
    int ok = sks_correspondence_build(&c, kind ? SKS_CORRESPOND_CLOSEST_POINT : SKS_CORRESPOND_NEAREST_VERTEX, cp, 2 * C,
                                      ct, C, cq, C, 10.0, NULL);
    CHECK_MSG(ok, "kind %d: %d items at one point: the query %s", kind, C, c.over_budget ? "went over its work bound" : "failed");
    if (ok) {
      if (!kind) { /* (the triangles all use the coincident points: nothing else to take) */
        int at = 1;
        for (size_t i = 0; i < C; ++i) at &= c.idx[3 * i] < C;
        CHECK_MSG(at, "a query at the coincident points took another");
      }
      printf("%d items at one point, kind %d: %.1f tests per query\n", C, kind, (double)c.tests / C);
    }
    sks_correspondence_free(&c);
  }
  free(cp); free(cq); free(ct);
}

/* A chain of `nb` bones along x; a tube mesh with smooth two-bone weights. */
/* V vertices of up to K influences each. */
static void influences_alloc(sks_influences *full, size_t V, size_t K) {
  full->vertex_count = V;
  full->start = malloc((V + 1) * sizeof(uint32_t));
  full->bone = malloc(V * K * sizeof(uint32_t));
  full->w = malloc(V * K * sizeof(double));
  full->p = malloc(V * K * 3 * sizeof(double));
  if (!full->start || !full->bone || !full->w || !full->p) { fprintf(stderr, "out of memory\n"); exit(1); }
}

/* Closes full (start[V] = o) and builds the problem on all its vertices. */
static int build_all_vertices(sks_influences *full, size_t o, size_t nb, double D, sks_solve_problem *p) {
  size_t V = full->vertex_count;
  full->start[V] = (uint32_t)o;
  uint32_t *ids = malloc(V * sizeof(uint32_t));
  if (!ids) return 0;
  for (size_t v = 0; v < V; ++v) ids[v] = (uint32_t)v;
  int ok = sks_solve_problem_build(p, full, nb, ids, V, D);
  free(ids);
  return ok;
}

/* A tube along x over a chain of nb bones of length L (bone b's joint at
 * x = b L), rings x seg vertices, each on its two nearest bones with a
 * smoothstep blend; the influences' bind-space points (IBM = translate(-b L)).
 * Returns the influence count. */
static size_t chain_influences(sks_influences *full, size_t nb, size_t rings, size_t seg, double L) {
  size_t o = 0;
  for (size_t r = 0; r < rings; ++r)
    for (size_t s = 0; s < seg; ++s) {
      size_t v = r * seg + s;
      double x = (r + 0.5) * nb * L / rings, ang = 2 * 3.14159265358979 * s / seg;
      double pos[3] = {x, 0.4 * cos(ang), 0.4 * sin(ang)};
      double fb = x / L - 0.5; /* bone coordinate */
      size_t b0 = fb < 0 ? 0 : (size_t)fb;
      if (b0 >= nb - 1) b0 = nb - 2;
      double t = fb - (double)b0;
      t = t < 0 ? 0 : (t > 1 ? 1 : t);
      t = t * t * (3 - 2 * t);
      full->start[v] = (uint32_t)o;
      for (int k = 0; k < 2; ++k) {
        size_t b = b0 + (size_t)k;
        double w = k ? t : 1 - t;
        if (w <= 0) continue;
        full->bone[o] = (uint32_t)b;
        full->w[o] = w;
        /* IBM = translate(-b L) */
        full->p[3 * o] = pos[0] - (double)b * L; full->p[3 * o + 1] = pos[1]; full->p[3 * o + 2] = pos[2];
        ++o;
      }
    }
  return o;
}

static void copy_state6(sks_solve_state *d, const sks_solve_state *s, size_t B) {
  memcpy(d->q, s->q, B * sizeof(sks_dquat));
  memcpy(d->R, s->R, B * 9 * sizeof(double));
  memcpy(d->u, s->u, B * 3 * sizeof(double));
  memcpy(d->sc, s->sc, B * sizeof(double));
}

/* The chain_influences tube (6 bones of length 1, 60 x 10 vertices) and
 * its problem on all vertices; returns D. */
static double chain_problem(sks_influences *full, sks_solve_problem *p) {
  const size_t nb = 6, rings = 60, seg = 10;
  const double L = 1.0, D = sqrt(nb * L * nb * L + 0.8 * 0.8 * 2);
  influences_alloc(full, rings * seg, 2);
  size_t o = chain_influences(full, nb, rings, seg, L);
  CHECK(build_all_vertices(full, o, nb, D, p));
  return D;
}

static void test_chain_recovery(void) {
  const size_t nb = 6, V = 600;
  const double L = 1.0;
  sks_influences full;
  sks_solve_problem p;
  const double D = chain_problem(&full, &p);
  sks_solve_state st, truth;
  st.q = malloc(nb * sizeof(sks_dquat)); st.R = malloc(nb * 9 * sizeof(double)); st.u = malloc(nb * 3 * sizeof(double));
  truth.q = malloc(nb * sizeof(sks_dquat)); truth.R = malloc(nb * 9 * sizeof(double)); truth.u = malloc(nb * 3 * sizeof(double));
  st.sc = malloc(nb * sizeof(double)); truth.sc = malloc(nb * sizeof(double));
  st.stretch = truth.stretch = NULL;
  double *y = malloc(V * 3 * sizeof(double)), *cur = malloc(V * 3 * sizeof(double));
  size_t scount = sks_solve_gn_scratch_count(&p);
  double *scratch = malloc(scount * sizeof(double));
  static const char *const names[3] = {"BCD", "LM", "LM affine"};
  for (int solver = 0; solver < 3; ++solver) {
    /* solver 2: LM with bones 2.. affine (3-axis scale + inherited shear) */
    if (solver == 2) {
      for (size_t b = 0; b < nb; ++b) p.affine[b] = b >= 2;
      p.affine_count = nb - 2;
      p.similarity = 1; /* with per-bone uniform scale on the rigid bones */
      CHECK(sks_state_prepare_affine(&p, &st));
      CHECK(sks_state_prepare_affine(&p, &truth));
    }
    for (size_t b = 0; b < nb; ++b) { /* bind */
      sks_daffine a = sks_daff_identity();
      a.t[0] = (double)b * L;
      sks_state_set_rigid(&p, &st, b, &a);
    }
    for (int pose = 0; pose < 6; ++pose) {
      for (size_t b = 0; b < nb; ++b) {
        sks_daffine a;
        sks_dq_to_m3(random_quat(pose == 0 ? 1.5 : 0.8), a.l);
        if (solver == 2 && b >= 2) /* R diag(s) in the bone's axes, then a shear */
          for (int r = 0; r < 3; ++r)
            for (int k = 0; k < 3; ++k) a.l[r * 3 + k] *= (k == 0 ? 1.3 : (k == 1 ? 0.8 : 1.1)) + (b > 2 ? 0.1 * rnds() : 0);
        a.t[0] = (double)b * L + rnds() * 0.3; a.t[1] = rnds() * 0.3; a.t[2] = rnds() * 0.3;
        sks_state_set_rigid(&p, &truth, b, &a);
      }
      sks_solve_skin(&p, &truth, y);
      sks_solve_stats stats;
      if (solver == 0) {
        sks_solve_bcd(&p, y, &st, cur, NULL, 20000, 1e-12, 0, &stats);
      } else {
        if (pose == 0 && solver == 1) sks_solve_bcd(&p, y, &st, cur, NULL, 20, 1e-6, 0, &stats);
        CHECK(sks_solve_gn(&p, y, &st, 100, 1e-10, &stats, scratch, scount));
      }
      sks_solve_skin(&p, &st, cur);
      double worst = 0;
      for (size_t v = 0; v < V; ++v) worst = fmax(worst, sqrt(sks_d3_dist2(&cur[3 * v], &y[3 * v])));
      CHECK_MSG(worst < 1e-6 * D, "%s pose %d: worst %g D after %zu iterations",
                names[solver], pose, worst / D, stats.iterations);
      printf("%-9s pose %d: worst %.3g D, %zu iterations\n", names[solver], pose, worst / D,
             stats.iterations);
    }
  }
  free(scratch); free(y); free(cur);
  free(st.q); free(st.R); free(st.u); free(truth.q); free(truth.R); free(truth.u); free(st.sc); free(truth.sc);
  free(st.stretch); free(truth.stretch);
  sks_solve_problem_free(&p);
  sks_influences_free(&full);
}

/* The rotation-only LM's stops lose nothing measurable: a chain of 6 joints
 * (children at their rest offsets, the root free) posed by random joint
 * rotations, each vertex then moved 0.3 % D off (a residual no pose removes,
 * as between two rigs). The solve, warm-started from the previous pose as a
 * bake does, must end with its objective F (sum of squared residuals)
 * within 3e-6 of itself of the minimum found by running on: BCD sweeps to
 * a far tighter stop, then the LM again. With the stop after a Newton step
 * on the predicted next decrease (solver_rotonly.c: the Newton decrement
 * under 1e-6 F, the step under 1e-4 D) the 8 poses end at most 1.1e-7
 * above it; the same stop at 1e-3 F and 1e-2 D ended 6 of them 5.8e-6 to
 * 4.6e-4 above (this test failed). */
static void test_rotonly_stop(void) {
  const size_t nb = 6, V = 600, J = nb;
  const double L = 1.0;
  sks_influences full;
  sks_solve_problem p;
  const double D = chain_problem(&full, &p);
  int32_t parents[6], joint_bone[6], bone_joint[6];
  sks_daffine rest_local[6], models[6];
  double carry[6 * 9];
  uint8_t is_root[6];
  uint32_t sub_start[7], sub_bones[21];
  size_t q = 0;
  for (size_t j = 0; j < J; ++j) {
    parents[j] = (int32_t)j - 1;
    joint_bone[j] = bone_joint[j] = (int32_t)j;
    rest_local[j] = sks_daff_identity();
    if (j) rest_local[j].t[0] = L;
    for (int k = 0; k < 9; ++k) carry[9 * j + k] = k % 4 == 0;
    is_root[j] = j == 0;
    sub_start[j] = (uint32_t)q;
    for (size_t c = j; c < nb; ++c) sub_bones[q++] = (uint32_t)c; /* itself first, then its descendants */
  }
  sub_start[nb] = (uint32_t)q;
  double *vscratch = calloc(V * 5, sizeof(double));
  uint32_t *touched = malloc(V * sizeof(uint32_t));
  sks_rotonly ro = {J, parents, joint_bone, bone_joint, rest_local, carry, carry, is_root, models,
                    sub_start, sub_bones, vscratch, touched, NULL, 0};
  sks_solve_state st, ref, truth;
  sks_solve_state *all[3] = {&st, &ref, &truth};
  for (int k = 0; k < 3; ++k) {
    all[k]->q = malloc(nb * sizeof(sks_dquat)); all[k]->R = malloc(nb * 9 * sizeof(double));
    all[k]->u = malloc(nb * 3 * sizeof(double)); all[k]->sc = malloc(nb * sizeof(double));
    all[k]->stretch = NULL;
  }
  double *y = malloc(V * 3 * sizeof(double)), *cur = malloc(V * 3 * sizeof(double));
  for (size_t b = 0; b < nb; ++b) { /* bind */
    sks_daffine a = sks_daff_identity();
    a.t[0] = (double)b * L;
    sks_state_set_rigid(&p, &st, b, &a);
  }
  double worst_rel = 0;
  for (int pose = 0; pose < 8; ++pose) {
    sks_daffine parent = sks_daff_identity();
    for (size_t b = 0; b < nb; ++b) { /* FK of random joint rotations, the root offset */
      sks_daffine loc = rest_local[b];
      sks_dq_to_m3(random_quat(0.5), loc.l);
      if (b == 0) for (int k = 0; k < 3; ++k) loc.t[k] = 0.2 * rnds();
      sks_daffine m = sks_daff_mul(&parent, &loc);
      sks_state_set_rigid(&p, &truth, b, &m);
      parent = m;
    }
    sks_solve_skin(&p, &truth, y);
    for (size_t k = 0; k < 3 * V; ++k) y[k] += 0.003 * D * rnds();
    sks_solve_stats a = {0, 0}, b = {0, 0}, c = {0, 0};
    CHECK(sks_solve_rotonly_gn(&p, y, &st, &ro, 100, 1e-10, &a));
    copy_state6(&ref, &st, nb);
    sks_solve_bcd(&p, y, &ref, cur, &ro, 20000, 1e-13, 0, &b);
    CHECK(sks_solve_rotonly_gn(&p, y, &ref, &ro, 100, 1e-12, &c));
    double lo = fmin(b.final_rms, c.final_rms);
    double rel = (a.final_rms / lo) * (a.final_rms / lo) - 1;
    printf("rotation-only pose %d: %zu iterations, rms %.10g D, F above the minimum by %.2e of itself\n", pose,
           a.iterations, a.final_rms, rel);
    CHECK_MSG(rel < 3e-6, "rotation-only pose %d: F %.3e of itself above the minimum (%zu iterations)", pose, rel,
              a.iterations);
    worst_rel = fmax(worst_rel, rel);
  }
  printf("rotation-only stop: worst F above the minimum %.2e of itself\n", worst_rel);
  free(y); free(cur); free(vscratch); free(touched);
  for (int k = 0; k < 3; ++k) { free(all[k]->q); free(all[k]->R); free(all[k]->u); free(all[k]->sc); }
  sks_solve_problem_free(&p);
  sks_influences_free(&full);
}

/* The LM factorisation and moment sums in both builds of their kernels
 * (solver_gn_kernels.h: SSE2 / C and, where the CPU has it, AVX2 + FMA) on
 * a ring of bones, whose elimination makes fill blocks (the chain has
 * none): rigid (K = 6), similarity (K = 7) and affine (K = 12) unknowns.
 * Each build must recover random poses exactly, and the two agree. */
static void test_gn_kernels_ring(void) {
  const size_t nb = 8, per = 50, V = nb * per;
  const double D = 4.0;
  sks_influences full;
  influences_alloc(&full, V, 3);
  size_t o = 0;
  for (size_t v = 0; v < V; ++v) {
    size_t b0 = v / per;
    double ang = 2 * 3.14159265358979 * ((double)v + 0.5) / (double)V;
    double pos[3] = {1.5 * cos(ang) + 0.3 * rnds(), 1.5 * sin(ang) + 0.3 * rnds(), 0.4 * rnds()};
    size_t bs[3] = {b0, (b0 + 1) % nb, (b0 + 3) % nb};
    double ws[3] = {0.6, 0.3, v % 7 == 0 ? 0.1 : 0.0};
    full.start[v] = (uint32_t)o;
    for (int k = 0; k < 3; ++k) {
      if (ws[k] <= 0) continue;
      full.bone[o] = (uint32_t)bs[k];
      full.w[o] = ws[k] / (ws[0] + ws[1] + ws[2]);
      memcpy(&full.p[3 * o], pos, sizeof pos); /* IBM = identity */
      ++o;
    }
  }
  sks_solve_problem p;
  CHECK(build_all_vertices(&full, o, nb, D, &p));
  CHECK_MSG(p.gn.slot_count > p.gn.pair_blocks, "the ring's factor has fill blocks (%zu slots, %zu pairs)",
            p.gn.slot_count, p.gn.pair_blocks);
  const int have_avx2 = (p.gn.isa = SKS_GN_ISA_AUTO, sks_gn_use_avx2(&p.gn));
  printf("gn kernels: AVX2 + FMA %s\n", have_avx2 ? "compared with SSE2 / C" : "not on this CPU (SSE2 / C only)");
  sks_solve_state st[2], truth;
  memset(st, 0, sizeof st); memset(&truth, 0, sizeof truth);
  sks_solve_state *all[3] = {&st[0], &st[1], &truth};
  for (int i = 0; i < 3; ++i) {
    all[i]->q = malloc(nb * sizeof(sks_dquat)); all[i]->R = malloc(nb * 9 * sizeof(double));
    all[i]->u = malloc(nb * 3 * sizeof(double)); all[i]->sc = malloc(nb * sizeof(double));
  }
  double *y = malloc(V * 3 * sizeof(double)), *cur = malloc(V * 3 * sizeof(double));
  static const char *const names[3] = {"rigid", "similarity", "affine"};
  for (int mode = 0; mode < 3; ++mode) {
    if (mode == 1) p.similarity = 1;
    if (mode == 2) {
      for (size_t b = 0; b < nb; ++b) p.affine[b] = b % 2;
      p.affine_count = nb / 2;
      for (int i = 0; i < 3; ++i) CHECK(sks_state_prepare_affine(&p, all[i]));
    }
    size_t scount = sks_solve_gn_scratch_count(&p) * (mode == 2 ? 4 : 1);
    double *scratch = malloc(scount * sizeof(double));
    for (int pose = 0; pose < 4; ++pose) {
      for (size_t b = 0; b < nb; ++b) {
        sks_daffine a;
        sks_dq_to_m3(random_quat(0.7), a.l);
        if (mode == 2 && b % 2)
          for (int r = 0; r < 3; ++r)
            for (int k = 0; k < 3; ++k) a.l[r * 3 + k] *= k == 0 ? 1.2 : (k == 1 ? 0.85 : 1.05);
        for (int k = 0; k < 3; ++k) a.t[k] = 0.3 * rnds();
        sks_state_set_rigid(&p, &truth, b, &a);
      }
      sks_solve_skin(&p, &truth, y);
      size_t its[2] = {0, 0};
      for (int isa = 0; isa < 2; ++isa) {
        for (size_t b = 0; b < nb; ++b) { /* bind */
          sks_daffine a = sks_daff_identity();
          sks_state_set_rigid(&p, &st[isa], b, &a);
        }
        p.gn.isa = isa ? SKS_GN_ISA_AUTO : SKS_GN_ISA_PORTABLE;
        sks_solve_stats stats;
        CHECK(sks_solve_gn(&p, y, &st[isa], 100, 1e-12, &stats, scratch, scount));
        its[isa] = stats.iterations;
        sks_solve_skin(&p, &st[isa], cur);
        double worst = 0;
        for (size_t v = 0; v < V; ++v) worst = fmax(worst, sqrt(sks_d3_dist2(&cur[3 * v], &y[3 * v])));
        CHECK_MSG(worst < 1e-7 * D, "%s pose %d, %s kernels: worst %g D after %zu iterations", names[mode], pose,
                  isa ? "auto" : "portable", worst / D, stats.iterations);
        /* a wrong factorisation still descends (the gradient is right) but
         * needs far more steps: Newton's converge in a few */
        CHECK_MSG(stats.iterations <= 25, "%s pose %d, %s kernels: %zu iterations", names[mode], pose,
                  isa ? "auto" : "portable", stats.iterations);
      }
      double diff = 0;
      for (size_t b = 0; b < nb; ++b) {
        sks_daffine a0 = sks_state_rigid(&p, &st[0], b), a1 = sks_state_rigid(&p, &st[1], b);
        for (int k = 0; k < 9; ++k) diff = fmax(diff, fabs(a0.l[k] - a1.l[k]) * D);
        for (int k = 0; k < 3; ++k) diff = fmax(diff, fabs(a0.t[k] - a1.t[k]));
      }
      CHECK_MSG(diff < 1e-9 * D, "%s pose %d: portable and auto kernels differ by %g D", names[mode], pose, diff / D);
      printf("gn kernels, %-10s pose %d: %zu / %zu iterations (portable / auto), solutions differ by %.2g D\n",
             names[mode], pose, its[0], its[1], diff / D);
    }
    free(scratch);
  }
  for (int i = 0; i < 3; ++i) { free(all[i]->q); free(all[i]->R); free(all[i]->u); free(all[i]->sc); free(all[i]->stretch); }
  free(y); free(cur);
  sks_solve_problem_free(&p);
  sks_influences_free(&full);
}

/* The rotation-only solver's envelope Cholesky (solver_gn_kernels.h), in
 * the portable build and, where the CPU has it, the AVX2 + FMA one, against
 * Gaussian elimination: a random diagonally dominant matrix whose permuted
 * lower triangle has a random envelope (row i zero left of first[i]). */
static void test_envelope_solve(int blocks) {
  enum { N = 45 };
  static double Hp[N * N], H[N * N], L[N * N], A[N * (N + 1)];
  double dd[N], g[N], x[N], z[N], ref[N];
  uint32_t perm[N], first[N];
  for (size_t i = 0; i < N; ++i) perm[i] = (uint32_t)i;
  for (size_t i = N; i-- > 1;) { size_t j = (size_t)(rnd() * (double)(i + 1)); uint32_t t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
  memset(Hp, 0, sizeof Hp);
  for (size_t i = 0; i < N; ++i) {
    /* blocks: one first per 3 rows (a joint's, the factor's 3-row path) */
    if (blocks) first[i] = i % 3 ? first[i - 1] : (uint32_t)(i < 3 ? 0 : (size_t)(rnd() * (double)i));
    else first[i] = (uint32_t)(i < 3 ? 0 : (size_t)(rnd() * (double)i));
    double row = 0;
    for (size_t j = first[i]; j < i; ++j) Hp[i * N + j] = Hp[j * N + i] = rnds();
    for (size_t j = 0; j < N; ++j) row += fabs(Hp[i * N + j]);
    Hp[i * N + i] = row + 1.0 + rnd();
  }
  for (size_t i = 0; i < N; ++i) { /* fix the rows' sums after the symmetric fill: dominance */
    double row = 0;
    for (size_t j = 0; j < N; ++j) row += j == i ? 0 : fabs(Hp[i * N + j]);
    if (Hp[i * N + i] <= row) Hp[i * N + i] = row + 1.0;
  }
  for (size_t i = 0; i < N; ++i)
    for (size_t j = 0; j < N; ++j) H[(size_t)perm[i] * N + perm[j]] = Hp[i * N + j];
  for (size_t i = 0; i < N; ++i) { dd[i] = H[i * N + i]; g[i] = rnds(); }
  /* reference: (H + 1e-12 diag(H)) x = -g by Gaussian elimination (the solve's
   * 1e-30 max(dd) floor is far below rounding here) */
  for (size_t i = 0; i < N; ++i) {
    for (size_t j = 0; j < N; ++j) A[i * (N + 1) + j] = H[i * N + j] + (i == j ? 1e-12 * dd[i] : 0.0);
    A[i * (N + 1) + N] = -g[i];
  }
  for (size_t c = 0; c < N; ++c)
    for (size_t r = c + 1; r < N; ++r) {
      double f = A[r * (N + 1) + c] / A[c * (N + 1) + c];
      for (size_t k = c; k <= N; ++k) A[r * (N + 1) + k] -= f * A[c * (N + 1) + k];
    }
  for (size_t r = N; r-- > 0;) {
    double v = A[r * (N + 1) + N];
    for (size_t k = r + 1; k < N; ++k) v -= A[r * (N + 1) + k] * ref[k];
    ref[r] = v / A[r * (N + 1) + r];
  }
  for (int isa = 0; isa < 2; ++isa) {
    if (isa && !(sks_gn_avx2_compiled() && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
      printf("envelope solve: AVX2 + FMA not on this CPU, portable only\n");
      break;
    }
    memset(L, 0, sizeof L);
    int ok = isa ? sks_envelope_solve_avx2(Hp, dd, g, N, 0.0, perm, first, L, x, z)
                 : envelope_solve_impl(Hp, dd, g, N, 0.0, perm, first, L, x, z);
    CHECK(ok);
    double worst = 0, scale = 0;
    for (size_t i = 0; i < N; ++i) { worst = fmax(worst, fabs(x[i] - ref[i])); scale = fmax(scale, fabs(ref[i])); }
    CHECK_MSG(worst < 1e-12 * scale, "envelope solve (%s): off the reference by %g of %g", isa ? "AVX2" : "portable",
              worst, scale);
    printf("envelope solve (%s, %s), n = %d: max |x - reference| %.2g (|x| up to %.2g)\n", isa ? "AVX2" : "portable",
           blocks ? "3-row blocks" : "random envelope", N, worst, scale);
  }
}

int main(void) {
  test_jacobi();
  test_horn();
  test_correspondence();
  test_correspondence_ties();
  test_chain_recovery();
  test_rotonly_stop();
  test_gn_kernels_ring();
  test_envelope_solve(0);
  test_envelope_solve(1);
  return sks_test_finish();
}
