/* skinsolve check — PLACEHOLDER: must be replaced by the real command. */
#include "cli.h"

int sks_cmd_check(int argc, char **argv) {
  (void)argc; (void)argv;
  return sks_cli_fail(SKS_EXIT_USAGE, "'check' is not implemented yet");
}
