// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rules of the checksum NF: one setting.
 *   repeat N     compute each packet's L4 checksum N times (0-4096; 0 by default)
 */
#include <xnf/control.h>
#include "checksum.h"

static const struct xnf_setting ck_setting_list[] = {
	{ "repeat", CK_SETTING_REPEAT, 0, CK_MAX_REPEAT },
	{ 0 },
};
XNF_SETTINGS_CODEC(ck_codec, "ck_config", ck_setting_list, "repeat N");

XNF_EXPORT_RULES(checksum, &ck_codec);
