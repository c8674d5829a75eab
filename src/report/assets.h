/* Report viewer assets (the files in src/report/assets/), embedded into the library by
 * cmake/embed_assets.cmake. data is NUL-terminated; size excludes the NUL. */
#ifndef SKS_REPORT_ASSETS_H
#define SKS_REPORT_ASSETS_H

#include <stddef.h>

typedef struct sks_asset {
  const char *name;
  const unsigned char *data;
  size_t size;
} sks_asset;

/* The asset with this file name ("viewer.js"), or NULL. */
const sks_asset *sks_asset_find(const char *name);

#endif
