/* skinsolve CLI: dispatch to one subcommand per file. */
#include <stdarg.h>
#include <string.h>
#include "cli.h"

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} command;

static const command commands[] = {
  {"info", sks_cmd_info, "skeleton tree, mesh parts, clips and weight findings of a file"},
  {"pose", sks_cmd_pose, "skin every mesh part at a clip time (LBS or DQS), write .obj or .f32"},
  {"check", sks_cmd_check, "report skin-data problems (weights, joints, bind matrices, hierarchy)"},
  {"repair", sks_cmd_repair, "fix skin-data problems and write the repaired rig as .glb"},
  {"bake", sks_cmd_bake, "solve a source rig's clips onto a target rig (surface solve)"},
  {"control", sks_cmd_control, "bake a file's clips onto itself: the solver's control run"},
  {"refit", sks_cmd_refit, "re-fit a target rig's skin weights from a source's clips (weight doctor)"},
  {"reweight", sks_cmd_reweight, "make a test target rig: distance weights, optional coarsen/rename"},
  {"batch", sks_cmd_batch, "bake a JSON Lines manifest: resumable, sharded (k8s / Slurm), J workers"},
};

int sks_cli_fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("skinsolve: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return code;
}

int sks_cli_is_help(const char *arg) {
  return arg && (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0);
}

static void usage(FILE *f) {
  fprintf(f,
          "skinsolve %s — load, skin, check and re-target rigged animation\n\n"
          "usage: skinsolve COMMAND [options]   (skinsolve COMMAND --help for details)\n\n"
          "commands:\n",
          SKS_VERSION_STRING);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i)
    fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
  fprintf(f,
          "\nexit codes: 0 ok, 1 bad input or failed operation, 2 usage error,\n"
          "            3 output could not be written\n");
}

int main(int argc, char **argv) {
  if (argc < 2 || sks_cli_is_help(argv[1])) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? SKS_EXIT_USAGE : SKS_EXIT_OK;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("skinsolve %s\n", SKS_VERSION_STRING);
    return SKS_EXIT_OK;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i)
    if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
  usage(stderr);
  return sks_cli_fail(SKS_EXIT_USAGE, "unknown command '%s'", argv[1]);
}
