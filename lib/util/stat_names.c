// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/stats.h>

const char *const xnf_stat_names[XNF_STAT_NSLOTS] = {
	[XNF_STAT_ABORT] = "abort",
	[XNF_STAT_DROP] = "drop",
	[XNF_STAT_PASS] = "pass",
	[XNF_STAT_TX] = "tx",
	[XNF_STAT_REDIRECT] = "redirect",
	[XNF_STAT_REDIRECT_ERROR] = "redirect_error",
	[XNF_STAT_MALFORMED] = "malformed",
	[XNF_STAT_LOCAL] = "local",
	[XNF_STAT_NOT_READY] = "not_ready",
};
