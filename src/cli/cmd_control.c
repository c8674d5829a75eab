/* skinsolve control — bake a file's clips onto itself: the solver's control
 * run. A perfect solution exists by construction (seed 003). */
#include <string.h>
#include "bake_common.h"
#include "cli.h"

static void control_usage(FILE *f) {
  fprintf(f,
          "usage: skinsolve control FILE [--clip NAME]... [--json] [--report OUT.html]\n"
          "                         [--report-max-mb MB]\n"
          "                         [--mode free|rotation-only|both] [--solver default|bcd]\n"
          "                         [--max-constraints N] [--fps F] [-o OUT.glb]\n"
          "                         [--clips ANIM_FILE...] [--keep-clips|--replace-clips] [--quiet]\n"
          "                         [--threads N]\n"
          "\n"
          "Bakes FILE's clips onto FILE itself. The exact answer is known, so this checks\n"
          "the solver: expect quality ~100%%, mean error <= 0.001%%D, worst <= 0.01%%D.\n"
          "--clips ANIM_FILE... bakes the clips of these animation files instead, applied\n"
          "to FILE's skeleton by joint name. Other options as for skinsolve bake --help.\n\n"
          SKS_CLI_LOAD_OPTIONS_HELP);
}

int sks_cmd_control(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (sks_cli_is_help(argv[i])) { control_usage(stdout); return SKS_EXIT_OK; }
  if (argc < 2 || argv[1][0] == '-') {
    control_usage(stderr);
    return sks_cli_fail(SKS_EXIT_USAGE, "control: FILE is required");
  }
  return sks_cli_bake_main("control", argv[1], argv[1], argc, argv, 2, 1);
}
