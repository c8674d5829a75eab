/* skinsolve check: report skin-data problems; exit 1 when any is an error. */
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "cli.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: skinsolve check FILE [--json] [--max-influences K] [--tolerance T] [--all]\n"
          "\n"
          "Checks a rig's skin data and prints one line per finding, naming the file,\n"
          "mesh part, vertex and joint:\n"
          "  Fox.glb: part 0 'fox', vertex 812: weights sum to 0 \xe2\x80\x94 cannot normalise\n"
          "\n"
          "errors:   weights not summing to 1 (within T), negative or NaN weights,\n"
          "          all-zero weights, joint index out of range, non-invertible or\n"
          "          non-finite inverse bind matrices, hierarchy cycles / parents after\n"
          "          children, non-finite positions, triangle indices out of range,\n"
          "          more influence slots than the kernels take (8)\n"
          "warnings: vertices with more non-zero influences than K; vertices that had\n"
          "          more influences in the file than the kernels take (8): the loader\n"
          "          kept the 8 largest (one line per part, at the first such vertex)\n"
          "Most weight errors are fixed by `skinsolve repair`. What the load itself warns\n"
          "of (parts of the file left out, or a glTF a validator would reject, e.g. a\n"
          "bufferView outside its buffer) is printed on stderr and counted at the end\n"
          "of the summary line (\"; N load warnings\"); it does not change the exit code.\n"
          "\n"
          "options:\n"
          "  --json                one JSON object {file, errors, warnings, by_kind, items[],\n"
          "                        load_warnings[]}\n"
          "  --max-influences K    warn about vertices with more than K non-zero weights\n"
          "                        (default 8; 4 for a classic GPU vertex shader)\n"
          "  --tolerance T         allowed |sum of weights - 1| (default 0.001)\n"
          "  --all                 print every finding (default: the first 50 lines)\n"
          "  -h, --help            this text\n"
          SKS_CLI_LOAD_OPTIONS_HELP
          "\n"
          "examples:\n"
          "  skinsolve check Fox.glb\n"
          "  skinsolve check rig.fbx --max-influences 4 --json\n"
          "\n"
          "exit codes: 0 no error findings (warnings allowed), 1 error findings or the\n"
          "            file cannot be read, 2 usage error\n");
}

int sks_cmd_check(int argc, char **argv) {
  sks_load_options load_opt = {0};
  const char *file = NULL, *v = NULL;
  int json = 0, all = 0;
  sks_check_options opt;
  memset(&opt, 0, sizeof opt);
  for (int i = 1; i < argc; ++i) {
    int r;
    if (sks_cli_is_help(argv[i])) { usage(stdout); return SKS_EXIT_OK; }
    { int lr = sks_cli_load_option(argc, argv, &i, &load_opt); if (lr < 0) return SKS_EXIT_USAGE; if (lr) continue; }
    if (strcmp(argv[i], "--json") == 0) { json = 1; continue; }
    if (strcmp(argv[i], "--all") == 0) { all = 1; continue; }
    if ((r = sks_cli_opt(argc, argv, &i, "--max-influences", &v)) != 0) {
      unsigned long k;
      if (r < 0 || sks_cli_parse_uint("--max-influences", v, SKS_MAX_INFLUENCES, &k)) return SKS_EXIT_USAGE;
      if (k == 0) return sks_cli_fail(SKS_EXIT_USAGE, "--max-influences must be 1..%d", SKS_MAX_INFLUENCES);
      opt.max_influences = (uint32_t)k;
      continue;
    }
    if ((r = sks_cli_opt(argc, argv, &i, "--tolerance", &v)) != 0) {
      if (r < 0 || sks_cli_parse_float("--tolerance", v, &opt.sum_tolerance)) return SKS_EXIT_USAGE;
      if (!(opt.sum_tolerance > 0.0f))
        return sks_cli_fail(SKS_EXIT_USAGE, "--tolerance must be greater than 0");
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1]) {
      usage(stderr);
      return sks_cli_fail(SKS_EXIT_USAGE, "check: unknown option '%s'", argv[i]);
    }
    if (file) return sks_cli_fail(SKS_EXIT_USAGE, "check: one FILE only ('%s' is extra)", argv[i]);
    file = argv[i];
  }
  if (!file) {
    usage(stderr);
    return sks_cli_fail(SKS_EXIT_USAGE, "check: no FILE given");
  }
  sks_model m;
  int rc = sks_cli_load_with(file, &load_opt, &m);
  if (rc) return rc;
  opt.max_items = 100000;
  sks_findings f;
  sks_error err;
  memset(&err, 0, sizeof err);
  if (sks_check(&m, &opt, &f, &err) != SKS_OK) {
    sks_model_free(&m);
    return sks_cli_fail(SKS_EXIT_INPUT, "%s", err.message);
  }
  if (json) {
    cJSON *o = sks_cli_findings_json(&f, all ? f.count : 1000);
    cJSON_AddItemToObjectCS(o, "file", cJSON_CreateString(file));
    /* what the load itself warned of (stderr too): left out of the model,
     * or a file a validator would reject (e.g. a bufferView outside its buffer) */
    sks_cli_add_load_warnings(o, &m);
    char *s = cJSON_Print(o);
    if (s) { puts(s); free(s); }
    cJSON_Delete(o);
  } else {
    size_t shown = all ? f.count : (f.count < 50 ? f.count : 50);
    for (size_t i = 0; i < shown; ++i)
      printf("%s: %s\n", f.items[i].severity == SKS_SEVERITY_ERROR ? "error" : "warning",
             f.items[i].message);
    size_t total = f.error_count + f.warning_count;
    if (total > shown) printf("... %zu more (--all shows every one)\n", total - shown);
    printf("%s: %zu errors, %zu warnings", file, f.error_count, f.warning_count);
    int first = 1;
    for (int k = 0; k < SKS_FINDING_KIND_COUNT; ++k)
      if (f.total_by_kind[k]) {
        printf("%s%s %zu", first ? " (" : ", ", sks_finding_kind_name((sks_finding_kind)k), f.total_by_kind[k]);
        first = 0;
      }
    printf("%s", first ? "" : ")");
    /* the load's own warnings are printed on stderr before this line */
    if (m.warning_count) printf("; %zu load warning%s (on stderr)", m.warning_count, m.warning_count == 1 ? "" : "s");
    printf("\n");
  }
  int code = f.error_count ? SKS_EXIT_INPUT : SKS_EXIT_OK;
  sks_findings_free(&f);
  sks_model_free(&m);
  return code;
}
