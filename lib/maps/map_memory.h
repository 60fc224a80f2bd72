/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Memory for the native maps' storage (map_memory.c). */
#ifndef XNF_LIB_MAPS_MAP_MEMORY_H
#define XNF_LIB_MAPS_MAP_MEMORY_H

#include <stddef.h>

/* nmemb * size zeroed bytes, every page of them already in memory; free() frees them. NULL when there is no room. */
void *map_memory_zeroed(size_t nmemb, size_t size);

#endif
