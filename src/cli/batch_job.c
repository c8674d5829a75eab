/* skinsolve batch: one job, run in its own worker process. Order:
 *   hash the inputs -> up to date? (record + outputs) -> claim (O_EXCL file
 *   holding pid, host, time; its mtime is a heartbeat) -> bake -> write the
 *   .glb, the report, then the record LAST (all atomic renames) -> release.
 * A worker killed at any point leaves either no record (the job is redone)
 * or a complete one; its claim goes stale (dead pid on this host, or no
 * heartbeat for --stale-after seconds) and is reclaimed. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "batch.h"
#include "cli_bake_report.h"
#include "cli.h"
#include "common_sha256.h"
#include "io/atomic.h"
#include "io/gltf_write.h"

int batch_job_paths(const char *out_dir, const batch_job *job, batch_paths *p) {
  int n1 = snprintf(p->glb, sizeof p->glb, "%s/%s.glb", out_dir, job->name);
  int n2 = snprintf(p->report, sizeof p->report, "%s/%s.html", out_dir, job->name);
  int n3 = snprintf(p->record, sizeof p->record, "%s/%s.json", out_dir, job->name);
  int n4 = snprintf(p->claim, sizeof p->claim, "%s/.claims/%s", out_dir, job->name);
  return n1 > 0 && n2 > 0 && n3 > 0 && n4 > 0 && (size_t)n1 < sizeof p->glb &&
         (size_t)n2 < sizeof p->report && (size_t)n3 < sizeof p->record &&
         (size_t)n4 < sizeof p->claim;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One input row: {"role", "path", "sha256", "size"}, or sha256 null and
 * "error" for a file that cannot be read. */
static cJSON *input_row(const char *role, const char *given, const char *path) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "role", role);
  cJSON_AddStringToObject(o, "path", given);
  char hex[65];
  uint64_t size = 0;
  sks_error err;
  memset(&err, 0, sizeof err);
  if (sks_sha256_file(path, hex, &size, &err) == SKS_OK) {
    cJSON_AddStringToObject(o, "sha256", hex);
    cJSON_AddNumberToObject(o, "size", (double)size);
  } else {
    cJSON_AddNullToObject(o, "sha256");
    cJSON_AddStringToObject(o, "error", err.message);
  }
  return o;
}

static void add_input(cJSON *arr, const char *role, const char *given, const char *path) {
  cJSON *o = input_row(role, given, path);
  if (o) cJSON_AddItemToArray(arr, o);
}

/* The files a job's loads read besides its model files (a glTF's external
 * buffers and images, what an Assimp import opened: an .obj's .mtl,
 * textures, files a Collada or .x names) are inputs too: a re-run must see
 * a changed .bin or texture. The readers themselves say which they are
 * (sks_load_options.on_file_read, heard through the output guard): each is
 * hashed when heard of (the glTF reader tells just before it reads) and
 * recorded, once per role, as "<role>_resource" with its path as opened,
 * made absolute. A re-run re-hashes the files the record lists (the model
 * files being unchanged, the loads would read the same ones): see
 * inputs_current. */
#define RESOURCE_SUFFIX "_resource"

typedef struct resource_rows {
  cJSON *arr;        /* the rows heard so far */
  const char *role;  /* of the load running: "source", "target", "clip_file" */
  const batch_job *job;
} resource_rows;

static int same_file(const char *path, const struct stat *st) {
  struct stat s;
  return path && stat(path, &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino;
}

static void heard_file(void *user, const char *path) {
  resource_rows *r = user;
  if (!r->arr || !r->role || !path || !*path) return;
  struct stat st;
  if (stat(path, &st) == 0) { /* a model file of the job: its own row already */
    if (same_file(r->job->source, &st) || same_file(r->job->target, &st)) return;
    for (size_t i = 0; i < r->job->clip_file_count; ++i)
      if (same_file(r->job->clip_files[i], &st)) return;
  }
  char abs[4096], cwd[4096];
  int n = -1;
  if (path[0] != '/' && getcwd(cwd, sizeof cwd)) n = snprintf(abs, sizeof abs, "%s/%s", cwd, path);
  const char *p = n > 0 && (size_t)n < sizeof abs ? abs : path;
  char role[64];
  snprintf(role, sizeof role, "%s" RESOURCE_SUFFIX, r->role);
  const cJSON *it;
  cJSON_ArrayForEach(it, r->arr) {
    const cJSON *ro = cJSON_GetObjectItemCaseSensitive(it, "role");
    const cJSON *pa = cJSON_GetObjectItemCaseSensitive(it, "path");
    if (cJSON_IsString(ro) && cJSON_IsString(pa) && strcmp(ro->valuestring, role) == 0 &&
        strcmp(pa->valuestring, p) == 0)
      return;
  }
  add_input(r->arr, role, p, p);
}

/* Moves the rows heard into the job's inputs (after its model files). */
static void take_resources(cJSON *inputs, resource_rows *r) {
  while (r->arr && r->arr->child) {
    cJSON *row = cJSON_DetachItemFromArray(r->arr, 0);
    if (inputs) cJSON_AddItemToArray(inputs, row);
    else cJSON_Delete(row);
  }
}

static int is_resource_role(const char *role) {
  size_t n = strlen(role), k = strlen(RESOURCE_SUFFIX);
  return n > k && strcmp(role + n - k, RESOURCE_SUFFIX) == 0;
}

/* The model files' rows (`inputs`, in order) equal the record's, and every
 * file the record lists as read by the loads still has its hash (or still
 * fails the same way). */
static int inputs_current(const cJSON *recorded, const cJSON *inputs) {
  const cJSON *want = inputs ? inputs->child : NULL;
  if (!cJSON_IsArray(recorded)) return 0;
  for (const cJSON *row = recorded->child; row; row = row->next) {
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(row, "role");
    if (!cJSON_IsString(role)) return 0;
    if (is_resource_role(role->valuestring)) {
      const cJSON *path = cJSON_GetObjectItemCaseSensitive(row, "path");
      if (!cJSON_IsString(path)) return 0;
      cJSON *now = input_row(role->valuestring, path->valuestring, path->valuestring);
      int same = now && cJSON_Compare(row, now, 1);
      cJSON_Delete(now);
      if (!same) return 0;
    } else {
      if (!want || !cJSON_Compare(row, want, 1)) return 0;
      want = want->next;
    }
  }
  return want == NULL;
}

cJSON *batch_inputs_json(const batch_job *job) {
  cJSON *a = cJSON_CreateArray();
  if (!a) return NULL;
  add_input(a, "source", job->source_given, job->source);
  add_input(a, "target", job->target_given, job->target);
  for (size_t i = 0; i < job->clip_file_count; ++i)
    add_input(a, "clip_file", job->clip_files_given[i], job->clip_files[i]);
  return a;
}

cJSON *batch_record_load(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n + 65536 + 1 > cap) {
      cap = cap ? 2 * cap : 131072;
      if (cap > ((size_t)64 << 20)) { free(buf); fclose(f); return NULL; } /* not a record */
      char *nb = realloc(buf, cap);
      if (!nb) { free(buf); fclose(f); return NULL; }
      buf = nb;
    }
    size_t r = fread(buf + n, 1, 65536, f);
    n += r;
    if (r < 65536) break;
  }
  fclose(f);
  buf[n] = 0;
  cJSON *o = cJSON_Parse(buf);
  free(buf);
  if (o && !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, "skinsolve_batch_record"))) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static const char *str_field(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

int batch_record_current(const cJSON *rec, const batch_job *job, const cJSON *inputs,
                         const batch_paths *p, const char **why) {
  const char *v = str_field(rec, "skinsolve_version");
  const char *spec = str_field(rec, "job_sha256");
  const char *status = str_field(rec, "status");
  if (!v || strcmp(v, SKS_VERSION_STRING) != 0) { *why = "made by another skinsolve version"; return 0; }
  if (!spec || strcmp(spec, job->spec_sha256) != 0) { *why = "the job's description changed"; return 0; }
  const cJSON *ri = cJSON_GetObjectItemCaseSensitive(rec, "inputs");
  if (!ri || !inputs_current(ri, inputs)) { *why = "an input file changed"; return 0; }
  /* an input that could not be read compares by its error: still missing,
   * still the same failure; once it appears its hash differs and it is redone */
  if (!status) { *why = "no status"; return 0; }
  if (strcmp(status, "ok") == 0) {
    const cJSON *out = cJSON_GetObjectItemCaseSensitive(rec, "outputs");
    const char *want = str_field(out, "glb_sha256");
    char hex[65];
    sks_error err;
    if (!want || sks_sha256_file(p->glb, hex, NULL, &err) != SKS_OK || strcmp(hex, want) != 0) {
      *why = "the baked .glb is missing or changed";
      return 0;
    }
    struct stat st;
    if (job->report && (stat(p->report, &st) != 0 || !S_ISREG(st.st_mode))) {
      *why = "the report is missing";
      return 0;
    }
  } else if (strcmp(status, "failed") != 0) {
    *why = "unknown status";
    return 0;
  }
  *why = NULL;
  return 1;
}

/* ---- claims ------------------------------------------------------------ */

typedef struct claim {
  int fd;
  pthread_t thread;
  int running;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop;
} claim;

static void *heartbeat(void *arg) {
  claim *c = arg;
  pthread_mutex_lock(&c->mu);
  while (!c->stop) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 5;
    pthread_cond_timedwait(&c->cv, &c->mu, &t);
    if (!c->stop) (void)futimens(c->fd, NULL); /* mtime = "still working" */
  }
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

static void host_name(char *h, size_t n) {
  if (gethostname(h, n) != 0) snprintf(h, n, "unknown");
  h[n - 1] = 0;
}

/* A process that exists and is not a zombie (a killed worker whose parent
 * died too stays a zombie until init reaps it). */
static int pid_alive(long pid) {
  if (pid <= 0) return 0;
  if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) return 0;
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "rb");
  if (!f) return 1; /* no /proc: trust kill() */
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *close_paren = strrchr(buf, ')'); /* "pid (comm) S ..." */
  return !(close_paren && close_paren[1] == ' ' && (close_paren[2] == 'Z' || close_paren[2] == 'X'));
}

/* Stale: written by a dead process on this host, or no heartbeat for
 * stale_after seconds (a worker on another node that died). */
static int claim_stale(const char *path, double stale_after, char *holder, size_t hn) {
  struct stat st;
  if (stat(path, &st) != 0) return errno == ENOENT ? 2 : 0; /* 2: gone, try again */
  char buf[512] = {0};
  FILE *f = fopen(path, "rb");
  if (f) { size_t r = fread(buf, 1, sizeof buf - 1, f); buf[r] = 0; fclose(f); }
  long pid = 0;
  char host[256] = {0}, me[256];
  host_name(me, sizeof me);
  int parsed = sscanf(buf, "pid %ld host %255s", &pid, host) == 2;
  snprintf(holder, hn, "%s", parsed ? buf : "(unreadable claim)");
  char *nl = strchr(holder, '\n');
  if (nl) *nl = 0;
  if (parsed && strcmp(host, me) == 0 && !pid_alive(pid)) return 1;
  double age = difftime(time(NULL), st.st_mtime);
  return age > stale_after;
}

/* 1 claimed, 0 busy (holder filled), -1 error (message in err). */
static int claim_take(const char *path, double stale_after, claim *c, char *holder, size_t hn,
                      sks_error *err) {
  memset(c, 0, sizeof *c);
  c->fd = -1;
  for (int attempt = 0; attempt < 3; ++attempt) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
      char me[256], line[512];
      host_name(me, sizeof me);
      int n = snprintf(line, sizeof line, "pid %ld host %s time %ld\n", (long)getpid(), me,
                       (long)time(NULL));
      if (write(fd, line, (size_t)n) != n || fsync(fd) != 0) {
        int e = errno;
        close(fd);
        unlink(path);
        sks_error_set(err, SKS_ERR_IO, "%s: cannot write the claim: %s", path, strerror(e));
        return -1;
      }
      c->fd = fd;
      return 1;
    }
    if (errno != EEXIST) {
      sks_error_set(err, SKS_ERR_IO, "%s: cannot create the claim: %s", path, strerror(errno));
      return -1;
    }
    int s = claim_stale(path, stale_after, holder, hn);
    if (s == 0) return 0;
    if (s == 1) unlink(path); /* reclaim: the next O_EXCL decides who gets it */
  }
  return 0;
}

/* Starts the claim's heartbeat thread. Called once the job's inputs are
 * loaded: the isolated Assimp import forks without exec, and a child forked
 * while another thread is starting (or inside the allocator, ASan's above
 * all) can inherit a held lock and hang until its time limit. The claim's
 * mtime is fresh from claim_take; loading is bounded by the import limits,
 * and on one host a claim is judged by its process, not its mtime. */
static void claim_heartbeat_start(claim *c) {
  if (c->fd < 0 || c->running) return;
  (void)futimens(c->fd, NULL);
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  c->running = pthread_create(&c->thread, NULL, heartbeat, c) == 0;
}

static void claim_release(const char *path, claim *c) {
  if (c->fd < 0) return;
  if (c->running) {
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
  }
  close(c->fd);
  c->fd = -1;
  unlink(path);
}

/* Temporary files a killed writer left for this job's outputs
 * (".NAME.glb.tmpXXXXXX", see sks_write_file_atomic). Only the claim holder
 * calls this. */
static void remove_leftovers(const char *out_dir, const char *name) {
  DIR *d = opendir(out_dir);
  if (!d) return;
  size_t nl = strlen(name);
  struct dirent *e;
  const char *ext[3] = {".glb.tmp", ".html.tmp", ".json.tmp"};
  while ((e = readdir(d)) != NULL) {
    const char *f = e->d_name;
    if (f[0] != '.' || strncmp(f + 1, name, nl) != 0) continue;
    for (int i = 0; i < 3; ++i)
      if (strncmp(f + 1 + nl, ext[i], strlen(ext[i])) == 0 && strlen(f + 1 + nl) == strlen(ext[i]) + 6) {
        char p[4096];
        if ((size_t)snprintf(p, sizeof p, "%s/%s", out_dir, f) < sizeof p) unlink(p);
      }
  }
  closedir(d);
}

/* ---- the bake ------------------------------------------------------------ */

/* Adds every clip of an animation file to the source: tracks are mapped by
 * joint name; tracks of joints the source lacks are dropped. */
static sks_result add_clip_file(sks_model *src, const char *path, const sks_load_options *options,
                                sks_error *err) {
  sks_model f;
  memset(&f, 0, sizeof f);
  sks_result r = sks_load(path, options, &f, err);
  if (r != SKS_OK) return r;
  if (f.clip_count == 0) {
    sks_model_free(&f);
    return sks_error_set(err, SKS_ERR_INVALID, "%s: clip file has no clips", path);
  }
  sks_clip *nc = realloc(src->clips, (src->clip_count + f.clip_count) * sizeof *nc);
  if (!nc) { sks_model_free(&f); return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", path); }
  src->clips = nc;
  for (size_t c = 0; c < f.clip_count; ++c) {
    sks_clip *clip = &f.clips[c];
    if (sks_clip_find(src->clips, src->clip_count, clip->name) >= 0) {
      r = sks_error_set(err, SKS_ERR_INVALID, "%s: clip '%s' is already in the source %s", path,
                        clip->name, src->source_path ? src->source_path : "");
      break;
    }
    size_t kept = 0;
    for (size_t t = 0; t < clip->track_count; ++t) {
      sks_track *tr = &clip->tracks[t];
      int32_t j = tr->joint >= 0 && (size_t)tr->joint < f.skeleton.joint_count
                      ? sks_skeleton_find(&src->skeleton, f.skeleton.names[tr->joint]) : -1;
      if (j < 0) { free(tr->times); free(tr->values); continue; }
      tr->joint = j;
      clip->tracks[kept++] = *tr;
    }
    clip->track_count = kept;
    if (!kept) {
      r = sks_error_set(err, SKS_ERR_INVALID, "%s: clip '%s' animates no joint of the source %s",
                        path, clip->name, src->source_path ? src->source_path : "");
      break;
    }
    src->clips[src->clip_count++] = *clip; /* moved */
    memset(clip, 0, sizeof *clip);
  }
  sks_model_free(&f);
  return r;
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static cJSON *record_new(const batch_context *ctx, const batch_job *job, cJSON *inputs) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddNumberToObject(r, "skinsolve_batch_record", 1);
  cJSON_AddStringToObject(r, "skinsolve_version", SKS_VERSION_STRING);
  cJSON_AddStringToObject(r, "name", job->name);
  cJSON_AddStringToObject(r, "job_sha256", job->spec_sha256);
  cJSON *j = cJSON_AddObjectToObject(r, "job");
  cJSON_AddStringToObject(j, "source", job->source_given);
  cJSON_AddStringToObject(j, "target", job->target_given);
  cJSON *cl = cJSON_AddArrayToObject(j, "clips");
  for (size_t i = 0; i < job->clip_count; ++i) cJSON_AddItemToArray(cl, cJSON_CreateString(job->clips[i]));
  cJSON *cf = cJSON_AddArrayToObject(j, "clip_files");
  for (size_t i = 0; i < job->clip_file_count; ++i)
    cJSON_AddItemToArray(cf, cJSON_CreateString(job->clip_files_given[i]));
  cJSON_AddStringToObject(j, "mode", batch_mode_name(job->mode));
  cJSON_AddBoolToObject(j, "report", job->report);
  cJSON_AddNumberToObject(j, "fps", job->fps);
  cJSON_AddNumberToObject(j, "max_constraints", (double)job->max_constraints);
  if (job->max_residual_pct > 0) cJSON_AddNumberToObject(j, "max_residual_pct", job->max_residual_pct);
  cJSON_AddNumberToObject(j, "manifest_line", (double)job->line);
  cJSON_AddItemToObject(r, "inputs", inputs);
  char host[256];
  host_name(host, sizeof host);
  cJSON *w = cJSON_AddObjectToObject(r, "worker");
  cJSON_AddStringToObject(w, "host", host);
  cJSON_AddNumberToObject(w, "pid", (double)getpid());
  cJSON_AddStringToObject(w, "shard", ctx->shard ? ctx->shard : "");
  cJSON_AddNumberToObject(w, "finished_unix", (double)time(NULL));
  return r;
}

static int record_write(const char *path, cJSON *rec, sks_error *err) {
  char *s = cJSON_PrintUnformatted(rec);
  if (!s) { sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "%s: cannot format the record", path); return 0; }
  size_t n = strlen(s);
  s[n] = '\n'; /* replaces the NUL: write n + 1 bytes */
  sks_result r = sks_write_file_atomic(path, s, n + 1, err);
  free(s);
  return r == SKS_OK;
}

/* The outputs the job's record vouches for (its "outputs" when it is ok,
 * its "earlier_outputs" when it failed after an ok run), with the time of
 * the run that made them, when the .glb on disk is still that run's (by
 * sha256); else NULL. */
static cJSON *recorded_outputs(const batch_paths *p) {
  cJSON *old = batch_record_load(p->record);
  const char *status = str_field(old, "status");
  const cJSON *outs = NULL;
  if (status && strcmp(status, "ok") == 0) outs = cJSON_GetObjectItemCaseSensitive(old, "outputs");
  else if (status) outs = cJSON_GetObjectItemCaseSensitive(old, "earlier_outputs");
  const char *want = str_field(outs, "glb_sha256");
  char hex[65];
  sks_error err;
  cJSON *kept = NULL;
  if (want && sks_sha256_file(p->glb, hex, NULL, &err) == SKS_OK && strcmp(hex, want) == 0) {
    kept = cJSON_Duplicate(outs, 1);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(old, "worker");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(w, "finished_unix");
    if (kept && status && strcmp(status, "ok") == 0 && cJSON_IsNumber(t) &&
        !cJSON_GetObjectItemCaseSensitive(kept, "finished_unix"))
      cJSON_AddNumberToObject(kept, "finished_unix", t->valuedouble);
  }
  cJSON_Delete(old);
  return kept;
}

static int fail_record(const batch_context *ctx, const batch_job *job, const batch_paths *p,
                       cJSON *inputs, const char *message) {
  /* A failing job never destroys earlier results: the outputs an earlier
   * successful run recorded stay byte for byte, and the failed record names
   * them ("earlier_outputs"); only files no record vouches for (a killed
   * run's, or an earlier description's report) are removed. */
  if (!message || !*message) message = "failed (no message)";
  cJSON *earlier = recorded_outputs(p);
  if (!earlier) unlink(p->glb);
  if (!earlier || cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(earlier, "report"))) unlink(p->report);
  cJSON *rec = record_new(ctx, job, inputs);
  cJSON_AddStringToObject(rec, "status", "failed");
  cJSON_AddStringToObject(rec, "message", message);
  if (earlier) cJSON_AddItemToObject(rec, "earlier_outputs", earlier);
  sks_error err;
  memset(&err, 0, sizeof err);
  int ok = record_write(p->record, rec, &err);
  if (!ok) fprintf(stderr, "skinsolve: batch: %s: %s\n", job->name, err.message);
  if (!ctx->quiet) printf("%s: failed: %s\n", job->name, message);
  fflush(stdout);
  cJSON_Delete(rec); /* message may point into it (an input's error) */
  return ok ? BATCH_FAILED : BATCH_UNRECORDED;
}

int batch_job_record_failure(const batch_context *ctx, const batch_manifest *m,
                             const batch_job *job, const char *message, long pid) {
  (void)m;
  batch_paths p;
  if (!batch_job_paths(ctx->out_dir, job, &p)) return BATCH_UNRECORDED;
  cJSON *inputs = batch_inputs_json(job);
  int r = fail_record(ctx, job, &p, inputs, message);
  /* the dead worker's claim, if it got that far */
  char buf[128] = {0}, want[64];
  FILE *f = fopen(p.claim, "rb");
  if (f) {
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    snprintf(want, sizeof want, "pid %ld ", pid);
    if (strncmp(buf, want, strlen(want)) == 0) unlink(p.claim);
  }
  remove_leftovers(ctx->out_dir, job->name);
  return r;
}

static int refuse_overlap(const batch_context *ctx, const batch_manifest *m, const batch_job *job,
                          const batch_paths *p) {
  const char **ins = calloc(job->clip_file_count + 3, sizeof *ins);
  if (!ins) return 1;
  size_t n = 0;
  ins[n++] = job->source;
  ins[n++] = job->target;
  for (size_t i = 0; i < job->clip_file_count; ++i) ins[n++] = job->clip_files[i];
  ins[n++] = m->path;
  const char *outs[4] = {p->glb, p->report, p->record, p->claim};
  int rc = sks_cli_check_outputs(outs, 4, ins, n);
  free(ins);
  return rc;
}

int batch_job_run(const batch_context *ctx, const batch_manifest *m, const batch_job *job) {
  double t0 = now_s();
  batch_paths p;
  if (!batch_job_paths(ctx->out_dir, job, &p)) {
    fprintf(stderr, "skinsolve: batch: %s: output path too long\n", job->name);
    return BATCH_UNRECORDED;
  }
  if (refuse_overlap(ctx, m, job, &p)) {
    fprintf(stderr, "skinsolve: batch: %s: not run: an output would replace an input\n", job->name);
    return BATCH_UNRECORDED;
  }
  cJSON *inputs = batch_inputs_json(job);
  double t_hash = now_s();
  const char *why = "no record yet";
  cJSON *old = batch_record_load(p.record);
  int current = old && batch_record_current(old, job, inputs, &p, &why);
  const char *old_status = old ? str_field(old, "status") : NULL;
  int old_failed = current && old_status && strcmp(old_status, "failed") == 0;
  cJSON_Delete(old);
  if (current && (!old_failed || !ctx->retry_failed)) {
    cJSON_Delete(inputs);
    if (!ctx->quiet) printf("%s: up to date%s\n", job->name, old_failed ? " (failed before)" : "");
    fflush(stdout);
    return old_failed ? BATCH_UP_TO_DATE_FAILED : BATCH_UP_TO_DATE;
  }
  claim c;
  char holder[512] = {0};
  sks_error err;
  memset(&err, 0, sizeof err);
  int got = claim_take(p.claim, ctx->stale_after_s, &c, holder, sizeof holder, &err);
  if (got < 0) {
    cJSON_Delete(inputs);
    fprintf(stderr, "skinsolve: batch: %s: %s\n", job->name, err.message);
    return BATCH_UNRECORDED;
  }
  if (got == 0) {
    cJSON_Delete(inputs);
    if (!ctx->quiet) printf("%s: busy: claimed by %s\n", job->name, holder);
    fflush(stdout);
    return BATCH_BUSY;
  }
  /* another worker may have finished it between our check and our claim */
  old = batch_record_load(p.record);
  if (old && batch_record_current(old, job, inputs, &p, &why)) {
    old_status = str_field(old, "status");
    if (!(ctx->retry_failed && old_status && strcmp(old_status, "failed") == 0)) {
      int failed = old_status && strcmp(old_status, "failed") == 0;
      cJSON_Delete(old);
      cJSON_Delete(inputs);
      claim_release(p.claim, &c);
      if (!ctx->quiet) printf("%s: up to date (done by another worker)\n", job->name);
      fflush(stdout);
      return failed ? BATCH_UP_TO_DATE_FAILED : BATCH_UP_TO_DATE;
    }
  }
  cJSON_Delete(old);
  remove_leftovers(ctx->out_dir, job->name);

  int code = BATCH_BAKED;
  sks_model src, tgt, baked;
  memset(&src, 0, sizeof src);
  memset(&tgt, 0, sizeof tgt);
  memset(&baked, 0, sizeof baked);
  /* the files the Assimp imports read must not be outputs either */
  const char *written[4] = {p.glb, p.report, p.record, p.claim};
  sks_load_options load_opt;
  memset(&load_opt, 0, sizeof load_opt);
  sks_cli_output_guard guard;
  sks_cli_guard_outputs(&guard, &load_opt, written, 4);
  resource_rows heard = {cJSON_CreateArray(), NULL, job};
  guard.also = heard_file; /* and the record lists them */
  guard.also_user = &heard;
  sks_bake_result res;
  memset(&res, 0, sizeof res);
  int have_res = 0;
  uint8_t *glb = NULL; /* the outputs, made in memory and staged together (as bake's) */
  size_t glb_size = 0, html_size = 0;
  char *html = NULL;
  double t_load = 0, t_bake = 0, t_write = 0;
  for (const cJSON *i = inputs ? inputs->child : NULL; i; i = i->next)
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(i, "sha256"))) {
      code = fail_record(ctx, job, &p, inputs, str_field(i, "error"));
      inputs = NULL; /* owned by the record, freed */
      goto done;
    }
  {
    /* a failing load still lists the files it read before it failed */
    heard.role = "source";
    int loaded = sks_load(job->source, &load_opt, &src, &err) == SKS_OK;
    heard.role = "target";
    loaded = loaded && sks_load(job->target, &load_opt, &tgt, &err) == SKS_OK;
    heard.role = "clip_file";
    for (size_t i = 0; loaded && i < job->clip_file_count; ++i)
      loaded = add_clip_file(&src, job->clip_files[i], &load_opt, &err) == SKS_OK;
    heard.role = NULL;
    take_resources(inputs, &heard);
    if (!loaded || guard.hit_output) goto failed;
  }
  claim_heartbeat_start(&c); /* after every fork of the loads */
  t_load = now_s();
  sks_bake_options opt;
  memset(&opt, 0, sizeof opt);
  opt.clip_names = job->clip_count ? (const char *const *)job->clips : NULL;
  opt.clip_name_count = job->clip_count;
  opt.mode = job->mode;
  opt.fps = (float)job->fps;
  opt.max_constraints = job->max_constraints;
  opt.max_residual_pct = job->max_residual_pct;
  opt.keep_surfaces = job->report;
  opt.threads = ctx->bake_threads;
  if (sks_bake(&src, &tgt, &opt, &res, &err) != SKS_OK) goto failed;
  have_res = 1;
  t_bake = now_s();
  if (sks_bake_apply(&tgt, &res, &baked, &err) != SKS_OK) goto failed;
  if (sks_glb_encode(p.glb, &baked, NULL, &glb, &glb_size, &err) != SKS_OK) goto failed;
  if (job->report) {
    char title[512];
    snprintf(title, sizeof title, "batch %s: %s -> %s", job->name, base_name(job->source),
             base_name(job->target));
    sks_bake_result views[2];
    const sks_bake_result *results[2];
    size_t nviews = 0;
    sks_baked_clip *split = malloc((res.clip_count ? res.clip_count : 1) * sizeof *split);
    if (!split) { sks_error_set(&err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", p.report); goto failed; }
    size_t o = 0;
    for (int md = 0; md < 2; ++md) { /* one view per mode, as `bake --report` */
      sks_bake_result v = res;
      v.clips = split + o;
      v.clip_count = 0;
      for (size_t i = 0; i < res.clip_count; ++i)
        if ((int)res.clips[i].mode == md) split[o++] = res.clips[i], v.clip_count++;
      if (v.clip_count) { views[nviews] = v; results[nviews] = &views[nviews]; ++nviews; }
    }
    sks_report_input in = {title, &src, &tgt, results, nviews, 0};
    sks_result rr = sks_report_html(&in, &html, &html_size, &err);
    free(split);
    if (rr != SKS_OK) {
      char msg[sizeof err.message];
      snprintf(msg, sizeof msg, "%s", err.message);
      sks_error_set(&err, rr, "%s: %s", p.report, msg);
      goto failed;
    }
  }
  {
    /* All or nothing: nothing replaces an earlier output before both are
     * complete and fsynced (a failure here keeps the earlier run's files). */
    sks_staged_output st[2];
    size_t ns = 0;
    if (sks_stage_output(&st[ns], p.glb, glb, glb_size, &err) != SKS_OK) goto failed;
    ++ns;
    if (html) { /* sealed to the .glb (sks_cli_report_seal), renamed after it */
      size_t sealed_size = 0;
      char *sealed = sks_cli_report_seal(html, html_size, p.glb, glb, glb_size, &sealed_size);
      if (!sealed) sks_error_set(&err, SKS_ERR_OUT_OF_MEMORY, "%s: out of memory", p.report);
      if (!sealed || sks_stage_output(&st[ns], p.report, sealed, sealed_size, &err) != SKS_OK) {
        free(sealed);
        sks_discard_outputs(st, ns);
        goto failed;
      }
      free(sealed);
      ++ns;
    }
    if (sks_commit_outputs(st, ns, &err) != SKS_OK) goto failed;
    if (!job->report) unlink(p.report); /* from an earlier description of this job */
  }
  t_write = now_s();
  {
    char hex[65];
    sks_sha256_buffer(glb, glb_size, hex);
    cJSON *rec = record_new(ctx, job, inputs);
    inputs = NULL;
    cJSON_AddStringToObject(rec, "status", "ok");
    cJSON_AddStringToObject(rec, "message", "");
    cJSON *outs = cJSON_AddObjectToObject(rec, "outputs");
    cJSON_AddStringToObject(outs, "glb", base_name(p.glb));
    cJSON_AddStringToObject(outs, "glb_sha256", hex);
    if (job->report) cJSON_AddStringToObject(outs, "report", base_name(p.report));
    else cJSON_AddNullToObject(outs, "report");
    cJSON *clips = cJSON_AddArrayToObject(rec, "clips");
    for (size_t i = 0; i < res.clip_count; ++i) cJSON_AddItemToArray(clips, sks_cli_bake_clip_json(&res.clips[i], &tgt));
    cJSON_AddNumberToObject(rec, "constraints", (double)res.constraint_count);
    cJSON_AddNumberToObject(rec, "target_vertices", (double)res.target_vertex_count);
    cJSON_AddNumberToObject(rec, "target_joints", (double)res.target_joint_count);
    cJSON_AddNumberToObject(rec, "diagonal", res.diagonal);
    cJSON *tm = cJSON_AddObjectToObject(rec, "timings_ms");
    cJSON_AddNumberToObject(tm, "hash", 1e3 * (t_hash - t0));
    cJSON_AddNumberToObject(tm, "load", 1e3 * (t_load - t_hash));
    cJSON_AddNumberToObject(tm, "bake", 1e3 * (t_bake - t_load));
    cJSON_AddNumberToObject(tm, "write", 1e3 * (t_write - t_bake));
    cJSON_AddNumberToObject(tm, "total", 1e3 * (now_s() - t0));
    int ok = record_write(p.record, rec, &err);
    cJSON_Delete(rec);
    if (!ok) {
      fprintf(stderr, "skinsolve: batch: %s: %s\n", job->name, err.message);
      code = BATCH_UNRECORDED;
    } else if (!ctx->quiet) {
      printf("%s: baked %zu clip%s in %.2f s\n", job->name, res.clip_count,
             res.clip_count == 1 ? "" : "s", now_s() - t0);
      fflush(stdout);
    }
  }
  goto done;
failed: {
  /* an output an import read: no record is written (it may be that file) */
  char *overlap = sks_cli_guard_message(&guard);
  if (overlap) {
    fprintf(stderr, "skinsolve: batch: %s: not run: %s\n", job->name, overlap);
    free(overlap);
    code = BATCH_UNRECORDED;
    goto done;
  }
  code = fail_record(ctx, job, &p, inputs, err.message);
  inputs = NULL;
}
done:
  cJSON_Delete(heard.arr);
  free(glb);
  free(html);
  if (have_res) sks_bake_result_free(&res);
  sks_model_free(&baked);
  sks_model_free(&src);
  sks_model_free(&tgt);
  cJSON_Delete(inputs);
  claim_release(p.claim, &c);
  return code;
}
