/* skinsolve repair: fix what can be fixed in a rig's skin data, optionally
 * limit influences per vertex, check again, and write the result as .glb.
 * Nothing is written when errors remain that repair cannot fix. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "cli.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: skinsolve repair FILE -o OUT.glb [--max-influences K]\n"
          "\n"
          "Repairs skin data and writes the rig (mesh parts, skins, materials, clips) as\n"
          "binary glTF:\n"
          "  - NaN / infinite / negative weights become 0\n"
          "  - influences on joints outside the skin are dropped\n"
          "  - weights are renormalised to sum to 1 (0.7 / 0.5 -> 0.583 / 0.417)\n"
          "  - a vertex with no weight left is bound to its part's node joint\n"
          "    (or the skin's first joint)\n"
          "  - with --max-influences K: only the K largest weights per vertex are kept\n"
          "    (then renormalised)\n"
          "Afterwards the rig is checked again; if errors remain that repair cannot fix\n"
          "(singular bind matrices, hierarchy cycles, non-finite positions, ...) they are\n"
          "listed and nothing is written.\n"
          "A glTF FILE is written back with everything repair does not change kept as\n"
          "in the file (materials, textures, images, extensions, extras, node names and\n"
          "hierarchy, cameras, lights, morph targets); only the repaired weights are new.\n"
          "\n"
          "options:\n"
          "  -o, --output OUT.glb    where to write (temp file + rename; never the input)\n"
          "  --max-influences K      keep at most K influences per vertex (1..8)\n"
          "  -h, --help              this text\n"
          SKS_CLI_LOAD_OPTIONS_HELP
          "\n"
          "examples:\n"
          "  skinsolve repair broken.glb -o fixed.glb\n"
          "  skinsolve repair Testwuson.X -o testwuson_4.glb --max-influences 4\n"
          "\n"
          "exit codes: 0 written, 1 bad input or errors remain after repair,\n"
          "            2 usage error (also: OUT is the input), 3 OUT could not be written\n");
}

static int has_glb_extension(const char *path) {
  size_t n = strlen(path);
  return n > 4 && strcasecmp(path + n - 4, ".glb") == 0;
}

int sks_cmd_repair(int argc, char **argv) {
  sks_load_options load_opt = {0};
  const char *file = NULL, *out = NULL, *v = NULL;
  unsigned long limit = 0;
  for (int i = 1; i < argc; ++i) {
    int r;
    if (sks_cli_is_help(argv[i])) { usage(stdout); return SKS_EXIT_OK; }
    { int lr = sks_cli_load_option(argc, argv, &i, &load_opt); if (lr < 0) return SKS_EXIT_USAGE; if (lr) continue; }
    if ((r = sks_cli_opt(argc, argv, &i, "--max-influences", &v)) != 0) {
      if (r < 0 || sks_cli_parse_uint("--max-influences", v, SKS_MAX_INFLUENCES, &limit)) return SKS_EXIT_USAGE;
      if (limit == 0) return sks_cli_fail(SKS_EXIT_USAGE, "--max-influences must be 1..%d", SKS_MAX_INFLUENCES);
      continue;
    }
    if ((r = sks_cli_opt(argc, argv, &i, "--output", &out)) != 0 ||
        (r = sks_cli_opt(argc, argv, &i, "-o", &out)) != 0) {
      if (r < 0) return SKS_EXIT_USAGE;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1]) {
      usage(stderr);
      return sks_cli_fail(SKS_EXIT_USAGE, "repair: unknown option '%s'", argv[i]);
    }
    if (file) return sks_cli_fail(SKS_EXIT_USAGE, "repair: one FILE only ('%s' is extra)", argv[i]);
    file = argv[i];
  }
  if (!file) { usage(stderr); return sks_cli_fail(SKS_EXIT_USAGE, "repair: no FILE given"); }
  if (!out) return sks_cli_fail(SKS_EXIT_USAGE, "repair: no output given (-o OUT.glb)");
  if (!has_glb_extension(out))
    return sks_cli_fail(SKS_EXIT_USAGE, "%s: repair writes binary glTF; name the output *.glb", out);
  const char *inputs[1] = {file};
  int rc = sks_cli_check_output(out, inputs, 1);
  if (rc) return rc;

  sks_model m;
  sks_cli_output_guard guard;
  sks_cli_guard_outputs(&guard, &load_opt, &out, 1);
  rc = sks_cli_load_with(file, &load_opt, &m);
  if (!rc && (rc = sks_cli_guard_check(&guard)) != 0) sks_model_free(&m);
  if (rc) return rc;
  sks_error err;
  memset(&err, 0, sizeof err);
  sks_findings before, after;
  memset(&before, 0, sizeof before);
  memset(&after, 0, sizeof after);
  sks_repair_report rep;
  memset(&rep, 0, sizeof rep);
  sks_result r = sks_check(&m, NULL, &before, &err);
  if (r == SKS_OK) r = sks_repair(&m, &rep, &err);
  size_t limited = 0;
  if (r == SKS_OK && limit) {
    sks_check_options lo;
    memset(&lo, 0, sizeof lo);
    lo.max_influences = (uint32_t)limit;
    sks_findings over;
    r = sks_check(&m, &lo, &over, &err);
    if (r == SKS_OK) {
      limited = over.total_by_kind[SKS_FINDING_TOO_MANY_INFLUENCES];
      sks_findings_free(&over);
      r = sks_limit_influences(&m, (uint32_t)limit, &err);
    }
  }
  if (r == SKS_OK) r = sks_check(&m, NULL, &after, &err);
  if (r != SKS_OK) {
    rc = sks_cli_fail(SKS_EXIT_INPUT, "%s", err.message);
    goto done;
  }
  printf("%s: %zu errors, %zu warnings before repair\n", file, before.error_count, before.warning_count);
  printf("repaired: %zu vertices renormalised, %zu negative weights clamped, %zu NaN weights zeroed,\n"
         "          %zu out-of-range influences dropped, %zu all-zero vertices bound to their node,\n"
         "          %zu vertices limited to %lu influences\n",
         rep.normalized, rep.negatives_clamped, rep.nans_zeroed, rep.out_of_range_dropped,
         rep.zero_weight_vertices, limited + rep.influences_limited,
         limit ? limit : (unsigned long)SKS_MAX_INFLUENCES);
  if (after.error_count) {
    for (size_t i = 0; i < after.count && i < 20; ++i)
      if (after.items[i].severity == SKS_SEVERITY_ERROR) fprintf(stderr, "error: %s\n", after.items[i].message);
    rc = sks_cli_fail(SKS_EXIT_INPUT, "%s: %zu errors remain that repair cannot fix; nothing written",
                      file, after.error_count);
    goto done;
  }
  r = sks_write_glb(out, &m, NULL, &err);
  if (r != SKS_OK) {
    rc = sks_cli_fail(sks_cli_exit_for_write(r), "%s", err.message);
    goto done;
  }
  printf("wrote %s\n", out);
done:
  sks_findings_free(&before);
  sks_findings_free(&after);
  sks_model_free(&m);
  return rc;
}
