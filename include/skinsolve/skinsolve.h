/* skinsolve — umbrella header. */
#ifndef SKINSOLVE_H
#define SKINSOLVE_H
#include "common.h"
#include "clip.h"
#include "rig.h"
#include "pose.h"
#include "skin.h"
#include "io.h"
#include "solve.h"
#include "report.h"
#endif
