/* GLB writer: procedural and real rigs written, validated by the Khronos
 * validator (0 errors), and read back: by an independent minimal GLB parser
 * here (exact arrays, alignment, layout rules) and by the library's reader. */
#include <float.h>
#include "test_gltf_write_rig.h"
#include "io/gltf_source.h"

static int validator_skipped = 0;
static void roundtrip(const sks_model *src, const char *tag, int stable);
static void test_view_outside_buffer(const char *read_images_json);

/* Files to validate, checked in one validator run at the end (node starts
 * once instead of once per file). */
static char *to_validate[64];
static size_t validate_count = 0;

static void validate(const char *path) {
  if (validate_count < sizeof to_validate / sizeof to_validate[0]) to_validate[validate_count++] = tgw_strdup(path);
  else CHECK_MSG(0, "too many files to validate (raise to_validate)");
}

static void validate_all(void) {
  if (!tgw_validator_available()) {
    fprintf(stderr, "SKIP part: glTF validator not installed (run `cd tools && npm install`)\n");
    validator_skipped = 1;
  } else if (validate_count) {
    size_t len = 256;
    for (size_t i = 0; i < validate_count; ++i) len += strlen(to_validate[i]) + 3;
    char *files = calloc(len, 1);
    for (size_t i = 0; i < validate_count; ++i) {
      strcat(files, i ? " '" : "'");
      strcat(files, to_validate[i]);
      strcat(files, "'");
    }
    CHECK_MSG(tgw_validate(files) == 0, "validator reports errors (see above) in one of %zu files", validate_count);
    free(files);
  }
  for (size_t i = 0; i < validate_count; ++i) free(to_validate[i]);
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
  /* A model read from glTF is written back in its file's own layout (node
   * order, names, hosts): roundtrip() and test_gltf_roundtrip.c compare
   * those through the reader and the JSON instead. */
  if (m->gltf_source) { tgw_glb_close(&g); return; }
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
              float ws = 0, wsum = 0;
              uint16_t js = p->joints[v * p->influence_count + i];
              if (p->weights[v * p->influence_count + i] == 0.0f) continue;
              for (uint32_t q = 0; q < p->influence_count; ++q) { /* duplicates are merged */
                float wq = p->weights[v * p->influence_count + q];
                wsum += wq;
                if (p->joints[v * p->influence_count + q] == js) ws += wq;
              }
              if (wtol > 0.0f) ws /= wsum; /* renormalised by the writer */
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
    CHECK((size_t)cJSON_GetArraySize(chs) <= clip->track_count);
    for (size_t t = 0; t < clip->track_count; ++t) {
      const sks_track *tr = &clip->tracks[t];
      const char *want_path = tr->path == SKS_PATH_TRANSLATION ? "translation"
                              : tr->path == SKS_PATH_ROTATION ? "rotation" : "scale";
      cJSON *ch = NULL, *e;
      cJSON_ArrayForEach(e, chs) {
        cJSON *tg = cJSON_GetObjectItem(e, "target");
        if (!ch && tgw_int(tg, "node", -1) == tr->joint && !strcmp(cJSON_GetObjectItem(tg, "path")->valuestring, want_path))
          ch = e;
      }
      /* not written: a constant channel at the rest value of a node no skin
       * binds (roundtrip() checks that such a track really is one) */
      if (!ch) continue;
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

/* Writes m to <tmpdir>/<name>.glb, compares the file with the model (weights
 * within wtol) and queues it for the validator. Returns the path (static). */
static const char *write_checked(const sks_model *m, const char *name, float wtol) {
  static char path[4096];
  sks_error err = {0};
  snprintf(path, sizeof path, "%s/%s.glb", sks_test_tmpdir(), name);
  CHECK_OK(sks_write_glb(path, m, NULL, &err), &err);
  compare_glb_to_model(path, m, wtol);
  validate(path);
  return path;
}

/* A rigid grid over 65,535 vertices: 32-bit indices; a model without joints
 * gets a root node for its part. */
static void test_large_rigid(void) {
  enum { W = 300, H = 240 };
  sks_model m;
  memset(&m, 0, sizeof m);
  m.part_count = 1;
  m.parts = calloc(1, sizeof(sks_mesh_part));
  sks_mesh_part *p = &m.parts[0];
  p->name = tgw_strdup("grid");
  p->skin = -1;
  p->node = -1;
  p->material = -1;
  p->vertex_count = (size_t)W * H;
  p->positions = malloc(p->vertex_count * 3 * sizeof(float));
  for (size_t v = 0; v < p->vertex_count; ++v) {
    p->positions[3 * v] = (float)(v % W) * 0.01f;
    p->positions[3 * v + 1] = (float)(v / W) * 0.01f;
    p->positions[3 * v + 2] = sinf((float)v * 0.001f);
  }
  p->index_count = (size_t)(W - 1) * (H - 1) * 6;
  p->indices = malloc(p->index_count * sizeof(uint32_t));
  size_t k = 0;
  for (uint32_t y = 0; y + 1 < H; ++y)
    for (uint32_t x = 0; x + 1 < W; ++x) {
      uint32_t a = y * W + x;
      p->indices[k++] = a; p->indices[k++] = a + 1; p->indices[k++] = a + W;
      p->indices[k++] = a + 1; p->indices[k++] = a + W + 1; p->indices[k++] = a + W;
    }
  const char *path = write_checked(&m, "large_rigid", 0.0f);
  tgw_glb g;
  if (tgw_glb_open(path, &g)) {
    cJSON *acc = cJSON_GetArrayItem(cJSON_GetObjectItem(g.json, "accessors"), 1);
    CHECK(tgw_int(acc, "componentType", 0) == 5125);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(g.json, "nodes")) == 1);
  } else {
    CHECK_MSG(0, "cannot parse %s", path);
  }
  tgw_glb_close(&g);
  sks_model_free(&m);
}

static void test_procedural(void) {
  sks_model m;
  sks_error err = {0};
  tgw_make_rig(&m);
  char path[4096];
  snprintf(path, sizeof path, "%s", write_checked(&m, "procedural", 0.0f));

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
  write_checked(&m, "procedural_unnormalised", 2e-6f); /* compared with the weights normalised */
  for (size_t v = 0; v < m.parts[0].vertex_count; ++v)
    for (int i = 0; i < 6; ++i) m.parts[0].weights[v * 6 + (size_t)i] /= 1.3f;

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

/* 1 if every joint i is named bone_<i> (--rename). */
static int named_bone_i(const sks_skeleton *sk) {
  for (size_t i = 0; i < sk->joint_count; ++i) {
    char want[32];
    snprintf(want, sizeof want, "bone_%zu", i);
    if (strcmp(sk->names[i], want) != 0) return 0;
  }
  return 1;
}

/* Weights valid (sum 1, <= 4, in range), output's rest pose returns the bind
 * vertices, skin joints are the source's weighted joints, no clips, GLB valid. */
static void check_reweighted(const sks_model *src, const sks_model *out, const char *tag, int stable) {
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
  char name[128];
  snprintf(name, sizeof name, "reweight_%s", tag);
  write_checked(out, name, 0.0f);
  roundtrip(out, tag, stable);
}

/* Source joints with nonzero weight, as a 0/1 array. */
static uint8_t *weighted_joints(const sks_model *m) {
  uint8_t *w = calloc(m->skeleton.joint_count + 1, 1);
  for (size_t p = 0; p < m->part_count; ++p) {
    const sks_mesh_part *pt = &m->parts[p];
    if (pt->skin < 0) continue;
    for (size_t i = 0; i < pt->vertex_count * pt->influence_count; ++i)
      if (pt->weights[i] > 0) w[m->skins[pt->skin].joints[pt->joints[i]]] = 1;
  }
  return w;
}

static void test_reweight_file(const char *path, const char *tag) {
  if (!path) return;
  sks_model m, out;
  sks_error err = {0};
  CHECK_OK(sks_load(path, NULL, &m, &err), &err);
  if (!m.skeleton.joint_count) return;
  uint8_t *w = weighted_joints(&m);
  size_t nweighted = 0;
  for (size_t i = 0; i < m.skeleton.joint_count; ++i) nweighted += w[i];
  char t[64];

  CHECK_OK(sks_reweight(&m, NULL, &out, &err), &err);
  size_t out_skin_joints = 0;
  for (size_t k = 0; k < out.skin_count; ++k) out_skin_joints += out.skins[k].joint_count;
  if (m.skin_count > 1) { /* multi-skin (BCN_Epileptic): valid target, rest == bind for every part */
    CHECK(out.skin_count == m.skin_count && out_skin_joints >= nweighted);
    snprintf(t, sizeof t, "%s_plain", tag);
    check_reweighted(&m, &out, t, 1);
    sks_model_free(&out);
    free(w);
    sks_model_free(&m);
    return;
  }
  /* skin joints = the source's weighted joints (names kept, order kept) */
  CHECK(out.skin_count == 1 && out.skins[0].joint_count == nweighted);
  int ok = 1;
  for (size_t j = 0; j < out.skins[0].joint_count; ++j) {
    int32_t srcj = sks_skeleton_find(&m.skeleton, out.skeleton.names[out.skins[0].joints[j]]);
    ok = ok && srcj >= 0 && w[srcj];
  }
  CHECK_MSG(ok, "%s: output skin joints are weighted source joints", tag);
  /* the output's rest pose is the source's bind pose (sks_bind_pose_job) */
  {
    size_t jc = m.skeleton.joint_count;
    sks_mat4 *scratch = malloc(jc * sizeof *scratch), *bm = malloc(jc * sizeof *bm);
    sks_mat4 *om = malloc(out.skeleton.joint_count * sizeof *om);
    sks_transform *bl = malloc(jc * sizeof *bl);
    sks_bind_pose_job bj = {&m.skeleton, &m.skins[0], scratch, bl, 1};
    CHECK(sks_bind_pose_job_run(&bj));
    sks_local_to_model_job fk = {m.skeleton.parents, bl, jc, NULL, bm};
    CHECK(sks_local_to_model_job_run(&fk));
    sks_local_to_model_job fk2 = {out.skeleton.parents, out.skeleton.rest, out.skeleton.joint_count, NULL, om};
    CHECK(sks_local_to_model_job_run(&fk2));
    double diag = sks_model_bind_diagonal(&m), worst = 0;
    for (size_t i = 0; i < jc; ++i)
      for (int k = 12; k < 15; ++k) worst = fmax(worst, fabs((double)bm[i].m[k] - om[i].m[k]));
    CHECK_MSG(worst <= 1e-5 * diag, "%s: rest joint positions vs bind pose job: %g (D %g)", tag, worst, diag);
    free(scratch); free(bm); free(om); free(bl);
  }
  snprintf(t, sizeof t, "%s_plain", tag);
  check_reweighted(&m, &out, t, 1);
  sks_model_free(&out);

  sks_reweight_options o = {1, 1};
  CHECK_OK(sks_reweight(&m, &o, &out, &err), &err);
  size_t after = out.skins[0].joint_count;
  CHECK_MSG(after * 10 >= nweighted * 3 && after * 10 <= nweighted * 7,
            "%s: coarsen keeps %zu of %zu weighted joints", tag, after, nweighted);
  printf("%s: coarsen keeps %zu of %zu weighted joints, %zu of %zu joints\n", tag, after, nweighted,
         out.skeleton.joint_count, m.skeleton.joint_count);
  CHECK_MSG(named_bone_i(&out.skeleton), "--rename names joints bone_<i>");
  snprintf(t, sizeof t, "%s_coarse", tag);
  check_reweighted(&m, &out, t, 1);
  sks_model_free(&out);
  free(w);
  sks_model_free(&m);
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
  check_reweighted(&m, &out, "plain", 0);
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
  check_reweighted(&m, &out, "coarsen", 0);
  sks_model_free(&out);

  /* rename */
  sks_reweight_options rn = {1, 1};
  CHECK_OK(sks_reweight(&m, &rn, &out, &err), &err);
  CHECK_MSG(named_bone_i(&out.skeleton), "--rename names joints bone_<i>");
  check_reweighted(&m, &out, "coarsen_rename", 0);
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

/* ---- round trip through the library's reader ------------------------------- */

/* Skins every part (skinned + rigid) at clip c, time t (c < 0: rest pose). */
static float *pose_all(const sks_model *m, int c, float t) {
  size_t jc = m->skeleton.joint_count;
  sks_transform *locals = malloc((jc ? jc : 1) * sizeof *locals);
  sks_mat4 *models = malloc((jc ? jc : 1) * sizeof *models);
  float *out = malloc((sks_model_total_vertex_count(m) + 1) * 3 * sizeof(float));
  sks_error err = {0};
  if (c >= 0) {
    sks_sampling_job sj = {&m->clips[c], m->skeleton.rest, jc, t, 0, 0, locals};
    CHECK(sks_sampling_job_run(&sj));
  } else {
    memcpy(locals, m->skeleton.rest, jc * sizeof *locals);
  }
  sks_local_to_model_job fk = {m->skeleton.parents, locals, jc, NULL, models};
  CHECK(sks_local_to_model_job_run(&fk));
  CHECK_OK(sks_skin_model(m, models, SKS_SKIN_LBS, out, NULL, &err), &err);
  free(locals);
  free(models);
  return out;
}

/* Writes src as GLB, validates it, reads it back with sks_load_gltf and
 * compares every array; skinning at clip times must agree to 1e-5 D. */
static void roundtrip(const sks_model *src, const char *tag, int stable) {
  sks_error err = {0};
  char path[4096];
  snprintf(path, sizeof path, "rt_%s", tag);
  snprintf(path, sizeof path, "%s", write_checked(src, path, 2e-6f));
  sks_model back;
  memset(&back, 0, sizeof back);
  CHECK_OK(sks_load_gltf(path, &back, &err), &err);
  if (err.code != SKS_OK && back.skeleton.joint_count == 0) return;
  const sks_skeleton *a = &src->skeleton, *b = &back.skeleton;
  /* The reader orders joints parent-first its own way (added mesh hosts can
   * land between joints): map source joints to read-back joints by name. */
  CHECK_MSG(b->joint_count >= a->joint_count, "%s: %zu joints back for %zu", tag, b->joint_count, a->joint_count);
  int32_t *map = malloc((a->joint_count + 1) * sizeof *map);
  uint8_t *mapped = calloc(b->joint_count + 1, 1);
  int ok = 1;
  for (size_t i = 0; i < a->joint_count; ++i) {
    map[i] = sks_skeleton_find(b, a->names[i]);
    if (sks_skeleton_find(a, a->names[i]) != (int32_t)i) map[i] = (int32_t)i; /* duplicate name: keep index */
    if (map[i] < 0 || (size_t)map[i] >= b->joint_count) { ok = 0; map[i] = 0; continue; }
    mapped[map[i]] = 1;
  }
  CHECK_MSG(ok, "%s: every joint found back by name", tag);
  ok = 1;
  for (size_t i = 0; ok && i < a->joint_count; ++i) {
    int32_t j = map[i];
    ok = !strcmp(a->names[i], b->names[j]) && (a->parents[i] < 0 ? b->parents[j] < 0 || !mapped[b->parents[j]]
                                                                  : b->parents[j] == map[a->parents[i]]);
    /* rotations: the reader normalises quaternions, so allow float rounding */
    ok = ok && same_f(&a->rest[i].translation.x, &b->rest[j].translation.x, 3, 0.0f) &&
         same_f(&a->rest[i].rotation.x, &b->rest[j].rotation.x, 4, 1e-6f) &&
         same_f(&a->rest[i].scale.x, &b->rest[j].scale.x, 3, 0.0f);
    if (!ok) fprintf(stderr, "  %s: joint %zu '%s' differs\n", tag, i, a->names[i]);
  }
  CHECK_MSG(ok, "%s: names, parents, rest TRS", tag);
  for (size_t i = 0; i < b->joint_count; ++i) { /* added hosts: no transform */
    if (mapped[i]) continue;
    sks_transform id = sks_transform_identity();
    CHECK_MSG(same_f(&b->rest[i].translation.x, &id.translation.x, 10, 0.0f), "%s: host '%s'", tag, b->names[i]);
  }
  CHECK(back.skin_count == src->skin_count);
  for (size_t k = 0; k < src->skin_count && k < back.skin_count; ++k) {
    CHECK(back.skins[k].joint_count == src->skins[k].joint_count);
    int jok = back.skins[k].joint_count == src->skins[k].joint_count;
    for (size_t j = 0; jok && j < src->skins[k].joint_count; ++j)
      jok = back.skins[k].joints[j] == map[src->skins[k].joints[j]];
    CHECK_MSG(jok, "%s: skin %zu joints", tag, k);
    if (jok)
      CHECK(same_f(back.skins[k].inverse_bind[0].m, src->skins[k].inverse_bind[0].m, 16 * src->skins[k].joint_count, 0.0f));
  }
  CHECK(back.part_count == src->part_count);
  for (size_t p = 0; p < src->part_count && p < back.part_count; ++p) {
    const sks_mesh_part *pa = &src->parts[p], *pb = &back.parts[p];
    CHECK(pa->vertex_count == pb->vertex_count && pa->skin == pb->skin && pa->material == pb->material);
    if (pa->vertex_count != pb->vertex_count) continue;
    CHECK_MSG(same_f(pa->positions, pb->positions, 3 * pa->vertex_count, 0.0f), "%s part %zu positions", tag, p);
    CHECK((pa->uvs == NULL) == (pb->uvs == NULL));
    if (pa->uvs && pb->uvs) CHECK(same_f(pa->uvs, pb->uvs, 2 * pa->vertex_count, 0.0f));
    CHECK((pa->normals == NULL) == (pb->normals == NULL));
    CHECK(pa->index_count == pb->index_count &&
          !memcmp(pa->indices, pb->indices, pa->index_count * sizeof(uint32_t)));
    if (pa->skin < 0) {
      CHECK(pb->skin < 0);
      continue;
    }
    /* weights per joint equal; the reader may pad to 4/8 slots */
    int wok = pb->influence_count >= pa->influence_count;
    for (size_t v = 0; wok && v < pa->vertex_count; ++v)
      for (uint32_t i = 0; wok && i < pa->influence_count; ++i) {
        if (pa->weights[v * pa->influence_count + i] == 0.0f) continue;
        uint16_t ja = pa->joints[v * pa->influence_count + i];
        float wa = 0, wsum = 0, wb = 0;
        for (uint32_t q = 0; q < pa->influence_count; ++q) {
          wsum += pa->weights[v * pa->influence_count + q];
          if (pa->joints[v * pa->influence_count + q] == ja) wa += pa->weights[v * pa->influence_count + q];
        }
        wa /= wsum;
        for (uint32_t q = 0; q < pb->influence_count; ++q)
          if (pb->joints[v * pb->influence_count + q] == ja) wb += pb->weights[v * pb->influence_count + q];
        wok = fabsf(wa - wb) <= 2e-6f;
      }
    CHECK_MSG(wok, "%s part %zu joints/weights", tag, p);
  }
  CHECK(back.material_count == src->material_count);
  for (size_t i = 0; i < src->material_count && i < back.material_count; ++i)
    CHECK(same_f(src->materials[i].base_color, back.materials[i].base_color, 4, 0.0f));
  CHECK(back.clip_count == src->clip_count);
  /* Tracks matched by (joint, path): a track on a node no skin binds that
   * holds its rest value at every key is not written (it changes nothing). */
  uint8_t *bound = calloc(a->joint_count + 1, 1);
  for (size_t k = 0; k < src->skin_count; ++k)
    for (size_t j = 0; j < src->skins[k].joint_count; ++j) bound[src->skins[k].joints[j]] = 1;
  for (size_t c = 0; c < src->clip_count && c < back.clip_count; ++c) {
    const sks_clip *ca = &src->clips[c], *cb = &back.clips[c];
    CHECK(!strcmp(ca->name, cb->name) && cb->track_count <= ca->track_count);
    for (size_t t = 0; t < ca->track_count; ++t) {
      const sks_track *ta = &ca->tracks[t], *tb = NULL;
      for (size_t u = 0; u < cb->track_count && !tb; ++u)
        if (cb->tracks[u].joint == map[ta->joint] && cb->tracks[u].path == ta->path) tb = &cb->tracks[u];
      int first = 1;
      for (size_t u = 0; u < t && first; ++u) first = !(ca->tracks[u].joint == ta->joint && ca->tracks[u].path == ta->path);
      if (!first || ta->key_count == 0) continue;
      if (!tb) {
        const sks_transform *r = &a->rest[ta->joint];
        const float *rv = ta->path == SKS_PATH_TRANSLATION ? &r->translation.x : ta->path == SKS_PATH_ROTATION ? &r->rotation.x : &r->scale.x;
        int at_rest = !bound[ta->joint] && ta->interpolation != SKS_INTERP_CUBICSPLINE;
        uint32_t nc = sks_track_components(ta->path);
        for (size_t k = 0; at_rest && k < ta->key_count; ++k) {
          double sign = 1;
          if (nc == 4) { double d = 0; for (uint32_t q = 0; q < 4; ++q) d += (double)ta->values[k * 4 + q] * rv[q]; if (d < 0) sign = -1; }
          for (uint32_t q = 0; at_rest && q < nc; ++q)
            at_rest = fabs(ta->values[k * nc + q] - sign * rv[q]) <= 1e-6 * (1 + fabs(rv[q]));
        }
        CHECK_MSG(at_rest, "%s clip '%s' track %zu (joint %d) missing but not a constant rest channel of an unbound node",
                  tag, ca->name, t, ta->joint);
        continue;
      }
      int tok = ta->interpolation == tb->interpolation &&
                ta->key_count == tb->key_count && same_f(ta->times, tb->times, ta->key_count, 0.0f) &&
                same_f(ta->values, tb->values,
                       ta->key_count * sks_track_components(ta->path) * (ta->interpolation == SKS_INTERP_CUBICSPLINE ? 3 : 1),
                       1e-6f);
      CHECK_MSG(tok, "%s clip '%s' track %zu", tag, ca->name, t);
    }
    CHECK_NEAR(ca->duration, cb->duration, 0.0);
  }
  free(bound);
  /* skinning agrees at rest and at three times of every clip, against the
   * source with its weights normalised (the writer normalises; e.g. the FBX
   * file's weights sum to 0.94..1.38) */
  sks_model norm;
  CHECK_OK(sks_model_clone(src, &norm, &err), &err);
  for (size_t p = 0; p < norm.part_count; ++p) {
    sks_mesh_part *pt = &norm.parts[p];
    for (size_t v = 0; pt->skin >= 0 && v < pt->vertex_count; ++v) {
      double sum = 0;
      for (uint32_t i = 0; i < pt->influence_count; ++i) sum += pt->weights[v * pt->influence_count + i];
      for (uint32_t i = 0; sum > 0 && i < pt->influence_count; ++i)
        pt->weights[v * pt->influence_count + i] = (float)(pt->weights[v * pt->influence_count + i] / sum);
    }
  }
  double diag = sks_model_bind_diagonal(src);
  size_t nv = sks_model_total_vertex_count(src);
  if (nv == sks_model_total_vertex_count(&back)) {
    for (int c = -1; c < (int)src->clip_count && c < (int)back.clip_count; ++c)
      for (int k = 0; k < (c < 0 ? 1 : 3); ++k) {
        float t = c < 0 ? 0.0f : src->clips[c].duration * (0.13f + 0.37f * (float)k);
        float *pa = pose_all(&norm, c, t), *pb = pose_all(&back, c, t);
        double d = max_dist(pa, pb, nv);
        /* 1e-5 D, but never below float resolution at the surface's distance
         * from the origin (the FBX sits 3,600 units away with D = 59, where
         * one float ulp is 2.4e-4 and the reader's re-normalised rest
         * quaternions move it by a few ulps) */
        double far = 0;
        for (size_t q = 0; q < 3 * nv; ++q) far = fmax(far, fabs((double)pa[q]));
        double tol = fmax(1e-5 * diag, 8.0 * far * FLT_EPSILON);
        CHECK_MSG(d <= tol, "%s: clip %d t=%g: skinned surfaces differ by %g (D %g, tol %g)", tag, c, (double)t, d, diag, tol);
        free(pa);
        free(pb);
      }
  }
  sks_model_free(&norm);
  free(map);
  free(mapped);
  /* writing what was read back is stable (no further host nodes) when the
   * reader keeps hosts in part order */
  if (!stable) { sks_model_free(&back); return; }
  snprintf(path, sizeof path, "%s/rt2_%s.glb", sks_test_tmpdir(), tag);
  CHECK_OK(sks_write_glb(path, &back, NULL, &err), &err);
  sks_model back2;
  memset(&back2, 0, sizeof back2);
  CHECK_OK(sks_load_gltf(path, &back2, &err), &err);
  CHECK_MSG(back2.skeleton.joint_count == back.skeleton.joint_count, "%s: %zu joints after a 2nd trip, %zu after the 1st",
            tag, back2.skeleton.joint_count, back.skeleton.joint_count);
  sks_model_free(&back2);
  sks_model_free(&back);
}

static void test_roundtrips(void) {
  sks_model m;
  sks_error err = {0};
  tgw_make_rig(&m);
  roundtrip(&m, "procedural", 0);
  sks_model_free(&m);
  const char *files[][2] = {{"fox", NULL}, {"testwuson", NULL}, {"riggedsimple", NULL}, {"fbx", NULL}};
  files[0][1] = sks_test_shared_data("Fox/Fox.glb");
  files[1][1] = sks_test_assimp_model("X/Testwuson.X");
  files[2][1] = sks_test_shared_data("RiggedSimple/RiggedSimple.gltf");
  files[3][1] = sks_test_assimp_model("FBX/animation_with_skeleton.fbx"); /* 6 influences */
  for (int i = 0; i < 4; ++i) {
    if (!files[i][1]) continue;
    memset(&m, 0, sizeof m);
    CHECK_OK(sks_load(files[i][1], NULL, &m, &err), &err);
    if (m.skeleton.joint_count) roundtrip(&m, files[i][0], 1);
    sks_model_free(&m);
  }
}

/* Fuzzing found it (fuzz_write, minimised): a bufferView with no buffer data
 * behind it made the GLB writer add an offset to a NULL buffer (UB, caught by
 * UBSan in the sanitizer build). The file reads and writes back cleanly. */
static void test_empty_view(void) {
  static const char doc[] = "{\"bufferViews\":[{}]}";
  sks_model m, back;
  sks_error err;
  if (sks_load_gltf_memory((const uint8_t *)doc, sizeof doc - 1, NULL, "empty_view.gltf", &m, &err) != SKS_OK)
    return; /* refusing it is fine too */
  char path[] = "/tmp/sks_test_empty_view_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd >= 0) close(fd);
  CHECK(sks_write_glb(path, &m, NULL, &err) == SKS_OK);
  int read_back = sks_load_gltf(path, &back, &err) == SKS_OK;
  CHECK_MSG(read_back, "%s", err.message);
  if (read_back) sks_model_free(&back);
  unlink(path);
  sks_model_free(&m);
}

/* Fuzzing found it (fuzz_write, a mutated RiggedSimple.gltf, 2026-12-07):
 * a bufferView's byteLength of 1.5e113, unused by any accessor, read fine,
 * and the writer, keeping the document, cast it to a long (UB: clang's
 * UBSan in the fuzz build; the sanitizer build checks float-cast-overflow
 * since). Such a number is no index or length for obj_index
 * (src/io/gltf_write.c), and such a view lies outside its buffer
 * (sks_gltf_source_view_outside): the load warns, the model is written
 * from scratch, never undefined. */
static void test_huge_view_numbers(void) {
  static const char *const docs[] = {
      "{\"asset\":{\"version\":\"2.0\"},\"bufferViews\":[{\"buffer\":0,\"byteLength\":1e300}],"
      "\"buffers\":[{\"byteLength\":4,\"uri\":\"data:application/octet-stream;base64,AAAAAA==\"}]}",
      "{\"asset\":{\"version\":\"2.0\"},\"bufferViews\":[{\"buffer\":1e300,\"byteOffset\":1e300,\"byteLength\":4}],"
      "\"buffers\":[{\"byteLength\":4,\"uri\":\"data:application/octet-stream;base64,AAAAAA==\"}]}"};
  for (size_t k = 0; k < sizeof docs / sizeof docs[0]; ++k) {
    sks_model m, back;
    sks_error err;
    const sks_result rl = sks_load_gltf_memory((const uint8_t *)docs[k], strlen(docs[k]), NULL, "huge_view.gltf", &m, &err);
    CHECK_MSG(rl == SKS_OK, "doc %zu: %s", k, err.message); /* loads: nothing reads the view */
    if (rl != SKS_OK) continue;
    /* the load warns of the view it never resolved (test_view_outside_buffer) */
    CHECK_MSG(m.warning_count == 1 && strstr(m.warnings[0], "huge_view.gltf: bufferView 0") &&
                  strstr(m.warnings[0], k ? "has no buffer (\"buffer\" is not an index below 1)" : "lies outside buffer 0 (4 bytes)"),
              "doc %zu: %zu warnings, the first: %s", k, m.warning_count, m.warning_count ? m.warnings[0] : "");
    char path[] = "/tmp/sks_test_huge_view_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    /* written from scratch, both (the view lies outside its buffer, or on
     * none: test_view_outside_buffer) */
    const sks_result w = sks_write_glb(path, &m, NULL, &err);
    CHECK_MSG(w == SKS_OK, "doc %zu: %d %s", k, (int)w, err.message);
    int read_back = w == SKS_OK && sks_load_gltf(path, &back, &err) == SKS_OK;
    CHECK_MSG(read_back, "doc %zu: %s", k, err.message);
    tgw_glb g; /* no view of the output lies outside BIN (the first kept its 1e300 before) */
    if (w == SKS_OK && tgw_glb_open(path, &g)) {
      cJSON *v;
      cJSON_ArrayForEach(v, cJSON_GetObjectItem(g.json, "bufferViews")) {
        const cJSON *o = cJSON_GetObjectItem(v, "byteOffset"), *l = cJSON_GetObjectItem(v, "byteLength");
        CHECK_MSG((o ? o->valuedouble : 0) + (l ? l->valuedouble : 0) <= (double)g.bin_size, "doc %zu", k);
      }
      tgw_glb_close(&g);
    }
    if (read_back) sks_model_free(&back);
    unlink(path);
    sks_model_free(&m);
  }
}

/* A node no skin binds that some clip moves (Testwuson's "Root", the
 * joints' parent: Assimp keys its translation in Wuson_Run only) is keyed
 * in every clip, at its rest value where the clip leaves it alone:
 * Blender makes that node the armature object and keeps an unkeyed
 * property at its last value when the action changes (measured before:
 * Wuson_Bind played after Wuson_Run had every bone 9.1e-4 = 0.025 %D off). */
static void test_keyed_in_every_clip(void) {
  const char *x = sks_test_assimp_model("X/Testwuson.X");
  if (!x) return;
  sks_model m;
  sks_error err = {0};
  CHECK_OK(sks_load(x, NULL, &m, &err), &err);
  int32_t root = sks_skeleton_find(&m.skeleton, "Root");
  CHECK(root >= 0);
  char path[4200];
  snprintf(path, sizeof path, "%s/wuson_keyed.glb", sks_test_tmpdir());
  CHECK_OK(sks_write_glb(path, &m, NULL, &err), &err);
  tgw_glb g;
  if (root >= 0 && tgw_glb_open(path, &g)) {
    cJSON *anims = cJSON_GetObjectItem(g.json, "animations"), *a;
    int clips = 0, keyed = 0;
    cJSON_ArrayForEach(a, anims) {
      ++clips;
      cJSON *ch;
      const cJSON *found = NULL;
      cJSON_ArrayForEach(ch, cJSON_GetObjectItem(a, "channels")) {
        cJSON *tg = cJSON_GetObjectItem(ch, "target");
        if (tgw_int(tg, "node", -1) == root && !strcmp(cJSON_GetObjectItem(tg, "path")->valuestring, "translation"))
          found = ch;
      }
      if (!found) continue;
      ++keyed;
      if (strcmp(cJSON_GetObjectItem(a, "name")->valuestring, "Wuson_Run") == 0) continue;
      /* elsewhere: one key holding the rest translation */
      cJSON *smp = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "samplers"), tgw_int(found, "sampler", -1));
      size_t n; int nc;
      float *v = tgw_accessor(&g, tgw_int(smp, "output", -1), &n, &nc);
      CHECK_MSG(v && n == 1 && nc == 3 && same_f(v, &m.skeleton.rest[root].translation.x, 3, 0.0f),
                "%s: Root translation is not one key at rest", cJSON_GetObjectItem(a, "name")->valuestring);
      free(v);
    }
    CHECK_MSG(clips == 3 && keyed == 3, "Root translation keyed in %d of %d clips", keyed, clips);
    /* and a channel no clip needs stays out: Root's rotation is at rest everywhere */
    cJSON_ArrayForEach(a, anims) {
      cJSON *ch;
      cJSON_ArrayForEach(ch, cJSON_GetObjectItem(a, "channels")) {
        cJSON *tg = cJSON_GetObjectItem(ch, "target");
        CHECK(!(tgw_int(tg, "node", -1) == root && !strcmp(cJSON_GetObjectItem(tg, "path")->valuestring, "rotation")));
      }
    }
    tgw_glb_close(&g);
  }
  validate(path);
  sks_model_free(&m);
}

static const uint8_t png[69] = { /* a 1x1 RGB PNG (the validator decodes images) */
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00,
      0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xde, 0x00, 0x00, 0x00,
      0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xdf, 0xc0, 0x00, 0x00, 0x04, 0x01, 0x01, 0x80, 0xc5,
      0x2a, 0x18, 0x5d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};

/* The glTF reader fills the model's images from the base colour textures:
 * a bufferView image and a data: URI image (bytes as in the file, PNG by
 * signature, one image for two materials sharing a texture); an external
 * uri without a folder, a texture without a source, a texCoord other than 0 or 1
 * and bytes that are not PNG / JPEG are warnings naming the file and the
 * material, never errors (the CLI test writes Fox from scratch with it). */
static void test_read_images(void) {
  static const char json[] =
      "{\"asset\":{\"version\":\"2.0\"},"
      "\"buffers\":[{\"byteLength\":138,\"uri\":\"data:application/octet-stream;base64,"
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP438AAAAQBAYDFKhhdAAAAAElFTkSuQmCC"
      "R0lGODlhAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}],"
      "\"bufferViews\":[{\"buffer\":0,\"byteLength\":69},{\"buffer\":0,\"byteOffset\":69,\"byteLength\":69}],"
      "\"images\":[{\"bufferView\":0,\"mimeType\":\"image/png\",\"name\":\"skin\"},"
      "{\"uri\":\"data:image/png;base64,"
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP438AAAAQBAYDFKhhdAAAAAElFTkSuQmCC\"},"
      "{\"uri\":\"tex.png\"},{\"bufferView\":1,\"mimeType\":\"image/png\"}],"
      "\"textures\":[{\"source\":0},{\"source\":1},{\"source\":2},{\"source\":9},{\"source\":3}],"
      "\"materials\":["
      "{\"name\":\"a\",\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":0},\"metallicFactor\":0.5,"
      "\"roughnessFactor\":0.25}},"
      "{\"name\":\"b\",\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":0,\"texCoord\":0}}},"
      "{\"name\":\"c\",\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":1}}},"
      "{\"name\":\"d\",\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":2}}},"
      "{\"name\":\"e\",\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":3}}},"
      "{\"name\":\"f\",\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":0,\"texCoord\":2}}},"
      "{\"name\":\"g\",\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":4}}},"
      "{\"name\":\"h\",\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":7}}},"
      "{\"name\":\"i\"}]}";
  sks_model m;
  sks_error err = {0};
  CHECK_OK(sks_load_gltf_memory(json, sizeof json - 1, NULL, "dir/mem.gltf", &m, &err), &err);
  CHECK(m.material_count == 9 && m.image_count == 2);
  if (m.material_count == 9 && m.image_count == 2) {
    const int32_t want[9] = {0, 0, 1, -1, -1, -1, -1, -1, -1};
    for (size_t i = 0; i < 9; ++i) CHECK_MSG(m.materials[i].textures[SKS_TEXTURE_BASE_COLOR].image == want[i], "material %zu", i);
    CHECK(fabsf(m.materials[0].metallic - 0.5f) < 1e-7f && fabsf(m.materials[0].roughness - 0.25f) < 1e-7f);
    for (size_t i = 0; i < 2; ++i)
      CHECK(m.images[i].size == sizeof png && !memcmp(m.images[i].data, png, sizeof png) &&
            !strcmp(m.images[i].mime_type, "image/png"));
    CHECK(!strcmp(m.images[0].name, "skin") && !strcmp(m.images[1].name, "embedded_1"));
  }
  const char *warn[5] = {"material 3 'd': image 2: uri 'tex.png' could not be read",
                         "material 4 'e': baseColorTexture: texture 3 has no source image",
                         "material 5 'f': baseColorTexture (texture 0) is sampled with a texCoord other than 0 or 1",
                         "material 6 'g': image 3 is not a PNG or JPEG file",
                         "material 7 'h': baseColorTexture.index is not a texture index below 5"};
  CHECK_MSG(m.warning_count == 5, "%zu warnings", m.warning_count);
  for (size_t i = 0; i < 5 && i < m.warning_count; ++i)
    CHECK_MSG(!strncmp(m.warnings[i], "mem.gltf: ", 10) && strstr(m.warnings[i], warn[i]) &&
                  strstr(m.warnings[i], "left out"), "warning %zu: %s", i, m.warnings[i]);
  sks_model_free(&m);
  test_view_outside_buffer(json);
}

/* Writes m to TMPDIR/name (path_out: its path) and reads it back into
 * *back; 1 when both worked (else the failure is counted and *back empty). */
static int write_read_back(const sks_model *m, const char *name, char *path_out, size_t path_size, sks_model *back) {
  sks_error err = {0};
  snprintf(path_out, path_size, "%s/%s", sks_test_tmpdir(), name);
  CHECK_OK(sks_write_glb(path_out, m, NULL, &err), &err);
  const int read_back = sks_load_gltf(path_out, back, &err) == SKS_OK;
  CHECK_MSG(read_back, "%s: %s", name, err.message);
  return read_back;
}

/* A file that loads although a bufferView nothing reads lies outside its
 * buffer (the reader resolves only the views it uses): writing it back
 * cannot keep that document (its bytes are not there to copy), so the model
 * is written from scratch, with its materials and images (before: `repair
 * -o out.glb` refused it, "out.glb: bufferView 2 lies outside its buffer",
 * naming the output for a fault of the input), and the load warns. */
static void test_view_outside_buffer(const char *read_images_json) {
  const char *at = strstr(read_images_json, "\"byteOffset\":69,\"byteLength\":69}");
  CHECK(at != NULL);
  if (!at) return;
  at += strlen("\"byteOffset\":69,\"byteLength\":69}");
  char doc[4096];
  snprintf(doc, sizeof doc, "%.*s,{\"buffer\":0,\"byteOffset\":100,\"byteLength\":100}%s",
           (int)(at - read_images_json), read_images_json, at);
  sks_model m, back;
  sks_error err = {0};
  CHECK_OK(sks_load_gltf_memory(doc, strlen(doc), NULL, "dir/outside.gltf", &m, &err), &err);
  /* the load says so (a validator calls the file invalid): one more
   * warning than test_read_images' five */
  CHECK_MSG(m.warning_count == 6 && strstr(m.warnings[0], "outside.gltf: bufferView 2 (byteOffset 100, byteLength 100) "
                                                             "lies outside buffer 0 (138 bytes); nothing the model "
                                                             "uses reads it"),
            "%zu warnings, the first: %s", m.warning_count, m.warning_count ? m.warnings[0] : "");
  char path[4200];
  if (write_read_back(&m, "view_outside.glb", path, sizeof path, &back)) {
    CHECK_MSG(back.image_count == m.image_count && m.image_count == 2, "%zu images written, %zu read", back.image_count,
              m.image_count);
    for (size_t i = 0; i < back.image_count && i < m.image_count; ++i)
      CHECK(back.images[i].size == m.images[i].size && !memcmp(back.images[i].data, m.images[i].data, m.images[i].size));
    CHECK(back.material_count >= 3);
    sks_model_free(&back);
  }
  tgw_glb g;
  if (tgw_glb_open(path, &g)) { /* every view written lies inside BIN */
    cJSON *v;
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(g.json, "bufferViews"))
      CHECK((size_t)tgw_int(v, "byteOffset", 0) + (size_t)tgw_int(v, "byteLength", 0) <= g.bin_size);
    tgw_glb_close(&g);
  }
  validate(path);
  sks_model_free(&m);
}

/* Fuzzing found it (fuzz_write, a mutated RiggedSimple.gltf, 2026-12-07):
 * a primitive of "mode": 8 read as a part of vertices only (no glTF mode:
 * now refused, naming it), and a part without triangles was written from
 * scratch as "mode" 4 without indices, which reads back as triangles of its
 * vertices in order (0 -> 3 indices here; the fuzzed file's 0 -> 96). A
 * part of points (mode 0, as lines and strips read) is written as points. */
static void test_points_part(void) {
  char doc[1024];
  const char *fmt = "{\"asset\":{\"version\":\"2.0\"},\"buffers\":[{\"byteLength\":36,\"uri\":"
                    "\"data:application/octet-stream;base64,%s\"}],\"bufferViews\":[{\"buffer\":0,\"byteLength\":36}],"
                    "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\","
                    "\"min\":[0,0,0],\"max\":[0,0,0]}],\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0},"
                    "\"mode\":%d}]}],\"nodes\":[{\"mesh\":0}],\"scenes\":[{\"nodes\":[0]}],\"scene\":0}";
  const char *zeros = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"; /* 36 zero bytes */
  sks_model m, back;
  sks_error err = {0};
  snprintf(doc, sizeof doc, fmt, zeros, 8);
  CHECK(sks_load_gltf_memory(doc, strlen(doc), NULL, "mode8.gltf", &m, &err) == SKS_ERR_PARSE &&
        strstr(err.message, "mode8.gltf") && strstr(err.message, "mode 8 is not a glTF primitive mode"));
  for (int mode = 0; mode <= 6; mode += 3) { /* points, line strip */
    snprintf(doc, sizeof doc, fmt, zeros, mode);
    CHECK_OK(sks_load_gltf_memory(doc, strlen(doc), NULL, "points.gltf", &m, &err), &err);
    CHECK(m.part_count == 1 && m.parts[0].vertex_count == 3 && m.parts[0].index_count == 0);
    sks_model_free(&m);
  }
  /* written from scratch (the kept document would keep its own mode) */
  snprintf(doc, sizeof doc, fmt, zeros, 0);
  CHECK_OK(sks_load_gltf_memory(doc, strlen(doc), NULL, "points.gltf", &m, &err), &err);
  sks_gltf_source_free(m.gltf_source);
  m.gltf_source = NULL;
  char path[4200];
  if (write_read_back(&m, "points.glb", path, sizeof path, &back)) {
    CHECK_MSG(back.part_count == 1 && back.parts[0].vertex_count == 3 && back.parts[0].index_count == 0,
              "%zu parts, %zu indices", back.part_count, back.part_count ? back.parts[0].index_count : 0);
    sks_model_free(&back);
  }
  validate(path);
  sks_model_free(&m);
}

/* A model written from scratch carries its base colour image: material 0
 * of the procedural rig gets a PNG; part 0 (with UVs) samples it, part 1
 * (no UVs) uses an untextured twin (a texture needs TEXCOORD_0: the
 * validator rejects it otherwise); the image bytes are in BIN unchanged. */
static void test_textured_material(void) {
  sks_model m;
  tgw_make_rig(&m);
  m.image_count = 1;
  m.images = calloc(1, sizeof(sks_image));
  m.images[0].name = tgw_strdup("tex.png");
  m.images[0].mime_type = tgw_strdup("image/png");
  m.images[0].size = sizeof png;
  m.images[0].data = malloc(sizeof png);
  memcpy(m.images[0].data, png, sizeof png);
  m.materials[0].textures[SKS_TEXTURE_BASE_COLOR].image = 0;
  m.materials[0].roughness = 0.25f;
  m.materials[0].double_sided = 1;
  m.materials[1].textures[SKS_TEXTURE_BASE_COLOR].image = -1;
  CHECK(m.parts[0].uvs && !m.parts[1].uvs && m.parts[0].material == 0 && m.parts[1].material == 0);
  char path[4200];
  snprintf(path, sizeof path, "%s/textured.glb", sks_test_tmpdir());
  sks_error err = {0};
  CHECK_OK(sks_write_glb(path, &m, NULL, &err), &err);
  tgw_glb g;
  if (tgw_glb_open(path, &g)) {
    cJSON *mats = cJSON_GetObjectItem(g.json, "materials");
    CHECK(cJSON_GetArraySize(mats) == 3);
    cJSON *m0 = cJSON_GetArrayItem(mats, 0), *twin = cJSON_GetArrayItem(mats, 2);
    cJSON *pbr0 = cJSON_GetObjectItem(m0, "pbrMetallicRoughness");
    CHECK(tgw_int(cJSON_GetObjectItem(pbr0, "baseColorTexture"), "index", -1) == 0);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(m0, "doubleSided")));
    cJSON *rf = cJSON_GetObjectItem(pbr0, "roughnessFactor");
    CHECK(rf && fabs(rf->valuedouble - 0.25) < 1e-7);
    CHECK(!cJSON_GetObjectItem(cJSON_GetObjectItem(twin, "pbrMetallicRoughness"), "baseColorTexture"));
    char want[300];
    snprintf(want, sizeof want, "%s_untextured", m.materials[0].name);
    CHECK(!strcmp(cJSON_GetObjectItem(twin, "name")->valuestring, want));
    cJSON *prims = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(g.json, "meshes"), 0), "primitives");
    CHECK(tgw_int(cJSON_GetArrayItem(prims, 0), "material", -1) == 0);
    CHECK(tgw_int(cJSON_GetArrayItem(prims, 1), "material", -1) == 2);
    cJSON *img = cJSON_GetArrayItem(cJSON_GetObjectItem(g.json, "images"), 0);
    CHECK(img && !strcmp(cJSON_GetObjectItem(img, "mimeType")->valuestring, "image/png"));
    cJSON *view = cJSON_GetArrayItem(cJSON_GetObjectItem(g.json, "bufferViews"), tgw_int(img, "bufferView", -1));
    int off = tgw_int(view, "byteOffset", 0), len = tgw_int(view, "byteLength", -1);
    CHECK(len == (int)sizeof png && off >= 0 && (size_t)off + sizeof png <= g.bin_size &&
          memcmp(g.bin + off, png, sizeof png) == 0);
    CHECK(tgw_int(cJSON_GetArrayItem(cJSON_GetObjectItem(g.json, "textures"), 0), "sampler", -1) == 0);
    tgw_glb_close(&g);
  }
  validate(path);
  /* bytes that are not a PNG or JPEG are refused, naming the image */
  m.images[0].data[1] = 'X';
  CHECK(sks_write_glb(path, &m, NULL, &err) == SKS_ERR_INVALID && strstr(err.message, "image 0 'tex.png'"));
  sks_model_free(&m);
}

int main(void) {
  test_read_images();
  test_empty_view();
  test_huge_view_numbers();
  test_points_part();
  test_keyed_in_every_clip();
  test_textured_material();
  test_procedural();
  test_large_rigid();
  test_reweight_procedural();
  test_roundtrips();
  test_reweight_file(sks_test_shared_data("Fox/Fox.glb"), "fox");
  test_reweight_file(sks_test_assimp_model("X/Testwuson.X"), "testwuson");
  test_reweight_file(sks_test_assimp_model("X/BCN_Epileptic.X"), "bcn");
  validate_all();
  int rc = sks_test_finish();
  if (rc == 0 && validator_skipped) sks_test_skip("glTF validator not installed: run `cd tools && npm install`");
  return rc;
}
