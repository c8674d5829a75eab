/* skinsolve reweight — make a test bake target from a rig: new weights from
 * distance to the bone segments in the bind pose, optional coarsening and
 * renaming, clips removed, written as GLB. */
#include <string.h>
#include "cli.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: skinsolve reweight FILE -o OUT.glb [--coarsen] [--rename]\n\n"
          "Makes a bake target from a rigged file (a test-rig maker, not an auto-rigger):\n"
          "every skinned part gets new weights from the distance of each bind-pose\n"
          "vertex to the bone segments (w = 1/(d+eps)^4, 4 largest kept, normalised),\n"
          "over the joints that carry weight in FILE. The output's rest pose is the\n"
          "bind pose implied by FILE's inverse bind matrices; it has no clips.\n"
          "A glTF FILE keeps its materials, textures, extensions and node layout\n"
          "(not with --coarsen, which rebuilds the skeleton: then the core material's\n"
          "factors and PNG / JPEG textures (base colour, metallic-roughness, normal,\n"
          "occlusion, emissive) with their samplers and UV sets 0 / 1, emissive\n"
          "strength, the tangents and the morph targets, without morph animation).\n\n"
          "options:\n"
          "  -o, --output OUT.glb  where to write the target (glTF binary)\n"
          "  --coarsen             remove every second weighted joint of each chain\n"
          "                        (children re-parented, transforms composed)\n"
          "  --rename              name joints bone_0..bone_N\n"
          "  -h, --help            this text\n"
          SKS_CLI_LOAD_OPTIONS_HELP "\n"
          "exit codes: 0 ok, 1 bad input, 2 usage error, 3 output could not be written\n");
}

int sks_cmd_reweight(int argc, char **argv) {
  const char *in = NULL, *out_path = NULL;
  sks_reweight_options opt = {0, 0};
  sks_load_options load_opt = {0};
  for (int i = 1; i < argc; ++i) {
    if (sks_cli_is_help(argv[i])) { usage(stdout); return SKS_EXIT_OK; }
    { int lr = sks_cli_load_option(argc, argv, &i, &load_opt); if (lr < 0) return SKS_EXIT_USAGE; if (lr) continue; }
    if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
      if (i + 1 >= argc) { usage(stderr); return sks_cli_fail(SKS_EXIT_USAGE, "%s needs a file name", argv[i]); }
      out_path = argv[++i];
    } else if (!strcmp(argv[i], "--coarsen")) {
      opt.coarsen = 1;
    } else if (!strcmp(argv[i], "--rename")) {
      opt.rename = 1;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      usage(stderr);
      return sks_cli_fail(SKS_EXIT_USAGE, "reweight: unknown option '%s'", argv[i]);
    } else if (!in) {
      in = argv[i];
    } else {
      usage(stderr);
      return sks_cli_fail(SKS_EXIT_USAGE, "reweight: more than one input file ('%s', '%s')", in, argv[i]);
    }
  }
  if (!in || !out_path) {
    usage(stderr);
    return sks_cli_fail(SKS_EXIT_USAGE, "reweight: %s", !in ? "no input file" : "no output file (-o OUT.glb)");
  }
  const char *inputs[1] = {in};
  int rc = sks_cli_check_output(out_path, inputs, 1);
  if (rc) return rc;
  sks_model model, target;
  sks_error err = {0};
  sks_cli_output_guard guard;
  sks_cli_guard_outputs(&guard, &load_opt, &out_path, 1);
  if (sks_load(in, &load_opt, &model, &err) != SKS_OK) return sks_cli_guard_load_failed(&guard, err.message);
  if ((rc = sks_cli_guard_check(&guard)) != 0) {
    sks_model_free(&model);
    return rc;
  }
  for (size_t w = 0; w < model.warning_count; ++w) fprintf(stderr, "warning: %s\n", model.warnings[w]);
  sks_result r = sks_reweight(&model, &opt, &target, &err);
  if (r != SKS_OK) {
    sks_model_free(&model);
    return sks_cli_fail(SKS_EXIT_INPUT, "%s", err.message);
  }
  size_t weighted = 0;
  for (size_t k = 0; k < target.skin_count; ++k) weighted += target.skins[k].joint_count;
  r = sks_write_glb(out_path, &target, NULL, &err);
  if (r != SKS_OK) {
    sks_model_free(&model);
    sks_model_free(&target);
    return sks_cli_fail(r == SKS_ERR_IO ? SKS_EXIT_OUTPUT : SKS_EXIT_INPUT, "%s", err.message);
  }
  printf("wrote %s: %zu joints (was %zu), %zu weighted, %zu skinned vertices, %zu clips removed\n",
         out_path, target.skeleton.joint_count, model.skeleton.joint_count, weighted,
         sks_model_vertex_count(&target), model.clip_count);
  sks_model_free(&model);
  sks_model_free(&target);
  return SKS_EXIT_OK;
}
