/* Transfer metrics (MISSION.md): quality = 1 - sum e / sum m, mean and worst
 * error in % of D, per frame; quality undefined for a clip that does not move. */
#include <math.h>
#include <string.h>
#include "sks_test.h"
#include "solve/metrics.h"

int main(void) {
  /* Two vertices, D = 10. Rest y0; source y moved by (3,4,0) -> m = 5 each;
   * solved misses vertex 1 by 1 -> e = 0, 1. */
  const double y0[6] = {0, 0, 0, 1, 0, 0};
  const double y[6] = {3, 4, 0, 4, 4, 0};
  const double solved[6] = {3, 4, 0, 4, 5, 0};
  sks_metrics_acc acc;
  memset(&acc, 0, sizeof acc);
  float fm = -1, fw = -1, ve[2] = {-1, -1};
  sks_metrics_frame(&acc, solved, y, y0, 2, 10.0, &fm, &fw, ve);
  CHECK_NEAR(ve[0], 0.0, 1e-7);
  CHECK_NEAR(ve[1], 1.0, 1e-7);
  CHECK_NEAR(fm, 0.5 / 10.0 * 100.0, 1e-5); /* mean e = 0.5 -> 5 % of D */
  CHECK_NEAR(fw, 10.0, 1e-5);               /* worst e = 1 -> 10 % of D */
  double q, mean, worst;
  sks_metrics_finish(&acc, 10.0, &q, &mean, &worst);
  CHECK_NEAR(q, 1.0 - 1.0 / 10.0, 1e-12);   /* sum e = 1, sum m = 10 */
  CHECK_NEAR(mean, 5.0, 1e-12);
  CHECK_NEAR(worst, 10.0, 1e-12);

  /* A clip that does not move (float noise only, 1e-7 D): quality undefined,
   * errors still reported. */
  const double noise[6] = {1e-6, 0, 0, 1, 1e-6, 0};
  const double off[6] = {1e-6, 2e-6, 0, 1, 1e-6, 0};
  memset(&acc, 0, sizeof acc);
  sks_metrics_frame(&acc, off, noise, y0, 2, 10.0, &fm, &fw, ve);
  sks_metrics_finish(&acc, 10.0, &q, &mean, &worst);
  CHECK(isnan(q));
  CHECK_NEAR(worst, 2e-6 / 10.0 * 100.0, 1e-12);
  CHECK(isfinite(mean) && mean > 0);
  return sks_test_finish();
}
