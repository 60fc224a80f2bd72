// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * memload takes no rules; its start step tells the data path how many lines
 * the area has (the map's size is set at load time, which the BPF side cannot
 * read as a constant).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <xnf/control.h>
#include "memload.h"

static int ml_start(const struct xnf_rules_target *maps, char *err, size_t errlen)
{
	struct xnf_map_ref area, config;
	__u32 slot = ML_SETTING_LINES;
	int rc;

	if (xnf_map_find(maps, "ml_area", &area) || xnf_map_find(maps, "ml_config", &config)) {
		snprintf(err, errlen, "its maps are missing");
		return -1;
	}
	rc = xnf_map_ref_update(&config, &slot, &area.max_entries, BPF_ANY);
	if (rc) {
		snprintf(err, errlen, "cannot write the area's size: %s", strerror(-rc));
		return -1;
	}
	return 0;
}

XNF_EXPORT_START(memload, ml_start);
