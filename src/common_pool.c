/* sks_thread_pool: persistent workers for jobs that split their work (the
 * bake's frame chunks, the skinning job's vertex ranges). Workers sleep on a
 * condition variable between runs, so a run costs a wake-up (microseconds),
 * not a thread start. Tasks are handed out by an atomic counter: a thread
 * that finishes early takes the next task. Nothing here allocates in run(). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include "skinsolve/common.h"

enum { SKS_POOL_MAX_THREADS = 256 };

struct sks_thread_pool {
  unsigned size;               /* workers + the caller */
  unsigned started;            /* workers running */
  pthread_t *threads;
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  unsigned long generation;    /* bumped per run (under mu) */
  unsigned busy;               /* workers still in the current run (under mu) */
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

static void *worker_main(void *arg) {
  pool_slot slot = *(pool_slot *)arg;
  free(arg);
  sks_thread_pool *p = slot.pool;
  unsigned long seen = 0;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->quit && p->generation == seen) pthread_cond_wait(&p->wake, &p->mu);
    if (p->quit) break;
    seen = p->generation;
    pthread_mutex_unlock(&p->mu);
    take_tasks(p, slot.index);
    pthread_mutex_lock(&p->mu);
    if (--p->busy == 0) pthread_cond_signal(&p->done);
  }
  pthread_mutex_unlock(&p->mu);
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
  p->busy = p->started;
  p->generation++;
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  take_tasks(p, 0);
  pthread_mutex_lock(&p->mu);
  while (p->busy > 0) pthread_cond_wait(&p->done, &p->mu);
  pthread_mutex_unlock(&p->mu);
}
