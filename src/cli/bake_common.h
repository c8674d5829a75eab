/* Shared by `skinsolve bake` and `skinsolve control` (solver-owned). */
#ifndef SKS_CLI_BAKE_COMMON_H
#define SKS_CLI_BAKE_COMMON_H

/* Parses the shared bake options from argv[first..argc) and runs the bake.
 * control != 0: source and target are the same file (loaded once). */
int sks_cli_bake_main(const char *cmd, const char *source_path, const char *target_path,
                      int argc, char **argv, int first, int control);

#endif
