/* skinsolve info — PLACEHOLDER: must be replaced by the real command. */
#include "cli.h"

int sks_cmd_info(int argc, char **argv) {
  (void)argc; (void)argv;
  return sks_cli_fail(SKS_EXIT_USAGE, "'info' is not implemented yet");
}
