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

/* Prints "skinsolve: <message>" to stderr and returns code. */
int sks_cli_fail(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* 1 if argv[i] is -h or --help. */
int sks_cli_is_help(const char *arg);

#endif
