/* skinsolve pose — PLACEHOLDER: must be replaced by the real command. */
#include "cli.h"

int sks_cmd_pose(int argc, char **argv) {
  (void)argc; (void)argv;
  return sks_cli_fail(SKS_EXIT_USAGE, "'pose' is not implemented yet");
}
