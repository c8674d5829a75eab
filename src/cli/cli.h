/* The CLI is thin: one file per subcommand, each parsing its own options and
 * calling the library. Exit codes (README): 0 ok, 1 bad input / failed
 * operation, 2 usage error, 3 output could not be written. */
#ifndef SKS_CLI_H
#define SKS_CLI_H

#include <stdio.h>
#include "skinsolve/skinsolve.h"

enum { SKS_EXIT_OK = 0, SKS_EXIT_INPUT = 1, SKS_EXIT_USAGE = 2, SKS_EXIT_OUTPUT = 3 };

int sks_cmd_info(int argc, char **argv);
int sks_cmd_pose(int argc, char **argv);
int sks_cmd_check(int argc, char **argv);
int sks_cmd_repair(int argc, char **argv);
int sks_cmd_bake(int argc, char **argv);
int sks_cmd_control(int argc, char **argv);
int sks_cmd_reweight(int argc, char **argv);
int sks_cmd_refit(int argc, char **argv);
int sks_cmd_batch(int argc, char **argv);

/* Prints "skinsolve: <message>" to stderr and returns code. */
int sks_cli_fail(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* 1 if argv[i] is -h or --help. */
int sks_cli_is_help(const char *arg);

/* ---- shared helpers (src/cli/cli_util.c) ---- */

/* Option parsing: if argv[*i] is `name VALUE` or `name=VALUE`, sets *value,
 * advances *i past it and returns 1; returns -1 (after printing a usage
 * error) when the value is missing; 0 when argv[*i] is not this option. */
int sks_cli_opt(int argc, char **argv, int *i, const char *name, const char **value);
/* Parses a finite number / a non-negative integer; 0 on success, else prints
 * "skinsolve: <option>: '<text>' is not a ..." and returns SKS_EXIT_USAGE. */
int sks_cli_parse_float(const char *option, const char *text, float *out);
int sks_cli_parse_uint(const char *option, const char *text, unsigned long max, unsigned long *out);
/* Loads a model with sks_load; on error prints one line naming the file and
 * returns SKS_EXIT_INPUT (0 on success). */
int sks_cli_load(const char *path, sks_model *out);
/* The same with load options (Assimp child limits). */
int sks_cli_load_with(const char *path, const sks_load_options *options, sks_model *out);
/* The loading options every command that reads a file takes:
 *   --max-memory SIZE  Assimp child's memory limit (bytes, or 512M, 2G; default 2G)
 *   --timeout SECONDS  Assimp child's CPU and wall-clock limit (default 30)
 * 1 if argv[*i] was one (sets *o, advances *i), -1 on a bad value (usage
 * error printed), 0 if not. */
int sks_cli_load_option(int argc, char **argv, int *i, sks_load_options *o);
/* One line per option for the --help texts. */
#define SKS_CLI_LOAD_OPTIONS_HELP                                                      \
  "  --max-memory SIZE     memory limit of the Assimp import process (non-glTF files):\n" \
  "                        bytes or 512M / 2G (default 2G)\n"                            \
  "  --timeout SECONDS     time limit of the Assimp import process (default 30)\n"
/* Refuses (SKS_EXIT_USAGE, message printed) when `output` is the same file
 * as any of the inputs (same device + inode, so links and ./x vs x count),
 * names a folder, or is an existing non-regular file. 0 when fine. */
int sks_cli_check_output(const char *output, const char *const *inputs, size_t input_count);
/* The same for several outputs (NULL entries skipped): each must also be a
 * regular file when it exists (devices and FIFOs are refused) and differ
 * from every other output. */
int sks_cli_check_outputs(const char *const *outputs, size_t output_count,
                          const char *const *inputs, size_t input_count);
/* The files a load reads besides the input (a glTF's external buffers and
 * images, what an Assimp import opens: an .obj's .mtl, textures, files a
 * Collada or .x names) are known only once it ran: a guard installed in the
 * load options hears of each (sks_load_options.on_file_read) and compares
 * it, device + inode, with every output; the command calls
 * sks_cli_guard_check after its loads and before it writes anything. */
typedef struct sks_cli_output_guard {
  const char *const *outputs; /* NULL entries skipped */
  size_t output_count;
  char *hit_output; /* the first output a load read, and the file as opened */
  char *hit_file;
  /* told of every file too, before the comparison (batch lists them in its
   * records); NULL = nobody */
  void (*also)(void *user, const char *path);
  void *also_user;
} sks_cli_output_guard;
void sks_cli_guard_outputs(sks_cli_output_guard *g, sks_load_options *o, const char *const *outputs,
                           size_t output_count);
/* 0, or SKS_EXIT_USAGE with "refusing to write OUT: an input's import reads
 * or names it (as FILE; choose another output)" printed. */
int sks_cli_guard_check(sks_cli_output_guard *g);
/* A load failed with `message`: the files it read before failing count
 * too, so an output among them is the usage error (SKS_EXIT_USAGE, the
 * guard's message); else the message, SKS_EXIT_INPUT. sks_cli_load_with
 * does the same when its options carry a guard. */
int sks_cli_guard_load_failed(sks_cli_output_guard *g, const char *message);
/* The guard installed in these load options (sks_cli_guard_outputs), or NULL. */
sks_cli_output_guard *sks_cli_guard_of(const sks_load_options *o);
/* That message (malloc'd) for a caller that reports it itself, or NULL when
 * no output was read. Both release what the guard holds. */
char *sks_cli_guard_message(sks_cli_output_guard *g);
/* Findings as a JSON object {errors, warnings, by_kind, items[], truncated}
 * (the shape of `check --json` and info's "findings"); caller owns it. */
struct cJSON *sks_cli_findings_json(const sks_findings *f, size_t max_items);
/* Adds to obj the array "load_warnings": the load's own warnings (the model's
 * warnings, printed on stderr by sks_cli_load_with), for check / info --json. */
void sks_cli_add_load_warnings(struct cJSON *obj, const sks_model *m);
/* Exit code for a failed write: 3 for I/O, 2 for a bad argument (e.g. an
 * unknown extension), else 1. */
int sks_cli_exit_for_write(sks_result r);

/* ---- --clips ANIM_FILE... (src/cli/cli_clips.c) ---- */

/* If argv[*i] is --clips, appends every following argument up to the next
 * option to files (room for argc entries), advances *i and returns 1; -1
 * (usage error printed) when no file follows; 0 when not this option. */
int sks_cli_opt_clips(int argc, char **argv, int *i, const char **files, size_t *n);
/* Replaces model->clips with the clips of the n files, applied to the model's
 * skeleton by joint name (sks_clips_from_model). Prints each file's match
 * report to stderr unless quiet. 0, or SKS_EXIT_INPUT (message printed;
 * the model is unchanged). */
int sks_cli_load_clips(sks_model *model, const char *const *files, size_t n, int quiet,
                       const sks_load_options *options);

#endif
