/* skinsolve bake — PLACEHOLDER: must be replaced by the real command. */
#include "cli.h"

int sks_cmd_bake(int argc, char **argv) {
  (void)argc; (void)argv;
  return sks_cli_fail(SKS_EXIT_USAGE, "'bake' is not implemented yet");
}
