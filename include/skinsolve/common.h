/* skinsolve — common types: results, errors, math value types.
 *
 * Conventions (see docs and ../shared/docs/MISSION.md):
 *  - Matrices are column-major 4x4 as in glTF: m[col*4 + row]. A point p is
 *    transformed as M * [p,1].
 *  - Quaternions are (x, y, z, w), unit length for rotations.
 *  - Every array in a struct is `T *items; size_t items_count`-style with the
 *    count beside it. The caller can always free what it got, even after an
 *    error (free functions accept partially filled or zeroed structs).
 */
#ifndef SKINSOLVE_COMMON_H
#define SKINSOLVE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SKS_VERSION_MAJOR 0
#define SKS_VERSION_MINOR 1
#define SKS_VERSION_PATCH 0
#define SKS_VERSION_STRING "0.1.0"

typedef enum sks_result {
  SKS_OK = 0,
  SKS_ERR_ARGUMENT,    /* a caller passed something that breaks a precondition */
  SKS_ERR_IO,          /* a file could not be opened / read / written */
  SKS_ERR_PARSE,       /* a file is malformed */
  SKS_ERR_UNSUPPORTED, /* valid, but uses a feature we do not support */
  SKS_ERR_INVALID,     /* data loaded but cannot be used (e.g. no skin) */
  SKS_ERR_OUT_OF_MEMORY,
  SKS_ERR_NOT_FOUND    /* a named thing (clip, joint) does not exist */
} sks_result;

/* Errors are values: one line a user can act on, naming file and place. */
typedef struct sks_error {
  sks_result code;
  char message[1024];
} sks_error;

/* Sets err (if non-NULL) and returns code. printf-style. */
sks_result sks_error_set(sks_error *err, sks_result code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
const char *sks_result_string(sks_result r);

typedef struct sks_vec3 { float x, y, z; } sks_vec3;
typedef struct sks_quat { float x, y, z, w; } sks_quat;
typedef struct sks_mat4 { float m[16]; } sks_mat4; /* column-major */

/* A joint's local transform: T * R * S, as glTF nodes. */
typedef struct sks_transform {
  sks_vec3 translation;
  sks_quat rotation;
  sks_vec3 scale;
} sks_transform;

#define SKS_MAX_INFLUENCES 8

/* A persistent pool of worker threads, created and owned by the caller (no
 * global state): jobs that take one run their pieces on its threads instead
 * of starting threads per call. run() hands out task indices 0..count-1 to the
 * pool's threads and the calling thread (which works too) and returns when
 * every task has finished; which thread runs which task is not fixed, so a
 * task's result must depend on its index only. One run() at a time per pool.
 * thread_count 0 = every online CPU; 1 = no extra thread (run() is a loop). */
typedef struct sks_thread_pool sks_thread_pool;
typedef void (*sks_pool_task_fn)(void *user, size_t task, unsigned thread);
sks_result sks_thread_pool_create(unsigned thread_count, sks_thread_pool **out, sks_error *err);
void sks_thread_pool_destroy(sks_thread_pool *pool);
/* Threads that run tasks: the workers + the caller (>= 1). */
unsigned sks_thread_pool_size(const sks_thread_pool *pool);
/* `thread` (0..size-1) names the running thread's slot (per-thread scratch);
 * the caller is slot 0. */
void sks_thread_pool_run(sks_thread_pool *pool, sks_pool_task_fn fn, void *user, size_t count);
/* Online CPUs (>= 1). */
unsigned sks_cpu_count(void);

/* ABI introspection for bindings (src/common_abi.c): sizeof a public struct
 * and offsetof one of its fields, by name; (size_t)-1 for unknown names. */
size_t sks_abi_sizeof(const char *struct_name);
size_t sks_abi_offsetof(const char *struct_name, const char *field);

#ifdef __cplusplus
}
#endif
#endif
