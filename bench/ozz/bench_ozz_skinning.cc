// ozz-animation SkinningJob throughput on bench_skinning's workload, so the
// issue-9 ratio (skinsolve / ozz) can be measured on the machine at hand
// instead of against fixed figures from another machine type.
//
// Built and run by bench/ozz/run.sh against an ozz-animation checkout the
// user provides (no ozz file is part of this repository). Only the public
// SkinningJob API is used, with brace-initialised ranges, so the same file
// builds against ozz::span (0.13+, 0.16) and the older ozz::Range.
//
// Workload, as bench/bench_skinning.c: 100,000 vertices, 64 joints, random
// rigid palette (unit quaternion + translation), random positions and unit
// normals, uint16 joint indices of neighbouring joints, LBS with 1 / 4 / 8
// influences, positions and positions + normals, packed arrays, one thread.
// ozz reads influences - 1 weights per vertex (the last is 1 - their sum), so
// the weights are packed that way; no inverse-transpose palette (rigid).
// Timing as bench_skinning: each call in thread CPU time, best of 10 calls
// per round, best over SKS_BENCH_ROUNDS rounds (default 9).
//
// Output: a table, then one line per case for scripts:
//   ozz,LBS,<influences>,<pos|pos+nrm>,<Mverts/s>
#include <time.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ozz/base/maths/simd_math.h"
#include "ozz/geometry/runtime/skinning_job.h"

namespace {

const int kVerts = 100000, kJoints = 64;

uint32_t rng = 987654321u;  // same generator and seed as bench_skinning.c
float frand() {
  rng = rng * 1664525u + 1013904223u;
  return static_cast<float>(rng >> 8) / 16777216.0f;
}
float srand1() { return 2.0f * frand() - 1.0f; }

double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Column-major rigid transform: rotation of unit quaternion (x, y, z, w),
// then translation t.
ozz::math::Float4x4 rigid(const float q[4], const float t[3]) {
  const float x = q[0], y = q[1], z = q[2], w = q[3];
  ozz::math::Float4x4 m;
  m.cols[0] = ozz::math::simd_float4::Load(1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y), 0);
  m.cols[1] = ozz::math::simd_float4::Load(2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x), 0);
  m.cols[2] = ozz::math::simd_float4::Load(2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y), 0);
  m.cols[3] = ozz::math::simd_float4::Load(t[0], t[1], t[2], 1);
  return m;
}

struct Case {
  int k, normals;
};
const Case kCases[] = {{1, 0}, {1, 1}, {4, 0}, {4, 1}, {8, 0}, {8, 1}};
const int kNumCases = sizeof(kCases) / sizeof(kCases[0]);

}  // namespace

int main() {
  const char* r = getenv("SKS_BENCH_ROUNDS");
  int rounds = r ? atoi(r) : 9;
  if (rounds < 1) rounds = 9;

  // ozz::math::Float4x4 holds __m128 columns: std::vector's allocator aligns
  // it (C++17) or new does (16-byte malloc on x86-64 glibc).
  std::vector<ozz::math::Float4x4> palette(kJoints);
  for (int i = 0; i < kJoints; ++i) {
    float q[4] = {srand1(), srand1(), srand1(), srand1()}, t[3];
    const float n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (float& c : q) c /= n;
    for (float& c : t) c = srand1();
    palette[i] = rigid(q, t);
  }
  std::vector<float> pos(3 * kVerts), nrm(3 * kVerts), opos(3 * kVerts), onrm(3 * kVerts);
  for (int v = 0; v < kVerts; ++v) {
    float n[3] = {srand1(), srand1(), srand1()};
    const float len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int c = 0; c < 3; ++c) {
      pos[3 * v + c] = srand1();
      nrm[3 * v + c] = n[c] / len;
    }
  }
  // Per influence count: k joint indices and k - 1 weights per vertex.
  std::vector<uint16_t> joints[9];
  std::vector<float> weights[9];
  for (int k : {1, 4, 8}) {
    joints[k].resize(static_cast<size_t>(k) * kVerts);
    weights[k].resize(static_cast<size_t>(k) * kVerts);  // (k - 1) * kVerts used
    for (int v = 0; v < kVerts; ++v) {
      const int base = static_cast<int>(frand() * (kJoints - k));
      float w[8], sum = 0;
      for (int i = 0; i < k; ++i) {
        joints[k][k * v + i] = static_cast<uint16_t>(base + i);
        w[i] = 0.1f + frand();
        sum += w[i];
      }
      for (int i = 0; i < k - 1; ++i) weights[k][(k - 1) * v + i] = w[i] / sum;
    }
  }

  double best[kNumCases];
  for (double& b : best) b = 1e30;
  for (int round = 0; round < rounds; ++round)
    for (int c = 0; c < kNumCases; ++c) {
      const int k = kCases[c].k;
      ozz::geometry::SkinningJob job;
      job.vertex_count = kVerts;
      job.influences_count = k;
      job.joint_matrices = {palette.data(), palette.size()};
      job.joint_indices = {joints[k].data(), static_cast<size_t>(k) * kVerts};
      job.joint_indices_stride = sizeof(uint16_t) * k;
      if (k > 1) {
        job.joint_weights = {weights[k].data(), static_cast<size_t>(k - 1) * kVerts};
        job.joint_weights_stride = sizeof(float) * (k - 1);
      }
      job.in_positions = {pos.data(), pos.size()};
      job.in_positions_stride = sizeof(float) * 3;
      job.out_positions = {opos.data(), opos.size()};
      job.out_positions_stride = sizeof(float) * 3;
      if (kCases[c].normals) {
        job.in_normals = {nrm.data(), nrm.size()};
        job.in_normals_stride = sizeof(float) * 3;
        job.out_normals = {onrm.data(), onrm.size()};
        job.out_normals_stride = sizeof(float) * 3;
      }
      for (int rep = 0; rep < 10; ++rep) {
        const double t0 = cpu_now();
        if (!job.Run()) {
          fprintf(stderr, "ozz SkinningJob::Run failed (invalid job)\n");
          return 1;
        }
        const double dt = cpu_now() - t0;
        if (dt < best[c]) best[c] = dt;
      }
      // One influence of a rigid palette keeps normals unit length: a cheap
      // check that the job ran on the data it was given (blends of several
      // rotations shorten them, so only k = 1 is checked).
      if (k == 1 && kCases[c].normals && round == 0) {
        const float* n = onrm.data() + 3 * (kVerts / 2);
        const float len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (std::fabs(len - 1.0f) > 1e-3f) {
          fprintf(stderr, "ozz output normal has length %g, not 1\n", len);
          return 1;
        }
      }
    }

  printf("ozz-animation SkinningJob: %d vertices, %d joints, random rigid palette, packed arrays, one thread; "
         "SIMD %s%s%s\n", kVerts, kJoints,
#if defined(OZZ_SIMD_AVX2)
         "AVX2",
#elif defined(OZZ_SIMD_AVX)
         "AVX",
#elif defined(OZZ_SIMD_SSE4_1)
         "SSE4.1",
#elif defined(OZZ_SIMD_SSEx)
         "SSE2",
#else
         "reference (scalar)",
#endif
#if defined(OZZ_SIMD_FMA)
         " + FMA",
#else
         "",
#endif
         "");
  printf("Mverts/s, best call of %d rounds x 10 calls, thread CPU time\n", rounds);
  for (int c = 0; c < kNumCases; ++c)
    printf("LBS %d infl %-8s %8.1f\n", kCases[c].k, kCases[c].normals ? "pos+nrm" : "pos", kVerts / best[c] / 1e6);
  for (int c = 0; c < kNumCases; ++c)
    printf("ozz,LBS,%d,%s,%.1f\n", kCases[c].k, kCases[c].normals ? "pos+nrm" : "pos", kVerts / best[c] / 1e6);
  return 0;
}
