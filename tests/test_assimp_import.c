/* Assimp import against Assimp itself: for real test models, everything we
 * store is compared with the raw aiScene (imported with NO post-processing),
 * so vertex count/order, matrices (row- vs column-major), quaternion order,
 * key times and weights are checked value by value. Plus the quirks: ticks
 * per second 0, FBX pivot nodes, bones without nodes, > 8 influences. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include "sks_test.h"
#include "math/sks_math.h"

/* ---- raw Assimp helpers (test side) ----------------------------------- */

static sks_mat4 ai_to_m4(const struct aiMatrix4x4 *a) {
  /* Written out independently of the importer: column c, row r = a[r][c]. */
  const float rows[4][4] = {{a->a1, a->a2, a->a3, a->a4}, {a->b1, a->b2, a->b3, a->b4},
                            {a->c1, a->c2, a->c3, a->c4}, {a->d1, a->d2, a->d3, a->d4}};
  sks_mat4 m;
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r) m.m[c * 4 + r] = rows[r][c];
  return m;
}

/* Pre-order list of nodes with their global matrices. */
typedef struct raw_nodes {
  size_t count;
  const struct aiNode *node[4096];
  sks_mat4 global[4096];
} raw_nodes;

static void collect(raw_nodes *rn, const struct aiNode *n, const sks_mat4 *parent) {
  if (rn->count >= 4096) return;
  size_t i = rn->count++;
  sks_mat4 local = ai_to_m4(&n->mTransformation);
  rn->node[i] = n;
  rn->global[i] = parent ? sks_m4_mul(parent, &local) : local;
  for (unsigned c = 0; c < n->mNumChildren; ++c) collect(rn, n->mChildren[c], &rn->global[i]);
}

static double mat_max_abs(const sks_mat4 *m) {
  double s = 0;
  for (int i = 0; i < 16; ++i) s = fmax(s, fabs(m->m[i]));
  return s;
}

static double mat_diff(const sks_mat4 *a, const sks_mat4 *b) {
  double d = 0;
  for (int i = 0; i < 16; ++i) d = fmax(d, fabs((double)a->m[i] - b->m[i]));
  return d;
}

static int ai_str_eq(const struct aiString *s, const char *c) {
  return strlen(c) == s->length && memcmp(s->data, c, s->length) == 0;
}

static raw_nodes g_raw;

/* Compares a loaded model with the raw aiScene, element by element. */
static void compare_with_assimp(const char *rel, const char *path) {
  sks_model m;
  sks_error err = {0};
  sks_result r = sks_load_assimp(path, &m, &err);
  CHECK_MSG(r == SKS_OK, "%s: %s", rel, err.message);
  if (r != SKS_OK) return;
  /* .x: Assimp gives one vertex per face corner; the importer maps corners
   * back to the file's vertices. Here corner c of Assimp's mesh is compared
   * with our vertex vmap[c], read off the triangles (same faces, same order). */
  FILE *xf = fopen(path, "rb");
  char magic[4] = {0};
  int is_x = xf && fread(magic, 1, 4, xf) == 4 && memcmp(magic, "xof ", 4) == 0;
  if (xf) fclose(xf);
  const struct aiScene *s = aiImportFile(path, is_x ? aiProcess_Triangulate : 0);
  CHECK(s != NULL);
  if (!s) { sks_model_free(&m); return; }

  size_t plen = strlen(path);
  int is_fbx = plen > 4 && (strcmp(path + plen - 4, ".fbx") == 0 || strcmp(path + plen - 4, ".FBX") == 0);
  /* Skeleton: every node, pre-order, and the FK of our decomposed rest
   * locals reproduces Assimp's global node matrices. */
  raw_nodes *rn = &g_raw;
  rn->count = 0;
  collect(rn, s->mRootNode, NULL);
  CHECK_MSG(m.skeleton.joint_count >= rn->count, "%s: %zu joints < %zu nodes", rel,
            m.skeleton.joint_count, rn->count);
  sks_mat4 *models = malloc(m.skeleton.joint_count * sizeof *models);
  sks_local_to_model_job fk = {m.skeleton.parents, m.skeleton.rest, m.skeleton.joint_count, NULL, models};
  CHECK(sks_local_to_model_job_run(&fk));
  double worst = 0;
  int names_ok = 1, parents_ok = 1;
  for (size_t i = 0; i < rn->count && i < m.skeleton.joint_count; ++i) {
    double scale = fmax(1.0, mat_max_abs(&rn->global[i]));
    worst = fmax(worst, mat_diff(&models[i], &rn->global[i]) / scale);
    if (rn->node[i]->mName.length && !ai_str_eq(&rn->node[i]->mName, m.skeleton.names[i])) names_ok = 0;
    if (m.skeleton.parents[i] >= (int32_t)i) parents_ok = 0;
  }
  for (size_t i = 0; i < m.skeleton.joint_count; ++i)
    if (m.skeleton.parents[i] >= (int32_t)i || !m.skeleton.names[i] || !m.skeleton.names[i][0]) parents_ok = 0;
  CHECK_MSG(worst < 1e-4, "%s: FK of rest locals vs Assimp global node matrices: %g", rel, worst);
  CHECK_MSG(names_ok, "%s: joint names are not the node names in pre-order", rel);
  CHECK_MSG(parents_ok, "%s: parents not parent-first or a name empty", rel);

  /* Parts: one per aiMesh, vertices exactly as Assimp gives them. */
  /* ... except the meshes Assimp makes up to display a bare skeleton (BVH,
   * CSM, mesh-less Collada: unnamed, material "SkeletonMaterial"). */
  unsigned generated = 0;
  for (unsigned i = 0; i < s->mNumMeshes; ++i) {
    struct aiString mn;
    const struct aiMesh *a = s->mMeshes[i];
    if (!a->mName.length && a->mMaterialIndex < s->mNumMaterials &&
        aiGetMaterialString(s->mMaterials[a->mMaterialIndex], AI_MATKEY_NAME, &mn) == aiReturn_SUCCESS &&
        strcmp(mn.data, "SkeletonMaterial") == 0)
      ++generated;
  }
  CHECK_MSG(m.part_count == s->mNumMeshes - generated, "%s: %zu parts, %u meshes (%u made up for bones)", rel,
            m.part_count, s->mNumMeshes, generated);
  if (generated) printf("%s: %u skeleton-display mesh(es) Assimp made up are not parts\n", rel, generated);
  for (unsigned i = 0; i < s->mNumMeshes && i < m.part_count && !generated; ++i) {
    const struct aiMesh *a = s->mMeshes[i];
    const sks_mesh_part *p = &m.parts[i];
    size_t *vmap = NULL;
    if (is_x) {
      vmap = malloc((a->mNumVertices + 1) * sizeof *vmap);
      int map_ok = vmap && p->index_count == 3 * (size_t)a->mNumFaces;
      for (unsigned c = 0; map_ok && c < a->mNumVertices; ++c) vmap[c] = SIZE_MAX;
      for (unsigned f = 0; map_ok && f < a->mNumFaces; ++f)
        for (unsigned k = 0; k < 3 && map_ok; ++k) {
          unsigned c = a->mFaces[f].mNumIndices == 3 ? a->mFaces[f].mIndices[k] : a->mNumVertices;
          map_ok = c < a->mNumVertices && (vmap[c] == SIZE_MAX || vmap[c] == p->indices[3 * f + k]);
          if (map_ok) vmap[c] = p->indices[3 * f + k];
        }
      for (unsigned c = 0; map_ok && c < a->mNumVertices; ++c) map_ok = vmap[c] < p->vertex_count;
      CHECK_MSG(map_ok, "%s: mesh %u: triangles do not map Assimp's corners to our vertices", rel, i);
      CHECK_MSG(p->vertex_count < a->mNumVertices, "%s: mesh %u: %zu vertices, %u corners", rel, i,
                p->vertex_count, a->mNumVertices);
      if (!map_ok) { free(vmap); continue; }
    } else {
      CHECK_MSG(p->vertex_count == a->mNumVertices, "%s: mesh %u: %zu vertices, Assimp %u", rel, i,
                p->vertex_count, a->mNumVertices);
      if (p->vertex_count != a->mNumVertices) continue;
    }
    /* FBX skinned parts are moved to the scene root's frame (G = the mesh
     * node's global matrix, which Assimp's FBX importer folds into the
     * offsets); everything else is stored exactly as Assimp gives it. */
    int rebased = is_fbx && a->mNumBones > 0;
    const sks_mat4 *g = &rn->global[p->node < (int32_t)rn->count ? p->node : 0];
    sks_mat4 ginv = sks_m4_identity();
    if (rebased) CHECK(sks_m4_inverse(g, &ginv));
    double gs = fmax(1.0, mat_max_abs(g));
    int pos_ok = 1, nrm_ok = 1, uv_ok = 1;
    for (unsigned v = 0; v < a->mNumVertices; ++v) {
      const size_t u = vmap ? vmap[v] : v; /* our vertex for Assimp's vertex v */
      sks_vec3 want = sks_v3(a->mVertices[v].x, a->mVertices[v].y, a->mVertices[v].z);
      if (rebased) {
        want = sks_m4_point(g, want);
        if (fabs(p->positions[3 * u] - want.x) > 1e-5 * gs || fabs(p->positions[3 * u + 1] - want.y) > 1e-5 * gs ||
            fabs(p->positions[3 * u + 2] - want.z) > 1e-5 * gs) pos_ok = 0;
      } else if (p->positions[3 * u] != want.x || p->positions[3 * u + 1] != want.y ||
                 p->positions[3 * u + 2] != want.z) pos_ok = 0;
      if (a->mNormals && !p->normals) nrm_ok = 0;
      if (a->mNormals && p->normals) {
        sks_vec3 n = sks_v3(a->mNormals[v].x, a->mNormals[v].y, a->mNormals[v].z);
        if (rebased) {
          n = sks_v3_normalize(sks_v3(ginv.m[0] * n.x + ginv.m[1] * n.y + ginv.m[2] * n.z,
                                      ginv.m[4] * n.x + ginv.m[5] * n.y + ginv.m[6] * n.z,
                                      ginv.m[8] * n.x + ginv.m[9] * n.y + ginv.m[10] * n.z));
          if (fabs(p->normals[3 * u] - n.x) > 1e-5 || fabs(p->normals[3 * u + 1] - n.y) > 1e-5 ||
              fabs(p->normals[3 * u + 2] - n.z) > 1e-5) nrm_ok = 0;
        } else if (p->normals[3 * u] != n.x || p->normals[3 * u + 1] != n.y || p->normals[3 * u + 2] != n.z)
          nrm_ok = 0;
      }
      if (a->mTextureCoords[0] && (!p->uvs || p->uvs[2 * u] != a->mTextureCoords[0][v].x ||
                                   fabs(p->uvs[2 * u + 1] - (1.0 - a->mTextureCoords[0][v].y)) > 1e-6))
        uv_ok = 0;
    }
    CHECK_MSG(pos_ok, "%s: mesh %u: positions differ from Assimp's (order?)", rel, i);
    CHECK_MSG(nrm_ok, "%s: mesh %u: normals differ", rel, i);
    CHECK_MSG(uv_ok, "%s: mesh %u: uv0 is not Assimp's with v flipped (glTF origin)", rel, i);
    /* Index list: triangles covering each face (fan), all indices in range. */
    size_t tris = 0;
    for (unsigned f = 0; f < a->mNumFaces; ++f)
      if (a->mFaces[f].mNumIndices >= 3) tris += a->mFaces[f].mNumIndices - 2;
    CHECK_MSG(p->index_count == 3 * tris, "%s: mesh %u: %zu indices, want %zu", rel, i, p->index_count, 3 * tris);
    int idx_ok = 1;
    for (size_t k = 0; k < p->index_count; ++k) if (p->indices[k] >= p->vertex_count) idx_ok = 0;
    CHECK(idx_ok);
    /* part.node holds the mesh. */
    const struct aiNode *holder = rn->node[p->node < (int32_t)rn->count ? p->node : 0];
    int holds = 0;
    for (unsigned k = 0; k < holder->mNumMeshes; ++k) if (holder->mMeshes[k] == i) holds = 1;
    CHECK_MSG(holds || p->node == 0, "%s: mesh %u: part.node %d does not reference it", rel, i, p->node);

    /* Skin: joints named like the bones, inverse bind = offset matrix,
     * per-vertex weight sums equal the bones' sums (<= 8 influences here). */
    if (!a->mNumBones) { CHECK(p->skin < 0); free(vmap); continue; }
    CHECK(p->skin >= 0 && (size_t)p->skin < m.skin_count);
    if (p->skin < 0 || (size_t)p->skin >= m.skin_count) { free(vmap); continue; }
    const sks_skin *sk = &m.skins[p->skin];
    CHECK_MSG(sk->joint_count == a->mNumBones, "%s: mesh %u: %zu skin joints, %u bones", rel, i,
              sk->joint_count, a->mNumBones);
    int bone_ok = 1;
    double ib_worst = 0, skin_worst = 0;
    for (unsigned b = 0; b < a->mNumBones && b < sk->joint_count; ++b) {
      const struct aiBone *bone = a->mBones[b];
      if (!ai_str_eq(&bone->mName, m.skeleton.names[sk->joints[b]])) bone_ok = 0;
      sks_mat4 off = ai_to_m4(&bone->mOffsetMatrix);
      if (rebased) {
        sks_mat4 want = sks_m4_mul(&off, &ginv);
        ib_worst = fmax(ib_worst, mat_diff(&want, &sk->inverse_bind[b]) / fmax(1.0, mat_max_abs(&want)));
      } else {
        ib_worst = fmax(ib_worst, mat_diff(&off, &sk->inverse_bind[b]));
      }
      /* Whatever the frame: our rest-pose skinned position per bone equals
       * Assimp's (bone node global * offset * raw vertex). */
      size_t bn = 0;
      while (bn < rn->count && !ai_str_eq(&bone->mName, m.skeleton.names[bn])) ++bn;
      if (bn == rn->count) continue; /* a bone without a node */
      sks_mat4 ours = sks_m4_mul(&models[sk->joints[b]], &sk->inverse_bind[b]);
      sks_mat4 theirs = sks_m4_mul(&rn->global[bn], &off);
      for (unsigned w = 0; w < bone->mNumWeights; ++w) {
        unsigned v = bone->mWeights[w].mVertexId;
        const size_t u = vmap ? vmap[v] : v;
        sks_vec3 x = sks_m4_point(&ours, sks_v3(p->positions[3 * u], p->positions[3 * u + 1], p->positions[3 * u + 2]));
        sks_vec3 y = sks_m4_point(&theirs, sks_v3(a->mVertices[v].x, a->mVertices[v].y, a->mVertices[v].z));
        double sc = fmax(1.0, fmax(fabs(y.x), fmax(fabs(y.y), fabs(y.z))));
        skin_worst = fmax(skin_worst, sks_v3_len(sks_v3_sub(x, y)) / sc);
      }
    }
    CHECK_MSG(bone_ok, "%s: mesh %u: a skin joint is not the node named like its bone", rel, i);
    CHECK_MSG(rebased ? ib_worst < 1e-5 : ib_worst == 0, "%s: mesh %u: inverse bind != offset matrix (%g)", rel, i, ib_worst);
    CHECK_MSG(skin_worst < 2e-5, "%s: mesh %u: rest-pose skinning differs from Assimp's convention by %g", rel, i, skin_worst);
    double *sum = calloc(a->mNumVertices, sizeof *sum);
    unsigned *cnt = calloc(a->mNumVertices, sizeof *cnt);
    for (unsigned b = 0; b < a->mNumBones; ++b)
      for (unsigned w = 0; w < a->mBones[b]->mNumWeights; ++w) {
        sum[a->mBones[b]->mWeights[w].mVertexId] += a->mBones[b]->mWeights[w].mWeight;
        cnt[a->mBones[b]->mWeights[w].mVertexId]++;
      }
    double wworst = 0;
    unsigned maxcnt = 0;
    for (unsigned v = 0; v < a->mNumVertices; ++v) {
      double ours = 0;
      const size_t u = vmap ? vmap[v] : v;
      for (uint32_t k = 0; k < p->influence_count; ++k) ours += p->weights[u * p->influence_count + k];
      if (cnt[v] <= SKS_MAX_INFLUENCES) wworst = fmax(wworst, fabs(ours - sum[v]));
      if (cnt[v] > maxcnt) maxcnt = cnt[v];
    }
    CHECK_MSG(wworst < 1e-5, "%s: mesh %u: weight sums differ from the bones' by %g", rel, i, wworst);
    CHECK_MSG(p->influence_count == (maxcnt > 8 ? 8 : maxcnt ? maxcnt : 1),
              "%s: mesh %u: influence_count %u, max bones per vertex %u", rel, i, p->influence_count, maxcnt);
    free(sum);
    free(cnt);
    free(vmap);
  }

  /* Clips: one per animation; key times = ticks / tps (0 -> 25); quaternion
   * (w,x,y,z) -> xyzw; tracks target the node named by the channel. */
  CHECK_MSG(m.clip_count == s->mNumAnimations, "%s: %zu clips, %u animations", rel, m.clip_count,
            s->mNumAnimations);
  for (unsigned c = 0; c < s->mNumAnimations && c < m.clip_count; ++c) {
    const struct aiAnimation *an = s->mAnimations[c];
    const sks_clip *clip = &m.clips[c];
    double tps = an->mTicksPerSecond > 0 ? an->mTicksPerSecond : 25.0;
    if (an->mName.length) CHECK(ai_str_eq(&an->mName, clip->name));
    else { char want[32]; snprintf(want, sizeof want, "animation_%u", c); CHECK(strcmp(clip->name, want) == 0); }
    size_t t = 0;
    int ok = 1;
    double maxt = 0;
    for (unsigned ch = 0; ch < an->mNumChannels; ++ch) {
      const struct aiNodeAnim *na = an->mChannels[ch];
      for (int kind = 0; kind < 3; ++kind) {
        unsigned n = kind == 0 ? na->mNumPositionKeys : kind == 1 ? na->mNumRotationKeys : na->mNumScalingKeys;
        if (!n) continue;
        if (t >= clip->track_count) { ok = 0; break; }
        const sks_track *tr = &clip->tracks[t++];
        if (!ai_str_eq(&na->mNodeName, m.skeleton.names[tr->joint]) || tr->key_count != n ||
            (int)tr->path != kind || tr->interpolation != SKS_INTERP_LINEAR) { ok = 0; continue; }
        for (unsigned k = 0; k < n; ++k) {
          double time;
          float want[4];
          if (kind == 1) {
            const struct aiQuatKey *q = &na->mRotationKeys[k];
            time = q->mTime;
            want[0] = q->mValue.x; want[1] = q->mValue.y; want[2] = q->mValue.z; want[3] = q->mValue.w;
          } else {
            const struct aiVectorKey *vk = kind == 0 ? &na->mPositionKeys[k] : &na->mScalingKeys[k];
            time = vk->mTime;
            want[0] = vk->mValue.x; want[1] = vk->mValue.y; want[2] = vk->mValue.z; want[3] = 0;
          }
          if (fabs(tr->times[k] - time / tps) > 1e-6 * fmax(1.0, time / tps)) ok = 0;
          for (uint32_t q = 0; q < sks_track_components(tr->path); ++q)
            if (tr->values[k * sks_track_components(tr->path) + q] != want[q]) ok = 0;
          maxt = fmax(maxt, time / tps);
        }
      }
    }
    CHECK_MSG(ok && t == clip->track_count, "%s: clip %u: tracks differ from Assimp's channels", rel, c);
    CHECK_NEAR(clip->duration, maxt, 1e-5 * fmax(1.0, maxt));
  }
  aiReleaseImport(s);
  free(models);
  sks_model_free(&m);
}

/* ---- specific models -------------------------------------------------- */

static void test_testwuson(void) {
  const char *path = sks_test_assimp_model("X/Testwuson.X");
  if (!path) return;
  sks_model m;
  sks_error err = {0};
  CHECK_OK(sks_load(path, NULL, &m, &err), &err);
  /* The file stores 3,205 positions; Assimp's X importer gives one vertex per
   * face corner (3,732 triangles -> 11,196), with or without Triangulate; the
   * importer maps corners back to the file's 3,205 (see test_x_file_order). */
  CHECK(m.part_count == 1);
  if (m.part_count == 1) {
    CHECK(m.parts[0].vertex_count == 3205);
    CHECK(m.parts[0].index_count == 3732 * 3);
  }
  CHECK(m.skeleton.joint_count == 40);
  CHECK(m.skin_count == 1);
  if (m.skin_count == 1) CHECK(m.skins[0].joint_count == 37);
  CHECK(m.clip_count == 3);
  if (m.clip_count == 3) {
    CHECK(strcmp(m.clips[0].name, "Wuson_Run") == 0);
    CHECK(strcmp(m.clips[1].name, "Wuson_Walk") == 0);
    CHECK(strcmp(m.clips[2].name, "Wuson_Bind") == 0);
    CHECK_NEAR(m.clips[0].duration, 4640.0 / 4800.0, 1e-6);
    CHECK_NEAR(m.clips[1].duration, 17280.0 / 4800.0, 1e-6);
    CHECK_NEAR(m.clips[2].duration, 0.0, 0);
  }
  CHECK(strstr(m.source_path, "Testwuson.X") != NULL);
  sks_model_free(&m);
}

/* Text .x files: part p, vertex i is the file's Mesh p, vertex i (z negated:
 * Assimp makes the left-handed file right-handed), every vertex of the file
 * is there, and each triangle uses the file's face indices. Read here with a
 * few lines of strtod, independently of the importer. Before: Testwuson had
 * the right count in Assimp's first-use order (2,079 of 3,205 at their file
 * index) and anim_test.x 485 vertices instead of 1,720. */
static const char *x_skip(const char *q) {
  while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n' || *q == ',' || *q == ';') ++q;
  return q;
}

static void test_x_file_order(const char *rel, size_t parts, const size_t *counts) {
  const char *path = sks_test_assimp_model(rel);
  if (!path) return;
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL);
  if (!f) return;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = calloc((size_t)size + 1, 1);
  CHECK(text && fread(text, 1, (size_t)size, f) == (size_t)size);
  fclose(f);
  sks_model m;
  sks_error err = {0};
  CHECK_OK(sks_load(path, NULL, &m, &err), &err);
  CHECK(m.part_count == parts);
  const char *q = text;
  size_t pi = 0, bad_pos = 0, bad_tri = 0;
  while (text && err.code == SKS_OK && (q = strstr(q, "Mesh ")) != NULL) {
    int is_template = q >= text + 9 && strncmp(q - 9, "template ", 9) == 0;
    q += 5;
    if (is_template || q[-6] == 'r' /* "...Mesh" in a longer word */) continue;
    q = strchr(q, '{');
    if (!q || pi >= m.part_count) break;
    const sks_mesh_part *p = &m.parts[pi];
    char *e;
    size_t nv = strtoul(x_skip(q + 1), &e, 10);
    q = e;
    CHECK_MSG(nv == counts[pi] && p->vertex_count == nv, "%s: mesh %zu: file %zu vertices, part %zu, expected %zu",
              rel, pi, nv, p->vertex_count, counts[pi]);
    for (size_t v = 0; v < nv; ++v) {
      double x[3];
      for (int c = 0; c < 3; ++c) { x[c] = strtod(x_skip(q), &e); q = e; }
      /* Assimp's fast_atof may differ from strtod in the last bit. */
      double tol = 1e-6 * (1.0 + fabs(x[0]) + fabs(x[1]) + fabs(x[2]));
      if (v < p->vertex_count && (fabs(p->positions[3 * v] - x[0]) > tol || fabs(p->positions[3 * v + 1] - x[1]) > tol ||
                                  fabs(p->positions[3 * v + 2] + x[2]) > tol))
        ++bad_pos;
    }
    size_t nf = strtoul(x_skip(q), &e, 10);
    q = e;
    CHECK(p->index_count == 3 * nf);
    for (size_t t = 0; t < nf; ++t) {
      size_t n = strtoul(x_skip(q), &e, 10), idx[3] = {0, 0, 0};
      q = e;
      for (size_t k = 0; k < n; ++k) { size_t x = strtoul(x_skip(q), &e, 10); q = e; if (k < 3) idx[k] = x; }
      if (n != 3 || 3 * t + 2 >= p->index_count) { ++bad_tri; continue; }
      const uint32_t *tri = &p->indices[3 * t]; /* same corners; Assimp flips the winding */
      int same = 1;
      for (int k = 0; k < 3; ++k) same &= tri[0] == idx[k] || tri[1] == idx[k] || tri[2] == idx[k];
      if (!same) ++bad_tri;
    }
    ++pi;
  }
  CHECK_MSG(pi == parts, "%s: %zu meshes read from the file", rel, pi);
  CHECK_MSG(bad_pos == 0, "%s: %zu vertices are not the file's vertex at that index", rel, bad_pos);
  CHECK_MSG(bad_tri == 0, "%s: %zu triangles do not use the file's face indices", rel, bad_tri);
  printf("%s: %zu part(s), every vertex at its file index, every triangle the file's face\n", rel, pi);
  if (err.code == SKS_OK) sks_model_free(&m);
  free(text);
}

static void test_bcn_epileptic(void) {
  const char *path = sks_test_assimp_model("X/BCN_Epileptic.X");
  if (!path) return;
  sks_model m;
  sks_error err = {0};
  CHECK_OK(sks_load(path, NULL, &m, &err), &err);
  size_t bones = 0;
  for (size_t i = 0; i < m.skin_count; ++i) bones += m.skins[i].joint_count;
  CHECK(m.skin_count == 3);
  CHECK_MSG(bones == 54, "%zu bones over the skins", bones);
  /* The three skins bind disjoint joints: 54 distinct skeleton joints. */
  int distinct = 1;
  for (size_t a = 0; a < m.skin_count; ++a)
    for (size_t i = 0; i < m.skins[a].joint_count; ++i)
      for (size_t b = a; b < m.skin_count; ++b)
        for (size_t j = (a == b ? i + 1 : 0); j < m.skins[b].joint_count; ++j)
          if (m.skins[a].joints[i] == m.skins[b].joints[j]) distinct = 0;
  CHECK(distinct);
  CHECK(m.clip_count == 1);
  if (m.clip_count == 1) CHECK_NEAR(m.clips[0].duration, 15840.0 / 4800.0, 1e-6);
  sks_model_free(&m);
}

/* anim_test.x: the mesh has 4 bones, the hierarchy only joint1/joint2. The
 * missing ones become joints under the mesh's node whose rest pose is the
 * bind pose their offset matrices describe. */
static void test_bones_without_nodes(void) {
  const char *path = sks_test_assimp_model("X/anim_test.x");
  if (!path) return;
  sks_model m;
  sks_error err = {0};
  CHECK_OK(sks_load(path, NULL, &m, &err), &err);
  if (err.code) return;
  int32_t mesh_node = sks_skeleton_find(&m.skeleton, "pCylinder1");
  int32_t j3 = sks_skeleton_find(&m.skeleton, "joint3"), j4 = sks_skeleton_find(&m.skeleton, "joint4");
  CHECK(mesh_node >= 0 && j3 > mesh_node && j4 > mesh_node);
  if (mesh_node < 0 || j3 < 0 || j4 < 0) { sks_model_free(&m); return; }
  CHECK(m.skeleton.parents[j3] == mesh_node && m.skeleton.parents[j4] == mesh_node);
  CHECK(m.part_count == 1 && m.parts[0].node == mesh_node && m.skin_count == 1);
  const sks_skin *sk = &m.skins[0];
  CHECK(sk->joint_count == 4);
  /* The new joints rest at their bind pose: palette entry = identity. */
  sks_mat4 *models = malloc(m.skeleton.joint_count * sizeof *models);
  sks_local_to_model_job fk = {m.skeleton.parents, m.skeleton.rest, m.skeleton.joint_count, NULL, models};
  CHECK(sks_local_to_model_job_run(&fk));
  int found = 0;
  for (size_t b = 0; b < sk->joint_count; ++b) {
    if (sk->joints[b] != j3 && sk->joints[b] != j4) continue;
    ++found;
    sks_mat4 pal = sks_m4_mul(&models[sk->joints[b]], &sk->inverse_bind[b]), id = sks_m4_identity();
    CHECK_MSG(mat_diff(&pal, &id) < 1e-5, "bone %zu: palette at rest %g from identity", b, mat_diff(&pal, &id));
  }
  CHECK(found == 2);
  /* The file gives 24 ticks per second: 24 ticks = 1 s. */
  CHECK(m.clip_count == 1);
  if (m.clip_count == 1) CHECK_NEAR(m.clips[0].duration, 1.0, 1e-6);
  free(models);
  sks_model_free(&m);
}

/* A node-less bone under a TRANSLATED mesh frame (procedural .x): X offsets
 * map from the scene root, so the new joint's rest local must undo the
 * frame's translation for it to rest at its bind pose. */
static void test_bone_without_node_under_moved_frame(void) {
  char path[4200];
  snprintf(path, sizeof path, "%s/ghost.x", sks_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs("xof 0303txt 0032\nFrame Body {\n FrameTransformMatrix {\n"
        "  1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,5.0,0.0,0.0,1.0;;\n }\n"
        " Mesh body {\n  3;\n  0.0;0.0;0.0;,\n  1.0;0.0;0.0;,\n  0.0;1.0;0.0;;\n  1;\n  3;0,1,2;;\n"
        "  SkinWeights {\n   \"ghost\";\n   3;\n   0,\n   1,\n   2;\n   1.0,\n   1.0,\n   1.0;\n"
        "   1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,0.0,0.0,1.0,0.0,0.0,-2.0,0.0,1.0;;\n  }\n }\n}\n", f);
  fclose(f);
  sks_model m;
  sks_error err = {0};
  sks_result r = sks_load(path, NULL, &m, &err);
  CHECK_MSG(r == SKS_OK, "%s", err.message);
  if (r != SKS_OK) return;
  int32_t body = sks_skeleton_find(&m.skeleton, "Body"), ghost = sks_skeleton_find(&m.skeleton, "ghost");
  CHECK(body >= 0 && ghost > body && m.skeleton.parents[ghost] == body);
  CHECK(m.skin_count == 1 && m.skins[0].joint_count == 1 && m.skins[0].joints[0] == ghost);
  if (ghost > body && body >= 0 && m.skin_count == 1) {
    sks_mat4 models[2];
    sks_local_to_model_job fk = {m.skeleton.parents, m.skeleton.rest, m.skeleton.joint_count, NULL, models};
    CHECK(m.skeleton.joint_count == 2 && sks_local_to_model_job_run(&fk));
    sks_mat4 pal = sks_m4_mul(&models[ghost], &m.skins[0].inverse_bind[0]), id = sks_m4_identity();
    CHECK_MSG(mat_diff(&pal, &id) < 1e-6, "palette at rest is %g from identity", mat_diff(&pal, &id));
    CHECK_NEAR(models[ghost].m[13], 2.0, 1e-6); /* bind world = inverse(offset): y = 2 */
  }
  sks_model_free(&m);
}

/* Loads path (checked) and whether it holds exactly one clip. */
static int load_one_clip(const char *path, sks_model *m) {
  sks_error err = {0};
  CHECK_OK(sks_load(path, NULL, m, &err), &err);
  CHECK(m->clip_count == 1);
  return m->clip_count == 1;
}

/* 3DS animations come with mTicksPerSecond = 0: Assimp's default is 25. */
static void test_ticks_per_second_zero(void) {
  const char *path = sks_test_assimp_model("3DS/RotatingCube.3DS");
  if (!path) return;
  const struct aiScene *s = aiImportFile(path, 0);
  CHECK(s && s->mNumAnimations == 1 && s->mAnimations[0]->mTicksPerSecond == 0);
  if (s) aiReleaseImport(s);
  sks_model m;
  if (load_one_clip(path, &m)) {
    CHECK_NEAR(m.clips[0].duration, 181.0 / 25.0, 1e-5);
    int finite = 1;
    for (size_t t = 0; t < m.clips[0].track_count; ++t)
      for (size_t k = 0; k < m.clips[0].tracks[t].key_count; ++k)
        if (!isfinite(m.clips[0].tracks[t].times[k])) finite = 0;
    CHECK(finite);
  }
  sks_model_free(&m);
}

/* LightWave keys before time 0 (pre-behaviour): the clip is moved to start
 * at 0 with a warning, keeps its length and key spacing, and writes (glTF
 * key times start at 0: `control FILE -o` used to fail after the bake). */
static void test_negative_key_times(const char *rel, double start) {
  const char *path = sks_test_assimp_model(rel);
  if (!path) return;
  const struct aiScene *s = aiImportFile(path, 0);
  CHECK(s && s->mNumAnimations == 1);
  double first = 0, last = 0;
  if (s && s->mNumAnimations == 1) { /* Assimp's own earliest and latest key */
    const struct aiAnimation *an = s->mAnimations[0];
    double tps = an->mTicksPerSecond > 0 ? an->mTicksPerSecond : 25.0;
    first = 1e30; last = -1e30;
    for (unsigned c = 0; c < an->mNumChannels; ++c) {
      const struct aiNodeAnim *ch = an->mChannels[c];
      for (unsigned k = 0; k < ch->mNumPositionKeys; ++k) {
        first = fmin(first, ch->mPositionKeys[k].mTime / tps);
        last = fmax(last, ch->mPositionKeys[k].mTime / tps);
      }
      for (unsigned k = 0; k < ch->mNumRotationKeys; ++k) {
        first = fmin(first, ch->mRotationKeys[k].mTime / tps);
        last = fmax(last, ch->mRotationKeys[k].mTime / tps);
      }
    }
    CHECK_MSG(fabs(first - start) < 1e-6, "%s: Assimp's first key at %g s (the test expects %g)", rel, first, start);
  }
  if (s) aiReleaseImport(s);
  sks_model m;
  if (load_one_clip(path, &m)) {
    const sks_clip *c = &m.clips[0];
    double lo = 1e30;
    int increasing = 1;
    for (size_t t = 0; t < c->track_count; ++t) {
      if (c->tracks[t].key_count) lo = fmin(lo, c->tracks[t].times[0]);
      for (size_t k = 1; k < c->tracks[t].key_count; ++k)
        if (!(c->tracks[t].times[k] > c->tracks[t].times[k - 1])) increasing = 0;
    }
    CHECK_MSG(lo == 0.0, "%s: earliest key at %g s, not 0", rel, lo);
    CHECK(increasing);
    CHECK_NEAR(c->duration, last - first, 1e-5); /* the same length */
    int warned = 0;
    for (size_t i = 0; i < m.warning_count; ++i) warned |= strstr(m.warnings[i], "moved to start at 0") != NULL;
    CHECK_MSG(warned, "%s: no warning about the moved clip", rel);
    char out[1024];
    snprintf(out, sizeof out, "%s/negative_keys.glb", sks_test_tmpdir());
    sks_error err = {0};
    CHECK_OK(sks_write_glb(out, &m, NULL, &err), &err);
    remove(out);
  }
  sks_model_free(&m);
}

/* FBX pivot chains ("Cube1_$AssimpFbx$_Translation" ... "Cube1") are kept as
 * ordinary joints in chain order; the mesh follows the real "Cube1". */
static void test_fbx_pivots(void) {
  const char *path = sks_test_assimp_model("FBX/cubes_with_mirroring_and_pivot.fbx");
  if (!path) return;
  sks_model m;
  sks_error err = {0};
  CHECK_OK(sks_load(path, NULL, &m, &err), &err);
  if (err.code) return;
  int32_t tr = sks_skeleton_find(&m.skeleton, "Cube1_$AssimpFbx$_Translation");
  int32_t sc = sks_skeleton_find(&m.skeleton, "Cube1_$AssimpFbx$_Scaling");
  CHECK(tr >= 0 && sc > tr);
  size_t pivots = 0;
  for (size_t i = 0; i < m.skeleton.joint_count; ++i)
    if (strstr(m.skeleton.names[i], "$AssimpFbx$")) ++pivots;
  CHECK(pivots == 7);
  /* Mirroring: a joint with a negative scale survives decomposition. */
  int negative = 0;
  for (size_t i = 0; i < m.skeleton.joint_count; ++i)
    if (m.skeleton.rest[i].scale.x * m.skeleton.rest[i].scale.y * m.skeleton.rest[i].scale.z < 0) negative = 1;
  CHECK(negative);
  /* Materials: names and diffuse colours as the file has them. */
  CHECK(m.material_count == 2);
  if (m.material_count == 2) {
    CHECK(strcmp(m.materials[0].name, "Mat_Green") == 0 && strcmp(m.materials[1].name, "Mat_Red") == 0);
    CHECK_NEAR(m.materials[0].base_color[0], 0.0, 1e-6);
    CHECK_NEAR(m.materials[0].base_color[1], 0.8, 1e-6);
    CHECK_NEAR(m.materials[1].base_color[0], 0.8, 1e-6);
    CHECK_NEAR(m.materials[1].base_color[3], 1.0, 1e-6);
  }
  CHECK(m.part_count == 4 && m.parts[2].material == 1);
  sks_model_free(&m);
}

/* A procedural SMD with one vertex bound to 10 bones (weights i/55): the 8
 * largest (bones 3..10) are kept and renormalised to i/52. */
static void test_more_than_eight_influences(void) {
  char path[4200];
  snprintf(path, sizeof path, "%s/many.smd", sks_test_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fprintf(f, "version 1\nnodes\n");
  for (int i = 0; i <= 10; ++i) fprintf(f, "%d \"b%d\" %d\n", i, i, i == 0 ? -1 : 0);
  fprintf(f, "end\nskeleton\ntime 0\n");
  for (int i = 0; i <= 10; ++i) fprintf(f, "%d %f 0 0 0 0 0\n", i, 0.1 * i);
  fprintf(f, "end\ntriangles\nmat.bmp\n0 0 0 0 0 0 1 0 0 10");
  for (int i = 1; i <= 10; ++i) fprintf(f, " %d %f", i, i / 55.0);
  fprintf(f, "\n0 1 0 0 0 0 1 1 0 1 1 1.0\n0 0 1 0 0 0 1 0 1 1 2 1.0\nend\n");
  fclose(f);
  sks_model m;
  sks_error err = {0};
  CHECK_OK(sks_load(path, NULL, &m, &err), &err);
  if (err.code) return;
  CHECK(m.part_count == 1 && m.skin_count == 1);
  const sks_mesh_part *p = &m.parts[0];
  CHECK(p->influence_count == 8);
  /* Find the vertex at the origin (Assimp may emit corners in any order). */
  size_t v0 = p->vertex_count;
  for (size_t v = 0; v < p->vertex_count; ++v)
    if (p->positions[3 * v] == 0 && p->positions[3 * v + 1] == 0 && p->positions[3 * v + 2] == 0) v0 = v;
  CHECK(v0 < p->vertex_count);
  if (v0 < p->vertex_count && p->influence_count == 8) {
    double sum = 0;
    int ok = 1;
    for (int k = 0; k < 8; ++k) {
      int32_t joint = m.skins[0].joints[p->joints[v0 * 8 + k]];
      int bone = atoi(m.skeleton.names[joint] + 1);
      float w = p->weights[v0 * 8 + k];
      sum += w;
      if (bone < 3 || fabs(w - bone / 52.0) > 1e-5) ok = 0;
    }
    CHECK_MSG(ok, "kept influences are not bones 3..10 renormalised");
    CHECK_NEAR(sum, 1.0, 1e-6);
    /* The loss is recorded and check reports it as a warning at that vertex. */
    CHECK(p->dropped_influence_vertices == 1 && p->first_dropped_influence_vertex == v0 &&
          p->file_max_influences == 10);
    sks_findings fs;
    CHECK_OK(sks_check(&m, NULL, &fs, &err), &err);
    CHECK(fs.total_by_kind[SKS_FINDING_TOO_MANY_INFLUENCES] == 1 && fs.error_count == 0);
    for (size_t i = 0; i < fs.count; ++i) {
      if (fs.items[i].kind != SKS_FINDING_TOO_MANY_INFLUENCES) continue;
      char want[96];
      snprintf(want, sizeof want, "many.smd: part 0 '%s', vertex %zu: 1 vertex(es)", p->name, v0);
      CHECK_MSG(strstr(fs.items[i].message, want) == fs.items[i].message &&
                    strstr(fs.items[i].message, "(up to 10) than the kernel supports (8)"),
                "%s", fs.items[i].message);
      CHECK(fs.items[i].severity == SKS_SEVERITY_WARNING && fs.items[i].vertex == (int64_t)v0);
    }
    sks_findings_free(&fs);
  }
  sks_model_free(&m);

  /* Weights that sum to 1.1 in the file (i/50): the 8 kept are rescaled to
   * the file's sum, not to 1, so check still reports the bad sum. */
  f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fprintf(f, "version 1\nnodes\n");
  for (int i = 0; i <= 10; ++i) fprintf(f, "%d \"b%d\" %d\n", i, i, i == 0 ? -1 : 0);
  fprintf(f, "end\nskeleton\ntime 0\n");
  for (int i = 0; i <= 10; ++i) fprintf(f, "%d %f 0 0 0 0 0\n", i, 0.1 * i);
  fprintf(f, "end\ntriangles\nmat.bmp\n0 0 0 0 0 0 1 0 0 10");
  for (int i = 1; i <= 10; ++i) fprintf(f, " %d %f", i, i / 50.0);
  fprintf(f, "\n0 1 0 0 0 0 1 1 0 1 1 1.0\n0 0 1 0 0 0 1 0 1 1 2 1.0\nend\n");
  fclose(f);
  CHECK_OK(sks_load(path, NULL, &m, &err), &err);
  if (err.code) return;
  p = &m.parts[0];
  double sum = 0;
  for (size_t v = 0; v < p->vertex_count && p->influence_count == 8; ++v)
    if (p->positions[3 * v] == 0 && p->positions[3 * v + 1] == 0 && p->positions[3 * v + 2] == 0)
      for (int k = 0; k < 8; ++k) sum += p->weights[v * 8 + k];
  CHECK_NEAR(sum, 1.1, 1e-5);
  sks_findings fs;
  CHECK_OK(sks_check(&m, NULL, &fs, &err), &err);
  CHECK(fs.total_by_kind[SKS_FINDING_WEIGHT_SUM] == 1 &&
        fs.total_by_kind[SKS_FINDING_TOO_MANY_INFLUENCES] == 1);
  sks_findings_free(&fs);
  sks_model_free(&m);
}

static void test_compare_models(void) {
  static const char *models[] = {
      "X/Testwuson.X", "X/BCN_Epileptic.X", "X/anim_test.x", "FBX/animation_with_skeleton.fbx",
      "FBX/huesitos.fbx", "FBX/cubes_with_mirroring_and_pivot.fbx", "FBX/spider.fbx",
      "glTF2/simple_skin/simple_skin.gltf", "3DS/RotatingCube.3DS", "MD5/SimpleCube.md5mesh",
      "Collada/duck.dae", "SMD/WusonSMD.smd", "BVH/01_01.bvh", "CSM/ThomasFechten.csm"};
  for (size_t i = 0; i < sizeof models / sizeof *models; ++i) {
    const char *path = sks_test_assimp_model(models[i]);
    if (path) compare_with_assimp(models[i], path);
  }
  const char *fox = sks_test_shared_data("Fox/Fox.glb");
  if (fox) compare_with_assimp("Fox/Fox.glb", fox);
}

/* Joint a of model A and joint b of model B have the same name chain up to
 * the first unnamed-by-us ancestor (Assimp adds a "ROOT" above a glTF scene's
 * several roots; names of unnamed nodes differ between the readers). */
static int same_chain(const sks_model *A, int32_t a, const sks_model *B, int32_t b) {
  while (a >= 0 && b >= 0) {
    if (strcmp(A->skeleton.names[a], B->skeleton.names[b]) != 0) return 0;
    a = A->skeleton.parents[a];
    b = B->skeleton.parents[b];
  }
  return 1;
}

/* The same glTF through the native reader and through Assimp (force_assimp):
 * Fox_blender35_raw.glb has two armatures with identical bone names, so bones
 * and channels must resolve to their own armature, not the first match. */
static void test_cross_reader(const char *rel) {
  const char *path = sks_test_shared_data(rel);
  if (!path) return;
  sks_model a, b;
  sks_error err = {0};
  sks_load_options force = {.force_assimp = 1};
  CHECK_OK(sks_load(path, NULL, &a, &err), &err);
  if (err.code) return;
  CHECK_OK(sks_load(path, &force, &b, &err), &err);
  if (err.code) { sks_model_free(&a); return; }
  CHECK(a.part_count == b.part_count && a.skin_count == b.skin_count && a.clip_count == b.clip_count);
  for (size_t i = 0; i < a.part_count && i < b.part_count; ++i) {
    const sks_mesh_part *p = &a.parts[i], *q = &b.parts[i];
    CHECK_MSG(p->vertex_count == q->vertex_count, "%s part %zu: %zu vs %zu vertices", rel, i, p->vertex_count, q->vertex_count);
    CHECK(same_chain(&a, p->node, &b, q->node));
    CHECK((p->skin < 0) == (q->skin < 0));
    if (p->vertex_count != q->vertex_count) continue;
    CHECK(memcmp(p->positions, q->positions, p->vertex_count * 3 * sizeof(float)) == 0);
    if (p->uvs && q->uvs) CHECK(memcmp(p->uvs, q->uvs, p->vertex_count * 2 * sizeof(float)) == 0);
    if (p->skin < 0 || q->skin < 0) continue;
    const sks_skin *sa = &a.skins[p->skin], *sb = &b.skins[q->skin];
    /* Per vertex: the same (joint chain, weight) influences. */
    int infl_ok = 1;
    for (size_t v = 0; v < p->vertex_count && infl_ok; ++v)
      for (uint32_t k = 0; k < p->influence_count; ++k) {
        float w = p->weights[v * p->influence_count + k];
        if (w == 0) continue;
        int32_t ja = sa->joints[p->joints[v * p->influence_count + k]];
        int found = 0;
        for (uint32_t l = 0; l < q->influence_count && !found; ++l)
          if (fabs(q->weights[v * q->influence_count + l] - w) < 1e-6 &&
              same_chain(&a, ja, &b, sb->joints[q->joints[v * q->influence_count + l]]))
            found = 1;
        if (!found) infl_ok = 0;
      }
    CHECK_MSG(infl_ok, "%s part %zu: influences resolve to other joints through Assimp", rel, i);
  }
  for (size_t c = 0; c < a.clip_count && c < b.clip_count; ++c) {
    size_t matched = 0;
    for (size_t t = 0; t < a.clips[c].track_count; ++t) {
      const sks_track *ta = &a.clips[c].tracks[t];
      for (size_t u = 0; u < b.clips[c].track_count; ++u) {
        const sks_track *tb = &b.clips[c].tracks[u];
        if (tb->path != ta->path || tb->key_count != ta->key_count || !same_chain(&a, ta->joint, &b, tb->joint)) continue;
        size_t nv = ta->key_count * sks_track_components(ta->path);
        if (memcmp(ta->values, tb->values, nv * sizeof(float)) == 0) ++matched;
        break;
      }
    }
    CHECK_MSG(matched == a.clips[c].track_count, "%s clip %zu: %zu of %zu tracks found through Assimp", rel, c,
              matched, a.clips[c].track_count);
  }
  sks_model_free(&a);
  sks_model_free(&b);
}

static void test_load_errors(void) {
  sks_model m;
  sks_error err = {0};
  CHECK(sks_load("/nonexistent/dir/rig.fbx", NULL, &m, &err) == SKS_ERR_IO);
  CHECK(strstr(err.message, "/nonexistent/dir/rig.fbx") != NULL);
  CHECK(m.part_count == 0 && m.skeleton.joint_count == 0);
  CHECK(sks_load(sks_test_tmpdir(), NULL, &m, &err) == SKS_ERR_IO);
  CHECK(strstr(err.message, "directory") != NULL);
  CHECK(sks_load(NULL, NULL, &m, &err) == SKS_ERR_ARGUMENT);
  char path[4200];
  snprintf(path, sizeof path, "%s/not_a_model.fbx", sks_test_tmpdir());
  FILE *f = fopen(path, "w");
  if (f) { fputs("this is not a model\n", f); fclose(f); }
  sks_result r = sks_load(path, NULL, &m, &err);
  CHECK(r != SKS_OK);
  CHECK(strstr(err.message, "not_a_model.fbx") != NULL);
  CHECK(m.part_count == 0 && m.skeleton.names == NULL);
}

int main(void) {
  {
    static const size_t wuson[] = {3205}, bcn[] = {1170, 1196, 648}, anim[] = {1720};
    test_x_file_order("X/Testwuson.X", 1, wuson);
    test_x_file_order("X/BCN_Epileptic.X", 3, bcn);
    test_x_file_order("X/anim_test.x", 1, anim);
  }
  test_testwuson();
  test_bcn_epileptic();
  test_bones_without_nodes();
  test_bone_without_node_under_moved_frame();
  test_ticks_per_second_zero();
  test_negative_key_times("LWS/move_y_pre_ofrep_post_osc.lws", -2.4);
  test_negative_key_times("LWS/move_x_oldformat_56.lws", -0.04);
  test_fbx_pivots();
  test_more_than_eight_influences();
  test_compare_models();
  test_cross_reader("Fox/raw/Fox_blender35_raw.glb");
  test_cross_reader("Fox/Fox.glb");
  test_load_errors();
  return sks_test_finish();
}
