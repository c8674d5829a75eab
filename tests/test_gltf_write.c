/* GLB writer: procedural and real rigs written, validated by the Khronos
 * validator (0 errors), and read back: by an independent minimal GLB parser
 * here (exact arrays, alignment, layout rules) and by the library's reader. */
#include "test_gltf_write_rig.h"

static int validator_skipped = 0;

static void validate(const char *path) {
  if (!tgw_validator_available()) {
    if (!validator_skipped)
      fprintf(stderr, "SKIP part: glTF validator not installed (run `cd tools && npm install`)\n");
    validator_skipped = 1;
    return;
  }
  CHECK_MSG(tgw_validate(path) == 0, "validator reports errors for %s", path);
}

static int same_f(const float *a, const float *b, size_t n, float tol) {
  for (size_t i = 0; i < n; ++i)
    if (!(fabsf(a[i] - b[i]) <= tol)) {
      fprintf(stderr, "  differ at %zu: %.9g vs %.9g\n", i, (double)a[i], (double)b[i]);
      return 0;
    }
  return 1;
}

/* The GLB holds exactly the model: nodes = joints (+ hosts), parts in node
 * order equal to model parts, skins, clips. Weights: exact when the model's
 * weights already sum to 1 (float), joints compared where weight != 0. */
static void compare_glb_to_model(const char *path, const sks_model *m, float wtol) {
  tgw_glb g;
  CHECK_MSG(tgw_glb_open(path, &g), "cannot parse %s", path);
  if (!g.json) { tgw_glb_close(&g); return; }
  CHECK_MSG(g.aligned, "%s: chunks / bufferViews not 4-byte aligned", path);
  const sks_skeleton *sk = &m->skeleton;
  cJSON *nodes = cJSON_GetObjectItem(g.json, "nodes");
  CHECK((size_t)cJSON_GetArraySize(nodes) >= sk->joint_count);
  for (size_t i = 0; i < sk->joint_count; ++i) {
    cJSON *n = cJSON_GetArrayItem(nodes, (int)i);
    CHECK_MSG(n && !strcmp(cJSON_GetObjectItem(n, "name")->valuestring, sk->names[i]), "node %zu name", i);
    float trs[10] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1};
    const char *keys[3] = {"translation", "rotation", "scale"};
    int offs[3] = {0, 3, 7}, lens[3] = {3, 4, 3};
    for (int k = 0; k < 3; ++k) {
      cJSON *a = cJSON_GetObjectItem(n, keys[k]);
      for (int c = 0; a && c < lens[k]; ++c) trs[offs[k] + c] = (float)cJSON_GetArrayItem(a, c)->valuedouble;
    }
    CHECK_MSG(same_f(trs, &sk->rest[i].translation.x, 10, 0.0f), "node %zu rest TRS", i);
    cJSON *ch = cJSON_GetObjectItem(n, "children"), *c;
    cJSON_ArrayForEach(c, ch) {
      int ci = c->valueint;
      if ((size_t)ci < sk->joint_count) CHECK_MSG(sk->parents[ci] == (int32_t)i, "child %d of %zu", ci, i);
    }
  }
  /* parts in node order */
  size_t part = 0;
  cJSON *meshes = cJSON_GetObjectItem(g.json, "meshes"), *n;
  int node_index = 0;
  cJSON_ArrayForEach(n, nodes) {
    int mi = tgw_int(n, "mesh", -1);
    if (mi >= 0) {
      int has_skin = cJSON_GetObjectItem(n, "skin") != NULL;
      if (has_skin) { /* skinned mesh hosts: root, no transform */
        CHECK(!cJSON_GetObjectItem(n, "translation") && !cJSON_GetObjectItem(n, "rotation") &&
              !cJSON_GetObjectItem(n, "scale") && !cJSON_GetObjectItem(n, "matrix"));
        cJSON *roots = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(g.json, "scenes"), 0), "nodes"), *r;
        int is_root = 0;
        cJSON_ArrayForEach(r, roots) is_root |= r->valueint == node_index;
        CHECK_MSG(is_root, "skinned mesh node %d is a scene root", node_index);
      }
      cJSON *prim;
      cJSON_ArrayForEach(prim, cJSON_GetObjectItem(cJSON_GetArrayItem(meshes, mi), "primitives")) {
        if (part >= m->part_count) { CHECK_MSG(0, "more primitives than parts"); break; }
        const sks_mesh_part *p = &m->parts[part];
        cJSON *attr = cJSON_GetObjectItem(prim, "attributes");
        size_t cnt; int nc;
        float *pos = tgw_accessor(&g, tgw_int(attr, "POSITION", -1), &cnt, &nc);
        CHECK_MSG(pos && cnt == p->vertex_count && nc == 3 && same_f(pos, p->positions, cnt * 3, 0.0f),
                  "part %zu positions", part);
        /* min/max are exact */
        cJSON *acc = cJSON_GetArrayItem(cJSON_GetObjectItem(g.json, "accessors"), tgw_int(attr, "POSITION", -1));
        for (int c = 0; pos && c < 3; ++c) {
          float lo = INFINITY, hi = -INFINITY;
          for (size_t v = 0; v < cnt; ++v) { lo = fminf(lo, pos[3 * v + c]); hi = fmaxf(hi, pos[3 * v + c]); }
          CHECK(cJSON_GetArrayItem(cJSON_GetObjectItem(acc, "min"), c)->valuedouble == (double)lo);
          CHECK(cJSON_GetArrayItem(cJSON_GetObjectItem(acc, "max"), c)->valuedouble == (double)hi);
        }
        free(pos);
        if (p->normals) {
          float *nrm = tgw_accessor(&g, tgw_int(attr, "NORMAL", -1), &cnt, &nc);
          int ok = nrm && cnt == p->vertex_count;
          for (size_t v = 0; ok && v < cnt; ++v) {
            sks_vec3 a = sks_v3_normalize(sks_v3(p->normals[3 * v], p->normals[3 * v + 1], p->normals[3 * v + 2]));
            ok = fabsf(a.x - nrm[3 * v]) < 1e-6f && fabsf(a.y - nrm[3 * v + 1]) < 1e-6f &&
                 fabsf(a.z - nrm[3 * v + 2]) < 1e-6f;
          }
          CHECK_MSG(ok, "part %zu normals (normalised)", part);
          free(nrm);
        }
        if (p->uvs) {
          float *uv = tgw_accessor(&g, tgw_int(attr, "TEXCOORD_0", -1), &cnt, &nc);
          CHECK_MSG(uv && cnt == p->vertex_count && same_f(uv, p->uvs, cnt * 2, 0.0f), "part %zu uvs", part);
          free(uv);
        }
        if (p->skin >= 0) {
          CHECK(tgw_int(n, "skin", -1) == p->skin);
          float *jw[4] = {NULL, NULL, NULL, NULL};
          int sets = cJSON_GetObjectItem(attr, "JOINTS_1") ? 2 : 1;
          CHECK_MSG(sets * 4 >= (int)p->influence_count, "part %zu has %d JOINTS sets", part, sets);
          for (int s = 0; s < sets; ++s) {
            char key[16];
            snprintf(key, sizeof key, "JOINTS_%d", s);
            jw[2 * s] = tgw_accessor(&g, tgw_int(attr, key, -1), &cnt, &nc);
            snprintf(key, sizeof key, "WEIGHTS_%d", s);
            jw[2 * s + 1] = tgw_accessor(&g, tgw_int(attr, key, -1), &cnt, &nc);
          }
          int ok = 1;
          for (size_t v = 0; ok && v < p->vertex_count; ++v) {
            /* per source joint: source weight == written weight */
            for (uint32_t i = 0; ok && i < p->influence_count; ++i) {
              float ws = p->weights[v * p->influence_count + i];
              uint16_t js = p->joints[v * p->influence_count + i];
              if (ws == 0.0f) continue;
              float wf = 0;
              for (int s = 0; s < sets; ++s)
                for (int c = 0; c < 4; ++c)
                  if (jw[2 * s][v * 4 + (size_t)c] == js) wf += jw[2 * s + 1][v * 4 + (size_t)c];
              ok = fabsf(wf - ws) <= wtol;
              if (!ok) fprintf(stderr, "  part %zu vertex %zu joint %u: %g vs %g\n", part, v, js, (double)wf, (double)ws);
            }
            /* unused slots: joint 0 */
            for (int s = 0; ok && s < sets; ++s)
              for (int c = 0; c < 4; ++c)
                if (jw[2 * s + 1][v * 4 + (size_t)c] == 0.0f && jw[2 * s][v * 4 + (size_t)c] != 0.0f) ok = 0;
          }
          CHECK_MSG(ok, "part %zu joints/weights", part);
          for (int k = 0; k < 4; ++k) free(jw[k]);
        }
        if (p->index_count) {
          float *idx = tgw_accessor(&g, tgw_int(prim, "indices", -1), &cnt, &nc);
          int ok = idx && cnt == p->index_count;
          for (size_t i = 0; ok && i < cnt; ++i) ok = idx[i] == (float)p->indices[i];
          CHECK_MSG(ok, "part %zu indices", part);
          free(idx);
        }
        CHECK(tgw_int(prim, "material", -1) == p->material);
        ++part;
      }
      if (!has_skin && (size_t)node_index < sk->joint_count) /* rigid, hosted by its own node */
        CHECK(m->parts[part - 1].node == node_index);
    }
    ++node_index;
  }
  CHECK_MSG(part == m->part_count, "%zu primitives for %zu parts", part, m->part_count);
  /* skins */
  cJSON *skins = cJSON_GetObjectItem(g.json, "skins");
  CHECK((size_t)cJSON_GetArraySize(skins) == m->skin_count);
  for (size_t k = 0; k < m->skin_count; ++k) {
    cJSON *s = cJSON_GetArrayItem(skins, (int)k);
    const sks_skin *skin = &m->skins[k];
    cJSON *j = cJSON_GetObjectItem(s, "joints");
    int ok = (size_t)cJSON_GetArraySize(j) == skin->joint_count;
    for (size_t i = 0; ok && i < skin->joint_count; ++i) ok = cJSON_GetArrayItem(j, (int)i)->valueint == skin->joints[i];
    CHECK_MSG(ok, "skin %zu joints", k);
    size_t cnt; int nc;
    float *ibm = tgw_accessor(&g, tgw_int(s, "inverseBindMatrices", -1), &cnt, &nc);
    CHECK_MSG(ibm && cnt == skin->joint_count && nc == 16 && same_f(ibm, skin->inverse_bind[0].m, cnt * 16, 0.0f),
              "skin %zu inverse binds", k);
    free(ibm);
  }
  /* clips */
  cJSON *anims = cJSON_GetObjectItem(g.json, "animations");
  CHECK((size_t)cJSON_GetArraySize(anims) == m->clip_count);
  for (size_t c = 0; c < m->clip_count && c < (size_t)cJSON_GetArraySize(anims); ++c) {
    const sks_clip *clip = &m->clips[c];
    cJSON *a = cJSON_GetArrayItem(anims, (int)c);
    CHECK(!strcmp(cJSON_GetObjectItem(a, "name")->valuestring, clip->name));
    cJSON *chs = cJSON_GetObjectItem(a, "channels"), *sms = cJSON_GetObjectItem(a, "samplers");
    CHECK((size_t)cJSON_GetArraySize(chs) == clip->track_count);
    for (size_t t = 0; t < clip->track_count && t < (size_t)cJSON_GetArraySize(chs); ++t) {
      const sks_track *tr = &clip->tracks[t];
      cJSON *ch = cJSON_GetArrayItem(chs, (int)t);
      cJSON *target = cJSON_GetObjectItem(ch, "target");
      CHECK(tgw_int(target, "node", -1) == tr->joint);
      const char *path_name = cJSON_GetObjectItem(target, "path")->valuestring;
      CHECK(!strcmp(path_name, tr->path == SKS_PATH_TRANSLATION ? "translation"
                               : tr->path == SKS_PATH_ROTATION ? "rotation" : "scale"));
      cJSON *smp = cJSON_GetArrayItem(sms, tgw_int(ch, "sampler", -1));
      const char *interp = cJSON_GetObjectItem(smp, "interpolation")->valuestring;
      CHECK(!strcmp(interp, tr->interpolation == SKS_INTERP_LINEAR ? "LINEAR"
                            : tr->interpolation == SKS_INTERP_STEP ? "STEP" : "CUBICSPLINE"));
      size_t cnt; int nc;
      float *times = tgw_accessor(&g, tgw_int(smp, "input", -1), &cnt, &nc);
      CHECK_MSG(times && cnt == tr->key_count && same_f(times, tr->times, cnt, 0.0f), "clip %zu track %zu times", c, t);
      free(times);
      float *vals = tgw_accessor(&g, tgw_int(smp, "output", -1), &cnt, &nc);
      size_t nv = tr->key_count * (tr->interpolation == SKS_INTERP_CUBICSPLINE ? 3 : 1);
      CHECK_MSG(vals && cnt == nv && (uint32_t)nc == sks_track_components(tr->path) &&
                same_f(vals, tr->values, nv * (size_t)nc, 1e-6f), "clip %zu track %zu values", c, t);
      free(vals);
    }
  }
  tgw_glb_close(&g);
}

static void test_procedural(void) {
  sks_model m;
  sks_error err = {0};
  tgw_make_rig(&m);
  char path[4096];
  snprintf(path, sizeof path, "%s/procedural.glb", sks_test_tmpdir());
  CHECK_OK(sks_write_glb(path, &m, NULL, &err), &err);
  compare_glb_to_model(path, &m, 0.0f);
  validate(path);

  /* The skinned parts (node 0 has a rotation) got a new root host node (7).
   * The rigid part (node 5) comes after them in part order, so to keep part
   * order in node order it is hosted by an identity child of node 5 (8). */
  tgw_glb g;
  if (tgw_glb_open(path, &g)) {
    cJSON *nodes = cJSON_GetObjectItem(g.json, "nodes");
    CHECK(cJSON_GetArraySize(nodes) == TGW_JOINTS + 2);
    CHECK(tgw_int(cJSON_GetArrayItem(nodes, TGW_JOINTS), "skin", -1) == 0);
    cJSON *prop = cJSON_GetArrayItem(nodes, 5), *host = cJSON_GetArrayItem(nodes, TGW_JOINTS + 1);
    CHECK(tgw_int(prop, "mesh", -1) == -1);
    CHECK(tgw_int(host, "mesh", -1) == 1 && !cJSON_GetObjectItem(host, "translation") &&
          !cJSON_GetObjectItem(host, "rotation") && !cJSON_GetObjectItem(host, "scale"));
    cJSON *ch = cJSON_GetObjectItem(prop, "children");
    CHECK(ch && cJSON_GetArrayItem(ch, 0)->valueint == TGW_JOINTS + 1);
    CHECK(tgw_int(cJSON_GetArrayItem(nodes, 0), "mesh", -1) == -1);
    /* JOINTS_1 exists on both skinned primitives (same count per mesh) */
    cJSON *mesh = cJSON_GetArrayItem(cJSON_GetObjectItem(g.json, "meshes"), 0);
    cJSON *prim;
    int nprim = 0;
    cJSON_ArrayForEach(prim, cJSON_GetObjectItem(mesh, "primitives")) {
      CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(prim, "attributes"), "JOINTS_1") != NULL);
      ++nprim;
    }
    CHECK(nprim == 2);
    /* the clip's hip rotation and tail scale share one input accessor */
    cJSON *smp = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(g.json, "animations"), 0), "samplers");
    CHECK(tgw_int(cJSON_GetArrayItem(smp, 0), "input", -1) == tgw_int(cJSON_GetArrayItem(smp, 3), "input", -2));
    /* skin.skeleton = common root of skin joints (hip) */
    CHECK(tgw_int(cJSON_GetArrayItem(cJSON_GetObjectItem(g.json, "skins"), 0), "skeleton", -1) == 1);
  } else {
    CHECK_MSG(0, "cannot parse %s", path);
  }
  tgw_glb_close(&g);

  /* Weights that do not sum to 1 are renormalised (validator-exact). */
  for (size_t v = 0; v < m.parts[0].vertex_count; ++v)
    for (int i = 0; i < 6; ++i) m.parts[0].weights[v * 6 + (size_t)i] *= 1.3f;
  snprintf(path, sizeof path, "%s/procedural_unnormalised.glb", sks_test_tmpdir());
  CHECK_OK(sks_write_glb(path, &m, NULL, &err), &err);
  validate(path);
  for (size_t v = 0; v < m.parts[0].vertex_count; ++v)
    for (int i = 0; i < 6; ++i) m.parts[0].weights[v * 6 + (size_t)i] /= 1.3f;
  compare_glb_to_model(path, &m, 2e-6f);

  /* Errors name file, part and vertex; nothing is written. */
  m.parts[1].weights[2] = -1.0f;
  snprintf(path, sizeof path, "%s/bad.glb", sks_test_tmpdir());
  CHECK(sks_write_glb(path, &m, NULL, &err) == SKS_ERR_INVALID);
  CHECK_MSG(strstr(err.message, "bad.glb") && strstr(err.message, "part 1") && strstr(err.message, "vertex 1"),
            "message: %s", err.message);
  CHECK(access(path, F_OK) != 0);
  m.parts[1].weights[2] = 0.75f;
  m.parts[1].weights[2] = 0.0f; m.parts[1].weights[3] = 0.0f;
  CHECK(sks_write_glb(path, &m, NULL, &err) == SKS_ERR_INVALID);
  CHECK_MSG(strstr(err.message, "sum to 0"), "message: %s", err.message);
  m.parts[1].weights[2] = 0.75f; m.parts[1].weights[3] = 0.25f;
  m.clips[0].tracks[0].times[1] = 0.0f;
  CHECK(sks_write_glb(path, &m, NULL, &err) == SKS_ERR_INVALID);
  CHECK_MSG(strstr(err.message, "wave") && strstr(err.message, "key 1"), "message: %s", err.message);
  m.clips[0].tracks[0].times[1] = 0.5f;
  CHECK(sks_write_glb("/nonexistent-dir/x.glb", &m, NULL, &err) == SKS_ERR_IO);
  sks_model_free(&m);
}


/* ---- reweight ------------------------------------------------------------ */

static double max_dist(const float *a, const float *b, size_t nv) {
  double worst = 0;
  for (size_t v = 0; v < nv; ++v) {
    double dx = a[3 * v] - b[3 * v], dy = a[3 * v + 1] - b[3 * v + 1], dz = a[3 * v + 2] - b[3 * v + 2];
    double d = sqrt(dx * dx + dy * dy + dz * dz);
    if (d > worst) worst = d;
  }
  return worst;
}

/* Weights valid (sum 1, <= 4, in range), output's rest pose returns the bind
 * vertices, skin joints are the source's weighted joints, no clips, GLB valid. */
static void check_reweighted(const sks_model *src, const sks_model *out, const char *tag) {
  sks_error err = {0};
  CHECK(out->clip_count == 0);
  size_t nv = sks_model_vertex_count(out);
  CHECK(nv == sks_model_vertex_count(src));
  int ok = 1;
  for (size_t p = 0; p < out->part_count; ++p) {
    const sks_mesh_part *part = &out->parts[p];
    if (part->skin < 0) continue;
    CHECK(part->influence_count >= 1 && part->influence_count <= 4);
    const sks_skin *skin = &out->skins[part->skin];
    for (size_t v = 0; ok && v < part->vertex_count; ++v) {
      float sum = 0;
      for (uint32_t i = 0; i < part->influence_count; ++i) {
        float w = part->weights[v * part->influence_count + i];
        ok = ok && w >= 0.0f && part->joints[v * part->influence_count + i] < skin->joint_count;
        sum += w;
      }
      ok = ok && fabsf(sum - 1.0f) < 1e-6f;
    }
  }
  CHECK_MSG(ok, "%s: weights sum to 1, in range", tag);
  /* rest pose == bind pose: skinning at rest returns bind vertices */
  double diag = sks_model_bind_diagonal(src);
  float *bind = tgw_bind_positions(out), *posed = tgw_skin_at(out, out->skeleton.rest);
  double d = max_dist(bind, posed, nv);
  CHECK_MSG(d <= 1e-5 * diag, "%s: rest pose skinning moves vertices by %g (D %g)", tag, d, diag);
  free(bind);
  free(posed);
  /* bind models of kept skin joints equal the source's (by name when not renamed) */
  char path[4096];
  snprintf(path, sizeof path, "%s/reweight_%s.glb", sks_test_tmpdir(), tag);
  CHECK_OK(sks_write_glb(path, out, NULL, &err), &err);
  compare_glb_to_model(path, out, 0.0f);
  validate(path);
}

static void test_reweight_procedural(void) {
  sks_model m, out;
  sks_error err = {0};
  tgw_make_rig(&m);
  /* Add the root (joint 0) to the skin with zero weight everywhere: a helper
   * that must not get weights. */
  sks_skin *skin = &m.skins[0];
  skin->joints = realloc(skin->joints, 6 * sizeof(int32_t));
  skin->inverse_bind = realloc(skin->inverse_bind, 6 * sizeof(sks_mat4));
  {
    sks_transform bl[TGW_JOINTS];
    tgw_bind_locals(bl);
    sks_mat4 r0 = sks_m4_from_transform(&bl[0]);
    skin->joints[5] = 0;
    sks_m4_inverse(&r0, &skin->inverse_bind[5]);
    skin->joint_count = 6;
  }

  CHECK_OK(sks_reweight(&m, NULL, &out, &err), &err);
  CHECK(out.skeleton.joint_count == m.skeleton.joint_count);
  CHECK(out.skins[0].joint_count == 5);
  for (size_t j = 0; j < out.skins[0].joint_count; ++j) CHECK(out.skins[0].joints[j] != 0);
  /* Rest of the output == bind pose of the source: straight chain. */
  sks_transform bl[TGW_JOINTS];
  tgw_bind_locals(bl);
  for (int i = 0; i < TGW_JOINTS; ++i) {
    CHECK_NEAR(out.skeleton.rest[i].translation.y, bl[i].translation.y, 1e-5);
    CHECK_NEAR(fabsf(sks_q_dot(out.skeleton.rest[i].rotation, bl[i].rotation)), 1.0, 1e-5);
  }
  /* A vertex at the middle of the shin (knee..ankle) is mostly the knee's. */
  {
    const sks_mesh_part *tube = &out.parts[0];
    size_t v = (size_t)6 * TGW_RING; /* ring 6: y = 0.2 + 2.5 * 6/12 = 1.45 */
    int32_t knee_slot = -1;
    for (size_t j = 0; j < out.skins[0].joint_count; ++j)
      if (out.skins[0].joints[j] == 2) knee_slot = (int32_t)j;
    CHECK(tube->joints[v * tube->influence_count] == (uint16_t)knee_slot);
    CHECK(tube->weights[v * tube->influence_count] > 0.5f);
  }
  check_reweighted(&m, &out, "plain");
  sks_model_free(&out);

  /* coarsen: weighted tree hip(0) knee(1) ankle(2) toe(3), tail(1): odd depths
   * (knee, toe, tail) are removed; ankle re-parented to hip. */
  sks_reweight_options o = {1, 0};
  CHECK_OK(sks_reweight(&m, &o, &out, &err), &err);
  CHECK(out.skeleton.joint_count == TGW_JOINTS - 3);
  CHECK(sks_skeleton_find(&out.skeleton, "knee") < 0 && sks_skeleton_find(&out.skeleton, "toe") < 0 &&
        sks_skeleton_find(&out.skeleton, "tail") < 0);
  int32_t hip = sks_skeleton_find(&out.skeleton, "hip"), ankle = sks_skeleton_find(&out.skeleton, "ankle");
  int32_t prop = sks_skeleton_find(&out.skeleton, "prop");
  CHECK(hip >= 0 && ankle >= 0 && out.skeleton.parents[ankle] == hip);
  CHECK(prop >= 0 && out.skeleton.parents[prop] == ankle && out.parts[2].node == prop);
  CHECK(out.skins[0].joint_count == 2);
  /* composed local: ankle sits 2 above the hip in the bind pose */
  CHECK_NEAR(out.skeleton.rest[ankle].translation.y, 2.0, 1e-5);
  check_reweighted(&m, &out, "coarsen");
  sks_model_free(&out);

  /* rename */
  sks_reweight_options rn = {1, 1};
  CHECK_OK(sks_reweight(&m, &rn, &out, &err), &err);
  int names_ok = 1;
  for (size_t i = 0; i < out.skeleton.joint_count; ++i) {
    char want[32];
    snprintf(want, sizeof want, "bone_%zu", i);
    names_ok = names_ok && !strcmp(out.skeleton.names[i], want);
  }
  CHECK(names_ok);
  check_reweighted(&m, &out, "coarsen_rename");
  sks_model_free(&out);

  /* no skinned part: an error naming the file */
  sks_model rigid;
  CHECK_OK(sks_model_clone(&m, &rigid, &err), &err);
  rigid.parts[0].skin = rigid.parts[1].skin = -1;
  CHECK(sks_reweight(&rigid, NULL, &out, &err) == SKS_ERR_INVALID);
  CHECK_MSG(strstr(err.message, "procedural") != NULL, "message: %s", err.message);
  sks_model_free(&rigid);
  sks_model_free(&m);
}

int main(void) {
  test_procedural();
  test_reweight_procedural();
  int rc = sks_test_finish();
  if (rc == 0 && validator_skipped) sks_test_skip("glTF validator not installed: run `cd tools && npm install`");
  return rc;
}
