/* The Levenberg-Marquardt solvers' factorisations (free: block Cholesky;
 * rotation-only: envelope Cholesky) and per-frame moment sums
 * (solver_gn_kernels.h) built with -mavx2 -mfma (this file alone, see
 * CMakeLists.txt); solver_gn.c calls them only when sks_gn_use_avx2 says
 * the CPU has both. Other targets compile the stubs. The same arithmetic
 * as the SSE2 build but for fused multiply-adds and the order of the
 * moment sums: results agree to rounding (test_bake_solver runs both). */
#include "solve/solve_internal.h"

#if defined(__AVX2__) && defined(__FMA__)
#include "solve/solver_gn_kernels.h"

int sks_gn_avx2_compiled(void) { return 1; }

int sks_gn_damped_solve_avx2(const sks_gn_pattern *pt, const double *Hb, int K, const double *g, double lam,
                             double floor_, double *Lb, double *y, double *x) {
  switch (K) {
  case 6: return damped_solve_impl(pt, Hb, 6, g, lam, floor_, Lb, y, x);
  case 7: return damped_solve_impl(pt, Hb, 7, g, lam, floor_, Lb, y, x);
  default: return damped_solve_impl(pt, Hb, 12, g, lam, floor_, Lb, y, x);
  }
}

double sks_moments_frame_avx2(const sks_solve_problem *p, const double *y, double *Y, double *ybar) {
  return moments_frame_impl(p, y, Y, ybar);
}

int sks_envelope_solve_avx2(const double *H, const double *dd, const double *g, size_t n, double lam,
                            const uint32_t *perm, const uint32_t *first, double *L, double *x, double *z) {
  return envelope_solve_impl(H, dd, g, n, lam, perm, first, L, x, z);
}

void sks_rotonly_block_adds_avx2(double *Am, const uint32_t *up, size_t count) { block_adds_impl(Am, up, count); }
#else
int sks_gn_avx2_compiled(void) { return 0; }

int sks_gn_damped_solve_avx2(const sks_gn_pattern *pt, const double *Hb, int K, const double *g, double lam,
                             double floor_, double *Lb, double *y, double *x) {
  (void)pt; (void)Hb; (void)K; (void)g; (void)lam; (void)floor_; (void)Lb; (void)y; (void)x;
  return 0;
}

double sks_moments_frame_avx2(const sks_solve_problem *p, const double *y, double *Y, double *ybar) {
  (void)p; (void)y; (void)Y; (void)ybar;
  return 0;
}

int sks_envelope_solve_avx2(const double *H, const double *dd, const double *g, size_t n, double lam,
                            const uint32_t *perm, const uint32_t *first, double *L, double *x, double *z) {
  (void)H; (void)dd; (void)g; (void)n; (void)lam; (void)perm; (void)first; (void)L; (void)x; (void)z;
  return 0;
}

void sks_rotonly_block_adds_avx2(double *Am, const uint32_t *up, size_t count) {
  (void)Am; (void)up; (void)count;
}
#endif
