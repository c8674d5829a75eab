/* Outputs: sks_write_file_atomic and the .obj / .f32 position contract. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sks_test.h"

static char *dup_s(const char *s) {
  char *d = malloc(strlen(s) + 1);
  strcpy(d, s);
  return d;
}

/* Two parts: 'quad' (4 vertices, 2 triangles) and 'tri part' (3 vertices,
 * 1 triangle, rigid). Only what the writers read is filled. */
static void make_model(sks_model *m) {
  memset(m, 0, sizeof *m);
  m->source_path = dup_s("/x/Proc.glb");
  m->part_count = 2;
  m->parts = calloc(2, sizeof(sks_mesh_part));
  m->parts[0].name = dup_s("quad");
  m->parts[0].vertex_count = 4;
  m->parts[0].index_count = 6;
  m->parts[0].indices = malloc(6 * sizeof(uint32_t));
  const uint32_t a[6] = {0, 1, 2, 1, 3, 2};
  memcpy(m->parts[0].indices, a, sizeof a);
  m->parts[1].name = dup_s("tri part");
  m->parts[1].skin = -1;
  m->parts[1].vertex_count = 3;
  m->parts[1].index_count = 3;
  m->parts[1].indices = malloc(3 * sizeof(uint32_t));
  const uint32_t b[3] = {2, 0, 1};
  memcpy(m->parts[1].indices, b, sizeof b);
}

static unsigned char *read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *d = malloc((size_t)n + 1);
  size_t got = fread(d, 1, (size_t)n, f);
  fclose(f);
  d[got] = 0;
  *size = got;
  return d;
}

/* Number of entries in dir other than . and .. */
static int dir_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) ++n;
  if (d) closedir(d);
  return n;
}

static void test_atomic(const char *dir) {
  char path[4200];
  snprintf(path, sizeof path, "%s/atomic/out.bin", dir);
  char sub[4200];
  snprintf(sub, sizeof sub, "%s/atomic", dir);
  sks_error err;
  /* Folder missing: IO error naming the path, nothing created. */
  CHECK(sks_write_file_atomic(path, "abc", 3, &err) == SKS_ERR_IO);
  CHECK(strstr(err.message, "out.bin") != NULL);
  CHECK(access(sub, F_OK) != 0);
  mkdir(sub, 0755);
  CHECK_OK(sks_write_file_atomic(path, "abc", 3, &err), &err);
  size_t n = 0;
  unsigned char *d = read_all(path, &n);
  CHECK(d && n == 3 && memcmp(d, "abc", 3) == 0);
  free(d);
  /* Overwriting an existing output replaces it whole; no temp files remain. */
  CHECK_OK(sks_write_file_atomic(path, "hello", 5, &err), &err);
  d = read_all(path, &n);
  CHECK(d && n == 5 && memcmp(d, "hello", 5) == 0);
  free(d);
  CHECK(dir_entries(sub) == 1);
  struct stat st;
  CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
  /* Empty file. */
  CHECK_OK(sks_write_file_atomic(path, NULL, 0, &err), &err);
  CHECK(stat(path, &st) == 0 && st.st_size == 0);
  /* A folder as the destination: error, folder intact. */
  CHECK(sks_write_file_atomic(sub, "x", 1, &err) == SKS_ERR_IO);
  CHECK(stat(sub, &st) == 0 && S_ISDIR(st.st_mode));
  CHECK(dir_entries(sub) == 1);
}

static void test_positions(const char *dir) {
  sks_model m;
  make_model(&m);
  float pos[21];
  for (int i = 0; i < 21; ++i) pos[i] = (float)i * 0.1f - 1.0f / 3.0f;
  sks_error err;
  char path[4200];

  snprintf(path, sizeof path, "%s/p.f32", dir);
  CHECK_OK(sks_write_positions(path, &m, pos, &err), &err);
  size_t n = 0;
  unsigned char *d = read_all(path, &n);
  CHECK(n == 12 * 7);
  if (d && n == 84) {
    for (int i = 0; i < 21; ++i) {
      uint32_t u = (uint32_t)d[4 * i] | (uint32_t)d[4 * i + 1] << 8 | (uint32_t)d[4 * i + 2] << 16 |
                   (uint32_t)d[4 * i + 3] << 24;
      float f;
      memcpy(&f, &u, 4);
      CHECK(f == pos[i]);
    }
  }
  free(d);

  snprintf(path, sizeof path, "%s/p.OBJ", dir);
  CHECK_OK(sks_write_positions(path, &m, pos, &err), &err);
  d = read_all(path, &n);
  CHECK(d != NULL);
  if (d) {
    const char *s = (const char *)d;
    CHECK(strstr(s, "o quad\n") != NULL);
    CHECK(strstr(s, "o tri_part\n") != NULL);
    CHECK(strstr(s, "f 1 2 3\nf 2 4 3\n") != NULL);
    CHECK(strstr(s, "f 7 5 6\n") != NULL); /* part 1's indices offset by 4 */
    /* Every v line reads back as the same float. */
    int v = 0;
    for (const char *line = s; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
      if (line[0] == 'v' && line[1] == ' ') {
        float x, y, z;
        CHECK(sscanf(line, "v %f %f %f", &x, &y, &z) == 3);
        if (v < 7) CHECK(x == pos[3 * v] && y == pos[3 * v + 1] && z == pos[3 * v + 2]);
        ++v;
      }
    }
    CHECK(v == 7);
  }
  free(d);

  /* Unknown extension: clear error, nothing written. */
  snprintf(path, sizeof path, "%s/p.ply", dir);
  CHECK(sks_write_positions(path, &m, pos, &err) == SKS_ERR_ARGUMENT);
  CHECK(strstr(err.message, "'.ply'") != NULL && strstr(err.message, ".obj") != NULL);
  CHECK(access(path, F_OK) != 0);
  snprintf(path, sizeof path, "%s/noext", dir);
  CHECK(sks_write_positions(path, &m, pos, &err) == SKS_ERR_ARGUMENT);
  CHECK(access(path, F_OK) != 0);

  /* A bad triangle index is refused (no file), not written out of range. */
  m.parts[1].indices[0] = 3;
  snprintf(path, sizeof path, "%s/bad.obj", dir);
  CHECK(sks_write_positions(path, &m, pos, &err) == SKS_ERR_INVALID);
  CHECK(strstr(err.message, "part 1 'tri part', triangle 0") != NULL);
  CHECK(access(path, F_OK) != 0);
  sks_model_free(&m);
}

int main(void) {
  const char *dir = sks_test_tmpdir();
  test_atomic(dir);
  test_positions(dir);
  return sks_test_finish();
}
