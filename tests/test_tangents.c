/* Generated tangents (sks_mesh_part_generate_tangents,
 * sks_model_generate_needed_tangents), where exact answers are known:
 * a grid in a plane with glTF's top-left UVs gives the +u direction and
 * w = +1 (bitangent = cross(n, t) * w along -v, i.e. image up); mirrored
 * UVs flip w; any rotation of the mesh rotates the tangent; tilted normals
 * give tangents orthogonal to them; UVs with no area give some unit
 * orthogonal vector; the model pass picks the UV set the normal map samples
 * and leaves parts that need none. Where Blender is installed, its glTF
 * exporter's MikkTSpace tangents (export_tangents) of a UV sphere whose
 * left half has mirrored UVs are the reference: the same w on every vertex
 * and the same direction (smooth shading: MikkTSpace splits no vertex). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"
#include "math/sks_math.h"

enum { GN = 5 }; /* GN x GN vertices */

/* A grid in z = 0, x, y in [0, 1]; u = a*x + b, v = 1 - y (glTF: v down). */
static void grid(sks_mesh_part *p, float a, float b) {
  memset(p, 0, sizeof *p);
  p->name = "grid";
  p->material = -1;
  p->skin = -1;
  p->vertex_count = GN * GN;
  p->positions = malloc(3 * GN * GN * sizeof(float));
  p->normals = malloc(3 * GN * GN * sizeof(float));
  p->uvs = malloc(2 * GN * GN * sizeof(float));
  p->index_count = 6 * (GN - 1) * (GN - 1);
  p->indices = malloc(p->index_count * sizeof(uint32_t));
  for (int j = 0; j < GN; ++j)
    for (int i = 0; i < GN; ++i) {
      const int v = j * GN + i;
      const float x = (float)i / (GN - 1), y = (float)j / (GN - 1);
      p->positions[3 * v] = x, p->positions[3 * v + 1] = y, p->positions[3 * v + 2] = 0;
      p->normals[3 * v] = 0, p->normals[3 * v + 1] = 0, p->normals[3 * v + 2] = 1;
      p->uvs[2 * v] = a * x + b, p->uvs[2 * v + 1] = 1 - y;
    }
  size_t k = 0;
  for (int j = 0; j + 1 < GN; ++j)
    for (int i = 0; i + 1 < GN; ++i) {
      const uint32_t v = (uint32_t)(j * GN + i);
      const uint32_t q[6] = {v, v + 1, v + GN + 1, v, v + GN + 1, v + GN};
      memcpy(&p->indices[k], q, sizeof q);
      k += 6;
    }
}

static void grid_free(sks_mesh_part *p) {
  free(p->positions);
  free(p->normals);
  free(p->uvs);
  free(p->uvs1);
  free(p->indices);
  free(p->tangents);
}

/* max over vertices of |t - want| and of |w - want_w| */
static double tangent_off(const sks_mesh_part *p, const double want[3], double want_w, double *w_off) {
  double worst = 0;
  *w_off = 0;
  for (size_t v = 0; v < p->vertex_count; ++v) {
    for (int k = 0; k < 3; ++k) worst = fmax(worst, fabs(p->tangents[4 * v + k] - want[k]));
    *w_off = fmax(*w_off, fabs(p->tangents[4 * v + 3] - want_w));
  }
  return worst;
}

static void test_plane(void) {
  sks_mesh_part p;
  sks_error err = {0};
  double w;
  grid(&p, 1, 0);
  CHECK_OK(sks_mesh_part_generate_tangents(&p, 0, &err), &err);
  const double px[3] = {1, 0, 0}, mx[3] = {-1, 0, 0};
  double off = p.tangents ? tangent_off(&p, px, 1, &w) : 1;
  CHECK_MSG(off < 1e-6 && w == 0, "plane: tangent off +x by %g, w off +1 by %g", off, w);
  /* glTF's rule: bitangent = cross(n, t) * w is image up, +y here */
  CHECK(sks_mesh_part_generate_tangents(&p, 0, &err) == SKS_ERR_ARGUMENT); /* it has tangents now */
  grid_free(&p);
  grid(&p, -2, 3); /* mirrored u: the tangent is -x, the bitangent stays +y */
  CHECK_OK(sks_mesh_part_generate_tangents(&p, 0, &err), &err);
  off = p.tangents ? tangent_off(&p, mx, -1, &w) : 1;
  CHECK_MSG(off < 1e-6 && w == 0, "mirrored: tangent off -x by %g, w off -1 by %g", off, w);
  grid_free(&p);
  /* rotated mesh: the tangent turns with it */
  grid(&p, 1, 0);
  sks_quat q = sks_q_normalize(sks_q(0.3f, -0.5f, 0.2f, 0.8f));
  for (size_t v = 0; v < p.vertex_count; ++v) {
    sks_vec3 a = sks_q_rotate(q, sks_v3(p.positions[3 * v], p.positions[3 * v + 1], p.positions[3 * v + 2]));
    sks_vec3 n = sks_q_rotate(q, sks_v3(0, 0, 1));
    p.positions[3 * v] = a.x, p.positions[3 * v + 1] = a.y, p.positions[3 * v + 2] = a.z;
    p.normals[3 * v] = n.x, p.normals[3 * v + 1] = n.y, p.normals[3 * v + 2] = n.z;
  }
  CHECK_OK(sks_mesh_part_generate_tangents(&p, 0, &err), &err);
  sks_vec3 rx = sks_q_rotate(q, sks_v3(1, 0, 0));
  const double want[3] = {rx.x, rx.y, rx.z};
  off = p.tangents ? tangent_off(&p, want, 1, &w) : 1;
  CHECK_MSG(off < 1e-5 && w == 0, "rotated: tangent off R x by %g, w off by %g", off, w);
  grid_free(&p);
  /* tilted normals: unit, orthogonal to the normal, on the +x side */
  grid(&p, 1, 0);
  for (size_t v = 0; v < p.vertex_count; ++v) {
    const double n[3] = {0.3 * sin((double)v), 0.4 * cos((double)v), 1};
    const double l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int k = 0; k < 3; ++k) p.normals[3 * v + k] = (float)(n[k] / l);
  }
  CHECK_OK(sks_mesh_part_generate_tangents(&p, 0, &err), &err);
  double worst_dot = 0, worst_len = 0, min_x = 1;
  for (size_t v = 0; p.tangents && v < p.vertex_count; ++v) {
    const float *t = &p.tangents[4 * v], *n = &p.normals[3 * v];
    worst_dot = fmax(worst_dot, fabs(t[0] * n[0] + t[1] * n[1] + t[2] * n[2]));
    worst_len = fmax(worst_len, fabs(sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]) - 1));
    min_x = fmin(min_x, t[0]);
  }
  CHECK_MSG(worst_dot < 1e-6 && worst_len < 1e-6 && min_x > 0.8, "tilted: |t.n| %g, |len-1| %g, min t.x %g",
            worst_dot, worst_len, min_x);
  grid_free(&p);
  /* no UV area: some unit vector orthogonal to the normal, w = 1 */
  grid(&p, 0, 0.5f);
  for (size_t v = 0; v < p.vertex_count; ++v) p.uvs[2 * v + 1] = 0.25f;
  CHECK_OK(sks_mesh_part_generate_tangents(&p, 0, &err), &err);
  for (size_t v = 0; p.tangents && v < p.vertex_count; ++v) {
    const float *t = &p.tangents[4 * v];
    CHECK_MSG(fabs(t[2]) < 1e-6 && fabs(t[0] * t[0] + t[1] * t[1] - 1) < 1e-6 && t[3] == 1.0f,
              "no UV area: vertex %zu tangent (%g %g %g %g)", v, t[0], t[1], t[2], t[3]);
  }
  grid_free(&p);
  /* what it needs */
  grid(&p, 1, 0);
  float *nrm = p.normals;
  p.normals = NULL;
  CHECK(sks_mesh_part_generate_tangents(&p, 0, &err) == SKS_ERR_ARGUMENT && strstr(err.message, "normals"));
  p.normals = nrm;
  CHECK(sks_mesh_part_generate_tangents(&p, 1, &err) == SKS_ERR_ARGUMENT); /* no uvs1 */
  CHECK(!p.tangents);
  grid_free(&p);
}

/* The model pass: a normal map on UV set 1 uses uvs1; a clearcoat normal
 * map alone needs tangents too; no normal map, or no UVs: untouched. */
static void test_model(void) {
  sks_model m;
  memset(&m, 0, sizeof m);
  sks_material mats[3];
  for (int i = 0; i < 3; ++i) sks_material_init(&mats[i]);
  mats[0].textures[SKS_TEXTURE_NORMAL].image = 0;
  mats[0].textures[SKS_TEXTURE_NORMAL].tex_coord = 1;
  mats[1].textures[SKS_TEXTURE_CLEARCOAT_NORMAL].image = 0;
  mats[2].textures[SKS_TEXTURE_BASE_COLOR].image = 0;
  sks_mesh_part parts[4];
  for (int i = 0; i < 4; ++i) grid(&parts[i], 1, 0);
  parts[0].material = 0; /* UV set 1: mirrored there, so w tells which set was used */
  parts[0].uvs1 = malloc(2 * GN * GN * sizeof(float));
  for (size_t v = 0; v < parts[0].vertex_count; ++v)
    parts[0].uvs1[2 * v] = -parts[0].uvs[2 * v], parts[0].uvs1[2 * v + 1] = parts[0].uvs[2 * v + 1];
  parts[1].material = 1;
  parts[2].material = 2;
  parts[3].material = 1;
  free(parts[3].uvs);
  parts[3].uvs = NULL;
  m.materials = mats;
  m.material_count = 3;
  m.parts = parts;
  m.part_count = 4;
  size_t n = 99;
  sks_error err = {0};
  CHECK_OK(sks_model_generate_needed_tangents(&m, &n, &err), &err);
  CHECK_MSG(n == 2, "%zu parts given tangents (want 2)", n);
  double w;
  const double mx[3] = {-1, 0, 0}, px[3] = {1, 0, 0};
  CHECK_MSG(parts[0].tangents && tangent_off(&parts[0], mx, -1, &w) < 1e-6 && w == 0,
            "normal map on UV set 1: tangents from uvs1");
  CHECK_MSG(parts[1].tangents && tangent_off(&parts[1], px, 1, &w) < 1e-6 && w == 0,
            "clearcoat normal map: tangents");
  CHECK_MSG(!parts[2].tangents && !parts[3].tangents, "no normal map / no UVs: untouched");
  CHECK_OK(sks_model_generate_needed_tangents(&m, &n, &err), &err);
  CHECK_MSG(n == 0, "a second pass generates %zu (want 0: they have tangents)", n);
  for (int i = 0; i < 4; ++i) grid_free(&parts[i]);
}

static const char k_blender_script[] =
    "import numpy as np\n"
    "np.bool = bool  # Debian 12's Blender 3.4 with numpy 1.24\n"
    "import bpy, sys\n"
    "bpy.ops.wm.read_factory_settings(use_empty=True)\n"
    "bpy.ops.mesh.primitive_uv_sphere_add(segments=24, ring_count=12)\n"
    "ob = bpy.context.active_object\n"
    "bpy.ops.object.shade_smooth()\n"
    "me = ob.data\n"
    "uv = me.uv_layers.active.data\n"
    "for poly in me.polygons:\n"
    "    cx = sum(me.vertices[me.loops[i].vertex_index].co.x for i in poly.loop_indices) / len(poly.loop_indices)\n"
    "    if cx < 0:\n"
    "        for i in poly.loop_indices:\n"
    "            uv[i].uv.x = 1 - uv[i].uv.x\n"
    "bpy.ops.export_scene.gltf(filepath=sys.argv[-1], export_format='GLTF_SEPARATE', export_tangents=True,\n"
    "                          export_materials='NONE')\n";

static void test_blender_reference(void) {
  if (system("command -v blender > /dev/null 2>&1") != 0) {
    printf("skip (part): blender not installed: the MikkTSpace reference is not run\n");
    return;
  }
  char script[4200], out[4200], cmd[13000];
  snprintf(script, sizeof script, "%s/tangents.py", sks_test_tmpdir());
  snprintf(out, sizeof out, "%s/sphere.gltf", sks_test_tmpdir());
  FILE *f = fopen(script, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs(k_blender_script, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "blender -b --factory-startup --python '%s' -- '%s' > '%s.log' 2>&1", script, out, out);
  if (system(cmd) != 0) {
    printf("skip (part): blender could not export the sphere (see %s.log)\n", out);
    return;
  }
  sks_model m;
  sks_error err = {0};
  CHECK_OK(sks_load(out, NULL, &m, &err), &err);
  if (err.code) return;
  CHECK_MSG(m.part_count == 1 && m.parts[0].tangents && m.parts[0].uvs, "Blender's sphere has no tangents or UVs");
  if (m.part_count == 1 && m.parts[0].tangents && m.parts[0].uvs) {
    sks_mesh_part *p = &m.parts[0];
    float *ref = p->tangents;
    p->tangents = NULL;
    CHECK_OK(sks_mesh_part_generate_tangents(p, 0, &err), &err);
    size_t same_w = 0, mirrored = 0;
    double min_dot = 1;
    for (size_t v = 0; p->tangents && v < p->vertex_count; ++v) {
      const float *a = &ref[4 * v], *b = &p->tangents[4 * v];
      min_dot = fmin(min_dot, a[0] * b[0] + a[1] * b[1] + a[2] * b[2]);
      same_w += a[3] == b[3];
      mirrored += a[3] < 0;
    }
    printf("Blender MikkTSpace sphere: %zu vertices (%zu with w = -1), same w on %zu, min direction dot %.5f\n",
           p->vertex_count, mirrored, same_w, min_dot);
    CHECK_MSG(same_w == p->vertex_count && mirrored > 0 && mirrored < p->vertex_count,
              "w agrees on %zu of %zu vertices (%zu mirrored in the reference)", same_w, p->vertex_count, mirrored);
    CHECK_MSG(min_dot > 0.99, "tangent directions differ from Blender's: min dot %.5f", min_dot);
    free(ref);
  }
  sks_model_free(&m);
}

int main(void) {
  test_plane();
  test_model();
  test_blender_reference();
  return sks_test_finish();
}
