/* skinsolve batch — bake every job of a JSON Lines manifest, resumably, as
 * one shard of many (Kubernetes Indexed Job, Slurm array, or --shard I/N),
 * with J worker processes; and --summary: merge every shard's records. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include "batch.h"
#include "cli.h"

#define BATCH_MAX_JOBS 256

static void batch_usage(FILE *f) {
  fprintf(f,
          "usage: skinsolve batch MANIFEST [--out DIR] [--shard I/N] [--jobs J] [--json]\n"
          "                       [--stale-after S] [--retry-failed]\n"
          "       skinsolve batch --summary DIR [--manifest MANIFEST] [--json] [--html]\n"
          "\n"
          "Bakes every job of MANIFEST (JSON Lines, one bake per line):\n"
          "  {\"name\": \"fox_walk\", \"source\": \"Fox.glb\", \"target\": \"t.glb\", \"clips\": [\"Walk\"],\n"
          "   \"clip_files\": [], \"mode\": \"free\", \"report\": false, \"fps\": 10, \"max_constraints\": 5000}\n"
          "name, source, target are required; relative paths are relative to the manifest;\n"
          "names are unique and name the outputs; unknown keys are an error. clip_files:\n"
          "animation files whose clips are added to the source (tracks matched by joint name).\n"
          "Optional \"max_residual_pct\": the refusal limit of `bake --max-residual` (default 8).\n"
          "\n"
          "Per job, in DIR: NAME.glb (the target with the baked clips), NAME.html (when\n"
          "\"report\": true) and NAME.json, the result record (status ok|failed, message,\n"
          "the `bake --json` clip records, timings, SHA-256 of every input, skinsolve\n"
          "version), written last, atomically. A job whose record matches its description,\n"
          "its inputs' hashes and its outputs is skipped: re-running finishes exactly what\n"
          "is missing. Failed jobs are recorded and do not stop the others. Workers claim a\n"
          "job with DIR/.claims/NAME (pid, host, time; refreshed every 5 s); a claim whose\n"
          "process is gone (same host) or that was not refreshed for S seconds is taken over.\n"
          "\n"
          "  --out DIR         output folder (default: MANIFEST's name + \".out\")\n"
          "  --shard I/N       run jobs I, I+N, I+2N, ... (0-based manifest order). Default:\n"
          "                    JOB_COMPLETION_INDEX + SKS_SHARD_COUNT (Kubernetes Indexed\n"
          "                    Job), else SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of\n"
          "                    SLURM_ARRAY_TASK_COUNT (Slurm array), else 0/1\n"
          "  --shard-count N   the N for JOB_COMPLETION_INDEX (instead of SKS_SHARD_COUNT)\n"
          "  --jobs J          worker processes at once (default: the online cores; max %d)\n"
          "  --json            print the shard's outcome as JSON instead of lines\n"
          "  --stale-after S   seconds without heartbeat before a claim is taken over (60)\n"
          "  --retry-failed    redo jobs recorded as failed even if their inputs are unchanged\n"
          "  --summary DIR     merge the records in DIR: table (or --json:\n"
          "                    {\"jobs\": [{name, status ok|failed|missing, message, clips}]});\n"
          "                    --manifest M lists M's jobs in order, missing or out-of-date\n"
          "                    ones as \"missing\"; --html writes DIR/index.html linking the\n"
          "                    reports. Exit 1 when a job failed or is missing.\n"
          "\n"
          "exit: 0 every job of the shard is done (or was done), 1 some job failed,\n"
          "      2 usage or manifest error (nothing run), 3 an output could not be written\n",
          BATCH_MAX_JOBS);
}

static double mono_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int parse_index(const char *s, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (!*s || *end || errno || v < 0 || v > 100000000) return 0;
  *out = v;
  return 1;
}

/* --shard beats the environment; k8s beats Slurm. */
static int resolve_shard(const char *opt, const char *count_opt, long *index, long *count,
                         char *source, size_t sn) {
  const char *k8s = getenv("JOB_COMPLETION_INDEX");
  const char *slurm = getenv("SLURM_ARRAY_TASK_ID");
  if (opt) {
    const char *slash = strchr(opt, '/');
    char a[32];
    if (!slash || (size_t)(slash - opt) >= sizeof a) goto bad_opt;
    memcpy(a, opt, (size_t)(slash - opt));
    a[slash - opt] = 0;
    if (!parse_index(a, index) || !parse_index(slash + 1, count) || *count < 1 || *index >= *count)
      goto bad_opt;
    snprintf(source, sn, "--shard");
    return 0;
  bad_opt:
    return sks_cli_fail(SKS_EXIT_USAGE, "batch: --shard must be I/N with 0 <= I < N (got '%s')", opt);
  }
  if (k8s && *k8s) {
    const char *c = count_opt ? count_opt : getenv("SKS_SHARD_COUNT");
    if (!parse_index(k8s, index))
      return sks_cli_fail(SKS_EXIT_USAGE, "batch: JOB_COMPLETION_INDEX='%s' is not an index", k8s);
    if (!c || !parse_index(c, count) || *count < 1)
      return sks_cli_fail(SKS_EXIT_USAGE,
                          "batch: JOB_COMPLETION_INDEX is set but the shard count is not: set "
                          "SKS_SHARD_COUNT (= the Job's completions) or --shard-count N");
    if (*index >= *count)
      return sks_cli_fail(SKS_EXIT_USAGE, "batch: JOB_COMPLETION_INDEX=%ld is not below the count %ld",
                          *index, *count);
    snprintf(source, sn, "JOB_COMPLETION_INDEX");
    return 0;
  }
  if (slurm && *slurm) {
    const char *c = getenv("SLURM_ARRAY_TASK_COUNT"), *mn = getenv("SLURM_ARRAY_TASK_MIN");
    long id, min = 0;
    if (!parse_index(slurm, &id) || (mn && *mn && !parse_index(mn, &min)) || id < min)
      return sks_cli_fail(SKS_EXIT_USAGE, "batch: SLURM_ARRAY_TASK_ID='%s' / SLURM_ARRAY_TASK_MIN='%s' are not usable",
                          slurm, mn ? mn : "");
    if (!c || !parse_index(c, count) || *count < 1)
      return sks_cli_fail(SKS_EXIT_USAGE, "batch: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not a count");
    *index = id - min;
    if (*index >= *count)
      return sks_cli_fail(SKS_EXIT_USAGE,
                          "batch: Slurm task %ld (min %ld) is not below SLURM_ARRAY_TASK_COUNT=%ld: "
                          "use a contiguous array (--array=0-N-1, no step)", id, min, *count);
    snprintf(source, sn, "SLURM_ARRAY_TASK_ID");
    return 0;
  }
  *index = 0;
  *count = 1;
  snprintf(source, sn, "default");
  return 0;
}

static int mkdir_p(const char *path) {
  char buf[4096];
  if (strlen(path) >= sizeof buf) return -1;
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; ++p)
    if (*p == '/') {
      *p = 0;
      if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
      *p = '/';
    }
  if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
  struct stat st;
  return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

typedef struct running { pid_t pid; size_t job; } running;

static const char *outcome_name(int code) {
  switch (code) {
    case BATCH_BAKED: return "baked";
    case BATCH_FAILED: return "failed";
    case BATCH_UP_TO_DATE: return "up_to_date";
    case BATCH_UP_TO_DATE_FAILED: return "up_to_date_failed";
    case BATCH_BUSY: return "busy";
    default: return "unrecorded";
  }
}

static int run_batch(const char *manifest_path, const char *out_opt, const char *shard_opt,
                     const char *count_opt, long jobs_opt, int json, double stale_after,
                     int retry_failed) {
  long index = 0, count = 1;
  char shard_source[32];
  int rc = resolve_shard(shard_opt, count_opt, &index, &count, shard_source, sizeof shard_source);
  if (rc) return rc;
  batch_manifest m;
  sks_error err;
  memset(&err, 0, sizeof err);
  if (batch_manifest_read(manifest_path, &m, &err) != SKS_OK)
    return sks_cli_fail(SKS_EXIT_USAGE, "batch: %s", err.message);
  char out_dir[4096];
  if (out_opt) snprintf(out_dir, sizeof out_dir, "%s", out_opt);
  else {
    snprintf(out_dir, sizeof out_dir, "%s", manifest_path);
    char *dot = strrchr(out_dir, '.'), *slash = strrchr(out_dir, '/');
    if (dot && (!slash || dot > slash) && dot != out_dir && dot[-1] != '/') *dot = 0;
    strncat(out_dir, ".out", sizeof out_dir - strlen(out_dir) - 1);
  }
  while (strlen(out_dir) > 1 && out_dir[strlen(out_dir) - 1] == '/') out_dir[strlen(out_dir) - 1] = 0;
  char claims[4200];
  snprintf(claims, sizeof claims, "%s/.claims", out_dir);
  if (mkdir_p(out_dir) != 0 || mkdir_p(claims) != 0) {
    batch_manifest_free(&m);
    return sks_cli_fail(SKS_EXIT_OUTPUT, "batch: %s: cannot create the output folder: %s", out_dir,
                        strerror(errno));
  }
  char shard[64];
  snprintf(shard, sizeof shard, "%ld/%ld", index, count);
  batch_context ctx = {out_dir, manifest_path, shard, stale_after, retry_failed, json, 0};

  size_t mine_n = 0;
  size_t *mine = malloc((m.job_count / (size_t)count + 1) * sizeof *mine);
  int *outcome = malloc((m.job_count / (size_t)count + 1) * sizeof *outcome);
  if (!mine || !outcome) {
    free(mine); free(outcome); batch_manifest_free(&m);
    return sks_cli_fail(SKS_EXIT_INPUT, "batch: out of memory");
  }
  for (size_t i = (size_t)index; i < m.job_count; i += (size_t)count) mine[mine_n++] = i;
  long J = jobs_opt > 0 ? jobs_opt : sysconf(_SC_NPROCESSORS_ONLN);
  if (J < 1) J = 1;
  if (J > BATCH_MAX_JOBS) J = BATCH_MAX_JOBS;
  if ((size_t)J > mine_n && mine_n) J = (long)mine_n;
  ctx.bake_threads = J > 1 ? 1u : 0u; /* workers x bake threads <= the cores */
  if (!json)
    printf("batch %s: shard %s (%s): %zu of %zu jobs, %ld worker%s, output %s\n", manifest_path,
           shard, shard_source, mine_n, m.job_count, J, J == 1 ? "" : "s", out_dir);
  fflush(stdout);
  fflush(stderr);

  running slots[BATCH_MAX_JOBS];
  size_t active = 0, next = 0;
  double t0 = mono_s();
  pid_t self = getpid();
  while (next < mine_n || active > 0) {
    while (next < mine_n && active < (size_t)J) {
      pid_t pid = fork();
      if (pid < 0) {
        if (active == 0) { /* cannot fork at all: run it here */
          outcome[next] = batch_job_run(&ctx, &m, &m.jobs[mine[next]]);
          ++next;
          continue;
        }
        break; /* wait for a worker to finish */
      }
      if (pid == 0) {
#ifdef __linux__
        /* the worker dies with its batch process (a killed node loses both) */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
        if (getppid() != self) _exit(BATCH_UNRECORDED);
        int code = batch_job_run(&ctx, &m, &m.jobs[mine[next]]);
        fflush(stdout);
        fflush(stderr);
        batch_manifest_free(&m);
        free(mine);
        free(outcome);
        exit(code); /* exit, not _exit: sanitizer leak checks run in workers too */
      }
      slots[active].pid = pid;
      slots[active].job = next;
      ++active;
      ++next;
    }
    if (active == 0) continue;
    int status;
    pid_t done = waitpid(-1, &status, 0);
    if (done < 0) {
      if (errno == EINTR) continue;
      break;
    }
    size_t s = 0;
    while (s < active && slots[s].pid != done) ++s;
    if (s == active) continue;
    size_t k = slots[s].job;
    slots[s] = slots[--active];
    const batch_job *job = &m.jobs[mine[k]];
    if (WIFEXITED(status)) {
      int c = WEXITSTATUS(status);
      outcome[k] = (c == BATCH_BAKED || c == BATCH_FAILED || c == BATCH_UP_TO_DATE ||
                    c == BATCH_UP_TO_DATE_FAILED || c == BATCH_BUSY) ? c : BATCH_UNRECORDED;
    } else {
      char msg[256];
      int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      snprintf(msg, sizeof msg, "the worker died by signal %d (%s)%s", sig, strsignal(sig),
               sig == SIGKILL ? ": out of memory (OOM killer) or killed" : "");
      outcome[k] = batch_job_record_failure(&ctx, &m, job, msg, (long)done);
    }
  }
  double wall = mono_s() - t0;
  /* CPU time of every worker (user + system): the cost per job independent of
   * how busy the machine was */
  struct rusage ru;
  double cpu = 0;
  if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
    cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
          (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
  size_t n[6] = {0};
  for (size_t k = 0; k < mine_n; ++k) {
    int c = outcome[k];
    n[c == BATCH_BAKED ? 0 : c == BATCH_FAILED ? 1 : c == BATCH_UP_TO_DATE ? 2
      : c == BATCH_UP_TO_DATE_FAILED ? 3 : c == BATCH_BUSY ? 4 : 5]++;
  }
  size_t worked = n[0] + n[1];
  if (json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "manifest", manifest_path);
    cJSON_AddStringToObject(o, "out", out_dir);
    cJSON_AddStringToObject(o, "shard", shard);
    cJSON_AddStringToObject(o, "shard_from", shard_source);
    cJSON_AddNumberToObject(o, "workers", (double)J);
    cJSON_AddNumberToObject(o, "baked", (double)n[0]);
    cJSON_AddNumberToObject(o, "failed", (double)n[1]);
    cJSON_AddNumberToObject(o, "up_to_date", (double)n[2]);
    cJSON_AddNumberToObject(o, "up_to_date_failed", (double)n[3]);
    cJSON_AddNumberToObject(o, "busy", (double)n[4]);
    cJSON_AddNumberToObject(o, "unrecorded", (double)n[5]);
    cJSON_AddNumberToObject(o, "wall_s", wall);
    cJSON_AddNumberToObject(o, "worker_cpu_s", cpu);
    cJSON_AddNumberToObject(o, "jobs_per_s", wall > 0 ? (double)worked / wall : 0);
    cJSON *a = cJSON_AddArrayToObject(o, "jobs");
    for (size_t k = 0; k < mine_n; ++k) {
      cJSON *j = cJSON_CreateObject();
      cJSON_AddStringToObject(j, "name", m.jobs[mine[k]].name);
      cJSON_AddStringToObject(j, "outcome", outcome_name(outcome[k]));
      cJSON_AddItemToArray(a, j);
    }
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    if (s) { puts(s); free(s); }
  } else {
    printf("shard %s: %zu jobs: %zu baked, %zu failed, %zu up to date (%zu of them failed "
           "before), %zu busy elsewhere, %zu not recorded; %.2f s, %.3f jobs/s, workers' CPU "
           "%.2f s\n",
           shard, mine_n, n[0], n[1], n[2] + n[3], n[3], n[4], n[5], wall,
           wall > 0 ? (double)worked / wall : 0.0, cpu);
  }
  batch_manifest_free(&m);
  free(mine);
  free(outcome);
  if (n[5]) return SKS_EXIT_OUTPUT;
  return n[1] + n[3] ? SKS_EXIT_INPUT : SKS_EXIT_OK;
}

/* ---- --summary ------------------------------------------------------------ */

static int by_record_name(const void *a, const void *b) {
  const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
  return strcmp(cJSON_GetObjectItemCaseSensitive(x, "name")->valuestring,
                cJSON_GetObjectItemCaseSensitive(y, "name")->valuestring);
}

static const char *jstr(const cJSON *o, const char *k, const char *dflt) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : dflt;
}

static void html_text(FILE *f, const char *s) {
  for (; *s; ++s) {
    if (*s == '<') fputs("&lt;", f);
    else if (*s == '>') fputs("&gt;", f);
    else if (*s == '&') fputs("&amp;", f);
    else if (*s == '"') fputs("&quot;", f);
    else fputc(*s, f);
  }
}

static int write_index(const char *dir, cJSON *jobs) {
  char path[4200];
  snprintf(path, sizeof path, "%s/index.html", dir);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return 0;
  fputs("<!doctype html><html><head><meta charset=\"utf-8\"><title>skinsolve batch</title>\n"
        "<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid"
        " #ccc;padding:2px 6px}.failed{background:#fdd}.missing{background:#ffd}</style></head>"
        "<body><h1>skinsolve batch</h1>\n<table><tr><th>job</th><th>status</th><th>clip</th>"
        "<th>mode</th><th>frames</th><th>quality %</th><th>mean error %D</th>"
        "<th>worst vertex %D</th><th>files / message</th></tr>\n", f);
  const cJSON *j;
  cJSON_ArrayForEach(j, jobs) {
    const char *name = jstr(j, "name", ""), *status = jstr(j, "status", "");
    const cJSON *clips = cJSON_GetObjectItemCaseSensitive(j, "clips");
    int nc = cJSON_GetArraySize(clips);
    fprintf(f, "<tr class=\"%s\"><td>", status);
    html_text(f, name);
    fprintf(f, "</td><td>%s</td>", status);
    if (nc == 0) {
      fputs("<td colspan=6></td><td>", f);
      html_text(f, jstr(j, "message", ""));
      /* a failed job's outputs of its last successful run, kept */
      const cJSON *eo = cJSON_GetObjectItemCaseSensitive(j, "earlier_outputs");
      const char *eg = jstr(eo, "glb", NULL), *er = jstr(eo, "report", NULL);
      if (eg) { fputs(" (kept from an earlier run: <a href=\"", f); html_text(f, eg); fputs("\">glb</a>", f); }
      if (eg && er) { fputs(" <a href=\"", f); html_text(f, er); fputs("\">report</a>", f); }
      if (eg) fputs(")", f);
      fputs("</td></tr>\n", f);
      continue;
    }
    int first = 1;
    const cJSON *c;
    cJSON_ArrayForEach(c, clips) {
      if (!first) fputs("<tr><td></td><td></td>", f);
      const cJSON *q = cJSON_GetObjectItemCaseSensitive(c, "quality");
      fputs("<td>", f);
      html_text(f, jstr(c, "name", ""));
      fprintf(f, "</td><td>%s</td><td>%d</td>", jstr(c, "mode", ""),
              (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "frames")));
      if (cJSON_IsNumber(q)) fprintf(f, "<td>%.4f</td>", q->valuedouble);
      else fputs("<td>n/a</td>", f);
      fprintf(f, "<td>%.6f</td><td>%.6f</td><td>",
              cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "mean_error_pct")),
              cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "worst_error_pct")));
      if (first) {
        const char *glb = jstr(j, "output", NULL), *rep = jstr(j, "report", NULL);
        if (glb) { fputs("<a href=\"", f); html_text(f, glb); fputs("\">glb</a> ", f); }
        if (rep) { fputs("<a href=\"", f); html_text(f, rep); fputs("\">report</a>", f); }
      }
      fputs("</td></tr>\n", f);
      first = 0;
    }
  }
  fputs("</table></body></html>\n", f);
  fclose(f);
  sks_error err;
  int ok = sks_write_file_atomic(path, buf, len, &err) == SKS_OK;
  if (!ok) sks_cli_fail(SKS_EXIT_OUTPUT, "batch: %s", err.message);
  free(buf);
  return ok;
}

static cJSON *summary_entry(const cJSON *rec, const char *name, const char *status,
                            const char *message) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", name);
  cJSON_AddStringToObject(o, "status", status);
  cJSON_AddStringToObject(o, "message", message ? message : "");
  const cJSON *clips = rec && strcmp(status, "ok") == 0 ? cJSON_GetObjectItemCaseSensitive(rec, "clips") : NULL;
  cJSON_AddItemToObject(o, "clips", clips ? cJSON_Duplicate(clips, 1) : cJSON_CreateArray());
  if (rec && strcmp(status, "ok") == 0) {
    const cJSON *outs = cJSON_GetObjectItemCaseSensitive(rec, "outputs");
    const char *g = jstr(outs, "glb", NULL), *r = jstr(outs, "report", NULL);
    if (g) cJSON_AddStringToObject(o, "output", g);
    if (r) cJSON_AddStringToObject(o, "report", r);
  } else if (rec) { /* failed: the outputs of its last successful run, still there */
    const cJSON *eo = cJSON_GetObjectItemCaseSensitive(rec, "earlier_outputs");
    if (cJSON_IsObject(eo)) cJSON_AddItemToObject(o, "earlier_outputs", cJSON_Duplicate(eo, 1));
  }
  return o;
}

static int run_summary(const char *dir, const char *manifest_path, int json, int html) {
  DIR *d = opendir(dir);
  if (!d) return sks_cli_fail(SKS_EXIT_INPUT, "batch: %s: cannot open the folder: %s", dir, strerror(errno));
  cJSON **recs = NULL;
  size_t nrec = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    if (e->d_name[0] == '.' || l < 6 || strcmp(e->d_name + l - 5, ".json") != 0) continue;
    char p[8192];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    cJSON *r = batch_record_load(p);
    if (!r || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "name"))) { cJSON_Delete(r); continue; }
    if (nrec == cap) {
      cap = cap ? 2 * cap : 64;
      cJSON **nr = realloc(recs, cap * sizeof *nr);
      if (!nr) { cJSON_Delete(r); break; }
      recs = nr;
    }
    recs[nrec++] = r;
  }
  closedir(d);
  if (nrec) qsort(recs, nrec, sizeof *recs, by_record_name);
  batch_manifest m;
  memset(&m, 0, sizeof m);
  sks_error err;
  memset(&err, 0, sizeof err);
  if (manifest_path && batch_manifest_read(manifest_path, &m, &err) != SKS_OK) {
    for (size_t i = 0; i < nrec; ++i) cJSON_Delete(recs[i]);
    free(recs);
    return sks_cli_fail(SKS_EXIT_USAGE, "batch: %s", err.message);
  }
  cJSON *root = cJSON_CreateObject();
  cJSON *jobs = cJSON_AddArrayToObject(root, "jobs");
  size_t n_ok = 0, n_failed = 0, n_missing = 0;
  if (manifest_path) {
    for (size_t i = 0; i < m.job_count; ++i) {
      const batch_job *job = &m.jobs[i];
      cJSON *kn = cJSON_CreateObject();
      cJSON_AddStringToObject(kn, "name", job->name);
      const cJSON *kp = kn;
      cJSON **hit = nrec ? bsearch(&kp, recs, nrec, sizeof *recs, by_record_name) : NULL;
      cJSON_Delete(kn);
      char why_buf[256];
      const char *status = "missing", *msg = "no record: the job has not run (or was killed)";
      const cJSON *rec = hit ? *hit : NULL;
      if (rec) {
        batch_paths p;
        cJSON *inputs = batch_inputs_json(job);
        const char *why = NULL;
        if (batch_job_paths(dir, job, &p) && batch_record_current(rec, job, inputs, &p, &why)) {
          status = jstr(rec, "status", "failed");
          msg = jstr(rec, "message", "");
        } else {
          snprintf(why_buf, sizeof why_buf, "out of date: %s", why ? why : "?");
          msg = why_buf;
        }
        cJSON_AddItemToArray(jobs, summary_entry(rec, job->name, status, msg));
        cJSON_Delete(inputs);
      } else {
        cJSON_AddItemToArray(jobs, summary_entry(NULL, job->name, status, msg));
      }
    }
  } else {
    for (size_t i = 0; i < nrec; ++i)
      cJSON_AddItemToArray(jobs, summary_entry(recs[i], jstr(recs[i], "name", ""),
                                               jstr(recs[i], "status", "failed"),
                                               jstr(recs[i], "message", "")));
  }
  const cJSON *j;
  cJSON_ArrayForEach(j, jobs) {
    const char *s = jstr(j, "status", "");
    if (strcmp(s, "ok") == 0) ++n_ok;
    else if (strcmp(s, "failed") == 0) ++n_failed;
    else ++n_missing;
  }
  cJSON_AddNumberToObject(root, "ok", (double)n_ok);
  cJSON_AddNumberToObject(root, "failed", (double)n_failed);
  cJSON_AddNumberToObject(root, "missing", (double)n_missing);
  int code = n_failed + n_missing ? SKS_EXIT_INPUT : SKS_EXIT_OK;
  if (html && !write_index(dir, jobs)) code = SKS_EXIT_OUTPUT;
  if (json) {
    char *s = cJSON_Print(root);
    if (s) { puts(s); free(s); }
  } else {
    printf("%-28s %-8s %-20s %-13s %6s %10s %14s %16s\n", "job", "status", "clip", "mode",
           "frames", "quality %", "mean error %D", "worst vertex %D");
    cJSON_ArrayForEach(j, jobs) {
      const char *name = jstr(j, "name", ""), *s = jstr(j, "status", "");
      const cJSON *clips = cJSON_GetObjectItemCaseSensitive(j, "clips");
      if (cJSON_GetArraySize(clips) == 0) {
        printf("%-28s %-8s %s\n", name, s, jstr(j, "message", ""));
        continue;
      }
      const cJSON *c;
      cJSON_ArrayForEach(c, clips) {
        const cJSON *q = cJSON_GetObjectItemCaseSensitive(c, "quality");
        char qs[32];
        if (cJSON_IsNumber(q)) snprintf(qs, sizeof qs, "%.4f", q->valuedouble);
        else snprintf(qs, sizeof qs, "n/a");
        printf("%-28s %-8s %-20s %-13s %6d %10s %14.6f %16.6f\n", name, s, jstr(c, "name", ""),
               jstr(c, "mode", ""), (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "frames")),
               qs, cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "mean_error_pct")),
               cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "worst_error_pct")));
      }
    }
    printf("%zu jobs: %zu ok, %zu failed, %zu missing\n", n_ok + n_failed + n_missing, n_ok,
           n_failed, n_missing);
    for (int pass = 0; pass < 2; ++pass) {
      const char *want = pass ? "missing" : "failed";
      int any = 0;
      cJSON_ArrayForEach(j, jobs) {
        if (strcmp(jstr(j, "status", ""), want) != 0) continue;
        if (!any) fputs(want, stdout), fputc(':', stdout);
        printf(" %s", jstr(j, "name", ""));
        any = 1;
      }
      if (any) putchar('\n');
    }
    if (html) printf("wrote %s/index.html\n", dir);
  }
  cJSON_Delete(root);
  for (size_t i = 0; i < nrec; ++i) cJSON_Delete(recs[i]);
  free(recs);
  batch_manifest_free(&m);
  return code;
}

int sks_cmd_batch(int argc, char **argv) {
  const char *manifest = NULL, *out = NULL, *shard = NULL, *count = NULL, *summary = NULL,
             *jobs_s = NULL, *stale_s = NULL, *summary_manifest = NULL;
  int json = 0, html = 0, retry = 0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    int r;
    if (sks_cli_is_help(a)) { batch_usage(stdout); return SKS_EXIT_OK; }
    if ((r = sks_cli_opt(argc, argv, &i, "--out", &out)) ||
        (r = sks_cli_opt(argc, argv, &i, "--shard-count", &count)) ||
        (r = sks_cli_opt(argc, argv, &i, "--shard", &shard)) ||
        (r = sks_cli_opt(argc, argv, &i, "--jobs", &jobs_s)) ||
        (r = sks_cli_opt(argc, argv, &i, "--stale-after", &stale_s)) ||
        (r = sks_cli_opt(argc, argv, &i, "--summary", &summary)) ||
        (r = sks_cli_opt(argc, argv, &i, "--manifest", &summary_manifest))) {
      if (r < 0) return SKS_EXIT_USAGE;
      continue;
    }
    if (strcmp(a, "--json") == 0) json = 1;
    else if (strcmp(a, "--html") == 0) html = 1;
    else if (strcmp(a, "--retry-failed") == 0) retry = 1;
    else if (a[0] == '-' && a[1]) return sks_cli_fail(SKS_EXIT_USAGE, "batch: unknown option '%s' (see skinsolve batch --help)", a);
    else if (!manifest) manifest = a;
    else return sks_cli_fail(SKS_EXIT_USAGE, "batch: more than one manifest ('%s', '%s')", manifest, a);
  }
  if (summary) {
    if (manifest || out || shard || jobs_s || count || retry || stale_s)
      return sks_cli_fail(SKS_EXIT_USAGE, "batch --summary DIR takes only --manifest M, --json and --html");
    return run_summary(summary, summary_manifest, json, html);
  }
  if (summary_manifest || html)
    return sks_cli_fail(SKS_EXIT_USAGE, "batch: --manifest and --html go with --summary DIR");
  if (!manifest) {
    batch_usage(stderr);
    return sks_cli_fail(SKS_EXIT_USAGE, "batch: a MANIFEST (JSON Lines) is required");
  }
  unsigned long jobs = 0, stale = 60;
  if (jobs_s && (sks_cli_parse_uint("--jobs", jobs_s, BATCH_MAX_JOBS, &jobs) || jobs == 0))
    return sks_cli_fail(SKS_EXIT_USAGE, "batch: --jobs must be 1..%d", BATCH_MAX_JOBS);
  if (stale_s && (sks_cli_parse_uint("--stale-after", stale_s, 1000000, &stale) || stale == 0))
    return sks_cli_fail(SKS_EXIT_USAGE, "batch: --stale-after must be 1..1000000 seconds");
  return run_batch(manifest, out, shard, count, (long)jobs, json, (double)stale, retry);
}
