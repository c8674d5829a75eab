/* skinsolve batch: shared between cmd_batch.c (options, scheduling, summary),
 * batch_manifest.c (the JSON Lines manifest) and batch_job.c (one job:
 * claim, bake, write outputs and the result record). */
#ifndef SKS_CLI_BATCH_H
#define SKS_CLI_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include "skinsolve/skinsolve.h"

struct cJSON;

typedef struct batch_job {
  char *name;
  size_t line;                 /* 1-based manifest line */
  char *source, *target;       /* resolved (relative to the manifest's folder) */
  char *source_given, *target_given; /* as written in the manifest (records, hashes) */
  char **clips;                /* clip names to bake; 0 = every clip of the source */
  size_t clip_count;
  char **clip_files;           /* resolved; their clips are added to the source's */
  char **clip_files_given;     /* as written */
  size_t clip_file_count;
  sks_solve_mode mode;
  int report;
  double fps;                  /* 0 = the clips' key times */
  size_t max_constraints;      /* 0 = bake's default */
  double max_residual_pct;     /* 0 = bake's refusal limit (8 % D) */
  char spec_sha256[65];        /* hash of the canonical job description */
} batch_job;

typedef struct batch_manifest {
  char *path;
  batch_job *jobs;
  size_t job_count;
} batch_manifest;

/* Reads and validates the whole manifest (strict keys, unique names, names
 * usable as file names). Nothing is run when it fails; the message names
 * the file and line. */
sks_result batch_manifest_read(const char *path, batch_manifest *out, sks_error *err);
void batch_manifest_free(batch_manifest *m);
const char *batch_mode_name(sks_solve_mode m);

/* Where a job's files live under the output folder. */
typedef struct batch_paths {
  char glb[4096], report[4096], record[4096], claim[4096];
} batch_paths;
int batch_job_paths(const char *out_dir, const batch_job *job, batch_paths *p);

typedef struct batch_context {
  const char *out_dir;
  const char *manifest_path;
  const char *shard;           /* "I/N" for the record */
  double stale_after_s;        /* a claim whose heartbeat is older is reclaimed */
  int retry_failed;
  int quiet;                   /* --json: no per-job lines */
  unsigned bake_threads;       /* sks_bake_options.threads of each job: 1 when several
                                  workers already share the cores, else 0 (every CPU) */
} batch_context;

/* Outcome of one job (also a worker's exit status). */
enum {
  BATCH_BAKED = 0,
  BATCH_FAILED = 1,            /* recorded with its message */
  BATCH_UNRECORDED = 3,        /* failed and the record could not be written */
  BATCH_UP_TO_DATE = 10,
  BATCH_UP_TO_DATE_FAILED = 11,
  BATCH_BUSY = 12              /* another live worker holds the claim */
};

/* Runs one job in this process (the worker child). */
int batch_job_run(const batch_context *ctx, const batch_manifest *m, const batch_job *job);
/* Records a job as failed with a message (the parent uses this when a worker
 * dies by a signal); removes the worker's claim when it names `pid`. */
int batch_job_record_failure(const batch_context *ctx, const batch_manifest *m,
                             const batch_job *job, const char *message, long pid);
/* Loads the record of a job; NULL when absent or not a record. */
struct cJSON *batch_record_load(const char *path);
/* The job's input files as a JSON array [{"role", "path", "sha256", "size"}]
 * (sha256 null + "error" for a file that cannot be read); never NULL unless
 * out of memory. */
struct cJSON *batch_inputs_json(const batch_job *job);
/* 1 when `rec` describes this job (same description hash and skinsolve
 * version) with these inputs, and its outputs are in place (ok records: the
 * .glb hash matches, the report exists when asked); else 0 and *why says
 * what differs. */
int batch_record_current(const struct cJSON *rec, const batch_job *job,
                         const struct cJSON *inputs, const batch_paths *p, const char **why);

#endif
