/* Skinning kernels and pose jobs: DQS = LBS for single influences, candy
 * wrapper (LBS collapses a 180-degree twist, DQS keeps the radius), reference
 * vs optimised vs parallel on a random mesh for every influence count with
 * strides, validation, static pre-transform, bind pose, two-bone IK, blend. */
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "math/sks_math.h"

#define PI 3.14159265358979323846

static uint32_t rng_state = 12345u;
static float frand(void) { /* [0, 1) */
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)(rng_state >> 8) / 16777216.0f;
}
static float srand1(void) { return 2.0f * frand() - 1.0f; }

static sks_quat random_rotation(void) {
  return sks_q_normalize(sks_q(srand1(), srand1(), srand1(), srand1()));
}

static sks_mat4 rigid(sks_quat q, sks_vec3 t) {
  sks_transform x = sks_transform_identity();
  x.rotation = q;
  x.translation = t;
  return sks_m4_from_transform(&x);
}

static sks_skinning_job base_job(sks_skinning_method method, size_t n, uint32_t k, const sks_mat4 *palette,
                                 size_t palette_count, const uint16_t *joints, const float *weights,
                                 const float *in, float *out) {
  sks_skinning_job j;
  memset(&j, 0, sizeof j);
  j.method = method;
  j.vertex_count = n;
  j.influence_count = k;
  j.palette = palette;
  j.palette_count = palette_count;
  j.joints = joints;
  j.weights = weights;
  j.in_positions = in;
  j.out_positions = out;
  return j;
}

/* DQS equals LBS where a vertex has one influence (rigid palette). */
static void dqs_equals_lbs_single_influence(void) {
  enum { N = 500, P = 16 };
  sks_mat4 palette[P];
  for (int i = 0; i < P; ++i)
    palette[i] = rigid(random_rotation(), sks_v3(5 * srand1(), 5 * srand1(), 5 * srand1()));
  static float pos[3 * N], nrm[3 * N], lp[3 * N], ln[3 * N], dp[3 * N], dn[3 * N];
  static uint16_t j1[N], j4[4 * N];
  static float w1[N], w4[4 * N];
  for (int v = 0; v < N; ++v) {
    sks_vec3 n = sks_v3_normalize(sks_v3(srand1(), srand1(), srand1()));
    for (int c = 0; c < 3; ++c) pos[3 * v + c] = 3 * srand1();
    nrm[3 * v] = n.x; nrm[3 * v + 1] = n.y; nrm[3 * v + 2] = n.z;
    j1[v] = (uint16_t)(v % P);
    w1[v] = 1.0f;
    for (int i = 0; i < 4; ++i) {
      j4[4 * v + i] = (uint16_t)((v + 3 * i) % P);
      w4[4 * v + i] = i == 0 ? 1.0f : 0.0f; /* one effective influence in 4 slots */
    }
  }
  double maxd = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const uint32_t k = pass ? 4 : 1;
    sks_skinning_job l = base_job(SKS_SKIN_LBS, N, k, palette, P, pass ? j4 : j1, pass ? w4 : w1, pos, lp);
    l.in_normals = nrm; l.out_normals = ln;
    sks_skinning_job d = l;
    d.method = SKS_SKIN_DQS;
    d.out_positions = dp; d.out_normals = dn;
    CHECK(sks_skinning_job_run(&l));
    CHECK(sks_skinning_job_run(&d));
    for (int i = 0; i < 3 * N; ++i) {
      maxd = fmax(maxd, fabs(lp[i] - dp[i]));
      maxd = fmax(maxd, fabs(ln[i] - dn[i]));
    }
  }
  printf("DQS vs LBS, single influence: max |difference| = %.3g\n", maxd);
  CHECK(maxd < 2e-5);
}

/* A cylinder of radius 1 along Y (0..2), joint 0 at the bottom (identity) and
 * joint 1 twisted 180 degrees about the axis; weights fade linearly 0 -> 1
 * along Y. LBS collapses the middle ring (candy wrapper); DQS keeps radius. */
static void candy_wrapper(void) {
  enum { RINGS = 21, SEG = 32, N = RINGS * SEG };
  static float pos[3 * N], w[2 * N], lbs[3 * N], dqs[3 * N];
  static uint16_t jn[2 * N];
  for (int r = 0; r < RINGS; ++r)
    for (int s = 0; s < SEG; ++s) {
      int v = r * SEG + s;
      double a = 2 * PI * s / SEG, y = 2.0 * r / (RINGS - 1);
      pos[3 * v] = (float)cos(a); pos[3 * v + 1] = (float)y; pos[3 * v + 2] = (float)sin(a);
      jn[2 * v] = 0; jn[2 * v + 1] = 1;
      w[2 * v + 1] = (float)(y / 2.0);
      w[2 * v] = 1.0f - w[2 * v + 1];
    }
  sks_mat4 palette[2] = {sks_m4_identity(),
                         rigid(sks_q_from_axis_angle(sks_v3(0, 1, 0), (float)PI), sks_v3(0, 0, 0))};
  sks_skinning_job l = base_job(SKS_SKIN_LBS, N, 2, palette, 2, jn, w, pos, lbs);
  sks_skinning_job d = l;
  d.method = SKS_SKIN_DQS;
  d.out_positions = dqs;
  CHECK(sks_skinning_job_run(&l));
  CHECK(sks_skinning_job_run(&d));
  double dqs_worst = 0, lbs_mid = 0;
  for (int v = 0; v < N; ++v) {
    double rd = hypot(dqs[3 * v], dqs[3 * v + 2]);
    dqs_worst = fmax(dqs_worst, fabs(rd - 1.0));
    if (v / SEG == RINGS / 2) lbs_mid = fmax(lbs_mid, hypot(lbs[3 * v], lbs[3 * v + 2]));
  }
  printf("candy wrapper: DQS worst radius error %.3g%%, LBS middle-ring radius %.3g\n", 100 * dqs_worst, lbs_mid);
  CHECK(dqs_worst < 0.02);
  CHECK(lbs_mid < 0.5);
  /* The reference kernels agree. */
  static float ref[3 * N];
  d.out_positions = ref;
  CHECK(sks_skinning_job_run_reference(&d));
  double md = 0;
  for (int i = 0; i < 3 * N; ++i) md = fmax(md, fabs(ref[i] - dqs[i]));
  CHECK(md < 1e-5);
}

/* Antipodality: two joints rotated about Y by a and a + 60 degrees, for a
 * all around the circle, and a vertex (1, 0, 0) weighted 50/50. Whatever
 * sign a matrix -> quaternion conversion picks, DQS must blend the short
 * way: the vertex ends at angle a + 30 degrees with radius 1. Across 180
 * degrees the two quaternions come out with opposite hemispheres (e.g. -100
 * and 170 degrees); without the sign flip the blend goes the long way round
 * (measured: worst error 2, the vertex lands opposite). All kernels,
 * positions and normals. */
static void dqs_short_way(void) {
  enum { N = 36 };
  static sks_mat4 palette[2 * N];
  static uint16_t jn[2 * N];
  static float w[2 * N], pos[3 * N], nrm[3 * N], out[3 * N], outn[3 * N];
  for (int i = 0; i < N; ++i) {
    double a = -PI + 2 * PI * i / N, b = a + PI / 3;
    palette[2 * i] = rigid(sks_q_from_axis_angle(sks_v3(0, 1, 0), (float)a), sks_v3(0, 0, 0));
    palette[2 * i + 1] = rigid(sks_q_from_axis_angle(sks_v3(0, 1, 0), (float)b), sks_v3(0, 0, 0));
    jn[2 * i] = (uint16_t)(2 * i); jn[2 * i + 1] = (uint16_t)(2 * i + 1);
    w[2 * i] = w[2 * i + 1] = 0.5f;
    pos[3 * i] = 1; pos[3 * i + 1] = 0; pos[3 * i + 2] = 0;
    nrm[3 * i] = 1; nrm[3 * i + 1] = 0; nrm[3 * i + 2] = 0;
  }
  for (int kernel = 0; kernel < 3; ++kernel) {
    sks_skinning_job d = base_job(SKS_SKIN_DQS, N, 2, palette, 2 * N, jn, w, pos, out);
    d.in_normals = nrm; d.out_normals = outn;
    memset(out, 0, sizeof out); memset(outn, 0, sizeof outn);
    CHECK(kernel == 0 ? sks_skinning_job_run_reference(&d)
          : kernel == 1 ? sks_skinning_job_run(&d) : sks_skinning_job_run_parallel(&d, 2));
    double worst = 0;
    for (int i = 0; i < N; ++i) {
      double m = -PI + 2 * PI * i / N + PI / 6; /* R_y(m) (1,0,0) = (cos m, 0, -sin m) */
      double want[3] = {cos(m), 0, -sin(m)};
      for (int c = 0; c < 3; ++c) {
        worst = fmax(worst, fabs(out[3 * i + c] - want[c]));
        worst = fmax(worst, fabs(outn[3 * i + c] - want[c]));
      }
    }
    const char *name = kernel == 0 ? "reference" : kernel == 1 ? "optimised" : "parallel";
    printf("DQS short way (%s kernel): worst |error| %.3g over %d angle pairs\n", name, worst, N);
    CHECK_MSG(worst < 1e-5, "DQS %s kernel blends quaternions the long way", name);
  }
}

/* Reference vs optimised vs parallel, every influence count, both methods,
 * interleaved (strided) buffers, 10k random vertices. */
static const char *isa_name(sks_skinning_isa isa) {
  return isa == SKS_SKIN_ISA_AVX2 ? "avx2" : isa == SKS_SKIN_ISA_SSE2 ? "sse2" : isa == SKS_SKIN_ISA_SCALAR ? "scalar" : "auto";
}

/* The sign of r as the kernels' matrix -> quaternion conversion gives it
 * (the rotation of a rigid matrix; same function as dq_from_matrix). */
static sks_quat palette_rotation(const sks_mat4 *m) {
  const float *e = m->m;
  return sks_q_from_rotation3(e[0], e[4], e[8], e[1], e[5], e[9], e[2], e[6], e[10]);
}

/* Antipodality with 1, 2, 4 and 8 influences in every kernel, forced (each
 * available isa, and run_parallel): vertex v blends K joints rotated about Y
 * by a, a + D, ..., a + (K - 1) D (D = 120 / K degrees, so the spread stays
 * below 180) with equal weights, a stepping around the circle (a = -180 +
 * 360 i / S, i = v % S), all translated by T. The short-way blend is the
 * rotation by the mean angle m = a + (K - 1) D / 2, exactly: p' = R_y(m) p + T
 * for p = (1, 0, 0), n' = R_y(m) n. Two palettes: 64 joints with n >= 1024
 * vertices (the SIMD kernels' antipodality table: palettes of up to 64 and
 * n >= 64^2 / 4) and 36 K joints (> 64 for K >= 2: per-vertex dots), each
 * with vertex counts 1, 2, 3 (a block shorter than 4 and 8 alone), 5, 11
 * and 1027 (full blocks and a short last one). Each case checks that some
 * of its blends really needed the sign flip. */
static void dqs_short_way_kernels(void) {
  enum { MAXP = 36 * 8, MAXN = 1027 };
/* Vertex v's step: the steps whose blends need the sign flip first (which
 * they are depends on the hemisphere the conversion picks), so even a
 * 1-vertex job needs it. */
#define STEP(v) order[(v) % (size_t)S]
  static sks_mat4 palette[MAXP];
  static uint16_t jn[8 * MAXN];
  static float w[8 * MAXN], pos[3 * MAXN], nrm[3 * MAXN], out[3 * MAXN], outn[3 * MAXN];
  const sks_vec3 T = sks_v3(0.5f, -1.0f, 2.0f);
  const uint32_t ks[] = {1, 2, 4, 8};
  const size_t ns[] = {1, 2, 3, 5, 11, 1027};
  for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ++ki)
    for (int table = 0; table < 2; ++table) {
      const uint32_t K = ks[ki];
      const int S = table ? 64 / (int)K : 36;
      const size_t P = (size_t)S * K;
      const double D = (2 * PI / 3) / K;
      for (int i = 0; i < S; ++i)
        for (uint32_t j = 0; j < K; ++j)
          palette[(size_t)i * K + j] =
              rigid(sks_q_from_axis_angle(sks_v3(0, 1, 0), (float)(-PI + 2 * PI * i / S + j * D)), T);
      int step_flips[64]; /* per step: influences blended negated against the first */
      for (int i = 0; i < S; ++i) {
        step_flips[i] = 0;
        for (uint32_t j = 1; j < K; ++j)
          step_flips[i] += sks_q_dot(palette_rotation(&palette[(size_t)i * K]),
                                     palette_rotation(&palette[(size_t)i * K + j])) < 0;
      }
      int order[64], no = 0;
      for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < S; ++i)
          if ((step_flips[i] > 0) == (pass == 0)) order[no++] = i;
      for (size_t v = 0; v < MAXN; ++v) {
        const int i = STEP(v);
        for (uint32_t j = 0; j < K; ++j) {
          jn[v * K + j] = (uint16_t)((size_t)i * K + j);
          w[v * K + j] = 1.0f / (float)K;
        }
        pos[3 * v] = 1; pos[3 * v + 1] = 0; pos[3 * v + 2] = 0;
        nrm[3 * v] = 1; nrm[3 * v + 1] = 0; nrm[3 * v + 2] = 0;
      }
      for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ++ni)
        for (int isa = SKS_SKIN_ISA_SCALAR; isa <= SKS_SKIN_ISA_AVX2 + 1; ++isa) {
          const int parallel = isa == SKS_SKIN_ISA_AVX2 + 1;
          const sks_skinning_isa which = parallel ? SKS_SKIN_ISA_AUTO : (sks_skinning_isa)isa;
          if (!sks_skinning_isa_available(which)) continue;
          const size_t n = ns[ni];
          int flips = 0;
          for (size_t v = 0; v < n; ++v) flips += step_flips[STEP(v)];
          CHECK_MSG(K == 1 || flips > 0, "K=%u P=%zu n=%zu: no blend needs the sign flip, the case tests nothing", K, P,
                    n);
          sks_skinning_job d = base_job(SKS_SKIN_DQS, n, K, palette, P, jn, w, pos, out);
          d.in_normals = nrm; d.out_normals = outn; d.isa = which;
          memset(out, 0, sizeof out); memset(outn, 0, sizeof outn);
          CHECK(parallel ? sks_skinning_job_run_parallel(&d, 2) : sks_skinning_job_run(&d));
          double worst = 0;
          for (size_t v = 0; v < n; ++v) {
            const int i = STEP(v);
            const double m = -PI + 2 * PI * i / S + (K - 1) * D / 2; /* R_y(m) (1,0,0) = (cos m, 0, -sin m) */
            const double want[3] = {cos(m), 0, -sin(m)}, t[3] = {T.x, T.y, T.z};
            for (int c = 0; c < 3; ++c) {
              worst = fmax(worst, fabs(out[3 * v + c] - (want[c] + t[c])));
              worst = fmax(worst, fabs(outn[3 * v + c] - want[c]));
            }
          }
          const char *name = parallel ? "parallel" : isa_name(which);
          CHECK_MSG(worst < 1e-5, "DQS %s K=%u P=%zu n=%zu: worst |error| %.3g (the long way round?)", name, K, P, n,
                    worst);
          if (n == MAXN)
            printf("DQS short way (%s, K=%u, P=%zu, %d blends need the flip): worst |error| %.3g, n = %zu\n", name, K, P,
                   flips, worst, n);
        }
    }
}
#undef STEP

/* Packed (stride 3) buffers, the layout the SIMD kernels have fast paths for,
 * with a vertex count that is not a multiple of any block size: every kernel
 * of `isa` against run_reference (1e-4 absolute on coordinates of size ~10),
 * normals unit length to 1e-6 (rsqrt + Newton in the SIMD kernels),
 * skip_normalize equal to the reference's un-normalised normals, a
 * positions-only run identical to the positions of the run with normals, and
 * run_parallel with any thread count identical to run. P = 40 uses the
 * AVX2 DQS kernel's precomputed antipodality table, P = 100 its per-vertex
 * dots (the table is for palettes of up to 64). */
static void packed_kernels_agree(sks_skinning_isa isa, int P) {
  enum { N = 1003 };
  sks_mat4 palette[100];
  if (P > 100) { CHECK(0); return; }
  for (int i = 0; i < P; ++i)
    palette[i] = rigid(random_rotation(), sks_v3(4 * srand1(), 4 * srand1(), 4 * srand1()));
  float *pos = malloc(sizeof(float) * 3 * N), *nrm = malloc(sizeof(float) * 3 * N);
  float *rp = malloc(sizeof(float) * 3 * N), *rn = malloc(sizeof(float) * 3 * N);
  float *op = malloc(sizeof(float) * 3 * N), *on = malloc(sizeof(float) * 3 * N);
  float *pp = malloc(sizeof(float) * 3 * N), *pn = malloc(sizeof(float) * 3 * N);
  uint16_t *joints = malloc(sizeof(uint16_t) * N * SKS_MAX_INFLUENCES);
  float *weights = malloc(sizeof(float) * N * SKS_MAX_INFLUENCES);
  if (!pos || !nrm || !rp || !rn || !op || !on || !pp || !pn || !joints || !weights) { CHECK(0); return; }
  for (int v = 0; v < N; ++v) {
    sks_vec3 n = sks_v3_normalize(sks_v3(srand1(), srand1(), srand1()));
    pos[3 * v] = 3 * srand1(); pos[3 * v + 1] = 3 * srand1(); pos[3 * v + 2] = 3 * srand1();
    nrm[3 * v] = n.x; nrm[3 * v + 1] = n.y; nrm[3 * v + 2] = n.z;
  }
  const uint32_t ks[] = {1, 2, 4, 8};
  for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ++ki) {
    const uint32_t k = ks[ki];
    for (int v = 0; v < N; ++v) {
      float sum = 0;
      for (uint32_t i = 0; i < k; ++i) {
        joints[v * k + i] = (uint16_t)(frand() * P);
        weights[v * k + i] = 0.05f + frand();
        sum += weights[v * k + i];
      }
      for (uint32_t i = 0; i < k; ++i) weights[v * k + i] /= sum;
    }
    for (int m = 0; m < 2; ++m)
      for (int skip = 0; skip < 2; ++skip) {
        sks_skinning_job job = base_job(m ? SKS_SKIN_DQS : SKS_SKIN_LBS, N, k, palette, P, joints, weights, pos, rp);
        job.in_normals = nrm; job.out_normals = rn; job.skip_normalize = skip;
        CHECK(sks_skinning_job_run_reference(&job));
        job.isa = isa;
        job.out_positions = op; job.out_normals = on;
        CHECK(sks_skinning_job_run(&job));
        double dp = 0, dn = 0, unit = 0, shortest = 1e30;
        for (int i = 0; i < 3 * N; ++i) {
          dp = fmax(dp, fabs(rp[i] - op[i]));
          dn = fmax(dn, fabs(rn[i] - on[i]));
        }
        for (int v = 0; v < N; ++v) {
          double l = sqrt((double)on[3 * v] * on[3 * v] + (double)on[3 * v + 1] * on[3 * v + 1] +
                          (double)on[3 * v + 2] * on[3 * v + 2]);
          unit = fmax(unit, fabs(l - 1.0));
          shortest = fmin(shortest, l);
        }
        CHECK_MSG(dp < 1e-4 && dn < 1e-5, "%s %s k=%u skip_normalize=%d: positions %.3g normals %.3g", isa_name(isa),
                  m ? "DQS" : "LBS", k, skip, dp, dn);
        if (!skip) CHECK_MSG(unit < 1e-6, "%s k=%u: | |n| - 1 | = %.3g", isa_name(isa), k, unit);
        /* LBS of rigid matrices shortens blended normals: the option shows. */
        if (skip && !m && k > 1) CHECK_MSG(shortest < 0.99, "%s k=%u: skip_normalize had no effect", isa_name(isa), k);
        const unsigned threads[] = {2, 3, 7};
        for (size_t t = 0; t < 3; ++t) {
          job.out_positions = pp; job.out_normals = pn;
          CHECK(sks_skinning_job_run_parallel(&job, threads[t]));
          CHECK(memcmp(pp, op, sizeof(float) * 3 * N) == 0 && memcmp(pn, on, sizeof(float) * 3 * N) == 0);
        }
        /* Positions only (the packed no-normals kernels) give the same positions. */
        job.in_normals = NULL; job.out_normals = NULL; job.out_positions = pp;
        memset(pp, 0xff, sizeof(float) * 3 * N); /* NaN: a vertex not written shows */
        CHECK(sks_skinning_job_run(&job));
        CHECK_MSG(memcmp(pp, op, sizeof(float) * 3 * N) == 0, "%s %s k=%u: positions-only run differs",
                  isa_name(isa), m ? "DQS" : "LBS", k);
        job.in_normals = nrm;
        /* Any sub-range (odd start and length) gives the same floats. */
        job.vertex_count = N - 13;
        job.joints = joints + 13 * k; job.weights = weights + 13 * k;
        job.in_positions = pos + 39; job.in_normals = nrm + 39;
        job.out_positions = pp; job.out_normals = pn;
        CHECK(sks_skinning_job_run(&job));
        CHECK(memcmp(pp, op + 39, sizeof(float) * 3 * (N - 13)) == 0 && memcmp(pn, on + 39, sizeof(float) * 3 * (N - 13)) == 0);
        printf("%s packed P=%d %s k=%u skip_normalize=%d: max |reference - kernel| positions %.3g normals %.3g, "
               "| |n| - 1 | %.3g\n", isa_name(isa), P, m ? "DQS" : "LBS", k, skip, dp, dn, unit);
      }
  }
  free(pos); free(nrm); free(rp); free(rn); free(op); free(on); free(pp); free(pn); free(joints); free(weights);
}

/* One influence without weights (weights NULL: every weight 1, as ozz's
 * SkinningJob reads none for one influence): the same floats as the job
 * with a weights array of 1.0 (x 1.0f is exact), for every kernel of
 * `isa`, LBS and DQS, packed and strided (joints stride 2, positions 5 in /
 * 4 out, normals 7 in / 6 out), positions only and with normals
 * (renormalised or not), vertex counts across the blocks' edges (1-17 and
 * 1027), run_parallel too; and the reference. A job with more influences
 * and no weights does not validate. */
static void unit_weights(sks_skinning_isa isa) {
  enum { NMAX = 1027, P = 30 };
  sks_mat4 palette[P];
  for (int i = 0; i < P; ++i)
    palette[i] = rigid(random_rotation(), sks_v3(4 * srand1(), 4 * srand1(), 4 * srand1()));
  float *pos = malloc(sizeof(float) * 7 * NMAX), *nrm = malloc(sizeof(float) * 7 * NMAX);
  float *ap = malloc(sizeof(float) * 7 * NMAX), *an = malloc(sizeof(float) * 7 * NMAX);
  float *bp = malloc(sizeof(float) * 7 * NMAX), *bn = malloc(sizeof(float) * 7 * NMAX);
  float *ones = malloc(sizeof(float) * 2 * NMAX);
  uint16_t *joints = malloc(sizeof(uint16_t) * 2 * NMAX);
  if (!pos || !nrm || !ap || !an || !bp || !bn || !ones || !joints) { CHECK(0); return; }
  for (int i = 0; i < 7 * NMAX; ++i) { pos[i] = 3 * srand1(); nrm[i] = srand1(); }
  for (int i = 0; i < 2 * NMAX; ++i) { joints[i] = (uint16_t)(frand() * P); ones[i] = 1.0f; }
  const size_t counts[] = {1, 2, 3, 5, 7, 8, 9, 11, 16, 17, 1027};
  int runs = 0;
  for (int m = 0; m < 2; ++m)
    for (int strided = 0; strided < 2; ++strided)
      for (int mode = 0; mode < 3; ++mode) /* positions only, + normals, + normals skip_normalize */
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ++ci)
          for (int how = 0; how < 3; ++how) { /* run, run_parallel(3), reference */
            const size_t n = counts[ci];
            sks_skinning_job job = base_job(m ? SKS_SKIN_DQS : SKS_SKIN_LBS, n, 1, palette, P, joints, ones, pos, ap);
            job.isa = isa;
            if (strided) { job.joints_stride = 2; job.weights_stride = 2; job.in_positions_stride = 5; job.out_positions_stride = 4; }
            if (mode) {
              job.in_normals = nrm; job.out_normals = an; job.skip_normalize = mode == 2;
              if (strided) { job.in_normals_stride = 7; job.out_normals_stride = 6; }
            }
            memset(ap, 0, sizeof(float) * 7 * NMAX); memset(an, 0, sizeof(float) * 7 * NMAX);
            memset(bp, 0, sizeof(float) * 7 * NMAX); memset(bn, 0, sizeof(float) * 7 * NMAX);
            CHECK(how == 2 ? sks_skinning_job_run_reference(&job) : how ? sks_skinning_job_run_parallel(&job, 3)
                                                                        : sks_skinning_job_run(&job));
            job.weights = NULL; job.weights_stride = 0;
            job.out_positions = bp;
            if (mode) job.out_normals = bn;
            CHECK(sks_skinning_job_validate(&job));
            CHECK(how == 2 ? sks_skinning_job_run_reference(&job) : how ? sks_skinning_job_run_parallel(&job, 3)
                                                                        : sks_skinning_job_run(&job));
            const int same = memcmp(ap, bp, sizeof(float) * 7 * NMAX) == 0 && memcmp(an, bn, sizeof(float) * 7 * NMAX) == 0;
            CHECK_MSG(same, "%s %s no weights, %s mode=%d n=%zu %s: not the floats of weights 1.0", isa_name(isa),
                      m ? "DQS" : "LBS", strided ? "strided" : "packed", mode, n,
                      how == 2 ? "reference" : how ? "parallel" : "run");
            ++runs;
          }
  sks_skinning_job bad = base_job(SKS_SKIN_LBS, 10, 2, palette, P, joints, NULL, pos, ap);
  CHECK(!sks_skinning_job_validate(&bad) && !sks_skinning_job_run(&bad));
  bad.influence_count = 1;
  CHECK(sks_skinning_job_validate(&bad));
  printf("%s one influence without weights: %d runs, the floats of weights 1.0; 2 influences without weights refused\n",
         isa_name(isa), runs);
  free(pos); free(nrm); free(ap); free(an); free(bp); free(bn); free(ones); free(joints);
}

/* k = 1..8 influences at the edges of the SIMD kernels' blocks (2-8: the
 * AVX2 / SSE2 kernels' 4-vertex normals blocks and one-vertex tail; 1: the
 * 8-vertex blocks of the AVX2
 * kernel transforms 2 vertices per register, v + i and v + 4 + i, and needs
 * v + 8 < n for a block; the tail goes one vertex at a time): vertex counts
 * 1, 2, 3, 5, 7, 8, 9, 11, 16, 17 and 1027, packed and strided (joints
 * k + 1, weights k + 2, positions 5 in / 4 out, normals 7 in / 6 out: gaps
 * that must stay untouched), positions only and with normals (renormalised
 * or not), against run_reference. Weights do not sum to 1 ((0.2 .. 1.8) / k
 * each, some negative, one 0): a kernel that renormalised or skipped them
 * fails. Each buffer is exactly n vertices long (a read or write past the
 * last vertex shows under ASan). A sub-range starting at an
 * odd vertex gives the floats of the whole run (blocks and tail agree), and
 * one that ends before the last vertex writes nothing past its end. */
static void block_edges(sks_skinning_isa isa, uint32_t k, size_t P) {
  enum { MAXP = 300, MAXN = 1027 };
  sks_mat4 palette[MAXP];
  for (size_t i = 0; i < P; ++i)
    palette[i] = rigid(random_rotation(), sks_v3(4 * srand1(), 4 * srand1(), 4 * srand1()));
  const size_t ns[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 16, 17, MAXN};
  for (int strided = 0; strided < 2; ++strided) {
    const size_t js = strided ? k + 1 : k, ws = strided ? k + 2 : k, ips = strided ? 5 : 3, ops = strided ? 4 : 3;
    const size_t ins = strided ? 7 : 3, ons = strided ? 6 : 3;
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ++ni) {
      const size_t n = ns[ni];
      uint16_t *joints = malloc(sizeof(uint16_t) * n * js);
      float *weights = malloc(sizeof(float) * n * ws);
      float *pos = malloc(sizeof(float) * n * ips), *nrm = malloc(sizeof(float) * n * ins);
      float *rp = malloc(sizeof(float) * n * ops), *rn = malloc(sizeof(float) * n * ons);
      float *op = malloc(sizeof(float) * n * ops), *on = malloc(sizeof(float) * n * ons);
      if (!joints || !weights || !pos || !nrm || !rp || !rn || !op || !on) { CHECK(0); return; }
      for (size_t i = 0; i < n * js; ++i) joints[i] = 65535; /* stride padding must be ignored */
      for (size_t i = 0; i < n * ws; ++i) weights[i] = 99.0f;
      for (size_t i = 0; i < n * ips; ++i) pos[i] = 99.0f;
      for (size_t i = 0; i < n * ins; ++i) nrm[i] = 99.0f;
      for (size_t v = 0; v < n; ++v) {
        for (uint32_t i = 0; i < k; ++i) { /* weights as given: not summing to 1, some negative, one 0 */
          joints[v * js + i] = (uint16_t)(frand() * P);
          weights[v * ws + i] = (v % 5 == 3 && i == 0 ? -1.0f : 1.0f) * (0.2f + 1.6f * frand()) / (float)k;
          if (v == 6 && i == k - 1) weights[v * ws + i] = 0.0f;
        }
        const sks_vec3 nv = sks_v3_normalize(sks_v3(srand1(), srand1(), srand1()));
        for (int c = 0; c < 3; ++c) pos[v * ips + (size_t)c] = 3 * srand1();
        nrm[v * ins] = nv.x; nrm[v * ins + 1] = nv.y; nrm[v * ins + 2] = nv.z;
      }
      for (int mode = 0; mode < 3; ++mode) { /* positions only, normals, normals with skip_normalize */
        sks_skinning_job job = base_job(SKS_SKIN_LBS, n, k, palette, P, joints, weights, pos, rp);
        job.joints_stride = js; job.weights_stride = ws;
        job.in_positions_stride = ips; job.out_positions_stride = ops;
        if (mode) {
          job.in_normals = nrm; job.in_normals_stride = ins;
          job.out_normals = rn; job.out_normals_stride = ons;
          job.skip_normalize = mode == 2;
        }
        for (size_t i = 0; i < n * ops; ++i) rp[i] = op[i] = -7.0f;
        for (size_t i = 0; i < n * ons; ++i) rn[i] = on[i] = -7.0f;
        CHECK(sks_skinning_job_run_reference(&job));
        job.isa = isa;
        job.out_positions = op;
        if (mode) job.out_normals = on;
        CHECK(sks_skinning_job_run(&job));
        double dp = 0, dn = 0;
        int gaps = 1;
        for (size_t i = 0; i < n * ops; ++i) {
          if (i % ops >= 3) { gaps &= op[i] == -7.0f; continue; }
          dp = fmax(dp, fabs(rp[i] - op[i]));
        }
        for (size_t i = 0; i < n * ons; ++i) {
          if (i % ons >= 3 || !mode) { gaps &= on[i] == -7.0f; continue; }
          dn = fmax(dn, fabs(rn[i] - on[i]));
        }
        CHECK_MSG(dp < 1e-4 && dn < 1e-5 && gaps,
                  "%s LBS k=%u P=%zu %s n=%zu mode=%d: max |reference - kernel| positions %.3g normals %.3g, gaps %s",
                  isa_name(isa), k, P, strided ? "strided" : "packed", n, mode, dp, dn, gaps ? "untouched" : "WRITTEN");
        if (n > 3) { /* from vertex 3 on: the blocks fall on other vertices */
          float *sp = malloc(sizeof(float) * n * ops), *sn = malloc(sizeof(float) * n * ons);
          if (!sp || !sn) { CHECK(0); return; }
          sks_skinning_job sub = job;
          sub.vertex_count = n - 3;
          sub.joints = joints + 3 * js; sub.weights = weights + 3 * ws;
          sub.in_positions = pos + 3 * ips; sub.out_positions = sp + 3 * ops;
          if (mode) { sub.in_normals = nrm + 3 * ins; sub.out_normals = sn + 3 * ons; }
          CHECK(sks_skinning_job_run(&sub));
          int same = 1;
          for (size_t v = 3; v < n; ++v)
            for (int c = 0; c < 3; ++c) {
              same &= memcmp(&sp[v * ops + (size_t)c], &op[v * ops + (size_t)c], sizeof(float)) == 0;
              if (mode) same &= memcmp(&sn[v * ons + (size_t)c], &on[v * ons + (size_t)c], sizeof(float)) == 0;
            }
          CHECK_MSG(same, "%s LBS k=%u P=%zu %s n=%zu mode=%d: a sub-range gives other floats", isa_name(isa), k,
                    P, strided ? "strided" : "packed", n, mode);
          /* vertices 3 .. n - 3 alone (a pool task's piece): the same floats, and
           * not one float written outside them, above all the next vertex's first
           * (another task writes it; the packed kernel stores 4 floats a vertex) */
          if (n > 5) {
            for (size_t i = 0; i < n * ops; ++i) sp[i] = -7.0f;
            for (size_t i = 0; i < n * ons; ++i) sn[i] = -7.0f;
            sub.vertex_count = n - 5;
            CHECK(sks_skinning_job_run(&sub));
            int inside = 1, outside = 1;
            for (size_t v = 0; v < n; ++v) {
              const int in = v >= 3 && v < n - 2;
              for (size_t c = 0; c < ops; ++c) {
                if (in && c < 3) inside &= memcmp(&sp[v * ops + c], &op[v * ops + c], sizeof(float)) == 0;
                else outside &= sp[v * ops + c] == -7.0f;
              }
              for (size_t c = 0; c < ons; ++c) {
                if (in && c < 3 && mode) inside &= memcmp(&sn[v * ons + c], &on[v * ons + c], sizeof(float)) == 0;
                else outside &= sn[v * ons + c] == -7.0f;
              }
            }
            CHECK_MSG(inside && outside, "%s LBS k=%u P=%zu %s n=%zu mode=%d: vertices 3..%zu alone: %s",
                      isa_name(isa), k, P, strided ? "strided" : "packed", n, mode, n - 3,
                      !inside ? "other floats" : "a float outside the range WRITTEN");
          }
          free(sp); free(sn);
        }
        if (n == MAXN)
          printf("%s LBS k=%u block edges P=%zu %s mode=%d: max |reference - kernel| positions %.3g normals %.3g\n",
                 isa_name(isa), k, P, strided ? "strided" : "packed", mode, dp, dn);
      }
      free(joints); free(weights); free(pos); free(nrm); free(rp); free(rn); free(op); free(on);
    }
  }
}

/* run_pool on the caller's pool: the same floats as run for every pool size,
 * at a size that really splits (10,001 vertices: up to 4 pieces of >= 2048,
 * edges on multiples of 16), LBS and DQS with normals, run after run. */
static void pool_matches_run(void) {
  enum { N = 10001, K = 4, P = 30 };
  sks_mat4 palette[P];
  for (int i = 0; i < P; ++i) palette[i] = rigid(random_rotation(), sks_v3(srand1(), srand1(), srand1()));
  float *pos = malloc(sizeof(float) * 3 * N), *nrm = malloc(sizeof(float) * 3 * N);
  float *op = malloc(sizeof(float) * 3 * N), *on = malloc(sizeof(float) * 3 * N);
  float *pp = malloc(sizeof(float) * 3 * N), *pn = malloc(sizeof(float) * 3 * N);
  uint16_t *joints = malloc(sizeof(uint16_t) * N * K);
  float *weights = malloc(sizeof(float) * N * K);
  if (!pos || !nrm || !op || !on || !pp || !pn || !joints || !weights) { CHECK(0); return; }
  for (int v = 0; v < N; ++v) {
    sks_vec3 n = sks_v3_normalize(sks_v3(srand1(), srand1(), srand1()));
    for (int a = 0; a < 3; ++a) pos[3 * v + a] = 2 * srand1();
    nrm[3 * v] = n.x; nrm[3 * v + 1] = n.y; nrm[3 * v + 2] = n.z;
    float sum = 0;
    for (int i = 0; i < K; ++i) {
      joints[v * K + i] = (uint16_t)(frand() * P);
      weights[v * K + i] = 0.05f + frand();
      sum += weights[v * K + i];
    }
    for (int i = 0; i < K; ++i) weights[v * K + i] /= sum;
  }
  const unsigned sizes[] = {1, 2, 3, 4, 9};
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
    sks_thread_pool *pool = NULL;
    sks_error err;
    CHECK_OK(sks_thread_pool_create(sizes[si], &pool, &err), &err);
    for (int m = 0; m < 2; ++m) {
      sks_skinning_job job = base_job(m ? SKS_SKIN_DQS : SKS_SKIN_LBS, N, K, palette, P, joints, weights, pos, op);
      job.in_normals = nrm; job.out_normals = on;
      CHECK(sks_skinning_job_run(&job));
      job.out_positions = pp; job.out_normals = pn;
      for (int round = 0; round < 3; ++round) {
        memset(pp, 0xff, sizeof(float) * 3 * N); /* NaN: a vertex no piece wrote shows */
        memset(pn, 0xff, sizeof(float) * 3 * N);
        CHECK(sks_skinning_job_run_pool(&job, pool));
        CHECK_MSG(memcmp(pp, op, sizeof(float) * 3 * N) == 0 && memcmp(pn, on, sizeof(float) * 3 * N) == 0,
                  "run_pool (pool of %u) %s differs from run", sizes[si], m ? "DQS" : "LBS");
      }
    }
    sks_skinning_job bad = base_job(SKS_SKIN_LBS, N, K, palette, P, joints, weights, pos, pos); /* in place */
    CHECK(!sks_skinning_job_run_pool(&bad, pool));
    sks_thread_pool_destroy(pool);
  }
  free(pos); free(nrm); free(op); free(on); free(pp); free(pn); free(joints); free(weights);
}

/* A palette at any float boundary (sks_mat4 has float alignment; malloc
 * gives 16 bytes): run copies one that is off a 32-byte boundary into an
 * aligned table when the job is large enough, run_parallel and run_pool
 * too. The same floats wherever the palette lies, whether copied or not,
 * every joint of it addressed (the last one too), every available ISA. */
static void palette_anywhere(void) {
  enum { K = 4, P = 40, SMALL = 7 };
  sks_mat4 pal[P];
  for (int i = 0; i < P; ++i) pal[i] = rigid(random_rotation(), sks_v3(srand1(), srand1(), srand1()));
  const size_t sizes[] = {SMALL, 8 * P - 1, 8 * P, 5003};
  float *store = malloc(sizeof(sks_mat4) * P + 128);
  float *pos = malloc(sizeof(float) * 3 * 5003), *nrm = malloc(sizeof(float) * 3 * 5003);
  float *rp = malloc(sizeof(float) * 3 * 5003), *rn = malloc(sizeof(float) * 3 * 5003);
  float *op = malloc(sizeof(float) * 3 * 5003), *on = malloc(sizeof(float) * 3 * 5003);
  uint16_t *joints = malloc(sizeof(uint16_t) * K * 5003);
  float *weights = malloc(sizeof(float) * K * 5003);
  sks_thread_pool *pool = NULL;
  sks_error err;
  if (!store || !pos || !nrm || !rp || !rn || !op || !on || !joints || !weights) { CHECK(0); return; }
  CHECK_OK(sks_thread_pool_create(2, &pool, &err), &err);
  for (int v = 0; v < 5003; ++v) {
    sks_vec3 n = sks_v3_normalize(sks_v3(srand1(), srand1(), srand1()));
    for (int a = 0; a < 3; ++a) pos[3 * v + a] = 2 * srand1();
    nrm[3 * v] = n.x; nrm[3 * v + 1] = n.y; nrm[3 * v + 2] = n.z;
    for (int i = 0; i < K; ++i) {
      joints[v * K + i] = (uint16_t)(v % 7 == 0 && i == 0 ? P - 1 : frand() * P);
      weights[v * K + i] = 0.05f + frand();
    }
  }
  /* the float boundary of store that lies on 64 bytes */
  const size_t base = (size_t)((64 - (uintptr_t)store % 64) % 64) / sizeof(float);
  int checked = 0;
  for (int isa = SKS_SKIN_ISA_SCALAR; isa <= SKS_SKIN_ISA_AVX2; ++isa) {
    if (!sks_skinning_isa_available((sks_skinning_isa)isa)) continue;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si)
      for (int normals = 0; normals < 2; ++normals) {
        const size_t n = sizes[si];
        sks_skinning_job job = base_job(SKS_SKIN_LBS, n, K, pal, P, joints, weights, pos, rp);
        job.isa = (sks_skinning_isa)isa;
        if (normals) { job.in_normals = nrm; job.out_normals = rn; }
        CHECK(sks_skinning_job_run(&job)); /* pal: wherever the stack put it */
        for (size_t off = 0; off < 16; ++off) { /* 0, 4, .. 60 bytes past a 64-byte boundary */
          sks_mat4 *moved = (sks_mat4 *)(void *)(store + base + off);
          memcpy(moved, pal, sizeof pal);
          sks_skinning_job mj = job;
          mj.palette = moved; mj.out_positions = op; mj.out_normals = normals ? on : NULL;
          for (int how = 0; how < 3; ++how) {
            memset(op, 0xff, sizeof(float) * 3 * n);
            memset(on, 0xff, sizeof(float) * 3 * n);
            CHECK(how == 0 ? sks_skinning_job_run(&mj)
                           : how == 1 ? sks_skinning_job_run_parallel(&mj, 2) : sks_skinning_job_run_pool(&mj, pool));
            const int same = memcmp(op, rp, sizeof(float) * 3 * n) == 0 &&
                             (!normals || memcmp(on, rn, sizeof(float) * 3 * n) == 0);
            CHECK_MSG(same, "%s LBS n=%zu normals=%d palette %zu bytes past 64, %s: other floats than from the stack palette",
                      isa_name((sks_skinning_isa)isa), n, normals, 4 * off,
                      how == 0 ? "run" : how == 1 ? "run_parallel" : "run_pool");
            ++checked;
          }
        }
      }
  }
  CHECK(checked > 0);
  sks_thread_pool_destroy(pool);
  free(store); free(pos); free(nrm); free(rp); free(rn); free(op); free(on); free(joints); free(weights);
}

/* Forcing an ISA: available ones validate, others and out-of-range values do not. */
static void isa_selection(void) {
  sks_mat4 palette[1] = {sks_m4_identity()};
  uint16_t j[1] = {0};
  float w[1] = {1}, in[3] = {1, 2, 3}, out[3];
  sks_skinning_job job = base_job(SKS_SKIN_LBS, 1, 1, palette, 1, j, w, in, out);
  const sks_skinning_isa best = sks_skinning_isa_resolve(SKS_SKIN_ISA_AUTO);
  CHECK(best != SKS_SKIN_ISA_AUTO && sks_skinning_isa_available(best));
  printf("isa: auto resolves to %s (sse2 %s, avx2 %s)\n", isa_name(best),
         sks_skinning_isa_available(SKS_SKIN_ISA_SSE2) ? "available" : "not available",
         sks_skinning_isa_available(SKS_SKIN_ISA_AVX2) ? "available" : "not available");
  for (int i = SKS_SKIN_ISA_AUTO; i <= SKS_SKIN_ISA_AVX2; ++i) {
    job.isa = (sks_skinning_isa)i;
    CHECK(sks_skinning_job_validate(&job) == sks_skinning_isa_available((sks_skinning_isa)i));
    CHECK(sks_skinning_isa_resolve((sks_skinning_isa)i) == (i ? (sks_skinning_isa)i : best));
  }
  CHECK(sks_skinning_isa_available(SKS_SKIN_ISA_SCALAR));
#if defined(__x86_64__)
  CHECK(sks_skinning_isa_available(SKS_SKIN_ISA_SSE2)); /* part of x86-64 */
#endif
  job.isa = (sks_skinning_isa)99;
  CHECK(!sks_skinning_job_validate(&job));
}

static void kernels_agree(sks_skinning_isa isa) {
  enum { N = 10000, P = 64, IN_STRIDE = 8, OUT_STRIDE = 7 };
  sks_mat4 palette[P];
  for (int i = 0; i < P; ++i)
    palette[i] = rigid(random_rotation(), sks_v3(4 * srand1(), 4 * srand1(), 4 * srand1()));
  float *in = malloc(sizeof(float) * N * IN_STRIDE); /* pos at 0, normal at 4 */
  float *o_ref = malloc(sizeof(float) * N * OUT_STRIDE), *o_opt = malloc(sizeof(float) * N * OUT_STRIDE);
  float *o_par = malloc(sizeof(float) * N * OUT_STRIDE);
  uint16_t *joints = malloc(sizeof(uint16_t) * N * (SKS_MAX_INFLUENCES + 1));
  float *weights = malloc(sizeof(float) * N * (SKS_MAX_INFLUENCES + 2));
  if (!in || !o_ref || !o_opt || !o_par || !joints || !weights) { CHECK(0); return; }
  for (int v = 0; v < N; ++v) {
    sks_vec3 n = sks_v3_normalize(sks_v3(srand1(), srand1(), srand1()));
    float *e = in + v * IN_STRIDE;
    e[0] = 2 * srand1(); e[1] = 2 * srand1(); e[2] = 2 * srand1(); e[3] = 99;
    e[4] = n.x; e[5] = n.y; e[6] = n.z; e[7] = 99;
  }
  for (uint32_t k = 1; k <= SKS_MAX_INFLUENCES; ++k) {
    const size_t js = k + 1, ws = k + 2;
    for (int v = 0; v < N; ++v) {
      float sum = 0;
      for (uint32_t i = 0; i < k; ++i) {
        joints[v * js + i] = (uint16_t)(frand() * P);
        weights[v * ws + i] = 0.05f + frand();
        sum += weights[v * ws + i];
      }
      for (uint32_t i = 0; i < k; ++i) weights[v * ws + i] /= sum;
      joints[v * js + k] = 65535; /* padding must be ignored */
    }
    for (int m = 0; m < 2; ++m) {
      sks_skinning_job job = base_job(m ? SKS_SKIN_DQS : SKS_SKIN_LBS, N, k, palette, P, joints, weights, in, o_ref);
      job.isa = isa;
      job.joints_stride = js; job.weights_stride = ws;
      job.in_positions_stride = IN_STRIDE; job.in_normals = in + 4; job.in_normals_stride = IN_STRIDE;
      job.out_positions_stride = OUT_STRIDE; job.out_normals = o_ref + 3; job.out_normals_stride = OUT_STRIDE;
      for (int i = 0; i < N * OUT_STRIDE; ++i) o_ref[i] = o_opt[i] = o_par[i] = -7.0f;
      CHECK(sks_skinning_job_run_reference(&job));
      job.out_positions = o_opt; job.out_normals = o_opt + 3;
      CHECK(sks_skinning_job_run(&job));
      job.out_positions = o_par; job.out_normals = o_par + 3;
      CHECK(sks_skinning_job_run_parallel(&job, 3));
      double d_opt = 0, d_par = 0;
      int untouched_ok = 1;
      for (int v = 0; v < N; ++v)
        for (int c = 0; c < OUT_STRIDE; ++c) {
          int i = v * OUT_STRIDE + c;
          if (c == 6) { untouched_ok &= o_opt[i] == -7.0f && o_par[i] == -7.0f && o_ref[i] == -7.0f; continue; }
          d_opt = fmax(d_opt, fabs(o_ref[i] - o_opt[i]));
          d_par = fmax(d_par, fabs(o_opt[i] - o_par[i]));
        }
      printf("%s %s k=%u: max |reference - optimised| = %.3g, max |optimised - parallel| = %.3g\n",
             isa_name(isa), m ? "DQS" : "LBS", k, d_opt, d_par);
      CHECK_MSG(d_opt < 1e-4, "%s k=%u", m ? "DQS" : "LBS", k);
      CHECK(d_par == 0.0);
      CHECK(untouched_ok); /* stride gaps are not written */
      if (k == 4) { /* more threads than the cap, and than useful */
        job.out_positions = o_par; job.out_normals = o_par + 3;
        CHECK(sks_skinning_job_run_parallel(&job, 1000));
        int same = 1;
        for (int i = 0; i < N * OUT_STRIDE; ++i) same &= o_par[i] == o_opt[i];
        CHECK(same);
      }
      /* Positions only (no normals) gives the same positions. */
      job.in_normals = NULL; job.out_normals = NULL;
      job.out_positions = o_par;
      CHECK(sks_skinning_job_run_parallel(&job, 0));
      double d_pos = 0;
      for (int v = 0; v < N; ++v)
        for (int c = 0; c < 3; ++c) d_pos = fmax(d_pos, fabs(o_opt[v * OUT_STRIDE + c] - o_par[v * OUT_STRIDE + c]));
      CHECK(d_pos == 0.0);
    }
  }
  free(in); free(o_ref); free(o_opt); free(o_par); free(joints); free(weights);
}

static void validation(void) {
  sks_mat4 palette[2] = {sks_m4_identity(), sks_m4_identity()};
  uint16_t joints[4] = {0, 1, 1, 0};
  float weights[4] = {0.5f, 0.5f, 0.5f, 0.5f};
  float in[6] = {0}, out[6], nin[6] = {0}, nout[6];
  sks_skinning_job job = base_job(SKS_SKIN_LBS, 2, 2, palette, 2, joints, weights, in, out);
  CHECK(sks_skinning_job_validate(&job));
  joints[3] = 2; /* index >= palette_count */
  CHECK(!sks_skinning_job_validate(&job));
  CHECK(!sks_skinning_job_run(&job));
  CHECK(!sks_skinning_job_run_reference(&job));
  CHECK(!sks_skinning_job_run_parallel(&job, 2));
  joints[3] = 0;
  job.palette_count = 1; /* joint 1 now out of range */
  CHECK(!sks_skinning_job_validate(&job));
  job.palette_count = 2;
  sks_skinning_job b = job; b.palette = NULL; CHECK(!sks_skinning_job_validate(&b));
  b = job; b.joints = NULL; CHECK(!sks_skinning_job_validate(&b));
  b = job; b.weights = NULL; CHECK(!sks_skinning_job_validate(&b));
  b = job; b.in_positions = NULL; CHECK(!sks_skinning_job_validate(&b));
  b = job; b.out_positions = NULL; CHECK(!sks_skinning_job_validate(&b));
  b = job; b.in_normals = nin; CHECK(!sks_skinning_job_validate(&b)); /* normals in without out */
  b.out_normals = nout; CHECK(sks_skinning_job_validate(&b));
  b = job; b.influence_count = 0; CHECK(!sks_skinning_job_validate(&b));
  b = job; b.influence_count = 9; CHECK(!sks_skinning_job_validate(&b));
  b = job; b.joints_stride = 1; CHECK(!sks_skinning_job_validate(&b)); /* < influence_count */
  b = job; b.in_positions_stride = 2; CHECK(!sks_skinning_job_validate(&b));
  b = job; b.out_positions = in; CHECK(!sks_skinning_job_validate(&b)); /* in place: overlapping */
  b = job; b.method = (sks_skinning_method)7; CHECK(!sks_skinning_job_validate(&b));
  CHECK(!sks_skinning_job_validate(NULL));
  b = job; b.vertex_count = 0; b.in_positions = NULL; CHECK(sks_skinning_job_validate(&b));

  /* Large packed index arrays (the AVX2 scan: 64 indices a step, 4 running
   * maxima, then the tail): one index = palette_count anywhere is refused,
   * every index < palette_count accepted, for palettes of 1, 40 and 65535
   * entries and lengths on and off the step. */
  const size_t lens[] = {255, 256, 257, 320, 1000, 4099};
  const uint16_t pcs[] = {1, 40, 65535};
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; ++li)
    for (size_t pi = 0; pi < sizeof pcs / sizeof pcs[0]; ++pi) {
      const size_t n = lens[li];
      const uint16_t pc = pcs[pi];
      uint16_t *jj = malloc(sizeof(uint16_t) * 4 * n);
      float *ww = malloc(sizeof(float) * 4 * n), *pin = malloc(sizeof(float) * 3 * n), *pout = malloc(sizeof(float) * 3 * n);
      sks_mat4 *pal = malloc(sizeof(sks_mat4) * pc);
      if (!jj || !ww || !pin || !pout || !pal) { CHECK(0); return; }
      for (size_t i = 0; i < 4 * n; ++i) { jj[i] = (uint16_t)((i * 7919u) % pc); ww[i] = 0.25f; }
      jj[4 * n - 1 - (n % 3)] = (uint16_t)(pc - 1);
      for (size_t i = 0; i < (size_t)pc; ++i) pal[i] = sks_m4_identity();
      for (size_t i = 0; i < 3 * n; ++i) pin[i] = 1.0f;
      sks_skinning_job big = base_job(SKS_SKIN_LBS, n, 4, pal, pc, jj, ww, pin, pout);
      CHECK_MSG(sks_skinning_job_validate(&big), "%zu vertices, palette %u: indices < palette_count refused", n, pc);
      if (pc < 65535) { /* 65535 entries: every uint16 but 65535 is a valid index */
        const size_t at[] = {0, 1, 15, 16, 63, 64, 130, 4 * n / 2, 4 * n - 65, 4 * n - 64, 4 * n - 2, 4 * n - 1};
        for (size_t ai = 0; ai < sizeof at / sizeof at[0]; ++ai) {
          const uint16_t keep = jj[at[ai]];
          jj[at[ai]] = pc;
          CHECK_MSG(!sks_skinning_job_validate(&big) && !sks_skinning_job_run(&big),
                    "%zu vertices, palette %u: index %u at %zu accepted", n, pc, pc, at[ai]);
          jj[at[ai]] = 65535;
          CHECK_MSG(!sks_skinning_job_validate(&big), "%zu vertices, palette %u: index 65535 at %zu accepted", n, pc, at[ai]);
          jj[at[ai]] = keep;
        }
      } else {
        jj[4 * n - 1] = 65535;
        CHECK_MSG(!sks_skinning_job_validate(&big), "%zu vertices, palette 65535: index 65535 accepted", n);
      }
      free(jj); free(ww); free(pin); free(pout); free(pal);
    }
}

/* A small model: root -> a -> b, a skinned part (2 influences) and a rigid
 * part on b. */
typedef struct small_model {
  sks_model model;
  char *names[3];
  int32_t parents[3];
  sks_transform rest[3];
  int32_t skin_joints[2];
  sks_mat4 ibm[2];
  sks_skin skin;
  sks_mesh_part parts[2];
  float pos0[12], nrm0[12], pos1[6], nrm1[6];
  uint16_t joints[8];
  float weights[8];
} small_model;

static sks_result build_small(sks_model *out, sks_error *err) {
  static small_model s;
  static char n0[] = "root", n1[] = "a", n2[] = "b", skin_name[] = "skin", path[] = "small";
  memset(&s, 0, sizeof s);
  s.names[0] = n0; s.names[1] = n1; s.names[2] = n2;
  s.parents[0] = -1; s.parents[1] = 0; s.parents[2] = 1;
  for (int i = 0; i < 3; ++i) s.rest[i] = sks_transform_identity();
  s.rest[0].rotation = sks_q_from_axis_angle(sks_v3(1, 0, 0), 0.3f);
  s.rest[1].translation = sks_v3(0, 1, 0);
  s.rest[2].translation = sks_v3(0, 1, 0);
  s.rest[2].scale = sks_v3(1, 2, 0.5f);
  s.skin_joints[0] = 1; s.skin_joints[1] = 2;
  s.ibm[0] = rigid(sks_q_identity(), sks_v3(0, -1, 0));
  s.ibm[1] = rigid(sks_q_identity(), sks_v3(0, -2, 0));
  s.skin.name = skin_name; s.skin.joint_count = 2; s.skin.joints = s.skin_joints; s.skin.inverse_bind = s.ibm;
  for (int v = 0; v < 4; ++v) {
    s.pos0[3 * v] = (float)(v & 1); s.pos0[3 * v + 1] = 1.0f + 0.4f * (float)v; s.pos0[3 * v + 2] = 0.25f;
    s.nrm0[3 * v] = 1; s.nrm0[3 * v + 1] = 0; s.nrm0[3 * v + 2] = 0;
    s.joints[2 * v] = 0; s.joints[2 * v + 1] = 1;
    s.weights[2 * v + 1] = 0.25f * (float)v; s.weights[2 * v] = 1.0f - s.weights[2 * v + 1];
  }
  s.pos1[0] = 1; s.pos1[1] = 2; s.pos1[2] = 3; s.pos1[3] = -1; s.pos1[4] = 0; s.pos1[5] = 0.5f;
  s.nrm1[0] = 0; s.nrm1[1] = 1; s.nrm1[2] = 0; s.nrm1[3] = 0.6f; s.nrm1[4] = 0.8f; s.nrm1[5] = 0;
  sks_mesh_part *p = &s.parts[0];
  p->material = -1; p->skin = 0; p->node = 0; p->vertex_count = 4; p->positions = s.pos0; p->normals = s.nrm0;
  p->influence_count = 2; p->joints = s.joints; p->weights = s.weights;
  p = &s.parts[1];
  p->material = -1; p->skin = -1; p->node = 2; p->vertex_count = 2; p->positions = s.pos1; p->normals = s.nrm1;
  memset(&s.model, 0, sizeof s.model);
  s.model.source_path = path;
  s.model.skeleton.joint_count = 3;
  s.model.skeleton.names = s.names;
  s.model.skeleton.parents = s.parents;
  s.model.skeleton.rest = s.rest;
  s.model.skin_count = 1; s.model.skins = &s.skin;
  s.model.part_count = 2; s.model.parts = s.parts;
  return sks_model_clone(&s.model, out, err); /* a heap copy the library may modify */
}

static void pretransform_static(void) {
  sks_model m;
  sks_error err = {0};
  CHECK_OK(build_small(&m, &err), &err);
  /* Pose: rotate joint a and b a little. */
  sks_transform locals[3];
  memcpy(locals, m.skeleton.rest, sizeof locals);
  locals[1].rotation = sks_q_from_axis_angle(sks_v3(0, 0, 1), 0.7f);
  locals[2].rotation = sks_q_from_axis_angle(sks_v3(1, 1, 0), -0.4f);
  sks_mat4 models[3];
  sks_local_to_model_job fk = {m.skeleton.parents, locals, 3, NULL, models};
  CHECK(sks_local_to_model_job_run(&fk));
  const size_t total = sks_model_total_vertex_count(&m);
  CHECK(total == 6);
  CHECK(sks_model_vertex_count(&m) == 4);
  float pos[18], nrm[18], pos2[18], nrm2[18];
  CHECK_OK(sks_skin_model(&m, models, SKS_SKIN_LBS, pos, nrm, &err), &err);
  /* Rigid part: model[b] * p exactly. */
  sks_vec3 r0 = sks_m4_point(&models[2], sks_v3(1, 2, 3));
  CHECK_NEAR(pos[12], r0.x, 1e-6);
  CHECK_NEAR(pos[13], r0.y, 1e-6);
  CHECK_NEAR(pos[14], r0.z, 1e-6);
  /* Rigid normals stay unit length under the node's non-uniform scale. */
  CHECK_NEAR(sqrt(nrm[15] * nrm[15] + nrm[16] * nrm[16] + nrm[17] * nrm[17]), 1.0, 1e-5);

  CHECK_OK(sks_pretransform_static(&m, models, &err), &err);
  CHECK(m.skin_count == 0);
  CHECK(m.skeleton.joint_count == 4);
  CHECK(m.parts[0].skin == -1 && m.parts[1].skin == -1);
  CHECK(m.parts[0].node == 3 && m.parts[0].influence_count == 0 && m.parts[0].joints == NULL);
  /* The new model at its rest pose (any pose of the old joints) gives the same vertices. */
  sks_mat4 models2[4];
  sks_local_to_model_job fk2 = {m.skeleton.parents, m.skeleton.rest, 4, NULL, models2};
  CHECK(sks_local_to_model_job_run(&fk2));
  CHECK_OK(sks_skin_model(&m, models2, SKS_SKIN_LBS, pos2, nrm2, &err), &err);
  double dp = 0, dn = 0;
  for (int i = 0; i < 18; ++i) {
    dp = fmax(dp, fabs(pos[i] - pos2[i]));
    dn = fmax(dn, fabs(nrm[i] - nrm2[i]));
  }
  CHECK(dp < 1e-6);
  CHECK(dn < 1e-6);
  sks_model_free(&m);

  /* Errors name the file and the place. */
  CHECK_OK(build_small(&m, &err), &err);
  m.parts[0].joints[1] = 5;
  CHECK(sks_skin_model(&m, models, SKS_SKIN_DQS, pos, NULL, &err) == SKS_ERR_INVALID);
  CHECK(strstr(err.message, "small") != NULL && strstr(err.message, "part 0") != NULL);
  sks_model_free(&m);
}

/* Bind pose from inverse bind matrices, with a non-skin joint between skin
 * joints and a non-skin child of a skin joint. */
static void bind_pose(void) {
  enum { J = 5 };
  static char *names[J];
  int32_t parents[J] = {-1, 0, 1, 2, 3}; /* root(-) A(skin) B(-) C(skin) D(-) */
  sks_transform rest[J];
  for (int i = 0; i < J; ++i) {
    rest[i] = sks_transform_identity();
    rest[i].rotation = random_rotation();
    rest[i].translation = sks_v3(srand1(), 1 + srand1(), srand1());
  }
  sks_skeleton sk = {J, names, parents, rest};
  sks_mat4 bind_a = rigid(random_rotation(), sks_v3(0.3f, 2, 0.1f));
  sks_mat4 bind_c = rigid(random_rotation(), sks_v3(-0.5f, 4, 0.2f));
  int32_t sj[2] = {3, 1}; /* order in the skin differs from skeleton order */
  sks_mat4 ibm[2];
  CHECK(sks_m4_inverse(&bind_c, &ibm[0]));
  CHECK(sks_m4_inverse(&bind_a, &ibm[1]));
  sks_skin skin = {NULL, 2, sj, ibm};
  sks_mat4 scratch[J], models[J];
  sks_transform out[J];
  sks_bind_pose_job job = {&sk, &skin, scratch, out, 1};
  CHECK(sks_bind_pose_job_run(&job));
  sks_local_to_model_job fk = {parents, out, J, NULL, models};
  CHECK(sks_local_to_model_job_run(&fk));
  sks_mat4 local_b = sks_m4_from_transform(&rest[2]);
  sks_mat4 want_b = sks_m4_mul(&bind_a, &local_b);
  double da = 0, db = 0, dc = 0;
  for (int e = 0; e < 16; ++e) {
    da = fmax(da, fabs(models[1].m[e] - bind_a.m[e]));
    db = fmax(db, fabs(models[2].m[e] - want_b.m[e]));
    dc = fmax(dc, fabs(models[3].m[e] - bind_c.m[e]));
  }
  CHECK(da < 1e-5);
  CHECK(db < 1e-5);
  CHECK(dc < 1e-5);
  CHECK(memcmp(&out[0], &rest[0], sizeof(sks_transform)) == 0); /* non-skin root keeps rest */
  CHECK(memcmp(&out[2], &rest[2], sizeof(sks_transform)) == 0);
  CHECK(memcmp(&out[4], &rest[4], sizeof(sks_transform)) == 0);
  /* A singular inverse bind matrix: run reports failure, the joint keeps rest. */
  sks_mat4 saved = ibm[0];
  memset(&ibm[0], 0, sizeof ibm[0]);
  CHECK(!sks_bind_pose_job_run(&job));
  CHECK(memcmp(&out[3], &rest[3], sizeof(sks_transform)) == 0);
  ibm[0] = saved;

  /* Several skins: joint A (1) is in both with DIFFERENT inverse binds — the
   * first skin's wins; joint D (4) is only in the second skin and still gets
   * its bind; scratch_models holds the bind models on return. */
  sks_mat4 bind_a2 = rigid(random_rotation(), sks_v3(7, -1, 3));
  sks_mat4 bind_d = rigid(random_rotation(), sks_v3(1, 6, -2));
  int32_t sj2[2] = {1, 4};
  sks_mat4 ibm2[2];
  CHECK(sks_m4_inverse(&bind_a2, &ibm2[0]));
  CHECK(sks_m4_inverse(&bind_d, &ibm2[1]));
  sks_skin skins[2] = {skin, {NULL, 2, sj2, ibm2}};
  sks_bind_pose_job multi = {&sk, skins, scratch, out, 2};
  CHECK(sks_bind_pose_job_run(&multi));
  CHECK(sks_local_to_model_job_run(&fk));
  double ma = 0, mc = 0, md = 0, ms = 0;
  for (int e = 0; e < 16; ++e) {
    ma = fmax(ma, fabs(models[1].m[e] - bind_a.m[e])); /* first skin wins */
    mc = fmax(mc, fabs(models[3].m[e] - bind_c.m[e]));
    md = fmax(md, fabs(models[4].m[e] - bind_d.m[e])); /* only in skin 2 */
    for (int j = 0; j < J; ++j) ms = fmax(ms, fabs(models[j].m[e] - scratch[j].m[e]));
  }
  CHECK(ma < 1e-5);
  CHECK(mc < 1e-5);
  CHECK(md < 1e-5);
  CHECK(ms < 1e-5); /* scratch_models = bind models */
  /* Swapping the skins makes skin 2's inverse bind win for joint A. */
  sks_skin swapped[2] = {skins[1], skins[0]};
  multi.skin = swapped;
  CHECK(sks_bind_pose_job_run(&multi));
  CHECK(sks_local_to_model_job_run(&fk));
  double ma2 = 0;
  for (int e = 0; e < 16; ++e) ma2 = fmax(ma2, fabs(models[1].m[e] - bind_a2.m[e]));
  CHECK(ma2 < 1e-5);
  sj2[1] = 9; /* out of range in the second skin */
  CHECK(!sks_bind_pose_job_validate(&multi));
  sj2[1] = 4;

  sj[0] = 9;
  CHECK(!sks_bind_pose_job_validate(&job));
}

static sks_vec3 mpos(const sks_mat4 *m) { return sks_v3(m->m[12], m->m[13], m->m[14]); }

static void two_bone_ik(void) {
  /* parent (rotated 30 deg about X, offset) -> hip -> knee -> ankle, legs 1 and 1.2 */
  int32_t parents[4] = {-1, 0, 1, 2};
  sks_transform locals[4];
  for (int i = 0; i < 4; ++i) locals[i] = sks_transform_identity();
  locals[0].rotation = sks_q_from_axis_angle(sks_v3(1, 0, 0), (float)(PI / 6));
  locals[0].translation = sks_v3(0.5f, 3, 0);
  locals[2].translation = sks_v3(0, -1, 0);
  locals[3].translation = sks_v3(0, -1.2f, 0);
  sks_mat4 scratch[4], models[4];
  sks_vec3 target = sks_v3(1.1f, 1.6f, 0.4f);
  sks_two_bone_ik_job job = {parents, locals, 4, 1, 2, 3, target, sks_v3(0.5f, 2.5f, 5.0f), scratch, 0};
  CHECK(sks_two_bone_ik_job_run(&job));
  CHECK(job.reached == 1);
  sks_local_to_model_job fk = {parents, locals, 4, NULL, models};
  CHECK(sks_local_to_model_job_run(&fk));
  sks_vec3 hip = mpos(&models[1]), knee = mpos(&models[2]), ankle = mpos(&models[3]);
  CHECK_NEAR(sks_v3_len(sks_v3_sub(ankle, target)), 0.0, 1e-4);
  CHECK_NEAR(sks_v3_len(sks_v3_sub(knee, hip)), 1.0, 1e-5);   /* bone lengths kept */
  CHECK_NEAR(sks_v3_len(sks_v3_sub(ankle, knee)), 1.2, 1e-5);
  /* The knee bends toward the pole (+Z side of the hip-target line). */
  sks_vec3 dir = sks_v3_normalize(sks_v3_sub(target, hip));
  sks_vec3 off = sks_v3_sub(knee, hip);
  off = sks_v3_sub(off, sks_v3_scale(dir, sks_v3_dot(off, dir)));
  sks_vec3 pole_off = sks_v3_sub(sks_v3(0.5f, 2.5f, 5.0f), hip);
  pole_off = sks_v3_sub(pole_off, sks_v3_scale(dir, sks_v3_dot(pole_off, dir)));
  CHECK(sks_v3_dot(off, pole_off) > 0);
  /* Unreachable: the chain straightens toward the target, reached = 0. */
  job.target = sks_v3(0.5f, -5, 0);
  CHECK(sks_two_bone_ik_job_run(&job));
  CHECK(job.reached == 0);
  CHECK(sks_local_to_model_job_run(&fk));
  sks_vec3 a2 = mpos(&models[3]);
  CHECK_NEAR(sks_v3_len(sks_v3_sub(a2, mpos(&models[1]))), 2.2, 1e-4);
  CHECK_NEAR(a2.x, 0.5, 1e-4);
  CHECK_NEAR(a2.z, 0.0, 1e-4);
  job.end = 0; /* not a chain */
  CHECK(!sks_two_bone_ik_job_validate(&job));
}

/* Blend two poses, then skin: a translation-only rig skins to the midpoint. */
static void blend_then_skin(void) {
  int32_t parents[2] = {-1, 0};
  sks_transform a[2], b[2], o[2];
  for (int i = 0; i < 2; ++i) a[i] = b[i] = sks_transform_identity();
  a[1].translation = sks_v3(0, 2, 0);
  b[1].translation = sks_v3(2, 2, 0);
  b[0].translation = sks_v3(0, 0, 4);
  sks_blending_job bj = {a, b, 0.25f, 2, o};
  CHECK(sks_blending_job_run(&bj));
  sks_mat4 models[2];
  sks_local_to_model_job fk = {parents, o, 2, NULL, models};
  CHECK(sks_local_to_model_job_run(&fk));
  int32_t sj[2] = {0, 1};
  sks_mat4 ibm[2] = {sks_m4_identity(), rigid(sks_q_identity(), sks_v3(0, -2, 0))};
  sks_skin skin = {NULL, 2, sj, ibm};
  sks_mat4 palette[2];
  sks_palette_job pj = {&skin, models, 2, palette};
  CHECK(sks_palette_job_run(&pj));
  const float p[3] = {0, 2, 0};
  const uint16_t jn[1] = {1};
  const float w[1] = {1};
  float out[3];
  sks_skinning_job job = base_job(SKS_SKIN_DQS, 1, 1, palette, 2, jn, w, p, out);
  CHECK(sks_skinning_job_run(&job));
  CHECK_NEAR(out[0], 0.5, 1e-6);
  CHECK_NEAR(out[1], 2.0, 1e-6);
  CHECK_NEAR(out[2], 1.0, 1e-6);
  sj[1] = 2;
  CHECK(!sks_palette_job_validate(&pj)); /* joint outside the model matrices */
}

int main(void) {
  dqs_equals_lbs_single_influence();
  candy_wrapper();
  dqs_short_way();
  dqs_short_way_kernels();
  isa_selection();
  for (int isa = SKS_SKIN_ISA_SCALAR; isa <= SKS_SKIN_ISA_AVX2; ++isa) {
    if (!sks_skinning_isa_available((sks_skinning_isa)isa)) {
      printf("%s kernels: not available on this CPU / build, not tested\n", isa_name((sks_skinning_isa)isa));
      continue;
    }
    kernels_agree((sks_skinning_isa)isa);
    packed_kernels_agree((sks_skinning_isa)isa, 40);
    packed_kernels_agree((sks_skinning_isa)isa, 100);
    for (uint32_t k = 1; k <= 8; ++k) block_edges((sks_skinning_isa)isa, k, 24); /* SSE2 k=1: the diagonal table */
    block_edges((sks_skinning_isa)isa, 1, 300); /* SSE2 k=1: more joints than its table */
    unit_weights((sks_skinning_isa)isa);
  }
  pool_matches_run();
  palette_anywhere();
  validation();
  pretransform_static();
  bind_pose();
  two_bone_ik();
  blend_then_skin();
  return sks_test_finish();
}
