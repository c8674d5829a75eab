/* sks_thread_pool: persistent workers for jobs that split their work (the
 * bake's frame chunks, the skinning job's vertex ranges). Between runs a
 * worker first spins (up to SPIN_NS) on the run counter, then sleeps on a
 * condition variable; the caller likewise spins before it sleeps waiting for
 * the workers. A 100k-vertex skinning call lasts ~0.3-1 ms: a condition
 * variable wake-up each way (tens of microseconds, far more on a loaded
 * machine) is what kept a per-call pool from scaling; frame after frame the
 * spin catches the next run at once, and an idle pool still sleeps. Tasks
 * are handed out by an atomic counter: a thread that finishes early takes
 * the next task. Nothing here allocates in run(). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "skinsolve/common.h"

enum { SKS_POOL_MAX_THREADS = 256 };
#define SPIN_NS 200000L /* 0.2 ms */

struct sks_thread_pool {
  unsigned size;               /* workers + the caller */
  unsigned started;            /* workers running */
  pthread_t *threads;
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  atomic_ulong generation;     /* bumped per run (written under mu) */
  atomic_uint busy;            /* workers still in the current run */
  int quit;
  sks_pool_task_fn fn;
  void *user;
  size_t count;
  atomic_size_t next;          /* next task index of the current run */
};

typedef struct pool_slot { sks_thread_pool *pool; unsigned index; } pool_slot;

static void take_tasks(sks_thread_pool *p, unsigned thread) {
  for (;;) {
    size_t t = atomic_fetch_add(&p->next, 1);
    if (t >= p->count) break;
    p->fn(p->user, t, thread);
  }
}

static long elapsed_ns(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (t.tv_sec - t0->tv_sec) * 1000000000L + (t.tv_nsec - t0->tv_nsec);
}

static void *worker_main(void *arg) {
  pool_slot slot = *(pool_slot *)arg;
  free(arg);
  sks_thread_pool *p = slot.pool;
  unsigned long seen = 0;
  for (;;) {
    /* spin a little: the next run of a frame loop comes at once */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned i = 0; atomic_load(&p->generation) == seen; ++i)
      if ((i & 63) == 63 && elapsed_ns(&t0) > SPIN_NS) break;
    pthread_mutex_lock(&p->mu);
    while (!p->quit && atomic_load(&p->generation) == seen) pthread_cond_wait(&p->wake, &p->mu);
    int quit = p->quit;
    seen = atomic_load(&p->generation);
    pthread_mutex_unlock(&p->mu);
    if (quit) break;
    take_tasks(p, slot.index);
    if (atomic_fetch_sub(&p->busy, 1) == 1) { /* the last one: wake the caller */
      pthread_mutex_lock(&p->mu);
      pthread_cond_signal(&p->done);
      pthread_mutex_unlock(&p->mu);
    }
  }
  return NULL;
}

unsigned sks_cpu_count(void) {
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  return c > 0 ? (unsigned)c : 1u;
}

sks_result sks_thread_pool_create(unsigned thread_count, sks_thread_pool **out, sks_error *err) {
  if (!out) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_thread_pool_create: NULL output");
  *out = NULL;
  if (thread_count == 0) thread_count = sks_cpu_count();
  if (thread_count > SKS_POOL_MAX_THREADS) thread_count = SKS_POOL_MAX_THREADS;
  sks_thread_pool *p = calloc(1, sizeof *p);
  if (!p) return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory creating a thread pool");
  p->threads = calloc(thread_count, sizeof(pthread_t));
  if (!p->threads) { free(p); return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory creating a thread pool"); }
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  atomic_init(&p->next, 0);
  atomic_init(&p->generation, 0);
  atomic_init(&p->busy, 0);
  /* a worker that cannot be started makes the pool smaller, not an error:
   * the caller's thread always works */
  for (unsigned t = 1; t < thread_count; ++t) {
    pool_slot *slot = malloc(sizeof *slot);
    if (!slot) break;
    slot->pool = p;
    slot->index = t;
    if (pthread_create(&p->threads[p->started], NULL, worker_main, slot) != 0) { free(slot); break; }
    p->started++;
  }
  p->size = p->started + 1;
  *out = p;
  return SKS_OK;
}

void sks_thread_pool_destroy(sks_thread_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->quit = 1;
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  for (unsigned t = 0; t < p->started; ++t) pthread_join(p->threads[t], NULL);
  pthread_cond_destroy(&p->wake);
  pthread_cond_destroy(&p->done);
  pthread_mutex_destroy(&p->mu);
  free(p->threads);
  free(p);
}

unsigned sks_thread_pool_size(const sks_thread_pool *p) { return p ? p->size : 1; }

void sks_thread_pool_run(sks_thread_pool *p, sks_pool_task_fn fn, void *user, size_t count) {
  if (!p || p->started == 0 || count <= 1) {
    for (size_t t = 0; t < count; ++t) fn(user, t, 0);
    return;
  }
  pthread_mutex_lock(&p->mu);
  p->fn = fn;
  p->user = user;
  p->count = count;
  atomic_store(&p->next, 0);
  atomic_store(&p->busy, p->started);
  atomic_fetch_add(&p->generation, 1); /* after the fields: a spinning worker reads them next */
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  take_tasks(p, 0);
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (unsigned i = 0; atomic_load(&p->busy) > 0; ++i)
    if ((i & 63) == 63 && elapsed_ns(&t0) > SPIN_NS) break;
  pthread_mutex_lock(&p->mu);
  while (atomic_load(&p->busy) > 0) pthread_cond_wait(&p->done, &p->mu);
  pthread_mutex_unlock(&p->mu);
}
