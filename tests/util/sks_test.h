/* Minimal test harness: CHECK macros, data-path helpers, closing line
 * "N passed, N failed" (read by CI). Skip = exit 77 with a clear message. */
#ifndef SKS_TEST_H
#define SKS_TEST_H

#include <math.h>
#include <stdio.h>
#include "skinsolve/skinsolve.h"

extern int sks_test_passed, sks_test_failed;

#define CHECK(cond)                                                             \
  do {                                                                          \
    if (cond) { ++sks_test_passed; }                                            \
    else { ++sks_test_failed; fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } \
  } while (0)
#define CHECK_MSG(cond, ...)                                                    \
  do {                                                                          \
    if (cond) { ++sks_test_passed; }                                            \
    else { ++sks_test_failed; fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
           fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); }                 \
  } while (0)
#define CHECK_NEAR(a, b, tol)                                                   \
  do {                                                                          \
    double sks__a = (double)(a), sks__b = (double)(b);                          \
    if (fabs(sks__a - sks__b) <= (tol)) { ++sks_test_passed; }                  \
    else { ++sks_test_failed; fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.9g, %s = %.9g, tol %g\n", \
           __FILE__, __LINE__, #a, sks__a, #b, sks__b, (double)(tol)); }        \
  } while (0)
#define CHECK_OK(expr, errp)                                                    \
  do {                                                                          \
    sks_result sks__r = (expr);                                                 \
    if (sks__r == SKS_OK) { ++sks_test_passed; }                                \
    else { ++sks_test_failed; fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, (errp)->message); } \
  } while (0)

/* Path of a file under assimp-testmodels / shared data, or NULL if absent
 * (prints a skip notice naming it). Returned pointer is to a static buffer
 * ring (valid for a few calls). */
const char *sks_test_assimp_model(const char *rel);
const char *sks_test_shared_data(const char *rel);
/* A fresh temp dir for this test (created once). */
const char *sks_test_tmpdir(void);

/* A malloc'ed copy of s for the procedural rigs' names (aborts when out of
 * memory: a test has no use for a half-built rig). */
char *sks_test_strdup(const char *s);

/* Procedural rigs: a chain of nb bones "bone_0".. under a root "Armature"
 * (rest: turned 90 deg about x, scale 0.5, at (3, 1, 0): a mesh node that
 * is not the bind space), each bone 1 unit along x from its parent and
 * turned `bend` radians about z (bone_0 at the root's origin). */
void sks_test_chain_skeleton(sks_model *m, size_t nb, float bend);
/* One skin "skin" binding joints 1..nb of m's skeleton at
 * its rest pose (inverse bind = the inverse of each joint's rest model
 * matrix); then one part "tube" of vertex_count vertices on it (node 0, no
 * material, 4 influences, positions / joints / weights allocated, joints and
 * weights zeroed). Return the part. */
void sks_test_rest_skin(sks_model *m, size_t nb);
sks_mesh_part *sks_test_add_tube_part(sks_model *m, size_t vertex_count);
/* Appends a rigid part (skin -1, no material) following joint `node`:
 * vertex_count vertices at the origin (positions to fill) and index_count
 * indices k % vertex_count (triangles 0 1 2, 3 4 5, ... when the counts
 * agree; the caller may overwrite them). Aborts when out of memory. */
sks_mesh_part *sks_test_add_rigid_part(sks_model *m, const char *name, int32_t node, size_t vertex_count,
                                       size_t index_count);
/* Gives clip c one LINEAR morph-weight track for node 0's two morph targets:
 * `keys` keys at c->duration * k / (keys - 1) * span + start (span < 1 and a
 * small start put them between a clip's regular joint keys), weights
 * 0.5 + 0.5 sin(1.3 k) and k mod 2. Returns the track. */
sks_morph_track *sks_test_add_morph_track(sks_clip *c, size_t keys, float span, float start);

/* Prints "N passed, N failed" and returns the exit code (1 on failure). */
int sks_test_finish(void);
/* Marks a whole test as skipped: prints why and exits 77. */
void sks_test_skip(const char *why);

#endif
