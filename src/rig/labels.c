/* Body labels of joints by their names: left, right, head (rig.h,
 * sks_skeleton_labels). The bake uses them to tell apart alignments that a
 * body's symmetry leaves open: a T-posed human turned a half turn fits the
 * other's surface about as well, with its left limbs on the right ones
 * (README "Alignment finalists"). */
#include <stdlib.h>
#include <string.h>
#include "skinsolve/rig.h"

/* A name's tokens: runs of letters or digits, split at case changes
 * ('LeftArm' -> left, arm; 'LHand' -> l, hand; 'lShldr' -> l, shldr) and
 * between letters and digits. Calls fn(token start, length, ctx) for each. */
static int is_lo(char ch) { return ch >= 'a' && ch <= 'z'; }
static int is_up(char ch) { return ch >= 'A' && ch <= 'Z'; }
static int is_dg(char ch) { return ch >= '0' && ch <= '9'; }
static int is_an(char ch) { return is_lo(ch) || is_up(ch) || is_dg(ch); }

static size_t next_token(const char *s, size_t i, size_t *len) {
  while (s[i] && !is_an(s[i])) ++i;
  size_t b = i;
  if (!s[i]) { *len = 0; return i; }
  ++i;
  while (s[i] && is_an(s[i])) {
    const char p = s[i - 1], ch = s[i];
    if (is_dg(p) != is_dg(ch)) break;
    if (is_lo(p) && is_up(ch)) break;
    if (is_up(p) && is_up(ch) && is_lo(s[i + 1])) break;
    ++i;
  }
  *len = i - b;
  return b;
}

static int token_is(const char *t, size_t n, const char *word) {
  size_t k = 0;
  for (; k < n && word[k]; ++k) {
    char ch = t[k];
    if (is_up(ch)) ch = (char)(ch - 'A' + 'a');
    if (ch != word[k]) return 0;
  }
  return k == n && !word[k];
}

/* 0: no side token; 1 left, 2 right (both kinds present: 0) */
static int side_of_token(const char *t, size_t n) {
  if (token_is(t, n, "l") || token_is(t, n, "left") || token_is(t, n, "lft")) return 1;
  if (token_is(t, n, "r") || token_is(t, n, "right") || token_is(t, n, "rgt") || token_is(t, n, "rt")) return 2;
  return 0;
}

/* The name's side, and its mirror key (lower-case letter tokens joined by
 * '/', the side token as '*', numbers left out: they count joints, and a
 * twin's can differ, the Fox's 'b_LeftUpperArm_09' and
 * 'b_RightUpperArm_06'), so 'hand.L' and 'Hand_R' share "hand/ *". key has
 * room for 2 * strlen(name) + 2 bytes. */
static int name_side(const char *name, char *key) {
  int side = 0, mixed = 0;
  size_t i = 0, len, o = 0;
  for (;;) {
    size_t b = next_token(name, i, &len);
    if (!len) break;
    int sd = side_of_token(name + b, len);
    if (sd) {
      if (side && sd != side) mixed = 1;
      side = sd;
      key[o++] = '*';
      key[o++] = '/';
    } else if (!is_dg(name[b])) {
      for (size_t k = 0; k < len; ++k) {
        char ch = name[b + k];
        key[o++] = is_up(ch) ? (char)(ch - 'A' + 'a') : ch;
      }
      key[o++] = '/';
    }
    i = b + len;
  }
  key[o] = 0;
  return mixed ? 0 : side;
}

/* 2: a token "head"; 1: a token "neck" (and none "head"); 0: neither */
static int name_has_head(const char *name) {
  size_t i = 0, len;
  int neck = 0;
  for (;;) {
    size_t b = next_token(name, i, &len);
    if (!len) return neck;
    if (token_is(name + b, len, "head")) return 2;
    if (token_is(name + b, len, "neck")) neck = 1;
    i = b + len;
  }
}

typedef struct keyed { const char *key; int side; } keyed;
static int keyed_cmp(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c ? c : x->side - y->side;
}

sks_result sks_skeleton_labels(const sks_skeleton *s, uint8_t *labels, sks_error *err) {
  if (!s || (s->joint_count && !labels)) return sks_error_set(err, SKS_ERR_ARGUMENT, "sks_skeleton_labels: NULL argument");
  const size_t n = s->joint_count;
  if (!n) return SKS_OK;
  size_t chars = 0;
  for (size_t j = 0; j < n; ++j) chars += 2 * strlen(s->names[j] ? s->names[j] : "") + 2;
  char *keys = malloc(chars);
  keyed *k = malloc(n * sizeof *k);
  size_t *stack = malloc(n * sizeof *stack);
  uint8_t *own = malloc(n), *done = calloc(n, 1), *kind = malloc(n), *hard = malloc(n);
  if (!keys || !k || !stack || !own || !done || !kind || !hard) {
    free(keys); free(k); free(stack); free(own); free(done); free(kind); free(hard);
    return sks_error_set(err, SKS_ERR_OUT_OF_MEMORY, "out of memory");
  }
  /* own labels: a side only when the skeleton holds the mirror twin */
  char *kp = keys;
  size_t sided = 0;
  for (size_t j = 0; j < n; ++j) {
    const char *name = s->names[j] ? s->names[j] : "";
    int sd = name_side(name, kp);
    kind[j] = (uint8_t)name_has_head(name);
    own[j] = kind[j] ? SKS_LABEL_HEAD : SKS_LABEL_NONE;
    hard[j] = 0;
    if (sd) k[sided++] = (keyed){kp, (int)j * 2 + (sd - 1)};
    kp += strlen(kp) + 1;
  }
  /* a neck with a "head" joint below it is a neck (its sided children
   * are limbs: the Biped's clavicles); one without is the head itself
   * (BCN_Epileptic's 'B_Neck' holds the eyes, brows and cheeks). hard[]
   * marks the ancestors of "head" joints here: each walk stops at a marked
   * joint, so every joint is marked once (and a cycle stops it) */
  for (size_t j = 0; j < n; ++j) {
    if (kind[j] != 2) continue;
    int32_t p = s->parents[j];
    for (size_t steps = 0; p >= 0 && (size_t)p < n && !hard[p] && steps < n; ++steps) {
      hard[p] = 1;
      p = s->parents[p];
    }
  }
  for (size_t j = 0; j < n; ++j)
    if (kind[j] == 1 && !hard[j]) kind[j] = 2;
  qsort(k, sided, sizeof *k, keyed_cmp);
  for (size_t a = 0; a < sided;) {
    size_t b = a;
    int has[2] = {0, 0};
    while (b < sided && !strcmp(k[b].key, k[a].key)) has[k[b++].side & 1] = 1;
    if (has[0] && has[1])
      for (size_t q = a; q < b; ++q) {
        size_t j = (size_t)k[q].side / 2;
        if (own[j] == SKS_LABEL_NONE) own[j] = (k[q].side & 1) ? SKS_LABEL_RIGHT : SKS_LABEL_LEFT;
      }
    a = b;
  }
  /* resolved: below a "head" joint (or a neck without one) everything is
   * head (an eye is head, whatever its side); else the joint's own label (a
   * neck is head, and a sided joint under a neck keeps its side: the 3ds
   * Max Biped's 'Bip01 L Clavicle' and ozz's Arnaud's 'LeftShoulder' are
   * the neck's children); else its nearest labelled ancestor's. Every
   * joint once (a cycle, which the loaders refuse, stops the walk). */
  for (size_t j = 0; j < n; ++j) {
    if (done[j]) continue;
    size_t depth = 0, at = j;
    uint8_t above = SKS_LABEL_NONE, above_hard = 0; /* hard[] from here: head by a head at or above */
    for (;;) {
      stack[depth++] = at;
      done[at] = 2; /* on the path */
      int32_t p = s->parents[at];
      if (p < 0 || (size_t)p >= n) break;
      if (done[p] == 1) { above = labels[p]; above_hard = hard[p]; break; }
      if (done[p] == 2 || depth == n) break;
      at = (size_t)p;
    }
    while (depth) {
      size_t q = stack[--depth];
      uint8_t h = kind[q] == 2 || above_hard;
      uint8_t l = h ? SKS_LABEL_HEAD : own[q] != SKS_LABEL_NONE ? own[q] : above;
      labels[q] = l;
      hard[q] = h;
      done[q] = 1;
      above = l;
      above_hard = h;
    }
  }
  free(keys); free(k); free(stack); free(own); free(done); free(kind); free(hard);
  return SKS_OK;
}
