/* Body labels of joints by their names (sks_skeleton_labels), on a
 * skeleton that mixes the naming conventions of real rigs: Blender
 * ('hand.L'), Unreal ('upperarm_l'), Maya ('L_wrist'), Mixamo
 * ('mixamorig:LeftArm'), 3ds Max Biped ('Bip01 L Thigh'), BVH ('lShldr'),
 * camel case with a capital side ('LHand'), words ('B_Hand_Left'), twins
 * numbered apart (the Fox's 'b_LeftUpperArm_09', 'b_RightUpperArm_06'); a side
 * only with its mirror twin (a lone 'B_Root_Pelvis_L' is none); the head
 * above sides (an eye is head); a neck is head, but when a head joint
 * lies below it a sided child of it keeps its side (the Biped's and ozz's
 * Arnaud's clavicles are the neck's children; BCN_Epileptic's neck, with
 * no head joint, holds its eyes); children without a side take their parent's; a name with
 * both sides is none; 'forehead' is not a head token; a cycle in the
 * parents (which the loaders refuse) ends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sks_test.h"

typedef struct { const char *name; int parent; int want; } J;

int main(void) {
  enum { N_ = SKS_LABEL_NONE, H_ = SKS_LABEL_HEAD, L_ = SKS_LABEL_LEFT, R_ = SKS_LABEL_RIGHT };
  static const J js[] = {
    {"Armature", -1, N_},          /* 0 */
    {"B_Root_Pelvis_L", 0, N_},    /* 1: no twin */
    {"spine_01", 1, N_},           /* 2 */
    {"neck_01", 2, H_},            /* 3 */
    {"Head", 3, H_},               /* 4 */
    {"eye_L", 4, H_},              /* 5: under the head */
    {"eye_R", 4, H_},              /* 6 */
    {"Head_end", 4, H_},           /* 7 */
    {"hand.L", 2, L_},             /* 8 */
    {"hand.R", 2, R_},             /* 9 */
    {"finger1", 8, L_},            /* 10: its hand's */
    {"finger1", 9, R_},            /* 11 */
    {"upperarm_l", 2, L_},         /* 12 */
    {"upperarm_r", 2, R_},         /* 13 */
    {"L_wrist", 2, L_},            /* 14 */
    {"R_wrist", 2, R_},            /* 15 */
    {"mixamorig:LeftArm", 2, L_},  /* 16 */
    {"mixamorig:RightArm", 2, R_}, /* 17 */
    {"Bip01 L Thigh", 1, L_},      /* 18 */
    {"Bip01 R Thigh", 1, R_},      /* 19 */
    {"lShldr", 2, L_},             /* 20 */
    {"rShldr", 2, R_},             /* 21 */
    {"LHand", 2, L_},              /* 22 */
    {"RHand", 2, R_},              /* 23 */
    {"B_Hand_Left", 2, L_},        /* 24 */
    {"B_Hand_Right", 2, R_},       /* 25 */
    {"L_leg_R", 2, N_},            /* 26: both sides */
    {"R_leg_L", 2, N_},            /* 27 */
    {"forehead", 2, N_},           /* 28 */
    {"Spine_L1", 2, N_},           /* 29: no 'Spine_R1' */
    {"thumb_01.r", 9, R_},         /* 30 */
    {"thumb_01.l", 8, L_},         /* 31 */
    {"pinky", 5, H_},              /* 32: below the head's eye */
    {"b_LeftUpperArm_09", 2, L_},  /* 33: twins by letters (the Fox) */
    {"b_RightUpperArm_06", 2, R_}, /* 34 */
    {"Bip01 Neck", 2, H_},         /* 35: a neck is head, */
    {"Bip01 L Clavicle", 35, L_},  /* 36: but a sided child keeps its side (the Biped's clavicles) */
    {"Bip01 R Clavicle", 35, R_},  /* 37 */
    {"Bip01 L UpperArm", 36, L_},  /* 38 */
    {"Bip01 Head", 35, H_},        /* 39 */
    {"Bip01 HeadNub", 39, H_},     /* 40 */
    {"Neck1", 35, H_},             /* 41: no side: the neck's */
    {"jaw", 41, H_},               /* 42 */
    {"LeftShoulder", 3, L_},       /* 43: under neck_01 (ozz's Arnaud) */
    {"RightShoulder", 3, R_},      /* 44 */
    {"lEye", 39, H_},              /* 45: under a head, whatever its side */
    {"rEye", 39, H_},              /* 46 */
    {"B_Neck", 2, H_},             /* 47: a neck with no head below is the head (BCN_Epileptic): */
    {"B_Eye_Left", 47, H_},        /* 48: its sided children are head */
    {"B_Eye_Right", 47, H_},       /* 49 */
  };
  const size_t n = sizeof js / sizeof js[0];
  sks_skeleton s;
  memset(&s, 0, sizeof s);
  s.joint_count = n;
  s.names = malloc(n * sizeof *s.names);
  s.parents = malloc(n * sizeof *s.parents);
  uint8_t *lab = malloc(n);
  sks_error err;
  CHECK(s.names && s.parents && lab);
  if (!s.names || !s.parents || !lab) return sks_test_finish();
  for (size_t j = 0; j < n; ++j) {
    s.names[j] = (char *)js[j].name;
    s.parents[j] = js[j].parent;
  }
  CHECK_OK(sks_skeleton_labels(&s, lab, &err), &err);
  for (size_t j = 0; j < n; ++j)
    CHECK_MSG(lab[j] == js[j].want, "'%s' (joint %zu): label %d, expected %d", js[j].name, j, lab[j], js[j].want);

  /* the same skeleton listed children first: the same labels */
  {
    char **names = malloc(n * sizeof *names);
    int32_t *par = malloc(n * sizeof *par);
    uint8_t *lab2 = malloc(n);
    CHECK(names && par && lab2);
    if (names && par && lab2) {
      for (size_t j = 0; j < n; ++j) { /* joint j -> n - 1 - j */
        names[n - 1 - j] = (char *)js[j].name;
        par[n - 1 - j] = js[j].parent < 0 ? -1 : (int32_t)(n - 1 - (size_t)js[j].parent);
      }
      sks_skeleton r = s;
      r.names = names;
      r.parents = par;
      CHECK_OK(sks_skeleton_labels(&r, lab2, &err), &err);
      size_t differ = 0;
      for (size_t j = 0; j < n; ++j) differ += lab2[n - 1 - j] != lab[j];
      CHECK_MSG(differ == 0, "children listed first: %zu labels differ", differ);
    }
    free(names); free(par); free(lab2);
  }

  /* a cycle (hand.L <-> finger1) ends, and labels stay labels; one
   * through a head and its neck (the walk marking a head's ancestors) too */
  s.parents[8] = 10;
  CHECK_OK(sks_skeleton_labels(&s, lab, &err), &err);
  CHECK(lab[8] <= SKS_LABEL_RIGHT && lab[10] <= SKS_LABEL_RIGHT);
  s.parents[3] = 4;
  CHECK_OK(sks_skeleton_labels(&s, lab, &err), &err);
  CHECK(lab[3] == SKS_LABEL_HEAD && lab[4] == SKS_LABEL_HEAD);

  /* real rigs: ozz's Arnaud (shoulders under the neck, a head beside them)
   * and BCN_Epileptic (no head joint: the eyes under the neck) */
  struct { const char *path, *joint; int want; } real[] = {
      {sks_test_shared_data("ozz/ozz_arnaud.fbx"), "LeftShoulder", SKS_LABEL_LEFT},
      {sks_test_shared_data("ozz/ozz_arnaud.fbx"), "RightForeArm", SKS_LABEL_RIGHT},
      {sks_test_shared_data("ozz/ozz_arnaud.fbx"), "Head", SKS_LABEL_HEAD},
      {sks_test_assimp_model("X/BCN_Epileptic.X"), "B_Eye_Left", SKS_LABEL_HEAD},
      {sks_test_assimp_model("X/BCN_Epileptic.X"), "B_Cheek_Right", SKS_LABEL_HEAD},
      {sks_test_assimp_model("X/BCN_Epileptic.X"), "B_Hand_Left", SKS_LABEL_LEFT},
  };
  for (size_t k = 0; k < sizeof real / sizeof real[0]; ++k) {
    if (!real[k].path) {
      printf("skip: %s's file not found (../shared/data, assimp-testmodels)\n", real[k].joint);
      continue;
    }
    sks_model m;
    CHECK_OK(sks_load(real[k].path, NULL, &m, &err), &err);
    uint8_t *ml = malloc(m.skeleton.joint_count + 1);
    int32_t j = sks_skeleton_find(&m.skeleton, real[k].joint);
    CHECK_MSG(ml && j >= 0, "%s: no joint %s", real[k].path, real[k].joint);
    if (ml && j >= 0) {
      CHECK_OK(sks_skeleton_labels(&m.skeleton, ml, &err), &err);
      CHECK_MSG(ml[j] == real[k].want, "%s: %s labelled %d, want %d", real[k].path, real[k].joint, ml[j], real[k].want);
    }
    free(ml);
    sks_model_free(&m);
  }

  /* no joints; NULL arguments */
  sks_skeleton empty;
  memset(&empty, 0, sizeof empty);
  CHECK_OK(sks_skeleton_labels(&empty, NULL, &err), &err);
  CHECK(sks_skeleton_labels(NULL, lab, &err) == SKS_ERR_ARGUMENT);

  free(s.names); free(s.parents); free(lab);
  return sks_test_finish();
}
